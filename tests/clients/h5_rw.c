/*
 * h5_rw - helper of tests/cmd/mpiio_hdf5.sh; not a test.  A parallel HDF5
 * program written as HDF5's own parallel examples are: no gfsplit code, so
 * it runs on MPICH alone and under lib/libgfsplit-mpiio.so, and what the
 * two write must be the same file (h5diff, and byte for byte: object
 * times are off, so HDF5 writes nothing that depends on the clock).
 *
 *   mpiexec -n N h5_rw write|read FILE [--coll-md] [--chunked] [--indep]
 *                [--rows=R] [--cols=C]
 *
 * write: creates FILE with a group, attributes, and three datasets of
 * doubles of R x C (R a multiple of N; default 64 x 48):
 *   /grid/rows   rank r writes rows [r*R/N, (r+1)*R/N) (a block hyperslab)
 *   /grid/cols   rank r writes every N-th column from r (a strided
 *                hyperslab: a noncontiguous file view in MPI-IO)
 *   /grid/tiles  chunked (R/N/2 x C/2 chunks when --chunked, else
 *                contiguous); rank r writes a checkerboard of 2x2 blocks
 *                (a union of hyperslabs)
 * Element (i, j) of every dataset is val(d, i, j) below, so the reader
 * checks every element with any rank count.  --coll-md: collective
 * metadata reads and writes (H5Pset_all_coll_metadata_ops,
 * H5Pset_coll_metadata_write); --indep: independent raw data transfers
 * (default collective).
 *
 * read: first probes FILE as HDF5 tools do, with POSIX calls (H5Fis_hdf5
 * and, on rank 0, a serial open with the default sec2 driver that reads
 * the attribute); then opens it read-only in parallel and checks every
 * element of the three datasets and the attributes, each rank a
 * different hyperslab than the writer's (rank r reads rows r, r+N, ...);
 * any rank count, R and C as written.
 *
 * On success rank 0 prints "h5_rw: MODE N ranks ok"; any failure prints
 * the call and exits 1 on every rank (the ranks agree before exiting).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <mpi.h>

static int rank, nprocs;
static long R = 64, C = 48;
static int coll_md, chunked, indep;

static double
val(int d, long i, long j)
{
	return d * 1e6 + i * 1000.0 + j + 0.25;
}

#define TRY(call) do { if ((call) < 0) { \
	fprintf(stderr, "h5_rw: rank %d: %s failed (line %d)\n", rank, \
	    #call, __LINE__); return 1; } } while (0)

static hid_t
fapl_new(void)
{
	hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);

	if (fapl < 0 || H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD,
	    MPI_INFO_NULL) < 0)
		return -1;
	if (coll_md && (H5Pset_all_coll_metadata_ops(fapl, 1) < 0 ||
	    H5Pset_coll_metadata_write(fapl, 1) < 0))
		return -1;
	return fapl;
}

static hid_t
dxpl_new(void)
{
	hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);

	if (dxpl < 0 || H5Pset_dxpl_mpio(dxpl, indep ? H5FD_MPIO_INDEPENDENT :
	    H5FD_MPIO_COLLECTIVE) < 0)
		return -1;
	return dxpl;
}

/* Select in `space` the elements rank r owns in dataset d, and fill buf
 * (R x C, row-major) with their values at their places. */
static int
select_mine(int d, hid_t space, double *buf, int r)
{
	long rows = R / nprocs, i, j;
	hsize_t start[2], count[2], stride[2], block[2];

	switch (d) {
	case 0:
		start[0] = (hsize_t)r * rows; start[1] = 0;
		count[0] = rows; count[1] = C;
		TRY(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL,
		    count, NULL));
		break;
	case 1:
		start[0] = 0; start[1] = (hsize_t)r;
		stride[0] = 1; stride[1] = (hsize_t)nprocs;
		count[0] = R; count[1] = (C - r + nprocs - 1) / nprocs;
		TRY(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, stride,
		    count, NULL));
		break;
	default:
		/* 2x2 blocks of a checkerboard whose cell (bi, bj) belongs
		 * to rank (bi + bj) mod N */
		TRY(H5Sselect_none(space));
		for (i = 0; i < R / 2; i++)
			for (j = 0; j < C / 2; j++) {
				if ((i + j) % nprocs != r)
					continue;
				start[0] = 2 * i; start[1] = 2 * j;
				count[0] = count[1] = 1;
				block[0] = block[1] = 2;
				TRY(H5Sselect_hyperslab(space, H5S_SELECT_OR,
				    start, NULL, count, block));
			}
	}
	for (i = 0; i < R; i++)
		for (j = 0; j < C; j++)
			buf[i * C + j] = val(d, i, j);
	return 0;
}

static const char *const names[] = { "/grid/rows", "/grid/cols",
	"/grid/tiles" };

static int
do_write(const char *path)
{
	hid_t fapl, fcpl, file, gcpl, grp, dcpl, space, dset, dxpl, attr, aspace;
	hsize_t dims[2] = { (hsize_t)R, (hsize_t)C }, cdims[2];
	double *buf = malloc(sizeof(double) * R * C);
	int d, ints[4] = { 1, 2, 3, 4 };
	hsize_t four = 4;

	if (buf == NULL)
		return 1;
	TRY(fapl = fapl_new());
	TRY(fcpl = H5Pcreate(H5P_FILE_CREATE));
	TRY(file = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, fapl));
	TRY(gcpl = H5Pcreate(H5P_GROUP_CREATE));
	TRY(H5Pset_obj_track_times(gcpl, 0));
	TRY(grp = H5Gcreate2(file, "/grid", H5P_DEFAULT, gcpl, H5P_DEFAULT));
	TRY(aspace = H5Screate_simple(1, &four, NULL));
	TRY(attr = H5Acreate2(grp, "version", H5T_NATIVE_INT, aspace,
	    H5P_DEFAULT, H5P_DEFAULT));
	TRY(H5Awrite(attr, H5T_NATIVE_INT, ints));
	TRY(H5Aclose(attr));
	TRY(H5Sclose(aspace));
	TRY(dxpl = dxpl_new());
	for (d = 0; d < 3; d++) {
		TRY(dcpl = H5Pcreate(H5P_DATASET_CREATE));
		TRY(H5Pset_obj_track_times(dcpl, 0));
		if (d == 2 && chunked) {
			cdims[0] = (hsize_t)(R / nprocs / 2 > 0 ?
			    R / nprocs / 2 : 1);
			cdims[1] = (hsize_t)(C / 2);
			TRY(H5Pset_chunk(dcpl, 2, cdims));
		}
		/* no fill writes: the ranks' data is the whole content */
		TRY(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER));
		TRY(H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY));
		TRY(space = H5Screate_simple(2, dims, NULL));
		TRY(dset = H5Dcreate2(file, names[d], H5T_NATIVE_DOUBLE, space,
		    H5P_DEFAULT, dcpl, H5P_DEFAULT));
		if (select_mine(d, space, buf, rank))
			return 1;
		TRY(H5Dwrite(dset, H5T_NATIVE_DOUBLE, space, space, dxpl,
		    buf));
		TRY(H5Dclose(dset));
		TRY(H5Sclose(space));
		TRY(H5Pclose(dcpl));
	}
	TRY(H5Pclose(dxpl));
	TRY(H5Gclose(grp));
	TRY(H5Pclose(gcpl));
	TRY(H5Fclose(file));
	TRY(H5Pclose(fcpl));
	TRY(H5Pclose(fapl));
	free(buf);
	return 0;
}

static int
do_read(const char *path)
{
	hid_t fapl, file, dset, space, mspace, dxpl, attr;
	hsize_t start[2], count[2], stride[2], dims[2];
	double *buf = malloc(sizeof(double) * C);
	int d, ints[4];
	long i, j;

	if (buf == NULL)
		return 1;
	/* the probe: the sec2 driver, open(2) and read(2) */
	if (H5Fis_hdf5(path) <= 0) {
		fprintf(stderr, "h5_rw: rank %d: H5Fis_hdf5 says '%s' is not "
		    "an HDF5 file\n", rank, path);
		return 1;
	}
	if (rank == 0) {
		TRY(file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT));
		TRY(attr = H5Aopen_by_name(file, "/grid", "version",
		    H5P_DEFAULT, H5P_DEFAULT));
		TRY(H5Aread(attr, H5T_NATIVE_INT, ints));
		TRY(H5Aclose(attr));
		TRY(H5Fclose(file));
		if (ints[0] != 1 || ints[3] != 4) {
			fprintf(stderr, "h5_rw: serial read of /grid/version: "
			    "%d..%d, expected 1..4\n", ints[0], ints[3]);
			return 1;
		}
	}
	TRY(fapl = fapl_new());
	TRY(file = H5Fopen(path, H5F_ACC_RDONLY, fapl));
	TRY(attr = H5Aopen_by_name(file, "/grid", "version", H5P_DEFAULT,
	    H5P_DEFAULT));
	TRY(H5Aread(attr, H5T_NATIVE_INT, ints));
	TRY(H5Aclose(attr));
	if (ints[0] != 1 || ints[3] != 4) {
		fprintf(stderr, "h5_rw: rank %d: attribute /grid/version is "
		    "%d..%d, expected 1..4\n", rank, ints[0], ints[3]);
		return 1;
	}
	TRY(dxpl = dxpl_new());
	for (d = 0; d < 3; d++) {
		TRY(dset = H5Dopen2(file, names[d], H5P_DEFAULT));
		TRY(space = H5Dget_space(dset));
		TRY(H5Sget_simple_extent_dims(space, dims, NULL));
		if ((long)dims[0] != R || (long)dims[1] != C) {
			fprintf(stderr, "h5_rw: %s is %llux%llu, expected "
			    "%ldx%ld\n", names[d], (unsigned long long)dims[0],
			    (unsigned long long)dims[1], R, C);
			return 1;
		}
		count[0] = 1; count[1] = (hsize_t)C;
		TRY(mspace = H5Screate_simple(2, count, NULL));
		/* the same number of collective calls on every rank */
		for (i = 0; i < (R + nprocs - 1) / nprocs; i++) {
			long row = i * nprocs + rank;

			start[0] = (hsize_t)(row < R ? row : 0); start[1] = 0;
			stride[0] = stride[1] = 1;
			TRY(H5Sselect_hyperslab(space, H5S_SELECT_SET, start,
			    stride, count, NULL));
			if (row >= R) {
				TRY(H5Sselect_none(space));
				TRY(H5Sselect_none(mspace));
			} else {
				TRY(H5Sselect_all(mspace));
			}
			TRY(H5Dread(dset, H5T_NATIVE_DOUBLE, mspace, space,
			    dxpl, buf));
			for (j = 0; row < R && j < C; j++)
				if (buf[j] != val(d, row, j)) {
					fprintf(stderr, "h5_rw: %s[%ld][%ld] is "
					    "%g, expected %g\n", names[d], row,
					    j, buf[j], val(d, row, j));
					return 1;
				}
		}
		TRY(H5Sclose(mspace));
		TRY(H5Sclose(space));
		TRY(H5Dclose(dset));
	}
	TRY(H5Pclose(dxpl));
	TRY(H5Fclose(file));
	TRY(H5Pclose(fapl));
	free(buf);
	return 0;
}

int
main(int argc, char **argv)
{
	int i, rc = 0, all = 0;
	const char *mode, *path;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (argc < 3 || (strcmp(argv[1], "write") && strcmp(argv[1], "read"))) {
		if (rank == 0)
			fprintf(stderr, "usage: h5_rw write|read FILE "
			    "[--coll-md] [--chunked] [--indep] [--rows=R] "
			    "[--cols=C]\n");
		MPI_Finalize();
		return 2;
	}
	mode = argv[1];
	path = argv[2];
	for (i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--coll-md"))
			coll_md = 1;
		else if (!strcmp(argv[i], "--chunked"))
			chunked = 1;
		else if (!strcmp(argv[i], "--indep"))
			indep = 1;
		else if (!strncmp(argv[i], "--rows=", 7))
			R = atol(argv[i] + 7);
		else if (!strncmp(argv[i], "--cols=", 7))
			C = atol(argv[i] + 7);
		else {
			if (rank == 0)
				fprintf(stderr, "h5_rw: unknown option %s\n",
				    argv[i]);
			MPI_Finalize();
			return 2;
		}
	}
	if (R <= 0 || C < 2 || C % 2 != 0 ||
	    (strcmp(mode, "write") == 0 && R % nprocs != 0)) {
		if (rank == 0)
			fprintf(stderr, "h5_rw: rows must be a positive "
			    "multiple of the rank count, cols even\n");
		MPI_Finalize();
		return 2;
	}
	rc = strcmp(mode, "write") == 0 ? do_write(path) : do_read(path);
	MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (all == 0 && rank == 0)
		printf("h5_rw: %s %d ranks ok\n", mode, nprocs);
	MPI_Finalize();
	return all ? 1 : 0;
}
