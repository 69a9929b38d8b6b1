/*
 * posix.c - the descriptor calls of the hook (fdhook.h).
 *
 * Opens are libc's, as the program asked; the backend may then take the
 * descriptor.  read and pread of a taken descriptor go to the backend,
 * and so do lseek and stat where the backend keeps the position and the
 * size; any other descriptor goes straight to libc.  Every call that
 * closes or replaces a descriptor forgets it first.
 *
 * With _FORTIFY_SOURCE, programs call glibc's checking variants
 * (__read_chk when the buffer's size is known, __open_2 when the flags
 * are not a constant), which reach the kernel without passing through
 * read or open: they are hooked too, with their checks kept.
 */
#undef _FORTIFY_SOURCE		/* this file defines read, open, ... */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>

#include "fdhook.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC	(1U << 2)	/* linux/close_range.h */
#endif

/* glibc's checking variants: declared only under _FORTIFY_SOURCE */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off,
		      size_t buflen);

/* The mode argument, which is there only with O_CREAT or O_TMPFILE. */
#define MODE_ARG(flags, mode) do {					\
	va_list ap_;							\
									\
	(mode) = 0;							\
	if (((flags) & O_CREAT) || ((flags) & O_TMPFILE) == O_TMPFILE) {\
		va_start(ap_, flags);					\
		(mode) = (mode_t)va_arg(ap_, int);			\
		va_end(ap_);						\
	}								\
} while (0)

/* ------------------------------------------------------------- opens */

int
open(const char *path, int flags, ...)
{
	mode_t mode;

	HK_CALLER();
	MODE_ARG(flags, mode);
	return hk_opened(LIBC(open)(path, flags, mode), AT_FDCWD, path, flags);
}

int
open64(const char *path, int flags, ...)
{
	mode_t mode;

	HK_CALLER();
	MODE_ARG(flags, mode);
	return hk_opened(LIBC(open64)(path, flags, mode), AT_FDCWD, path,
	    flags);
}

int
openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode;

	HK_CALLER();
	MODE_ARG(flags, mode);
	return hk_opened(LIBC(openat)(dirfd, path, flags, mode), dirfd, path,
	    flags);
}

int
openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode;

	HK_CALLER();
	MODE_ARG(flags, mode);
	return hk_opened(LIBC(openat64)(dirfd, path, flags, mode), dirfd,
	    path, flags);
}

int
__open_2(const char *path, int flags)
{
	HK_CALLER();
	return hk_opened(LIBC(open_2)(path, flags), AT_FDCWD, path, flags);
}

int
__open64_2(const char *path, int flags)
{
	HK_CALLER();
	return hk_opened(LIBC(open64_2)(path, flags), AT_FDCWD, path, flags);
}

int
__openat_2(int dirfd, const char *path, int flags)
{
	HK_CALLER();
	return hk_opened(LIBC(openat_2)(dirfd, path, flags), dirfd, path,
	    flags);
}

int
__openat64_2(int dirfd, const char *path, int flags)
{
	HK_CALLER();
	return hk_opened(LIBC(openat64_2)(dirfd, path, flags), dirfd, path,
	    flags);
}

/* ------------------------------------------------------------- reads */

ssize_t
read(int fd, void *buf, size_t n)
{
	size_t got;
	int r;

	if ((r = hk_try_read(fd, buf, n, -1, &got)) != 0)
		return r > 0 ? (ssize_t)got : -1;
	return LIBC(read)(fd, buf, n);
}

ssize_t
__read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	size_t got;
	int r;

	/* n > buflen: glibc reports the overflow and aborts, as without
	 * the hook */
	if (n <= buflen && (r = hk_try_read(fd, buf, n, -1, &got)) != 0)
		return r > 0 ? (ssize_t)got : -1;
	return LIBC(read_chk)(fd, buf, n, buflen);
}

/* A negative offset is libc's to refuse (EINVAL). */
ssize_t
pread(int fd, void *buf, size_t n, off_t off)
{
	size_t got;
	int r;

	if (off >= 0 && (r = hk_try_read(fd, buf, n, off, &got)) != 0)
		return r > 0 ? (ssize_t)got : -1;
	return LIBC(pread)(fd, buf, n, off);
}

ssize_t
pread64(int fd, void *buf, size_t n, off64_t off)
{
	size_t got;
	int r;

	if (off >= 0 && (r = hk_try_read(fd, buf, n, off, &got)) != 0)
		return r > 0 ? (ssize_t)got : -1;
	return LIBC(pread64)(fd, buf, n, off);
}

ssize_t
__pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	size_t got;
	int r;

	if (n <= buflen && off >= 0 &&
	    (r = hk_try_read(fd, buf, n, off, &got)) != 0)
		return r > 0 ? (ssize_t)got : -1;
	return LIBC(pread_chk)(fd, buf, n, off, buflen);
}

ssize_t
__pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen)
{
	size_t got;
	int r;

	if (n <= buflen && off >= 0 &&
	    (r = hk_try_read(fd, buf, n, off, &got)) != 0)
		return r > 0 ? (ssize_t)got : -1;
	return LIBC(pread64_chk)(fd, buf, n, off, buflen);
}

/* ------------------------------------------------------ seek, stat */

off_t
lseek(int fd, off_t off, int whence)
{
	off_t pos;

	if (hk_seek(fd, off, whence, &pos))
		return pos;
	return LIBC(lseek)(fd, off, whence);
}

off64_t
lseek64(int fd, off64_t off, int whence)
{
	off_t pos;

	if (hk_seek(fd, (off_t)off, whence, &pos))
		return (off64_t)pos;
	return LIBC(lseek64)(fd, off, whence);
}

/* The stat family, from the return address of the program's call. */
static int
stat_at(const void *caller, int dirfd, const char *path, struct stat *st,
	int flags)
{
	int r;

	if (!hk_inside)
		hk_caller = caller;
	r = hk_stat(dirfd, path, st, flags);
	return r ? (r > 0 ? 0 : -1) : LIBC(fstatat)(dirfd, path, st, flags);
}

static int
fstat_of(int fd, struct stat *st)
{
	int r = hk_fstat(fd, st);

	return r ? (r > 0 ? 0 : -1) : LIBC(fstat)(fd, st);
}

int
fstat(int fd, struct stat *st)
{
	return fstat_of(fd, st);
}

int
fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return stat_at(__builtin_return_address(0), dirfd, path, st, flags);
}

int
stat(const char *path, struct stat *st)
{
	return stat_at(__builtin_return_address(0), AT_FDCWD, path, st, 0);
}

int
lstat(const char *path, struct stat *st)
{
	return stat_at(__builtin_return_address(0), AT_FDCWD, path, st,
	    AT_SYMLINK_NOFOLLOW);
}

/* On x86_64 and the other 64-bit ABIs struct stat64 is struct stat. */
#if __WORDSIZE == 64
int
fstat64(int fd, struct stat64 *st)
{
	return fstat_of(fd, (struct stat *)st);
}

int
fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	return stat_at(__builtin_return_address(0), dirfd, path,
	    (struct stat *)st, flags);
}

int
stat64(const char *path, struct stat64 *st)
{
	return stat_at(__builtin_return_address(0), AT_FDCWD, path,
	    (struct stat *)st, 0);
}

int
lstat64(const char *path, struct stat64 *st)
{
	return stat_at(__builtin_return_address(0), AT_FDCWD, path,
	    (struct stat *)st, AT_SYMLINK_NOFOLLOW);
}
#endif

/* ------------------------------------------- closing and replacing */

int
close(int fd)
{
	if (!hk_inside)
		hk_forget(fd);
	return LIBC(close)(fd);
}

/* newfd is closed and replaced (unless it is oldfd) */
int
dup2(int oldfd, int newfd)
{
	if (oldfd != newfd && !hk_inside)
		hk_forget(newfd);
	return LIBC(dup2)(oldfd, newfd);
}

int
dup3(int oldfd, int newfd, int flags)
{
	if (oldfd != newfd && !hk_inside)
		hk_forget(newfd);
	return LIBC(dup3)(oldfd, newfd, flags);
}

int
close_range(unsigned first, unsigned last, int flags)
{
	if (LIBC(close_range) == NULL) {
		errno = ENOSYS;
		return -1;
	}
	if (!((unsigned)flags & CLOSE_RANGE_CLOEXEC) && !hk_inside)
		hk_forget_range(first, last);
	return hk_libc.close_range(first, last, flags);
}

void
closefrom(int lowfd)
{
	if (lowfd >= 0 && !hk_inside)
		hk_forget_range((unsigned)lowfd, ~0U);
	if (LIBC(closefrom) != NULL)
		hk_libc.closefrom(lowfd);
}
