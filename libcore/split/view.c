/*
 * view.c - flattened file views: construction and the mapping between
 * global (logical file) and local (part file) offsets.
 *
 * Kimura and Tatebe's MPI-IO/Gfarm (its Figure 6) scans the block list
 * linearly for every lookup.  Here
 * a global offset is split into a tile number and an offset inside the
 * tile, the block is found in O(log nblocks) through a search index (see
 * "The search index" below), and the local offset comes from the prefix
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
 * good guess of the answer's position (here prefix sums against the size,
 * for gfsp_view_global(); offsets go through the index below).  Views are
 * mostly regular (cyclic,
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

/* ------------------------------------------------------- search index */

/*
 * The search index (struct gfsp_view_index), derived from off[] and pre[]
 * by gfsp_view_init() and gfsp_view_copy(), never stored.  In a view of a
 * million blocks a lookup is bound by memory latency, not by compares: a
 * binary search over off[] is some 20 dependent cache misses, and off[]
 * and pre[] apart are two lines per probe.  The index answers from one
 * small table entry (in cache) and two adjacent cache lines, wherever the
 * blocks lie, and falls back on a B+ tree, O(log n), where they lie too
 * irregularly for that:
 *
 * leaves    leaf j holds blocks 6j-1 .. 6j+4 in slots 0 .. 5 and block 6j+5
 *           in slot 6, so that a block, its prefix sum and the next block's
 *           (hence its length) are in one line: slot 0 as 64-bit off and
 *           pre, slots 1 .. 6 as 32-bit deltas from slot 0.  Block -1 is a
 *           virtual empty block (0, 0), so every offset has a block at or
 *           before it; blocks past the last are sentinels (extent + off[0],
 *           size): where the next tile's first block starts.  A delta that
 *           does not fit 32 bits is IDX_ESC, and a lookup that meets one
 *           reads the view's arrays instead (idx_slow).  sep(j) = off of
 *           leaf j's slot 0; the leaf of o is the number of sep(j) <= o,
 *           j >= 1.  ~11 bytes a block.
 * buckets   the tile cut into equal buckets, bucket(o) = o * mult >> 64
 *           (o*nbucket/extent) with the low half of that product, frac, the
 *           position inside the bucket.  A bucket holds a line (32.32 fixed
 *           point) est = base + slope * frac / 2^64 through its separators,
 *           checked at build time to give w = floor(est) with leaf(o) = w
 *           or w + 1 for every o of the bucket: both lines are fetched at
 *           once and the second separator picks one.  Views are mostly
 *           regular (cyclic, subarray, darray, even a bunch of blocks
 *           packed in part of the tile), so lines fit whatever the spread,
 *           and buckets 32 leaves wide keep the table small enough to stay
 *           in cache (0.1 byte a block; narrower for irregular views, see
 *           idx_build(), 1.3 at most).
 * tree      where no line fits, the bucket says where to start in an
 *           implicit 9-ary B+ tree over the leaves: node k of level h
 *           (levels 1 .. depth; leaves are level 0) is a cache line with
 *           the first separators of children 2 .. 9 (9k+1 .. 9k+8 on level
 *           h-1; UINT64_MAX past the last), so the number of its keys <= o
 *           is the child to take.  It covers leaves k*9^h .. (k+1)*9^h - 1,
 *           and the bucket names the lowest node covering all of its
 *           leaves.  ~2 bytes a block.
 *
 * Keys are offsets in the tile, below extent; sentinels are at least
 * extent, so no offset passes them.
 */
#define IDX_SLOTS	6		/* candidate blocks in a leaf */
#define IDX_ESC		UINT32_MAX	/* a delta that does not fit */
#define IDX_ARITY	9		/* children of a node: 8 keys */
#define IDX_LEVELS	32		/* 9^31 > 2^64 */
#define IDX_SLOW	UINT64_MAX	/* bucket slope: search the tree */
#define IDX_MAXLEAF	((uint64_t)1 << 30)	/* leaves fit est's 31 bits */
#define IDX_MINBUCKET	4096		/* small tables fit the cache anyway */

struct idx_leaf {
	uint64_t off, pre;		/* slot 0 */
	uint32_t doff[IDX_SLOTS];	/* slots 1 .. 6: off - leaf off */
	uint32_t dpre[IDX_SLOTS];	/* slots 1 .. 6: pre - leaf pre */
};

/* see "buckets"; a slow bucket has slope IDX_SLOW and base node << 5 | h */
struct idx_bucket {
	uint64_t base, slope;
};

struct gfsp_view_index {
	uint64_t mult;			/* bucket(o) = o * mult >> 64 */
	const struct idx_bucket *bucket;
	const struct idx_leaf *leaf;	/* [-1 .. nleaf]: a spare each end */
	const uint64_t *level[IDX_LEVELS];	/* [1 .. depth], 8 keys a node */
};

/* The last block starting at or before an offset o of the tile. */
struct idx_hit {
	uint64_t bo, bp, bl;	/* its off, pre and len (0, 0, 0: none) */
	uint64_t next;		/* the next block's off, >= extent: none */
	uint64_t i;		/* blocks starting at or before o */
};

static inline uint64_t
mulhi(uint64_t a, uint64_t b)
{
	return (uint64_t)(((unsigned __int128)a * b) >> 64);
}

/* Off and pre of block i, with the sentinel past the last. */
static inline uint64_t
blk_off(const struct gfsp_view *v, uint64_t i)
{
	return i < v->nblocks ? v->off[i] : sat_add(v->extent, v->off[0]);
}

static inline uint64_t
blk_pre(const struct gfsp_view *v, uint64_t i)
{
	return i < v->nblocks ? v->pre[i] : v->size;
}

/* Separator of leaf j >= 1. */
static inline uint64_t
sep(const struct gfsp_view *v, uint64_t j)
{
	return v->off[IDX_SLOTS * j - 1];
}

/* Leaf j when one of the deltas it needs does not fit: from the arrays. */
static __attribute__((noinline, cold)) struct idx_hit
idx_slow(const struct gfsp_view *v, uint64_t j, uint64_t o)
{
	uint64_t i = IDX_SLOTS * j, s;	/* slot s is block i + s - 1 */
	struct idx_hit r;

	for (s = 1; s < IDX_SLOTS && blk_off(v, i + s - 1) <= o; s++)
		;
	i += s - 1;
	r.bo = i == 0 ? 0 : v->off[i - 1];
	r.bp = i == 0 ? 0 : v->pre[i - 1];
	r.bl = blk_pre(v, i) - r.bp;
	r.next = blk_off(v, i);
	r.i = i;
	return r;
}

/* The leaf of o is w or w + 1. */
static inline __attribute__((always_inline)) int64_t
idx_window(const struct gfsp_view_index *ix, uint64_t o)
{
	unsigned __int128 x = (unsigned __int128)o * ix->mult;
	const struct idx_bucket *bk = ix->bucket + (uint64_t)(x >> 64);
	uint64_t k;
	unsigned h, c, t;

	if (__builtin_expect(bk->slope != IDX_SLOW, 1))
		return (int64_t)(bk->base + mulhi((uint64_t)x, bk->slope)) >>
		       32;
	k = bk->base >> 5;
	for (h = bk->base & 31; h > 0; h--) {
		const uint64_t *key = ix->level[h] + 8 * k;

		for (c = 0, t = 0; t < IDX_ARITY - 1; t++)
			c += key[t] <= o;
		k = IDX_ARITY * k + c;
	}
	return (int64_t)k;
}

/* The block at or before o, 0 <= o < extent, of a view with blocks. */
static inline __attribute__((always_inline)) struct idx_hit
idx_find(const struct gfsp_view *v, uint64_t o)
{
	const struct gfsp_view_index *ix = v->index;
	const struct idx_leaf *lf = ix->leaf + idx_window(ix, o);
	struct idx_hit r;
	uint64_t d, j;
	uint32_t keep;
	unsigned c, s;

	/* leaf w or w + 1, whose first block (its separator) picks one:
	 * both lines are fetched at once (the prefetch measurably helps) */
	__builtin_prefetch(lf + 1);
	lf += lf[1].off <= o;
	j = (uint64_t)(lf - ix->leaf);
	d = o - lf->off;
	/* slot c is the block: no branches, each would be a coin toss */
	c = (lf->doff[0] <= d) + (lf->doff[1] <= d) + (lf->doff[2] <= d) +
	    (lf->doff[3] <= d) + (lf->doff[4] <= d);
	/* below IDX_ESC the count is exact; slot c + 1 must fit too */
	if (__builtin_expect(d >= IDX_ESC || lf->doff[c] == IDX_ESC, 0))
		return idx_slow(v, j, o);
	s = c - (c != 0);		/* slot c's deltas, slot 0's are 0 */
	keep = -(uint32_t)(c != 0);
	r.bo = lf->off + (lf->doff[s] & keep);
	r.bp = lf->dpre[s] & keep;
	r.bl = lf->dpre[c] - r.bp;
	r.bp += lf->pre;
	r.next = lf->off + lf->doff[c];
	r.i = IDX_SLOTS * j + c;
	return r;
}

/* View bytes in [0, o) of one tile, 0 <= o < extent. */
static uint64_t
tile_local(const struct gfsp_view *v, uint64_t o)
{
	struct idx_hit r = idx_find(v, o);

	return r.bp + GFSP_MIN(o - r.bo, r.bl);
}

static inline uint64_t
round_up(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

static inline uint32_t
delta(uint64_t x, uint64_t base)
{
	return x - base < IDX_ESC ? (uint32_t)(x - base) : IDX_ESC;
}

/* First offset of bucket b, or extent if none falls in it. */
static uint64_t
bucket_lo(uint64_t b, uint64_t mult, uint64_t extent)
{
	unsigned __int128 t;
	uint64_t o;

	t = (((unsigned __int128)b << 64) + mult - 1) / mult;
	if (t >= extent)
		return extent;
	o = (uint64_t)t;
	while (o > 0 && mulhi(o - 1, mult) >= b)
		o--;
	while (o < extent && mulhi(o, mult) < b)
		o++;
	return o;
}

/* w of offset o in bucket bk, as idx_window() computes it */
static inline int64_t
bucket_w(const struct idx_bucket *bk, uint64_t o, uint64_t mult)
{
	return (int64_t)(bk->base + mulhi(o * mult, bk->slope)) >> 32;
}

/*
 * Fit bucket bk, offsets [lo, hi], separators j1 .. j2-1: a line through
 * (first separator, its leaf - 1/2) and (last separator, its leaf - 1/2),
 * or w = j1 - 1 with at most one separator.  The offsets of one leaf l
 * form a run [a, z] of the bucket; w and leaf are monotonic, so l - 1 <=
 * w(a) and w(z) <= l for every run proves leaf(o) - 1 <= w(o) <= leaf(o)
 * for every o.  0 if the line does not fit.
 */
static int
bucket_fit(struct idx_bucket *bk, const struct gfsp_view *v, uint64_t mult,
	   uint64_t lo, uint64_t hi, uint64_t j1, uint64_t j2)
{
	unsigned __int128 s;
	uint64_t l, f1, f2;

	if (j2 - j1 >= 2) {
		f1 = sep(v, j1) * mult;		/* frac: linear in a bucket */
		f2 = sep(v, j2 - 1) * mult;
		s = ((unsigned __int128)(j2 - 1 - j1) << 96) / (f2 - f1);
		if (s >> 64 != 0 || (uint64_t)s == IDX_SLOW)
			return 0;
		bk->slope = (uint64_t)s;
		bk->base = (j1 << 32) - ((uint64_t)1 << 31) -
			   mulhi(f1, bk->slope);
	} else {
		bk->slope = 0;
		bk->base = (j1 - 1) << 32;
	}
	for (l = j1 - 1; l < j2; l++) {
		uint64_t a = l == j1 - 1 ? lo : sep(v, l);
		uint64_t z = l == j2 - 1 ? hi : sep(v, l + 1) - 1;

		if (a > z)
			continue;	/* the bucket starts on sep(j1) */
		if (bucket_w(bk, a, mult) < (int64_t)l - 1 ||
		    bucket_w(bk, z, mult) > (int64_t)l)
			return 0;
	}
	return 1;
}

/*
 * Fill the nbucket buckets of a view with nleaf leaves; returns how many
 * are slow.  A slow bucket, with leaves l1 .. l2, starts the tree search
 * at their lowest common node.
 */
static uint64_t
bucket_fill(struct idx_bucket *bucket, uint64_t nbucket, uint64_t mult,
	    const struct gfsp_view *v, uint64_t nleaf)
{
	uint64_t b, j = 1, j1, lo, hi = 0, l1, l2, nslow = 0;
	unsigned h;

	for (b = 0; b < nbucket; b++) {
		lo = b == 0 ? 0 : hi + 1;
		hi = b + 1 < nbucket ? bucket_lo(b + 1, mult, v->extent) - 1 :
		     v->extent - 1;
		if (lo > hi) {		/* no offset falls in bucket b */
			hi = lo - 1;
			bucket[b].base = 0;
			bucket[b].slope = 0;
			continue;
		}
		for (j1 = j; j < nleaf && sep(v, j) <= hi; j++)
			;
		if (mult != 0 && bucket_fit(&bucket[b], v, mult, lo, hi, j1, j))
			continue;
		for (l1 = j1 - 1, l2 = j - 1, h = 0; l1 != l2; h++) {
			l1 /= IDX_ARITY;
			l2 /= IDX_ARITY;
		}
		bucket[b].base = l1 << 5 | h;
		bucket[b].slope = IDX_SLOW;
		nslow++;
	}
	return nslow;
}

/*
 * The index's inner nodes at p (64-byte aligned), the root first: level h
 * holds cnt[h] nodes of IDX_ARITY - 1 separators.  Returns the end.
 */
static char *
idx_nodes(const struct gfsp_view *v, struct gfsp_view_index *ix, char *p,
	  const uint64_t *cnt, unsigned depth, uint64_t nleaf)
{
	uint64_t span, k, t, l;
	uint64_t *node;
	unsigned h;

	/* span = leaves under a child */
	for (h = depth, span = 1; h > 1; h--)
		span *= IDX_ARITY;
	for (h = depth; h >= 1; h--, span /= IDX_ARITY) {
		node = (uint64_t *)p;
		for (k = 0; k < cnt[h]; k++) {
			for (t = 0; t < IDX_ARITY - 1; t++) {
				l = (IDX_ARITY * k + t + 1) * span;
				node[8 * k + t] = l < nleaf ? sep(v, l) :
						  UINT64_MAX;
			}
		}
		ix->level[h] = node;
		p += cnt[h] * 64;
	}
	return p;
}

/*
 * The nleaf leaves at p, after a spare for w = -1 and before one that no
 * offset reaches (the second line of the last window).  Returns leaf 0.
 */
static struct idx_leaf *
idx_leaves(const struct gfsp_view *v, char *p, uint64_t nleaf)
{
	struct idx_leaf *leaf = (struct idx_leaf *)p + 1;
	uint64_t j, t;

	memset(&leaf[-1], 0, sizeof(*leaf));
	for (j = 0; j < nleaf; j++) {
		uint64_t i = IDX_SLOTS * j;	/* slot s: block i + s - 1 */

		leaf[j].off = j == 0 ? 0 : v->off[i - 1];
		leaf[j].pre = j == 0 ? 0 : v->pre[i - 1];
		for (t = 0; t < IDX_SLOTS; t++) {
			leaf[j].doff[t] = delta(blk_off(v, i + t),
						leaf[j].off);
			leaf[j].dpre[t] = delta(blk_pre(v, i + t),
						leaf[j].pre);
		}
	}
	memset(&leaf[nleaf], 0xff, sizeof(*leaf));
	return leaf;
}

/*
 * Build v->index (nothing for an empty view).  Buckets 32, 8, then 2
 * leaves wide: the first width where lines fit all but 1/32 of the
 * buckets, so that irregular views trade a larger table for fewer tree
 * searches.
 */
static int
idx_build(struct gfsp_view *v, struct gfsp_error *err)
{
	static const uint64_t width[] = { 32, 8, 2 };
	uint64_t n = v->nblocks, nleaf, nnode = 0, nbucket = 0, mult = 0;
	uint64_t cnt[IDX_LEVELS];
	struct idx_bucket *bucket = NULL;
	struct gfsp_view_index *ix;
	unsigned depth, w;
	size_t bytes;
	char *p;
	int rc = 0;

	v->index = NULL;
	if (n == 0)
		return 0;
	if (n > SIZE_MAX / 64)
		goto nomem;
	nleaf = n / IDX_SLOTS + 1;
	cnt[0] = nleaf;
	for (depth = 0; cnt[depth] > 1; depth++) {
		cnt[depth + 1] = (cnt[depth] + IDX_ARITY - 1) / IDX_ARITY;
		nnode += cnt[depth + 1];
	}

	for (w = 0; w < sizeof(width) / sizeof(width[0]); w++) {
		uint64_t nb = GFSP_MAX((nleaf + width[w] - 1) / width[w],
				      GFSP_MIN(nleaf, IDX_MINBUCKET));

		/* bucket(o) < nbucket for o < extent needs mult < 2^64 */
		nb = GFSP_MIN(nb, v->extent - 1);
		if (nleaf > IDX_MAXLEAF || nb == 0)
			nb = 1;
		if (nb == nbucket)
			break;		/* as before */
		free(bucket);
		nbucket = nb;
		mult = nb == 1 ? 0 : (uint64_t)(((unsigned __int128)nb << 64) /
						v->extent);
		if ((bucket = malloc(nb * sizeof(*bucket))) == NULL)
			goto nomem;
		if (bucket_fill(bucket, nbucket, mult, v, nleaf) <=
		    nbucket / 32)
			break;
	}

	bytes = round_up(sizeof(*ix), 64) + nbucket * sizeof(*bucket) +
		nnode * 64;
	bytes = round_up(bytes, 64) + (nleaf + 2) * sizeof(struct idx_leaf);
	if ((p = gfsp_big_alloc(bytes, 64)) == NULL)
		goto nomem;
	ix = (struct gfsp_view_index *)p;
	memset(ix, 0, sizeof(*ix));
	ix->mult = mult;
	p += round_up(sizeof(*ix), 64);
	ix->bucket = memcpy(p, bucket, nbucket * sizeof(*bucket));
	p += nbucket * sizeof(*bucket);

	p = idx_nodes(v, ix, (char *)round_up((uintptr_t)p, 64), cnt, depth,
	    nleaf);
	ix->leaf = idx_leaves(v, p, nleaf);
	v->index = ix;
	goto out;
nomem:
	rc = gfsp_error_set(err, GFSP_ENOMEM,
			   "cannot allocate the index of a view of %llu blocks: out of memory",
			   (unsigned long long)n);
out:
	free(bucket);
	return rc;
}

void
gfsp_view_empty(struct gfsp_view *v, uint64_t disp, uint64_t extent)
{
	memset(v, 0, sizeof(*v));
	v->disp = disp;
	v->extent = extent;
	v->end = disp;
}

void
gfsp_view_free(struct gfsp_view *v)
{
	if (v == NULL)
		return;
	free(v->off);
	free(v->len);
	free(v->pre);
	free(v->index);
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

/* Allocate the three arrays of v for n blocks (none for n == 0). */
static int
view_alloc(struct gfsp_view *v, uint64_t n, struct gfsp_error *err)
{
	if (n == 0)
		return 0;
	if (n > SIZE_MAX / 2 / sizeof(uint64_t))
		goto nomem;
	v->off = gfsp_big_alloc(n * sizeof(uint64_t), 64);
	v->len = gfsp_big_alloc(n * sizeof(uint64_t), 64);
	v->pre = gfsp_big_alloc(n * sizeof(uint64_t), 64);
	if (v->off != NULL && v->len != NULL && v->pre != NULL)
		return 0;
	gfsp_view_free(v);
nomem:
	return gfsp_error_set(err, GFSP_ENOMEM,
			     "cannot allocate a view of %llu blocks: out of memory",
			     (unsigned long long)n);
}

/* Fill v from n blocks sorted, disjoint and non-empty, merging the ones
 * that touch; the arrays hold n blocks at least. */
static int
view_fill(struct gfsp_view *v, uint64_t disp, uint64_t extent, uint64_t end,
	  uint64_t n, const struct blk *b, const uint64_t *off,
	  const uint64_t *len, struct gfsp_error *err)
{
	uint64_t i, m = 0, size = 0, o, l;

	for (i = 0; i < n; i++) {
		o = b ? b[i].off : off[i];
		l = b ? b[i].len : len[i];
		if (l == 0)
			continue;
		if (m > 0 && o == v->off[m - 1] + v->len[m - 1]) {
			v->len[m - 1] += l;
		} else {
			v->off[m] = o;
			v->len[m] = l;
			v->pre[m++] = size;
		}
		size += l;	/* <= extent: blocks are disjoint */
	}
	v->disp = disp;
	v->extent = extent;
	v->end = end;
	v->size = size;
	v->nblocks = m;
	return idx_build(v, err);
}

int
gfsp_view_init(struct gfsp_view *v, uint64_t disp, uint64_t extent,
	      uint64_t end, uint64_t nblocks, const uint64_t *off,
	      const uint64_t *len, struct gfsp_error *err)
{
	struct blk *b = NULL;
	uint64_t i, n = 0, m, last = 0;
	int ordered = 1, rc = 0;

	memset(v, 0, sizeof(*v));
	if (end < disp) {
		rc = gfsp_error_set(err, GFSP_EINVAL,
				   "invalid view: end %llu is below the displacement %llu",
				   (unsigned long long)end,
				   (unsigned long long)disp);
		goto out;
	}
	if (nblocks > 0 && (off == NULL || len == NULL)) {
		rc = gfsp_error_set(err, GFSP_EINVAL,
				   "invalid view: %llu blocks but no block arrays",
				   (unsigned long long)nblocks);
		goto out;
	}
	/* zero-length blocks carry nothing (MPI-IO/Gfarm writes them as padding
	 * at either end of a tile, even at offset == extent): drop them */
	for (i = 0; i < nblocks; i++) {
		if (len[i] == 0)
			continue;
		if (extent == 0) {
			rc = gfsp_error_set(err, GFSP_EINVAL,
					   "invalid view: extent 0 with a block of %llu bytes",
					   (unsigned long long)len[i]);
			goto out;
		}
		if (off[i] >= extent || len[i] > extent - off[i]) {
			rc = gfsp_error_set(err, GFSP_EINVAL,
					   "invalid view: block [%llu, +%llu) lies outside the extent %llu",
					   (unsigned long long)off[i],
					   (unsigned long long)len[i],
					   (unsigned long long)extent);
			goto out;
		}
		if (n > 0 && off[i] < last)
			ordered = 0;
		last = off[i] + len[i];
		n++;
	}
	if (ordered) {
		/* the usual case (a flattened filetype): no copy to sort */
		if ((rc = view_alloc(v, n, err)) == 0 &&
		    (rc = view_fill(v, disp, extent, end, nblocks, NULL, off,
		    len, err)) != 0)
			gfsp_view_free(v);
		goto out;
	}
	if (n > SIZE_MAX / sizeof(*b) || (b = malloc(n * sizeof(*b))) == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM,
				   "cannot allocate a view of %llu blocks: out of memory",
				   (unsigned long long)n);
		goto out;
	}
	for (i = 0, m = 0; i < nblocks; i++) {
		if (len[i] == 0)
			continue;
		b[m].off = off[i];
		b[m].len = len[i];
		m++;
	}
	qsort(b, n, sizeof(*b), blk_cmp);
	for (i = 1; i < n; i++) {
		if (b[i].off < b[i - 1].off + b[i - 1].len) {
			rc = gfsp_error_set(err, GFSP_EINVAL,
					   "invalid view: blocks [%llu, +%llu) and [%llu, +%llu) overlap",
					   (unsigned long long)b[i - 1].off,
					   (unsigned long long)b[i - 1].len,
					   (unsigned long long)b[i].off,
					   (unsigned long long)b[i].len);
			goto out;
		}
	}
	if ((rc = view_alloc(v, n, err)) == 0 &&
	    (rc = view_fill(v, disp, extent, end, n, b, NULL, NULL, err)) != 0)
		gfsp_view_free(v);
out:
	free(b);
	return rc;
}

int
gfsp_view_contiguous(struct gfsp_view *v, int rank, int nprocs, uint64_t total,
		    uint64_t chunk, struct gfsp_error *err)
{
	uint64_t start, zero = 0;

	memset(v, 0, sizeof(*v));
	if (nprocs <= 0 || rank < 0 || rank >= nprocs)
		return gfsp_error_set(err, GFSP_EINVAL,
				     "invalid contiguous layout: rank %d of %d",
				     rank, nprocs);
	if (chunk == 0 && total > 0)
		return gfsp_error_set(err, GFSP_EINVAL,
				     "invalid contiguous layout: chunk size 0 for %llu bytes",
				     (unsigned long long)total);
	/* a rank whose chunk starts at or past the end owns nothing */
	if (__builtin_mul_overflow((uint64_t)rank, chunk, &start) ||
	    start >= total) {
		gfsp_view_empty(v, total, chunk);
		return 0;
	}
	return gfsp_view_init(v, start, chunk,
			     GFSP_MIN(sat_add(start, chunk), total), 1, &zero,
			     &chunk, err);
}

int
gfsp_view_cyclic(struct gfsp_view *v, int rank, int nprocs, uint64_t block,
		uint64_t total, struct gfsp_error *err)
{
	uint64_t start, extent, zero = 0;

	memset(v, 0, sizeof(*v));
	if (nprocs <= 0 || rank < 0 || rank >= nprocs)
		return gfsp_error_set(err, GFSP_EINVAL,
				     "invalid cyclic layout: rank %d of %d",
				     rank, nprocs);
	if (block == 0)
		return gfsp_error_set(err, GFSP_EINVAL,
				     "invalid cyclic layout: block size 0");
	if (__builtin_mul_overflow((uint64_t)nprocs, block, &extent))
		return gfsp_error_set(err, GFSP_EINVAL,
				     "invalid cyclic layout: %d blocks of %llu bytes overflow 64 bits",
				     nprocs, (unsigned long long)block);
	start = (uint64_t)rank * block;		/* < extent */
	if (start >= total) {
		gfsp_view_empty(v, total, extent);
		return 0;
	}
	return gfsp_view_init(v, start, extent, total, 1, &zero, &block, err);
}

int
gfsp_view_copy(struct gfsp_view *dst, const struct gfsp_view *src,
	      struct gfsp_error *err)
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
	if ((rc = idx_build(dst, err)) != 0)
		gfsp_view_free(dst);
	return rc;
}

/*
 * The shortest period p of v's tile: blocks i and i + p differ by one shift
 * D = off[p] - off[0] in offset and not at all in length, for every i.  At
 * most `budget` comparisons are spent, so a tile without a short period
 * costs O(n) however it is made.  0: none below n/2 + 1 (no gain).
 */
static uint64_t
tile_period(const struct gfsp_view *v, uint64_t budget)
{
	uint64_t n = v->nblocks, p, i, d;

	for (p = 1; p <= n / 2 && budget > 0; p++) {
		d = v->off[p] - v->off[0];
		for (i = 0; i + p < n && budget > 0; i++, budget--)
			if (v->off[i + p] - v->off[i] != d ||
			    v->len[i + p] != v->len[i])
				break;
		if (i + p == n)
			return p;
	}
	return 0;
}

int
gfsp_view_fold(const struct gfsp_view *v, uint64_t begin, uint64_t end,
	      struct gfsp_view *out, int *folded, struct gfsp_error *err)
{
	uint64_t n = v->nblocks, p, d, q, k, t0, stop, o[64], *off;
	int rc;

	*folded = 0;
	if (n < 2 || v->extent == 0)
		return 0;
	p = tile_period(v, 64 * n);
	if (p == 0)
		return 0;
	d = v->off[p] - v->off[0];
	q = n / p;
	if (n % p == 0 && v->extent == q * d) {
		/* the shorter tile repeats across the long one's edges too:
		 * the same view everywhere */
		t0 = v->disp;
		stop = v->end;
	} else {
		/* right only inside one tile of v: [begin, end) must lie in
		 * tile k, before the first block the short tile would add */
		begin = GFSP_MAX(begin, v->disp);
		if (begin >= end)
			return 0;
		k = (begin - v->disp) / v->extent;
		t0 = v->disp + k * v->extent;
		stop = GFSP_MIN(t0 + q * d + v->off[n % p],
		    t0 + v->extent + v->off[0]);	/* tile k + 1 */
		if (end > stop || end > v->end)
			return 0;
	}
	off = p <= 64 ? o : malloc(p * sizeof(*off));
	if (off == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM,
		    "cannot fold a view of %llu blocks: out of memory",
		    (unsigned long long)n);
	for (k = 0; k < p; k++)
		off[k] = v->off[k] - v->off[0];
	rc = gfsp_view_init(out, t0 + v->off[0], d, GFSP_MIN(stop, v->end), p,
	    off, v->len, err);
	if (off != o)
		free(off);
	*folded = rc == 0;
	return rc;
}

uint64_t
gfsp_view_local(const struct gfsp_view *v, uint64_t g)
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
gfsp_view_bytes_below(const struct gfsp_view *v, uint64_t g)
{
	/* local() already stops counting at end */
	return gfsp_view_local(v, g);
}

uint64_t
gfsp_view_total(const struct gfsp_view *v)
{
	if (v->nblocks == 0)
		return 0;
	if (v->end == GFSP_VIEW_UNBOUNDED)
		return UINT64_MAX;
	return gfsp_view_local(v, v->end);
}

/* A single block covering the whole tile: the view is one run [disp, end). */
static inline int
view_dense(const struct gfsp_view *v)
{
	return v->nblocks == 1 && v->len[0] == v->extent;
}

int
gfsp_view_lookup(const struct gfsp_view *v, uint64_t g, uint64_t *loff,
		uint64_t *count)
{
	uint64_t x, k, o, tile, next, run, bo, bp, bl;
	struct idx_hit r;
	int in;

	if (v->nblocks == 0) {
		*loff = 0;
		*count = UINT64_MAX;
		return 0;
	}
	if (g >= v->end) {
		*loff = gfsp_view_local(v, v->end);
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
	r = idx_find(v, o);

	/*
	 * The block at or before o is [bo, bo + bl) with bp view bytes
	 * before it (the virtual empty block at 0 when there is none).  Both
	 * answers, in the block or in the gap after it, are computed and one
	 * is picked: whether a random offset hits a block is a coin toss the
	 * branch predictor would lose.
	 */
	bo = r.bo;
	bp = r.bp;
	bl = r.bl;
	in = o - bo < bl;
	*loff = k * v->size + bp + GFSP_MIN(o - bo, bl);

	run = bo + bl - o;
	/* a block ending the tile continues into the next tile's first
	 * block when that one starts the tile */
	if (bo + bl == v->extent && v->off[0] == 0)
		run = view_dense(v) ? UINT64_MAX : sat_add(run, v->len[0]);
	run = GFSP_MIN(run, v->end - g);

	/* the next block, maybe the next tile's first (r.next >= extent) */
	next = sat_add(tile, r.next);
	next = next < v->end ? next - g : UINT64_MAX;

	*count = in ? run : next;
	return in;
}

uint64_t
gfsp_view_global(const struct gfsp_view *v, uint64_t l)
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
gfsp_view_extents(const struct gfsp_view *v, uint64_t a, uint64_t b,
		 uint64_t lmax,
		 int (*cb)(void *ctx, uint64_t goff, uint64_t loff,
			   uint64_t len),
		 void *ctx)
{
	uint64_t hi, x, k, o, i, tile, s, e, l, n;
	uint64_t pg = 0, pl = 0, plen = 0;	/* pending piece */
	struct idx_hit r;
	int rc;

	if (v->nblocks == 0 || lmax == 0)
		return 0;
	hi = GFSP_MIN(b, v->end);
	if (a < v->disp)
		a = v->disp;
	if (a >= hi)
		return 0;
	if (view_dense(v)) {
		l = a - v->disp;
		if (l >= lmax)
			return 0;
		return cb(ctx, a, l, GFSP_MIN(hi - a, lmax - l));
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
	r = idx_find(v, o);
	/* from the block holding o, else from the next one */
	i = r.i;
	if (i > 0 && o - r.bo < r.bl)
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
		e = GFSP_MIN(sat_add(s, v->len[i]), hi);
		if (s < a)
			s = a;
		l = k * v->size + v->pre[i] + (s - tile - v->off[i]);
		if (l >= lmax)
			break;
		n = GFSP_MIN(e - s, lmax - l);
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
