/*
 * mpi_shared - helper of tests/cmd/mpiio_shared.sh; not a test.  MPI-IO's
 * shared file pointer in plain MPI only, so the same program runs on MPICH
 * alone and under the PMPI preload lib/libgfsplit-mpiio.so.
 *
 *   mpiexec -n N mpi_shared write|read|errors FILE
 *   mpi_shared verify FILE N	(no MPI: checks the bytes of a plain file)
 *   mpi_shared prefix N		(prints the length of the ordered prefix)
 *
 * write makes this file, in etypes of 4 bytes (E) after the header; c_r
 * are rank r's counts, all offsets follow from N (struct layout):
 *
 *   byte 0   H        D = H + 12
 *   | header | 0 x 12 | A | S1 |0 x 3E| C |0 x 7E| D | E | S2 |
 *
 *   header  default view, write_ordered: 8(r+1) bytes per rank
 *   A       after set_view (disp D, etype and filetype MPI_INT; the shared
 *           pointer is 0 again): write_ordered, c_r = 1000(r+1)
 *   S1      every rank write_shared (memory: a vector with gaps) and
 *           write_shared_c (a 2-int type): 2N blocks of B etypes in an
 *           order no one knows; each block says whose it is (word 0:
 *           MAGIC | rank << 8 | k) and the rest follows from that
 *   C       seek_shared(3, MPI_SEEK_CUR), write_ordered from a vector
 *           memory type, c_r = 500(r+1)
 *   D       seek_shared(0, MPI_SEEK_SET), sync, seek_shared(7, MPI_SEEK_END),
 *           write_ordered_begin/_end, c_r = 300(r+1)
 *   E       write_ordered_c, c_r = 200(N-r)
 *   S2      iwrite_shared (k 2) and iwrite_shared_c (k 3), one block each
 *
 * MPI_File_get_position_shared is checked between the steps, and every
 * status counts what was asked.  read reads the same file back with the
 * same calls turned round (read_ordered for the ordered parts,
 * read_shared, read_shared_c, iread_shared(_c) for the blocks, which each
 * rank checks on its own and all ranks check to be every block once),
 * seeks with all three whences, and reads at the end of the file (nothing
 * read, the pointer moves on).  errors (under the preload, on a split
 * file N ranks wrote) checks that wrong calls fail on every rank that
 * should see a failure, with the right class, without a hang, and leave
 * the pointer where it was.
 *
 * verify reads FILE with stdio: the header, the ordered parts and the zero
 * gaps must be exactly where the layout says; S1 and S2 must hold every
 * (rank, k) block once, each in a slot of B etypes; the size must be
 * exact.  An unexpected MPI error prints "mpi_shared: rank R: CALL: error"
 * and aborts; a wrong value prints what and where; either exits 1.  On
 * success rank 0 prints "mpi_shared: MODE N ranks ok".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mpi4.h"
#include "testutil.h"

#define E		4		/* etype: MPI_INT */
#define B		256		/* etypes in a shared block */
#define MAGIC		0x5a000000u
#define GAP		0xeeeeeeeeu	/* memory gaps: must not reach a file */
#define GAP_CUR		3		/* etypes seek_shared(CUR) skips */
#define GAP_END		7		/* and seek_shared(END) */

static int rank, nprocs, bad;
static char who[32];		/* "rank R: " under MPI, "" in verify */

/* ---- the layout ----------------------------------------------------- */

struct layout {
	int n;
	long long h, d;		/* header bytes, view displacement */
	/* in etypes from d: where each part starts, and the end */
	long long a, s1, c, dd, e, s2, end;
};

enum { P_A = 1, P_C = 3, P_D = 4, P_E = 5 };	/* the ordered parts */

static long long
hdr_bytes(int r)
{
	return 8LL * (r + 1);
}

/* etypes of rank r of n in ordered part p */
static long long
cnt(int p, int n, int r)
{
	switch (p) {
	case P_A:	return 1000LL * (r + 1);
	case P_C:	return 500LL * (r + 1);
	case P_D:	return 300LL * (r + 1);
	default:	return 200LL * (n - r);
	}
}

/* the etypes of every rank's part p before rank r's */
static long long
before(int p, int n, int r)
{
	long long sum = 0;
	int q;

	for (q = 0; q < r; q++)
		sum += cnt(p, n, q);
	return sum;
}

static void
layout(int n, struct layout *l)
{
	memset(l, 0, sizeof(*l));
	l->n = n;
	l->h = 8LL * n * (n + 1) / 2;
	l->d = l->h + 12;
	l->a = 0;
	l->s1 = l->a + before(P_A, n, n);
	l->c = l->s1 + 2LL * n * B + GAP_CUR;
	l->dd = l->c + before(P_C, n, n) + GAP_END;
	l->e = l->dd + before(P_D, n, n);
	l->s2 = l->e + before(P_E, n, n);
	l->end = l->s2 + 2LL * n * B;
}

/* ---- the values ----------------------------------------------------- */

static unsigned char
hdr_val(int r, long long i)
{
	return (unsigned char)(0x40 + r * 37 + i * 5);
}

/* word i of rank r's part of ordered phase p (or of block k: p = 16 + k) */
static uint32_t
val(int p, int r, long long i)
{
	uint32_t v = (uint32_t)p * 0x9e3779b1u ^ (uint32_t)r * 0x85ebca77u ^
	    (uint32_t)i * 0xc2b2ae3du;

	return v ^ (v >> 15);
}

static void
fill_block(uint32_t *w, int r, int k)
{
	int j;

	w[0] = MAGIC | (uint32_t)r << 8 | (uint32_t)k;
	for (j = 1; j < B; j++)
		w[j] = val(16 + k, r, j);
}

/* The block's id r * 4 + k, or -1 (with a message) if it is not a whole
 * block of one of the ks in [k0, k0 + 2).  at: its etype in the file, or
 * -1 for a block read through MPI. */
static int
block_id(const uint32_t *w, int n, int k0, const char *where, long long at)
{
	int r = (int)(w[0] >> 8 & 0xffff), k = (int)(w[0] & 0xff), j;
	char loc[64] = "a block read";

	if (at >= 0)
		snprintf(loc, sizeof(loc), "etype %lld", at);
	if ((w[0] & 0xff000000u) != MAGIC || r >= n || k < k0 || k >= k0 + 2) {
		fprintf(stderr, "mpi_shared: %s%s: %s: not a block of k %d or "
		    "%d (word 0 is 0x%08x)\n", who, where, loc, k0, k0 + 1,
		    w[0]);
		return -1;
	}
	for (j = 1; j < B; j++)
		if (w[j] != val(16 + k, r, j)) {
			fprintf(stderr, "mpi_shared: %s%s: %s, rank %d's block "
			    "k %d: word %d is 0x%08x, expected 0x%08x\n", who,
			    where, loc, r, k, j, w[j], val(16 + k, r, j));
			return -1;
		}
	return r * 4 + k;
}

/* ---- MPI helpers ---------------------------------------------------- */

#define TRY(expr) do {							\
	int rc_ = (expr);						\
	if (rc_ != MPI_SUCCESS)						\
		die(rc_, #expr);					\
} while (0)

static void
wrong(const char *fmt, long long a, long long b)
{
	char msg[256];

	snprintf(msg, sizeof(msg), fmt, a, b);
	fail("%s", msg);
	bad++;
}

/* The status counts want elements of type. */
static void
count_is(MPI_Status *st, MPI_Datatype type, long long want, const char *call)
{
	MPI_Count got = -1;

	TRY(MPI_Get_count_c(st, type, &got));
	if (got != want) {
		fprintf(stderr, "mpi_shared: rank %d: %s: status counts %lld, "
		    "expected %lld\n", rank, call, (long long)got, want);
		bad++;
	}
}

/* Collective: every rank sees the shared pointer at want; the barrier
 * keeps the next step's shared accesses after every rank's look. */
static void
pos_is(MPI_File fh, long long want, const char *step)
{
	MPI_Offset got = -1;

	TRY(MPI_File_get_position_shared(fh, &got));
	if (got != want) {
		fprintf(stderr, "mpi_shared: rank %d: after %s: shared pointer "
		    "at %lld, expected %lld\n", rank, step, (long long)got,
		    want);
		bad++;
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Collective: the blocks ids[0..1] of every rank are every (rank, k in
 * [k0, k0 + 2)) once. */
static void
all_blocks(const int *ids, int k0, const char *part)
{
	int *all = malloc(sizeof(int) * 2 * nprocs), *seen, i;

	seen = calloc((size_t)nprocs * 4, sizeof(int));
	if (all == NULL || seen == NULL)
		die(MPI_ERR_NO_MEM, "malloc");
	TRY(MPI_Allgather(ids, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD));
	for (i = 0; i < 2 * nprocs; i++)
		if (all[i] >= 0)
			seen[all[i]]++;
	for (i = 0; rank == 0 && i < nprocs * 4; i++)
		if (i % 4 >= k0 && i % 4 < k0 + 2 && seen[i] != 1) {
			fprintf(stderr, "mpi_shared: %s: the block of rank %d "
			    "k %d was read %d times\n", part, i / 4, i % 4,
			    seen[i]);
			bad++;
		}
	free(all);
	free(seen);
}

static void
ordered_fill(uint32_t *buf, int p, long long n, int stride, int reading)
{
	long long i;

	for (i = 0; i < n * stride; i++)
		buf[i] = GAP;
	for (i = 0; i < n; i++)
		buf[i * stride] = reading ? ~val(p, rank, i) : val(p, rank, i);
}

static void
ordered_check(const uint32_t *buf, int p, long long n, int stride,
	      const char *what)
{
	long long i;
	int j;

	for (i = 0; i < n; i++) {
		if (buf[i * stride] != val(p, rank, i)) {
			wrong(what, i, buf[i * stride]);
			return;
		}
		for (j = 1; j < stride; j++)
			if (buf[i * stride + j] != GAP) {
				wrong("read into a memory gap at word %lld (%llx)",
				    i * stride + j, buf[i * stride + j]);
				return;
			}
	}
}

/* ---- write and read -------------------------------------------------- */

/*
 * One pass over the file, writing or reading: the same calls in the same
 * order, so that the layout is the same by construction.  rd: reading.
 */
static void
run(MPI_File fh, int rd)
{
	struct layout l;
	MPI_Datatype vec, two;
	MPI_Status st, sts[2];
	MPI_Request req[2];
	unsigned char *hdr;
	uint32_t *buf, *blk[2];
	long long n, i, max = 2 * cnt(P_A, nprocs, nprocs - 1);
	int ids[2], k;

	layout(nprocs, &l);
	buf = malloc(sizeof(uint32_t) * (size_t)max);
	blk[0] = malloc(sizeof(uint32_t) * 2 * B);
	blk[1] = malloc(sizeof(uint32_t) * 2 * B);
	if (buf == NULL || blk[0] == NULL || blk[1] == NULL)
		die(MPI_ERR_NO_MEM, "malloc");
	TRY(MPI_Type_contiguous(2, MPI_INT, &two));
	TRY(MPI_Type_commit(&two));

	pos_is(fh, 0, "open");

	/* the header, default view */
	hdr = (unsigned char *)buf;
	n = hdr_bytes(rank);
	for (i = 0; i < n; i++)
		hdr[i] = rd ? (unsigned char)~hdr_val(rank, i) : hdr_val(rank, i);
	if (rd)
		TRY(MPI_File_read_ordered(fh, hdr, (int)n, MPI_BYTE, &st));
	else
		TRY(MPI_File_write_ordered(fh, hdr, (int)n, MPI_BYTE, &st));
	count_is(&st, MPI_BYTE, n, "header");
	for (i = 0; rd && i < n; i++)
		if (hdr[i] != hdr_val(rank, i)) {
			wrong("header byte %lld is %lld", i, hdr[i]);
			break;
		}
	pos_is(fh, l.h, "the header");

	TRY(MPI_File_set_view(fh, l.d, MPI_INT, MPI_INT, "native",
	    MPI_INFO_NULL));
	pos_is(fh, 0, "set_view");

	/* A */
	n = cnt(P_A, nprocs, rank);
	ordered_fill(buf, P_A, n, 1, rd);
	if (rd)
		TRY(MPI_File_read_ordered(fh, buf, (int)n, MPI_INT, &st));
	else
		TRY(MPI_File_write_ordered(fh, buf, (int)n, MPI_INT, &st));
	count_is(&st, MPI_INT, n, "A");
	if (rd)
		ordered_check(buf, P_A, n, 1, "A: word %lld is 0x%llx");
	pos_is(fh, l.s1, "A");

	/* S1: k 0 from a vector with a gap after every int, k 1 as 2-ints */
	TRY(MPI_Type_vector(B, 1, 2, MPI_INT, &vec));
	TRY(MPI_Type_commit(&vec));
	for (k = 0; k < 2; k++) {
		if (rd) {
			for (i = 0; i < 2 * B; i++)
				blk[k][i] = GAP;
		} else if (k == 0) {
			fill_block(buf, rank, 0);
			for (i = 0; i < 2 * B; i++)
				blk[0][i] = i % 2 ? GAP : buf[i / 2];
		} else {
			fill_block(blk[1], rank, 1);
		}
	}
	if (rd) {
		TRY(MPI_File_read_shared(fh, blk[0], B, MPI_INT, &st));
		count_is(&st, MPI_INT, B, "read_shared");
		TRY(MPI_File_read_shared_c(fh, blk[1], (MPI_Count)B / 2, two,
		    &st));
		count_is(&st, two, B / 2, "read_shared_c");
		for (k = 0; k < 2; k++)
			ids[k] = block_id(blk[k], nprocs, 0, "S1", -1);
		for (k = 0; k < 2; k++)
			bad += ids[k] < 0;
		all_blocks(ids, 0, "S1");
	} else {
		TRY(MPI_File_write_shared(fh, blk[0], 1, vec, &st));
		count_is(&st, vec, 1, "write_shared");
		TRY(MPI_File_write_shared_c(fh, blk[1], (MPI_Count)B / 2, two,
		    &st));
		count_is(&st, two, B / 2, "write_shared_c");
	}
	MPI_Barrier(MPI_COMM_WORLD);
	pos_is(fh, l.c - GAP_CUR, "S1");

	/* C, from a vector memory type */
	TRY(MPI_File_seek_shared(fh, GAP_CUR, MPI_SEEK_CUR));
	pos_is(fh, l.c, "seek_shared(CUR)");
	n = cnt(P_C, nprocs, rank);
	MPI_Type_free(&vec);
	TRY(MPI_Type_vector((int)n, 1, 2, MPI_INT, &vec));
	TRY(MPI_Type_commit(&vec));
	ordered_fill(buf, P_C, n, 2, rd);
	if (rd)
		TRY(MPI_File_read_ordered(fh, buf, 1, vec, &st));
	else
		TRY(MPI_File_write_ordered(fh, buf, 1, vec, &st));
	count_is(&st, vec, 1, "C");
	if (rd)
		ordered_check(buf, P_C, n, 2, "C: word %lld is 0x%llx");
	MPI_Type_free(&vec);
	pos_is(fh, l.dd - GAP_END, "C");

	/* the three whences */
	TRY(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
	pos_is(fh, 0, "seek_shared(0, SET)");
	if (rd) {
		TRY(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
		pos_is(fh, l.end, "seek_shared(0, END)");
		TRY(MPI_File_seek_shared(fh, l.dd, MPI_SEEK_SET));
	} else {
		TRY(MPI_File_sync(fh));
		MPI_Barrier(MPI_COMM_WORLD);
		TRY(MPI_File_seek_shared(fh, GAP_END, MPI_SEEK_END));
	}
	pos_is(fh, l.dd, "seek_shared to D");

	/* D, split collective */
	n = cnt(P_D, nprocs, rank);
	ordered_fill(buf, P_D, n, 1, rd);
	if (rd) {
		TRY(MPI_File_read_ordered_begin(fh, buf, (int)n, MPI_INT));
		TRY(MPI_File_read_ordered_end(fh, buf, &st));
	} else {
		TRY(MPI_File_write_ordered_begin(fh, buf, (int)n, MPI_INT));
		TRY(MPI_File_write_ordered_end(fh, buf, &st));
	}
	count_is(&st, MPI_INT, n, "D");
	if (rd)
		ordered_check(buf, P_D, n, 1, "D: word %lld is 0x%llx");
	pos_is(fh, l.e, "D");

	/* E, large-count */
	n = cnt(P_E, nprocs, rank);
	ordered_fill(buf, P_E, n, 1, rd);
	if (rd)
		TRY(MPI_File_read_ordered_c(fh, buf, (MPI_Count)n, MPI_INT, &st));
	else
		TRY(MPI_File_write_ordered_c(fh, buf, (MPI_Count)n, MPI_INT,
		    &st));
	count_is(&st, MPI_INT, n, "E");
	if (rd)
		ordered_check(buf, P_E, n, 1, "E: word %lld is 0x%llx");
	pos_is(fh, l.s2, "E");

	/* S2, nonblocking */
	for (k = 0; k < 2; k++) {
		if (rd)
			for (i = 0; i < B; i++)
				blk[k][i] = GAP;
		else
			fill_block(blk[k], rank, 2 + k);
	}
	if (rd) {
		TRY(MPI_File_iread_shared(fh, blk[0], B, MPI_INT, &req[0]));
		TRY(MPI_File_iread_shared_c(fh, blk[1], (MPI_Count)B, MPI_INT,
		    &req[1]));
	} else {
		TRY(MPI_File_iwrite_shared(fh, blk[0], B, MPI_INT, &req[0]));
		TRY(MPI_File_iwrite_shared_c(fh, blk[1], (MPI_Count)B, MPI_INT,
		    &req[1]));
	}
	TRY(MPI_Waitall(2, req, sts));
	count_is(&sts[0], MPI_INT, B, "S2 (i*_shared)");
	count_is(&sts[1], MPI_INT, B, "S2 (i*_shared_c)");
	if (rd) {
		for (k = 0; k < 2; k++) {
			ids[k] = block_id(blk[k], nprocs, 2, "S2", -1);
			bad += ids[k] < 0;
		}
		all_blocks(ids, 2, "S2");
	}
	MPI_Barrier(MPI_COMM_WORLD);
	pos_is(fh, l.end, "S2");

	/* at the end: nothing to read, and the pointer moves on anyway */
	if (rd) {
		TRY(MPI_File_read_shared(fh, buf, B, MPI_INT, &st));
		count_is(&st, MPI_INT, 0, "read_shared at the end");
		MPI_Barrier(MPI_COMM_WORLD);
		pos_is(fh, l.end + (long long)nprocs * B, "read_shared at the "
		    "end");
	}
	MPI_Type_free(&two);
	free(blk[0]);
	free(blk[1]);
	free(buf);
}

/* ---- errors (under the preload) --------------------------------------- */

/* rc failed with class want (-1: any class) */
static void
fails(int rc, int want, const char *what)
{
	int cls = MPI_SUCCESS;

	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &cls);
	if (rc == MPI_SUCCESS || (want >= 0 && cls != want)) {
		fprintf(stderr, "mpi_shared: rank %d: %s: returned class %d, "
		    "expected %d\n", rank, what, cls, want);
		bad++;
	}
}

static void
errors(MPI_File fh)
{
	uint32_t buf[B];
	MPI_Status st;

	memset(buf, 0, sizeof(buf));
	TRY(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native",
	    MPI_INFO_NULL));
	/* MPICH's classes (tests/cmd/mpiio_mpich.sh compares them): its
	 * shared-pointer writes find a read-only file in the write, and a
	 * part of an etype is MPI_ERR_IO */
	fails(MPI_File_write_shared(fh, buf, 1, MPI_INT, &st), MPI_ERR_IO,
	    "write_shared on a read-only file");
	fails(MPI_File_read_shared(fh, buf, 3, MPI_BYTE, &st), MPI_ERR_IO,
	    "read_shared of 3 bytes with an etype of 4");
	pos_is(fh, 0, "failed independent calls");

	fails(MPI_File_write_ordered(fh, buf, 1, MPI_INT, &st), MPI_ERR_IO,
	    "write_ordered on a read-only file");
	/* one rank's bad count: every rank fails, none hangs */
	fails(MPI_File_read_ordered(fh, buf, rank == nprocs - 1 ? 3 : 4,
	    MPI_BYTE, &st), rank == nprocs - 1 ? MPI_ERR_IO : -1,
	    "read_ordered, one rank's count is not whole etypes");
	pos_is(fh, 0, "failed ordered calls");

	if (nprocs > 1)
		fails(MPI_File_seek_shared(fh, rank, MPI_SEEK_SET), MPI_ERR_ARG,
		    "seek_shared, the ranks pass different offsets");
	fails(MPI_File_seek_shared(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG,
	    "seek_shared to -1");
	fails(MPI_File_seek_shared(fh, 0, 12345), MPI_ERR_ARG,
	    "seek_shared with a bad whence");
	pos_is(fh, 0, "failed seeks");

	/* one split collective at a time */
	TRY(MPI_File_read_ordered_begin(fh, buf, 1, MPI_INT));
	fails(MPI_File_read_ordered_begin(fh, buf, 1, MPI_INT), MPI_ERR_OTHER,
	    "a second read_ordered_begin before the _end");
	TRY(MPI_File_read_ordered_end(fh, buf, &st));
	pos_is(fh, nprocs, "read_ordered_begin/_end");

	/* and it still works */
	TRY(MPI_File_read_shared(fh, buf, 2, MPI_INT, &st));
	count_is(&st, MPI_INT, 2, "read_shared after the errors");
	MPI_Barrier(MPI_COMM_WORLD);
	pos_is(fh, 3LL * nprocs, "read_shared after the errors");
}

/* ---- verify (no MPI) --------------------------------------------------- */

static uint32_t
word(const unsigned char *data, long long d, long long e)
{
	uint32_t w;

	memcpy(&w, data + d + e * E, E);
	return w;
}

static void
verify_ordered(const unsigned char *data, const struct layout *l,
	       long long base, int p, const char *part)
{
	long long at, i;
	int r;

	for (r = 0; r < l->n; r++) {
		at = base + before(p, l->n, r);
		for (i = 0; i < cnt(p, l->n, r); i++)
			if (word(data, l->d, at + i) != val(p, r, i)) {
				fprintf(stderr, "mpi_shared: %s: rank %d's word "
				    "%lld (etype %lld) is 0x%08x, expected "
				    "0x%08x\n", part, r, i, at + i,
				    word(data, l->d, at + i), val(p, r, i));
				bad++;
				break;
			}
	}
}

static void
verify_blocks(const unsigned char *data, const struct layout *l,
	      long long base, int k0, const char *part)
{
	uint32_t w[B];
	int seen[4096] = { 0 }, slot, id, j;

	for (slot = 0; slot < 2 * l->n; slot++) {
		for (j = 0; j < B; j++)
			w[j] = word(data, l->d, base + (long long)slot * B + j);
		id = block_id(w, l->n, k0, part, base + (long long)slot * B);
		if (id < 0)
			bad++;
		else
			seen[id]++;
	}
	for (id = 0; id < 4 * l->n; id++)
		if (id % 4 >= k0 && id % 4 < k0 + 2 && seen[id] != 1) {
			fprintf(stderr, "mpi_shared: %s: the block of rank %d "
			    "k %d is there %d times\n", part, id / 4, id % 4,
			    seen[id]);
			bad++;
		}
}

static void
verify_zero(const unsigned char *data, long long from, long long to,
	    const char *what)
{
	long long i;

	for (i = from; i < to; i++)
		if (data[i] != 0) {
			fprintf(stderr, "mpi_shared: %s: byte %lld is %d, "
			    "expected 0\n", what, i, data[i]);
			bad++;
			return;
		}
}

static int
verify(const char *path, int n)
{
	struct layout l;
	unsigned char *data;
	long long size, i, at;
	FILE *fp;
	int r;

	layout(n, &l);
	size = l.d + l.end * E;
	if ((fp = fopen(path, "rb")) == NULL) {
		perror(path);
		return 1;
	}
	data = calloc(1, (size_t)size + 1);
	if (data == NULL) {
		fclose(fp);
		return 1;
	}
	i = (long long)fread(data, 1, (size_t)size + 1, fp);
	fclose(fp);
	if (i != size) {
		fprintf(stderr, "mpi_shared: '%s' has %lld%s bytes, expected "
		    "%lld\n", path, i, i > size ? " or more" : "", size);
		free(data);
		return 1;
	}
	for (r = 0, at = 0; r < n; at += hdr_bytes(r), r++)
		for (i = 0; i < hdr_bytes(r); i++)
			if (data[at + i] != hdr_val(r, i)) {
				fprintf(stderr, "mpi_shared: header byte %lld "
				    "is %d, expected %d\n", at + i,
				    data[at + i], hdr_val(r, i));
				bad++;
				break;
			}
	verify_zero(data, l.h, l.d, "gap before the view");
	verify_ordered(data, &l, l.a, P_A, "A");
	verify_blocks(data, &l, l.s1, 0, "S1");
	verify_zero(data, l.d + (l.c - GAP_CUR) * E, l.d + l.c * E,
	    "gap of seek_shared(CUR)");
	verify_ordered(data, &l, l.c, P_C, "C");
	verify_zero(data, l.d + (l.dd - GAP_END) * E, l.d + l.dd * E,
	    "gap of seek_shared(END)");
	verify_ordered(data, &l, l.dd, P_D, "D");
	verify_ordered(data, &l, l.e, P_E, "E");
	verify_blocks(data, &l, l.s2, 2, "S2");
	free(data);
	if (bad)
		return 1;
	printf("mpi_shared: verify %d ranks ok (%lld bytes)\n", n, size);
	return 0;
}

/* ---- main -------------------------------------------------------------- */

static int
usage(void)
{
	fprintf(stderr, "usage: mpi_shared write|read|errors FILE\n"
	    "       mpi_shared verify FILE N\n"
	    "       mpi_shared prefix N\n");
	return 2;
}

int
main(int argc, char **argv)
{
	struct layout l;
	MPI_File fh;
	int amode, mode, all = 0;

	if (argc == 4 && strcmp(argv[1], "verify") == 0 && atoi(argv[3]) > 0 &&
	    atoi(argv[3]) <= 1000)
		return verify(argv[2], atoi(argv[3]));
	if (argc == 3 && strcmp(argv[1], "prefix") == 0 && atoi(argv[2]) > 0) {
		layout(atoi(argv[2]), &l);
		printf("%lld\n", l.d + (l.c - GAP_CUR - 2LL * l.n * B) * E);
		return 0;
	}
	if (argc != 3)
		return usage();
	if (strcmp(argv[1], "write") == 0)
		mode = 'w';
	else if (strcmp(argv[1], "read") == 0)
		mode = 'r';
	else if (strcmp(argv[1], "errors") == 0)
		mode = 'e';
	else
		return usage();

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	snprintf(who, sizeof(who), "rank %d: ", rank);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	amode = mode == 'w' ? MPI_MODE_CREATE | MPI_MODE_WRONLY :
	    MPI_MODE_RDONLY;
	TRY(MPI_File_open(MPI_COMM_WORLD, argv[2], amode, MPI_INFO_NULL, &fh));
	TRY(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
	if (mode == 'e')
		errors(fh);
	else
		run(fh, mode == 'r');
	TRY(MPI_File_close(&fh));
	MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (all == 0 && rank == 0)
		printf("mpi_shared: %s %d ranks ok\n", argv[1], nprocs);
	MPI_Finalize();
	return all ? 1 : 0;
}
