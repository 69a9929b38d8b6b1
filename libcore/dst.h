/*
 * dst.h - creating a destination without losing anything (dst.c).
 * Included by libcore/ only.
 */
#ifndef GFS_DST_H
#define GFS_DST_H

#include "gfsplit.h"

struct gfs_dst {
	char *path;	/* as given, trailing slashes removed */
	char *prefix;	/* path up to its last '/', "" if none */
	const char *base;	/* points into path */
	char *parent;	/* the directory that holds it */
};

/* IN dst; OUT d (free with gfs_dst_free, also after a failure) */
int gfs_dst_parse(struct gfs_dst *d, const char *dst, struct gfs_error *err);
void gfs_dst_free(struct gfs_dst *d);

/* May d be created: absent with an existing parent directory, or (force)
 * a regular file or split directory that will be replaced at install. */
int gfs_dst_check(const struct gfs_dst *d, int force, struct gfs_error *err);

/* "dir/.name.gfsplit-TAG.<pid>.<time>" (malloc'd; NULL when out of memory) */
char *gfs_dst_sibling(const struct gfs_dst *d, const char *tag);

/* Rename the finished tmp to d.  An existing d (force only) is moved aside,
 * the new one renamed in, and only then is the old one removed; if the
 * second rename fails the old one is put back. */
int gfs_dst_install(const struct gfs_dst *d, const char *tmp, int force,
		    struct gfs_error *err);

/* Remove a file, or a directory of files (no subdirectories).  Best effort:
 * keeps going and returns the first error. */
int gfs_remove_tree(const char *path, struct gfs_error *err);

/* Collective: broadcast rank 0's string; other ranks get a malloc'd copy. */
int gfs_bcast_string(MPI_Comm comm, char **s, struct gfs_error *err);

#endif /* GFS_DST_H */
