/*
 * watch.c - stuck and dying ranks (core.h): --timeout, and a word on
 * SIGTERM.
 *
 * One stopped rank (SIGSTOP, a node that froze, a file system that hangs)
 * would keep every other rank waiting for it forever.  With a timeout,
 * nobody waits longer than that:
 *
 *   in a wait for peers (gfsp_agree, gfsp_mpi_wait, the barriers: every
 *   phase of a command ends in one), the waiting rank itself gives up at
 *   the deadline.  LISTEN seconds before it, it asks every rank, on a
 *   communicator of its own, what it is doing; the ranks that have not
 *   answered at the deadline are the ones it waited for.  It tells those
 *   that answered, each of them prints its own line naming them and
 *   removes what it made, and a second later the job is ended
 *   (MPI_Abort): all within the timeout plus ENDING seconds.
 *
 *     rank 0: ASK -> 1, 2, 3      rank 1: STATE "copy", waiting 29 s
 *                                  rank 2: (stopped: no answer)
 *                                  rank 3: STATE "copy", waiting 30 s
 *     rank 0: VERDICT "2" -> 1, 3; each prints; MPI_Abort
 *
 *   anywhere else (blocked in the file system, or in an MPI call that
 *   is not one of those waits): a watchdog thread, which makes no MPI
 *   call, sees no heartbeat (store operations, finished waits) for the
 *   timeout plus ENDING, prints the rank's phase and ends the process;
 *   mpiexec then ends the job.
 *
 * Waiting ranks answer ASKs as they poll, so the check costs nothing
 * until someone gives up.  Without a timeout none of this runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

#define LISTEN		1.0	/* seconds to listen for answers (at most a
				 * quarter of the timeout): a rank in a wait
				 * answers within 10 ms */
#define ENDING		2.0	/* seconds from the deadline to the end:
				 * the verdict, undo, MPI_Abort (the man
				 * pages say so) */
#define UNDO_MAX_S	5	/* undo stuck in the file system: ended */
#define TAG_ASK		1
#define TAG_STATE	2
#define TAG_VERDICT	3
#define PHASE_MAX	64
#define VERDICT_MAX	512

struct state_msg {
	int rank;
	int waiting;		/* in a wait for peers */
	double secs;		/* for so long */
	char phase[PHASE_MAX];
};

static struct {
	double timeout;		/* seconds; 0: off */
	MPI_Comm comm;		/* a duplicate of the command's */
	int rank, size;
	char prog[64];
	const char *phase;	/* a string that lives as long as the run */
	int64_t beat_ns;	/* last progress (monotonic) */
	int64_t wait_ns;	/* in a wait since (0: not waiting) */
	int64_t poll_ns;	/* last look for ASKs */
	pthread_t thread;
	int running;
} wd = { .comm = MPI_COMM_NULL, .phase = "" };

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void
gfsp_watch_phase(const char *phase)
{
	__atomic_store_n(&wd.phase, phase, __ATOMIC_RELAXED);
	gfsp_watch_beat();
}

void
gfsp_watch_beat(void)
{
	if (wd.timeout > 0)
		__atomic_store_n(&wd.beat_ns, now_ns(), __ATOMIC_RELAXED);
}

/* write(2) of one line to stderr: safe in a signal handler and in a
 * thread while the main thread may hold stdio's lock */
static void
say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, (size_t)n) < 0)
		return;
}

/* ------------------------------------------------------- the watchdog */

static void run_undo(void);

static void *
watchdog(void *arg)
{
	/* ENDING later than the waits give up: what waits for this rank
	 * (and a transport's own give-up on a peer, which makes progress
	 * again) goes first, and ends the job as one (MPI_Abort); this
	 * thread's _exit leaves mpiexec waiting for a node that froze */
	int64_t lim = (int64_t)((wd.timeout + ENDING) * 1e9), now, beat, since;

	(void)arg;
	for (;;) {
		usleep(250000);
		now = now_ns();
		beat = __atomic_load_n(&wd.beat_ns, __ATOMIC_RELAXED);
		since = __atomic_load_n(&wd.wait_ns, __ATOMIC_RELAXED);
		/* a waiting main thread judges for itself; the thread steps
		 * in only if that judging hangs too */
		if ((since == 0 && now - beat > lim) ||
		    (since != 0 && now - since > lim + (int64_t)(3 * ENDING *
								 1e9))) {
			say("%s: rank %d: no progress for %.1f s in '%s' "
			    "(blocked in the file system or in MPI): --timeout "
			    "%g s, ending the job", wd.prog, wd.rank,
			    (double)(now - (since ? since : beat)) / 1e9,
			    __atomic_load_n(&wd.phase, __ATOMIC_RELAXED),
			    wd.timeout);
			run_undo();
			_exit(1);
		}
	}
	return NULL;
}

/* append s to buf[*n] (async-signal-safe: no stdio) */
static void
put(char *buf, size_t *n, size_t cap, const char *s)
{
	while (*s != '\0' && *n + 1 < cap)
		buf[(*n)++] = *s++;
}

/* A copy in its pipeline stops at the first SIGINT or SIGTERM: the chunk
 * loops see stop_sig, fail, and the engine removes what it made. */
static volatile sig_atomic_t stoppable, stop_sig;
static int64_t stop_ns;
#define STOP_GRACE	10	/* seconds to stop cleanly: then, a peer
				 * stopped or gone, at once */
#define ECHO_NS	2000000000	/* the same signal again sooner: one request
				 * come two ways (mpiexec forwards what the
				 * batch system also sent every process) */

void
gfsp_watch_stoppable(int on)
{
	stoppable = on;
}

int
gfsp_watch_stopped(void)
{
	return stop_sig;
}

void
gfsp_watch_stop(int sig)
{
	if (stop_sig == 0)
		stop_sig = sig;
}

static void
on_term(int sig)
{
	char buf[256], num[16];
	size_t n = 0;
	int r = wd.rank, k = (int)sizeof(num) - 1;

	if (stop_sig == sig && now_ns() - stop_ns < ECHO_NS)
		return;
	if (stoppable && stop_sig == 0) {
		stop_sig = sig;
		stop_ns = now_ns();
		/* the engine's clean-up agrees with the other ranks: one of
		 * them stopped (SIGSTOP) must not keep this one forever */
		signal(SIGALRM, on_term);
		alarm(STOP_GRACE);
		if (wd.rank != 0)
			return;
		put(buf, &n, sizeof(buf), wd.prog);
		put(buf, &n, sizeof(buf), sig == SIGTERM ? ": SIGTERM" :
		    ": SIGINT");
		put(buf, &n, sizeof(buf), ": stopping; removing what this "
		    "run made (send it again to end at once)\n");
		if (write(STDERR_FILENO, buf, n) < 0)
			n = 0;
		return;
	}

	num[k] = '\0';
	do {
		num[--k] = (char)('0' + r % 10);
		r /= 10;
	} while (r > 0 && k > 0);
	put(buf, &n, sizeof(buf), wd.prog);
	put(buf, &n, sizeof(buf), ": rank ");
	put(buf, &n, sizeof(buf), num + k);
	put(buf, &n, sizeof(buf), sig == SIGTERM ? ": Terminated in '" :
	    sig == SIGALRM ? ": not stopped within 10 s, ending in '" :
	    ": Interrupt in '");
	put(buf, &n, sizeof(buf), __atomic_load_n(&wd.phase, __ATOMIC_RELAXED));
	put(buf, &n, sizeof(buf), "'\n");
	if (write(STDERR_FILENO, buf, n) < 0)
		n = 0;
	/* death by the signal (the one that stopped us, after SIGALRM):
	 * that, not an exit status, makes mpiexec end the whole job.  What
	 * this run made goes first (not async-signal-safe, so bounded: the
	 * alarm run_undo sets ends us if it hangs) */
	if (sig == SIGALRM)
		sig = stop_sig;
	run_undo();
	signal(sig, SIG_DFL);
	raise(sig);
}

int
gfsp_timeout_env(double *t)
{
	const char *env = getenv("GFSPLIT_TIMEOUT");
	char *end;

	*t = 0;
	if (env == NULL || *env == '\0')
		return 0;
	*t = strtod(env, &end);
	if (*end != '\0' || !(*t >= 0)) {
		*t = 0;
		return -1;
	}
	return 0;
}

double
gfsp_timeout_setting(void)
{
	double t;

	if (wd.timeout > 0)
		return wd.timeout;
	return gfsp_timeout_env(&t) == 0 ? t : 0;
}

int
gfsp_watch_start(const char *prog, MPI_Comm comm, double timeout,
		struct gfsp_error *err)
{
	snprintf(wd.prog, sizeof(wd.prog), "%s", prog);
	wd.phase = prog;
	if (comm != MPI_COMM_NULL) {
		MPI_Comm_rank(comm, &wd.rank);
		MPI_Comm_size(comm, &wd.size);
		/* the job ends as a whole: say which rank went, and where */
		signal(SIGTERM, on_term);
		signal(SIGINT, on_term);
	}
	if (timeout <= 0)
		return 0;
	if (comm != MPI_COMM_NULL &&
	    gfsp_mpi_check(MPI_Comm_dup(comm, &wd.comm), "MPI_Comm_dup",
			  err) != 0)
		return GFSP_EMPI;
	wd.timeout = timeout;
	wd.beat_ns = now_ns();
	if ((errno = pthread_create(&wd.thread, NULL, watchdog, NULL)) != 0)
		return gfsp_error_errno(err, errno, "cannot start the "
				       "watchdog thread");
	pthread_detach(wd.thread);
	wd.running = 1;
	return 0;
}

/* ------------------------------------------------------- the waiting */

/* "2,5-7" of the ranks whose flag is 0 */
static void
rank_list(const unsigned char *alive, int n, char *buf, size_t len)
{
	size_t o = 0;
	int r = 0, s;

	buf[0] = '\0';
	while (r < n && o < len) {
		if (alive[r]) {
			r++;
			continue;
		}
		for (s = r; r + 1 < n && !alive[r + 1]; r++)
			;
		o += (size_t)snprintf(buf + o, len - o, "%s%d", o ? "," : "",
				      s);
		if (r > s && o < len)
			o += (size_t)snprintf(buf + o, len - o, "-%d", r);
		r++;
	}
}

static void
send_bytes(const void *buf, int len, int to, int tag)
{
	MPI_Request req;

	if (MPI_Isend(buf, len, MPI_BYTE, to, tag, wd.comm, &req) ==
	    MPI_SUCCESS)
		MPI_Request_free(&req);
}

/* ------------------------------------------------ undo at the timeout */

static struct {
	void (*fn)(void *);
	void *arg;
} undo[GFSP_UNDO_MAX];
static int nundo;
static pthread_mutex_t undo_lock = PTHREAD_MUTEX_INITIALIZER;

int
gfsp_watch_undo_push(void (*fn)(void *), void *arg)
{
	int rc = -1;

	pthread_mutex_lock(&undo_lock);
	if (nundo < GFSP_UNDO_MAX) {
		undo[nundo].fn = fn;
		undo[nundo++].arg = arg;
		rc = 0;
	}
	pthread_mutex_unlock(&undo_lock);
	return rc;
}

void
gfsp_watch_undo_pop(void (*fn)(void *), void *arg)
{
	int i;

	pthread_mutex_lock(&undo_lock);
	for (i = nundo; i-- > 0;)
		if (undo[i].fn == fn && undo[i].arg == arg) {
			memmove(&undo[i], &undo[i + 1],
				(size_t)(nundo - i - 1) * sizeof(undo[0]));
			nundo--;
			break;
		}
	pthread_mutex_unlock(&undo_lock);
}

/*
 * The job ends: undo what is registered, newest first, once.  Bounded in
 * time: the alarm's default action ends the process if the file system
 * hangs in it, or (from a signal handler) a lock the interrupted thread
 * held does (a trylock here: the main thread may hold it, stuck).
 */
static void
run_undo(void)
{
	static int done;
	void (*fn)(void *);
	void *arg;

	if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
		return;
	signal(SIGALRM, SIG_DFL);
	alarm(UNDO_MAX_S);
	if (pthread_mutex_trylock(&undo_lock) != 0)
		return;
	while (nundo > 0) {
		fn = undo[nundo - 1].fn;
		arg = undo[--nundo].arg;
		fn(arg);
	}
	pthread_mutex_unlock(&undo_lock);
	alarm(0);
}

void
gfsp_watch_run_undo(void)
{
	run_undo();
}

/* A peer gave up and names the ranks it waited for: our line, and end. */
static void
verdict(int from, const char *who, int64_t since)
{
	say("%s: rank %d: gave up after %.1f s waiting in '%s' for rank %s "
	    "(no answer: stopped, dead, blocked or still busy; found by rank "
	    "%d)", wd.prog, wd.rank, (double)(now_ns() - since) / 1e9,
	    __atomic_load_n(&wd.phase, __ATOMIC_RELAXED), who, from);
	run_undo();
	sleep(1);	/* the finder aborts; if it is gone, we do */
	MPI_Abort(MPI_COMM_WORLD, 1);
	_exit(1);
}

/* Serve what came on the watch communicator; `alive` (the finder's) is
 * marked for each STATE. */
static void
serve(int64_t since, unsigned char *alive)
{
	static struct state_msg me;
	struct state_msg st;
	char text[VERDICT_MAX];
	MPI_Status s;
	int flag, len;

	for (;;) {
		if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, wd.comm, &flag, &s)
		    != MPI_SUCCESS || !flag)
			return;
		MPI_Get_count(&s, MPI_BYTE, &len);
		if (s.MPI_TAG == TAG_STATE) {
			MPI_Recv(&st, sizeof(st), MPI_BYTE, s.MPI_SOURCE,
				 TAG_STATE, wd.comm, MPI_STATUS_IGNORE);
			if (alive != NULL && st.rank >= 0 && st.rank < wd.size)
				alive[st.rank] = 1;
		} else if (s.MPI_TAG == TAG_VERDICT) {
			MPI_Recv(text, sizeof(text), MPI_BYTE, s.MPI_SOURCE,
				 TAG_VERDICT, wd.comm, MPI_STATUS_IGNORE);
			text[sizeof(text) - 1] = '\0';
			verdict(s.MPI_SOURCE, text, since);
		} else {
			MPI_Recv(NULL, 0, MPI_BYTE, s.MPI_SOURCE, s.MPI_TAG,
				 wd.comm, MPI_STATUS_IGNORE);
			/* the answer is sent from a static: it must stay until
			 * the send is done, and a second ASK brings the same */
			memset(&me, 0, sizeof(me));
			me.rank = wd.rank;
			me.waiting = 1;
			me.secs = (double)(now_ns() - since) / 1e9;
			snprintf(me.phase, sizeof(me.phase), "%s",
				 __atomic_load_n(&wd.phase, __ATOMIC_RELAXED));
			send_bytes(&me, sizeof(me), s.MPI_SOURCE, TAG_STATE);
		}
	}
}

/* seconds before the deadline that the ASKs go out */
static double
listen_s(void)
{
	return wd.timeout / 4 < LISTEN ? wd.timeout / 4 : LISTEN;
}

/*
 * The deadline draws near in a wait on req: ask who is there, and at the
 * deadline tell everyone whom we waited for and end the job.  Returns (0)
 * only if req completed meanwhile: the peer was late, not lost.
 */
static int
give_up(MPI_Request *req, int64_t since)
{
	static const char ask;
	unsigned char *alive;
	char who[VERDICT_MAX];
	int64_t end;
	int r, done = 0;

	alive = calloc((size_t)wd.size, 1);
	if (alive == NULL) {
		say("%s: rank %d: gave up after %.0f s waiting in '%s'",
		    wd.prog, wd.rank, (double)(now_ns() - since) / 1e9,
		    wd.phase);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	alive[wd.rank] = 1;
	for (r = 0; r < wd.size; r++)
		if (r != wd.rank)
			send_bytes(&ask, 0, r, TAG_ASK);
	for (end = since + (int64_t)(wd.timeout * 1e9); now_ns() < end;) {
		serve(since, alive);
		if (MPI_Test(req, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
		    done) {
			free(alive);
			return 0;
		}
		usleep(10000);
	}
	rank_list(alive, wd.size, who, sizeof(who));
	if (who[0] == '\0')
		snprintf(who, sizeof(who), "(every rank answered: all waiting)");
	say("%s: rank %d: gave up after %.1f s waiting in '%s' for rank %s "
	    "(no answer: stopped, dead, blocked or still busy): --timeout "
	    "%g s, ending the job", wd.prog, wd.rank,
	    (double)(now_ns() - since) / 1e9,
	    __atomic_load_n(&wd.phase, __ATOMIC_RELAXED), who, wd.timeout);
	for (r = 0; r < wd.size; r++)
		if (alive[r] && r != wd.rank)
			send_bytes(who, (int)strlen(who) + 1, r, TAG_VERDICT);
	/* a moment for them to print theirs and undo what they made */
	run_undo();
	for (end = now_ns() + 1000000000; now_ns() < end; usleep(10000))
		serve(since, alive);
	MPI_Abort(MPI_COMM_WORLD, 1);
	_exit(1);
}

int64_t
gfsp_watch_wait_begin(void)
{
	int64_t t;

	if (wd.timeout <= 0)
		return 0;
	t = now_ns();
	__atomic_store_n(&wd.wait_ns, t, __ATOMIC_RELAXED);
	return t;
}

void
gfsp_watch_wait_poll(MPI_Request *req, int64_t since)
{
	int64_t t;

	if (wd.timeout <= 0 || since == 0)
		return;
	t = now_ns();
	if (t - wd.poll_ns > 10000000 && wd.comm != MPI_COMM_NULL) {
		wd.poll_ns = t;
		serve(since, NULL);
	}
	if (wd.comm == MPI_COMM_NULL) {
		if (t - since > (int64_t)(wd.timeout * 1e9)) {
			say("%s: gave up after %.1f s waiting in '%s'", wd.prog,
			    (double)(t - since) / 1e9, wd.phase);
			_exit(1);
		}
		return;
	}
	if (t - since > (int64_t)((wd.timeout - listen_s()) * 1e9))
		give_up(req, since);
}

void
gfsp_watch_wait_end(int64_t since)
{
	if (since == 0)
		return;
	__atomic_store_n(&wd.wait_ns, 0, __ATOMIC_RELAXED);
	gfsp_watch_beat();
}
