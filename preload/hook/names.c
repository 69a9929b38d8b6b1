/*
 * names.c - the calls that remove, rename or truncate a file by its name
 * (fdhook.h): unlink, unlinkat, remove, rename, renameat, renameat2,
 * truncate, truncate64.
 *
 * Each asks the backend first (hk_unlink, hk_rename, hk_truncate), which
 * does the call itself on a file it serves (a split file, which libc
 * would find to be a directory: EISDIR, ENOTEMPTY, ENOTDIR), and leaves
 * any other file to libc.  ftruncate is not here: a descriptor the
 * backend serves is read-only, and the kernel already refuses it as it
 * refuses any read-only descriptor (EINVAL).
 *
 * glibc's remove() reaches unlink and rmdir by internal calls no hook
 * sees, so it is hooked by its own name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "fdhook.h"

/* The backend's answer r, or libc's call. */
#define SERVED_OR(r, call) ((r) != 0 ? ((r) > 0 ? 0 : -1) : (call))

int
unlink(const char *path)
{
	int r;

	HK_CALLER();
	r = hk_unlink(AT_FDCWD, path, 0);
	return SERVED_OR(r, LIBC(unlink)(path));
}

int
unlinkat(int dirfd, const char *path, int flags)
{
	int r;

	HK_CALLER();
	r = hk_unlink(dirfd, path, flags);
	return SERVED_OR(r, LIBC(unlinkat)(dirfd, path, flags));
}

int
remove(const char *path)
{
	int r;

	HK_CALLER();
	r = hk_unlink(AT_FDCWD, path, 0);
	return SERVED_OR(r, LIBC(remove)(path));
}

int
rename(const char *oldpath, const char *newpath)
{
	int r;

	HK_CALLER();
	r = hk_rename(AT_FDCWD, oldpath, AT_FDCWD, newpath, 0);
	return SERVED_OR(r, LIBC(rename)(oldpath, newpath));
}

int
renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
	int r;

	HK_CALLER();
	r = hk_rename(olddirfd, oldpath, newdirfd, newpath, 0);
	return SERVED_OR(r, LIBC(renameat)(olddirfd, oldpath, newdirfd,
	    newpath));
}

int
renameat2(int olddirfd, const char *oldpath, int newdirfd,
	  const char *newpath, unsigned flags)
{
	int r;

	HK_CALLER();
	r = hk_rename(olddirfd, oldpath, newdirfd, newpath, flags);
	if (r != 0)
		return r > 0 ? 0 : -1;
	if (LIBC(renameat2) == NULL) {
		errno = ENOSYS;
		return -1;
	}
	return hk_libc.renameat2(olddirfd, oldpath, newdirfd, newpath, flags);
}

int
truncate(const char *path, off_t size)
{
	int r;

	HK_CALLER();
	r = hk_truncate(path, (int64_t)size);
	return SERVED_OR(r, LIBC(truncate)(path, size));
}

int
truncate64(const char *path, off64_t size)
{
	int r;

	HK_CALLER();
	r = hk_truncate(path, (int64_t)size);
	return SERVED_OR(r, LIBC(truncate64)(path, size));
}
