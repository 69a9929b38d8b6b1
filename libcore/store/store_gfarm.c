/*
 * store_gfarm.c - the Gfarm backend: "gfarm:///path" (the metadata server
 * of the client configuration) and "gfarm://host:port/path" (that gfmd,
 * authenticated with the same client configuration), on libgfarm 2.7.
 * The URL goes to libgfarm as written; gfarm_error_t is translated here,
 * its gfarm_error_string() text kept in the message.
 *
 * gfsplit's names all start with gfsp_/GFSP_; libgfarm owns gfs_/GFS_, so
 * every gfs_* below is libgfarm's.
 *
 * libgfarm 2.7 does not document thread safety, and the pipeline reads in
 * a helper thread while the caller writes, so every call into libgfarm is
 * made under one lock.  SIGPIPE (a gfsd that closed its connection while
 * libgfarm writes to it) is blocked for the duration of each call and a
 * signal raised by it discarded, so a lost server is an error, not death.
 */
#ifdef HAVE_GFARM

#define _GNU_SOURCE
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "store.h"

#include <gfarm/gfarm.h>

/*
 * Pins an open, not yet used, file to one gfsd: its data will be written
 * there or the call fails (unknown host, connection refused, ...), after
 * which the handle is unusable.  Exported by libgfarm.so.1 and used by
 * gfreg -h, but not declared in the installed headers.
 */
gfarm_error_t gfs_pio_internal_set_view_section(GFS_File, char *);

extern const struct gfsp_store_ops gfsp_store_gfarm;	/* store.c uses it */

/* gfs_pio_pread/pwrite take an int: move at most this much per call */
#define GF_IO_MAX	((size_t)1 << 30)
/* longest node name accepted for placement (DNS allows 253) */
#define GF_HOST_MAX	255

struct gf_file {
	struct gfsp_file_hdr hdr;	/* first: see store.h */
	GFS_File gf;
	int writable;
	/* gf_fsetattr's mode and times, set at close */
	int setattr;
	uint32_t mode;
	int64_t atime, mtime;
	uint64_t atime_ns, mtime_ns;
};

static pthread_once_t gf_once = PTHREAD_ONCE_INIT;
static gfarm_error_t gf_init_error;	/* of gfarm_initialize() */
static pthread_mutex_t gf_lock = PTHREAD_MUTEX_INITIALIZER;

static void
gf_init(void)
{
	gf_init_error = gfarm_initialize(NULL, NULL);
	/* libgfarm logs to stderr (reconnection attempts, ...); the library
	 * does not print, so only -v lets those notices through */
	if (gf_init_error == GFARM_ERR_NO_ERROR &&
	    gfsp_log_level() < GFSP_LOG_VERBOSE)
		gflog_set_priority_level(LOG_CRIT);
}

/* ------------------------------------------------------------- errors */

static int
gf_code(gfarm_error_t e)
{
	switch (e) {
	case GFARM_ERR_NO_ERROR:
		return GFSP_OK;
	case GFARM_ERR_NO_SUCH_FILE_OR_DIRECTORY:
	case GFARM_ERR_NOT_A_DIRECTORY:
	case GFARM_ERR_NO_SUCH_OBJECT:		/* a missing xattr */
	case GFARM_ERR_TOO_MANY_LEVELS_OF_SYMBOLIC_LINK:
		return GFSP_ENOENT;
	case GFARM_ERR_ALREADY_EXISTS:
	case GFARM_ERR_DIRECTORY_NOT_EMPTY:
		return GFSP_EEXIST;
	case GFARM_ERR_OPERATION_NOT_PERMITTED:
	case GFARM_ERR_PERMISSION_DENIED:
	case GFARM_ERR_READ_ONLY_FILE_SYSTEM:
	case GFARM_ERR_TEXT_FILE_BUSY:
	case GFARM_ERR_AUTHENTICATION:
	case GFARM_ERR_EXPIRED:
	case GFARM_ERR_INVALID_CREDENTIAL:
	case GFARM_ERR_NO_SUCH_USER:
	case GFARM_ERR_NO_SUCH_GROUP:
		return GFSP_EACCES;
	case GFARM_ERR_NO_SPACE:
	case GFARM_ERR_DISK_QUOTA_EXCEEDED:
	case GFARM_ERR_FILE_TOO_LARGE:
		return GFSP_ENOSPC;
	case GFARM_ERR_NO_MEMORY:
	case GFARM_ERR_NO_BUFFER_SPACE_AVAILABLE:
		return GFSP_ENOMEM;
	case GFARM_ERR_OPERATION_NOT_SUPPORTED:
	case GFARM_ERR_OPERATION_NOT_SUPPORTED_BY_DEVICE:
	case GFARM_ERR_FUNCTION_NOT_IMPLEMENTED:
	case GFARM_ERR_PROTOCOL_NOT_SUPPORTED:
	case GFARM_ERR_CROSS_DEVICE_LINK:	/* rename across gfmds */
		return GFSP_ENOTSUP;
	case GFARM_ERR_INVALID_ARGUMENT:
	case GFARM_ERR_IS_A_DIRECTORY:
	case GFARM_ERR_NOT_A_REGULAR_FILE:
	case GFARM_ERR_FILE_NAME_TOO_LONG:
	case GFARM_ERR_BAD_FILE_DESCRIPTOR:
	case GFARM_ERR_RESULT_OUT_OF_RANGE:
	case GFARM_ERR_ILLEGAL_SEEK:
	case GFARM_ERR_PATH_IS_ROOT:
	case GFARM_ERR_GFARM_URL_PREFIX_IS_MISSING:
	case GFARM_ERR_GFARM_URL_USER_IS_MISSING:
	case GFARM_ERR_GFARM_URL_HOST_IS_MISSING:
	case GFARM_ERR_GFARM_URL_PORT_IS_MISSING:
	case GFARM_ERR_GFARM_URL_PORT_IS_INVALID:
		return GFSP_EINVAL;
	/* the metadata server or a file system node cannot be reached;
	 * "no filesystem node": none is up (or none has room) to write to */
	case GFARM_ERR_NETWORK_IS_DOWN:
	case GFARM_ERR_NETWORK_IS_UNREACHABLE:
	case GFARM_ERR_CONNECTION_ABORTED:
	case GFARM_ERR_CONNECTION_RESET_BY_PEER:
	case GFARM_ERR_SOCKET_IS_NOT_CONNECTED:
	case GFARM_ERR_OPERATION_TIMED_OUT:
	case GFARM_ERR_CONNECTION_REFUSED:
	case GFARM_ERR_NO_ROUTE_TO_HOST:
	case GFARM_ERR_BROKEN_PIPE:
	case GFARM_ERR_UNEXPECTED_EOF:
	case GFARM_ERR_UNKNOWN_HOST:
	case GFARM_ERR_CANNOT_RESOLVE_AN_IP_ADDRESS_INTO_A_HOSTNAME:
	case GFARM_ERR_CANNOT_ASSIGN_REQUESTED_ADDRESS:
	case GFARM_ERR_GFMD_FAILED_OVER:
	case GFARM_ERR_NO_FILESYSTEM_NODE:
		return GFSP_ENET;
	case GFARM_ERR_INTERRUPTED_SYSTEM_CALL:
		return GFSP_ECANCELED;
	default:
		return GFSP_EIO;
	}
}

/* Set err from e: "<fmt...>: <gfarm_error_string(e)>"; err->sys = the
 * errno libgfarm says e stands for, as the POSIX backend keeps its errno */
static int __attribute__((format(printf, 3, 4)))
gf_error(struct gfsp_error *err, gfarm_error_t e, const char *fmt, ...)
{
	char what[GFSP_ERRMSG_MAX];
	int code = gf_code(e), fresh;
	va_list ap;

	if (code == GFSP_OK)	/* never report a failure as success */
		code = GFSP_EIO;
	fresh = err != NULL && err->code == GFSP_OK;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	gfsp_error_set(err, code, "%s: %s", what, gfarm_error_string(e));
	if (fresh)
		err->sys = gfarm_error_to_errno(e);
	return code;
}

/*
 * Every call into libgfarm runs between gf_enter() and gf_leave(): the
 * one lock, SIGPIPE blocked in this thread.  A SIGPIPE that became pending
 * meanwhile was raised by libgfarm's own write to a closed connection
 * (it then returns an error) and is discarded, unless one was pending
 * before.
 */
struct gf_guard {
	sigset_t old;
	int pipe_was_pending;
};

static void
gf_enter(struct gf_guard *g)
{
	sigset_t set, pend;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &g->old);
	g->pipe_was_pending = sigpending(&pend) == 0 &&
			      sigismember(&pend, SIGPIPE);
	pthread_mutex_lock(&gf_lock);
}

static void
gf_leave(struct gf_guard *g)
{
	static const struct timespec zero = { 0, 0 };
	sigset_t set, pend;

	pthread_mutex_unlock(&gf_lock);
	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	if (!g->pipe_was_pending && sigpending(&pend) == 0 &&
	    sigismember(&pend, SIGPIPE))
		sigtimedwait(&set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

/* Initialise libgfarm once per process; on failure say so for path. */
static int
gf_ready(const char *path, struct gfsp_error *err)
{
	pthread_once(&gf_once, gf_init);
	if (gf_init_error != GFARM_ERR_NO_ERROR)
		return gf_error(err, gf_init_error, "cannot use '%s': "
				"cannot initialize Gfarm", path);
	return 0;
}

/*
 * The body of a path operation that is one libgfarm call: make sure
 * libgfarm is ready, make the call under the lock, and turn a failure into
 * err with the message fmt, ... (the Gfarm cause is appended).
 */
#define GF_PATH_CALL(path, call, err, ...) do {				\
	struct gf_guard g_;						\
	gfarm_error_t e_;						\
	int rc_ = gf_ready((path), (err));				\
									\
	if (rc_ != 0)							\
		return rc_;						\
	gf_enter(&g_);							\
	e_ = (call);							\
	gf_leave(&g_);							\
	if (e_ != GFARM_ERR_NO_ERROR)					\
		return gf_error((err), e_, __VA_ARGS__);		\
	return 0;							\
} while (0)

/* ------------------------------------------------------------ files */

/*
 * The local number of a Gfarm user or group: its global name mapped to a
 * local one by the client's configuration (local_user_map), looked up in
 * passwd/group; this process's own when there is no such account.  The
 * last answer is kept (a tree has one owner, mostly).  Outside the lock.
 */
static uint32_t
local_id(const char *url, const char *global, int group)
{
	static char last[2][256];
	static uint32_t last_id[2];
	static int have[2];
	struct gf_guard g;
	char *local = NULL, buf[4096];
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;
	uint32_t id = group ? (uint32_t)getgid() : (uint32_t)getuid();
	gfarm_error_t e;

	if (global == NULL)
		return id;
	gf_enter(&g);
	if (have[group] && strcmp(last[group], global) == 0) {
		id = last_id[group];
		gf_leave(&g);
		return id;
	}
	e = group ? gfarm_global_to_local_groupname_by_url(url, global, &local)
		  : gfarm_global_to_local_username_by_url(url, global, &local);
	gf_leave(&g);
	if (e == GFARM_ERR_NO_ERROR && local != NULL) {
		if (group && getgrnam_r(local, &gr, buf, sizeof(buf),
		    &grp) == 0 && grp != NULL)
			id = (uint32_t)grp->gr_gid;
		else if (!group && getpwnam_r(local, &pw, buf, sizeof(buf),
		    &pwp) == 0 && pwp != NULL)
			id = (uint32_t)pwp->pw_uid;
	}
	free(local);
	gf_enter(&g);
	snprintf(last[group], sizeof(last[group]), "%s", global);
	last_id[group] = id;
	have[group] = 1;
	gf_leave(&g);
	return id;
}

static void
stat_fill(struct gfsp_stat *st, const struct gfs_stat *gs, const char *url)
{
	st->size = gs->st_size > 0 ? (uint64_t)gs->st_size : 0;
	/* GFARM_S_IF* and the permission bits have the POSIX values */
	st->mode = (uint32_t)gs->st_mode;
	st->mtime = (int64_t)gs->st_mtimespec.tv_sec;
	st->mtime_ns = (uint64_t)gs->st_mtimespec.tv_nsec;
	st->ino = (uint64_t)gs->st_ino;
	st->gen = (uint64_t)gs->st_gen;
	st->ctime = (int64_t)gs->st_ctimespec.tv_sec;
	st->ctime_ns = (uint64_t)gs->st_ctimespec.tv_nsec;
	/* Gfarm keeps no block count; a file is taken as fully allocated */
	st->blocks_bytes = st->size;
	st->atime = (int64_t)gs->st_atimespec.tv_sec;
	st->atime_ns = (uint64_t)gs->st_atimespec.tv_nsec;
	st->nlink = (uint64_t)gs->st_nlink;
	st->uid = local_id(url, gs->st_user, 0);
	st->gid = local_id(url, gs->st_group, 1);
}

static struct gf_file *
gf_file_new(const char *path, struct gfsp_error *err)
{
	struct gf_file *f = calloc(1, sizeof(*f));

	if (f == NULL || (f->hdr.path = strdup(path)) == NULL) {
		free(f);
		gfsp_error_set(err, GFSP_ENOMEM, "cannot open '%s': out of "
			      "memory", path);
		return NULL;
	}
	f->hdr.ops = &gfsp_store_gfarm;
	return f;
}

static void
gf_file_free(struct gf_file *f)
{
	if (f == NULL)
		return;
	free(f->hdr.path);
	free(f);
}

static int gf_close(struct gfsp_file *file, struct gfsp_error *err);
static int gf_fstat(struct gfsp_file *file, struct gfsp_stat *st,
		    struct gfsp_error *err);
static int gf_lstat(const char *path, struct gfsp_stat *st,
		    struct gfsp_error *err);

/* GFSP_O_NOFOLLOW after the open: path no symbolic link, f a regular file */
static int
gf_regular_only(struct gfsp_file *f, const char *path, struct gfsp_error *err)
{
	struct gfsp_stat st;
	int rc;

	rc = gf_lstat(path, &st, err);
	if (rc == 0 && GFARM_S_ISLNK(st.mode))
		return gfsp_error_set(err, GFSP_EINVAL, "'%s': a symbolic link "
				     "(not followed)", path);
	if (rc == 0)
		rc = gf_fstat(f, &st, err);
	if (rc == 0 && !GFARM_S_ISREG(st.mode))
		return gfsp_error_set(err, GFSP_EINVAL, "'%s': not a regular "
				     "file", path);
	return rc;
}

static int
gf_open(const char *path, int flags, uint32_t mode, struct gfsp_file **out,
	struct gfsp_error *err)
{
	struct gf_guard g;
	struct gf_file *f = NULL;
	gfarm_error_t e;
	int gflags, rc;

	*out = NULL;
	if (flags & GFSP_O_DIRECT)
		return gfsp_error_set(err, GFSP_ENOTSUP, "cannot open '%s' for "
				     "direct I/O: Gfarm has none (its data is "
				     "cached by the gfsd)", path);
	rc = gf_ready(path, err);
	if (rc != 0)
		return rc;
	switch (flags & 0x3) {
	case GFSP_O_WRONLY:
		gflags = GFARM_FILE_WRONLY;
		break;
	case GFSP_O_RDWR:
		gflags = GFARM_FILE_RDWR;
		break;
	default:
		gflags = GFARM_FILE_RDONLY;
		break;
	}
	/* libgfarm truncates only when asked, even on create */
	if (flags & GFSP_O_TRUNC)
		gflags |= GFARM_FILE_TRUNC;
	if ((flags & GFSP_O_CREAT) && (flags & GFSP_O_EXCL))
		gflags |= GFARM_FILE_EXCLUSIVE;
	f = gf_file_new(path, err);
	if (f == NULL)
		return GFSP_ENOMEM;
	f->writable = (flags & 0x3) != GFSP_O_RDONLY;

	gf_enter(&g);
	if (flags & GFSP_O_CREAT)
		e = gfs_pio_create(path, gflags, (gfarm_mode_t)mode, &f->gf);
	else
		e = gfs_pio_open(path, gflags, &f->gf);
	gf_leave(&g);
	if (e != GFARM_ERR_NO_ERROR) {
		gf_file_free(f);
		return gf_error(err, e, "cannot %s '%s'",
				(flags & GFSP_O_CREAT) ? "create" : "open",
				path);
	}
	*out = (struct gfsp_file *)f;
	/* Gfarm has no FIFOs and its open follows links: check the name,
	 * then what was opened */
	if ((flags & GFSP_O_NOFOLLOW) && (rc = gf_regular_only(*out, path,
	    err)) != 0) {
		gf_close(*out, NULL);
		*out = NULL;
	}
	return rc;
}

/* gfs_pio_create(EXCLUSIVE) and, if host != NULL, pin it there */
static gfarm_error_t
gf_create_on(const char *path, uint32_t mode, const char *host, GFS_File *gfp,
	     int *pin_failed)
{
	char hostbuf[GF_HOST_MAX + 1];
	gfarm_error_t e;

	*pin_failed = 0;
	e = gfs_pio_create(path, GFARM_FILE_WRONLY | GFARM_FILE_EXCLUSIVE,
			   (gfarm_mode_t)mode, gfp);
	if (e != GFARM_ERR_NO_ERROR || host == NULL)
		return e;
	/* the function takes a non-const char * */
	snprintf(hostbuf, sizeof(hostbuf), "%s", host);
	e = gfs_pio_internal_set_view_section(*gfp, hostbuf);
	if (e != GFARM_ERR_NO_ERROR) {
		/* the handle is unusable now and the empty file exists */
		*pin_failed = 1;
		gfs_pio_close(*gfp);
		gfs_unlink(path);
		*gfp = NULL;
	}
	return e;
}

/*
 * A new file; with place->host, its data on that gfsd.  Pinning happens
 * right after the create, before any I/O (as gfreg -h does).  When it
 * fails, the empty file is closed and removed; STRICT then fails naming
 * the node and the cause, FALLBACK creates the file again unpinned and
 * lets Gfarm choose a node (where() reports it once data is written).
 *
 * Without place->host the node is this client's own: its host name is
 * matched against Gfarm's registered gfsd hosts by pinning to it, and when
 * it is none of them the file is created unpinned, where Gfarm's
 * scheduling (which prefers the client's local gfsd) puts it.
 */
static int
gf_create(const char *path, uint32_t mode, const struct gfsp_place *place,
	  struct gfsp_file **out, struct gfsp_error *err)
{
	const char *host = place != NULL ? place->host : NULL;
	char self[GF_HOST_MAX + 1];
	struct gf_guard g;
	struct gf_file *f;
	gfarm_error_t e;
	int rc, pin_failed;

	*out = NULL;
	if (host != NULL && host[0] == '\0')
		host = NULL;
	if (host != NULL && strlen(host) > GF_HOST_MAX)
		return gfsp_error_set(err, GFSP_EINVAL, "cannot create '%s' on "
				     "node '%.40s...': host name too long",
				     path, host);
	rc = gf_ready(path, err);
	if (rc != 0)
		return rc;
	f = gf_file_new(path, err);
	if (f == NULL)
		return GFSP_ENOMEM;
	f->writable = 1;

	gf_enter(&g);
	if (host == NULL && gethostname(self, sizeof(self) - 1) == 0) {
		self[sizeof(self) - 1] = '\0';
		e = gf_create_on(path, mode, self, &f->gf, &pin_failed);
		if (pin_failed)		/* not a gfsd: Gfarm's own choice */
			e = gf_create_on(path, mode, NULL, &f->gf,
					 &pin_failed);
	} else {
		e = gf_create_on(path, mode, host, &f->gf, &pin_failed);
		if (pin_failed && place->policy == GFSP_PLACE_FALLBACK)
			e = gf_create_on(path, mode, NULL, &f->gf,
					 &pin_failed);
	}
	gf_leave(&g);
	if (e != GFARM_ERR_NO_ERROR) {
		gf_file_free(f);
		if (pin_failed)
			return gf_error(err, e, "cannot create '%s' on node "
					"'%s'", path, host);
		return gf_error(err, e, "cannot create '%s'", path);
	}
	*out = (struct gfsp_file *)f;
	return 0;
}

static int gf_chmod(const char *path, uint32_t mode, struct gfsp_error *err);
static int gf_utimens(const char *path, int64_t atime, uint64_t atime_ns,
		      int64_t mtime, uint64_t mtime_ns, struct gfsp_error *err);

static int
gf_close(struct gfsp_file *file, struct gfsp_error *err)
{
	struct gf_file *f = (struct gf_file *)file;
	struct gf_guard g;
	gfarm_error_t e;
	int rc = 0;

	gf_enter(&g);
	e = gfs_pio_close(f->gf);
	gf_leave(&g);
	if (e != GFARM_ERR_NO_ERROR)
		rc = gf_error(err, e, "cannot close '%s'", f->hdr.path);
	/* gfmd takes a written file's times from its close: after it */
	if (rc == 0 && f->setattr)
		rc = gf_chmod(f->hdr.path, f->mode, err);
	if (rc == 0 && f->setattr)
		rc = gf_utimens(f->hdr.path, f->atime, f->atime_ns, f->mtime,
				f->mtime_ns, err);
	gf_file_free(f);
	return rc;
}

static int
gf_fsetattr(struct gfsp_file *file, uint32_t mode, int64_t atime,
	    uint64_t atime_ns, int64_t mtime, uint64_t mtime_ns,
	    struct gfsp_error *err)
{
	struct gf_file *f = (struct gf_file *)file;

	(void)err;
	f->setattr = 1;
	f->mode = mode;
	f->atime = atime;
	f->atime_ns = atime_ns;
	f->mtime = mtime;
	f->mtime_ns = mtime_ns;
	return 0;
}

static int
gf_pread(struct gfsp_file *file, void *buf, size_t len, uint64_t off,
	 size_t *done, struct gfsp_error *err)
{
	struct gf_file *f = (struct gf_file *)file;
	struct gf_guard g;
	gfarm_error_t e = GFARM_ERR_NO_ERROR;
	size_t got = 0;
	int n, rc = 0;

	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off) {
		rc = gfsp_error_set(err, GFSP_EINVAL, "cannot read '%s': offset "
				   "%llu out of range", f->hdr.path,
				   (unsigned long long)off);
		goto out;
	}
	gf_enter(&g);
	while (got < len) {
		e = gfs_pio_pread(f->gf, (char *)buf + got,
				  (int)GFSP_MIN(len - got, GF_IO_MAX),
				  (gfarm_off_t)(off + got), &n);
		if (e != GFARM_ERR_NO_ERROR || n <= 0)
			break;		/* an error, or end of file */
		got += (size_t)n;
	}
	gf_leave(&g);
	if (e != GFARM_ERR_NO_ERROR)
		rc = gf_error(err, e, "cannot read '%s' at offset %llu",
			      f->hdr.path, (unsigned long long)(off + got));
out:
	if (done != NULL)
		*done = got;
	return rc;
}

static int
gf_pwrite(struct gfsp_file *file, const void *buf, size_t len,
	  uint64_t off, struct gfsp_error *err)
{
	struct gf_file *f = (struct gf_file *)file;
	struct gf_guard g;
	gfarm_error_t e = GFARM_ERR_NO_ERROR;
	size_t put = 0;
	int n = 0;

	if (off > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - off)
		return gfsp_error_set(err, GFSP_EINVAL, "cannot write '%s': "
				     "offset %llu out of range", f->hdr.path,
				     (unsigned long long)off);
	gf_enter(&g);
	while (put < len) {
		e = gfs_pio_pwrite(f->gf, (const char *)buf + put,
				   (int)GFSP_MIN(len - put, GF_IO_MAX),
				   (gfarm_off_t)(off + put), &n);
		if (e != GFARM_ERR_NO_ERROR || n <= 0)
			break;
		put += (size_t)n;
	}
	gf_leave(&g);
	if (e != GFARM_ERR_NO_ERROR)
		return gf_error(err, e, "cannot write '%s' at offset %llu",
				f->hdr.path, (unsigned long long)(off + put));
	if (put < len)	/* no progress and no error: do not spin */
		return gfsp_error_set(err, GFSP_EIO, "cannot write '%s': short "
				     "write at offset %llu", f->hdr.path,
				     (unsigned long long)(off + put));
	return 0;
}

/*
 * The size of a file open for writing lives on its gfsd until close;
 * gfs_pio_stat() asks there: gfmd's attributes (gfs_fstat()) with the
 * size, atime and mtime of the gfsd's copy.  So while a file is open its
 * times are the copy's, which are gfmd's only until someone sets gfmd's:
 * after gf_utimens(), stat() shows the times set and fstat() the copy's
 * (tests/unit/gfarm_store.c shows both).
 */
static int
gf_fstat(struct gfsp_file *file, struct gfsp_stat *st,
	 struct gfsp_error *err)
{
	struct gf_file *f = (struct gf_file *)file;
	struct gf_guard g;
	struct gfs_stat gs;
	gfarm_error_t e;

	gf_enter(&g);
	/*
	 * A handle that writes: gfs_pio_stat, the storage node's copy (gfmd's
	 * size is stale until close).  A handle that only reads: gfmd's
	 * gfs_fstat, whose times are those stat() and utimens() see (the
	 * copy's are not: a file whose times were set would look changed
	 * to whoever compares an open file with its path).
	 */
	e = f->writable ? gfs_pio_stat(f->gf, &gs) : gfs_fstat(f->gf, &gs);
	gf_leave(&g);
	if (e != GFARM_ERR_NO_ERROR)
		return gf_error(err, e, "cannot stat '%s'", f->hdr.path);
	stat_fill(st, &gs, f->hdr.path);
	gfs_stat_free(&gs);
	return 0;
}

static int
gf_ftruncate(struct gfsp_file *file, uint64_t size, struct gfsp_error *err)
{
	struct gf_file *f = (struct gf_file *)file;
	struct gf_guard g;
	gfarm_error_t e;

	if (size > (uint64_t)INT64_MAX)
		return gfsp_error_set(err, GFSP_EINVAL, "cannot truncate '%s': "
				     "size %llu out of range", f->hdr.path,
				     (unsigned long long)size);
	gf_enter(&g);
	e = gfs_pio_truncate(f->gf, (gfarm_off_t)size);
	gf_leave(&g);
	if (e != GFARM_ERR_NO_ERROR)
		return gf_error(err, e, "cannot truncate '%s'", f->hdr.path);
	return 0;
}

/* fn (gfs_pio_sync, gfs_pio_flush) on a file open for writing; a file
 * open for reading has nothing to sync or flush. */
static int
gf_push(struct gfsp_file *file, gfarm_error_t (*fn)(GFS_File),
	const char *verb, struct gfsp_error *err)
{
	struct gf_file *f = (struct gf_file *)file;
	struct gf_guard g;
	gfarm_error_t e;

	if (!f->writable)
		return 0;
	gf_enter(&g);
	e = fn(f->gf);
	gf_leave(&g);
	if (e != GFARM_ERR_NO_ERROR)
		return gf_error(err, e, "cannot %s '%s'", verb, f->hdr.path);
	return 0;
}

static int
gf_fsync(struct gfsp_file *file, struct gfsp_error *err)
{
	return gf_push(file, gfs_pio_sync, "sync", err);
}

static int
gf_flush(struct gfsp_file *file, struct gfsp_error *err)
{
	return gf_push(file, gfs_pio_flush, "flush", err);
}

/* ------------------------------------------------------------- paths */

/* fn: gfs_stat (follows a final symbolic link) or gfs_lstat */
static int
gf_stat_by(const char *path, gfarm_error_t (*fn)(const char *,
						 struct gfs_stat *),
	   struct gfsp_stat *st, struct gfsp_error *err)
{
	struct gf_guard g;
	struct gfs_stat gs;
	gfarm_error_t e;
	int rc = gf_ready(path, err);

	if (rc != 0)
		return rc;
	gf_enter(&g);
	e = fn(path, &gs);
	gf_leave(&g);
	if (e != GFARM_ERR_NO_ERROR)
		return gf_error(err, e, "cannot stat '%s'", path);
	stat_fill(st, &gs, path);
	gfs_stat_free(&gs);
	return 0;
}

static int
gf_stat(const char *path, struct gfsp_stat *st, struct gfsp_error *err)
{
	return gf_stat_by(path, gfs_stat, st, err);
}

static int
gf_lstat(const char *path, struct gfsp_stat *st, struct gfsp_error *err)
{
	return gf_stat_by(path, gfs_lstat, st, err);
}

/* gfs_readlink() hands over a target malloc'd by libgfarm, whole and
 * NUL-terminated, which free() releases (as gfarm2fs does) */
static int
gf_readlink(const char *path, char **target, struct gfsp_error *err)
{
	*target = NULL;
	GF_PATH_CALL(path, gfs_readlink(path, target), err,
		     "cannot readlink '%s'", path);
}

/* gfmd takes a target of up to 1024 bytes (GFARM_PATH_MAX); a longer one
 * is GFARM_ERR_FILE_NAME_TOO_LONG, GFSP_EINVAL here */
static int
gf_symlink(const char *target, const char *path, struct gfsp_error *err)
{
	GF_PATH_CALL(path, gfs_symlink(target, path), err,
		     "cannot create symbolic link '%s'", path);
}

/* from and to on different gfmds: GFARM_ERR_CROSS_DEVICE_LINK, which is
 * GFSP_ENOTSUP here, as for rename */
static int
gf_link(const char *from, const char *to, struct gfsp_error *err)
{
	GF_PATH_CALL(from, gfs_link(from, to), err,
		     "cannot link '%s' to '%s'", from, to);
}

/*
 * gfs_utimes() follows a final symbolic link (gfs_lutimes() would not)
 * and sends both times to gfmd, which keeps them to the nanosecond
 * (struct gfarm_timespec: seconds and int32 nanoseconds).
 */
static int
gf_utimens(const char *path, int64_t atime, uint64_t atime_ns,
	   int64_t mtime, uint64_t mtime_ns, struct gfsp_error *err)
{
	const struct gfarm_timespec ts[2] = {
		{ .tv_sec = (gfarm_time_t)atime,
		  .tv_nsec = (gfarm_int32_t)atime_ns },
		{ .tv_sec = (gfarm_time_t)mtime,
		  .tv_nsec = (gfarm_int32_t)mtime_ns },
	};

	GF_PATH_CALL(path, gfs_utimes(path, ts), err,
		     "cannot set times of '%s'", path);
}

/* gfs_chmod() follows a final symbolic link, as chmod(2) does */
static int
gf_chmod(const char *path, uint32_t mode, struct gfsp_error *err)
{
	GF_PATH_CALL(path, gfs_chmod(path, (gfarm_mode_t)(mode &
							 GFARM_S_ALLPERM)),
		     err, "cannot change permissions of '%s'", path);
}

static int
gf_mkdir(const char *path, uint32_t mode, struct gfsp_error *err)
{
	GF_PATH_CALL(path, gfs_mkdir(path, (gfarm_mode_t)mode), err,
		     "cannot create directory '%s'", path);
}

static int
gf_rmdir(const char *path, struct gfsp_error *err)
{
	GF_PATH_CALL(path, gfs_rmdir(path), err,
		     "cannot remove directory '%s'", path);
}

static int
gf_unlink(const char *path, struct gfsp_error *err)
{
	GF_PATH_CALL(path, gfs_unlink(path), err, "cannot remove '%s'", path);
}

/*
 * gfs_rename() replaces an existing target, as rename(2) does, and Gfarm
 * 2.7 has no no-replace flag: the target is looked up first and an
 * existing one refused.  Between the lookup and the rename another client
 * may create `to`, which the rename then replaces; that race is only with
 * another writer of the same name, as with posix_rename's fallback.
 */
static int
gf_rename(const char *from, const char *to, struct gfsp_error *err)
{
	struct gf_guard g;
	struct gfs_stat gs;
	gfarm_error_t e;
	int rc = gf_ready(from, err);

	if (rc != 0)
		return rc;
	gf_enter(&g);
	e = gfs_lstat(to, &gs);
	if (e == GFARM_ERR_NO_ERROR) {
		gfs_stat_free(&gs);
		e = GFARM_ERR_ALREADY_EXISTS;
	} else if (e == GFARM_ERR_NO_SUCH_FILE_OR_DIRECTORY) {
		e = gfs_rename(from, to);
	}
	gf_leave(&g);
	if (e != GFARM_ERR_NO_ERROR)
		return gf_error(err, e, "cannot rename '%s' to '%s'", from, to);
	return 0;
}

/* gfs_rename(): `to` replaced, as rename(2) does */
static int
gf_replace(const char *from, const char *to, struct gfsp_error *err)
{
	struct gf_guard g;
	gfarm_error_t e;
	int rc = gf_ready(from, err);

	if (rc != 0)
		return rc;
	gf_enter(&g);
	e = gfs_rename(from, to);
	gf_leave(&g);
	if (e != GFARM_ERR_NO_ERROR)
		return gf_error(err, e, "cannot rename '%s' to '%s'", from, to);
	return 0;
}

static int
gf_readdir(const char *path, char ***names, size_t *n, struct gfsp_error *err)
{
	struct gf_guard g;
	struct gfs_dirent *de;
	GFS_Dir d = NULL;
	gfarm_error_t e;
	char **v = NULL;
	size_t cnt = 0, cap = 0, i;
	int rc, nomem = 0;

	*names = NULL;
	*n = 0;
	rc = gf_ready(path, err);
	if (rc != 0)
		return rc;
	gf_enter(&g);
	e = gfs_opendir(path, &d);
	if (e != GFARM_ERR_NO_ERROR) {
		gf_leave(&g);
		return gf_error(err, e, "cannot open directory '%s'", path);
	}
	for (;;) {
		e = gfs_readdir(d, &de);
		if (e != GFARM_ERR_NO_ERROR || de == NULL)
			break;
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (gfsp_grow(&v, &cap, cnt + 1, sizeof(*v)) != 0) {
			nomem = 1;
			break;
		}
		v[cnt] = strdup(de->d_name);
		if (v[cnt] == NULL) {
			nomem = 1;
			break;
		}
		cnt++;
	}
	gfs_closedir(d);
	gf_leave(&g);
	if (nomem)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "cannot read directory "
				   "'%s': out of memory", path);
	else if (e != GFARM_ERR_NO_ERROR)
		rc = gf_error(err, e, "cannot read directory '%s'", path);
	if (rc != 0) {
		for (i = 0; i < cnt; i++)
			free(v[i]);
		free(v);
		return rc;
	}
	*names = v;
	*n = cnt;
	return 0;
}

/* Gfarm takes "user.*" and "gfarm.*" names, on files and directories */
static int
gf_setxattr(const char *path, const char *name, const void *val, size_t len,
	    struct gfsp_error *err)
{
	GF_PATH_CALL(path, gfs_setxattr(path, name, val, len, 0), err,
		     "cannot set attribute '%s' of '%s'", name, path);
}

/* The namespaces of the attributes Gfarm keeps: gfmd refuses any other
 * name ("operation not permitted") */
static int
gf_xattr_namespace(const char *name)
{
	return strncmp(name, "user.", 5) == 0 ||
	    strncmp(name, "gfarm.", 6) == 0 ||
	    strncmp(name, "gfarm_root.", 11) == 0;
}

/*
 * A missing attribute is GFARM_ERR_NO_SUCH_OBJECT (GFSP_ENOENT here), and
 * so is one of a namespace Gfarm has none of (system.posix_acl_access,
 * security.selinux, which ls -l asks of every file): gfmd would refuse
 * the name as "operation not permitted", where a Linux file system says
 * ENODATA.  A value larger than the buffer is
 * GFARM_ERR_RESULT_OUT_OF_RANGE with *len set to its size, reported as
 * posix_getxattr reports ERANGE.
 */
static int
gf_getxattr(const char *path, const char *name, void *val, size_t *len,
	    struct gfsp_error *err)
{
	struct gf_guard g;
	gfarm_error_t e;
	size_t cap = *len, size = *len;
	int rc = gf_ready(path, err);

	if (rc != 0)
		return rc;
	if (!gf_xattr_namespace(name)) {
		rc = gfsp_error_set(err, GFSP_ENOENT, "'%s' has no attribute "
				   "'%s' (Gfarm keeps user.*, gfarm.* and "
				   "gfarm_root.* ones only)", path, name);
		err->sys = ENODATA;
		return rc;
	}
	gf_enter(&g);
	e = gfs_getxattr(path, name, val, &size);
	gf_leave(&g);
	if (e == GFARM_ERR_RESULT_OUT_OF_RANGE) {
		*len = size;
		return gfsp_error_set(err, GFSP_EINVAL, "cannot get attribute "
				     "'%s' of '%s': value larger than %zu "
				     "bytes", name, path, cap);
	}
	if (e != GFARM_ERR_NO_ERROR)
		return gf_error(err, e, "cannot get attribute '%s' of '%s'",
				name, path);
	*len = size;
	return 0;
}

/*
 * The hosts of the file's replicas, as gfmd records them: complete copies,
 * also on a host that is down now (its data is there, unreachable).  A
 * directory has no data and so no host, as in posix_where.
 */
static int
gf_where(const char *path, char ***hosts, size_t *n, struct gfsp_error *err)
{
	struct gf_guard g;
	struct gfs_replica_info *ri = NULL;
	gfarm_error_t e;
	char **v = NULL;
	size_t cnt = 0, i;
	int num = 0, rc;

	*hosts = NULL;
	*n = 0;
	rc = gf_ready(path, err);
	if (rc != 0)
		return rc;
	gf_enter(&g);
	e = gfs_replica_info_by_name(path,
				     GFS_REPLICA_INFO_INCLUDING_DEAD_HOST, &ri);
	if (e == GFARM_ERR_NO_ERROR) {
		num = gfs_replica_info_number(ri);
		if (num > 0 && (v = calloc((size_t)num, sizeof(*v))) == NULL)
			rc = GFSP_ENOMEM;
		for (i = 0; rc == 0 && i < (size_t)num; i++) {
			v[cnt] = strdup(gfs_replica_info_nth_host(ri, (int)i));
			if (v[cnt] == NULL)
				rc = GFSP_ENOMEM;
			else
				cnt++;
		}
		gfs_replica_info_free(ri);
	}
	gf_leave(&g);
	if (e == GFARM_ERR_IS_A_DIRECTORY)
		return 0;
	if (e != GFARM_ERR_NO_ERROR)
		return gf_error(err, e, "cannot find the replicas of '%s'",
				path);
	if (rc != 0) {
		gfsp_strv_free(v, cnt);
		return gfsp_error_set(err, GFSP_ENOMEM, "cannot find the replicas "
				     "of '%s': out of memory", path);
	}
	*hosts = v;
	*n = cnt;
	return 0;
}

/* a file's data is cached by the gfsd that holds it, on its node: out of
 * the client's reach */
static int
gf_evict(const char *path, struct gfsp_error *err)
{
	return gfsp_error_set(err, GFSP_ENOTSUP, "cannot drop '%s' from the "
			     "page cache: a Gfarm file is cached by its gfsd, "
			     "out of the client's reach", path);
}

const struct gfsp_store_ops gfsp_store_gfarm = {
	.name		= "gfarm",
	.places		= 1,
	.open		= gf_open,
	.create		= gf_create,
	.close		= gf_close,
	.pread		= gf_pread,
	.pwrite		= gf_pwrite,
	.fstat		= gf_fstat,
	.ftruncate	= gf_ftruncate,
	.fsync		= gf_fsync,
	.flush		= gf_flush,
	.stat		= gf_stat,
	.lstat		= gf_lstat,
	.readlink	= gf_readlink,
	.symlink	= gf_symlink,
	.link		= gf_link,
	.utimens	= gf_utimens,
	.fsetattr	= gf_fsetattr,
	.chmod		= gf_chmod,
	.mkdir		= gf_mkdir,
	.rmdir		= gf_rmdir,
	.unlink		= gf_unlink,
	.rename		= gf_rename,
	.replace	= gf_replace,
	.readdir	= gf_readdir,
	.remove_tree	= gfsp_remove_tree_paths,
	.mkdirs		= gfsp_mkdirs_paths,
	.setxattr	= gf_setxattr,
	.getxattr	= gf_getxattr,
	.where		= gf_where,
	.evict		= gf_evict,
};

#endif /* HAVE_GFARM */
