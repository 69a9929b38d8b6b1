/*
 * splitfile_impl.h - the inside of struct gfsp_split_writer, the
 * collective writer of a split file, shared by its two files: splitfile.c
 * (create, write, commit) and splitfile_base.c (the old file a run-mode
 * writer starts from, and reads of the file being written).  Included by
 * libcore/split/ only.
 */
#ifndef GFSP_SPLITFILE_IMPL_H
#define GFSP_SPLITFILE_IMPL_H

#include <mpi.h>
#include "core.h"
#include "dst.h"
#include "layout_impl.h"
#include "splitfile.h"

/*
 * Every rank's record, encoded, to every rank: node leaders write their
 * node's records and rank 0 compares what it reads back with them.
 */
struct recs {
	unsigned char *buf;	/* all records, rank order */
	uint64_t *off, *len;	/* [nprocs] each record's place in buf */
};


struct gfsp_split_writer {
	MPI_Comm comm;		/* private: a duplicate of the caller's, or
				 * the caller's own (opts->comm_private) */
	int own_comm;		/* comm is our duplicate, to free */
	int rank, nprocs;
	struct gfsp_dst dst;
	char *tmp;		/* gfsp_dst_sibling(dst, "tmp") */
	int tmp_made;
	int tmp_confined;	/* gfsp_confine_dir(tmp) held */
	uint64_t tmp_ino;	/* rank 0: TMP as made (POSIX; 0: unknown) */
	int force, sync;
	uint32_t fmode, dmode;	/* of the files, of the directory */
	int has_attrs;		/* -p: the marker records attrs */
	struct gfsp_attrs attrs;
	uint64_t seg_size;
	char layout[32];
	struct gfsp_view *views;	/* [nprocs], resolved (view mode) */
	struct gfsp_runlog *log;	/* run mode: where the writes went */
	uint64_t hi;		/* run mode: end of the highest write */
	char (*names)[GFSP_NAME_MAX];	/* [nprocs] node of each rank */
	int *node_of;		/* [nprocs] */
	int nnodes;
	char *part_path;
	struct gfsp_file *part;	/* open until finish */
	int part_made;		/* this rank created part_path */
	struct gfsp_phash *hash;
	uint64_t size;		/* bytes appended */
	int sparse;		/* appended zeros may stay holes */
	uint64_t holes;		/* bytes that did */
	uint64_t *holes_out;
	struct gfsp_place place;	/* where the part should land */
	char *host;		/* place.host, copied */
	char (*landed)[GFSP_NAME_MAX];	/* [nprocs] where each part went */
	int *misplaced;		/* OUT of opts */

	/* run mode: the file as it was before (gfsp_split_set_base) */
	struct gfsp_layout *base_l;	/* an old split file */
	struct gfsp_file *base_f;	/* or an old plain file */
	uint64_t base_size;	/* its bytes that stay (cut by truncation) */
	/* run mode: reads of the file being written */
	struct recs seen;	/* every record at the last refresh */
	struct gfsp_layout *snap;	/* what reads see, NULL: stale */
	int dirty;		/* written since the last flush */
};

void gfsp_recs_free(struct recs *x);

/* ------------------------------------------------ splitfile.c */

/* Written to: what reads saw is stale, and the part needs a flush. */
void gfsp_split_stale(struct gfsp_split_writer *w);
/* 0, or GFSP_EINVAL when w was not created for writes at offsets. */
int gfsp_split_run_mode(const struct gfsp_split_writer *w,
			struct gfsp_error *err);
/* This rank's record: its view, or the runs of its writes. */
int gfsp_split_my_record(struct gfsp_split_writer *w, uint64_t hash,
			 struct gfsp_locrec *me, struct gfsp_error *err);
/* Collective: every rank's record, encoded, to every rank (OUT *x). */
int gfsp_split_exchange_records(struct gfsp_split_writer *w, uint64_t hash,
				struct recs *x, struct gfsp_error *err);

/* ------------------------------------------- splitfile_base.c */

/* Close the old file (gfsp_split_set_base), if any. */
void gfsp_split_drop_base(struct gfsp_split_writer *w);
/* Collective, before the commit: the old file's bytes no rank rewrote go
 * into the parts. */
int gfsp_split_fill_from_base(struct gfsp_split_writer *w,
			      struct gfsp_error *err);

#endif /* GFSP_SPLITFILE_IMPL_H */
