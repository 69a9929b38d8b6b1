/*
 * tap.h - the TAP lines of the unit tests, one copy for all of them.
 *
 * Each test program (tests/unit, tests/mpi, tests/helpers) is linked
 * alone, so this is a header of static functions rather than an object
 * file; include it once, from the test's .c file.
 *
 *   ok(cond, fmt, ...)		"ok N - what" or "not ok N - what"; returns cond
 *   skip(fmt, ...)		"ok N # SKIP reason"
 *   diag(fmt, ...)		"# text": a diagnostic line
 *   group_start()		many checks behind one TAP line: check()
 *   check(cond, fmt, ...)	prints no line, counts a failure and shows the
 *   group_failures()		group's first one as a diagnostic; then
 *				ok(group_failures() == 0, "what")
 *   done_testing()		"1..N" last; returns the exit status
 *
 * A test description stays on its line, whatever it quotes: inside it a
 * newline becomes a space and a trailing one is dropped.  stdout is
 * flushed after each line, so a crash or a fork() neither loses nor
 * repeats one.
 *
 * MPI tests where rank 0 speaks for all set tap_silent on the other
 * ranks: their ok() and skip() still count, for the exit status, but
 * print nothing, and done_testing() prints no plan.
 */
#ifndef GFSP_TESTS_TAP_H
#define GFSP_TESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>

#define TAP_FN		static __attribute__((unused))
#define TAP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TAP_DESC_MAX	1024	/* a longer description is cut */

/* tests run and failed (read only); tap_silent: see above */
static int tap_ntest __attribute__((unused));
static int tap_nfail __attribute__((unused));
static int tap_silent __attribute__((unused));
static int tap_group_nfail __attribute__((unused));

/* Format a description into buf as one line (see above). */
TAP_FN void
tap_vformat(char *buf, size_t len, const char *fmt, va_list ap)
{
	char *p;

	vsnprintf(buf, len, fmt, ap);
	for (p = buf; *p != '\0'; p++)
		if (*p == '\n')
			*p = p[1] != '\0' ? ' ' : '\0';
}

TAP_FN int
vok(int cond, const char *fmt, va_list ap)
{
	char desc[TAP_DESC_MAX];

	tap_vformat(desc, sizeof(desc), fmt, ap);
	tap_ntest++;
	if (!cond)
		tap_nfail++;
	if (!tap_silent) {
		printf("%s %d - %s\n", cond ? "ok" : "not ok", tap_ntest, desc);
		fflush(stdout);
	}
	return cond;
}

TAP_FN TAP_PRINTF(2, 3) int
ok(int cond, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vok(cond, fmt, ap);
	va_end(ap);
	return cond;
}

/* A test that cannot run here: counts as passed, says why. */
TAP_FN TAP_PRINTF(1, 2) void
skip(const char *fmt, ...)
{
	char why[TAP_DESC_MAX];
	va_list ap;

	va_start(ap, fmt);
	tap_vformat(why, sizeof(why), fmt, ap);
	va_end(ap);
	tap_ntest++;
	if (!tap_silent) {
		printf("ok %d # SKIP %s\n", tap_ntest, why);
		fflush(stdout);
	}
}

TAP_FN void
vdiag(const char *fmt, va_list ap)
{
	printf("# ");
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

TAP_FN TAP_PRINTF(1, 2) void
diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(fmt, ap);
	va_end(ap);
}

TAP_FN void
group_start(void)
{
	tap_group_nfail = 0;
}

/* One check of a group: returns cond != 0; only the group's first
 * failure is printed. */
TAP_FN TAP_PRINTF(2, 3) int
check(int cond, const char *fmt, ...)
{
	va_list ap;

	if (cond)
		return 1;
	if (tap_group_nfail++ == 0) {
		va_start(ap, fmt);
		vdiag(fmt, ap);
		va_end(ap);
	}
	return 0;
}

/* failed check()s since group_start() */
TAP_FN int
group_failures(void)
{
	return tap_group_nfail;
}

/* The plan, last; returns main()'s exit status: 1 if anything failed. */
TAP_FN int
done_testing(void)
{
	if (!tap_silent) {
		printf("1..%d\n", tap_ntest);
		fflush(stdout);
	}
	return tap_nfail != 0;
}

#endif /* GFSP_TESTS_TAP_H */
