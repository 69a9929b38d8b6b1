/*
 * mpi_posixcalls - helper of tests/cmd/mpiio_posixcalls.sh; not a test.
 * What programs do to an existing output before they write it again with
 * MPI-IO: remove it and create it anew, exclusively (a tool that will not
 * write over a file it did not clear), or truncate it to nothing (PnetCDF's
 * ncmpi_create with NC_CLOBBER over an existing file).  Plain calls only,
 * so the same program runs on a plain file and, under
 * lib/libgfsplit-mpiio.so, on a split file.
 *
 *   mpiexec -n N mpi_posixcalls CALL FILE
 *
 * CALL is how rank 0 clears FILE, which must exist:
 *   unlink, remove, unlinkat   then every rank finds it gone (stat:
 *                              ENOENT), and MPI_File_open with
 *                              MPI_MODE_CREATE | MPI_MODE_EXCL creates it
 *   truncate0                  truncate(FILE, 0); then every rank finds a
 *                              regular file of 0 bytes, and MPI_File_open
 *                              with MPI_MODE_CREATE opens it
 *   none                       nothing: MPI_MODE_CREATE | MPI_MODE_EXCL
 *                              must create FILE (which fails where a file
 *                              or a symbolic link is there)
 * Then each rank writes BLOCK bytes of its own pattern at rank * BLOCK
 * (MPI_File_write_at_all) and the file is closed: the result is N * BLOCK
 * bytes that depend on N only.
 *
 * Exit 0 if every call did what it does to a plain file on every rank;
 * otherwise 1, with "mpi_posixcalls: rank R: WHAT" on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <mpi.h>

#include "testutil.h"

#define BLOCK	70001		/* odd: no part boundary falls on a page */

static int rank = -1;

/* rank 0 clears path with call: 0, or -1 (said on stderr) */
static int
clear(const char *call, const char *path)
{
	char *copy = strdup(path), *copy2 = strdup(path);
	int dfd, rc = -1;

	if (copy == NULL || copy2 == NULL)
		goto out;
	if (strcmp(call, "none") == 0)
		rc = 0;
	else if (strcmp(call, "unlink") == 0)
		rc = unlink(path);
	else if (strcmp(call, "remove") == 0)
		rc = remove(path);
	else if (strcmp(call, "unlinkat") == 0) {
		dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
		rc = dfd < 0 ? -1 : unlinkat(dfd, basename(copy2), 0);
		if (dfd >= 0)
			close(dfd);
	} else if (strcmp(call, "truncate0") == 0)
		rc = truncate(path, 0);
	else {
		fprintf(stderr, "mpi_posixcalls: unknown call '%s'\n", call);
		goto out;
	}
	if (rc != 0)
		fprintf(stderr, "mpi_posixcalls: rank 0: %s '%s': %s\n", call,
		    path, strerror(errno));
out:
	free(copy);
	free(copy2);
	return rc;
}

/* what every rank sees at path after the call: 0 if as expected */
static int
cleared(const char *call, const char *path)
{
	struct stat st;

	if (strcmp(call, "none") == 0)
		return 0;
	if (strcmp(call, "truncate0") == 0) {
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    st.st_size == 0)
			return 0;
		fprintf(stderr, "mpi_posixcalls: rank %d: after truncate0, "
		    "'%s' is not an empty regular file\n", rank, path);
		return -1;
	}
	if (stat(path, &st) != 0 && errno == ENOENT)
		return 0;
	fprintf(stderr, "mpi_posixcalls: rank %d: after %s, '%s' is still "
	    "there\n", rank, call, path);
	return -1;
}

int
main(int argc, char **argv)
{
	unsigned char *buf;
	MPI_File fh;
	MPI_Status st;
	int nprocs, rc, bad = 0, any, amode, i;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (argc != 3) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_posixcalls unlink|remove|"
			    "unlinkat|truncate0|none FILE\n");
		MPI_Finalize();
		return 2;
	}
	if (rank == 0 && clear(argv[1], argv[2]) != 0)
		bad = 1;
	MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!bad && cleared(argv[1], argv[2]) != 0)
		bad = 1;
	MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (any) {
		MPI_Finalize();
		return 1;
	}

	amode = MPI_MODE_WRONLY | MPI_MODE_CREATE |
	    (strcmp(argv[1], "truncate0") == 0 ? 0 : MPI_MODE_EXCL);
	buf = malloc(BLOCK);
	if (buf == NULL)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (i = 0; i < BLOCK; i++)
		buf[i] = (unsigned char)(rank * 31 + i * 7 + i / 251);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	rc = MPI_File_open(MPI_COMM_WORLD, argv[2], amode, MPI_INFO_NULL, &fh);
	if (must(rc, "MPI_File_open") != 0) {
		bad = 1;
	} else {
		rc = MPI_File_write_at_all(fh, (MPI_Offset)rank * BLOCK, buf,
		    BLOCK, MPI_BYTE, &st);
		if (must(rc, "MPI_File_write_at_all") != 0)
			bad = 1;
		rc = MPI_File_close(&fh);
		if (must(rc, "MPI_File_close") != 0)
			bad = 1;
	}
	free(buf);
	MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Finalize();
	return any ? 1 : 0;
}
