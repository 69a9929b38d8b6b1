/*
 * mount.h - the mount wing (libcore/mount/): a source tree as gfsplit-mount
 * shows it, each split file one regular file, everything else as it is.
 * No FUSE in here: the command (cmd/gfsplit-mount/) answers the kernel
 * with what these functions say.  Uses base, store and split.  Included by
 * libcore/mount/, cmd/ and tests/.
 *
 *   gfsp_mentry_stat   what one source path is shown as
 *   gfsp_mtree_*       the tree of nodes the kernel holds references to
 *                      (its inodes), each the source object it was
 *                      looked up as, found again by (parent, name)
 *   gfsp_mxattr        the extended attributes of a split file
 *   gfsp_msplit_*      the bits a split file is shown with, and who may
 *                      read it (access.c)
 *
 * Reads go to the split wing's held layouts (gfsp_layout_open_held).
 */
#ifndef GFSP_MOUNT_H
#define GFSP_MOUNT_H

#include <pthread.h>
#include <stdint.h>
#include "gfsplit.h"
#include "store.h"

enum gfsp_mkind {
	GFSP_MPLAIN = 0,	/* anything that is not a split file: as it is */
	GFSP_MSPLIT,		/* a split file, shown as one regular file */
	GFSP_MBADSPLIT		/* a directory with a marker that cannot be
				 * read: shown as an empty file, opens fail */
};

struct gfsp_mentry {
	enum gfsp_mkind kind;
	/* as shown.  A split file: S_IFREG with the read and write bits
	 * its directory and every file of it allow (gfsp_msplit_mode: no
	 * execute or set-id bit), the directory's owner and group, the
	 * logical size, mtime the commit's, the other times the
	 * directory's, one link, the directory's inode number */
	struct gfsp_stat st;
	uint64_t version;	/* GFSP_MSPLIT: gfsp_split_version; else 0 */
};

/*
 * What `path` is shown as (a final symbolic link is not followed).  A
 * directory holding a split-file marker is a split file; a marker that
 * cannot be read makes it GFSP_MBADSPLIT, with the cause in *why (may be
 * NULL) for the open that will fail.
 */
int gfsp_mentry_stat(const char *path, struct gfsp_mentry *e,
		    struct gfsp_error *why, struct gfsp_error *err);

/* Does b show the same source object as a (the same inode, and for a
 * split file the same commit)? */
int gfsp_mentry_same(const struct gfsp_mentry *a, const struct gfsp_mentry *b);

/* ------------------------------------------------------------ the tree */

struct gfsp_mnode {
	struct gfsp_mnode *parent;	/* NULL: the root */
	char *name;
	struct gfsp_mentry e;		/* as it was looked up */
	uint64_t gen;			/* unique with the node's address */
	uint64_t nlookup;		/* the kernel's references */
	uint64_t children;		/* nodes whose parent this is */
	int linked;			/* found by (parent, name) */
	struct gfsp_mnode *next;	/* hash chain */
};

struct gfsp_mtree {
	char *root;			/* the source: a path or a URL */
	int confined;			/* POSIX: gfsp_confine(root) held */
	struct gfsp_mnode top;		/* the root node: never freed */
	pthread_mutex_t lock;
	struct gfsp_mnode **hash;
	size_t nbuckets, nnodes;
	uint64_t gen;
};

/*
 * A tree over source `root`: a POSIX directory (made absolute, and every
 * path below it resolved without following a symbolic link:
 * gfsp_confine) or a gfarm:// URL of a directory.
 */
int gfsp_mtree_init(struct gfsp_mtree *t, const char *root,
		   struct gfsp_error *err);
void gfsp_mtree_destroy(struct gfsp_mtree *t);

/* The source path of child `name` of n (name NULL: of n itself);
 * malloc'd, NULL when out of memory. */
char *gfsp_mtree_path(struct gfsp_mtree *t, const struct gfsp_mnode *n,
		     const char *name);

/*
 * Look name up in parent: stat it in the source and return its node with
 * one more reference: the node already there when it shows the same
 * object, else a new one (a node whose name now leads elsewhere is
 * unlinked: it lives on for the references the kernel still holds).
 * OUT *e, if non-NULL: what it is shown as now.
 */
int gfsp_mtree_lookup(struct gfsp_mtree *t, struct gfsp_mnode *parent,
		     const char *name, struct gfsp_mnode **out,
		     struct gfsp_mentry *e, struct gfsp_error *err);

/* The kernel dropped n references to node (freed at none, with no child). */
void gfsp_mtree_forget(struct gfsp_mtree *t, struct gfsp_mnode *node,
		      uint64_t n);

/*
 * What node is shown as now; GFSP_ESTALE when its name leads to another
 * object (replaced, committed again, removed) or to none.  OUT *path, if
 * non-NULL: its source path (malloc'd).
 */
int gfsp_mtree_stat(struct gfsp_mtree *t, struct gfsp_mnode *node,
		   struct gfsp_mentry *e, char **path, struct gfsp_error *err);

/* Renamed / removed through the mount: the nodes follow. */
void gfsp_mtree_moved(struct gfsp_mtree *t, struct gfsp_mnode *from,
		     const char *name, struct gfsp_mnode *to,
		     const char *newname);
void gfsp_mtree_removed(struct gfsp_mtree *t, struct gfsp_mnode *parent,
		       const char *name);

/* ------------------------------------------------------------- access */

struct gfsp_layout;

/*
 * With allow_other the kernel lets users in to a split file by the bits
 * shown, and the daemon reads it with its own rights (root's): nothing may
 * be let in through the mount that its files would keep out directly.
 */

/* Who asks: the caller of a request, as the kernel tells it. */
struct gfsp_mcaller {
	uint32_t uid, gid;
	const uint32_t *groups;		/* supplementary groups */
	size_t ngroups;
};

/*
 * The permission bits (of 0666) split file `dir` is shown with, for the
 * owner and group of its directory, whose stat is *d: for each class of
 * the shown file (owner, group, others), a read or write bit is shown only
 * if the directory (a class that may not search it: nothing) and every
 * file of it (the marker, nlocs location files, nparts parts) grant it to
 * every class of that file a user of the shown class may fall in (the
 * bits shown cannot depend on her groups).  A file of the directory's
 * owner and group counts class by class; of its owner but another group,
 * it gives the shown owner its owner bits and the others what its group
 * and others both have; of another owner, it gives the shown owner what
 * its group and others both have and the others what all three of its
 * classes have.  The walk ends at a file that is missing or not a regular
 * file (the open fails on it).  No execute bit, no set-id bit: not the
 * files', not the mode a marker records (-p), which its owner may edit.
 */
uint32_t gfsp_msplit_mode(const char *dir, const struct gfsp_stat *d,
			 uint32_t nparts, uint32_t nlocs);

/*
 * May `who` read split file `dir`, as she could directly: search its
 * directory, read its marker, location files and parts?  l: the layout
 * of dir, open; held (gfsp_layout_open_held), its parts are checked by
 * the handles it reads them through, else not (what such a layout tells,
 * the extended attributes, comes from the marker and location files).
 * NULL checks the directory and the marker only (a split file that
 * cannot be opened).  Root may, as the
 * kernel lets her.  0, or GFSP_EACCES naming the first file that keeps
 * her out.
 */
int gfsp_msplit_access(const char *dir, struct gfsp_layout *l,
		      const struct gfsp_mcaller *who, struct gfsp_error *err);

/* ---------------------------------------------------- extended attributes */

/*
 * The extended attributes of the split file layout l holds (named path in
 * them): with name NULL, the names, each NUL-terminated, one after the
 * other (listxattr; the same for every split file, l may be NULL); else
 * the value of `name`, GFSP_ENOENT if it has none.  OUT *val malloc'd,
 * *len its bytes.
 *
 *   user.gfsplit.parts      number of part files ("4")
 *   user.gfsplit.layout     stat-layout --json, on one line
 *   user.gfsplit.checksums  a line per part: "part.R SIZE 0xHASH"
 *   user.gfsplit.source     the split directory in the source
 */
int gfsp_mxattr(struct gfsp_layout *l, const char *path, const char *name,
	       char **val, size_t *len, struct gfsp_error *err);

#endif /* GFSP_MOUNT_H */
