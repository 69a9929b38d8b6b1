/*
 * nc_ior.c - IOR's access pattern through PnetCDF, as IOR's NCMPI backend
 * makes it (IOR itself is not packaged for Debian): one byte variable
 * var[segments * nprocs][block / transfer][transfer]; rank r writes, in
 * each segment s, the row s * nprocs + r, one transfer per put.
 *
 *   nc_ior [-c] [-s SEGMENTS] [-b BLOCK] [-t TRANSFER] [-R] [-x] FILE
 *
 *   -c   collective puts and gets (ncmpi_put_vara_schar_all); without it,
 *        independent data mode (ncmpi_begin_indep_data), as IOR without -c
 *   -R   read FILE back and check every byte instead of writing it;
 *        -x: read the row of the next rank (IOR's -C, reordered tasks)
 *
 * Writes NC_CLOBBER over whatever is at FILE, as IOR does.  Exit 0 only
 * if every call succeeded and, with -R, every byte read is the pattern.
 */
#include <mpi.h>
#include <pnetcdf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, nprocs;

#define NC(call) do {							\
	int e_ = (call);						\
	if (e_ != NC_NOERR) {						\
		fprintf(stderr, "nc_ior: rank %d: %s: %s\n", rank,	\
		    #call, ncmpi_strerror(e_));				\
		MPI_Abort(MPI_COMM_WORLD, 2);				\
	}								\
} while (0)

/* the byte at [row][k][i]: a function of all three, never constant */
static signed char
pattern(MPI_Offset row, MPI_Offset k, MPI_Offset i)
{
	return (signed char)((row * 131 + k * 17 + i * 7 + (i >> 8)) & 0x7f);
}

int
main(int argc, char **argv)
{
	MPI_Offset segs = 3, block = 65536, xfer = 16384, start[3], count[3];
	int coll = 0, readback = 0, shift = 0, ncid, varid, dims[3], c, bad = 0;
	signed char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	while ((c = getopt(argc, argv, "cs:b:t:Rx")) != -1) {
		switch (c) {
		case 'c': coll = 1; break;
		case 's': segs = atoll(optarg); break;
		case 'b': block = atoll(optarg); break;
		case 't': xfer = atoll(optarg); break;
		case 'R': readback = 1; break;
		case 'x': shift = 1; break;
		default:
			if (rank == 0)
				fprintf(stderr, "usage: nc_ior [-c] [-s N] [-b B] "
				    "[-t T] [-R] [-x] FILE\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	if (optind != argc - 1 || xfer <= 0 || block % xfer != 0) {
		if (rank == 0)
			fprintf(stderr, "nc_ior: one FILE; BLOCK a multiple of "
			    "TRANSFER\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	buf = malloc(xfer);
	if (buf == NULL)
		MPI_Abort(MPI_COMM_WORLD, 1);

	if (readback) {
		NC(ncmpi_open(MPI_COMM_WORLD, argv[optind], NC_NOWRITE,
		    MPI_INFO_NULL, &ncid));
		NC(ncmpi_inq_varid(ncid, "var", &varid));
	} else {
		NC(ncmpi_create(MPI_COMM_WORLD, argv[optind], NC_CLOBBER |
		    NC_64BIT_OFFSET, MPI_INFO_NULL, &ncid));
		NC(ncmpi_def_dim(ncid, "segments_times_np", segs * nprocs,
		    &dims[0]));
		NC(ncmpi_def_dim(ncid, "number_of_transfers", block / xfer,
		    &dims[1]));
		NC(ncmpi_def_dim(ncid, "transfer_size", xfer, &dims[2]));
		NC(ncmpi_def_var(ncid, "var", NC_BYTE, 3, dims, &varid));
		NC(ncmpi_enddef(ncid));
	}
	if (!coll)
		NC(ncmpi_begin_indep_data(ncid));

	for (MPI_Offset s = 0; s < segs; s++) {
		MPI_Offset row = s * nprocs + (rank + (readback && shift)) %
		    nprocs;

		for (MPI_Offset k = 0; k < block / xfer; k++) {
			start[0] = row; start[1] = k; start[2] = 0;
			count[0] = 1; count[1] = 1; count[2] = xfer;
			if (readback) {
				memset(buf, 0xff, xfer);
				if (coll)
					NC(ncmpi_get_vara_schar_all(ncid, varid,
					    start, count, buf));
				else
					NC(ncmpi_get_vara_schar(ncid, varid,
					    start, count, buf));
				for (MPI_Offset i = 0; i < xfer; i++)
					if (buf[i] != pattern(row, k, i) &&
					    bad++ < 5)
						fprintf(stderr, "nc_ior: rank %d: "
						    "[%lld][%lld][%lld] is %d, "
						    "not %d\n", rank,
						    (long long)row, (long long)k,
						    (long long)i, buf[i],
						    pattern(row, k, i));
				continue;
			}
			for (MPI_Offset i = 0; i < xfer; i++)
				buf[i] = pattern(row, k, i);
			if (coll)
				NC(ncmpi_put_vara_schar_all(ncid, varid, start,
				    count, buf));
			else
				NC(ncmpi_put_vara_schar(ncid, varid, start, count,
				    buf));
		}
	}
	if (!coll)
		NC(ncmpi_end_indep_data(ncid));
	NC(ncmpi_close(ncid));
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("nc_ior: %s %s, %lld segments of %lld bytes in %lld-byte "
		    "transfers per rank: %s\n", readback ? "read" : "wrote",
		    coll ? "collective" : "independent", (long long)segs,
		    (long long)block, (long long)xfer, bad ? "MISMATCH" : "ok");
	free(buf);
	MPI_Finalize();
	return bad != 0;
}
