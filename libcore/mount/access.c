/*
 * access.c - who may read a split file through the mount.
 *
 * A split file is several files: its directory, the marker, the location
 * files and the parts, each with an owner, a group and bits of its own.
 * Read directly, it takes search permission on the directory and read
 * permission on every other one of them.  Through the mount it is one
 * file with one owner, one group and one set of bits, by which the kernel
 * lets users in (default_permissions), while the daemon reads with its
 * own rights: root's, with allow_other.  So nothing may be let in through
 * the mount that would be kept out directly: the bits shown are never
 * wider than any of the files', and every open asks again, of every file,
 * for the user who opens (the bits shown may be an hour old, and they
 * cannot know her groups).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core.h"
#include "layout_impl.h"
#include "mount.h"

/* the read and write bits of a directory's classes that may also search
 * it: a class that may not reaches none of its files */
static uint32_t
dir_bits(uint32_t mode)
{
	uint32_t bits = 0;
	int shift;

	for (shift = 0; shift <= 6; shift += 3)
		if (mode & ((uint32_t)S_IXOTH << shift))
			bits |= mode & ((uint32_t)(S_IROTH | S_IWOTH) << shift);
	return bits;
}

/*
 * The bits of the shown classes of a split file whose directory is
 * uid:gid that file st allows.  A user of a shown class gets a bit only
 * if every class of st she may fall in grants it:
 *
 *   shown owner   the directory's owner: st's owner bits if she owns st,
 *                 else its group's and others' (she may be in its group,
 *                 or not: the bits shown cannot depend on her groups)
 *   shown group   not the directory's owner, in gid: st's owner bits too
 *                 unless uid owns st (she may own it); st's group bits if
 *                 st's group is gid, else its group's and others'
 *   others        likewise, with st's others' bits if st's group is gid
 *                 (she is not in it), else its group's and others'
 */
static uint32_t
class_bits(uint32_t mode, const struct gfsp_stat *st, uint32_t uid,
	   uint32_t gid)
{
	uint32_t o = (mode >> 6) & 7, g = (mode >> 3) & 7, t = mode & 7;
	uint32_t not_owner = st->uid == uid ? 7 : o;
	uint32_t as_owner, as_group, as_other;

	as_owner = st->uid == uid ? o : g & t;
	as_group = not_owner & (st->gid == gid ? g : g & t);
	as_other = not_owner & (st->gid == gid ? t : g & t);
	return as_owner << 6 | as_group << 3 | as_other;
}

/* file i of split file dir: 0 the marker, then the location files, then
 * the parts (malloc'd; NULL when out of memory) */
static char *
file_path(const char *dir, uint64_t i, uint32_t nlocs)
{
	if (i == 0)
		return gfsp_marker_path(dir);
	if (i <= nlocs)
		return gfsp_loc_path(dir, (int)(i - 1));
	return gfsp_part_path(dir, (int)(i - 1 - nlocs));
}

uint32_t
gfsp_msplit_mode(const char *dir, const struct gfsp_stat *d,
		 uint32_t nparts, uint32_t nlocs)
{
	struct gfsp_error err;
	struct gfsp_stat st;
	uint32_t bits = dir_bits(d->mode);
	uint64_t i;
	char *path;
	int ok;

	/* A file that is not there, or not a regular file, ends the walk:
	 * the open fails on it (EIO, and the cause in the log, which bits
	 * of 0 would hide behind EACCES), and with it a marker's counts,
	 * whatever they claim, cost no more stats than there are files.
	 * One that comes later is the check of the open's to judge. */
	for (i = 0; bits != 0 && i <= (uint64_t)nlocs + nparts; i++) {
		path = file_path(dir, i, nlocs);
		if (path == NULL)
			return 0;	/* out of memory: show nothing */
		gfsp_error_clear(&err);
		ok = gfsp_lstat(path, &st, &err) == 0 && S_ISREG(st.mode);
		free(path);
		if (!ok)
			break;
		bits &= class_bits(st.mode & 0666, &st, d->uid, d->gid);
	}
	return bits;
}

/* Would the kernel let who in to st for `want` (S_IROTH, S_IXOTH)? */
static int
may(const struct gfsp_stat *st, const struct gfsp_mcaller *who,
    uint32_t want)
{
	size_t i;
	int in_group = who->gid == st->gid;

	for (i = 0; !in_group && i < who->ngroups; i++)
		in_group = who->groups[i] == st->gid;
	if (who->uid == st->uid)
		want <<= 6;
	else if (in_group)
		want <<= 3;
	return (st->mode & want) != 0;
}

/* path's stat for who, or GFSP_EACCES naming it (what cannot be stat'ed
 * or is of the wrong type keeps her out: the open would fail anyway) */
static int
check(const char *path, const struct gfsp_stat *st, int dir,
      const struct gfsp_mcaller *who, struct gfsp_error *err)
{
	if (st != NULL && (dir ? S_ISDIR(st->mode) : S_ISREG(st->mode)) &&
	    may(st, who, dir ? S_IXOTH : S_IROTH))
		return 0;
	return gfsp_error_set(err, GFSP_EACCES, "'%s': permission denied to "
	    "uid %u, which may not %s it directly", path, who->uid,
	    dir ? "search" : "read");
}

int
gfsp_msplit_access(const char *dir, struct gfsp_layout *l,
		   const struct gfsp_mcaller *who, struct gfsp_error *err)
{
	struct gfsp_error serr;
	struct gfsp_stat st;
	struct gfsp_file *f;
	uint32_t nlocs = l != NULL ? (uint32_t)l->nnodes : 0, i;
	char *path;
	int rc = 0, ok;

	/* root reads and searches everything, as the kernel lets her */
	if (who->uid == 0)
		return 0;
	gfsp_error_clear(&serr);
	ok = gfsp_lstat(dir, &st, &serr) == 0;
	rc = check(dir, ok ? &st : NULL, 1, who, err);
	/* the marker and location files by name; the parts by the handles
	 * the layout reads them through, whatever has their names now */
	for (i = 0; rc == 0 && i <= nlocs; i++) {
		path = file_path(dir, i, nlocs);
		if (path == NULL)
			return gfsp_error_set(err, GFSP_ENOMEM,
			    "out of memory");
		gfsp_error_clear(&serr);
		ok = gfsp_lstat(path, &st, &serr) == 0;
		rc = check(path, ok ? &st : NULL, 0, who, err);
		free(path);
	}
	for (i = 0; rc == 0 && l != NULL && l->held &&
	    i < (uint32_t)l->nprocs; i++) {
		gfsp_error_clear(&serr);
		ok = gfsp_layout_part(l, (int)i, &f, &serr) == 0 &&
		    gfsp_fstat(f, &st, &serr) == 0;
		rc = check(ok ? gfsp_file_path(f) : l->path, ok ? &st : NULL,
		    0, who, err);
	}
	return rc;
}
