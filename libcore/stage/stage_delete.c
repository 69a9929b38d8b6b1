/*
 * stage_delete.c - stage-in's --delete (stage.h): in the directories the
 * sources gave, remove what the sources no longer hold, as rsync
 * --delete does.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "stage.h"
#include "stage_impl.h"

/* ------------------------------------------------------------ --delete */

static int
cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * In the staged directory rel ("" for DEST), the entries not in set (the
 * sorted rels of the list): removed, or counted on a dry run.  Never the
 * state directory, nor a transfer's temporary files.  Every path is below
 * the confined DEST, so resolved from the directory held since before the
 * copy, no link followed; DEST itself is read as "DEST/.", that directory
 * too, never DEST's name looked up again (store.h).
 */
static int
prune_dir(const struct stage *s, char **set, size_t nset, const char *rel,
	  uint64_t *gone, struct gfsp_error *err)
{
	char **names = NULL, *dir, *crel = NULL, *path = NULL;
	size_t n = 0, i;
	int rc = 0;

	if (asprintf(&dir, "%s/%s", s->root, *rel ? rel : ".") < 0)
		return OOM(err);
	if (gfsp_readdir(dir, &names, &n, NULL) != 0)
		n = 0;		/* not there (a dry run): nothing to remove */
	if (*rel == '\0')
		dir[strlen(dir) - 2] = '\0';	/* DEST/x, not DEST/./x */
	for (i = 0; rc == 0 && i < n; i++) {
		if (gfsp_stage_internal_name(names[i]))
			continue;
		if (asprintf(&crel, "%s%s%s", rel, *rel ? "/" : "",
			     names[i]) < 0 ||
		    asprintf(&path, "%s/%s", dir, names[i]) < 0) {
			rc = OOM(err);
			break;
		}
		if (bsearch(&crel, set, nset, sizeof(*set), cmp_strp) == NULL &&
		    (s->o->dry_run || (rc = gfsp_remove_tree(path, err)) == 0)) {
			gfsp_log_each("%s '%s' on %s", s->o->dry_run ?
				      "would delete" : "deleted", crel,
				      s->nodename);
			(*gone)++;
		}
		free(crel);
		free(path);
		crel = path = NULL;
	}
	free(crel);
	gfsp_strv_free(names, n);
	free(dir);
	return rc;
}

/*
 * --delete, once every entry is in place on every node (none failed):
 * in each directory a source tree gave (its DIR entries, and DEST itself
 * for a "DIR/" source), remove what the sources no longer hold, as rsync
 * --delete does.  The node's first rank does it; the count goes to
 * rank 0.
 */
int
gfsp_stage_prune(struct stage *s, struct gfsp_stage_result *res,
		 struct gfsp_error *err)
{
	char **set = NULL;
	uint64_t gone = 0, all = 0;
	int rc = 0, bad = 0, anybad = 0;
	size_t i;

	for (i = 0; i < s->fl.n; i++)
		bad |= s->res[i].rc != 0;
	rc = gfsp_mpi_check(gfsp_allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX,
					  s->comm), "MPI_Allreduce", err);
	if (rc == 0 && anybad) {
		if (s->rank == 0)
			gfsp_log_warn("--delete: nothing deleted, since some "
				      "entries were not staged");
		return 0;
	}
	/* DEST's name swapped since the copy (for a link, or another
	 * directory in its place): refused, deleting nothing.  The removals
	 * below go through the directory held in any case; the refusal
	 * tells whoever ran us that someone is at work on DEST */
	if (rc == 0 && !s->o->dry_run && s->lrank == 0)
		rc = gfsp_stage_same_root(s, "nothing deleted", NULL, err);
	rc = gfsp_agree(s->comm, rc, err);
	if (rc == 0 && s->lrank == 0) {
		set = malloc((s->fl.n + 1) * sizeof(*set));
		if (set == NULL)
			rc = OOM(err);
		for (i = 0; set != NULL && i < s->fl.n; i++)
			set[i] = s->fl.v[i].rel;
		if (set != NULL)
			qsort(set, s->fl.n, sizeof(*set), cmp_strp);
		if (rc == 0 && s->fl.nroots > 0)
			rc = prune_dir(s, set, s->fl.n, "", &gone, err);
		for (i = 0; rc == 0 && i < s->fl.n; i++)
			if (s->fl.v[i].type == GFSP_SF_DIR &&
			    on_this_node(s, i))
				rc = prune_dir(s, set, s->fl.n, s->fl.v[i].rel,
					       &gone, err);
		free(set);
		if (gone > 0 && !s->o->dry_run)
			gfsp_stage_dir_times(s); /* the removals changed them */
	}
	rc = gfsp_agree(s->comm, rc, err);
	if (rc == 0)
		rc = gfsp_mpi_check(gfsp_reduce(&gone, &all, 1, MPI_UINT64_T,
						MPI_SUM, 0, s->comm),
				   "MPI_Reduce", err);
	if (rc == 0 && s->rank == 0)
		res->deleted = all;
	return rc;
}

