/*
 * stage_plan.c - the plan of a stage-in or stage-out (stage.h): every
 * file to copy cut into pieces and given to the ranks (the same on every
 * rank, from the same list), and the files already in place on every
 * node that needs them dropped from it.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "stage.h"
#include "stage_impl.h"

/* -------------------------------------------------------------- plan */

struct order {
	uint64_t size;
	uint32_t file;
};

static int
order_cmp(const void *a, const void *b)
{
	const struct order *x = a, *y = b;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

static int
piece_cmp(const void *a, const void *b)
{
	const struct gfsp_piece *x = a, *y = b;

	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* May a file be cut into pieces written by several ranks? */
static int
splittable(const struct stage *s, const struct gfsp_sfile *f)
{
	const struct gfsp_store_ops *ops;
	struct gfsp_error e = { 0 };

	if (s->o->x.compress || f->gfsz)
		return 0;
	/* Gfarm keeps a file on one node: one writer */
	return gfsp_store_for(s->root, &ops, &e) == 0 &&
	       strcmp(ops->name, "posix") == 0;
}

/* The slots pieces go to (see plan), and this rank's (-1: none) */
static int
slots(const struct stage *s, int *myslot)
{
	if (s->o->way == GFSP_STAGE_IN && !s->o->scatter) {
		*myslot = s->lrank < s->min_movers ? s->lrank : -1;
		return s->min_movers;
	}
	if (s->o->way == GFSP_STAGE_IN) {
		*myslot = s->rank;	/* slot r: rank r */
		return s->nprocs;
	}
	*myslot = s->lrank < s->movers ? s->lrank : -1;
	return s->movers;
}

/* The least loaded of nslots slots */
static int
least(const uint64_t *load, int nslots)
{
	int sl = 0, t;

	for (t = 1; t < nslots; t++)
		if (load[t] < load[sl])
			sl = t;
	return sl;
}

/* One more piece at the end of *all (*nall of *cap); its reader the
 * slot, for now */
static int
add_piece(struct gfsp_piece **all, size_t *nall, size_t *cap, uint32_t file,
	  uint32_t np, uint64_t off, uint64_t len, int slot)
{
	struct gfsp_piece *p;

	if (gfsp_grow(all, cap, *nall + 1, sizeof(**all)) != 0)
		return GFSP_ENOMEM;
	p = &(*all)[(*nall)++];
	memset(p, 0, sizeof(*p));
	p->file = file;
	p->npieces = np;
	p->off = off;
	p->len = len;
	p->bcomm = MPI_COMM_NULL;
	p->reader = slot;
	return 0;
}

/*
 * Every file to copy, largest first, cut into pieces (when splittable
 * and over two pieces long, its index added to s->split), each given the
 * least loaded slot; --scatter keeps a file's pieces with its first (on
 * one node).  The pieces in file and offset order into *all.
 */
static int
cut(struct stage *s, int nslots, struct gfsp_piece **all, size_t *nall,
    struct gfsp_error *err)
{
	const uint64_t piece = piece_size(s);
	uint64_t *load = calloc((size_t)nslots, sizeof(*load)), off, len;
	struct order *ord = malloc((s->fl.n + 1) * sizeof(*ord));
	size_t cap = 0, i, n = 0;
	int rc = 0, sl, isplit;
	uint32_t j, np;

	if (load == NULL || ord == NULL)
		rc = OOM(err);
	for (i = 0; rc == 0 && i < s->fl.n; i++)
		if (s->fl.v[i].type == GFSP_SF_FILE && s->res[i].rc == 0) {
			ord[n].size = s->fl.v[i].st.size;
			ord[n++].file = (uint32_t)i;
		}
	if (rc == 0)
		qsort(ord, n, sizeof(*ord), order_cmp);
	for (i = 0; rc == 0 && i < n; i++) {
		const struct gfsp_sfile *f = &s->fl.v[ord[i].file];

		isplit = f->st.size > 2 * piece && splittable(s, f);
		np = isplit ? (uint32_t)((f->st.size + piece - 1) / piece) : 1;
		if (isplit)
			s->split[s->nsplit++] = ord[i].file;
		for (off = 0, j = 0; rc == 0 && j < np; j++, off += len) {
			len = isplit ? GFSP_MIN(piece, f->st.size - off)
				     : f->st.size;
			sl = s->o->scatter && j > 0 ? (*all)[*nall - 1].reader :
			     least(load, nslots);
			load[sl] += GFSP_MAX(len, (uint64_t)4096);
			rc = add_piece(all, nall, &cap, ord[i].file, np, off,
				       len, sl);
		}
	}
	if (rc == GFSP_ENOMEM)
		rc = OOM(err);
	if (rc == 0)
		qsort(*all, *nall, sizeof(**all), piece_cmp);
	free(load);
	free(ord);
	return rc;
}

/* This rank's pieces into s->p; forwarded pieces (stage-in over several
 * nodes) read on the least loaded node of their slot */
static int
keep_mine(struct stage *s, const struct gfsp_piece *all, size_t nall,
	  int myslot, int nslots, struct gfsp_error *err)
{
	const int forward = s->o->way == GFSP_STAGE_IN && !s->o->scatter &&
			    s->nnodes > 1;
	uint64_t *readload = calloc((size_t)s->nnodes * (size_t)nslots,
				    sizeof(*readload)), *rl;
	size_t i;
	int reader;

	s->p = malloc((nall + 1) * sizeof(*s->p));
	if (readload == NULL || s->p == NULL) {
		free(readload);
		return OOM(err);
	}
	for (i = 0; i < nall; i++) {
		reader = 0;
		if (forward) {
			rl = readload + (size_t)all[i].reader * s->nnodes;
			reader = least(rl, s->nnodes);
			rl[reader] += GFSP_MAX(all[i].len, (uint64_t)4096);
		}
		if (all[i].reader != myslot)
			continue;
		s->p[s->np] = all[i];
		s->p[s->np].bcomm = forward ? s->slot : MPI_COMM_NULL;
		s->p[s->np].reader = reader;
		s->np++;
		s->plan.bytes += all[i].len;
		s->plan.pieces++;
	}
	free(readload);
	return 0;
}

/* --scatter: which node makes each file (a second name lives with its
 * first) */
static int
scatter_nodes(struct stage *s, const struct gfsp_piece *all, size_t nall,
	      struct gfsp_error *err)
{
	int *nodeof = malloc((size_t)s->nprocs * sizeof(int)), rc;
	size_t i, k;

	if (nodeof == NULL)
		return OOM(err);
	rc = gfsp_mpi_check(gfsp_allgather(&s->nindex, 1, MPI_INT, nodeof, 1,
					  MPI_INT, s->comm),
			   "MPI_Allgather", err);
	for (i = 0; rc == 0 && i < nall; i++)
		s->fl.v[all[i].file].node = nodeof[all[i].reader];
	free(nodeof);
	for (i = 0; rc == 0 && i < s->fl.n; i++) {
		struct gfsp_sfile *f = &s->fl.v[i];

		if (f->type != GFSP_SF_HARDLINK)
			continue;
		for (k = 0; k < s->fl.n; k++)
			if (strcmp(s->fl.v[k].rel, f->link) == 0)
				f->node = s->fl.v[k].node;
	}
	return rc;
}

/*
 * Every rank computes the same plan from the same list; each keeps its
 * own pieces.  Slots: the ranks a piece may go to (in: the slot
 * communicators, min_movers of them, or with --scatter every rank; out:
 * the node's movers).
 */
static int
plan(struct stage *s, struct gfsp_error *err)
{
	struct gfsp_piece *all = NULL;
	size_t nall = 0;
	int nslots, myslot, rc;

	nslots = slots(s, &myslot);
	s->split = malloc((s->fl.n + 1) * sizeof(*s->split));
	rc = s->split == NULL ? OOM(err) : cut(s, nslots, &all, &nall, err);
	if (rc == 0)
		rc = keep_mine(s, all, nall, myslot, nslots, err);
	if (rc == 0 && s->o->way == GFSP_STAGE_IN && s->o->scatter)
		rc = scatter_nodes(s, all, nall, err);
	free(all);
	return rc;
}

/* ------------------------------------------------------------- check */

/*
 * Which files are there already, on every node that needs them?  Each
 * node's ranks check a share of its files; a file counts as there only if
 * every node that needs it has it (MPI_BAND over all ranks), so that all
 * ranks plan the same.
 */
static int
check_present(struct stage *s, struct gfsp_error *err)
{
	size_t i, k = 0;
	int rc;

	for (i = 0; i < s->fl.n; i++) {
		const struct gfsp_sfile *f = &s->fl.v[i];
		int here = f->node < 0 || f->node == s->nindex;

		s->skip[i] = 1;
		if (f->type != GFSP_SF_FILE || s->res[i].rc != 0) {
			s->skip[i] = f->type == GFSP_SF_FILE ? 0 : 1;
			continue;
		}
		if (!here)
			continue;
		if ((k++ % (size_t)s->ppn) != (size_t)s->lrank)
			continue;
		s->skip[i] = (unsigned char)gfsp_xfer_present(s->x,
							      (uint32_t)i);
	}
	rc = gfsp_mpi_check(gfsp_allreduce(MPI_IN_PLACE, s->skip,
					  (int)s->fl.n, MPI_UNSIGNED_CHAR,
					  MPI_BAND, s->o->way == GFSP_STAGE_IN
					  ? s->comm : s->node),
			   "MPI_Allreduce", err);
	for (i = 0; i < s->fl.n; i++) {
		if (s->fl.v[i].type != GFSP_SF_FILE)
			s->skip[i] = 0;
		else if (s->skip[i] && !s->res[i].skipped)
			s->res[i].skipped = s->lrank == 0 &&
			    (s->fl.v[i].node < 0 ||
			     s->fl.v[i].node == s->nindex) ? 1 : 0;
		else if (!s->skip[i])
			s->res[i].skipped = 0;
	}
	return gfsp_agree(s->comm, rc, err);
}

/* Take the files that are there from the plan (every rank drops the
 * same ones, so forwarding ranks stay in step). */
static void
drop_present(struct stage *s)
{
	size_t i, n = 0;

	s->plan.bytes = s->plan.pieces = 0;
	for (i = 0; i < s->np; i++) {
		if (s->skip[s->p[i].file])
			continue;
		s->p[n++] = s->p[i];
		s->plan.bytes += s->p[i].len;
		s->plan.pieces++;
	}
	s->np = n;
	for (i = n = 0; i < s->nsplit; i++)
		if (!s->skip[s->split[i]])
			s->split[n++] = s->split[i];
	s->nsplit = n;
}

/* The transfer engine made and the plan agreed on; what is in place
 * already dropped from it */
int
gfsp_stage_make_plan(struct stage *s, struct gfsp_xfer_opts *xo,
		     struct gfsp_error *err)
{
	const struct gfsp_stage_opts *o = s->o;
	struct gfsp_stage_opts o2 = *o;
	int rc, writers;

	/* --bwlimit is a node's: shared by the node's ranks that write */
	if (xo->bwlimit > 0) {
		writers = o->way == GFSP_STAGE_IN && !o->scatter ?
			  s->min_movers : o->way == GFSP_STAGE_IN ? s->ppn :
			  s->movers;
		xo->bwlimit = GFSP_MAX(xo->bwlimit / (uint64_t)writers, 1);
	}
	if (s->res == NULL)
		s->res = calloc(s->fl.n + 1, sizeof(*s->res));
	s->skip = calloc(s->fl.n + 1, 1);
	rc = s->res == NULL || s->skip == NULL ? OOM(err) : 0;
	if (rc == 0)
		rc = gfsp_xfer_new(xo, &s->fl, s->root, s->st, s->res, NULL,
				   &s->x, err);
	rc = gfsp_agree(s->comm, rc, err);
	if (rc == 0) {
		o2.x = *xo;
		s->o = &o2;
		rc = plan(s, err);
		s->o = o;
	}
	rc = gfsp_agree(s->comm, rc, err);
	if (rc == 0)
		rc = check_present(s, err);
	if (rc == 0)
		drop_present(s);
	return rc;
}

