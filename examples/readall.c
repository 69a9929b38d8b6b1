/*
 * readall.c - what many MPI programs do at start: every rank reads the
 * same input files whole, with stdio.  Rank 0 prints each file's bytes
 * and a checksum (every rank's must agree).  The README runs it through
 * libgfsplit-cache.so.
 *
 *   mpicc -o readall examples/readall.c
 *   mpiexec -n 4 ./readall FILE...
 */
#include <mpi.h>
#include <stdio.h>

int
main(int argc, char **argv)
{
	static unsigned char buf[1 << 20];
	unsigned long long sum, total, lo, hi;
	int rank, i, bad = 0;
	size_t n;
	FILE *f;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (i = 1; i < argc; i++) {
		sum = total = 0;
		f = fopen(argv[i], "rb");
		if (f == NULL) {
			perror(argv[i]);
			bad = 1;
			continue;
		}
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
			for (size_t k = 0; k < n; k++)
				sum = sum * 1099511628211ULL + buf[k];
			total += n;
		}
		fclose(f);
		MPI_Allreduce(&sum, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN,
			      MPI_COMM_WORLD);
		MPI_Allreduce(&sum, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX,
			      MPI_COMM_WORLD);
		if (lo != hi)
			bad = 1;
		if (rank == 0)
			printf("%s: %llu bytes, checksum %016llx%s\n", argv[i],
			       total, sum, lo != hi ? " (ranks disagree!)" :
			       " (every rank alike)");
	}
	MPI_Finalize();
	return bad;
}
