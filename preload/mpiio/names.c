/*
 * names.c - split files removed, renamed and truncated by name: the
 * backend of the hook's unlink, unlinkat, remove, rename, renameat,
 * renameat2 and truncate (preload/hook/names.c) in libgfsplit-mpiio.so.
 *
 * To the program a split file is one regular file (posix.c), but libc
 * would find the directory it is and fail (EISDIR, ENOTEMPTY, ENOTDIR).
 * Here each call does to it what the kernel does to a plain file.  The
 * directory that holds a name is opened once, as the kernel would
 * resolve the program's path, and everything after is done from that
 * descriptor (fstatat, renameat2, openat, unlinkat): the name is never
 * looked up through a path again.
 *
 *   unlink F      F renamed to a hidden sibling, ".F.gfsplit-old.NODE.
 *                 PID.NONCE" (the name goes at once, as unlink's), then
 *                 that tree removed (gfsp_remove_tree_at: from
 *                 descriptors, no link followed, and only if it is the
 *                 directory found at F)
 *   rename A B    B absent: libc's rename (a directory moves as a file
 *                 does).  B there: A and B exchanged (renameat2
 *                 RENAME_EXCHANGE, so B is A's at once, never missing),
 *                 then the old B, now at A's name, hidden and removed as
 *                 above.  Without RENAME_EXCHANGE (some file systems) B is
 *                 moved aside first, and put back if A cannot follow
 *   truncate F N  F's first N bytes (zeros past its end) written to a new
 *                 regular file beside F (O_CREAT|O_EXCL|O_NOFOLLOW, a
 *                 random name: ".F.gfsplit-tmp.NODE.PID.NONCE"), given
 *                 F's owner and mode, synced, exchanged with F, and only
 *                 then the old tree removed.  F is then a plain file
 *
 * Where this is not what the kernel does to a plain file:
 *  - truncate makes a file in F's directory, so it needs write permission
 *    there too; it reads and writes N bytes (the parts still hold the
 *    bytes past N: a marker with a smaller size would let a later larger
 *    one show them again); a replacement that cannot keep F's owner (F
 *    another user's, not run as root) is refused, EPERM.  Descriptors
 *    opened before keep reading the version they opened (posix.c).
 *  - unlink and rename remove F's entries, so F's directory must be
 *    writable (one of this user's is made so first): another user's
 *    that is not is refused before anything is done, EACCES.
 *  - a replaced file whose removal fails half-way is left under its hidden
 *    name, with one line on stderr; the call itself has happened and
 *    returns 0.
 * RENAME_NOREPLACE and RENAME_EXCHANGE, and AT_REMOVEDIR, go to libc: the
 * kernel does them to a directory as to a file (rmdir of a split file
 * fails, ENOTEMPTY, where a file's fails ENOTDIR).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "core.h"
#include "dst.h"
#include "mpiio.h"
#include "store.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE	(1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE		(1 << 1)
#endif

#define COPY_BUF	((size_t)1 << 20)

/* A name the program gave: the directory that holds it, opened once (as
 * the kernel resolves the path, its last component aside), and that
 * last component. */
struct held {
	int pfd;		/* O_PATH | O_DIRECTORY */
	char *copy;		/* of the path */
	const char *base;	/* into copy */
};

/* 0, or -1: not a name to serve here (a trailing slash, ".", "..",
 * a parent that does not open: libc says why) */
static int
hold(int dirfd, const char *path, struct held *h)
{
	char *slash;

	h->pfd = -1;
	h->copy = strdup(path);
	if (h->copy == NULL || h->copy[0] == '\0')
		return -1;
	slash = strrchr(h->copy, '/');
	h->base = slash ? slash + 1 : h->copy;
	if (h->base[0] == '\0' || strcmp(h->base, ".") == 0 ||
	    strcmp(h->base, "..") == 0)
		return -1;
	if (slash == NULL)
		h->pfd = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	else if (slash == h->copy)
		h->pfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	else {
		*slash = '\0';
		h->pfd = openat(dirfd, h->copy, O_PATH | O_DIRECTORY |
		    O_CLOEXEC);
	}
	return h->pfd < 0 ? -1 : 0;
}

static void
unhold(struct held *h)
{
	if (h->pfd >= 0)
		close(h->pfd);
	free(h->copy);
	h->pfd = -1;
	h->copy = NULL;
}

/* (h) is a split file, its final link not followed: 1 and *st (the
 * directory's), else 0 */
static int
is_split(const struct held *h, struct stat *st)
{
	uint64_t size;

	return fstatat(h->pfd, h->base, st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(st->st_mode) && sf_split_size(h->pfd, h->base, &size) == 0;
}

static void
id_of(const struct stat *st, uint64_t id[2])
{
	id[0] = (uint64_t)st->st_dev;
	id[1] = (uint64_t)st->st_ino;
}

static int
same_id(int dfd, const char *name, const uint64_t id[2])
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (uint64_t)st.st_dev == id[0] && (uint64_t)st.st_ino == id[1];
}

/* A hidden sibling of base, ".BASE.gfsplit-TAG.NODE.PID.NONCE" (malloc'd,
 * NULL: out of memory) */
static char *
sibling(const char *base, const char *tag)
{
	struct gfsp_dst d;
	char *s = NULL;

	if (gfsp_dst_parse(&d, base, NULL) == 0)
		s = gfsp_dst_sibling(&d, tag);
	gfsp_dst_free(&d);
	return s;
}

/* rename that never replaces: renameat2 RENAME_NOREPLACE, or where the
 * file system has no such flag a plain renameat (to a random name) */
static int
rename_new(int fd1, const char *n1, int fd2, const char *n2)
{
	if (renameat2(fd1, n1, fd2, n2, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
		return -1;
	return renameat(fd1, n1, fd2, n2);
}

/*
 * (dfd, name) moved to a hidden sibling, *aside (malloc'd), named after
 * it, or after "gfsplit" where its own name would be too long for one.
 * 0, or -1 and errno.
 */
static int
hide(int dfd, const char *name, char **aside)
{
	const char *stem = name;
	int i;

	for (i = 0; i < 2; i++, stem = "gfsplit") {
		if ((*aside = sibling(stem, "old")) == NULL) {
			errno = ENOMEM;
			return -1;
		}
		if (rename_new(dfd, name, dfd, *aside) == 0)
			return 0;
		free(*aside);
		*aside = NULL;
		if (errno != ENAMETOOLONG)
			break;
	}
	return -1;
}

/*
 * The tree at (dfd, name), which the call replaced or removed: that
 * directory (id) only, from dfd.  The call has happened whatever this
 * does: a failure leaves it there, said on stderr.
 */
static void
discard(int dfd, const char *name, const uint64_t id[2], const char *shown)
{
	struct gfsp_error err;
	struct stat st;
	int fd;

	/* this user's, read-only: its entries go only once it is writable */
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_ino == id[1] &&
	    st.st_uid == geteuid() &&
	    (st.st_mode & (S_IWUSR | S_IXUSR)) != (S_IWUSR | S_IXUSR))
		(void)fchmod(fd, (st.st_mode & 07777) | S_IWUSR | S_IXUSR);
	if (fd >= 0)
		close(fd);
	gfsp_error_clear(&err);
	if (gfsp_remove_tree_at(dfd, name, id, shown, &err) != 0)
		fprintf(stderr, "gfsplit-mpiio: the split file '%s' was "
		    "replaced or removed, but its old tree is left as '%s': "
		    "%s\n", shown, name, err.msg);
}

/*
 * Put (sd, sname) at (dd, dname), in place of what is there (id, a split
 * file or a plain one), which is then removed.  0, or -1 and errno, with
 * both names as they were.
 */
static int
replace(int sd, const char *sname, int dd, const char *dname,
	const uint64_t id[2], const char *shown)
{
	char *aside = NULL;
	int e = 0;

	if (renameat2(sd, sname, dd, dname, RENAME_EXCHANGE) == 0) {
		/* the old one at sname now, unless dname changed meanwhile */
		if (!same_id(sd, sname, id)) {
			(void)renameat2(sd, sname, dd, dname, RENAME_EXCHANGE);
			errno = EBUSY;
			return -1;
		}
		if (hide(sd, sname, &aside) == 0)
			discard(sd, aside, id, shown);
		else
			discard(sd, sname, id, shown);
		free(aside);
		return 0;
	}
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
		return -1;
	/* no exchange here: the old one aside, the new one in, or back */
	if (hide(dd, dname, &aside) != 0) {
		e = errno;
	} else if (!same_id(dd, aside, id)) {
		(void)rename_new(dd, aside, dd, dname);
		e = EBUSY;
	} else if (rename_new(sd, sname, dd, dname) != 0) {
		e = errno;
		(void)rename_new(dd, aside, dd, dname);
	} else {
		discard(dd, aside, id, shown);
	}
	free(aside);
	if (e == 0)
		return 0;
	errno = e;
	return -1;
}

/* The split file may lose its entries: this user's (discard makes it
 * writable), or writable and searchable by this user.  0 or errno. */
static int
may_empty(const struct held *h, const struct stat *st)
{
	if (st->st_uid == geteuid() ||
	    faccessat(h->pfd, h->base, W_OK | X_OK, AT_EACCESS) == 0)
		return 0;
	return errno;
}

/* -------------------------------------------------------------- unlink */

int
hk_unlink(int dirfd, const char *path, int flags)
{
	struct held h = { -1, NULL, NULL };
	struct stat st;
	uint64_t id[2];
	char *aside = NULL;
	int was = hk_inside, served = 0, e = 0;

	/* (AT_REMOVEDIR: rmdir's, libc's) */
	if (path == NULL || flags != 0 || !sf_from_program())
		return 0;
	hk_inside = 1;
	if (hold(dirfd, path, &h) != 0 || !is_split(&h, &st))
		goto out;
	served = 1;
	id_of(&st, id);
	if ((e = may_empty(&h, &st)) != 0)
		goto out;
	if (hide(h.pfd, h.base, &aside) != 0)
		e = errno;
	else if (!same_id(h.pfd, aside, id)) {
		/* another file took the name since: it stays */
		(void)rename_new(h.pfd, aside, h.pfd, h.base);
		e = EBUSY;
	} else
		discard(h.pfd, aside, id, path);
out:
	free(aside);
	unhold(&h);
	hk_inside = was;
	if (e) {
		errno = e;
		return -1;
	}
	return served;
}

/* -------------------------------------------------------------- rename */

int
hk_rename(int olddirfd, const char *oldpath, int newdirfd,
	  const char *newpath, unsigned flags)
{
	struct held a = { -1, NULL, NULL }, b = { -1, NULL, NULL };
	struct stat as, bs;
	uint64_t id[2];
	int was = hk_inside, served = 0, e = 0, asplit, bsplit;

	/* (RENAME_NOREPLACE, RENAME_EXCHANGE: the kernel's, as for files) */
	if (oldpath == NULL || newpath == NULL || flags != 0 ||
	    !sf_from_program())
		return 0;
	hk_inside = 1;
	if (hold(olddirfd, oldpath, &a) != 0 || hold(newdirfd, newpath, &b) != 0)
		goto out;
	asplit = is_split(&a, &as);
	if (!asplit && fstatat(a.pfd, a.base, &as, AT_SYMLINK_NOFOLLOW) != 0)
		goto out;
	/* to a free name a directory moves as a file does: libc's */
	bsplit = is_split(&b, &bs);
	if (!bsplit && fstatat(b.pfd, b.base, &bs, AT_SYMLINK_NOFOLLOW) != 0)
		goto out;
	if (!asplit && !bsplit)
		goto out;
	served = 1;
	id_of(&bs, id);
	if (as.st_dev == bs.st_dev && as.st_ino == bs.st_ino)
		goto out;		/* one file: nothing to do */
	if (S_ISDIR(bs.st_mode) && !bsplit)
		e = EISDIR;		/* a file onto a directory */
	else if (S_ISDIR(as.st_mode) && !asplit)
		e = ENOTDIR;		/* a directory onto a file */
	else if (bsplit && (e = may_empty(&b, &bs)) != 0)
		;
	else if (replace(a.pfd, a.base, b.pfd, b.base, id, newpath) != 0)
		e = errno;
out:
	unhold(&a);
	unhold(&b);
	hk_inside = was;
	if (e) {
		errno = e;
		return -1;
	}
	return served;
}

/* ------------------------------------------------------------ truncate */

/* n bytes of l at its start into fd; 0 or errno */
static int
copy_start(struct gfsp_layout *l, int fd, uint64_t n, const char *shown)
{
	struct gfsp_error err;
	uint64_t off = 0, got;
	size_t w, k = 0;
	ssize_t r;
	char *buf;
	int e = 0;

	if (n == 0)
		return 0;
	if ((buf = malloc(COPY_BUF)) == NULL)
		return ENOMEM;
	gfsp_error_clear(&err);
	while (off < n && e == 0) {
		if (gfsp_layout_pread(l, buf, GFSP_MIN(n - off, COPY_BUF), off,
		    &got, &err) != 0) {
			fprintf(stderr, "gfsplit-mpiio: cannot truncate '%s': "
			    "%s\n", shown, err.msg);
			e = EIO;
			break;
		}
		if (got == 0)
			break;		/* the end: zeros from ftruncate */
		for (w = 0; w < got && e == 0; w += k) {
			r = pwrite(fd, buf + w, got - w, (off_t)(off + w));
			if (r < 0 && errno == EINTR)
				k = 0;
			else if (r <= 0)
				e = r < 0 ? errno : EIO;
			else
				k = (size_t)r;
		}
		off += got;
	}
	free(buf);
	return e;
}

/*
 * The replacement of the split file st at h: a new regular file holding
 * its first size bytes, with its owner and mode, at *tmp (beside it).
 * 0 or errno, nothing left behind.
 */
static int
make_truncated(const struct held *h, const struct stat *st, int64_t size,
	       const char *shown, char **tmp)
{
	struct gfsp_layout *l = NULL;
	struct gfsp_error err;
	struct stat opened;
	char self[64];
	int dfd, fd = -1, e = 0;

	*tmp = NULL;
	dfd = openat(h->pfd, h->base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &opened) != 0) {
		e = errno;
		goto out;
	}
	if (opened.st_dev != st->st_dev || opened.st_ino != st->st_ino) {
		e = EBUSY;
		goto out;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", dfd);
	gfsp_error_clear(&err);
	if (gfsp_layout_open(self, &l, &err) != 0) {
		fprintf(stderr, "gfsplit-mpiio: cannot truncate '%s': %s\n",
		    shown, err.msg);
		e = EIO;
		goto out;
	}
	if ((*tmp = sibling(h->base, "tmp")) == NULL) {
		e = ENOMEM;
		goto out;
	}
	fd = openat(h->pfd, *tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd < 0) {
		e = errno;
		free(*tmp);
		*tmp = NULL;
		goto out;
	}
	e = copy_start(l, fd, GFSP_MIN((uint64_t)size, gfsp_layout_size(l)),
	    shown);
	if (e == 0 && ftruncate(fd, (off_t)size) != 0)
		e = errno;
	/* the owner first (a chown drops set-id bits), then the mode */
	if (e == 0 && (st->st_uid != geteuid() || st->st_gid != getegid()) &&
	    fchown(fd, st->st_uid, st->st_gid) != 0) {
		e = errno;
		fprintf(stderr, "gfsplit-mpiio: cannot truncate '%s': its "
		    "replacement cannot keep its owner (uid %u, gid %u): %s\n",
		    shown, (unsigned)st->st_uid, (unsigned)st->st_gid,
		    strerror(e));
	}
	if (e == 0 && fchmod(fd, st->st_mode & 0666) != 0)
		e = errno;
	if (e == 0 && size > 0 && fsync(fd) != 0)
		e = errno;
out:
	if (fd >= 0 && close(fd) != 0 && e == 0)
		e = errno;
	if (e && *tmp != NULL) {
		(void)unlinkat(h->pfd, *tmp, 0);
		free(*tmp);
		*tmp = NULL;
	}
	gfsp_layout_close(l);
	if (dfd >= 0)
		close(dfd);
	return e;
}

int
hk_truncate(const char *path, int64_t size)
{
	struct held h = { -1, NULL, NULL };
	struct stat st;
	uint64_t id[2];
	char *real = NULL, *tmp = NULL;
	int was = hk_inside, served = 0, e = 0;

	if (path == NULL || !sf_from_program())
		return 0;
	hk_inside = 1;
	/* truncate follows links, all of them: so does realpath */
	if ((real = realpath(path, NULL)) == NULL ||
	    hold(AT_FDCWD, real, &h) != 0 || !is_split(&h, &st))
		goto out;
	served = 1;
	id_of(&st, id);
	if (size < 0)
		e = EINVAL;
	/* a file's write permission: its directory's (posix.c, as_file) */
	else if (faccessat(h.pfd, h.base, W_OK, AT_EACCESS) != 0)
		e = errno;
	else if ((e = make_truncated(&h, &st, size, path, &tmp)) != 0)
		;
	else if (replace(h.pfd, tmp, h.pfd, h.base, id, path) != 0) {
		e = errno;
		(void)unlinkat(h.pfd, tmp, 0);
	}
out:
	free(tmp);
	free(real);
	unhold(&h);
	hk_inside = was;
	if (e) {
		errno = e;
		return -1;
	}
	return served;
}
