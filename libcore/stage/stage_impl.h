/*
 * stage_impl.h - the inside of stage-in and stage-out: struct stage, one
 * run's state, and what the run (stage.c), its plan (stage_plan.c) and
 * --delete (stage_delete.c) call of each other.  Included by
 * libcore/stage/ only.
 */
#ifndef GFSP_STAGE_IMPL_H
#define GFSP_STAGE_IMPL_H

#include <stdint.h>

#include "core.h"
#include "stage.h"

#define OOM(err) gfsp_error_set(err, GFSP_ENOMEM, "out of memory")

struct stage {
	const struct gfsp_stage_opts *o;
	MPI_Comm comm, node, slot;
	int rank, nprocs, lrank, ppn, nindex, nnodes;
	/* the ranks of a node that move data: its first ones, no more than
	 * it has cores (more only take turns on them, with a pipeline's two
	 * threads each); the fewest of any node */
	int movers, min_movers;
	char nodename[256];
	char *root;			/* this node's destination root */
	char *local;			/* this node's local root (state) */
	char **confined;		/* roots given to gfsp_confine */
	size_t nconfined;
	struct gfsp_state *st;
	struct gfsp_flist fl;
	struct gfsp_fresult *res;
	unsigned char *skip;		/* per entry: already there */
	unsigned char *mine;		/* per entry: this node makes it */
	struct gfsp_piece *p;		/* this rank's pieces */
	size_t np;
	uint64_t *split;		/* entries cut into pieces */
	size_t nsplit;
	struct {
		uint64_t bytes, pieces;
	} plan;				/* this rank's share */
	struct gfsp_xfer *x;
	struct gfsp_progress *prog;
};

/* Bytes of a piece of a split file: 8 chunks. */
static inline uint64_t
piece_size(const struct stage *s)
{
	return 8 * (s->o->x.chunk ? s->o->x.chunk : GFSP_STAGE_CHUNK_DEFAULT);
}

static inline int
on_this_node(const struct stage *s, size_t i)
{
	return s->fl.v[i].node < 0 || s->fl.v[i].node == s->nindex;
}

/* stage.c: DEST's name still leads to the directory confined (id: the
 * directory held); the directories' modes and times */
int gfsp_stage_same_root(const struct stage *s, const char *what,
			 uint64_t id[2], struct gfsp_error *err);
void gfsp_stage_dir_times(struct stage *s);

/* stage_plan.c: the transfer engine made and the plan agreed on; what is
 * in place already dropped from it */
int gfsp_stage_make_plan(struct stage *s, struct gfsp_xfer_opts *xo,
			 struct gfsp_error *err);

/* stage_delete.c: --delete, once every entry is in place */
int gfsp_stage_prune(struct stage *s, struct gfsp_stage_result *res,
		     struct gfsp_error *err);

#endif /* GFSP_STAGE_IMPL_H */
