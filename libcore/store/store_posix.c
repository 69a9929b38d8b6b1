/*
 * store_posix.c - the POSIX backend: plain paths on any local or mounted
 * file system.  errno is translated here, its text kept in the message.
 * A path below a confined root is resolved by store_confine.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "store.h"
#include "store_impl.h"

#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* one system call moves at most this much (Linux caps near 2 GiB anyway) */
#define POSIX_IO_MAX	((size_t)1 << 30)

struct posix_file {
	struct gfsp_file_hdr hdr;	/* first: see store.h */
	int fd;
};

/*
 * The error of an operation on a path: errno's text, and below a confined
 * root what a "too many symbolic links" means there.
 */
static int
posix_fail(struct gfsp_error *err, int e, const struct at *a, const char *fmt,
	   ...)
{
	char what[GFSP_ERRMSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (a->root != NULL && e == ELOOP)
		return gfsp_error_set(err, GFSP_EACCES, "%s: a symbolic link on "
		    "the way (links below '%s' are not followed)", what,
		    a->root);
	return gfsp_error_errno(err, e, "%s", what);
}

/*
 * GFSP_O_PRIVATE: a new file (O_CREAT: O_EXCL), or an existing one that is surely
 * a temporary of ours, left by an earlier run or made by another rank
 * of this one: a regular file of this user's with one name (a hard link
 * to someone's file would have two).  oflags hold O_NOFOLLOW and
 * O_NONBLOCK.
 */
static int
open_private(const struct at *a, int oflags, uint32_t mode, int *e)
{
	struct stat sb;
	int fd;

	if (oflags & O_CREAT) {
		do {
			fd = openat(a->dfd, a->name, oflags | O_EXCL,
				    (mode_t)mode);
		} while (fd < 0 && errno == EINTR);
		if (fd >= 0 || errno != EEXIST) {
			*e = fd < 0 ? errno : 0;
			return fd;
		}
	}
	do {
		fd = openat(a->dfd, a->name, oflags & ~(O_CREAT | O_TRUNC));
	} while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		*e = errno;
		return -1;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_uid != geteuid() || sb.st_nlink != 1) {
		close(fd);
		*e = EEXIST;	/* not ours: someone else's name */
		return -1;
	}
	*e = 0;
	if ((oflags & O_TRUNC) && ftruncate(fd, 0) != 0) {
		*e = errno;
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Why open failed; with GFSP_O_NOFOLLOW, ELOOP may mean a final link. */
static int
open_failed(const char *path, const struct at *a, int flags, int e,
	    struct gfsp_error *err)
{
	struct stat sb;

	if ((flags & GFSP_O_NOFOLLOW) && e == ELOOP && a->dfd != -1 &&
	    fstatat(a->dfd, a->name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(sb.st_mode))
		return gfsp_error_set(err, GFSP_EINVAL, "'%s': a symbolic link "
				     "(not followed)", path);
	/* a FIFO without a reader, opened for writing without blocking */
	if (e == ENXIO && a->dfd != -1 &&
	    fstatat(a->dfd, a->name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISREG(sb.st_mode))
		return gfsp_error_set(err, GFSP_EINVAL, "'%s': not a regular "
				     "file", path);
	return posix_fail(err, e, a, "cannot %s '%s'",
			  (flags & GFSP_O_CREAT) ? "create" : "open", path);
}

/*
 * Every open: fd, opened O_NONBLOCK (a FIFO swapped in for the file
 * answers at once instead of holding the thread until someone opens its
 * other end), must be a regular file; then it blocks again, as files
 * are read and written.
 */
static int
regular_only(int fd, const char *path, struct gfsp_error *err)
{
	struct stat sb;
	int fl;

	if (fstat(fd, &sb) != 0)
		return gfsp_error_errno(err, errno, "cannot stat '%s'", path);
	if (!S_ISREG(sb.st_mode))
		return gfsp_error_set(err, GFSP_EINVAL, "'%s': not a regular "
				     "file", path);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
		return gfsp_error_errno(err, errno, "cannot open '%s'", path);
	return 0;
}

/* The open(2) flags of store flags */
static int
posix_oflags(int flags)
{
	int oflags = O_CLOEXEC | O_NONBLOCK;

	switch (flags & 0x3) {
	case GFSP_O_WRONLY:
		oflags |= O_WRONLY;
		break;
	case GFSP_O_RDWR:
		oflags |= O_RDWR;
		break;
	default:
		oflags |= O_RDONLY;
		break;
	}
	if (flags & GFSP_O_CREAT)
		oflags |= O_CREAT;
	if (flags & GFSP_O_EXCL)
		oflags |= O_EXCL;
	if (flags & GFSP_O_TRUNC)
		oflags |= O_TRUNC;
	if (flags & GFSP_O_DIRECT)
		oflags |= O_DIRECT;
	if (flags & (GFSP_O_NOFOLLOW | GFSP_O_PRIVATE))
		oflags |= O_NOFOLLOW;
	return oflags;
}

static int
posix_open(const char *path, int flags, uint32_t mode, struct gfsp_file **out,
	   struct gfsp_error *err)
{
	struct posix_file *pf;
	struct at a;
	int oflags = posix_oflags(flags), fd = -1, rc = 0, e;

	*out = NULL;
	pf = calloc(1, sizeof(*pf));
	if (pf == NULL || (pf->hdr.path = strdup(path)) == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM, "cannot open '%s': out of "
				   "memory", path);
		goto out;
	}
	e = gfsp_at_get(path, &a);
	if (a.nofollow)
		oflags |= O_NOFOLLOW;
	if (e == 0 && (flags & GFSP_O_PRIVATE))
		fd = open_private(&a, oflags, mode, &e);
	else if (e == 0)
		do {
			fd = openat(a.dfd, a.name, oflags, (mode_t)mode);
			e = fd < 0 ? errno : 0;
		} while (e == EINTR);
	if (e)
		rc = open_failed(path, &a, flags, e, err);
	gfsp_at_put(&a);
	if (rc == 0 && (rc = regular_only(fd, path, err)) != 0)
		close(fd);
	if (rc)
		goto out;
	pf->hdr.ops = &gfsp_store_posix;
	pf->fd = fd;
	*out = (struct gfsp_file *)pf;
	pf = NULL;
out:
	if (pf != NULL) {
		free(pf->hdr.path);
		free(pf);
	}
	return rc;
}

static int
posix_close(struct gfsp_file *f, struct gfsp_error *err)
{
	struct posix_file *pf = (struct posix_file *)f;
	int rc = 0;

	/* no retry on EINTR: on Linux the descriptor is gone either way */
	if (close(pf->fd) != 0 && errno != EINTR)
		rc = gfsp_error_errno(err, errno, "cannot close '%s'",
				     pf->hdr.path);
	free(pf->hdr.path);
	free(pf);
	return rc;
}

static int
posix_pread(struct gfsp_file *f, void *buf, size_t len, uint64_t off,
	    size_t *done, struct gfsp_error *err)
{
	struct posix_file *pf = (struct posix_file *)f;
	size_t got = 0;
	ssize_t n;
	int rc = 0;

	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off) {
		rc = gfsp_error_set(err, GFSP_EINVAL, "cannot read '%s': offset "
				   "%llu out of range", pf->hdr.path,
				   (unsigned long long)off);
		goto out;
	}
	while (got < len) {
		n = pread(pf->fd, (char *)buf + got,
			  GFSP_MIN(len - got, POSIX_IO_MAX),
			  (off_t)(off + got));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = gfsp_error_errno(err, errno, "cannot read '%s'",
					     pf->hdr.path);
			goto out;
		}
		if (n == 0)
			break;		/* end of file */
		got += (size_t)n;
	}
out:
	if (done != NULL)
		*done = got;
	return rc;
}

static int
posix_pwrite(struct gfsp_file *f, const void *buf, size_t len, uint64_t off,
	     struct gfsp_error *err)
{
	struct posix_file *pf = (struct posix_file *)f;
	size_t put = 0;
	ssize_t n;

	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
		return gfsp_error_set(err, GFSP_EINVAL, "cannot write '%s': "
				     "offset %llu out of range", pf->hdr.path,
				     (unsigned long long)off);
	while (put < len) {
		n = pwrite(pf->fd, (const char *)buf + put,
			   GFSP_MIN(len - put, POSIX_IO_MAX),
			   (off_t)(off + put));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return gfsp_error_errno(err, errno, "cannot write '%s'",
					       pf->hdr.path);
		}
		if (n == 0)	/* no progress and no errno: do not spin */
			return gfsp_error_set(err, GFSP_EIO, "cannot write '%s': "
					     "short write at offset %llu",
					     pf->hdr.path,
					     (unsigned long long)(off + put));
		put += (size_t)n;
	}
	return 0;
}

static void
stat_fill(struct gfsp_stat *st, const struct stat *sb)
{
	st->size = (uint64_t)sb->st_size;
	st->mode = (uint32_t)sb->st_mode;
	st->mtime = (int64_t)sb->st_mtime;
	st->mtime_ns = (uint64_t)sb->st_mtim.tv_nsec;
	st->ino = (uint64_t)sb->st_ino;
	/* no generation on POSIX; and not the device either: a file of a
	 * shared file system (NFS, Lustre) has another st_dev on every
	 * client, and the cache's identity of a file must be the same on
	 * every node */
	st->gen = 0;
	st->ctime = (int64_t)sb->st_ctim.tv_sec;
	st->ctime_ns = (uint64_t)sb->st_ctim.tv_nsec;
	st->blocks_bytes = (uint64_t)sb->st_blocks * 512;
	st->atime = (int64_t)sb->st_atim.tv_sec;
	st->atime_ns = (uint64_t)sb->st_atim.tv_nsec;
	st->nlink = (uint64_t)sb->st_nlink;
	st->uid = (uint32_t)sb->st_uid;
	st->gid = (uint32_t)sb->st_gid;
}

static int
posix_fstat(struct gfsp_file *f, struct gfsp_stat *st, struct gfsp_error *err)
{
	struct posix_file *pf = (struct posix_file *)f;
	struct stat sb;

	if (fstat(pf->fd, &sb) != 0)
		return gfsp_error_errno(err, errno, "cannot stat '%s'",
				       pf->hdr.path);
	stat_fill(st, &sb);
	return 0;
}

static int
posix_ftruncate(struct gfsp_file *f, uint64_t size, struct gfsp_error *err)
{
	struct posix_file *pf = (struct posix_file *)f;
	int r;

	if (size > (uint64_t)INT64_MAX)
		return gfsp_error_set(err, GFSP_EINVAL, "cannot truncate '%s': "
				     "size %llu out of range", pf->hdr.path,
				     (unsigned long long)size);
	do {
		r = ftruncate(pf->fd, (off_t)size);
	} while (r != 0 && errno == EINTR);
	if (r != 0)
		return gfsp_error_errno(err, errno, "cannot truncate '%s'",
				       pf->hdr.path);
	return 0;
}

static void
posix_willneed(struct gfsp_file *f, uint64_t off, uint64_t len)
{
	/* a hint: its failure changes nothing */
	(void)posix_fadvise(((struct posix_file *)f)->fd, (off_t)off,
	    (off_t)len, POSIX_FADV_WILLNEED);
}

static int
posix_fd(struct gfsp_file *f)
{
	return ((struct posix_file *)f)->fd;
}

static int
posix_fsetattr(struct gfsp_file *f, uint32_t mode, int64_t atime,
	       uint64_t atime_ns, int64_t mtime, uint64_t mtime_ns,
	       struct gfsp_error *err)
{
	struct posix_file *pf = (struct posix_file *)f;
	const struct timespec ts[2] = {
		{ .tv_sec = (time_t)atime, .tv_nsec = (long)atime_ns },
		{ .tv_sec = (time_t)mtime, .tv_nsec = (long)mtime_ns },
	};

	if (fchmod(pf->fd, (mode_t)(mode & 07777)) != 0)
		return gfsp_error_errno(err, errno, "cannot change permissions "
				       "of '%s'", pf->hdr.path);
	if (futimens(pf->fd, ts) != 0)
		return gfsp_error_errno(err, errno, "cannot set times of '%s'",
				       pf->hdr.path);
	return 0;
}

static int
posix_fsync(struct gfsp_file *f, struct gfsp_error *err)
{
	struct posix_file *pf = (struct posix_file *)f;

	/* EINVAL/EROFS: a pipe or device that has nothing to sync */
	if (fsync(pf->fd) != 0 && errno != EINVAL && errno != EROFS)
		return gfsp_error_errno(err, errno, "cannot sync '%s'",
				       pf->hdr.path);
	return 0;
}

/*
 * The path operations below share one shape: resolve (at_get), do the
 * *at() call there, report with the path and, for a link below a
 * confined root, the cause (posix_fail).
 */
#define AT_CALL(path, a, call, ...) do {				\
	int e_ = gfsp_at_get((path), &(a));					\
	int rc_ = 0;							\
	if (e_ == 0 && (call) != 0)					\
		e_ = errno;						\
	if (e_ != 0)							\
		rc_ = posix_fail(err, e_, &(a), __VA_ARGS__);		\
	gfsp_at_put(&(a));							\
	return rc_;							\
} while (0)

static int
stat_at(const char *path, struct gfsp_stat *st, int follow,
	struct gfsp_error *err)
{
	struct stat sb;
	struct at a;
	int e = gfsp_at_get(path, &a), rc = 0;

	if (e == 0 && fstatat(a.dfd, a.name, &sb, gfsp_at_flag(&a, follow)) != 0)
		e = errno;
	if (e)
		rc = posix_fail(err, e, &a, "cannot stat '%s'", path);
	else
		stat_fill(st, &sb);
	gfsp_at_put(&a);
	return rc;
}

static int
posix_stat(const char *path, struct gfsp_stat *st, struct gfsp_error *err)
{
	return stat_at(path, st, 1, err);
}

static int
posix_lstat(const char *path, struct gfsp_stat *st, struct gfsp_error *err)
{
	return stat_at(path, st, 0, err);
}

/*
 * readlink(2) neither says how long the target is nor terminates it: a
 * result that fills the buffer may have been cut, so the buffer grows
 * until one is left over.  (lstat's st_size would be a guess only: the
 * link may change in between, and /proc's links report 0.)
 */
static int
posix_readlink(const char *path, char **target, struct gfsp_error *err)
{
	char *buf = NULL, *nb;
	size_t cap = 256;
	ssize_t n = 0;
	struct at a;
	int e = gfsp_at_get(path, &a), rc = 0;

	*target = NULL;
	while (e == 0) {
		nb = realloc(buf, cap);
		if (nb == NULL) {
			e = ENOMEM;
			break;
		}
		buf = nb;
		n = readlinkat(a.dfd, a.name, buf, cap);
		if (n < 0)
			e = errno;
		else if ((size_t)n < cap)
			break;
		cap *= 2;
	}
	if (e) {
		free(buf);
		rc = posix_fail(err, e, &a, "cannot readlink '%s'", path);
	} else {
		buf[n] = '\0';
		*target = buf;
	}
	gfsp_at_put(&a);
	return rc;
}

static int
posix_symlink(const char *target, const char *path, struct gfsp_error *err)
{
	struct at a;

	AT_CALL(path, a, symlinkat(target, a.dfd, a.name),
		"cannot create symbolic link '%s'", path);
}

/* Both paths of a two-path operation (at_put both, whatever it says). */
static int
at_get2(const char *from, const char *to, struct at *a, struct at *b)
{
	int e = gfsp_at_get(from, a);

	if (e == 0)
		return gfsp_at_get(to, b);
	gfsp_at_get("", b);
	return e;
}

static int
posix_link(const char *from, const char *to, struct gfsp_error *err)
{
	struct at a, b;
	int e = at_get2(from, to, &a, &b), rc = 0;

	/* flags 0: a final link is linked itself, as link(2) does */
	if (e == 0 && linkat(a.dfd, a.name, b.dfd, b.name, 0) != 0)
		e = errno;
	if (e)
		rc = posix_fail(err, e, a.root ? &a : &b, "cannot link '%s' to "
				"'%s'", from, to);
	gfsp_at_put(&a);
	gfsp_at_put(&b);
	return rc;
}

static int
posix_utimens(const char *path, int64_t atime, uint64_t atime_ns,
	      int64_t mtime, uint64_t mtime_ns, struct gfsp_error *err)
{
	const struct timespec ts[2] = {
		{ .tv_sec = (time_t)atime, .tv_nsec = (long)atime_ns },
		{ .tv_sec = (time_t)mtime, .tv_nsec = (long)mtime_ns },
	};

	struct at a;

	AT_CALL(path, a, utimensat(a.dfd, a.name, ts, gfsp_at_flag(&a, 1)),
		"cannot set times of '%s'", path);
}

static int
posix_chmod(const char *path, uint32_t mode, struct gfsp_error *err)
{
	struct at a;

	/* (glibc's fchmodat refuses a link with AT_SYMLINK_NOFOLLOW) */
	AT_CALL(path, a, fchmodat(a.dfd, a.name, (mode_t)(mode & 07777),
				  a.nofollow ? AT_SYMLINK_NOFOLLOW : 0),
		"cannot change permissions of '%s'", path);
}

static int
posix_mkdir(const char *path, uint32_t mode, struct gfsp_error *err)
{
	struct at a;

	AT_CALL(path, a, mkdirat(a.dfd, a.name, (mode_t)mode),
		"cannot create directory '%s'", path);
}

static int
rmdir_at(const char *path, struct gfsp_error *err)
{
	struct at a;

	AT_CALL(path, a, unlinkat(a.dfd, a.name, AT_REMOVEDIR),
		"cannot remove directory '%s'", path);
}

static int
posix_rmdir(const char *path, struct gfsp_error *err)
{
	int rc = rmdir_at(path, err);

	gfsp_dircache_drop_all();	/* (a cached directory may be gone) */
	return rc;
}

/*
 * remove_tree: everything below the directory dfd (open, O_RDONLY), which
 * lives on device dev, from descriptors only:
 *
 *   dfd --listed "a" (lstat: directory, ino 12)
 *        openat(dfd, "a", O_DIRECTORY | O_NOFOLLOW) --fstat: ino 12? dev?
 *              yes: recurse into it, then unlinkat(dfd, "a", AT_REMOVEDIR)
 *              no (swapped meanwhile): left alone, an error
 *
 * Nothing is looked up by a path, so a link someone puts in place of a
 * directory while we work is never followed, and a directory moved in
 * from elsewhere is not the one listed.  The first error is kept in *e;
 * the walk goes on.
 */
#define TREE_DEPTH_MAX	4096

static void
tree_fail(int *e, char *what, size_t len, const char *rel, int code)
{
	if (*e == 0) {
		*e = code;
		snprintf(what, len, "%s", rel);
	}
}

static void
remove_below(int dfd, dev_t dev, const char *rel, int depth, int *e,
	     char *what, size_t wlen)
{
	struct stat listed, opened;
	struct dirent *de;
	char *sub;
	DIR *d;
	int fd, sfd;

	if (depth > TREE_DEPTH_MAX) {
		tree_fail(e, what, wlen, rel, ELOOP);
		return;
	}
	fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);	/* closedir closes it */
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (d == NULL) {
		tree_fail(e, what, wlen, rel, errno);
		if (fd >= 0)
			close(fd);
		return;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (de == NULL) {
			if (errno != 0)
				tree_fail(e, what, wlen, rel, errno);
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (asprintf(&sub, "%s/%s", rel, de->d_name) < 0) {
			tree_fail(e, what, wlen, rel, ENOMEM);
			break;
		}
		if (fstatat(dfd, de->d_name, &listed, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno != ENOENT)
				tree_fail(e, what, wlen, sub, errno);
		} else if (!S_ISDIR(listed.st_mode)) {
			if (unlinkat(dfd, de->d_name, 0) != 0 && errno != ENOENT)
				tree_fail(e, what, wlen, sub, errno);
		} else if (listed.st_dev != dev) {
			tree_fail(e, what, wlen, sub, EXDEV);	/* a mount */
		} else if ((sfd = openat(dfd, de->d_name, O_RDONLY |
					 O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC)) < 0) {
			tree_fail(e, what, wlen, sub, errno);
		} else {
			if (fstat(sfd, &opened) != 0)
				tree_fail(e, what, wlen, sub, errno);
			else if (opened.st_ino != listed.st_ino ||
				 opened.st_dev != listed.st_dev)
				tree_fail(e, what, wlen, sub, ESTALE);
			else {
				remove_below(sfd, dev, sub, depth + 1, e, what,
					     wlen);
				if (unlinkat(dfd, de->d_name, AT_REMOVEDIR) != 0
				    && errno != ENOENT)
					tree_fail(e, what, wlen, sub, errno);
			}
			close(sfd);
		}
		free(sub);
	}
	closedir(d);
}

/*
 * mkdir -p.  Below a confined root every operation is from its
 * descriptors already, one by one; elsewhere the way is chased and made
 * one component at a time (chase_safe), following no other user's link.
 */
static int
posix_mkdirs(const char *path, uint32_t mode, struct gfsp_error *err)
{
	struct at a;
	int held, fd;

	gfsp_at_get(path, &a);
	held = a.root != NULL;
	gfsp_at_put(&a);
	if (held)
		return gfsp_mkdirs_paths(path, mode, err);
	fd = gfsp_chase_safe(path, (mode_t)(mode & 07777));
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == EPERM)
		return gfsp_error_set(err, GFSP_EACCES, "cannot create "
		    "directory '%s': a symbolic link of another user's on the "
		    "way (not followed)", path);
	if (errno == ENOTDIR || errno == EEXIST)
		return gfsp_error_set(err, GFSP_EEXIST, "'%s' is not a "
		    "directory (or something on the way to it is not)", path);
	return gfsp_error_errno(err, errno, "cannot create directory '%s'",
			       path);
}

static int
posix_remove_tree(const char *path, struct gfsp_error *err)
{
	struct at a;
	int e = gfsp_at_get(path, &a), rc;

	rc = e ? posix_fail(err, e, &a, "cannot remove '%s'", path) :
	    gfsp_remove_tree_at(a.dfd, a.name, NULL, path, err);
	gfsp_at_put(&a);
	return rc;
}

/*
 * The tree at (dfd, name), from that descriptor only (POSIX): a caller
 * that holds the parent directory itself (the preload library, serving a
 * program's unlinkat or rename) removes what it found there and nothing
 * the name may have come to mean since.  id (may be NULL): the st_dev and
 * st_ino the caller saw there; anything else at the name now is left
 * alone, GFSP_ESTALE.  shown names it in messages.
 */
int
gfsp_remove_tree_at(int dfd, const char *name, const uint64_t id[2],
		    const char *shown, struct gfsp_error *err)
{
	char what[PATH_MAX + 64] = "";
	struct stat listed, opened;
	int fd = -1, e = 0, ew = 0, rc = 0;

	if (fstatat(dfd, name, &listed, AT_SYMLINK_NOFOLLOW) != 0)
		e = errno;
	else if (id != NULL && ((uint64_t)listed.st_dev != id[0] ||
				(uint64_t)listed.st_ino != id[1]))
		e = ESTALE;
	else if (!S_ISDIR(listed.st_mode)) {
		if (unlinkat(dfd, name, 0) != 0)
			e = errno;
		goto out;
	}
	if (e == 0 && (fd = openat(dfd, name, O_RDONLY | O_DIRECTORY |
				   O_NOFOLLOW | O_CLOEXEC)) < 0)
		e = errno;
	if (e == 0 && fstat(fd, &opened) != 0)
		e = errno;
	if (e == 0 && (opened.st_ino != listed.st_ino ||
		       opened.st_dev != listed.st_dev))
		e = ESTALE;
	if (e)
		goto out;
	remove_below(fd, opened.st_dev, shown, 0, &ew, what, sizeof(what));
	if (ew == 0 && unlinkat(dfd, name, AT_REMOVEDIR) != 0)
		e = errno;
out:
	if (fd >= 0)
		close(fd);
	if (ew != 0)
		rc = gfsp_error_errno(err, ew, "cannot remove '%s'%s", what,
		    ew == ESTALE ? " (it changed while being removed: left "
		    "alone)" : ew == EXDEV ? " (another file system: left "
		    "alone)" : "");
	else if (e != 0)
		rc = gfsp_error_errno(err, e, "cannot remove '%s'%s", shown,
		    e == ESTALE ? " (it changed while being removed: left "
		    "alone)" : "");
	gfsp_dircache_drop_all();	/* (a cached directory may be gone) */
	return rc;
}

static int
posix_unlink(const char *path, struct gfsp_error *err)
{
	struct at a;

	AT_CALL(path, a, unlinkat(a.dfd, a.name, 0), "cannot remove '%s'",
		path);
}

/*
 * Rename without ever replacing `to`.  renameat2(RENAME_NOREPLACE) does it
 * atomically; where the file system or kernel lacks it (EINVAL, ENOSYS),
 * a file is moved with link()+unlink() (link fails if `to` exists, also
 * atomically), and anything else (directories, file systems without hard
 * links) after checking that `to` is absent, which can race but only with
 * another writer of the same name.
 */
static int
posix_rename(const char *from, const char *to, struct gfsp_error *err)
{
	struct stat sb;
	struct at a, b;
	int e = at_get2(from, to, &a, &b), rc = 0;

	if (e)
		goto fail;
#ifdef SYS_renameat2
	if (syscall(SYS_renameat2, a.dfd, a.name, b.dfd, b.name,
		    RENAME_NOREPLACE) == 0)
		goto out;
	e = errno;
	if (e != EINVAL && e != ENOSYS && e != ENOTSUP)
		goto fail;
#endif
	if (fstatat(a.dfd, a.name, &sb, AT_SYMLINK_NOFOLLOW) != 0) {
		e = errno;
		goto fail;
	}
	if (!S_ISDIR(sb.st_mode)) {
		if (linkat(a.dfd, a.name, b.dfd, b.name, 0) == 0) {
			if (unlinkat(a.dfd, a.name, 0) == 0)
				goto out;
			e = errno;
			unlinkat(b.dfd, b.name, 0);	/* undo: `from` stays */
			goto fail;
		}
		e = errno;
		if (e == EEXIST || (e != EPERM && e != ENOTSUP &&
				    e != EOPNOTSUPP && e != EMLINK))
			goto fail;
	}
	if (fstatat(b.dfd, b.name, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
		e = EEXIST;
		goto fail;
	}
	if (renameat(a.dfd, a.name, b.dfd, b.name) == 0)
		goto out;
	e = errno;
fail:
	rc = posix_fail(err, e, a.root ? &a : &b, "cannot rename '%s' to '%s'",
			from, to);
out:
	/* a directory renamed: a thread's cached one may be it */
	if (rc == 0 && b.nofollow && fstatat(b.dfd, b.name, &sb,
					      AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISDIR(sb.st_mode))
		gfsp_dircache_drop_all();
	gfsp_at_put(&a);
	gfsp_at_put(&b);
	return rc;
}

/* rename(2): `to` replaced in one step (a directory there: EISDIR) */
static int
posix_replace(const char *from, const char *to, struct gfsp_error *err)
{
	struct at a, b;
	int e = at_get2(from, to, &a, &b), rc = 0;

	if (e == 0 && renameat(a.dfd, a.name, b.dfd, b.name) != 0)
		e = errno;
	if (e)
		rc = posix_fail(err, e, a.root ? &a : &b, "cannot rename '%s' "
				"to '%s'", from, to);
	gfsp_at_put(&a);
	gfsp_at_put(&b);
	return rc;
}

static int
posix_readdir(const char *path, char ***names, size_t *n, struct gfsp_error *err)
{
	DIR *d;
	struct dirent *de;
	char **v = NULL;
	size_t cnt = 0, cap = 0, i;
	int rc = 0;

	struct at a;
	int e = gfsp_at_get(path, &a), fd = -1;

	*names = NULL;
	*n = 0;
	if (e == 0) {
		fd = openat(a.dfd, a.name, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
			    (a.nofollow ? O_NOFOLLOW : 0));
		e = fd < 0 ? errno : 0;
	}
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (d == NULL && e == 0) {
		e = errno;
		close(fd);
	}
	if (d == NULL)
		rc = posix_fail(err, e, &a, "cannot open directory '%s'", path);
	gfsp_at_put(&a);
	if (d == NULL)
		return rc;
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (de == NULL) {
			if (errno != 0)
				rc = gfsp_error_errno(err, errno,
						     "cannot read directory "
						     "'%s'", path);
			break;
		}
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (gfsp_grow(&v, &cap, cnt + 1, sizeof(*v)) != 0)
			goto nomem;
		v[cnt] = strdup(de->d_name);
		if (v[cnt] == NULL)
			goto nomem;
		cnt++;
	}
	goto out;
nomem:
	rc = gfsp_error_set(err, GFSP_ENOMEM, "cannot read directory '%s': out "
			   "of memory", path);
out:
	closedir(d);
	if (rc != 0) {
		for (i = 0; i < cnt; i++)
			free(v[i]);
		free(v);
		return rc;
	}
	*names = v;
	*n = cnt;
	return 0;
}

static int
posix_setxattr(const char *path, const char *name, const void *val,
	       size_t len, struct gfsp_error *err)
{
	char proc[PATH_MAX + 32];
	struct at a;

	AT_CALL(path, a, a.nofollow ? lsetxattr(gfsp_at_proc(&a, proc, sizeof(proc)),
						 name, val, len, 0)
				    : setxattr(path, name, val, len, 0),
		"cannot set attribute '%s' of '%s'", name, path);
}

static int
posix_getxattr(const char *path, const char *name, void *val, size_t *len,
	       struct gfsp_error *err)
{
	char proc[PATH_MAX + 32];
	size_t cap = *len;
	ssize_t r = -1;
	struct at a;
	int e = gfsp_at_get(path, &a), rc = 0;

	if (e == 0) {
		r = a.nofollow ? lgetxattr(gfsp_at_proc(&a, proc, sizeof(proc)),
					   name, val, cap)
			       : getxattr(path, name, val, cap);
		e = r < 0 ? errno : 0;
	}
	if (e == ERANGE) {
		r = a.nofollow ? lgetxattr(proc, name, NULL, 0)
			       : getxattr(path, name, NULL, 0);
		if (r >= 0)
			*len = (size_t)r;
		rc = gfsp_error_set(err, GFSP_EINVAL, "cannot get attribute "
				   "'%s' of '%s': value larger than %zu bytes",
				   name, path, cap);
	} else if (e) {
		rc = posix_fail(err, e, &a, "cannot get attribute '%s' of '%s'",
				name, path);
	} else {
		*len = (size_t)r;
	}
	gfsp_at_put(&a);
	return rc;
}

/* POSIX has no per-file storage nodes: placement is the file system's */
static int
posix_create(const char *path, uint32_t mode, const struct gfsp_place *place,
	     struct gfsp_file **out, struct gfsp_error *err)
{
	(void)place;
	return posix_open(path, GFSP_O_WRONLY | GFSP_O_CREAT | GFSP_O_EXCL, mode,
			  out, err);
}

static int
posix_where(const char *path, char ***hosts, size_t *n, struct gfsp_error *err)
{
	struct gfsp_stat st;

	*hosts = NULL;
	*n = 0;
	return stat_at(path, &st, 1, err);
}

/* clean pages are the only ones the kernel drops on request: write the
 * dirty ones back first */
static int
posix_evict(const char *path, struct gfsp_error *err)
{
	struct gfsp_file *f;
	int fd, rc, e;

	rc = posix_open(path, GFSP_O_RDONLY, 0, &f, err);
	if (rc)
		return rc;
	fd = ((struct posix_file *)f)->fd;
	if (fdatasync(fd) != 0 && errno != EINVAL)
		rc = gfsp_error_errno(err, errno, "cannot sync '%s'", path);
	else if ((e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) != 0)
		rc = gfsp_error_errno(err, e, "cannot drop '%s' from the page "
				     "cache", path);
	posix_close(f, NULL);
	return rc;
}

const struct gfsp_store_ops gfsp_store_posix = {
	.name		= "posix",
	.open		= posix_open,
	.create		= posix_create,
	.close		= posix_close,
	.pread		= posix_pread,
	.pwrite		= posix_pwrite,
	.fstat		= posix_fstat,
	.ftruncate	= posix_ftruncate,
	.fsetattr	= posix_fsetattr,
	.fsync		= posix_fsync,
	.willneed	= posix_willneed,
	.fd		= posix_fd,
	.stat		= posix_stat,
	.lstat		= posix_lstat,
	.readlink	= posix_readlink,
	.symlink	= posix_symlink,
	.link		= posix_link,
	.utimens	= posix_utimens,
	.chmod		= posix_chmod,
	.mkdir		= posix_mkdir,
	.rmdir		= posix_rmdir,
	.remove_tree	= posix_remove_tree,
	.mkdirs		= posix_mkdirs,
	.unlink		= posix_unlink,
	.rename		= posix_rename,
	.replace	= posix_replace,
	.readdir	= posix_readdir,
	.setxattr	= posix_setxattr,
	.getxattr	= posix_getxattr,
	.where		= posix_where,
	.evict		= posix_evict,
};
