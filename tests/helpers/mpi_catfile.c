/*
 * mpi_catfile - helper of tests/cmd/badmeta.sh; not a test.  A plain
 * MPI-IO reader: under lib/libgfsplit-mpiio.so it reads a split file as
 * the library serves it.
 *
 *   mpiexec -n N mpi_catfile FILE OUT [--verify-hint]
 *
 * Every rank opens FILE read-only (with the MPI_Info hint
 * gfsplit_verify=enable if asked), prints "size S" (rank 0) from
 * MPI_File_get_size, refuses a negative size, and reads the whole file
 * with MPI_File_read_at in 1 MiB pieces (at most 64 MiB in all); rank 0
 * writes what it read to OUT.  Exit 0 if every call succeeded on this
 * rank; else 1, with "mpi_catfile: rank R: CALL: MPI's error string".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

#include "testutil.h"

#define PIECE	(1 << 20)
#define MAXSIZE	((MPI_Offset)64 << 20)

static int rank;

static int
cat(const char *path, const char *out, int hint)
{
	MPI_File fh;
	MPI_Info info = MPI_INFO_NULL;
	MPI_Offset size, off;
	MPI_Status st;
	FILE *o = NULL;
	char *buf;
	int rc, got, bad = 0;

	if (hint) {
		MPI_Info_create(&info);
		MPI_Info_set(info, "gfsplit_verify", "enable");
	}
	rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh);
	if (info != MPI_INFO_NULL)
		MPI_Info_free(&info);
	if (rc != MPI_SUCCESS)
		return must(rc, "MPI_File_open");
	rc = MPI_File_get_size(fh, &size);
	if (rc != MPI_SUCCESS) {
		MPI_File_close(&fh);
		return must(rc, "MPI_File_get_size");
	}
	if (rank == 0)
		printf("size %lld\n", (long long)size);
	if (size < 0 || size > MAXSIZE) {
		fail("MPI_File_get_size: %lld bytes", (long long)size);
		MPI_File_close(&fh);
		return 1;
	}
	buf = malloc(PIECE);
	if (rank == 0 && (o = fopen(out, "wb")) == NULL) {
		perror(out);
		bad = 1;
	}
	for (off = 0; buf != NULL && !bad && off < size; off += got) {
		rc = MPI_File_read_at(fh, off, buf, PIECE, MPI_BYTE, &st);
		if (rc != MPI_SUCCESS) {
			bad = must(rc, "MPI_File_read_at");
			break;
		}
		MPI_Get_count(&st, MPI_BYTE, &got);
		if (got <= 0)
			break;
		if (o != NULL && fwrite(buf, 1, (size_t)got, o) != (size_t)got)
			bad = 1;
	}
	if (o != NULL && fclose(o) != 0)
		bad = 1;
	free(buf);
	rc = MPI_File_close(&fh);
	if (rc != MPI_SUCCESS)
		bad = must(rc, "MPI_File_close");
	return bad;
}

int
main(int argc, char **argv)
{
	int rc;

	if (argc < 3 || argc > 4 || (argc == 4 &&
	    strcmp(argv[3], "--verify-hint") != 0)) {
		fprintf(stderr, "usage: mpi_catfile FILE OUT [--verify-hint]\n");
		return 2;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	rc = cat(argv[1], argv[2], argc == 4);
	MPI_Finalize();
	return rc != 0;
}
