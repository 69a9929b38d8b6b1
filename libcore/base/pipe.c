/*
 * pipe.c - double-buffered pipeline: a helper thread produces into one
 * buffer while the caller consumes the other.
 *
 *   slot:      0        1        0        1
 *   helper:  fill c0  fill c1  (wait)   fill c2 ...
 *   caller:           use c0   use c1            use c2
 *
 * Each slot is EMPTY (the helper may fill it) or FULL (the caller may use
 * it); both sides walk the slots in the same order 0,1,0,1,... so chunks
 * are consumed in production order.  `stop` is raised by the first error
 * of either side (or by the caller leaving); both sides check it whenever
 * they wake, so neither can wait forever for the other.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "pipe.h"

enum { WHO_NONE, WHO_PRODUCER, WHO_CONSUMER };

struct pipe_state {
	const struct gfsp_pipe_ops *ops;
	void *ctx;
	pthread_mutex_t lock;
	pthread_cond_t filled;		/* a slot became FULL, or eof/stop */
	pthread_cond_t emptied;		/* a slot became EMPTY, or stop */
	struct gfsp_chunk chunk[2];
	int full[2];
	int eof;			/* the helper has nothing more */
	int stop;			/* an error happened or caller left */
	int failed;			/* WHO_*: whose error is first */
	int prc;			/* the helper's return code */
	struct gfsp_error perr;		/* the helper's error */
};

struct call {
	struct pipe_state *ps;
	struct gfsp_chunk *c;
	int *done;
	struct gfsp_error *err;
};

static int
call_produce(void *arg)
{
	struct call *k = arg;

	return k->ps->ops->produce(k->ps->ctx, k->c, k->done, k->err);
}

static int
call_consume(void *arg)
{
	struct call *k = arg;

	return k->ps->ops->consume(k->ps->ctx, k->c, k->err);
}

/* GFSP_ECANCELED once a SIGINT or SIGTERM stops the copy */
static int
stopped(struct gfsp_error *err)
{
	int sig = gfsp_watch_stopped();

	if (sig == 0)
		return 0;
	return gfsp_error_set(err, GFSP_ECANCELED, "interrupted by %s",
			     sig == SIGTERM ? "SIGTERM" : sig == SIGINT ?
			     "SIGINT" : "a signal");
}

static void *
pipe_producer(void *arg)
{
	struct pipe_state *ps = arg;
	struct gfsp_chunk *c;
	struct call k;
	int slot = 0, done, rc;

	for (;;) {
		pthread_mutex_lock(&ps->lock);
		while (ps->full[slot] && !ps->stop)
			pthread_cond_wait(&ps->emptied, &ps->lock);
		if (ps->stop) {
			pthread_mutex_unlock(&ps->lock);
			break;
		}
		pthread_mutex_unlock(&ps->lock);

		/* the slot is EMPTY: the caller does not touch it */
		c = &ps->chunk[slot];
		if (stopped(&ps->perr)) {
			rc = GFSP_ECANCELED;
			pthread_mutex_lock(&ps->lock);
			ps->prc = rc;
			if (ps->failed == WHO_NONE)
				ps->failed = WHO_PRODUCER;
			ps->stop = 1;
			pthread_cond_signal(&ps->filled);
			pthread_mutex_unlock(&ps->lock);
			break;
		}
		c->len = 0;
		c->data = c->buf;
		memset(c->tag, 0, sizeof(c->tag));
		done = 0;
		k = (struct call){ ps, c, &done, &ps->perr };
		rc = gfsp_guard(call_produce, &k, NULL, &ps->perr);
		if (rc == 0 && !done && c->data == c->buf && c->len > c->cap)
			rc = gfsp_error_set(&ps->perr, GFSP_EINVAL, "pipeline: "
					   "chunk of %zu bytes overflows its "
					   "%zu-byte buffer", c->len, c->cap);

		pthread_mutex_lock(&ps->lock);
		if (rc != 0) {
			ps->prc = rc;
			if (ps->failed == WHO_NONE)
				ps->failed = WHO_PRODUCER;
			ps->stop = 1;
		} else if (done) {
			ps->eof = 1;
		} else {
			ps->full[slot] = 1;
		}
		pthread_cond_signal(&ps->filled);
		pthread_mutex_unlock(&ps->lock);
		if (rc != 0 || done)
			break;
		slot ^= 1;
	}
	return NULL;
}

/* The consumer's side: each full chunk, in turn, to ops->consume until
 * the producer's end, an error or a stop; 0 or the consumer's error (in
 * cerr). */
static int
consume_all(struct pipe_state *ps, struct gfsp_error *cerr)
{
	struct call k;
	int slot = 0, rc = 0;

	for (;;) {
		pthread_mutex_lock(&ps->lock);
		while (!ps->full[slot] && !ps->eof && !ps->stop)
			pthread_cond_wait(&ps->filled, &ps->lock);
		if (ps->stop || !ps->full[slot]) {
			/* an error, or eof with every full slot used */
			pthread_mutex_unlock(&ps->lock);
			break;
		}
		pthread_mutex_unlock(&ps->lock);

		/* the slot is FULL: the helper does not touch it */
		k = (struct call){ ps, &ps->chunk[slot], NULL, cerr };
		rc = stopped(cerr);
		if (rc == 0)
			rc = gfsp_guard(call_consume, &k,
				       ps->chunk[slot].map.name, cerr);
		/* a write from a mapped page that vanished failed with
		 * EFAULT ("Bad address"): say what happened instead */
		if (rc != 0)
			gfsp_rmap_vanished(&ps->chunk[slot].map, cerr);
		gfsp_rmap_close(&ps->chunk[slot].map);

		pthread_mutex_lock(&ps->lock);
		if (rc != 0) {
			if (ps->failed == WHO_NONE)
				ps->failed = WHO_CONSUMER;
			ps->stop = 1;
		} else {
			ps->full[slot] = 0;
		}
		pthread_cond_signal(&ps->emptied);
		pthread_mutex_unlock(&ps->lock);
		if (rc != 0)
			break;
		slot ^= 1;
	}
	return rc;
}

/* After the join (perr is ours to read): the run's verdict, rc the
 * consumer's, into err with the first failure's message. */
static int
verdict(const struct pipe_state *ps, int rc, const struct gfsp_error *cerr,
	struct gfsp_error *err)
{
	if (ps->failed == WHO_PRODUCER) {
		rc = ps->prc;
		if (err != NULL && err->code == GFSP_OK) {
			if (ps->perr.code != GFSP_OK)
				*err = ps->perr;
			else
				gfsp_error_set(err, rc, "pipeline: reader "
					      "failed");
		}
	} else if (ps->failed == WHO_CONSUMER) {
		if (err != NULL && err->code == GFSP_OK) {
			if (cerr->code != GFSP_OK)
				*err = *cerr;
			else
				gfsp_error_set(err, rc, "pipeline: writer "
					      "failed");
		}
	} else {
		rc = 0;
	}
	return rc;
}

int
gfsp_pipe_run(const struct gfsp_pipe_ops *ops, void *ctx, size_t bufsize,
	     struct gfsp_error *err)
{
	struct pipe_state ps;
	struct gfsp_error cerr;
	pthread_t th;
	int rc = 0, prc, i;

	memset(&ps, 0, sizeof(ps));
	gfsp_error_clear(&cerr);
	if (bufsize == 0)
		return gfsp_error_set(err, GFSP_EINVAL, "pipeline: zero buffer "
				     "size");
	ps.ops = ops;
	ps.ctx = ctx;
	pthread_mutex_init(&ps.lock, NULL);
	pthread_cond_init(&ps.filled, NULL);
	pthread_cond_init(&ps.emptied, NULL);
	for (i = 0; i < 2; i++) {
		if ((ps.chunk[i].buf = gfsp_big_alloc(bufsize, 4096)) == NULL) {
			rc = gfsp_error_set(err, GFSP_ENOMEM, "pipeline: cannot "
					   "allocate two buffers of %zu bytes",
					   bufsize);
			goto out;
		}
		ps.chunk[i].cap = bufsize;
	}
	prc = pthread_create(&th, NULL, pipe_producer, &ps);
	if (prc != 0) {
		rc = gfsp_error_errno(err, prc, "pipeline: cannot start the "
				     "reader thread");
		goto out;
	}

	rc = consume_all(&ps, &cerr);

	/* release the helper if it waits for a slot, then join it */
	pthread_mutex_lock(&ps.lock);
	ps.stop = 1;
	pthread_cond_signal(&ps.emptied);
	pthread_mutex_unlock(&ps.lock);
	pthread_join(th, NULL);

	rc = verdict(&ps, rc, &cerr, err);
out:
	for (i = 0; i < 2; i++) {
		gfsp_rmap_close(&ps.chunk[i].map);
		free(ps.chunk[i].buf);
	}
	pthread_cond_destroy(&ps.emptied);
	pthread_cond_destroy(&ps.filled);
	pthread_mutex_destroy(&ps.lock);
	return rc;
}
