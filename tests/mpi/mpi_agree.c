/*
 * mpi_agree.c - gfsp_agree, gfsp_mpi_check, error logging and the progress
 * engine across ranks.  Run by tests/cmd/agree.sh under mpiexec -n 3
 * (any n >= 2 works); "-v" sets the verbose log level.
 *
 * Every check is collective: each rank evaluates its own condition, the
 * verdicts are combined with MPI_MIN, and rank 0 prints one TAP line.  A
 * rank whose condition failed says why on stderr.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "tap.h"

static int rank, nprocs;

/* collective (see above); the other ranks are tap_silent */
static void __attribute__((format(printf, 2, 3)))
ok_all(int cond, const char *fmt, ...)
{
	char desc[TAP_DESC_MAX];
	va_list ap;
	int all = 0;

	va_start(ap, fmt);
	tap_vformat(desc, sizeof(desc), fmt, ap);
	va_end(ap);
	cond = cond != 0;
	if (!cond)
		fprintf(stderr, "# rank %d: failed: %s\n", rank, desc);
	MPI_Allreduce(&cond, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	ok(all, "%s", desc);
}

static const char part1_msg[] =
	"cannot write 'x.split/part.1': No space left on device";

static void
mpi_agree(void)
{
	struct gfsp_error err;
	int rc, round, bad, want, last = nprocs - 1;

	gfsp_error_clear(&err);
	rc = gfsp_agree(MPI_COMM_WORLD, 0, &err);
	ok_all(rc == 0 && err.code == 0, "nobody fails: every rank gets 0");

	/* rank 1 fails */
	gfsp_error_clear(&err);
	if (rank == 1)
		rc = gfsp_error_set(&err, GFSP_ENOSPC, "%s", part1_msg);
	else
		rc = 0;
	rc = gfsp_agree(MPI_COMM_WORLD, rc, &err);
	ok_all(rc != 0, "rank 1 fails: every rank gets nonzero");
	if (rank == 1)
		ok_all(rc == GFSP_ENOSPC && err.code == GFSP_ENOSPC &&
		       strcmp(err.msg, part1_msg) == 0,
		       "the failed rank keeps its code and message");
	else
		ok_all(rc == GFSP_EPEER && err.code == GFSP_EPEER &&
		       strstr(err.msg, "rank 1 failed") != NULL &&
		       strstr(err.msg, "no space left") != NULL,
		       "the others get GFSP_EPEER naming rank 1: %s", err.msg);
	/* rank 1's message on stderr, not the echoes (checked by agree.sh) */
	gfsp_log_gfs_error(&err);

	/* rank 1 and the last rank fail with different codes: the lowest
	 * is named */
	gfsp_error_clear(&err);
	rc = 0;
	if (rank == last)
		rc = gfsp_error_set(&err, GFSP_ECHECKSUM, "part %d is bad", rank);
	if (rank == 1)
		rc = gfsp_error_set(&err, GFSP_ENOENT, "part 1 is missing");
	rc = gfsp_agree(MPI_COMM_WORLD, rc, &err);
	if (rank == 1)
		ok_all(rc == GFSP_ENOENT && strcmp(err.msg, "part 1 is missing")
		       == 0, "two failures: rank 1 keeps its own error");
	else if (rank == last)
		ok_all(rc == GFSP_ECHECKSUM && strstr(err.msg, "is bad"),
		       "two failures: the last rank keeps its own error");
	else
		ok_all(rc == GFSP_EPEER && strstr(err.msg, "rank 1 failed: no "
						 "such file or directory"),
		       "two failures: the lowest failed rank is named: %s",
		       err.msg);

	/* rank 0 fails; a stale message on the others is replaced */
	gfsp_error_clear(&err);
	if (rank == 0)
		rc = gfsp_error_set(&err, GFSP_EIO, "rank 0 broke");
	else
		rc = 0, gfsp_error_set(&err, GFSP_EIO, "stale");
	rc = gfsp_agree(MPI_COMM_WORLD, rc, &err);
	ok_all(rank == 0 ? rc == GFSP_EIO && strcmp(err.msg, "rank 0 broke") == 0
	       : rc == GFSP_EPEER && strncmp(err.msg, "rank 0 failed", 13) == 0,
	       "rank 0 fails: %s", err.msg);

	/* many rounds, rotating culprit: same verdict everywhere */
	bad = 0;
	for (round = 0; round < 300; round++) {
		int culprit = round % (nprocs + 1);	/* nprocs: nobody */

		gfsp_error_clear(&err);
		rc = rank == culprit ? gfsp_error_set(&err, GFSP_EIO, "r%d",
						     round) : 0;
		rc = gfsp_agree(MPI_COMM_WORLD, rc, &err);
		want = culprit == nprocs ? 0 : rank == culprit ? GFSP_EIO :
			GFSP_EPEER;
		if (rc != want)
			bad++;
		if (want == GFSP_EPEER) {
			char s[32];

			snprintf(s, sizeof(s), "rank %d failed", culprit);
			if (strncmp(err.msg, s, strlen(s)) != 0)
				bad++;
		}
	}
	ok_all(bad == 0, "300 rounds with a rotating failed rank");

	gfsp_error_clear(&err);
	ok_all(gfsp_agree(MPI_COMM_NULL, GFSP_ENOSPC, &err) == GFSP_ENOSPC &&
	       gfsp_agree(MPI_COMM_NULL, 0, &err) == 0 && err.code == 0,
	       "without MPI, agree returns the rank's own rc");
	ok_all(gfsp_agree(MPI_COMM_WORLD, rank == 1 ? GFSP_EIO : 0, NULL) != 0,
	       "agree with a NULL error");
}

/* run directly (singleton MPI): what one rank can check */
static void
mpi_agree_single(void)
{
	struct gfsp_error err;
	int rc;

	gfsp_error_clear(&err);
	rc = gfsp_agree(MPI_COMM_WORLD, 0, &err);
	ok_all(rc == 0 && err.code == 0, "one rank, success: 0");
	gfsp_error_set(&err, GFSP_ENOSPC, "%s", part1_msg);
	rc = gfsp_agree(MPI_COMM_WORLD, GFSP_ENOSPC, &err);
	ok_all(rc == GFSP_ENOSPC && strcmp(err.msg, part1_msg) == 0,
	       "one rank, failure: its own code and message");
	skip("failures seen from other ranks: needs mpiexec -n 3 "
	     "(tests/cmd/agree.sh)");
}

static void
test_mpi_check(void)
{
	struct gfsp_error err;
	int x = 1, mrc;

	gfsp_error_clear(&err);
	ok_all(gfsp_mpi_check(MPI_SUCCESS, "nothing", &err) == 0 &&
	       err.code == 0, "mpi_check of MPI_SUCCESS");
	ok_all(gfsp_mpi_check(MPI_ERR_COMM, "cannot frob", &err) == GFSP_EMPI &&
	       err.code == GFSP_EMPI && err.sys == MPI_ERR_COMM &&
	       strncmp(err.msg, "cannot frob: ", 13) == 0 &&
	       strlen(err.msg) > 13, "mpi_check: %s", err.msg);

	/* a real failing call under MPI_ERRORS_RETURN */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	mrc = MPI_Send(&x, 1, MPI_INT, nprocs + 7, 0, MPI_COMM_WORLD);
	gfsp_error_clear(&err);
	ok_all(mrc != MPI_SUCCESS &&
	       gfsp_mpi_check(mrc, "cannot send", &err) == GFSP_EMPI &&
	       strncmp(err.msg, "cannot send: ", 13) == 0 &&
	       strlen(err.msg) > 13 && strchr(err.msg, '\n') == NULL,
	       "mpi_check of a failed send, one line: %s", err.msg);
}

static void
test_progress(void)
{
	struct gfsp_progress *p;
	const uint64_t n = 1024;
	uint64_t i;
	int bad = 0, got, want, left, right, started;
	MPI_Status st;

	/*
	 * Every rank reports 1..n bytes over about a second, interleaved
	 * with the job's own traffic on MPI_COMM_WORLD (a wildcard receive
	 * and a collective), which progress messages must never meet.
	 */
	p = gfsp_progress_start(MPI_COMM_WORLD, "mpi_agree progress",
			       n * (uint64_t)nprocs);
	started = p != NULL;
	left = (rank + nprocs - 1) % nprocs;
	right = (rank + 1) % nprocs;
	for (i = 1; i <= n; i++) {
		gfsp_progress_update(p, i);
		usleep(1000);
		if (i % 128 == 0) {
			want = (int)i * 1000 + left;
			got = -1;
			MPI_Sendrecv(&(int){ (int)i * 1000 + rank }, 1,
				     MPI_INT, right, 5, &got, 1, MPI_INT,
				     MPI_ANY_SOURCE, MPI_ANY_TAG,
				     MPI_COMM_WORLD, &st);
			if (got != want || st.MPI_SOURCE != left ||
			    st.MPI_TAG != 5)
				bad++;
			got = 0;
			MPI_Allreduce(&(int){ 1 }, &got, 1, MPI_INT, MPI_SUM,
				      MPI_COMM_WORLD);
			if (got != nprocs)
				bad++;
		}
	}
	gfsp_progress_finish(p);
	ok_all(started && bad == 0, "progress beside the job's own "
	       "point-to-point and collectives, finish returns");

	/* ranks that never report: only the last rank updates, once */
	p = gfsp_progress_start(MPI_COMM_WORLD, "idle", 100);
	if (rank == nprocs - 1)
		gfsp_progress_update(p, 50);
	gfsp_progress_finish(p);
	ok_all(1, "progress where most ranks never call update");

	/* progress finished at different times: rank 0 last */
	p = gfsp_progress_start(MPI_COMM_WORLD, "staggered", 10);
	usleep(rank == 0 ? 700000 : 0);
	gfsp_progress_update(p, rank == 0 ? 10 : 0);
	gfsp_progress_finish(p);
	ok_all(1, "progress with rank 0 arriving late");

	/* single process, no MPI communicator */
	if (rank == 0) {
		p = gfsp_progress_start(MPI_COMM_NULL, "local", 4096);
		for (i = 0; i <= 4096; i += 512)
			gfsp_progress_update(p, i);
		gfsp_progress_finish(p);
	}
	ok_all(1, "progress without a communicator");
}

int
main(int argc, char **argv)
{
	int provided, status;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	tap_silent = rank != 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(120);	/* a hang is a failure */
	gfsp_log_setup("mpi_agree", rank, nprocs,
		      argc > 1 && strcmp(argv[1], "-v") == 0 ?
		      GFSP_LOG_VERBOSE : GFSP_LOG_NORMAL);
	if (nprocs >= 2)
		mpi_agree();
	else
		mpi_agree_single();
	test_mpi_check();
	test_progress();
	status = done_testing();
	MPI_Finalize();
	return status;
}
