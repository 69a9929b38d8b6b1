/*
 * splitfile.h - the split wing (libcore/split/): the on-disk format of a
 * split file (man/gfsplit.5), views and their resolution, the layout
 * engine that reads one (layout_impl.h), the collective writer with its
 * commit rule, the run logs, and destinations created without loss
 * (dst.h).  Uses base and store only.  Included by libcore/, preload/,
 * tests/ and bench/.
 *
 *   F/                     the split directory (a plain directory)
 *   F/gfsplit.meta         marker: magic, version, nprocs, nnodes, logical
 *                          size, checksum segment size; written last
 *   F/loc.<k>              location file of node k (0 <= k < nnodes): the
 *                          flattened views of that node's ranks, their part
 *                          sizes and part checksums
 *   F/part.<r>             part file of writer rank r: the bytes of r's view
 *                          in increasing global order
 *   xattr user.gfsplit     "1" on F where the backend supports it
 *
 * Integers are little-endian whatever the host; every metadata file ends
 * with an XXH3-64 of all its preceding bytes.
 *
 * Commit rule: the writer builds everything in a sibling temporary
 * directory ".F.gfsplit-tmp.<id>" and renames it to F only after every rank
 * succeeded and the marker is written; on failure every rank's part and the
 * temporary directory are removed.  A crash can leave the temporary
 * directory behind but never an F that looks complete.
 */
#ifndef GFSP_SPLITFILE_H
#define GFSP_SPLITFILE_H

#include <stdint.h>
#include <stddef.h>
#include "gfsplit.h"
#include "store.h"

#define GFSP_FORMAT_VERSION	4	/* reads 1 to 4 */
/* written: 3, but for a marker with the source's attributes (pcp-split
 * -p), 4; location files are 3 in either case (4 changed the marker
 * only), so that what a 3 reader can read it still gets */
#define GFSP_FORMAT_WRITE	3
#define GFSP_MARKER_NAME		"gfsplit.meta"
#define GFSP_XATTR_NAME		"user.gfsplit"
#define GFSP_NAME_MAX		256
/* the largest logical size: off_t and MPI_Offset are signed 64-bit */
#define GFSP_SIZE_MAX		((uint64_t)INT64_MAX)


/* ------------------------------------------------- metadata encodings */

/* What pcp-split -p keeps of the source (marker v4): permission bits,
 * owner and group as numbers, access and modification times. */
struct gfsp_attrs {
	uint32_t mode;		/* & 07777 */
	uint32_t uid, gid;
	int64_t atime, mtime;	/* seconds since the epoch */
	uint32_t atime_ns, mtime_ns;
};

struct gfsp_marker {
	uint32_t version;
	uint32_t nprocs;	/* writer ranks = part files */
	uint32_t nnodes;	/* location files */
	uint64_t logical_size;
	uint64_t seg_size;
	int64_t ctime;		/* seconds since the epoch, commit time */
	char layout[32];	/* "contiguous", "cyclic:4194304", "view" */
	int has_attrs;		/* v4: attrs holds the source's */
	struct gfsp_attrs attrs;
};

/*
 * A run (format v2): the bytes of one of the record's views that lie in
 * global [begin, end), stored in the part densely from `loff` on, in
 * increasing global order.  `view` indexes the record's views (0 is `view`,
 * 1.. are xviews[0..]); GFSP_RUN_DENSE means every byte (no view).
 * `epoch` (v3) orders writes in time across ranks: the MPI-IO library
 * starts a new one at every MPI_File_sync and around every collective
 * call, so a write that MPI says came later (sync-barrier-sync between
 * them, or a later collective call) has the higher epoch.  Where runs
 * overlap, the run of the highest epoch holds the data; in one epoch, the
 * lowest rank's (MPI leaves that undefined; MPI-IO/Gfarm's rule); in one
 * rank and epoch, the later run's (an overwrite).
 */
#define GFSP_RUN_DENSE	UINT32_MAX

struct gfsp_run {
	uint32_t view;
	uint64_t begin, end;
	uint64_t loff;
	uint64_t epoch;
};

struct gfsp_locrec {
	uint32_t rank;
	struct gfsp_view view;	/* view 0: pcp-split's view, resolved */
	uint32_t nxviews;	/* v2: more views, indexed 1..nxviews */
	struct gfsp_view *xviews;
	/* v2: runs; none means the one implicit run of format v1,
	 * {view 0, [0, end of view), loff 0} */
	uint64_t nruns;
	struct gfsp_run *runs;
	uint64_t part_size;	/* bytes in part.<rank> */
	uint64_t part_hash;	/* see gfsp_phash */
	char host[GFSP_NAME_MAX];	/* where the part was written */
};

struct gfsp_locfile {
	uint32_t nprocs;	/* ranks of the whole job */
	uint32_t nnodes;
	uint32_t node;		/* this file's index */
	char node_name[GFSP_NAME_MAX];
	uint32_t nrecs;
	struct gfsp_locrec *recs;	/* sorted by rank */
};

/* Pure encoders/decoders: no I/O, no MPI.  `name` is used in messages
 * ("loc.1: checksum mismatch (file is corrupt or truncated)"). */
int gfsp_marker_encode(const struct gfsp_marker *m, unsigned char **buf,
		      size_t *len, struct gfsp_error *err);
int gfsp_marker_decode(const unsigned char *buf, size_t len, const char *name,
		      struct gfsp_marker *m, struct gfsp_error *err);
int gfsp_locfile_encode(const struct gfsp_locfile *lf, unsigned char **buf,
		       size_t *len, struct gfsp_error *err);
int gfsp_locfile_decode(const unsigned char *buf, size_t len, const char *name,
		       struct gfsp_locfile *lf, struct gfsp_error *err);
void gfsp_locfile_free(struct gfsp_locfile *lf);
/* One record alone (the writer's exchange between ranks): the bytes it has
 * inside a location file, no trailer. */
int gfsp_locrec_encode(const struct gfsp_locrec *rec, unsigned char **buf,
		      size_t *len, struct gfsp_error *err);
int gfsp_locrec_decode(const unsigned char *buf, size_t len, uint32_t nprocs,
		      const char *name, struct gfsp_locrec *rec,
		      struct gfsp_error *err);
void gfsp_locrec_free(struct gfsp_locrec *rec);
/* View i of a record (0 = rec->view), NULL if out of range or dense. */
const struct gfsp_view *gfsp_locrec_view(const struct gfsp_locrec *rec,
					uint32_t i);

/* Most records a location file of `size` bytes can hold. */
uint64_t gfsp_locfile_max_records(uint64_t size);


/* ------------------------------------------------------------ writer */

struct gfsp_split_opts {
	int force;		/* replace an existing DST (only after commit) */
	uint64_t seg_size;	/* 0: default */
	const char *layout;	/* marker's layout string */
	int sync;		/* fsync parts and metadata before commit */
	/* this rank's storage node (Gfarm: the gfsd its part must land on;
	 * it also names the rank's node, so one location file per storage
	 * node); NULL: the backend's choice and gfsp_node_name() */
	const char *host;
	enum gfsp_place_policy policy;	/* when that node is down or full */
	/* OUT, if non-NULL, on every rank after a commit: parts that did
	 * not land on their rank's host (a fallback happened) */
	int *misplaced;
	/* comm is already private to this writer (the caller's own
	 * duplicate, with no other traffic between its collectives): used
	 * as it is instead of duplicated, which costs a collective */
	int comm_private;
	/* permission bits of what it copies (pcp-split: the source's): the
	 * parts and metadata get mode & 0666, the directory those plus x
	 * where they read; 0: 0644 and 0755.  The umask applies too */
	uint32_t mode;
	/* pcp-split -p: the source's attributes, recorded in the marker
	 * (format 4); NULL: none */
	const struct gfsp_attrs *attrs;
	/* commit only over what was at DST when the writer was created: if
	 * another writer made or replaced it meanwhile, fail (GFSP_EEXIST)
	 * and leave it (the MPI-IO library: handles in other processes) */
	int guard;
	/* a sparse source (pcp-split): aligned runs of GFSP_HOLE_MIN zeros
	 * appended stay holes in the part (gfsp_pwrite_sparse) */
	int sparse;
	/* OUT, if non-NULL: this rank's bytes left holes so */
	uint64_t *holes;
};

struct gfsp_split_writer;

/*
 * Collective over comm.  Checks that DST does not exist (or opts->force),
 * exchanges and resolves views (view == NULL on every rank: run mode, see
 * below), creates the temporary directory and this rank's part.  On failure, all ranks return an error and nothing is left.
 * OUT *resolved (may be NULL): this rank's view after overlap resolution,
 * owned by the writer.
 */
int gfsp_split_create(MPI_Comm comm, const char *dst,
		     const struct gfsp_view *view,
		     const struct gfsp_split_opts *opts,
		     struct gfsp_split_writer **out,
		     const struct gfsp_view **resolved, struct gfsp_error *err);

/* Append to this rank's part (local offsets increase); hashes on the way. */
int gfsp_split_append(struct gfsp_split_writer *w, const void *buf, size_t len,
		     struct gfsp_error *err);

/* Current part size (local bytes appended so far). */
uint64_t gfsp_split_part_size(const struct gfsp_split_writer *w);

/*
 * Run mode (created with view == NULL; the MPI-IO library): writes land
 * anywhere in the logical file, in any order, and are appended to the
 * part with a record of where they belong (runlog.h).  A later write wins
 * over an earlier one where they overlap.
 *
 * gfsp_split_add_view: take a view over for gfsp_split_write_view; OUT
 *   *id.  *v stays readable until the writer is freed; do not free it.
 * gfsp_split_write_at: buf holds global [goff, goff + len).
 * gfsp_split_write_view: buf holds the bytes of view id in global
 *   [begin, end), in order; len must be their number.
 * gfsp_split_set_epoch: the writes from now on belong to `epoch` (struct
 *   gfsp_run); epochs only grow.
 * gfsp_split_truncate: the file was cut to size bytes (collectively).
 * gfsp_split_nruns: runs recorded so far (patterns fold into one).
 */
int gfsp_split_add_view(struct gfsp_split_writer *w, struct gfsp_view *v,
		       uint32_t *id, struct gfsp_error *err);
int gfsp_split_write_at(struct gfsp_split_writer *w, uint64_t goff,
		       const void *buf, size_t len, struct gfsp_error *err);
int gfsp_split_write_view(struct gfsp_split_writer *w, uint32_t id,
			 uint64_t begin, uint64_t end, const void *buf,
			 size_t len, struct gfsp_error *err);
int gfsp_split_set_epoch(struct gfsp_split_writer *w, uint64_t epoch,
			 struct gfsp_error *err);
void gfsp_split_truncate(struct gfsp_split_writer *w, uint64_t size);
/*
 * Run mode, a file opened again: the new file replaces `path`, which holds
 * data already (a split file or a plain one).  Its bytes stay wherever no
 * rank writes, below its size as cut by gfsp_split_truncate, as MPI keeps
 * a file's old bytes; the commit copies them into the parts.  Call it on
 * every rank (it opens the old file, nothing collective).  OUT *size: the
 * old file's size.
 */
int gfsp_split_set_base(struct gfsp_split_writer *w, const char *path,
		       uint64_t *size, struct gfsp_error *err);
/*
 * Run mode: read [goff, goff + len) of the file being written, of `size`
 * bytes, as this rank sees it: its own writes, the other ranks' as of the
 * last gfsp_split_refresh(), the old file under them, zeros in holes
 * (MPI's consistency: another rank's writes show after a sync).  *got is
 * short only at `size`.
 */
int gfsp_split_pread(struct gfsp_split_writer *w, void *buf, uint64_t len,
		    uint64_t goff, uint64_t size, uint64_t *got,
		    struct gfsp_error *err);
/* Collective (MPI_File_sync): every rank's writes so far show in every
 * rank's gfsp_split_pread from now on. */
int gfsp_split_refresh(struct gfsp_split_writer *w, struct gfsp_error *err);
/* Make this rank's part durable so far (MPI_File_sync). */
int gfsp_split_sync(struct gfsp_split_writer *w, struct gfsp_error *err);
uint64_t gfsp_split_nruns(const struct gfsp_split_writer *w);

/*
 * Collective.  rc is this rank's outcome so far.  If every rank succeeded:
 * write the location files (one per node), then the marker, then rename
 * the temporary directory to DST (replacing an old DST only with force,
 * and only now).  Otherwise remove everything.  logical_size: each rank's
 * idea of the logical size (the maximum is taken).  Frees w.  Returns the
 * agreed outcome.
 */
int gfsp_split_finish(struct gfsp_split_writer *w, int rc,
		     uint64_t logical_size, struct gfsp_error *err);



#endif /* GFSP_SPLITFILE_H */
