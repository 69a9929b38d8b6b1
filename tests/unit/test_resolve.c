/*
 * test_resolve.c - overlap resolution against a brute-force byte map.  No
 * MPI: gfsp_views_resolve works on plain views (gfsp_views_allgather needs
 * mpiexec and is exercised by the command tests).
 *
 * Oracle: byte g belongs to the lowest rank whose original view holds it;
 * after resolution, view r must hold exactly the bytes rank r owns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "view_impl.h"
#include "rng.h"
#include "tap.h"

#define W 400		/* window: max disp 64 + several periods of 48 */
#define MAXR 6

static int
has(const struct gfsp_view *v, uint64_t g)
{
	uint64_t loff, count;

	return gfsp_view_lookup(v, g, &loff, &count);
}

/* Byte map of views: map[r][g]. */
static void
byte_map(const struct gfsp_view *v, int n, unsigned char map[][W])
{
	int r;
	uint64_t g;

	for (r = 0; r < n; r++)
		for (g = 0; g < W; g++)
			map[r][g] = has(&v[r], g);
}

/* View from a tile bitmap of `extent` bytes. */
static int
from_bits(struct gfsp_view *v, uint64_t disp, uint64_t extent, uint64_t end,
	  const unsigned char *bit)
{
	uint64_t off[64], len[64], n = 0, i = 0, j;
	struct gfsp_error err = { 0 };
	int rc;

	while (i < extent) {
		if (!bit[i]) {
			i++;
			continue;
		}
		for (j = i; j < extent && bit[j]; j++)
			;
		off[n] = i;
		len[n++] = j - i;
		i = j;
	}
	rc = gfsp_view_init(v, disp, extent, end, n, off, len, &err);
	if (rc != 0)
		diag("gfsp_view_init: %s", err.msg);
	return rc;
}

/* Does the resolved view's tile pattern repeat with a smaller period?
 * (the pattern itself, whatever the bounds) */
static int
minimal_period(const struct gfsp_view *v)
{
	unsigned char tile[48] = { 0 };
	uint64_t p, x, i;

	if (v->nblocks == 0 || v->extent > 48)
		return v->nblocks == 0;
	for (i = 0; i < v->nblocks; i++)
		memset(tile + v->off[i], 1, v->len[i]);
	for (p = 1; p < v->extent; p++) {
		int same = 1;

		if (v->extent % p != 0)
			continue;
		for (x = 0; x < v->extent && same; x++)
			same = tile[x] == tile[x % p];
		if (same)
			return 0;
	}
	return 1;
}

static void
test_random(void)
{
	static const uint64_t ext[] = { 4, 6, 8, 12, 16, 24, 48 };
	int t, ok_runs = 0, dropped_runs = 0, notsup_runs = 0;

	group_start();
	for (t = 0; t < 3000; t++) {
		struct gfsp_view v[MAXR], orig[MAXR];
		static unsigned char before[MAXR][W], after[MAXR][W];
		struct gfsp_error err = { 0 };
		int n = 2 + (int)rnd(MAXR - 1), r, q, rc, mode = t % 3;
		uint64_t g, disp = 0, end = GFSP_VIEW_UNBOUNDED;

		for (r = 0; r < n; r++) {
			unsigned char bit[48];
			uint64_t e = ext[rnd(GFSP_ARRAY_SIZE(ext))], i;
			uint64_t density = 1 + rnd(5);

			/* mode 0: disps rise and ends fall with the rank (the
			 * resolvable shape); mode 1: unbounded, any disp;
			 * mode 2: anything */
			if (mode == 0) {
				disp += rnd(8);
				if (rnd(3) == 0)
					end = (end == GFSP_VIEW_UNBOUNDED ? W : end) -
					      rnd(40);
				if (end < disp)
					end = disp;
			} else {
				disp = rnd(64);
				end = mode == 1 || rnd(2) ? GFSP_VIEW_UNBOUNDED :
				      disp + rnd(W - disp);
			}
			for (i = 0; i < e; i++)
				bit[i] = rnd(10) < density;
			if (from_bits(&v[r], disp, e, end, bit) != 0 ||
			    from_bits(&orig[r], disp, e, end, bit) != 0) {
				check(0, "cannot build view");
				return;
			}
		}
		byte_map(orig, n, before);
		rc = gfsp_views_resolve(v, n, &err);
		if (rc == 0) {
			int dropped = 0;

			ok_runs++;
			byte_map(v, n, after);
			for (g = 0; g < W; g++) {
				int owner = -1;

				for (r = 0; r < n && owner < 0; r++)
					if (before[r][g])
						owner = r;
				for (r = 0; r < n; r++) {
					if (!check(after[r][g] == (owner == r),
						   "run %d: byte %llu rank %d has it %d, owner %d",
						   t, (unsigned long long)g, r,
						   after[r][g], owner))
						goto next;
					dropped |= before[r][g] && !after[r][g];
				}
			}
			for (r = 0; r < n; r++) {
				check(v[r].disp == orig[r].disp &&
				      v[r].end == orig[r].end,
				      "run %d: rank %d bounds changed", t, r);
				check(v[r].nblocks == 0 || 48 % v[r].extent == 0,
				      "run %d: rank %d extent %llu", t, r,
				      (unsigned long long)v[r].extent);
				/* a view that lost bytes gets its smallest period
				 * (an untouched one keeps the caller's) */
				check(v[r].size == orig[r].size ||
				      minimal_period(&v[r]),
				      "run %d: rank %d extent %llu is not the smallest period",
				      t, r, (unsigned long long)v[r].extent);
			}
			dropped_runs += dropped;
		} else {
			int a, b, shared = 0;

			notsup_runs++;
			check(rc == GFSP_ENOTSUP && err.code == GFSP_ENOTSUP,
			      "run %d: rc %d: %s", t, rc, err.msg);
			if (sscanf(err.msg, "views of ranks %d and %d", &a, &b) != 2 ||
			    a < 0 || a >= b || b >= n) {
				check(0, "run %d: message names no ranks: %s", t,
				      err.msg);
				goto next;
			}
			/* the named ranks really share bytes, and rank a's
			 * bounds do not enclose rank b's */
			for (g = 0; g < W; g++)
				shared |= before[a][g] && before[b][g];
			check(shared, "run %d: ranks %d and %d share nothing: %s",
			      t, a, b, err.msg);
			check(orig[a].disp > orig[b].disp ||
			      orig[a].end < orig[b].end,
			      "run %d: ranks %d and %d were resolvable: %s", t,
			      a, b, err.msg);
			/* failure leaves the views as they were */
			byte_map(v, n, after);
			check(memcmp(before, after, (size_t)n * W) == 0,
			      "run %d: failed resolve changed the views", t);
		}
next:
		for (q = 0; q < n; q++) {
			gfsp_view_free(&v[q]);
			gfsp_view_free(&orig[q]);
		}
	}
	ok(group_failures() == 0 && ok_runs > 1000 && dropped_runs > 500,
	   "3000 random view sets vs lowest-rank-owns byte map (%d resolved, %d with bytes dropped, %d not representable)",
	   ok_runs, dropped_runs, notsup_runs);
}

/* MPI-IO/Gfarm's Table 1 (extent 48, zero-length padding). */
static const uint64_t t1_len[3][6] = {
	{ 4, 4, 4, 0 }, { 0, 8, 4, 4, 4, 0 }, { 0, 8, 4, 4 },
};
static const uint64_t t1_off[3][6] = {
	{ 0, 12, 36, 48 }, { 0, 4, 16, 28, 40, 48 }, { 0, 20, 32, 44 },
};
static const uint64_t t1_nb[3] = { 4, 6, 4 };

static void
test_table1(void)
{
	struct gfsp_error err = { 0 };
	struct gfsp_view v[3], o[3];
	uint64_t all = 0, full = 48, u_off[8], u_len[8], nu = 0, i;
	int r, rc, same = 1;

	for (r = 0; r < 3; r++) {
		gfsp_view_init(&v[r], 0, 48, GFSP_VIEW_UNBOUNDED, t1_nb[r],
			      t1_off[r], t1_len[r], &err);
		gfsp_view_copy(&o[r], &v[r], &err);
	}
	rc = gfsp_views_resolve(v, 3, &err);
	for (r = 0; r < 3 && rc == 0; r++) {
		same &= v[r].nblocks == o[r].nblocks && v[r].extent == 48 &&
			v[r].size == o[r].size;
		for (i = 0; same && i < v[r].nblocks; i++)
			same &= v[r].off[i] == o[r].off[i] &&
				v[r].len[i] == o[r].len[i];
	}
	ok(rc == 0 && same, "MPI-IO/Gfarm table 1: disjoint views stay as they are");

	/* rank 1 claims rank 0's blocks too, rank 2 the whole tile: after
	 * resolution they are back to table 1 */
	for (r = 1; r < 3; r++)
		gfsp_view_free(&v[r]);
	for (r = 0; r < 2; r++)
		for (i = 0; i < t1_nb[r]; i++)
			if (t1_len[r][i] > 0) {
				u_off[nu] = t1_off[r][i];
				u_len[nu++] = t1_len[r][i];
			}
	gfsp_view_init(&v[1], 0, 48, GFSP_VIEW_UNBOUNDED, nu, u_off, u_len, &err);
	gfsp_view_init(&v[2], 0, 48, GFSP_VIEW_UNBOUNDED, 1, &all, &full, &err);
	rc = gfsp_views_resolve(v, 3, &err);
	same = rc == 0;
	for (r = 0; r < 3 && same; r++) {
		same &= v[r].nblocks == o[r].nblocks && v[r].size == o[r].size;
		for (i = 0; same && i < v[r].nblocks; i++)
			same &= v[r].off[i] == o[r].off[i] &&
				v[r].len[i] == o[r].len[i];
	}
	ok(same, "MPI-IO/Gfarm table 1 with overlapping claims resolves back to table 1%s%s",
	   rc ? ": " : "", rc ? err.msg : "");
	for (r = 0; r < 3; r++) {
		gfsp_view_free(&v[r]);
		gfsp_view_free(&o[r]);
	}
}

static void
test_layouts(void)
{
	struct gfsp_error err = { 0 };
	struct gfsp_view v[64];
	int r, rc = 0, same = 1;

	for (r = 0; r < 64; r++)
		gfsp_view_contiguous(&v[r], r, 64, (1ull << 40) + 17,
				    ((1ull << 40) + 17 + 63) / 64, &err);
	rc = gfsp_views_resolve(v, 64, &err);
	for (r = 0; r < 64; r++) {
		same &= v[r].nblocks == 1 && v[r].size == v[r].extent;
		gfsp_view_free(&v[r]);
	}
	ok(rc == 0 && same, "64 contiguous views: nothing to resolve");

	for (r = 0; r < 64; r++)
		gfsp_view_cyclic(&v[r], r, 64, 1 << 20, GFSP_VIEW_UNBOUNDED, &err);
	rc = gfsp_views_resolve(v, 64, &err);
	same = 1;
	for (r = 0; r < 64; r++) {
		same &= v[r].nblocks == 1 && v[r].extent == 64u << 20;
		gfsp_view_free(&v[r]);
	}
	ok(rc == 0 && same, "64 cyclic views: nothing to resolve");

	/* a contiguous view inside rank 0's range is dropped entirely */
	{
		uint64_t z = 0, l100 = 100, l30 = 30;

		gfsp_view_init(&v[0], 0, 100, 100, 1, &z, &l100, &err);
		gfsp_view_init(&v[1], 50, 30, 80, 1, &z, &l30, &err);
		rc = gfsp_views_resolve(v, 2, &err);
		ok(rc == 0 && v[1].nblocks == 0 && v[1].size == 0 &&
		   gfsp_view_local(&v[1], 1000) == 0,
		   "a range inside rank 0's range is dropped");
		gfsp_view_free(&v[0]);
		gfsp_view_free(&v[1]);
	}
}

static void
test_notsup(void)
{
	struct gfsp_error err = { 0 };
	struct gfsp_view v[3];
	uint64_t o0 = 0, o4 = 4, l4 = 4, o3[3] = { 0, 100, 200 },
		 l3[3] = { 10, 10, 10 };
	int rc;

	/* rank 0 starts at 100 and, from there, meets rank 2 (from 0):
	 * rank 2 would keep [0, 100) in full but only half of every tile
	 * after, which one periodic view cannot say.  Rank 1 meets
	 * neither. */
	gfsp_view_init(&v[0], 100, 8, GFSP_VIEW_UNBOUNDED, 1, &o0, &l4, &err);
	gfsp_view_init(&v[1], 0, 8, GFSP_VIEW_UNBOUNDED, 1, &o0, &l4, &err);
	gfsp_view_init(&v[2], 0, 8, GFSP_VIEW_UNBOUNDED, 1, &o4, &l4, &err);
	rc = gfsp_views_resolve(v, 3, &err);
	ok(rc == GFSP_ENOTSUP &&
	   strstr(err.msg, "views of ranks 0 and 2 overlap in a way a single periodic view cannot record") != NULL &&
	   v[2].nblocks == 1 && v[2].extent == 8,
	   "overlap starting late: \"%s\"", err.msg);
	gfsp_view_free(&v[0]);
	gfsp_view_free(&v[1]);
	gfsp_view_free(&v[2]);

	/* periods with a common multiple of ~10^12 bytes */
	memset(&err, 0, sizeof(err));
	gfsp_view_init(&v[0], 0, 1000003, GFSP_VIEW_UNBOUNDED, 3, o3, l3, &err);
	gfsp_view_init(&v[1], 0, 999983, GFSP_VIEW_UNBOUNDED, 3, o3, l3, &err);
	rc = gfsp_views_resolve(v, 2, &err);
	ok(rc == GFSP_ENOTSUP && strstr(err.msg, "ranks 0 and 1") != NULL &&
	   strstr(err.msg, "blocks") != NULL,
	   "pattern too large to expand: \"%s\"", err.msg);
	gfsp_view_free(&v[0]);
	gfsp_view_free(&v[1]);

	/* same periods, but bounded apart: no work, no error */
	memset(&err, 0, sizeof(err));
	gfsp_view_init(&v[0], 0, 1000003, 5000000, 3, o3, l3, &err);
	gfsp_view_init(&v[1], 5000000, 999983, GFSP_VIEW_UNBOUNDED, 3, o3, l3,
		      &err);
	rc = gfsp_views_resolve(v, 2, &err);
	ok(rc == 0, "large periods in disjoint ranges are skipped%s%s",
	   rc ? ": " : "", rc ? err.msg : "");
	gfsp_view_free(&v[0]);
	gfsp_view_free(&v[1]);
}

int
main(void)
{
	rnd_seed(0x9e3779b97f4a7c15ull);
	test_table1();
	test_random();
	test_layouts();
	test_notsup();
	return done_testing();
}
