/*
 * libc.c - libc's own functions behind the descriptor hook (fdhook.h),
 * and the guard.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>

#include "fdhook.h"

struct hk_libc hk_libc;
__thread int hk_inside;
__thread const void *hk_caller;

static pthread_once_t resolved = PTHREAD_ONCE_INIT;

static void
resolve(void)
{
#define FIND(field, sym) (*(void **)&hk_libc.field = dlsym(RTLD_NEXT, sym))
	FIND(open, "open");
	FIND(open64, "open64");
	FIND(openat, "openat");
	FIND(openat64, "openat64");
	FIND(open_2, "__open_2");
	FIND(open64_2, "__open64_2");
	FIND(openat_2, "__openat_2");
	FIND(openat64_2, "__openat64_2");
	FIND(close, "close");
	FIND(read, "read");
	FIND(read_chk, "__read_chk");
	FIND(pread, "pread");
	FIND(pread64, "pread64");
	FIND(pread_chk, "__pread_chk");
	FIND(pread64_chk, "__pread64_chk");
	FIND(lseek, "lseek");
	FIND(lseek64, "lseek64");
	FIND(stat, "stat");
	FIND(lstat, "lstat");
	FIND(fstat, "fstat");
	FIND(fstatat, "fstatat");
	FIND(dup2, "dup2");
	FIND(dup3, "dup3");
	FIND(close_range, "close_range");
	FIND(closefrom, "closefrom");
	FIND(fopen, "fopen");
	FIND(fopen64, "fopen64");
	FIND(fdopen, "fdopen");
	FIND(freopen, "freopen");
	FIND(freopen64, "freopen64");
	FIND(unlink, "unlink");
	FIND(unlinkat, "unlinkat");
	FIND(remove, "remove");
	FIND(rename, "rename");
	FIND(renameat, "renameat");
	FIND(renameat2, "renameat2");
	FIND(truncate, "truncate");
	FIND(truncate64, "truncate64");
#undef FIND
}

void
hk_libc_resolve(void)
{
	pthread_once(&resolved, resolve);
}

/* Early, while the process is one thread; the lazy path covers calls
 * from constructors that run before this one. */
__attribute__((constructor)) static void
hk_init(void)
{
	hk_libc_resolve();
}
