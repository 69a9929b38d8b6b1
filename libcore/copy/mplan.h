/*
 * mplan.h - the merge plan (copy wing, mplan.c): which rank of a merge
 * writes which bytes of the output, so that every part is read on the
 * node that holds it.  Included by libcore/copy/ only.
 *
 * The output is cut into stripes; the bytes of a stripe are grouped by
 * where their parts are, and each group of a stripe is one piece, dealt
 * to one rank:
 *
 *   stripe k:   [ p0 | p1 |hole| p6 | p2 ]      parts p0 p1 on node A,
 *   pieces:     (k, A)  = p0 + p1 bytes         p2 on node B, p6 on a
 *               (k, B)  = p2 bytes              node where no rank runs
 *               (k, p6) = p6 bytes
 *
 * A piece whose parts are on a node with ranks goes to the least loaded
 * of that node's ranks; a part on no such node is a piece of its own, to
 * the least loaded rank of all (its bytes have to move anyway).  Load is the
 * bytes dealt so far; ties go to the lowest rank, so one node holding
 * every part with stripes of equal size deals them round-robin.  Every
 * rank deals every stripe the same way, in order, and keeps only the
 * stripe at hand: memory is the per-part and per-rank tables, whatever
 * the size of the file.
 *
 * A group covers, for each of its parts, the whole range of the part that
 * the stripe maps to (contiguous in a file without runs), so one rank
 * reads each such range: merge.c's verification in passing relies on it.
 * A part on no node with ranks sticks to its rank while it has a
 * checksum segment open (mplan.c), so that the rank that starts a
 * segment of such a part also reads the rest of it, once.
 */
#ifndef GFSP_MPLAN_H
#define GFSP_MPLAN_H

#include <stdint.h>
#include "gfsplit.h"
#include "layout_impl.h"

struct gfsp_mplan;

/* One stripe as dealt (valid until the next deal). */
struct gfsp_mplan_stripe {
	uint64_t k;
	uint64_t begin, end;	/* its bytes of the output */
	uint64_t hole_bytes;	/* of them, bytes no part holds */
	int ngroups;
	const uint64_t *bytes;	/* [ngroups] the group's bytes here */
	const uint64_t *parts;	/* [ngroups] parts of the group here */
	const int *owner;	/* [ngroups] its rank, -1: no bytes here */
	/* the rank that counts the holes (its progress): the first
	 * piece's, or k mod M in a stripe of holes only */
	int keeper;
};

/*
 * Collective over comm: where every part is (gfsp_layout_part_where,
 * shared out over the ranks), matched against the nodes of comm's ranks
 * (gfsp_node_name; gfsp_same_host).  A part its store cannot locate counts
 * as on the node its writer recorded.  Stripes of `stripe` bytes up to
 * the end of the data, mapped `chunk` bytes at a time (memory).
 */
int gfsp_mplan_create(MPI_Comm comm, struct gfsp_layout *l, uint64_t stripe,
		     uint64_t chunk, struct gfsp_mplan **out,
		     struct gfsp_error *err);
void gfsp_mplan_free(struct gfsp_mplan *p);

/* Deal the next stripe (no MPI: the merge's helper thread may call it).
 * OUT *more: 0 when there is none left (past the last byte any part holds),
 * else *s. */
int gfsp_mplan_deal(struct gfsp_mplan *p, struct gfsp_mplan_stripe *s,
		   int *more, struct gfsp_error *err);
/* Deal from the first stripe again, every load back at zero. */
void gfsp_mplan_rewind(struct gfsp_mplan *p);

/* Part r's group (an index into the stripe's arrays). */
int gfsp_mplan_group(const struct gfsp_mplan *p, int r);
/* Does part r's group have ranks on its node (is it read locally)? */
int gfsp_mplan_local(const struct gfsp_mplan *p, int r);
/*
 * The rank that checks part r's checksum (reads it whole, where it is read
 * a second time): one of the ranks on its node, parts dealt by size to the
 * least loaded; a part on no node with ranks, the least loaded of all.
 */
int gfsp_mplan_checker(const struct gfsp_mplan *p, int r);

#endif /* GFSP_MPLAN_H */
