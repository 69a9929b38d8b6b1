/*
 * dst.c - creating a destination so that nothing is lost: a writer builds
 * its output under a temporary sibling name and installs it with a rename
 * only when it is complete; an existing destination is replaced only with
 * --force, only at that moment, and is moved aside (not deleted) until the
 * new one is in place.  Shared by the split writer and the merge engine.
 *
 *   dir/name                           the destination
 *   dir/.name.gfsplit-tmp.<pid>.<t>    being built
 *   dir/.name.gfsplit-old.<pid>.<t>    the replaced one, for a moment
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "core.h"
#include "dst.h"
#include "layout_impl.h"
#include "splitfile.h"
#include "store.h"

int
gfsp_dst_parse(struct gfsp_dst *d, const char *dst, struct gfsp_error *err)
{
	size_t n;
	char *slash;

	memset(d, 0, sizeof(*d));
	d->path = strdup(dst);
	if (d->path == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	n = strlen(d->path);
	while (n > 1 && d->path[n - 1] == '/')
		d->path[--n] = '\0';
	slash = strrchr(d->path, '/');
	d->base = slash ? slash + 1 : d->path;
	if (d->base[0] == '\0' || strcmp(d->base, ".") == 0 ||
	    strcmp(d->base, "..") == 0)
		return gfsp_error_set(err, GFSP_EINVAL,
		    "'%s': not a valid name for a destination", dst);
	n = slash ? (size_t)(slash - d->path) + 1 : 0;
	d->prefix = strndup(d->path, n);
	if (n == 0)
		d->parent = strdup(".");
	else if (n == 1 || (n >= 4 && strncmp(d->path + n - 4, ":///", 4) == 0))
		d->parent = strndup(d->path, n);	/* "/" or "scheme:///" */
	else
		d->parent = strndup(d->path, n - 1);
	if (d->prefix == NULL || d->parent == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	return 0;
}

#define FOLLOW_MAX	40	/* links, as the kernel's ELOOP */

int
gfsp_dst_follow(const char *path, char **out, struct gfsp_error *err)
{
	struct gfsp_stat st;
	char *cur, *target = NULL, *next, *slash;
	int links = 0, rc;

	*out = NULL;
	if ((cur = strdup(path)) == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	while (strstr(cur, "://") == NULL && gfsp_lstat(cur, &st, NULL) == 0 &&
	       S_ISLNK(st.mode) && (st.uid == 0 || st.uid == geteuid())) {
		if (++links > FOLLOW_MAX) {
			free(cur);
			return gfsp_error_set(err, GFSP_EINVAL, "'%s': too many "
			    "levels of symbolic links", path);
		}
		if ((rc = gfsp_readlink(cur, &target, err)) != 0) {
			free(cur);
			return rc;
		}
		slash = strrchr(cur, '/');
		if (target[0] == '/' || slash == NULL)
			next = target;
		else if (asprintf(&next, "%.*s/%s", (int)(slash - cur), cur,
				  target) < 0)
			next = NULL;
		if (next != target)
			free(target);
		target = NULL;
		free(cur);
		if ((cur = next) == NULL)
			return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	*out = cur;
	return 0;
}

int
gfsp_dst_hold(struct gfsp_dst *d, struct gfsp_error *err)
{
	int rc;

	if (d->held || strcmp(d->parent, ".") == 0 ||
	    strcmp(d->parent, "/") == 0)
		return 0;
	rc = gfsp_confine_dir(d->parent, GFSP_CONFINE_NAMES |
			      GFSP_CONFINE_SAFE, err);
	if (rc == 0)
		d->held = 1;
	return rc;
}

int
gfsp_dst_remove_tree(const char *path, struct gfsp_error *err)
{
	struct gfsp_dst d;
	int rc;

	rc = gfsp_dst_parse(&d, path, err);
	if (rc == 0)
		rc = gfsp_dst_hold(&d, err);
	if (rc == 0)
		rc = gfsp_remove_tree(d.path, err);
	gfsp_dst_free(&d);
	return rc;
}

void
gfsp_dst_free(struct gfsp_dst *d)
{
	if (d->held)
		gfsp_unconfine(d->parent);
	free(d->path);
	free(d->prefix);
	free(d->parent);
	memset(d, 0, sizeof(*d));
}

/* this node's name as one component of a file name */
static void
node_part(char *buf, size_t len)
{
	char *p;

	gfsp_node_name(buf, len);
	for (p = buf; *p != '\0'; p++)
		if (*p == '/')
			*p = '_';
}

/*
 * ".NAME.gfsplit-TAG.NODE.PID.NONCE": who made it (so that a later run on
 * that node can tell its maker is gone: gfsp_dst_sweep) and a random part
 * no one can guess and plant first.
 */
char *
gfsp_dst_sibling(const struct gfsp_dst *d, const char *tag)
{
	char node[256], *s;

	node_part(node, sizeof(node));
	if (asprintf(&s, "%s.%s.gfsplit-%s.%s.%ld.%016llx", d->prefix,
		     d->base, tag, node, (long)getpid(),
		     (unsigned long long)gfsp_random64()) < 0)
		return NULL;
	return s;
}

/* "NODE.PID.NONCE" after ".NAME.gfsplit-TAG.": 0 and its parts, or -1 */
static int
parse_sibling(const char *rest, char *node, size_t len, long *pid)
{
	const char *nonce = strrchr(rest, '.'), *dot;
	char *end;

	if (nonce == NULL || nonce == rest || strlen(nonce + 1) != 16 ||
	    strspn(nonce + 1, "0123456789abcdef") != 16)
		return -1;
	for (dot = nonce - 1; dot > rest && *dot != '.'; dot--)
		;
	if (dot == rest || (size_t)(dot - rest) >= len)
		return -1;
	*pid = strtol(dot + 1, &end, 10);
	if (*pid <= 0 || end != nonce)
		return -1;
	memcpy(node, rest, (size_t)(dot - rest));
	node[dot - rest] = '\0';
	return 0;
}

int
gfsp_dst_leftovers(const struct gfsp_dst *d, const char *tag,
		   struct gfsp_leftover **out, size_t *nout)
{
	char me[256], *pre = NULL, **names = NULL;
	struct gfsp_leftover *v = NULL;
	size_t n = 0, i, len, k = 0, cap = 0;

	*out = NULL;
	*nout = 0;
	node_part(me, sizeof(me));
	if (asprintf(&pre, ".%s.gfsplit-%s.", d->base, tag) < 0)
		return GFSP_ENOMEM;
	len = strlen(pre);
	if (gfsp_readdir(d->parent, &names, &n, NULL) != 0)
		n = 0;
	for (i = 0; i < n; i++) {
		struct gfsp_leftover x = { 0 };

		if (strncmp(names[i], pre, len) != 0 ||
		    parse_sibling(names[i] + len, x.node, sizeof(x.node),
				  &x.pid) != 0)
			continue;
		if (asprintf(&x.path, "%s%s", d->prefix, names[i]) < 0)
			break;
		x.state = strcmp(x.node, me) != 0 ? GFSP_LEFT_ELSEWHERE :
			  kill((pid_t)x.pid, 0) == 0 || errno != ESRCH ?
			  GFSP_LEFT_RUNNING : GFSP_LEFT_GONE;
		if (gfsp_grow(&v, &cap, k + 1, sizeof(*v)) != 0) {
			free(x.path);
			break;
		}
		v[k++] = x;
	}
	gfsp_strv_free(names, n);
	free(pre);
	*out = v;
	*nout = k;
	return 0;
}

void
gfsp_dst_leftovers_free(struct gfsp_leftover *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].path);
	free(v);
}

size_t
gfsp_dst_sweep(const struct gfsp_dst *d, const char *tag)
{
	struct gfsp_leftover *v;
	struct gfsp_stat st;
	size_t n, i, removed = 0;

	if (gfsp_dst_leftovers(d, tag, &v, &n) != 0)
		return 0;
	for (i = 0; i < n; i++) {
		if (v[i].state != GFSP_LEFT_GONE)
			continue;
		char sz[32];
		uint64_t bytes = gfsp_tree_bytes(v[i].path);

		/* a run that failed or was stopped removes what it made: one
		 * that left this could not run its clean-up */
		if (gfsp_lstat(v[i].path, &st, NULL) == 0 &&
		    ((S_ISDIR(st.mode) && gfsp_remove_tree(v[i].path,
							  NULL) == 0) ||
		     (S_ISREG(st.mode) && gfsp_unlink(v[i].path, NULL) == 0))) {
			gfsp_log_warn("removed '%s' (%s), left by process %ld "
				      "of this node, which ended without its "
				      "clean-up (killed: kill -9, the OOM "
				      "killer, the end of its job)", v[i].path,
				      gfsp_format_size(bytes, sz, sizeof(sz)),
				      v[i].pid);
			removed++;
		}
	}
	gfsp_dst_leftovers_free(v, n);
	return removed;
}

/* the last component of path, less suffix at its end (if more is left) */
static char *
last_name(const char *path, const char *suffix)
{
	size_t n = strlen(path), k;
	const char *b;

	while (n > 1 && path[n - 1] == '/')
		n--;
	for (b = path + n; b > path && b[-1] != '/'; b--)
		;
	k = (size_t)(path + n - b);
	if (suffix != NULL && k > strlen(suffix) &&
	    strncmp(b + k - strlen(suffix), suffix, strlen(suffix)) == 0)
		k -= strlen(suffix);
	return strndup(b, k);
}

int
gfsp_dst_resolve(MPI_Comm comm, const char *src, const char *dst,
		 const char *suffix, char **out, struct gfsp_error *err)
{
	struct gfsp_stat st;
	char *name = NULL;
	int rank, rc = 0;
	size_t n = strlen(dst);

	MPI_Comm_rank(comm, &rank);
	*out = NULL;
	if (rank == 0) {
		if (gfsp_stat(dst, &st, NULL) == 0 && S_ISDIR(st.mode) &&
		    !gfsp_has_marker(dst)) {
			name = last_name(src, suffix);
			if (name == NULL || name[0] == '\0' ||
			    strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
				rc = gfsp_error_set(err, GFSP_EINVAL, "'%s': no "
				    "name to give the copy in directory '%s' "
				    "(name the destination in full)", src, dst);
			else if (asprintf(out, "%s%s%s", dst,
					  n > 0 && dst[n - 1] == '/' ? "" : "/",
					  name) < 0)
				*out = NULL;
			free(name);
		} else {
			*out = strdup(dst);
		}
		if (rc == 0 && *out == NULL)
			rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	rc = gfsp_agree(comm, rc, err);
	if (rc == 0)
		rc = gfsp_bcast_string(comm, out, err);
	if (rc) {
		free(*out);
		*out = NULL;
	}
	return rc;
}

int
gfsp_dst_not_source(const char *src, const char *dst, struct gfsp_error *err)
{
	struct gfsp_stat a, b;

	if (gfsp_stat(src, &a, NULL) != 0 || gfsp_stat(dst, &b, NULL) != 0 ||
	    !gfsp_same_identity(&a, &b))
		return 0;
	return gfsp_error_set(err, GFSP_EINVAL, "'%s' and '%s' are the same "
	    "file: the destination cannot be the source (nothing done)", src,
	    dst);
}

/* under /dev, /proc or /sys: a device, a process's descriptor
 * (/dev/stdout), a kernel setting: nothing a copy replaces */
static int
in_system_tree(const char *real)
{
	static const char *const roots[] = { "/dev", "/proc", "/sys" };
	size_t i, n;

	for (i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		n = strlen(roots[i]);
		if (strncmp(real, roots[i], n) == 0 &&
		    (real[n] == '/' || real[n] == '\0'))
			return 1;
	}
	return 0;
}

/*
 * Is DEST a symbolic link?  --force replaces the link, as cp
 * --remove-destination and rsync do, never the file it leads to (whatever
 * that is: the link is not followed); but not a link in /dev, /proc or
 * /sys (/dev/stdout).  0: not a link; 1: a link that may go; -1 (err
 * set): refused.
 */
static int
check_link(const struct gfsp_dst *d, int force, int say,
	   struct gfsp_error *err)
{
	struct gfsp_stat lst;
	char *real_parent, *target = NULL;
	int sys;

	if (strstr(d->path, "://") != NULL ||
	    gfsp_lstat(d->path, &lst, NULL) != 0 || !S_ISLNK(lst.mode))
		return 0;
	real_parent = realpath(d->parent, NULL);
	if (real_parent == NULL) {
		gfsp_error_errno(err, errno, "'%s' is a symbolic link in a "
		    "directory that cannot be resolved (refusing to replace "
		    "it)", d->path);
		return -1;
	}
	sys = in_system_tree(real_parent);
	free(real_parent);
	if (sys) {
		gfsp_error_set(err, GFSP_EEXIST, "'%s' is a symbolic link in "
		    "/dev, /proc or /sys (refusing to replace it)", d->path);
		return -1;
	}
	if (!force) {
		gfsp_error_set(err, GFSP_EEXIST, "'%s' exists, a symbolic "
		    "link (use --force to replace the link)", d->path);
		return -1;
	}
	if (say && gfsp_readlink(d->path, &target, NULL) == 0)
		gfsp_log_verbose("'%s' is a symbolic link to '%s': --force "
				"replaces the link; '%s' is left as it is",
				d->path, target, target);
	free(target);
	return 1;
}

/*
 * May an existing destination be replaced?  Only with force, and only if
 * it is a regular file, a split directory or a symbolic link (the link
 * goes): --force never wipes an arbitrary directory, nor a device.
 */
static int
check_replaceable(const struct gfsp_dst *d, const struct gfsp_stat *st,
		  int force, int installing, struct gfsp_error *err)
{
	char *real;
	int sys = 0, link;

	link = check_link(d, force, installing, err);
	if (link != 0)
		return link < 0 ? err->code : 0;
	/* what --force would not replace either is said first */
	if (strstr(d->path, "://") == NULL) {
		real = realpath(d->path, NULL);
		sys = real != NULL && in_system_tree(real);
		free(real);
	}
	if (sys)
		return gfsp_error_set(err, GFSP_EEXIST, "'%s' exists and leads "
		    "into /dev, /proc or /sys (refusing to replace it)",
		    d->path);
	if (!S_ISREG(st->mode) && !S_ISDIR(st->mode))
		return gfsp_error_set(err, GFSP_EEXIST,
		    "'%s' exists and is not a regular file (refusing to "
		    "replace it)", d->path);
	if (S_ISDIR(st->mode) && !gfsp_has_marker(d->path))
		return gfsp_error_set(err, GFSP_EEXIST,
		    "'%s' is a directory but not a split file (refusing to "
		    "replace it)", d->path);
	if (!force)
		return gfsp_error_set(err, GFSP_EEXIST,
		    "'%s' exists (use --force to replace it)", d->path);
	return 0;
}

/*
 * Is dir inside a view of gfsplit-mount (fstype fuse.gfsplit)?  Its source
 * in src.  A split file written through the view would become a file of
 * the view before it is whole: it goes to the source directory.
 */
static int
in_gfsplit_view(const char *dir, char *src, size_t len)
{
	struct gfsp_mount m;
	struct stat st;

	if (strstr(dir, "://") != NULL || stat(dir, &st) != 0 ||
	    gfsp_mount_find(NULL, major(st.st_dev), minor(st.st_dev),
			    &m) <= 0 || strcmp(m.type, "fuse.gfsplit") != 0)
		return 0;
	snprintf(src, len, "%s", m.source);
	return 1;
}

int
gfsp_dst_check(struct gfsp_dst *d, int force, struct gfsp_error *err)
{
	char src[4096] = "its source";
	struct gfsp_stat st;
	struct gfsp_error serr = { 0 };
	int rc;

	if (in_gfsplit_view(d->parent, src, sizeof(src)))
		return gfsp_error_set(err, GFSP_EINVAL, "cannot create '%s': "
		    "'%s' is in a gfsplit-mount view (of '%s'); write the split "
		    "file into the source directory, where the view shows it "
		    "once it is whole", d->path, d->parent, src);
	rc = gfsp_stat(d->path, &st, &serr);
	d->seen_absent = rc == GFSP_ENOENT;
	d->seen_ino = rc == 0 ? st.ino : 0;
	if (rc == 0)
		return check_replaceable(d, &st, force, 0, err);
	if (rc != GFSP_ENOENT)
		return gfsp_error_set(err, rc, "%s", serr.msg);
	gfsp_error_clear(&serr);
	rc = gfsp_stat(d->parent, &st, &serr);
	if (rc)
		return gfsp_error_set(err, rc, "cannot create '%s': %s",
		    d->path, serr.msg);
	if (!S_ISDIR(st.mode))
		return gfsp_error_set(err, GFSP_ENOENT,
		    "cannot create '%s': '%s' is not a directory", d->path,
		    d->parent);
	return 0;
}

int
gfsp_dst_install(const struct gfsp_dst *d, const char *tmp, int force,
		struct gfsp_error *err)
{
	struct gfsp_stat st;
	struct gfsp_error serr = { 0 };
	char *old = NULL;
	int rc;

	rc = gfsp_stat(d->path, &st, &serr);
	/* (one that went away meanwhile is no one's copy to keep) */
	if (d->guard && rc == 0 && (d->seen_absent || st.ino != d->seen_ino))
		return gfsp_error_set(err, GFSP_EEXIST, "'%s' was %s by someone "
		    "else while this copy was being written (a handle on the "
		    "same path in another process?): it is left as it is, "
		    "and this copy is not committed", d->path,
		    d->seen_absent ? "created" : "replaced");
	if (rc == GFSP_ENOENT) {
		gfsp_error_clear(&serr);
		rc = gfsp_install(tmp, d->path, NULL, 0, &serr);
		/* a split file renamed in since the stat (the rename never
		 * replaces a directory that holds one) */
		if (rc == GFSP_EEXIST && d->guard)
			return gfsp_error_set(err, rc, "'%s' was created by "
			    "someone else while this copy was being written (a "
			    "handle on the same path in another process?): it is "
			    "left as it is, and this copy is not committed",
			    d->path);
		return rc ? gfsp_error_set(err, rc, "%s", serr.msg) : 0;
	}
	if (rc)
		return gfsp_error_set(err, rc, "%s", serr.msg);
	rc = check_replaceable(d, &st, force, 1, err);
	if (rc)
		return rc;
	old = gfsp_dst_sibling(d, "old");
	if (old == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	rc = gfsp_install(tmp, d->path, old, GFSP_PUT_ASIDE, err);
	free(old);
	return rc;
}

int
gfsp_bcast_string(MPI_Comm comm, char **s, struct gfsp_error *err)
{
	unsigned long long len;
	int rank, rc;

	MPI_Comm_rank(comm, &rank);
	len = rank == 0 ? strlen(*s) + 1 : 0;
	rc = gfsp_mpi_check(gfsp_bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, comm),
			   "MPI_Bcast", err);
	if (rc == 0 && rank != 0 && (*s = calloc(1, len)) == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	rc = gfsp_agree(comm, rc, err);
	if (rc == 0)
		rc = gfsp_mpi_check(gfsp_bcast(*s, (int)len, MPI_CHAR, 0, comm),
				   "MPI_Bcast", err);
	return rc;
}

int
gfsp_gather_text(MPI_Comm comm, const char *text, size_t len, char **all,
		struct gfsp_error *err)
{
	int rank, nprocs, k = (int)len, total = 0, r, rc;
	int *lens = NULL, *displs = NULL;

	*all = NULL;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &nprocs);
	if (rank == 0) {
		lens = calloc((size_t)nprocs, sizeof(int));
		displs = calloc((size_t)nprocs, sizeof(int));
	}
	rc = gfsp_mpi_check(gfsp_gather(&k, 1, MPI_INT, lens, 1, MPI_INT, 0,
				       comm), "MPI_Gather", err);
	if (rc == 0 && rank == 0) {
		for (r = 0; r < nprocs; r++) {
			displs[r] = total;
			total += lens[r];
		}
		*all = malloc((size_t)total + 1);
		if (*all != NULL)
			(*all)[total] = '\0';
	}
	if (rc == 0)
		rc = gfsp_mpi_check(MPI_Gatherv(text, k, MPI_CHAR, *all, lens,
						displs, MPI_CHAR, 0, comm),
				   "MPI_Gatherv", err);
	free(lens);
	free(displs);
	return rc;
}
