/*
 * safe.c - paths and directories on shared machines (core.h).
 *
 * The tools run as root or as a service account in other users'
 * directories, and beside other users in /dev/shm and /tmp.  A directory
 * the tools keep their own state in (a cache tier, the movers' registry,
 * a transfer's state directory) is trusted only when this user made it:
 * owned by the effective user, not a symbolic link, and closed to group
 * and others.  Anything else is refused with the owner's name, rather than
 * used, chmod'ed or removed: it may be someone else's trap, or someone
 * else's data.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

char *
gfsp_path_abs(const char *path)
{
	char *cwd, *s;

	if (path[0] == '/' || strstr(path, "://") != NULL)
		return strdup(path);
	while (path[0] == '.' && path[1] == '/') {
		path += 2;
		while (*path == '/')
			path++;
	}
	cwd = getcwd(NULL, 0);
	if (cwd == NULL)
		return NULL;
	if (asprintf(&s, "%s%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/",
		     strcmp(path, ".") == 0 ? "" : path) < 0)
		s = NULL;
	free(cwd);
	return s;
}

uint64_t
gfsp_random64(void)
{
	uint64_t v = 0;

	/* getrandom blocks only before the pool is first seeded */
	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		v = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
		    ((uint64_t)getpid() << 48);
	}
	return v;
}

/* "alice (uid 1001)" */
static void
owner_name(uid_t uid, char *buf, size_t len)
{
	struct passwd pw, *p = NULL;
	char tmp[1024];

	if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &p) == 0 && p != NULL)
		snprintf(buf, len, "%s (uid %u)", p->pw_name, (unsigned)uid);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
}

int
gfsp_private_fd(int fd, const char *path, struct gfsp_error *err)
{
	struct stat sb;
	char who[300];

	if (fstat(fd, &sb) != 0)
		return gfsp_error_errno(err, errno, "cannot stat '%s'", path);
	if (sb.st_uid != geteuid()) {
		owner_name(sb.st_uid, who, sizeof(who));
		return gfsp_error_set(err, GFSP_EACCES, "'%s' belongs to %s, "
		    "not to this user: refusing to use it (someone else "
		    "made it; remove it, or choose another place)", path, who);
	}
	if (sb.st_mode & 077)
		return gfsp_error_set(err, GFSP_EACCES, "'%s' has mode %04o, "
		    "open to other users: refusing to use it (chmod 700 "
		    "it, or remove it)", path, (unsigned)(sb.st_mode & 07777));
	return 0;
}

int
gfsp_private_dir(const char *path, int create, int *fdp,
		struct gfsp_error *err)
{
	return gfsp_private_dirat(AT_FDCWD, path, path, create, fdp, err);
}

int
gfsp_private_dirat(int pfd, const char *name, const char *path, int create,
		  int *fdp, struct gfsp_error *err)
{
	struct stat sb;
	int fd, rc;

	if (fdp != NULL)
		*fdp = -1;
	if (create && mkdirat(pfd, name, 0700) != 0 && errno != EEXIST)
		return gfsp_error_errno(err, errno, "cannot create '%s'", path);
	fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
	if (fd < 0) {
		if ((errno == ELOOP || errno == ENOTDIR) &&
		    fstatat(pfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(sb.st_mode))
			return gfsp_error_set(err, GFSP_EACCES, "'%s' is a "
			    "symbolic link: refusing to follow it to a "
			    "directory of ours (someone may have planted it)",
			    path);
		return gfsp_error_errno(err, errno, "cannot open directory "
				       "'%s'", path);
	}
	rc = gfsp_private_fd(fd, path, err);
	if (rc != 0 || fdp == NULL)
		close(fd);
	else
		*fdp = fd;
	return rc;
}

int
gfsp_openat_private(int dfd, const char *dir, const char *name, int flags,
		   struct gfsp_error *err)
{
	const char *sep = dir != NULL ? "/" : "";
	struct stat sb;
	int fd;

	if (dir == NULL)
		dir = "";
	do {
		fd = openat(dfd, name, flags | O_NOFOLLOW | O_NONBLOCK |
			    O_CLOEXEC, 0600);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -gfsp_error_errno(err, errno, "cannot open '%s%s%s'",
					dir, sep, name);
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_uid != geteuid() || sb.st_nlink != 1) {
		close(fd);
		return -gfsp_error_set(err, GFSP_EACCES, "'%s%s%s': not a "
		    "regular file of this user's with one name: refusing it",
		    dir, sep, name);
	}
	/* blocking again for what follows (a regular file never blocks,
	 * but flock and the stdio on top expect the usual flags) */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}
