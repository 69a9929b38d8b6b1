/*
 * mpi_err.h - the MPI test programs' one line for a failed MPI call:
 * "PROG: rank R: CALL: <MPI's message>" on stderr.
 */
#ifndef GFSP_TEST_MPI_ERR_H
#define GFSP_TEST_MPI_ERR_H

#include <stdio.h>
#include <mpi.h>

static inline void
mpi_report(const char *prog, int rank, const char *call, int rc)
{
	char s[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (MPI_Error_string(rc, s, &len) != MPI_SUCCESS)
		snprintf(s, sizeof(s), "MPI error %d", rc);
	fprintf(stderr, "%s: rank %d: %s: %s\n", prog, rank, call, s);
}

#endif
