/*
 * stage.c - stage-in and stage-out (stage.h): the collective run around
 * the transfer engine (its plan: stage_plan.c; --delete: stage_delete.c).
 *
 * stage-in: rank 0 lists the sources and every rank gets the list.  Each
 * node needs every file (unless --scatter), so a file is read from shared
 * storage once and forwarded: the ranks with the same number on their
 * node form a "slot" communicator across the nodes, a file's pieces go to
 * the slots by size (largest first, to the least loaded), and within its
 * slot a piece is read by the node that has read the fewest bytes so far
 * and broadcast to the others:
 *
 *   node A: local 0 --- slot 0 --- local 0 :node B     piece -> slot, reader
 *           local 1 --- slot 1 --- local 1
 *
 * With --scatter a file goes to one node (its slot is one rank of all
 * ranks) and nothing is forwarded.
 *
 * stage-out: each node lists its own SRC and writes to DEST/NODE/ (or, with
 * --merge, to DEST/, after rank 0 checked that no two nodes hold the same
 * name); a node's files are spread over its own ranks.
 *
 * In both, a file larger than a few chunks is cut into pieces that several
 * ranks of a node write into its one temporary file (not when it is
 * compressed, and not to Gfarm, where a file lives on one node), and the
 * node's first rank installs it once every piece is in.
 *
 * Phases (each ends in gfsp_agree, so no rank waits for one that failed):
 *   setup   nodes, the local root, the state directory (locked)
 *   list    the entries, on every rank that needs them
 *   check   which files are already there (skipped everywhere or nowhere)
 *   dirs    directories, by each node's first rank
 *   copy    every rank's pieces (gfsp_xfer_run)
 *   finish  split files installed; links made; directory times set
 *   report  failures and statistics gathered at rank 0
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "core.h"
#include "dst.h"
#include "stage.h"
#include "stage_impl.h"
#include "zfile.h"

/* ------------------------------------------------------------- setup */

/* Confine paths below root (store.h) for this run, with flags (a
 * destination: GFSP_CONFINE_SAFE); stage_free undoes it. */
static int
confine(struct stage *s, const char *root, int flags, struct gfsp_error *err)
{
	char **v;
	int rc = gfsp_confine_dir(root, flags, err);

	if (rc)
		return rc;
	v = realloc(s->confined, (s->nconfined + 1) * sizeof(*v));
	if (v != NULL)
		s->confined = v;
	if (v == NULL || (v[s->nconfined] = strdup(root)) == NULL) {
		gfsp_unconfine(root);
		return OOM(err);
	}
	s->nconfined++;
	return 0;
}

/* The directory that holds path (a copy), for a state next to a file. */
static char *
parent_of(const char *path)
{
	char *s = strdup(path), *slash;

	if (s == NULL)
		return NULL;
	slash = strrchr(s, '/');
	if (slash == NULL) {
		free(s);
		return strdup(".");
	}
	if (slash == s)
		slash[1] = '\0';
	else
		*slash = '\0';
	return s;
}

static int
setup(struct stage *s, struct gfsp_error *err)
{
	const struct gfsp_stage_opts *o = s->o;
	struct gfsp_stat st = { 0 };
	char *src = NULL;
	int rc, color, i;
	long cores;

	MPI_Comm_rank(s->comm, &s->rank);
	MPI_Comm_size(s->comm, &s->nprocs);
	gfsp_node_name(s->nodename, sizeof(s->nodename));
	rc = gfsp_node_comm(s->comm, &s->node, &s->nindex, &s->nnodes, err);
	if (rc)
		return rc;
	MPI_Comm_rank(s->node, &s->lrank);
	MPI_Comm_size(s->node, &s->ppn);
	cores = sysconf(_SC_NPROCESSORS_ONLN);
	s->movers = cores > 0 ? (int)GFSP_MIN((long)s->ppn, cores) : s->ppn;
	rc = gfsp_mpi_check(gfsp_allreduce(&s->movers, &s->min_movers, 1,
					  MPI_INT, MPI_MIN, s->comm),
			   "MPI_Allreduce", err);
	if (rc)
		return rc;
	/* the slot communicators: one rank of each node, by node */
	color = s->lrank;
	rc = gfsp_mpi_check(MPI_Comm_split(s->comm, color, s->nindex,
					   &s->slot), "MPI_Comm_split", err);
	if (rc)
		return rc;

	/* the roots of this node */
	if (o->way == GFSP_STAGE_IN) {
		s->root = gfsp_node_path(o->dst);
		s->local = s->root ? strdup(s->root) : NULL;
	} else {
		src = gfsp_node_path(o->src[0]);
		if (src == NULL)
			return OOM(err);
		rc = gfsp_stat(src, &st, err);
		if (rc == 0)
			s->local = S_ISDIR(st.mode) ? strdup(src)
				 : parent_of(src);
		if (rc == 0 && o->merge)
			s->root = strdup(o->dst);
		else if (rc == 0 && asprintf(&s->root, "%s/%s", o->dst,
					     s->nodename) < 0)
			s->root = NULL;
		free(src);
		if (rc)
			goto agree;
	}
	if (s->root == NULL || s->local == NULL)
		rc = OOM(err);
	/* DEST (DEST/NODE) neither in our state nor named as one of ours:
	 * refused before anything is made */
	if (rc == 0)
		rc = gfsp_stage_check_dst("DEST ", s->root, err);
	/* the source trees: nothing below them followed (a directory
	 * swapped for a link between its listing and its reading) */
	if (rc == 0 && o->way == GFSP_STAGE_OUT && S_ISDIR(st.mode))
		rc = confine(s, s->local, 0, err);
	for (i = 0; rc == 0 && o->way == GFSP_STAGE_IN && i < o->nsrc; i++)
		if (gfsp_stat(o->src[i], &st, NULL) == 0 && S_ISDIR(st.mode))
			rc = confine(s, o->src[i], 0, err);
agree:
	return gfsp_agree(s->comm, rc, err);
}

/*
 * DEST's name, looked up now, still leads to the directory confined (held
 * open since before the copy), else an error saying what was done (what).
 * With --delete a DEST that is a symbolic link fails too (the name is not
 * followed): whoever can write the directory holding it can point it
 * elsewhere between two runs or two phases; without it DEST is followed
 * as given, as cp would, but must lead to the directory held.  id: the
 * directory held (gfsp_confined_same).
 */
int
gfsp_stage_same_root(const struct stage *s, const char *what,
		     uint64_t id[2], struct gfsp_error *err)
{
	struct gfsp_error e = { 0 };
	int del = s->o->delete;
	int rc = gfsp_confined_same(s->root, !del, id, &e);

	if (rc)
		rc = gfsp_error_set(err, rc, "%s%s: %s (DEST must be %s)",
				   del ? "--delete refused, " : "", what, e.msg,
				   del ? "a directory itself, the same from the "
				   "copy to the delete" : "one directory for "
				   "all the ranks of a node");
	return rc;
}

/*
 * Before the copy, on every rank: each confined DEST on its own, so each
 * checks its own hold, and all of a node must hold one directory (a swap
 * between two ranks' opening and checking would leave them two, each
 * with its name right at its own check).
 */
static int
same_root_all(const struct stage *s, struct gfsp_error *err)
{
	uint64_t id[2] = { 0, 0 }, lo[2], hi[2];
	int rc = gfsp_stage_same_root(s, "nothing staged", id, err);

	rc = gfsp_agree(s->comm, rc, err);
	if (rc == 0)
		rc = gfsp_mpi_check(gfsp_allreduce(id, lo, 2, MPI_UINT64_T,
						  MPI_MIN, s->node),
				   "MPI_Allreduce", err);
	if (rc == 0)
		rc = gfsp_mpi_check(gfsp_allreduce(id, hi, 2, MPI_UINT64_T,
						  MPI_MAX, s->node),
				   "MPI_Allreduce", err);
	if (rc == 0 && (lo[0] != hi[0] || lo[1] != hi[1]))
		rc = gfsp_error_set(err, GFSP_ESTALE, "%snothing staged: "
				   "'%s' was swapped while the "
				   "ranks of %s opened it: they hold different "
				   "directories", s->o->delete ?
				   "--delete refused, " : "", s->root,
				   s->nodename);
	return rc;
}

/* path's last component (path without trailing slashes) */
static const char *
base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * The directory to open a state directory from when no confined root
 * holds it (a single file's directory, --state-dir): its parent, opened
 * now following no other user's link on the way (GFSP_CONFINE_SAFE).
 * OUT *pfd its descriptor, or AT_FDCWD for a URL (Gfarm's).
 */
static int
state_parent(const char *statedir, int *pfd, struct gfsp_error *err)
{
	char *parent = parent_of(statedir);
	int rc;

	*pfd = AT_FDCWD;
	if (parent == NULL)
		return OOM(err);
	/* "." is the working directory, which we hold; "/" no one swaps */
	if (strcmp(parent, ".") == 0 || strcmp(parent, "/") == 0) {
		free(parent);
		return 0;
	}
	rc = gfsp_confine_dir(parent, GFSP_CONFINE_NAMES | GFSP_CONFINE_SAFE,
			      err);
	if (rc == 0 && strstr(parent, "://") == NULL) {
		*pfd = gfsp_confined_fd(parent);
		gfsp_unconfine(parent);
		if (*pfd < 0)
			rc = gfsp_error_errno(err, errno, "cannot open '%s'",
					     parent);
	}
	free(parent);
	return rc;
}

/* Once the sources are listed: the destination roots and the state. */
static int
prepare(struct stage *s, struct gfsp_error *err)
{
	const struct gfsp_stage_opts *o = s->o;
	char *statedir = NULL;
	int rc = 0, pfd = AT_FDCWD;

	if (o->dry_run)
		return 0;
	/* the destination roots: one rank makes each; nothing below DEST
	 * is followed from then on (a DEST/NODE -> /elsewhere someone
	 * planted is an error) */
	if (o->way == GFSP_STAGE_OUT && s->rank == 0)
		rc = gfsp_mkdirs(o->dst, 0755, err);
	rc = gfsp_agree(s->comm, rc, err);
	if (rc == 0 && o->way == GFSP_STAGE_OUT)
		rc = confine(s, o->dst, GFSP_CONFINE_SAFE, err);
	rc = gfsp_agree(s->comm, rc, err);
	if (rc)
		return rc;
	if (s->lrank == 0)
		rc = gfsp_mkdirs(s->root, 0755, err);
	rc = gfsp_agree(s->comm, rc, err);
	if (rc == 0 && o->way == GFSP_STAGE_IN)
		rc = confine(s, s->root, GFSP_CONFINE_SAFE, err);
	rc = gfsp_agree(s->comm, rc, err);
	/* every rank of a node must hold one DEST, the one its name leads
	 * to now (a swap between two ranks' opening would leave them two);
	 * --delete removes what DEST holds: DEST must be the directory held
	 * now, not one a link or a swap of its name led the confinement to
	 * (checked again before deleting) */
	if (rc == 0 && o->way == GFSP_STAGE_IN)
		rc = same_root_all(s, err);
	rc = gfsp_agree(s->comm, rc, err);
	if (rc)
		return rc;

	/* the state: the node's first rank creates and locks it.  In the
	 * local root, it is opened from the directory confined there, not
	 * by name: DEST swapped for a link meanwhile would put our lock,
	 * index and journals in the directory it leads to */
	if (o->state_dir != NULL &&
	    (statedir = gfsp_node_path(o->state_dir)) != NULL) {
		size_t len = strlen(statedir);

		while (len > 1 && statedir[len - 1] == '/')
			statedir[--len] = '\0';
	} else if (o->state_dir != NULL)
		statedir = NULL;
	else if (asprintf(&statedir, "%s/%s", s->local, GFSP_STATE_DIR) < 0)
		statedir = NULL;
	else
		pfd = gfsp_confined_fd(s->local);
	if (statedir == NULL)
		rc = OOM(err);
	else if (pfd < 0)
		rc = state_parent(statedir, &pfd, err);
	if (rc == 0 && s->lrank == 0)
		rc = gfsp_state_openat(pfd, pfd == AT_FDCWD ? statedir :
				       base_of(statedir), statedir, s->rank, 1,
				       &s->st, err);
	rc = gfsp_agree(s->comm, rc, err);
	if (rc == 0 && s->lrank != 0)
		rc = gfsp_state_openat(pfd, pfd == AT_FDCWD ? statedir :
				       base_of(statedir), statedir, s->rank, 0,
				       &s->st, err);
	if (pfd >= 0)
		close(pfd);
	free(statedir);
	/* a killed run's temporaries that no record names: before anyone
	 * writes */
	if (rc == 0 && s->lrank == 0 && gfsp_state_interrupted(s->st))
		gfsp_xfer_sweep(s->root, s->st);
	return gfsp_agree(s->comm, rc, err);
}

/* -------------------------------------------------------------- list */

/*
 * The lister, before the list goes out: which files large enough to be
 * split are gfsz (decompressed frame by frame, in one piece), so that no
 * other rank opens them to find out.
 */
static void
mark_gfsz(struct stage *s)
{
	struct gfsp_error e = { 0 };
	unsigned char hdr[GFSP_Z_HEADER_SIZE];
	struct gfsp_file *h;
	uint64_t csize;
	size_t i, got;
	int isz;

	if (s->o->x.raw)
		return;
	for (i = 0; i < s->fl.n; i++) {
		struct gfsp_sfile *f = &s->fl.v[i];

		if (f->type != GFSP_SF_FILE || f->st.size <= 2 * piece_size(s) ||
		    gfsp_open_listed(f->src, GFSP_O_RDONLY, &f->st, 1, &h,
				     &e) != 0) {
			gfsp_error_clear(&e);	/* the copy will say why */
			continue;
		}
		isz = 0;
		if (gfsp_pread(h, hdr, sizeof(hdr), 0, &got, &e) == 0)
			gfsp_z_detect(hdr, got, NULL, &isz, &csize, &e);
		gfsp_close(h, NULL);
		gfsp_error_clear(&e);
		f->gfsz = isz;
	}
}

static int
list_in(struct stage *s, struct gfsp_error *err)
{
	int i, rc = 0;

	if (s->rank == 0) {
		for (i = 0; rc == 0 && i < s->o->nsrc; i++)
			rc = gfsp_flist_add_tree(&s->fl, s->o->src[i], err);
		if (rc == 0 && s->o->manifest != NULL)
			rc = gfsp_flist_add_manifest(&s->fl, s->o->manifest,
						    err);
		if (rc == 0)
			rc = gfsp_flist_finish(&s->fl, err);
		if (rc == 0)
			mark_gfsz(s);
	}
	rc = gfsp_agree(s->comm, rc, err);
	if (rc == 0)
		rc = gfsp_flist_bcast(s->comm, 0, &s->fl, err);
	return gfsp_agree(s->comm, rc, err);
}

struct named {
	char *rel, *src;
	int node;
};

static int
named_cmp(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->rel, y->rel);

	return c ? c : x->node - y->node;
}

/* Rank 0: the entries of the packed lists (one a node) that two nodes
 * would both make, into *bad (node: which node's entry). */
static int
find_conflicts(const unsigned char *buf, const int *lens, const int *displs,
	       int n, struct gfsp_flist *bad, struct gfsp_error *err)
{
	struct gfsp_flist one;
	struct named *v = NULL;
	size_t nv = 0, cap = 0, i, j;
	int k, rc = 0;

	for (k = 0; rc == 0 && k < n; k++) {
		rc = gfsp_flist_unpack(&one, buf + displs[k], (size_t)lens[k],
				       err);
		for (i = 0; rc == 0 && i < one.n; i++) {
			if (one.v[i].type == GFSP_SF_DIR)
				continue;
			if (gfsp_grow(&v, &cap, nv + 1, sizeof(*v)) != 0) {
				rc = OOM(err);
				break;
			}
			v[nv].rel = one.v[i].rel;
			v[nv].src = one.v[i].src;
			v[nv++].node = k;
			one.v[i].rel = one.v[i].src = NULL;
		}
		gfsp_flist_free(&one);
	}
	if (rc == 0 && nv > 1)
		qsort(v, nv, sizeof(*v), named_cmp);
	for (i = 1; rc == 0 && i < nv; i++) {
		if (strcmp(v[i - 1].rel, v[i].rel) != 0)
			continue;
		for (j = i - 1; rc == 0 && j <= i; j++) {
			struct gfsp_sfile *f;

			if (gfsp_grow(&bad->v, &bad->cap, bad->n + 1,
			    sizeof(*bad->v)) != 0) {
				rc = OOM(err);
				break;
			}
			f = &bad->v[bad->n++];
			memset(f, 0, sizeof(*f));
			f->rel = strdup(v[j].rel);
			f->src = strdup(v[j].src);
			f->node = v[j].node;
			if (f->rel == NULL || f->src == NULL)
				rc = OOM(err);
		}
	}
	for (i = 0; i < nv; i++) {
		free(v[i].rel);
		free(v[i].src);
	}
	free(v);
	return rc;
}

/*
 * --merge: no two nodes may make the same file or link.  Rank 0 gathers
 * the lists of the nodes' first ranks and every rank learns the entries
 * of its node that clash; they fail, naming the clash, and the rest goes.
 */
static int
merge_conflicts(struct stage *s, struct gfsp_error *err)
{
	MPI_Comm leaders = MPI_COMM_NULL;
	struct gfsp_flist bad = { 0 };
	unsigned char *buf = NULL, *rbuf = NULL;
	size_t len = 0, i, j;
	int *lens = NULL, *displs = NULL, n, k, rc, total = 0;

	rc = gfsp_mpi_check(MPI_Comm_split(s->comm, s->lrank == 0 ? 0 :
					   MPI_UNDEFINED, s->rank, &leaders),
			   "MPI_Comm_split", err);
	if (rc == 0 && leaders != MPI_COMM_NULL) {
		MPI_Comm_size(leaders, &n);
		rc = gfsp_flist_pack(&s->fl, &buf, &len, err);
		if (rc == 0 && len > INT32_MAX)
			rc = gfsp_error_set(err, GFSP_ENOTSUP, "--merge: too "
			    "many entries to compare across nodes");
		k = rc ? 0 : (int)len;
		lens = calloc((size_t)n, sizeof(int));
		displs = calloc((size_t)n, sizeof(int));
		if (lens == NULL || displs == NULL)
			return OOM(err);	/* MPI has failed us first */
		gfsp_gather(&k, 1, MPI_INT, lens, 1, MPI_INT, 0, leaders);
		if (s->rank == 0) {
			for (k = 0; k < n; k++) {
				displs[k] = total;
				total += lens[k];
			}
			rbuf = malloc(total ? (size_t)total : 1);
		}
		MPI_Gatherv(buf, rc ? 0 : (int)len, MPI_BYTE, rbuf, lens,
			    displs, MPI_BYTE, 0, leaders);
		if (s->rank == 0 && rc == 0)
			rc = rbuf == NULL ? OOM(err) : find_conflicts(rbuf,
			    lens, displs, n, &bad, err);
		if (gfsp_flist_bcast(leaders, 0, &bad, err) != 0 && rc == 0)
			rc = GFSP_EMPI;
		MPI_Comm_free(&leaders);
	}
	rc = gfsp_agree(s->comm, rc, err);
	if (rc == 0)
		rc = gfsp_flist_bcast(s->node, 0, &bad, err);
	for (i = 0; rc == 0 && i < bad.n; i++) {
		if (bad.v[i].node != s->nindex)
			continue;
		for (j = 0; j < s->fl.n; j++) {
			if (strcmp(s->fl.v[j].rel, bad.v[i].rel) != 0)
				continue;
			s->res[j].rc = GFSP_EEXIST;
			if (asprintf(&s->res[j].msg, "'%s': another node also "
				     "stages '%s' (--merge needs distinct "
				     "names)", s->fl.v[j].src,
				     bad.v[i].rel) < 0)
				s->res[j].msg = NULL;
		}
	}
	gfsp_flist_free(&bad);
	free(buf);
	free(rbuf);
	free(lens);
	free(displs);
	return rc;
}

static int
list_out(struct stage *s, struct gfsp_error *err)
{
	char *src = NULL, *arg = NULL;
	size_t i;
	int rc = 0;

	if (s->lrank == 0) {
		/* SRC's contents, whatever its trailing slash says */
		src = gfsp_node_path(s->o->src[0]);
		if (src == NULL || asprintf(&arg, "%s/", src) < 0)
			rc = OOM(err);
		if (rc == 0) {
			struct gfsp_stat st;

			rc = gfsp_stat(src, &st, err);
			if (rc == 0)
				rc = gfsp_flist_add_tree(&s->fl,
				    S_ISDIR(st.mode) ? arg : src, err);
		}
		if (rc == 0)
			rc = gfsp_flist_finish(&s->fl, err);
		if (rc == 0)
			mark_gfsz(s);
		free(src);
		free(arg);
	}
	rc = gfsp_agree(s->comm, rc, err);
	if (rc == 0)
		rc = gfsp_flist_bcast(s->node, 0, &s->fl, err);
	rc = gfsp_agree(s->comm, rc, err);
	for (i = 0; rc == 0 && i < s->fl.n; i++)
		s->fl.v[i].node = s->nindex;
	if (rc == 0) {
		s->res = calloc(s->fl.n + 1, sizeof(*s->res));
		if (s->res == NULL)
			rc = OOM(err);
	}
	rc = gfsp_agree(s->comm, rc, err);
	if (rc == 0 && s->o->merge && s->nnodes > 1)
		rc = merge_conflicts(s, err);
	return gfsp_agree(s->comm, rc, err);
}

/* ------------------------------------------------------------- phases */

/* Directories: the node's first rank, parents first. */
static void
make_dirs(struct stage *s)
{
	size_t i;

	if (s->lrank != 0)
		return;
	for (i = 0; i < s->fl.n; i++)
		if (s->fl.v[i].type == GFSP_SF_DIR)
			gfsp_xfer_make(s->x, (uint32_t)i);
}

/* A split file is whole on this node: every piece's rank succeeded; its
 * segment hashes, one rank's each, are ORed together at the first rank. */
static int
finish_split(struct stage *s, struct gfsp_error *err)
{
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < s->nsplit; i++) {
		uint32_t f = (uint32_t)s->split[i];
		struct gfsp_fresult *r = &s->res[f];
		uint64_t nseg = (s->fl.v[f].st.size + GFSP_SEG_SIZE_DEFAULT -
				 1) / GFSP_SEG_SIZE_DEFAULT, *seg;
		int bad = r->rc != 0, anybad = 0;

		if (!on_this_node(s, f))
			continue;
		seg = calloc(nseg ? nseg : 1, sizeof(*seg));
		if (seg == NULL)
			return OOM(err);
		if (r->seg != NULL)
			memcpy(seg, r->seg, GFSP_MIN(r->nseg, nseg) *
			       sizeof(*seg));
		rc = gfsp_mpi_check(gfsp_allreduce(MPI_IN_PLACE, seg, (int)nseg,
						  MPI_UINT64_T, MPI_BOR,
						  s->node), "MPI_Allreduce",
				   err);
		if (rc == 0)
			rc = gfsp_mpi_check(gfsp_allreduce(&bad, &anybad, 1,
							  MPI_INT, MPI_MAX,
							  s->node),
					   "MPI_Allreduce", err);
		if (rc == 0 && s->lrank == 0 && !anybad) {
			free(r->seg);
			r->seg = seg;
			r->nseg = nseg;
			seg = NULL;
			gfsp_xfer_finish(s->x, f);
		}
		free(seg);
	}
	return rc;
}

/* The directories' modes and times, once nothing more changes in them */
void
gfsp_stage_dir_times(struct stage *s)
{
	char *held = NULL;

	gfsp_xfer_dir_times(s->x);
	/* stage-in of one "DIR/" (and nothing else): DEST is its copy, and
	 * gets its times as the directories below did; "DEST/.", the
	 * directory confined, not whatever DEST's name leads to now */
	if (s->o->way != GFSP_STAGE_IN || s->fl.nroots != 1 ||
	    s->o->nsrc != 1 || s->o->manifest != NULL)
		return;
	if (asprintf(&held, "%s/.", s->root) < 0)
		held = NULL;
	if (held == NULL || gfsp_utimens(held, s->fl.root.atime,
					 s->fl.root.atime_ns, s->fl.root.mtime,
					 s->fl.root.mtime_ns, NULL) != 0)
		gfsp_log_warn("cannot set the times of '%s'", s->root);
	free(held);
}

/* Links, then the times of directories: the node's first rank. */
static void
make_links(struct stage *s)
{
	size_t i, k;

	if (s->lrank != 0)
		return;
	for (i = 0; i < s->fl.n; i++) {
		const struct gfsp_sfile *f = &s->fl.v[i];

		if (!on_this_node(s, i))
			continue;
		if (f->type == GFSP_SF_HARDLINK) {
			/* its first name must have made it here */
			for (k = 0; k < s->fl.n; k++)
				if (strcmp(s->fl.v[k].rel, f->link) == 0)
					break;
			if (k < s->fl.n && s->res[k].rc != 0) {
				s->res[i].rc = GFSP_EIO;
				if (asprintf(&s->res[i].msg, "'%s': not linked: "
					     "'%s' failed", f->src,
					     s->fl.v[k].src) < 0)
					s->res[i].msg = NULL;
				continue;
			}
		}
		if (f->type == GFSP_SF_SYMLINK || f->type == GFSP_SF_HARDLINK)
			gfsp_xfer_make(s->x, (uint32_t)i);
	}
	gfsp_stage_dir_times(s);
}

/* ------------------------------------------------------------ report */

static json_object *
failure_json(const char *path, const char *node, const char *msg)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "path", json_object_new_string(path));
	json_object_object_add(o, "node", json_object_new_string(node));
	json_object_object_add(o, "error", json_object_new_string(msg));
	return o;
}

/*
 * GFSPLIT_TEST_HOOK="PHASE:CMD": rank 0 runs CMD (sh -c) as PHASE begins,
 * the others waiting for it.  For the tests only, like GFSPLIT_FAULT: it
 * changes the file system exactly between two phases (DEST swapped after
 * the copy, before --delete), which a racing loop hits only by luck.
 */
static void
test_hook(const struct stage *s, const char *phase)
{
	const char *env = getenv("GFSPLIT_TEST_HOOK");
	size_t len = strlen(phase);

	if (env == NULL || strncmp(env, phase, len) != 0 || env[len] != ':')
		return;
	if (s->rank == 0 && system(env + len + 1) != 0)
		gfsp_log_warn("GFSPLIT_TEST_HOOK: '%s' failed", env + len + 1);
	MPI_Barrier(s->comm);
}

/* -v: what this rank did to each entry, one line each (failures are
 * reported as errors).  Collective over the node: a file the node's ranks
 * wrote in pieces was resumed by each of them. */
static void
list_done(const struct stage *s)
{
	const struct gfsp_fresult *r;
	const struct gfsp_sfile *f;
	uint64_t resumed[512];	/* a window of files: no allocation that
				 * could fail on one rank of a collective */
	char a[32], b[32];
	size_t i, w, n;

	if (gfsp_log_level() < GFSP_LOG_VERBOSE)
		return;
	for (w = 0; w < s->fl.n; w += n) {
		n = GFSP_MIN(s->fl.n - w, sizeof(resumed) / sizeof(resumed[0]));
		for (i = 0; i < n; i++)
			resumed[i] = s->res[w + i].resumed;
		gfsp_allreduce(MPI_IN_PLACE, resumed, (int)n, MPI_UINT64_T,
			       MPI_SUM, s->node);
		for (i = w; i < w + n; i++) {
			f = &s->fl.v[i];
			r = &s->res[i];
			if (r->rc != 0 || f->type == GFSP_SF_DIR)
				continue;
			if (r->skipped && s->lrank == 0 && on_this_node(s, i))
				gfsp_log_each("skipped '%s' on %s: already "
					      "there", f->rel, s->nodename);
			else if (r->installed && f->type == GFSP_SF_SYMLINK)
				gfsp_log_each("linked '%s' on %s -> '%s'",
					      f->rel, s->nodename, f->link);
			else if (r->installed && f->type == GFSP_SF_HARDLINK)
				gfsp_log_each("hard-linked '%s' on %s to '%s'",
					      f->rel, s->nodename, f->link);
			else if (r->installed && resumed[i - w] > 0)
				gfsp_log_each("resumed '%s' on %s (%s, %s of "
				    "it found done)", f->rel, s->nodename,
				    gfsp_format_size(f->st.size, a, sizeof(a)),
				    gfsp_format_size(resumed[i - w], b,
						     sizeof(b)));
			else if (r->installed)
				gfsp_log_each("copied '%s' on %s (%s)", f->rel,
				    s->nodename, gfsp_format_size(f->st.size,
				    a, sizeof(a)));
		}
	}
}

/*
 * Rank 0 gets every rank's failures (one message per entry and node) and
 * the summed statistics.  A failure is sent as "index\tnode\tmessage\n".
 */
static int
report(struct stage *s, struct gfsp_stage_result *res, struct gfsp_error *err)
{
	char *text = NULL, *all = NULL;
	size_t len = 0, i;
	FILE *fp;
	int rc = 0;
	uint64_t mine[11], sum[11];
	const struct gfsp_xfer_stats *xs = gfsp_xfer_stats(s->x);
	long rss;

	fp = open_memstream(&text, &len);
	if (fp == NULL)
		return OOM(err);
	for (i = 0; i < s->fl.n; i++)
		if (s->res[i].rc != 0)
			fprintf(fp, "%zu\t%s\t%s\n", i, s->nodename,
				s->res[i].msg ? s->res[i].msg : "failed");
	fclose(fp);
	gfsp_gather_text(s->comm, text, len, &all, NULL);

	memset(mine, 0, sizeof(mine));
	mine[0] = xs->bytes_read;
	mine[1] = xs->bytes_written;
	mine[2] = xs->bytes_resumed;
	mine[3] = xs->bytes_forwarded;
	mine[4] = xs->raw_bytes;
	mine[5] = xs->files;
	for (i = 0; i < s->fl.n; i++) {
		if (s->lrank != 0 || !on_this_node(s, i))
			continue;
		mine[6] += s->res[i].skipped;
		mine[7] += s->res[i].installed &&
			   s->fl.v[i].type != GFSP_SF_FILE &&
			   s->fl.v[i].type != GFSP_SF_DIR;
		mine[8] += s->fl.v[i].type == GFSP_SF_DIR;
	}
	mine[9] = s->fl.special;	/* the listers' */
	mine[10] = xs->bytes_holes;
	gfsp_reduce(mine, sum, 11, MPI_UINT64_T, MPI_SUM, 0, s->comm);
	{
		double secs = 0;

		gfsp_job_usage(s->comm, &secs, &rss, &res->cpu_seconds, NULL);
	}
	if (s->rank == 0) {
		res->max_rss_kib = rss;
		res->sum.bytes_read = sum[0];
		res->sum.bytes_written = sum[1];
		res->sum.bytes_resumed = sum[2];
		res->sum.bytes_forwarded = sum[3];
		res->sum.raw_bytes = sum[4];
		res->sum.files = sum[5];
		res->files = sum[5];
		res->skipped = sum[6];
		res->links = sum[7];
		res->dirs = sum[8];
		res->special = sum[9];
		res->sum.bytes_holes = sum[10];
		res->failures = json_object_new_array();
		if (all != NULL) {
			char *line, *save = NULL, *t1, *t2;

			for (line = strtok_r(all, "\n", &save); line != NULL;
			     line = strtok_r(NULL, "\n", &save)) {
				t1 = strchr(line, '\t');
				t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
				if (t2 == NULL)
					continue;
				*t1 = *t2 = '\0';
				i = strtoull(line, NULL, 10);
				if (i >= s->fl.n)
					continue;
				json_object_array_add(res->failures,
				    failure_json(s->o->way == GFSP_STAGE_IN ?
						 s->fl.v[i].src : s->fl.v[i].rel,
						 t1 + 1, t2 + 1));
			}
		}
		res->failed = json_object_array_length(res->failures);
	}
	free(text);
	free(all);
	return rc;
}

/* The files already there, summed over nodes, at rank 0. */
static uint64_t
count_skipped(struct stage *s)
{
	uint64_t mine = 0, sum = 0;
	size_t i;

	for (i = 0; i < s->fl.n; i++)
		if (s->lrank == 0 && on_this_node(s, i))
			mine += s->res[i].skipped;
	gfsp_reduce(&mine, &sum, 1, MPI_UINT64_T, MPI_SUM, 0, s->comm);
	return sum;
}

/* --dry-run: every rank's share, at rank 0. */
static void
report_plan(struct stage *s, struct gfsp_stage_result *res)
{
	uint64_t mine[3] = { s->plan.bytes, s->plan.pieces, 0 }, *all = NULL;
	char *names = NULL;
	int r;

	if (s->rank == 0) {
		all = calloc((size_t)s->nprocs * 3, sizeof(*all));
		names = calloc((size_t)s->nprocs, 256);
	}
	gfsp_gather(mine, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, 0, s->comm);
	gfsp_gather(s->nodename, 256, MPI_CHAR, names, 256, MPI_CHAR, 0,
		   s->comm);
	if (s->rank == 0 && all != NULL && names != NULL) {
		res->plan = json_object_new_array();
		for (r = 0; r < s->nprocs; r++) {
			json_object *o = json_object_new_object();

			json_object_object_add(o, "rank", json_object_new_int(r));
			json_object_object_add(o, "node", json_object_new_string(
			    names + (size_t)r * 256));
			json_object_object_add(o, "bytes",
			    json_object_new_uint64(all[3 * r]));
			json_object_object_add(o, "pieces",
			    json_object_new_uint64(all[3 * r + 1]));
			json_object_array_add(res->plan, o);
		}
	}
	free(all);
	free(names);
}

/* --------------------------------------------------------------- run */

static void
stage_free(struct stage *s)
{
	size_t i;

	if (s->res != NULL)
		for (i = 0; i < s->fl.n; i++) {
			free(s->res[i].msg);
			free(s->res[i].seg);
		}
	free(s->res);
	free(s->skip);
	free(s->p);
	free(s->split);
	gfsp_xfer_free(s->x);
	gfsp_state_close(s->st);
	gfsp_flist_free(&s->fl);
	if (s->slot != MPI_COMM_NULL)
		MPI_Comm_free(&s->slot);
	if (s->node != MPI_COMM_NULL)
		MPI_Comm_free(&s->node);
	free(s->root);
	free(s->local);
	while (s->nconfined > 0) {
		s->nconfined--;
		gfsp_unconfine(s->confined[s->nconfined]);
		free(s->confined[s->nconfined]);
	}
	free(s->confined);
}

/* The run set up, listed and prepared; xo's nonce, one for the run's
 * new temporary names (pieces of a file that ranks of a node write meet
 * in one) */
static int
start_run(struct stage *s, struct gfsp_xfer_opts *xo, struct gfsp_error *err)
{
	int rc;

	rc = setup(s, err);
	xo->nonce = gfsp_random64();
	if (rc == 0)
		rc = gfsp_mpi_check(gfsp_bcast(&xo->nonce, 1, MPI_UINT64_T, 0,
					      s->comm), "MPI_Bcast", err);
	gfsp_watch_phase("listing");
	if (rc == 0)
		rc = s->o->way == GFSP_STAGE_IN ? list_in(s, err)
		    : list_out(s, err);
	gfsp_watch_phase("preparing");
	if (rc == 0)
		test_hook(s, "preparing");
	if (rc == 0)
		rc = prepare(s, err);
	return rc;
}

/* The pieces copied and the files installed: directories, split files'
 * parts joined, links; the journal compacted */
static int
copy_all(struct stage *s, struct gfsp_error *err)
{
	uint64_t total = 0;
	int rc;

	make_dirs(s);
	rc = gfsp_agree(s->comm, 0, err);
	if (rc == 0)
		rc = gfsp_mpi_check(gfsp_allreduce(&s->plan.bytes, &total, 1,
		    MPI_UINT64_T, MPI_SUM, s->comm), "MPI_Allreduce", err);
	if (rc)
		return rc;
	s->prog = gfsp_progress_start(s->comm, s->o->way == GFSP_STAGE_IN ?
				      "stage-in" : "stage-out", total);
	gfsp_xfer_set_progress(s->x, s->prog);
	gfsp_watch_phase("copying");
	rc = gfsp_xfer_run(s->x, s->p, s->np, err);
	rc = gfsp_agree(s->comm, rc, err);
	gfsp_watch_phase("installing");
	if (rc == 0)
		rc = finish_split(s, err);
	rc = gfsp_agree(s->comm, rc, err);
	if (rc == 0)
		make_links(s);
	rc = gfsp_agree(s->comm, rc, err);
	if (rc == 0 && s->lrank == 0 && s->st != NULL) {
		rc = gfsp_state_compact(s->st, err);
		if (rc) {	/* the copies stand; the next run redoes */
			gfsp_log_warn("%s", err->msg);
			gfsp_error_clear(err);
			rc = 0;
		}
	}
	rc = gfsp_agree(s->comm, rc, err);
	if (s->prog)
		gfsp_progress_finish(s->prog);
	return rc;
}

/* A dry run: what would be deleted, the plan, what is skipped */
static int
dry_run(struct stage *s, struct gfsp_stage_result *res,
	struct gfsp_error *err)
{
	int rc = 0;

	if (s->o->delete)
		rc = gfsp_stage_prune(s, res, err);
	report_plan(s, res);
	res->skipped = count_skipped(s);
	return rc;
}

int
gfsp_stage(MPI_Comm comm, const struct gfsp_stage_opts *o,
	  struct gfsp_stage_result *res, struct gfsp_error *err)
{
	struct stage s;
	struct gfsp_xfer_opts xo = o->x;
	double t0 = gfsp_now();
	size_t i;
	int rc, failed;

	memset(res, 0, sizeof(*res));
	memset(&s, 0, sizeof(s));
	s.o = o;
	s.comm = comm;
	s.node = s.slot = MPI_COMM_NULL;
	if (xo.chunk == 0)
		xo.chunk = GFSP_STAGE_CHUNK_DEFAULT;
	/* a dry run reads no file: what is there counts as up to date by
	 * size and time (the run compares the bytes of those it did not
	 * install itself) */
	if (o->dry_run)
		xo.checksum = 0;
	rc = start_run(&s, &xo, err);
	if (rc == 0)
		rc = gfsp_stage_make_plan(&s, &xo, err);
	if (rc)
		goto out;
	res->ranks = s.nprocs;
	res->nodes = s.nnodes;
	for (i = 0; i < s.fl.n; i++)
		if (s.fl.v[i].type == GFSP_SF_FILE && !s.skip[i])
			res->planned_bytes += s.fl.v[i].st.size;
	res->listed = s.fl.n;
	if (o->dry_run) {
		rc = dry_run(&s, res, err);
		goto out;
	}
	rc = copy_all(&s, err);
	if (rc == 0 && o->delete) {
		gfsp_watch_phase("deleting");
		test_hook(&s, "deleting");
		rc = gfsp_stage_prune(&s, res, err);
	}
	if (rc == 0) {
		list_done(&s);
		rc = report(&s, res, err);
	}
out:
	res->seconds = gfsp_now() - t0;
	stage_free(&s);
	if (rc == 0) {
		failed = s.rank == 0 && res->failed > 0;
		gfsp_bcast(&failed, 1, MPI_INT, 0, comm);
		if (failed)
			rc = gfsp_error_set(err, GFSP_EIO, "some entries were "
					   "not staged");
	}
	return rc;
}

void
gfsp_stage_result_free(struct gfsp_stage_result *r)
{
	json_object_put(r->failures);
	json_object_put(r->plan);
	r->failures = r->plan = NULL;
}
