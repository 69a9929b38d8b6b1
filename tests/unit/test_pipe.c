/*
 * test_pipe.c - the double-buffered pipeline: order, content, errors from
 * either side, no hang (alarm() is the watchdog); chunks mapped from a
 * file, which someone truncates under either side.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core.h"
#include "pipe.h"
#include "tap.h"

/*
 * The producer emits a stream of `total` bytes where byte i is
 * byte_at(i), in chunks of varying length (1..cap); the consumer checks
 * every byte against its position and that tag[0] numbers the chunks.
 */
struct ctx {
	uint64_t total;
	uint64_t produced, nchunks_p;
	uint64_t consumed, nchunks_c;
	uint64_t fail_produce_at;	/* chunk index, or UINT64_MAX */
	uint64_t fail_consume_at;
	int bad;			/* a content or order mismatch */
	int slow_consumer, slow_producer;
	const void *bufs[2];		/* buffers seen, for the memory check */
	int nbufs;
	size_t cap_seen;
};

static unsigned char
byte_at(uint64_t i)
{
	return (unsigned char)((i * 2654435761u) >> 13);
}

/*
 * Mapped chunks: the producer maps 64 KiB pieces of a file and sums their
 * bytes; the consumer sums them again from the mapping.  `cut_at`: the
 * producer (side 0) or the consumer (side 1) truncates the file to 0
 * just before it touches that chunk, and must come back with an error
 * naming the file, not die of SIGBUS.
 */
#define MCHUNK (64u << 10)

struct mctx {
	int fd;
	const char *path;
	uint64_t size, pos, psum, csum;
	uint64_t cut_at;
	int cut_side;
	uint64_t nprod, ncons;
};

static uint64_t
sum_bytes(const unsigned char *p, size_t n)
{
	uint64_t s = 0;
	size_t i;

	for (i = 0; i < n; i += 512)
		s += p[i];
	return s;
}

static int
mproduce(void *arg, struct gfsp_chunk *c, int *done, struct gfsp_error *err)
{
	struct mctx *x = arg;
	int rc;

	if (x->pos >= x->size) {
		*done = 1;
		return 0;
	}
	rc = gfsp_rmap_open(x->fd, x->pos, MCHUNK, x->path, &c->map, err);
	if (rc)
		return rc;
	if (x->nprod == x->cut_at && x->cut_side == 0 &&
	    ftruncate(x->fd, 0) != 0)
		return gfsp_error_errno(err, errno, "ftruncate");
	c->data = c->map.data;
	c->len = MCHUNK;
	x->psum += sum_bytes(c->data, MCHUNK);
	x->pos += MCHUNK;
	x->nprod++;
	return 0;
}

static int
mconsume(void *arg, const struct gfsp_chunk *c, struct gfsp_error *err)
{
	struct mctx *x = arg;

	/* a guard inside the pipe's own (gfsp_rmap_vanished guards its
	 * touch): the truncation below must still be caught by the outer */
	if (gfsp_rmap_vanished(&c->map, NULL))
		return gfsp_error_set(err, GFSP_EIO, "vanished too early");
	if (x->ncons == x->cut_at && x->cut_side == 1 &&
	    ftruncate(x->fd, 0) != 0)
		return gfsp_error_errno(err, errno, "ftruncate");
	x->csum += sum_bytes(c->data, c->len);
	x->ncons++;
	return 0;
}

static const struct gfsp_pipe_ops mops = { mproduce, mconsume };

static int
fill_file(const char *path, uint64_t size)
{
	unsigned char b[MCHUNK];
	uint64_t i, o;
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	for (o = 0; fd >= 0 && o < size; o += MCHUNK) {
		for (i = 0; i < MCHUNK; i++)
			b[i] = byte_at(o + i);
		if (pwrite(fd, b, MCHUNK, (off_t)o) != MCHUNK) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

static void
mapped_chunks(void)
{
	char path[] = "/tmp/test_pipe.XXXXXX";
	struct gfsp_error err;
	struct gfsp_rmap m;
	struct mctx x;
	uint64_t want = 0, i;
	int tmp, side, rc, st;
	pid_t pid;

	tmp = mkstemp(path);
	ok(tmp >= 0, "temporary file %s", path);
	if (tmp < 0)
		return;
	close(tmp);
	for (i = 0; i < 16 * MCHUNK; i += 512)
		want += byte_at(i);

	memset(&x, 0, sizeof(x));
	x.fd = fill_file(path, 16 * MCHUNK);
	x.path = path;
	x.size = 16 * MCHUNK;
	x.cut_at = UINT64_MAX;
	gfsp_error_clear(&err);
	rc = gfsp_pipe_run(&mops, &x, 4096, &err);
	ok(rc == 0 && x.psum == want && x.csum == want && x.ncons == 16,
	   "16 mapped chunks: both sides read the file's bytes (%s)",
	   err.msg);
	if (x.fd >= 0)
		close(x.fd);

	for (side = 0; side < 2; side++) {
		memset(&x, 0, sizeof(x));
		x.fd = fill_file(path, 16 * MCHUNK);
		x.path = path;
		x.size = 16 * MCHUNK;
		/* the consumer cuts at the last chunk: the producer, done
		 * mapping, cannot fail first */
		x.cut_at = side ? 15 : 5;
		x.cut_side = side;
		gfsp_error_clear(&err);
		rc = gfsp_pipe_run(&mops, &x, 4096, &err);
		ok(rc == GFSP_EIO && strstr(err.msg, path) != NULL &&
		   strstr(err.msg, "shrank") != NULL &&
		   strstr(err.msg, "mapping") != NULL,
		   "file truncated under the %s: %s",
		   side ? "consumer" : "producer", err.msg);
		if (x.fd >= 0)
			close(x.fd);
	}

	/* a range the file does not have is refused when mapped */
	x.fd = fill_file(path, MCHUNK);
	gfsp_error_clear(&err);
	rc = gfsp_rmap_open(x.fd, 0, 2 * MCHUNK, path, &m, &err);
	ok(rc == GFSP_EIO && strstr(err.msg, "shrank") != NULL &&
	   m.base == NULL, "mapping past the end: %s", err.msg);

	/* outside any guard a vanished page still kills, as it would have */
	pid = fork();
	if (pid == 0) {
		if (gfsp_rmap_open(x.fd, 0, MCHUNK, path, &m, NULL) != 0 ||
		    ftruncate(x.fd, 0) != 0)
			_exit(2);
		_exit(sum_bytes(m.data, MCHUNK) == UINT64_MAX ? 4 : 3);
	}
	st = 0;
	waitpid(pid, &st, 0);
	/* killed by it, or (under ASan, whose handler was there first)
	 * ended by its report */
	ok((WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS) ||
	   (WIFEXITED(st) && WEXITSTATUS(st) == 1),
	   "SIGBUS outside a guard is not swallowed (status %#x)", st);
	close(x.fd);
	unlink(path);
}


static int
produce(void *arg, struct gfsp_chunk *c, int *done, struct gfsp_error *err)
{
	struct ctx *x = arg;
	size_t len, i;

	if (x->nchunks_p == x->fail_produce_at)
		return gfsp_error_set(err, GFSP_EIO, "cannot read 'src' at "
				     "chunk %llu: injected",
				     (unsigned long long)x->nchunks_p);
	if (x->produced == x->total) {
		*done = 1;
		return 0;
	}
	/* lengths cycle through 1..cap so chunks are not all full */
	len = 1 + (size_t)(x->nchunks_p * 7 % c->cap);
	len = (size_t)GFSP_MIN((uint64_t)len, x->total - x->produced);
	for (i = 0; i < len; i++)
		((unsigned char *)c->buf)[i] = byte_at(x->produced + i);
	c->len = len;
	c->tag[0] = x->nchunks_p;
	c->tag[1] = x->produced;
	x->produced += len;
	x->nchunks_p++;
	x->cap_seen = c->cap;
	if (x->slow_producer)
		usleep(200);
	return 0;
}

static int
consume(void *arg, const struct gfsp_chunk *c, struct gfsp_error *err)
{
	struct ctx *x = arg;
	size_t i;
	int k;

	if (x->nchunks_c == x->fail_consume_at)
		return gfsp_error_set(err, GFSP_ENOSPC, "cannot write 'dst' at "
				     "chunk %llu: injected",
				     (unsigned long long)x->nchunks_c);
	if (c->tag[0] != x->nchunks_c || c->tag[1] != x->consumed)
		x->bad = 1;
	for (i = 0; i < c->len; i++)
		if (((const unsigned char *)c->buf)[i] !=
		    byte_at(x->consumed + i))
			x->bad = 1;
	for (k = 0; k < x->nbufs && x->bufs[k] != c->buf; k++)
		;
	if (k == x->nbufs) {
		if (x->nbufs == 2)
			x->bad = 2;	/* a third buffer */
		else
			x->bufs[x->nbufs++] = c->buf;
	}
	if (((uintptr_t)c->buf & 4095) != 0)
		x->bad = 3;
	x->consumed += c->len;
	x->nchunks_c++;
	if (x->slow_consumer)
		usleep(200);
	return 0;
}

static const struct gfsp_pipe_ops ops = { produce, consume };

static void
ctx_init(struct ctx *x, uint64_t total)
{
	memset(x, 0, sizeof(*x));
	x->total = total;
	x->fail_produce_at = UINT64_MAX;
	x->fail_consume_at = UINT64_MAX;
}

int
main(void)
{
	static const size_t bufsizes[] = { 1, 3, 16, 4096, 65536 };
	struct gfsp_error err;
	struct ctx x;
	size_t i;
	int rc, round;

	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(60);	/* a hang is a failure */

	for (i = 0; i < GFSP_ARRAY_SIZE(bufsizes); i++) {
		ctx_init(&x, 100000);
		gfsp_error_clear(&err);
		rc = gfsp_pipe_run(&ops, &x, bufsizes[i], &err);
		ok(rc == 0 && x.bad == 0 && x.consumed == x.total &&
		   x.nchunks_c == x.nchunks_p && x.cap_seen == bufsizes[i],
		   "bufsize %zu: %llu chunks in order, content checked, "
		   "two aligned buffers", bufsizes[i],
		   (unsigned long long)x.nchunks_c);
	}
	ctx_init(&x, 0);
	rc = gfsp_pipe_run(&ops, &x, 16, &err);
	ok(rc == 0 && x.nchunks_c == 0, "empty stream");

	/* slow sides: the other one has to wait on its condition */
	for (round = 0; round < 2; round++) {
		ctx_init(&x, 20000);
		x.slow_consumer = round == 0;
		x.slow_producer = round == 1;
		gfsp_error_clear(&err);
		rc = gfsp_pipe_run(&ops, &x, 64, &err);
		ok(rc == 0 && x.bad == 0 && x.consumed == x.total,
		   "slow %s", round == 0 ? "consumer" : "producer");
	}

	/* producer errors at the first, a middle, and a late chunk */
	static const uint64_t at[] = { 0, 1, 2, 57, 1000 };
	for (i = 0; i < GFSP_ARRAY_SIZE(at); i++) {
		char want[64];

		ctx_init(&x, 1000000);
		x.fail_produce_at = at[i];
		x.slow_consumer = i == 3;
		gfsp_error_clear(&err);
		rc = gfsp_pipe_run(&ops, &x, 100, &err);
		snprintf(want, sizeof(want), "at chunk %llu: injected",
			 (unsigned long long)at[i]);
		ok(rc == GFSP_EIO && err.code == GFSP_EIO &&
		   strstr(err.msg, "cannot read 'src'") &&
		   strstr(err.msg, want) && x.bad == 0 &&
		   x.nchunks_c <= at[i],
		   "producer error at chunk %llu propagates: %s",
		   (unsigned long long)at[i], err.msg);
	}
	/* consumer errors */
	for (i = 0; i < GFSP_ARRAY_SIZE(at); i++) {
		char want[64];

		ctx_init(&x, 1000000);
		x.fail_consume_at = at[i];
		x.slow_producer = i == 3;
		gfsp_error_clear(&err);
		rc = gfsp_pipe_run(&ops, &x, 100, &err);
		snprintf(want, sizeof(want), "at chunk %llu: injected",
			 (unsigned long long)at[i]);
		ok(rc == GFSP_ENOSPC && err.code == GFSP_ENOSPC &&
		   strstr(err.msg, "cannot write 'dst'") &&
		   strstr(err.msg, want) && x.bad == 0 &&
		   x.nchunks_c == at[i] && x.nchunks_p <= at[i] + 2,
		   "consumer error at chunk %llu propagates, producer "
		   "stops within two chunks (%llu): %s",
		   (unsigned long long)at[i],
		   (unsigned long long)x.nchunks_p, err.msg);
	}
	/* first error wins over a caller's existing error? no: the
	 * caller's own earlier error is kept, the code is still returned */
	ctx_init(&x, 1000);
	x.fail_consume_at = 3;
	gfsp_error_clear(&err);
	gfsp_error_set(&err, GFSP_EIO, "earlier");
	rc = gfsp_pipe_run(&ops, &x, 10, &err);
	ok(rc == GFSP_ENOSPC && strcmp(err.msg, "earlier") == 0,
	   "an error already in err is kept");

	gfsp_error_clear(&err);
	rc = gfsp_pipe_run(&ops, &x, 0, &err);
	ok(rc == GFSP_EINVAL && err.msg[0] != '\0', "zero bufsize: %s",
	   err.msg);

	/* many short runs: thread start/join, errors on either side */
	for (round = 0, rc = 0; round < 200; round++) {
		int want = 0, got;

		ctx_init(&x, (uint64_t)round * 37 + 1);
		if (round % 3 == 1) {
			x.fail_produce_at = 0;
			want = GFSP_EIO;
		} else if (round % 3 == 2) {
			x.fail_consume_at = 0;
			want = GFSP_ENOSPC;
		}
		got = gfsp_pipe_run(&ops, &x, 8, NULL);
		if (got != want || x.bad != 0 ||
		    (want == 0 && x.consumed != x.total) ||
		    (want != 0 && x.consumed != 0))
			rc = 1;
	}
	ok(rc == 0, "200 short runs with errors on either side");

	mapped_chunks();
	return done_testing();
}
