/*
 * store.h - the storage interface: one table of operations per backend,
 * chosen once from the path scheme.  Included by libcore/ and cmd/ only.
 *
 *   "/data/x", "rel/x"           -> posix  (store_posix.c)
 *   "gfarm:///x", "gfarm://h:p/x" -> gfarm  (store_gfarm.c, when built)
 *
 * Every slot of a table is filled; an operation a backend cannot do returns
 * GFS_ENOTSUP.  Backends translate their native errors (errno, gfarm_error_t)
 * into a gfs_errcode at this boundary and keep the native cause text in the
 * message.  Paths given to the operations are full paths as the user wrote
 * them (scheme included); a backend strips its own prefix.
 */
#ifndef GFS_STORE_H
#define GFS_STORE_H

#include <stdint.h>
#include <sys/types.h>
#include "gfsplit.h"

struct gfs_file;			/* an open file; owned by its backend */

struct gfs_stat {
	uint64_t size;
	uint32_t mode;			/* st_mode bits: type and permissions */
	int64_t mtime;			/* seconds */
	uint64_t blocks_bytes;		/* bytes actually allocated (sparse) */
};

/* open flags, backend independent */
#define GFS_O_RDONLY	0x0
#define GFS_O_WRONLY	0x1
#define GFS_O_RDWR	0x2
#define GFS_O_CREAT	0x10
#define GFS_O_EXCL	0x20
#define GFS_O_TRUNC	0x40

/*
 * Where a new file's data should live, for backends that keep each file
 * whole on one storage node (Gfarm).  Backends without such nodes ignore it.
 */
enum gfs_place_policy {
	GFS_PLACE_FALLBACK = 0,	/* wanted node down or full: let the backend
				 * choose another (where() tells which) */
	GFS_PLACE_STRICT = 1	/* wanted node down or full: fail */
};

struct gfs_place {
	const char *host;	/* wanted storage node; NULL: the backend's
				 * own choice (Gfarm: the client's node) */
	enum gfs_place_policy policy;
};

struct gfs_store_ops {
	const char *name;		/* "posix", "gfarm" */

	int (*open)(const char *path, int flags, uint32_t mode,
		    struct gfs_file **out, struct gfs_error *err);
	/* a new file, GFS_O_WRONLY|GFS_O_CREAT|GFS_O_EXCL, placed as asked
	 * (place may be NULL) */
	int (*create)(const char *path, uint32_t mode,
		      const struct gfs_place *place, struct gfs_file **out,
		      struct gfs_error *err);
	int (*close)(struct gfs_file *f, struct gfs_error *err);
	/* pread/pwrite transfer all of len or fail; *done is what moved
	 * (pread: short only at end of file) */
	int (*pread)(struct gfs_file *f, void *buf, size_t len, uint64_t off,
		     size_t *done, struct gfs_error *err);
	int (*pwrite)(struct gfs_file *f, const void *buf, size_t len,
		      uint64_t off, struct gfs_error *err);
	int (*fstat)(struct gfs_file *f, struct gfs_stat *st,
		     struct gfs_error *err);
	int (*ftruncate)(struct gfs_file *f, uint64_t size,
			 struct gfs_error *err);
	int (*fsync)(struct gfs_file *f, struct gfs_error *err);

	int (*stat)(const char *path, struct gfs_stat *st,
		    struct gfs_error *err);
	int (*mkdir)(const char *path, uint32_t mode, struct gfs_error *err);
	int (*rmdir)(const char *path, struct gfs_error *err);
	int (*unlink)(const char *path, struct gfs_error *err);
	/* rename fails with GFS_EEXIST if `to` exists (never replaces) */
	int (*rename)(const char *from, const char *to, struct gfs_error *err);
	/* list names in a directory (no "." or ".."); OUT *names malloc'd
	 * array of malloc'd strings */
	int (*readdir)(const char *path, char ***names, size_t *n,
		       struct gfs_error *err);
	int (*setxattr)(const char *path, const char *name, const void *val,
			size_t len, struct gfs_error *err);
	/* *len in: buffer size; out: value size */
	int (*getxattr)(const char *path, const char *name, void *val,
			size_t *len, struct gfs_error *err);
	/* the storage nodes that hold the file's data (Gfarm: its replicas'
	 * hosts); *n = 0 where files have no node of their own (POSIX).
	 * OUT *hosts: free with gfs_strv_free */
	int (*where)(const char *path, char ***hosts, size_t *n,
		     struct gfs_error *err);
};

extern const struct gfs_store_ops gfs_store_posix;

/* The backend for a path.  Fails with GFS_ENOTSUP naming the scheme when
 * the backend is not compiled in. */
int gfs_store_for(const char *path, const struct gfs_store_ops **ops,
		  struct gfs_error *err);

/* Convenience wrappers that pick the backend from the path. */
int gfs_open(const char *path, int flags, uint32_t mode,
	     struct gfs_file **out, struct gfs_error *err);
int gfs_create(const char *path, uint32_t mode, const struct gfs_place *place,
	       struct gfs_file **out, struct gfs_error *err);
int gfs_close(struct gfs_file *f, struct gfs_error *err);
int gfs_pread(struct gfs_file *f, void *buf, size_t len, uint64_t off,
	      size_t *done, struct gfs_error *err);
int gfs_pwrite(struct gfs_file *f, const void *buf, size_t len, uint64_t off,
	       struct gfs_error *err);
int gfs_fstat(struct gfs_file *f, struct gfs_stat *st, struct gfs_error *err);
int gfs_ftruncate(struct gfs_file *f, uint64_t size, struct gfs_error *err);
int gfs_fsync(struct gfs_file *f, struct gfs_error *err);
int gfs_stat(const char *path, struct gfs_stat *st, struct gfs_error *err);
int gfs_mkdir(const char *path, uint32_t mode, struct gfs_error *err);
int gfs_rmdir(const char *path, struct gfs_error *err);
int gfs_unlink(const char *path, struct gfs_error *err);
int gfs_rename(const char *from, const char *to, struct gfs_error *err);
int gfs_readdir(const char *path, char ***names, size_t *n,
		struct gfs_error *err);
int gfs_setxattr(const char *path, const char *name, const void *val,
		 size_t len, struct gfs_error *err);
int gfs_getxattr(const char *path, const char *name, void *val, size_t *len,
		 struct gfs_error *err);
int gfs_where(const char *path, char ***hosts, size_t *n,
	      struct gfs_error *err);
void gfs_strv_free(char **v, size_t n);
const char *gfs_file_path(const struct gfs_file *f);

/* Every backend's struct gfs_file starts with this header. */
struct gfs_file_hdr {
	const struct gfs_store_ops *ops;
	char *path;
};

/*
 * Fault injection for tests, read once from GFSPLIT_FAULT:
 *   "pwrite:RANK:AFTER"  the pwrite on rank RANK that would take its total
 *                        written bytes past AFTER fails with EIO
 *   "crash:RANK:AFTER"   same point, but the rank dies with SIGKILL
 * Checked by the wrappers, so it applies to every backend.
 */
void gfs_fault_init(int rank);

#endif /* GFS_STORE_H */
