/*
 * stdio.c - streams of the files the backend serves (fdhook.h).
 *
 * glibc's fopen opens and reads with its internal calls, which no hook
 * sees, so a read-only fopen of a file the backend wants returns a cookie
 * stream (fopencookie(3)) instead, over a descriptor the backend took:
 *
 *   FILE  --glibc's buffering: fread, fgets, fgetc, fseek, ftell, ...-->
 *   cookie { fd, pos, size }
 *     read   pread through the backend at pos (fd read directly when the
 *            backend does not serve it now: the cache before MPI_Init or
 *            after MPI_Finalize, another thread, a fork child)
 *     seek   pos only; SEEK_END from the size at the open
 *     close  the descriptor, forgotten first
 *
 * The stream keeps its own position and never moves fd's file offset
 * (glibc's own streams read ahead of theirs anyway).  fileno() gives fd,
 * so fstat(fileno(fp)) and friends answer as for the descriptor.
 */
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdhook.h"

struct cookie {
	int fd;
	int64_t pos;
	int64_t size;
};

static ssize_t
ck_read(void *p, char *buf, size_t n)
{
	struct cookie *k = p;
	size_t got;
	ssize_t r;

	switch (hk_try_read(k->fd, buf, n, k->pos, &got)) {
	case 1:
		r = (ssize_t)got;
		break;
	case 0:
		r = LIBC(pread)(k->fd, buf, n, (off_t)k->pos);
		break;
	default:
		r = -1;
	}
	if (r > 0)
		k->pos += r;
	return r;
}

static int
ck_seek(void *p, off64_t *off, int whence)
{
	struct cookie *k = p;
	int64_t base;

	switch (whence) {
	case SEEK_SET:	base = 0; break;
	case SEEK_CUR:	base = k->pos; break;
	case SEEK_END:	base = k->size; break;
	default:
		errno = EINVAL;
		return -1;
	}
	if ((*off < 0 && base + *off < 0) ||
	    (*off > 0 && base > INT64_MAX - *off)) {
		errno = EINVAL;
		return -1;
	}
	k->pos = base + *off;
	*off = k->pos;
	return 0;
}

static int
ck_close(void *p)
{
	struct cookie *k = p;
	int rc;

	hk_forget(k->fd);
	rc = LIBC(close)(k->fd);
	free(k);
	return rc;
}

/* A stream over tracked fd, at pos; NULL if there cannot be one. */
static FILE *
cookie_stream(int fd, int64_t pos)
{
	static const cookie_io_functions_t io = {
		.read = ck_read,
		.write = NULL,		/* read-only */
		.seek = ck_seek,
		.close = ck_close,
	};
	struct cookie *k;
	FILE *fp;

	k = malloc(sizeof(*k));
	if (k == NULL)
		return NULL;
	k->fd = fd;
	k->pos = pos;
	k->size = hk_size(fd);
	if (k->size < 0 || (fp = fopencookie(k, "r", io)) == NULL) {
		free(k);
		return NULL;
	}
	/*
	 * glibc marks a cookie stream's descriptor -2 ("no file, but open"),
	 * and nothing in its cookie code reads it beyond "is it -1": the real
	 * one makes fileno() work as for fopen's streams.
	 */
#ifdef __GLIBC__
	fp->_fileno = fd;
#endif
	return fp;
}

/*
 * 1 if mode opens for reading only ("r", "rb", "re", ...), with the
 * open(2) flags that go with it; glibc's ",ccs=" (a wide-character
 * conversion) and anything unknown are left to glibc.
 */
static int
read_only(const char *mode, int *flags)
{
	const char *m;

	if (mode == NULL || mode[0] != 'r')
		return 0;
	*flags = O_RDONLY;
	for (m = mode + 1; *m != '\0'; m++) {
		if (*m == 'e')
			*flags |= O_CLOEXEC;
		else if (strchr("bcmtx", *m) == NULL)
			return 0;
	}
	return 1;
}

/* fopen and fopen64: libc_open opens, libc_fopen when the file is not
 * the hook's. */
static FILE *
open_stream(const char *path, const char *mode,
	    int (*libc_open)(const char *, int, ...),
	    FILE *(*libc_fopen)(const char *, const char *))
{
	int flags, fd;
	FILE *fp;

	if (!read_only(mode, &flags) || !hk_wanted(path)) {
		fp = libc_fopen(path, mode);
		/* a number we still hold was closed where we could not see
		 * it (as in hk_opened) */
		if (fp != NULL && !hk_inside && hk_tracked(fileno(fp)))
			hk_forget(fileno(fp));
		return fp;
	}
	fd = hk_opened(libc_open(path, flags), AT_FDCWD, path, flags);
	if (fd < 0)
		return NULL;
	fp = hk_tracked(fd) ? cookie_stream(fd, 0) : NULL;
	/* not taken after all (a FIFO, /proc, no memory, ...): the file is
	 * open, so wrap it rather than open it again */
	if (fp == NULL) {
		hk_forget(fd);
		fp = LIBC(fdopen)(fd, mode);
	}
	if (fp == NULL) {
		int e = errno;

		LIBC(close)(fd);
		errno = e;
	}
	return fp;
}

FILE *
fopen(const char *path, const char *mode)
{
	HK_CALLER();
	return open_stream(path, mode, LIBC(open), LIBC(fopen));
}

FILE *
fopen64(const char *path, const char *mode)
{
	HK_CALLER();
	return open_stream(path, mode, LIBC(open64), LIBC(fopen64));
}

/*
 * A stream over a tracked descriptor must be a cookie stream too: a
 * glibc stream's fclose would close the descriptor where the hook cannot
 * see it.  It starts at the descriptor's offset.
 */
FILE *
fdopen(int fd, const char *mode)
{
	int flags;
	off_t pos;
	FILE *fp;

	if (hk_inside || !hk_tracked(fd) || !read_only(mode, &flags) ||
	    (pos = LIBC(lseek)(fd, 0, SEEK_CUR)) < 0 ||
	    (fp = cookie_stream(fd, pos)) == NULL)
		return LIBC(fdopen)(fd, mode);
	return fp;
}

/*
 * freopen closes or replaces the stream's descriptor inside glibc (and
 * keeps a cookie stream's open, to put the new file there): that number
 * is not the backend's any more.  The new stream is glibc's own.
 */
FILE *
freopen(const char *path, const char *mode, FILE *fp)
{
	int fd = fp != NULL ? fileno(fp) : -1;

	if (fd >= 0 && !hk_inside)
		hk_forget(fd);
	return LIBC(freopen)(path, mode, fp);
}

FILE *
freopen64(const char *path, const char *mode, FILE *fp)
{
	int fd = fp != NULL ? fileno(fp) : -1;

	if (fd >= 0 && !hk_inside)
		hk_forget(fd);
	return LIBC(freopen64)(path, mode, fp);
}
