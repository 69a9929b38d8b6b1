/*
 * gfsplit.h - public interface of libgfsplit, the core library of the gfsplit
 * suite (split-write of N-1 shared files into N-N part files, and back).
 *
 * Everything here is safe to call from applications.  Internals live in
 * the wings' headers (core.h, store.h, splitfile.h, the *_impl.h ones...),
 * which are not installed.  Installed for applications (tests/cmd/build.sh
 * compiles one); in the tree included by libcore/ and preload/.
 *
 * Conventions
 *   - Functions return 0 on success or a GFSP_E* code; when they fail and the
 *     caller passed a struct gfsp_error, it holds a message naming the subject
 *     and the cause ("cannot open 'x.split/part.3': No space left on device").
 *   - The library never exits, aborts or prints on its own.
 *   - Offsets and sizes are bytes, uint64_t.
 */
#ifndef GFSPLIT_H
#define GFSPLIT_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libcore is compiled with hidden visibility: what this header declares is
 * what libgfsplit.so.0 exports (libcore/libgfsplit.map lists the same) */
#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility push(default)
#endif

#define GFSPLIT_VERSION "0.1.0"

/* ------------------------------------------------------------------ errors */

enum gfsp_errcode {
	GFSP_OK = 0,
	GFSP_EINVAL,	/* bad argument or usage */
	GFSP_ENOENT,	/* no such file or directory */
	GFSP_EEXIST,	/* destination exists */
	GFSP_EACCES,	/* permission denied */
	GFSP_ENOSPC,	/* no space left / quota */
	GFSP_EIO,	/* I/O error, including short transfers that cannot go on */
	GFSP_ENOMEM,	/* out of memory */
	GFSP_ENOTSUP,	/* operation not supported by this backend or build */
	GFSP_ECORRUPT,	/* metadata fails its checksum or an invariant */
	GFSP_EVERSION,	/* format version this build does not read */
	GFSP_ECHECKSUM,	/* part data does not match its recorded checksum */
	GFSP_ENOTSPLIT,	/* path is not a (complete) split file */
	GFSP_EMPI,	/* an MPI call failed */
	GFSP_EPEER,	/* another rank failed; this one did not */
	GFSP_ENET,	/* file server unreachable or connection lost */
	GFSP_ECANCELED,	/* interrupted by a signal or an explicit cancel */
	GFSP_ESTALE,	/* the file changed: what was opened is gone */
	GFSP_NERRCODES
};

#define GFSP_ERRMSG_MAX 1024

/*
 * The one error type.  `code` is a gfsp_errcode; `sys` keeps the original
 * errno (Gfarm: the errno its error stands for; MPI: the MPI error code)
 * when there was one; `msg` is the full message.
 * First error wins: gfsp_error_set() on an error that is already set keeps
 * the first message.
 */
struct gfsp_error {
	int code;
	int sys;
	char msg[GFSP_ERRMSG_MAX];
};

/* Short text of a code: "no such file or directory", "checksum mismatch". */
const char *gfsp_strerror(int code);

/* ------------------------------------------------------------------- views */

/*
 * A flattened MPI file view in bytes: the location-file record of Kimura
 * and Tatebe's MPI-IO/Gfarm (its Table 1) plus a bound.
 *
 *   global file:  |disp|<------ extent ------>|<------ extent ------>| ...
 *   one tile:          [off[0], +len[0])  [off[1], +len[1]) ...
 *
 * Tile k starts at disp + k*extent; blocks are sorted, disjoint, non-empty
 * and lie inside [0, extent).  Bytes at or past `end` are not in the view
 * (GFSP_VIEW_UNBOUNDED: the view tiles forever, as in MPI).  `size` is the
 * sum of len[] (the filetype size).  The part file of a rank holds the view's
 * bytes in increasing global order, so a contiguous global range always maps
 * to a contiguous range of the part.
 */
#define GFSP_VIEW_UNBOUNDED UINT64_MAX

struct gfsp_view_index;

struct gfsp_view {
	uint64_t disp;
	uint64_t extent;
	uint64_t size;
	uint64_t end;
	uint64_t nblocks;	/* arr_len */
	uint64_t *off;		/* indices[], nblocks entries */
	uint64_t *len;		/* blocklens[], nblocks entries */
	uint64_t *pre;		/* derived: pre[i] = len[0] + ... + len[i-1] */
	/* derived: search index over off[] and pre[] (view.c), never stored;
	 * built and freed with the arrays, NULL when nblocks == 0 */
	struct gfsp_view_index *index;
};

/*
 * Build a view from an MPI file view (disp, etype, filetype).  The filetype
 * may be any derived datatype (contiguous, vector, hvector, indexed,
 * hindexed, indexed_block, hindexed_block, struct, subarray, darray,
 * resized, dup, nested).  OUT v is initialised; free with gfsp_view_free().
 */
int gfsp_view_from_mpi(MPI_Offset disp, MPI_Datatype etype,
		      MPI_Datatype filetype, struct gfsp_view *v,
		      struct gfsp_error *err);

/*
 * The same, and OUT *shape: GFSP_TYPEMAP_* bits of the filetype's typemap
 * in its own order, found on the way, which MPI-IO refuses in a file view
 * (MPI 4.1 section 14.3: displacements monotonically nondecreasing, none
 * negative; overlapping blocks only in views that are never written).
 * Set even when the view is refused for them.
 */
#define GFSP_TYPEMAP_DECREASING	1u	/* a block starts before the last */
#define GFSP_TYPEMAP_NEGATIVE	2u	/* a block starts before 0 */
#define GFSP_TYPEMAP_OVERLAP	4u	/* a block starts inside the last */
#define GFSP_TYPEMAP_ONE_TILE	8u	/* tiles interleave: the view is the
					 * first tile alone, bounded there */
int gfsp_view_from_mpi_shape(MPI_Offset disp, MPI_Datatype etype,
			    MPI_Datatype filetype, struct gfsp_view *v,
			    unsigned *shape, struct gfsp_error *err);

/* Build a view from block lists (copied; sorted and merged as needed). */
int gfsp_view_init(struct gfsp_view *v, uint64_t disp, uint64_t extent,
		  uint64_t end, uint64_t nblocks, const uint64_t *off,
		  const uint64_t *len, struct gfsp_error *err);

/* The contiguous layout: rank r of n owns [r*chunk, min((r+1)*chunk, total)). */
int gfsp_view_contiguous(struct gfsp_view *v, int rank, int nprocs,
			uint64_t total, uint64_t chunk, struct gfsp_error *err);

/* The cyclic layout: rank r owns blocks r, r+n, r+2n, ... of `block` bytes,
 * bounded by `total` (GFSP_VIEW_UNBOUNDED for an unbounded view). */
int gfsp_view_cyclic(struct gfsp_view *v, int rank, int nprocs, uint64_t block,
		    uint64_t total, struct gfsp_error *err);

/*
 * A view with fewer blocks than v and the same bytes in [begin, end), when
 * v's tile repeats a shorter pattern: a vector filetype of C blocks, or a
 * subarray whose rows repeat plane after plane, folds to its period.  If
 * the short tile also lines up across v's tile edges, *out equals v
 * everywhere; otherwise only inside the one tile of v that holds [begin,
 * end), and *out is bounded there.  OUT *folded: 1 and *out initialised,
 * or 0 if there is no such view (out untouched).
 */
int gfsp_view_fold(const struct gfsp_view *v, uint64_t begin, uint64_t end,
		  struct gfsp_view *out, int *folded, struct gfsp_error *err);

int gfsp_view_copy(struct gfsp_view *dst, const struct gfsp_view *src,
		  struct gfsp_error *err);
void gfsp_view_free(struct gfsp_view *v);

/*
 * Local offset of global offset g: the number of view bytes in [0, g).
 * Monotone in g, so [a, b) maps to the part range [local(a), local(b)).
 * O(log nblocks).
 */
uint64_t gfsp_view_local(const struct gfsp_view *v, uint64_t g);

/*
 * Look up global offset g.  Returns 1 if g is in the view: *loff is its local
 * offset and *count the number of bytes from g that stay contiguous in both
 * the file and the part.  Returns 0 if not: *loff is the local offset the
 * next view byte would have and *count the distance to that next view byte
 * (UINT64_MAX if there is none).  O(log nblocks).
 */
int gfsp_view_lookup(const struct gfsp_view *v, uint64_t g, uint64_t *loff,
		    uint64_t *count);

/* Inverse: global offset of local offset l (l < total view bytes). */
uint64_t gfsp_view_global(const struct gfsp_view *v, uint64_t l);

/* Number of view bytes in [0, g) capped at the view's end: local(min(g,end)). */
uint64_t gfsp_view_bytes_below(const struct gfsp_view *v, uint64_t g);

/*
 * Resolve overlaps between the views of ranks 0..n-1 in place: where views
 * overlap, the lowest rank keeps the bytes and the others drop them (the
 * rule of Kimura and Tatebe's MPI-IO/Gfarm, its section 5.3.1).  Fails with GFSP_ENOTSUP, naming the two ranks, when an
 * overlap cannot be expressed as a single periodic view.
 */
int gfsp_views_resolve(struct gfsp_view *views, int n, struct gfsp_error *err);

/* Exchange views over comm (MPI_Allgather) and resolve them.  Collective.
 * OUT all: comm-size views, caller frees each and the array. */
int gfsp_views_allgather(MPI_Comm comm, const struct gfsp_view *mine,
			struct gfsp_view **all, struct gfsp_error *err);

/* -------------------------------------------------------------- layouts */

/* A split file opened for reading: all location files loaded. */
struct gfsp_layout;

/* One piece of a mapped request. part < 0 is a hole (reads as zeros). */
struct gfsp_extent {
	uint64_t goff;		/* offset in the logical file */
	uint64_t len;
	int32_t part;		/* writer rank whose part holds it, or -1 */
	uint64_t loff;		/* offset inside that part */
};

int gfsp_layout_open(const char *path, struct gfsp_layout **out,
		    struct gfsp_error *err);
void gfsp_layout_close(struct gfsp_layout *l);

uint64_t gfsp_layout_size(const struct gfsp_layout *l);	/* logical size */
int gfsp_layout_nprocs(const struct gfsp_layout *l);
const struct gfsp_view *gfsp_layout_view(const struct gfsp_layout *l, int rank);

/*
 * Map [goff, goff+len) to extents in increasing goff order, holes included
 * (parts shorter than their view also yield holes).  OUT *ext is allocated
 * (caller frees), *next its length.
 */
int gfsp_layout_map(const struct gfsp_layout *l, uint64_t goff, uint64_t len,
		   struct gfsp_extent **ext, size_t *next,
		   struct gfsp_error *err);

/* Read `len` bytes of the logical file at goff (holes as zeros); returns
 * bytes read in *got (short only at end of file). */
int gfsp_layout_pread(struct gfsp_layout *l, void *buf, uint64_t len,
		     uint64_t goff, uint64_t *got, struct gfsp_error *err);

#if defined(__GNUC__) && __GNUC__ >= 4
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* GFSPLIT_H */
