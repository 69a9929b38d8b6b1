/*
 * mem.c - large arrays and buffers, and the growable array.
 *
 * Arrays of megabytes (a flattened view of a million blocks, its index,
 * a transfer buffer) are aligned to 2 MiB and asked for transparent huge
 * pages: on a VM each first touch of a 4 KiB page is a costly fault, and
 * that, not the work, is most of the time of building such an array; huge
 * pages also spare random lookups their TLB misses.  A hint only: without
 * THP this is plain memory.  Smaller ones get the caller's alignment.
 *
 * Sources are read through read-only mappings where the file system has
 * them (gfsp_rmap_open): the writer then copies straight from the page
 * cache, one copy fewer than pread into a buffer.  A mapped page the file
 * no longer covers (truncated by someone while we copy) raises SIGBUS at
 * the first instruction that touches it; gfsp_guard turns that into an
 * error of the thread that was reading.  System calls that touch such a
 * page (a write from the mapping) fail with EFAULT by themselves.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core.h"

#define HUGE_PAGE	((size_t)2 << 20)

static size_t
round_up(size_t x, size_t a)
{
	return (x + a - 1) / a * a;
}

void *
gfsp_big_alloc(size_t bytes, size_t align)
{
	void *p;

	if (bytes > SIZE_MAX - HUGE_PAGE)
		return NULL;
	if (bytes < 2 * HUGE_PAGE)
		return posix_memalign(&p, align, round_up(bytes ? bytes : 1,
		    align)) == 0 ? p : NULL;
	bytes = round_up(bytes, HUGE_PAGE);
	if (posix_memalign(&p, HUGE_PAGE, bytes) != 0)
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

int
gfsp_grow(void *arr, size_t *cap, size_t n, size_t size)
{
	void **v = arr;
	size_t c = *cap;
	void *p;

	if (n <= c)
		return 0;
	c = c > SIZE_MAX / 2 ? n : GFSP_MAX(2 * c, 16);
	c = GFSP_MAX(c, n);
	if (size != 0 && c > SIZE_MAX / size)
		return -1;
	p = realloc(*v, c * size);
	if (p == NULL)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

/* ------------------------------------------------------ file mappings */

static __thread sigjmp_buf *guard_jump;
static __thread const char *guard_name;

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22		/* Linux 5.14 */
#endif

int
gfsp_rmap_open(int fd, uint64_t off, size_t len, const char *name,
	      struct gfsp_rmap *m, struct gfsp_error *err)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t base = off / (uint64_t)pg * (uint64_t)pg;
	size_t span = (size_t)(off - base) + len;
	void *p;

	memset(m, 0, sizeof(*m));
	if (len == 0)
		return gfsp_error_set(err, GFSP_EINVAL, "%s: empty mapping",
				     name);
	p = mmap(NULL, span, PROT_READ, MAP_SHARED, fd, (off_t)base);
	if (p == MAP_FAILED)
		return gfsp_error_errno(err, errno, "%s: cannot map %zu bytes "
				       "at offset %" PRIu64, name, len, off);
	/* read the pages in now, in this thread: a range the file no longer
	 * covers fails here (EFAULT) rather than by SIGBUS later */
	if (madvise(p, span, MADV_POPULATE_READ) != 0 && errno != EINVAL) {
		int e = errno;

		munmap(p, span);
		if (e == EFAULT)
			return gfsp_error_set(err, GFSP_EIO, "%s: file shrank "
			    "while copying (no data below offset %" PRIu64 ")",
			    name, off + len);
		return gfsp_error_errno(err, e, "%s: cannot read %zu bytes at "
				       "offset %" PRIu64, name, len, off);
	}
	m->base = p;
	m->span = span;
	m->data = (const unsigned char *)p + (off - base);
	m->name = name;
	guard_name = name;
	return 0;
}

void
gfsp_rmap_close(struct gfsp_rmap *m)
{
	if (m->base != NULL)
		munmap(m->base, m->span);
	memset(m, 0, sizeof(*m));
}

/*
 * The guard.  A thread inside gfsp_guard has guard_jump set; a SIGBUS it
 * takes there jumps back out of the innermost gfsp_guard.  Any other
 * SIGBUS gets the disposition there was before ours (by default: the
 * process dies, as it would have).  The handler is installed once, on the
 * first guard.
 */
static struct sigaction guard_prev;
static pthread_once_t guard_once = PTHREAD_ONCE_INIT;

static void
guard_handler(int sig, siginfo_t *si, void *uc)
{
	if (guard_jump != NULL)
		siglongjmp(*guard_jump, 1);
	if (guard_prev.sa_flags & SA_SIGINFO) {
		guard_prev.sa_sigaction(sig, si, uc);
		return;
	}
	if (guard_prev.sa_handler == SIG_IGN)
		return;
	if (guard_prev.sa_handler != SIG_DFL) {
		guard_prev.sa_handler(sig);
		return;
	}
	/* the default: die of it, as the faulting instruction runs again */
	signal(sig, SIG_DFL);
}

static void
guard_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = guard_handler;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &guard_prev);
}

/* Touch the ends of a mapping (a truncation takes the tail first). */
static int
touch_ends(void *arg)
{
	const struct gfsp_rmap *m = arg;
	const volatile unsigned char *p = m->base;

	return p[0] + p[m->span - 1] < 0;
}

int
gfsp_rmap_vanished(const struct gfsp_rmap *m, struct gfsp_error *err)
{
	struct gfsp_error e;

	gfsp_error_clear(&e);
	if (m->base == NULL || gfsp_guard(touch_ends, (void *)m, m->name,
					  &e) == 0)
		return 0;
	if (err != NULL)
		*err = e;
	return 1;
}

int
gfsp_guard(int (*fn)(void *), void *arg, const char *name,
	  struct gfsp_error *err)
{
	sigjmp_buf jb, *outer = guard_jump;
	int rc;

	pthread_once(&guard_once, guard_install);
	/* the mask needs no saving: the handler does not block SIGBUS */
	if (sigsetjmp(jb, 0) != 0) {
		guard_jump = outer;
		return gfsp_error_set(err, GFSP_EIO, "%s: file shrank while "
		    "copying (a page read through its mapping is gone)",
		    guard_name ? guard_name : "a mapped file");
	}
	if (name != NULL)
		guard_name = name;
	guard_jump = &jb;
	rc = fn(arg);
	guard_jump = outer;
	return rc;
}
