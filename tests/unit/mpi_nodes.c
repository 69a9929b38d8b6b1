/*
 * mpi_nodes - helper of tests/cmd/cluster.sh; not a test.  What a job sees
 * of the nodes it runs on, checked with plain MPI calls:
 *
 *   mpiexec -n N mpi_nodes
 *
 * Every rank finds its node from MPI (MPI_Get_processor_name, and the
 * groups of MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)) and from the
 * system (gethostname, the inode of /dev/shm), then:
 *   - moves 1 MiB round a ring with MPI_Sendrecv, and checks every byte;
 *   - reads 1 MiB of the next rank's window with MPI_Get (passive target,
 *     MPI_Win_lock) and checks every byte.
 * Rank 0 prints one line per rank, "RANK PROCNAME HOSTNAME NODESIZE
 * NODEROOT SHMDEV:SHMINO", in rank order on stdout, then "data ok" if
 * every byte arrived; a rank whose bytes were wrong says so on stderr,
 * and the exit status is 1.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LEN (1 << 20)
#define LINE 256

static unsigned char pattern(int rank, size_t i)
{
	return (unsigned char)(rank * 131 + i * 7 + (i >> 12));
}

static int check(const unsigned char *buf, int from, const char *what, int me)
{
	for (size_t i = 0; i < LEN; i++)
		if (buf[i] != pattern(from, i)) {
			fprintf(stderr, "mpi_nodes: rank %d: %s from rank %d: byte %zu differs\n",
				me, what, from, i);
			return 1;
		}
	return 0;
}

int main(int argc, char **argv)
{
	int rank, n, len, nsize, nrank, root, bad = 0, allbad;
	char proc[MPI_MAX_PROCESSOR_NAME], host[128], line[LINE];
	unsigned char *mine, *got, *win_mem;
	struct stat st;
	MPI_Comm node;
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	MPI_Get_processor_name(proc, &len);
	if (gethostname(host, sizeof(host)) != 0)
		strcpy(host, "?");
	host[sizeof(host) - 1] = '\0';
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
	MPI_Comm_size(node, &nsize);
	MPI_Comm_rank(node, &nrank);
	root = rank;
	MPI_Bcast(&root, 1, MPI_INT, 0, node);	/* the node's lowest rank */
	if (stat("/dev/shm", &st) != 0)
		memset(&st, 0, sizeof(st));
	snprintf(line, sizeof(line), "%d %s %s %d %d %lu:%lu", rank, proc, host, nsize,
		 root, (unsigned long)st.st_dev, (unsigned long)st.st_ino);

	mine = malloc(LEN);
	got = malloc(LEN);
	if (!mine || !got)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (size_t i = 0; i < LEN; i++)
		mine[i] = pattern(rank, i);
	MPI_Sendrecv(mine, LEN, MPI_BYTE, (rank + 1) % n, 1, got, LEN, MPI_BYTE,
		     (rank + n - 1) % n, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	bad |= check(got, (rank + n - 1) % n, "MPI_Sendrecv", rank);

	MPI_Win_allocate(LEN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem, &win);
	MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
	memcpy(win_mem, mine, LEN);
	MPI_Win_unlock(rank, win);
	MPI_Barrier(MPI_COMM_WORLD);
	memset(got, 0, LEN);
	MPI_Win_lock(MPI_LOCK_SHARED, (rank + 1) % n, 0, win);
	MPI_Get(got, LEN, MPI_BYTE, (rank + 1) % n, 0, LEN, MPI_BYTE, win);
	MPI_Win_unlock((rank + 1) % n, win);
	bad |= check(got, (rank + 1) % n, "MPI_Get", rank);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_free(&win);

	if (rank == 0) {
		puts(line);
		for (int r = 1; r < n; r++) {
			MPI_Recv(line, LINE, MPI_CHAR, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			puts(line);
		}
	} else {
		MPI_Send(line, LINE, MPI_CHAR, 0, 2, MPI_COMM_WORLD);
	}
	MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0 && !allbad)
		puts("data ok");
	fflush(stdout);
	free(mine);
	free(got);
	MPI_Comm_free(&node);
	MPI_Finalize();
	return allbad ? 1 : 0;
}
