/*
 * testutil.h - how a test program says that something went wrong: one
 * copy for every program of tests/unit, tests/mpi and tests/helpers.
 *
 * A program of several files includes it from each of them: the
 * functions are static, like tap.h's, and the two variables weak
 * definitions, one of each in the linked program.
 *
 *   fail(fmt, ...)	one line on stderr, "PROG: rank R: WHAT" (the
 *			rank only while MPI is up), in one write: the ranks
 *			share stderr.  Sets test_failed; returns -1.
 *   fail_at(what, n)	fail() of "WHAT (at N)"
 *   fail_ab(what, a, b)	fail() of "WHAT (A, B)": the two numbers it is about
 *   must(rc, call)	an MPI call that must succeed: 0, or fail() with
 *			"CALL: <MPI's message>" and -1
 *   must_ok(rc, msg)	a library call that must succeed (rc 0): 0, or
 *			fail() with its error message and -1
 *   agree(rc)		collective: 0 if rc is 0 on every rank, else -1
 *   die(rc, call)	must() of a call the program cannot go on after:
 *			MPI_Abort on a failure
 *
 *   test_context	text put after the rank ("seed 7": what the rank is
 *			doing), empty for none
 *   test_failed	nonzero once fail() was called: main's exit status
 *   test_first_only	nonzero: fail() prints only while test_failed is 0,
 *			one reason a check (the program clears test_failed
 *			when a check starts)
 *
 * PROG is the program's name as it was started (its basename), which the
 * command tests grep for ("mpi_iopat: rank 1: MPI_File_write_all: ...").
 */
#ifndef GFSP_TESTS_TESTUTIL_H
#define GFSP_TESTS_TESTUTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <mpi.h>

#define TU_FN		static __attribute__((unused))

extern char *program_invocation_short_name;	/* glibc */

__attribute__((weak)) char test_context[128];
__attribute__((weak)) int test_failed;
__attribute__((weak)) int test_first_only;

/* the rank of this process, or -1 outside MPI_Init..MPI_Finalize */
TU_FN int
test_rank(void)
{
	int up = 0, down = 0, rank = -1;

	MPI_Initialized(&up);
	MPI_Finalized(&down);
	if (up && !down)
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	return rank;
}

TU_FN __attribute__((format(printf, 1, 2))) int
fail(const char *fmt, ...)
{
	char who[64], msg[1024];
	int rank = test_rank();
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rank >= 0)
		snprintf(who, sizeof(who), "rank %d: ", rank);
	else
		who[0] = '\0';
	if (!test_first_only || !test_failed)
		fprintf(stderr, "%s: %s%s%s%s\n", program_invocation_short_name,
		    who, test_context, test_context[0] != '\0' ? ": " : "", msg);
	test_failed = 1;
	return -1;
}

TU_FN int
fail_at(const char *what, long long at)
{
	return fail("%s (at %lld)", what, at);
}

TU_FN int
fail_ab(const char *what, long long a, long long b)
{
	return fail("%s (%lld, %lld)", what, a, b);
}

TU_FN int
must(int rc, const char *call)
{
	char s[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (rc == MPI_SUCCESS)
		return 0;
	if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
		snprintf(s, sizeof(s), "MPI error %d", rc);
	return fail("%s: %s", call, s);
}

TU_FN int
must_ok(int rc, const char *msg)
{
	return rc == 0 ? 0 : fail("%s", msg);
}

TU_FN int
agree(int rc)
{
	int bad = rc != 0, any = 1;

	if (MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) !=
	    MPI_SUCCESS)
		return -1;
	return any ? -1 : 0;
}

TU_FN void
die(int rc, const char *call)
{
	if (must(rc, call) != 0)
		MPI_Abort(MPI_COMM_WORLD, 1);
}

#endif /* GFSP_TESTS_TESTUTIL_H */
