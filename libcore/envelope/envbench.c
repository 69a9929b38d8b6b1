/*
 * envbench.c - measuring the MTC envelope of a storage target, and
 * replaying a synthetic many-task stage on it (envelope.h names the
 * paper).
 *
 * Method, per process count p (the ranks below p, a sub-communicator; the
 * others wait without spinning) and file size s:
 *
 *   write phase   [barrier] each process creates a file on its own node,
 *                 writes s bytes, closes it, k times -> create and write:
 *                 the phase's time split between the two in the
 *                 proportion of the time spent in each
 *   read-local    [barrier] open, read, close k files each, stored on the
 *                 reader's node (the last write repetition's files)
 *   read-remote   the same, the files stored on another node (Gfarm)
 *   read-shared   [barrier] every process reads the same k files, stored
 *                 on the node of the sub-communicator's first rank
 *
 * Each phase runs `warmup` untimed and `reps` timed repetitions with a
 * fixed amount of work: k = work / s files per process, within
 * [min_files, max_files]; a first warm-up shorter than min_time raises k
 * (calibrate).  A repetition's time runs from the release of a barrier to
 * the end of the slowest process; a process that is done waits in a
 * sleeping barrier, so that on an oversubscribed node it leaves the CPU
 * to the processes still timed.  Untimed setup (the files a read phase
 * reads, eviction from the page cache, removal) happens between the
 * barriers.
 *
 * Every file lives in one private directory under the target, which is
 * emptied and removed whatever happens.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "core.h"
#include "envelope.h"
#include "store.h"

#define NODE_MAX 256		/* a storage node's name */
#define PATH_MAX_ 4096

struct bench {
	MPI_Comm comm;			/* every rank */
	int rank, size;
	const struct gfsp_env_opts *o;
	const struct gfsp_env_method *m;
	char *dir;			/* the private directory */
	unsigned char *buf;		/* o->method.buffer bytes, aligned */
	int nodes;			/* files have nodes (Gfarm) */
	char node[NODE_MAX];		/* this rank's node ("" on POSIX) */
	char remote[NODE_MAX];		/* another node ("" if none) */
	struct gfsp_progress *prog;
	uint64_t phases;		/* measure: phases over (rank 0) */
	uint64_t tasks;			/* replay: tasks over (this rank) */
	unsigned metrics;		/* o->metrics, less what cannot be */
	const char *backend;		/* the target's store: "posix", ... */
};

/* ------------------------------------------------------------ files */

/* DIR/KIND.OWNER.I */
static const char *
fpath(const struct bench *b, char *buf, const char *kind, int owner,
      uint64_t i)
{
	snprintf(buf, PATH_MAX_, "%s/%s.%d.%" PRIu64, b->dir, kind, owner, i);
	return buf;
}

static void
placement(const char *node, struct gfsp_place *pl)
{
	pl->host = node[0] != '\0' ? node : NULL;
	pl->policy = GFSP_PLACE_STRICT;
}

/* write size bytes into f from the buffer; then fsync if asked */
static int
fill(struct bench *b, struct gfsp_file *f, uint64_t size,
     struct gfsp_error *err)
{
	uint64_t off = 0;
	size_t n;
	int rc = 0;

	while (rc == 0 && off < size) {
		n = (size_t)GFSP_MIN(size - off, (uint64_t)b->m->buffer);
		rc = gfsp_pwrite(f, b->buf, n, off, err);
		off += n;
	}
	if (rc == 0 && b->m->fsync)
		rc = gfsp_fsync(f, err);
	return rc;
}

/* a whole file of size bytes on node (untimed setup) */
static int
make_file(struct bench *b, const char *path, uint64_t size, const char *node,
	  struct gfsp_error *err)
{
	struct gfsp_place pl;
	struct gfsp_file *f;
	int rc;

	placement(node, &pl);
	rc = gfsp_create(path, 0644, &pl, &f, err);
	if (rc != 0)
		return rc;
	rc = fill(b, f, size, err);
	if (gfsp_close(f, rc == 0 ? err : NULL) != 0 && rc == 0)
		rc = GFSP_EIO;
	return rc;
}

/* open, read to the end, close; the file must hold size bytes.  Reads are
 * whole buffers (direct I/O wants aligned lengths): short at the end. */
static int
read_file(struct bench *b, const char *path, uint64_t size,
	  struct gfsp_error *err)
{
	struct gfsp_file *f;
	uint64_t off = 0;
	size_t got = 0;
	int rc, flags = GFSP_O_RDONLY;

	if (b->m->cache == GFSP_ENV_CACHE_DIRECT)
		flags |= GFSP_O_DIRECT;
	rc = gfsp_open(path, flags, 0, &f, err);
	if (rc != 0)
		return rc;
	do {
		rc = gfsp_pread(f, b->buf, b->m->buffer, off, &got, err);
		off += got;
	} while (rc == 0 && got == b->m->buffer);
	if (gfsp_close(f, rc == 0 ? err : NULL) != 0 && rc == 0)
		rc = GFSP_EIO;
	if (rc == 0 && off != size)
		rc = gfsp_error_set(err, GFSP_EIO, "'%s' holds %" PRIu64
				   " bytes, %" PRIu64 " were written", path,
				   off, size);
	return rc;
}

/* node == "" (no nodes): nothing to check */
static int
check_node(const char *path, const char *node, const char *why,
	   struct gfsp_error *err)
{
	char **hosts = NULL;
	size_t n = 0, i;
	int rc, found = 0;

	if (node[0] == '\0')
		return 0;
	rc = gfsp_where(path, &hosts, &n, err);
	for (i = 0; rc == 0 && i < n; i++)
		found |= strcmp(hosts[i], node) == 0;
	if (rc == 0 && !found)
		rc = gfsp_error_set(err, GFSP_EIO, "'%s' is stored on %s, not "
				   "on node '%s' (%s)", path,
				   n > 0 ? hosts[0] : "no node", node, why);
	gfsp_strv_free(hosts, n);
	return rc;
}

/* remove what exists of kind.owner.0 .. kind.owner.(k-1) */
static void
remove_files(const struct bench *b, const char *kind, int owner, uint64_t k)
{
	char path[PATH_MAX_];
	uint64_t i;

	for (i = 0; i < k; i++)
		(void)gfsp_unlink(fpath(b, path, kind, owner, i), NULL);
}

/* ---------------------------------------------------- timing, caches */

/* everyone starts together: a sleeping barrier (some ranks may still be
 * busy), then a tight one to line the start up */
static double
t_begin(MPI_Comm c)
{
	gfsp_idle_barrier(c);
	MPI_Barrier(c);
	return gfsp_now();
}

/* the end of a timed step: the outcome agreed over c, and *secs the
 * slowest rank's time */
static int
t_end(MPI_Comm c, double t0, int rc, double *secs, struct gfsp_error *err)
{
	double dt = gfsp_now() - t0;

	gfsp_idle_barrier(c);	/* its wake-up is not timed */
	rc = gfsp_agree(c, rc, err);
	if (rc == 0)
		rc = gfsp_mpi_check(MPI_Allreduce(&dt, secs, 1, MPI_DOUBLE,
		    MPI_MAX, c), "MPI_Allreduce", err);
	return rc;
}

/* the node-wide page cache emptied (Gfarm's data sits in its gfsd's) */
static int
drop_node_cache(struct gfsp_error *err)
{
	const char *proc = "/proc/sys/vm/drop_caches";
	int fd, rc = 0;

	sync();
	fd = open(proc, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "3\n", 2) != 2)
		rc = gfsp_error_errno(err, errno, "--cache drop on Gfarm "
				     "empties each node's page cache through "
				     "'%s', which needs root", proc);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* what a rank evicts before a timed read on POSIX (see drop_cache) */
typedef int (*evict_fn)(struct bench *b, const void *what,
			struct gfsp_error *err);

/*
 * Before a timed read: with --cache drop, the files about to be read leave
 * the page cache.  POSIX evicts each file (every rank those that mine
 * names); on Gfarm the first rank of each node empties the node's cache.
 * nodec: c split by node.
 */
static int
drop_cache(struct bench *b, MPI_Comm c, MPI_Comm nodec, evict_fn mine,
	   const void *what, struct gfsp_error *err)
{
	int rc = 0, nr;

	if (b->m->cache != GFSP_ENV_CACHE_DROP)
		return 0;
	if (!b->nodes) {
		rc = mine(b, what, err);
	} else {
		MPI_Comm_rank(nodec, &nr);
		if (nr == 0)
			rc = drop_node_cache(err);
	}
	return gfsp_agree(c, rc, err);
}

/* the files kind.owner.0 .. k-1 of a read phase, if this rank reads them
 * first (its own, or the shared ones on the first rank) */
struct phase_files {
	const char *kind;
	int owner;
	uint64_t k;
};

static int
evict_phase_files(struct bench *b, const void *what, struct gfsp_error *err)
{
	const struct phase_files *pf = what;
	char path[PATH_MAX_];
	uint64_t i;
	int rc = 0;

	for (i = 0; rc == 0 && pf->owner == b->rank && i < pf->k; i++)
		rc = gfsp_evict(fpath(b, path, pf->kind, pf->owner, i), err);
	return rc;
}

/* -------------------------------------------------------- recording */

static int
points_add(struct gfsp_envelope *e, int metric, int procs, uint64_t size,
	   uint64_t files, const double *secs, size_t n, uint64_t size_b,
	   struct gfsp_error *err)
{
	struct gfsp_env_point *pt, *np;
	double *ops, *bw;
	uint64_t nops = (uint64_t)procs * files;
	size_t i;

	np = realloc(e->points, (e->npoints + 1) * sizeof(*np));
	if (np == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	e->points = np;
	pt = &np[e->npoints];
	memset(pt, 0, sizeof(*pt));
	pt->samples = calloc(n, sizeof(*pt->samples));
	ops = calloc(n, sizeof(*ops));
	bw = calloc(n, sizeof(*bw));
	if (pt->samples == NULL || ops == NULL || bw == NULL) {
		free(pt->samples);
		free(ops);
		free(bw);
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	e->npoints++;
	pt->metric = metric;
	pt->procs = procs;
	pt->size = size;
	pt->files = files;
	pt->nsamples = n;
	for (i = 0; i < n; i++) {
		double s = secs[i] > 0 ? secs[i] : 1e-9;

		pt->samples[i].seconds = secs[i];
		pt->samples[i].ops = nops;
		pt->samples[i].bytes = nops * size_b;
		ops[i] = (double)nops / s;
		bw[i] = (double)(nops * size_b) / s;
	}
	pt->ops_s = gfsp_env_stat_of(ops, n);
	pt->bytes_s = gfsp_env_stat_of(bw, n);
	free(ops);
	free(bw);
	return 0;
}

/* ------------------------------------------------------------ phases */

struct point {
	MPI_Comm c, nodec;		/* the p ranks; c split by node */
	int p, r;			/* size and rank in c */
	uint64_t size, k;
	struct gfsp_envelope *e;
};

static int
wanted(const struct bench *b, int metric)
{
	return (b->metrics & (1u << metric)) != 0;
}

static int
total_reps(const struct bench *b)
{
	return b->m->warmup + b->m->reps;
}

/* one repetition of a phase is over (counted by rank 0, which takes
 * part in every point) */
static void
phase_done(struct bench *b)
{
	if (b->rank == 0)
		b->phases++;
	gfsp_progress_update(b->prog, b->phases);
}

/*
 * A short phase measures mostly its barriers and the scheduler: when the
 * first warm-up repetition took less than min_time, the files per process
 * grow in proportion, at most 100 times and never past the work (bytes
 * per process): only small files, whose count --files bounds, grow.  The
 * same on every rank (wall is agreed).
 */
static void
calibrate(const struct bench *b, struct point *pt, double wall)
{
	double want = b->m->min_time, f;
	uint64_t cap = b->m->work / GFSP_MAX(pt->size, 1);

	if (want <= 0 || wall >= want || pt->k >= cap)
		return;
	f = wall > 0 ? GFSP_MIN(ceil(want / wall), 100.0) : 100.0;
	pt->k = GFSP_MIN((uint64_t)((double)pt->k * f), cap);
}

/*
 * The write phase: each process creates a file on its own node, writes
 * the size into it and closes it, k times; the create and write points.
 * One phase times both steps: its wall time is split between them in the
 * proportion of the time all processes spent in each, so no file is held
 * open across a barrier and k is bounded by the work alone.  The first
 * warm-up repetition calibrates k; the last repetition's files stay, as
 * the read-local phase's.
 */
static int
write_phase(struct bench *b, struct point *pt, struct gfsp_error *err)
{
	struct gfsp_file *f;
	struct gfsp_place pl;
	char path[PATH_MAX_];
	double t0, t, in[2], sum[2], wall = 0, *cs, *ws;
	uint64_t i;
	int rep, nrep = total_reps(b), rc = 0, n = 0;

	cs = calloc((size_t)nrep, sizeof(*cs));
	ws = calloc((size_t)nrep, sizeof(*ws));
	if (cs == NULL || ws == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	rc = gfsp_agree(pt->c, rc, err);
	placement(b->node, &pl);
	for (rep = 0; rc == 0 && rep < nrep; rep++) {
		in[0] = in[1] = 0;
		t0 = t_begin(pt->c);
		for (i = 0; rc == 0 && i < pt->k; i++) {
			t = gfsp_now();
			rc = gfsp_create(fpath(b, path, "w", b->rank, i), 0644,
					 &pl, &f, err);
			in[0] += gfsp_now() - t;
			if (rc != 0)
				break;
			t = gfsp_now();
			rc = fill(b, f, pt->size, err);
			if (gfsp_close(f, rc == 0 ? err : NULL) != 0 &&
			    rc == 0)
				rc = GFSP_EIO;
			in[1] += gfsp_now() - t;
		}
		rc = t_end(pt->c, t0, rc, &wall, err);
		if (rc == 0)
			rc = gfsp_mpi_check(MPI_Allreduce(in, sum, 2,
			    MPI_DOUBLE, MPI_SUM, pt->c), "MPI_Allreduce", err);
		if (rc == 0) {
			cs[n] = sum[0] + sum[1] > 0 ?
				wall * sum[0] / (sum[0] + sum[1]) : 0;
			ws[n] = wall - cs[n];
		}
		phase_done(b);

		/* untimed: where the data went; the files go but the last */
		if (rc == 0)
			rc = check_node(fpath(b, path, "w", b->rank, 0),
					b->node, "a write is local", err);
		if (rc != 0 || rep + 1 < nrep)
			remove_files(b, "w", b->rank, pt->k);
		rc = gfsp_agree(pt->c, rc, err);
		if (rep == 0 && b->m->warmup > 0)
			calibrate(b, pt, wall);
		if (rep >= b->m->warmup)
			n++;
	}
	if (rc == 0 && wanted(b, GFSP_ENV_CREATE))
		rc = points_add(pt->e, GFSP_ENV_CREATE, pt->p, pt->size,
				pt->k, cs, (size_t)n, 0, err);
	if (rc == 0 && wanted(b, GFSP_ENV_WRITE))
		rc = points_add(pt->e, GFSP_ENV_WRITE, pt->p, pt->size,
				pt->k, ws, (size_t)n, pt->size, err);
	free(cs);
	free(ws);
	return rc;
}

/*
 * A read phase over files kind.owner.i that exist: each rank reads its own
 * (owner = its rank) or, for read-shared, everyone reads owner 0's.
 */
static int
read_phase(struct bench *b, struct point *pt, int metric, const char *kind,
	   int owner, struct gfsp_error *err)
{
	char path[PATH_MAX_];
	double t0, *rs;
	uint64_t i;
	int rep, nrep = total_reps(b), rc = 0, n = 0;

	rs = calloc((size_t)nrep, sizeof(*rs));
	if (rs == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	rc = gfsp_agree(pt->c, rc, err);
	for (rep = 0; rc == 0 && rep < nrep; rep++) {
		struct phase_files pf = { kind, owner, pt->k };

		rc = drop_cache(b, pt->c, pt->nodec, evict_phase_files, &pf,
				err);
		if (rc != 0)
			break;
		t0 = t_begin(pt->c);
		for (i = 0; rc == 0 && i < pt->k; i++)
			rc = read_file(b, fpath(b, path, kind, owner, i),
				       pt->size, err);
		rc = t_end(pt->c, t0, rc, &rs[n], err);
		phase_done(b);
		if (rep >= b->m->warmup)
			n++;
	}
	if (rc == 0)
		rc = points_add(pt->e, metric, pt->p, pt->size, pt->k, rs,
				(size_t)n, pt->size, err);
	free(rs);
	return rc;
}

/* k files kind.owner.i of pt->size bytes on node, checked there */
static int
make_files(struct bench *b, struct point *pt, const char *kind, int owner,
	   const char *node, const char *why, struct gfsp_error *err)
{
	char path[PATH_MAX_];
	uint64_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < pt->k; i++)
		rc = make_file(b, fpath(b, path, kind, owner, i), pt->size,
			       node, err);
	if (rc == 0)
		rc = check_node(fpath(b, path, kind, owner, 0), node, why,
				err);
	return rc;
}

/*
 * Every metric at one (p, size).  The write phase always runs first: it
 * calibrates k and leaves the read-local phase its files.
 */
static int
measure_point(struct bench *b, struct point *pt, struct gfsp_error *err)
{
	char shared_node[NODE_MAX];
	int rc;

	rc = write_phase(b, pt, err);
	if (rc == 0 && wanted(b, GFSP_ENV_READ_LOCAL))
		rc = read_phase(b, pt, GFSP_ENV_READ_LOCAL, "w", b->rank, err);
	remove_files(b, "w", b->rank, pt->k);

	if (rc == 0 && wanted(b, GFSP_ENV_READ_REMOTE) && b->nodes) {
		rc = gfsp_agree(pt->c, make_files(b, pt, "r", b->rank,
			       b->remote, "a remote file", err), err);
		if (rc == 0)
			rc = read_phase(b, pt, GFSP_ENV_READ_REMOTE, "r",
					b->rank, err);
		remove_files(b, "r", b->rank, pt->k);
	}

	if (rc == 0 && wanted(b, GFSP_ENV_READ_SHARED)) {
		/* on the node of c's first rank, which is comm's rank 0 */
		memcpy(shared_node, b->node, sizeof(shared_node));
		MPI_Bcast(shared_node, NODE_MAX, MPI_CHAR, 0, pt->c);
		rc = pt->r == 0 ? make_files(b, pt, "s", 0, shared_node,
					     "a shared file", err) : 0;
		rc = gfsp_agree(pt->c, rc, err);
		if (rc == 0)
			rc = read_phase(b, pt, GFSP_ENV_READ_SHARED, "s", 0,
					err);
		if (pt->r == 0)
			remove_files(b, "s", 0, pt->k);
	}
	return gfsp_agree(pt->c, rc, err);
}

/* ------------------------------------------------------ setup, teardown */

/*
 * This rank's storage node and another one.  With a host list, rank r's
 * node is entry r mod K.  Without one, on Gfarm, the node where a file
 * this rank creates lands (Gfarm prefers the client's own); on POSIX
 * there are no nodes.  The other node is the next of the ranks' nodes
 * in name order.
 */
static int
find_nodes(struct bench *b, struct gfsp_error *err)
{
	const struct gfsp_store_ops *ops;
	char path[PATH_MAX_], *all = NULL, **hosts = NULL;
	size_t nh = 0;
	int rc, r, best = -1;

	rc = gfsp_store_for(b->o->target, &ops, err);
	if (rc != 0)
		return rc;
	b->backend = ops->name;
	b->nodes = strcmp(ops->name, "posix") != 0;
	if (!b->nodes && b->o->hosts != NULL && b->rank == 0)
		gfsp_log_warn("--hosts ignored: '%s' is POSIX storage, where "
			      "files are not placed on nodes", b->o->target);
	if (!b->nodes)
		return 0;
	rc = gfsp_host_for_rank(b->o->hosts, b->rank, b->node,
				sizeof(b->node), err);
	if (rc == 0 && b->node[0] == '\0') {
		fpath(b, path, "probe", b->rank, 0);
		rc = make_file(b, path, 1, "", err);
		if (rc == 0)
			rc = gfsp_where(path, &hosts, &nh, err);
		if (rc == 0 && nh == 0)
			rc = gfsp_error_set(err, GFSP_EIO, "'%s' is on no "
					   "node", path);
		if (rc == 0)
			snprintf(b->node, sizeof(b->node), "%s", hosts[0]);
		gfsp_strv_free(hosts, nh);
		(void)gfsp_unlink(path, NULL);
	}
	rc = gfsp_agree(b->comm, rc, err);
	if (rc == 0 && (all = malloc((size_t)b->size * NODE_MAX)) == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	rc = gfsp_agree(b->comm, rc, err);
	if (rc == 0)
		rc = gfsp_mpi_check(MPI_Allgather(b->node, NODE_MAX, MPI_CHAR,
		    all, NODE_MAX, MPI_CHAR, b->comm), "MPI_Allgather", err);
	/* the smallest name above ours, else the smallest of all */
	for (r = 0; rc == 0 && r < b->size; r++) {
		const char *h = all + (size_t)r * NODE_MAX;

		if (strcmp(h, b->node) == 0)
			continue;
		if (best < 0) {
			best = r;
			continue;
		}
		const char *x = all + (size_t)best * NODE_MAX;
		int above = strcmp(h, b->node) > 0, xabove =
		    strcmp(x, b->node) > 0;

		if ((above && !xabove) ||
		    (above == xabove && strcmp(h, x) < 0))
			best = r;
	}
	if (best >= 0)
		memcpy(b->remote, all + (size_t)best * NODE_MAX, NODE_MAX);
	free(all);
	return rc;
}

/* the private directory: made by rank 0, its name sent to all */
static int
make_dir(struct bench *b, const char *what, struct gfsp_error *err)
{
	struct gfsp_stat st;
	char name[PATH_MAX_];
	int rc = 0, len;

	if (b->rank == 0) {
		rc = gfsp_stat(b->o->target, &st, err);
		if (rc == 0 && (st.mode & 0170000) != 0040000)
			rc = gfsp_error_set(err, GFSP_EINVAL, "'%s': not a "
					   "directory", b->o->target);
		snprintf(name, sizeof(name), "%s/.envelope-bench.%s.%ld.%d",
			 b->o->target, what, (long)time(NULL), (int)getpid());
		if (rc == 0)
			rc = gfsp_mkdir(name, 0755, err);
	}
	rc = gfsp_agree(b->comm, rc, err);
	len = rc == 0 ? (int)strlen(name) + 1 : 0;
	if (rc == 0)
		rc = gfsp_mpi_check(MPI_Bcast(&len, 1, MPI_INT, 0, b->comm),
				    "MPI_Bcast", err);
	if (rc == 0 && (b->dir = malloc((size_t)len)) == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	rc = gfsp_agree(b->comm, rc, err);
	if (rc == 0) {
		if (b->rank == 0)
			memcpy(b->dir, name, (size_t)len);
		rc = gfsp_mpi_check(MPI_Bcast(b->dir, len, MPI_CHAR, 0,
		    b->comm), "MPI_Bcast", err);
	}
	return rc;
}

/* everything in the directory, then the directory (collective) */
static void
remove_dir(struct bench *b)
{
	char **names = NULL, path[PATH_MAX_];
	size_t n = 0, i;
	struct gfsp_error err = { 0 };

	gfsp_quiet_barrier(b->comm);
	if (b->rank != 0 || b->dir == NULL)
		return;
	if (gfsp_readdir(b->dir, &names, &n, NULL) == 0)
		for (i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "%s/%s", b->dir, names[i]);
			(void)gfsp_unlink(path, NULL);
		}
	gfsp_strv_free(names, n);
	if (gfsp_rmdir(b->dir, &err) != 0)
		gfsp_log_warn("%s", err.msg);
}

/* pseudo-random bytes (xorshift64*): no layer can skip or squeeze them as
 * it could zeros */
static void
fill_random(unsigned char *p, size_t n, uint64_t seed)
{
	uint64_t x = 0x9e3779b97f4a7c15ull ^ seed, v;
	size_t i;

	for (i = 0; i < n; i += 8) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		v = x * 0x2545f4914f6cdd1dull;
		memcpy(p + i, &v, GFSP_MIN(8, n - i));
	}
}

static int
bench_init(struct bench *b, MPI_Comm comm, const struct gfsp_env_opts *o,
	   const char *what, struct gfsp_error *err)
{
	int rc = 0;

	memset(b, 0, sizeof(*b));
	b->comm = comm;
	b->o = o;
	b->m = &o->method;
	b->metrics = o->metrics;
	MPI_Comm_rank(comm, &b->rank);
	MPI_Comm_size(comm, &b->size);
	b->buf = gfsp_big_alloc(o->method.buffer, 4096);
	if (b->buf == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	else
		fill_random(b->buf, o->method.buffer, (uint64_t)b->rank);
	rc = gfsp_agree(comm, rc, err);
	if (rc == 0)
		rc = make_dir(b, what, err);
	if (rc == 0)
		rc = find_nodes(b, err);
	if (rc == 0 && b->nodes && b->m->cache == GFSP_ENV_CACHE_DIRECT)
		rc = gfsp_error_set(b->rank == 0 ? err : NULL, GFSP_ENOTSUP,
				   "--cache direct: Gfarm has no direct I/O "
				   "(its data is cached by the gfsd); use "
				   "--cache drop (as root) or keep");
	return gfsp_agree(comm, rc, err);
}

static void
bench_fini(struct bench *b)
{
	if (b->o->keep && b->dir != NULL)
		gfsp_log_info("the files stay in %s", b->dir);
	else
		remove_dir(b);
	free(b->dir);
	free(b->buf);
}

/* ----------------------------------------------------------- measure */

static struct json_object *
machine_json(const struct bench *b)
{
	json_object *o = json_object_new_object(), *nodes;
	char host[256] = "", mpi[MPI_MAX_LIBRARY_VERSION_STRING], *nl;
	struct utsname u;
	int len = 0;

	if (o == NULL)
		return NULL;
	gethostname(host, sizeof(host) - 1);
	json_object_object_add(o, "hostname", json_object_new_string(host));
	json_object_object_add(o, "ranks", json_object_new_int(b->size));
	json_object_object_add(o, "cores",
	    json_object_new_int((int)sysconf(_SC_NPROCESSORS_ONLN)));
	json_object_object_add(o, "memory_bytes", json_object_new_uint64(
	    (uint64_t)sysconf(_SC_PHYS_PAGES) *
	    (uint64_t)sysconf(_SC_PAGESIZE)));
	if (uname(&u) == 0) {
		char k[600];

		snprintf(k, sizeof(k), "%s %s %s", u.sysname, u.release,
			 u.machine);
		json_object_object_add(o, "kernel", json_object_new_string(k));
	}
	if (MPI_Get_library_version(mpi, &len) == MPI_SUCCESS) {
		if ((nl = strchr(mpi, '\n')) != NULL)
			*nl = '\0';
		json_object_object_add(o, "mpi", json_object_new_string(mpi));
	}
	nodes = json_object_new_object();
	if (nodes != NULL) {
		json_object_object_add(nodes, "rank0", json_object_new_string(
		    b->nodes ? b->node : host));
		json_object_object_add(nodes, "rank0_remote",
		    json_object_new_string(b->remote));
		json_object_object_add(o, "storage_nodes", nodes);
	}
	return o;
}

static char *
now_iso(void)
{
	char buf[GFSP_ISO_LEN];

	return strdup(gfsp_utc_iso(time(NULL), buf, sizeof(buf)));
}

/* the phases (each repetition of each metric's phase at each point) of
 * the whole sweep, for the progress line: bytes would not do, as
 * --min-time makes the files of a phase known only once it ran */
static uint64_t
sweep_phases(const struct bench *b)
{
	uint64_t per = 1;	/* the write phase always runs */

	per += wanted(b, GFSP_ENV_READ_LOCAL);
	per += wanted(b, GFSP_ENV_READ_SHARED);
	per += wanted(b, GFSP_ENV_READ_REMOTE) && b->nodes;
	return (uint64_t)b->o->nprocs * b->o->nsizes * per *
	       (uint64_t)total_reps(b);
}


static int
check_opts(struct bench *b, struct gfsp_error *err)
{
	if (b->o->nprocs == 0 || b->o->nsizes == 0)
		return gfsp_error_set(err, GFSP_EINVAL, "no process counts or "
				     "no sizes to measure");
	if (b->o->procs[b->o->nprocs - 1] > b->size)
		return gfsp_error_set(err, GFSP_EINVAL, "cannot measure %d "
				     "processes with %d ranks",
				     b->o->procs[b->o->nprocs - 1], b->size);
	if (b->m->reps < 1 || b->m->buffer == 0 || b->m->min_files == 0 ||
	    b->m->max_files < b->m->min_files)
		return gfsp_error_set(err, GFSP_EINVAL, "bad method: reps %d, "
				     "buffer %" PRIu64 ", files %" PRIu64
				     "..%" PRIu64, b->m->reps, b->m->buffer,
				     b->m->min_files, b->m->max_files);
	if (!b->nodes && b->metrics == 1u << GFSP_ENV_READ_REMOTE)
		return gfsp_error_set(err, GFSP_EINVAL, "read-remote: on "
				     "POSIX every file is as near as any "
				     "other: nothing to measure (read-local "
				     "stands for it)");
	if (b->nodes && wanted(b, GFSP_ENV_READ_REMOTE) &&
	    b->remote[0] == '\0' && b->o->remote_optional) {
		if (b->rank == 0)
			gfsp_log_warn("read-remote left out: every rank's "
				     "files land on '%s' (--hosts gives "
				     "ranks other nodes)", b->node);
		b->metrics &= ~(1u << GFSP_ENV_READ_REMOTE);
	}
	if (b->nodes && wanted(b, GFSP_ENV_READ_REMOTE) &&
	    b->remote[0] == '\0')
		return gfsp_error_set(err, GFSP_EINVAL, "read-remote needs a "
				     "second node, and every rank's files "
				     "land on '%s': give --hosts, run on "
				     "more nodes, or leave read-remote out "
				     "(--metrics)", b->node);
	return 0;
}

int
gfsp_env_measure(MPI_Comm comm, const struct gfsp_env_opts *o,
		struct gfsp_envelope **out, struct gfsp_error *err)
{
	struct gfsp_envelope *e;
	struct bench b;
	struct point pt;
	double t0 = gfsp_now();
	char *started = now_iso();
	size_t i, j;
	int rc, p;

	*out = NULL;
	e = calloc(1, sizeof(*e));
	rc = e == NULL ? gfsp_error_set(err, GFSP_ENOMEM, "out of memory") : 0;
	rc = gfsp_agree(comm, rc, err);
	if (rc != 0) {
		free(started);
		free(e);
		return rc;
	}
	rc = bench_init(&b, comm, o, "m", err);
	if (rc == 0)
		/* the same verdict on every rank: rank 0 tells it */
		rc = gfsp_agree(comm, check_opts(&b, b.rank == 0 ? err : NULL),
				err);
	if (rc == 0)
		b.prog = gfsp_progress_start_count(comm, "envelope-bench",
						   sweep_phases(&b), "phases");
	for (i = 0; rc == 0 && i < o->nprocs; i++) {
		p = o->procs[i];
		memset(&pt, 0, sizeof(pt));
		pt.e = e;
		pt.p = p;
		rc = gfsp_mpi_check(MPI_Comm_split(comm, b.rank < p ? 0 :
		    MPI_UNDEFINED, b.rank, &pt.c), "MPI_Comm_split", err);
		if (rc == 0 && pt.c != MPI_COMM_NULL) {
			int idx, nn;

			MPI_Comm_rank(pt.c, &pt.r);
			rc = gfsp_node_comm(pt.c, &pt.nodec, &idx, &nn, err);
			for (j = 0; rc == 0 && j < o->nsizes; j++) {
				pt.size = o->sizes[j];
				pt.k = gfsp_env_files_for(b.m, pt.size);
				gfsp_log_verbose("%d processes, %" PRIu64
						" bytes, %" PRIu64 " files "
						"each", p, pt.size, pt.k);
				rc = measure_point(&b, &pt, err);
			}
			if (pt.nodec != MPI_COMM_NULL)
				MPI_Comm_free(&pt.nodec);
			MPI_Comm_free(&pt.c);
		}
		gfsp_idle_barrier(comm);	/* the ranks left out wait */
		rc = gfsp_agree(comm, rc, err);
	}
	if (b.prog != NULL)
		gfsp_progress_finish(b.prog);
	if (rc == 0 && b.rank == 0) {
		e->target = strdup(o->target);
		e->backend = strdup(b.backend);
		e->remote_same_as_local = !b.nodes;
		e->method = o->method;
		e->nsizes = o->nsizes;
		e->nprocs = o->nprocs;
		e->sizes = malloc(o->nsizes * sizeof(*e->sizes));
		e->procs = malloc(o->nprocs * sizeof(*e->procs));
		e->machine = machine_json(&b);
		e->started = started;
		started = NULL;
		if (e->target == NULL || e->backend == NULL ||
		    e->sizes == NULL || e->procs == NULL ||
		    e->machine == NULL || e->started == NULL) {
			rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
		} else {
			memcpy(e->sizes, o->sizes, o->nsizes * sizeof(*e->sizes));
			memcpy(e->procs, o->procs, o->nprocs * sizeof(*e->procs));
		}
	}
	bench_fini(&b);
	free(started);		/* NULL when the envelope took it */
	rc = gfsp_agree(comm, rc, err);
	e->seconds = gfsp_now() - t0;
	if (rc != 0) {
		gfsp_envelope_free(e);
		return rc;
	}
	*out = e;
	return 0;
}

/* ------------------------------------------------------------ replay */

/* task t's input is local when alpha's running count steps up at t: the
 * local tasks are spread evenly, round(alpha N) of them in all */
static int
task_local(double alpha, uint64_t t)
{
	return floor((double)(t + 1) * alpha + 0.5) >
	       floor((double)t * alpha + 0.5);
}

struct stage {
	struct bench *b;
	const struct gfsp_env_shape *s;
	int keep_outputs;		/* this run's outputs stay */
	MPI_Comm nodec;
	char shared_node[NODE_MAX];
};

/* the inputs (untimed): each task's own on its runner's node or another,
 * the shared one on rank 0's node */
static int
stage_inputs(struct stage *st, struct gfsp_error *err)
{
	struct bench *b = st->b;
	char path[PATH_MAX_];
	uint64_t t;
	int rc = 0, local;

	for (t = (uint64_t)b->rank; rc == 0 && st->s->input_size >= 0 &&
	     t < st->s->tasks; t += (uint64_t)b->size) {
		local = !b->nodes || task_local(st->s->local_fraction, t);
		fpath(b, path, "in", 0, t);
		rc = make_file(b, path, (uint64_t)st->s->input_size,
			       local ? b->node : b->remote, err);
		if (rc == 0)
			rc = check_node(path, local ? b->node : b->remote,
					local ? "a local input" :
					"a remote input", err);
	}
	memcpy(st->shared_node, b->node, NODE_MAX);
	MPI_Bcast(st->shared_node, NODE_MAX, MPI_CHAR, 0, b->comm);
	if (rc == 0 && b->rank == 0 && st->s->shared_size >= 0)
		rc = make_file(b, fpath(b, path, "shared", 0, 0),
			       (uint64_t)st->s->shared_size, st->shared_node,
			       err);
	return gfsp_agree(b->comm, rc, err);
}

/* one task's reads: its own input and the shared one */
static int
task_reads(struct bench *b, const struct gfsp_env_shape *s, uint64_t task,
	   struct gfsp_error *err)
{
	char path[PATH_MAX_];
	int rc = 0;

	if (s->input_size >= 0)
		rc = read_file(b, fpath(b, path, "in", 0, task),
			       (uint64_t)s->input_size, err);
	if (rc == 0 && s->shared_size >= 0)
		rc = read_file(b, fpath(b, path, "shared", 0, 0),
			       (uint64_t)s->shared_size, err);
	return rc;
}

/* one task's output: created on its node, written, closed */
static int
task_write(struct bench *b, const struct gfsp_env_shape *s, uint64_t task,
	   struct gfsp_error *err)
{
	char path[PATH_MAX_];

	if (s->output_size < 0)
		return 0;
	return make_file(b, fpath(b, path, "out", 0, task),
			 (uint64_t)s->output_size, b->node, err);
}

/*
 * One timed run of the stage: rank r runs tasks r, r + C, ..., each
 * reading, then writing.  Free running, as a workflow system runs them;
 * with lockstep, round by round and step by step as formulas (1)-(3)
 * count them: every rank's reads of a round, a barrier, every rank's
 * writes, a barrier (a rank that failed keeps to the barriers, so none
 * waits for it).  *secs is the slowest rank's time, *rs and *ws the
 * slowest rank's time in read and in write steps.
 */
static int
stage_run(struct stage *st, double *secs, double *rs, double *ws,
	  struct gfsp_error *err)
{
	struct bench *b = st->b;
	const struct gfsp_env_shape *s = st->s;
	char path[PATH_MAX_];
	double t0, t, mine[2] = { 0, 0 }, all[2];
	uint64_t task, rounds = (s->tasks + (uint64_t)b->size - 1) /
				(uint64_t)b->size, r;
	int rc = 0, lock = b->o->lockstep;

	t0 = t_begin(b->comm);
	for (r = 0; r < rounds && (rc == 0 || lock); r++) {
		task = r * (uint64_t)b->size + (uint64_t)b->rank;
		t = gfsp_now();
		if (rc == 0 && task < s->tasks)
			rc = task_reads(b, s, task, err);
		mine[0] += gfsp_now() - t;
		if (lock)
			gfsp_quiet_barrier(b->comm);
		t = gfsp_now();
		if (rc == 0 && task < s->tasks)
			rc = task_write(b, s, task, err);
		mine[1] += gfsp_now() - t;
		if (lock)
			gfsp_quiet_barrier(b->comm);
		if (task < s->tasks)
			b->tasks++;
		gfsp_progress_update(b->prog, b->tasks);
	}
	rc = t_end(b->comm, t0, rc, secs, err);
	if (rc == 0)
		rc = gfsp_mpi_check(MPI_Allreduce(mine, all, 2, MPI_DOUBLE,
		    MPI_MAX, b->comm), "MPI_Allreduce", err);
	if (rc == 0) {
		*rs = all[0];
		*ws = all[1];
	}
	/* untimed: the outputs go (but the last run's, with keep) */
	for (task = (uint64_t)b->rank; task < s->tasks && !st->keep_outputs;
	     task += (uint64_t)b->size)
		(void)gfsp_unlink(fpath(b, path, "out", 0, task), NULL);
	return gfsp_agree(b->comm, rc, err);
}

/* POSIX --cache drop: this rank's inputs, and rank 0 the shared one */
static int
evict_inputs(struct bench *b, const void *what, struct gfsp_error *err)
{
	const struct gfsp_env_shape *s = what;
	char path[PATH_MAX_];
	uint64_t t;
	int rc = 0;

	for (t = (uint64_t)b->rank; rc == 0 && s->input_size >= 0 &&
	     t < s->tasks; t += (uint64_t)b->size)
		rc = gfsp_evict(fpath(b, path, "in", 0, t), err);
	if (rc == 0 && b->rank == 0 && s->shared_size >= 0)
		rc = gfsp_evict(fpath(b, path, "shared", 0, 0), err);
	return rc;
}

int
gfsp_env_replay(MPI_Comm comm, const struct gfsp_env_opts *o,
	       const struct gfsp_envelope *e,
	       const struct gfsp_env_shape *shape,
	       struct gfsp_env_replay *out, struct gfsp_error *err)
{
	struct bench b;
	struct stage st;
	double *rs = NULL, *ws = NULL;
	int rc, rep, n = 0, nrep, size, rank, idx, nn;

	memset(out, 0, sizeof(*out));
	memset(&st, 0, sizeof(st));
	out->shape = *shape;
	out->lockstep = o->lockstep;
	MPI_Comm_size(comm, &size);
	MPI_Comm_rank(comm, &rank);
	/* the prediction first: a bad envelope or shape costs no I/O.  The
	 * same verdict on every rank: rank 0 tells it */
	rc = gfsp_env_predict(e, shape, &out->predicted, rank == 0 ? err : NULL);
	if (rc == 0 && shape->nodes != size)
		rc = gfsp_error_set(rank == 0 ? err : NULL, GFSP_EINVAL, "the stage runs %d tasks "
				   "at a time, one per rank: run the replay "
				   "on %d ranks (mpiexec -n %d), not %d",
				   shape->nodes, shape->nodes, shape->nodes,
				   size);
	rc = gfsp_agree(comm, rc, err);
	if (rc != 0)
		return rc;
	rc = bench_init(&b, comm, o, "r", err);
	nrep = total_reps(&b);
	st.b = &b;
	st.s = shape;
	out->reps = o->method.reps;
	out->seconds = calloc((size_t)nrep, sizeof(double));
	rs = calloc((size_t)nrep, sizeof(double));
	ws = calloc((size_t)nrep, sizeof(double));
	if (rc == 0 && (out->seconds == NULL || rs == NULL || ws == NULL))
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	rc = gfsp_agree(comm, rc, err);
	if (rc == 0 && b.nodes && shape->input_size >= 0 &&
	    shape->local_fraction < 1 && b.remote[0] == '\0')
		rc = gfsp_error_set(err, GFSP_EINVAL, "remote inputs need a "
				   "second node, and every rank's files land "
				   "on '%s': give --hosts or run on more "
				   "nodes", b.node);
	rc = gfsp_agree(comm, rc, err);
	if (rc == 0)
		rc = gfsp_node_comm(comm, &st.nodec, &idx, &nn, err);
	if (rc == 0) {
		b.prog = gfsp_progress_start_count(comm,
		    "envelope-bench replay", shape->tasks * (uint64_t)nrep,
		    "tasks");
		rc = stage_inputs(&st, err);
	}
	for (rep = 0; rc == 0 && rep < nrep; rep++) {
		rc = drop_cache(&b, comm, st.nodec, evict_inputs, shape, err);
		st.keep_outputs = o->keep && rep + 1 == nrep;
		if (rc == 0)
			rc = stage_run(&st, &out->seconds[n], &rs[n], &ws[n],
				       err);
		if (rep >= o->method.warmup)
			n++;
	}
	if (b.prog != NULL)
		gfsp_progress_finish(b.prog);
	if (st.nodec != MPI_COMM_NULL)
		MPI_Comm_free(&st.nodec);
	bench_fini(&b);
	if (rc == 0) {
		out->read_s = gfsp_env_stat_of(rs, (size_t)n).median;
		out->write_s = gfsp_env_stat_of(ws, (size_t)n).median;
		/* the samples stay in run order; the statistics sort a copy */
		memcpy(rs, out->seconds, (size_t)n * sizeof(*rs));
		out->stage = gfsp_env_stat_of(rs, (size_t)n);
		out->reps = n;
	}
	free(rs);
	free(ws);
	if (rc != 0) {
		gfsp_env_replay_free(out);
		return rc;
	}
	out->error = (out->predicted.total_s - out->stage.median) /
		     out->stage.median;
	return 0;
}

void
gfsp_env_replay_free(struct gfsp_env_replay *r)
{
	free(r->seconds);
	r->seconds = NULL;
}

/* ------------------------------------------------------- replay report */

struct json_object *
gfsp_env_replay_json(const char *target, const struct gfsp_env_replay *r)
{
	const struct gfsp_env_shape *sh = &r->shape;
	json_object *o, *a;
	double secs = 0;
	int64_t per_task = 0;
	int i, oom = 0;

	/* the common members: ranks C, one per node; seconds and bytes
	 * those of the timed runs (each task writes its output, reads its
	 * input and the shared input) */
	for (i = 0; i < r->reps; i++)
		secs += r->seconds[i];
	per_task = GFSP_MAX(sh->output_size, 0) + GFSP_MAX(sh->input_size, 0) +
		   GFSP_MAX(sh->shared_size, 0);
	o = gfsp_json_doc("envelope-bench", NULL, NULL, sh->nodes, secs,
			 (int64_t)sh->tasks * per_task * r->reps);
	if (o == NULL)
		return NULL;
	json_object_object_add(o, "mode", json_object_new_string("replay"));
	json_object_object_add(o, "target", json_object_new_string(target));
	json_object_object_add(o, "lockstep",
			       json_object_new_boolean(r->lockstep));
	a = json_object_new_array();
	for (i = 0; a != NULL && i < r->reps; i++)
		json_object_array_add(a, json_object_new_double(r->seconds[i]));
	json_object_object_add(o, "measured_seconds", a);
	json_object_object_add(o, "measured",
			       gfsp_env_stat_json(&r->stage, &oom));
	json_object_object_add(o, "measured_read_steps_s",
			       json_object_new_double(r->read_s));
	json_object_object_add(o, "measured_write_steps_s",
			       json_object_new_double(r->write_s));
	json_object_object_add(o, "prediction",
			       gfsp_env_prediction_json(&r->shape,
							&r->predicted));
	json_object_object_add(o, "predicted_s",
			       json_object_new_double(r->predicted.total_s));
	json_object_object_add(o, "error", json_object_new_double(r->error));
	if (oom) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

void
gfsp_env_replay_print(FILE *out, const char *target,
		      const struct gfsp_env_replay *r)
{
	gfsp_env_prediction_print(out, &r->shape, &r->predicted);
	fprintf(out, "\nreplay on %s: %d runs%s\n", target, r->reps,
		r->lockstep ? ", in lockstep" : "");
	fprintf(out, "  measured   %.3f s median [%.3f..%.3f]  (slowest "
		"rank's read steps %.3f s, write steps %.3f s)\n",
		r->stage.median, r->stage.min, r->stage.max, r->read_s,
		r->write_s);
	fprintf(out, "  predicted  %.3f s\n", r->predicted.total_s);
	fprintf(out, "  error      %+.1f%%\n", 100 * r->error);
}
