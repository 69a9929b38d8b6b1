/*
 * copy.h - the copy wing (libcore/copy/): the engines behind the commands
 * pcp-split (ordinary file -> split file), gfsplit-merge (split file ->
 * ordinary file) and stat-layout (what a split file holds), and the
 * results they return.  Uses base, store and split; no other wing of its
 * level.  Included by libcore/copy/ and cmd/.
 *
 * The copy engines are collective over comm: every rank calls them with the
 * same arguments, every phase ends with gfsp_agree(), and all ranks return the
 * same verdict.  No engine prints; the commands turn the results below into
 * text or JSON (cmd/copy-common/copyreport.c, which pcp-split and
 * gfsplit-merge share).
 */
#ifndef GFSP_COPY_H
#define GFSP_COPY_H

#include <stdint.h>
#include <json-c/json.h>
#include "gfsplit.h"
#include "store.h"

/* defaults: bytes per buffer (two per rank), bytes per merge stripe */
#define GFSP_COPY_BUFFER_DEFAULT	(8u << 20)
#define GFSP_MERGE_STRIPE_DEFAULT (64u << 20)

/* What one rank will do, as reported by --dry-run. */
struct gfsp_plan_rank {
	uint64_t bytes;		/* split: logical bytes this rank moves;
				 * merge: bytes it writes (holes excluded) */
	uint64_t pieces;	/* split: view blocks; merge: output stripes
				 * it writes some of */
	uint64_t first;		/* first global offset (0 if nothing); merge:
				 * where its first stripe begins */
	uint64_t last;		/* one past the last global offset; merge:
				 * where its last stripe ends */
};

/*
 * Outcome of a run, valid on rank 0 (and where noted on every rank) when
 * the engine returns 0.
 */
struct gfsp_copy_result {
	uint64_t bytes;		/* logical size (every rank) */
	int ranks;		/* processes that ran the copy */
	int writers;		/* merge: ranks that wrote the split file */
	char layout[32];	/* "contiguous", "cyclic:65536", ... */
	double seconds;		/* wall time of the copy */
	long max_rss_kib;	/* peak resident set, max over ranks */
	double cpu_seconds;	/* user+system time, summed over ranks */
	int verified;		/* merge: part checksums were checked */
	uint64_t data_bytes;	/* merge: bytes written (holes excluded) */
	uint64_t stripe_size;	/* merge: output stripe */
	int misplaced;		/* split: parts not on their rank's host */
	uint64_t hole_bytes;	/* zeros left holes (in the parts, in DST) */
	/* dry run only: one entry per rank (rank 0 only; caller frees) */
	struct gfsp_plan_rank *plan;
};

struct gfsp_split_args {
	const char *src;
	const char *dst;
	uint64_t block_size;	/* 0: contiguous layout */
	uint64_t buffer_size;	/* 0: GFSP_COPY_BUFFER_DEFAULT */
	int force;		/* replace an existing DST, at commit only */
	int dry_run;		/* plan only: nothing is created */
	int sync;		/* fsync before commit */
	/* storage nodes, comma-separated: rank r's part goes to entry
	 * r mod K (NULL or "": the backend's choice) */
	const char *hosts;
	enum gfsp_place_policy placement;
	int preserve;		/* -p: the source's mode, owner and times
				 * recorded in the marker (format 4) */
	int no_sparse;		/* a sparse source's zeros written, not
				 * left holes in the parts */
};

struct gfsp_merge_args {
	const char *src;
	const char *dst;
	uint64_t stripe_size;	/* 0: GFSP_MERGE_STRIPE_DEFAULT */
	uint64_t buffer_size;	/* 0: GFSP_COPY_BUFFER_DEFAULT */
	int verify;		/* check part checksums on the way */
	int force;
	int dry_run;
	int sync;
	int preserve;		/* -p: DST gets the mode, owner (where
				 * allowed) and times the marker records */
	int no_sparse;		/* parts with holes: DST written dense */
};

/*
 * Contiguous chunk for `size` bytes over `nprocs` ranks: ceil(size/nprocs)
 * rounded up to 1 MiB when that is at least 1 MiB, else to 4 KiB (so a rank
 * boundary never splits a page, nor a checksum segment for large files).
 */
uint64_t gfsp_split_chunk(uint64_t size, int nprocs);

/* Collective.  IN a; OUT res (see struct gfsp_copy_result). */
int gfsp_pcp_split(MPI_Comm comm, const struct gfsp_split_args *a,
		  struct gfsp_copy_result *res, struct gfsp_error *err);

/*
 * Collective.  The output is cut into stripes of stripe_size bytes; the
 * bytes of a stripe are dealt by where their parts are (mplan.h): to the
 * least loaded rank on the node that holds them, or, parts on no node of
 * the merge's, to the least loaded rank of all.  Holes of the layout stay
 * holes in DST.  DST is written under a temporary sibling name and renamed
 * into place only after every rank succeeded and the checksums matched.
 */
int gfsp_merge(MPI_Comm comm, const struct gfsp_merge_args *a,
	      struct gfsp_copy_result *res, struct gfsp_error *err);

#endif /* GFSP_COPY_H */
