/*
 * map_bench.c - global -> local offset lookups per second for views of
 * 16, 4096 and 1,048,576 blocks (gfsp_view_lookup: the view's search index,
 * buckets of fitted lines over leaves of (off, pre), a B+ tree where lines
 * do not fit), against MPI-IO/Gfarm's Figure 6 linear scan at 4096 blocks as
 * the named baseline.  The million-block view comes twice: spread evenly,
 * and skewed (half of its blocks bunched in 1/64 of the tile), where a
 * guess from offset / extent is far off.  Single process, no MPI_Init.
 *
 * The target: lookups per second within 3x of each other from 16 to 1M
 * blocks (logarithmic, not linear).  Every figure is the median of REPS
 * runs over the same random queries.  Prints one JSON object:
 *   lookups_per_sec        {arr_len: rate}, the million spread evenly
 *   max_min_ratio          fastest / slowest of those three (1 = flat)
 *   skewed_1048576_lookups_per_sec  the skewed million
 *   skewed_max_min_ratio   fastest / slowest of 16, 4096, skewed million
 *   target_max_min_ratio   3
 *   runs_lookups_per_sec   every run of every view, for the spread
 *   linear_lookups_per_sec_4096  the Figure 6 scan at 4096
 *   speedup_vs_linear_4096 index / linear at 4096
 * plus peak RSS and CPU time.  Both searches are checked against each
 * other first, on every view.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <json-c/json.h>

#include "core.h"
#include "../tests/rng.h"

#define REPS		5
#define NQUERY		(2u << 20)	/* index: 2 Mi lookups per run */
#define NQUERY_LINEAR	(20u << 10)	/* linear scan: 20 Ki lookups per run */
#define GAP		64		/* mean bytes per block slot */

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/*
 * MPI-IO/Gfarm's location record (Kimura and Tatebe, Table 1) and its Figure 6 lookup, translated
 * line by line: a linear scan over blocklens[]/indices[] per lookup.  The
 * input offset is relative to disp, as in the paper.
 */
struct location_info {
	uint64_t arr_len;
	uint64_t filetype_size, filetype_extent;
	const uint64_t *blocklens, *indices;
};

static void
fig6_lookup(uint64_t global_offset, const struct location_info *li,
	    int64_t *local_offset, uint64_t *count)
{
	/* 1) initialize variables */
	uint64_t ft_count = global_offset / li->filetype_extent;
	uint64_t offset = global_offset - ft_count * li->filetype_extent;
	uint64_t bl_sum = 0, i;
	int flag = 0;

	/* 2) search the block including the offset */
	for (i = 0; i < li->arr_len; i++) {
		if (li->blocklens[i] == 0) {
			continue;
		} else if (offset == li->indices[i]) {
			flag = 1;
			break;
		} else if (offset > li->indices[i] &&
			   offset < li->indices[i] + li->blocklens[i]) {
			bl_sum += offset - li->indices[i];
			flag = 1;
			break;
		} else {
			bl_sum += li->blocklens[i];
		}
	}
	/* 3) calculate the local offset and count */
	if (flag == 1) {
		*local_offset = (int64_t)(li->filetype_size * ft_count + bl_sum);
		*count = li->blocklens[i] - (offset - li->indices[i]);
	} else {
		*local_offset = -1;
		*count = 0;
	}
}

/*
 * A view of n blocks.  Even: one block per GAP-byte slot, random start
 * and length.  Skewed: the same blocks, but half of them bunched into the
 * first 1/64 of the extent, so that the block index is far from
 * proportional to the offset.
 */
static int
make_view(struct gfsp_view *v, uint64_t n, int skewed)
{
	uint64_t *off = malloc(n * sizeof(*off)), *len = malloc(n * sizeof(*len));
	struct gfsp_error err = { 0 };
	uint64_t i, extent = n * GAP;
	int rc;

	for (i = 0; i < n; i++) {
		off[i] = i * GAP + rnd(GAP / 2);
		len[i] = 1 + rnd(GAP / 2 - 1);
		if (skewed && i < n / 2) {
			off[i] = i * (GAP / 32);	/* blocks of 1 byte */
			len[i] = 1;
		} else if (skewed) {
			off[i] = extent / 64 + (i - n / 2) * (GAP * 63 / 32) +
				 rnd(GAP);
			len[i] = 1 + rnd(GAP - 1);
		}
	}
	rc = gfsp_view_init(v, 4096, extent, GFSP_VIEW_UNBOUNDED, n, off, len,
			   &err);
	if (rc != 0)
		fprintf(stderr, "map_bench: %s\n", err.msg);
	free(off);
	free(len);
	return rc;
}

/* results land here so the lookups cannot be optimised away */
static volatile uint64_t sink;

/*
 * The queries: uniform over [disp, disp + span), drawn inline from a
 * fixed seed (so every run and both searches see the same sequence, and
 * no query array competes with the view for the cache).
 */
struct qgen {
	uint64_t s, base, span;
};

static inline uint64_t
qnext(struct qgen *g)
{
	g->s ^= g->s << 13;
	g->s ^= g->s >> 7;
	g->s ^= g->s << 17;
	return g->base + (uint64_t)(((unsigned __int128)g->s * g->span) >> 64);
}

static double
bench_index(const struct gfsp_view *v, struct qgen g, uint32_t nq)
{
	uint64_t loff, count, acc = 0;
	double t0 = now();
	uint32_t i;

	for (i = 0; i < nq; i++) {
		acc += (uint64_t)gfsp_view_lookup(v, qnext(&g), &loff, &count) +
		       loff + count;
	}
	t0 = now() - t0;
	sink += acc;
	return nq / t0;
}

static double
bench_linear(const struct location_info *li, uint64_t disp, struct qgen g,
	     uint32_t nq)
{
	uint64_t count, acc = 0;
	int64_t loff;
	double t0 = now();
	uint32_t i;

	for (i = 0; i < nq; i++) {
		fig6_lookup(qnext(&g) - disp, li, &loff, &count);
		acc += (uint64_t)loff + count;
	}
	t0 = now() - t0;
	sink += acc;
	return nq / t0;
}

static double
wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Figure 6 and gfsp_view_lookup must agree on every query they share. */
static int
same_answers(const struct gfsp_view *v, const struct location_info *li,
	     struct qgen g, uint32_t nq)
{
	uint32_t i;

	for (i = 0; i < nq; i++) {
		uint64_t l1, c1, c2, x = qnext(&g);
		int64_t l2;
		int in = gfsp_view_lookup(v, x, &l1, &c1);

		fig6_lookup(x - v->disp, li, &l2, &c2);
		if (in != (l2 >= 0) || (in && ((uint64_t)l2 != l1 || c2 != c1))) {
			fprintf(stderr,
				"map_bench: lookup of %llu disagrees with Figure 6\n",
				(unsigned long long)x);
			return 0;
		}
	}
	return 1;
}

#define NVIEW 4		/* 16, 4096, 1M even; 1M skewed */
#define NCHECK_1M 64	/* Figure 6 is slow at a million blocks */

static const char *const view_key[NVIEW] = {
	"16", "4096", "1048576", "skewed_1048576",
};

int
main(void)
{
	static const uint64_t sizes[NVIEW] = { 16, 4096, 1048576, 1048576 };
	double rate[NVIEW], rep[NVIEW][REPS], lin[REPS], lin_rate;
	double lo = 0, hi = 0, skew_lo, skew_hi, t_start = wall();
	struct gfsp_view v[NVIEW];
	struct qgen g[NVIEW];
	struct location_info li;
	struct json_object *o, *rates, *runs;
	struct rusage ru;
	char key[32];
	int s, k;

	rnd_seed(0x2545f4914f6cdd1dull);
	for (s = 0; s < NVIEW; s++) {
		if (make_view(&v[s], sizes[s], s == 3) != 0)
			return 1;
		/* queries spread over 4 tiles from disp */
		g[s] = (struct qgen){ 0x9e3779b97f4a7c15ull, v[s].disp,
				      4 * v[s].extent };
	}
	/* each view as a Table 1 record: both searches agree */
	for (s = 0; s < NVIEW; s++) {
		li = (struct location_info){ v[s].nblocks, v[s].size,
					     v[s].extent, v[s].len, v[s].off };
		if (!same_answers(&v[s], &li, g[s], sizes[s] > 4096 ?
				  NCHECK_1M : NQUERY_LINEAR))
			return 1;
	}
	/* the 4096-block view is the baseline's */
	li = (struct location_info){ v[1].nblocks, v[1].size, v[1].extent,
				     v[1].len, v[1].off };

	/* one view at a time, warmed up: the steady state of a reader
	 * that maps many offsets of one file */
	for (s = 0; s < NVIEW; s++) {
		bench_index(&v[s], g[s], NQUERY / 8);
		for (k = 0; k < REPS; k++)
			rep[s][k] = bench_index(&v[s], g[s], NQUERY);
	}
	for (k = 0; k < REPS; k++)
		lin[k] = bench_linear(&li, v[1].disp, g[1], NQUERY_LINEAR);
	o = json_object_new_object();
	rates = json_object_new_object();
	runs = json_object_new_object();
	for (s = 0; s < NVIEW; s++) {
		struct json_object *a = json_object_new_array();

		for (k = 0; k < REPS; k++)
			json_object_array_add(a,
					      json_object_new_double(rep[s][k]));
		json_object_object_add(runs, view_key[s], a);
		rate[s] = median(rep[s], REPS);
	}
	for (s = 0; s < 3; s++) {
		snprintf(key, sizeof(key), "%llu", (unsigned long long)sizes[s]);
		json_object_object_add(rates, key,
				       json_object_new_double(rate[s]));
		if (s == 0 || rate[s] < lo)
			lo = rate[s];
		if (s == 0 || rate[s] > hi)
			hi = rate[s];
	}
	/* the same with the skewed million in place of the even one */
	skew_lo = GFSP_MIN(GFSP_MIN(rate[0], rate[1]), rate[3]);
	skew_hi = GFSP_MAX(GFSP_MAX(rate[0], rate[1]), rate[3]);
	lin_rate = median(lin, REPS);
	for (s = 0; s < NVIEW; s++)
		gfsp_view_free(&v[s]);

	getrusage(RUSAGE_SELF, &ru);
	json_object_object_add(o, "benchmark", json_object_new_string("map"));
	json_object_object_add(o, "clock",
			       json_object_new_string("thread CPU time"));
	json_object_object_add(o, "lookups_per_run",
			       json_object_new_int64(NQUERY));
	json_object_object_add(o, "repetitions", json_object_new_int(REPS));
	json_object_object_add(o, "lookups_per_sec", rates);
	json_object_object_add(o, "max_min_ratio",
			       json_object_new_double(hi / lo));
	json_object_object_add(o, "skewed_1048576_lookups_per_sec",
			       json_object_new_double(rate[3]));
	json_object_object_add(o, "skewed_max_min_ratio",
			       json_object_new_double(skew_hi / skew_lo));
	json_object_object_add(o, "target_max_min_ratio",
			       json_object_new_double(3));
	json_object_object_add(o, "runs_lookups_per_sec", runs);
	json_object_object_add(o, "linear_lookups_per_sec_4096",
			       json_object_new_double(lin_rate));
	json_object_object_add(o, "speedup_vs_linear_4096",
			       json_object_new_double(rate[1] / lin_rate));
	json_object_object_add(o, "peak_rss_kib",
			       json_object_new_int64(ru.ru_maxrss));
	json_object_object_add(o, "cpu_seconds",
			       json_object_new_double(ru.ru_utime.tv_sec +
						      ru.ru_utime.tv_usec * 1e-6 +
						      ru.ru_stime.tv_sec +
						      ru.ru_stime.tv_usec * 1e-6));
	json_object_object_add(o, "wall_seconds",
			       json_object_new_double(wall() - t_start));
	printf("%s\n", json_object_to_json_string_ext(o,
			JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return 0;
}
