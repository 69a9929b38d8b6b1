/*
 * posix.c - the descriptor calls of the read hook (hook.h).
 *
 * Opens are libc's, as the program asked; a read-only open of a selected
 * regular file is then tracked.  read and pread of a tracked descriptor
 * go through the cache, any other descriptor straight to libc.  Every
 * call that closes or replaces a descriptor forgets it first.
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

#include "hook.h"

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

	MODE_ARG(flags, mode);
	return ch_opened(LIBC(open)(path, flags, mode), AT_FDCWD, path, flags);
}

int
open64(const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return ch_opened(LIBC(open64)(path, flags, mode), AT_FDCWD, path,
	    flags);
}

int
openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return ch_opened(LIBC(openat)(dirfd, path, flags, mode), dirfd, path,
	    flags);
}

int
openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return ch_opened(LIBC(openat64)(dirfd, path, flags, mode), dirfd,
	    path, flags);
}

int
__open_2(const char *path, int flags)
{
	return ch_opened(LIBC(open_2)(path, flags), AT_FDCWD, path, flags);
}

int
__open64_2(const char *path, int flags)
{
	return ch_opened(LIBC(open64_2)(path, flags), AT_FDCWD, path, flags);
}

int
__openat_2(int dirfd, const char *path, int flags)
{
	return ch_opened(LIBC(openat_2)(dirfd, path, flags), dirfd, path,
	    flags);
}

int
__openat64_2(int dirfd, const char *path, int flags)
{
	return ch_opened(LIBC(openat64_2)(dirfd, path, flags), dirfd, path,
	    flags);
}

/* ------------------------------------------------------------- reads */

ssize_t
read(int fd, void *buf, size_t n)
{
	size_t got;

	if (ch_try_read(fd, buf, n, -1, &got))
		return (ssize_t)got;
	return LIBC(read)(fd, buf, n);
}

ssize_t
__read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	size_t got;

	/* n > buflen: glibc reports the overflow and aborts, as without
	 * the hook */
	if (n <= buflen && ch_try_read(fd, buf, n, -1, &got))
		return (ssize_t)got;
	return LIBC(read_chk)(fd, buf, n, buflen);
}

/* A negative offset is libc's to refuse (EINVAL). */
ssize_t
pread(int fd, void *buf, size_t n, off_t off)
{
	size_t got;

	if (off >= 0 && ch_try_read(fd, buf, n, off, &got))
		return (ssize_t)got;
	return LIBC(pread)(fd, buf, n, off);
}

ssize_t
pread64(int fd, void *buf, size_t n, off64_t off)
{
	size_t got;

	if (off >= 0 && ch_try_read(fd, buf, n, off, &got))
		return (ssize_t)got;
	return LIBC(pread64)(fd, buf, n, off);
}

ssize_t
__pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	size_t got;

	if (n <= buflen && off >= 0 && ch_try_read(fd, buf, n, off, &got))
		return (ssize_t)got;
	return LIBC(pread_chk)(fd, buf, n, off, buflen);
}

ssize_t
__pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen)
{
	size_t got;

	if (n <= buflen && off >= 0 && ch_try_read(fd, buf, n, off, &got))
		return (ssize_t)got;
	return LIBC(pread64_chk)(fd, buf, n, off, buflen);
}

/* ------------------------------------------- closing and replacing */

int
close(int fd)
{
	if (!ch_inside)
		ch_forget(fd);
	return LIBC(close)(fd);
}

/* newfd is closed and replaced (unless it is oldfd) */
int
dup2(int oldfd, int newfd)
{
	if (oldfd != newfd && !ch_inside)
		ch_forget(newfd);
	return LIBC(dup2)(oldfd, newfd);
}

int
dup3(int oldfd, int newfd, int flags)
{
	if (oldfd != newfd && !ch_inside)
		ch_forget(newfd);
	return LIBC(dup3)(oldfd, newfd, flags);
}

int
close_range(unsigned first, unsigned last, int flags)
{
	if (LIBC(close_range) == NULL) {
		errno = ENOSYS;
		return -1;
	}
	if (!((unsigned)flags & CLOSE_RANGE_CLOEXEC) && !ch_inside)
		ch_forget_range(first, last);
	return ch_libc.close_range(first, last, flags);
}

void
closefrom(int lowfd)
{
	if (lowfd >= 0 && !ch_inside)
		ch_forget_range((unsigned)lowfd, ~0U);
	if (LIBC(closefrom) != NULL)
		ch_libc.closefrom(lowfd);
}
