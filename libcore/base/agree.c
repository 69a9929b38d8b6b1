/*
 * agree.c - collective agreement on the outcome of a phase.
 */
#include <string.h>
#include <time.h>

#include "core.h"

/* spin this many tests first: a phase whose ranks arrive together (the
 * common case) pays no sleep at all; then sleep at most 100 us between
 * tests, since a waiting rank may be the target of others' one-sided
 * operations, which this MPICH serves only inside MPI calls.  A rank idle
 * for long (no one-sided target) sleeps up to 5 ms: on an oversubscribed
 * node, seven ranks waking 10000 times a second each take the CPU from
 * the one at work (envelope-bench's one-process create rate on Gfarm, 2
 * cores, came out at half an independent loop's with them). */
#define SPIN_TESTS 200
#define MAX_SLEEP_NS 100000L
#define IDLE_SLEEP_NS 5000000L

static int
wait_backoff(MPI_Request *req, MPI_Status *st, long max_ns)
{
	struct timespec ts = { 0, 0 };
	int done = 0, n = 0, mrc;
	int64_t since = 0;

	for (;;) {
		mrc = MPI_Test(req, &done, st != NULL ? st : MPI_STATUS_IGNORE);
		if (mrc != MPI_SUCCESS || done) {
			gfsp_watch_wait_end(since);
			return mrc;
		}
		if (++n <= SPIN_TESTS)
			continue;
		/* a long wait: --timeout's deadline runs from here */
		if (n == SPIN_TESTS + 1)
			since = gfsp_watch_wait_begin();
		else
			gfsp_watch_wait_poll(req, since);
		ts.tv_nsec = ts.tv_nsec ? GFSP_MIN(2 * ts.tv_nsec, max_ns)
					: 1000;
		nanosleep(&ts, NULL);
	}
}

int
gfsp_mpi_wait(MPI_Request *req, MPI_Status *st)
{
	return wait_backoff(req, st, MAX_SLEEP_NS);
}

static int
barrier_backoff(MPI_Comm comm, long max_ns)
{
	MPI_Request req;
	int mrc;

	mrc = MPI_Ibarrier(comm, &req);
	return mrc == MPI_SUCCESS ? wait_backoff(&req, NULL, max_ns) : mrc;
}

int
gfsp_quiet_barrier(MPI_Comm comm)
{
	return barrier_backoff(comm, MAX_SLEEP_NS);
}

int
gfsp_idle_barrier(MPI_Comm comm)
{
	return barrier_backoff(comm, IDLE_SLEEP_NS);
}

/* a started request (mrc its start's code) waited for quietly */
static int
quiet(int mrc, MPI_Request *req)
{
	return mrc == MPI_SUCCESS ? gfsp_mpi_wait(req, NULL) : mrc;
}

int
gfsp_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
	MPI_Request req;

	return quiet(MPI_Ibcast(buf, count, type, root, comm, &req), &req);
}

#define CHAIN_SEG	((size_t)256 << 10)
#define CHAIN_TAG	0x6763		/* gfsp_bcast_chain's messages */

int
gfsp_bcast_chain(void *buf, size_t len, int root, MPI_Comm comm)
{
	MPI_Request rreq = MPI_REQUEST_NULL, sreq = MPI_REQUEST_NULL;
	char *p = buf;
	size_t nseg, s, off;
	int rank, size, rel, prev, next, mrc;

	mrc = MPI_Comm_rank(comm, &rank);
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Comm_size(comm, &size);
	if (mrc != MPI_SUCCESS || size == 1 || len == 0)
		return mrc;
	rel = (rank - root + size) % size;
	prev = (rank + size - 1) % size;
	next = (rank + 1) % size;
	nseg = (len + CHAIN_SEG - 1) / CHAIN_SEG;
	/* segment s + 1 comes in while segment s goes on */
	if (rel != 0)
		mrc = MPI_Irecv(p, (int)GFSP_MIN(CHAIN_SEG, len), MPI_BYTE, prev,
				CHAIN_TAG, comm, &rreq);
	for (s = 0; mrc == MPI_SUCCESS && s < nseg; s++) {
		off = s * CHAIN_SEG;
		if (rel != 0) {
			mrc = gfsp_mpi_wait(&rreq, NULL);
			if (mrc == MPI_SUCCESS && s + 1 < nseg)
				mrc = MPI_Irecv(p + off + CHAIN_SEG, (int)GFSP_MIN(
				    CHAIN_SEG, len - off - CHAIN_SEG), MPI_BYTE,
				    prev, CHAIN_TAG, comm, &rreq);
		}
		if (mrc == MPI_SUCCESS && rel != size - 1) {
			mrc = gfsp_mpi_wait(&sreq, NULL);
			if (mrc == MPI_SUCCESS)
				mrc = MPI_Isend(p + off, (int)GFSP_MIN(CHAIN_SEG,
				    len - off), MPI_BYTE, next, CHAIN_TAG, comm,
				    &sreq);
		}
	}
	if (mrc == MPI_SUCCESS)
		mrc = gfsp_mpi_wait(&sreq, NULL);
	return mrc;
}

int
gfsp_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
	       int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	MPI_Request req;

	return quiet(MPI_Iallgather(sbuf, scount, stype, rbuf, rcount, rtype,
	    comm, &req), &req);
}

int
gfsp_gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
	    int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	MPI_Request req;

	return quiet(MPI_Igather(sbuf, scount, stype, rbuf, rcount, rtype,
	    root, comm, &req), &req);
}

int
gfsp_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
	       MPI_Op op, MPI_Comm comm)
{
	MPI_Request req;

	return quiet(MPI_Iallreduce(sbuf, rbuf, count, type, op, comm, &req),
	    &req);
}

int
gfsp_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
	    MPI_Op op, int root, MPI_Comm comm)
{
	MPI_Request req;

	return quiet(MPI_Ireduce(sbuf, rbuf, count, type, op, root, comm,
	    &req), &req);
}

int
gfsp_comm_dup(MPI_Comm comm, MPI_Comm *out)
{
	MPI_Request req;

	return quiet(MPI_Comm_idup(comm, out, &req), &req);
}

/*
 * One MPI_Allreduce with MPI_MINLOC over (key, code) pairs carries both
 * the verdict and the culprit:
 *
 *   key  = rank if this rank failed, nprocs otherwise
 *   code = this rank's rc
 *
 * The minimum key is the lowest failed rank (nprocs if none failed), and
 * MINLOC's "index" travels with it, so every rank also learns that rank's
 * code.  Keys are distinct among failed ranks, so the pair is exact.
 */
int
gfsp_agree(MPI_Comm comm, int rc, struct gfsp_error *err)
{
	struct { int key; int code; } in, out;
	MPI_Request req;
	int rank, nprocs, mrc;

	if (comm == MPI_COMM_NULL)
		return rc;

	mrc = MPI_Comm_rank(comm, &rank);
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Comm_size(comm, &nprocs);
	if (mrc != MPI_SUCCESS)
		return gfsp_mpi_check(mrc, "cannot agree on the outcome", err);

	in.key = rc != 0 ? rank : nprocs;
	in.code = rc;
	mrc = MPI_Iallreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, comm, &req);
	if (mrc == MPI_SUCCESS)
		mrc = gfsp_mpi_wait(&req, NULL);
	if (mrc != MPI_SUCCESS) {
		/* keep this rank's own, more telling, error if it has one */
		if (rc != 0)
			return rc;
		return gfsp_mpi_check(mrc, "cannot agree on the outcome", err);
	}
	if (out.key >= nprocs)
		return 0;
	if (rc != 0)
		return rc;

	/* a stale message from an error this rank recovered from is not
	 * the story: replace it with the peer's failure */
	gfsp_error_clear(err);
	return gfsp_error_set(err, GFSP_EPEER, "rank %d failed: %s", out.key,
			     gfsp_strerror(out.code));
}

/*
 * MPICH's error strings carry a stack, one frame a line:
 *   "Invalid rank, error stack:\n"
 *   "internal_Send(120): MPI_Send(buf=..., dest=9, ...) failed\n"
 *   "internal_Send(78).: Invalid rank has value 9 but must be ..."
 * The innermost frame's text is the most specific cause and fits on the
 * one line a message has; the class text ("Invalid rank") is the fallback.
 */
static void
mpi_cause(char *buf)
{
	char *stack = strstr(buf, ", error stack:");
	char *last, *p;

	if (stack != NULL) {
		*stack = '\0';
		last = strrchr(stack + 1, '\n');
		p = last != NULL ? strstr(last + 1, ": ") : NULL;
		if (p != NULL && p[2] != '\0')
			memmove(buf, p + 2, strlen(p + 2) + 1);
	}
	for (p = buf; *p != '\0'; p++)
		if (*p == '\n')
			*p = ' ';
}

int
gfsp_mpi_check(int mpirc, const char *what, struct gfsp_error *err)
{
	char buf[MPI_MAX_ERROR_STRING + 1];
	int len = 0;
	int was_set = err != NULL && err->code != GFSP_OK;

	if (mpirc == MPI_SUCCESS)
		return 0;
	if (MPI_Error_string(mpirc, buf, &len) != MPI_SUCCESS || len <= 0)
		snprintf(buf, sizeof(buf), "MPI error %d", mpirc);
	else
		buf[GFSP_MIN(len, MPI_MAX_ERROR_STRING)] = '\0';
	mpi_cause(buf);
	gfsp_error_set(err, GFSP_EMPI, "%s: %s", what, buf);
	if (err != NULL && !was_set)
		err->sys = mpirc;
	return GFSP_EMPI;
}
