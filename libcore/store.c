/*
 * store.c - choosing a storage backend from the path, the wrappers that
 * dispatch to it, and test fault injection.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "store.h"

#ifdef HAVE_GFARM
extern const struct gfs_store_ops gfs_store_gfarm;
#endif

/* length of a URL scheme ("foo" in "foo://x"), 0 if path has none */
static size_t
scheme_len(const char *path)
{
	size_t i = 0;

	if (!((path[0] >= 'a' && path[0] <= 'z') ||
	      (path[0] >= 'A' && path[0] <= 'Z')))
		return 0;
	for (i = 1; path[i] != '\0'; i++) {
		char c = path[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '+' || c == '-' ||
		      c == '.'))
			break;
	}
	return strncmp(path + i, "://", 3) == 0 ? i : 0;
}

int
gfs_store_for(const char *path, const struct gfs_store_ops **ops,
	      struct gfs_error *err)
{
	size_t n;

	if (path == NULL || path[0] == '\0')
		return gfs_error_set(err, GFS_EINVAL, "empty path");
	if (strncmp(path, "gfarm:", 6) == 0) {
#ifdef HAVE_GFARM
		*ops = &gfs_store_gfarm;
		return 0;
#else
		return gfs_error_set(err, GFS_ENOTSUP,
				     "'%s': this gfsplit was built without "
				     "Gfarm support (configure --with-gfarm)",
				     path);
#endif
	}
	n = scheme_len(path);
	if (n > 0)
		return gfs_error_set(err, GFS_EINVAL,
				     "'%s': unknown scheme '%.*s'", path,
				     (int)n, path);
	*ops = &gfs_store_posix;
	return 0;
}

/* ------------------------------------------------------- fault injection */

enum { FAULT_NONE, FAULT_EIO, FAULT_CRASH };

static int fault_kind = FAULT_NONE;
static uint64_t fault_after;
static uint64_t fault_written;		/* this rank's bytes, all files */
static int fault_ready;

/* GFSPLIT_FAULT="pwrite:RANK:AFTER" or "crash:RANK:AFTER"; AFTER may
 * carry a size suffix.  A malformed value injects nothing. */
void
gfs_fault_init(int rank)
{
	const char *env, *s;
	char *end;
	int kind;
	long r;
	uint64_t after;

	if (fault_ready)
		return;
	fault_ready = 1;
	env = getenv("GFSPLIT_FAULT");
	if (env == NULL)
		return;
	if (strncmp(env, "pwrite:", 7) == 0) {
		kind = FAULT_EIO;
		s = env + 7;
	} else if (strncmp(env, "crash:", 6) == 0) {
		kind = FAULT_CRASH;
		s = env + 6;
	} else {
		return;
	}
	r = strtol(s, &end, 10);
	if (end == s || *end != ':' || r != rank)
		return;
	if (gfs_parse_size(end + 1, &after, NULL) != 0)
		return;
	fault_after = after;
	fault_kind = kind;
}

/* Nonzero if this pwrite of len bytes is the injected failure. */
static int
fault_check(const struct gfs_file *f, size_t len, struct gfs_error *err)
{
	uint64_t before;

	if (fault_kind == FAULT_NONE)
		return 0;
	/* atomic: a pipeline may write from its helper thread */
	before = __atomic_fetch_add(&fault_written, len, __ATOMIC_RELAXED);
	if (before + len <= fault_after)
		return 0;
	if (fault_kind == FAULT_CRASH)
		raise(SIGKILL);
	return gfs_error_set(err, GFS_EIO,
			     "injected fault: cannot write '%s': "
			     "Input/output error", gfs_file_path(f));
}

/* ---------------------------------------------------------------- wrappers */

static const struct gfs_store_ops *
file_ops(const struct gfs_file *f)
{
	return ((const struct gfs_file_hdr *)f)->ops;
}

const char *
gfs_file_path(const struct gfs_file *f)
{
	return f != NULL ? ((const struct gfs_file_hdr *)f)->path : "(none)";
}

int
gfs_open(const char *path, int flags, uint32_t mode, struct gfs_file **out,
	 struct gfs_error *err)
{
	const struct gfs_store_ops *ops;
	int rc;

	*out = NULL;
	rc = gfs_store_for(path, &ops, err);
	if (rc != 0)
		return rc;
	return ops->open(path, flags, mode, out, err);
}

int
gfs_close(struct gfs_file *f, struct gfs_error *err)
{
	if (f == NULL)
		return 0;
	return file_ops(f)->close(f, err);
}

int
gfs_pread(struct gfs_file *f, void *buf, size_t len, uint64_t off,
	  size_t *done, struct gfs_error *err)
{
	return file_ops(f)->pread(f, buf, len, off, done, err);
}

int
gfs_pwrite(struct gfs_file *f, const void *buf, size_t len, uint64_t off,
	   struct gfs_error *err)
{
	int rc = fault_check(f, len, err);

	if (rc != 0)
		return rc;
	return file_ops(f)->pwrite(f, buf, len, off, err);
}

int
gfs_fstat(struct gfs_file *f, struct gfs_stat *st, struct gfs_error *err)
{
	return file_ops(f)->fstat(f, st, err);
}

int
gfs_ftruncate(struct gfs_file *f, uint64_t size, struct gfs_error *err)
{
	return file_ops(f)->ftruncate(f, size, err);
}

int
gfs_fsync(struct gfs_file *f, struct gfs_error *err)
{
	return file_ops(f)->fsync(f, err);
}

/* path operations: look the backend up, then call its slot */
#define PATH_OP(path, call) do {					\
	const struct gfs_store_ops *ops;				\
	int rc_ = gfs_store_for((path), &ops, err);			\
									\
	if (rc_ != 0)							\
		return rc_;						\
	return ops->call;						\
} while (0)

int
gfs_stat(const char *path, struct gfs_stat *st, struct gfs_error *err)
{
	PATH_OP(path, stat(path, st, err));
}

int
gfs_mkdir(const char *path, uint32_t mode, struct gfs_error *err)
{
	PATH_OP(path, mkdir(path, mode, err));
}

int
gfs_rmdir(const char *path, struct gfs_error *err)
{
	PATH_OP(path, rmdir(path, err));
}

int
gfs_unlink(const char *path, struct gfs_error *err)
{
	PATH_OP(path, unlink(path, err));
}

int
gfs_rename(const char *from, const char *to, struct gfs_error *err)
{
	const struct gfs_store_ops *ops, *tops;
	int rc;

	rc = gfs_store_for(from, &ops, err);
	if (rc == 0)
		rc = gfs_store_for(to, &tops, err);
	if (rc != 0)
		return rc;
	if (ops != tops)
		return gfs_error_set(err, GFS_ENOTSUP,
				     "cannot rename '%s' to '%s': different "
				     "storage backends", from, to);
	return ops->rename(from, to, err);
}

int
gfs_readdir(const char *path, char ***names, size_t *n, struct gfs_error *err)
{
	*names = NULL;
	*n = 0;
	PATH_OP(path, readdir(path, names, n, err));
}

int
gfs_setxattr(const char *path, const char *name, const void *val, size_t len,
	     struct gfs_error *err)
{
	PATH_OP(path, setxattr(path, name, val, len, err));
}

int
gfs_getxattr(const char *path, const char *name, void *val, size_t *len,
	     struct gfs_error *err)
{
	PATH_OP(path, getxattr(path, name, val, len, err));
}

int
gfs_create(const char *path, uint32_t mode, const struct gfs_place *place,
	   struct gfs_file **out, struct gfs_error *err)
{
	*out = NULL;
	PATH_OP(path, create(path, mode, place, out, err));
}

int
gfs_where(const char *path, char ***hosts, size_t *n, struct gfs_error *err)
{
	*hosts = NULL;
	*n = 0;
	PATH_OP(path, where(path, hosts, n, err));
}

void
gfs_strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n && v != NULL; i++)
		free(v[i]);
	free(v);
}
