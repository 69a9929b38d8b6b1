/*
 * n1write.c - an N-1 writer, as many MPI applications are: every rank
 * writes its blocks of one shared file with MPI-IO, rank r the r-th block
 * of each stripe (IOR's segmented pattern).  The README runs it with and
 * without libgfsplit-mpiio.so.
 *
 *   mpicc -o n1write examples/n1write.c
 *   mpiexec -n 4 ./n1write FILE [MIB_PER_RANK [BLOCK_KIB]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int
main(int argc, char **argv)
{
	MPI_File fh;
	MPI_Offset off;
	long mib = argc > 2 ? atol(argv[2]) : 16;
	long kib = argc > 3 ? atol(argv[3]) : 1024;
	size_t block = (size_t)kib << 10;
	long nblocks = (mib << 10) / kib, i;
	unsigned char *buf;
	int rank, size, rc;
	size_t k;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 2 || mib <= 0 || kib <= 0 || nblocks <= 0) {
		if (rank == 0)
			fprintf(stderr, "usage: %s FILE [MIB_PER_RANK [BLOCK_KIB]]\n",
				argv[0]);
		MPI_Finalize();
		return 2;
	}
	buf = malloc(block);
	if (buf == NULL)
		MPI_Abort(MPI_COMM_WORLD, 1);
	rc = MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE |
			   MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, "rank %d: cannot open %s\n", rank, argv[1]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (i = 0; i < nblocks; i++) {
		/* what a block holds tells where it belongs */
		for (k = 0; k < block; k++)
			buf[k] = (unsigned char)(rank * 31 + i * 7 + k);
		off = ((MPI_Offset)i * size + rank) * (MPI_Offset)block;
		if (MPI_File_write_at_all(fh, off, buf, (int)block, MPI_BYTE,
					  MPI_STATUS_IGNORE) != MPI_SUCCESS)
			MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_File_close(&fh);
	if (rank == 0)
		printf("wrote %s: %d ranks x %ld MiB in blocks of %ld KiB\n",
		       argv[1], size, mib, kib);
	free(buf);
	MPI_Finalize();
	return 0;
}
