/*
 * fdhook.h - the descriptor hook shared by the preloadable libraries: the
 * POSIX calls (posix.c) and stdio streams (stdio.c) through which an
 * unmodified program reads files that a library serves itself.
 *
 * Every library linked with preload/hook/ is a backend: it defines the
 * hk_* functions below, and the hook calls them for each open, read,
 * seek, stat and close.  The hook never decides what a file is; the
 * backend never defines a libc name:
 *
 *   libgfsplit-cache.so   (preload/cache/state.c) files selected by
 *                         GFSPLIT_CACHE_FILES, read through the
 *                         cooperative cache; the descriptor is the real
 *                         file, its offset the kernel's
 *   libgfsplit-mpiio.so   (preload/mpiio/posix.c) split files, read as
 *                         one regular file through their layout; the
 *                         descriptor is the split directory's, and the
 *                         backend keeps the offset, the size and what
 *                         stat says
 *
 * A descriptor the backend did not take goes to libc untouched.
 *
 * Recursion: the libraries call open, read, stat and close themselves,
 * and within the process those names are the hook's.  `hk_inside` is set
 * while a backend works, and the hook passes every call made with it set
 * straight to libc.
 */
#ifndef GFSP_PRELOAD_FDHOOK_H
#define GFSP_PRELOAD_FDHOOK_H

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

/* libc's functions, found with dlsym(RTLD_NEXT, ...) on first use
 * (int64_t is int64_t: the header needs no _GNU_SOURCE) */
struct hk_libc {
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
	ssize_t (*pread64)(int, void *, size_t, int64_t);
	ssize_t (*pread_chk)(int, void *, size_t, off_t, size_t);
	ssize_t (*pread64_chk)(int, void *, size_t, int64_t, size_t);
	off_t (*lseek)(int, off_t, int);
	int64_t (*lseek64)(int, int64_t, int);
	int (*stat)(const char *, struct stat *);
	int (*lstat)(const char *, struct stat *);
	int (*fstat)(int, struct stat *);
	int (*fstatat)(int, const char *, struct stat *, int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*close_range)(unsigned, unsigned, int);	/* NULL: not in libc */
	void (*closefrom)(int);				/* NULL: not in libc */
	FILE *(*fopen)(const char *, const char *);
	FILE *(*fopen64)(const char *, const char *);
	FILE *(*fdopen)(int, const char *);
	FILE *(*freopen)(const char *, const char *, FILE *);
	FILE *(*freopen64)(const char *, const char *, FILE *);
	int (*unlink)(const char *);
	int (*unlinkat)(int, const char *, int);
	int (*remove)(const char *);
	int (*rename)(const char *, const char *);
	int (*renameat)(int, const char *, int, const char *);
	int (*renameat2)(int, const char *, int, const char *, unsigned);
	int (*truncate)(const char *, off_t);
	int (*truncate64)(const char *, int64_t);
};

extern struct hk_libc hk_libc;
void hk_libc_resolve(void);
/* libc's function NAME */
#define LIBC(name) (hk_libc.name != NULL ? hk_libc.name : \
	(hk_libc_resolve(), hk_libc.name))

/* The thread is inside a backend (or the library): calls go to libc. */
extern __thread int hk_inside;

/* The return address of the open or stat (or fopen) call the hook is
 * serving, set on entry by HK_CALLER() (not by the calls a backend makes
 * itself): a backend may serve only calls from outside its own library. */
extern __thread const void *hk_caller;
#define HK_CALLER() do {						\
	if (!hk_inside)							\
		hk_caller = __builtin_return_address(0);		\
} while (0)

/*
 * The backend.
 *
 * hk_tracked: fd is the backend's (cheap; no lock; never in a fork
 * child).
 * hk_wanted: a file at path would be the backend's if opened read-only
 * now (for fopen, before it opens anything).
 * hk_opened: fd was just opened (by libc, as the program asked) with
 * flags, relative to dirfd; the backend may take it.  Returns fd, errno
 * as libc left it.
 * hk_forget_range: lo .. hi are being closed (or replaced): they are not
 * the backend's any more; hk_forget (fdtab.c, for every backend): the
 * same for one descriptor.
 * hk_try_read: read up to n bytes at off (-1: at fd's position, which
 * moves).  Returns 1 with *got set if the backend served it, 0 if the
 * caller must do the real call, -1 with errno set if the read failed.
 * hk_size: a tracked fd's size (-1: not tracked).
 * hk_seek: lseek of a tracked fd whose position the backend keeps:
 * returns 1 with *pos set (or *pos -1 and errno), 0 if libc seeks.
 * hk_fstat, hk_stat: what fstat of fd, or stat/lstat of path relative to
 * dirfd (flags as fstatat's), says, if the backend answers for it:
 * returns 1 with *st filled (or -1 and errno), 0 if libc answers.
 * hk_unlink (unlinkat's arguments; unlink and remove: AT_FDCWD, 0),
 * hk_rename (renameat2's), hk_truncate: the call on a file the backend
 * serves, done: 1 (or -1 and errno); 0 if libc does it.
 */
/*
 * The table a backend keeps its descriptors in (fdtab.c).  Lookups need
 * no lock; put and clear are the backend's to serialise.  hk_fdtab_init
 * sizes it once (0, or -1: out of memory); put fails (-1) for a
 * descriptor beyond it; clear drops the entries of lo .. hi.
 */
struct hk_fdtab {
	void **v;
	unsigned n;		/* set once, after v */
};

int hk_fdtab_init(struct hk_fdtab *t);
void *hk_fdtab_get(const struct hk_fdtab *t, int fd);
int hk_fdtab_put(struct hk_fdtab *t, int fd, void *e);
void hk_fdtab_clear(struct hk_fdtab *t, unsigned lo, unsigned hi,
		    void (*drop)(void *e));

int hk_tracked(int fd);
int hk_wanted(const char *path);
int hk_opened(int fd, int dirfd, const char *path, int flags);
void hk_forget(int fd);
void hk_forget_range(unsigned lo, unsigned hi);
int hk_try_read(int fd, void *buf, size_t n, int64_t off, size_t *got);
off_t hk_size(int fd);
int hk_seek(int fd, off_t off, int whence, off_t *pos);
int hk_fstat(int fd, struct stat *st);
int hk_stat(int dirfd, const char *path, struct stat *st, int flags);
int hk_unlink(int dirfd, const char *path, int flags);
int hk_rename(int olddirfd, const char *oldpath, int newdirfd,
	      const char *newpath, unsigned flags);
int hk_truncate(const char *path, int64_t size);

#endif /* GFSP_PRELOAD_FDHOOK_H */
