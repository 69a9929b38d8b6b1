/*
 * mover_client.c - the side of the background mover (mover.c) that a
 * command runs: the registry of each node's movers, requests to a mover
 * over its socket (status, flush, wait), what a mover that is gone left
 * unsaved, and starting one (posix_spawn, in a session of its own).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "core.h"
#include "dst.h"
#include "stage.h"
#include "mover_impl.h"

#define OOM(err) gfsp_error_set(err, GFSP_ENOMEM, "out of memory")
#define WAIT_TRIES	3	/* passes that may fail before wait gives up */

extern char **environ;

/* ------------------------------------------------------ the registry */

const char *
gfsp_mover_registry(void)
{
	static char dir[PATH_MAX];
	const char *e = getenv("GFSPLIT_MOVER_DIR");
	char *abs;

	if (dir[0] != '\0')
		return dir;
	if (e != NULL && *e != '\0') {
		/* absolute: the mover works from its state directory */
		abs = gfsp_path_abs(e);
		snprintf(dir, sizeof(dir), "%s", abs ? abs : e);
		free(abs);
	} else {
		snprintf(dir, sizeof(dir), "/tmp/gfsplit-movers-%u",
			 (unsigned)geteuid());
	}
	return dir;
}

/* "REGISTRY/NODE.HASH" of a state directory (malloc'd) */
char *
gfsp_mover_entry(const char *node, const char *state)
{
	char *s;

	if (asprintf(&s, "%s/%s.%016llx", gfsp_mover_registry(), node,
		     (unsigned long long)gfsp_hash64(state, strlen(state))) < 0)
		return NULL;
	return s;
}

/* --------------------------------------------------------- requests */

/*
 * Connect to the mover of state directory `state`: the socket, or minus
 * a GFSP_E* code (GFSP_ENOENT: none answers).  Only a state directory of
 * our own is trusted, and only a mover of ours at the other end (its
 * credentials, from the kernel): someone else's process could otherwise
 * answer "done" while ours still has data pending.
 */
static int
connect_mover(const char *state, struct gfsp_error *err)
{
	struct sockaddr_un sa;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int fd, dfd, rc;

	/* a long state path: reach the socket through the directory's fd */
	dfd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -gfsp_error_errno(err, errno, "no mover runs for '%s'",
					state);
	rc = gfsp_private_fd(dfd, state, err);
	if (rc) {
		close(dfd);
		return -rc;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dfd,
		 GFSP_MOVER_SOCK);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		fd = -gfsp_error_set(err, GFSP_ENOENT, "no mover runs for "
				     "'%s'", state);
	} else if (fd >= 0 && (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred,
					  &clen) != 0 ||
				cred.uid != geteuid())) {
		close(fd);
		fd = -gfsp_error_set(err, GFSP_EACCES, "'%s/%s' is not a mover "
		    "of this user's (uid %u answers): refusing its answer",
		    state, GFSP_MOVER_SOCK, (unsigned)cred.uid);
	} else if (fd < 0) {
		fd = -gfsp_error_errno(err, errno, "cannot make a socket");
	}
	close(dfd);
	return fd;
}

int
gfsp_mover_request(const char *state, const char *req, json_object **reply,
		  struct gfsp_error *err)
{
	char buf[4096], *text = NULL;
	size_t len = 0;
	ssize_t n;
	FILE *mem;
	int fd;

	*reply = NULL;
	fd = connect_mover(state, err);
	if (fd < 0)
		return -fd;
	if (dprintf(fd, "%s\n", req) < 0) {
		close(fd);
		return gfsp_error_errno(err, errno, "cannot ask the mover of "
				       "'%s'", state);
	}
	shutdown(fd, SHUT_WR);
	mem = open_memstream(&text, &len);
	if (mem == NULL) {
		close(fd);
		return OOM(err);
	}
	/* a flush or a wait answers when its work is done: no timeout */
	while ((n = read(fd, buf, sizeof(buf))) > 0 ||
	       (n < 0 && errno == EINTR))
		if (n > 0)
			fwrite(buf, 1, (size_t)n, mem);
	close(fd);
	fclose(mem);
	*reply = json_tokener_parse(text ? text : "");
	free(text);
	if (*reply == NULL)
		return gfsp_error_set(err, GFSP_EIO, "the mover of '%s' ended "
				     "without an answer (see %s/mover.log)",
				     state, state);
	return 0;
}

int
gfsp_mover_list(const char *node, char ***states, size_t *n,
	       struct gfsp_error *err)
{
	const char *reg = gfsp_mover_registry();
	char **names = NULL, *p, *path;
	size_t nn = 0, i, k = 0, len = strlen(node);
	int rc;

	*states = NULL;
	*n = 0;
	/* its entries read from the registry as checked (held), not by
	 * its name again */
	rc = gfsp_hold_private(reg, err);
	if (rc == GFSP_ENOENT) {
		gfsp_error_clear(err);
		return 0;
	}
	if (rc)
		return rc;
	if (asprintf(&p, "%s/.", reg) < 0)	/* the held directory */
		rc = OOM(err);
	else {
		rc = gfsp_readdir(p, &names, &nn, err);
		free(p);
	}
	if (rc == 0 && (*states = calloc(nn + 1, sizeof(char *))) == NULL)
		rc = OOM(err);
	for (i = 0; rc == 0 && i < nn; i++) {
		if (strncmp(names[i], node, len) != 0 || names[i][len] != '.')
			continue;
		if (asprintf(&p, "%s/%s", reg, names[i]) < 0)
			continue;
		if (gfsp_readlink(p, &path, NULL) == 0)
			(*states)[k++] = path;
		free(p);
	}
	gfsp_strv_free(names, nn);
	gfsp_unconfine(reg);
	*n = k;
	return rc;
}

void
gfsp_mover_forget(const char *node, const char *state)
{
	char *reg = gfsp_mover_entry(node, state), *path = NULL;
	struct gfsp_error e = { 0 };
	int fd;

	if (reg == NULL || gfsp_hold_private(gfsp_mover_registry(), &e) != 0) {
		free(reg);
		return;
	}
	if (gfsp_readlink(reg, &path, NULL) == 0 && strcmp(path, state) == 0) {
		fd = connect_mover(state, NULL);
		if (fd >= 0)
			close(fd);	/* it runs: still listed */
		else
			gfsp_unlink(reg, NULL);
	}
	gfsp_unconfine(gfsp_mover_registry());
	free(path);
	free(reg);
}

/* The files of the record's SRC not on shared storage as they are now:
 * the test a pass makes (sizes and times; what the journal says it
 * installed).  OUT *unsaved: ["rel", ...]. */
static int
unsaved_files(const char *state, const char *src, const char *dst,
	      uint64_t chunk, json_object **unsaved, struct gfsp_error *err)
{
	struct gfsp_xfer_opts xo = { 0 };
	struct gfsp_flist fl = { 0 };
	struct gfsp_state *st = NULL;
	struct gfsp_fresult *res = NULL;
	struct gfsp_xfer *x = NULL;
	char *arg = NULL;
	size_t i;
	int rc;

	*unsaved = NULL;
	xo.chunk = chunk ? chunk : GFSP_STAGE_CHUNK_DEFAULT;
	rc = gfsp_state_open(state, 0, 0, &st, err);
	if (rc == 0 && asprintf(&arg, "%s/", src) < 0)
		rc = OOM(err);
	if (rc == 0)
		rc = gfsp_flist_add_tree(&fl, arg, err);
	if (rc == 0)
		rc = gfsp_flist_finish(&fl, err);
	if (rc == 0 && (res = calloc(fl.n + 1, sizeof(*res))) == NULL)
		rc = OOM(err);
	if (rc == 0)
		rc = gfsp_xfer_new(&xo, &fl, dst, st, res, NULL, &x, err);
	if (rc == 0) {
		*unsaved = json_object_new_array();
		for (i = 0; i < fl.n; i++)
			if (fl.v[i].type == GFSP_SF_FILE &&
			    !gfsp_xfer_present(x, (uint32_t)i))
				json_object_array_add(*unsaved,
				    json_object_new_string(fl.v[i].rel));
	}
	gfsp_xfer_free(x);
	free(res);
	free(arg);
	gfsp_flist_free(&fl);
	gfsp_state_close(st);
	return rc;
}

int
gfsp_mover_gone(const char *state, json_object **reply,
	       struct gfsp_error *err)
{
	json_object *rec = NULL, *unsaved = NULL, *o, *x;
	json_tokener *tok;
	struct gfsp_stat st;
	unsigned char *buf = NULL;
	const char *src, *dst, *root;
	char *path = NULL, *how = NULL;
	size_t len = 0, n;
	int rc;

	*reply = NULL;
	if (asprintf(&path, "%s/%s", state, GFSP_MOVER_RECORD) < 0)
		return OOM(err);
	rc = gfsp_read_whole_stat(path, GFSP_O_NOFOLLOW, 1 << 16, &buf, &len,
				  &st, err);
	if (rc == 0 && (tok = json_tokener_new()) != NULL) {
		/* the bytes as read: no terminating NUL */
		rec = json_tokener_parse_ex(tok, (const char *)buf, (int)len);
		json_tokener_free(tok);
	}
	src = rec ? gfsp_json_str(rec, "src") : NULL;
	dst = rec ? gfsp_json_str(rec, "dest") : NULL;
	root = rec ? gfsp_json_str(rec, "dest_root") : NULL;
	if (rc == 0 && (src == NULL || dst == NULL || root == NULL))
		rc = gfsp_error_set(err, GFSP_ECORRUPT, "'%s': not the record "
				   "of a mover", path);
	if (rc == 0)
		rc = unsaved_files(state, src, dst, json_object_get_uint64(
		    json_object_object_get_ex(rec, "chunk", &x) ? x : NULL),
		    &unsaved, err);
	n = unsaved ? json_object_array_length(unsaved) : 0;
	if (rc == 0 && n > 0) {
		o = json_object_new_object();
		json_object_object_foreach(rec, k, v)
			json_object_object_add(o, k, json_object_get(v));
		json_object_object_add(o, "state", json_object_new_string(state));
		json_object_object_add(o, "running",
				       json_object_new_boolean(0));
		json_object_object_add(o, "unsaved", json_object_get(unsaved));
		if (asprintf(&how, "the mover (process %d) is gone with %zu "
		    "file%s not written back; finish with: stage-out%s '%s' "
		    "'%s'", json_object_get_int(json_object_object_get_ex(rec,
		    "pid", &x) ? x : NULL), n, n == 1 ? "" : "s",
		    strcmp(dst, root) == 0 ? " --merge" : "", src, root) < 0)
			how = NULL;
		json_object_object_add(o, "error", json_object_new_string(
		    how ? how : "the mover is gone with files not written back"));
		*reply = o;
	}
	free(how);
	json_object_put(unsaved);
	json_object_put(rec);
	free(buf);
	free(path);
	return rc;
}

/* ---------------------------------------------------------- starting */

/* The log from the state directory as it is checked to be ours, not by
 * its name again (SRC's owner may swap a directory on the way): a regular
 * file of ours with one name, handed to the mover.  Its descriptor, or
 * minus a GFSP_E* code. */
static int
open_log(const char *state, struct gfsp_error *err)
{
	int rc, sfd = -1, logfd = -1;

	rc = gfsp_private_dir(state, 0, &sfd, err);
	if (rc == 0 && (logfd = gfsp_openat_private(sfd, state, "mover.log",
						    O_WRONLY | O_CREAT |
						    O_APPEND, err)) < 0)
		rc = -logfd;
	if (sfd >= 0)
		close(sfd);
	return rc ? -rc : logfd;
}

/* mover_env's array: its own four strings, after environ's */
static void
env_free(char **env)
{
	size_t ne = 0, i;

	if (env == NULL)
		return;
	while (environ[ne] != NULL)
		ne++;
	for (i = ne; i < ne + 4; i++)
		free(env[i]);
	free(env);
}

/* Our environment and the mover's four variables (malloc'd: free the
 * last four and the array with env_free); NULL: out of memory */
static char **
mover_env(const char *state, const char *src, const char *dst,
	  const char *dst_root)
{
	size_t ne = 0, i;
	char **env;

	while (environ[ne] != NULL)
		ne++;
	if ((env = calloc(ne + 6, sizeof(char *))) == NULL)
		return NULL;
	for (i = 0; i < ne; i++)
		env[i] = environ[i];
	if (asprintf(&env[ne], "GFSPLIT_STAGE_MOVER=%s", state) < 0 ||
	    asprintf(&env[ne + 1], "GFSPLIT_MOVER_SRC=%s", src) < 0 ||
	    asprintf(&env[ne + 2], "GFSPLIT_MOVER_DST=%s", dst) < 0 ||
	    asprintf(&env[ne + 3], "GFSPLIT_MOVER_ROOT=%s", dst_root) < 0) {
		env_free(env);
		return NULL;
	}
	return env;
}

/* Its own session, no terminal, none of our descriptors (MPI's sockets
 * to the launcher among them), its output in the log */
static int
start(char **argv, char **env, int logfd, pid_t *pid, struct gfsp_error *err)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	char exe[PATH_MAX];
	ssize_t n;
	int rc;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return gfsp_error_errno(err, errno, "cannot find this program");
	exe[n] = '\0';
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, logfd, 1);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID);
	rc = posix_spawn(pid, exe, &fa, &at, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return rc ? gfsp_error_errno(err, rc, "cannot start the mover") : 0;
}

/* Up when it answers; gone early: its log says why */
static int
await(pid_t pid, int logfd, const char *state, const char *src,
      struct gfsp_error *err)
{
	char tail[512] = "";
	struct stat sb;
	off_t from = 0;
	ssize_t n;
	int tries, fd, status;

	for (tries = 0; tries < 300; tries++) {
		if ((fd = connect_mover(state, NULL)) >= 0) {
			close(fd);
			return 0;
		}
		if (waitpid(pid, &status, WNOHANG) == pid) {
			/* the tail of the log it wrote (the same file) */
			if (fstat(logfd, &sb) == 0 &&
			    sb.st_size > (off_t)sizeof(tail) - 1)
				from = sb.st_size - (off_t)sizeof(tail) + 1;
			n = pread(logfd, tail, sizeof(tail) - 1, from);
			tail[n > 0 ? n : 0] = '\0';
			return gfsp_error_set(err, GFSP_EIO, "the mover for "
			    "'%s' ended at once: %s", src, tail);
		}
		usleep(20000);
	}
	return gfsp_error_set(err, GFSP_EIO, "the mover for '%s' did not "
			     "answer within 6 s (see %s/mover.log)", src, state);
}

int
gfsp_mover_spawn(char **argv, const char *state, const char *src,
		const char *dst, const char *dst_root, pid_t *pid_out,
		struct gfsp_error *err)
{
	char **env;
	pid_t pid;
	int rc, fd, logfd;

	fd = connect_mover(state, err);
	if (fd >= 0) {
		close(fd);
		return gfsp_error_set(err, GFSP_EEXIST, "a mover already runs "
				     "for '%s' (stage-out --wait ends it)", src);
	}
	if (fd != -GFSP_ENOENT)
		return -fd;
	gfsp_error_clear(err);
	if ((logfd = open_log(state, err)) < 0)
		return -logfd;
	env = mover_env(state, src, dst, dst_root);
	rc = env == NULL ? OOM(err) : start(argv, env, logfd, &pid, err);
	if (rc == 0)
		rc = await(pid, logfd, state, src, err);
	if (rc == 0)
		*pid_out = pid;
	env_free(env);
	close(logfd);
	return rc;
}
