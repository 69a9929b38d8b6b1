/*
 * progress.c - the progress line of long collective jobs.
 *
 * Every rank keeps its own cumulative count.  Ranks other than 0 send it
 * to rank 0 on a private duplicate of the job's communicator, so progress
 * traffic can never match a receive or a collective of the job itself:
 *
 *   rank r > 0:  update() -- at most every SEND_PERIOD, and only once the
 *                previous MPI_Isend has completed -- MPI_Isend(count, TAG_COUNT)
 *                finish()  -- MPI_Isend(count, TAG_DONE), wait for both sends
 *   rank 0:      update()  -- drain pending messages with MPI_Iprobe/MPI_Recv,
 *                             redraw the line at most every DRAW_PERIOD
 *                finish()  -- MPI_Recv until every rank's TAG_DONE arrived
 *
 * Messages from one rank are non-overtaking, so a rank's last count is
 * always received before its DONE; each rank has at most two messages in
 * flight, so rank 0's memory is one counter per rank.  A rank that never
 * calls update() only sends its DONE, and finish() completes all the same.
 *
 * The line goes to stderr on rank 0 when stderr is a terminal (redrawn in
 * place with "\r" and erase-to-end-of-line) and -q was not given.  Under
 * mpiexec a rank's stderr is a pipe to the launcher, which relays it; what
 * counts then is the launcher's own stderr (see launcher_on_tty).
 * --progress[=SECONDS] (gfsp_progress_force) draws it on a non-terminal
 * too, one line every SECONDS; GFSPLIT_PROGRESS=1 does so at every
 * redraw (for tests); GFSPLIT_PROGRESS=0 turns it off.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"

#define TAG_COUNT	1
#define TAG_DONE	2
#define SEND_PERIOD	0.5	/* seconds between sends of one rank */
#define POLL_PERIOD	0.05	/* seconds between drains on rank 0 */
#define DRAW_PERIOD	0.25	/* seconds between redraws */

enum { SHOW_NONE, SHOW_TTY, SHOW_LINES };

struct gfsp_progress {
	MPI_Comm comm;		/* private dup, or MPI_COMM_NULL */
	int rank, nprocs;
	char *label;
	const char *unit;	/* what is counted; NULL: bytes */
	uint64_t total;
	uint64_t done;		/* this rank's count */
	int show;		/* SHOW_* on rank 0 */
	double period;		/* seconds between redraws */

	/* rank > 0 */
	MPI_Request sreq;	/* the COUNT send in flight */
	uint64_t sbuf;		/* its buffer, stable until it completes */
	uint64_t sent;		/* last count sent */
	double last_send;

	/* rank 0 */
	uint64_t *counts;	/* latest count of each rank */
	int ndone;		/* DONE messages received */
	double start, last_poll, last_draw;
};

/* parent pid and command name of pid from /proc, or -1 */
static long
proc_parent(long pid, char *comm, size_t len)
{
	char path[64], buf[512], *lpar, *rpar;
	long ppid = -1;
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fp = fopen(path, "r");
	if (fp == NULL)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	/* "pid (comm) state ppid ...": comm may itself hold ')' */
	lpar = strchr(buf, '(');
	rpar = strrchr(buf, ')');
	if (lpar == NULL || rpar == NULL || rpar < lpar)
		return -1;
	snprintf(comm, len, "%.*s", (int)(rpar - lpar - 1), lpar + 1);
	if (sscanf(rpar + 1, " %*c %ld", &ppid) != 1)
		return -1;
	return ppid;
}

/*
 * Under an MPI launcher (Hydra's mpiexec and proxies; the ranks get their
 * own session, so no controlling terminal either), stderr is a pipe to a
 * proxy.  Walk up the local process tree to the launcher and test where
 * its stderr goes.  Only when the launcher runs on this node (the usual
 * interactive case); a remote launch finds none and draws nothing.
 */
static int
launcher_on_tty(void)
{
	char comm[64], path[64], target[PATH_MAX];
	struct stat sb;
	long pid = (long)getpid();
	ssize_t n;
	int depth;

	if (getenv("PMI_RANK") == NULL && getenv("PMI_FD") == NULL &&
	    getenv("OMPI_COMM_WORLD_RANK") == NULL)
		return 0;
	if (fstat(STDERR_FILENO, &sb) != 0 ||
	    !(S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode)))
		return 0;
	for (depth = 0; depth < 4; depth++) {
		pid = proc_parent(pid, comm, sizeof(comm));
		if (pid <= 1)
			return 0;
		if (proc_parent(pid, comm, sizeof(comm)) < 0)
			return 0;
		if (strncmp(comm, "mpiexec", 7) != 0 &&
		    strncmp(comm, "mpirun", 6) != 0 &&
		    strcmp(comm, "prterun") != 0 &&
		    strcmp(comm, "orterun") != 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/fd/2", pid);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			return 0;
		target[n] = '\0';
		return strncmp(target, "/dev/pts/", 9) == 0 ||
			strncmp(target, "/dev/tty", 8) == 0;
	}
	return 0;
}

static double forced;	/* --progress: seconds between lines, or 0 */

void
gfsp_progress_force(double period)
{
	forced = period > 0 ? period : 0;
}

static int
progress_show_mode(void)
{
	const char *env = getenv("GFSPLIT_PROGRESS");

	if (gfsp_log_level() <= GFSP_LOG_QUIET)
		return SHOW_NONE;
	if (env != NULL && strcmp(env, "0") == 0 && forced == 0)
		return SHOW_NONE;
	/* a terminal first: there --progress changes nothing (the line is
	 * redrawn in place, every DRAW_PERIOD, as without it) */
	if (isatty(STDERR_FILENO) || launcher_on_tty())
		return SHOW_TTY;
	if (forced > 0 || (env != NULL && strcmp(env, "1") == 0))
		return SHOW_LINES;
	return SHOW_NONE;
}

/* "1:05" or "2:03:04" */
static void
fmt_duration(double s, char *buf, size_t len)
{
	unsigned long t;

	if (s < 0 || s > 359999999.0) {
		snprintf(buf, len, "--:--");
		return;
	}
	t = (unsigned long)(s + 0.5);
	if (t >= 3600)
		snprintf(buf, len, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60,
			 t % 60);
	else
		snprintf(buf, len, "%lu:%02lu", t / 60, t % 60);
}

static uint64_t
progress_sum(const struct gfsp_progress *p)
{
	uint64_t sum = p->done;
	int i;

	for (i = 1; p->counts != NULL && i < p->nprocs; i++)
		sum += p->counts[i];
	return sum;
}

/* "label: 512.0 MiB / 1.00 GiB  50%  812.3 MiB/s  ETA 0:01" */
static void
progress_draw(struct gfsp_progress *p, int final)
{
	char dbuf[32], tbuf[32], rbuf[32], ebuf[32], line[512];
	uint64_t sum = progress_sum(p);
	double el = gfsp_now() - p->start, rate, pct;

	if (p->show == SHOW_NONE)
		return;
	/* (a few bytes in a nanosecond would overflow the cast below) */
	rate = el > 0 ? GFSP_MIN((double)sum / el, 1e18) : 0;
	pct = p->total > 0 ? 100.0 * (double)sum / (double)p->total : 100.0;
	if (pct > 100)
		pct = 100;
	if (final) {
		fmt_duration(el, ebuf, sizeof(ebuf));
	} else if (rate > 0 && sum < p->total) {
		fmt_duration((double)(p->total - sum) / rate, ebuf,
			     sizeof(ebuf));
	} else {
		snprintf(ebuf, sizeof(ebuf), sum >= p->total ? "0:00" : "--:--");
	}
	if (p->unit != NULL)	/* "label: 12 / 96 phases  12%  ETA 3:20" */
		snprintf(line, sizeof(line), "%s: %llu / %llu %s  %3d%%  %s %s",
			 p->label, (unsigned long long)sum,
			 (unsigned long long)p->total, p->unit, (int)pct,
			 final ? "in" : "ETA", ebuf);
	else
		snprintf(line, sizeof(line), "%s: %s / %s  %3d%%  %s/s  %s %s",
			 p->label, gfsp_format_size(sum, dbuf, sizeof(dbuf)),
			 gfsp_format_size(p->total, tbuf, sizeof(tbuf)),
			 /* 99.7% is not done yet: do not round it up */
			 (int)pct, gfsp_format_size((uint64_t)rate, rbuf,
						    sizeof(rbuf)),
			 final ? "in" : "ETA", ebuf);
	if (p->show == SHOW_TTY)
		fprintf(stderr, "\r%s\033[K%s", line, final ? "\n" : "");
	else
		fprintf(stderr, "%s\n", line);
	fflush(stderr);
	p->last_draw = gfsp_now();
}

/* rank 0: receive whatever has arrived, without blocking */
static void
progress_drain(struct gfsp_progress *p)
{
	MPI_Status st;
	uint64_t v;
	int flag;

	for (;;) {
		flag = 0;
		if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, p->comm, &flag,
			       &st) != MPI_SUCCESS || !flag)
			break;
		if (MPI_Recv(&v, 1, MPI_UINT64_T, st.MPI_SOURCE, st.MPI_TAG,
			     p->comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			break;
		if (p->counts != NULL)
			p->counts[st.MPI_SOURCE] = v;
		if (st.MPI_TAG == TAG_DONE)
			p->ndone++;
	}
}

struct gfsp_progress *
gfsp_progress_start(MPI_Comm comm, const char *label, uint64_t total)
{
	return gfsp_progress_start_count(comm, label, total, NULL);
}

struct gfsp_progress *
gfsp_progress_start_count(MPI_Comm comm, const char *label, uint64_t total,
			  const char *unit)
{
	struct gfsp_progress *p;

	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->comm = MPI_COMM_NULL;
	p->nprocs = 1;
	p->sreq = MPI_REQUEST_NULL;
	p->total = total;
	p->unit = unit;
	p->label = strdup(label != NULL ? label : "progress");
	if (comm != MPI_COMM_NULL) {
		if (gfsp_comm_dup(comm, &p->comm) != MPI_SUCCESS)
			p->comm = MPI_COMM_NULL;
		else {
			MPI_Comm_set_errhandler(p->comm, MPI_ERRORS_RETURN);
			MPI_Comm_rank(p->comm, &p->rank);
			MPI_Comm_size(p->comm, &p->nprocs);
		}
	}
	if (p->rank == 0) {
		p->counts = calloc((size_t)p->nprocs, sizeof(*p->counts));
		p->show = progress_show_mode();
	}
	p->period = p->show == SHOW_LINES && forced > 0 ? forced :
		    DRAW_PERIOD;
	/* out of memory: keep the collective shape, silently */
	if (p->label == NULL || (p->rank == 0 && p->counts == NULL))
		p->show = SHOW_NONE;
	p->start = gfsp_now();
	p->last_send = p->last_poll = p->last_draw = p->start;
	return p;
}

void
gfsp_progress_update(struct gfsp_progress *p, uint64_t done)
{
	double now;
	int flag;

	if (p == NULL)
		return;
	p->done = done;
	now = gfsp_now();
	if (p->rank != 0) {
		if (p->sreq != MPI_REQUEST_NULL) {
			flag = 0;
			if (MPI_Test(&p->sreq, &flag, MPI_STATUS_IGNORE) !=
			    MPI_SUCCESS || !flag)
				return;
		}
		if (done == p->sent || now - p->last_send < SEND_PERIOD)
			return;
		p->sbuf = done;
		if (MPI_Isend(&p->sbuf, 1, MPI_UINT64_T, 0, TAG_COUNT, p->comm,
			      &p->sreq) != MPI_SUCCESS)
			p->sreq = MPI_REQUEST_NULL;
		p->sent = done;
		p->last_send = now;
		return;
	}
	if (p->comm != MPI_COMM_NULL && now - p->last_poll >= POLL_PERIOD) {
		progress_drain(p);
		p->last_poll = now;
	}
	if (p->show != SHOW_NONE && now - p->last_draw >= p->period)
		progress_draw(p, 0);
}

void
gfsp_progress_finish(struct gfsp_progress *p)
{
	MPI_Request dreq, rreq;
	MPI_Status st;
	uint64_t v;

	if (p == NULL)
		return;
	if (p->comm != MPI_COMM_NULL && p->rank != 0) {
		p->sent = p->done;
		if (MPI_Isend(&p->sent, 1, MPI_UINT64_T, 0, TAG_DONE, p->comm,
			      &dreq) == MPI_SUCCESS)
			gfsp_mpi_wait(&dreq, NULL);
		if (p->sreq != MPI_REQUEST_NULL)
			gfsp_mpi_wait(&p->sreq, NULL);
	} else if (p->comm != MPI_COMM_NULL) {
		/* the others may still be copying: wait without spinning */
		while (p->ndone < p->nprocs - 1) {
			if (MPI_Irecv(&v, 1, MPI_UINT64_T, MPI_ANY_SOURCE,
				      MPI_ANY_TAG, p->comm, &rreq) != MPI_SUCCESS ||
			    gfsp_mpi_wait(&rreq, &st) != MPI_SUCCESS)
				break;
			if (p->counts != NULL)
				p->counts[st.MPI_SOURCE] = v;
			if (st.MPI_TAG == TAG_DONE)
				p->ndone++;
		}
	}
	if (p->rank == 0)
		progress_draw(p, 1);
	if (p->comm != MPI_COMM_NULL)
		MPI_Comm_free(&p->comm);
	free(p->counts);
	free(p->label);
	free(p);
}
