/*
 * usage.c - what a run tells about itself (core.h): resource usage over
 * the ranks, and reading the JSON summaries the commands exchange.
 */
#include <sys/resource.h>
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
