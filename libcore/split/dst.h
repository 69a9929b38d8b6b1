/*
 * dst.h - creating a destination without losing anything (dst.c).
 * Included by libcore/, cmd/ and preload/.
 */
#ifndef GFSP_DST_H
#define GFSP_DST_H

#include "gfsplit.h"

struct gfsp_dst {
	char *path;	/* as given, trailing slashes removed */
	char *prefix;	/* path up to its last '/', "" if none */
	const char *base;	/* points into path */
	char *parent;	/* the directory that holds it */
	int held;	/* gfsp_dst_hold: parent confined */
	/* guard: the install refuses a d that is no longer what the check
	 * saw (absent, or that inode): someone else wrote it meanwhile */
	int guard, seen_absent;
	uint64_t seen_ino;
};

/*
 * Where a file written through path lands, as open(2) would put it: path's
 * final symbolic links followed (a relative target from the link's
 * directory), each only if it is root's or this user's.  One of another
 * user's is not followed: *out names it, for the destination checks to
 * refuse, naming it.  A path that is no link, or no file, is *out as
 * given; so is a URL.  OUT *out malloc'd.  GFSP_EINVAL naming path past
 * 40 links (ELOOP).
 */
int gfsp_dst_follow(const char *path, char **out, struct gfsp_error *err);

/*
 * Collective: cp's rule for DEST.  An existing directory that is not a
 * split file means DEST/NAME, NAME the last component of src (less
 * suffix at its end: ".split" for a merge); anything else is DEST itself.
 * Rank 0 looks; every rank gets *out (malloc'd).
 */
int gfsp_dst_resolve(MPI_Comm comm, const char *src, const char *dst,
		     const char *suffix, char **out, struct gfsp_error *err);

/* IN dst; OUT d (free with gfsp_dst_free, also after a failure) */
int gfsp_dst_parse(struct gfsp_dst *d, const char *dst, struct gfsp_error *err);
void gfsp_dst_free(struct gfsp_dst *d);

/*
 * Hold d's parent for the run (gfsp_confine_dir, GFSP_CONFINE_NAMES): the
 * names made, renamed and removed in it (the temporary, d, the old d, a
 * killed run's leftovers) are reached from its descriptor, taken once,
 * whatever someone does to the names above it meanwhile.  It is opened
 * following no other user's symbolic link on the way
 * (GFSP_CONFINE_SAFE).  "." (the
 * working directory, which the process holds already) and "/" are not
 * confined; nor are URLs.  gfsp_dst_free lets go.
 */
int gfsp_dst_hold(struct gfsp_dst *d, struct gfsp_error *err);

/* Remove the tree path (a split file) from its parent held as above
 * (gfsp_dst_hold): a parent someone swapped for a link meanwhile leads the
 * removal nowhere else; no link below it followed (gfsp_remove_tree) */
int gfsp_dst_remove_tree(const char *path, struct gfsp_error *err);

/* May d be created: absent with an existing parent directory, or (force)
 * a regular file or split directory that will be replaced at install.
 * With d->guard, notes what it saw for the install. */
int gfsp_dst_check(struct gfsp_dst *d, int force, struct gfsp_error *err);

/* Refuse a destination that is its source: the same path, or the same
 * file by another name (a hard or a symbolic link), which --force would
 * replace by the copy.  0 when either does not exist. */
int gfsp_dst_not_source(const char *src, const char *dst,
		       struct gfsp_error *err);

/* "dir/.name.gfsplit-TAG.NODE.PID.NONCE" (malloc'd; NULL when out of
 * memory): made by process PID of node NODE; NONCE random */
char *gfsp_dst_sibling(const struct gfsp_dst *d, const char *tag);

/* d's siblings of tag ("dir/.name.gfsplit-TAG.NODE.PID.NONCE"): who made
 * each, and whether that process is gone (it can be told on its own node
 * only).  Free with gfsp_dst_leftovers_free. */
enum { GFSP_LEFT_GONE, GFSP_LEFT_RUNNING, GFSP_LEFT_ELSEWHERE };
struct gfsp_leftover {
	char *path;
	char node[256];
	long pid;
	int state;		/* GFSP_LEFT_* */
};
int gfsp_dst_leftovers(const struct gfsp_dst *d, const char *tag,
		       struct gfsp_leftover **v, size_t *n);
void gfsp_dst_leftovers_free(struct gfsp_leftover *v, size_t n);

/* Remove d's siblings of tag that a process of this node made and that
 * is gone (a killed run's temporaries); returns how many.  A directory
 * or a regular file, never followed. */
size_t gfsp_dst_sweep(const struct gfsp_dst *d, const char *tag);

/* Rename the finished tmp to d.  An existing d (force only) is moved aside,
 * the new one renamed in, and only then is the old one removed; if the
 * second rename fails the old one is put back.  With d->guard, a d that
 * another writer made or replaced since the check is left as it is:
 * GFSP_EEXIST. */
int gfsp_dst_install(const struct gfsp_dst *d, const char *tmp, int force,
		    struct gfsp_error *err);


/* Collective: every rank's text (len bytes, no NUL needed), in rank order,
 * as one NUL-terminated string at rank 0 (*all malloc'd; NULL elsewhere). */
int gfsp_gather_text(MPI_Comm comm, const char *text, size_t len, char **all,
		    struct gfsp_error *err);

/* Collective: broadcast rank 0's string; other ranks get a malloc'd copy. */
int gfsp_bcast_string(MPI_Comm comm, char **s, struct gfsp_error *err);

#endif /* GFSP_DST_H */
