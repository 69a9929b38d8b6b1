/*
 * mover.c - asynchronous stage-out (stage.h): one background mover per
 * node writes a node's results back to shared storage while the job
 * computes (the "cache method" of Uemura et al., "A study of file system
 * design for exascale systems": write-back on close, on request
 * and periodically).
 *
 * The mover is a process of its own, started by `stage-out --async` on
 * each node's first rank (posix_spawn of the same program, in a session
 * of its own, so neither the job's end nor mpiexec stops it) and made of
 * no MPI: it runs the transfer engine (xfer.c) on the node alone.  It
 * works in passes; a pass lists SRC and, for every file that is not on
 * shared storage as it is now:
 *
 *   open for writing by no process (/proc), and closed since the last
 *   pass (inotify IN_CLOSE_WRITE or a rename into SRC), or unchanged for
 *   INTERVAL seconds, or the pass was asked for (flush, wait)
 *                                   -> copied whole and installed
 *   still being written (open for writing, or changed within INTERVAL
 *   and not closed)                 -> its whole chunks pre-copied into
 *                                      its temporary file and journal:
 *                                      nothing under its final name, and
 *                                      the copy after its close writes
 *                                      only the chunks that changed
 *
 * A pass runs when a file is closed (after a short delay that gathers the
 * closes of a burst), every INTERVAL seconds, and on request.  Requests
 * come over a UNIX socket in the state directory, one line each:
 *
 *   status   -> one JSON line: pid, node, what is pending, done, failed
 *   flush    -> a pass of everything now, then the status
 *   wait     -> passes until nothing is pending (or the failures stay),
 *               the status, and the mover ends
 *
 * The mover runs at the lowest CPU priority (nice 19), in the idle I/O
 * class, and on the cores --cpus names.  It holds the state's lock for
 * its life; killed, it loses nothing: the journal has every chunk it
 * wrote, and the next mover (or a stage-out) resumes from it.  Each node's
 * movers are also listed in a registry directory (GFSPLIT_MOVER_DIR,
 * default /tmp/gfsplit-movers-UID), so `stage-out --wait` with no SRC
 * finds them all.
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
#define CLOSE_DELAY	0.3	/* seconds: a burst of closes, one pass */
#define WAIT_TRIES	3	/* passes that may fail before wait gives up */

/* ------------------------------------------------------- the mover */

struct mover {
	const struct gfsp_mover_opts *o;
	struct gfsp_state *st;
	char node[256];
	char *reg;			/* our registry entry */
	int lfd, ifd;			/* listening socket, inotify */
	/* requests: a thread answers "status" at once from what is below
	 * (under lock); "flush" and "wait" it queues for the main loop,
	 * which it wakes through a pipe */
	pthread_mutex_t lock;
	pthread_t server;
	int wake[2];
	int queue[16];
	char qreq[16][8];
	size_t nq;
	int in_pass;
	/* inotify: watch descriptor -> directory (rel, "" for SRC) */
	struct watch {
		int wd;
		char *rel;
	} *watch;
	size_t nw, capw;
	/* rels closed since the last pass */
	char **closed;
	size_t nclosed, capclosed;
	int overflow;			/* events were lost: treat all closed */
	/* what the last pass left */
	json_object *failed;		/* [{"path","error"}] */
	json_object *pending;		/* ["rel", ...] */
	uint64_t files, bytes, resumed, passes;
	double started, last_pass;
	time_t started_at, last_pass_at;	/* the same, wall clock */
	int stop;
	int saved;			/* a wait ended with all written back */
};

static volatile sig_atomic_t got_term;
static volatile sig_atomic_t term_fd = -1;	/* the wake pipe's end */

/* SIGTERM, SIGINT: the copy under way stops too (its temporary file
 * stays for the next stage-out to resume), so that a batch system's
 * grace period is not spent on it */
static void
on_term(int sig)
{
	int e = errno;

	got_term = 1;
	gfsp_watch_stop(sig);
	/* wake the main loop's poll, also when the signal came before it */
	if (term_fd >= 0 && write(term_fd, "t", 1) < 0) {
		/* full: it is awake already */
	}
	errno = e;
}

/* nice 19, the idle I/O class, the cores of --cpus ("0,2-3") */
static void
lower_priority(const char *cpus)
{
	cpu_set_t set;
	const char *p = cpus;
	char *end;
	long a, b;

	if (setpriority(PRIO_PROCESS, 0, 19) != 0)
		gfsp_log_warn("cannot lower the CPU priority: %s",
			      strerror(errno));
	/* IOPRIO_WHO_PROCESS, IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT */
	if (syscall(SYS_ioprio_set, 1, 0, 3 << 13) != 0)
		gfsp_log_warn("cannot enter the idle I/O class: %s",
			      strerror(errno));
	if (cpus == NULL || *cpus == '\0')
		return;
	CPU_ZERO(&set);
	while (*p) {
		a = strtol(p, &end, 10);
		b = a;
		if (end != p && *end == '-')
			b = strtol(end + 1, &end, 10);
		if (end == p || a < 0 || b < a || b >= CPU_SETSIZE) {
			gfsp_log_warn("--cpus '%s': not a list of cores", cpus);
			return;
		}
		for (; a <= b; a++)
			CPU_SET((int)a, &set);
		p = *end == ',' ? end + 1 : end;
		if (*end != ',' && *end != '\0') {
			gfsp_log_warn("--cpus '%s': not a list of cores", cpus);
			return;
		}
	}
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		gfsp_log_warn("--cpus '%s': %s", cpus, strerror(errno));
}

static int
push_str(char ***v, size_t *n, size_t *cap, const char *s)
{
	if (gfsp_grow(v, cap, *n + 1, sizeof(**v)) != 0)
		return -1;
	(*v)[*n] = strdup(s);
	if ((*v)[*n] == NULL)
		return -1;
	(*n)++;
	return 0;
}

/* Watch directory rel of SRC and what it holds, for closes and new
 * directories. */
static void
watch_tree(struct mover *m, const char *rel)
{
	char *path, **names = NULL, *child;
	size_t n = 0, i;
	struct stat sb;
	int w;

	if (asprintf(&path, "%s%s%s", m->o->src, *rel ? "/" : "", rel) < 0)
		return;
	w = inotify_add_watch(m->ifd, path, IN_CLOSE_WRITE | IN_MOVED_TO |
			      IN_CREATE | IN_ONLYDIR);
	if (w >= 0 && gfsp_grow(&m->watch, &m->capw, m->nw + 1,
	    sizeof(*m->watch)) == 0) {
		m->watch[m->nw].wd = w;
		m->watch[m->nw].rel = strdup(rel);
		if (m->watch[m->nw].rel != NULL)
			m->nw++;
	}
	if (gfsp_readdir(path, &names, &n, NULL) != 0)
		goto out;
	for (i = 0; i < n; i++) {
		if (gfsp_stage_internal_name(names[i]))
			continue;
		if (asprintf(&child, "%s/%s", path, names[i]) < 0)
			continue;
		if (lstat(child, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			free(child);
			if (asprintf(&child, "%s%s%s", rel, *rel ? "/" : "",
				     names[i]) >= 0)
				watch_tree(m, child);
		}
		free(child);
	}
out:
	gfsp_strv_free(names, n);
	free(path);
}

/* What inotify says: closes to remember, directories to watch. */
static void
read_events(struct mover *m)
{
	char buf[16384] __attribute__((aligned(8)));
	const struct inotify_event *ev;
	ssize_t n;
	char *p, *rel;
	size_t i;

	while ((n = read(m->ifd, buf, sizeof(buf))) > 0) {
		for (p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if (ev->mask & IN_Q_OVERFLOW) {
				m->overflow = 1;
				continue;
			}
			for (i = 0; i < m->nw && m->watch[i].wd != ev->wd; i++)
				;
			if (i == m->nw || ev->len == 0 ||
			    gfsp_stage_internal_name(ev->name))
				continue;
			if (asprintf(&rel, "%s%s%s", m->watch[i].rel,
				     *m->watch[i].rel ? "/" : "", ev->name) < 0)
				continue;
			if (ev->mask & IN_ISDIR) {
				if (ev->mask & (IN_CREATE | IN_MOVED_TO))
					watch_tree(m, rel);
			} else if (ev->mask & (IN_CLOSE_WRITE | IN_MOVED_TO)) {
				if (push_str(&m->closed, &m->nclosed,
					     &m->capclosed, rel) != 0)
					m->overflow = 1;
			}
			free(rel);
		}
	}
}

static int
was_closed(const struct mover *m, const char *rel)
{
	size_t i;

	if (m->overflow)
		return 1;
	for (i = 0; i < m->nclosed; i++)
		if (strcmp(m->closed[i], rel) == 0)
			return 1;
	return 0;
}

/*
 * The inodes of regular files some process has open for writing (every
 * process whose /proc entries we may read: the job's, on its node).  A
 * file open for writing is still being written, whatever its times say:
 * it is pre-copied, never installed.  Sorted, for bsearch.
 */
struct inoset {
	uint64_t *v;
	size_t n, cap;
};

static int
ino_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
open_for_writing(struct inoset *set)
{
	char path[600], line[128];
	struct dirent *p, *d;
	struct stat sb;
	DIR *proc, *fds;
	FILE *fp;
	unsigned flags;

	set->n = 0;
	proc = opendir("/proc");
	if (proc == NULL)
		return;
	while ((p = readdir(proc)) != NULL) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9' ||
		    atoi(p->d_name) == (int)getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", p->d_name);
		fds = opendir(path);
		if (fds == NULL)
			continue;
		while ((d = readdir(fds)) != NULL) {
			if (d->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/fd/%s",
				 p->d_name, d->d_name);
			if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
				continue;
			snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s",
				 p->d_name, d->d_name);
			fp = fopen(path, "r");
			flags = 0;
			while (fp != NULL && fgets(line, sizeof(line), fp))
				if (sscanf(line, "flags: %o", &flags) == 1)
					break;
			if (fp != NULL)
				fclose(fp);
			if ((flags & O_ACCMODE) == O_RDONLY)
				continue;
			if (gfsp_grow(&set->v, &set->cap, set->n + 1,
			    sizeof(*set->v)) != 0)
				break;
			set->v[set->n++] = (uint64_t)sb.st_ino;
		}
		closedir(fds);
	}
	closedir(proc);
	if (set->n > 1)
		qsort(set->v, set->n, sizeof(*set->v), ino_cmp);
}

static int
being_written(const struct inoset *set, uint64_t ino)
{
	return set->n > 0 && bsearch(&ino, set->v, set->n, sizeof(*set->v),
				     ino_cmp) != NULL;
}

enum { PASS_PERIODIC, PASS_ALL };

/* SRC listed as it is now (the state reloaded first) */
static int
list_src(struct mover *m, struct gfsp_flist *fl, struct gfsp_error *err)
{
	char *arg = NULL;
	int rc;

	rc = gfsp_state_reload(m->st, err);
	if (rc == 0 && asprintf(&arg, "%s/", m->o->src) < 0)
		rc = OOM(err);
	if (rc == 0)
		rc = gfsp_flist_add_tree(fl, arg, err);
	if (rc == 0)
		rc = gfsp_flist_finish(fl, err);
	free(arg);
	return rc;
}

/*
 * The pieces of this pass into p (*np of them): every file not on shared
 * storage as it is now, whole when it is done being written, else its
 * whole chunks as a pre-copy, its rel then added to pending.  Directories
 * are made on the way.
 */
static void
choose(struct mover *m, struct gfsp_xfer *x, const struct gfsp_flist *fl,
       int mode, struct gfsp_piece *p, size_t *np, json_object *pending)
{
	const struct gfsp_mover_opts *o = m->o;
	struct inoset open = { 0 };
	double now = (double)time(NULL);
	uint64_t whole;
	size_t i;

	open_for_writing(&open);
	for (i = 0; i < fl->n; i++) {
		const struct gfsp_sfile *f = &fl->v[i];

		if (f->type == GFSP_SF_DIR) {
			gfsp_xfer_make(x, (uint32_t)i);
			continue;
		}
		if (f->type != GFSP_SF_FILE || gfsp_xfer_present(x,
								 (uint32_t)i))
			continue;
		p[*np].file = (uint32_t)i;
		p[*np].npieces = 1;
		p[*np].bcomm = MPI_COMM_NULL;
		if (!being_written(&open, f->st.ino) &&
		    (mode == PASS_ALL || was_closed(m, f->rel) ||
		     now - (double)f->st.mtime >= o->interval)) {
			p[(*np)++].len = f->st.size;
			continue;
		}
		/* still being written: its whole chunks, not installed */
		json_object_array_add(pending, json_object_new_string(f->rel));
		whole = f->st.size / o->x.chunk * o->x.chunk;
		if (whole > 0) {
			p[*np].len = whole;
			p[(*np)++].precopy = 1;
		}
	}
	free(open.v);
}

/* [{"path", "error"}] of the files that failed */
static json_object *
failures(const struct gfsp_flist *fl, const struct gfsp_fresult *res)
{
	json_object *failed = json_object_new_array(), *f;
	size_t i;

	for (i = 0; i < fl->n; i++) {
		if (res[i].rc == 0)
			continue;
		f = json_object_new_object();
		json_object_object_add(f, "path",
				       json_object_new_string(fl->v[i].rel));
		json_object_object_add(f, "error", json_object_new_string(
		    res[i].msg ? res[i].msg : "failed"));
		json_object_array_add(failed, f);
	}
	return failed;
}

/* What the pass did, for the status (takes failed and pending); the
 * journal compacted, and the closes dealt with */
static void
record_pass(struct mover *m, const struct gfsp_xfer_stats *xs,
	    json_object *failed, json_object *pending)
{
	struct gfsp_error ce = { 0 };

	pthread_mutex_lock(&m->lock);
	m->files += xs->files;
	m->bytes += xs->raw_bytes;
	m->resumed += xs->bytes_resumed;
	json_object_put(m->failed);
	m->failed = failed;
	json_object_put(m->pending);
	m->pending = pending;
	pthread_mutex_unlock(&m->lock);
	if (gfsp_state_compact(m->st, &ce) != 0)
		gfsp_log_warn("%s", ce.msg);
	/* (a failed file is tried again at the next pass all the same: it
	 * is not on shared storage) */
	gfsp_strv_free(m->closed, m->nclosed);
	m->closed = NULL;
	m->nclosed = m->capclosed = 0;
	m->overflow = 0;
	m->last_pass = gfsp_now();
	m->last_pass_at = time(NULL);
}

/* a pass begins (1, counted) or ends (0), as the status tells */
static void
set_in_pass(struct mover *m, int in)
{
	pthread_mutex_lock(&m->lock);
	m->passes += in;
	m->in_pass = in;
	pthread_mutex_unlock(&m->lock);
}

/*
 * One pass over SRC.  Returns 0, or a code when SRC cannot be listed
 * (the failures of single files are in m->failed).
 */
static int
pass(struct mover *m, int mode, struct gfsp_error *err)
{
	struct gfsp_flist fl = { 0 };
	struct gfsp_fresult *res = NULL;
	struct gfsp_xfer *x = NULL;
	struct gfsp_piece *p = NULL;
	json_object *pending;
	size_t np = 0, i;
	int rc;

	set_in_pass(m, 1);
	gfsp_error_clear(err);
	rc = list_src(m, &fl, err);
	if (rc == 0) {
		res = calloc(fl.n + 1, sizeof(*res));
		p = calloc(fl.n + 1, sizeof(*p));
		if (res == NULL || p == NULL)
			rc = OOM(err);
	}
	if (rc == 0)
		rc = gfsp_xfer_new(&m->o->x, &fl, m->o->dst, m->st, res, NULL,
				   &x, err);
	if (rc)
		goto out;
	pending = json_object_new_array();
	choose(m, x, &fl, mode, p, &np, pending);
	rc = gfsp_xfer_run(x, p, np, err);
	for (i = 0; i < fl.n; i++)
		if (fl.v[i].type == GFSP_SF_SYMLINK ||
		    fl.v[i].type == GFSP_SF_HARDLINK)
			gfsp_xfer_make(x, (uint32_t)i);
	gfsp_xfer_dir_times(x);
	record_pass(m, gfsp_xfer_stats(x), failures(&fl, res), pending);
out:
	for (i = 0; res != NULL && i < fl.n; i++) {
		free(res[i].msg);
		free(res[i].seg);
	}
	free(res);
	free(p);
	set_in_pass(m, 0);
	gfsp_xfer_free(x);
	gfsp_flist_free(&fl);
	return rc;
}

/* (under m->lock) */
static json_object *
status(struct mover *m, const char *listing_error)
{
	json_object *o = json_object_new_object();
	char when[GFSP_ISO_LEN];

	json_object_object_add(o, "node", json_object_new_string(m->node));
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "src", json_object_new_string(m->o->src));
	json_object_object_add(o, "dest", json_object_new_string(m->o->dst));
	json_object_object_add(o, "running", json_object_new_boolean(!m->stop));
	json_object_object_add(o, "passes", json_object_new_uint64(m->passes));
	json_object_object_add(o, "in_pass", json_object_new_boolean(m->in_pass));
	json_object_object_add(o, "files_done", json_object_new_uint64(m->files));
	json_object_object_add(o, "bytes_done", json_object_new_uint64(m->bytes));
	json_object_object_add(o, "bytes_resumed",
			       json_object_new_uint64(m->resumed));
	json_object_object_add(o, "seconds",
			       json_object_new_double(gfsp_now() - m->started));
	json_object_object_add(o, "started", json_object_new_string(
	    gfsp_utc_iso(m->started_at, when, sizeof(when))));
	json_object_object_add(o, "last_pass", m->passes == 0 ? NULL :
	    json_object_new_string(gfsp_utc_iso(m->last_pass_at, when,
	    sizeof(when))));
	json_object_object_add(o, "pending", m->pending ?
			       json_object_get(m->pending) :
			       json_object_new_array());
	json_object_object_add(o, "failed", m->failed ?
			       json_object_get(m->failed) :
			       json_object_new_array());
	if (listing_error != NULL)
		json_object_object_add(o, "error",
				       json_object_new_string(listing_error));
	return o;
}

static void
answer(int fd, json_object *o)
{
	dprintf(fd, "%s\n", json_object_to_json_string_ext(o,
		JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}

static void
answer_status(struct mover *m, int fd, const char *listing_error)
{
	json_object *o;

	pthread_mutex_lock(&m->lock);
	o = status(m, listing_error);
	pthread_mutex_unlock(&m->lock);
	answer(fd, o);
	close(fd);
}

/* The server thread: status at once, flush and wait to the main loop. */
static void *
server(void *arg)
{
	struct mover *m = arg;
	char line[64];
	sigset_t all;
	ssize_t n;
	int fd;

	/* signals are the main loop's, which polls */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		fd = accept4(m->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			break;		/* the socket was shut down: the end */
		}
		n = read(fd, line, sizeof(line) - 1);
		line[n > 0 ? n : 0] = '\0';
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line, "status") == 0) {
			answer_status(m, fd, NULL);
			continue;
		}
		if (strcmp(line, "flush") != 0 && strcmp(line, "wait") != 0) {
			dprintf(fd, "{\"error\":\"unknown request\"}\n");
			close(fd);
			continue;
		}
		pthread_mutex_lock(&m->lock);
		if (m->nq < GFSP_ARRAY_SIZE(m->queue)) {
			m->queue[m->nq] = fd;
			strcpy(m->qreq[m->nq], line[0] == 'f' ? "flush" : "wait");
			m->nq++;
			fd = -1;
		}
		pthread_mutex_unlock(&m->lock);
		if (fd >= 0) {
			dprintf(fd, "{\"error\":\"too many requests\"}\n");
			close(fd);
		} else if (write(m->wake[1], "", 1) < 0) {
			/* the pipe is full: the main loop is awake anyway */
		}
	}
	return NULL;
}

/* The queued flush and wait requests, in the main loop. */
static void
serve_queue(struct mover *m)
{
	struct gfsp_error e = { 0 };
	char req[8];
	int fd, tries, rc;

	for (;;) {
		pthread_mutex_lock(&m->lock);
		if (m->nq == 0) {
			pthread_mutex_unlock(&m->lock);
			return;
		}
		fd = m->queue[0];
		memcpy(req, m->qreq[0], sizeof(req));
		memmove(m->queue, m->queue + 1, (m->nq - 1) * sizeof(int));
		memmove(m->qreq, m->qreq + 1, (m->nq - 1) * sizeof(m->qreq[0]));
		m->nq--;
		pthread_mutex_unlock(&m->lock);
		if (strcmp(req, "flush") == 0) {
			rc = pass(m, PASS_ALL, &e);
			answer_status(m, fd, rc ? e.msg : NULL);
			continue;
		}
		/* wait: everything out; a failed file is tried again, a few
		 * times; then the end */
		for (tries = 0; tries < WAIT_TRIES; tries++) {
			rc = pass(m, PASS_ALL, &e);
			if (rc == 0 && json_object_array_length(m->failed) == 0 &&
			    json_object_array_length(m->pending) == 0)
				break;
			sleep(1);
		}
		pthread_mutex_lock(&m->lock);
		m->stop = 1;
		m->saved = tries < WAIT_TRIES;
		pthread_mutex_unlock(&m->lock);
		answer_status(m, fd, rc ? e.msg : NULL);
	}
}

static int
listen_here(struct mover *m, struct gfsp_error *err)
{
	struct sockaddr_un sa;

	/* bound by a relative name: the mover's working directory is the
	 * state directory, whose path may be longer than sun_path */
	unlink(GFSP_MOVER_SOCK);
	m->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", GFSP_MOVER_SOCK);
	if (m->lfd < 0 || bind(m->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0
	    || listen(m->lfd, 16) != 0)
		return gfsp_error_errno(err, errno, "cannot listen on "
				       "'%s/%s'", m->o->state_dir, GFSP_MOVER_SOCK);
	return 0;
}

/* gfsp_write_whole_at's fill: the record's JSON, a line */
static int
put_line(FILE *fp, void *text)
{
	fprintf(fp, "%s\n", (const char *)text);
	return 0;
}

/*
 * GFSP_MOVER_RECORD in the state directory (our working directory): who this
 * mover is and what it copies, for a --wait or --status that finds it
 * gone.  Written whole, replacing the last one.
 */
static int
write_record(struct mover *m, struct gfsp_error *err)
{
	json_object *o = json_object_new_object();
	int rc;

	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "node", json_object_new_string(m->node));
	json_object_object_add(o, "src", json_object_new_string(m->o->src));
	json_object_object_add(o, "dest", json_object_new_string(m->o->dst));
	json_object_object_add(o, "dest_root", json_object_new_string(
	    m->o->dst_root ? m->o->dst_root : m->o->dst));
	json_object_object_add(o, "chunk", json_object_new_uint64(
	    m->o->x.chunk));
	rc = gfsp_write_whole_at(AT_FDCWD, m->o->state_dir, GFSP_MOVER_RECORD, NULL,
	    put_line, (void *)json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN), GFSP_PUT_SYNC, err);
	json_object_put(o);
	return rc;
}

/* The mover's process: signals, priority; m filled in */
static void
begin(struct mover *m, const struct gfsp_mover_opts *o)
{
	memset(m, 0, sizeof(*m));
	m->o = o;
	m->lfd = m->ifd = -1;
	m->wake[0] = m->wake[1] = -1;
	pthread_mutex_init(&m->lock, NULL);
	m->started = gfsp_now();
	m->started_at = time(NULL);
	gfsp_node_name(m->node, sizeof(m->node));
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	signal(SIGHUP, SIG_IGN);
	lower_priority(o->cpus);
}

/* Confined, the state held and its directory ours, the socket, the
 * record, the wake pipe and the server thread */
static int
set_up(struct mover *m, struct gfsp_error *err)
{
	const struct gfsp_mover_opts *o = m->o;
	int rc;

	gfsp_mover_registry();	/* resolved while the caller's cwd is ours */
	/* no link below SRC or DEST followed, whoever plants one */
	rc = gfsp_confine(o->src, err);
	if (rc == 0)
		rc = gfsp_confine(o->dst_root ? o->dst_root : o->dst, err);
	if (rc == 0)
		rc = gfsp_state_open(o->state_dir, 0, 1, &m->st, err);
	if (rc == 0 && gfsp_state_interrupted(m->st))
		gfsp_xfer_sweep(o->dst, m->st);
	/* (by its descriptor: SRC's owner may have swapped the name) */
	if (rc == 0)
		rc = gfsp_state_fchdir(m->st, err);
	if (rc == 0)
		rc = listen_here(m, err);
	if (rc == 0)
		rc = write_record(m, err);
	if (rc == 0 && pipe2(m->wake, O_CLOEXEC | O_NONBLOCK) == 0)
		term_fd = m->wake[1];
	else if (rc == 0)
		rc = gfsp_error_errno(err, errno, "cannot make a pipe");
	if (rc == 0 && (errno = pthread_create(&m->server, NULL, server, m)))
		rc = gfsp_error_errno(err, errno, "cannot start the server "
				     "thread");
	return rc;
}

/* Listed in the registry, held for the mover's life (its entry made and
 * removed there, not by the registry's name again) */
static void
enlist(struct mover *m)
{
	struct gfsp_error e = { 0 };

	m->reg = gfsp_mover_entry(m->node, m->o->state_dir);
	if (m->reg != NULL &&
	    (gfsp_private_dir(gfsp_mover_registry(), 1, NULL, &e) != 0 ||
	     gfsp_hold_private(gfsp_mover_registry(), &e) != 0)) {
		gfsp_log_warn("%s; not listed there", e.msg);
		free(m->reg);
		m->reg = NULL;
	}
	if (m->reg != NULL) {
		gfsp_unlink(m->reg, NULL);
		if (gfsp_symlink(m->o->state_dir, m->reg, NULL) != 0) {
			gfsp_unconfine(gfsp_mover_registry());
			free(m->reg);
			m->reg = NULL;
		}
	}
}

static void
pass_or_warn(struct mover *m)
{
	struct gfsp_error e = { 0 };

	if (pass(m, PASS_PERIODIC, &e) != 0)
		gfsp_log_warn("%s", e.msg);
}

/* The main loop: a pass after a burst of closes and every INTERVAL
 * seconds, the queued requests; until asked to stop or a SIGTERM */
static void
loop(struct mover *m)
{
	struct pollfd pfd[2];
	char drain[64];
	double next, due_close = 0, t;
	int timeout;

	/* whatever an earlier mover left: out first */
	pass_or_warn(m);
	next = gfsp_now() + m->o->interval;
	for (;;) {
		pthread_mutex_lock(&m->lock);
		t = m->stop || got_term;
		pthread_mutex_unlock(&m->lock);
		if (t)
			break;
		t = gfsp_now();
		if (due_close > 0 && due_close <= t) {
			due_close = 0;
			pass_or_warn(m);
		}
		if (next <= t) {
			pass_or_warn(m);
			next = gfsp_now() + m->o->interval;
		}
		t = gfsp_now();
		timeout = (int)(1000 * (GFSP_MIN(next, due_close > 0 ?
				due_close : next) - t)) + 1;
		pfd[0].fd = m->wake[0];
		pfd[0].events = POLLIN;
		pfd[1].fd = m->ifd;
		pfd[1].events = POLLIN;
		if (poll(pfd, m->ifd >= 0 ? 2 : 1, GFSP_MAX(timeout, 0)) <= 0)
			continue;
		if (m->ifd >= 0 && (pfd[1].revents & POLLIN)) {
			read_events(m);
			if ((m->nclosed > 0 || m->overflow) && due_close == 0)
				due_close = gfsp_now() + CLOSE_DELAY;
		}
		if (pfd[0].revents & POLLIN) {
			while (read(m->wake[0], drain, sizeof(drain)) > 0)
				;
			serve_queue(m);
		}
	}
}

/* No more requests (the server thread joined, the queued ones answered
 * with the status), and everything the mover held let go */
static void
wind_down(struct mover *m, int started)
{
	size_t i;

	if (m->lfd >= 0) {
		/* no more requests: the server thread's accept returns */
		unlink(GFSP_MOVER_SOCK);
		shutdown(m->lfd, SHUT_RDWR);
		if (started)
			pthread_join(m->server, NULL);
		close(m->lfd);
	}
	/* requests still queued (a SIGTERM): their answer is the status */
	pthread_mutex_lock(&m->lock);
	while (m->nq > 0) {
		int qfd = m->queue[--m->nq];
		json_object *st = status(m, "the mover was stopped");

		answer(qfd, st);
		close(qfd);
	}
	pthread_mutex_unlock(&m->lock);
	if (m->wake[0] >= 0) {
		term_fd = -1;
		close(m->wake[0]);
		close(m->wake[1]);
	}
	/* listed until a wait saw everything out: a mover stopped or
	 * killed before that is reported by the next --wait or --status
	 * with what it left (gfsp_mover_gone) */
	if (m->reg != NULL) {
		if (m->saved)
			gfsp_unlink(m->reg, NULL);
		gfsp_unconfine(gfsp_mover_registry());
		free(m->reg);
	}
	if (m->ifd >= 0)
		close(m->ifd);
	for (i = 0; i < m->nw; i++)
		free(m->watch[i].rel);
	free(m->watch);
	gfsp_strv_free(m->closed, m->nclosed);
	json_object_put(m->failed);
	json_object_put(m->pending);
	gfsp_state_close(m->st);
}

int
gfsp_mover_run(const struct gfsp_mover_opts *o, struct gfsp_error *err)
{
	struct mover m;
	int rc;

	begin(&m, o);
	rc = set_up(&m, err);
	if (rc == 0) {
		m.ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (m.ifd < 0)
			gfsp_log_warn("no inotify (%s): closes are seen at "
				      "the periodic passes only",
				      strerror(errno));
		else
			watch_tree(&m, "");
		enlist(&m);
		gfsp_log_info("mover %d: '%s' -> '%s', a pass every %.0f s",
			      (int)getpid(), o->src, o->dst, o->interval);
		loop(&m);
	}
	/* (a server thread to join only when set_up succeeded) */
	wind_down(&m, rc == 0);
	if (rc == 0)
		gfsp_log_info("mover %d: done after %llu passes, %llu files",
			      (int)getpid(), (unsigned long long)m.passes,
			      (unsigned long long)m.files);
	return rc;
}
