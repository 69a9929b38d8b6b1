/*
 * splitfile.c - the collective writer of a split file and its commit rule
 * (splitfile.h, man/gfsplit.5 "COMMIT").  What a run-mode writer reads
 * (the old file, the file being written) is splitfile_base.c.
 *
 * Phases, each closed by gfsp_agree() so that a failing rank never leaves
 * the others waiting and every rank returns the same verdict:
 *
 *   create:  rank 0 checks DST            -> agree
 *            exchange and resolve views   -> agree
 *            exchange node names (no failure possible but MPI's own)
 *            rank 0 makes TMP, broadcasts -> agree
 *            every rank creates TMP/part.<rank> (O_EXCL) -> agree
 *   append:  local pwrite at the part's end, hashed on the way
 *   finish:  agree on the writers' outcome
 *            close parts, exchange sizes and checksums -> agree
 *            lowest rank of each node writes TMP/loc.<k> -> agree
 *            rank 0 writes TMP/gfsplit.meta, sets the xattr, reads all
 *            metadata back through the reader, renames TMP to DST -> agree
 *
 * TMP is the sibling ".<base>.gfsplit-tmp.<pid>.<time>" of DST.  DST
 * appears only through the last rename, complete; before it nothing is
 * visible under the name DST, after it nothing is missing.  Any failure
 * removes every part, every metadata file and TMP.  With --force an old
 * DST is moved aside to ".<base>.gfsplit-old.<pid>.<time>" just before the
 * rename and removed after it (moved back if the rename fails).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "core.h"
#include "dst.h"
#include "layout_impl.h"
#include "runlog.h"
#include "splitfile.h"
#include "splitfile_impl.h"
#include "view_impl.h"

void
gfsp_recs_free(struct recs *x)
{
	free(x->buf);
	free(x->off);
	free(x->len);
	memset(x, 0, sizeof(*x));
}

/* ----------------------------------------------------------- helpers */



/*
 * -p: a new file of the split file gets the recorded owner and group, on
 * its descriptor, where this user may give them (root; else they stay
 * this user's, and gfsplit-merge -p will not give the owner back: a
 * recorded owner counts only where the split file's own files back it).
 */
static void
give_owner(const struct gfsp_split_writer *w, struct gfsp_file *f)
{
	int fd = gfsp_file_fd(f);

	if (!w->has_attrs || fd < 0)
		return;
	/* not allowed: the group alone (one of this user's), or neither */
	if (fchown(fd, w->attrs.uid, w->attrs.gid) != 0)
		(void)!fchown(fd, (uid_t)-1, w->attrs.gid);
}

static int
write_meta(const char *path, const void *buf, size_t len,
	   struct gfsp_split_writer *w, struct gfsp_error *err)
{
	struct gfsp_file *f;
	struct gfsp_error cerr;
	int rc, crc;

	/* on this rank's node, as its part (Gfarm: loc.<k> on node k) */
	rc = gfsp_create(path, w->fmode, &w->place, &f, err);
	if (rc)
		return rc;
	give_owner(w, f);
	rc = gfsp_pwrite(f, buf, len, 0, err);
	if (rc == 0 && w->sync)
		rc = gfsp_fsync(f, err);
	gfsp_error_clear(&cerr);
	crc = gfsp_close(f, rc ? &cerr : err);
	return rc ? rc : crc;
}

/*
 * --timeout ends the job: this rank's part, and TMP with everything in
 * it.  Any rank removes TMP (the one that made it may be the one that is
 * stopped); the removals overlap harmlessly.
 */
static void
undo_tmp(void *arg)
{
	struct gfsp_split_writer *w = arg;
	struct gfsp_error e;

	gfsp_error_clear(&e);
	if (w->part_made)
		gfsp_unlink(w->part_path, &e);
	gfsp_remove_tree(w->tmp, &e);
}

static void
free_writer(struct gfsp_split_writer *w)
{
	int i;

	if (w == NULL)
		return;
	if (w->views != NULL) {
		for (i = 0; i < w->nprocs; i++)
			gfsp_view_free(&w->views[i]);
		free(w->views);
	}
	gfsp_runlog_free(w->log);
	gfsp_split_drop_base(w);
	gfsp_recs_free(&w->seen);
	gfsp_layout_close(w->snap);
	free(w->names);
	free(w->landed);
	free(w->node_of);
	gfsp_phash_free(w->hash);
	free(w->part_path);
	free(w->host);
	gfsp_watch_undo_pop(undo_tmp, w);
	if (w->tmp_confined)
		gfsp_unconfine(w->tmp);
	free(w->tmp);
	gfsp_dst_free(&w->dst);
	if (w->own_comm && w->comm != MPI_COMM_NULL)
		MPI_Comm_free(&w->comm);
	free(w);
}

/*
 * Collective: remove everything this writer made.  Each rank drops its
 * own part; after all have, rank 0 removes what is left in TMP (metadata)
 * and TMP itself.  Errors here do not replace the error being reported.
 */
static void
abort_all(struct gfsp_split_writer *w)
{
	struct gfsp_error e;
	int made;

	gfsp_error_clear(&e);
	if (w->part != NULL) {
		gfsp_close(w->part, &e);
		w->part = NULL;
	}
	if (w->part_made) {
		gfsp_unlink(w->part_path, &e);
		w->part_made = 0;
	}
	/* tmp_made is rank 0's knowledge; everyone must take part in the
	 * agreement below either way */
	made = w->tmp_made;
	gfsp_agree(w->comm, 0, &e);
	if (w->rank == 0 && made) {
		char sz[32];
		uint64_t bytes = gfsp_tree_bytes(w->tmp);

		gfsp_error_clear(&e);
		if (gfsp_remove_tree(w->tmp, &e) != 0)
			gfsp_log_warn("cannot remove '%s' (%s), which this run "
				      "made: %s; stat-layout '%s' lists it, and "
				      "the next run into it removes it", w->tmp,
				      gfsp_format_size(bytes, sz, sizeof(sz)),
				      e.msg, w->dst.path);
		w->tmp_made = 0;
	}
}

/* ------------------------------------------------------------ create */

/*
 * Every rank holds TMP open from here on (gfsp_confine_dir): its parts
 * and metadata are created and read through that descriptor, one
 * component below it and no link followed, so a TMP renamed away and
 * replaced by a link (its directory may be writable by others) leads
 * nowhere.  It is opened through DST's parent's descriptor (held since
 * phase 4: gfsp_dst_hold), and must be this user's.  Rank 0 notes which directory it is,
 * for the checks before the commit (same_tmp).
 */
static int
hold_tmp(struct gfsp_split_writer *w, struct gfsp_error *err)
{
	struct gfsp_stat st;
	int rc;

	rc = gfsp_confine_dir(w->tmp, GFSP_CONFINE_OWN, err);
	if (rc == 0) {
		w->tmp_confined = 1;
		/* (more writers than undo slots: a kill -9's leftover, for
		 * the next run and stat-layout to find) */
		(void)gfsp_watch_undo_push(undo_tmp, w);
	}
	if (rc == 0 && w->rank == 0 && strstr(w->tmp, "://") == NULL &&
	    gfsp_lstat(w->tmp, &st, NULL) == 0)
		w->tmp_ino = st.ino;
	return rc;
}

/* Is path (TMP before the commit, DST after it) still the directory
 * rank 0 made?  Only a name's last component can have been swapped: the
 * parts were written through the held descriptor either way. */
static int
same_tmp(const struct gfsp_split_writer *w, const char *path,
	 struct gfsp_error *err)
{
	struct gfsp_stat st;

	if (w->tmp_ino == 0 || (gfsp_lstat(path, &st, NULL) == 0 &&
				S_ISDIR(st.mode) && st.ino == w->tmp_ino))
		return 0;
	return gfsp_error_set(err, GFSP_ESTALE, "'%s' is not the directory "
	    "this run wrote (someone renamed or replaced it): not committed",
	    path);
}

/*
 * Node index = order of first appearance by rank.  Collective: the
 * allocation is agreed on first so that no rank enters the exchange
 * alone.
 */
static int
group_nodes(struct gfsp_split_writer *w, struct gfsp_error *err)
{
	char name[GFSP_NAME_MAX];
	int *first = NULL;
	int r, k, rc = 0, mrc;

	memset(name, 0, sizeof(name));
	if (w->place.host != NULL)
		snprintf(name, sizeof(name), "%s", w->place.host);
	else
		gfsp_node_name(name, sizeof(name));
	w->names = calloc(w->nprocs, sizeof(*w->names));
	w->node_of = calloc(w->nprocs, sizeof(*w->node_of));
	first = calloc(w->nprocs, sizeof(*first));
	if (w->names == NULL || w->node_of == NULL || first == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	rc = gfsp_agree(w->comm, rc, err);
	if (rc)
		goto out;
	mrc = gfsp_allgather(name, GFSP_NAME_MAX, MPI_CHAR, w->names,
	    GFSP_NAME_MAX, MPI_CHAR, w->comm);
	rc = gfsp_mpi_check(mrc, "cannot exchange node names", err);
	if (rc)
		goto out;
	w->nnodes = 0;
	for (r = 0; r < w->nprocs; r++) {
		w->names[r][GFSP_NAME_MAX - 1] = '\0';
		for (k = 0; k < w->nnodes; k++)
			if (strcmp(w->names[first[k]], w->names[r]) == 0)
				break;
		if (k == w->nnodes)
			first[w->nnodes++] = r;
		w->node_of[r] = k;
	}
out:
	free(first);
	return rc;
}

/* The writer's settings from opts (DST parsed, not looked at yet). */
static int
take_opts(struct gfsp_split_writer *w, const char *dst,
	  const struct gfsp_split_opts *opts, struct gfsp_error *err)
{
	int rc = 0;

	w->force = opts->force;
	w->sync = opts->sync;
	/* no wider than what it is a copy of: the files read and write as
	 * the source did, the directory searchable where it is readable */
	w->fmode = opts->mode ? opts->mode & 0666 : 0644;
	w->dmode = opts->mode ? w->fmode | ((w->fmode & 0444) >> 2) : 0755;
	if (opts->attrs != NULL) {
		w->has_attrs = 1;
		w->attrs = *opts->attrs;
	}
	w->host = opts->host ? strdup(opts->host) : NULL;
	w->place.host = w->host;
	w->place.policy = opts->policy;
	if (opts->host != NULL && w->host == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	w->misplaced = opts->misplaced;
	w->sparse = opts->sparse;
	w->holes_out = opts->holes;
	w->seg_size = opts->seg_size ? opts->seg_size : GFSP_SEG_SIZE_DEFAULT;
	if (opts->layout != NULL && strlen(opts->layout) >= sizeof(w->layout))
		rc = gfsp_error_set(err, GFSP_EINVAL,
		    "layout name '%s' is too long", opts->layout);
	else
		snprintf(w->layout, sizeof(w->layout), "%s",
		    opts->layout ? opts->layout : "view");
	if (rc == 0)
		rc = gfsp_dst_parse(&w->dst, dst, err);
	w->dst.guard = opts->guard;
	return rc;
}

/* Rank 0: a killed run's temporaries swept, TMP named and made. */
static int
make_tmp(struct gfsp_split_writer *w, struct gfsp_error *err)
{
	int rc;

	gfsp_dst_sweep(&w->dst, "tmp");
	w->tmp = gfsp_dst_sibling(&w->dst, "tmp");
	if (w->tmp == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	else
		rc = gfsp_mkdir(w->tmp, w->dmode, err);
	if (rc == 0)
		w->tmp_made = 1;
	return rc;
}

/* This rank's part: TMP/part.<rank> created (O_EXCL), and its hash. */
static int
create_part(struct gfsp_split_writer *w, struct gfsp_error *err)
{
	int rc;

	w->part_path = gfsp_part_path(w->tmp, w->rank);
	w->hash = gfsp_phash_new(w->seg_size);
	if (w->hash != NULL && w->log != NULL)	/* rewrites */
		gfsp_phash_keep(w->hash);
	if (w->part_path == NULL || w->hash == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	rc = gfsp_create(w->part_path, w->fmode, &w->place, &w->part, err);
	if (rc == 0) {
		w->part_made = 1;
		give_owner(w, w->part);
	}
	return rc;
}

/* A writer with its communicator: COMM itself when the caller gave it
 * over (COMM_PRIVATE), else a duplicate.  Collective: every rank agrees
 * before the first collective it must enter. */
static int
new_writer(MPI_Comm comm, int comm_private, struct gfsp_split_writer **out,
	   struct gfsp_error *err)
{
	struct gfsp_split_writer *w;
	int rc, mrc = MPI_SUCCESS;

	w = calloc(1, sizeof(*w));
	rc = gfsp_agree(comm, w ? 0 : gfsp_error_set(err, GFSP_ENOMEM,
	    "out of memory"), err);
	if (rc) {
		free(w);
		return rc;
	}
	w->comm = MPI_COMM_NULL;
	if (comm_private)
		w->comm = comm;
	else if ((mrc = gfsp_comm_dup(comm, &w->comm)) == MPI_SUCCESS)
		w->own_comm = 1;
	if (mrc != MPI_SUCCESS) {
		w->comm = MPI_COMM_NULL;
		rc = gfsp_mpi_check(mrc, "cannot duplicate the communicator",
		    err);
		free_writer(w);
		return rc;
	}
	*out = w;
	return 0;
}

int
gfsp_split_create(MPI_Comm comm, const char *dst, const struct gfsp_view *view,
		 const struct gfsp_split_opts *opts,
		 struct gfsp_split_writer **out, const struct gfsp_view **resolved,
		 struct gfsp_error *err)
{
	struct gfsp_split_writer *w = NULL;
	struct gfsp_split_opts none;
	int rc = 0;

	*out = NULL;
	if (resolved != NULL)
		*resolved = NULL;
	if (opts == NULL) {
		memset(&none, 0, sizeof(none));
		opts = &none;
	}
	rc = new_writer(comm, opts->comm_private, &w, err);
	if (rc)
		return rc;
	MPI_Comm_rank(w->comm, &w->rank);
	MPI_Comm_size(w->comm, &w->nprocs);
	rc = take_opts(w, dst, opts, err);

	/* phase 1: is DST free (or replaceable)? */
	if (rc == 0 && w->rank == 0)
		rc = gfsp_dst_check(&w->dst, w->force, err);
	rc = gfsp_agree(w->comm, rc, err);
	if (rc)
		goto fail;

	/* phase 2: views, resolved the same way on every rank; or, with no
	 * view, a log of runs filled as the writes come */
	if (view != NULL) {
		rc = gfsp_views_allgather(w->comm, view, &w->views, err);
	} else {
		w->log = gfsp_runlog_new();
		if (w->log == NULL)
			rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	rc = gfsp_agree(w->comm, rc, err);
	if (rc)
		goto fail;

	/* phase 3: which ranks share a node (one location file each) */
	rc = group_nodes(w, err);
	rc = gfsp_agree(w->comm, rc, err);
	if (rc)
		goto fail;

	/* phase 4: DST's parent held by every rank; the temporary
	 * directory, named by rank 0 */
	rc = gfsp_dst_hold(&w->dst, err);
	rc = gfsp_agree(w->comm, rc, err);
	if (rc)
		goto fail;
	if (w->rank == 0)
		rc = make_tmp(w, err);
	rc = gfsp_agree(w->comm, rc, err);
	if (rc)
		goto fail;
	if (rc == 0)
		rc = gfsp_bcast_string(w->comm, &w->tmp, err);
	if (rc == 0)
		rc = hold_tmp(w, err);
	rc = gfsp_agree(w->comm, rc, err);
	if (rc) {
		abort_all(w);
		goto fail;
	}

	/* phase 5: this rank's part */
	rc = gfsp_agree(w->comm, create_part(w, err), err);
	if (rc) {
		abort_all(w);
		goto fail;
	}
	if (resolved != NULL && w->views != NULL)
		*resolved = &w->views[w->rank];
	*out = w;
	return 0;
fail:
	free_writer(w);
	return rc;
}

/* ------------------------------------------------------------ append */

int
gfsp_split_append(struct gfsp_split_writer *w, const void *buf, size_t len,
		 struct gfsp_error *err)
{
	int rc;

	if (w == NULL || w->part == NULL)
		return gfsp_error_set(err, GFSP_EINVAL,
		    "append to a split file that is not open");
	if (len == 0)
		return 0;
	rc = w->sparse ? gfsp_pwrite_sparse(w->part, buf, len, w->size, 1,
					    &w->holes, err)
		       : gfsp_pwrite(w->part, buf, len, w->size, err);
	if (rc)
		return rc;
	gfsp_phash_update(w->hash, buf, len);
	w->size += len;
	return 0;
}

uint64_t
gfsp_split_part_size(const struct gfsp_split_writer *w)
{
	return w ? w->size : 0;
}

/* Written to: what reads saw is stale, and the part needs a flush. */
void
gfsp_split_stale(struct gfsp_split_writer *w)
{
	gfsp_layout_close(w->snap);
	w->snap = NULL;
	w->dirty = 1;
}

int
gfsp_split_run_mode(const struct gfsp_split_writer *w, struct gfsp_error *err)
{
	if (w != NULL && w->log != NULL && w->part != NULL)
		return 0;
	return gfsp_error_set(err, GFSP_EINVAL,
	    "write at an offset to a split file not created for it");
}

int
gfsp_split_add_view(struct gfsp_split_writer *w, struct gfsp_view *v,
		   uint32_t *id, struct gfsp_error *err)
{
	int rc = gfsp_split_run_mode(w, err);

	return rc ? rc : gfsp_runlog_add_view(w->log, v, id, err);
}

/*
 * A rewrite of bytes this rank wrote before goes over them in its part
 * (runlog.h: gfsp_runlog_find), so that rewriting a file in place does
 * not store it twice; only the segments of the part checksum it touches
 * are hashed again, at the end.  Over a run of an earlier epoch the bytes
 * get a run of the current one at the same place in the part (later
 * epochs win over other ranks' writes in between); in the same epoch the
 * run that holds them already says where they are.
 */
static int
overwrite(struct gfsp_split_writer *w, uint64_t loff, const void *buf,
	  size_t len, struct gfsp_error *err)
{
	int rc = gfsp_pwrite(w->part, buf, len, loff, err);

	if (rc == 0)
		gfsp_phash_touch(w->hash, loff, len);
	return rc;
}

int
gfsp_split_write_at(struct gfsp_split_writer *w, uint64_t goff,
		   const void *buf, size_t len, struct gfsp_error *err)
{
	const unsigned char *p = buf;
	struct gfsp_runhit hit;
	uint64_t g = goff, n;
	int rc = gfsp_split_run_mode(w, err);

	/* the bytes held in the part already, piece by piece, go over
	 * themselves; from the first that is not, the rest is appended */
	while (rc == 0 && len > 0 && gfsp_runlog_find(w->log, g, len, 0, &hit)) {
		n = GFSP_MIN(hit.n, len);
		rc = overwrite(w, hit.loff, p, (size_t)n, err);
		if (rc == 0 && hit.epoch != gfsp_runlog_epoch(w->log))
			rc = gfsp_runlog_dense(w->log, g, n, hit.loff, err);
		g += n;
		p += n;
		len -= (size_t)n;
	}
	if (rc == 0 && len > 0) {
		n = w->size;
		rc = gfsp_split_append(w, p, len, err);
		if (rc == 0)
			rc = gfsp_runlog_dense(w->log, g, len, n, err);
	}
	if (rc == 0 && g + len > goff) {
		w->hi = GFSP_MAX(w->hi, g + len);
		gfsp_split_stale(w);
	}
	return rc;
}

int
gfsp_split_write_view(struct gfsp_split_writer *w, uint32_t id,
		     uint64_t begin, uint64_t end, const void *buf,
		     size_t len, struct gfsp_error *err)
{
	struct gfsp_runhit hit;
	uint64_t loff = w ? w->size : 0;
	int rc = gfsp_split_run_mode(w, err), over;

	/* a rewrite through the same view, all of it over its earlier
	 * write: in place */
	over = rc == 0 && len > 0 &&
	    gfsp_runlog_find(w->log, begin, end - begin, id, &hit) && hit.same_view &&
	    end <= hit.free_end;
	if (over) {
		loff = hit.loff;
		rc = overwrite(w, loff, buf, len, err);
		if (rc == 0 && hit.epoch != gfsp_runlog_epoch(w->log))
			rc = gfsp_runlog_view(w->log, id, begin, end, loff,
			    err);
	} else if (rc == 0) {
		rc = gfsp_split_append(w, buf, len, err);
		if (rc == 0)
			rc = gfsp_runlog_view(w->log, id, begin, end, loff,
			    err);
	}
	if (rc == 0 && len > 0) {
		w->hi = GFSP_MAX(w->hi, end);
		gfsp_split_stale(w);
	}
	return rc;
}

int
gfsp_split_set_epoch(struct gfsp_split_writer *w, uint64_t epoch,
		     struct gfsp_error *err)
{
	int rc = gfsp_split_run_mode(w, err);

	return rc ? rc : gfsp_runlog_set_epoch(w->log, epoch, err);
}

void
gfsp_split_truncate(struct gfsp_split_writer *w, uint64_t size)
{
	if (w == NULL || w->log == NULL)
		return;
	gfsp_runlog_truncate(w->log, size);
	w->hi = GFSP_MIN(w->hi, size);
	w->base_size = GFSP_MIN(w->base_size, size);
	gfsp_split_stale(w);
}

int
gfsp_split_sync(struct gfsp_split_writer *w, struct gfsp_error *err)
{
	int rc;

	if (w == NULL || w->part == NULL)
		return gfsp_error_set(err, GFSP_EINVAL,
		    "sync of a split file that is not open");
	rc = gfsp_fsync(w->part, err);
	if (rc == 0)
		w->dirty = 0;	/* synced is flushed: refresh need not */
	return rc;
}

uint64_t
gfsp_split_nruns(const struct gfsp_split_writer *w)
{
	return w && w->log ? gfsp_runlog_nruns(w->log) : 0;
}

/* ------------------------------------------------------------ finish */

/* This rank's record: its view, or the runs of its writes. */
int
gfsp_split_my_record(struct gfsp_split_writer *w, uint64_t hash, struct gfsp_locrec *me,
	  struct gfsp_error *err)
{
	memset(me, 0, sizeof(*me));
	me->rank = (uint32_t)w->rank;
	me->part_size = w->size;
	me->part_hash = hash;
	/* where the part went is known at the commit; before it, the node */
	snprintf(me->host, sizeof(me->host), "%s", w->landed ?
	    w->landed[w->rank] : w->names[w->rank]);
	if (w->log == NULL)
		return gfsp_view_copy(&me->view, &w->views[w->rank], err);
	gfsp_view_empty(&me->view, 0, 0);
	return gfsp_runlog_export(w->log, me, err);
}

int
gfsp_split_exchange_records(struct gfsp_split_writer *w, uint64_t hash, struct recs *x,
		 struct gfsp_error *err)
{
	struct gfsp_locrec me;
	unsigned char *mine = NULL;
	size_t mlen = 0;
	uint64_t total = 0, l64;
	int *cnt = NULL, *dsp = NULL, r, rc, mrc;

	memset(x, 0, sizeof(*x));
	rc = gfsp_split_my_record(w, hash, &me, err);
	if (rc == 0)
		rc = gfsp_locrec_encode(&me, &mine, &mlen, err);
	gfsp_locrec_free(&me);
	x->off = calloc(w->nprocs, sizeof(*x->off));
	x->len = calloc(w->nprocs, sizeof(*x->len));
	cnt = calloc(w->nprocs, sizeof(*cnt));
	dsp = calloc(w->nprocs, sizeof(*dsp));
	if (rc == 0 && (x->off == NULL || x->len == NULL || cnt == NULL ||
	    dsp == NULL))
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	rc = gfsp_agree(w->comm, rc, err);
	if (rc)
		goto out;
	l64 = mlen;
	mrc = gfsp_allgather(&l64, 1, MPI_UINT64_T, x->len, 1, MPI_UINT64_T,
	    w->comm);
	rc = gfsp_mpi_check(mrc, "cannot exchange location records", err);
	if (rc)
		goto out;
	for (r = 0; r < w->nprocs; r++) {
		x->off[r] = total;
		total += x->len[r];
	}
	/* MPI counts are int: the records of one job stay below 2 GiB */
	if (total > INT32_MAX)
		rc = gfsp_error_set(err, GFSP_EINVAL,
		    "location records of %d ranks take %llu bytes (at most "
		    "2 GiB)", w->nprocs, (unsigned long long)total);
	else if ((x->buf = malloc(total ? total : 1)) == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory for "
		    "%llu bytes of location records",
		    (unsigned long long)total);
	rc = gfsp_agree(w->comm, rc, err);
	if (rc)
		goto out;
	for (r = 0; r < w->nprocs; r++) {
		cnt[r] = (int)x->len[r];
		dsp[r] = (int)x->off[r];
	}
	mrc = MPI_Allgatherv(mine, (int)mlen, MPI_BYTE, x->buf, cnt, dsp,
	    MPI_BYTE, w->comm);
	rc = gfsp_mpi_check(mrc, "cannot exchange location records", err);
out:
	free(mine);
	free(cnt);
	free(dsp);
	if (rc)
		gfsp_recs_free(x);
	return rc;
}

/* The lowest rank of node k writes loc.<k> for all of k's ranks. */
static int
write_locfile(struct gfsp_split_writer *w, int k, const struct recs *x,
	      struct gfsp_error *err)
{
	struct gfsp_locfile lf;
	unsigned char *buf = NULL;
	size_t len = 0;
	char *path = NULL;
	int r, rc = 0;

	memset(&lf, 0, sizeof(lf));
	lf.nprocs = (uint32_t)w->nprocs;
	lf.nnodes = (uint32_t)w->nnodes;
	lf.node = (uint32_t)k;
	snprintf(lf.node_name, sizeof(lf.node_name), "%s",
	    w->names[w->rank]);
	lf.recs = calloc(w->nprocs, sizeof(*lf.recs));
	if (lf.recs == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
		goto out;
	}
	for (r = 0; r < w->nprocs && rc == 0; r++) {
		if (w->node_of[r] != k)
			continue;
		rc = gfsp_locrec_decode(x->buf + x->off[r], x->len[r],
		    (uint32_t)w->nprocs, "location record",
		    &lf.recs[lf.nrecs], err);
		if (rc == 0)
			lf.nrecs++;
	}
	if (rc == 0)
		rc = gfsp_locfile_encode(&lf, &buf, &len, err);
	if (rc)
		goto out;
	path = gfsp_loc_path(w->tmp, k);
	if (path == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
		goto out;
	}
	rc = write_meta(path, buf, len, w, err);
out:
	free(path);
	free(buf);
	gfsp_locfile_free(&lf);
	return rc;
}

/* Rank r's record as the reader has it, encoded, equals what r sent. */
static int
same_record(const struct gfsp_layout *l, int r, const struct recs *x)
{
	struct gfsp_locrec rec;
	struct gfsp_error e;
	unsigned char *buf = NULL;
	size_t len = 0;
	int same;

	rec = l->recs[r];		/* borrowed, never freed here */
	rec.view = l->views[r];
	rec.rank = (uint32_t)r;
	rec.part_size = l->part_size[r];
	rec.part_hash = l->part_hash[r];
	snprintf(rec.host, sizeof(rec.host), "%s", l->host[r]);
	gfsp_error_clear(&e);
	if (gfsp_locrec_encode(&rec, &buf, &len, &e) != 0)
		return 0;
	same = len == x->len[r] && memcmp(buf, x->buf + x->off[r], len) == 0;
	free(buf);
	return same;
}

/*
 * Rank 0: read everything back through the reader (which checks the
 * marker, every location file and every part's size) and compare with
 * what the ranks reported.  Nothing is renamed into place unverified.
 */
static int
same_attrs(const struct gfsp_marker *a, const struct gfsp_marker *b)
{
	const struct gfsp_attrs *x = &a->attrs, *y = &b->attrs;

	return a->has_attrs == b->has_attrs && (!a->has_attrs ||
		(x->mode == y->mode && x->uid == y->uid && x->gid == y->gid &&
		 x->atime == y->atime && x->atime_ns == y->atime_ns &&
		 x->mtime == y->mtime && x->mtime_ns == y->mtime_ns));
}

static int
verify(struct gfsp_split_writer *w, const struct gfsp_marker *m,
       const struct recs *x, struct gfsp_error *err)
{
	struct gfsp_layout *l = NULL;
	struct gfsp_error lerr;
	int r, rc;

	gfsp_error_clear(&lerr);
	rc = gfsp_layout_open(w->tmp, &l, &lerr);
	if (rc)
		return gfsp_error_set(err, rc,
		    "cannot commit '%s': read-back check failed: %s", w->dst.path,
		    lerr.msg);
	rc = 0;
	if (l->nprocs != w->nprocs || l->nnodes != w->nnodes ||
	    l->marker.logical_size != m->logical_size ||
	    l->marker.seg_size != m->seg_size ||
	    strcmp(l->marker.layout, m->layout) != 0 ||
	    !same_attrs(&l->marker, m)) {
		rc = gfsp_error_set(err, GFSP_ECORRUPT,
		    "cannot commit '%s': the marker reads back differently "
		    "from what was written", w->dst.path);
		goto out;
	}
	for (r = 0; r < w->nprocs; r++) {
		if (l->node_of[r] != w->node_of[r] || !same_record(l, r, x)) {
			rc = gfsp_error_set(err, GFSP_ECORRUPT,
			    "cannot commit '%s': the record of rank %d reads "
			    "back differently from what was written", w->dst.path,
			    r);
			goto out;
		}
	}
out:
	gfsp_layout_close(l);
	return rc;
}

static int
commit(struct gfsp_split_writer *w, uint64_t lsize, const struct recs *x,
       struct gfsp_error *err)
{
	struct gfsp_marker m;
	struct gfsp_error xerr;
	unsigned char *buf = NULL;
	size_t len = 0;
	char *path = NULL;
	int rc;

	memset(&m, 0, sizeof(m));
	m.version = GFSP_FORMAT_VERSION;
	m.nprocs = (uint32_t)w->nprocs;
	m.nnodes = (uint32_t)w->nnodes;
	m.logical_size = lsize;
	m.seg_size = w->seg_size;
	m.ctime = (int64_t)time(NULL);
	snprintf(m.layout, sizeof(m.layout), "%s", w->layout);
	m.has_attrs = w->has_attrs;
	m.attrs = w->attrs;
	rc = gfsp_marker_encode(&m, &buf, &len, err);
	if (rc)
		goto out;
	path = gfsp_marker_path(w->tmp);
	if (path == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
		goto out;
	}
	rc = write_meta(path, buf, len, w, err);
	if (rc)
		goto out;
	rc = same_tmp(w, w->tmp, err);
	if (rc)
		goto out;
	gfsp_error_clear(&xerr);
	rc = gfsp_setxattr(w->tmp, GFSP_XATTR_NAME, "1", 1, &xerr);
	if (rc == GFSP_ENOTSUP)
		rc = 0;
	else if (rc) {
		rc = gfsp_error_set(err, rc, "%s", xerr.msg);
		goto out;
	}
	rc = verify(w, &m, x, err);
	if (rc)
		goto out;
	rc = same_tmp(w, w->tmp, err);
	if (rc == 0)
		rc = gfsp_dst_install(&w->dst, w->tmp, w->force, err);
	if (rc == 0) {
		w->tmp_made = 0;
		rc = same_tmp(w, w->dst.path, err);
	}
out:
	free(path);
	free(buf);
	return rc;
}

/*
 * Collective: where did every part really go?  Asked of the storage, not
 * taken from what was requested (a fallback may have moved it); a backend
 * without storage nodes, or an empty part with no replica, is recorded
 * under its rank's node name.
 */
static int
gather_landed(struct gfsp_split_writer *w, struct gfsp_error *err)
{
	char mine[GFSP_NAME_MAX];
	char **hosts = NULL;
	size_t n = 0;
	int r, rc, moved = 0;

	memset(mine, 0, sizeof(mine));
	rc = gfsp_where(w->part_path, &hosts, &n, err);
	snprintf(mine, sizeof(mine), "%s", n > 0 ? hosts[0] : w->names[w->rank]);
	gfsp_strv_free(hosts, n);
	w->landed = calloc(w->nprocs, sizeof(*w->landed));
	if (rc == 0 && w->landed == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	rc = gfsp_agree(w->comm, rc, err);
	if (rc)
		return rc;
	rc = gfsp_mpi_check(gfsp_allgather(mine, GFSP_NAME_MAX, MPI_CHAR,
	    w->landed, GFSP_NAME_MAX, MPI_CHAR, w->comm),
	    "cannot exchange part locations", err);
	for (r = 0; rc == 0 && r < w->nprocs; r++) {
		w->landed[r][GFSP_NAME_MAX - 1] = '\0';
		if (w->place.host != NULL &&
		    strcmp(w->landed[r], w->names[r]) != 0)
			moved++;
	}
	if (rc == 0 && w->misplaced != NULL)
		*w->misplaced = moved;
	return rc;
}

/* Hash again the checksum segments that rewrites changed in the part
 * (read through a handle of its own: the part is open write-only). */
static int
rehash(struct gfsp_split_writer *w, struct gfsp_error *err)
{
	struct gfsp_file *f = NULL;
	unsigned char *buf = NULL;
	uint64_t off, len;
	size_t got;
	int rc = 0, more;

	while ((more = gfsp_phash_stale(w->hash, &off, &len)) == 1) {
		if (f == NULL) {
			buf = malloc(w->seg_size);
			if (buf == NULL) {
				rc = gfsp_error_set(err, GFSP_ENOMEM,
				    "out of memory");
				break;
			}
			rc = gfsp_flush(w->part, err);
			if (rc == 0)
				rc = gfsp_open(w->part_path, GFSP_O_RDONLY, 0,
				    &f, err);
			if (rc)
				break;
		}
		rc = gfsp_pread(f, buf, (size_t)len, off, &got, err);
		if (rc == 0 && got != len)
			rc = gfsp_error_set(err, GFSP_EIO, "%s: short read at "
			    "%llu of a part being written", w->part_path,
			    (unsigned long long)off);
		if (rc)
			break;
		gfsp_phash_redo(w->hash, off, buf, (size_t)len);
	}
	if (f != NULL)
		gfsp_close(f, rc ? NULL : err);
	free(buf);
	if (rc == 0 && more < 0)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "%s: out of memory for "
		    "the part's checksum", w->part_path);
	return rc;
}

int
gfsp_split_finish(struct gfsp_split_writer *w, int rc, uint64_t logical_size,
		 struct gfsp_error *err)
{
	struct gfsp_error cerr;
	struct recs x;
	uint64_t lsize = 0, hash, below;
	int mrc, r, k, crc;

	memset(&x, 0, sizeof(x));
	if (w == NULL)
		return gfsp_error_set(err, GFSP_EINVAL,
		    "finish of a split file that is not open");
	rc = gfsp_agree(w->comm, rc, err);
	if (rc == 0 && w->log != NULL && w->base_size > 0)
		rc = gfsp_split_fill_from_base(w, err);
	if (rc)
		goto abort;
	if (w->log != NULL)
		logical_size = GFSP_MAX(logical_size, w->base_size);

	/* the part is complete: its size and checksum are final (holes at
	 * its end left it short) */
	if (rc == 0 && w->holes > 0)
		rc = gfsp_ftruncate(w->part, w->size, err);
	if (w->holes_out != NULL)
		*w->holes_out = w->holes;
	if (rc == 0)
		rc = rehash(w, err);
	if (w->sync)
		rc = gfsp_fsync(w->part, err);
	gfsp_error_clear(&cerr);
	crc = gfsp_close(w->part, rc ? &cerr : err);
	w->part = NULL;
	if (rc == 0)
		rc = crc;
	hash = gfsp_phash_final(w->hash);
	rc = gfsp_agree(w->comm, rc, err);
	if (rc)
		goto abort;
	if (w->log != NULL)
		logical_size = GFSP_MAX(logical_size, w->hi);
	mrc = gfsp_allreduce(&logical_size, &lsize, 1, MPI_UINT64_T, MPI_MAX,
	    w->comm);
	rc = gfsp_mpi_check(mrc, "cannot agree on the logical size", err);
	/* a part longer than its view below the logical size would be
	 * rejected by every reader: refuse to commit it */
	if (rc == 0 && w->log == NULL) {
		below = gfsp_view_bytes_below(&w->views[w->rank], lsize);
		if (w->size > below)
			rc = gfsp_error_set(err, GFSP_EINVAL,
			    "part.%d: %llu bytes written but the view of rank "
			    "%d holds only %llu below the logical size %llu",
			    w->rank, (unsigned long long)w->size, w->rank,
			    (unsigned long long)below,
			    (unsigned long long)lsize);
	}
	rc = gfsp_agree(w->comm, rc, err);
	if (rc == 0)
		rc = gather_landed(w, err);
	if (rc == 0)
		rc = gfsp_split_exchange_records(w, hash, &x, err);
	if (rc)
		goto abort;

	/* location files: one per node, by the node's lowest rank */
	k = w->node_of[w->rank];
	for (r = 0; r < w->rank; r++)
		if (w->node_of[r] == k)
			break;
	if (r == w->rank)
		rc = write_locfile(w, k, &x, err);
	rc = gfsp_agree(w->comm, rc, err);
	if (rc)
		goto abort;

	/* marker, read-back, rename: the commit */
	if (w->rank == 0)
		rc = commit(w, lsize, &x, err);
	rc = gfsp_agree(w->comm, rc, err);
	if (rc)
		goto abort;
	/* DST is in place: nothing of ours to remove any more */
	w->part_made = 0;
	goto out;
abort:
	abort_all(w);
out:
	gfsp_recs_free(&x);
	free_writer(w);
	return rc;
}
