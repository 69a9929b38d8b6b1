/*
 * node.c - this node (core.h): its name, the ranks that share it, a path
 * of its own, whether two host names name one node, the host a rank is
 * given from a list, and the cores a rank may use.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

void
gfsp_node_name(char *buf, size_t len)
{
	char name[MPI_MAX_PROCESSOR_NAME + 1];
	const char *env;
	int n = 0, inited = 0;

	if (len == 0)
		return;
	env = getenv("GFSPLIT_NODE");
	if (env != NULL && env[0] != '\0') {
		snprintf(buf, len, "%s", env);
		return;
	}
	name[0] = '\0';
	MPI_Initialized(&inited);
	if (inited && MPI_Get_processor_name(name, &n) == MPI_SUCCESS &&
	    n > 0)
		name[GFSP_MIN(n, MPI_MAX_PROCESSOR_NAME)] = '\0';
	else if (gethostname(name, sizeof(name) - 1) != 0)
		snprintf(name, sizeof(name), "localhost");
	name[sizeof(name) - 1] = '\0';
	snprintf(buf, len, "%s", name);
}

int
gfsp_same_host(const char *a, const char *b)
{
	size_t na = strcspn(a, "."), nb = strcspn(b, ".");

	if (strcmp(a, b) == 0)
		return 1;
	/* one of them short, and the other's first label */
	if ((a[na] != '\0' && b[nb] != '\0') || na != nb || na == 0)
		return 0;
	return strncmp(a, b, na) == 0;
}

char *
gfsp_node_path(const char *pattern)
{
	char node[256], *out, *o;
	const char *p;
	size_t n = 1;

	gfsp_node_name(node, sizeof(node));
	for (p = pattern; *p; p++)
		n += p[0] == '%' && p[1] == 'h' ? strlen(node) : 1;
	out = o = malloc(n);
	if (out == NULL)
		return NULL;
	for (p = pattern; *p; p++) {
		if (p[0] == '%' && p[1] == 'h') {
			o = stpcpy(o, node);
			p++;
		} else {
			*o++ = *p;
		}
	}
	*o = '\0';
	return out;
}

int
gfsp_node_comm(MPI_Comm comm, MPI_Comm *node, int *index, int *nnodes,
	       struct gfsp_error *err)
{
	char *names = NULL, me[MPI_MAX_PROCESSOR_NAME + 1];
	int rank, nprocs, r, first = -1, rc;
	const int W = MPI_MAX_PROCESSOR_NAME + 1;

	*node = MPI_COMM_NULL;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &nprocs);
	memset(me, 0, sizeof(me));
	gfsp_node_name(me, sizeof(me));
	names = malloc((size_t)nprocs * W);
	rc = names == NULL ? gfsp_error_set(err, GFSP_ENOMEM, "out of memory")
	    : 0;
	rc = gfsp_agree(comm, rc, err);
	if (rc == 0)
		rc = gfsp_mpi_check(gfsp_allgather(me, W, MPI_CHAR, names, W,
		    MPI_CHAR, comm), "cannot tell the nodes apart", err);
	if (rc == 0) {
		/* a node's color: its lowest rank; its index: how many nodes
		 * have a lower one */
		*index = 0;
		*nnodes = 0;
		for (r = 0; r < nprocs; r++) {
			int k, seen = 0;

			for (k = 0; k < r && !seen; k++)
				seen = strcmp(names + (size_t)k * W,
				    names + (size_t)r * W) == 0;
			if (seen)
				continue;
			if (strcmp(names + (size_t)r * W, me) == 0)
				first = r, *index = *nnodes;
			(*nnodes)++;
		}
		rc = gfsp_mpi_check(MPI_Comm_split(comm, first, rank, node),
		    "cannot make the node's communicator", err);
	}
	free(names);
	return rc;
}

/*
 * Entry rank mod K of a comma-separated host list ("n0,n1,n2"), copied
 * into buf; 0 with buf empty when the list is NULL or empty.
 */
int
gfsp_host_for_rank(const char *list, int rank, char *buf, size_t len,
		   struct gfsp_error *err)
{
	const char *p, *comma;
	int k = 0, i;
	size_t n;

	buf[0] = '\0';
	if (list == NULL || list[0] == '\0')
		return 0;
	for (p = list; p != NULL; p = strchr(p, ','), p = p ? p + 1 : p)
		k++;
	for (p = list, i = 0; i < rank % k; i++)
		p = strchr(p, ',') + 1;
	comma = strchr(p, ',');
	n = comma ? (size_t)(comma - p) : strlen(p);
	if (n == 0 || n >= len)
		return gfsp_error_set(err, GFSP_EINVAL, "host list '%s': entry "
		    "%d is %s", list, rank % k, n ? "too long" : "empty");
	memcpy(buf, p, n);
	buf[n] = '\0';
	return 0;
}

int
gfsp_usable_cpus(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}
