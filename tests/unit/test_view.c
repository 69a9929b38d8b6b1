/*
 * test_view.c - views and the global <-> local mapping against a
 * brute-force byte map.  No MPI_Init: views are plain data.
 *
 * For each view, every byte g of a window is classified by the definition
 * (disp <= g < end and (g - disp) mod extent inside a block), and every
 * answer of local/bytes_below/lookup/global/extents is compared with what
 * that byte map says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "view_impl.h"
#include "rng.h"
#include "tap.h"

/* ------------------------------------------------------ brute force */

/* membership straight from the definition, with the caller's blocks */
struct model {
	uint64_t disp, extent, end;
	unsigned char *tile;		/* [extent] 1 if in a block */
};

static int
model_has(const struct model *m, uint64_t g)
{
	if (g < m->disp || g >= m->end || m->extent == 0)
		return 0;
	return m->tile[(g - m->disp) % m->extent];
}

struct piece {
	uint64_t g, l, n;
};

struct pieces {
	struct piece p[1 << 16];
	int n, stop_after;
};

static int
collect(void *ctx, uint64_t g, uint64_t l, uint64_t n)
{
	struct pieces *ps = ctx;

	if (ps->n < (int)(sizeof(ps->p) / sizeof(ps->p[0])))
		ps->p[ps->n] = (struct piece){ g, l, n };
	ps->n++;
	if (ps->stop_after > 0 && ps->n >= ps->stop_after)
		return 7;
	return 0;
}

/*
 * Compare view v with model m over [base, base + w).  lbase is the local
 * offset at base (from the view itself for far windows; 0 for base 0, where
 * it is checked by construction).
 */
static void
compare(const struct gfsp_view *v, const struct model *m, uint64_t base,
	uint64_t w, const char *what)
{
	uint64_t *pre = malloc((w + 1) * sizeof(*pre));
	uint64_t *run = malloc((w + 1) * sizeof(*run));
	uint64_t i, j, lbase = gfsp_view_local(v, base);
	int t, r;

	if (base == 0)
		check(lbase == 0, "%s: local(0) = %llu", what,
		      (unsigned long long)lbase);
	pre[0] = lbase;
	for (i = 0; i < w; i++)
		pre[i + 1] = pre[i] + model_has(m, base + i);
	/* run[i]: bytes from i with the same membership, within the window */
	for (i = w; i-- > 0;)
		run[i] = i + 1 < w && model_has(m, base + i) ==
				      model_has(m, base + i + 1) ? run[i + 1] + 1 : 1;

	for (i = 0; i < w; i++) {
		uint64_t g = base + i, loff, count, want_count;
		int in = model_has(m, g);

		if (!check(gfsp_view_local(v, g) == pre[i],
			   "%s: local(%llu) = %llu, want %llu", what,
			   (unsigned long long)g,
			   (unsigned long long)gfsp_view_local(v, g),
			   (unsigned long long)pre[i]))
			break;
		check(gfsp_view_bytes_below(v, g) == pre[i],
		      "%s: bytes_below(%llu)", what, (unsigned long long)g);
		r = gfsp_view_lookup(v, g, &loff, &count);
		if (!check(r == in, "%s: lookup(%llu) says %d, want %d", what,
			   (unsigned long long)g, r, in))
			break;
		check(loff == pre[i], "%s: lookup(%llu) loff %llu want %llu",
		      what, (unsigned long long)g, (unsigned long long)loff,
		      (unsigned long long)pre[i]);
		/* run of equal membership (in: bytes; out: gap) */
		want_count = run[i];
		j = i + run[i];
		if (j < w) {
			check(count == want_count,
			      "%s: lookup(%llu) count %llu want %llu", what,
			      (unsigned long long)g, (unsigned long long)count,
			      (unsigned long long)want_count);
		} else {
			/* the run leaves the window: at least that long */
			check(count >= want_count,
			      "%s: lookup(%llu) count %llu < %llu", what,
			      (unsigned long long)g, (unsigned long long)count,
			      (unsigned long long)want_count);
			if (!in && count != UINT64_MAX && g + count >= g)
				check(model_has(m, g + count),
				      "%s: lookup(%llu) next %llu not in view",
				      what, (unsigned long long)g,
				      (unsigned long long)(g + count));
			if (!in && count == UINT64_MAX)
				check(m->end <= base + w ||
				      v->nblocks == 0,
				      "%s: lookup(%llu) says no next byte", what,
				      (unsigned long long)g);
		}
		if (in)
			check(gfsp_view_global(v, pre[i]) == g,
			      "%s: global(%llu) = %llu want %llu", what,
			      (unsigned long long)pre[i],
			      (unsigned long long)gfsp_view_global(v, pre[i]),
			      (unsigned long long)g);
	}
	/* past a bounded end there are no more view bytes */
	if (m->end <= base + w && m->end >= base)
		check(gfsp_view_global(v, pre[w]) == UINT64_MAX,
		      "%s: global(total %llu) = %llu", what,
		      (unsigned long long)pre[w],
		      (unsigned long long)gfsp_view_global(v, pre[w]));

	/* extents of random ranges with random local limits */
	for (t = 0; t < 40 && w > 0; t++) {
		static struct pieces ps;
		uint64_t a = rnd(w), b = a + rnd(w - a + 1);
		uint64_t lmax = t % 3 == 0 ? UINT64_MAX :
				pre[0] + rnd(pre[w] - pre[0] + 2);
		uint64_t exp_g = 0, exp_l = 0, exp_n = 0;
		int k = 0, okay = 1;

		ps.n = 0;
		ps.stop_after = t % 7 == 6 ? 1 : 0;
		r = gfsp_view_extents(v, base + a, base + b, lmax, collect, &ps);
		/* walk the byte map and compare piece by piece */
		for (i = a; i <= b && okay; i++) {
			int take = i < b && model_has(m, base + i) &&
				   pre[i] < lmax;

			if (take && exp_n > 0 && exp_g + exp_n == base + i) {
				exp_n++;
				continue;
			}
			if (exp_n > 0) {
				if (ps.stop_after && k >= 1)
					break;
				okay = check(k < ps.n && ps.p[k].g == exp_g &&
					     ps.p[k].l == exp_l &&
					     ps.p[k].n == exp_n,
					     "%s: extents [%llu,%llu) lmax %llu piece %d: got (%llu,%llu,%llu) want (%llu,%llu,%llu)",
					     what, (unsigned long long)(base + a),
					     (unsigned long long)(base + b),
					     (unsigned long long)lmax, k,
					     k < ps.n ? (unsigned long long)ps.p[k].g : 0ull,
					     k < ps.n ? (unsigned long long)ps.p[k].l : 0ull,
					     k < ps.n ? (unsigned long long)ps.p[k].n : 0ull,
					     (unsigned long long)exp_g,
					     (unsigned long long)exp_l,
					     (unsigned long long)exp_n);
				k++;
				exp_n = 0;
			}
			if (take) {
				exp_g = base + i;
				exp_l = pre[i];
				exp_n = 1;
			}
		}
		if (!okay)
			break;
		check(ps.n == k, "%s: extents [%llu,%llu) gave %d pieces, want %d",
		      what, (unsigned long long)(base + a),
		      (unsigned long long)(base + b), ps.n, k);
		if (ps.stop_after)
			check(r == (k > 0 ? 7 : 0),
			      "%s: extents stop returned %d", what, r);
		else
			check(r == 0, "%s: extents returned %d", what, r);
	}
	free(pre);
	free(run);
}

/* Build a view and a model from the same raw blocks. */
static int
build(struct gfsp_view *v, struct model *m, uint64_t disp, uint64_t extent,
      uint64_t end, uint64_t n, const uint64_t *off, const uint64_t *len)
{
	struct gfsp_error err = { 0 };
	uint64_t i, j;
	int rc;

	rc = gfsp_view_init(v, disp, extent, end, n, off, len, &err);
	if (rc != 0) {
		diag("gfsp_view_init: %s", err.msg);
		return rc;
	}
	m->disp = disp;
	m->extent = extent;
	m->end = end;
	m->tile = calloc(extent ? extent : 1, 1);
	for (i = 0; i < n; i++)
		for (j = 0; j < len[i]; j++)
			m->tile[off[i] + j] = 1;
	return 0;
}

/* ------------------------------------------------------------- tests */

/* MPI-IO/Gfarm's Table 1: three ranks, extent 48, zero-length padding blocks. */
static const uint64_t t1_len0[] = { 4, 4, 4, 0 };
static const uint64_t t1_off0[] = { 0, 12, 36, 48 };
static const uint64_t t1_len1[] = { 0, 8, 4, 4, 4, 0 };
static const uint64_t t1_off1[] = { 0, 4, 16, 28, 40, 48 };
static const uint64_t t1_len2[] = { 0, 8, 4, 4 };
static const uint64_t t1_off2[] = { 0, 20, 32, 44 };

static void
test_table1(void)
{
	const uint64_t *offs[3] = { t1_off0, t1_off1, t1_off2 };
	const uint64_t *lens[3] = { t1_len0, t1_len1, t1_len2 };
	const uint64_t nb[3] = { 4, 6, 4 };
	const uint64_t size[3] = { 12, 20, 16 }, merged[3] = { 3, 4, 3 };
	struct gfsp_view v[3];
	struct model m[3];
	uint64_t g, loff, count;
	int r, owners, okay = 1;

	group_start();
	for (r = 0; r < 3; r++) {
		if (build(&v[r], &m[r], 0, 48, GFSP_VIEW_UNBOUNDED, nb[r],
			  offs[r], lens[r]) != 0) {
			ok(0, "table 1 views build");
			return;
		}
		check(v[r].size == size[r] && v[r].nblocks == merged[r] &&
		      v[r].extent == 48,
		      "table 1 rank %d: size %llu nblocks %llu", r,
		      (unsigned long long)v[r].size,
		      (unsigned long long)v[r].nblocks);
		compare(&v[r], &m[r], 0, 48 * 4 + 5, "table 1");
	}
	/* the three views tile the file exactly once */
	for (g = 0; g < 48 * 3; g++) {
		for (r = 0, owners = 0; r < 3; r++)
			owners += gfsp_view_lookup(&v[r], g, &loff, &count);
		okay &= check(owners == 1, "table 1: byte %llu has %d owners",
			      (unsigned long long)g, owners);
	}
	/* Figure 6 by hand: rank 1, global 66 = tile 1, offset 18 in the
	 * block [16, 20): local 20 + 8 + 2, 2 bytes left */
	r = gfsp_view_lookup(&v[1], 66, &loff, &count);
	check(r == 1 && loff == 30 && count == 2,
	      "table 1: rank 1 lookup(66) = %d %llu %llu", r,
	      (unsigned long long)loff, (unsigned long long)count);
	/* rank 2, global 47 ends tile 0; tile 1 starts with a gap */
	r = gfsp_view_lookup(&v[2], 47, &loff, &count);
	check(r == 1 && loff == 15 && count == 1,
	      "table 1: rank 2 lookup(47) = %d %llu %llu", r,
	      (unsigned long long)loff, (unsigned long long)count);
	ok(group_failures() == 0 && okay,
	   "MPI-IO/Gfarm table 1 views: sizes, merge, map and exact tiling");
	for (r = 0; r < 3; r++) {
		gfsp_view_free(&v[r]);
		free(m[r].tile);
	}
}

/* random blocks in a tile, passed shuffled, split and padded with zeros */
static void
random_view(struct gfsp_view *v, struct model *m, uint64_t disp,
	    uint64_t extent, uint64_t end)
{
	uint64_t off[600], len[600], n = 0, i, density = 1 + rnd(9);
	unsigned char *bit = calloc(extent, 1);

	for (i = 0; i < extent; i++)
		bit[i] = rnd(10) < density;
	for (i = 0; i < extent && n < 590;) {
		uint64_t j;

		if (!bit[i]) {
			i++;
			continue;
		}
		for (j = i; j < extent && bit[j]; j++)
			;
		/* split some runs in two, so that init has to merge */
		if (j - i > 1 && rnd(3) == 0) {
			uint64_t cut = i + 1 + rnd(j - i - 1);

			off[n] = i; len[n++] = cut - i;
			off[n] = cut; len[n++] = j - cut;
		} else {
			off[n] = i; len[n++] = j - i;
		}
		if (rnd(4) == 0) {
			off[n] = rnd(extent + 1);
			len[n++] = 0;
		}
		i = j;
	}
	for (i = n; i > 1; i--) {
		uint64_t k = rnd(i), t;

		t = off[i - 1]; off[i - 1] = off[k]; off[k] = t;
		t = len[i - 1]; len[i - 1] = len[k]; len[k] = t;
	}
	free(bit);
	if (build(v, m, disp, extent, end, n, off, len) != 0) {
		memset(v, 0, sizeof(*v));
		m->tile = NULL;
	}
}

static void
test_random(void)
{
	int t, fails_before;

	group_start();
	for (t = 0; t < 600; t++) {
		struct gfsp_view v, c;
		struct model m;
		struct gfsp_error err = { 0 };
		uint64_t disp = rnd(50), extent = 1 + rnd(t % 5 == 0 ? 300 : 64);
		uint64_t w = disp + extent * (2 + rnd(5)) + rnd(20);
		uint64_t end = t % 2 ? GFSP_VIEW_UNBOUNDED : disp + rnd(w - disp);

		random_view(&v, &m, disp, extent, end);
		if (m.tile == NULL) {
			check(0, "random view %d did not build", t);
			continue;
		}
		fails_before = group_failures();
		compare(&v, &m, 0, w, "random");
		/* a copy answers the same */
		if (gfsp_view_copy(&c, &v, &err) == 0) {
			compare(&c, &m, 0, w, "random copy");
			gfsp_view_free(&c);
		} else {
			check(0, "copy: %s", err.msg);
		}
		if (group_failures() != fails_before)
			diag("view %d: disp %llu extent %llu end %llu nblocks %llu",
			     t, (unsigned long long)disp,
			     (unsigned long long)extent,
			     (unsigned long long)end,
			     (unsigned long long)v.nblocks);
		gfsp_view_free(&v);
		free(m.tile);
	}
	ok(group_failures() == 0,
	   "600 random views: local, bytes_below, lookup, global, extents vs byte map");
}

/* Views close to 2^64: tile sums saturate instead of wrapping. */
static void
test_far(void)
{
	int t;

	group_start();
	for (t = 0; t < 100; t++) {
		struct gfsp_view v;
		struct model m;
		uint64_t extent = 1 + rnd(64);
		uint64_t disp = UINT64_MAX - rnd(2000) - 1;
		uint64_t base = disp - rnd(100);
		uint64_t w = UINT64_MAX - base;	/* up to the last byte */
		uint64_t end = t % 2 ? GFSP_VIEW_UNBOUNDED :
				disp + rnd(UINT64_MAX - disp);

		if (w > 3000)
			w = 3000;
		random_view(&v, &m, disp, extent, end);
		if (m.tile == NULL) {
			check(0, "far view %d did not build", t);
			continue;
		}
		compare(&v, &m, base, w, "far");
		gfsp_view_free(&v);
		free(m.tile);
	}
	ok(group_failures() == 0, "100 views near 2^64: no wrap-around");
}

/*
 * Views of thousands of blocks, spread evenly or bunched up, so that the
 * search's guess (offset / extent * nblocks) is right, a little off, or
 * far off in either direction.
 */
static void
test_large(void)
{
	static const char *const shape[] = {
		"even", "bunched at the start", "bunched at the end",
		"two bunches", "geometric gaps",
	};
	int t;

	group_start();
	for (t = 0; t < 10; t++) {
		int kind = t % 5;
		uint64_t n = 1000 + rnd(4000), extent = 40000 + rnd(20000);
		uint64_t *off = malloc(n * sizeof(*off));
		uint64_t *len = malloc(n * sizeof(*len));
		uint64_t i, pos = 0, disp = rnd(100);
		struct gfsp_view v;
		struct model m;
		char what[80];

		for (i = 0; i < n; i++) {
			uint64_t gap = 1 + rnd(3);

			switch (kind) {
			case 0:
				gap = extent / n - 2;
				break;
			case 2:
				if (i == 0)
					gap = extent - 5 * n;
				break;
			case 3:
				if (i == n / 2)
					gap = extent / 2;
				break;
			case 4:
				gap = 1 + (i * i) / (n * n / 8 + 1);
				break;
			}
			pos += gap;
			off[i] = pos;
			len[i] = 1;
			pos += 1;
		}
		if (pos > extent)
			extent = pos + 1;
		snprintf(what, sizeof(what), "%llu blocks %s",
			 (unsigned long long)n, shape[kind]);
		if (build(&v, &m, disp, extent, GFSP_VIEW_UNBOUNDED, n, off,
			  len) == 0) {
			compare(&v, &m, 0, disp + 2 * extent + 7, what);
			gfsp_view_free(&v);
			free(m.tile);
		} else {
			check(0, "%s did not build", what);
		}
		free(off);
		free(len);
	}
	ok(group_failures() == 0,
	   "views of thousands of blocks, even and skewed: map vs byte map");
}

/* ------------------------------------------- large views: search oracle */

/*
 * For views of up to hundreds of thousands of blocks, and extents up to
 * 2^64, a byte map is out of reach: these answers come from a plain binary
 * search over off[] and pre[], written from the definition, against which
 * the view's search index (buckets, B+ tree, 32-bit deltas with escapes)
 * is checked on random and boundary offsets.
 */
static uint64_t
sadd(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* number of entries of sorted a[0..n) <= x */
static uint64_t
upper(const uint64_t *a, uint64_t n, uint64_t x)
{
	uint64_t lo = 0, hi = n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (a[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t
oracle_local(const struct gfsp_view *v, uint64_t g)
{
	uint64_t x, o, i, r;

	if (g > v->end)
		g = v->end;
	if (v->nblocks == 0 || g <= v->disp)
		return 0;
	x = g - v->disp;
	o = x % v->extent;
	i = upper(v->off, v->nblocks, o);
	r = x / v->extent * v->size;
	if (i > 0)
		r += v->pre[i - 1] + GFSP_MIN(o - v->off[i - 1], v->len[i - 1]);
	return r;
}

static int
oracle_lookup(const struct gfsp_view *v, uint64_t g, uint64_t *loff,
	      uint64_t *count)
{
	uint64_t x, o, tile, i, n = v->nblocks, run, next;

	*loff = oracle_local(v, g);
	if (n == 0 || g >= v->end) {
		*count = UINT64_MAX;
		return 0;
	}
	if (g < v->disp) {
		next = sadd(v->disp, v->off[0]);
		*count = next < v->end ? next - g : UINT64_MAX;
		return 0;
	}
	x = g - v->disp;
	o = x % v->extent;
	tile = g - o;
	i = upper(v->off, n, o);
	if (i > 0 && o - v->off[i - 1] < v->len[i - 1]) {
		/* in block i-1: to its end, and on into the next tile's
		 * first block if both touch the tile boundary */
		run = v->off[i - 1] + v->len[i - 1] - o;
		if (v->off[i - 1] + v->len[i - 1] == v->extent &&
		    v->off[0] == 0)
			run = n == 1 ? UINT64_MAX : sadd(run, v->len[0]);
		*count = GFSP_MIN(run, v->end - g);
		return 1;
	}
	next = i < n ? sadd(tile, v->off[i]) :
	       sadd(sadd(tile, v->extent), v->off[0]);
	*count = next < v->end ? next - g : UINT64_MAX;
	return 0;
}

static uint64_t
oracle_global(const struct gfsp_view *v, uint64_t l)
{
	uint64_t k, r, i, g;

	if (v->nblocks == 0)
		return UINT64_MAX;
	k = l / v->size;
	r = l % v->size;
	i = upper(v->pre, v->nblocks, r) - 1;
	if (k != 0 && v->extent > UINT64_MAX / k)
		return UINT64_MAX;
	g = sadd(sadd(k * v->extent, v->disp), v->off[i] + (r - v->pre[i]));
	return g < v->end ? g : UINT64_MAX;
}

/* one query against the oracle; 0 on a mismatch (reported once) */
static int
probe(const struct gfsp_view *v, uint64_t g, const char *what)
{
	uint64_t l1, c1, l2, c2;
	int in1 = gfsp_view_lookup(v, g, &l1, &c1);
	int in2 = oracle_lookup(v, g, &l2, &c2);

	if (!check(in1 == in2 && l1 == l2 && c1 == c2,
		   "%s: lookup(%llu) = %d %llu %llu, want %d %llu %llu", what,
		   (unsigned long long)g, in1, (unsigned long long)l1,
		   (unsigned long long)c1, in2, (unsigned long long)l2,
		   (unsigned long long)c2))
		return 0;
	if (!check(gfsp_view_local(v, g) == l2 &&
		   gfsp_view_bytes_below(v, g) == l2,
		   "%s: local(%llu) = %llu, want %llu", what,
		   (unsigned long long)g,
		   (unsigned long long)gfsp_view_local(v, g),
		   (unsigned long long)l2))
		return 0;
	if (in2 && !check(gfsp_view_global(v, l2) == g,
			  "%s: global(%llu) = %llu, want %llu", what,
			  (unsigned long long)l2,
			  (unsigned long long)gfsp_view_global(v, l2),
			  (unsigned long long)g))
		return 0;
	return 1;
}

/* extents of [a, a + w) below lmax against pieces walked by the oracle */
static int
probe_extents(const struct gfsp_view *v, uint64_t a, uint64_t w,
	      uint64_t lmax, const char *what)
{
	static struct pieces ps;
	uint64_t b = sadd(a, w), p = a, l, c, n;
	int k = 0, r;

	ps.n = 0;
	ps.stop_after = 0;
	r = gfsp_view_extents(v, a, b, lmax, collect, &ps);
	while (p < b) {
		if (!oracle_lookup(v, p, &l, &c)) {
			if (c == UINT64_MAX || c >= b - p)
				break;
			p += c;
			continue;
		}
		if (l >= lmax)
			break;
		n = GFSP_MIN(GFSP_MIN(c, b - p), lmax - l);
		if (!check(k < ps.n && ps.p[k].g == p && ps.p[k].l == l &&
			   ps.p[k].n == n,
			   "%s: extents [%llu,+%llu) lmax %llu piece %d: got (%llu,%llu,%llu) want (%llu,%llu,%llu)",
			   what, (unsigned long long)a, (unsigned long long)w,
			   (unsigned long long)lmax, k,
			   k < ps.n ? (unsigned long long)ps.p[k].g : 0ull,
			   k < ps.n ? (unsigned long long)ps.p[k].l : 0ull,
			   k < ps.n ? (unsigned long long)ps.p[k].n : 0ull,
			   (unsigned long long)p, (unsigned long long)l,
			   (unsigned long long)n))
			return 0;
		k++;
		if (n < GFSP_MIN(c, b - p))
			break;		/* cut at lmax */
		p += n;
	}
	return check(r == 0 && ps.n == k,
		     "%s: extents [%llu,+%llu) gave %d pieces, want %d", what,
		     (unsigned long long)a, (unsigned long long)w, ps.n, k);
}

/* offsets at and around block boundaries, in random tiles */
static uint64_t
boundary(const struct gfsp_view *v)
{
	uint64_t i = rnd(v->nblocks), t = rnd(4), o;

	switch (rnd(6)) {
	case 0: o = v->off[i]; break;
	case 1: o = v->off[i] - (v->off[i] > 0); break;
	case 2: o = v->off[i] + v->len[i] - 1; break;
	case 3: o = v->off[i] + v->len[i]; break;	/* may be extent */
	case 4: o = v->off[i] + rnd(v->len[i]); break;
	default: o = v->off[i] + v->len[i] + rnd(1000); break;
	}
	if (v->extent != 0 && t != 0 && v->extent > (UINT64_MAX - v->disp) / t)
		t = 0;
	return sadd(sadd(v->disp, t * v->extent), o);
}

enum { EVEN, SKEWED, RANDGAPS, TWOBUNCH, PACKED, HUGEGAPS, NEARMAX,
       WRAP, NSHAPE };

/*
 * Blocks of one shape; off[] ascending (init sorts anyway).  *extent is
 * set to fit them.
 */
static uint64_t
make_shape(int shape, uint64_t n, uint64_t *off, uint64_t *len,
	   uint64_t *extent)
{
	uint64_t i, pos = 0;

	for (i = 0; i < n; i++) {
		uint64_t gap = 1 + rnd(3), l = 1 + rnd(8);

		switch (shape) {
		case EVEN:		/* one block in each 64-byte slot */
			gap = 64 - (pos % 64) + rnd(32);
			if (i == 0)
				gap = rnd(32);
			l = 1 + rnd(31);
			break;
		case SKEWED:		/* half of them bunched at the start */
			gap = i < n / 2 ? 1 : (i == n / 2 ? 63 * n : 64 + rnd(64));
			l = i < n / 2 ? 1 : 1 + rnd(63);
			break;
		case RANDGAPS:		/* heavy-tailed gaps */
			gap = 1 + (rnd(10) < 9 ? rnd(40) : rnd(4000));
			break;
		case TWOBUNCH:
			gap = i == n / 3 ? (uint64_t)1 << 36 : 1 + rnd(2);
			break;
		case PACKED:		/* all within a tiny part of a huge tile */
			gap = 1;
			l = 1;
			break;
		case HUGEGAPS:		/* deltas past 32 bits here and there */
			gap = rnd(8) == 0 ? ((uint64_t)1 << 32) - 3 + rnd(7) +
					    rnd((uint64_t)1 << 34) * (rnd(2)) :
					    1 + rnd(100);
			l = rnd(50) == 0 ? ((uint64_t)1 << 32) + rnd(10) : l;
			break;
		case NEARMAX:		/* offsets and lengths near 2^64 */
			gap = i == 0 ? UINT64_MAX / 2 + rnd(1000) :
			      ((uint64_t)1 << 50) + rnd((uint64_t)1 << 40);
			l = ((uint64_t)1 << 40) + rnd(1000);
			break;
		case WRAP:		/* first at 0, last at the tile's end */
			gap = i == 0 ? 0 : 1 + rnd(5);
			break;
		}
		pos += gap;
		off[i] = pos;
		len[i] = l;
		pos += l;
	}
	switch (shape) {
	case PACKED:
		*extent = (uint64_t)1 << 40;
		break;
	case SKEWED:
	case EVEN:
		*extent = pos + rnd(64) + 1;
		break;
	case NEARMAX:
		*extent = pos + rnd(UINT64_MAX - pos);
		break;
	case HUGEGAPS:
		*extent = pos + (rnd(2) ? rnd(1000) :
				 ((uint64_t)1 << 33) + rnd(1000));
		break;
	case WRAP:
		*extent = pos;
		break;
	default:
		*extent = pos + rnd(100);
		break;
	}
	if (*extent < pos)
		*extent = pos;
	return n;
}

static void
test_index(void)
{
	static const char *const name[NSHAPE] = {
		"even", "skewed", "random gaps", "two bunches",
		"packed in a huge tile", "gaps past 2^32", "near 2^64",
		"wrapping",
	};
	static const uint64_t size[] = { 1, 5, 7, 13, 100, 3000, 40000,
					 300000, 1000000 };
	int shape, s, t;

	group_start();
	for (shape = 0; shape < NSHAPE; shape++) {
		for (s = 0; s < (int)(sizeof(size) / sizeof(size[0])); s++) {
			uint64_t n = size[s], extent, q, nq, i;
			uint64_t *off, *len;
			struct gfsp_error err = { 0 };
			struct gfsp_view v, c;
			char what[96];
			int okay = 1;

			if (shape == NEARMAX && n > 13)
				continue;	/* 2^50 apart: few fit */
			if (n > 300000 && shape != SKEWED)
				continue;	/* one of a million, in huge pages */
			off = malloc(n * sizeof(*off));
			len = malloc(n * sizeof(*len));
			make_shape(shape, n, off, len, &extent);
			snprintf(what, sizeof(what), "%llu blocks %s",
				 (unsigned long long)n, name[shape]);
			if (gfsp_view_init(&v, shape == NEARMAX ? 0 : rnd(5000),
					  extent, s % 2 ? GFSP_VIEW_UNBOUNDED :
					  UINT64_MAX - rnd(100), n, off, len,
					  &err) != 0) {
				check(0, "%s: %s", what, err.msg);
				free(off);
				free(len);
				continue;
			}
			nq = 20000 + 2 * n;
			for (q = 0; q < nq && okay; q++) {
				uint64_t g;

				switch (q % 3) {
				case 0:
					g = boundary(&v);
					break;
				case 1:	/* anywhere in the first 4 tiles */
					g = v.disp + rnd(v.extent) +
					    (v.extent < UINT64_MAX / 8 ?
					     rnd(4) * v.extent : 0);
					if (g < v.disp)
						g = UINT64_MAX - rnd(10);
					break;
				default:	/* far, or before disp */
					g = rnd(4) == 0 ? rnd(v.disp + 1) :
					    UINT64_MAX - rnd(1u << 20);
					break;
				}
				okay = probe(&v, g, what);
			}
			for (t = 0; t < 200 && okay; t++) {
				uint64_t a = boundary(&v) - rnd(100);

				okay = probe_extents(&v, a, 1 + rnd(20000),
						     t % 3 ? UINT64_MAX :
						     oracle_local(&v, a) +
						     rnd(5000), what);
			}
			/* the global of random local offsets */
			for (t = 0; t < 2000 && okay; t++) {
				uint64_t l = rnd(v.size) + (rnd(2) ? v.size : 0);

				okay = check(gfsp_view_global(&v, l) ==
					     oracle_global(&v, l),
					     "%s: global(%llu) = %llu, want %llu",
					     what, (unsigned long long)l,
					     (unsigned long long)gfsp_view_global(&v, l),
					     (unsigned long long)oracle_global(&v, l));
			}
			/* a copy has its own index, with the same answers */
			if (okay && gfsp_view_copy(&c, &v, &err) == 0) {
				for (i = 0; i < 5000 && okay; i++)
					okay = probe(&c, i % 2 ? boundary(&c) :
						     c.disp + rnd(c.extent), what);
				gfsp_view_free(&c);
			} else if (okay) {
				check(0, "%s: copy: %s", what, err.msg);
			}
			gfsp_view_free(&v);
			free(off);
			free(len);
		}
	}
	ok(group_failures() == 0,
	   "views of up to a million blocks, 8 shapes: map vs binary search");
}

static void
test_layouts(void)
{
	static const struct { uint64_t total, chunk; int n; } cc[] = {
		{ 100, 30, 4 }, { 100, 30, 5 }, { 100, 25, 4 }, { 7, 1, 9 },
		{ 0, 0, 3 }, { 0, 10, 2 }, { 1000, 1000, 1 }, { 1000, 400, 3 },
	};
	static const struct { uint64_t total, block; int n; } cy[] = {
		{ 100, 7, 3 }, { 100, 1, 4 }, { 5, 10, 3 }, { 96, 8, 4 },
		{ GFSP_VIEW_UNBOUNDED, 16, 3 }, { 1000, 1000, 1 },
		{ GFSP_VIEW_UNBOUNDED, 5, 1 },
	};
	struct gfsp_error err = { 0 };
	size_t c;
	int r;

	group_start();
	for (c = 0; c < GFSP_ARRAY_SIZE(cc); c++) {
		uint64_t g, total = 0;
		struct gfsp_view v[9];

		for (r = 0; r < cc[c].n; r++) {
			if (gfsp_view_contiguous(&v[r], r, cc[c].n, cc[c].total,
						cc[c].chunk, &err) != 0) {
				check(0, "contiguous: %s", err.msg);
				return;
			}
			total += gfsp_view_total(&v[r]);
			check(v[r].nblocks == 0 || v[r].disp == r * cc[c].chunk,
			      "contiguous rank %d disp %llu", r,
			      (unsigned long long)v[r].disp);
		}
		check(total == cc[c].total,
		      "contiguous %llu/%llu: totals sum to %llu",
		      (unsigned long long)cc[c].total,
		      (unsigned long long)cc[c].chunk,
		      (unsigned long long)total);
		for (g = 0; g < cc[c].total + 5; g++) {
			for (r = 0; r < cc[c].n; r++) {
				uint64_t loff, count;
				int owner = cc[c].chunk ? (int)(g / cc[c].chunk) : -1;
				int want = g < cc[c].total && owner == r;
				int got = gfsp_view_lookup(&v[r], g, &loff, &count);

				check(got == want, "contiguous %llu/%llu/%d: rank %d byte %llu: %d",
				      (unsigned long long)cc[c].total,
				      (unsigned long long)cc[c].chunk,
				      cc[c].n, r, (unsigned long long)g, got);
				if (want)
					check(loff == g - r * cc[c].chunk &&
					      count == GFSP_MIN((r + 1) * cc[c].chunk,
							       cc[c].total) - g,
					      "contiguous: rank %d byte %llu loff %llu count %llu",
					      r, (unsigned long long)g,
					      (unsigned long long)loff,
					      (unsigned long long)count);
			}
		}
		for (r = 0; r < cc[c].n; r++)
			gfsp_view_free(&v[r]);
	}
	ok(group_failures() == 0, "contiguous layout: owners, local offsets, totals");

	group_start();
	for (c = 0; c < GFSP_ARRAY_SIZE(cy); c++) {
		uint64_t g, lim = GFSP_MIN(cy[c].total, (uint64_t)400);

		for (r = 0; r < cy[c].n; r++) {
			struct gfsp_view v;
			uint64_t mine = 0;

			if (gfsp_view_cyclic(&v, r, cy[c].n, cy[c].block,
					    cy[c].total, &err) != 0) {
				check(0, "cyclic: %s", err.msg);
				return;
			}
			for (g = 0; g < lim + 5; g++) {
				uint64_t loff, count;
				int want = g < cy[c].total &&
					   (g / cy[c].block) % cy[c].n == (uint64_t)r;
				int got = gfsp_view_lookup(&v, g, &loff, &count);

				check(got == want, "cyclic %llu/%llu/%d: rank %d byte %llu: %d",
				      (unsigned long long)cy[c].total,
				      (unsigned long long)cy[c].block,
				      cy[c].n, r, (unsigned long long)g, got);
				if (got)
					check(loff == mine,
					      "cyclic: rank %d byte %llu loff %llu want %llu",
					      r, (unsigned long long)g,
					      (unsigned long long)loff,
					      (unsigned long long)mine);
				mine += want;
			}
			if (cy[c].total <= lim)
				check(gfsp_view_total(&v) == mine,
				      "cyclic: rank %d total %llu want %llu", r,
				      (unsigned long long)gfsp_view_total(&v),
				      (unsigned long long)mine);
			gfsp_view_free(&v);
		}
	}
	/* one rank, unbounded: a single run that never ends */
	{
		struct gfsp_view v;
		uint64_t loff, count;

		gfsp_view_cyclic(&v, 0, 1, 5, GFSP_VIEW_UNBOUNDED, &err);
		check(gfsp_view_lookup(&v, 12, &loff, &count) == 1 &&
		      loff == 12 && count == UINT64_MAX - 12,
		      "cyclic n=1: count %llu", (unsigned long long)count);
		gfsp_view_free(&v);
	}
	ok(group_failures() == 0, "cyclic layout: owners and local offsets");
}

static void
test_invalid(void)
{
	static const struct {
		uint64_t disp, extent, end, n, off[3], len[3];
		const char *why, *expect;
	} bad[] = {
		{ 0, 16, GFSP_VIEW_UNBOUNDED, 2, { 0, 4 }, { 8, 8 }, "overlap", "overlap" },
		{ 0, 16, GFSP_VIEW_UNBOUNDED, 2, { 4, 0 }, { 8, 8 }, "overlap unsorted", "overlap" },
		{ 0, 16, GFSP_VIEW_UNBOUNDED, 1, { 8 }, { 9 }, "past extent", "outside the extent" },
		{ 0, 16, GFSP_VIEW_UNBOUNDED, 1, { 16 }, { 1 }, "at extent", "outside the extent" },
		{ 0, 16, GFSP_VIEW_UNBOUNDED, 1, { 1 }, { UINT64_MAX }, "wrapping length", "outside the extent" },
		{ 0, 0, GFSP_VIEW_UNBOUNDED, 1, { 0 }, { 1 }, "extent 0", "extent 0" },
		{ 10, 16, 9, 1, { 0 }, { 4 }, "end below disp", "below the displacement" },
	};
	struct gfsp_error err;
	struct gfsp_view v;
	size_t i;
	int rc;

	for (i = 0; i < GFSP_ARRAY_SIZE(bad); i++) {
		memset(&err, 0, sizeof(err));
		rc = gfsp_view_init(&v, bad[i].disp, bad[i].extent, bad[i].end,
				   bad[i].n, bad[i].off, bad[i].len, &err);
		ok(rc == GFSP_EINVAL && err.code == GFSP_EINVAL &&
		   strstr(err.msg, bad[i].expect) != NULL &&
		   v.nblocks == 0 && v.off == NULL,
		   "rejects %s: \"%s\"", bad[i].why, err.msg);
		gfsp_view_free(&v);
	}
	/* legal corner cases: empty views and zero-length blocks only */
	memset(&err, 0, sizeof(err));
	{
		uint64_t z[2] = { 0, 16 }, zl[2] = { 0, 0 }, loff, count;

		rc = gfsp_view_init(&v, 5, 0, 5, 0, NULL, NULL, &err);
		ok(rc == 0 && v.nblocks == 0 && gfsp_view_local(&v, 100) == 0 &&
		   gfsp_view_lookup(&v, 3, &loff, &count) == 0 &&
		   count == UINT64_MAX && gfsp_view_global(&v, 0) == UINT64_MAX,
		   "empty view is legal and maps nothing");
		gfsp_view_free(&v);
		rc = gfsp_view_init(&v, 0, 16, GFSP_VIEW_UNBOUNDED, 2, z, zl, &err);
		ok(rc == 0 && v.nblocks == 0 && v.size == 0,
		   "zero-length blocks only (even at offset == extent) give an empty view");
		gfsp_view_free(&v);
	}
	memset(&err, 0, sizeof(err));
	rc = gfsp_view_contiguous(&v, 0, 2, 100, 0, &err);
	ok(rc == GFSP_EINVAL && strstr(err.msg, "chunk") != NULL,
	   "contiguous rejects chunk 0: \"%s\"", err.msg);
	memset(&err, 0, sizeof(err));
	rc = gfsp_view_contiguous(&v, 2, 2, 100, 50, &err);
	ok(rc == GFSP_EINVAL && strstr(err.msg, "rank 2 of 2") != NULL,
	   "contiguous rejects rank out of range: \"%s\"", err.msg);
	memset(&err, 0, sizeof(err));
	rc = gfsp_view_cyclic(&v, 0, 2, 0, 100, &err);
	ok(rc == GFSP_EINVAL && strstr(err.msg, "block size 0") != NULL,
	   "cyclic rejects block 0: \"%s\"", err.msg);
	memset(&err, 0, sizeof(err));
	rc = gfsp_view_cyclic(&v, 0, 4, UINT64_MAX / 2, 100, &err);
	ok(rc == GFSP_EINVAL && strstr(err.msg, "overflow") != NULL,
	   "cyclic rejects an extent that overflows: \"%s\"", err.msg);
}

/* --------------------------------------------------------- folding */

/* The bytes of v and f in [a, b) are the same. */
static int
same_bytes_in(const struct gfsp_view *v, const struct gfsp_view *f,
	      uint64_t a, uint64_t b, uint64_t *where)
{
	uint64_t g, l, n;

	for (g = a; g < b; g++)
		if (gfsp_view_lookup(v, g, &l, &n) !=
		    gfsp_view_lookup(f, g, &l, &n)) {
			*where = g;
			return 0;
		}
	return 1;
}

/*
 * gfsp_view_fold on random periodic tiles: p blocks repeated q times D
 * apart, sometimes plus a stray block after them, with an extent equal to
 * q*D (folds everywhere) or the tight hvector extent (folds inside one
 * tile).  Wherever a fold is given, it must hold the same bytes as the view
 * in the range asked, and have p blocks.
 */
static void
test_fold(void)
{
	int t, folded, bad = 0, nfold = 0, nglobal = 0, nrefused = 0;
	uint64_t where = 0;

	for (t = 0; t < 400; t++) {
		uint64_t p = 1 + rnd64() % 4, q = 2 + rnd64() % 6, d, i, j, k;
		uint64_t off[64], len[64], n = 0, pos = rnd64() % 5, e, a, b;
		int stray = rnd64() % 5 == 0, tight = rnd64() % 2;
		struct gfsp_view v, f;
		struct gfsp_error err;

		for (i = 0; i < p; i++) {		/* one period */
			off[i] = pos;
			len[i] = 1 + rnd64() % 4;
			pos += len[i] + 1 + rnd64() % 4;
		}
		d = pos + rnd64() % 3;
		for (j = 1; j < q; j++)
			for (i = 0; i < p; i++) {
				off[j * p + i] = off[i] + j * d;
				len[j * p + i] = len[i];
			}
		n = p * q;
		if (stray) {	/* past the last period (may fall in step) */
			off[n] = off[n - 1] + len[n - 1] + 2;
			len[n++] = 1;
		}
		e = tight ? off[n - 1] + len[n - 1] : q * d + (stray ? 4 : 0);
		gfsp_error_clear(&err);
		if (gfsp_view_init(&v, 3, e, 3 + 5 * e + rnd64() % e, n, off,
		    len, &err)) {
			diag("view: %s", err.msg);
			bad++;
			continue;
		}
		k = rnd64() % 4;		/* a range inside tile k or not */
		a = 3 + k * e + rnd64() % e;
		b = rnd64() % 2 ? e : 2 * e;	/* one draw per statement: */
		b = a + 1 + rnd64() % b;	/* the same stream at any -O */
		if (gfsp_view_fold(&v, a, b, &f, &folded, &err)) {
			diag("fold: %s", err.msg);
			bad++;
		} else if (!folded) {
			nrefused++;
			if (!stray && !tight && p * q == n)
				bad++;	/* q*D extent: always folds */
		} else {
			nfold++;
			nglobal += f.end == v.end && same_bytes_in(&v, &f, 0,
			    v.end < 8 * e ? v.end : 8 * e, &where);
			/* a stray block may fall in step and extend the
			 * pattern, and the tile may repeat at less than p:
			 * only the bytes and "fewer blocks" are certain */
			if (f.nblocks > p || f.nblocks >= v.nblocks ||
			    !same_bytes_in(&v, &f, a, b, &where)) {
				diag("fold of %llu x %llu blocks, D %llu, "
				    "extent %llu, [%llu, %llu): wrong at %llu",
				    (unsigned long long)p, (unsigned long long)q,
				    (unsigned long long)d, (unsigned long long)e,
				    (unsigned long long)a, (unsigned long long)b,
				    (unsigned long long)where);
				bad++;
			}
			gfsp_view_free(&f);
		}
		gfsp_view_free(&v);
	}
	ok(bad == 0 && nfold > 50 && nglobal > 20 && nrefused > 20,
	    "gfsp_view_fold: 400 views, %d folded (%d the same everywhere), "
	    "%d refused, %d wrong", nfold, nglobal, nrefused, bad);
}

int
main(void)
{
	test_table1();
	test_random();
	test_far();
	test_large();
	test_index();
	test_layouts();
	test_invalid();
	test_fold();
	return done_testing();
}
