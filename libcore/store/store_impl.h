/*
 * store_impl.h - between the confinement walk (store_confine.c) and the
 * POSIX backend (store_posix.c): where an operation on a path happens.
 * Included by libcore/store/ only.
 */
#ifndef GFSP_STORE_IMPL_H
#define GFSP_STORE_IMPL_H

#include <stddef.h>
#include <sys/types.h>

/* Where an operation on a path happens. */
struct at {
	int dfd;		/* AT_FDCWD, or the directory holding name */
	const char *name;	/* the path itself, or its last component */
	int nofollow;		/* below a confined root: follow nothing */
	char *buf;		/* name's storage; then the root's name */
	const char *root;
	int cached;		/* dfd is the thread's cached one: kept */
};

/* Resolve path for an operation: 0, or an errno with a->root set when
 * the path is below a confined root.  gfsp_at_put gives back what
 * gfsp_at_get took. */
int gfsp_at_get(const char *path, struct at *a);
void gfsp_at_put(struct at *a);
/* "/proc/self/fd/DFD/NAME": for the calls that have no *at() form */
const char *gfsp_at_proc(const struct at *a, char *buf, size_t len);
/* at's flags for *at() calls that may follow a final link */
int gfsp_at_flag(const struct at *a, int follow);
/* GFSP_CONFINE_SAFE's walk of directory path (store_confine.c says how):
 * -1 with errno, or an O_PATH descriptor. */
int gfsp_chase_safe(const char *path, mode_t mkmode);
/* Something below a root changed shape: every thread's cache is stale. */
void gfsp_dircache_drop_all(void);

#endif /* GFSP_STORE_IMPL_H */
