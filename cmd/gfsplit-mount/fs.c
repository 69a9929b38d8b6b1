/*
 * fs.c - gfsplit-mount's answers to the kernel: the FUSE low-level
 * operations, each a thin adapter over the mount wing (what a node is
 * shown as), the split wing (held layouts: reads, SEEK_DATA/SEEK_HOLE)
 * and the store (everything that passes through).
 *
 * Inode numbers are the addresses of the mount wing's nodes (the root is
 * FUSE_ROOT_ID).  The mount is read-only unless -o rw (never with -o
 * allow_other, where the daemon would write with its own rights for other
 * users): then every change answers EROFS, here as well as in the kernel,
 * which is told "ro".  A split file is read-only in any case: an open for
 * writing fails with EROFS and a log line; with -o rw an ordinary file is
 * written through to the source.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>

#include "core.h"
#include "layout_impl.h"
#include "mount.h"
#include "mountfs.h"

/* A split file's attributes change only with a new commit, which is a new
 * node: the kernel may keep them long (an hour).  Everything else, and
 * every name, is looked at again after a second, as with most FUSE file
 * systems. */
#define SPLIT_ATTR_TIMEOUT	3600.0
#define PLAIN_TIMEOUT		1.0
#define IO_BLOCK		(1 << 20)	/* st_blksize: what cp reads */
/* the log line of a write refused on a split file */
#define READ_ONLY_SPLIT	"'%s': a split file is read-only through the mount " \
			"(write it with pcp-split or the MPI-IO library)"

struct handle {
	struct gfsp_mnode *node;
	struct gfsp_layout *l;		/* a split file: the version opened */
	uint64_t version;
	struct gfsp_file *f;		/* anything else */
	char *path;			/* for messages */
	int logged;			/* a failed read said once per handle */
};

struct dirhandle {
	char **names;
	size_t n;
};

static struct handle *
handle_of(const struct fuse_file_info *fi)
{
	return (struct handle *)(uintptr_t)fi->fh;
}

static struct gfsp_mfs *
fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct gfsp_mnode *
node_of(struct gfsp_mfs *fs, fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? &fs->tree.top :
	    (struct gfsp_mnode *)(uintptr_t)ino;
}

static fuse_ino_t
ino_of(struct gfsp_mfs *fs, struct gfsp_mnode *n)
{
	return n == &fs->tree.top ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
}

/* Answer with err's errno; a failure that is no everyday answer (a bad
 * split file, a lost connection: EIO and the like) gets a log line naming
 * the file and the cause. */
static void
fail(fuse_req_t req, const struct gfsp_error *err)
{
	int e = gfsp_errno_of(err);

	if (e == EIO || e == ENOMEM || e == EINTR)
		gfsp_log_error("%s", err->msg);
	else
		gfsp_log_verbose("%s", err->msg);
	fuse_reply_err(req, e != 0 ? e : EIO);
}

static void
refuse(fuse_req_t req, int e, const char *fmt, const char *path)
{
	gfsp_log_error(fmt, path);
	fuse_reply_err(req, e);
}

static void
to_stat(const struct gfsp_mentry *e, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = (ino_t)e->st.ino;
	st->st_mode = (mode_t)e->st.mode;
	st->st_nlink = (nlink_t)e->st.nlink;
	st->st_uid = (uid_t)e->st.uid;
	st->st_gid = (gid_t)e->st.gid;
	st->st_size = (off_t)e->st.size;
	st->st_blksize = IO_BLOCK;
	st->st_blocks = (blkcnt_t)((e->st.blocks_bytes + 511) / 512);
	st->st_atim.tv_sec = (time_t)e->st.atime;
	st->st_atim.tv_nsec = (long)e->st.atime_ns;
	st->st_mtim.tv_sec = (time_t)e->st.mtime;
	st->st_mtim.tv_nsec = (long)e->st.mtime_ns;
	st->st_ctim.tv_sec = (time_t)e->st.ctime;
	st->st_ctim.tv_nsec = (long)e->st.ctime_ns;
}

static double
attr_timeout(const struct gfsp_mentry *e)
{
	return e->kind == GFSP_MSPLIT ? SPLIT_ATTR_TIMEOUT : PLAIN_TIMEOUT;
}

/* lookup and everything that makes a name: one more reference to a node;
 * -1 if the answer was an error instead */
static int
reply_entry(fuse_req_t req, fuse_ino_t parent, const char *name,
	    struct fuse_file_info *created)
{
	struct gfsp_mfs *fs = fs_of(req);
	struct fuse_entry_param ep;
	struct gfsp_error err = { 0 };
	struct gfsp_mentry e;
	struct gfsp_mnode *n;

	if (gfsp_mtree_lookup(&fs->tree, node_of(fs, parent), name, &n, &e,
	    &err) != 0) {
		fail(req, &err);
		return -1;
	}
	memset(&ep, 0, sizeof(ep));
	ep.ino = ino_of(fs, n);
	ep.generation = n->gen;
	to_stat(&e, &ep.attr);
	ep.attr_timeout = attr_timeout(&e);
	ep.entry_timeout = PLAIN_TIMEOUT;
	if (created != NULL) {
		if (fuse_reply_create(req, &ep, created) != 0)
			gfsp_mtree_forget(&fs->tree, n, 1);
	} else if (fuse_reply_entry(req, &ep) != 0) {
		gfsp_mtree_forget(&fs->tree, n, 1);
	}
	return 0;
}

static void
fs_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	(void)reply_entry(req, parent, name, NULL);
}

static void
fs_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct gfsp_mfs *fs = fs_of(req);

	gfsp_mtree_forget(&fs->tree, node_of(fs, ino), nlookup);
	fuse_reply_none(req);
}

static void
fs_forget_multi(fuse_req_t req, size_t count,
		struct fuse_forget_data *forgets)
{
	struct gfsp_mfs *fs = fs_of(req);
	size_t i;

	for (i = 0; i < count; i++)
		gfsp_mtree_forget(&fs->tree, node_of(fs, forgets[i].ino),
		    forgets[i].nlookup);
	fuse_reply_none(req);
}

static void
fs_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct gfsp_mfs *fs = fs_of(req);
	struct gfsp_mnode *n = node_of(fs, ino);
	struct gfsp_error err = { 0 };
	struct gfsp_mentry e;
	struct stat st;

	/* fstat of a split file open: the version it holds, whatever the
	 * name leads to now */
	if (fi != NULL && handle_of(fi)->l != NULL) {
		to_stat(&n->e, &st);
		fuse_reply_attr(req, &st, SPLIT_ATTR_TIMEOUT);
		return;
	}
	if (gfsp_mtree_stat(&fs->tree, n, &e, NULL, &err) != 0) {
		fail(req, &err);
		return;
	}
	to_stat(&e, &st);
	fuse_reply_attr(req, &st, attr_timeout(&e));
}

/* The node's source path for a change through the mount, or an answer:
 * EROFS on a read-only mount, and on a split file (with a log line). */
static char *
writable(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct gfsp_mfs *fs = fs_of(req);
	struct gfsp_mnode *n = node_of(fs, ino);
	char *path;

	if (fs->readonly) {
		fuse_reply_err(req, EROFS);
		return NULL;
	}
	path = gfsp_mtree_path(&fs->tree, n, name);
	if (path == NULL) {
		fuse_reply_err(req, ENOMEM);
		return NULL;
	}
	if (name == NULL && n->e.kind != GFSP_MPLAIN) {
		refuse(req, EROFS, READ_ONLY_SPLIT, path);
		free(path);
		return NULL;
	}
	return path;
}

static void
fs_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
	   struct fuse_file_info *fi)
{
	struct gfsp_error err = { 0 };
	struct gfsp_file *f = NULL;
	struct timespec now;
	struct gfsp_stat cur;
	char *path = writable(req, ino, NULL);
	int rc = 0;

	if (path == NULL)
		return;
	if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		free(path);
		fuse_reply_err(req, EPERM);	/* no chown through it */
		return;
	}
	if (to_set & FUSE_SET_ATTR_MODE)
		rc = gfsp_chmod(path, attr->st_mode, &err);
	if (rc == 0 && (to_set & FUSE_SET_ATTR_SIZE)) {
		if (fi != NULL && handle_of(fi)->f != NULL)
			rc = gfsp_ftruncate(handle_of(fi)->f,
			    (uint64_t)attr->st_size, &err);
		else if ((rc = gfsp_open(path, GFSP_O_WRONLY, 0, &f,
		    &err)) == 0) {
			rc = gfsp_ftruncate(f, (uint64_t)attr->st_size, &err);
			if (gfsp_close(f, &err) != 0 && rc == 0)
				rc = err.code;
		}
	}
	if (rc == 0 && (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME))) {
		/* the time not given stays as it is */
		clock_gettime(CLOCK_REALTIME, &now);
		rc = gfsp_stat(path, &cur, &err);
		if (rc == 0) {
			struct timespec a = { (time_t)cur.atime,
					      (long)cur.atime_ns };
			struct timespec m = { (time_t)cur.mtime,
					      (long)cur.mtime_ns };

			if (to_set & FUSE_SET_ATTR_ATIME)
				a = to_set & FUSE_SET_ATTR_ATIME_NOW ? now :
				    attr->st_atim;
			if (to_set & FUSE_SET_ATTR_MTIME)
				m = to_set & FUSE_SET_ATTR_MTIME_NOW ? now :
				    attr->st_mtim;
			rc = gfsp_utimens(path, a.tv_sec, (uint64_t)a.tv_nsec,
			    m.tv_sec, (uint64_t)m.tv_nsec, &err);
		}
	}
	free(path);
	if (rc)
		fail(req, &err);
	else
		fs_getattr(req, ino, NULL);
}

static void
fs_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct gfsp_mfs *fs = fs_of(req);
	struct gfsp_error err = { 0 };
	char *path, *target = NULL;

	path = gfsp_mtree_path(&fs->tree, node_of(fs, ino), NULL);
	if (path == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (gfsp_readlink(path, &target, &err) != 0)
		fail(req, &err);
	else
		fuse_reply_readlink(req, target);
	free(target);
	free(path);
}

static void
fs_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct gfsp_error err = { 0 };
	char *path = writable(req, parent, name);

	if (path == NULL)
		return;
	if (gfsp_mkdir(path, mode & 07777, &err) != 0)
		fail(req, &err);
	else
		reply_entry(req, parent, name, NULL);
	free(path);
}

static void
fs_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
	   const char *name)
{
	struct gfsp_error err = { 0 };
	char *path = writable(req, parent, name);

	if (path == NULL)
		return;
	if (gfsp_symlink(link, path, &err) != 0)
		fail(req, &err);
	else
		reply_entry(req, parent, name, NULL);
	free(path);
}

static void
fs_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t parent, const char *name)
{
	struct gfsp_error err = { 0 };
	char *from = writable(req, ino, NULL), *to;

	if (from == NULL)
		return;
	to = writable(req, parent, name);
	if (to != NULL && gfsp_link(from, to, &err) != 0)
		fail(req, &err);
	else if (to != NULL)
		reply_entry(req, parent, name, NULL);
	free(from);
	free(to);
}

/* unlink and rmdir: what goes is plain (a split file goes with rm -r of
 * its directory in the source, not through the mount) */
static void
remove_name(fuse_req_t req, fuse_ino_t parent, const char *name, int dir)
{
	struct gfsp_mfs *fs = fs_of(req);
	struct gfsp_error err = { 0 };
	struct gfsp_mentry e;
	char *path = writable(req, parent, name);
	int rc;

	if (path == NULL)
		return;
	rc = gfsp_mentry_stat(path, &e, NULL, &err);
	if (rc == 0 && e.kind != GFSP_MPLAIN) {
		refuse(req, EROFS, "'%s': a split file is not removed through "
		    "the mount (remove its directory in the source)", path);
		free(path);
		return;
	}
	if (rc == 0)
		rc = dir ? gfsp_rmdir(path, &err) : gfsp_unlink(path, &err);
	free(path);
	if (rc) {
		fail(req, &err);
		return;
	}
	gfsp_mtree_removed(&fs->tree, node_of(fs, parent), name);
	fuse_reply_err(req, 0);
}

static void
fs_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, 0);
}

static void
fs_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, 1);
}

/* A split file may be renamed: its directory moves whole. */
static void
fs_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
	  fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	struct gfsp_mfs *fs = fs_of(req);
	struct gfsp_error err = { 0 };
	char *from, *to;
	int rc;

	if (flags & ~RENAME_NOREPLACE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (fs->readonly) {
		fuse_reply_err(req, EROFS);
		return;
	}
	from = gfsp_mtree_path(&fs->tree, node_of(fs, parent), name);
	to = gfsp_mtree_path(&fs->tree, node_of(fs, newparent), newname);
	if (from == NULL || to == NULL) {
		free(from);
		free(to);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* the store never replaces a name: an existing one is EEXIST */
	rc = gfsp_rename(from, to, &err);
	free(from);
	free(to);
	if (rc) {
		fail(req, &err);
		return;
	}
	gfsp_mtree_moved(&fs->tree, node_of(fs, parent), name,
	    node_of(fs, newparent), newname);
	fuse_reply_err(req, 0);
}

/* ------------------------------------------------------------- files */

static int
store_flags(int flags)
{
	int f = (flags & O_ACCMODE) == O_WRONLY ? GFSP_O_WRONLY :
	    (flags & O_ACCMODE) == O_RDWR ? GFSP_O_RDWR : GFSP_O_RDONLY;

	if (flags & O_TRUNC)
		f |= GFSP_O_TRUNC;
	if (flags & O_CREAT)
		f |= GFSP_O_CREAT;
	if (flags & O_EXCL)
		f |= GFSP_O_EXCL;
	return f;
}

static void
handle_free(struct handle *h)
{
	struct gfsp_error err = { 0 };

	if (h == NULL)
		return;
	gfsp_layout_close(h->l);
	if (h->f != NULL && gfsp_close(h->f, &err) != 0)
		gfsp_log_error("%s", err.msg);
	free(h->path);
	free(h);
}

/*
 * May the caller of req read split file path (l: held open, or NULL for
 * one that cannot be opened) as she could directly?  The kernel let her
 * in by the bits shown, which may be an hour old and cannot know her
 * groups; the daemon reads with its own rights (root's, with allow_other),
 * so it asks again of every file, for her.  0, or GFSP_EACCES.
 */
static int
caller_may_read(fuse_req_t req, const char *path, struct gfsp_layout *l,
		struct gfsp_error *err)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct gfsp_mcaller who = { ctx->uid, ctx->gid, NULL, 0 };
	uint32_t *groups = NULL;
	gid_t *list = NULL, *more;
	int n = 0, size = 32, i, rc;

	/* root needs no groups; anyone else's come from /proc, and a
	 * caller whose groups cannot be read is kept out, not taken for a
	 * member of none (a group's bits may be narrower than others') */
	while (ctx->uid != 0) {
		more = realloc(list, (size_t)size * sizeof(*list));
		if (more == NULL) {
			free(list);
			return gfsp_error_set(err, GFSP_ENOMEM,
			    "out of memory");
		}
		list = more;
		n = fuse_req_getgroups(req, size, list);
		if (n <= size)
			break;
		size = n;
	}
	if (n < 0) {
		free(list);
		return gfsp_error_errno(err, EACCES, "'%s': the groups of "
		    "uid %u cannot be read (%s)", path, (unsigned)ctx->uid,
		    strerror(-n));
	}
	if (n > 0 && (groups = malloc((size_t)n * sizeof(*groups))) == NULL) {
		free(list);
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++)
		groups[i] = (uint32_t)list[i];
	who.groups = groups;
	who.ngroups = (size_t)n;
	rc = gfsp_msplit_access(path, l, &who, err);
	free(groups);
	free(list);
	return rc;
}

/* Open a split file: the version its node was looked up as, or ESTALE
 * (the kernel then looks the name up again and opens what is there). */
static int
open_split(struct gfsp_mfs *fs, struct handle *h, struct gfsp_error *err)
{
	int rc;

	rc = gfsp_layout_open_held(h->path, &h->l, &h->version, err);
	if (rc == 0 && h->version != h->node->e.version) {
		gfsp_layout_close(h->l);
		h->l = NULL;
		return gfsp_error_set(err, GFSP_ESTALE, "'%s' was committed "
		    "again since it was looked up", h->path);
	}
	if (rc == 0 && fs->verify == GFSP_MVERIFY_FIRST)
		gfsp_layout_set_verify(h->l, 1);
	else if (rc == 0 && fs->verify == GFSP_MVERIFY_READ &&
	    (rc = gfsp_layout_set_readcheck(h->l, err)) != 0) {
		gfsp_layout_close(h->l);
		h->l = NULL;
	}
	if (rc && rc != GFSP_ESTALE && rc != GFSP_ENOMEM) {
		/* whatever is wrong with the split file: EIO, and the
		 * cause in the log */
		gfsp_log_error("cannot open '%s': %s", h->path, err->msg);
		err->code = GFSP_EIO;
		err->sys = 0;
	}
	return rc;
}

static void
fs_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct gfsp_mfs *fs = fs_of(req);
	struct gfsp_mnode *n = node_of(fs, ino);
	struct gfsp_error err = { 0 };
	struct gfsp_mentry e;
	struct handle *h;
	int rc;

	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	h->node = n;
	rc = gfsp_mtree_stat(&fs->tree, n, &e, &h->path, &err);
	if (rc == 0 && e.kind != GFSP_MPLAIN &&
	    ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC))) {
		refuse(req, EROFS, READ_ONLY_SPLIT, h->path);
		handle_free(h);
		return;
	}
	if (rc == 0 && e.kind == GFSP_MBADSPLIT) {
		/* the marker's trouble, said again with its cause (to whom
		 * could read the marker) */
		rc = caller_may_read(req, h->path, NULL, &err);
		if (rc == 0)
			rc = open_split(fs, h, &err);
		if (rc == 0)
			rc = gfsp_error_set(&err, GFSP_EIO, "'%s': unreadable "
			    "split file", h->path);
	} else if (rc == 0 && e.kind == GFSP_MSPLIT) {
		rc = open_split(fs, h, &err);
		if (rc == 0)
			rc = caller_may_read(req, h->path, h->l, &err);
		/* sealed: the kernel may keep what it read of this version */
		fi->keep_cache = 1;
	} else if (rc == 0) {
		if (fs->readonly && (fi->flags & O_ACCMODE) != O_RDONLY)
			rc = gfsp_error_errno(&err, EROFS, "'%s': the mount is "
			    "read-only", h->path);
		else	/* the file looked up, not what its name is now */
			rc = gfsp_open_listed(h->path, store_flags(fi->flags &
			    ~(O_CREAT | O_EXCL)), &e.st, 0, &h->f, &err);
	}
	if (rc) {
		handle_free(h);
		if (err.code == GFSP_EIO)
			fuse_reply_err(req, EIO);	/* logged */
		else
			fail(req, &err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)h;
	if (fuse_reply_open(req, fi) != 0)
		handle_free(h);
}

static void
fs_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	  struct fuse_file_info *fi)
{
	struct gfsp_error err = { 0 };
	struct handle *h;
	char *path = writable(req, parent, name);

	if (path == NULL)
		return;
	h = calloc(1, sizeof(*h));
	if (h == NULL) {
		free(path);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	h->path = path;
	if (gfsp_open(path, store_flags(fi->flags | O_CREAT), mode & 07777,
	    &h->f, &err) != 0) {
		handle_free(h);
		fail(req, &err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)h;
	/* created, but gone before it could be looked up: no handle */
	if (reply_entry(req, parent, name, fi) != 0)
		handle_free(h);
}

/*
 * A read of a split file without copies: the extents of [off, off + size)
 * as pieces of the parts' descriptors (and zeros for holes), which libfuse
 * splices into the kernel's answer.  1 if answered; 0 if it cannot be done
 * so (a part with no descriptor: Gfarm; a part shorter than its extent;
 * -o verify, which must read the part first; the default's check of the
 * parts as they are read through, which must see the bytes, until every
 * part is checked or given up): the caller copies.
 */
static int
read_spliced(fuse_req_t req, struct handle *h, size_t size, off_t off)
{
	struct gfsp_error err = { 0 };
	struct gfsp_extent *ext = NULL;
	struct fuse_bufvec *bv = NULL;
	struct gfsp_file *f;
	struct stat st;
	uint64_t lsize = gfsp_layout_size(h->l), len;
	size_t n = 0, i;
	char *zeros = NULL;
	int fd, done = 0;

	if ((uint64_t)off >= lsize) {
		fuse_reply_buf(req, NULL, 0);
		return 1;
	}
	len = GFSP_MIN((uint64_t)size, lsize - (uint64_t)off);
	if (gfsp_layout_map(h->l, (uint64_t)off, len, &ext, &n, &err) != 0 ||
	    n == 0)
		goto out;
	bv = calloc(1, sizeof(*bv) + n * sizeof(bv->buf[0]));
	if (bv == NULL)
		goto out;
	bv->count = n;
	for (i = 0; i < n; i++) {
		struct fuse_buf *b = &bv->buf[i];

		b->size = (size_t)ext[i].len;
		if (ext[i].part < 0) {
			if (zeros == NULL && (zeros = calloc(1, len)) == NULL)
				goto out;
			b->mem = zeros;
			continue;
		}
		/* a part cut short since it was opened would splice fewer
		 * bytes without an error: the copy reports it (EIO) */
		if (gfsp_layout_part(h->l, ext[i].part, &f, &err) != 0 ||
		    (fd = gfsp_file_fd(f)) < 0 || fstat(fd, &st) != 0 ||
		    (uint64_t)st.st_size < ext[i].loff + ext[i].len)
			goto out;
		b->flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK | FUSE_BUF_FD_RETRY;
		b->fd = fd;
		b->pos = (off_t)ext[i].loff;
	}
	fuse_reply_data(req, bv, FUSE_BUF_SPLICE_MOVE);
	done = 1;
out:
	free(zeros);
	free(bv);
	free(ext);
	return done;
}

static void
fs_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct gfsp_error err = { 0 };
	uint64_t got = 0;
	size_t done = 0;
	char *buf;
	int rc;

	if (h->l != NULL && fs_of(req)->verify != GFSP_MVERIFY_FIRST &&
	    gfsp_layout_readcheck_pending(h->l) == 0 && read_spliced(req, h,
	    size, off))
		return;

	buf = malloc(size > 0 ? size : 1);
	if (buf == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (h->l != NULL) {
		rc = gfsp_layout_pread(h->l, buf, size, (uint64_t)off, &got,
		    &err);
		done = (size_t)got;
	} else {
		rc = gfsp_pread(h->f, buf, size, (uint64_t)off, &done, &err);
	}
	if (rc == 0) {
		fuse_reply_buf(req, buf, done);
	} else if (h->l != NULL) {
		/* a part missing, short, or failing its checksum: EIO;
		 * the cause once in the log */
		if (!__atomic_exchange_n(&h->logged, 1, __ATOMIC_ACQ_REL))
			gfsp_log_error("cannot read '%s' at offset %lld: %s",
			    h->path, (long long)off, err.msg);
		fuse_reply_err(req, gfsp_errno_of(&err) == ENOMEM ? ENOMEM :
		    EIO);
	} else {
		fail(req, &err);
	}
	free(buf);
}

static void
fs_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
	 off_t off, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct gfsp_error err = { 0 };

	if (h->f == NULL) {
		fuse_reply_err(req, EBADF);
		return;
	}
	if (gfsp_pwrite(h->f, buf, size, (uint64_t)off, &err) != 0)
		fail(req, &err);
	else
		fuse_reply_write(req, size);
}

static void
fs_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct gfsp_error err = { 0 };

	if (h->f != NULL && gfsp_flush(h->f, &err) != 0)
		fail(req, &err);
	else
		fuse_reply_err(req, 0);
}

static void
fs_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
	 struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct gfsp_error err = { 0 };

	if (h->f != NULL && gfsp_fsync(h->f, &err) != 0)
		fail(req, &err);
	else
		fuse_reply_err(req, 0);
}

static void
fs_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct gfsp_error err = { 0 };
	int rc = 0;

	/* a written file's close is where a store may fail last */
	if (h->f != NULL) {
		rc = gfsp_close(h->f, &err);
		h->f = NULL;
		if (rc)
			gfsp_log_error("%s", err.msg);
	}
	handle_free(h);
	fuse_reply_err(req, 0);
}

static void
fs_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
	 struct fuse_file_info *fi)
{
	struct handle *h = handle_of(fi);
	struct gfsp_error err = { 0 };
	struct gfsp_stat st;
	uint64_t at = 0;
	int found = 0, rc;

	if (whence != SEEK_DATA && whence != SEEK_HOLE) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (off < 0) {
		fuse_reply_err(req, ENXIO);
		return;
	}
	if (h->l != NULL) {
		rc = gfsp_layout_seek(h->l, (uint64_t)off,
		    whence == SEEK_DATA, &at, &found, &err);
	} else if (gfsp_file_fd(h->f) >= 0) {
		/* a plain file: its own holes, as the kernel tells them */
		off_t r = lseek(gfsp_file_fd(h->f), off, whence);

		rc = 0;
		found = r >= 0;
		at = r >= 0 ? (uint64_t)r : 0;
		if (r < 0 && errno != ENXIO)
			rc = gfsp_error_errno(&err, errno, "lseek");
	} else {
		/* (a store that cannot tell: all data, then the hole at
		 * its end) */
		rc = gfsp_fstat(h->f, &st, &err);
		found = rc == 0 && (uint64_t)off < st.size;
		at = whence == SEEK_DATA ? (uint64_t)off : st.size;
	}
	if (rc)
		fail(req, &err);
	else if (!found)
		fuse_reply_err(req, ENXIO);
	else
		fuse_reply_lseek(req, (off_t)at);
}

/* -------------------------------------------------------- directories */

static void
fs_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct gfsp_mfs *fs = fs_of(req);
	struct gfsp_error err = { 0 };
	struct gfsp_mentry e;
	struct dirhandle *d;
	char *path = NULL;
	int rc;

	rc = gfsp_mtree_stat(&fs->tree, node_of(fs, ino), &e, &path, &err);
	if (rc == 0 && (e.kind != GFSP_MPLAIN || !S_ISDIR(e.st.mode))) {
		free(path);
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	d = rc == 0 ? calloc(1, sizeof(*d)) : NULL;
	if (rc == 0 && d == NULL)
		rc = gfsp_error_set(&err, GFSP_ENOMEM, "out of memory");
	if (rc == 0)
		rc = gfsp_readdir(path, &d->names, &d->n, &err);
	free(path);
	if (rc) {
		free(d);
		fail(req, &err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	fi->cache_readdir = 0;
	if (fuse_reply_open(req, fi) != 0) {
		gfsp_strv_free(d->names, d->n);
		free(d);
	}
}

/* Entries at offsets 1 ("."), 2 (".."), then 3.. the names; the type is
 * left unknown (a split file is a directory in the source): who needs it
 * looks the name up.  The inode number is a stand-in (the entry's place),
 * never 0, which readdir(3) skips; stat tells the real one. */
static void
fs_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	   struct fuse_file_info *fi)
{
	struct dirhandle *d = (struct dirhandle *)(uintptr_t)fi->fh;
	struct stat st;
	size_t used = 0, n;
	char *buf = malloc(size);
	const char *name;
	off_t i;

	if (buf == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	memset(&st, 0, sizeof(st));
	for (i = off; i < (off_t)d->n + 2; i++) {
		name = i == 0 ? "." : i == 1 ? ".." : d->names[i - 2];
		st.st_ino = (ino_t)(i + 1);
		n = fuse_add_direntry(req, buf + used, size - used, name, &st,
		    i + 1);
		if (n > size - used)
			break;
		used += n;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void
fs_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dirhandle *d = (struct dirhandle *)(uintptr_t)fi->fh;

	gfsp_strv_free(d->names, d->n);
	free(d);
	fuse_reply_err(req, 0);
}

static void
fs_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct gfsp_mfs *fs = fs_of(req);
	struct statvfs sv;

	/* a POSIX source: its file system's; Gfarm's is not told here */
	memset(&sv, 0, sizeof(sv));
	if (!fs->tree.confined || statvfs(fs->tree.root, &sv) != 0) {
		sv.f_bsize = IO_BLOCK;
		sv.f_frsize = 4096;
	}
	sv.f_namemax = 255;
	fuse_reply_statfs(req, &sv);
}

/* ------------------------------------------------ extended attributes */

/* xattr: NULL name lists them */
static void
xattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct gfsp_mfs *fs = fs_of(req);
	struct gfsp_mnode *n = node_of(fs, ino);
	struct gfsp_error err = { 0 };
	struct gfsp_layout *l = NULL;
	struct gfsp_mentry e;
	char *path = NULL, *val = NULL;
	size_t len = 0;
	int rc;

	rc = gfsp_mtree_stat(&fs->tree, n, &e, &path, &err);
	/* a split file has its user.gfsplit.* ones only: any other name
	 * (system.posix_acl_access, security.selinux: ls -l asks for them
	 * of every file) is answered without loading the layout */
	if (rc == 0 && e.kind != GFSP_MPLAIN && name != NULL &&
	    strncmp(name, "user.gfsplit.", 13) != 0) {
		free(path);
		fuse_reply_err(req, ENODATA);
		return;
	}
	if (rc == 0 && e.kind == GFSP_MPLAIN) {
		/* a plain file's own: passed through; no list of them */
		if (name == NULL) {
			free(path);
			if (size == 0)
				fuse_reply_xattr(req, 0);
			else
				fuse_reply_buf(req, NULL, 0);
			return;
		}
		len = 65536;
		val = malloc(len);
		rc = val == NULL ? gfsp_error_set(&err, GFSP_ENOMEM,
		    "out of memory") : gfsp_getxattr(path, name, val, &len,
		    &err);
	} else if (rc == 0 && name == NULL && e.kind == GFSP_MSPLIT) {
		/* the names are the same for every split file: no load */
		rc = gfsp_mxattr(NULL, path, NULL, &val, &len, &err);
	} else if (rc == 0) {
		rc = gfsp_layout_open(path, &l, &err);
		if (rc == 0 && l->version != n->e.version)
			rc = gfsp_error_set(&err, GFSP_ESTALE, "'%s' changed",
			    path);
		/* the values come from the marker and the location files:
		 * for whom may read those */
		if (rc == 0)
			rc = caller_may_read(req, path, l, &err);
		if (rc == 0)
			rc = gfsp_mxattr(l, path, name, &val, &len, &err);
		gfsp_layout_close(l);
	}
	free(path);
	if (rc == GFSP_ENOENT && name != NULL)
		fuse_reply_err(req, ENODATA);
	else if (rc)
		fail(req, &err);
	else if (size == 0)
		fuse_reply_xattr(req, len);
	else if (size < len)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, val, len);
	free(val);
}

static void
fs_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	xattr(req, ino, name, size);
}

static void
fs_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	xattr(req, ino, NULL, size);
}

static void
fs_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
	    const char *value, size_t size, int flags)
{
	struct gfsp_error err = { 0 };
	char *path = writable(req, ino, NULL);

	if (path == NULL)
		return;
	if (gfsp_setxattr(path, name, value, size, &err) != 0)
		fail(req, &err);
	else
		fuse_reply_err(req, 0);
	free(path);
}

/* ---------------------------------------------------------- the session */

static void
fs_init(void *userdata, struct fuse_conn_info *conn)
{
	/* reads of a megabyte in one request, and readahead as long */
	conn->max_write = IO_BLOCK;
	conn->max_readahead = IO_BLOCK;
	conn->max_background = 64;
	conn->want |= FUSE_CAP_ASYNC_READ;
	/* parts' bytes spliced into the answer, not copied (read_spliced) */
	if (conn->capable & FUSE_CAP_SPLICE_WRITE)
		conn->want |= FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE;
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
}

const struct fuse_lowlevel_ops gfsp_mfs_ops = {
	.init = fs_init,
	.lookup = fs_lookup,
	.forget = fs_forget,
	.forget_multi = fs_forget_multi,
	.getattr = fs_getattr,
	.setattr = fs_setattr,
	.readlink = fs_readlink,
	.mkdir = fs_mkdir,
	.unlink = fs_unlink,
	.rmdir = fs_rmdir,
	.symlink = fs_symlink,
	.rename = fs_rename,
	.link = fs_link,
	.open = fs_open,
	.read = fs_read,
	.write = fs_write,
	.flush = fs_flush,
	.release = fs_release,
	.fsync = fs_fsync,
	.opendir = fs_opendir,
	.readdir = fs_readdir,
	.releasedir = fs_releasedir,
	.statfs = fs_statfs,
	.setxattr = fs_setxattr,
	.getxattr = fs_getxattr,
	.listxattr = fs_listxattr,
	.create = fs_create,
	.lseek = fs_lseek,
};
