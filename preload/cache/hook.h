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
 * The hooked calls themselves are the shared descriptor hook's
 * (preload/hook/, fdhook.h); this library is its backend.
 *
 * Recursion: libcore inside this library (and MPI, and libgfarm) calls
 * open, read, pread and close too, and within the process those names are
 * the hook's.  Every call into libcore runs with the thread's `hk_inside`
 * flag set, and a hooked call that finds it set goes straight to libc.
 *
 * Threads: the cache is not thread-safe and does MPI calls, so one mutex
 * serialises its use, and only the thread that initialised MPI uses it
 * unless MPI provides MPI_THREAD_MULTIPLE; other threads read the real
 * descriptor.  After fork the child reads the real descriptors.
 *
 *   state.c   the configuration, selection, the descriptor table and
 *             the cached read: the hook's backend
 *   mpi.c     MPI_Init, MPI_Init_thread, MPI_Finalize: the cache's life,
 *             and the statistics
 */
#ifndef GFSP_CACHE_HOOK_H
#define GFSP_CACHE_HOOK_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "cache.h"
#include "../hook/fdhook.h"

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

/* state.c is the backend of the descriptor hook (fdhook.h): hk_*. */

#endif /* GFSP_CACHE_HOOK_H */
