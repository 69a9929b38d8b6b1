/*
 * mountfs.h - what gfsplit-mount's two files share: the file system's
 * state (main.c fills it, fs.c answers the kernel from it).
 */
#ifndef GFSP_MOUNTFS_H
#define GFSP_MOUNTFS_H

#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>

#include "mount.h"

struct gfsp_mfs {
	struct gfsp_mtree tree;
	int readonly;		/* unless -o rw */
	/* the parts' checksums: checked as each part is read through
	 * (the default), before its first byte is used (-o verify), or
	 * not at all (-o noverify) */
	enum { GFSP_MVERIFY_READ, GFSP_MVERIFY_FIRST, GFSP_MVERIFY_NONE }
	    verify;
};

extern const struct fuse_lowlevel_ops gfsp_mfs_ops;

#endif /* GFSP_MOUNTFS_H */
