/*
 * runlog.c - runs of a rank's writes, folded as they arrive (runlog.h).
 *
 * Contiguous writes grow a pending block.  When a write does not continue
 * it, the block is closed: it joins the last run if that run is a strided
 * run of blocks of the same length, the block starts one stride after the
 * run's last block and its data follows the run's data in the part;
 * otherwise it starts a run of its own.  The stride is set by a run's
 * second block.  View writes extend the last run when they continue it in
 * both the view and the part.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "runlog.h"
#include "view_impl.h"

enum { RUN_STRIDE, RUN_VIEW };

struct lrun {
	int kind;
	uint32_t view;			/* RUN_VIEW: the view's id */
	uint64_t begin, end;		/* RUN_VIEW: global range */
	uint64_t g0, blen, stride, count;	/* RUN_STRIDE: the blocks */
	uint64_t loff;			/* part offset of the first byte */
	uint64_t bytes;			/* part bytes the run holds */
	uint64_t clip;			/* nothing at or past it counts */
	uint64_t epoch;			/* the writes' epoch (splitfile.h) */
};

/*
 * Finding own writes (gfsp_runlog_find) looks at the runs of the search
 * window that can hold the bytes asked: an index of 64 KiB chunks of the
 * file says which runs reach into each (a run over more than IDX_SPAN
 * chunks is on the wide list, looked at always).  Only runs before the
 * last are indexed (the last may still grow); entries of runs that left
 * the window are skipped, and the index is built again from the window
 * when they are as many as it holds.
 */
#define IDX_SHIFT	16
#define IDX_SPAN	8
#define IDX_BUCKETS	1024
#define IDX_CAND	512		/* more candidates: look at them all */

struct idxlist {
	uint64_t *v;
	size_t n, cap;
};

struct gfsp_runlog {
	struct gfsp_view *views;	/* id i is views[i - 1] */
	uint32_t nviews;
	size_t capv;
	struct lrun *runs;
	uint64_t n;
	size_t cap;
	int pend;			/* a contiguous block is growing */
	uint64_t pg, plen, ploff;
	uint64_t epoch;			/* of the writes from now on */
	struct idxlist *bucket;		/* [IDX_BUCKETS], NULL: none yet */
	struct idxlist wide;
	uint64_t idx_from, idx_to;	/* runs [from, to) are indexed */
	int idx_broken;			/* no memory: look at every run */
};

struct gfsp_runlog *
gfsp_runlog_new(void)
{
	return calloc(1, sizeof(struct gfsp_runlog));
}

void
gfsp_runlog_free(struct gfsp_runlog *rl)
{
	uint32_t i;

	if (rl == NULL)
		return;
	for (i = 0; i < rl->nviews; i++)
		gfsp_view_free(&rl->views[i]);
	free(rl->views);
	free(rl->runs);
	if (rl->bucket != NULL)
		for (i = 0; i < IDX_BUCKETS; i++)
			free(rl->bucket[i].v);
	free(rl->bucket);
	free(rl->wide.v);
	free(rl);
}

int
gfsp_runlog_add_view(struct gfsp_runlog *rl, struct gfsp_view *v,
		    uint32_t *id, struct gfsp_error *err)
{
	if (gfsp_grow(&rl->views, &rl->capv, (size_t)rl->nviews + 1,
	    sizeof(*rl->views)) != 0)
		return gfsp_error_set(err, GFSP_ENOMEM,
		    "out of memory for file views");
	rl->views[rl->nviews] = *v;	/* the arrays, not copies */
	*id = ++rl->nviews;
	return 0;
}

static struct lrun *
push_run(struct gfsp_runlog *rl, struct gfsp_error *err)
{
	struct lrun *nr;

	if (gfsp_grow(&rl->runs, &rl->cap, (size_t)rl->n + 1,
	    sizeof(*rl->runs)) != 0) {
		gfsp_error_set(err, GFSP_ENOMEM,
		    "out of memory for %llu write runs",
		    (unsigned long long)rl->n + 1);
		return NULL;
	}
	nr = &rl->runs[rl->n++];
	memset(nr, 0, sizeof(*nr));
	nr->clip = UINT64_MAX;
	nr->epoch = rl->epoch;
	return nr;
}

static struct lrun *
last_open(const struct gfsp_runlog *rl, int kind)
{
	struct lrun *r;

	if (rl->n == 0)
		return NULL;
	r = &rl->runs[rl->n - 1];
	/* a truncated run is sealed: extending it would undo the cut; a
	 * run of an earlier epoch too: its writes come before the new ones */
	return r->kind == kind && r->clip == UINT64_MAX &&
	    r->epoch == rl->epoch ? r : NULL;
}

/* The last run if the pending block can join it, else NULL. */
static struct lrun *
fold_target(const struct gfsp_runlog *rl)
{
	struct lrun *r = last_open(rl, RUN_STRIDE);

	if (r == NULL || r->blen != rl->plen ||
	    rl->ploff != r->loff + r->bytes)
		return NULL;
	if (r->count == 1 && rl->pg >= r->g0 + r->blen)
		return r;
	if (r->count > 1 && rl->pg == r->g0 + r->count * r->stride)
		return r;
	return NULL;
}

/* Fold the pending block into the last strided run, or start one. */
static int
close_pending(struct gfsp_runlog *rl, struct gfsp_error *err)
{
	struct lrun *r;

	if (!rl->pend)
		return 0;
	rl->pend = 0;
	r = fold_target(rl);
	if (r != NULL) {
		if (r->count == 1)
			r->stride = rl->pg - r->g0;
		r->count++;
		r->bytes += rl->plen;
		return 0;
	}
	r = push_run(rl, err);
	if (r == NULL)
		return GFSP_ENOMEM;
	r->kind = RUN_STRIDE;
	r->g0 = rl->pg;
	r->blen = rl->plen;
	r->stride = rl->plen;
	r->count = 1;
	r->loff = rl->ploff;
	r->bytes = rl->plen;
	return 0;
}

int
gfsp_runlog_dense(struct gfsp_runlog *rl, uint64_t g, uint64_t len,
		 uint64_t loff, struct gfsp_error *err)
{
	int rc;

	if (len == 0)
		return 0;
	if (rl->pend && g == rl->pg + rl->plen && loff == rl->ploff + rl->plen) {
		rl->plen += len;
		return 0;
	}
	rc = close_pending(rl, err);
	if (rc)
		return rc;
	rl->pend = 1;
	rl->pg = g;
	rl->plen = len;
	rl->ploff = loff;
	return 0;
}

int
gfsp_runlog_view(struct gfsp_runlog *rl, uint32_t id, uint64_t begin,
		uint64_t end, uint64_t loff, struct gfsp_error *err)
{
	const struct gfsp_view *v;
	struct lrun *r;
	uint64_t bytes;
	int rc;

	if (id == 0 || id > rl->nviews)
		return gfsp_error_set(err, GFSP_EINVAL,
		    "write run names view %u of %u", id, rl->nviews);
	if (begin >= end)
		return 0;
	v = &rl->views[id - 1];
	bytes = gfsp_view_local(v, end) - gfsp_view_local(v, begin);
	rc = close_pending(rl, err);
	if (rc)
		return rc;
	r = last_open(rl, RUN_VIEW);
	/* continues it: no byte of the view between the two */
	if (r != NULL && r->view == id && r->end <= begin &&
	    gfsp_view_local(v, r->end) == gfsp_view_local(v, begin) &&
	    r->loff + r->bytes == loff) {
		r->end = end;
		r->bytes += bytes;
		return 0;
	}
	r = push_run(rl, err);
	if (r == NULL)
		return GFSP_ENOMEM;
	r->kind = RUN_VIEW;
	r->view = id;
	r->begin = begin;
	r->end = end;
	r->loff = loff;
	r->bytes = bytes;
	return 0;
}

void
gfsp_runlog_truncate(struct gfsp_runlog *rl, uint64_t size)
{
	struct gfsp_error e;
	uint64_t i;

	gfsp_error_clear(&e);
	if (close_pending(rl, &e) != 0) {
		/* no room to record the block: cut it in place instead */
		if (rl->pg >= size)
			rl->plen = 0;
		else if (rl->pg + rl->plen > size)
			rl->plen = size - rl->pg;
		rl->pend = rl->plen > 0;
	}
	for (i = 0; i < rl->n; i++)
		rl->runs[i].clip = GFSP_MIN(rl->runs[i].clip, size);
}

int
gfsp_runlog_set_epoch(struct gfsp_runlog *rl, uint64_t epoch,
		      struct gfsp_error *err)
{
	int rc;

	if (epoch == rl->epoch)
		return 0;
	if (epoch < rl->epoch)
		return gfsp_error_set(err, GFSP_EINVAL, "write epoch %llu "
		    "after %llu: epochs only grow", (unsigned long long)epoch,
		    (unsigned long long)rl->epoch);
	rc = close_pending(rl, err);	/* the block is the old epoch's */
	if (rc == 0)
		rl->epoch = epoch;
	return rc;
}

static int same_view(const struct gfsp_view *v, const struct gfsp_view *w);

/* ----------------------------------------------- finding own writes */

/* The global bytes run r may hold lie in [*lo, *hi). */
static void
run_bounds(const struct lrun *r, uint64_t *lo, uint64_t *hi)
{
	if (r->kind == RUN_STRIDE) {
		*lo = r->g0;
		*hi = r->g0 + (r->count - 1) * r->stride + r->blen;
	} else {
		*lo = r->begin;
		*hi = r->end;
	}
	*hi = GFSP_MIN(*hi, r->clip);
}

/*
 * Does run r hold global byte g?  1: *loff is its part offset and *n the
 * bytes from g contiguous in file and part.  0: *next is the first byte
 * past g it holds (UINT64_MAX: none).
 */
static int
run_at(const struct gfsp_runlog *rl, const struct lrun *r, uint64_t g,
       uint64_t *loff, uint64_t *n, uint64_t *next)
{
	const struct gfsp_view *v;
	uint64_t k, bs, lo, end, l, c;

	*next = UINT64_MAX;
	run_bounds(r, &lo, &end);
	if (r->kind == RUN_STRIDE) {
		if (g >= end)
			return 0;
		if (g < r->g0) {
			*next = r->g0 < end ? r->g0 : UINT64_MAX;
			return 0;
		}
		k = r->count > 1 ? (g - r->g0) / r->stride : 0;
		if (k >= r->count)
			return 0;
		bs = r->g0 + k * r->stride;
		if (g < bs + r->blen) {
			*loff = r->loff + k * r->blen + (g - bs);
			*n = GFSP_MIN(bs + r->blen, end) - g;
			return 1;
		}
		if (k + 1 < r->count && bs + r->stride < end)
			*next = bs + r->stride;
		return 0;
	}
	if (g >= end)
		return 0;
	v = &rl->views[r->view - 1];
	if (g < r->begin) {
		if (gfsp_view_lookup(v, r->begin, &l, &c))
			*next = r->begin;
		else if (c != UINT64_MAX && r->begin + c < end)
			*next = r->begin + c;
		return 0;
	}
	if (gfsp_view_lookup(v, g, &l, &c)) {
		*loff = r->loff + l - gfsp_view_local(v, r->begin);
		*n = GFSP_MIN(c, end - g);
		return 1;
	}
	if (c != UINT64_MAX && g + c < end)
		*next = g + c;
	return 0;
}

/* Views a and b (ids) are the same. */
static int
same_id(const struct gfsp_runlog *rl, uint32_t a, uint32_t b)
{
	return a == b || (a != 0 && b != 0 &&
	    same_view(&rl->views[a - 1], &rl->views[b - 1]));
}

static int
idx_put(struct gfsp_runlog *rl, struct idxlist *l, uint64_t i)
{
	if (l->n > 0 && l->v[l->n - 1] == i)
		return 0;	/* a run over chunks of one bucket */
	if (gfsp_grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v)) != 0) {
		rl->idx_broken = 1;
		return -1;
	}
	l->v[l->n++] = i;
	return 0;
}

/* Index the runs of the window before the last one. */
static void
idx_update(struct gfsp_runlog *rl, uint64_t stop)
{
	const struct lrun *r;
	uint64_t i, k, lo, hi, c, b0, b1;
	uint32_t b;
	int few;

	if (rl->idx_broken)
		return;
	if (rl->bucket == NULL) {
		rl->bucket = calloc(IDX_BUCKETS, sizeof(*rl->bucket));
		if (rl->bucket == NULL) {
			rl->idx_broken = 1;
			return;
		}
	}
	if (stop >= rl->idx_from + GFSP_RUNLOG_SEARCH ||
	    rl->idx_to < stop) {
		for (b = 0; b < IDX_BUCKETS; b++)
			rl->bucket[b].n = 0;
		rl->wide.n = 0;
		rl->idx_from = rl->idx_to = stop;
	}
	for (i = rl->idx_to; i + 1 < rl->n; i++) {
		r = &rl->runs[i];
		run_bounds(r, &lo, &hi);
		if (lo >= hi)
			continue;
		/* a few blocks far apart: the chunks of each block */
		few = r->kind == RUN_STRIDE && r->count <= IDX_SPAN &&
		    (r->blen - 1) >> IDX_SHIFT == 0;
		if (!few && ((hi - 1) >> IDX_SHIFT) - (lo >> IDX_SHIFT) >=
		    IDX_SPAN) {
			if (idx_put(rl, &rl->wide, i))
				return;
			continue;
		}
		for (k = 0; k < (few ? r->count : 1); k++) {
			b0 = few ? r->g0 + k * r->stride : lo;
			b1 = few ? GFSP_MIN(b0 + r->blen, hi) : hi;
			for (c = b0 >> IDX_SHIFT; b0 < b1 &&
			    c <= (b1 - 1) >> IDX_SHIFT; c++)
				if (idx_put(rl, &rl->bucket[c % IDX_BUCKETS],
				    i))
					return;
		}
	}
	rl->idx_to = i;
}

/*
 * The runs of the window [stop, n) that may hold bytes of [g, g + len):
 * bit i - stop of win[] (all of them where the index cannot tell).
 */
#define WIN_WORDS	(GFSP_RUNLOG_SEARCH / 64)

static void
candidates(struct gfsp_runlog *rl, uint64_t stop, uint64_t g, uint64_t len,
	   uint64_t *win)
{
	uint64_t c, c0 = g >> IDX_SHIFT, c1, i, k;
	const struct idxlist *l;

	c1 = (GFSP_MIN(g + len, UINT64_MAX - 1) - 1) >> IDX_SHIFT;
	memset(win, 0, WIN_WORDS * sizeof(*win));
	if (rl->n == 0)
		return;
	idx_update(rl, stop);
	if (rl->idx_broken || c1 - c0 >= IDX_SPAN) {
		for (i = stop; i < rl->n; i++)
			win[(i - stop) / 64] |= 1ull << ((i - stop) % 64);
		return;
	}
	i = rl->n - 1;		/* the last run is not indexed */
	win[(i - stop) / 64] |= 1ull << ((i - stop) % 64);
	for (c = c0; c <= c1 + 1; c++) {
		l = c <= c1 ? &rl->bucket[c % IDX_BUCKETS] : &rl->wide;
		for (k = l->n; k-- > 0 && (i = l->v[k]) >= stop;)
			win[(i - stop) / 64] |= 1ull << ((i - stop) % 64);
	}
}

/* Run r, the newest not yet looked at: 1 if it holds g (*hit), else 0
 * and *lim lowered to the first byte past g it holds. */
static int
look(const struct gfsp_runlog *rl, const struct lrun *r, uint64_t g,
     uint64_t len, uint32_t view, uint64_t *lim, struct gfsp_runhit *hit)
{
	uint64_t lo, hi, loff, n, next;

	run_bounds(r, &lo, &hi);
	if (hi <= g || lo >= GFSP_MIN(*lim, g + len))
		return 0;	/* nothing of it can matter */
	if (!run_at(rl, r, g, &loff, &n, &next)) {
		*lim = GFSP_MIN(*lim, next);
		return 0;
	}
	hit->loff = loff;
	hit->n = GFSP_MIN(n, *lim - g);
	hit->free_end = GFSP_MIN(*lim, hi);
	hit->epoch = r->epoch;
	hit->same_view = r->kind == RUN_STRIDE ? view == 0 :
	    same_id(rl, r->view, view);
	return 1;
}

int
gfsp_runlog_find(struct gfsp_runlog *rl, uint64_t g, uint64_t len,
		 uint32_t view, struct gfsp_runhit *hit)
{
	struct lrun pend = { .kind = RUN_STRIDE, .count = 1,
			     .clip = UINT64_MAX };
	uint64_t win[WIN_WORDS], stop, bits, lim = UINT64_MAX;
	int w, b;

	if (len == 0)
		return 0;
	/* newest first: the pending block, then the runs the index names */
	if (rl->pend) {
		pend.g0 = rl->pg;
		pend.blen = pend.stride = pend.bytes = rl->plen;
		pend.loff = rl->ploff;
		pend.epoch = rl->epoch;
		if (look(rl, &pend, g, len, view, &lim, hit))
			return 1;
	}
	stop = rl->n > GFSP_RUNLOG_SEARCH ? rl->n - GFSP_RUNLOG_SEARCH : 0;
	candidates(rl, stop, g, len, win);
	for (w = WIN_WORDS; w-- > 0;)
		for (bits = win[w]; bits != 0; bits &= ~(1ull << b)) {
			b = 63 - __builtin_clzll(bits);
			if (look(rl, &rl->runs[stop + (uint64_t)w * 64 + b], g,
			    len, view, &lim, hit))
				return 1;
		}
	return 0;
}

uint64_t
gfsp_runlog_epoch(const struct gfsp_runlog *rl)
{
	return rl->epoch;
}

uint64_t
gfsp_runlog_nruns(const struct gfsp_runlog *rl)
{
	return rl->n + (rl->pend && fold_target(rl) == NULL ? 1 : 0);
}

/* v and w are the same view. */
static int
same_view(const struct gfsp_view *v, const struct gfsp_view *w)
{
	return v->disp == w->disp && v->extent == w->extent &&
	    v->end == w->end && v->nblocks == w->nblocks &&
	    memcmp(v->off, w->off, v->nblocks * sizeof(*v->off)) == 0 &&
	    memcmp(v->len, w->len, v->nblocks * sizeof(*v->len)) == 0;
}

/*
 * Exporting: views are numbered in the order runs first use them, so a
 * view no run needs (one a fold replaced) is not stored.  id[v] is view
 * v's number in the record (0: not yet), last[v] the number of the last
 * fold of it, which the next run may share.
 */
struct xport {
	struct gfsp_runlog *rl;
	struct gfsp_locrec *rec;
	uint32_t *id, *last;
};

/* Append a copy of v (NULL: *nv, moved in) to the record; its number. */
static int
add_xview(struct xport *x, const struct gfsp_view *v, struct gfsp_view *nv,
	  uint32_t *num, struct gfsp_error *err)
{
	struct gfsp_locrec *rec = x->rec;
	int rc = 0;

	if (v != NULL)
		rc = gfsp_view_copy(&rec->xviews[rec->nxviews], v, err);
	else
		rec->xviews[rec->nxviews] = *nv;
	if (rc == 0)
		*num = ++rec->nxviews;
	return rc;
}

/*
 * A view run's view: folded to its period inside [begin, end) when it has
 * one (a vector filetype of a million blocks becomes one block), else the
 * view as set.
 */
static int
export_view(struct xport *x, uint32_t v, uint64_t begin, uint64_t end,
	    uint32_t *num, struct gfsp_error *err)
{
	struct gfsp_locrec *rec = x->rec;
	struct gfsp_view fv;
	int folded, rc;

	rc = gfsp_view_fold(&x->rl->views[v - 1], begin, end, &fv, &folded,
	    err);
	if (rc)
		return rc;
	if (!folded) {
		if (x->id[v] == 0)
			rc = add_xview(x, &x->rl->views[v - 1], NULL, &x->id[v],
			    err);
		*num = x->id[v];
		return rc;
	}
	if (x->last[v] != 0 && same_view(&rec->xviews[x->last[v] - 1], &fv)) {
		gfsp_view_free(&fv);
		*num = x->last[v];
		return 0;
	}
	rc = add_xview(x, NULL, &fv, &x->last[v], err);
	*num = x->last[v];
	return rc;
}

/* The run (and, for a strided run, its view) as the format has it. */
static int
export_run(struct xport *x, const struct lrun *r, struct gfsp_run *out,
	   struct gfsp_error *err)
{
	uint64_t off = 0;
	struct gfsp_view sv;
	int rc;

	out->loff = r->loff;
	out->epoch = r->epoch;
	if (r->kind == RUN_VIEW) {
		out->begin = r->begin;
		out->end = GFSP_MIN(r->end, r->clip);
		if (out->begin >= out->end)
			return 0;
		return export_view(x, r->view, out->begin, out->end,
		    &out->view, err);
	}
	out->begin = r->g0;
	out->end = GFSP_MIN(r->g0 + (r->count - 1) * r->stride + r->blen,
	    r->clip);
	if (r->count == 1) {
		out->view = GFSP_RUN_DENSE;
		return 0;
	}
	rc = gfsp_view_init(&sv, r->g0, r->stride,
	    r->g0 + (r->count - 1) * r->stride + r->blen, 1, &off, &r->blen,
	    err);
	if (rc)
		return rc;
	return add_xview(x, NULL, &sv, &out->view, err);
}

int
gfsp_runlog_export(struct gfsp_runlog *rl, struct gfsp_locrec *rec,
		  struct gfsp_error *err)
{
	struct xport x = { rl, rec, NULL, NULL };
	uint64_t i;
	uint32_t v;
	int rc;

	rc = close_pending(rl, err);
	if (rc)
		return rc;
	/* at most one view per run, plus the views as set */
	if ((uint64_t)rl->nviews + rl->n >= GFSP_RUN_DENSE)
		return gfsp_error_set(err, GFSP_EINVAL,
		    "too many views (%llu) for one record",
		    (unsigned long long)(rl->nviews + rl->n));
	rec->nxviews = 0;
	rec->nruns = 0;
	rec->xviews = calloc(rl->nviews + rl->n + 1, sizeof(*rec->xviews));
	rec->runs = calloc(rl->n + 1, sizeof(*rec->runs));
	x.id = calloc(rl->nviews + 1, sizeof(*x.id));
	x.last = calloc(rl->nviews + 1, sizeof(*x.last));
	if (rec->xviews == NULL || rec->runs == NULL || x.id == NULL ||
	    x.last == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM,
		    "out of memory for %llu write runs",
		    (unsigned long long)rl->n);
		goto fail;
	}
	for (i = 0; i < rl->n; i++) {
		struct gfsp_run *out = &rec->runs[rec->nruns];

		rc = export_run(&x, &rl->runs[i], out, err);
		if (rc)
			goto fail;
		/* wholly cut off by a truncation: holds nothing */
		if (out->begin < out->end)
			rec->nruns++;
	}
	free(x.id);
	free(x.last);
	return 0;
fail:
	for (v = 0; v < rec->nxviews; v++)
		gfsp_view_free(&rec->xviews[v]);
	free(rec->xviews);
	free(rec->runs);
	free(x.id);
	free(x.last);
	rec->xviews = NULL;
	rec->runs = NULL;
	rec->nxviews = 0;
	rec->nruns = 0;
	return rc;
}
