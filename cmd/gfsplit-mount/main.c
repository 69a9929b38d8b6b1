/*
 * gfsplit-mount - split files as ordinary files, for every program (FUSE):
 *   gfsplit-mount [OPTIONS] SOURCE MOUNTPOINT
 *
 * Everything in SOURCE (a POSIX directory or a gfarm:// URL) appears under
 * MOUNTPOINT as it is, except that each split file appears as one regular
 * file (fs.c).  The mount is read-only unless -o rw: a view, which no
 * program run in it changes the source through by mistake.  Without -f the command returns once the mount is there
 * (or has failed, with the cause and exit 1), and the daemon serves it
 * until `fusermount3 -u MOUNTPOINT`, umount, or SIGINT/SIGTERM/SIGHUP,
 * which unmount it.  Once the session has ended it exits within
 * EXIT_GRACE seconds, even with a request stuck in the source (watch()).
 *
 * The options table below is the one source of truth: --help is made from
 * it, and tests/cmd/options.sh checks the man page and the completions
 * against --help.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libgen.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core.h"
#include "driver.h"
#include "mountfs.h"

static int opt_foreground, opt_debug;
static char *opt_o;
static const char *opt_log;
static uint64_t opt_threads;

static const struct gfsp_opt opts[] = {
	{ "foreground", 'f', GFSP_OPT_FLAG, NULL,
	  "stay in the foreground, log lines on standard error", &opt_foreground,
	  NULL },
	{ "debug", 'd', GFSP_OPT_FLAG, NULL,
	  "print every request of the kernel (implies -f)", &opt_debug, NULL },
	{ "options", 'o', GFSP_OPT_LIST, "OPTS",
	  "mount options, comma separated: ro (the default), rw (write "
	  "ordinary files through to SOURCE), allow_other, verify (check "
	  "each part whole before use), noverify (see the man page)",
	  &opt_o, NULL },
	{ "log", 0, GFSP_OPT_STRING, "FILE",
	  "the daemon appends its log lines to FILE (default: syslog)",
	  &opt_log, NULL },
	{ "threads", 0, GFSP_OPT_UINT, "N",
	  "serve at most N requests at once (default: 2 per CPU, at most "
	  "16)", &opt_threads, NULL },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL }
};

struct mopts {
	int rw, allow_other, verify;
};

/* -o: ours, and the usual words of mount(8) that change nothing here
 * (nodev and nosuid always hold).  Of ro and rw, and of verify and
 * noverify, the last one given counts, as with mount(8). */
static int
parse_mount_opts(const char *list, struct mopts *m)
{
	static const char *const inert[] = {
		"nodev", "nosuid", "noexec", "exec", "noatime",
		"relatime", "default_permissions", "defaults", "auto",
		"noauto", "_netdev", NULL
	};
	char *copy, *tok, *save = NULL;
	int i, rc = 0;

	if (list == NULL)
		return 0;
	copy = strdup(list);
	if (copy == NULL)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok != NULL && rc == 0;
	    tok = strtok_r(NULL, ",", &save)) {
		if (strcmp(tok, "ro") == 0)
			m->rw = 0;
		else if (strcmp(tok, "rw") == 0)
			m->rw = 1;
		else if (strcmp(tok, "allow_other") == 0)
			m->allow_other = 1;
		else if (strcmp(tok, "verify") == 0)
			m->verify = GFSP_MVERIFY_FIRST;
		else if (strcmp(tok, "noverify") == 0)
			m->verify = GFSP_MVERIFY_NONE;
		else {
			for (i = 0; inert[i] != NULL &&
			    strcmp(inert[i], tok) != 0; i++)
				;
			if (inert[i] == NULL) {
				gfsp_log_error("unknown mount option '%s' (see "
				    "gfsplit-mount --help)", tok);
				rc = -1;
			}
		}
	}
	free(copy);
	return rc;
}

/* as many descriptors as we may have: a held split file keeps one per
 * part for as long as it is open */
static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * The kernel reads ahead in a FUSE mount 128 KiB at a time, each a
 * request to the daemon; a megabyte, as the daemon offers per request
 * (fs.c), costs fewer trips.  Its knob is the read_ahead_kb of the
 * mount's device, which only root may turn: for others it stays as it
 * is.  The device is read from /proc/self/mountinfo: a stat of the mount
 * point would wait for this very daemon, not serving yet.  `where` is the
 * mount point as resolved before the mount.
 */
static void
read_ahead(const char *where, const char *kb)
{
	struct gfsp_mount m;
	char path[128];
	int fd;

	if (gfsp_mount_find(where, 0, 0, &m) <= 0 ||
	    strcmp(m.type, "fuse.gfsplit") != 0)
		return;
	snprintf(path, sizeof(path), "/sys/class/bdi/%u:%u/read_ahead_kb",
	    m.maj, m.min);
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || write(fd, kb, strlen(kb)) < 0)
		gfsp_log_verbose("read-ahead of the mount stays the kernel's "
		    "(%s: %s)", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* The mount point resolved, without a stat of its last component (a
 * mount there may hang, or be dead): its parent's real path and its name;
 * a symbolic link's target resolved whole.  malloc'd; NULL with errno
 * set. */
static char *
resolve_point(const char *mountpoint)
{
	char *copy, *dir, *base, *rdir, *s = NULL, c;
	size_t n;

	/* readlink looks at the name only, not into what is mounted there */
	if (readlink(mountpoint, &c, 1) >= 0)
		return realpath(mountpoint, NULL);
	copy = strdup(mountpoint);
	if (copy == NULL)
		return NULL;
	n = strlen(copy);
	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = '\0';
	base = strrchr(copy, '/');
	base = base != NULL ? base + 1 : copy;
	if (*base == '\0' || strcmp(base, ".") == 0 ||
	    strcmp(base, "..") == 0) {
		free(copy);
		return realpath(mountpoint, NULL);
	}
	base = strdup(base);
	dir = dirname(copy);
	rdir = base != NULL ? realpath(dir, NULL) : NULL;
	if (rdir != NULL && asprintf(&s, "%s%s%s", rdir,
	    strcmp(rdir, "/") == 0 ? "" : "/", base) < 0)
		s = NULL;
	free(rdir);
	free(base);
	free(copy);
	return s;
}

/*
 * Take mount point `mountpoint`, or say why not: one that is a mount
 * point already (of gfsplit-mount or anything else) is refused, since a
 * mount on top hides the one below, which goes on serving unseen.  The
 * check and the mount are one step against a second gfsplit-mount on the
 * same point at the same time: OUT *lock, a descriptor of the point
 * locked (flock) until the mount is made.  OUT *where: the point
 * resolved.  0, or -1 after an error message.
 */
static int
claim_point(const char *mountpoint, char **where, int *lock)
{
	struct gfsp_mount mt;
	int pass, fd = -1, m;

	*where = resolve_point(mountpoint);
	if (*where == NULL) {
		gfsp_log_error("cannot use mount point '%s': %s", mountpoint,
		    strerror(errno));
		return -1;
	}
	for (pass = 0; pass < 2; pass++) {
		m = gfsp_mount_find(*where, 0, 0, &mt);
		if (m > 0) {
			gfsp_log_error("cannot mount on '%s': it is a mount "
			    "point already (%s of '%s'), and a mount on top "
			    "would hide it; unmount it first (%s '%s') or "
			    "choose another directory", mountpoint, mt.type,
			    mt.source, strncmp(mt.type, "fuse", 4) == 0 ?
			    "fusermount3 -u" : "umount", mountpoint);
			if (fd >= 0)
				close(fd);
			return -1;
		}
		if (m < 0)
			gfsp_log_verbose("cannot read /proc/self/mountinfo "
			    "(%s): '%s' not checked for a mount already there",
			    strerror(errno), mountpoint);
		if (pass == 1)
			break;
		fd = open(mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			gfsp_log_error("cannot use mount point '%s': %s",
			    mountpoint, strerror(errno));
			return -1;
		}
		/* one who mounted while we waited is seen by the second
		 * look (a file system without flock: the first only) */
		while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
			;
	}
	*lock = fd;
	return 0;
}

/* "fsname=SOURCE": commas and backslashes in it escaped for libfuse */
static char *
fuse_optstring(const char *source, const struct mopts *m)
{
	size_t n = strlen(source), i, k = 0;
	char *esc = malloc(2 * n + 1), *s = NULL;

	if (esc == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (source[i] == ',' || source[i] == '\\')
			esc[k++] = '\\';
		esc[k++] = source[i];
	}
	esc[k] = '\0';
	if (asprintf(&s, "fsname=%s,subtype=gfsplit,default_permissions%s%s",
	    esc, m->allow_other ? ",allow_other" : "",
	    m->rw ? "" : ",ro") < 0)
		s = NULL;
	free(esc);
	return s;
}

/*
 * The parent waits for the child's word on a pipe: a byte 0 once the
 * mount is there, nothing (the pipe closes) if the child failed; its
 * messages went to the same standard error meanwhile.
 */
static int
background(int *notify)
{
	int p[2], status;
	ssize_t n;
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC) != 0) {
		gfsp_log_error("cannot make a pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		gfsp_log_error("cannot fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		setsid();
		*notify = p[1];
		return 0;
	}
	close(p[1]);
	c = 1;
	do
		n = read(p[0], &c, 1);
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n == 1 && c == 0)
		return 1;	/* mounted: the daemon goes on alone */
	waitpid(pid, &status, 0);
	return 2;
}

/* The daemon's standard streams: /dev/null, and its log lines to --log
 * FILE (stamped) or syslog.  The log is appended to only if it is a
 * regular file of this user's: one planted in a shared directory is
 * refused. */
static int
detach(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC), fd = -1;
	struct stat st;

	if (opt_log != NULL) {
		fd = open(opt_log, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW |
		    O_NONBLOCK | O_CLOEXEC, 0600);
		if (fd < 0) {
			gfsp_log_error("cannot open the log '%s': %s", opt_log,
			    strerror(errno));
			return -1;
		}
		/* (one name: a hard link someone made to a file of
		 * ours elsewhere is not ours to append to) */
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid() || st.st_nlink != 1) {
			gfsp_log_error("the log '%s' is not a regular file of "
			    "this user's with one name: not written", opt_log);
			close(fd);
			return -1;
		}
	}
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(fd >= 0 ? fd : null, 2);
		close(null);
	}
	if (fd >= 0)
		close(fd);
	gfsp_log_sink(opt_log != NULL ? GFSP_LOG_STAMPED : GFSP_LOG_SYSLOG);
	if (chdir("/") != 0)
		return -1;
	return 0;
}

/*
 * The daemon ends promptly once its session has ended.  libfuse's loop
 * returns only when every worker thread has finished its request, and a
 * request cannot be called off: a worker waiting on the source (a close
 * that flushes to a Gfarm file system node that does not answer, a read
 * of a hung NFS or FUSE directory below SOURCE) kept the daemon alive
 * after `fusermount3 -u` for as long as the source took, minutes.  The
 * session has ended when the kernel unmounted it, a signal asked it to
 * end, or the mount left this mount namespace while files were still open
 * on it (a lazy unmount, `umount -l`: the kernel keeps the session until
 * the last of them is closed, and a user holding one would keep a daemon
 * of root's running for as long as she likes); from then on the loop and
 * the cleanup get EXIT_GRACE seconds, past
 * which the watchdog logs why, unmounts (lazily, if a signal asked: the
 * mount is still there) and exits.  The kernel had already failed every
 * request to an unmounted file system; what the stuck call would have
 * done is the source's to finish or abandon.
 *
 *   state  RUNNING   the loop serves; the session may end at any time
 *          CLEANING  the loop returned: main() cleans up (se is its own)
 *          DONE      the cleanup is over: the watchdog goes
 */
#define EXIT_GRACE	5	/* seconds */

struct watchdog {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum { RUNNING, CLEANING, DONE } state;
	struct fuse_session *se;
	const char *mountpoint;
	int dev_known;			/* the mount's device, once mounted */
	unsigned maj, min;
};

/* Once mounted at where: the mount's device, for detached() */
static void
watch_device(struct watchdog *w, const char *where)
{
	struct gfsp_mount m;

	if (gfsp_mount_find(where, 0, 0, &m) > 0 &&
	    strcmp(m.type, "fuse.gfsplit") == 0) {
		w->maj = m.maj;
		w->min = m.min;
		w->dev_known = 1;
	}
}

/* Has the mount left this namespace (a lazy unmount)?  Asked of
 * /proc/self/mountinfo, not of the mount, which is this daemon. */
static int
detached(const struct watchdog *w)
{
	struct gfsp_mount m;

	return w->dev_known && gfsp_mount_find(NULL, w->maj, w->min, &m) == 0;
}

static int
wait_until(struct watchdog *w, const struct timespec *at)
{
	return pthread_cond_timedwait(&w->cond, &w->lock, at);
}

static void *
watch(void *arg)
{
	struct watchdog *w = arg;
	struct timespec at;
	unsigned tick = 0;
	int lazy;

	pthread_mutex_lock(&w->lock);
	while (w->state == RUNNING && !fuse_session_exited(w->se) &&
	       (++tick % 5 != 0 || !detached(w))) {
		clock_gettime(CLOCK_REALTIME, &at);
		at.tv_nsec += 200 * 1000 * 1000;	/* the loop sets no
							 * condition: look */
		if (at.tv_nsec >= 1000000000) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000;
		}
		wait_until(w, &at);
	}
	lazy = w->state == RUNNING && !fuse_session_exited(w->se);
	if (lazy)
		gfsp_log_info("'%s' was unmounted lazily with files open on "
		    "it: the daemon ends in %d s, and they then fail",
		    w->mountpoint, EXIT_GRACE);
	clock_gettime(CLOCK_REALTIME, &at);
	at.tv_sec += EXIT_GRACE;
	while (w->state != DONE && wait_until(w, &at) != ETIMEDOUT)
		;
	if (w->state == DONE) {
		pthread_mutex_unlock(&w->lock);
		return NULL;
	}
	if (w->state == RUNNING && !lazy) {
		gfsp_log_error("'%s': the session ended, but a request to the "
		    "source has not returned in %d s (a file server that "
		    "does not answer?): the daemon ends without it",
		    w->mountpoint, EXIT_GRACE);
		fuse_session_unmount(w->se);
	} else if (w->state != RUNNING) {
		gfsp_log_error("'%s': unmounted, but the daemon's cleanup has "
		    "not finished in %d s: it ends without it", w->mountpoint,
		    EXIT_GRACE);
	}
	_exit(0);
}

/* The watchdog thread, with every signal blocked: they are for the loop's
 * thread (libfuse's handlers end the session there). */
static int
watch_start(struct watchdog *w, pthread_t *t)
{
	sigset_t all, old;
	int e;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	e = pthread_create(t, NULL, watch, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0)
		gfsp_log_error("cannot start a thread: %s", strerror(e));
	return e;
}

static void
watch_state(struct watchdog *w, int state)
{
	pthread_mutex_lock(&w->lock);
	w->state = state;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/* The FUSE session over FS, its options built from M into ARGS (FO holds
 * the option string; the caller frees both), with FUSE's signal handlers
 * set.  NULL, said, on failure. */
static struct fuse_session *
new_session(struct gfsp_mfs *fs, const struct mopts *m,
	    struct fuse_args *args, char **fo)
{
	struct fuse_session *se;

	*fo = fuse_optstring(fs->tree.root, m);
	if (*fo == NULL || fuse_opt_add_arg(args, "gfsplit-mount") != 0 ||
	    fuse_opt_add_arg(args, "-o") != 0 ||
	    fuse_opt_add_arg(args, *fo) != 0 ||
	    (opt_debug && fuse_opt_add_arg(args, "-d") != 0)) {
		gfsp_log_error("out of memory");
		return NULL;
	}
	se = fuse_session_new(args, &gfsp_mfs_ops, sizeof(gfsp_mfs_ops), fs);
	if (se == NULL) {
		gfsp_log_error("cannot start a FUSE session (see the message "
		    "above)");
		return NULL;
	}
	if (fuse_set_signal_handlers(se) != 0) {
		gfsp_log_error("cannot set the signal handlers");
		fuse_session_destroy(se);
		return NULL;
	}
	return se;
}

static int
serve(const char *source, const char *mountpoint, const struct mopts *m,
      int notify)
{
	static struct gfsp_mfs fs;
	struct gfsp_error err = { 0 };
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_loop_config *cfg = NULL;
	struct fuse_session *se = NULL;
	struct watchdog w = { PTHREAD_MUTEX_INITIALIZER,
			      PTHREAD_COND_INITIALIZER, RUNNING, NULL, NULL, 0,
			      0, 0 };
	pthread_t wt;
	char *fo = NULL, *where = NULL;
	int rc = 1, mounted = 0, lock = -1, watching = 0, r;
	const char zero = 0;

	if (gfsp_mtree_init(&fs.tree, source, &err) != 0) {
		gfsp_log_gfs_error(&err);
		return 1;
	}
	fs.readonly = !m->rw;
	fs.verify = m->verify;
	se = new_session(&fs, m, &args, &fo);
	if (se == NULL)
		goto out;
	if (claim_point(mountpoint, &where, &lock) != 0)
		goto out;
	r = fuse_session_mount(se, mountpoint);
	close(lock);
	if (r != 0) {
		gfsp_log_error("cannot mount '%s' on '%s' (see the message "
		    "above; is /dev/fuse there, and fusermount3?)", source,
		    mountpoint);
		goto out;
	}
	mounted = 1;
	watch_device(&w, where);
	read_ahead(where, "1024");
	gfsp_log_verbose("'%s' mounted on '%s'%s", fs.tree.root, mountpoint,
	    fs.readonly ? " read-only" : "");
	if (notify >= 0) {
		if (detach() != 0)
			goto out;
		if (write(notify, &zero, 1) != 1)
			goto out;
		close(notify);
	}
	cfg = fuse_loop_cfg_create();
	if (cfg == NULL) {
		gfsp_log_error("out of memory");
		goto out;
	}
	fuse_loop_cfg_set_max_threads(cfg, (unsigned)GFSP_MAX(opt_threads, 1));
	fuse_loop_cfg_set_idle_threads(cfg, (unsigned)GFSP_MAX(opt_threads / 2,
	    1));
	w.se = se;
	w.mountpoint = mountpoint;
	if (watch_start(&w, &wt) != 0)
		goto out;
	watching = 1;
	r = fuse_session_loop_mt(se, cfg);
	watch_state(&w, CLEANING);
	/* 0: unmounted; a signal's number: asked to end (SIGINT, SIGTERM,
	 * SIGHUP); below 0 the session failed */
	if (r < 0)
		gfsp_log_error("the FUSE session failed: %s", strerror(-r));
	else
		rc = 0;
out:
	if (se != NULL) {
		if (mounted)
			fuse_session_unmount(se);
		fuse_remove_signal_handlers(se);
		fuse_session_destroy(se);
	}
	fuse_loop_cfg_destroy(cfg);
	fuse_opt_free_args(&args);
	free(fo);
	free(where);
	gfsp_mtree_destroy(&fs.tree);
	if (watching) {
		watch_state(&w, DONE);
		pthread_join(wt, NULL);
	}
	return rc;
}

static int
run(int argc, char **argv, MPI_Comm comm)
{
	struct mopts m = { 0 };
	int notify = -1, rc;

	(void)argc;
	(void)comm;
	if (parse_mount_opts(opt_o, &m) != 0)
		return 2;
	if (m.rw && m.allow_other) {
		gfsp_log_error("-o rw cannot go with allow_other: the daemon "
		    "would write with its own rights for every user (an "
		    "allow_other mount is read-only)");
		return 2;
	}
	/* more threads than the CPUs can run make megabyte reads slower
	 * (bench/mount.py: half the speed with 16 on 2 CPUs) */
	if (opt_threads == 0)
		opt_threads = (uint64_t)GFSP_MIN(GFSP_MAX(2 * sysconf(
		    _SC_NPROCESSORS_ONLN), 2), 16);
	if (opt_threads > 1024) {
		gfsp_log_error("--threads %llu: at most 1024, please",
		    (unsigned long long)opt_threads);
		return 2;
	}
	if (m.allow_other)
		gfsp_log_verbose("allow_other: every user reads through the "
		    "daemon's rights, by the permission bits shown (and a "
		    "split file by those of every file of it); the mount is "
		    "read-only");
	raise_nofile();
	if (!opt_foreground && !opt_debug) {
		rc = background(&notify);
		if (rc < 0)
			return 1;
		if (rc > 0)
			return rc == 1 ? 0 : 1;
	}
	rc = serve(argv[0], argv[1], &m, notify);
	if (notify >= 0)
		_exit(rc);	/* the daemon: nothing of the parent's to flush */
	return rc;
}

static const struct gfsp_cmd cmd = {
	.name = "gfsplit-mount",
	.usage = "[OPTIONS] SOURCE MOUNTPOINT",
	.summary = "Show split files as ordinary files: everything in SOURCE "
		   "(a directory or gfarm:// URL) under MOUNTPOINT, each "
		   "split file one regular file (FUSE).",
	.opts = opts,
	.min_args = 2,
	.max_args = 2,
	.uses_mpi = 0,
	.daemon = 1,
	.run = run,
};

int
main(int argc, char **argv)
{
	return gfsp_cmd_main(&cmd, argc, argv);
}
