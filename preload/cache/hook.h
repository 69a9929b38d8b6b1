/*
 * hook.h - inside libgfsplit-cache.so, the preloadable read hook that
 * reads the files an unmodified MPI program opens through the cooperative
 * cache (cache.h):
 *
 *   GFSPLIT_CACHE_FILES='/data/run1-*.bin' LD_PRELOAD=libgfsplit-cache.so \
 *       mpiexec -n 8 ./app
 *
 * The cache is collective, so it lives from MPI_Init to MPI_Finalize
 * (mpi.c); outside that time, and in every case the hook does not take,
 * each call goes straight to libc.
 *
 * A cached file keeps its real descriptor: the open is done by libc as
 * the program asked, and the hook only records the descriptor in a table
 * (state.c).  So fstat, mmap, dup, fcntl and every call the hook does not
 * define work on the real file, and reading the real descriptor is always
 * a correct fallback:
 *
 *   app: fd = open(p, O_RDONLY)  --libc-->  fd (a real descriptor of p)
 *                                           tab[fd] = { cache file of p }
 *   app: read(fd, buf, n)        --hook-->  off = lseek(fd, 0, SEEK_CUR)
 *                                           gfsp_cache_pread(.., off, ..)
 *                                           lseek(fd, off + got, SEEK_SET)
 *   app: pread(fd, buf, n, off)  --hook-->  gfsp_cache_pread
 *   app: lseek(fd, ...)          --libc-->  (the kernel's file offset is
 *                                           the position: not hooked)
 *   app: close(fd)               --hook-->  tab[fd] = NULL, libc close
 *
 * A stdio stream of a cached file is a fopencookie(3) stream whose read
 * and seek go through the cache with the stream's own position (stdio.c);
 * fread, fgets, fgetc, fseek, ftell, rewind, feof and fclose are glibc's,
 * unchanged, on top of it, and fileno() gives the real descriptor.
 *
 * Recursion: libcore inside this library (and MPI, and libgfarm) calls
 * open, read, pread and close too, and within the process those names are
 * the hook's.  Every call into libcore runs with the thread's `ch_inside`
 * flag set, and a hooked call that finds it set goes straight to libc.
 *
 * Threads: the cache is not thread-safe and does MPI calls, so one mutex
 * serialises its use, and only the thread that initialised MPI uses it
 * unless MPI provides MPI_THREAD_MULTIPLE; other threads read the real
 * descriptor.  After fork the child reads the real descriptors.
 *
 *   state.c   the configuration, selection, the descriptor table, the
 *             guard and the cached read; libc's own functions
 *   posix.c   open, openat, read, pread, close, dup2, dup3, close_range,
 *             closefrom and glibc's _FORTIFY_SOURCE variants
 *   stdio.c   fopen, fopen64, fdopen: cookie streams; freopen, freopen64
 *             (only so that the descriptor they replace is forgotten)
 *   mpi.c     MPI_Init, MPI_Init_thread, MPI_Finalize: the cache's life,
 *             and the statistics
 */
#ifndef GFSP_CACHE_HOOK_H
#define GFSP_CACHE_HOOK_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cache.h"

/* libc's functions, found with dlsym(RTLD_NEXT, ...) on first use */
struct ch_libc {
	int (*open)(const char *, int, ...);
	int (*open64)(const char *, int, ...);
	int (*openat)(int, const char *, int, ...);
	int (*openat64)(int, const char *, int, ...);
	int (*open_2)(const char *, int);		/* __open_2 */
	int (*open64_2)(const char *, int);		/* __open64_2 */
	int (*openat_2)(int, const char *, int);	/* __openat_2 */
	int (*openat64_2)(int, const char *, int);	/* __openat64_2 */
	int (*close)(int);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*read_chk)(int, void *, size_t, size_t);
	ssize_t (*pread)(int, void *, size_t, off_t);
	ssize_t (*pread64)(int, void *, size_t, off64_t);
	ssize_t (*pread_chk)(int, void *, size_t, off_t, size_t);
	ssize_t (*pread64_chk)(int, void *, size_t, off64_t, size_t);
	off_t (*lseek)(int, off_t, int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*close_range)(unsigned, unsigned, int);	/* NULL: not in libc */
	void (*closefrom)(int);				/* NULL: not in libc */
	FILE *(*fopen)(const char *, const char *);
	FILE *(*fopen64)(const char *, const char *);
	FILE *(*fdopen)(int, const char *);
	FILE *(*freopen)(const char *, const char *, FILE *);
	FILE *(*freopen64)(const char *, const char *, FILE *);
};

extern struct ch_libc ch_libc;
void ch_libc_resolve(void);
/* libc's function NAME */
#define LIBC(name) (ch_libc.name != NULL ? ch_libc.name : \
	(ch_libc_resolve(), ch_libc.name))

/*
 * The settings, from rank 0's environment for every rank (mpi.c reads
 * and broadcasts them).
 */
struct ch_conf {
	struct gfsp_cache_opts opts;
	const char *patterns;	/* GFSPLIT_CACHE_FILES */
	const char *stats;	/* GFSPLIT_CACHE_STATS, NULL: none */
	int verbose;		/* GFSPLIT_VERBOSE */
};

/* state.c: the thread is inside the library (the guard) */
extern __thread int ch_inside;

/* The world rank, for messages. */
extern int ch_rank;

/* One line "gfsplit-cache: ..." on stderr, in one write. */
void ch_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * state.c, from mpi.c: start with a created cache (the table, the
 * thread rule: `multiple` if MPI gives MPI_THREAD_MULTIPLE, else only
 * the calling thread), and stop: every tracked descriptor goes back to
 * plain libc, and OUT *opened counts the files opened through the cache.
 * Both hold the lock while they change the state.
 */
int ch_start(struct gfsp_cache *c, const struct ch_conf *conf, int multiple);
struct gfsp_cache *ch_stop(uint64_t *opened);

/*
 * state.c, from posix.c and stdio.c.
 *
 * ch_tracked: fd is a cached descriptor (cheap; no lock; never in a
 * fork child).
 * ch_wanted: a file at path would be cached if opened read-only now
 * (cheap: the patterns; for fopen, before it opens anything).
 * ch_opened: fd was just opened (by libc, as the program asked) with
 * flags, relative to dirfd; if the hook takes the file, fd is tracked
 * from now on.  Returns fd, errno as libc left it.
 * ch_forget: fd is being closed (or replaced): it is no longer tracked;
 * ch_forget_range: the same for lo .. hi.
 * ch_try_read: read up to n bytes at off (-1: at fd's file offset, which
 * moves) through the cache.  Returns 1 with *got set if the cache served
 * it, 0 if the caller must do the real call (not tracked, not now, or
 * the cache failed: then fd is read directly from now on).
 * ch_size: a tracked fd's size as the cache holds it (-1: not tracked).
 */
int ch_tracked(int fd);
int ch_wanted(const char *path);
int ch_opened(int fd, int dirfd, const char *path, int flags);
void ch_forget(int fd);
void ch_forget_range(unsigned lo, unsigned hi);
int ch_try_read(int fd, void *buf, size_t n, int64_t off, size_t *got);
off_t ch_size(int fd);

#endif /* GFSP_CACHE_HOOK_H */
