/*
 * state.c - what the read hook knows (hook.h): the selection of files,
 * the table of cached descriptors and the read through the cache.
 *
 * The table (struct hk_fdtab, sized at MPI_Init) holds for each cached
 * descriptor { cache file, size, path }.
 *
 * Entries are set and cleared under `lock`, which also serialises every
 * use of the cache; a reader that found an entry takes the lock and looks
 * again.  A descriptor number reused behind the hook's back (closed by a
 * call it does not see) is dropped by the next open that returns it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "core.h"
#include "hook.h"

/* Linux moves at most this much in one read(2) */
#define READ_MAX	((size_t)0x7ffff000)

struct ch_fd {
	struct gfsp_cache_file *cf;
	uint64_t size;		/* as the cache holds it */
	char *path;		/* the path the cache opened */
};

int ch_rank;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct hk_fdtab tab;
static int live;		/* the cache is up: MPI_Init .. MPI_Finalize */
static int forked;		/* this process is a fork() child */
static int multiple;		/* any thread may use the cache */
static pthread_t owner;		/* else only this one */
static struct gfsp_cache *cache;
static char *patterns;		/* GFSPLIT_CACHE_FILES */
static int verbose;
static uint64_t nopened;	/* files opened through the cache */

static void
child_after_fork(void)
{
	forked = 1;
}

/* ------------------------------------------------------------ errors */

void
ch_say(const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "gfsplit-cache: ");
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", line);
}

/* --------------------------------------------------------- selection */

/* The path as given, or a relative one joined to the working directory. */
static int
selected(const char *path)
{
	return gfsp_path_selected(patterns, path);
}

/* May this thread use the cache now? */
static int
thread_ok(void)
{
	return __atomic_load_n(&live, __ATOMIC_ACQUIRE) && !forked &&
	    (multiple || pthread_equal(pthread_self(), owner));
}

/*
 * Kernel file systems whose sizes are not their contents (a /proc file
 * is 0 bytes, a /sys file 4096): never cached, whatever the patterns.
 */
static int
pseudo_fs(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) != 0)
		return 1;
	switch ((unsigned long)sf.f_type) {
	case PROC_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
		return 1;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------ the table */

/* In a fork child nothing is tracked: it never takes the lock, which
 * another thread of the parent may have held at the fork. */
int
hk_tracked(int fd)
{
	return !forked && hk_fdtab_get(&tab, fd) != NULL;
}

/* Out of the table (under the lock): its cache file closed. */
static void
drop(void *p)
{
	struct ch_fd *e = p;

	gfsp_cache_close(e->cf);
	free(e->path);
	free(e);
}

void
hk_forget_range(unsigned lo, unsigned hi)
{
	int was = hk_inside;

	if (forked)
		return;
	hk_inside = 1;
	pthread_mutex_lock(&lock);
	hk_fdtab_clear(&tab, lo, hi, drop);
	pthread_mutex_unlock(&lock);
	hk_inside = was;
}

off_t
hk_size(int fd)
{
	struct ch_fd *e;
	off_t size = -1;

	if (!hk_tracked(fd))
		return -1;
	pthread_mutex_lock(&lock);
	if ((e = hk_fdtab_get(&tab, fd)) != NULL)
		size = (off_t)e->size;
	pthread_mutex_unlock(&lock);
	return size;
}

/* A cached descriptor is the real file: its offset and what stat says
 * are the kernel's. */
int
hk_seek(int fd, off_t off, int whence, off_t *pos)
{
	return 0;
}

int
hk_fstat(int fd, struct stat *st)
{
	return 0;
}

int
hk_stat(int dirfd, const char *path, struct stat *st, int flags)
{
	return 0;
}

/* A cached file is the real one: removing, renaming and truncating it
 * are the kernel's (and its library does not export those names). */
int
hk_unlink(int dirfd, const char *path, int flags)
{
	return 0;
}

int
hk_rename(int olddirfd, const char *oldpath, int newdirfd,
	  const char *newpath, unsigned flags)
{
	return 0;
}

int
hk_truncate(const char *path, int64_t size)
{
	return 0;
}

/*
 * The name of the file that proc ("/proc/self/fd/N") holds, as the kernel
 * knows it:
 * one name for it on every rank, whatever path each gave (the blocks'
 * ids come from it).  Never the program's path resolved again: that is
 * a name someone may have pointed elsewhere since the program opened it.
 * malloc'd, or NULL.
 */
static char *
name_of(const char *proc)
{
	char *name;
	ssize_t n;

	name = malloc(PATH_MAX);
	n = name != NULL ? readlink(proc, name, PATH_MAX - 1) : -1;
	if (n <= 0 || name[0] != '/') {	/* no /proc; not a path */
		free(name);
		return NULL;
	}
	name[n] = '\0';
	return name;
}

/*
 * fd (a regular file of path, opened read-only) into the table.  The
 * cache reads the program's own file: it opens /proc/self/fd/FD, the
 * very file of the descriptor, and checks that it is.
 */
static void
track(int fd, const char *path)
{
	struct gfsp_cache_file *cf = NULL;
	struct gfsp_error err;
	struct ch_fd *e = NULL;
	struct stat sb;
	char *real, proc[64];
	int rc;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size == 0 ||
	    pseudo_fs(fd) || (real = name_of(proc)) == NULL)
		return;
	gfsp_error_clear(&err);
	pthread_mutex_lock(&lock);
	if (!live || fd < 0 || (unsigned)fd >= tab.n) {
		pthread_mutex_unlock(&lock);
		free(real);
		return;
	}
	rc = gfsp_cache_open_as(cache, real, proc, &cf, &err);
	if (rc == 0 && (gfsp_cache_file_stat(cf)->ino != (uint64_t)sb.st_ino ||
	    gfsp_cache_file_size(cf) != (uint64_t)sb.st_size))
		rc = gfsp_error_set(&err, GFSP_EIO, "'%s' changed while it "
		    "was opened", real);
	if (rc == 0 && (e = calloc(1, sizeof(*e))) == NULL)
		rc = gfsp_error_set(&err, GFSP_ENOMEM, "out of memory");
	if (rc == 0) {
		e->cf = cf;
		e->size = (uint64_t)sb.st_size;
		e->path = real;
		hk_fdtab_put(&tab, fd, e);
		nopened++;
	} else {
		gfsp_cache_close(cf);
	}
	pthread_mutex_unlock(&lock);
	if (rc) {
		ch_say("rank %d: '%s' is read directly, not through the "
		    "cache: %s", ch_rank, path, err.msg);
		free(real);
	} else if (verbose && ch_rank == 0) {
		ch_say("'%s': read through the cache (%llu bytes)", path,
		    (unsigned long long)sb.st_size);
	}
}

int
hk_wanted(const char *path)
{
	return !hk_inside && thread_ok() && selected(path);
}

int
hk_opened(int fd, int dirfd, const char *path, int flags)
{
	int saved = errno;

	if (fd < 0 || hk_inside)
		return fd;
	/* a number we still hold was closed where we could not see it */
	hk_forget(fd);
	if ((flags & O_ACCMODE) == O_RDONLY &&
	    !(flags & (O_PATH | O_TRUNC | O_DIRECTORY)) &&
	    (dirfd == AT_FDCWD || path[0] == '/') && hk_wanted(path)) {
		hk_inside = 1;
		track(fd, path);
		hk_inside = 0;
	}
	errno = saved;
	return fd;
}

int
hk_try_read(int fd, void *buf, size_t n, int64_t off, size_t *got)
{
	struct gfsp_error err;
	struct ch_fd *e;
	int64_t pos = off;
	int saved = errno, served = 0, rc;

	if (hk_inside || !hk_tracked(fd) || !thread_ok())
		return 0;
	hk_inside = 1;
	pthread_mutex_lock(&lock);
	e = hk_fdtab_get(&tab, fd);
	if (!live || e == NULL)
		goto out;
	if (off < 0 && (pos = LIBC(lseek)(fd, 0, SEEK_CUR)) < 0)
		goto out;
	if (n > READ_MAX)
		n = READ_MAX;
	gfsp_error_clear(&err);
	rc = gfsp_cache_pread(e->cf, buf, n, (uint64_t)pos, got, &err);
	if (rc) {
		ch_say("rank %d: '%s' is read directly from now on: %s",
		    ch_rank, e->path, err.msg);
		hk_fdtab_clear(&tab, (unsigned)fd, (unsigned)fd, drop);
		goto out;
	}
	if (off < 0 && *got > 0)
		LIBC(lseek)(fd, (off_t)(pos + (int64_t)*got), SEEK_SET);
	served = 1;
out:
	pthread_mutex_unlock(&lock);
	hk_inside = 0;
	errno = saved;
	return served;
}

/* ----------------------------------------------------- start and stop */

int
ch_start(struct gfsp_cache *c, const struct ch_conf *conf, int multi)
{
	static int atfork;

	pthread_mutex_lock(&lock);
	if (hk_fdtab_init(&tab) != 0) {
		pthread_mutex_unlock(&lock);
		return GFSP_ENOMEM;
	}
	free(patterns);
	patterns = strdup(conf->patterns);
	if (patterns == NULL) {
		pthread_mutex_unlock(&lock);
		return GFSP_ENOMEM;
	}
	if (!atfork)
		atfork = pthread_atfork(NULL, NULL, child_after_fork) == 0;
	verbose = conf->verbose;
	cache = c;
	multiple = multi;
	owner = pthread_self();
	nopened = 0;
	__atomic_store_n(&live, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&lock);
	return 0;
}

struct gfsp_cache *
ch_stop(uint64_t *opened)
{
	struct gfsp_cache *c;
	int was = hk_inside;

	hk_inside = 1;
	pthread_mutex_lock(&lock);
	c = cache;
	*opened = nopened;
	__atomic_store_n(&live, 0, __ATOMIC_RELEASE);
	hk_fdtab_clear(&tab, 0, ~0U, drop);
	cache = NULL;
	pthread_mutex_unlock(&lock);
	hk_inside = was;
	return c;
}
