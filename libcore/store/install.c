/*
 * install.c - the one owner of "put a file in place": a finished
 * temporary file given its name (gfsp_install), and a file written whole
 * under a temporary name and then installed (gfsp_write_whole, by a path
 * through the store; gfsp_write_whole_at, in a directory held open).
 *
 * Every rename of the library goes through here or through a backend's
 * own rename and replace operations; tools/lint.py fails on a rename(2),
 * renameat(2) or renameat2(2) anywhere else in libcore, cmd/ or preload/,
 * so that the temporary's naming, its sync, the roll-back and the
 * clean-up after a failure are written once.
 *
 * Two meanings of rename, never mixed: gfsp_rename (and gfsp_install
 * without flags) never replaces -- an existing name is GFSP_EEXIST;
 * GFSP_PUT_REPLACE replaces in one step, as rename(2) does.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "store.h"

int
gfsp_rename(const char *from, const char *to, struct gfsp_error *err)
{
	const struct gfsp_store_ops *ops;
	int rc = gfsp_store_pair("rename", from, to, &ops, err);

	return rc != 0 ? rc : ops->rename(from, to, err);
}

/* rename(2)'s meaning: what is at `to` goes, in one step */
static int
replace(const char *from, const char *to, struct gfsp_error *err)
{
	const struct gfsp_store_ops *ops;
	int rc = gfsp_store_pair("rename", from, to, &ops, err);

	return rc != 0 ? rc : ops->replace(from, to, err);
}

/*
 * What is at dst moved to aside, tmp renamed in, and only then the old
 * one removed; if tmp cannot go in, the old one is put back.  aside NULL:
 * "TMP.old".  With GFSP_PUT_NODIR the old one is unlinked, never removed
 * as a tree: a directory someone put at dst since it was looked at stays,
 * at aside.
 */
static int
swap_in(const char *tmp, const char *dst, const char *aside, int flags,
	struct gfsp_error *err)
{
	struct gfsp_error le;
	char *own = NULL;
	int rc;

	if (aside == NULL && asprintf(&own, "%s.old", tmp) < 0)
		return gfsp_error_set(err, GFSP_ENOMEM, "cannot rename '%s' to "
				     "'%s': out of memory", tmp, dst);
	if (aside == NULL)
		aside = own;
	rc = gfsp_rename(dst, aside, err);
	if (rc == 0) {
		gfsp_error_clear(&le);
		rc = gfsp_rename(tmp, dst, err);
		/* committed: the old one is garbage now, and failing to
		 * remove it does not undo the commit */
		if (rc)
			gfsp_rename(aside, dst, &le);
		else if (flags & GFSP_PUT_NODIR)
			gfsp_unlink(aside, &le);
		else
			gfsp_remove_tree(aside, &le);
	}
	free(own);
	return rc;
}

int
gfsp_install(const char *tmp, const char *dst, const char *aside, int flags,
	     struct gfsp_error *err)
{
	struct gfsp_stat st;
	struct gfsp_error le = { 0 };
	int rc;

	if (!(flags & (GFSP_PUT_ASIDE | GFSP_PUT_NODIR)))
		return (flags & GFSP_PUT_REPLACE) ? replace(tmp, dst, err) :
		       gfsp_rename(tmp, dst, err);
	rc = gfsp_lstat(dst, &st, &le);
	if (rc == GFSP_ENOENT)
		return gfsp_rename(tmp, dst, err);
	if (rc)
		return gfsp_error_set(err, rc, "%s", le.msg);
	if ((flags & GFSP_PUT_NODIR) && S_ISDIR(st.mode))
		return gfsp_error_set(err, GFSP_EEXIST, "'%s' is a directory "
				     "(refusing to replace it)", dst);
	if (flags & GFSP_PUT_ASIDE)
		return swap_in(tmp, dst, aside, flags, err);
	return (flags & GFSP_PUT_REPLACE) ? replace(tmp, dst, err) :
	       gfsp_rename(tmp, dst, err);
}

/* A hidden sibling of path to write it under: "DIR/.BASE.XXXXXXXXXXXXXXXX"
 * (malloc'd; NULL: out of memory) */
static char *
temp_sibling(const char *path)
{
	const char *base = strrchr(path, '/');
	char *t = NULL;

	base = base != NULL ? base + 1 : path;
	if (asprintf(&t, "%.*s.%s.%016llx", (int)(base - path), path, base,
		     (unsigned long long)gfsp_random64()) < 0)
		return NULL;
	return t;
}

/* A new file at tmp (mode), holding buf, synced if asked. */
static int
write_new(const char *tmp, const void *buf, size_t len, uint32_t mode,
	  int flags, struct gfsp_error *err)
{
	struct gfsp_file *f = NULL;
	struct gfsp_error cerr;
	int rc, crc;

	rc = gfsp_create(tmp, mode, NULL, &f, err);
	if (rc)
		return rc;
	if (len > 0)
		rc = gfsp_pwrite(f, buf, len, 0, err);
	if (rc == 0 && (flags & GFSP_PUT_SYNC))
		rc = gfsp_fsync(f, err);
	gfsp_error_clear(&cerr);
	crc = gfsp_close(f, rc ? &cerr : err);
	return rc ? rc : crc;
}

int
gfsp_write_whole(const char *path, const char *tmp, const void *buf,
		 size_t len, uint32_t mode, int flags, struct gfsp_error *err)
{
	struct gfsp_error le;
	char *own = NULL;
	int rc;

	if (tmp == NULL && (tmp = own = temp_sibling(path)) == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "cannot write '%s': "
				     "out of memory", path);
	gfsp_error_clear(&le);
	/* a name of the caller's own, left by a run that died: ours */
	if (own == NULL)
		gfsp_unlink(tmp, &le);
	gfsp_error_clear(&le);
	rc = write_new(tmp, buf, len, mode, flags, &le);
	if (rc)		/* named by what the caller asked for, then why */
		gfsp_error_set(err, rc, "cannot write '%s': %s", path, le.msg);
	if (rc == 0)
		rc = gfsp_install(tmp, path, NULL, flags & ~GFSP_PUT_SYNC, err);
	if (rc) {
		gfsp_error_clear(&le);
		gfsp_unlink(tmp, &le);
	}
	free(own);
	return rc;
}

/* fill() into a new private file (dfd, tmp), flushed, synced if asked;
 * fill returns 0 or a GFSP_* code */
static int
fill_new(int dfd, const char *dir, const char *tmp,
	 int (*fill)(FILE *, void *), void *arg, int flags,
	 struct gfsp_error *err)
{
	FILE *fp;
	int fd, rc, eno = 0;

	fd = gfsp_openat_private(dfd, dir, tmp, O_WRONLY | O_CREAT | O_TRUNC,
				 err);
	if (fd < 0)
		return -fd;
	if ((fp = fdopen(fd, "w")) == NULL) {
		close(fd);
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	/* errno cleared: a write error stdio saw is told by its cause */
	errno = 0;
	rc = fill(fp, arg);
	if (rc == 0 && ferror(fp))
		eno = errno != 0 ? errno : EIO;
	else if (rc == 0 && (fflush(fp) != 0 ||
			     ((flags & GFSP_PUT_SYNC) && fsync(fileno(fp)) != 0)))
		eno = errno;
	if (fclose(fp) != 0 && rc == 0 && eno == 0)
		eno = errno;
	if (rc == 0 && eno != 0)
		rc = gfsp_error_errno(err, eno, "cannot write '%s%s%s'",
				      dir ? dir : "", dir ? "/" : "", tmp);
	else if (rc)
		rc = gfsp_error_set(err, rc, "cannot write '%s%s%s': %s",
				    dir ? dir : "", dir ? "/" : "", tmp,
				    gfsp_strerror(rc));
	if (rc)
		unlinkat(dfd, tmp, 0);	/* ours: created or checked above */
	return rc;
}

int
gfsp_write_whole_at(int dfd, const char *dir, const char *name,
		    const char *tmp, int (*fill)(FILE *, void *), void *arg,
		    int flags, struct gfsp_error *err)
{
	const char *sep = dir ? "/" : "", *shown = dir ? dir : "";
	char own[256];
	int rc;

	if (tmp == NULL) {
		if ((size_t)snprintf(own, sizeof(own), ".%s.%016llx", name,
		    (unsigned long long)gfsp_random64()) >= sizeof(own))
			return gfsp_error_set(err, GFSP_EINVAL, "cannot write "
			    "'%s%s%s': name too long", shown, sep, name);
		tmp = own;
	}
	rc = fill_new(dfd, dir, tmp, fill, arg, flags, err);
	if (rc)
		return rc;
	/* one atomic step from the old file to the new */
	if (renameat(dfd, tmp, dfd, name) != 0) {
		rc = gfsp_error_errno(err, errno, "cannot rename '%s%s%s' to "
				      "'%s%s%s'", shown, sep, tmp, shown, sep,
				      name);
		unlinkat(dfd, tmp, 0);
	}
	return rc;
}
