/*
 * store_posix.c - the POSIX backend: plain paths on any local or mounted
 * file system.  errno is translated here, its text kept in the message.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

/* one system call moves at most this much (Linux caps near 2 GiB anyway) */
#define POSIX_IO_MAX	((size_t)1 << 30)

struct posix_file {
	struct gfsp_file_hdr hdr;	/* first: see store.h */
	int fd;
};

/* Why open failed; with GFSP_O_REGULAR, ELOOP may mean a final link. */
static int
open_failed(const char *path, int flags, int e, struct gfsp_error *err)
{
	struct stat sb;

	if ((flags & GFSP_O_REGULAR) && e == ELOOP && lstat(path, &sb) == 0 &&
	    S_ISLNK(sb.st_mode))
		return gfsp_error_set(err, GFSP_EINVAL, "'%s': a symbolic link "
				     "(not followed)", path);
	return gfsp_error_errno(err, e, "cannot %s '%s'",
			       (flags & GFSP_O_CREAT) ? "create" : "open",
			       path);
}

/* GFSP_O_REGULAR: fd must be a regular file, and blocking again */
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

static int
posix_open(const char *path, int flags, uint32_t mode, struct gfsp_file **out,
	   struct gfsp_error *err)
{
	struct posix_file *pf;
	int oflags = O_CLOEXEC, fd, rc = 0;

	*out = NULL;
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
	if (flags & GFSP_O_REGULAR)
		oflags |= O_NOFOLLOW | O_NONBLOCK;

	pf = calloc(1, sizeof(*pf));
	if (pf == NULL || (pf->hdr.path = strdup(path)) == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM, "cannot open '%s': out of "
				   "memory", path);
		goto out;
	}
	do {
		fd = open(path, oflags, (mode_t)mode);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0) {
		rc = open_failed(path, flags, errno, err);
		goto out;
	}
	if ((flags & GFSP_O_REGULAR) && (rc = regular_only(fd, path, err))) {
		close(fd);
		goto out;
	}
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
posix_fsync(struct gfsp_file *f, struct gfsp_error *err)
{
	struct posix_file *pf = (struct posix_file *)f;

	/* EINVAL/EROFS: a pipe or device that has nothing to sync */
	if (fsync(pf->fd) != 0 && errno != EINVAL && errno != EROFS)
		return gfsp_error_errno(err, errno, "cannot sync '%s'",
				       pf->hdr.path);
	return 0;
}

static int
posix_stat(const char *path, struct gfsp_stat *st, struct gfsp_error *err)
{
	struct stat sb;

	if (stat(path, &sb) != 0)
		return gfsp_error_errno(err, errno, "cannot stat '%s'", path);
	stat_fill(st, &sb);
	return 0;
}

static int
posix_lstat(const char *path, struct gfsp_stat *st, struct gfsp_error *err)
{
	struct stat sb;

	if (lstat(path, &sb) != 0)
		return gfsp_error_errno(err, errno, "cannot stat '%s'", path);
	stat_fill(st, &sb);
	return 0;
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
	ssize_t n;

	*target = NULL;
	for (;;) {
		nb = realloc(buf, cap);
		if (nb == NULL) {
			free(buf);
			return gfsp_error_set(err, GFSP_ENOMEM, "cannot "
					     "readlink '%s': out of memory",
					     path);
		}
		buf = nb;
		n = readlink(path, buf, cap);
		if (n < 0) {
			free(buf);
			return gfsp_error_errno(err, errno, "cannot readlink "
					       "'%s'", path);
		}
		if ((size_t)n < cap)
			break;
		cap *= 2;
	}
	buf[n] = '\0';
	*target = buf;
	return 0;
}

static int
posix_symlink(const char *target, const char *path, struct gfsp_error *err)
{
	if (symlink(target, path) != 0)
		return gfsp_error_errno(err, errno, "cannot create symbolic "
				       "link '%s'", path);
	return 0;
}

static int
posix_link(const char *from, const char *to, struct gfsp_error *err)
{
	if (link(from, to) != 0)
		return gfsp_error_errno(err, errno, "cannot link '%s' to '%s'",
				       from, to);
	return 0;
}

static int
posix_utimens(const char *path, int64_t atime, uint64_t atime_ns,
	      int64_t mtime, uint64_t mtime_ns, struct gfsp_error *err)
{
	const struct timespec ts[2] = {
		{ .tv_sec = (time_t)atime, .tv_nsec = (long)atime_ns },
		{ .tv_sec = (time_t)mtime, .tv_nsec = (long)mtime_ns },
	};

	if (utimensat(AT_FDCWD, path, ts, 0) != 0)
		return gfsp_error_errno(err, errno, "cannot set times of '%s'",
				       path);
	return 0;
}

static int
posix_chmod(const char *path, uint32_t mode, struct gfsp_error *err)
{
	if (chmod(path, (mode_t)(mode & 07777)) != 0)
		return gfsp_error_errno(err, errno,
				       "cannot change permissions of '%s'",
				       path);
	return 0;
}

static int
posix_mkdir(const char *path, uint32_t mode, struct gfsp_error *err)
{
	if (mkdir(path, (mode_t)mode) != 0)
		return gfsp_error_errno(err, errno,
				       "cannot create directory '%s'", path);
	return 0;
}

static int
posix_rmdir(const char *path, struct gfsp_error *err)
{
	if (rmdir(path) != 0)
		return gfsp_error_errno(err, errno,
				       "cannot remove directory '%s'", path);
	return 0;
}

static int
posix_unlink(const char *path, struct gfsp_error *err)
{
	if (unlink(path) != 0)
		return gfsp_error_errno(err, errno, "cannot remove '%s'", path);
	return 0;
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
	int e;

#ifdef SYS_renameat2
	if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to,
		    RENAME_NOREPLACE) == 0)
		return 0;
	e = errno;
	if (e != EINVAL && e != ENOSYS && e != ENOTSUP)
		goto fail;
#endif
	if (lstat(from, &sb) != 0) {
		e = errno;
		goto fail;
	}
	if (!S_ISDIR(sb.st_mode)) {
		if (link(from, to) == 0) {
			if (unlink(from) == 0)
				return 0;
			e = errno;
			unlink(to);	/* undo: `from` stays where it was */
			goto fail;
		}
		e = errno;
		if (e == EEXIST || (e != EPERM && e != ENOTSUP &&
				    e != EOPNOTSUPP && e != EMLINK))
			goto fail;
	}
	if (lstat(to, &sb) == 0) {
		e = EEXIST;
		goto fail;
	}
	if (rename(from, to) == 0)
		return 0;
	e = errno;
fail:
	return gfsp_error_errno(err, e, "cannot rename '%s' to '%s'", from, to);
}

static int
posix_readdir(const char *path, char ***names, size_t *n, struct gfsp_error *err)
{
	DIR *d;
	struct dirent *de;
	char **v = NULL, **nv;
	size_t cnt = 0, cap = 0, i;
	int rc = 0;

	*names = NULL;
	*n = 0;
	d = opendir(path);
	if (d == NULL)
		return gfsp_error_errno(err, errno,
				       "cannot open directory '%s'", path);
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
		if (cnt == cap) {
			cap = cap ? cap * 2 : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (nv == NULL)
				goto nomem;
			v = nv;
		}
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
	if (setxattr(path, name, val, len, 0) != 0)
		return gfsp_error_errno(err, errno, "cannot set attribute '%s' "
				       "of '%s'", name, path);
	return 0;
}

static int
posix_getxattr(const char *path, const char *name, void *val, size_t *len,
	       struct gfsp_error *err)
{
	size_t cap = *len;
	ssize_t r = getxattr(path, name, val, cap);

	if (r < 0) {
		if (errno == ERANGE) {
			r = getxattr(path, name, NULL, 0);
			if (r >= 0)
				*len = (size_t)r;
			return gfsp_error_set(err, GFSP_EINVAL, "cannot get "
					     "attribute '%s' of '%s': value "
					     "larger than %zu bytes", name,
					     path, cap);
		}
		return gfsp_error_errno(err, errno, "cannot get attribute '%s' "
				       "of '%s'", name, path);
	}
	*len = (size_t)r;
	return 0;
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
	struct stat st;

	*hosts = NULL;
	*n = 0;
	if (stat(path, &st) != 0)
		return gfsp_error_errno(err, errno, "cannot stat '%s'", path);
	return 0;
}

/* clean pages are the only ones the kernel drops on request: write the
 * dirty ones back first */
static int
posix_evict(const char *path, struct gfsp_error *err)
{
	int fd, rc = 0, e;

	do {
		fd = open(path, O_RDONLY | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return gfsp_error_errno(err, errno, "cannot open '%s'", path);
	if (fdatasync(fd) != 0 && errno != EINVAL)
		rc = gfsp_error_errno(err, errno, "cannot sync '%s'", path);
	else if ((e = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) != 0)
		rc = gfsp_error_errno(err, e, "cannot drop '%s' from the page "
				     "cache", path);
	close(fd);
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
	.fsync		= posix_fsync,
	.willneed	= posix_willneed,
	.stat		= posix_stat,
	.lstat		= posix_lstat,
	.readlink	= posix_readlink,
	.symlink	= posix_symlink,
	.link		= posix_link,
	.utimens	= posix_utimens,
	.chmod		= posix_chmod,
	.mkdir		= posix_mkdir,
	.rmdir		= posix_rmdir,
	.unlink		= posix_unlink,
	.rename		= posix_rename,
	.readdir	= posix_readdir,
	.setxattr	= posix_setxattr,
	.getxattr	= posix_getxattr,
	.where		= posix_where,
	.evict		= posix_evict,
};
