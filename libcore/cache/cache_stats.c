/*
 * cache_stats.c - the cooperative cache's statistics: one rank's, their
 * sum over the job, and their printing as JSON or text.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "cache_impl.h"

/* ------------------------------------------------------------- stats */

void
gfsp_cache_stats(const struct gfsp_cache *c, struct gfsp_cache_stats *s)
{
	pthread_mutex_lock((pthread_mutex_t *)&c->mu);
	*s = c->st;
	pthread_mutex_unlock((pthread_mutex_t *)&c->mu);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

#define NSTAT	(sizeof(struct gfsp_cache_stats) / sizeof(uint64_t))

int
gfsp_cache_stats_all(struct gfsp_cache *c, struct gfsp_cache_stats *sum,
		     struct gfsp_cache_stats *mine, struct gfsp_error *err)
{
	struct gfsp_cache_stats *each = NULL;
	uint64_t *all = NULL, maxrun = 0, run = 0;
	int *cnt = NULL, *dsp = NULL, n = (int)c->nsread, r, total = 0, rc;
	size_t i;

	memset(sum, 0, sizeof(*sum));
	/* the threads' blocks counted, and no more coming */
	pthread_mutex_lock(&c->mu);
	gfsp_pf_drain(c, NULL);
	pthread_mutex_unlock(&c->mu);
	/* a barrier that sleeps: see cache_setup.c's wait_all */
	rc = gfsp_mpi_check(gfsp_quiet_barrier(c->comm),
	    "cannot sum the cache statistics", err);
	if (rc == 0)
		rc = gfsp_mpi_check(MPI_Reduce(&c->st, sum, (int)NSTAT,
		    MPI_UINT64_T, MPI_SUM, 0, c->comm),
		    "cannot sum the cache statistics", err);
	/* mine[] is rank 0's business: the others gather all the same */
	if (c->rank == 0)
		each = mine ? mine : calloc(c->nprocs, sizeof(*each));
	if (rc == 0)
		rc = gfsp_mpi_check(MPI_Gather(&c->st, (int)NSTAT,
		    MPI_UINT64_T, each, (int)NSTAT, MPI_UINT64_T, 0, c->comm),
		    "cannot gather the cache statistics", err);
	if (each != mine)
		free(each);
	/* reads from storage per block: every id to rank 0, counted there */
	if (c->rank == 0) {
		cnt = calloc(c->nprocs, sizeof(*cnt));
		dsp = calloc(c->nprocs, sizeof(*dsp));
	}
	if (rc == 0)
		rc = gfsp_mpi_check(MPI_Gather(&n, 1, MPI_INT, cnt, 1, MPI_INT,
		    0, c->comm), "cannot gather the cache statistics", err);
	if (rc == 0 && c->rank == 0) {
		for (r = 0; r < c->nprocs; r++) {
			dsp[r] = total;
			total += cnt[r];
		}
		all = malloc(((size_t)total + 1) * sizeof(*all));
	}
	if (rc == 0)
		rc = gfsp_mpi_check(MPI_Gatherv(c->sread, n, MPI_UINT64_T, all,
		    cnt, dsp, MPI_UINT64_T, 0, c->comm),
		    "cannot gather the cache statistics", err);
	if (rc == 0 && c->rank == 0 && all != NULL) {
		qsort(all, (size_t)total, sizeof(*all), cmp_u64);
		for (i = 0; i < (size_t)total; i++) {
			run = i > 0 && all[i] == all[i - 1] ? run + 1 : 1;
			maxrun = GFSP_MAX(maxrun, run);
		}
		sum->max_storage_reads_per_block = maxrun;
	}
	free(all);
	free(cnt);
	free(dsp);
	return rc;
}

static const char *const stat_names[] = {
	"reads", "bytes", "hits", "peer_copies", "peer_bytes",
	"storage_reads", "storage_bytes_read", "retries", "waits",
	"evict_general", "evict_singlet", "to_singlet", "tier_reads",
	"tier_bytes_read", "published", "peer_pieces", "peer_piece_bytes",
	"given_up_reads", "given_up_bytes", "readahead",
	"max_storage_reads_per_block",
};

struct json_object *
gfsp_cache_stats_object(const struct gfsp_cache_stats *s)
{
	const uint64_t *v = (const uint64_t *)s;
	json_object *o = json_object_new_object();
	size_t i;

	for (i = 0; o != NULL && i < NSTAT; i++)
		json_object_object_add(o, stat_names[i],
		    json_object_new_uint64(v[i]));
	return o;
}

void
gfsp_cache_stats_json(FILE *fp, const struct gfsp_cache_stats *s)
{
	json_object *o = gfsp_cache_stats_object(s);

	fputs(o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) :
	    "null", fp);
	json_object_put(o);
}

void
gfsp_cache_stats_text(FILE *fp, const char *who,
		      const struct gfsp_cache_stats *s)
{
	fprintf(fp, "%s: %llu reads, %llu bytes; blocks: %llu own hits, "
	    "%llu from the local tier, %llu from peers, %llu from storage "
	    "(%llu bytes), %llu retries, %llu waits; evicted %llu (LRU) + "
	    "%llu (singlet FIFO), %llu kept as singlets", who,
	    (unsigned long long)s->reads,
	    (unsigned long long)s->bytes, (unsigned long long)s->hits,
	    (unsigned long long)s->tier_reads,
	    (unsigned long long)s->peer_copies,
	    (unsigned long long)s->storage_reads,
	    (unsigned long long)s->storage_bytes,
	    (unsigned long long)s->retries, (unsigned long long)s->waits,
	    (unsigned long long)s->evict_general,
	    (unsigned long long)s->evict_singlet,
	    (unsigned long long)s->to_singlet);
	if (s->peer_pieces)
		fprintf(fp, "; %llu reads (%llu bytes) straight from peers' "
		    "slots", (unsigned long long)s->peer_pieces,
		    (unsigned long long)s->peer_piece_bytes);
	if (s->given_up_reads)
		fprintf(fp, "; %llu reads (%llu bytes) from storage past a peer "
		    "that stopped answering", (unsigned long long)s->given_up_reads,
		    (unsigned long long)s->given_up_bytes);
	if (s->published)
		fprintf(fp, "; %llu local tier blocks published at start",
		    (unsigned long long)s->published);
	if (s->max_storage_reads_per_block)
		fprintf(fp, "; at most %llu storage reads of one block",
		    (unsigned long long)s->max_storage_reads_per_block);
	fputc('\n', fp);
}
