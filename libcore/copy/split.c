/*
 * split.c - the pcp-split engine: copy an ordinary file into a new split
 * file, one part per rank.
 *
 * Each rank reads only the bytes of its own view from SRC and appends them
 * to its part, so reads of SRC are spread over the ranks and every part is
 * written sequentially:
 *
 *   SRC (cyclic, 3 ranks):  | r0 | r1 | r2 | r0 | r1 | r2 | r0 |..
 *   part.0 = r0's blocks in global order: | r0 | r0 | r0 |..
 *
 * Reading and appending overlap through gfsp_pipe_run (the helper thread
 * reads the next buffer, gathering several view blocks into it, while this
 * thread appends the previous one).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "core.h"
#include "copy.h"
#include "dst.h"
#include "layout_impl.h"
#include "pipe.h"
#include "splitfile.h"
#include "store.h"

#define MIB (UINT64_C(1) << 20)
#define SMALL_ALIGN UINT64_C(4096)

uint64_t
gfsp_split_chunk(uint64_t size, int nprocs)
{
	uint64_t chunk, align;

	if (nprocs < 1)
		nprocs = 1;
	chunk = size / (uint64_t)nprocs + (size % (uint64_t)nprocs != 0);
	align = size / (uint64_t)nprocs >= MIB ? MIB : SMALL_ALIGN;
	chunk = (chunk + align - 1) / align * align;
	return chunk ? chunk : SMALL_ALIGN;
}

/* Number of view blocks below `end` (blocks cut by `end` count once). */
static uint64_t
view_blocks_below(const struct gfsp_view *v, uint64_t end)
{
	uint64_t span, n, rem, i;

	if (v->end < end)
		end = v->end;
	if (v->nblocks == 0 || v->extent == 0 || end <= v->disp)
		return 0;
	span = end - v->disp;
	n = span / v->extent * v->nblocks;
	rem = span % v->extent;
	for (i = 0; i < v->nblocks && v->off[i] < rem; i++)
		n++;
	return n;
}

/* ---------------------------------------------------------- pipeline */

struct split_ctx {
	const char *srcpath;
	struct gfsp_file *src;
	const struct gfsp_view *view;
	uint64_t lpos;			/* next local offset to read */
	uint64_t ltotal;		/* view bytes below the file size */
	struct gfsp_split_writer *w;
	struct gfsp_progress *prog;
	uint64_t done;
	int mapfd;			/* SRC's descriptor to map, or -1 */
};

/*
 * Fill the buffer with the next view bytes in global order: walk local
 * offsets, find each one's global offset and how far it stays contiguous,
 * read that much (clamped to what remains of the buffer and the view).
 */
static int
split_produce(void *arg, struct gfsp_chunk *c, int *done,
	      struct gfsp_error *err)
{
	struct split_ctx *x = arg;
	unsigned char *buf = c->buf;
	size_t fill = 0, got;
	uint64_t g, loff, count, n;
	int rc;

	if (x->lpos >= x->ltotal) {
		*done = 1;
		return 0;
	}
	while (fill < c->cap && x->lpos < x->ltotal) {
		g = gfsp_view_global(x->view, x->lpos);
		if (!gfsp_view_lookup(x->view, g, &loff, &count) ||
		    loff != x->lpos)
			return gfsp_error_set(err, GFSP_EINVAL,
			    "%s: view maps local offset %" PRIu64
			    " inconsistently", x->srcpath, x->lpos);
		n = GFSP_MIN(count, (uint64_t)(c->cap - fill));
		n = GFSP_MIN(n, x->ltotal - x->lpos);
		/* a long run: the writer copies from the page cache (if it
		 * does not map, SRC shrank, which the read below reports) */
		if (fill == 0 && x->mapfd >= 0 && n >= GFSP_MAP_MIN &&
		    gfsp_rmap_open(x->mapfd, g, (size_t)n, x->srcpath,
				   &c->map, NULL) == 0) {
			c->data = c->map.data;
			c->len = (size_t)n;
			x->lpos += n;
			return 0;
		}
		rc = gfsp_pread(x->src, buf + fill, (size_t)n, g, &got, err);
		if (rc)
			return rc;
		if (got < n)
			return gfsp_error_set(err, GFSP_EIO,
			    "%s: file shrank while copying (no data at offset %"
			    PRIu64 ")", x->srcpath, g + got);
		fill += (size_t)n;
		x->lpos += n;
	}
	c->len = fill;
	return 0;
}

static int
split_consume(void *arg, const struct gfsp_chunk *c, struct gfsp_error *err)
{
	struct split_ctx *x = arg;
	int rc;

	rc = gfsp_split_append(x->w, c->data, c->len, err);
	if (rc)
		return rc;
	x->done += c->len;
	gfsp_progress_update(x->prog, x->done);
	return 0;
}

static const struct gfsp_pipe_ops split_pipe_ops = {
	.produce = split_produce,
	.consume = split_consume,
};

/* ------------------------------------------------------------ phases */

/*
 * SRC's size and attributes are those of the descriptor its bytes are
 * read from (fstat), not of a stat of its name: a name swapped between
 * the two would record one file's mode and owner (a set-user-ID root
 * program's) with another file's bytes.
 */
static int
stat_open(const char *path, struct gfsp_file **src, struct gfsp_stat *fst,
	  struct gfsp_error *err)
{
	struct gfsp_stat st;
	int rc;

	*src = NULL;
	rc = gfsp_stat(path, &st, err);
	if (rc == 0 && S_ISDIR(st.mode) && gfsp_has_marker(path))
		rc = gfsp_error_set(err, GFSP_EINVAL, "'%s' is a split file "
		    "already (gfsplit-merge makes an ordinary file of it)",
		    path);
	else if (rc == 0 && S_ISDIR(st.mode))
		rc = gfsp_error_set(err, GFSP_EINVAL, "'%s' is a directory",
				   path);
	else if (rc == 0 && !S_ISREG(st.mode))
		rc = gfsp_error_set(err, GFSP_EINVAL,
				   "'%s' is not a regular file", path);
	if (rc == 0)
		rc = gfsp_open(path, GFSP_O_RDONLY, 0, src, err);
	if (rc == 0)
		rc = gfsp_fstat(*src, fst, err);
	if (rc == 0 && !S_ISREG(fst->mode))
		rc = gfsp_error_set(err, GFSP_EINVAL, "'%s' is not a regular "
				   "file (it changed while being opened)", path);
	if (rc && *src != NULL) {
		struct gfsp_error cerr;

		gfsp_close(*src, &cerr);
		*src = NULL;
	}
	return rc;
}

/*
 * Every rank opens SRC; rank 0 first, so that a missing or unreadable SRC
 * is reported once rather than by every rank.  Rank 0's size and
 * attributes are the ones used by all.
 */
/*
 * Every rank opens SRC; rank 0 first, so that a missing or unreadable SRC
 * is reported once rather than by every rank.  Rank 0's size and
 * attributes are the ones used by all, and every rank's descriptor must be
 * of that same file (its identity: inode, size, times), or all fail.
 */
static int
open_source(MPI_Comm comm, const char *path, struct gfsp_file **src,
	    uint64_t *size, int *sparse, struct gfsp_attrs *at,
	    struct gfsp_error *err)
{
	struct gfsp_stat st, mine;
	uint64_t v[13];
	int rank, rc = 0;

	MPI_Comm_rank(comm, &rank);
	if (rank == 0)
		rc = stat_open(path, src, &st, err);
	rc = gfsp_agree(comm, rc, err);
	if (rc)
		return rc;
	if (rank != 0)
		rc = stat_open(path, src, &mine, err);
	rc = gfsp_agree(comm, rc, err);
	if (rc)
		return rc;
	if (rank == 0) {
		v[0] = st.size;
		v[1] = st.mode;
		v[2] = st.uid;
		v[3] = st.gid;
		v[4] = (uint64_t)st.atime;
		v[5] = st.atime_ns;
		v[6] = (uint64_t)st.mtime;
		v[7] = st.mtime_ns;
		v[8] = st.ino;
		v[9] = st.gen;
		v[10] = (uint64_t)st.ctime;
		v[11] = st.ctime_ns;
		v[12] = st.blocks_bytes;
	}
	rc = gfsp_mpi_check(gfsp_bcast(v, 13, MPI_UINT64_T, 0, comm),
			   "MPI_Bcast", err);
	if (rc == 0 && rank == 0)
		mine = st;
	if (rc == 0) {
		st.size = v[0];
		st.mode = (uint32_t)v[1];
		st.uid = (uint32_t)v[2];
		st.gid = (uint32_t)v[3];
		st.atime = (int64_t)v[4];
		st.atime_ns = v[5];
		st.mtime = (int64_t)v[6];
		st.mtime_ns = v[7];
		st.ino = v[8];
		st.gen = v[9];
		st.ctime = (int64_t)v[10];
		st.ctime_ns = v[11];
		st.blocks_bytes = v[12];
		if (!gfsp_same_identity(&st, &mine))
			rc = gfsp_error_set(err, GFSP_ESTALE, "'%s' changed "
			    "while the ranks opened it (another file under "
			    "its name): nothing done", path);
	}
	*size = st.size;
	*sparse = st.blocks_bytes < st.size;
	at->mode = st.mode & 07777;
	at->uid = st.uid;
	at->gid = st.gid;
	at->atime = st.atime;
	at->atime_ns = (uint32_t)st.atime_ns;
	at->mtime = st.mtime;
	at->mtime_ns = (uint32_t)st.mtime_ns;
	return gfsp_agree(comm, rc, err);
}

/* --dry-run: gather every rank's share at rank 0; check DST as a real run
 * would, but create nothing. */
static int
split_plan(MPI_Comm comm, const struct gfsp_split_args *a,
	   const struct gfsp_view *v, uint64_t size,
	   struct gfsp_copy_result *res, struct gfsp_error *err)
{
	struct gfsp_plan_rank mine = { 0 };
	struct gfsp_stat st;
	int rank, nprocs, rc = 0;

	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &nprocs);
	mine.bytes = gfsp_view_bytes_below(v, size);
	mine.pieces = view_blocks_below(v, size);
	if (mine.bytes > 0) {
		mine.first = gfsp_view_global(v, 0);
		mine.last = gfsp_view_global(v, mine.bytes - 1) + 1;
	}
	if (rank == 0) {
		res->plan = calloc((size_t)nprocs, sizeof(*res->plan));
		if (res->plan == NULL)
			rc = gfsp_error_set(err, GFSP_ENOMEM,
					   "out of memory for the plan");
		else if (gfsp_stat(a->dst, &st, NULL) == 0 && !a->force)
			rc = gfsp_error_set(err, GFSP_EEXIST,
			    "'%s' exists (use --force to replace it)", a->dst);
	}
	rc = gfsp_agree(comm, rc, err);
	if (rc)
		return rc;
	rc = gfsp_mpi_check(gfsp_gather(&mine, 4, MPI_UINT64_T, res->plan, 4,
	    MPI_UINT64_T, 0, comm), "MPI_Gather", err);
	return gfsp_agree(comm, rc, err);
}

/* This rank's entry of --hosts, unless DST's file system places nothing:
 * then its part is where the rank is, and that is what the location files
 * record ("" in host).  The list is checked either way. */
static int
host_of(const struct gfsp_split_args *a, int rank, char *host, size_t len,
	struct gfsp_error *err)
{
	const struct gfsp_store_ops *ops;
	int rc = gfsp_host_for_rank(a->hosts, rank, host, len, err);

	if (rc || gfsp_store_for(a->dst, &ops, NULL) != 0 || ops->places)
		return rc;
	if (rank == 0 && a->placement == GFSP_PLACE_STRICT)
		gfsp_log_warn("--placement strict ignored: '%s' is on a file "
			      "system that places no file on a node", a->dst);
	if (a->hosts == NULL || *a->hosts == '\0')
		return 0;
	if (rank == 0)
		gfsp_log_warn("--hosts (or GFSPLIT_GFARM_HOSTS) ignored: '%s' is "
			      "on a file system that places no file on a node; "
			      "each part is recorded on its rank's node",
			      a->dst);
	host[0] = '\0';
	return 0;
}

/* This rank's view of the source (size bytes), by a->block_size or
 * contiguous, its name in res->layout. */
static int
make_view(const struct gfsp_split_args *a, int rank, int nprocs,
	  uint64_t size, struct gfsp_view *view, struct gfsp_copy_result *res,
	  struct gfsp_error *err)
{
	int rc;

	if (a->block_size) {
		snprintf(res->layout, sizeof(res->layout), "cyclic:%" PRIu64,
			 a->block_size);
		rc = gfsp_view_cyclic(view, rank, nprocs, a->block_size, size,
				     err);
	} else {
		snprintf(res->layout, sizeof(res->layout), "contiguous");
		rc = gfsp_view_contiguous(view, rank, nprocs, size,
					 gfsp_split_chunk(size, nprocs), err);
	}
	return rc;
}

/* The writer's options from the arguments, the source's attributes at,
 * this rank's host ("": none) and whether the source is sparse; the
 * misplaced parts and the holes kept are counted in res and *holes. */
static void
writer_opts(const struct gfsp_split_args *a, struct gfsp_attrs *at,
	    const char *host, int sparse, struct gfsp_copy_result *res,
	    uint64_t *holes, struct gfsp_split_opts *o)
{
	o->force = a->force;
	o->layout = res->layout;
	o->sync = a->sync;
	o->mode = at->mode;
	o->attrs = a->preserve ? at : NULL;
	o->host = host[0] != '\0' ? host : NULL;
	o->policy = a->placement;
	o->misplaced = &res->misplaced;
	/* a sparse source (fewer blocks than its size needs) keeps its
	 * holes, in the parts, as cp and stage-in keep them */
	o->sparse = sparse && !a->no_sparse;
	o->holes = holes;
}

/* This rank's part of the source (src, size bytes) copied, by view,
 * into the writer w through the pipeline, bufsize bytes at most. */
static int
copy_in(MPI_Comm comm, const struct gfsp_split_args *a,
	struct gfsp_file *src, uint64_t size, struct gfsp_split_writer *w,
	const struct gfsp_view *view, uint64_t bufsize, struct gfsp_error *err)
{
	struct split_ctx x = { 0 };
	int rc;

	x.srcpath = a->src;
	x.src = src;
	x.view = view;
	x.ltotal = gfsp_view_bytes_below(x.view, size);
	x.w = w;
	x.mapfd = gfsp_mappable(src, a->dst);
	gfsp_watch_phase("copying");
	x.prog = gfsp_progress_start(comm, "pcp-split", size);
	/* no buffer larger than what this rank moves: touching pages it
	 * never fills is most of the cost of a small copy */
	bufsize = GFSP_MAX(GFSP_MIN(bufsize, x.ltotal), 4096);
	rc = gfsp_pipe_run(&split_pipe_ops, &x, (size_t)bufsize, err);
	gfsp_progress_finish(x.prog);
	return rc;
}

int
gfsp_pcp_split(MPI_Comm comm, const struct gfsp_split_args *a,
	      struct gfsp_copy_result *res, struct gfsp_error *err)
{
	struct gfsp_split_opts opts = { 0 };
	struct gfsp_split_writer *w = NULL;
	const struct gfsp_view *resolved = NULL;
	struct gfsp_view view = { 0 };
	struct gfsp_file *src = NULL;
	uint64_t size = 0, bufsize, psize;
	char sz[32];
	struct gfsp_attrs at = { 0 };
	char host[GFSP_NAME_MAX];
	int rank, nprocs, rc, sparse = 0;
	uint64_t holes = 0;
	double t0;

	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &nprocs);
	memset(res, 0, sizeof(*res));
	res->ranks = nprocs;
	bufsize = a->buffer_size ? a->buffer_size : GFSP_COPY_BUFFER_DEFAULT;
	if (bufsize > SIZE_MAX / 2)
		bufsize = SIZE_MAX / 2;

	t0 = gfsp_now();
	/* entries differ by rank, so may their errors: agree first */
	rc = gfsp_agree(comm, host_of(a, rank, host, sizeof(host), err), err);
	if (rc == 0)
		rc = open_source(comm, a->src, &src, &size, &sparse, &at, err);
	if (rc == 0)
		rc = gfsp_agree(comm, rank == 0 ? gfsp_dst_not_source(a->src,
			       a->dst, err) : 0, err);
	if (rc)
		goto out;
	res->bytes = size;

	rc = make_view(a, rank, nprocs, size, &view, res, err);
	rc = gfsp_agree(comm, rc, err);
	if (rc)
		goto out;

	if (a->dry_run) {
		rc = split_plan(comm, a, &view, size, res, err);
		res->seconds = gfsp_now() - t0;	/* what planning took */
		goto out;
	}

	writer_opts(a, &at, host, sparse, res, &holes, &opts);
	gfsp_watch_phase("creating the parts");
	rc = gfsp_split_create(comm, a->dst, &view, &opts, &w, &resolved, err);
	if (rc)
		goto out;	/* the writer agreed and cleaned up */

	rc = copy_in(comm, a, src, size, w, resolved ? resolved : &view,
		     bufsize, err);

	/* collective: commits if every rank succeeded, else removes all */
	gfsp_watch_phase("committing");
	psize = gfsp_split_part_size(w);
	rc = gfsp_split_finish(w, rc, size, err);
	if (rc)
		goto out;
	gfsp_log_each("wrote part.%d of '%s' (%s)", rank, a->dst,
		      gfsp_format_size(psize, sz, sizeof(sz)));
	res->seconds = gfsp_now() - t0;
	rc = gfsp_mpi_check(gfsp_reduce(&holes, &res->hole_bytes, 1,
					MPI_UINT64_T, MPI_SUM, 0, comm),
			   "MPI_Reduce", err);
	if (rc == 0)
		rc = gfsp_job_usage(comm, &res->seconds, &res->max_rss_kib,
		    &res->cpu_seconds, err);
out:
	if (src != NULL)
		gfsp_close(src, NULL);
	gfsp_view_free(&view);
	if (rc) {
		free(res->plan);
		res->plan = NULL;
	}
	return rc;
}
