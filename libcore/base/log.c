/*
 * log.c - messages of the commands.  The library itself never prints; the
 * driver and the commands use these.
 *
 *   errors, warnings (any rank):  "prog: rank 3: cannot open 'x': ..."
 *                                 "prog: message"      (single process)
 *   info, verbose (rank 0 only):  "prog: message"
 *   each (any rank, with -v):     "prog: rank 3: copied 'x' (1.00 MiB)"
 *
 * Each message goes out in one write so lines of different ranks sharing a
 * terminal or a file do not interleave mid-line.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "core.h"

static const char *log_prog = "gfsplit";
static int log_rank;
static int log_nprocs = 1;
static int log_lvl = GFSP_LOG_NORMAL;
static int log_sink = GFSP_LOG_STDERR;
static char last_error[GFSP_ERRMSG_MAX];	/* for --json's error document */

void
gfsp_log_sink(int sink)
{
	log_sink = sink;
	if (sink == GFSP_LOG_SYSLOG)
		openlog(log_prog, LOG_PID, LOG_DAEMON);
}

void
gfsp_log_setup(const char *prog, int rank, int nprocs, int level)
{
	const char *slash;

	if (prog != NULL) {
		slash = strrchr(prog, '/');
		log_prog = slash != NULL ? slash + 1 : prog;
	}
	log_rank = rank;
	log_nprocs = nprocs;
	log_lvl = level;
}

int
gfsp_log_level(void)
{
	return log_lvl;
}

static void
log_emit(int tag_rank, int prio, const char *kind, const char *fmt,
	 va_list ap)
{
	char buf[GFSP_ERRMSG_MAX + 256];
	size_t n = 0;
	struct tm tm;
	time_t now;
	int r;

	if (log_sink == GFSP_LOG_SYSLOG) {
		/* syslog tells the program, the process and the time */
		vsnprintf(buf, sizeof(buf), fmt, ap);
		syslog(prio, "%s%s", kind, buf);
		return;
	}
	if (log_sink == GFSP_LOG_STAMPED) {
		now = time(NULL);
		localtime_r(&now, &tm);
		n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S%z ", &tm);
	}
	if (tag_rank && log_nprocs > 1)
		r = snprintf(buf + n, sizeof(buf) - n, "%s: rank %d: %s",
			     log_prog, log_rank, kind);
	else
		r = snprintf(buf + n, sizeof(buf) - n, "%s: %s", log_prog,
			     kind);
	if (r > 0)
		n = GFSP_MIN(n + (size_t)r, sizeof(buf) - 1);
	r = vsnprintf(buf + n, sizeof(buf) - n, fmt, ap);
	if (r > 0)
		n = GFSP_MIN(n + (size_t)r, sizeof(buf) - 2);
	buf[n++] = '\n';
	buf[n] = '\0';
	/* stderr is unbuffered: one fputs is one write for a short line */
	fflush(stderr);
	fputs(buf, stderr);
	fflush(stderr);
}

void
gfsp_log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(1, LOG_ERR, "", fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

const char *
gfsp_log_last_error(void)
{
	return last_error;
}

void
gfsp_log_remember(const char *msg)
{
	snprintf(last_error, sizeof(last_error), "%s", msg);
}

void
gfsp_log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(1, LOG_WARNING, "warning: ", fmt, ap);
	va_end(ap);
}

void
gfsp_log_info(const char *fmt, ...)
{
	va_list ap;

	if (log_rank != 0 || log_lvl < GFSP_LOG_NORMAL)
		return;
	va_start(ap, fmt);
	log_emit(0, LOG_INFO, "", fmt, ap);
	va_end(ap);
}

void
gfsp_log_verbose(const char *fmt, ...)
{
	va_list ap;

	if (log_rank != 0 || log_lvl < GFSP_LOG_VERBOSE)
		return;
	va_start(ap, fmt);
	log_emit(0, LOG_DEBUG, "", fmt, ap);
	va_end(ap);
}

void
gfsp_log_each(const char *fmt, ...)
{
	va_list ap;

	if (log_lvl < GFSP_LOG_VERBOSE)
		return;
	va_start(ap, fmt);
	log_emit(1, LOG_DEBUG, "", fmt, ap);
	va_end(ap);
}

/*
 * A failure on one rank makes every other rank return GFSP_EPEER; printing
 * those echoes by default would bury the one message that matters.
 */
void
gfsp_log_gfs_error(const struct gfsp_error *err)
{
	if (err == NULL || err->code == GFSP_OK)
		return;
	if (err->code == GFSP_EPEER && log_lvl < GFSP_LOG_VERBOSE) {
		/* not printed, but the best this rank knows of the failure */
		if (last_error[0] == '\0')
			snprintf(last_error, sizeof(last_error), "%s",
				 err->msg);
		return;
	}
	gfsp_log_error("%s", err->msg[0] != '\0' ? err->msg :
		      gfsp_strerror(err->code));
}
