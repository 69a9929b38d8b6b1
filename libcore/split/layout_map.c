/*
 * layout_map.c - mapping a logical range of an open split file to the part
 * extents that hold it (gfsp_layout_map), and the pieces the checker walks
 * too (gfsp_layout_collect).  Opening is layout.c, reading layout_read.c.
 * No MPI calls.
 *
 * Mapping [a, b) merges the pieces of every part's runs:
 *
 *   logical:  a                                                   b
 *             |--part 0--|..hole..|--part 2--|--part 1--|..hole..|
 *   pieces:   gfsp_view_extents() per run, limited to the bytes the
 *             part really holds (a part shorter than its view leaves
 *             holes), sorted by goff; gaps become holes (part -1).
 *
 * A v1 record has one run: its whole view from part offset 0, and views
 * are disjoint after overlap resolution.  Runs of v2 records may overlap
 * (an overwrite, or ranks that wrote the same bytes); each byte then goes
 * to the run of highest priority: the latest epoch first (v3: a write MPI
 * orders after another, splitfile.h), then the lowest rank, then within a
 * rank the latest run.  A sweep over the sorted pieces with a heap of the
 * pieces that cover the current offset keeps the map a partition of
 * [a, b) in O(pieces log pieces).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "layout_impl.h"
#include "view_impl.h"

/* --------------------------------------------------------------- map */

/* gfsp_view_extents() callback: loff is view-local, made a part offset. */
static int
add_piece(void *ctx, uint64_t goff, uint64_t loff, uint64_t len)
{
	struct pieces *p = ctx;

	if (len == 0)
		return 0;
	if (p->n >= p->max)
		return PIECES_FULL;
	if (gfsp_grow(&p->v, &p->cap, p->n + 1, sizeof(*p->v)) != 0)
		return GFSP_ENOMEM;
	p->v[p->n].goff = goff;
	p->v[p->n].len = len;
	p->v[p->n].loff = loff - p->vbase + p->loff;
	p->v[p->n].ep = p->ep;
	p->v[p->n].prio = p->prio;
	p->v[p->n].part = p->part;
	p->n++;
	return 0;
}

/* x wins over y where both hold a byte */
int
gfsp_piece_wins(const struct piece *x, const struct piece *y)
{
	return x->ep != y->ep ? x->ep < y->ep : x->prio < y->prio;
}

static int
cmp_piece(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	if (x->goff != y->goff)
		return x->goff < y->goff ? -1 : 1;
	return gfsp_piece_wins(y, x) - gfsp_piece_wins(x, y);
}

/* The pieces of one run of part r inside [a, b). */
static int
collect_run(const struct gfsp_layout *l, int r, uint64_t j,
	    const struct gfsp_run *run, uint64_t a, uint64_t b,
	    struct pieces *p)
{
	const struct gfsp_view *v = gfsp_layout_run_view(l, r, run);
	uint64_t lo = GFSP_MAX(a, run->begin), hi = GFSP_MIN(b, run->end);
	uint64_t avail, lmax;

	if (lo >= hi || run->loff >= l->part_size[r])
		return 0;
	/* part bytes from the run's start on: a short part leaves holes */
	avail = l->part_size[r] - run->loff;
	p->part = r;
	p->ep = UINT64_MAX - run->epoch;
	p->prio = (uint64_t)r << 32 | (UINT32_MAX - (j & UINT32_MAX));
	p->loff = run->loff;
	if (v == NULL) {
		p->vbase = run->begin;
		if (lo - run->begin >= avail)
			return 0;
		return add_piece(p, lo, lo,
		    GFSP_MIN(hi - lo, avail - (lo - run->begin)));
	}
	p->vbase = gfsp_view_local(v, run->begin);
	lmax = p->vbase > UINT64_MAX - avail ? UINT64_MAX : p->vbase + avail;
	return gfsp_view_extents(v, lo, hi, lmax, add_piece, p);
}

/* All runs' pieces inside [a, b), sorted by (goff, priority). */
int
gfsp_layout_collect(const struct gfsp_layout *l, uint64_t a, uint64_t b,
		    struct pieces *p, struct gfsp_error *err)
{
	const struct gfsp_run *runs;
	uint64_t j, nruns;
	int r, rc;

	p->n = 0;
	for (r = 0; r < l->nprocs; r++) {
		if (l->part_size[r] == 0)
			continue;
		runs = gfsp_layout_runs(l, r, &nruns);
		for (j = 0; j < nruns; j++) {
			rc = collect_run(l, r, j, &runs[j], a, b, p);
			if (rc == PIECES_FULL)
				return rc;
			if (rc)
				return gfsp_error_set(err, GFSP_ENOMEM,
				    "'%s': out of memory mapping [%llu, %llu)",
				    l->path, (unsigned long long)a,
				    (unsigned long long)b);
		}
	}
	if (p->n > 1)
		qsort(p->v, p->n, sizeof(*p->v), cmp_piece);
	return 0;
}

/* ------------------------------------------ priority sweep (min-heap) */

struct heap {
	size_t *v;		/* indices into the pieces */
	size_t n;
	const struct piece *pc;
};

static int
heap_less(const struct heap *h, size_t i, size_t j)
{
	return gfsp_piece_wins(&h->pc[h->v[i]], &h->pc[h->v[j]]);
}

static void
heap_swap(struct heap *h, size_t i, size_t j)
{
	size_t t = h->v[i];

	h->v[i] = h->v[j];
	h->v[j] = t;
}

static void
heap_push(struct heap *h, size_t x)
{
	size_t i = h->n++;

	h->v[i] = x;
	while (i > 0 && heap_less(h, i, (i - 1) / 2)) {
		heap_swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void
heap_pop(struct heap *h)
{
	size_t i = 0, c;

	h->v[0] = h->v[--h->n];
	for (;;) {
		c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && heap_less(h, c + 1, c))
			c++;
		if (!heap_less(h, c, i))
			break;
		heap_swap(h, i, c);
		i = c;
	}
}

/* Append [g, g+len) of piece x to out, merging with the last extent when
 * it continues it in both the file and the same part. */
static void
emit(struct gfsp_extent *out, size_t *n, const struct piece *x, uint64_t g,
     uint64_t len)
{
	struct gfsp_extent *last = *n ? &out[*n - 1] : NULL;
	uint64_t loff = x->loff + (g - x->goff);

	if (last != NULL && last->part == x->part &&
	    last->goff + last->len == g && last->loff + last->len == loff) {
		last->len += len;
		return;
	}
	out[*n].goff = g;
	out[*n].len = len;
	out[*n].part = x->part;
	out[*n].loff = loff;
	(*n)++;
}

/*
 * Sorted pieces -> disjoint extents in goff order, each byte from the
 * covering piece of lowest prio.  Output extents are cut only where the
 * winner changes.  out has room for 2 * np extents.
 */
static int
sweep(const struct piece *pc, size_t np, struct gfsp_extent *out,
      size_t *nout)
{
	struct heap h;
	uint64_t c = 0, stop;
	size_t i = 0;
	const struct piece *top;

	*nout = 0;
	h.v = malloc((np ? np : 1) * sizeof(*h.v));
	if (h.v == NULL)
		return GFSP_ENOMEM;
	h.n = 0;
	h.pc = pc;
	while (i < np || h.n > 0) {
		if (h.n == 0 && pc[i].goff > c)
			c = pc[i].goff;
		while (i < np && pc[i].goff <= c)
			heap_push(&h, i++);
		/* pieces that ended before c are stale */
		while (h.n > 0 && pc[h.v[0]].goff + pc[h.v[0]].len <= c)
			heap_pop(&h);
		if (h.n == 0)
			continue;
		top = &pc[h.v[0]];
		stop = top->goff + top->len;
		if (i < np && pc[i].goff < stop)
			stop = pc[i].goff;	/* a new piece may win there */
		emit(out, nout, top, c, stop - c);
		c = stop;
	}
	free(h.v);
	return 0;
}

/*
 * Without runs, every logical byte has one owner (writers resolve
 * overlaps before recording views): two pieces over one byte are views
 * recorded wrong, which stat-layout --check reports and readers refuse
 * rather than pick one.  The pieces are sorted by goff.
 */
static int
no_overlap(const struct gfsp_layout *l, const struct pieces *p,
	   struct gfsp_error *err)
{
	const struct piece *x, *far = NULL;	/* far: the one ending last */
	size_t i;

	for (i = 0; i < p->n; i++) {
		x = &p->v[i];
		if (far != NULL && x->goff < far->goff + far->len)
			return gfsp_error_set(err, GFSP_ECORRUPT, "'%s': views "
			    "of ranks %d and %d overlap at [%llu, %llu) (a "
			    "file without runs has one owner per byte)",
			    l->path, GFSP_MIN(x->part, far->part),
			    GFSP_MAX(x->part, far->part),
			    (unsigned long long)x->goff, (unsigned long long)
			    GFSP_MIN(far->goff + far->len, x->goff + x->len));
		if (far == NULL || x->goff + x->len > far->goff + far->len)
			far = x;
	}
	return 0;
}

int
gfsp_layout_map(const struct gfsp_layout *l, uint64_t goff, uint64_t len,
	       struct gfsp_extent **ext, size_t *next, struct gfsp_error *err)
{
	struct pieces p;
	struct gfsp_extent *out = NULL, *res = NULL;
	uint64_t size = l->marker.logical_size, b, c;
	size_t n = 0, nres = 0, i;
	int rc;

	*ext = NULL;
	*next = 0;
	if (goff >= size || len == 0)
		return 0;
	b = len > size - goff ? size : goff + len;
	memset(&p, 0, sizeof(p));
	p.max = SIZE_MAX;
	rc = gfsp_layout_collect(l, goff, b, &p, err);
	if (rc == 0 && !l->has_runs)
		rc = no_overlap(l, &p, err);
	if (rc)
		goto out;
	/* the sweep cuts a piece at most once per piece that starts inside
	 * it; then at most one hole before each extent, and one at the end */
	res = malloc((2 * p.n + 1) * sizeof(*res));
	if (res != NULL && sweep(p.v, p.n, res, &nres) == 0)
		out = malloc((2 * nres + 1) * sizeof(*out));
	if (out == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM,
		    "'%s': out of memory mapping %zu extents", l->path, p.n);
		goto out;
	}
	c = goff;
	for (i = 0; i < nres; i++) {
		if (res[i].goff > c) {
			out[n].goff = c;
			out[n].len = res[i].goff - c;
			out[n].part = -1;
			out[n].loff = 0;
			n++;
		}
		out[n++] = res[i];
		c = res[i].goff + res[i].len;
	}
	if (c < b) {
		out[n].goff = c;
		out[n].len = b - c;
		out[n].part = -1;
		out[n].loff = 0;
		n++;
	}
	*ext = out;
	*next = n;
	out = NULL;
out:
	free(out);
	free(res);
	free(p.v);
	return rc;
}
