/*
 * cache_readahead.c - the cooperative cache's read-ahead: a few threads
 * that acquire the blocks a sequential reader will want next (queued by
 * gfsp_cache_pread, cache.c), and the record of which blocks they are busy
 * with.  The window and the protocol they follow are cache.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache_impl.h"

/* The first peer given up (GFSP_ENET in err), remembered and said. */
void
gfsp_cache_note_given_up(struct gfsp_cache *c, const struct gfsp_error *err)
{
	if (c->gave_up[0] == '\0') {
		snprintf(c->gave_up, sizeof(c->gave_up), "%s", err->msg);
		gfsp_log_warn("%s: reading from storage instead", err->msg);
	}
}

static uint64_t
job_bid(const struct pf_job *j)
{
	return gfsp_cache_block_id(j->f->key, j->idx);
}

/* Is block bid being acquired by a thread of ours? */
static int
busy_with(const struct gfsp_cache *c, uint64_t bid)
{
	unsigned i;

	for (i = 0; i < c->nbusy; i++)
		if (job_bid(&c->busy[i]) == bid)
			return 1;
	return 0;
}

/* Any thread on a block of f (NULL: of any file)? */
static int
busy_on(const struct gfsp_cache *c, const struct gfsp_cache_file *f)
{
	unsigned i;

	for (i = 0; i < c->nbusy; i++)
		if (f == NULL || c->busy[i].f == f)
			return 1;
	return 0;
}

/* Wait until no thread acquires bid, then mark it ours (unbusy after). */
void
gfsp_cache_busy_take(struct gfsp_cache *c, struct gfsp_cache_file *f,
		     uint64_t idx, uint64_t bid)
{
	while (busy_with(c, bid))
		pthread_cond_wait(&c->pf_cv, &c->mu);
	c->busy[c->nbusy].f = f;
	c->busy[c->nbusy++].idx = idx;
}

void
gfsp_cache_unbusy(struct gfsp_cache *c, uint64_t bid)
{
	unsigned i;

	for (i = 0; i < c->nbusy; i++)
		if (job_bid(&c->busy[i]) == bid) {
			c->busy[i] = c->busy[--c->nbusy];
			break;
		}
	pthread_cond_broadcast(&c->pf_cv);
}

uint64_t
gfsp_cache_block_len(const struct gfsp_cache_file *f, uint64_t idx)
{
	return GFSP_MIN(f->c->bsize, f->size - idx * f->c->bsize);
}

/* A read-ahead thread: queued blocks into this rank's slots, one at a
 * time; a block that fails is left to the reader, who meets the error
 * itself when it gets there. */
static void *
pf_main(void *arg)
{
	struct gfsp_cache *c = arg;
	struct pf_job j;
	struct piece pc;
	struct gfsp_error e;
	uint64_t bid;
	uint32_t s;
	int rc;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (!c->pf_stop && c->pf_n == 0)
			pthread_cond_wait(&c->pf_cv, &c->mu);
		if (c->pf_stop)
			break;
		j = c->pf_q[c->pf_head];
		c->pf_head = (c->pf_head + 1) % PF_QMAX;
		c->pf_n--;
		bid = job_bid(&j);
		gfsp_cache_index_find(c, bid, &s);
		/* there already, on its way, or read past */
		if (s != NONE || busy_with(c, bid) || j.idx < j.f->next_idx)
			continue;
		gfsp_cache_busy_take(c, j.f, j.idx, bid);
		memset(&pc, 0, sizeof(pc));
		gfsp_error_clear(&e);
		rc = gfsp_cache_acquire(j.f, j.idx, bid, gfsp_cache_block_len(j.f, j.idx), &pc, &s,
		    1, &e);
		if (rc == 0 && s != NONE)
			c->st.readahead++;
		else if (rc == GFSP_ENET)	/* the reader reads around it */
			gfsp_cache_note_given_up(c, &e);
		gfsp_cache_unbusy(c, bid);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* Start the threads (with every signal blocked: they are the
 * application's).  None started: the reader goes on without. */
static void
pf_start(struct gfsp_cache *c)
{
	sigset_t all, old;
	int i;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = c->pf_on; i < c->npf; i++)
		if (pthread_create(&c->pf_thr[i], NULL, pf_main, c) != 0)
			break;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	c->pf_on = c->npf = i;
	if (c->pf_on == 0) {
		c->npf = 0;
		c->pf_n = 0;
		gfsp_log_verbose("cache: no read-ahead thread could start");
	}
}

/* The reader is at block idx of f: queue the blocks after it, up to
 * pf_depth ahead, if it reads in order. */
void
gfsp_pf_queue(struct gfsp_cache_file *f, uint64_t idx)
{
	struct gfsp_cache *c = f->c;
	uint64_t nb = (f->size + c->bsize - 1) / c->bsize;
	int queued = 0;

	if (c->npf == 0 || f->run < 2)
		return;
	if (f->pf_next <= idx)
		f->pf_next = idx + 1;
	while (f->pf_next < nb && f->pf_next <= idx + c->pf_depth &&
	       c->pf_n < PF_QMAX) {
		c->pf_q[(c->pf_head + c->pf_n++) % PF_QMAX] = (struct pf_job)
		    { f, f->pf_next++ };
		queued = 1;
	}
	if (queued && c->pf_on < c->npf)
		pf_start(c);
	if (queued)
		pthread_cond_broadcast(&c->pf_cv);
}

/* Nothing of f (NULL: of any file) queued or being read ahead. */
void
gfsp_pf_drain(struct gfsp_cache *c, const struct gfsp_cache_file *f)
{
	unsigned i, n = 0;

	for (i = 0; i < c->pf_n; i++) {
		struct pf_job j = c->pf_q[(c->pf_head + i) % PF_QMAX];

		if (f != NULL && j.f != f)
			c->pf_q[(c->pf_head + n++) % PF_QMAX] = j;
	}
	c->pf_n = n;
	c->pf_draining++;
	while (busy_on(c, f))
		pthread_cond_wait(&c->pf_cv, &c->mu);
	c->pf_draining--;
}

void
gfsp_pf_stop(struct gfsp_cache *c)
{
	int i;

	pthread_mutex_lock(&c->mu);
	c->pf_stop = 1;
	pthread_cond_broadcast(&c->pf_cv);
	pthread_mutex_unlock(&c->mu);
	for (i = 0; i < c->pf_on; i++)
		pthread_join(c->pf_thr[i], NULL);
	c->pf_on = 0;
}

/* How far the threads read ahead: opts' blocks, else those of
 * GFSPLIT_CACHE_READAHEAD, on a transport that takes several threads, a
 * quarter of the slots at most (the reader's own blocks must not be
 * pushed out); one thread for every two blocks, PF_THREADS at most. */
void
gfsp_pf_setup(struct gfsp_cache *c, int want)
{
	const char *v = getenv("GFSPLIT_CACHE_READAHEAD");
	char *end;
	long n;
	uint64_t d;

	if (want == 0 && v != NULL && *v != '\0') {
		errno = 0;
		n = strtol(v, &end, 10);
		if (errno != 0 || *end != '\0' || n < 0 || n > PF_QMAX)
			gfsp_log_warn("GFSPLIT_CACHE_READAHEAD: '%s' is not a "
			    "number of blocks (0 to %d); the default, %d, is "
			    "used", v, PF_QMAX, PF_DEFAULT);
		else
			want = n == 0 ? -1 : (int)n;
	}
	d = want < 0 ? 0 : want == 0 ? PF_DEFAULT : (uint64_t)want;

	if (!c->os->threads || c->os->mapped)
		d = 0;
	d = GFSP_MIN(GFSP_MIN(d, c->nslots / 4), (uint64_t)PF_QMAX);
	c->pf_depth = (unsigned)d;
	c->npf = d == 0 ? 0 : (int)GFSP_MIN((d + 1) / 2, (uint64_t)PF_THREADS);
}
