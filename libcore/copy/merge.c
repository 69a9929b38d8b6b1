/*
 * merge.c - the gfsplit-merge engine: reassemble a split file into one
 * ordinary file with any number of ranks M.
 *
 * Data shipping (Prost et al., "MPI-IO/GPFS, an optimized implementation
 * of MPI-IO on top of GPFS"), where the parts are: the output is cut into
 * stripes of stripe_size bytes, and the bytes of a stripe are dealt by the
 * node that holds their parts (mplan.h): to a rank on that node, the least
 * loaded, so a part is read where it is; the bytes of parts on no node of
 * the merge's go to the least loaded rank of all.  A rank maps each stripe
 * it has a piece of, buffer by buffer, to extents of the parts, reads
 * those of its pieces (helper thread) and writes them at their global
 * offsets (this thread).  Holes are skipped, so they stay holes in DST.
 *
 *   DST:    | s0 | s1 | s2 | ...        p0 p1 on node A (ranks 0, 2),
 *   s1:     [p2 ][p0    ][hole][p1 ]    p2 on node B (rank 1):
 *                                       s1's p0 + p1 -> rank 0 or 2,
 *                                       s1's p2      -> rank 1
 *
 * Verification without a second pass.  Part checksums are roots over fixed
 * segments of seg_size bytes (splitfile.h).  A stripe maps to a contiguous
 * local range [x, y) of every part it touches, these ranges partition each
 * part, and one rank reads each (all of a part's range of a stripe is in
 * one piece).  The rank reading [x, y) of part p hashes every segment that
 * STARTS in [x, y); the last of them may run past y, and its missing bytes
 * [y, segment end) are read from the part (not written):
 *
 *   part p:   |  seg 3  |  seg 4  |  seg 5  |
 *                  x[=========stripe========)y
 *                       ^ hashed here ^ hashed here, tail read extra
 *
 * so every segment is hashed exactly once, by one rank, in one piece.  At the
 * end each (part, segment, hash) triple goes to the part's checker (a rank
 * on its node, gfsp_mplan_checker), which checks that every segment is
 * there once and compares the root with part_hash.  Format v2 runs break
 * the premise (a part is a log in write order, and overwritten bytes are
 * never read): such parts are hashed whole, after the copy, by their
 * checkers, on their nodes.
 *
 * Commit: DST is written under a temporary sibling name (dst.c) and
 * renamed into place only after every rank succeeded and every checksum
 * matched; on failure the temporary file is removed and DST is untouched.
 */
#include <inttypes.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "core.h"
#include "dst.h"
#include "copy.h"
#include "layout_impl.h"
#include "mplan.h"
#include "pipe.h"
#include "splitfile.h"
#include "store.h"

#define TAIL_BUF (256u << 10)	/* scratch for the bytes past a stripe */
/*
 * Verifying while copying keeps a (part, segment, hash) triple per segment
 * until the end, and the exchange holds it twice more: past this many
 * bytes of triples on one rank (a small segment size in the marker, or
 * few ranks for many segments), the parts are hashed whole in a second
 * read instead, in constant memory.
 */
#define SEGTAB_MAX ((uint64_t)4 << 20)

struct seghash {
	uint64_t part;
	uint64_t seg;
	uint64_t hash;
};

/*
 * A part touched by the current stripe and its segment being hashed.  A
 * segment arrives in pieces (buffers, and the tail past the stripe), so it
 * is hashed with the streaming XXH3, which gives the same value as the
 * one-shot gfsp_seg_hash() (XXH3_64bits) the writer used.
 */
struct open_part {
	int part;
	int open;		/* a segment started here is in progress */
	uint64_t seg;		/* its index */
	uint64_t segend;	/* its end (local offset, <= part size) */
	uint64_t pos;		/* next local offset expected */
	XXH3_state_t *st;
};

/* Extents of a produced chunk, kept until the chunk is consumed.  The pipe
 * has two buffers, so a chunk is identified by its buffer. */
struct chunk_map {
	void *buf;
	struct gfsp_extent *ext;
	size_t n;
};

struct merge_ctx {
	const char *src;
	struct gfsp_layout *l;
	struct gfsp_file *out;
	char *tmp;			/* its name (for --timeout's undo) */
	uint64_t tmp_ino;		/* rank 0's, as made (0: unknown) */
	int rank, nranks;
	uint64_t size, stripe;
	struct gfsp_mplan *plan;
	const int *owner;		/* the current stripe's pieces' ranks */
	uint64_t k;			/* current stripe */
	uint64_t g;			/* next global offset to produce */
	uint64_t stripe_end;		/* of the current stripe */
	uint64_t credit;		/* holes to count as done (progress) */

	int verify;
	int inpass;		/* verify while copying (not with runs) */
	uint64_t seg_size;
	int *slot_of;			/* [nprocs] index in op[] or -1 */
	struct open_part *op;
	int nop;
	size_t capop;		/* op[nop..capop) zeroed or kept states */
	struct seghash *sh;		/* segment hashes computed here */
	size_t nsh, capsh;
	unsigned char *tail;		/* TAIL_BUF scratch */

	struct chunk_map map[2];
	struct gfsp_progress *prog;
	uint64_t done, data_bytes;
	uint64_t away;		/* of them, read from another node's parts */
	int sparse;		/* the parts hold holes: so does DST */
	uint64_t holes;		/* of data_bytes, left holes in DST */
};

/* ------------------------------------------------- segment hashing */

static int
add_seghash(struct merge_ctx *x, uint64_t part, uint64_t seg, uint64_t hash,
	    struct gfsp_error *err)
{
	if (gfsp_grow(&x->sh, &x->capsh, x->nsh + 1, sizeof(*x->sh)) != 0)
		return gfsp_error_set(err, GFSP_ENOMEM,
		    "out of memory for segment checksums");
	x->sh[x->nsh++] = (struct seghash){ part, seg, hash };
	return 0;
}

static int
part_slot(struct merge_ctx *x, int part, uint64_t loff,
	  struct open_part **out, struct gfsp_error *err)
{
	struct open_part *p;
	size_t old = x->capop;

	if (x->slot_of[part] >= 0) {
		*out = &x->op[x->slot_of[part]];
		return 0;
	}
	if (gfsp_grow(&x->op, &x->capop, (size_t)x->nop + 1,
	    sizeof(*x->op)) != 0)
		return gfsp_error_set(err, GFSP_ENOMEM,
		    "out of memory for checksum states");
	memset(x->op + old, 0, (x->capop - old) * sizeof(*x->op));
	p = &x->op[x->nop];
	if (p->st == NULL && (p->st = XXH3_createState()) == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM,
				     "out of memory for checksum states");
	p->part = part;
	p->open = 0;
	p->pos = loff;
	x->slot_of[part] = x->nop++;
	*out = p;
	return 0;
}

/*
 * Feed bytes [loff, loff+len) of `part`, read for the current stripe.
 * Segments starting in this range are hashed; bytes of a segment that
 * started before the stripe belong to another stripe's reader.
 */
static int
hash_feed(struct merge_ctx *x, int part, uint64_t loff, const void *buf,
	  uint64_t len, struct gfsp_error *err)
{
	const unsigned char *p = buf;
	uint64_t psize = x->l->part_size[part], seg = x->seg_size;
	uint64_t q = loff, end = loff + len, n;
	struct open_part *o = NULL;
	int rc;

	rc = part_slot(x, part, loff, &o, err);
	if (rc)
		return rc;
	if (o->pos != loff)
		return gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s/part.%d: stripe maps to a non-contiguous part range",
		    x->src, part);
	while (q < end) {
		if (!o->open) {
			if (q % seg != 0) {
				q = GFSP_MIN(end, (q / seg + 1) * seg);
				continue;
			}
			o->open = 1;
			o->seg = q / seg;
			o->segend = GFSP_MIN(q + seg, psize);
			XXH3_64bits_reset(o->st);
		}
		n = GFSP_MIN(end, o->segend) - q;
		XXH3_64bits_update(o->st, p + (q - loff), (size_t)n);
		q += n;
		if (q == o->segend) {
			o->open = 0;
			rc = add_seghash(x, (uint64_t)part, o->seg,
					 XXH3_64bits_digest(o->st), err);
			if (rc)
				return rc;
		}
	}
	o->pos = end;
	return 0;
}

static int
short_part(struct merge_ctx *x, int part, uint64_t off,
	   struct gfsp_error *err)
{
	return gfsp_error_set(err, GFSP_ECORRUPT,
	    "%s/part.%d: part is shorter than recorded (%" PRIu64
	    " bytes, no data at offset %" PRIu64 ")", x->src, part,
	    x->l->part_size[part], off);
}

/*
 * End of a stripe: complete the segments that run past it, reading their
 * rest from the part; but a part on no node of the merge's keeps its
 * segment open (`all` 0): the plan gives this rank that part's next
 * pieces until it is complete (mplan.h), and its rest would cross the
 * network twice.  `all`: the end of the copy, nothing is kept.
 */
static int
hash_stripe_done(struct merge_ctx *x, int all, struct gfsp_error *err)
{
	struct gfsp_file *f;
	struct open_part *o, t;
	uint64_t n;
	size_t got;
	int i, j = 0, rc = 0;

	for (i = 0; i < x->nop && rc == 0; i++) {
		o = &x->op[i];
		if (o->open && !all && !gfsp_mplan_local(x->plan, o->part)) {
			/* kept: to the front, in slot j */
			t = x->op[j];
			x->op[j] = *o;
			*o = t;
			x->slot_of[x->op[j].part] = j;
			j++;
			continue;
		}
		if (!o->open)
			continue;
		rc = gfsp_layout_part(x->l, o->part, &f, err);
		while (rc == 0 && o->pos < o->segend) {
			n = GFSP_MIN(o->segend - o->pos, (uint64_t)TAIL_BUF);
			rc = gfsp_pread(f, x->tail, (size_t)n, o->pos, &got,
				       err);
			if (rc == 0 && got < n)
				rc = short_part(x, o->part, o->pos + got, err);
			if (rc == 0) {
				XXH3_64bits_update(o->st, x->tail, (size_t)n);
				o->pos += n;
			}
		}
		if (rc == 0) {
			o->open = 0;
			rc = add_seghash(x, (uint64_t)o->part, o->seg,
					 XXH3_64bits_digest(o->st), err);
		}
	}
	for (i = j; i < x->nop; i++)
		x->slot_of[x->op[i].part] = -1;
	x->nop = j;
	return rc;
}

/* ---------------------------------------------------------- pipeline */

static struct chunk_map *
chunk_map_for(struct merge_ctx *x, void *buf)
{
	int i;

	for (i = 0; i < 2; i++)
		if (x->map[i].buf == buf)
			return &x->map[i];
	for (i = 0; i < 2; i++)
		if (x->map[i].buf == NULL) {
			x->map[i].buf = buf;
			return &x->map[i];
		}
	return NULL;
}

/* A chunk of one part's extent, mapped where the file systems allow it
 * (c->data left at the buffer where they do not: it is read). */
static int
map_extent(struct merge_ctx *x, struct gfsp_chunk *c,
	   const struct gfsp_extent *e, struct gfsp_error *err)
{
	struct gfsp_file *f;
	int fd, rc;

	rc = gfsp_layout_part(x->l, e->part, &f, err);
	if (rc)
		return rc;
	fd = gfsp_mappable(f, gfsp_file_path(x->out));
	if (fd < 0)
		return 0;
	/* a part shorter than its records (or no memory to map) is read
	 * instead: that path says what is wrong with it */
	if (gfsp_rmap_open(fd, e->loff, (size_t)e->len, gfsp_file_path(f),
			   &c->map, NULL) == 0)
		c->data = c->map.data;
	return 0;
}

/*
 * The next stripe this rank has a piece of: deal stripes (every rank deals
 * every one, alike) until one is, or none is left (*done).  Stripes past
 * the last byte any part holds are all hole, and not dealt.
 */
static int
next_stripe(struct merge_ctx *x, int *done, struct gfsp_error *err)
{
	struct gfsp_mplan_stripe s;
	int more, g, rc;

	for (;;) {
		rc = gfsp_mplan_deal(x->plan, &s, &more, err);
		if (rc || !more) {
			*done = !more;
			return rc;
		}
		if (s.keeper == x->rank)
			x->credit += s.hole_bytes;
		for (g = 0; g < s.ngroups && s.owner[g] != x->rank; g++)
			;
		if (g < s.ngroups) {
			x->owner = s.owner;
			x->k = s.k;
			x->g = s.begin;
			x->stripe_end = s.end;
			return 0;
		}
	}
}

static int
merge_produce(void *arg, struct gfsp_chunk *c, int *done,
	      struct gfsp_error *err)
{
	struct merge_ctx *x = arg;
	unsigned char *buf = c->buf;
	struct chunk_map *m;
	struct gfsp_extent *e;
	struct gfsp_file *f;
	uint64_t n, mine = 0;
	size_t i, got;
	int rc;

	if (x->g == x->stripe_end) {
		rc = next_stripe(x, done, err);
		if (rc || *done)
			return rc;
	}
	m = chunk_map_for(x, c->buf);
	if (m == NULL)
		return gfsp_error_set(err, GFSP_EINVAL,
		    "merge: more pipeline buffers than expected");
	free(m->ext);
	m->ext = NULL;
	m->n = 0;

	n = GFSP_MIN((uint64_t)c->cap, x->stripe_end - x->g);
	rc = gfsp_layout_map(x->l, x->g, n, &m->ext, &m->n, err);
	if (rc)
		return rc;
	/* other ranks' pieces are for this one as holes are: not read, not
	 * written */
	for (i = 0; i < m->n; i++) {
		e = &m->ext[i];
		if (e->part < 0)
			continue;
		if (x->owner[gfsp_mplan_group(x->plan, e->part)] != x->rank) {
			e->part = -1;
			continue;
		}
		mine += e->len;
		if (!gfsp_mplan_local(x->plan, e->part))
			x->away += e->len;
	}
	if (m->n == 1 && m->ext[0].part >= 0 && m->ext[0].len == n &&
	    n >= GFSP_MAP_MIN) {
		rc = map_extent(x, c, &m->ext[0], err);
		if (rc)
			return rc;
	}
	/* else, or if that did not map: read the extents */
	for (i = 0; i < m->n && c->data == c->buf; i++) {
		e = &m->ext[i];
		if (e->part < 0)
			continue;
		rc = gfsp_layout_part(x->l, e->part, &f, err);
		if (rc)
			return rc;
		rc = gfsp_pread(f, buf + (e->goff - x->g), (size_t)e->len,
			       e->loff, &got, err);
		if (rc)
			return rc;
		if (got < e->len)
			return short_part(x, e->part, e->loff + got, err);
		if (x->inpass) {
			rc = hash_feed(x, e->part, e->loff,
				       buf + (e->goff - x->g), e->len, err);
			if (rc)
				return rc;
		}
	}
	if (c->data != c->buf && x->inpass) {
		e = &m->ext[0];
		rc = hash_feed(x, e->part, e->loff, c->data, e->len, err);
		if (rc)
			return rc;
	}
	c->len = (size_t)n;
	c->tag[0] = x->g;
	c->tag[1] = mine + x->credit;
	x->credit = 0;
	x->g += n;
	if (x->g == x->stripe_end && x->inpass)
		return hash_stripe_done(x, 0, err);
	return 0;
}

/* Write the data extents, coalescing neighbours; holes are skipped. */
static int
merge_consume(void *arg, const struct gfsp_chunk *c, struct gfsp_error *err)
{
	struct merge_ctx *x = arg;
	const unsigned char *buf = c->data;
	struct chunk_map *m = chunk_map_for(x, c->buf);
	uint64_t g0 = c->tag[0], start, len;
	size_t i, j;
	int rc;

	if (m == NULL)
		return gfsp_error_set(err, GFSP_EINVAL,
		    "merge: chunk without a map");
	for (i = 0; i < m->n; i = j) {
		if (m->ext[i].part < 0) {
			j = i + 1;
			continue;
		}
		start = m->ext[i].goff;
		len = m->ext[i].len;
		for (j = i + 1; j < m->n && m->ext[j].part >= 0; j++)
			len += m->ext[j].len;
		rc = x->sparse ? gfsp_pwrite_sparse(x->out, buf + (start - g0),
						    (size_t)len, start, 1,
						    &x->holes, err)
			       : gfsp_pwrite(x->out, buf + (start - g0),
					     (size_t)len, start, err);
		if (rc)
			return rc;
		x->data_bytes += len;
	}
	x->done += c->tag[1];
	gfsp_progress_update(x->prog, x->done);
	return 0;
}

static const struct gfsp_pipe_ops merge_pipe_ops = {
	.produce = merge_produce,
	.consume = merge_consume,
};

/* ---------------------------------------------------- verification */

static int
cmp_seghash(const void *a, const void *b)
{
	const struct seghash *x = a, *y = b;

	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	if (x->seg != y->seg)
		return x->seg < y->seg ? -1 : 1;
	return 0;
}

/* Check the parts this rank owns from the (part, segment)-sorted triples. */
static int
check_parts(struct merge_ctx *x, struct seghash *t, size_t nt,
	    struct gfsp_error *err)
{
	const struct gfsp_layout *l = x->l;
	uint64_t *h, nseg, s, root;
	size_t i = 0;
	int p;

	for (p = 0; p < l->nprocs; p++) {
		if (gfsp_mplan_checker(x->plan, p) != x->rank)
			continue;
		nseg = l->part_size[p] / x->seg_size +
		       (l->part_size[p] % x->seg_size != 0);
		/* hashes compacted in place: h[s] ends before t[i + s] */
		h = (uint64_t *)&t[i];
		for (s = 0; s < nseg; s++) {
			if (i + s >= nt || t[i + s].part != (uint64_t)p ||
			    t[i + s].seg != s)
				return gfsp_error_set(err, GFSP_ECORRUPT,
				    "%s/part.%d: segment %" PRIu64 " of %"
				    PRIu64 " is not covered by the layout",
				    x->src, p, s, nseg);
			h[s] = t[i + s].hash;
		}
		i += nseg;
		if (i < nt && t[i].part == (uint64_t)p)
			return gfsp_error_set(err, GFSP_ECORRUPT,
			    "%s/part.%d: segment %" PRIu64 " read twice or "
			    "past the part's end", x->src, p, t[i].seg);
		root = gfsp_phash_root(h, nseg);
		if (root != l->part_hash[p])
			return gfsp_error_set(err, GFSP_ECHECKSUM,
			    "%s/part.%d: checksum mismatch (recorded 0x%016"
			    PRIx64 ", computed 0x%016" PRIx64 ")", x->src, p,
			    l->part_hash[p], root);
	}
	if (i < nt)
		return gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s/part.%" PRIu64 ": unexpected segment %" PRIu64,
		    x->src, t[i].part, t[i].seg);
	return 0;
}

/* Collective: ship every triple to its part's checker, then check. */
static int
verify_exchange(MPI_Comm comm, struct merge_ctx *x, struct gfsp_error *err)
{
	MPI_Datatype triple = MPI_DATATYPE_NULL;
	struct seghash *send = NULL, *recv = NULL;
	int *cnt = NULL, *rcnt = NULL, *sdsp = NULL, *rdsp = NULL;
	int m = x->nranks, d, rc = 0;
	size_t i, nrecv = 0;

	cnt = calloc((size_t)m * 4, sizeof(*cnt));
	send = malloc((x->nsh ? x->nsh : 1) * sizeof(*send));
	if (cnt == NULL || send == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM,
				   "out of memory for checksum exchange");
	else if (x->nsh > INT_MAX)
		rc = gfsp_error_set(err, GFSP_EINVAL,
				   "too many checksum segments on one rank");
	if (rc == 0) {
		rcnt = cnt + m;
		sdsp = cnt + 2 * m;
		rdsp = cnt + 3 * m;
		for (i = 0; i < x->nsh; i++)
			cnt[gfsp_mplan_checker(x->plan, (int)x->sh[i].part)]++;
		for (d = 1; d < m; d++)
			sdsp[d] = sdsp[d - 1] + cnt[d - 1];
		/* bucket by destination; rdsp is the fill cursor for now */
		for (i = 0; i < x->nsh; i++) {
			d = gfsp_mplan_checker(x->plan, (int)x->sh[i].part);
			send[sdsp[d] + rdsp[d]++] = x->sh[i];
		}
		free(x->sh);
		x->sh = NULL;
		x->nsh = x->capsh = 0;
		rc = gfsp_mpi_check(MPI_Type_contiguous(3, MPI_UINT64_T,
		    &triple), "MPI_Type_contiguous", err);
	}
	if (rc == 0)
		rc = gfsp_mpi_check(MPI_Type_commit(&triple), "MPI_Type_commit",
				   err);
	rc = gfsp_agree(comm, rc, err);
	if (rc)
		goto out;

	rc = gfsp_mpi_check(MPI_Alltoall(cnt, 1, MPI_INT, rcnt, 1, MPI_INT,
	    comm), "MPI_Alltoall", err);
	for (d = 0; rc == 0 && d < m; d++) {
		if (nrecv + (size_t)rcnt[d] > INT_MAX)
			rc = gfsp_error_set(err, GFSP_EINVAL,
			    "too many checksum segments for one rank");
		rdsp[d] = (int)nrecv;
		nrecv += (size_t)rcnt[d];
	}
	if (rc == 0 && (recv = malloc((nrecv ? nrecv : 1) *
				      sizeof(*recv))) == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM,
				   "out of memory for checksum exchange");
	rc = gfsp_agree(comm, rc, err);
	if (rc)
		goto out;
	rc = gfsp_mpi_check(MPI_Alltoallv(send, cnt, sdsp, triple, recv, rcnt,
	    rdsp, triple, comm), "MPI_Alltoallv", err);
	rc = gfsp_agree(comm, rc, err);
	if (rc)
		goto out;
	free(send);
	send = NULL;

	qsort(recv, nrecv, sizeof(*recv), cmp_seghash);
	rc = check_parts(x, recv, nrecv, err);
	rc = gfsp_agree(comm, rc, err);
out:
	if (triple != MPI_DATATYPE_NULL)
		MPI_Type_free(&triple);
	free(send);
	free(recv);
	free(cnt);
	return rc;
}

/*
 * A layout with runs (written through the MPI-IO library) does not map
 * stripes to contiguous part ranges, and bytes a later run overwrote are
 * never read: each part is hashed whole instead, in a second read, by its
 * checker (on its node, where there is a rank there).
 */
static int
verify_whole_parts(MPI_Comm comm, struct merge_ctx *x, struct gfsp_error *err)
{
	int p, rc = 0;

	for (p = 0; rc == 0 && p < x->l->nprocs; p++)
		if (gfsp_mplan_checker(x->plan, p) == x->rank)
			rc = gfsp_layout_verify_part(x->l, p, err);
	return gfsp_agree(comm, rc, err);
}

/*
 * Do the split file's own files (its marker and parts, which pcp-split -p
 * gives the recorded owner) all belong to the recorded owner (group:
 * *gid_ok)?  The marker is a file
 * like any other: whoever owns the split file can write any owner into
 * it, so a recorded owner is only a claim, which the file system's own
 * word about the files must back.  A part that cannot be looked at backs
 * nothing.
 */
static int
owner_backed(const struct gfsp_layout *l, const struct gfsp_attrs *at,
	     int *gid_ok)
{
	struct gfsp_stat st;
	char *path;
	int p, uid_ok = 1, rc;

	*gid_ok = 1;
	for (p = -1; p < l->nprocs && (uid_ok || *gid_ok); p++) {
		path = p == -1 ? gfsp_marker_path(l->path) :
		       gfsp_part_path(l->path, p);
		rc = path == NULL ? GFSP_ENOMEM : gfsp_lstat(path, &st, NULL);
		free(path);
		if (rc != 0 || st.uid != at->uid)
			uid_ok = 0;
		if (rc != 0 || st.gid != at->gid)
			*gid_ok = 0;
	}
	return uid_ok;
}

/*
 * -p, rank 0, once the bytes are all written: the mode, owner and times
 * pcp-split -p recorded.  The owner only where the split file's own files
 * belong to it (owner_backed), and where this user may give it (root, or
 * a group of its own), else a warning; the handle's, never a path's.  The
 * set-id bits only with the owner (group) they were recorded with, and
 * only where the files back it: root merging a user's split file that
 * claims 04755 root makes no set-user-ID-root file.
 */
static int
preserve(struct merge_ctx *x, const struct gfsp_merge_args *a,
	 struct gfsp_error *err)
{
	const struct gfsp_attrs *at = &x->l->marker.attrs;
	struct gfsp_stat rec = { 0 }, now;
	int fd = gfsp_file_fd(x->out), uid_ok, gid_ok, rc;

	if (!x->l->marker.has_attrs) {
		gfsp_log_warn("-p: '%s' records no attributes (it was not "
			      "split with -p): '%s' gets the split file's "
			      "mode and the time of now", a->src, a->dst);
		return 0;
	}
	uid_ok = owner_backed(x->l, at, &gid_ok);
	if (!uid_ok || !gid_ok)
		gfsp_log_warn("-p: '%s' records %s %u, but its own files do "
			      "not all belong to it: '%s' does not get it%s",
			      a->src, uid_ok ? "group" : "owner",
			      uid_ok ? at->gid : at->uid, a->dst,
			      (at->mode & (S_ISUID | S_ISGID)) ?
			      ", nor the set-id bits" : "");
	if (fd < 0)
		gfsp_log_warn("-p: the owner of '%s' is not kept (the store "
			      "gives no descriptor to change it by)", a->dst);
	else if ((uid_ok || gid_ok) &&
		 fchown(fd, uid_ok ? at->uid : (uid_t)-1,
			gid_ok ? at->gid : (gid_t)-1) != 0)
		gfsp_log_warn("-p: the owner of '%s' is not kept (%u:%u): %s",
			      a->dst, at->uid, at->gid, strerror(errno));
	/* after the owner (a chown clears the set-id bits), and as the file
	 * is owned now */
	rc = gfsp_fstat(x->out, &now, err);
	if (rc)
		return rc;
	rec.mode = S_IFREG | at->mode;
	rec.uid = at->uid;
	rec.gid = at->gid;
	/* an owner not backed: neither set-id bit (a group's alone would
	 * still be the unbacked owner's file running as that group) */
	if (!uid_ok)
		rec.mode &= ~(uint32_t)(S_ISUID | S_ISGID);
	if (!gid_ok)
		rec.mode &= ~(uint32_t)S_ISGID;
	return gfsp_fsetattr(x->out, gfsp_copy_mode(&rec, now.uid, now.gid),
			     at->atime, at->atime_ns, at->mtime, at->mtime_ns,
			     err);
}

/* -v: what this rank read from parts on its node and on others, the parts
 * it checked (it is their checker), and the merged file */
static void
list_parts(const struct merge_ctx *x, const struct gfsp_merge_args *a,
	   int verified)
{
	char sz[32], sz2[32];
	int p;

	if (gfsp_log_level() < GFSP_LOG_VERBOSE)
		return;
	gfsp_log_each("read %s from parts on this node, %s from other nodes'",
		      gfsp_format_size(x->data_bytes - x->away, sz, sizeof(sz)),
		      gfsp_format_size(x->away, sz2, sizeof(sz2)));
	for (p = 0; verified && p < x->l->nprocs; p++)
		if (gfsp_mplan_checker(x->plan, p) == x->rank)
			gfsp_log_each("checked part.%d of '%s' (%s)", p,
			    a->src, gfsp_format_size(x->l->part_size[p], sz,
						     sizeof(sz)));
	if (x->rank == 0)
		gfsp_log_each("wrote '%s' (%s)", a->dst,
			      gfsp_format_size(x->size, sz, sizeof(sz)));
}

/*
 * The plan of every rank, dealt from the first stripe (and rewound after):
 * its bytes (holes excluded), the stripes it has a piece of and their
 * span; and *ranges[r], the part ranges of its pieces (each a contiguous
 * range of one part, where it hashes segments).  No MPI.
 */
static int
merge_plan(struct merge_ctx *x, struct gfsp_plan_rank *plan, uint64_t *ranges,
	   struct gfsp_error *err)
{
	struct gfsp_mplan_stripe s;
	uint64_t *lastk;
	int more, g, r, rc;

	lastk = calloc((size_t)x->nranks, sizeof(*lastk));
	if (lastk == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	memset(plan, 0, (size_t)x->nranks * sizeof(*plan));
	memset(ranges, 0, (size_t)x->nranks * sizeof(*ranges));
	gfsp_mplan_rewind(x->plan);
	while ((rc = gfsp_mplan_deal(x->plan, &s, &more, err)) == 0 && more) {
		for (g = 0; g < s.ngroups; g++) {
			r = s.owner[g];
			if (r < 0)
				continue;
			if (lastk[r] != s.k + 1) {
				lastk[r] = s.k + 1;
				if (plan[r].pieces++ == 0)
					plan[r].first = s.begin;
				plan[r].last = s.end;
			}
			plan[r].bytes += s.bytes[g];
			ranges[r] += s.parts[g];
		}
	}
	gfsp_mplan_rewind(x->plan);
	free(lastk);
	return rc;
}

/*
 * Can every rank keep the segment table of an in-pass verification?  The
 * most triples one rank holds: those it hashes (every segment that starts
 * in the part ranges it reads: at most its bytes over the segment size,
 * plus one a range) and those it checks (every segment of its parts).
 * Every rank computes the same answer from the same plan.
 */
static int
segtab_fits(const struct merge_ctx *x, const struct gfsp_plan_rank *plan,
	    const uint64_t *ranges)
{
	const struct gfsp_layout *l = x->l;
	uint64_t most = 0, *own;
	int p, r;

	own = calloc((size_t)x->nranks, sizeof(*own));
	if (own == NULL)
		return 0;
	for (p = 0; p < l->nprocs; p++)
		own[gfsp_mplan_checker(x->plan, p)] +=
		    l->part_size[p] / x->seg_size +
		    (l->part_size[p] % x->seg_size != 0);
	for (r = 0; r < x->nranks; r++) {
		most = GFSP_MAX(most, own[r]);
		most = GFSP_MAX(most, plan[r].bytes / x->seg_size + ranges[r]);
	}
	free(own);
	return most <= SEGTAB_MAX / sizeof(struct seghash);
}

/* ------------------------------------------------------------ phases */

/*
 * Collective: the plan (where the parts are, mplan.h; stripes mapped
 * `chunk` bytes at a time, as the copy maps them); for a dry run,
 * rank 0's copy of every rank's share (res->plan), and whether the
 * checksums can be verified in passing (x->inpass).
 */
static int
merge_deal(MPI_Comm comm, struct merge_ctx *x, const struct gfsp_merge_args *a,
	   uint64_t chunk, struct gfsp_copy_result *res,
	   struct gfsp_error *err)
{
	struct gfsp_plan_rank *plan = NULL;
	uint64_t *ranges = NULL;
	int rc;

	gfsp_watch_phase("finding the parts");
	rc = gfsp_mplan_create(comm, x->l, x->stripe, chunk, &x->plan, err);
	if (rc)
		return rc;
	if (!a->dry_run && !(x->verify && !x->l->has_runs))
		return 0;
	plan = calloc((size_t)x->nranks, sizeof(*plan));
	ranges = calloc((size_t)x->nranks, sizeof(*ranges));
	if (plan == NULL || ranges == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	else
		rc = merge_plan(x, plan, ranges, err);
	if (rc == 0 && x->verify && !x->l->has_runs)
		x->inpass = segtab_fits(x, plan, ranges);
	if (rc == 0 && a->dry_run && x->rank == 0) {
		res->plan = plan;
		plan = NULL;
	}
	free(plan);
	free(ranges);
	return gfsp_agree(comm, rc, err);
}

/* Collective: every rank opens SRC, from the metadata rank 0 reads
 * (gfsp_layout_open_comm); a bad SRC is reported once, by rank 0.  Rank
 * 0 checks DST. */
static int
merge_open(MPI_Comm comm, struct merge_ctx *x, const struct gfsp_merge_args *a,
	   struct gfsp_dst *dst, struct gfsp_copy_result *res,
	   struct gfsp_error *err)
{
	int rc;

	rc = gfsp_layout_open_comm(comm, a->src, &x->l, err);
	if (rc != 0 && x->rank != 0) {
		gfsp_error_clear(err);
		rc = gfsp_error_set(err, GFSP_EPEER, "rank 0 failed: %s",
		    gfsp_strerror(rc));
	}
	if (rc)
		return rc;
	x->size = gfsp_layout_size(x->l);
	x->seg_size = x->l->marker.seg_size;
	res->bytes = x->size;
	res->writers = x->l->nprocs;
	res->stripe_size = x->stripe;
	snprintf(res->layout, sizeof(res->layout), "%s", x->l->marker.layout);
	if (x->verify && x->seg_size == 0)
		rc = gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s/%s: segment size is zero", a->src, GFSP_MARKER_NAME);
	if (rc == 0 && x->rank == 0)
		rc = gfsp_dst_not_source(a->src, a->dst, err);
	if (rc == 0 && x->rank == 0)
		rc = gfsp_dst_check(dst, a->force, err);
	/* parts with holes (pcp-split of a sparse source) give a sparse
	 * DST, as cp gives a sparse copy of a sparse file */
	if (rc == 0 && x->rank == 0 && !a->no_sparse)
		x->sparse = gfsp_layout_sparse(x->l);
	rc = gfsp_agree(comm, rc, err);
	if (rc == 0)
		rc = gfsp_mpi_check(gfsp_bcast(&x->sparse, 1, MPI_INT, 0, comm),
				   "MPI_Bcast", err);
	return gfsp_agree(comm, rc, err);
}

/* --timeout ends the job: the temporary file goes (any rank removes it:
 * the one that made it may be the one stopped) */
static void
undo_tmp(void *arg)
{
	struct merge_ctx *x = arg;

	gfsp_unlink(x->tmp, NULL);
}

/* Is path still the file rank 0 made (before the rename: TMP; after it:
 * DST)?  Its directory may be writable by others. */
static int
same_tmp(const struct merge_ctx *x, const char *path, struct gfsp_error *err)
{
	struct gfsp_stat st;

	if (x->tmp_ino == 0 || (gfsp_lstat(path, &st, NULL) == 0 &&
				S_ISREG(st.mode) && st.ino == x->tmp_ino))
		return 0;
	return gfsp_error_set(err, GFSP_ESTALE, "'%s' is not the file this "
	    "run wrote (someone renamed or replaced it): not committed", path);
}

/* Collective: rank 0 creates the temporary file (exclusively) and names
 * it to the others, who open it: never through a link, only a file of
 * this user's with one name, and only the very file rank 0 made (its
 * inode); and the per-rank buffers of the pipeline's helpers. */
static int
merge_create(MPI_Comm comm, struct merge_ctx *x, struct gfsp_dst *dst,
	     char **tmp, int *created, struct gfsp_error *err)
{
	struct gfsp_stat st;
	uint32_t mode;
	int rc = 0, i;

	/* DST's parent held by every rank, from here to the end */
	rc = gfsp_dst_hold(dst, err);
	rc = gfsp_agree(comm, rc, err);
	if (rc)
		return rc;
	if (x->rank == 0) {
		gfsp_dst_sweep(dst, "tmp");	/* a killed run's */
		/* no wider than the split file: its directory's read and
		 * write bits (pcp-split gave it the source's) */
		mode = gfsp_stat(x->src, &st, NULL) == 0 ? st.mode & 0666 :
		       0600;
		*tmp = gfsp_dst_sibling(dst, "tmp");
		if (*tmp == NULL)
			rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
		else
			rc = gfsp_open(*tmp, GFSP_O_WRONLY | GFSP_O_CREAT |
				      GFSP_O_EXCL, mode, &x->out, err);
		*created = rc == 0;
	}
	if (rc == 0 && x->rank == 0 && strstr(*tmp, "://") == NULL &&
	    gfsp_fstat(x->out, &st, err) == 0)
		x->tmp_ino = st.ino;
	rc = gfsp_agree(comm, rc, err);
	if (rc == 0)
		rc = gfsp_bcast_string(comm, tmp, err);
	if (rc == 0)
		rc = gfsp_mpi_check(gfsp_bcast(&x->tmp_ino, 1, MPI_UINT64_T, 0,
					      comm), "MPI_Bcast", err);
	rc = gfsp_agree(comm, rc, err);
	if (rc)
		return rc;
	x->tmp = *tmp;
	(void)gfsp_watch_undo_push(undo_tmp, x);
	if (x->rank != 0)
		rc = gfsp_open(*tmp, GFSP_O_WRONLY | (x->tmp_ino ?
			       GFSP_O_PRIVATE : 0), 0, &x->out, err);
	if (rc == 0 && x->rank != 0 && x->tmp_ino != 0 &&
	    (rc = gfsp_fstat(x->out, &st, err)) == 0 && st.ino != x->tmp_ino)
		rc = gfsp_error_set(err, GFSP_ESTALE, "'%s' is not the file "
		    "rank 0 made (someone renamed or replaced it)", *tmp);
	x->slot_of = malloc((size_t)x->l->nprocs * sizeof(*x->slot_of));
	x->tail = malloc(TAIL_BUF);
	if (rc == 0 && (x->slot_of == NULL || x->tail == NULL))
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	for (i = 0; rc == 0 && i < x->l->nprocs; i++)
		x->slot_of[i] = -1;
	return gfsp_agree(comm, rc, err);
}

/* Close this rank's handle of DST; the first error wins. */
static int
close_out(struct merge_ctx *x, int rc, struct gfsp_error *err)
{
	int crc = gfsp_close(x->out, rc ? NULL : err);

	x->out = NULL;
	return rc ? rc : crc;
}

/* Copy every stripe of this rank into the temporary file, then agree. */
static int
merge_copy(MPI_Comm comm, struct merge_ctx *x, const struct gfsp_merge_args *a,
    uint64_t bufsize, struct gfsp_error *err)
{
	int rc;

	gfsp_watch_phase("copying");
	x->prog = gfsp_progress_start(comm, "gfsplit-merge", x->size);
	rc = gfsp_pipe_run(&merge_pipe_ops, x, (size_t)bufsize, err);
	/* a segment kept open past the last piece (a part longer than its
	 * views say: the check names it) */
	if (rc == 0 && x->inpass)
		rc = hash_stripe_done(x, 1, err);
	gfsp_progress_finish(x->prog);
	if (rc == 0 && a->sync)
		rc = gfsp_fsync(x->out, err);
	if (x->rank != 0)
		rc = close_out(x, rc, err);
	return gfsp_agree(comm, rc, err);
}

/* Check the parts' checksums, in the pass or reading them whole, if asked. */
static int
merge_verify(MPI_Comm comm, struct merge_ctx *x, struct gfsp_copy_result *res,
    struct gfsp_error *err)
{
	int rc;

	if (x->inpass) {
		gfsp_watch_phase("verifying checksums");
		rc = verify_exchange(comm, x, err);
	} else if (x->verify)
		rc = verify_whole_parts(comm, x, err);
	else
		return 0;
	if (rc == 0)
		res->verified = 1;
	return rc;
}

/* Rank 0 sets the size, metadata and moves the file into place; agree. */
static int
merge_install(MPI_Comm comm, struct merge_ctx *x,
    const struct gfsp_merge_args *a, struct gfsp_dst *dst, const char *tmp,
    int *created, struct gfsp_error *err)
{
	int rc = 0;

	/* the tail of the logical file may be a hole, so set the size */
	if (x->rank == 0) {
		rc = gfsp_ftruncate(x->out, x->size, err);
		if (rc == 0 && a->preserve)
			rc = preserve(x, a, err);
		if (rc == 0 && a->sync)
			rc = gfsp_fsync(x->out, err);
		rc = close_out(x, rc, err);
		if (rc == 0)
			rc = same_tmp(x, tmp, err);
		if (rc == 0)
			rc = gfsp_dst_install(dst, tmp, a->force, err);
		if (rc == 0) {
			*created = 0;
			rc = same_tmp(x, dst->path, err);
		}
	}
	return gfsp_agree(comm, rc, err);
}

/* Sum the data and hole bytes of all ranks into RES on rank 0; agree. */
static int
merge_totals(MPI_Comm comm, struct merge_ctx *x, struct gfsp_copy_result *res,
    struct gfsp_error *err)
{
	uint64_t data = x->data_bytes;
	int rc;

	rc = gfsp_mpi_check(gfsp_reduce(&data, &res->data_bytes, 1,
	    MPI_UINT64_T, MPI_SUM, 0, comm), "MPI_Reduce", err);
	if (rc == 0)
		rc = gfsp_mpi_check(gfsp_reduce(&x->holes, &res->hole_bytes, 1,
		    MPI_UINT64_T, MPI_SUM, 0, comm), "MPI_Reduce", err);
	return gfsp_agree(comm, rc, err);
}

/* Free what the merge context holds (not its output handle). */
static void
merge_free(struct merge_ctx *x)
{
	size_t i;

	for (i = 0; i < 2; i++)
		free(x->map[i].ext);
	for (i = 0; i < x->capop; i++)
		if (x->op[i].st != NULL)
			XXH3_freeState(x->op[i].st);
	free(x->op);
	free(x->sh);
	free(x->tail);
	free(x->slot_of);
	gfsp_mplan_free(x->plan);
	if (x->l != NULL)
		gfsp_layout_close(x->l);
}

int
gfsp_merge(MPI_Comm comm, const struct gfsp_merge_args *a,
	  struct gfsp_copy_result *res, struct gfsp_error *err)
{
	struct merge_ctx x = { 0 };
	struct gfsp_dst dst = { 0 };
	char *tmp = NULL;
	int created = 0, rc;
	uint64_t bufsize;
	double t0 = gfsp_now();

	memset(res, 0, sizeof(*res));
	MPI_Comm_rank(comm, &x.rank);
	MPI_Comm_size(comm, &x.nranks);
	res->ranks = x.nranks;
	x.src = a->src;
	x.stripe = a->stripe_size ? a->stripe_size : GFSP_MERGE_STRIPE_DEFAULT;
	x.verify = a->verify;
	bufsize = a->buffer_size ? a->buffer_size : GFSP_COPY_BUFFER_DEFAULT;
	if (bufsize > SIZE_MAX / 2)
		bufsize = SIZE_MAX / 2;

	rc = gfsp_agree(comm, gfsp_dst_parse(&dst, a->dst, err), err);
	if (rc == 0)
		rc = merge_open(comm, &x, a, &dst, res, err);
	/* a chunk never spans stripes, nor the file */
	bufsize = GFSP_MAX(GFSP_MIN(bufsize, GFSP_MIN(x.stripe, x.size)), 4096);
	if (rc == 0)
		rc = merge_deal(comm, &x, a, bufsize, res, err);
	/* a dry run reports what planning took: SRC opened on every rank,
	 * DST checked, the stripes dealt */
	if (rc == 0 && a->dry_run)
		res->seconds = gfsp_now() - t0;
	if (rc || a->dry_run)
		goto out;
	rc = merge_create(comm, &x, &dst, &tmp, &created, err);
	if (rc)
		goto out;

	rc = merge_copy(comm, &x, a, bufsize, err);
	if (rc == 0)
		rc = merge_verify(comm, &x, res, err);
	if (rc == 0)
		rc = merge_install(comm, &x, a, &dst, tmp, &created, err);
	if (rc)
		goto out;
	list_parts(&x, a, res->verified);
	rc = merge_totals(comm, &x, res, err);
	if (rc == 0) {
		res->seconds = gfsp_now() - t0;
		rc = gfsp_job_usage(comm, &res->seconds, &res->max_rss_kib,
		    &res->cpu_seconds, err);
	}
out:
	gfsp_watch_undo_pop(undo_tmp, &x);
	if (x.out != NULL)
		gfsp_close(x.out, NULL);
	if (created)
		gfsp_unlink(tmp, NULL);
	merge_free(&x);
	free(tmp);
	gfsp_dst_free(&dst);
	if (rc) {
		free(res->plan);
		res->plan = NULL;
	}
	return rc;
}
