/*
 * store.h - the store wing (libcore/store/): the storage interface, one
 * table of operations per backend, chosen once from the path scheme, with
 * confinement below a root, the whole-file helpers and file identity
 * keys.  Above base, below every other wing: it knows no split format.
 * Included by libcore/, preload/, tests/ and bench/.
 *
 *   "/data/x", "rel/x"           -> posix  (store_posix.c)
 *   "gfarm:///x", "gfarm://h:p/x" -> gfarm  (store_gfarm.c, when built)
 *
 * Every slot of a table is filled; an operation a backend cannot do returns
 * GFSP_ENOTSUP.  Backends translate their native errors (errno, gfarm_error_t)
 * into a gfsp_errcode at this boundary and keep the native cause text in the
 * message.  Paths given to the operations are full paths as the user wrote
 * them (scheme included); a backend strips its own prefix.
 */
#ifndef GFSP_STORE_H
#define GFSP_STORE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "gfsplit.h"

struct gfsp_file;			/* an open file; owned by its backend */

struct gfsp_stat {
	uint64_t size;
	uint32_t mode;			/* st_mode bits: type and permissions */
	int64_t mtime;			/* seconds */
	/* what tells this version of the file from another (the cache's file
	 * identity, which every node must see alike): nanoseconds of mtime,
	 * inode (POSIX; gen is 0); inode and generation (Gfarm) */
	uint64_t mtime_ns, ino, gen;
	/* the last change of the file's data or inode (which no one can set
	 * back, unlike mtime): seconds and nanoseconds */
	int64_t ctime;
	uint64_t ctime_ns;
	uint64_t blocks_bytes;		/* bytes actually allocated (sparse) */
	/* the last access: seconds and nanoseconds.  Not part of the
	 * identity above: reading the file may move it */
	int64_t atime;
	uint64_t atime_ns;
	uint64_t nlink;			/* names of the file (hard links) */
	/* the owner and group as this host numbers them (Gfarm: its global
	 * names mapped to local accounts; one without an account here is
	 * this process's own) */
	uint32_t uid, gid;
};

/*
 * open flags, backend independent.  Every open is of a regular file: on
 * POSIX it never blocks (O_NONBLOCK, cleared once the descriptor is
 * checked), and anything but a regular file found at the name, a FIFO or
 * a device someone put there after the name was listed or looked up, is
 * refused, GFSP_EINVAL: "'x/big': not a regular file".  What the open
 * returns is then the file: use that handle, never the name again
 * (gfsp_open_listed checks it is the file a listing saw).
 */
#define GFSP_O_RDONLY	0x0
#define GFSP_O_WRONLY	0x1
#define GFSP_O_RDWR	0x2
#define GFSP_O_CREAT	0x10
#define GFSP_O_EXCL	0x20
#define GFSP_O_TRUNC	0x40
/* bypass the page cache (POSIX O_DIRECT: buffers, offsets and lengths
 * aligned to the device's block); GFSP_ENOTSUP where there is none */
#define GFSP_O_DIRECT	0x80
/* a temporary of our own: created anew (with GFSP_O_CREAT: O_EXCL), or,
 * when it exists, opened only if it is a regular file of this user's with
 * one name; never through a symbolic link (POSIX; Gfarm: ignored) */
#define GFSP_O_PRIVATE	0x100
/*
 * A file of a directory another user may write into (the parts and
 * metadata of a split file): a final symbolic link is not followed,
 * GFSP_EINVAL: "'x.split/part.0': a symbolic link (not followed)"
 */
#define GFSP_O_NOFOLLOW	0x200

/*
 * Where a new file's data should live, for backends that keep each file
 * whole on one storage node (Gfarm).  Backends without such nodes ignore it.
 */
enum gfsp_place_policy {
	GFSP_PLACE_FALLBACK = 0,	/* wanted node down or full: let the backend
				 * choose another (where() tells which) */
	GFSP_PLACE_STRICT = 1	/* wanted node down or full: fail */
};

struct gfsp_place {
	const char *host;	/* wanted storage node; NULL: the backend's
				 * own choice (Gfarm: the client's node) */
	enum gfsp_place_policy policy;
};

struct gfsp_store_ops {
	const char *name;		/* "posix", "gfarm" */
	/* 1: a new file lands on a storage node of the backend's, which
	 * create's place names (Gfarm); 0: there are none (POSIX) */
	int places;

	int (*open)(const char *path, int flags, uint32_t mode,
		    struct gfsp_file **out, struct gfsp_error *err);
	/* a new file, GFSP_O_WRONLY|GFSP_O_CREAT|GFSP_O_EXCL, placed as asked
	 * (place may be NULL) */
	int (*create)(const char *path, uint32_t mode,
		      const struct gfsp_place *place, struct gfsp_file **out,
		      struct gfsp_error *err);
	int (*close)(struct gfsp_file *f, struct gfsp_error *err);
	/* pread/pwrite transfer all of len or fail; *done is what moved
	 * (pread: short only at end of file) */
	int (*pread)(struct gfsp_file *f, void *buf, size_t len, uint64_t off,
		     size_t *done, struct gfsp_error *err);
	int (*pwrite)(struct gfsp_file *f, const void *buf, size_t len,
		      uint64_t off, struct gfsp_error *err);
	/* Gfarm: a handle that writes sees the storage node's copy (its
	 * size, atime and mtime, which after utimens differ from stat's); a
	 * read-only handle sees what stat sees */
	int (*fstat)(struct gfsp_file *f, struct gfsp_stat *st,
		     struct gfsp_error *err);
	int (*ftruncate)(struct gfsp_file *f, uint64_t size,
			 struct gfsp_error *err);
	/* give the open file permission bits (mode & 07777) and times that
	 * hold once it is closed: set on the handle, not by a path someone
	 * could have swapped (POSIX: fchmod and futimens now; Gfarm, which
	 * has neither and sets the times of a written file at close: by
	 * the handle's path, right after its close).  Nothing may be
	 * written after it */
	int (*fsetattr)(struct gfsp_file *f, uint32_t mode, int64_t atime,
			uint64_t atime_ns, int64_t mtime, uint64_t mtime_ns,
			struct gfsp_error *err);
	int (*fsync)(struct gfsp_file *f, struct gfsp_error *err);
	/* make what this handle wrote visible to other opens of the file
	 * (Gfarm's client buffers writes); NULL: nothing is held back */
	int (*flush)(struct gfsp_file *f, struct gfsp_error *err);
	/* a hint: [off, off + len) will be read soon (POSIX starts reading
	 * it into the page cache); NULL: the backend takes no hints */
	void (*willneed)(struct gfsp_file *f, uint64_t off, uint64_t len);
	/* the kernel's descriptor of the open file, for zero-copy
	 * transfers (splice); NULL: the backend has none (Gfarm: the data
	 * are behind its protocol) */
	int (*fd)(struct gfsp_file *f);

	int (*stat)(const char *path, struct gfsp_stat *st,
		    struct gfsp_error *err);
	/* stat of a final symbolic link itself, not of what it points to:
	 * S_IFLNK in mode; size the target's length on POSIX, 0 on Gfarm */
	int (*lstat)(const char *path, struct gfsp_stat *st,
		     struct gfsp_error *err);
	/* the target of the symbolic link path, as stored (not resolved).
	 * OUT *target malloc'd and NUL-terminated, of any length */
	int (*readlink)(const char *path, char **target,
			struct gfsp_error *err);
	/* a new symbolic link path holding target, stored as given (neither
	 * checked nor resolved: it need not exist, and a relative one is
	 * relative to path's directory when followed); GFSP_EEXIST if path
	 * exists.  Gfarm takes targets of up to 1024 bytes (GFSP_EINVAL) */
	int (*symlink)(const char *target, const char *path,
		       struct gfsp_error *err);
	/* a new name `to` for the file `from` (a hard link: one file, nlink
	 * one more); GFSP_EEXIST if `to` exists */
	int (*link)(const char *from, const char *to, struct gfsp_error *err);
	/* set the access and modification times (nanoseconds < 10^9, which
	 * the gfsp_utimens wrapper checks), following a final symbolic
	 * link.  No operation sets a symbolic link's own times: a copy of
	 * a tree does not preserve them */
	int (*utimens)(const char *path, int64_t atime, uint64_t atime_ns,
		       int64_t mtime, uint64_t mtime_ns,
		       struct gfsp_error *err);
	/* set the permission bits, mode & 07777 (the type bits are
	 * ignored), following a final symbolic link */
	int (*chmod)(const char *path, uint32_t mode, struct gfsp_error *err);
	int (*mkdir)(const char *path, uint32_t mode, struct gfsp_error *err);
	int (*rmdir)(const char *path, struct gfsp_error *err);
	/* remove path and, a directory, everything below it; no symbolic
	 * link is followed (a link is removed itself); best effort: keeps
	 * going, returns the first error (the gfsp_remove_tree wrapper) */
	int (*remove_tree)(const char *path, struct gfsp_error *err);
	/* mkdir -p (the gfsp_mkdirs wrapper) */
	int (*mkdirs)(const char *path, uint32_t mode, struct gfsp_error *err);
	int (*unlink)(const char *path, struct gfsp_error *err);
	/* rename fails with GFSP_EEXIST if `to` exists (never replaces) */
	int (*rename)(const char *from, const char *to, struct gfsp_error *err);
	/* rename(2)'s meaning: what is at `to` (not a directory) is replaced,
	 * in one step.  Only gfsp_install calls it (GFSP_PUT_REPLACE) */
	int (*replace)(const char *from, const char *to,
		       struct gfsp_error *err);
	/* list names in a directory (no "." or "..") in any order (the
	 * gfsp_readdir wrapper sorts them); OUT *names malloc'd array of
	 * malloc'd strings */
	int (*readdir)(const char *path, char ***names, size_t *n,
		       struct gfsp_error *err);
	int (*setxattr)(const char *path, const char *name, const void *val,
			size_t len, struct gfsp_error *err);
	/* *len in: buffer size; out: value size */
	int (*getxattr)(const char *path, const char *name, void *val,
			size_t *len, struct gfsp_error *err);
	/* the storage nodes that hold the file's data (Gfarm: its replicas'
	 * hosts); *n = 0 where files have no node of their own (POSIX).
	 * OUT *hosts: free with gfsp_strv_free */
	int (*where)(const char *path, char ***hosts, size_t *n,
		     struct gfsp_error *err);
	/* drop the file's data from this node's page cache, so that the next
	 * read comes from the storage (written data is made durable first);
	 * GFSP_ENOTSUP where the client cannot reach the cache (Gfarm: it
	 * is the gfsd's) */
	int (*evict)(const char *path, struct gfsp_error *err);
};

extern const struct gfsp_store_ops gfsp_store_posix;

/* The backend for a path.  Fails with GFSP_ENOTSUP naming the scheme when
 * the backend is not compiled in. */
int gfsp_store_for(const char *path, const struct gfsp_store_ops **ops,
		  struct gfsp_error *err);
/* The one backend of both paths of a two-path operation (verb, for the
 * message: "cannot VERB 'from' to 'to': different storage backends") */
int gfsp_store_pair(const char *verb, const char *from, const char *to,
		   const struct gfsp_store_ops **ops, struct gfsp_error *err);

/* Convenience wrappers that pick the backend from the path. */
int gfsp_open(const char *path, int flags, uint32_t mode,
	     struct gfsp_file **out, struct gfsp_error *err);
/*
 * The one way to open a file a listing or a lookup saw, in a tree another
 * user may change: path opened (flags as gfsp_open: never blocking, a
 * regular file), then checked on the handle to be the file `listed`
 * describes: the same inode (and generation), and with same_version the
 * same version of it (gfsp_same_identity).  Anything else at the name
 * meanwhile is GFSP_ESTALE, naming path:
 *   "'in/big' changed since it was listed: another file has its name"
 * From then on the handle is the file; its name is not opened again.
 */
int gfsp_open_listed(const char *path, int flags, const struct gfsp_stat *listed,
		    int same_version, struct gfsp_file **out,
		    struct gfsp_error *err);
int gfsp_create(const char *path, uint32_t mode, const struct gfsp_place *place,
	       struct gfsp_file **out, struct gfsp_error *err);
int gfsp_close(struct gfsp_file *f, struct gfsp_error *err);
int gfsp_pread(struct gfsp_file *f, void *buf, size_t len, uint64_t off,
	      size_t *done, struct gfsp_error *err);
int gfsp_pwrite(struct gfsp_file *f, const void *buf, size_t len, uint64_t off,
	       struct gfsp_error *err);
/*
 * The bytes of a sparse source: each aligned run of GFSP_HOLE_MIN zero
 * bytes is left a hole instead of written.  fresh: nothing was ever
 * written there (a new file: the run is skipped); else the hole is
 * punched (POSIX; where that fails, or on a store without a descriptor,
 * the zeros are written).  The caller sets the file's size at its end
 * (gfsp_ftruncate): a hole at the end does not make it.  *holes (may be
 * NULL) grows by the bytes left holes.
 */
#define GFSP_HOLE_MIN	((size_t)64 << 10)
int gfsp_pwrite_sparse(struct gfsp_file *f, const void *buf, size_t len,
		      uint64_t off, int fresh, uint64_t *holes,
		      struct gfsp_error *err);
int gfsp_fstat(struct gfsp_file *f, struct gfsp_stat *st, struct gfsp_error *err);
int gfsp_ftruncate(struct gfsp_file *f, uint64_t size, struct gfsp_error *err);
int gfsp_fsetattr(struct gfsp_file *f, uint32_t mode, int64_t atime,
		 uint64_t atime_ns, int64_t mtime, uint64_t mtime_ns,
		 struct gfsp_error *err);
int gfsp_fsync(struct gfsp_file *f, struct gfsp_error *err);
int gfsp_flush(struct gfsp_file *f, struct gfsp_error *err);
void gfsp_willneed(struct gfsp_file *f, uint64_t off, uint64_t len);
/* the file's kernel descriptor (owned by it: never close it), or -1 */
int gfsp_file_fd(struct gfsp_file *f);
/*
 * The descriptor of src to map (gfsp_rmap_open) for a copy to dst, or -1:
 * only when src has one and dst's backend writes by system calls, which a
 * mapped page that vanishes fails with EFAULT.  A backend that copies in
 * user space (Gfarm's client buffers writes) would fault while holding
 * its locks.  Runs shorter than GFSP_MAP_MIN are cheaper read.
 */
int gfsp_mappable(struct gfsp_file *src, const char *dst);
#define GFSP_MAP_MIN	((uint64_t)1 << 20)
int gfsp_stat(const char *path, struct gfsp_stat *st, struct gfsp_error *err);
int gfsp_lstat(const char *path, struct gfsp_stat *st, struct gfsp_error *err);
int gfsp_readlink(const char *path, char **target, struct gfsp_error *err);
int gfsp_symlink(const char *target, const char *path, struct gfsp_error *err);
int gfsp_link(const char *from, const char *to, struct gfsp_error *err);
int gfsp_utimens(const char *path, int64_t atime, uint64_t atime_ns,
		int64_t mtime, uint64_t mtime_ns, struct gfsp_error *err);
int gfsp_chmod(const char *path, uint32_t mode, struct gfsp_error *err);
int gfsp_mkdir(const char *path, uint32_t mode, struct gfsp_error *err);
int gfsp_rmdir(const char *path, struct gfsp_error *err);
int gfsp_unlink(const char *path, struct gfsp_error *err);
/*
 * Remove path and, a directory, everything below it; no symbolic link is
 * followed (a link is removed itself).  Best effort: keeps going and
 * returns the first error.  POSIX walks descriptors: each directory is
 * opened from its parent's descriptor (O_NOFOLLOW) and checked (fstat) to
 * be the directory it listed, on the same file system, so that a
 * directory swapped for a link or another directory meanwhile (in a
 * directory someone else can write) is left alone, not followed.
 */
int gfsp_remove_tree(const char *path, struct gfsp_error *err);
/*
 * The same for the tree at (dfd, name), reached from dfd only (POSIX):
 * for a caller that holds the parent directory itself.  id (may be NULL):
 * the st_dev and st_ino the caller found at the name; if something else
 * is there now it is left alone, GFSP_ESTALE.  shown: the name for
 * messages.
 */
int gfsp_remove_tree_at(int dfd, const char *name, const uint64_t id[2],
		       const char *shown, struct gfsp_error *err);
/* The same by paths, one operation each: for a backend that resolves its
 * paths on a server of its own (Gfarm) */
int gfsp_remove_tree_paths(const char *path, struct gfsp_error *err);
/*
 * mkdir -p: path and its missing parents, each new one with mode; an
 * existing non-directory on the way is an error.  POSIX, as root in a
 * tree others can write: the way is walked one component at a time from
 * a descriptor, and a missing directory is made in the directory held
 * (mkdirat), following a symbolic link on the way only where it is
 * root's or this user's (GFSP_CONFINE_SAFE's rule; below a confined root,
 * none): no directory is made where another user's link leads.
 */
int gfsp_mkdirs(const char *path, uint32_t mode, struct gfsp_error *err);
/* The same by paths, one operation each (Gfarm; a POSIX path below a
 * confined root, whose operations follow no link) */
int gfsp_mkdirs_paths(const char *path, uint32_t mode, struct gfsp_error *err);
/* The space the file or tree at path holds (allocated bytes where the
 * store tells them, else sizes; links not followed), for messages about
 * what is left over.  0 if none can be read. */
uint64_t gfsp_tree_bytes(const char *path);
int gfsp_readdir(const char *path, char ***names, size_t *n,
		struct gfsp_error *err);
int gfsp_setxattr(const char *path, const char *name, const void *val,
		 size_t len, struct gfsp_error *err);
int gfsp_getxattr(const char *path, const char *name, void *val, size_t *len,
		 struct gfsp_error *err);
int gfsp_where(const char *path, char ***hosts, size_t *n,
	      struct gfsp_error *err);
int gfsp_evict(const char *path, struct gfsp_error *err);
void gfsp_strv_free(char **v, size_t n);
const char *gfsp_file_path(const struct gfsp_file *f);

/*
 * Confine POSIX paths below the directory root (as given: root itself is
 * resolved as usual, once, now).  From then on every operation on a path
 * below it resolves the rest one component at a time from root's
 * descriptor and follows no symbolic link on the way or at the end, so a
 * link someone planted in a destination (DEST/sub -> /root) is an error
 * naming it rather than a way out; ".." below root is refused.  stat()
 * of such a path does not follow a final link either.  Nested calls with
 * the same root count; gfsp_unconfine undoes one.  URLs: nothing (Gfarm
 * resolves its paths on its metadata server).
 */
int gfsp_confine(const char *root, struct gfsp_error *err);
/*
 * The same with flags.  GFSP_CONFINE_OWN: root is a directory this run
 * made (a temporary directory, in a directory someone else may write):
 * its last component is not followed either, and it must belong to this
 * user, or it is refused.  A root below a confined root is opened through
 * that one (one component at a time, no link followed), so nested roots
 * are one chain of descriptors from the outermost.
 */
#define GFSP_CONFINE_OWN	0x1
/*
 * GFSP_CONFINE_NAMES: only the names directly in root ("ROOT/name") are
 * reached from its descriptor; deeper paths resolve as if it were not
 * confined (or below a root of their own).  For a destination's parent,
 * held for a run: the temporary, the destination and the old one renamed
 * and made there, without confining the user's other files beside them.
 */
#define GFSP_CONFINE_NAMES	0x2
/*
 * GFSP_CONFINE_SAFE: root (when no confined root holds it) is opened one
 * component at a time, following a symbolic link on the way only when it
 * is root's or this user's: one another user planted, anywhere on the
 * path, is refused naming root.  For a destination written as root in a
 * tree others can write.
 */
#define GFSP_CONFINE_SAFE	0x4
int gfsp_confine_dir(const char *root, int flags, struct gfsp_error *err);
void gfsp_unconfine(const char *root);
/*
 * Hold dir, a private directory of this user's (a cache tier, the movers'
 * registry): confined (GFSP_CONFINE_SAFE: opened following no other
 * user's link on the way), then checked on that descriptor to belong to
 * this user and be closed to others (gfsp_private_fd), so that what is
 * done in it from then on happens in the directory checked.  The caller
 * lets go with gfsp_unconfine(dir).
 */
int gfsp_hold_private(const char *dir, struct gfsp_error *err);

/*
 * The directory confined is the one held, whatever root's name leads to
 * later: "ROOT/." is that directory itself (ROOT alone is looked up by
 * name again, as any path outside).  gfsp_confined_same: 0 if root's name,
 * looked up now without following a final link (follow: following one
 * of this user's or root's, never another user's), is still that
 * directory; GFSP_ESTALE naming root if it is a symbolic
 * link now (follow 0) or another directory took the name (st_dev and
 * st_ino differ).  For a command that must not act on what someone
 * swapped in for DEST meanwhile.
 *   OUT id   (may be NULL) st_dev and st_ino of the directory held, to
 *            tell processes that confined the same name apart; 0, 0 for
 *            URLs, which are not confined (and always 0)
 */
int gfsp_confined_same(const char *root, int follow, uint64_t id[2],
		      struct gfsp_error *err);
/* The directory confined as root: a new O_PATH descriptor of it (the
 * caller closes it), for the *at() calls of a layer that opens its own
 * files there; -1 when root is not confined (a URL, or no gfsp_confine). */
int gfsp_confined_fd(const char *root);

/* The identity key of a file as st describes it now: a changed file is
 * another file (its size, mtime and ctime to the nanosecond, inode, Gfarm
 * generation, and its path). */
uint64_t gfsp_file_key(const char *path, const struct gfsp_stat *st);

/*
 * The permission bits (of 07777) a copy of the file src may be given when
 * the copy belongs to uid:gid.  A set-id bit means "run as this owner"
 * (this group): it is kept only where the copy has that owner (that
 * group), as cp, rsync and tar do as non-root.  Given to another owner it
 * would hand that owner's rights (root's, when root copies) to whoever
 * runs the copy.  A directory keeps its bits (set-group-ID there only
 * passes the group on to new files).  The one rule of every copy: stage-in
 * and stage-out, gfsplit-merge -p and gfsplit-mount.
 */
uint32_t gfsp_copy_mode(const struct gfsp_stat *src, uint32_t uid,
		       uint32_t gid);

/* Do a and b describe one version of a file (the fields of its key)? */
int gfsp_same_identity(const struct gfsp_stat *a, const struct gfsp_stat *b);

/*
 * Whole-file helpers over the wrappers above: the file in one malloc'd
 * buffer (a byte longer than *len, for a terminator), refused past
 * GFSP_WHOLE_MAX.  gfsp_read_meta reads a metadata file another user may
 * plant (GFSP_O_NOFOLLOW).
 */
#define GFSP_WHOLE_MAX	((size_t)1 << 30)
int gfsp_read_whole(const char *path, unsigned char **buf, size_t *len,
		   struct gfsp_error *err);
int gfsp_read_meta(const char *path, unsigned char **buf, size_t *len,
		  struct gfsp_error *err);
int gfsp_read_whole_flags(const char *path, int flags, unsigned char **buf,
			 size_t *len, struct gfsp_error *err);
/* The same, refused past max bytes, and OUT *st: the file read, as its
 * handle saw it (what the bytes are the bytes of) */
int gfsp_read_whole_stat(const char *path, int flags, size_t max,
			unsigned char **buf, size_t *len, struct gfsp_stat *st,
			struct gfsp_error *err);

/*
 * Putting a file in place (install.c, the one owner of it: no other file
 * renames a file into place or writes one under a temporary name).
 *
 * gfsp_rename never replaces: `to` existing is GFSP_EEXIST.
 *
 * gfsp_install gives the finished temporary file tmp the name dst:
 *   no flags          as gfsp_rename: an existing dst is GFSP_EEXIST
 *   GFSP_PUT_REPLACE  what is at dst is replaced in one step (rename(2))
 *   GFSP_PUT_ASIDE    what is at dst is first moved to aside (NULL:
 *                     "TMP.old"), tmp renamed in, and the old one (a tree
 *                     too) removed only then; if tmp cannot go in, the
 *                     old one is put back.  A reader never finds dst
 *                     missing for longer than between the two renames
 *   GFSP_PUT_NODIR    a directory at dst is refused (GFSP_EEXIST), not
 *                     replaced
 *
 * gfsp_write_whole writes buf to a new file (mode) under tmp, or NULL for
 * a fresh hidden sibling ".BASE.<random>"; a tmp the caller names is its
 * own, and a leftover there is removed first.  With GFSP_PUT_SYNC the data
 * are on the disk before the file gets its name; then it is installed with
 * the other flags.  On failure the temporary is removed and path is as it
 * was.
 *
 * gfsp_write_whole_at is the same in the directory dfd holds (POSIX: a
 * private directory of this user's, `dir` its name for messages, NULL for
 * none): fill() writes the file (returns 0 or a GFSP_* code), which is a
 * new private file under tmp (NULL: ".NAME.<random>") and replaces name
 * in one step.
 */
#define GFSP_PUT_REPLACE	0x1
#define GFSP_PUT_ASIDE		0x2
#define GFSP_PUT_NODIR		0x4
#define GFSP_PUT_SYNC		0x8
int gfsp_rename(const char *from, const char *to, struct gfsp_error *err);
int gfsp_install(const char *tmp, const char *dst, const char *aside,
		int flags, struct gfsp_error *err);
int gfsp_write_whole(const char *path, const char *tmp, const void *buf,
		    size_t len, uint32_t mode, int flags,
		    struct gfsp_error *err);
int gfsp_write_whole_at(int dfd, const char *dir, const char *name,
		       const char *tmp, int (*fill)(FILE *, void *),
		       void *arg, int flags, struct gfsp_error *err);

/* Every backend's struct gfsp_file starts with this header. */
struct gfsp_file_hdr {
	const struct gfsp_store_ops *ops;
	char *path;
};

/*
 * Fault injection for tests, read once from GFSPLIT_FAULT:
 *   "pwrite:RANK:AFTER"  the pwrite on rank RANK that would take its total
 *                        written bytes past AFTER fails with EIO
 *   "crash:RANK:AFTER"   same point, but the rank dies with SIGKILL
 *   "hang:RANK:AFTER"    same point, but the write never returns (a
 *                        file system that hangs)
 *   "stop:RANK:AFTER"    same point, but the rank stops (SIGSTOP)
 * Checked by the wrappers, so it applies to every backend.
 */
void gfsp_fault_init(int rank);

#endif /* GFSP_STORE_H */
