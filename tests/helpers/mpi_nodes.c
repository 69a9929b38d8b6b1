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
 *     MPI_Win_lock) and checks every byte; where the MPI makes no window
 *     over these ranks, rank 0 prints "rma unavailable: " and MPI's reason
 *     instead (Debian's Open MPI 4.1 across Ethernet nodes).
 * Rank 0 prints one line per rank, "RANK PROCNAME HOSTNAME NODESIZE
 * NODEROOT SHMDEV:SHMINO", in rank order on stdout, then "data ok" if
 * every byte arrived; a rank whose bytes were wrong says so on stderr,
 * and the exit status is 1.
 *
 *   mpiexec -n N mpi_nodes send|get MIB FROM TO
 *
 * Bulk traffic between two ranks, for counting what crosses the links:
 * rank FROM sends MIB MiB to rank TO (send: MPI_Send in 8 MiB messages),
 * or rank TO reads MIB MiB of rank FROM's window (get: MPI_Get in 8 MiB
 * pieces, passive target, one lock).  TO checks every byte and prints
 * "moved BYTES seconds SECONDS", then "data ok".
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

#define PIECE (8 << 20)

/* send|get MIB FROM TO */
static int bulk(int argc, char **argv, int rank)
{
	int get = strcmp(argv[1], "get") == 0, from, to, bad = 0, allbad;
	size_t total = (size_t)atol(argv[2]) << 20;
	unsigned char *buf, *win_mem = NULL;
	double t0, t;
	MPI_Win win;

	(void)argc;
	from = atoi(argv[3]);
	to = atoi(argv[4]);
	buf = malloc(PIECE);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 2);
	if (get) {
		MPI_Win_allocate(rank == from ? PIECE : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD,
				 &win_mem, &win);
		if (rank == from)
			for (size_t i = 0; i < PIECE; i++)
				win_mem[i] = pattern(from, i);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	if (rank == from && !get) {
		for (size_t i = 0; i < PIECE; i++)
			buf[i] = pattern(from, i);
		for (size_t done = 0; done < total; done += PIECE)
			MPI_Send(buf, PIECE, MPI_BYTE, to, 3, MPI_COMM_WORLD);
	} else if (rank == to) {
		if (get)
			MPI_Win_lock(MPI_LOCK_SHARED, from, 0, win);
		for (size_t done = 0; done < total && !bad; done += PIECE) {
			memset(buf, 0, PIECE);
			if (get) {
				MPI_Get(buf, PIECE, MPI_BYTE, from, 0, PIECE, MPI_BYTE, win);
				MPI_Win_flush(from, win);
			} else {
				MPI_Recv(buf, PIECE, MPI_BYTE, from, 3, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
			}
			for (size_t i = 0; i < PIECE; i++)
				if (buf[i] != pattern(from, i)) {
					fprintf(stderr, "mpi_nodes: %s: byte %zu of piece %zu differs\n",
						argv[1], i, done / PIECE);
					bad = 1;
					break;
				}
		}
		if (get)
			MPI_Win_unlock(from, win);
		t = MPI_Wtime() - t0;
		printf("moved %zu seconds %.3f\n", total, t);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (get)
		MPI_Win_free(&win);
	MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == to && !allbad)
		puts("data ok");
	fflush(stdout);
	free(buf);
	MPI_Finalize();
	return allbad ? 1 : 0;
}

int main(int argc, char **argv)
{
	int rank, n, len, nsize, nrank, root, bad = 0, allbad, rc, allrc;
	char proc[MPI_MAX_PROCESSOR_NAME], host[128], line[LINE];
	unsigned char *mine, *got, *win_mem;
	struct stat st;
	MPI_Comm node;
	MPI_Win win;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (argc == 5 && (strcmp(argv[1], "send") == 0 || strcmp(argv[1], "get") == 0)) {
		int from = atoi(argv[3]), to = atoi(argv[4]);

		if (atol(argv[2]) < 1 || from < 0 || to < 0 || from >= n || to >= n || from == to) {
			if (rank == 0)
				fprintf(stderr, "mpi_nodes: %s MIB FROM TO: bad arguments\n", argv[1]);
			MPI_Finalize();
			return 2;
		}
		return bulk(argc, argv, rank);
	}
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
	snprintf(line, sizeof(line), "%d %.100s %s %d %d %lu:%lu", rank, proc, host, nsize,
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

	/* an MPI with no one-sided component for this network (Open MPI
	 * 4.1 as Debian ships it, across Ethernet nodes) makes no window:
	 * said, not a failure */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	rc = MPI_Win_allocate(LEN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem, &win);
	MPI_Allreduce(&rc, &allrc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (allrc != MPI_SUCCESS) {
		char msg[MPI_MAX_ERROR_STRING];
		int mlen = 0;

		MPI_Error_string(allrc, msg, &mlen);
		if (rank == 0)
			printf("rma unavailable: MPI_Win_allocate: %s\n", msg);
	} else {
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
	}

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
