/*
 * mplan.c - the merge plan (mplan.h): pieces of stripes dealt to the ranks
 * on the nodes that hold their parts.
 *
 *   group of part r:  0 .. J-1       the merge's node that holds r (J
 *                                    nodes, in order of their lowest rank):
 *                                    a node's parts are one piece, for one
 *                                    of its ranks
 *                     J + r          r is on none of them: a piece of its
 *                                    own, to whichever rank has least
 *
 * A remote part sticks to its rank while a checksum segment is open: the
 * rank that reads the start of a segment hashes all of it (merge.c), and
 * where a stripe's piece of a part ends inside a segment, the rest would
 * be read a second time, over the network.  So while a remote part has a
 * segment open (its last piece ended inside one, short of the part's
 * end), its next pieces go to the same rank, which keeps hashing on; a
 * part on a node with ranks reads such rests from its own node.  In a
 * file with runs nothing is hashed in passing: nothing sticks.
 *
 *   part r:   | seg 0        | seg 1        |
 *   stripes:  [ k: rank 2 ][ k+1: rank 2 ][ ...   (seg 0 open after k)
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "mplan.h"

/* Ranks by (load, rank), smallest first; load only grows. */
struct heap {
	int *h;			/* [n] ranks */
	int *pos;		/* [n] rank -> index in h */
	const uint64_t *key;	/* [n] loads */
	int n;
};

struct gfsp_mplan {
	struct gfsp_layout *l;
	int nranks;
	uint64_t stripe, chunk, end;
	int njob;		/* J: the merge's nodes */
	int ngroups;		/* J + nprocs */
	int *group_of;		/* [nprocs] */
	int *checker;		/* [nprocs] */
	int *node_first;	/* [J + 1] node j's ranks: */
	int *node_ranks;	/* node_ranks[node_first[j] .. node_first[j+1]) */
	/* the walk */
	uint64_t k;
	uint64_t *load;		/* [nranks] */
	struct heap heap;
	uint64_t *bytes, *parts;	/* [ngroups] of the stripe at hand */
	int *owner;		/* [ngroups] */
	int *touched;		/* [ngroups] groups with bytes in it */
	int ntouched;
	uint64_t *seen;		/* [nprocs] k + 1 of the last stripe with r */
	/* remote groups that stick (none: seg == 0) */
	uint64_t seg;
	uint64_t *pend;		/* [nprocs] local end of r's piece at hand */
	unsigned char *open;	/* [nprocs] r's last piece ended in a segment */
	int *in;		/* [nprocs] the parts of the stripe at hand */
	int nin;
	int *nopen;		/* [ngroups] its parts with a segment open */
	int *sticky;		/* [ngroups] the rank they are open with */
};

/* ------------------------------------------------------------ heap */

static int
heap_less(const struct heap *q, int a, int b)
{
	int x = q->h[a], y = q->h[b];

	return q->key[x] != q->key[y] ? q->key[x] < q->key[y] : x < y;
}

static void
heap_swap(struct heap *q, int a, int b)
{
	int t = q->h[a];

	q->h[a] = q->h[b];
	q->h[b] = t;
	q->pos[q->h[a]] = a;
	q->pos[q->h[b]] = b;
}

/* key[rank] grew: move it down to its place */
static void
heap_grew(struct heap *q, int rank)
{
	int i = q->pos[rank], c;

	for (;;) {
		c = 2 * i + 1;
		if (c >= q->n)
			break;
		if (c + 1 < q->n && heap_less(q, c + 1, c))
			c++;
		if (!heap_less(q, c, i))
			break;
		heap_swap(q, i, c);
		i = c;
	}
}

/* every key zero: ranks in order is a heap */
static void
heap_reset(struct heap *q)
{
	int i;

	for (i = 0; i < q->n; i++) {
		q->h[i] = i;
		q->pos[i] = i;
	}
}

/* ------------------------------------------------------------ dealing */

/* The least loaded rank for group g; load[] as keyed by q. */
static int
pick(const struct gfsp_mplan *p, const struct heap *q, int g)
{
	int i, r, best;

	if (g >= p->njob)
		return q->h[0];
	best = p->node_ranks[p->node_first[g]];
	for (i = p->node_first[g] + 1; i < p->node_first[g + 1]; i++) {
		r = p->node_ranks[i];
		if (q->key[r] < q->key[best])
			best = r;
	}
	return best;
}

static int
cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* After a deal: which remote parts have a segment open now. */
static void
update_open(struct gfsp_mplan *p)
{
	const struct gfsp_layout *l = p->l;
	int i, r, g, now;

	for (i = 0; i < p->nin; i++) {
		r = p->in[i];
		g = p->group_of[r];
		if (g < p->njob)
			continue;
		now = p->pend[r] % p->seg != 0 && p->pend[r] < l->part_size[r];
		p->nopen[g] += now - p->open[r];
		p->open[r] = (unsigned char)now;
	}
}

void
gfsp_mplan_rewind(struct gfsp_mplan *p)
{
	int g;

	p->k = 0;
	memset(p->load, 0, (size_t)p->nranks * sizeof(*p->load));
	heap_reset(&p->heap);
	for (g = 0; g < p->ngroups; g++) {
		p->bytes[g] = p->parts[g] = 0;
		p->owner[g] = -1;
		p->nopen[g] = 0;
	}
	p->ntouched = 0;
	memset(p->seen, 0, (size_t)p->l->nprocs * sizeof(*p->seen));
	memset(p->open, 0, (size_t)p->l->nprocs);
}

int
gfsp_mplan_deal(struct gfsp_mplan *p, struct gfsp_mplan_stripe *s, int *more,
	       struct gfsp_error *err)
{
	struct gfsp_extent *ext = NULL;
	uint64_t off, n, holes = 0;
	size_t ne, i;
	int t, g, r, rc;

	*more = 0;
	for (t = 0; t < p->ntouched; t++) {
		g = p->touched[t];
		p->bytes[g] = p->parts[g] = 0;
		p->owner[g] = -1;
	}
	p->ntouched = 0;
	p->nin = 0;
	if (p->k * p->stripe >= p->end)
		return 0;
	s->k = p->k;
	s->begin = p->k * p->stripe;
	s->end = GFSP_MIN(s->begin + p->stripe, p->end);
	for (off = s->begin; off < s->end; off += n) {
		n = GFSP_MIN(p->chunk, s->end - off);
		rc = gfsp_layout_map(p->l, off, n, &ext, &ne, err);
		if (rc)
			return rc;
		for (i = 0; i < ne; i++) {
			r = ext[i].part;
			if (r < 0) {
				holes += ext[i].len;
				continue;
			}
			g = p->group_of[r];
			if (p->bytes[g] == 0)
				p->touched[p->ntouched++] = g;
			p->bytes[g] += ext[i].len;
			if (p->seen[r] != p->k + 1) {
				p->seen[r] = p->k + 1;
				p->parts[g]++;
				p->in[p->nin++] = r;
				p->pend[r] = 0;
			}
			p->pend[r] = GFSP_MAX(p->pend[r],
					      ext[i].loff + ext[i].len);
		}
		free(ext);
		ext = NULL;
	}
	/* the merge's own nodes first (each has its ranks only), then the
	 * pieces that move anyway, to whoever has least */
	qsort(p->touched, (size_t)p->ntouched, sizeof(*p->touched), cmp_int);
	for (t = 0; t < p->ntouched; t++) {
		g = p->touched[t];
		r = p->nopen[g] > 0 ? p->sticky[g] : pick(p, &p->heap, g);
		p->owner[g] = r;
		p->sticky[g] = r;
		p->load[r] += p->bytes[g];
		heap_grew(&p->heap, r);
	}
	if (p->seg > 0)
		update_open(p);
	s->hole_bytes = holes;
	s->ngroups = p->ngroups;
	s->bytes = p->bytes;
	s->parts = p->parts;
	s->owner = p->owner;
	s->keeper = p->ntouched > 0 ? p->owner[p->touched[0]] :
		    (int)(p->k % (uint64_t)p->nranks);
	p->k++;
	*more = 1;
	return 0;
}

int
gfsp_mplan_group(const struct gfsp_mplan *p, int r)
{
	return p->group_of[r];
}

int
gfsp_mplan_local(const struct gfsp_mplan *p, int r)
{
	return p->group_of[r] < p->njob;
}

int
gfsp_mplan_checker(const struct gfsp_mplan *p, int r)
{
	return p->checker[r];
}

/* ------------------------------------------------------------ create */

/*
 * The merge's nodes: names of every rank (W bytes each), the node of each
 * rank (nodes numbered in order of their lowest rank) and the ranks of
 * each node.  OUT p->njob, node_first, node_ranks; *nodeof [nranks].
 */
static int
job_nodes(struct gfsp_mplan *p, const char *names, int W, int *nodeof,
	  int *first_rank, struct gfsp_error *err)
{
	int r, q, j, m = p->nranks, *fill;

	p->njob = 0;
	for (r = 0; r < m; r++) {
		nodeof[r] = -1;
		for (q = 0; q < r && nodeof[r] < 0; q++)
			if (strcmp(names + (size_t)q * W,
				   names + (size_t)r * W) == 0)
				nodeof[r] = nodeof[q];
		if (nodeof[r] < 0) {
			first_rank[p->njob] = r;
			nodeof[r] = p->njob++;
		}
	}
	p->node_first = calloc((size_t)p->njob + 1, sizeof(int));
	p->node_ranks = malloc((size_t)m * sizeof(int));
	fill = calloc((size_t)p->njob + 1, sizeof(int));
	if (p->node_first == NULL || p->node_ranks == NULL || fill == NULL) {
		free(fill);
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	for (r = 0; r < m; r++)
		p->node_first[nodeof[r] + 1]++;
	for (j = 0; j < p->njob; j++)
		p->node_first[j + 1] += p->node_first[j];
	for (r = 0; r < m; r++) {
		j = nodeof[r];
		p->node_ranks[p->node_first[j] + fill[j]++] = r;
	}
	free(fill);
	return 0;
}

/* The merge's node holding part r (of those `hosts` name), or -1. */
static int
home_of(const char *names, int W, const int *first_rank, int njob,
	char **hosts, size_t nh)
{
	size_t i;
	int j;

	for (i = 0; i < nh; i++)
		for (j = 0; j < njob; j++)
			if (gfsp_same_host(hosts[i], names +
					   (size_t)first_rank[j] * W))
				return j;
	return -1;
}

/* Checkers: parts by size to the least loaded rank of their node. */
static int
deal_checkers(struct gfsp_mplan *p, struct gfsp_error *err)
{
	uint64_t *cload = calloc((size_t)p->nranks, sizeof(*cload));
	struct heap q = { NULL, NULL, cload, p->nranks };
	int r, c;

	q.h = malloc((size_t)p->nranks * sizeof(int));
	q.pos = malloc((size_t)p->nranks * sizeof(int));
	if (cload == NULL || q.h == NULL || q.pos == NULL) {
		free(cload);
		free(q.h);
		free(q.pos);
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	heap_reset(&q);
	for (r = 0; r < p->l->nprocs; r++) {
		c = pick(p, &q, p->group_of[r]);
		p->checker[r] = c;
		/* an empty part still costs an open */
		cload[c] += p->l->part_size[r] + 1;
		heap_grew(&q, c);
	}
	free(cload);
	free(q.h);
	free(q.pos);
	return 0;
}

/*
 * Collective: home[r], the merge's node holding part r (-1: none), for
 * each of the layout's parts; the nodes' names (W bytes each) and each
 * node's first rank from job_nodes.
 */
static int
find_homes(MPI_Comm comm, struct gfsp_mplan *p, const char *names, int W,
	   const int *first_rank, int *home, struct gfsp_error *err)
{
	struct gfsp_layout *l = p->l;
	struct gfsp_error werr;
	char **hosts;
	size_t nh;
	int rank, np = l->nprocs, r, rc = 0;

	MPI_Comm_rank(comm, &rank);
	/* where the parts are: rank q asks about parts q, q + M, ...; a part
	 * the store cannot place is taken to be where its writer was */
	for (r = 0; r < np; r++) {
		home[r] = -1;
		if (r % p->nranks != rank)
			continue;
		gfsp_error_clear(&werr);
		if (gfsp_layout_part_where(l, r, &hosts, &nh, &werr) == 0) {
			home[r] = home_of(names, W, first_rank, p->njob, hosts,
					  nh);
			gfsp_strv_free(hosts, nh);
		} else {
			char *one = l->host[r];

			gfsp_log_verbose("%s: cannot tell where part.%d is "
			    "(%s): taking its writer's node, %s", l->path, r,
			    werr.msg, one);
			home[r] = home_of(names, W, first_rank, p->njob, &one,
					  1);
		}
	}
	if (np > 0)
		rc = gfsp_mpi_check(gfsp_allreduce(MPI_IN_PLACE, home, np,
		    MPI_INT, MPI_MAX, comm), "cannot share the parts' places",
		    err);
	return rc;
}

/* The groups of parts (one a node of the merge, one a part no node
 * holds) and what the plan keeps of each; home from find_homes. */
static int
plan_groups(struct gfsp_mplan *p, const int *home, struct gfsp_error *err)
{
	struct gfsp_layout *l = p->l;
	int np = l->nprocs, r, rc = 0;

	p->ngroups = p->njob + np;
	p->seg = l->has_runs ? 0 : l->marker.seg_size;
	p->bytes = calloc((size_t)p->ngroups, sizeof(uint64_t));
	p->parts = calloc((size_t)p->ngroups, sizeof(uint64_t));
	p->owner = malloc((size_t)p->ngroups * sizeof(int));
	p->touched = malloc((size_t)p->ngroups * sizeof(int));
	p->nopen = calloc((size_t)p->ngroups, sizeof(int));
	p->sticky = calloc((size_t)p->ngroups, sizeof(int));
	p->pend = calloc((size_t)GFSP_MAX(np, 1), sizeof(uint64_t));
	p->open = calloc((size_t)GFSP_MAX(np, 1), 1);
	p->in = malloc((size_t)GFSP_MAX(np, 1) * sizeof(int));
	if (p->bytes == NULL || p->parts == NULL || p->owner == NULL ||
	    p->touched == NULL || p->nopen == NULL || p->sticky == NULL ||
	    p->pend == NULL || p->open == NULL || p->in == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	for (r = 0; rc == 0 && r < np; r++)
		p->group_of[r] = home[r] >= 0 ? home[r] : p->njob + r;
	return rc;
}

int
gfsp_mplan_create(MPI_Comm comm, struct gfsp_layout *l, uint64_t stripe,
		 uint64_t chunk, struct gfsp_mplan **out, struct gfsp_error *err)
{
	const int W = MPI_MAX_PROCESSOR_NAME + 1;
	struct gfsp_mplan *p;
	char me[MPI_MAX_PROCESSOR_NAME + 1], *names = NULL;
	int *nodeof = NULL, *first_rank = NULL, *home = NULL;
	int np = l->nprocs, rc = 0;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (p != NULL) {
		p->l = l;
		MPI_Comm_size(comm, &p->nranks);
		p->stripe = stripe;
		p->chunk = GFSP_MAX(chunk, 1);
		p->end = GFSP_MIN(gfsp_layout_size(l), l->data_end);
		names = calloc((size_t)p->nranks, (size_t)W);
		nodeof = malloc((size_t)p->nranks * sizeof(int));
		first_rank = malloc((size_t)p->nranks * sizeof(int));
		home = malloc((size_t)GFSP_MAX(np, 1) * sizeof(int));
		p->group_of = malloc((size_t)GFSP_MAX(np, 1) * sizeof(int));
		p->checker = malloc((size_t)GFSP_MAX(np, 1) * sizeof(int));
		p->seen = calloc((size_t)GFSP_MAX(np, 1), sizeof(uint64_t));
		p->load = calloc((size_t)p->nranks, sizeof(uint64_t));
		p->heap.h = malloc((size_t)p->nranks * sizeof(int));
		p->heap.pos = malloc((size_t)p->nranks * sizeof(int));
	}
	if (p == NULL || names == NULL || nodeof == NULL ||
	    first_rank == NULL || home == NULL || p->group_of == NULL ||
	    p->checker == NULL || p->seen == NULL || p->load == NULL ||
	    p->heap.h == NULL || p->heap.pos == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	rc = gfsp_agree(comm, rc, err);
	if (rc)
		goto out;
	p->heap.key = p->load;
	p->heap.n = p->nranks;

	memset(me, 0, sizeof(me));
	gfsp_node_name(me, sizeof(me));
	rc = gfsp_mpi_check(gfsp_allgather(me, W, MPI_CHAR, names, W, MPI_CHAR,
	    comm), "cannot tell the nodes apart", err);
	if (rc == 0)
		rc = job_nodes(p, names, W, nodeof, first_rank, err);
	rc = gfsp_agree(comm, rc, err);
	if (rc)
		goto out;

	rc = find_homes(comm, p, names, W, first_rank, home, err);
	rc = gfsp_agree(comm, rc, err);
	if (rc)
		goto out;

	rc = plan_groups(p, home, err);
	if (rc == 0)
		rc = deal_checkers(p, err);
	if (rc == 0)
		gfsp_mplan_rewind(p);
	rc = gfsp_agree(comm, rc, err);
out:
	free(names);
	free(nodeof);
	free(first_rank);
	free(home);
	if (rc) {
		gfsp_mplan_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

void
gfsp_mplan_free(struct gfsp_mplan *p)
{
	if (p == NULL)
		return;
	free(p->group_of);
	free(p->checker);
	free(p->node_first);
	free(p->node_ranks);
	free(p->load);
	free(p->heap.h);
	free(p->heap.pos);
	free(p->bytes);
	free(p->parts);
	free(p->owner);
	free(p->touched);
	free(p->seen);
	free(p->nopen);
	free(p->sticky);
	free(p->pend);
	free(p->open);
	free(p->in);
	free(p);
}
