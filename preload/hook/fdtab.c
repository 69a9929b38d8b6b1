/*
 * fdtab.c - the backends' table of descriptors (fdhook.h): indexed by
 * descriptor, sized once by the descriptor limit (at most 1 Mi entries; a
 * higher descriptor is simply not taken) and never freed, so a lookup
 * needs no lock.  Entries are set and cleared under the backend's lock.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/resource.h>

#include "fdhook.h"

#define TAB_MAX		(1 << 20)

int
hk_fdtab_init(struct hk_fdtab *t)
{
	struct rlimit rl;
	rlim_t n = TAB_MAX;
	void **v;

	if (t->v != NULL)
		return 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < n)
		n = rl.rlim_cur;
	if ((v = calloc(n, sizeof(*v))) == NULL)
		return -1;
	t->v = v;
	__atomic_store_n(&t->n, (unsigned)n, __ATOMIC_RELEASE);
	return 0;
}

void *
hk_fdtab_get(const struct hk_fdtab *t, int fd)
{
	unsigned n = __atomic_load_n(&t->n, __ATOMIC_ACQUIRE);

	return fd >= 0 && (unsigned)fd < n ?
	    __atomic_load_n(&t->v[fd], __ATOMIC_ACQUIRE) : NULL;
}

int
hk_fdtab_put(struct hk_fdtab *t, int fd, void *e)
{
	if (fd < 0 || (unsigned)fd >= t->n)
		return -1;
	__atomic_store_n(&t->v[fd], e, __ATOMIC_RELEASE);
	return 0;
}

void
hk_fdtab_clear(struct hk_fdtab *t, unsigned lo, unsigned hi,
	       void (*drop)(void *e))
{
	unsigned n = __atomic_load_n(&t->n, __ATOMIC_ACQUIRE), fd;
	void *e;

	if (n == 0 || lo >= n)
		return;
	if (hi >= n)
		hi = n - 1;
	for (fd = lo; fd <= hi; fd++) {
		e = t->v[fd];
		if (e == NULL)
			continue;
		__atomic_store_n(&t->v[fd], NULL, __ATOMIC_RELEASE);
		drop(e);
	}
}

/* Every backend forgets one descriptor as a range of one. */
void
hk_forget(int fd)
{
	if (hk_tracked(fd))
		hk_forget_range((unsigned)fd, (unsigned)fd);
}
