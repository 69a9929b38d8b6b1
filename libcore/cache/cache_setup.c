/*
 * cache_setup.c - the cooperative cache's making and unmaking: the
 * options checked, the window laid out (cache.c's head comment has its
 * picture), the local bookkeeping allocated, and all of it freed again.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cache_impl.h"

/* Everything of c but the window. */
static void
free_local(struct gfsp_cache *c)
{
	free(c->bid);
	free(c->tok);
	free(c->prev);
	free(c->next);
	free(c->where);
	free(c->freel);
	free(c->index);
	free(c->sread);
	gfsp_tier_free_all(c->tier, c->ntier);
	pthread_mutex_destroy(&c->mu);
	pthread_mutex_destroy(&c->store_mu);
	pthread_cond_destroy(&c->pf_cv);
	free(c);
}

/* The sizes and counts of c from the options o; every rank's verdict is
 * agreed by the caller. */
static int
size_up(struct gfsp_cache *c, MPI_Comm comm, const struct gfsp_cache_opts *o,
	struct gfsp_error *err)
{
	uint64_t bytes;
	int rc = 0;

	c->comm = comm;
	MPI_Comm_rank(comm, &c->rank);
	MPI_Comm_size(comm, &c->nprocs);
	c->bsize = o->block_size ? o->block_size : GFSP_CACHE_BLOCK_DEFAULT;
	c->timeout = gfsp_timeout_setting();
	bytes = o->cache_size ? o->cache_size : GFSP_CACHE_SIZE_DEFAULT;
	c->nslots = bytes / c->bsize;
	c->groups = o->groups > 0 ? o->groups : 1;
	c->group = c->rank % c->groups;
	c->gsize = (c->nprocs - c->group + c->groups - 1) / c->groups;
	c->max_singlets = (uint64_t)((o->singlet_ratio < 0 ?
	    GFSP_CACHE_RATIO_DEFAULT : o->singlet_ratio) * (double)c->nslots);
	if (c->bsize % 8 != 0 || c->nslots < 1)
		rc = gfsp_error_set(err, GFSP_EINVAL, "cache of %llu bytes "
		    "with blocks of %llu: need at least one block, and "
		    "blocks a multiple of 8 bytes",
		    (unsigned long long)bytes, (unsigned long long)c->bsize);
	else if (c->nslots >= MAX_SLOTS || (uint64_t)c->nprocs >= MAX_RANKS)
		rc = gfsp_error_set(err, GFSP_EINVAL, "cache of %llu blocks "
		    "on %d ranks: at most %llu blocks and %llu ranks",
		    (unsigned long long)c->nslots, c->nprocs,
		    (unsigned long long)MAX_SLOTS - 1,
		    (unsigned long long)MAX_RANKS - 1);
	else if (c->groups > c->nprocs || c->groups > 64)
		rc = gfsp_error_set(err, GFSP_EINVAL, "%d groups on %d ranks "
		    "(at most the number of ranks, and 64)", c->groups,
		    c->nprocs);
	else if (o->singlet_ratio > 1)
		rc = gfsp_error_set(err, GFSP_EINVAL, "singlet ratio %g is "
		    "above 1", o->singlet_ratio);
	return rc;
}

/* The window's layout and the local bookkeeping of c (sized up). */
static int
lay_out(struct gfsp_cache *c, struct gfsp_error *err)
{
	uint64_t i;
	int rc = 0;

	pthread_mutex_init(&c->mu, NULL);
	pthread_mutex_init(&c->store_mu, NULL);
	pthread_cond_init(&c->pf_cv, NULL);
	/* directories: rows for 8 times the blocks all caches hold */
	c->rd_rows = 8 * c->nslots;
	c->ad_rows = 2 * c->nslots;
	c->rd_off = c->nslots * 16;
	c->ad_off = c->rd_off + c->rd_rows * ((uint64_t)c->groups + 1) * 8;
	c->data_off = (c->ad_off + c->ad_rows * 8 + 4095) / 4096 * 4096;
	c->rnd = mix((uint64_t)c->rank + 1) | 1;
	for (i = 1; i < 2 * c->nslots; i <<= 1)
		;
	c->index_mask = i - 1;
	c->bid = calloc(c->nslots, sizeof(*c->bid));
	c->tok = calloc(c->nslots, sizeof(*c->tok));
	c->prev = calloc(c->nslots + 2, sizeof(*c->prev));
	c->next = calloc(c->nslots + 2, sizeof(*c->next));
	c->where = calloc(c->nslots, 1);
	c->freel = calloc(c->nslots, sizeof(*c->freel));
	c->index = malloc((c->index_mask + 1) * sizeof(*c->index));
	if (c->bid == NULL || c->tok == NULL || c->prev == NULL || c->next == NULL ||
	    c->where == NULL || c->freel == NULL || c->index == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory for a "
		    "cache of %llu blocks", (unsigned long long)c->nslots);
	if (rc == 0) {
		memset(c->index, 0xff, (c->index_mask + 1) *
		    sizeof(*c->index));
		c->next[GEN(c)] = c->prev[GEN(c)] = GEN(c);
		c->next[SING(c)] = c->prev[SING(c)] = SING(c);
		for (i = 0; i < c->nslots; i++)
			c->freel[c->nfree++] = (uint32_t)(c->nslots - 1 - i);
	}
	return rc;
}

int
gfsp_cache_create(MPI_Comm comm, const struct gfsp_cache_opts *o,
		  struct gfsp_cache **out, struct gfsp_error *err)
{
	struct gfsp_cache_opts none;
	struct gfsp_cache *c;
	int rc;

	*out = NULL;
	if (o == NULL) {
		memset(&none, 0, sizeof(none));
		none.singlet_ratio = -1;
		o = &none;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return gfsp_agree(comm, gfsp_error_set(err, GFSP_ENOMEM,
		    "out of memory"), err);
	rc = gfsp_agree(comm, size_up(c, comm, o, err), err);
	if (rc) {
		free(c);
		return rc;
	}
	rc = gfsp_agree(comm, lay_out(c, err), err);
	if (rc == 0)
		rc = gfsp_os_create(comm, o->transport, c->data_off +
		    c->nslots * c->bsize, c->data_off, &c->os, &c->w, err);
	if (rc) {
		free_local(c);
		return rc;
	}
	c->base = c->os->base(c->w);
	gfsp_pf_setup(c, o->readahead);
	if (o->local_dir != NULL) {
		rc = gfsp_cache_open_tier(c, o->local_dir, o->local_only, err);
		if (rc) {
			gfsp_cache_destroy(c);
			return rc;
		}
	}
	*out = c;
	return 0;
}

/*
 * A barrier that sleeps between tests instead of spinning: ranks that are
 * done must not take the CPU from those still reading (and from their
 * one-sided operations, which a waiting rank serves inside MPI_Test).
 */
static int
wait_all(struct gfsp_cache *c)
{
	return gfsp_quiet_barrier(c->comm);
}

void
gfsp_cache_destroy(struct gfsp_cache *c)
{
	if (c == NULL)
		return;
	gfsp_pf_stop(c);
	/* peers may still copy from us until everyone is done */
	wait_all(c);
	c->os->destroy(c->w);
	free_local(c);
}
