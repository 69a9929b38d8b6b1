/*
 * posix.c - split files read with POSIX and stdio calls: the backend of
 * the descriptor hook (preload/hook/fdhook.h) in libgfsplit-mpiio.so.
 *
 * Programs look at a file before they open it with MPI-IO: HDF5 and
 * netCDF probe its signature with open() and read(), tools stat() it for
 * its size, and a serial reader in the same job may read it whole.  A
 * split file is a directory, so all of that fails.  Here it is one
 * regular file while the program runs:
 *
 *   open/fopen, read-only,   libc opens the directory; the backend loads
 *   no O_DIRECTORY           its layout (libcore's reader, which checks
 *                            every location file) and takes the
 *                            descriptor:  tab[fd] = { layout, pos, stat }
 *   read, pread              the layout's bytes (holes read as zeros)
 *   lseek                    the backend's position; SEEK_END from the
 *                            logical size; the whole file is data
 *   fstat; stat, lstat,      a regular file of the logical size, the
 *   fstatat of the path      directory's owner, times and permissions
 *                            without the search bits
 *
 * Every other call on the descriptor reaches the directory and fails
 * (mmap, readv, sendfile: EISDIR or ENODEV), never returning wrong bytes.
 * A split file that cannot be loaded (a missing part, a corrupt location
 * file) is left a directory, with one line on stderr naming the cause.
 * The layout is loaded at the open: a file replaced afterwards keeps being
 * read as the version that was opened, as with an open descriptor.
 *
 * Only calls from outside this library are served: libcore inside it
 * stats and opens split directories as directories.  The hook records
 * the return address of each open and stat (hk_caller), and a call that
 * returns into this library goes to libc.
 *
 * GFSPLIT_POSIX=0 in the environment turns all of it off.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "core.h"
#include "layout_impl.h"
#include "mpiio.h"
#include "splitfile.h"

#define READ_MAX	((size_t)0x7ffff000)	/* as read(2) */

struct sp_fd {
	struct gfsp_layout *l;
	int64_t pos;
	struct stat st;		/* what fstat says */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct hk_fdtab tab;	/* of struct sp_fd */
static int enabled = -1;	/* GFSPLIT_POSIX, read once */

static void
atfork_prepare(void)
{
	pthread_mutex_lock(&lock);
}

static void
atfork_release(void)
{
	pthread_mutex_unlock(&lock);
}

/* The lock is free in a fork child: no thread holds it over the fork. */
static int
atfork_once(void)
{
	static int done;

	if (!done)
		done = pthread_atfork(atfork_prepare, atfork_release,
		    atfork_release) == 0;
	return done ? 0 : -1;
}

static int
on(void)
{
	const char *e;

	if (__atomic_load_n(&enabled, __ATOMIC_ACQUIRE) < 0) {
		e = getenv("GFSPLIT_POSIX");
		__atomic_store_n(&enabled, !(e != NULL && strcmp(e, "0") == 0),
		    __ATOMIC_RELEASE);
	}
	return enabled;
}

/* The hooked call came from the program, not from this library. */
int
sf_from_program(void)
{
	static void *self;
	Dl_info me, it;

	if (hk_inside || !on())
		return 0;
	if (self == NULL && dladdr((void *)sf_from_program, &me))
		self = me.dli_fbase;
	return hk_caller == NULL || !dladdr(hk_caller, &it) ||
	    it.dli_fbase != self;
}

/* ------------------------------------------------------------ the table */

int
hk_tracked(int fd)
{
	return hk_fdtab_get(&tab, fd) != NULL;
}

/* Out of the table (under the lock): its layout closed. */
static void
drop(void *p)
{
	struct sp_fd *e = p;

	gfsp_layout_close(e->l);
	free(e);
}

void
hk_forget_range(unsigned lo, unsigned hi)
{
	int was = hk_inside;

	hk_inside = 1;
	pthread_mutex_lock(&lock);
	hk_fdtab_clear(&tab, lo, hi, drop);
	pthread_mutex_unlock(&lock);
	hk_inside = was;
}

/* ------------------------------------------------------------- stat */

/* A split directory's stat as the regular file it holds. */
static void
as_file(struct stat *st, uint64_t size)
{
	st->st_mode = S_IFREG | (st->st_mode & 07666);
	st->st_nlink = 1;
	st->st_size = (off_t)size;
	st->st_blocks = (blkcnt_t)((size + 511) / 512);
}

int
sf_split_size(int dirfd, const char *path, uint64_t *size)
{
	struct gfsp_marker m;
	struct gfsp_error err;
	unsigned char *buf = NULL;
	char *mp = NULL;
	size_t len = 0;
	int rc = -1, was = hk_inside;

	if (dirfd != AT_FDCWD && path[0] != '/') {
		if (asprintf(&mp, "/proc/self/fd/%d/%s/%s", dirfd, path,
		    GFSP_MARKER_NAME) < 0)
			return -1;
	} else if (asprintf(&mp, "%s/%s", path, GFSP_MARKER_NAME) < 0) {
		return -1;
	}
	gfsp_error_clear(&err);
	hk_inside = 1;
	/* a regular file, no link followed, no FIFO waited on */
	if (gfsp_read_meta(mp, &buf, &len, &err) == 0 &&
	    gfsp_marker_decode(buf, len, mp, &m, &err) == 0) {
		*size = m.logical_size;
		rc = 0;
	}
	hk_inside = was;
	free(buf);
	free(mp);
	return rc;
}

int
hk_stat(int dirfd, const char *path, struct stat *st, int flags)
{
	uint64_t size;
	int saved = errno;

	if (!sf_from_program() || path == NULL || (flags & AT_EMPTY_PATH))
		return 0;
	if (LIBC(fstatat)(dirfd, path, st, flags) != 0) {
		errno = saved;
		return 0;		/* libc says why, once more */
	}
	if (S_ISDIR(st->st_mode) && sf_split_size(dirfd, path, &size) == 0)
		as_file(st, size);
	errno = saved;
	return 1;
}

int
hk_fstat(int fd, struct stat *st)
{
	struct sp_fd *e;
	int served = 0;

	if (!hk_tracked(fd))
		return 0;
	pthread_mutex_lock(&lock);
	if ((e = hk_fdtab_get(&tab, fd)) != NULL) {
		*st = e->st;
		served = 1;
	}
	pthread_mutex_unlock(&lock);
	return served;
}

/* ------------------------------------------------------------- opens */

int
hk_wanted(const char *path)
{
	struct stat st;
	uint64_t size;

	return sf_from_program() && LIBC(stat)(path, &st) == 0 &&
	    S_ISDIR(st.st_mode) && sf_split_size(AT_FDCWD, path, &size) == 0;
}

/* fd, a directory opened read-only from path: take it if it is a
 * complete split file that loads. */
static void
take(int fd, const char *path, const struct stat *dir)
{
	struct gfsp_error err;
	struct sp_fd *e;
	char self[64];
	int rc;

	/* the directory opened, whatever path names now */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return;
	gfsp_error_clear(&err);
	rc = gfsp_layout_open(self, &e->l, &err);
	if (rc) {
		free(e);
		/* a directory that merely is not a split file is no news */
		if (rc != GFSP_ENOTSPLIT)
			fprintf(stderr, "gfsplit-mpiio: '%s' is not read as a "
			    "file: %s\n", path, err.msg);
		return;
	}
	e->st = *dir;
	as_file(&e->st, gfsp_layout_size(e->l));
	pthread_mutex_lock(&lock);
	if (atfork_once() == 0 && hk_fdtab_init(&tab) == 0) {
		hk_fdtab_clear(&tab, (unsigned)fd, (unsigned)fd, drop);
		if (hk_fdtab_put(&tab, fd, e) == 0)
			e = NULL;
	}
	pthread_mutex_unlock(&lock);
	if (e != NULL)
		drop(e);
}

int
hk_opened(int fd, int dirfd, const char *path, int flags)
{
	struct stat st;
	int saved = errno;

	if (fd < 0 || hk_inside)
		return fd;
	hk_forget(fd);		/* a number closed where we could not see */
	if ((flags & O_ACCMODE) == O_RDONLY &&
	    !(flags & (O_DIRECTORY | O_PATH)) && sf_from_program() &&
	    LIBC(fstat)(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		hk_inside = 1;
		take(fd, path, &st);
		hk_inside = 0;
	}
	errno = saved;
	return fd;
}

/* ------------------------------------------------------- read, seek */

off_t
hk_size(int fd)
{
	struct sp_fd *e;
	off_t size = -1;

	if (!hk_tracked(fd))
		return -1;
	pthread_mutex_lock(&lock);
	if ((e = hk_fdtab_get(&tab, fd)) != NULL)
		size = e->st.st_size;
	pthread_mutex_unlock(&lock);
	return size;
}

int
hk_try_read(int fd, void *buf, size_t n, int64_t off, size_t *got)
{
	struct gfsp_error err;
	struct sp_fd *e;
	uint64_t done = 0;
	int64_t pos;
	int rc, served = 0, was = hk_inside, saved = errno;

	if (hk_inside || !hk_tracked(fd))
		return 0;
	hk_inside = 1;
	pthread_mutex_lock(&lock);
	e = hk_fdtab_get(&tab, fd);
	if (e == NULL)
		goto out;
	pos = off < 0 ? e->pos : off;
	gfsp_error_clear(&err);
	rc = gfsp_layout_pread(e->l, buf, GFSP_MIN(n, READ_MAX),
	    (uint64_t)pos, &done, &err);
	if (rc) {
		fprintf(stderr, "gfsplit-mpiio: read of a split file: %s\n",
		    err.msg);
		saved = EIO;
		served = -1;
		goto out;
	}
	if (off < 0)
		e->pos += (int64_t)done;
	*got = (size_t)done;
	served = 1;
out:
	pthread_mutex_unlock(&lock);
	hk_inside = was;
	errno = saved;
	return served;
}

int
hk_seek(int fd, off_t off, int whence, off_t *pos)
{
	struct sp_fd *e;
	int64_t base, size, to = -1;
	int err = 0;

	if (hk_inside || !hk_tracked(fd))
		return 0;
	pthread_mutex_lock(&lock);
	e = hk_fdtab_get(&tab, fd);
	if (e == NULL) {
		pthread_mutex_unlock(&lock);
		return 0;
	}
	size = e->st.st_size;
	switch (whence) {
	case SEEK_SET:	base = 0; break;
	case SEEK_CUR:	base = e->pos; break;
	case SEEK_END:	base = size; break;
	case SEEK_DATA:	/* holes are not told apart: all of it is data */
	case SEEK_HOLE:
		base = 0;
		if (off < 0 || off >= size)
			err = ENXIO;
		else
			to = whence == SEEK_DATA ? off : size;
		break;
	default:
		err = EINVAL;
	}
	if (!err && to < 0) {
		if ((off < 0 && base + off < 0) ||
		    (off > 0 && base > INT64_MAX - off))
			err = EINVAL;
		else
			to = base + off;
	}
	if (!err)
		e->pos = to;
	pthread_mutex_unlock(&lock);
	*pos = err ? -1 : (off_t)to;
	if (err)
		errno = err;
	return 1;
}
