/*
 * view.c - flattened file views: construction and the mapping between
 * global (logical file) and local (part file) offsets.
 *
 * The seed (Figure 6) scans the block list linearly for every lookup.  Here
 * a global offset is split into a tile number and an offset inside the
 * tile, the block is found by a search over off[] in O(log nblocks) (a
 * guided one: see search()), and the local offset comes from the prefix
 * sums pre[]:
 *
 *   g = disp + k*extent + o            (0 <= o < extent)
 *   i = last block with off[i] <= o
 *   local(g) = k*size + pre[i] + min(len[i], o - off[i])
 *
 * capped at `end`: bytes at or past end are not in the view.  All
 * arithmetic is 64-bit; k*size <= k*extent <= g cannot overflow, and sums
 * that could (tile starts near UINT64_MAX) saturate, which reads as "no
 * such byte" because end <= UINT64_MAX.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core.h"
#include "view_impl.h"

static inline uint64_t
sat_add(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

/*
 * Number of entries of sorted a[0..n) that are <= x.  Branch-free: the
 * loop runs ceil(log2 n) times whatever the data, the compare becomes a
 * conditional move, and the two possible next probes are prefetched, so
 * independent lookups overlap their cache misses.
 */
static inline uint64_t
count_le(const uint64_t *a, uint64_t n, uint64_t x)
{
	const uint64_t *base = a;

	if (n == 0)
		return 0;
	while (n > 1) {
		uint64_t half = n / 2;

		__builtin_prefetch(base + half / 2);
		__builtin_prefetch(base + half + half / 2);
		base = base[half] <= x ? base + half : base;
		n -= half;
	}
	return (uint64_t)(base - a) + (*base <= x);
}

/*
 * Number of entries of sorted a[0..n) that are <= x, where x / span is a
 * good guess of the answer's position (block offsets against the extent,
 * prefix sums against the size).  Views are mostly regular (cyclic,
 * subarray, darray), so the guess lands on or next to the answer: the
 * WINDOW entries around it are counted without branches (a cache line,
 * instead of log2 n probes scattered over the array, and no mispredicted
 * branch to stall the next lookup).  When the answer lies
 * outside the window the search gallops outwards (1, 2, 4, ... entries)
 * and finishes by binary search, so a skewed view still costs O(log n).
 */
#define WINDOW 4

static inline uint64_t
guess_of(uint64_t n, uint64_t x, uint64_t span)
{
	uint64_t guess = (uint64_t)((double)x / (double)span * (double)n);

	return guess < n ? guess : n - 1;
}

static inline uint64_t
search(const uint64_t *a, uint64_t n, uint64_t x, uint64_t guess)
{
	uint64_t lo, hi, step, base, c = 0;
	int j;

	if (n <= 64)
		return count_le(a, n, x);
	base = guess >= WINDOW / 2 ? guess - WINDOW / 2 : 0;
	if (base > n - WINDOW)
		base = n - WINDOW;
	for (j = 0; j < WINDOW; j++)
		c += a[base + j] <= x;
	if (c > 0 && c < WINDOW)
		return base + c;	/* a[base+c-1] <= x < a[base+c] */
	if (c == WINDOW) {
		/* past the window: a[lo] <= x < a[hi] (or hi = n) */
		lo = base + WINDOW - 1;
		for (step = 1;; step *= 2) {
			hi = lo + step;
			if (hi >= n) {
				hi = n;
				break;
			}
			if (a[hi] > x)
				break;
			lo = hi;
		}
		return lo + 1 + count_le(a + lo + 1, hi - lo - 1, x);
	}
	/* before the window: a[hi] > x */
	hi = base;
	for (step = 1;; step *= 2) {
		if (hi < step)
			return count_le(a, hi, x);
		lo = hi - step;
		if (a[lo] <= x)
			return lo + 1 + count_le(a + lo + 1, hi - lo - 1, x);
		hi = lo;
	}
}

/*
 * Index one past the last block starting at or before o.  The block's
 * pre[] entries are fetched from memory while off[] is searched.
 */
static inline uint64_t
find_block(const struct gfs_view *v, uint64_t o)
{
	uint64_t guess = guess_of(v->nblocks, o, v->extent);

	__builtin_prefetch(v->pre + guess);
	return search(v->off, v->nblocks, o, guess);
}

/* pre[i+1] (size past the last block): the lookups read len[i] as
 * pre[i+1] - pre[i], which usually shares pre[i]'s cache line, so that a
 * lookup touches two arrays, not three */
static inline uint64_t
pre_next(const struct gfs_view *v, uint64_t i)
{
	return i + 1 < v->nblocks ? v->pre[i + 1] : v->size;
}

/* View bytes in [0, o) of one tile, 0 <= o <= extent. */
static uint64_t
tile_local(const struct gfs_view *v, uint64_t o)
{
	uint64_t i = find_block(v, o);

	if (i == 0)
		return 0;
	i--;
	return v->pre[i] + GFS_MIN(o - v->off[i], pre_next(v, i) - v->pre[i]);
}

void
gfs_view_empty(struct gfs_view *v, uint64_t disp, uint64_t extent)
{
	memset(v, 0, sizeof(*v));
	v->disp = disp;
	v->extent = extent;
	v->end = disp;
}

void
gfs_view_free(struct gfs_view *v)
{
	if (v == NULL)
		return;
	free(v->off);
	free(v->len);
	free(v->pre);
	memset(v, 0, sizeof(*v));
}

struct blk {
	uint64_t off, len;
};

static int
blk_cmp(const void *pa, const void *pb)
{
	const struct blk *a = pa, *b = pb;

	return a->off < b->off ? -1 : a->off > b->off;
}

/*
 * An array of a view.  Large ones are aligned to 2 MiB and asked for
 * transparent huge pages: a lookup in a view of millions of blocks touches
 * off[] and pre[] at random, and with 4 KiB pages each touch is also a TLB
 * miss.  Plain free() releases either kind.
 */
#define HUGE_PAGE	((size_t)2 << 20)

static uint64_t *
array_alloc(uint64_t n)
{
	size_t bytes = n * sizeof(uint64_t);
	void *p;

	if (bytes < 2 * HUGE_PAGE)
		return malloc(bytes);
	bytes = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	if (posix_memalign(&p, HUGE_PAGE, bytes) != 0)
		return NULL;
	(void)madvise(p, bytes, MADV_HUGEPAGE);	/* a hint: may be refused */
	return p;
}

/* Allocate the three arrays of v for n blocks (none for n == 0). */
static int
view_alloc(struct gfs_view *v, uint64_t n, struct gfs_error *err)
{
	if (n == 0)
		return 0;
	if (n > (SIZE_MAX - HUGE_PAGE) / sizeof(uint64_t))
		goto nomem;
	v->off = array_alloc(n);
	v->len = array_alloc(n);
	v->pre = array_alloc(n);
	if (v->off != NULL && v->len != NULL && v->pre != NULL)
		return 0;
	gfs_view_free(v);
nomem:
	return gfs_error_set(err, GFS_ENOMEM,
			     "cannot allocate a view of %llu blocks: out of memory",
			     (unsigned long long)n);
}

int
gfs_view_init(struct gfs_view *v, uint64_t disp, uint64_t extent,
	      uint64_t end, uint64_t nblocks, const uint64_t *off,
	      const uint64_t *len, struct gfs_error *err)
{
	struct blk *b = NULL;
	uint64_t i, n = 0, m, size = 0;
	int sorted = 1, rc = 0;

	memset(v, 0, sizeof(*v));
	if (end < disp) {
		rc = gfs_error_set(err, GFS_EINVAL,
				   "invalid view: end %llu is below the displacement %llu",
				   (unsigned long long)end,
				   (unsigned long long)disp);
		goto out;
	}
	if (nblocks > 0 && (off == NULL || len == NULL)) {
		rc = gfs_error_set(err, GFS_EINVAL,
				   "invalid view: %llu blocks but no block arrays",
				   (unsigned long long)nblocks);
		goto out;
	}
	/* zero-length blocks carry nothing (the seed writes them as padding
	 * at either end of a tile, even at offset == extent): drop them */
	for (i = 0; i < nblocks; i++) {
		if (len[i] == 0)
			continue;
		if (extent == 0) {
			rc = gfs_error_set(err, GFS_EINVAL,
					   "invalid view: extent 0 with a block of %llu bytes",
					   (unsigned long long)len[i]);
			goto out;
		}
		if (off[i] >= extent || len[i] > extent - off[i]) {
			rc = gfs_error_set(err, GFS_EINVAL,
					   "invalid view: block [%llu, +%llu) lies outside the extent %llu",
					   (unsigned long long)off[i],
					   (unsigned long long)len[i],
					   (unsigned long long)extent);
			goto out;
		}
		n++;
	}
	if (n > 0) {
		if (n > SIZE_MAX / sizeof(*b) ||
		    (b = malloc(n * sizeof(*b))) == NULL) {
			rc = gfs_error_set(err, GFS_ENOMEM,
					   "cannot allocate a view of %llu blocks: out of memory",
					   (unsigned long long)n);
			goto out;
		}
	}
	for (i = 0, m = 0; i < nblocks; i++) {
		if (len[i] == 0)
			continue;
		b[m].off = off[i];
		b[m].len = len[i];
		if (m > 0 && b[m].off < b[m - 1].off)
			sorted = 0;
		m++;
	}
	if (!sorted)
		qsort(b, n, sizeof(*b), blk_cmp);

	/* reject overlaps, merge neighbours that touch */
	for (i = 1, m = 0; i < n; i++) {
		uint64_t e = b[m].off + b[m].len;

		if (b[i].off < e) {
			rc = gfs_error_set(err, GFS_EINVAL,
					   "invalid view: blocks [%llu, +%llu) and [%llu, +%llu) overlap",
					   (unsigned long long)b[m].off,
					   (unsigned long long)b[m].len,
					   (unsigned long long)b[i].off,
					   (unsigned long long)b[i].len);
			goto out;
		}
		if (b[i].off == e)
			b[m].len += b[i].len;
		else
			b[++m] = b[i];
	}
	if (n > 0)
		n = m + 1;

	if ((rc = view_alloc(v, n, err)) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		v->off[i] = b[i].off;
		v->len[i] = b[i].len;
		v->pre[i] = size;
		size += b[i].len;	/* <= extent: blocks are disjoint */
	}
	v->disp = disp;
	v->extent = extent;
	v->end = end;
	v->size = size;
	v->nblocks = n;
out:
	free(b);
	return rc;
}

int
gfs_view_contiguous(struct gfs_view *v, int rank, int nprocs, uint64_t total,
		    uint64_t chunk, struct gfs_error *err)
{
	uint64_t start, zero = 0;

	memset(v, 0, sizeof(*v));
	if (nprocs <= 0 || rank < 0 || rank >= nprocs)
		return gfs_error_set(err, GFS_EINVAL,
				     "invalid contiguous layout: rank %d of %d",
				     rank, nprocs);
	if (chunk == 0 && total > 0)
		return gfs_error_set(err, GFS_EINVAL,
				     "invalid contiguous layout: chunk size 0 for %llu bytes",
				     (unsigned long long)total);
	/* a rank whose chunk starts at or past the end owns nothing */
	if (__builtin_mul_overflow((uint64_t)rank, chunk, &start) ||
	    start >= total) {
		gfs_view_empty(v, total, chunk);
		return 0;
	}
	return gfs_view_init(v, start, chunk,
			     GFS_MIN(sat_add(start, chunk), total), 1, &zero,
			     &chunk, err);
}

int
gfs_view_cyclic(struct gfs_view *v, int rank, int nprocs, uint64_t block,
		uint64_t total, struct gfs_error *err)
{
	uint64_t start, extent, zero = 0;

	memset(v, 0, sizeof(*v));
	if (nprocs <= 0 || rank < 0 || rank >= nprocs)
		return gfs_error_set(err, GFS_EINVAL,
				     "invalid cyclic layout: rank %d of %d",
				     rank, nprocs);
	if (block == 0)
		return gfs_error_set(err, GFS_EINVAL,
				     "invalid cyclic layout: block size 0");
	if (__builtin_mul_overflow((uint64_t)nprocs, block, &extent))
		return gfs_error_set(err, GFS_EINVAL,
				     "invalid cyclic layout: %d blocks of %llu bytes overflow 64 bits",
				     nprocs, (unsigned long long)block);
	start = (uint64_t)rank * block;		/* < extent */
	if (start >= total) {
		gfs_view_empty(v, total, extent);
		return 0;
	}
	return gfs_view_init(v, start, extent, total, 1, &zero, &block, err);
}

int
gfs_view_copy(struct gfs_view *dst, const struct gfs_view *src,
	      struct gfs_error *err)
{
	int rc;

	memset(dst, 0, sizeof(*dst));
	if ((rc = view_alloc(dst, src->nblocks, err)) != 0)
		return rc;
	if (src->nblocks > 0) {
		memcpy(dst->off, src->off, src->nblocks * sizeof(uint64_t));
		memcpy(dst->len, src->len, src->nblocks * sizeof(uint64_t));
		memcpy(dst->pre, src->pre, src->nblocks * sizeof(uint64_t));
	}
	dst->disp = src->disp;
	dst->extent = src->extent;
	dst->size = src->size;
	dst->end = src->end;
	dst->nblocks = src->nblocks;
	return 0;
}

uint64_t
gfs_view_local(const struct gfs_view *v, uint64_t g)
{
	uint64_t x;

	if (g > v->end)
		g = v->end;
	if (v->nblocks == 0 || g <= v->disp)
		return 0;
	x = g - v->disp;
	return x / v->extent * v->size + tile_local(v, x % v->extent);
}

uint64_t
gfs_view_bytes_below(const struct gfs_view *v, uint64_t g)
{
	/* local() already stops counting at end */
	return gfs_view_local(v, g);
}

uint64_t
gfs_view_total(const struct gfs_view *v)
{
	if (v->nblocks == 0)
		return 0;
	if (v->end == GFS_VIEW_UNBOUNDED)
		return UINT64_MAX;
	return gfs_view_local(v, v->end);
}

/* A single block covering the whole tile: the view is one run [disp, end). */
static inline int
view_dense(const struct gfs_view *v)
{
	return v->nblocks == 1 && v->len[0] == v->extent;
}

int
gfs_view_lookup(const struct gfs_view *v, uint64_t g, uint64_t *loff,
		uint64_t *count)
{
	uint64_t x, k, o, tile, i, next, run, bo, bp, bl;
	int in;

	if (v->nblocks == 0) {
		*loff = 0;
		*count = UINT64_MAX;
		return 0;
	}
	if (g >= v->end) {
		*loff = gfs_view_local(v, v->end);
		*count = UINT64_MAX;
		return 0;
	}
	if (g < v->disp) {
		next = sat_add(v->disp, v->off[0]);
		*loff = 0;
		*count = next < v->end ? next - g : UINT64_MAX;
		return 0;
	}
	x = g - v->disp;
	k = x / v->extent;
	o = x % v->extent;
	tile = g - o;
	i = find_block(v, o);

	/*
	 * The block at or before o is [bo, bo + bl) with bp view bytes
	 * before it (an empty one at o when there is none).  Both answers,
	 * in the block or in the gap after it, are computed and one is
	 * picked: whether a random offset hits a block is a coin toss the
	 * branch predictor would lose.
	 */
	if (i > 0) {
		bo = v->off[i - 1];
		bp = v->pre[i - 1];
		bl = pre_next(v, i - 1) - bp;
	} else {
		bo = o;
		bp = 0;
		bl = 0;
	}
	in = o - bo < bl;
	*loff = k * v->size + bp + GFS_MIN(o - bo, bl);

	run = bo + bl - o;
	/* a block ending the tile continues into the next tile's first
	 * block when that one starts the tile */
	if (bo + bl == v->extent && v->off[0] == 0)
		run = view_dense(v) ? UINT64_MAX : sat_add(run, v->len[0]);
	run = GFS_MIN(run, v->end - g);

	if (i < v->nblocks)
		next = sat_add(tile, v->off[i]);
	else
		next = sat_add(sat_add(tile, v->extent), v->off[0]);
	next = next < v->end ? next - g : UINT64_MAX;

	*count = in ? run : next;
	return in;
}

uint64_t
gfs_view_global(const struct gfs_view *v, uint64_t l)
{
	uint64_t k, r, i, g;

	if (v->nblocks == 0)
		return UINT64_MAX;
	k = l / v->size;
	r = l % v->size;
	i = search(v->pre, v->nblocks, r,
		   guess_of(v->nblocks, r, v->size)) - 1;	/* pre[0] = 0 <= r */
	if (__builtin_mul_overflow(k, v->extent, &g))
		return UINT64_MAX;
	g = sat_add(sat_add(g, v->disp), v->off[i] + (r - v->pre[i]));
	/* past the end (l beyond the view's total): no such byte */
	return g < v->end ? g : UINT64_MAX;
}

int
gfs_view_extents(const struct gfs_view *v, uint64_t a, uint64_t b,
		 uint64_t lmax,
		 int (*cb)(void *ctx, uint64_t goff, uint64_t loff,
			   uint64_t len),
		 void *ctx)
{
	uint64_t hi, x, k, o, i, tile, s, e, l, n;
	uint64_t pg = 0, pl = 0, plen = 0;	/* pending piece */
	int rc;

	if (v->nblocks == 0 || lmax == 0)
		return 0;
	hi = GFS_MIN(b, v->end);
	if (a < v->disp)
		a = v->disp;
	if (a >= hi)
		return 0;
	if (view_dense(v)) {
		l = a - v->disp;
		if (l >= lmax)
			return 0;
		return cb(ctx, a, l, GFS_MIN(hi - a, lmax - l));
	}

	/*
	 * Walk blocks from the one holding (or following) a.  A dense view
	 * was handled above, so every tile has a gap and a pending piece
	 * absorbs at most one block from the next tile: the loop runs at
	 * most twice per piece emitted.
	 */
	x = a - v->disp;
	k = x / v->extent;
	o = x % v->extent;
	tile = a - o;
	i = find_block(v, o);
	if (i > 0 && o - v->off[i - 1] < v->len[i - 1])
		i--;
	for (;;) {
		if (i == v->nblocks) {
			i = 0;
			k++;
			tile = sat_add(tile, v->extent);
		}
		s = sat_add(tile, v->off[i]);
		if (s >= hi)
			break;
		e = GFS_MIN(sat_add(s, v->len[i]), hi);
		if (s < a)
			s = a;
		l = k * v->size + v->pre[i] + (s - tile - v->off[i]);
		if (l >= lmax)
			break;
		n = GFS_MIN(e - s, lmax - l);
		if (plen > 0 && pg + plen == s) {
			plen += n;
		} else {
			if (plen > 0 && (rc = cb(ctx, pg, pl, plen)) != 0)
				return rc;
			pg = s;
			pl = l;
			plen = n;
		}
		if (n < e - s || e == hi)
			break;
		i++;
	}
	return plen > 0 ? cb(ctx, pg, pl, plen) : 0;
}
