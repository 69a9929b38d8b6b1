/*
 * layout_impl.h - the inside of struct gfsp_layout (an opened split file) and
 * the checks stat-layout runs.  Included by libcore/, cmd/, preload/,
 * tests/ and bench/.
 */
#ifndef GFSP_LAYOUT_IMPL_H
#define GFSP_LAYOUT_IMPL_H

#include <pthread.h>
#include <json-c/json.h>
#include "gfsplit.h"
#include "splitfile.h"
#include "store.h"

struct gfsp_layout {
	char *path;			/* the split directory */
	struct gfsp_marker marker;
	int nprocs;
	int nnodes;
	struct gfsp_view *views;		/* [nprocs] view 0 of each rank */
	/* [nprocs] the rest of each record (format v2): more views and
	 * runs; .view is empty (it moved to views[]) */
	struct gfsp_locrec *recs;
	int has_runs;			/* some record has explicit runs */
	uint64_t *part_size;		/* [nprocs] as recorded */
	uint64_t *part_hash;		/* [nprocs] as recorded */
	int *node_of;			/* [nprocs] rank -> location file */
	char (*host)[GFSP_NAME_MAX];	/* [nprocs] where each part was written */
	char (*node_name)[GFSP_NAME_MAX];	/* [nnodes] */
	struct gfsp_file **parts;	/* [nprocs] opened on first use */
	/* the ranks of the parts open now (not in a held layout), at most
	 * open_max: past it they are all closed (layout.c) */
	int *open_list;
	int nopen, open_max;
	/* one past the last logical byte any part holds (<= the logical
	 * size): past it the file is one trailing hole, which walks over
	 * the file (coverage, check, merge) skip at no cost */
	uint64_t data_end;
	/* verify a part's checksum before the first bytes are read from it
	 * (GFSPLIT_VERIFY=1 or gfsp_layout_set_verify) */
	int verify;
	unsigned char *verified;	/* [nprocs] part checked and good */
	/* [nprocs] or NULL: the checksums of parts as they are read
	 * through (gfsp_layout_set_readcheck), under vlock; `following`
	 * counts the parts not found good yet (nor given up) */
	struct gfsp_readcheck *rcheck;
	int following;
	uint64_t mem;			/* what the open counts against
					 * GFSP_OPEN_MEM_MAX */
	uint64_t loc_counted, loc_read;	/* location file bytes in mem, read */
	/* opened by gfsp_layout_open_held: every part open, none closed
	 * until the end; vlock serialises the verification of parts */
	int held;
	pthread_mutex_t vlock;
	uint64_t version;		/* gfsp_split_version of what was loaded */
	/* during gfsp_layout_load only: the metadata to load instead of
	 * the files, and where to keep what was read */
	struct gfsp_meta_bytes *in, *out;
};

/*
 * The metadata files of a split file as one rank read them, in one
 * buffer, for the other ranks of gfsp_layout_open_comm to load (layout.c
 * says how they lie in it).  at[] indexes it when it is loaded.
 */
struct gfsp_meta_bytes {
	unsigned char *buf;
	size_t len, cap;
	size_t *at, nat;
};
void gfsp_meta_bytes_free(struct gfsp_meta_bytes *m);

/*
 * gfsp_layout_open, with the marker and the location files taken from
 * `in` when it is not NULL (bytes another rank read: the directory and
 * the parts are not looked at, that rank checked them), and, when keep
 * is not NULL, the bytes read appended to it.
 */
int gfsp_layout_load(const char *path, struct gfsp_meta_bytes *in,
		     struct gfsp_meta_bytes *keep, struct gfsp_layout **out,
		     struct gfsp_error *err);

/*
 * Collective over comm: every rank opens split file `path` (OUT *out),
 * while only rank 0 reads its metadata files and looks at its parts, and
 * passes the bytes on: M ranks make the metadata calls of one open, not
 * M times those of one.  Every rank returns rank 0's outcome, its code
 * and message.
 */
int gfsp_layout_open_comm(MPI_Comm comm, const char *path,
			  struct gfsp_layout **out, struct gfsp_error *err);

/*
 * The most memory one open of a split file may take for its metadata: the
 * per-rank tables (about 400 bytes a rank) and the decoded location files
 * (counted at twice their size).  Counts are checked against the files'
 * sizes before anything is allocated for them; a file that needs more
 * than this is refused with GFSP_ENOMEM naming both figures.
 */
#define GFSP_OPEN_MEM_MAX	((uint64_t)2 << 30)

/* "DIR/part.R", "DIR/loc.K", "DIR/gfsplit.meta" (malloc'd) */
char *gfsp_part_path(const char *dir, int rank);
char *gfsp_loc_path(const char *dir, int node);
char *gfsp_marker_path(const char *dir);
/* 1 if directory dir has a marker: it is a (committed) split file */
int gfsp_has_marker(const char *dir);

/*
 * A layout of the parts in `dir` as the records say, none of it read from
 * the directory: the run-mode writer's view of a file still being written
 * (splitfile.c).  The records move into the layout (recs[] is left zeroed);
 * part sizes are the records'; the logical size is `size`.
 */
int gfsp_layout_from_records(const char *dir, int nprocs,
			    struct gfsp_locrec *recs, uint64_t size,
			    struct gfsp_layout **out, struct gfsp_error *err);

/* gfsp_layout_pread, with what no part holds filled by hole() (NULL:
 * zeros) instead of zeros. */
int gfsp_layout_pread_holes(struct gfsp_layout *l, void *buf, uint64_t len,
			    uint64_t goff, uint64_t *got,
			    int (*hole)(void *ctx, void *dst, uint64_t goff,
					uint64_t len, struct gfsp_error *err),
			    void *ctx, struct gfsp_error *err);

/*
 * The version of split file `dir` committed now: an identity that changes
 * whenever the split file is replaced or committed again (the key of its
 * marker file, which every commit writes anew), and, if m is non-NULL,
 * the marker itself.  GFSP_ENOTSPLIT if dir has no marker.
 */
int gfsp_split_version(const char *dir, uint64_t *version,
		      struct gfsp_marker *m, struct gfsp_error *err);

/*
 * Open split file `path` as one version for readers in several threads:
 * the layout is loaded and checked as by gfsp_layout_open, then every part
 * is opened and held until gfsp_layout_close, so that a split file
 * replaced or committed again later does not mix into what this layout
 * reads (it keeps reading the version it loaded, whose parts it holds
 * open).  OUT *version: that version (gfsp_split_version); a split file
 * that changed while it was loaded is loaded again, and after three tries
 * the open fails with GFSP_ESTALE.  gfsp_layout_pread, _map and _seek of
 * a held layout may run in several threads at once.
 */
int gfsp_layout_open_held(const char *path, struct gfsp_layout **out,
			 uint64_t *version, struct gfsp_error *err);

/*
 * lseek's SEEK_DATA (data = 1) or SEEK_HOLE (data = 0) in the logical
 * file: the first offset at or after off that is data (some part holds
 * it) or a hole (none does; the end of the file counts as one).  OUT
 * *found: 1 and *at, or 0 when there is none (lseek's ENXIO).  A part's
 * own holes are asked of the part the layout holds (gfsp_layout_part).
 */
int gfsp_layout_seek(struct gfsp_layout *l, uint64_t off, int data,
		    uint64_t *at, int *found, struct gfsp_error *err);

/*
 * The space the parts hold (their allocated bytes, where the store tells
 * them; else their sizes): less than their sizes summed when they have
 * holes (pcp-split of a sparse source).  A stat of each part.
 */
uint64_t gfsp_layout_allocated(const struct gfsp_layout *l);
/* The same of the parts part.0 .. part.(nprocs-1) of split directory dir,
 * without opening its layout (gfsplit-mount's st_blocks) */
uint64_t gfsp_parts_allocated(const char *dir, int nprocs);
/* Do the parts hold holes (gfsp_layout_allocated < their sizes)? */
int gfsp_layout_sparse(const struct gfsp_layout *l);

/* Open part `rank` for reading (cached in l->parts). */
int gfsp_layout_part(struct gfsp_layout *l, int rank, struct gfsp_file **f,
		    struct gfsp_error *err);

/*
 * Where part r is now: the storage nodes that hold it, asked of its
 * store (Gfarm: its replicas' hosts, which gfrep or a fallback may have
 * moved since it was written); where the store keeps files on no node of
 * its own (POSIX), or holds no copy (an empty part), the node its writer
 * recorded (l->host[r]).  OUT *hosts: free with gfsp_strv_free.
 */
int gfsp_layout_part_where(const struct gfsp_layout *l, int r, char ***hosts,
			  size_t *n, struct gfsp_error *err);

/*
 * The runs of rank r (the implicit v1 run if the record has none) and the
 * view run `i` refers to (NULL: dense, every byte).
 */
const struct gfsp_run *gfsp_layout_runs(const struct gfsp_layout *l, int r,
				      uint64_t *n);
const struct gfsp_view *gfsp_layout_run_view(const struct gfsp_layout *l,
					   int r, const struct gfsp_run *run);
/* Bytes of the part a run holds: its view's bytes in [begin, end). */
uint64_t gfsp_run_bytes(const struct gfsp_view *v, const struct gfsp_run *run);

/* Verify each part's checksum before returning bytes from it (on: the
 * first read from a part reads it whole once); off: trust the parts. */
void gfsp_layout_set_verify(struct gfsp_layout *l, int on);

/*
 * Check each part of held layout l (gfsp_layout_open_held) as it is read
 * through, at no cost of I/O: the bytes of part r that reads return, in
 * the part's order from its first byte, are hashed as they pass; when they
 * reach its end the sum is compared with the recorded one, and a mismatch
 * fails that read (GFSP_ECHECKSUM naming the part) and every later one of
 * the part.  A read that starts past where the hash has got to, by at
 * most READCHECK_GAP bytes (reads done out of order by several threads),
 * reads the gap itself to hash it; one farther away gives up the part
 * (it is not checked: a reader jumping about reads it only in pieces).
 */
int gfsp_layout_set_readcheck(struct gfsp_layout *l, struct gfsp_error *err);
/* Parts whose read-through check is still going on, or failed (0: none,
 * or off: reads may bypass gfsp_layout_pread). */
int gfsp_layout_readcheck_pending(const struct gfsp_layout *l);
/* Free what gfsp_layout_set_readcheck allocated (gfsp_layout_close). */
void gfsp_layout_readcheck_free(struct gfsp_layout *l);

/* ---------------- between the map (layout_map.c), the opener (layout.c)
 * and the checker (layout_check.c): the map's pieces and the checks both
 * make */

#define COVER_WINDOW	((uint64_t)64 << 20)	/* logical bytes per step */
#define COVER_MAXPIECES	((size_t)1 << 20)	/* pieces per step, at most */
#define CHECK_BUF	((size_t)4 << 20)

/* A piece of one run inside the mapped range. */
struct piece {
	uint64_t goff, len;
	uint64_t loff;		/* in the part */
	/* lower wins: later epoch (ep = UINT64_MAX - epoch), then lower
	 * rank, then later run (prio = rank << 32 | UINT32_MAX - run) */
	uint64_t ep, prio;
	int32_t part;
};

struct pieces {
	struct piece *v;
	size_t n, cap;
	size_t max;		/* stop collecting past this many */
	/* the run being collected */
	int32_t part;
	uint64_t ep, prio;
	uint64_t vbase;		/* view-local offset of the run's begin */
	uint64_t loff;		/* part offset of the run's begin */
};

#define PIECES_FULL	(-1)	/* callback return: max reached */

/* x wins over y where both hold a byte */
int gfsp_piece_wins(const struct piece *x, const struct piece *y);
/* All runs' pieces inside [a, b), sorted by (goff, priority); PIECES_FULL
 * when p->max is reached. */
int gfsp_layout_collect(const struct gfsp_layout *l, uint64_t a, uint64_t b,
			struct pieces *p, struct gfsp_error *err);
/* part.<r> is a regular file (a link is not followed) of its recorded
 * size; in a held layout, the part it holds has its recorded size. */
int gfsp_layout_check_part_file(const struct gfsp_layout *l, int r,
				struct gfsp_error *err);
int gfsp_layout_check_held_part(const struct gfsp_layout *l, int r,
				struct gfsp_error *err);
/* Every byte of part r has a place in the logical file, and every run's
 * bytes are in the part. */
int gfsp_layout_part_fits(const struct gfsp_layout *l, int r,
			  struct gfsp_error *err);

/* Part r has its recorded size and checksum (one sequential read). */
int gfsp_layout_verify_part(struct gfsp_layout *l, int r,
			   struct gfsp_error *err);

/* Coverage of [0, logical size) by the parts' data. */
struct gfsp_coverage {
	uint64_t data_bytes;	/* bytes backed by some part */
	uint64_t hole_bytes;	/* bytes no part holds (read as zeros) */
	uint64_t holes;		/* number of hole runs */
	uint64_t overlap_bytes;	/* bytes claimed by more than one run */
	uint64_t first_hole;	/* offset of the first hole, if any */
};
int gfsp_layout_coverage(const struct gfsp_layout *l, struct gfsp_coverage *c,
			struct gfsp_error *err);

/*
 * Full check: every part exists with its recorded size and checksum, views
 * are valid and disjoint, every recorded part byte lies below the logical
 * size; where runs of two ranks overlap in one epoch, they hold the same
 * bytes.  Calls report(ctx, msg) for each problem found and returns
 * GFSP_ECORRUPT / GFSP_ECHECKSUM if there was any (0 if clean); progress, if
 * non-NULL, is told the bytes hashed so far.
 */
int gfsp_layout_check(struct gfsp_layout *l,
		     void (*report)(void *ctx, const char *msg), void *ctx,
		     void (*progress)(void *ctx, uint64_t bytes),
		     struct gfsp_error *err);

/* ------------------------------------------- stat-layout (statinfo.c) */

struct gfsp_statinfo_opts {
	int check;		/* verify every checksum and invariant */
	int map;		/* locate map_offset */
	uint64_t map_offset;
};

/*
 * Describe split file `path` as one JSON object (no MPI): format, logical
 * size, writers, nodes, per-rank views and parts, coverage, and the --map /
 * --check results when asked (see man/stat-layout.1).  Returns 0, or
 * GFSP_ECORRUPT / GFSP_ECHECKSUM when the check found problems (*out is then
 * filled all the same), or another code when the split file cannot be read
 * (*out NULL).  OUT *out: caller puts it.
 */
int gfsp_statinfo(const char *path, const struct gfsp_statinfo_opts *o,
		 json_object **out, struct gfsp_error *err);
/* The same of a layout open already (named `path` in the object and the
 * messages): what gfsplit-mount shows of the version a handle holds. */
int gfsp_statinfo_layout(struct gfsp_layout *l, const char *path,
			const struct gfsp_statinfo_opts *o, json_object **out,
			struct gfsp_error *err);

/* The human form of a gfsp_statinfo() object (malloc'd, caller frees);
 * map_only: the answer to --map alone. */
char *gfsp_statinfo_text(json_object *info, int map_only);
/* stat-layout --json: the common members of every command's document
 * (gfsp_json_doc: src is path, dest null, bytes what --check read or
 * null), then info's; ranks the MPI world size, seconds the time taken.
 * map_only: of info, only path, logical_size, map and check (--map
 * answers just that).  NULL: out of memory. */
json_object *gfsp_statinfo_doc(json_object *info, const char *path,
			       int ranks, double seconds, int map_only);

#endif /* GFSP_LAYOUT_IMPL_H */
