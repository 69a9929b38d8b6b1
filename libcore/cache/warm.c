/*
 * warm.c - cache-warm's mechanism: fill each node's local tier (tier.h)
 * with the blocks of files, read through the cooperative cache so that a
 * block comes from shared storage about once per group and is copied
 * rank to rank otherwise (cache.h, gfsp_cache_warm).
 *
 * Which node keeps which blocks: every block (GFSP_WARM_ALL), or block j
 * on node j mod nodes (GFSP_WARM_PART: together the nodes hold the file
 * once).  On a node, the i-th block it keeps is read and written by its
 * rank i mod (ranks on the node), so the ranks of all nodes walk the file
 * in step: when several nodes keep block j, their ranks ask for it at
 * about the same time, one of each group reads it, the others copy it.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "core.h"
#include "tier.h"

/* the blocks of a file of size bytes node `index` of nnodes keeps */
static int
kept(const struct gfsp_warm_opts *o, uint64_t j, int index, int nnodes)
{
	return o->keep == GFSP_WARM_ALL || j % (uint64_t)nnodes ==
	    (uint64_t)index;
}

static uint64_t
kept_bytes(const struct gfsp_warm_opts *o, uint64_t size, uint64_t bsize,
	   int index, int nnodes)
{
	uint64_t j, n = 0;

	for (j = 0; j * bsize < size; j++)
		if (kept(o, j, index, nnodes))
			n += GFSP_MIN(bsize, size - j * bsize);
	return n;
}

struct warm {
	struct gfsp_cache *c;
	const struct gfsp_warm_opts *o;
	MPI_Comm comm, node;
	int nrank, nsize, index, nnodes;
	char *dir;			/* this node's tier directory */
	unsigned char *buf;		/* one block */
	struct gfsp_progress *prog;
	uint64_t done;			/* bytes this rank wrote */
};

/*
 * Is the node's tier already holding what it should of f?  Node rank 0
 * looks, the node is told.
 */
static int
already_warm(struct warm *w, const char *path, const struct gfsp_stat *st,
	     int *yes, struct gfsp_error *err)
{
	struct gfsp_tier_entry *e = NULL;
	uint64_t bsize = gfsp_cache_block_size(w->c), j, len;
	int rc = 0;

	*yes = 0;
	if (w->nrank == 0 && !w->o->force)
		rc = gfsp_tier_find(w->dir, path, st, &e, err);
	if (rc == 0 && e != NULL && e->bsize == bsize) {
		*yes = 1;
		for (j = 0; *yes && j * bsize < st->size; j++) {
			len = GFSP_MIN(bsize, st->size - j * bsize);
			if (kept(w->o, j, w->index, w->nnodes) &&
			    !gfsp_tier_covers(e, j * bsize, len))
				*yes = 0;
		}
	}
	gfsp_tier_free(e);
	rc = gfsp_agree(w->node, rc, err);
	if (rc == 0)
		rc = gfsp_mpi_check(MPI_Bcast(yes, 1, MPI_INT, 0, w->node),
		    "cannot tell the node's ranks", err);
	return rc;
}

/* This rank's share of the node's blocks of f into the tier writer tw. */
static int
copy_blocks(struct warm *w, const char *path, struct gfsp_cache_file *f,
	    struct gfsp_tier_writer *tw, struct gfsp_error *err)
{
	uint64_t bsize = gfsp_cache_block_size(w->c);
	uint64_t size = gfsp_cache_file_size(f), j, m = 0;
	size_t len, got;
	int rc = 0;

	for (j = 0; rc == 0 && j * bsize < size; j++) {
		if (!kept(w->o, j, w->index, w->nnodes) ||
		    m++ % (uint64_t)w->nsize != (uint64_t)w->nrank)
			continue;
		len = (size_t)GFSP_MIN(bsize, size - j * bsize);
		rc = gfsp_cache_pread(f, w->buf, len, j * bsize, &got, err);
		if (rc == 0 && got < len)
			rc = gfsp_error_set(err, GFSP_EIO, "'%s' became "
			    "shorter while it was warmed", path);
		if (rc == 0)
			rc = gfsp_tier_write(tw, j, w->buf, len, err);
		w->done += len;
		gfsp_progress_update(w->prog, w->done);
	}
	return rc;
}

/*
 * One file into every node's tier; collective over w->comm.  A POSIX
 * path is made absolute and free of links first, as the read hook opens
 * files: a tier entry names its file by that path.
 */
static int
warm_file(struct warm *w, const char *given, struct gfsp_warm_result *res,
	  struct gfsp_error *err)
{
	char *real = strstr(given, "://") ? NULL : realpath(given, NULL);
	const char *path = real != NULL ? real : given;
	struct gfsp_cache_file *f = NULL;
	struct gfsp_tier_writer *tw = NULL;
	unsigned char *have = NULL;
	uint64_t bsize = gfsp_cache_block_size(w->c), key[2], lo[2], j;
	uint64_t mine[2] = { 0, 0 }, sum[2];
	int rc, skip = 0;

	rc = gfsp_cache_open(w->c, path, &f, err);
	rc = gfsp_agree(w->comm, rc, err);
	if (rc)
		goto out;
	/* every rank must warm the same version */
	key[0] = gfsp_file_key(path, gfsp_cache_file_stat(f));
	key[1] = ~key[0];
	rc = gfsp_mpi_check(MPI_Allreduce(key, lo, 2, MPI_UINT64_T, MPI_MIN,
	    w->comm), "cannot compare the file's versions", err);
	if (rc == 0 && (lo[0] != key[0] || ~lo[1] != key[0]))
		rc = gfsp_error_set(err, GFSP_EIO, "'%s' changed while "
		    "cache-warm opened it: ranks see different versions",
		    path);
	rc = gfsp_agree(w->comm, rc, err);
	if (rc == 0)
		rc = already_warm(w, path, gfsp_cache_file_stat(f), &skip,
		    err);
	if (rc == 0 && !skip) {
		/* the node's rank 0 makes the data file, the others open
		 * it; all write their blocks; rank 0 commits */
		if (w->nrank == 0)
			rc = gfsp_tier_begin(w->dir, path,
			    gfsp_cache_file_stat(f), bsize, 1, &tw, err);
		rc = gfsp_agree(w->node, rc, err);
		if (rc == 0 && w->nrank != 0)
			rc = gfsp_tier_begin(w->dir, path,
			    gfsp_cache_file_stat(f), bsize, 0, &tw, err);
		rc = gfsp_agree(w->node, rc, err);
		if (rc == 0)
			rc = copy_blocks(w, path, f, tw, err);
		rc = gfsp_agree(w->node, rc, err);
		if (rc == 0 && w->nrank == 0) {
			have = calloc(gfsp_cache_file_size(f) / bsize / 8 + 2,
			    1);
			if (have == NULL)
				rc = gfsp_error_set(err, GFSP_ENOMEM,
				    "out of memory");
			for (j = 0; rc == 0 && j * bsize <
			    gfsp_cache_file_size(f); j++)
				if (kept(w->o, j, w->index, w->nnodes))
					have[j / 8] |= (unsigned char)(1u <<
					    (j % 8));
			if (rc == 0)
				rc = gfsp_tier_commit(tw, have, err);
		}
		rc = gfsp_agree(w->node, rc, err);
		mine[0] = w->nrank == 0 ? kept_bytes(w->o,
		    gfsp_cache_file_size(f), bsize, w->index, w->nnodes) : 0;
	}
	mine[1] = w->nrank == 0 && skip;
	rc = gfsp_agree(w->comm, rc, err);
	if (rc == 0)
		rc = gfsp_mpi_check(MPI_Allreduce(mine, sum, 2, MPI_UINT64_T,
		    MPI_SUM, w->comm), "cannot sum what was warmed", err);
	if (rc == 0) {
		res->size = gfsp_cache_file_size(f);
		res->bytes_kept = sum[0];
		res->nodes_already_warm = (int)sum[1];
	}
out:
	gfsp_tier_abort(tw);	/* frees it; after a commit, removes nothing */
	free(have);
	gfsp_cache_close(f);
	free(real);
	return rc;
}

int
gfsp_cache_warm(struct gfsp_cache *c, const struct gfsp_warm_opts *o,
		int nfiles, char **files, struct gfsp_warm_result *res,
		int *nnodes, struct gfsp_error *err)
{
	struct warm w;
	struct gfsp_stat st;
	uint64_t total = 0;
	int i, k, rc;

	memset(&w, 0, sizeof(w));
	w.c = c;
	w.o = o;
	w.comm = gfsp_cache_comm(c);
	w.node = MPI_COMM_NULL;
	rc = gfsp_node_comm(w.comm, &w.node, &w.index, &w.nnodes, err);
	if (rc)
		return rc;
	*nnodes = w.nnodes;
	MPI_Comm_rank(w.node, &w.nrank);
	MPI_Comm_size(w.node, &w.nsize);
	w.dir = gfsp_node_path(o->local_dir);
	w.buf = malloc(gfsp_cache_block_size(c));
	if (w.dir == NULL || w.buf == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	/* every file first, for a clear error and the progress total */
	for (i = 0; rc == 0 && i < nfiles; i++) {
		memset(&res[i], 0, sizeof(res[i]));
		rc = gfsp_stat(files[i], &st, err);
		for (k = 0; rc == 0 && k < w.nnodes; k++)
			total += kept_bytes(o, st.size,
			    gfsp_cache_block_size(c), k, w.nnodes);
	}
	rc = gfsp_agree(w.comm, rc, err);
	gfsp_watch_phase("warming");
	if (rc == 0)
		w.prog = gfsp_progress_start(w.comm, "cache-warm", total);
	for (i = 0; rc == 0 && i < nfiles; i++)
		rc = warm_file(&w, files[i], &res[i], err);
	gfsp_progress_finish(w.prog);
	MPI_Comm_free(&w.node);
	free(w.dir);
	free(w.buf);
	return rc;
}
