/*
 * store_confine.c - confined roots: the walk that resolves a path below a
 * root (gfsp_confine) without following a symbolic link, and the
 * directory each thread keeps open for it.  The POSIX backend
 * (store_posix.c) does every operation at what this resolves.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core.h"
#include "store.h"
#include "store_impl.h"

#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

/*
 * A path below a confined root (gfsp_confine) is resolved here instead of
 * by the kernel's usual walk, which follows every symbolic link:
 *
 *   "/dest/a/b/name"      root "/dest" (its descriptor, taken once)
 *          \_/           every directory on the way opened from the one
 *                         before with O_NOFOLLOW (or all at once with
 *                         openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)
 *              \__/       the operation done at (that directory, "name")
 *                         without following a final link
 *
 * So no link below the root is followed, whoever planted it and whenever:
 * the directories are held open, not looked up again by name.
 */
struct confined {
	char *root;		/* as given, without trailing slashes */
	size_t len;
	int fd;			/* O_PATH | O_DIRECTORY */
	int refs;
	int flags;		/* GFSP_CONFINE_* */
};

#define CONFINED_MAX	256	/* (a split-write holds one while it writes) */
static struct confined confined[CONFINED_MAX];
static int nconfined;
static pthread_rwlock_t confined_lock = PTHREAD_RWLOCK_INITIALIZER;

/*
 * The last directory each thread resolved below a confined root, kept
 * open: a file's transfer makes several calls in one directory (create,
 * set, rename, stat), and the files of a tree come directory by
 * directory.  Dropped when the roots change or we rename or remove a
 * directory (confined_gen).  What someone else does to the directory
 * meanwhile cannot lead out of the root: the descriptor is the directory
 * that was resolved safely, wherever it is moved.
 */
struct dircache {
	unsigned gen;
	char *dir;		/* the path up to the last '/', as given */
	size_t len;
	char *root;		/* its confined root, for messages */
	int fd;
	int pinned;		/* ats using fd now: not replaced meanwhile */
};

static unsigned confined_gen;
static pthread_key_t dircache_key;
static pthread_once_t dircache_once = PTHREAD_ONCE_INIT;

static void
dircache_free(void *p)
{
	struct dircache *dc = p;

	if (dc->fd >= 0)
		close(dc->fd);
	free(dc->dir);
	free(dc->root);
	free(dc);
}

static void
dircache_init(void)
{
	pthread_key_create(&dircache_key, dircache_free);
}

static struct dircache *
dircache(void)
{
	struct dircache *dc;

	pthread_once(&dircache_once, dircache_init);
	dc = pthread_getspecific(dircache_key);
	if (dc == NULL && (dc = calloc(1, sizeof(*dc))) != NULL) {
		dc->fd = -1;
		pthread_setspecific(dircache_key, dc);
	}
	return dc;
}

/* Something below a root changed shape: every thread's cache is stale. */
void
gfsp_dircache_drop_all(void)
{
	__atomic_add_fetch(&confined_gen, 1, __ATOMIC_RELEASE);
}

/*
 * GFSP_CONFINE_SAFE: open the directory path one component at a time
 * (O_NOFOLLOW), following a symbolic link on the way only when it is
 * root's or this user's, as the kernel's protected_symlinks does in
 * sticky directories, but everywhere: a link another user planted (or
 * swapped in) anywhere on the path is an error, EPERM, never a way for
 * root's writes to go elsewhere.  mkmode not 0: a component that is not
 * there is made (mkdirat in the directory held, mode mkmode), as mkdir -p
 * does.  -1 with errno, or the O_PATH descriptor.
 */
#define CHASE_LINKS_MAX	40

/* The component comp of directory cur, opened O_PATH without following
 * it; with mkmode, made first if it is not there.  -1 with errno. */
static int
chase_step(int cur, const char *comp, mode_t mkmode)
{
	int next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (next >= 0 || errno != ENOENT || mkmode == 0)
		return next;
	if (mkdirat(cur, comp, mkmode) != 0 && errno != EEXIST)
		return -1;
	return openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
}

int
gfsp_chase_safe(const char *path, mode_t mkmode)
{
	char *todo = NULL, *comp, *rest, *target = NULL, *t;
	struct stat sb;
	int cur, next, links = 0, e = 0;
	ssize_t n;

	if ((todo = strdup(path)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	cur = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY |
		   O_CLOEXEC);
	if (cur < 0)
		goto fail;
	for (rest = todo; rest != NULL && e == 0;) {
		comp = rest;
		rest = strchr(rest, '/');
		if (rest != NULL)
			*rest++ = '\0';
		if (*comp == '\0' || strcmp(comp, ".") == 0)
			continue;
		next = chase_step(cur, comp, mkmode);
		if (next < 0 || fstat(next, &sb) != 0) {
			e = errno;
			if (next >= 0)
				close(next);
			break;
		}
		if (!S_ISLNK(sb.st_mode)) {
			close(cur);
			cur = next;
			continue;
		}
		/* a link: whose?  Then go on with its target, then the rest */
		if ((sb.st_uid != 0 && sb.st_uid != geteuid()) ||
		    ++links > CHASE_LINKS_MAX) {
			close(next);
			e = links > CHASE_LINKS_MAX ? ELOOP : EPERM;
			break;
		}
		target = malloc(PATH_MAX);
		n = target ? readlinkat(next, "", target, PATH_MAX - 1) : -1;
		close(next);
		if (n <= 0) {
			e = n == 0 ? ENOENT : errno;
			break;
		}
		target[n] = '\0';
		if (asprintf(&t, "%s%s%s", target, rest ? "/" : "",
			     rest ? rest : "") < 0) {
			e = ENOMEM;
			break;
		}
		free(target);
		target = NULL;
		free(todo);
		todo = rest = t;
		if (todo[0] == '/') {
			close(cur);
			if ((cur = open("/", O_PATH | O_DIRECTORY |
					O_CLOEXEC)) < 0)
				goto fail;
		}
	}
	free(target);
	free(todo);
	if (e == 0 && (fstat(cur, &sb) != 0 || !S_ISDIR(sb.st_mode)))
		e = ENOTDIR;
	if (e != 0) {
		close(cur);
		errno = e;
		return -1;
	}
	return cur;
fail:
	free(todo);
	return -1;
}

/* The slot of the confined root root (its first len bytes), or nconfined;
 * under confined_lock */
static int
root_index(const char *root, size_t len)
{
	int i;

	for (i = 0; i < nconfined; i++)
		if (confined[i].len == len &&
		    strncmp(confined[i].root, root, len) == 0)
			break;
	return i;
}

/* Open root for confinement: through the confined root that holds it,
 * if one does (no link followed on the way); else, GFSP_CONFINE_SAFE,
 * by chase_safe; else as the kernel resolves it, its last component not
 * followed with GFSP_CONFINE_OWN.  -1, errno. */
static int
confine_open(const char *root, int flags)
{
	struct at a;
	int fd = -1, e;

	e = gfsp_at_get(root, &a);
	if (e == 0 && (flags & GFSP_CONFINE_SAFE) && a.dfd == AT_FDCWD) {
		fd = gfsp_chase_safe(root, 0);
		e = fd < 0 ? errno : 0;
	} else if (e == 0) {
		fd = openat(a.dfd, a.name, O_PATH | O_DIRECTORY | O_CLOEXEC |
			    ((flags & GFSP_CONFINE_OWN) || a.nofollow ?
			     O_NOFOLLOW : 0));
		e = fd < 0 ? errno : 0;
	}
	gfsp_at_put(&a);
	errno = e;
	return fd;
}

int
gfsp_confine(const char *root, struct gfsp_error *err)
{
	return gfsp_confine_dir(root, 0, err);
}

int
gfsp_confine_dir(const char *root, int flags, struct gfsp_error *err)
{
	size_t len = strlen(root);
	struct stat sb;
	int fd, i, rc = 0;

	if (strstr(root, "://") != NULL)
		return 0;
	while (len > 1 && root[len - 1] == '/')
		len--;
	if (len == 0 || (len == 1 && root[0] == '/'))
		return gfsp_error_set(err, GFSP_EINVAL, "cannot confine paths "
				     "below '%s'", root);
	fd = confine_open(root, flags);
	if (fd < 0)
		return gfsp_error_errno(err, errno, "cannot open directory "
				       "'%s'%s", root, errno == EPERM ?
				       " (a symbolic link of another user's on "
				       "the way: not followed)" :
				       errno == ELOOP || errno == ENOTDIR ?
				       " (not a directory, or a symbolic link: "
				       "not followed)" : "");
	if ((flags & GFSP_CONFINE_OWN) &&
	    (fstat(fd, &sb) != 0 || sb.st_uid != geteuid())) {
		close(fd);
		return gfsp_error_set(err, GFSP_EACCES, "directory '%s' is not "
		    "the one this run made (owned by uid %u): refusing to "
		    "work in it", root, (unsigned)sb.st_uid);
	}
	pthread_rwlock_wrlock(&confined_lock);
	i = root_index(root, len);
	if (i < nconfined) {
		confined[i].refs++;
		close(fd);
	} else if (nconfined == CONFINED_MAX ||
		   (confined[i].root = strndup(root, len)) == NULL) {
		close(fd);
		rc = gfsp_error_set(err, GFSP_ENOMEM, "cannot confine paths "
				   "below '%s': too many roots", root);
	} else {
		confined[i].len = len;
		confined[i].fd = fd;
		confined[i].refs = 1;
		confined[i].flags = flags;
		__atomic_store_n(&nconfined, nconfined + 1, __ATOMIC_RELEASE);
	}
	pthread_rwlock_unlock(&confined_lock);
	gfsp_dircache_drop_all();
	return rc;
}

void
gfsp_unconfine(const char *root)
{
	size_t len = strlen(root);
	int i;

	while (len > 1 && root[len - 1] == '/')
		len--;
	pthread_rwlock_wrlock(&confined_lock);
	i = root_index(root, len);
	if (i < nconfined && --confined[i].refs == 0) {
		close(confined[i].fd);
		free(confined[i].root);
		confined[i] = confined[nconfined - 1];
		__atomic_store_n(&nconfined, nconfined - 1, __ATOMIC_RELEASE);
	}
	pthread_rwlock_unlock(&confined_lock);
	gfsp_dircache_drop_all();
}

int
gfsp_confined_fd(const char *root)
{
	size_t len = strlen(root);
	int i, fd = -1;

	while (len > 1 && root[len - 1] == '/')
		len--;
	pthread_rwlock_rdlock(&confined_lock);
	i = root_index(root, len);
	if (i < nconfined)
		fd = fcntl(confined[i].fd, F_DUPFD_CLOEXEC, 0);
	pthread_rwlock_unlock(&confined_lock);
	return fd;
}

int
gfsp_confined_same(const char *root, int follow, uint64_t id[2],
		   struct gfsp_error *err)
{
	size_t len = strlen(root);
	struct stat held, now;
	char *name;
	int fd, rc = 0;

	if (id != NULL)
		id[0] = id[1] = 0;
	if (strstr(root, "://") != NULL)
		return 0;
	while (len > 1 && root[len - 1] == '/')
		len--;
	fd = gfsp_confined_fd(root);
	if (fd < 0)
		return gfsp_error_set(err, GFSP_EINVAL, "'%s' is not a "
				     "confined root", root);
	/* the name without its trailing slashes, which would follow a
	 * link */
	name = strndup(root, len);
	if (name == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	else if (fstat(fd, &held) != 0)
		rc = gfsp_error_errno(err, errno, "cannot stat directory '%s'",
				      root);
	else if (lstat(name, &now) != 0)
		rc = gfsp_error_errno(err, errno, "cannot stat '%s'", root);
	else if (follow && S_ISLNK(now.st_mode) && now.st_uid != geteuid() &&
		 now.st_uid != 0)
		rc = gfsp_error_set(err, GFSP_ESTALE, "'%s' is a symbolic link "
				   "of another user's (uid %u): not followed",
				   root, (unsigned)now.st_uid);
	else if (follow && S_ISLNK(now.st_mode) && stat(name, &now) != 0)
		rc = gfsp_error_errno(err, errno, "cannot stat '%s'", root);
	else if (!follow && S_ISLNK(now.st_mode))
		rc = gfsp_error_set(err, GFSP_ESTALE, "'%s' is a symbolic "
				   "link, not the directory confined", root);
	else if (now.st_dev != held.st_dev || now.st_ino != held.st_ino)
		rc = gfsp_error_set(err, GFSP_ESTALE, "'%s' is another "
				   "directory than the one confined (renamed "
				   "and replaced)", root);
	if (rc == 0 && id != NULL) {
		id[0] = (uint64_t)held.st_dev;
		id[1] = (uint64_t)held.st_ino;
	}
	free(name);
	close(fd);
	return rc;
}

/* The directory dir (components separated by '/') below rootfd, no link
 * followed: its O_PATH descriptor, or -1 with errno (ELOOP: a link). */
static int
walk_beneath(int rootfd, char *dir)
{
	char *comp, *save = NULL;
	int cur, next, e;
	struct stat sb;
#ifdef SYS_openat2
	static int have_openat2 = 1;
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS,
	};

	if (__atomic_load_n(&have_openat2, __ATOMIC_RELAXED)) {
		cur = (int)syscall(SYS_openat2, rootfd, dir, &how, sizeof(how));
		if (cur >= 0 || errno == ENOENT || errno == ENOTDIR ||
		    errno == ELOOP || errno == EXDEV || errno == EACCES)
			return cur;
		if (errno == ENOSYS || errno == EPERM)	/* old kernel, seccomp */
			__atomic_store_n(&have_openat2, 0, __ATOMIC_RELAXED);
	}
#endif
	cur = rootfd;
	for (comp = strtok_r(dir, "/", &save); comp != NULL;
	     comp = strtok_r(NULL, "/", &save)) {
		if (strcmp(comp, ".") == 0)
			continue;
		next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW |
			      O_CLOEXEC);
		e = errno;
		if (next < 0 && fstatat(cur, comp, &sb, AT_SYMLINK_NOFOLLOW) == 0
		    && S_ISLNK(sb.st_mode))
			e = ELOOP;
		if (cur != rootfd)
			close(cur);
		if (next < 0) {
			errno = e;
			return -1;
		}
		cur = next;
	}
	return cur == rootfd ? fcntl(rootfd, F_DUPFD_CLOEXEC, 0) : cur;
}

/* A hit in the thread's cache: path's directory is the cached one (and
 * its last component is no ".."). */
static int
at_cached(const char *path, struct at *a)
{
	struct dircache *dc = dircache();
	const char *name;

	if (dc == NULL || dc->fd < 0 ||
	    dc->gen != __atomic_load_n(&confined_gen, __ATOMIC_ACQUIRE) ||
	    strncmp(path, dc->dir, dc->len) != 0 || path[dc->len] != '/')
		return 0;
	name = path + dc->len + 1;
	if (*name == '\0' || strchr(name, '/') != NULL ||
	    strcmp(name, "..") == 0 || strcmp(name, ".") == 0)
		return 0;
	a->dfd = dc->fd;
	a->name = name;
	a->nofollow = 1;
	a->root = dc->root;
	a->cached = 1;
	dc->pinned++;
	return 1;
}

/* Keep a->dfd, the directory of path, as the thread's cache. */
static void
at_keep(const char *path, struct at *a)
{
	struct dircache *dc = dircache();
	const char *slash = strrchr(path, '/');
	char *dir, *root;

	if (dc == NULL || dc->pinned > 0 || slash == NULL || slash[1] == '\0' ||
	    (dir = strndup(path, (size_t)(slash - path))) == NULL)
		return;
	if ((root = strdup(a->root)) == NULL) {
		free(dir);
		return;
	}
	if (dc->fd >= 0)
		close(dc->fd);
	free(dc->dir);
	free(dc->root);
	dc->dir = dir;
	dc->len = strlen(dir);
	dc->root = root;
	dc->fd = a->dfd;
	dc->gen = __atomic_load_n(&confined_gen, __ATOMIC_ACQUIRE);
	dc->pinned = 1;
	a->cached = 1;
}

/* Is rest ("/name", "/name/") one name below its root?  What a root of
 * GFSP_CONFINE_NAMES takes. */
static int
one_name(const char *rest)
{
	const char *slash;

	while (*rest == '/')
		rest++;
	if (*rest == '\0')
		return 0;
	slash = strchr(rest, '/');
	return slash == NULL || slash[strspn(slash, "/")] == '\0';
}

/* Resolve path for an operation: 0, or an errno with a->root set when
 * the path is below a confined root. */
int
gfsp_at_get(const char *path, struct at *a)
{
	const struct confined *c = NULL;
	char *rest, *slash, *comp;
	int i, rootfd = -1, e = 0;

	memset(a, 0, sizeof(*a));
	a->dfd = AT_FDCWD;
	a->name = path;
	if (__atomic_load_n(&nconfined, __ATOMIC_ACQUIRE) == 0)
		return 0;
	if (at_cached(path, a))
		return 0;
	pthread_rwlock_rdlock(&confined_lock);
	for (i = 0; i < nconfined; i++)
		if (strncmp(path, confined[i].root, confined[i].len) == 0 &&
		    path[confined[i].len] == '/' &&
		    (!(confined[i].flags & GFSP_CONFINE_NAMES) ||
		     one_name(path + confined[i].len)) &&
		    (c == NULL || confined[i].len > c->len))
			c = &confined[i];
	rest = (char *)path + (c ? c->len : 0);
	while (c != NULL && *rest == '/')
		rest++;
	if (c != NULL && *rest != '\0') {
		rootfd = fcntl(c->fd, F_DUPFD_CLOEXEC, 0);
		/* "REST\0ROOT": the name, then the root for messages */
		a->buf = malloc(strlen(rest) + c->len + 2);
		if (a->buf != NULL) {
			strcpy(a->buf, rest);
			memcpy(a->buf + strlen(rest) + 1, c->root, c->len);
			a->buf[strlen(rest) + 1 + c->len] = '\0';
		}
	}
	pthread_rwlock_unlock(&confined_lock);
	if (c == NULL || *rest == '\0')
		return 0;	/* not below one; the root itself */
	if (rootfd < 0 || a->buf == NULL) {
		e = rootfd < 0 ? errno : ENOMEM;
		goto out;
	}
	a->root = a->buf + strlen(a->buf) + 1;
	a->nofollow = 1;
	for (i = (int)strlen(a->buf); i > 0 && a->buf[i - 1] == '/'; i--)
		a->buf[i - 1] = '\0';
	for (comp = a->buf; comp != NULL; comp = slash ? slash + 1 : NULL) {
		slash = strchr(comp, '/');
		if (strncmp(comp, "..", 2) == 0 && (comp[2] == '/' ||
						    comp[2] == '\0')) {
			e = EACCES;	/* out of the root */
			goto out;
		}
	}
	slash = strrchr(a->buf, '/');
	if (slash == NULL) {
		a->dfd = rootfd;
		a->name = a->buf;
		at_keep(path, a);
		return 0;
	}
	*slash = '\0';
	a->name = slash + 1;
	a->dfd = walk_beneath(rootfd, a->buf);
	if (a->dfd < 0)
		e = errno;
	else
		at_keep(path, a);
out:
	if (rootfd >= 0 && rootfd != a->dfd)
		close(rootfd);
	if (e && a->dfd >= 0)
		close(a->dfd);
	if (e)
		a->dfd = -1;
	return e;
}

/* "/proc/self/fd/DFD/NAME": for the calls that have no *at() form */
const char *
gfsp_at_proc(const struct at *a, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d/%s", a->dfd, a->name);
	return buf;
}

void
gfsp_at_put(struct at *a)
{
	struct dircache *dc;

	if (a->cached && (dc = pthread_getspecific(dircache_key)) != NULL)
		dc->pinned--;
	else if (a->dfd >= 0)
		close(a->dfd);
	free(a->buf);
}

/* at's flags for *at() calls that may follow a final link */
int
gfsp_at_flag(const struct at *a, int follow)
{
	return a->nofollow || !follow ? AT_SYMLINK_NOFOLLOW : 0;
}
