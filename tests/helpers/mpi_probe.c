/*
 * mpi_probe - helper of tests/cmd/mpiio_posix.sh; not a test.  What a real
 * I/O library does before MPI-IO: look at the file with POSIX and stdio
 * calls (a signature probe, its size), then read it with MPI-IO.  Plain
 * calls only, so the same program runs on a plain file and, under
 * lib/libgfsplit-mpiio.so, on a split file that must look the same.
 *
 *   mpiexec -n N mpi_probe FILE EXPECT
 *
 * EXPECT is a plain file with the bytes FILE must hold.  Before MPI_Init,
 * every rank: stat and lstat of FILE say a regular file of EXPECT's size;
 * open + read of the first 8 bytes (the probe), fstat, lseek to the end
 * and back, read to the end in odd-sized pieces, pread at offsets across
 * the file (and past its end: 0 bytes), openat from the parent directory,
 * fopen + fseek + fread + ftell, all compared with EXPECT.  Then MPI-IO:
 * MPI_File_open of FILE read-only, MPI_File_get_size, and each rank reads
 * its contiguous share with MPI_File_read_at_all; every byte compared.
 *
 * Exit 0 if everything matched on every rank; otherwise 1, with one line
 * "mpi_probe: rank R: WHAT" per failure on stderr (no rank before
 * MPI_Init).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <mpi.h>

#include "testutil.h"

static int rank = -1;
static unsigned char *want;
static long long size;

/* n bytes at g are EXPECT's */
static void
same(const unsigned char *got, long long g, long long n, const char *what)
{
	long long i;

	for (i = 0; i < n; i++)
		if (g + i >= size || got[i] != want[g + i]) {
			fail("%s: byte at %lld differs", what, g + i);
			return;
		}
}

static void
load_expect(const char *path)
{
	FILE *f = fopen(path, "rb");

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) != 0 || (want = malloc(size + 1)) == NULL ||
	    fread(want, 1, size, f) != (size_t)size) {
		fprintf(stderr, "mpi_probe: cannot read %s: %s\n", path,
		    strerror(errno));
		exit(2);
	}
	fclose(f);
}

static void
probe_posix(const char *path)
{
	unsigned char buf[8192];
	struct stat st;
	long long g, n;
	char *dir, *base, *copy, *copy2;
	ssize_t r;
	int fd, dfd;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != size)
		fail("stat: not a regular file of %lld bytes (mode %o, size "
		    "%lld)", size, (unsigned)st.st_mode, (long long)st.st_size);
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != size)
		fail("lstat: not a regular file of %lld bytes", size);
	if ((fd = open(path, O_RDONLY)) < 0) {
		fail("open: %s", strerror(errno));
		return;
	}
	r = read(fd, buf, 8);		/* the signature */
	if (r != (size < 8 ? size : 8))
		fail("read of the first 8 bytes: %zd (%s)", r, strerror(errno));
	else
		same(buf, 0, r, "signature");
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != size)
		fail("fstat: not a regular file of %lld bytes", size);
	if (lseek(fd, 0, SEEK_END) != size)
		fail("lseek SEEK_END is not the size");
	if (lseek(fd, 8, SEEK_SET) != 8)
		fail("lseek back to 8");
	for (g = 8; g < size; g += r) {
		r = read(fd, buf, 4099);
		if (r <= 0) {
			fail("read at %lld: %zd (%s)", g, r, strerror(errno));
			break;
		}
		same(buf, g, r, "sequential read");
	}
	if (read(fd, buf, 10) != 0)
		fail("read at the end is not 0 bytes");
	for (g = 0; g < size; g += size / 7 + 1) {
		n = pread(fd, buf, 3000, g);
		if (n != (size - g < 3000 ? size - g : 3000))
			fail("pread at %lld: %lld bytes", g, n);
		else
			same(buf, g, n, "pread");
	}
	if (pread(fd, buf, 10, size + 100) != 0)
		fail("pread past the end is not 0 bytes");
	close(fd);

	/* relative to a directory descriptor */
	copy = strdup(path);
	copy2 = strdup(path);
	dir = dirname(copy);
	base = basename(copy2);
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY)) < 0 ||
	    (fd = openat(dfd, base, O_RDONLY)) < 0) {
		fail("openat: %s", strerror(errno));
	} else {
		if (fstatat(dfd, base, &st, 0) != 0 || st.st_size != size)
			fail("fstatat: size %lld", (long long)st.st_size);
		n = pread(fd, buf, sizeof(buf), size / 2);
		if (n < 0)
			fail("pread after openat: %s", strerror(errno));
		else
			same(buf, size / 2, n, "pread after openat");
		close(fd);
	}
	if (dfd >= 0)
		close(dfd);
	free(copy);
	free(copy2);
}

static void
probe_stdio(const char *path)
{
	unsigned char *all = malloc(size + 1);
	FILE *f = fopen(path, "rb");

	if (f == NULL || all == NULL) {
		fail("fopen: %s", strerror(errno));
		free(all);
		return;
	}
	if (fseek(f, 0, SEEK_END) != 0 || ftell(f) != size)
		fail("fseek/ftell at the end: %ld", ftell(f));
	rewind(f);
	if (fread(all, 1, size, f) != (size_t)size)
		fail("fread of the whole file");
	else
		same(all, 0, size, "fread");
	if (fgetc(f) != EOF || !feof(f))
		fail("no end of file after the whole file");
	fclose(f);
	free(all);
}

static void
read_mpiio(const char *path)
{
	MPI_Offset got = 0;
	MPI_Status st;
	MPI_File fh;
	long long a, b;
	int n, rc, count = 0;
	unsigned char *buf;

	MPI_Comm_size(MPI_COMM_WORLD, &n);
	rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY,
	    MPI_INFO_NULL, &fh);
	if (must(rc, "MPI_File_open") != 0)
		return;
	if (MPI_File_get_size(fh, &got) != MPI_SUCCESS || got != size)
		fail("MPI_File_get_size: %lld", (long long)got);
	a = size * rank / n;
	b = size * (rank + 1) / n;
	buf = malloc(b - a + 1);
	rc = MPI_File_read_at_all(fh, a, buf, (int)(b - a), MPI_BYTE, &st);
	if (must(rc, "MPI_File_read_at_all") == 0) {
		MPI_Get_count(&st, MPI_BYTE, &count);
		if (count != b - a)
			fail("read_at_all: %d bytes of %lld", count, b - a);
		same(buf, a, count, "MPI_File_read_at_all");
	}
	free(buf);
	MPI_File_close(&fh);
}

int
main(int argc, char **argv)
{
	int all = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: mpi_probe FILE EXPECT\n");
		return 2;
	}
	load_expect(argv[2]);
	/* before MPI_Init, as a library probing a file does */
	probe_posix(argv[1]);
	probe_stdio(argv[1]);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	read_mpiio(argv[1]);
	probe_posix(argv[1]);	/* and while MPI runs */
	MPI_Allreduce(&test_failed, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Finalize();
	free(want);
	return all ? 1 : 0;
}
