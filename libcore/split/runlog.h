/*
 * runlog.h - the record of where a rank's writes went, kept as runs
 * (splitfile.h, struct gfsp_run) while the writes arrive in any order.
 * Included by libcore/split/ and tests/.
 *
 * Every write is appended to the part, so the part is a log and a run says
 * which global bytes a stretch of it holds.  Writes that follow a pattern
 * fold into one run instead of one entry each (the weakness of per-write
 * index logs in PLFS-like systems):
 *
 *   contiguous writes        [g, g+n) [g+n, g+2n) ...   -> one dense block
 *   equal blocks at a stride [g, +b) [g+s, +b) ...      -> one strided run
 *   a view walked in order   view v [a, b) [b, c) ...   -> one view run
 *
 * so IOR-like segmented N-1 writes cost one run per rank, whatever the
 * number of segments, and an HPIO-like view write of a million regions
 * costs one.  Overwrites need nothing special: a later run wins where it
 * overlaps an earlier one (the reader's rule).  A rank rewriting its own
 * bytes finds where they are (gfsp_runlog_find) and writes over them, so
 * that rewriting a file in place does not make it take twice the space.
 */
#ifndef GFSP_RUNLOG_H
#define GFSP_RUNLOG_H

#include <stdint.h>
#include "splitfile.h"

struct gfsp_runlog;

struct gfsp_runlog *gfsp_runlog_new(void);
void gfsp_runlog_free(struct gfsp_runlog *rl);

/*
 * Take view v into the log's view table; OUT *id (>= 1) names it in
 * gfsp_runlog_view() and in the exported record.  The log takes v's arrays
 * over without copying them (a view of a million blocks is tens of MiB):
 * *v stays readable while the log lives, and the caller must not free it.
 */
int gfsp_runlog_add_view(struct gfsp_runlog *rl, struct gfsp_view *v,
			uint32_t *id, struct gfsp_error *err);

/* The len bytes at part offset loff hold global [g, g + len). */
int gfsp_runlog_dense(struct gfsp_runlog *rl, uint64_t g, uint64_t len,
		     uint64_t loff, struct gfsp_error *err);

/* The bytes at part offset loff hold view id's bytes in [begin, end);
 * end is just past the last byte written (the file's size after it). */
int gfsp_runlog_view(struct gfsp_runlog *rl, uint32_t id, uint64_t begin,
		    uint64_t end, uint64_t loff, struct gfsp_error *err);

/* The file was cut to `size` bytes: nothing written so far reaches past
 * it any more (MPI_File_set_size).  Later writes may extend it again. */
void gfsp_runlog_truncate(struct gfsp_runlog *rl, uint64_t size);

/*
 * Writes from now on belong to `epoch` (splitfile.h: a later epoch wins
 * over an earlier one where runs overlap).  Epochs never go back; no run
 * spans two of them.
 */
int gfsp_runlog_set_epoch(struct gfsp_runlog *rl, uint64_t epoch,
			  struct gfsp_error *err);

/*
 * Where the rank's own newest write of global byte g went, so that a
 * rewrite can go over it in the part instead of being stored again.  Only
 * the pending block and the last GFSP_RUNLOG_SEARCH runs are looked at
 * (older ones would make every write slow): beyond them a rewrite is
 * appended, which is always right.  Returns 1 and *hit if the newest run
 * holding g was found, else 0.  The write to come covers [g, g + len)
 * (hit->n and hit->free_end are only right up to g + len), through view
 * id `view` (0: a dense write), for hit->same_view.
 */
#define GFSP_RUNLOG_SEARCH	256
struct gfsp_runhit {
	uint64_t loff;		/* g's part offset */
	uint64_t n;		/* bytes from g that stay contiguous in file
				 * and part in that run */
	uint64_t free_end;	/* no newer run holds a byte of [g,
				 * free_end), and that run none past it */
	uint64_t epoch;		/* that run's */
	int same_view;		/* it is a run of the write's view (or of
				 * one equal to it); dense: a dense run */
};
int gfsp_runlog_find(struct gfsp_runlog *rl, uint64_t g, uint64_t len,
		     uint32_t view, struct gfsp_runhit *hit);

/* The epoch of the writes from now on. */
uint64_t gfsp_runlog_epoch(const struct gfsp_runlog *rl);

/* Runs so far (a pending block counts as one). */
uint64_t gfsp_runlog_nruns(const struct gfsp_runlog *rl);

/*
 * Fill rec->xviews/nxviews and rec->runs/nruns (rec->view is left alone:
 * view ids start at 1).  Strided runs get a one-block view each.  The log
 * stays usable.
 */
int gfsp_runlog_export(struct gfsp_runlog *rl, struct gfsp_locrec *rec,
		      struct gfsp_error *err);

#endif /* GFSP_RUNLOG_H */
