/*
 * store.c - choosing a storage backend from the path, the wrappers that
 * dispatch to it, and test fault injection.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "store.h"

#ifdef HAVE_GFARM
extern const struct gfsp_store_ops gfsp_store_gfarm;
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
gfsp_store_for(const char *path, const struct gfsp_store_ops **ops,
	      struct gfsp_error *err)
{
	size_t n;

	if (path == NULL || path[0] == '\0')
		return gfsp_error_set(err, GFSP_EINVAL, "empty path");
	if (strncmp(path, "gfarm:", 6) == 0) {
#ifdef HAVE_GFARM
		*ops = &gfsp_store_gfarm;
		return 0;
#else
		return gfsp_error_set(err, GFSP_ENOTSUP,
				     "'%s': this gfsplit was built without "
				     "Gfarm support (configure --with-gfarm)",
				     path);
#endif
	}
	n = scheme_len(path);
	if (n > 0)
		return gfsp_error_set(err, GFSP_EINVAL,
				     "'%s': unknown scheme '%.*s'", path,
				     (int)n, path);
	*ops = &gfsp_store_posix;
	return 0;
}

/* ------------------------------------------------------- fault injection */

enum { FAULT_NONE, FAULT_EIO, FAULT_CRASH, FAULT_HANG, FAULT_STOP,
       FAULT_SLOW, FAULT_HANG_CLOSE };

static int fault_kind = FAULT_NONE;
static uint64_t fault_after;
static uint64_t fault_written;		/* this rank's bytes, all files */
static int fault_ready;

/* GFSPLIT_FAULT="pwrite:RANK:AFTER" or "crash:RANK:AFTER"; AFTER may
 * carry a size suffix.  A malformed value injects nothing.
 * "hangclose:RANK:AFTER": every close once more than AFTER bytes were
 * written never returns (a file server that stops answering as a written
 * file is closed: gfsplit-mount's release). */
void
gfsp_fault_init(int rank)
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
	} else if (strncmp(env, "hang:", 5) == 0) {
		kind = FAULT_HANG;
		s = env + 5;
	} else if (strncmp(env, "stop:", 5) == 0) {
		kind = FAULT_STOP;
		s = env + 5;
	} else if (strncmp(env, "slow:", 5) == 0) {
		kind = FAULT_SLOW;
		s = env + 5;
	} else if (strncmp(env, "hangclose:", 10) == 0) {
		kind = FAULT_HANG_CLOSE;
		s = env + 10;
	} else {
		return;
	}
	r = strtol(s, &end, 10);
	if (end == s || *end != ':' || r != rank)
		return;
	if (gfsp_parse_size(end + 1, &after, NULL) != 0)
		return;
	fault_after = after;
	fault_kind = kind;
}

/* Nonzero if this pwrite of len bytes is the injected failure. */
static int
fault_check(const struct gfsp_file *f, size_t len, struct gfsp_error *err)
{
	uint64_t before;

	if (fault_kind == FAULT_NONE)
		return 0;
	/* atomic: a pipeline may write from its helper thread */
	before = __atomic_fetch_add(&fault_written, len, __ATOMIC_RELAXED);
	if (before + len <= fault_after || fault_kind == FAULT_HANG_CLOSE)
		return 0;
	if (fault_kind == FAULT_CRASH)
		raise(SIGKILL);
	while (fault_kind == FAULT_HANG)	/* a file system that hangs */
		pause();
	if (fault_kind == FAULT_STOP)	/* stopped, as by a debugger */
		raise(SIGSTOP);
	if (fault_kind == FAULT_SLOW) {	/* a slow disk: 0.1 s a write */
		usleep(100000);
		return 0;
	}
	return gfsp_error_set(err, GFSP_EIO,
			     "injected fault: cannot write '%s': "
			     "Input/output error", gfsp_file_path(f));
}

/* ---------------------------------------------------------------- wrappers */

static const struct gfsp_store_ops *
file_ops(const struct gfsp_file *f)
{
	return ((const struct gfsp_file_hdr *)f)->ops;
}

const char *
gfsp_file_path(const struct gfsp_file *f)
{
	return f != NULL ? ((const struct gfsp_file_hdr *)f)->path : "(none)";
}

int
gfsp_open(const char *path, int flags, uint32_t mode, struct gfsp_file **out,
	 struct gfsp_error *err)
{
	const struct gfsp_store_ops *ops;
	int rc;

	*out = NULL;
	rc = gfsp_store_for(path, &ops, err);
	if (rc != 0)
		return rc;
	return ops->open(path, flags, mode, out, err);
}

int
gfsp_close(struct gfsp_file *f, struct gfsp_error *err)
{
	if (f == NULL)
		return 0;
	while (fault_kind == FAULT_HANG_CLOSE &&
	    __atomic_load_n(&fault_written, __ATOMIC_RELAXED) > fault_after)
		pause();
	return file_ops(f)->close(f, err);
}

int
gfsp_pread(struct gfsp_file *f, void *buf, size_t len, uint64_t off,
	  size_t *done, struct gfsp_error *err)
{
	int rc = file_ops(f)->pread(f, buf, len, off, done, err);

	gfsp_watch_beat();
	return rc;
}

int
gfsp_pwrite(struct gfsp_file *f, const void *buf, size_t len, uint64_t off,
	   struct gfsp_error *err)
{
	int rc = fault_check(f, len, err);

	if (rc != 0)
		return rc;
	rc = file_ops(f)->pwrite(f, buf, len, off, err);
	gfsp_watch_beat();
	return rc;
}

static int
all_zero(const unsigned char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

int
gfsp_pwrite_sparse(struct gfsp_file *f, const void *buf, size_t len,
		  uint64_t off, int fresh, uint64_t *holes,
		  struct gfsp_error *err)
{
	const unsigned char *data = buf;
	size_t at = 0, run, n;
	int fd = gfsp_file_fd(f), zero, z, left;

	if (fd < 0)
		return gfsp_pwrite(f, buf, len, off, err);
	while (at < len) {
		/* a run of pieces that are all zero, or all not */
		for (run = at, zero = -1; run < len; run += n) {
			n = GFSP_MIN(GFSP_HOLE_MIN - (size_t)((off + run) %
				     GFSP_HOLE_MIN), len - run);
			z = n == GFSP_HOLE_MIN && all_zero(data + run, n);
			if (zero != -1 && z != zero)
				break;
			zero = z;
		}
		left = zero && (fresh || fallocate(fd, FALLOC_FL_PUNCH_HOLE |
				FALLOC_FL_KEEP_SIZE, (off_t)(off + at),
				(off_t)(run - at)) == 0);
		if (left) {
			if (holes != NULL)
				*holes += run - at;
		} else if (gfsp_pwrite(f, data + at, run - at, off + at,
				       err) != 0) {
			return err->code;
		}
		at = run;
	}
	return 0;
}

int
gfsp_fstat(struct gfsp_file *f, struct gfsp_stat *st, struct gfsp_error *err)
{
	return file_ops(f)->fstat(f, st, err);
}

int
gfsp_ftruncate(struct gfsp_file *f, uint64_t size, struct gfsp_error *err)
{
	return file_ops(f)->ftruncate(f, size, err);
}

int
gfsp_fsetattr(struct gfsp_file *f, uint32_t mode, int64_t atime,
	     uint64_t atime_ns, int64_t mtime, uint64_t mtime_ns,
	     struct gfsp_error *err)
{
	if (atime_ns >= 1000000000u || mtime_ns >= 1000000000u)
		return gfsp_error_set(err, GFSP_EINVAL, "cannot set times of "
				     "'%s': nanoseconds out of range",
				     gfsp_file_path(f));
	return file_ops(f)->fsetattr(f, mode, atime, atime_ns, mtime,
				     mtime_ns, err);
}

int
gfsp_fsync(struct gfsp_file *f, struct gfsp_error *err)
{
	return file_ops(f)->fsync(f, err);
}

int
gfsp_flush(struct gfsp_file *f, struct gfsp_error *err)
{
	return file_ops(f)->flush ? file_ops(f)->flush(f, err) : 0;
}

void
gfsp_willneed(struct gfsp_file *f, uint64_t off, uint64_t len)
{
	if (file_ops(f)->willneed != NULL)
		file_ops(f)->willneed(f, off, len);
}

int
gfsp_file_fd(struct gfsp_file *f)
{
	return file_ops(f)->fd != NULL ? file_ops(f)->fd(f) : -1;
}

int
gfsp_mappable(struct gfsp_file *src, const char *dst)
{
	const struct gfsp_store_ops *ops;

	if (gfsp_store_for(dst, &ops, NULL) != 0 || ops->fd == NULL ||
	    getenv("GFSPLIT_NO_MAP") != NULL)
		return -1;
	return gfsp_file_fd(src);
}

/* path operations: look the backend up, then call its slot */
#define PATH_OP(path, call) do {					\
	const struct gfsp_store_ops *ops;				\
	int rc_ = gfsp_store_for((path), &ops, err);			\
									\
	if (rc_ != 0)							\
		return rc_;						\
	rc_ = ops->call;						\
	gfsp_watch_beat();	/* progress, for --timeout */		\
	return rc_;							\
} while (0)

int
gfsp_stat(const char *path, struct gfsp_stat *st, struct gfsp_error *err)
{
	PATH_OP(path, stat(path, st, err));
}

int
gfsp_lstat(const char *path, struct gfsp_stat *st, struct gfsp_error *err)
{
	PATH_OP(path, lstat(path, st, err));
}

int
gfsp_readlink(const char *path, char **target, struct gfsp_error *err)
{
	*target = NULL;
	PATH_OP(path, readlink(path, target, err));
}

/* the backend is the link's (path's); target is only a string to it */
int
gfsp_symlink(const char *target, const char *path, struct gfsp_error *err)
{
	PATH_OP(path, symlink(target, path, err));
}

/* The one backend of from and to, for an operation on both (verb names
 * it in the message); GFSP_ENOTSUP when they differ. */
int
gfsp_store_pair(const char *verb, const char *from, const char *to,
	   const struct gfsp_store_ops **ops, struct gfsp_error *err)
{
	const struct gfsp_store_ops *tops;
	int rc;

	rc = gfsp_store_for(from, ops, err);
	if (rc == 0)
		rc = gfsp_store_for(to, &tops, err);
	if (rc != 0)
		return rc;
	if (*ops != tops)
		return gfsp_error_set(err, GFSP_ENOTSUP,
				     "cannot %s '%s' to '%s': different "
				     "storage backends", verb, from, to);
	return 0;
}

int
gfsp_link(const char *from, const char *to, struct gfsp_error *err)
{
	const struct gfsp_store_ops *ops;
	int rc = gfsp_store_pair("link", from, to, &ops, err);

	return rc != 0 ? rc : ops->link(from, to, err);
}

/* Nanoseconds of 10^9 and more are refused here, for every backend: both
 * utimensat(2) and gfs_utimes() would read (1 << 30) - 1 and - 2 as "now"
 * and "leave alone" instead of failing. */
int
gfsp_utimens(const char *path, int64_t atime, uint64_t atime_ns,
	    int64_t mtime, uint64_t mtime_ns, struct gfsp_error *err)
{
	if (atime_ns >= 1000000000 || mtime_ns >= 1000000000)
		return gfsp_error_set(err, GFSP_EINVAL, "cannot set times of "
				     "'%s': nanoseconds %llu out of range",
				     path, (unsigned long long)
				     (atime_ns >= 1000000000 ? atime_ns :
				      mtime_ns));
	PATH_OP(path, utimens(path, atime, atime_ns, mtime, mtime_ns, err));
}

int
gfsp_chmod(const char *path, uint32_t mode, struct gfsp_error *err)
{
	PATH_OP(path, chmod(path, mode, err));
}

int
gfsp_mkdir(const char *path, uint32_t mode, struct gfsp_error *err)
{
	PATH_OP(path, mkdir(path, mode, err));
}

int
gfsp_rmdir(const char *path, struct gfsp_error *err)
{
	PATH_OP(path, rmdir(path, err));
}

int
gfsp_unlink(const char *path, struct gfsp_error *err)
{
	PATH_OP(path, unlink(path, err));
}

int
gfsp_remove_tree(const char *path, struct gfsp_error *err)
{
	PATH_OP(path, remove_tree(path, err));
}

int
gfsp_remove_tree_paths(const char *path, struct gfsp_error *err)
{
	struct gfsp_stat st;
	char **names = NULL, *p;
	size_t n = 0, i;
	int rc, erc = 0;

	rc = gfsp_lstat(path, &st, err);
	if (rc == 0 && !S_ISDIR(st.mode))
		return gfsp_unlink(path, err);
	if (rc == 0)
		rc = gfsp_readdir(path, &names, &n, err);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		if (asprintf(&p, "%s/%s", path, names[i]) < 0)
			rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
		else {
			rc = gfsp_remove_tree_paths(p, err);
			free(p);
		}
		if (rc && erc == 0)
			erc = rc;
	}
	gfsp_strv_free(names, n);
	rc = gfsp_rmdir(path, err);
	return erc ? erc : rc;
}

int
gfsp_mkdirs(const char *path, uint32_t mode, struct gfsp_error *err)
{
	PATH_OP(path, mkdirs(path, mode, err));
}

int
gfsp_mkdirs_paths(const char *path, uint32_t mode, struct gfsp_error *err)
{
	struct gfsp_stat st;
	char *p, *s;
	int rc = 0;

	p = strdup(path);
	if (p == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	/* skip a scheme's "gfarm://host/" and the leading '/' */
	s = strstr(p, "://");
	s = s ? strchr(s + 3, '/') : p;
	for (s = s ? s + 1 : p + strlen(p); rc == 0; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		{
			char c = *s;

			*s = '\0';
			if (gfsp_stat(p, &st, NULL) != 0)
				rc = gfsp_mkdir(p, mode, err);
			if (rc == GFSP_EEXIST) {
				gfsp_error_clear(err);
				rc = 0;
			}
			/* (below a confined root stat does not follow a
			 * link: one there is not a directory) */
			if (rc == 0 && gfsp_stat(p, &st, err) == 0 &&
			    !S_ISDIR(st.mode))
				rc = gfsp_error_set(err, GFSP_EEXIST, "'%s' is "
				    "not a directory%s", p, S_ISLNK(st.mode) ?
				    " but a symbolic link (not followed)" : "");
			*s = c;
			if (c == '\0')
				break;
		}
	}
	free(p);
	return rc;
}

static uint64_t
tree_bytes(const char *path, int depth)
{
	struct gfsp_stat st;
	char **names = NULL, *p;
	size_t n = 0, i;
	uint64_t sum;

	if (gfsp_lstat(path, &st, NULL) != 0)
		return 0;
	sum = st.blocks_bytes;
	if (!S_ISDIR(st.mode) || depth > 64 ||
	    gfsp_readdir(path, &names, &n, NULL) != 0)
		return S_ISDIR(st.mode) ? 0 : sum;
	sum = 0;
	for (i = 0; i < n; i++)
		if (asprintf(&p, "%s/%s", path, names[i]) >= 0) {
			sum += tree_bytes(p, depth + 1);
			free(p);
		}
	gfsp_strv_free(names, n);
	return sum;
}

uint64_t
gfsp_tree_bytes(const char *path)
{
	return tree_bytes(path, 0);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
gfsp_readdir(const char *path, char ***names, size_t *n, struct gfsp_error *err)
{
	const struct gfsp_store_ops *ops;
	int rc;

	*names = NULL;
	*n = 0;
	rc = gfsp_store_for(path, &ops, err);
	if (rc == 0)
		rc = ops->readdir(path, names, n, err);
	/* every backend's names in one order, so callers see the same */
	if (rc == 0 && *n > 1)
		qsort(*names, *n, sizeof(**names), name_cmp);
	return rc;
}

int
gfsp_setxattr(const char *path, const char *name, const void *val, size_t len,
	     struct gfsp_error *err)
{
	PATH_OP(path, setxattr(path, name, val, len, err));
}

int
gfsp_getxattr(const char *path, const char *name, void *val, size_t *len,
	     struct gfsp_error *err)
{
	PATH_OP(path, getxattr(path, name, val, len, err));
}

int
gfsp_open_listed(const char *path, int flags, const struct gfsp_stat *listed,
		 int same_version, struct gfsp_file **out,
		 struct gfsp_error *err)
{
	struct gfsp_stat now;
	int rc;

	rc = gfsp_open(path, flags, 0, out, err);
	if (rc == 0)
		rc = gfsp_fstat(*out, &now, err);
	if (rc == 0 && (now.ino != listed->ino || now.gen != listed->gen ||
	    (same_version && !gfsp_same_identity(&now, listed))))
		rc = gfsp_error_set(err, GFSP_ESTALE, "'%s' changed since it "
				   "was listed: %s", path, now.ino !=
				   listed->ino ? "another file has its name" :
				   "it was written meanwhile");
	if (rc && *out != NULL) {
		gfsp_close(*out, NULL);
		*out = NULL;
	}
	return rc;
}

int
gfsp_create(const char *path, uint32_t mode, const struct gfsp_place *place,
	   struct gfsp_file **out, struct gfsp_error *err)
{
	*out = NULL;
	PATH_OP(path, create(path, mode, place, out, err));
}

int
gfsp_where(const char *path, char ***hosts, size_t *n, struct gfsp_error *err)
{
	*hosts = NULL;
	*n = 0;
	PATH_OP(path, where(path, hosts, n, err));
}

int
gfsp_evict(const char *path, struct gfsp_error *err)
{
	PATH_OP(path, evict(path, err));
}

void
gfsp_strv_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n && v != NULL; i++)
		free(v[i]);
	free(v);
}

/* ------------------------------------------------ whole-file helpers */

int
gfsp_read_whole(const char *path, unsigned char **buf, size_t *len,
	       struct gfsp_error *err)
{
	return gfsp_read_whole_flags(path, 0, buf, len, err);
}

int
gfsp_read_meta(const char *path, unsigned char **buf, size_t *len,
	      struct gfsp_error *err)
{
	return gfsp_read_whole_flags(path, GFSP_O_NOFOLLOW, buf, len, err);
}

int
gfsp_read_whole_flags(const char *path, int flags, unsigned char **buf,
		     size_t *len, struct gfsp_error *err)
{
	struct gfsp_stat st;

	return gfsp_read_whole_stat(path, flags, GFSP_WHOLE_MAX, buf, len, &st,
	    err);
}

int
gfsp_read_whole_stat(const char *path, int flags, size_t max,
		    unsigned char **buf, size_t *len, struct gfsp_stat *stp,
		    struct gfsp_error *err)
{
	struct gfsp_file *f = NULL;
	struct gfsp_stat st;
	struct gfsp_error cerr;
	unsigned char *p = NULL;
	size_t done = 0;
	int rc, crc;

	*buf = NULL;
	*len = 0;
	rc = gfsp_open(path, GFSP_O_RDONLY | flags, 0, &f, err);
	if (rc)
		return rc;
	rc = gfsp_fstat(f, &st, err);
	if (rc)
		goto out;
	if (st.size > GFSP_MIN((uint64_t)max, (uint64_t)GFSP_WHOLE_MAX)) {
		rc = gfsp_error_set(err, GFSP_ECORRUPT,
		    "'%s': %llu bytes is too large for a metadata file",
		    path, (unsigned long long)st.size);
		goto out;
	}
	/* one byte more than the size, so there is always a buffer */
	p = malloc((size_t)st.size + 1);
	if (p == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM,
		    "cannot read '%s': out of memory", path);
		goto out;
	}
	if (st.size > 0) {
		rc = gfsp_pread(f, p, (size_t)st.size, 0, &done, err);
		if (rc)
			goto out;
	}
	/* a file that shrank meanwhile reads short: the decoder's length
	 * and checksum checks catch that */
	*buf = p;
	*len = done;
	*stp = st;
	p = NULL;
out:
	free(p);
	gfsp_error_clear(&cerr);
	crc = gfsp_close(f, rc ? &cerr : err);
	if (crc && rc == 0) {
		rc = crc;
		free(*buf);
		*buf = NULL;
		*len = 0;
	}
	return rc;
}

/* ------------------------------------------------- file identity */

uint64_t
gfsp_file_key(const char *path, const struct gfsp_stat *st)
{
	uint64_t id[8];

	/* a changed file is another file (Gfarm bumps the generation on
	 * every change; POSIX: mtime and ctime to the nanosecond -- ctime
	 * cannot be set back -- and a file replaced by rename has another
	 * inode) */
	id[0] = gfsp_hash64(path, strlen(path));
	id[1] = st->size;
	id[2] = (uint64_t)st->mtime;
	id[3] = st->mtime_ns;
	id[4] = st->ino;
	id[5] = st->gen;
	id[6] = (uint64_t)st->ctime;
	id[7] = st->ctime_ns;
	return gfsp_hash64(id, sizeof(id));
}

int
gfsp_hold_private(const char *dir, struct gfsp_error *err)
{
	int rc, fd;

	rc = gfsp_confine_dir(dir, GFSP_CONFINE_SAFE, err);
	if (rc || strstr(dir, "://") != NULL)
		return rc;
	fd = gfsp_confined_fd(dir);
	rc = fd < 0 ? gfsp_error_errno(err, errno, "cannot open '%s'", dir) :
	     gfsp_private_fd(fd, dir, err);
	if (fd >= 0)
		close(fd);
	if (rc)
		gfsp_unconfine(dir);
	return rc;
}

uint32_t
gfsp_copy_mode(const struct gfsp_stat *src, uint32_t uid, uint32_t gid)
{
	uint32_t mode = src->mode & 07777;

	if (S_ISDIR(src->mode))
		return mode;
	if (uid != src->uid)
		mode &= ~(uint32_t)S_ISUID;
	if (gid != src->gid)
		mode &= ~(uint32_t)S_ISGID;
	return mode;
}

int
gfsp_same_identity(const struct gfsp_stat *a, const struct gfsp_stat *b)
{
	return a->size == b->size && a->mtime == b->mtime &&
	    a->mtime_ns == b->mtime_ns && a->ino == b->ino &&
	    a->gen == b->gen && a->ctime == b->ctime &&
	    a->ctime_ns == b->ctime_ns;
}
