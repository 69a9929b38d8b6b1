/*
 * usage.c - what a run tells about itself (core.h): resource usage over
 * the ranks, and reading the JSON summaries the commands exchange.
 */
#include <sys/resource.h>
#include <time.h>
#include <json-c/json.h>

#include "core.h"

const char *
gfsp_json_str(json_object *o, const char *key)
{
	json_object *x;

	if (!json_object_object_get_ex(o, key, &x) ||
	    !json_object_is_type(x, json_type_string))
		return NULL;
	return json_object_get_string(x);
}

const char *
gfsp_utc_iso(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (len == 0)
		return buf;
	if (gmtime_r(&tt, &tm) == NULL ||
	    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		buf[0] = '\0';
	return buf;
}

static json_object *
str_or_null(const char *s)
{
	return s != NULL ? json_object_new_string(s) : NULL;
}

json_object *
gfsp_json_doc(const char *command, const char *src, const char *dest,
	     int ranks, double seconds, int64_t bytes)
{
	json_object *o = json_object_new_object();

	if (o == NULL)
		return NULL;
	json_object_object_add(o, "command", json_object_new_string(command));
	json_object_object_add(o, "version",
			       json_object_new_string(GFSPLIT_VERSION));
	json_object_object_add(o, "src", str_or_null(src));
	json_object_object_add(o, "dest", str_or_null(dest));
	json_object_object_add(o, "ranks", json_object_new_int(ranks));
	json_object_object_add(o, "seconds", json_object_new_double(seconds));
	json_object_object_add(o, "bytes", bytes >= 0 ?
			       json_object_new_int64(bytes) : NULL);
	json_object_object_add(o, "bytes_per_sec", bytes < 0 ? NULL :
	    json_object_new_double(seconds > 0 ? (double)bytes / seconds : 0));
	return o;
}

int
gfsp_job_usage(MPI_Comm comm, double *seconds, long *max_rss_kib,
	      double *cpu_seconds, struct gfsp_error *err)
{
	struct rusage ru;
	long rss = 0, maxrss = 0;
	double cpu = 0, sum = 0, secs = *seconds;
	int rc = 0;

	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		rss = ru.ru_maxrss;	/* KiB on Linux */
		cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		      (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	}
	rc = gfsp_mpi_check(gfsp_reduce(&rss, &maxrss, 1, MPI_LONG, MPI_MAX, 0,
	    comm), "MPI_Reduce", err);
	if (rc == 0)
		rc = gfsp_mpi_check(gfsp_reduce(&cpu, &sum, 1, MPI_DOUBLE,
		    MPI_SUM, 0, comm), "MPI_Reduce", err);
	/* the slowest rank's time is the job's time */
	if (rc == 0)
		rc = gfsp_mpi_check(gfsp_allreduce(MPI_IN_PLACE, &secs, 1,
		    MPI_DOUBLE, MPI_MAX, comm), "MPI_Allreduce", err);
	rc = gfsp_agree(comm, rc, err);
	if (rc == 0) {
		*max_rss_kib = maxrss;
		*cpu_seconds = sum;
		*seconds = secs;
	}
	return rc;
}

static int json_printed;

void
gfsp_json_print(FILE *fp, json_object *o, int flags)
{
	fprintf(fp, "%s\n", json_object_to_json_string_ext(o, flags));
	json_printed = 1;
}

int
gfsp_json_printed(void)
{
	return json_printed;
}
