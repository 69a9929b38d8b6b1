/*
 * xfer_tree.c - the entries that are not file data (stage.h):
 * directories, symbolic and hard links made under a temporary name and
 * installed (gfsp_xfer_make), and the directories' modes and times once
 * everything under them is in place (gfsp_xfer_dir_times).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core.h"
#include "stage.h"
#include "xfer_impl.h"

/* ---------------------------------------------- directories and links */

/* Record again the file whose rel is `rel` (at dst), which is in place
 * (another rank may have installed it: its checksum may be unknown
 * here, and is then recorded as 0). */
static void
rerecord(struct gfsp_xfer *x, const char *rel, const char *dst)
{
	size_t i;

	for (i = 0; i < x->fl->n; i++)
		if (strcmp(x->fl->v[i].rel, rel) == 0)
			break;
	if (i < x->fl->n && x->res[i].rc == 0)
		gfsp_xfer_record_done(x, (uint32_t)i, dst, x->res[i].hash,
				      NULL);
}

/* Is the link f already at dst (the same target; the same file)? */
static int
link_there(struct gfsp_xfer *x, const struct gfsp_sfile *f, const char *dst)
{
	struct gfsp_stat a, b;
	char *target = NULL, *first = NULL;
	int same = 0;

	if (gfsp_lstat(dst, &a, NULL) != 0)
		return 0;
	if (f->type == GFSP_SF_SYMLINK) {
		same = S_ISLNK(a.mode) && gfsp_readlink(dst, &target, NULL) == 0
		       && strcmp(target, f->link) == 0;
	} else if (asprintf(&first, "%s/%s", x->root, f->link) >= 0) {
		same = S_ISREG(a.mode) && gfsp_lstat(first, &b, NULL) == 0 &&
		       a.ino == b.ino;
	} else {
		first = NULL;
	}
	free(target);
	free(first);
	return same;
}

int
gfsp_xfer_make(struct gfsp_xfer *x, uint32_t file)
{
	const struct gfsp_sfile *f = &x->fl->v[file];
	struct gfsp_error e = { 0 };
	char *dst = gfsp_xfer_dst_path(x, file), *tmp = NULL, *first = NULL;
	int rc = 0, tries;

	if (dst == NULL) {
		rc = OOM(&e);
		goto out;
	}
	if (f->type == GFSP_SF_DIR) {
		/* writable by us until dir_times gives it its own mode */
		rc = gfsp_mkdirs(dst, 0700, &e);
		goto out;
	}
	if ((f->type != GFSP_SF_SYMLINK && f->type != GFSP_SF_HARDLINK) ||
	    link_there(x, f, dst))
		goto out;
	/* a link is made under a temporary name and renamed into place */
	tmp = gfsp_xfer_tmp_path(x, file);
	if (tmp == NULL || (f->type == GFSP_SF_HARDLINK &&
			    asprintf(&first, "%s/%s", x->root, f->link) < 0)) {
		first = NULL;
		rc = OOM(&e);
		goto out;
	}
	gfsp_unlink(tmp, NULL);	/* a leftover of an interrupted run */
	for (tries = 0; tries < 2; tries++) {
		gfsp_error_clear(&e);
		rc = f->type == GFSP_SF_SYMLINK ? gfsp_symlink(f->link, tmp, &e)
		    : gfsp_link(first, tmp, &e);
		if (rc != GFSP_ENOENT || tries > 0 ||
		    (f->type == GFSP_SF_HARDLINK &&
		     gfsp_lstat(first, &(struct gfsp_stat){ 0 }, NULL) != 0))
			break;
		gfsp_error_clear(&e);
		if (gfsp_xfer_make_parent(tmp, &e) != 0)
			break;
	}
	if (rc == 0)
		rc = gfsp_install(tmp, dst, NULL, GFSP_PUT_ASIDE | GFSP_PUT_NODIR,
		    &e);
	if (rc) {
		gfsp_unlink(tmp, NULL);
	} else {
		x->res[file].installed = 1;
		/* a new name changed the first's ctime: record it anew */
		if (f->type == GFSP_SF_HARDLINK)
			rerecord(x, f->link, first);
	}
out:
	if (rc)
		gfsp_xfer_fail_file(x, file, rc, e.msg);
	free(dst);
	free(tmp);
	free(first);
	return rc;
}

void
gfsp_xfer_dir_times(struct gfsp_xfer *x)
{
	const struct gfsp_sfile *f;
	struct gfsp_error e;
	char *dst;
	size_t i;

	/* sorted by rel: backwards, every directory after what it holds */
	for (i = x->fl->n; i-- > 0;) {
		f = &x->fl->v[i];
		if (f->type != GFSP_SF_DIR || x->res[i].rc != 0)
			continue;
		dst = gfsp_xfer_dst_path(x, (uint32_t)i);
		if (dst == NULL)
			continue;
		gfsp_error_clear(&e);
		if (gfsp_chmod(dst, f->st.mode & 07777, &e) != 0 ||
		    gfsp_utimens(dst, f->st.atime, f->st.atime_ns, f->st.mtime,
				 f->st.mtime_ns, &e) != 0)
			gfsp_xfer_fail_file(x, (uint32_t)i, e.code, e.msg);
		free(dst);
	}
}

