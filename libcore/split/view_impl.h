/*
 * view_impl.h - internals of flattened views shared inside libcore/ (the
 * reader and the writer walk views piece by piece).  Included by
 * libcore/split/, preload/ and tests/; not installed.
 *
 * A view (struct gfsp_view, gfsplit.h) is the set of global bytes
 *
 *   { g : disp <= g < end, (g - disp) mod extent lies in some block }
 *
 * and the part file of its rank holds those bytes densely, in increasing g:
 *
 *   global   |disp|##..###.|##..###.|##..    (extent 8, blocks [0,2) [4,7))
 *   part          |#####    #####    ##
 *                  local offset = view bytes below g
 *
 * Invariants kept by gfsp_view_init() (every view is built by it or copied
 * from one that was): blocks sorted, disjoint, non-adjacent (merged),
 * non-empty, inside [0, extent); extent > 0 when nblocks > 0; disp <= end;
 * pre[] holds the prefix sums of len[]; size = sum of len[]; index is the
 * search index (view.c) built from extent, off[], pre[] and size, so those
 * are never changed in place (disp and end may be).  An empty view has
 * nblocks == 0 and NULL arrays and index.
 */
#ifndef GFSP_VIEW_IMPL_H
#define GFSP_VIEW_IMPL_H

#include <stdint.h>
#include "gfsplit.h"

/*
 * Enumerate the pieces of view v inside global [a, b) whose local offsets
 * are below lmax (the size of the part actually written: pass UINT64_MAX for
 * no limit).  cb(ctx, goff, loff, len) is called once per maximal piece (a
 * run of view bytes contiguous in the file, hence in the part; runs that
 * cross a tile boundary are one piece), in increasing goff; the last piece
 * is cut where the local offset reaches lmax.  Stops at the first nonzero
 * return of cb and returns it; 0 otherwise.  O(log nblocks + pieces).
 */
int gfsp_view_extents(const struct gfsp_view *v, uint64_t a, uint64_t b,
		     uint64_t lmax,
		     int (*cb)(void *ctx, uint64_t goff, uint64_t loff,
			       uint64_t len),
		     void *ctx);

/*
 * Total bytes of the view: local(end).  UINT64_MAX for an unbounded view
 * with at least one block (it has no total).
 */
uint64_t gfsp_view_total(const struct gfsp_view *v);

/* Set v to the empty view (no blocks) at disp, keeping extent for show. */
void gfsp_view_empty(struct gfsp_view *v, uint64_t disp, uint64_t extent);

/*
 * count elements of memory datatype t are one block of bytes in typemap
 * order, starting at byte *first of the buffer (t's true lower bound), so
 * the buffer can be used as it is instead of packed (flatten.c).  0 for a
 * type with gaps, elements apart, or blocks out of order.
 */
int gfsp_type_dense(MPI_Datatype t, MPI_Count count, MPI_Count *first);

/*
 * Copy the first n bytes of count elements of memory datatype t at buf
 * (MPI_BOTTOM allowed: its displacements are addresses) to dense (pack)
 * or from it (!pack), in typemap order, as MPI_Pack and MPI_Unpack do,
 * but for any n up to the elements' size: a read short of the end fills
 * only what it read.
 */
int gfsp_type_copy(MPI_Datatype t, MPI_Count count, void *buf, void *dense,
		   uint64_t n, int pack, struct gfsp_error *err);

/* Most blocks one overlap resolution may expand a pair of views to. */
#define GFSP_RESOLVE_MAX_BLOCKS	(4u << 20)

#endif /* GFSP_VIEW_IMPL_H */
