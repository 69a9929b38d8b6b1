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
};

struct gfsp_runlog {
	struct gfsp_view *views;	/* id i is views[i - 1] */
	uint32_t nviews, capv;
	struct lrun *runs;
	uint64_t n, cap;
	int pend;			/* a contiguous block is growing */
	uint64_t pg, plen, ploff;
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
	free(rl);
}

int
gfsp_runlog_add_view(struct gfsp_runlog *rl, const struct gfsp_view *v,
		    uint32_t *id, struct gfsp_error *err)
{
	struct gfsp_view *nv;
	uint32_t ncap;
	int rc;

	if (rl->nviews == rl->capv) {
		ncap = rl->capv ? 2 * rl->capv : 4;
		nv = realloc(rl->views, ncap * sizeof(*nv));
		if (nv == NULL)
			return gfsp_error_set(err, GFSP_ENOMEM,
			    "out of memory for file views");
		rl->views = nv;
		rl->capv = ncap;
	}
	rc = gfsp_view_copy(&rl->views[rl->nviews], v, err);
	if (rc)
		return rc;
	*id = ++rl->nviews;
	return 0;
}

static struct lrun *
push_run(struct gfsp_runlog *rl, struct gfsp_error *err)
{
	struct lrun *nr;
	uint64_t ncap;

	if (rl->n == rl->cap) {
		ncap = rl->cap ? 2 * rl->cap : 16;
		nr = realloc(rl->runs, (size_t)ncap * sizeof(*nr));
		if (nr == NULL) {
			gfsp_error_set(err, GFSP_ENOMEM,
			    "out of memory for %llu write runs",
			    (unsigned long long)ncap);
			return NULL;
		}
		rl->runs = nr;
		rl->cap = ncap;
	}
	nr = &rl->runs[rl->n++];
	memset(nr, 0, sizeof(*nr));
	nr->clip = UINT64_MAX;
	return nr;
}

static struct lrun *
last_open(const struct gfsp_runlog *rl, int kind)
{
	struct lrun *r;

	if (rl->n == 0)
		return NULL;
	r = &rl->runs[rl->n - 1];
	/* a truncated run is sealed: extending it would undo the cut */
	return r->kind == kind && r->clip == UINT64_MAX ? r : NULL;
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

uint64_t
gfsp_runlog_nruns(const struct gfsp_runlog *rl)
{
	return rl->n + (rl->pend && fold_target(rl) == NULL ? 1 : 0);
}

/* The run (and, for a strided run, its view) as the format has it. */
static int
export_run(const struct lrun *r, struct gfsp_locrec *rec, struct gfsp_run *out,
	   struct gfsp_error *err)
{
	uint64_t off = 0;
	int rc;

	out->loff = r->loff;
	if (r->kind == RUN_VIEW) {
		out->view = r->view;
		out->begin = r->begin;
		out->end = GFSP_MIN(r->end, r->clip);
		return 0;
	}
	out->begin = r->g0;
	out->end = GFSP_MIN(r->g0 + (r->count - 1) * r->stride + r->blen,
	    r->clip);
	if (r->count == 1) {
		out->view = GFSP_RUN_DENSE;
		return 0;
	}
	rc = gfsp_view_init(&rec->xviews[rec->nxviews], r->g0, r->stride,
	    r->g0 + (r->count - 1) * r->stride + r->blen, 1, &off, &r->blen,
	    err);
	if (rc)
		return rc;
	out->view = ++rec->nxviews;
	return 0;
}

int
gfsp_runlog_export(struct gfsp_runlog *rl, struct gfsp_locrec *rec,
		  struct gfsp_error *err)
{
	uint64_t i, nstride = 0;
	uint32_t v;
	int rc;

	rc = close_pending(rl, err);
	if (rc)
		return rc;
	for (i = 0; i < rl->n; i++)
		if (rl->runs[i].kind == RUN_STRIDE && rl->runs[i].count > 1)
			nstride++;
	if ((uint64_t)rl->nviews + nstride >= GFSP_RUN_DENSE)
		return gfsp_error_set(err, GFSP_EINVAL,
		    "too many views (%llu) for one record",
		    (unsigned long long)(rl->nviews + nstride));
	rec->xviews = calloc(rl->nviews + nstride + 1, sizeof(*rec->xviews));
	rec->runs = calloc(rl->n + 1, sizeof(*rec->runs));
	if (rec->xviews == NULL || rec->runs == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM,
		    "out of memory for %llu write runs",
		    (unsigned long long)rl->n);
		goto fail;
	}
	rec->nxviews = 0;
	for (v = 0; v < rl->nviews; v++) {
		rc = gfsp_view_copy(&rec->xviews[v], &rl->views[v], err);
		if (rc)
			goto fail;
		rec->nxviews = v + 1;
	}
	rec->nruns = 0;
	for (i = 0; i < rl->n; i++) {
		struct gfsp_run *out = &rec->runs[rec->nruns];

		rc = export_run(&rl->runs[i], rec, out, err);
		if (rc)
			goto fail;
		/* wholly cut off by a truncation: holds nothing */
		if (out->begin < out->end)
			rec->nruns++;
	}
	return 0;
fail:
	for (v = 0; v < rec->nxviews; v++)
		gfsp_view_free(&rec->xviews[v]);
	free(rec->xviews);
	free(rec->runs);
	rec->xviews = NULL;
	rec->runs = NULL;
	rec->nxviews = 0;
	rec->nruns = 0;
	return rc;
}
