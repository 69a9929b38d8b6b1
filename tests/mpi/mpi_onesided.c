/*
 * mpi_onesided.c - the one-sided transports (onesided.h) across ranks.
 * Run by tests/cmd/onesided.sh under mpiexec with 1, 2, 4 and 8 ranks
 * (any n >= 1 works).
 *
 * Every check is collective: each rank evaluates its own condition, the
 * verdicts are combined with MPI_MIN, and rank 0 prints one TAP line.  A
 * rank whose condition failed says why on stderr.
 *
 * The data checks run on every transport that can be created here: "mpi",
 * "shm" (all ranks of a run are on this machine) and "tcp" always, "verbs"
 * where a device exists (without one, the checks that it
 * says so stand in).  Each rank's region, n ranks (offsets in bytes):
 *
 *   0        8        16       64                     PUB_OFF   BIG_OFF
 *   | count  | word   | cas    |  slot 0 | ... | n-1  | pub     | big   | r*8 |
 *   (rank 0)  put64    cas64      SLOT bytes each        PUB_LEN   BIG_LEN
 *
 *   count   the counter every rank increments by CAS on rank 0
 *   slot s  rank s's put into this region
 *   pub     written by the owner with plain stores, then published
 *   big     a put of BIG_LEN from the rank before (r - 1 mod n)
 *   r*8     sizes differ between ranks: rank r's region is r*8 longer
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "onesided.h"
#include "tap.h"
#include "testutil.h"

#define W_COUNT		0
#define W_PUT		8
#define W_CAS		16
#define SLOT_OFF	64
#define SLOT		4096
#define PUB_LEN		((size_t)64 * 1024 + 3)
#define BIG_LEN		((size_t)3 * 1024 * 1024 + 4321)
#define INCREMENTS	1000

static int rank, nprocs;
static size_t pub_off, big_off, region0;	/* region0: rank 0's size */

/*
 * The waits between checks sleep rather than spin.  With 8 ranks on 2
 * cores, and MPICH serving RMA to a rank (here, as active messages) only
 * when that rank is inside MPI, ranks spinning in MPI_Barrier take the
 * CPU from the ones whose operations are in flight: 8 x 1000 CAS
 * increments took 40 s that way.  gfsp_mpi_wait's backoff to 1 ms
 * leaves rank 0, the target, too long away from its progress engine
 * (12 s); a steady 100 us sleep takes 3 s.
 */
static void
wait_sleeping(MPI_Request *req)
{
	struct timespec ts = { 0, 100000 };
	int done = 0;

	for (;;) {
		MPI_Test(req, &done, MPI_STATUS_IGNORE);
		if (done)
			return;
		nanosleep(&ts, NULL);
	}
}

static void
barrier(void)
{
	MPI_Request req;

	MPI_Ibarrier(MPI_COMM_WORLD, &req);
	wait_sleeping(&req);
}

/* collective (see above); the other ranks are tap_silent */
static void __attribute__((format(printf, 2, 3)))
ok_all(int cond, const char *fmt, ...)
{
	char desc[TAP_DESC_MAX];
	MPI_Request req;
	va_list ap;
	int all = 0;

	va_start(ap, fmt);
	tap_vformat(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	cond = cond != 0;
	if (!cond)
		fprintf(stderr, "# rank %d: failed: %s\n", rank, desc);
	MPI_Iallreduce(&cond, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req);
	wait_sleeping(&req);
	ok(all, "%s", desc);
}

/* byte i of what `writer` puts into `target`'s region: differs between
 * writers, targets and neighbouring bytes */
static unsigned char
pat(int writer, int target, size_t i)
{
	uint32_t x = (uint32_t)i * 2654435761u ^ (uint32_t)writer * 0x9e3779b9u
		     ^ (uint32_t)target * 0x85ebca6bu;

	return (unsigned char)(x >> 24 ^ x >> 11 ^ x);
}

/* the first byte of buf[0..len) that is not pat(writer, target, from + i) */
static long
first_bad(const unsigned char *buf, size_t len, int writer, int target,
	  size_t from)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != pat(writer, target, from + i))
			return (long)i;
	return -1;
}

static size_t
region_bytes(int r)
{
	return big_off + BIG_LEN + (size_t)r * 8;
}

/* rank s's put into rank t: where in the slot and how long, different
 * for every pair and mostly unaligned */
static void
slot_range(int s, int t, size_t *off, size_t *len)
{
	*off = SLOT_OFF + (size_t)s * SLOT + (size_t)(s % 5);
	*len = SLOT - 8 - (size_t)(s % 5) - (size_t)(t % 3);
}

/* the counter's values: n in both 32-bit halves, so a torn read shows */
static uint64_t
twin(uint64_t n)
{
	return n << 32 | n;
}

static int
twin_ok(uint64_t v)
{
	return (v >> 32) == (v & 0xffffffffu);
}

/* ------------------------------------------------------------ data checks */

static void
check_zeroed(const struct gfsp_os_ops *ops, struct gfsp_os *w)
{
	struct gfsp_error err;
	const unsigned char *mine = ops->base(w);
	unsigned char *buf;
	size_t i, n;
	int t = (rank + 1) % nprocs, bad = 0;

	test_failed = 0;
	for (i = 0; i < region_bytes(rank); i++)
		if (mine[i] != 0) {
			bad = fail("own region byte %zu is %d", i, mine[i]);
			break;
		}
	n = region_bytes(t);
	buf = malloc(n);
	memset(buf, 0xee, n);
	gfsp_error_clear(&err);
	bad |= must_ok(ops->get(w, t, 0, buf, n, &err), err.msg);
	bad |= must_ok(ops->flush(w, t, &err), err.msg);
	for (i = 0; !bad && i < n; i++)
		if (buf[i] != 0)
			bad = fail("rank %d's byte %zu is %d", t, i, buf[i]);
	free(buf);
	ok_all(!bad, "%s: a new window is zero, here (base) and on rank %d "
	       "(get of its %zu bytes)", ops->name, t, n);
}

static void
check_puts(const struct gfsp_os_ops *ops, struct gfsp_os *w)
{
	struct gfsp_error err;
	unsigned char *src, *got;
	const unsigned char *mine = ops->base(w);
	size_t off, len, i, end;
	long b;
	int s, t, bad = 0;

	test_failed = 0;
	gfsp_error_clear(&err);
	src = malloc(SLOT);
	/* every rank into every rank's slot for it, then one flush each */
	for (t = 0; t < nprocs && !bad; t++) {
		slot_range(rank, t, &off, &len);
		for (i = 0; i < len; i++)
			src[i] = pat(rank, t, i);
		bad |= must_ok(ops->put(w, t, off, src, len, &err), err.msg);
		/* the source buffer is reused at once: flush before */
		bad |= must_ok(ops->flush(w, t, &err), err.msg);
	}
	free(src);
	barrier();
	ops->publish(w);

	/* this rank's slots, byte for byte, gaps still zero */
	for (s = 0; s < nprocs && !bad; s++) {
		slot_range(s, rank, &off, &len);
		end = SLOT_OFF + (size_t)(s + 1) * SLOT;
		for (i = SLOT_OFF + (size_t)s * SLOT; i < off; i++)
			if (mine[i] != 0)
				bad = fail("slot %d: byte %zu before the put "
					   "is %d", s, i, mine[i]);
		b = first_bad(mine + off, len, s, rank, 0);
		if (b >= 0)
			bad = fail("slot %d: byte %ld of rank %d's put is "
				   "wrong", s, b, s);
		for (i = off + len; i < end; i++)
			if (mine[i] != 0)
				bad = fail("slot %d: byte %zu after the put "
					   "is %d", s, i, mine[i]);
	}
	ok_all(!bad, "%s: puts from every rank to every rank land at their "
	       "offsets", ops->name);

	/* and gets see them: the next rank's slots */
	t = (rank + 1) % nprocs;
	got = malloc((size_t)nprocs * SLOT);
	bad |= must_ok(ops->get(w, t, SLOT_OFF, got, (size_t)nprocs * SLOT,
			     &err), err.msg);
	bad |= must_ok(ops->flush(w, t, &err), err.msg);
	for (s = 0; s < nprocs && !bad; s++) {
		slot_range(s, t, &off, &len);
		b = first_bad(got + off - SLOT_OFF, len, s, t, 0);
		if (b >= 0)
			bad = fail("rank %d's slot %d: byte %ld wrong", t, s, b);
	}
	free(got);
	ok_all(!bad, "%s: a get of rank %d's slots sees every rank's put",
	       ops->name, (rank + 1) % nprocs);
	barrier();
}

static void
check_big(const struct gfsp_os_ops *ops, struct gfsp_os *w)
{
	struct gfsp_error err;
	unsigned char *src, *all;
	size_t i;
	long b;
	int u, t = (rank + 1) % nprocs, bad = 0;

	test_failed = 0;
	gfsp_error_clear(&err);
	src = malloc(BIG_LEN);
	for (i = 0; i < BIG_LEN; i++)
		src[i] = pat(rank, t, i);
	bad |= must_ok(ops->put(w, t, big_off, src, BIG_LEN, &err), err.msg);
	bad |= must_ok(ops->flush(w, t, &err), err.msg);
	free(src);
	barrier();

	/* all gets first, then the flushes: the data is only there after */
	all = malloc((size_t)nprocs * BIG_LEN);
	for (u = 0; u < nprocs && !bad; u++)
		bad |= must_ok(ops->get(w, u, big_off, all + (size_t)u * BIG_LEN,
				     BIG_LEN, &err), err.msg);
	for (u = 0; u < nprocs && !bad; u++)
		bad |= must_ok(ops->flush(w, u, &err), err.msg);
	for (u = 0; u < nprocs && !bad; u++) {
		b = first_bad(all + (size_t)u * BIG_LEN, BIG_LEN,
			      (u + nprocs - 1) % nprocs, u, 0);
		if (b >= 0)
			bad = fail("big get from rank %d: byte %ld wrong", u, b);
	}
	free(all);
	ok_all(!bad, "%s: %zu-byte puts, then gets of them from all %d "
	       "ranks before one flush each", ops->name, BIG_LEN, nprocs);
	barrier();
}

static void
check_publish(const struct gfsp_os_ops *ops, struct gfsp_os *w)
{
	struct gfsp_error err;
	unsigned char *mine = ops->base(w), *got;
	size_t i;
	long b;
	int u, bad = 0;

	test_failed = 0;
	gfsp_error_clear(&err);
	for (i = 0; i < PUB_LEN; i++)
		mine[pub_off + i] = pat(rank, rank, i);
	ops->publish(w);
	barrier();

	got = malloc(PUB_LEN);
	for (u = 0; u < nprocs && !bad; u++) {
		memset(got, 0, PUB_LEN);
		bad |= must_ok(ops->get(w, u, pub_off, got, PUB_LEN, &err), err.msg);
		bad |= must_ok(ops->flush(w, u, &err), err.msg);
		b = bad ? -1 : first_bad(got, PUB_LEN, u, u, 0);
		if (b >= 0)
			bad = fail("rank %d's published byte %ld is wrong: %d want %d (%d %d %d %d)", u,
				   b, got[b], pat(u,u,b), got[0], got[1], got[2], got[3]);
	}
	free(got);
	ok_all(!bad, "%s: plain stores + publish, then gets from every rank",
	       ops->name);
	barrier();
}

/*
 * INCREMENTS increments per rank of rank 0's counter by CAS loops, with a
 * get64 every few rounds: every value seen, by CAS or get64, is whole
 * (its halves match) and never goes back.
 */
static void
check_cas_contention(const struct gfsp_os_ops *ops, struct gfsp_os *w)
{
	struct gfsp_error err;
	uint64_t cur = 0, old, seen, last = 0, final = 0;
	MPI_Request req;
	double t0 = gfsp_now();
	long retries = 0;
	int i, bad = 0, torn = 0, back = 0;

	test_failed = 0;
	gfsp_error_clear(&err);
	for (i = 0; i < INCREMENTS && !bad; i++) {
		for (;;) {
			if (must_ok(ops->cas64(w, 0, W_COUNT, cur,
					       twin((cur & 0xffffffffu) + 1),
					       &old, &err), err.msg)) {
				bad = 1;
				break;
			}
			if (!twin_ok(old))
				torn++;
			if (old == cur)
				break;
			cur = old;
			retries++;
		}
		cur = twin((cur & 0xffffffffu) + 1);
		if (i % 8 == 0 && !bad) {
			bad |= must_ok(ops->get64(w, 0, W_COUNT, &seen, &err),
				       err.msg);
			if (!twin_ok(seen))
				torn++;
			if ((seen & 0xffffffffu) < (last & 0xffffffffu))
				back++;
			last = seen;
		}
	}
	if (torn)
		bad = fail("%d torn values", torn);
	if (back)
		bad = fail("the counter went back %d times", back);
	barrier();
	bad |= must_ok(ops->get64(w, 0, W_COUNT, &final, &err), err.msg);
	if (!bad && final != twin((uint64_t)INCREMENTS * (uint64_t)nprocs))
		bad = fail("counter is %#llx, want %d in both halves",
			   (unsigned long long)final, INCREMENTS * nprocs);
	MPI_Iallreduce(MPI_IN_PLACE, &retries, 1, MPI_LONG, MPI_SUM,
		       MPI_COMM_WORLD, &req);
	wait_sleeping(&req);
	if (rank == 0)
		diag("%s: %d x %d increments in %.2f s, %ld CAS misses",
		     ops->name, nprocs, INCREMENTS, gfsp_now() - t0, retries);
	ok_all(!bad, "%s: %d ranks x %d CAS increments of one word: %d, "
	       "no torn or backward get64", ops->name, nprocs, INCREMENTS,
	       nprocs * INCREMENTS);
	barrier();
}

static void
check_words(const struct gfsp_os_ops *ops, struct gfsp_os *w)
{
	struct gfsp_error err;
	uint64_t got = 0, old = 0;
	int t = (rank + 1) % nprocs, p = (rank + nprocs - 1) % nprocs, bad = 0;

	test_failed = 0;
	gfsp_error_clear(&err);
	/* two stores: the second over a nonzero word */
	bad |= must_ok(ops->put64(w, t, W_PUT, 0x1111111100000000ull | (uint64_t)rank,
			       &err), err.msg);
	bad |= must_ok(ops->put64(w, t, W_PUT, 0xa5a5a5a500000000ull | (uint64_t)rank,
			       &err), err.msg);
	barrier();
	/* this rank's word was stored by rank p; rank t's by this rank */
	bad |= must_ok(ops->get64(w, rank, W_PUT, &got, &err), err.msg);
	if (!bad && got != (0xa5a5a5a500000000ull | (uint64_t)p))
		bad = fail("own word is %#llx, rank %d stored %#llx",
			   (unsigned long long)got, p,
			   0xa5a5a5a500000000ull | (uint64_t)p);
	bad |= must_ok(ops->get64(w, t, W_PUT, &got, &err), err.msg);
	if (!bad && got != (0xa5a5a5a500000000ull | (uint64_t)rank))
		bad = fail("rank %d's word is %#llx", t,
			   (unsigned long long)got);
	ok_all(!bad, "%s: put64 twice, barrier, get64 sees the second value "
	       "(written by rank r-1, read by rank r)", ops->name);
	barrier();

	/* cas64 on this rank's own word in rank t: a miss changes nothing */
	bad = 0;
	bad |= must_ok(ops->cas64(w, t, W_CAS, 7, 9, &old, &err), err.msg);
	if (!bad && old != 0)
		bad = fail("cas64 miss: old %llu, want 0",
			   (unsigned long long)old);
	bad |= must_ok(ops->get64(w, t, W_CAS, &got, &err), err.msg);
	if (!bad && got != 0)
		bad = fail("cas64 miss changed the word to %llu",
			   (unsigned long long)got);
	bad |= must_ok(ops->cas64(w, t, W_CAS, 0, 42 + (uint64_t)rank, &old,
			       &err), err.msg);
	bad |= must_ok(ops->get64(w, t, W_CAS, &got, &err), err.msg);
	if (!bad && (old != 0 || got != 42 + (uint64_t)rank))
		bad = fail("cas64 hit: old %llu, word %llu",
			   (unsigned long long)old, (unsigned long long)got);
	ok_all(!bad, "%s: cas64 returns the old word, swaps only on a match",
	       ops->name);
	barrier();

	/* getv64: both words of rank t at once (W_PUT, W_CAS adjacent) */
	{
		uint64_t two[2] = { 0, 0 };

		bad = must_ok(ops->getv64(w, t, W_PUT, two, 2, &err), err.msg);
		if (!bad && (two[0] != (0xa5a5a5a500000000ull |
		    (uint64_t)rank) || two[1] != 42 + (uint64_t)rank))
			bad = fail("getv64: %#llx %llu",
				   (unsigned long long)two[0],
				   (unsigned long long)two[1]);
		ok_all(!bad, "%s: getv64 reads both words in one call",
		       ops->name);
	}
	barrier();
}

static void
check_errors(const struct gfsp_os_ops *ops, struct gfsp_os *w)
{
	struct gfsp_error err;
	char want[128];
	unsigned char buf[16];
	uint64_t v;
	int t = (rank + 1) % nprocs, rc, bad = 0;

	test_failed = 0;
	gfsp_error_clear(&err);
	rc = ops->get(w, t, region_bytes(t) - 4, buf, 8, &err);
	snprintf(want, sizeof(want), "one-sided get from rank %d (%s): ", t,
		 ops->name);
	if (rc != GFSP_EINVAL || strncmp(err.msg, want, strlen(want)) != 0 ||
	    strstr(err.msg, "region") == NULL)
		bad = fail("get past the end: rc %d, '%s'", rc, err.msg);
	if (rank == 0)
		diag("%s", err.msg);
	gfsp_error_clear(&err);
	rc = ops->get(w, t, region_bytes(t) - 8, buf, 8, &err);
	rc |= ops->get(w, t, region_bytes(t), buf, 0, &err);
	rc |= ops->flush(w, t, &err);
	if (rc != 0)
		bad = fail("get of the last 8 bytes, or of none: %s", err.msg);
	gfsp_error_clear(&err);
	rc = ops->put(w, nprocs, 0, buf, 1, &err);
	if (rc != GFSP_EINVAL || strstr(err.msg, "no such rank") == NULL)
		bad = fail("put to rank %d: rc %d, '%s'", nprocs, rc, err.msg);
	gfsp_error_clear(&err);
	rc = ops->get64(w, t, 4, &v, &err);
	if (rc != GFSP_EINVAL || strstr(err.msg, "aligned") == NULL)
		bad = fail("get64 at offset 4: rc %d, '%s'", rc, err.msg);
	ok_all(!bad, "%s: a range past the end, a bad rank, a misaligned "
	       "word: GFSP_EINVAL naming the operation and rank", ops->name);
}

static void
data_checks(const struct gfsp_os_ops *ops)
{
	struct gfsp_os *w = NULL;
	struct gfsp_error err;
	int rc;

	gfsp_error_clear(&err);
	rc = ops->create(MPI_COMM_WORLD, region_bytes(rank),
	    region_bytes(rank), &w, &err);
	ok_all(rc == 0 && w != NULL, "%s: create a window of %zu bytes on "
	       "rank 0%s%s", ops->name, region0, rc ? ": " : "",
	       rc ? err.msg : "");
	if (rc != 0)
		return;
	check_zeroed(ops, w);
	check_puts(ops, w);
	check_big(ops, w);
	check_publish(ops, w);
	check_cas_contention(ops, w);
	check_words(ops, w);
	check_errors(ops, w);
	ops->destroy(w);
	ok_all(1, "%s: destroy returns", ops->name);
}

/* a window with empty regions on odd ranks */
static void
check_sizes(const struct gfsp_os_ops *ops)
{
	struct gfsp_os *w = NULL;
	struct gfsp_error err;
	unsigned char b = 0x77;
	int rc, last = nprocs - 1, bad = 0;

	gfsp_error_clear(&err);
	rc = ops->create(MPI_COMM_WORLD, rank % 2 ? 0 : 64, 64, &w, &err);
	if (rc != 0) {
		ok_all(0, "%s: create with empty regions: %s", ops->name,
		       err.msg);
		return;
	}
	test_failed = 0;
	bad |= must_ok(ops->put(w, 0, (uint64_t)(rank % 64), &b, 1, &err),
		       err.msg);
	bad |= must_ok(ops->get(w, last, 0, &b, 0, &err), err.msg);
	bad |= must_ok(ops->flush(w, 0, &err), err.msg);
	bad |= must_ok(ops->flush(w, last, &err), err.msg);
	rc = ops->get(w, last, 0, &b, 1, &err);
	if ((last % 2 == 1) != (rc == GFSP_EINVAL))
		bad = fail("get of 1 byte from rank %d: rc %d", last, rc);
	ops->destroy(w);
	ok_all(!bad, "%s: regions of 0 bytes (odd ranks) and 64 (even)",
	       ops->name);
}

/* ------------------------------------------------------ transport choice */

/*
 * shm over a communicator of some of the ranks (both halves of a split
 * world at once).  Its refusal of a communicator that spans nodes cannot
 * be checked here: MPI sees one node on one machine, whatever
 * GFSPLIT_NODE says.
 */
static void
check_sub_comm(void)
{
	const struct gfsp_os_ops *ops = NULL;
	struct gfsp_os *w = NULL;
	struct gfsp_error err;
	MPI_Comm half;
	int rc;

	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
	gfsp_error_clear(&err);
	rc = gfsp_os_create(half, "shm", 64, 64, &ops, &w, &err);
	ok_all(rc == 0 && ops == &gfsp_os_shm,
	       "shm: a window over half the ranks (each half one node)");
	if (rc == 0)
		ops->destroy(w);
	MPI_Comm_free(&half);
}

static void
check_choice(void)
{
	const struct gfsp_os_ops *ops = NULL;
	struct gfsp_os *w = NULL;
	struct gfsp_error err;
	int rc;

	ok_all(strstr(gfsp_os_builtin(), "mpi") != NULL,
	       "builtin transports: %s", gfsp_os_builtin());

	gfsp_error_clear(&err);
	rc = gfsp_os_create(MPI_COMM_WORLD, "rdma-magic", 64, 64, &ops, &w, &err);
	ok_all(rc == GFSP_EINVAL && ops == NULL && w == NULL &&
	       strstr(err.msg, "'rdma-magic'") != NULL,
	       "unknown transport: GFSP_EINVAL: %s", err.msg);

	gfsp_error_clear(&err);
	rc = gfsp_os_create(MPI_COMM_WORLD, "mpi", 64, 64, &ops, &w, &err);
	ok_all(rc == 0 && ops == &gfsp_os_mpi && w != NULL,
	       "\"mpi\" gives the mpi transport");
	if (rc == 0)
		ops->destroy(w);

	gfsp_error_clear(&err);
	rc = gfsp_os_create(MPI_COMM_WORLD, "shm", 64, 64, &ops, &w, &err);
	ok_all(rc == 0 && ops == &gfsp_os_shm && w != NULL,
	       "\"shm\" gives the shm transport (every rank on this node)");
	if (rc == 0)
		ops->destroy(w);

	gfsp_error_clear(&err);
	rc = gfsp_os_create(MPI_COMM_WORLD, "tcp", 64, 64, &ops, &w, &err);
	ok_all(rc == 0 && ops == &gfsp_os_tcp && w != NULL,
	       "\"tcp\" gives the tcp transport");
	if (rc == 0)
		ops->destroy(w);

	gfsp_error_clear(&err);
	rc = gfsp_os_create(MPI_COMM_WORLD, "verbs", 64, 64, &ops, &w, &err);
#ifdef HAVE_IBVERBS
	if (rc == 0) {
		ok_all(ops == &gfsp_os_verbs, "\"verbs\": a device is here");
		ops->destroy(w);
	} else {
		ok_all(rc == GFSP_ENOTSUP && ops == NULL && w == NULL &&
		       strstr(err.msg, "RDMA device") != NULL,
		       "\"verbs\" without a device: GFSP_ENOTSUP on every "
		       "rank: %s", err.msg);
	}
#else
	ok_all(rc == GFSP_ENOTSUP && strstr(err.msg, "--with-ibverbs") != NULL,
	       "\"verbs\" in a build without it: GFSP_ENOTSUP: %s", err.msg);
#endif

	gfsp_error_clear(&err);
	rc = gfsp_os_create(MPI_COMM_WORLD, "auto", 64, 64, &ops, &w, &err);
#ifdef HAVE_IBVERBS
	{
		struct gfsp_os *vw = NULL;
		const struct gfsp_os_ops *vops = NULL;
		struct gfsp_error verr;
		int have;

		gfsp_error_clear(&verr);
		have = gfsp_os_create(MPI_COMM_WORLD, "verbs", 64, 64, &vops, &vw,
				      &verr) == 0;
		if (have)
			vops->destroy(vw);
		ok_all(rc == 0 && err.code == 0 && w != NULL &&
		       ops == (have ? &gfsp_os_verbs : &gfsp_os_shm),
		       "\"auto\" takes %s, err left clear",
		       have ? "verbs (a device is here)"
			    : "shm (no device here, one node)");
	}
#else
	ok_all(rc == 0 && err.code == 0 && ops == &gfsp_os_shm,
	       "\"auto\" takes shm (one node)");
#endif
	if (rc == 0)
		ops->destroy(w);

	gfsp_error_clear(&err);
	rc = gfsp_os_create(MPI_COMM_WORLD, NULL, 64, 64, &ops, &w, &err);
	ok_all(rc == 0 && ops != NULL, "NULL is \"auto\": %s",
	       ops != NULL ? ops->name : err.msg);
	if (rc == 0)
		ops->destroy(w);
}

int
main(int argc, char **argv)
{
	int provided, status;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	tap_silent = rank != 0;
	test_first_only = 1;	/* one reason a check, on stderr */
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(120);	/* a hang is a failure */

	pub_off = SLOT_OFF + (size_t)nprocs * SLOT;
	big_off = (pub_off + PUB_LEN + 7) / 8 * 8;
	region0 = region_bytes(0);
	if (rank == 0)
		diag("%d ranks; transports built: %s", nprocs,
		     gfsp_os_builtin());

	check_choice();
	data_checks(&gfsp_os_mpi);
	check_sizes(&gfsp_os_mpi);
	data_checks(&gfsp_os_shm);
	check_sizes(&gfsp_os_shm);
	data_checks(&gfsp_os_tcp);
	check_sizes(&gfsp_os_tcp);
	check_sub_comm();
#ifdef HAVE_IBVERBS
	{
		struct gfsp_os *w = NULL;
		struct gfsp_error err;
		int rc;

		gfsp_error_clear(&err);
		rc = gfsp_os_verbs.create(MPI_COMM_WORLD, 64, 64, &w, &err);
		if (rc == 0) {
			gfsp_os_verbs.destroy(w);
			data_checks(&gfsp_os_verbs);
			check_sizes(&gfsp_os_verbs);
		} else {
			skip("verbs data checks: %s", err.msg);
		}
	}
#else
	skip("verbs data checks: not built (configure --with-ibverbs)");
#endif
	status = done_testing();
	MPI_Finalize();
	return status;
}
