/*
 * mpi_rdwr.c - a file opened again for writing, as MPI keeps it: the old
 * bytes stay where nothing is written, a rank reads back what it wrote at
 * once, and what the other ranks wrote after MPI_File_sync + barrier +
 * MPI_File_sync.  Plain MPI-IO, so that the same run checks MPICH and the
 * preload library (tests/cmd/mpiio_rdwr.sh).
 *
 *   mpi_rdwr create FILE   every rank writes its 4 blocks of B bytes of
 *                          the base pattern: the file is 4*N*B bytes
 *   mpi_rdwr update FILE   opens FILE RDWR (no CREATE); rank r patches 50
 *                          bytes at r*B + 100 and at the end of the file
 *                          + r*64 (the file grows), reads both back, reads
 *                          the old bytes around them, syncs, reads the
 *                          other ranks' patches; every read is checked
 *   mpi_rdwr cut FILE      opens a created FILE WRONLY, MPI_File_set_size
 *                          to half, then rank 0 writes 50 bytes 1000
 *                          past the cut (a hole between)
 *   mpi_rdwr delete FILE   opens FILE RDWR with MPI_MODE_DELETE_ON_CLOSE,
 *                          writes, reads it back, closes: FILE is gone
 *   mpi_rdwr order FILE    creates FILE and writes what MPI orders in time
 *                          over what it overwrites (MPI 4.1 14.6.1): rank
 *                          0 writes 50 bytes at 0, sync, barrier, sync,
 *                          rank N-1 writes 50 others there; a write_at_all
 *                          of every rank's block, then a second one where
 *                          each rank patches its neighbour's block; a
 *                          write_at_all of zeros, then an iwrite_at_all of
 *                          the real bytes over the neighbour's zeros (a
 *                          two-phase variable put); the later write must
 *                          win everywhere, read back after a sync
 *   mpi_rdwr atomic FILE   the same in atomic mode (MPI_File_set_atomicity)
 *                          with a barrier alone between the two writes at
 *                          0, and independent writes over the collective
 *                          ones after a barrier; atomic mode off, a sync,
 *                          and every byte read back is the later write's
 *   mpi_rdwr race FILE     creates FILE; every rank writes its own patch
 *                          at 0 and at B with nothing ordering them (MPI
 *                          leaves the result undefined), and rank 0 alone
 *                          at 2*B; no check
 *   mpi_rdwr atomic-read FILE  creates FILE, atomic mode on; every rank
 *                          writes its patch, barrier, reads its
 *                          neighbour's (atomic mode shows it at once)
 *   mpi_rdwr unsynced FILE  creates FILE RDWR and reads other ranks' bytes
 *                          with no MPI_File_sync, where ROMIO shows them: a
 *                          read_at_all after the write_at_all of the base
 *                          pattern; rank r's patch (independent write),
 *                          MPI_Barrier, its neighbour's patch (read_at);
 *                          a second handle on MPI_COMM_SELF (PnetCDF's
 *                          independent data mode) writes the tail patch,
 *                          closes, MPI_Barrier, the first handle reads the
 *                          neighbour's; the file ends "updated"
 *   mpi_rdwr self FILE     every rank opens FILE on MPI_COMM_SELF (a
 *                          handle per process, none shared) and writes its
 *                          patch at r*PATCH, barrier, close
 *   mpi_rdwr abort FILE    opens FILE CREATE|RDWR, every rank writes its
 *                          base blocks (write_at_all) and a patch, then
 *                          the last rank calls MPI_Abort (exit status 3)
 *                          while the file is open; no check (the script
 *                          looks at what is left)
 *   mpi_rdwr check FILE STATE   reads the whole file (every rank) and
 *                          compares it with STATE: created, updated, cut,
 *                          ordered
 *
 * Exit 0 if every check passed on every rank; otherwise 1 and one line per
 * failure on stderr ("mpi_rdwr: rank R: ...").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

#include "testutil.h"

#define B	8192		/* block */
#define PATCH	50

static int rank, nprocs;

static unsigned char
base_byte(long long g)
{
	return (unsigned char)((g * 31 + 7 + (g >> 9)) & 0xff);
}

static unsigned char
patch_byte(int r, long long i)
{
	return (unsigned char)(0x80 | ((r * 17 + i) & 0x7f));
}

static long long
base_size(void)
{
	return 4LL * nprocs * B;
}

/* What byte g of the file holds in STATE (-1: past the end). */
static int
model(const char *state, long long g)
{
	long long size = base_size(), half = size / 2, i;
	int r;

	if (strcmp(state, "cut") == 0) {
		if (g < half)
			return base_byte(g);
		if (g >= half + 1000 && g < half + 1000 + PATCH)
			return patch_byte(0, g - half - 1000);
		return g < half + 1000 + PATCH ? 0 : -1;
	}
	if (strcmp(state, "ordered") == 0) {
		if (g < PATCH)		/* rank N-1's, after rank 0's */
			return patch_byte(nprocs - 1, 500 + g);
		if (g < B)
			return g < (nprocs + 1) * (long long)B ? 0 : -1;
		if (g >= (2LL * nprocs + 1) * B)
			return -1;
		r = (int)((g - B) / B) % nprocs;	/* block of rank r */
		i = g - (B + r * (long long)B + 100);
		if (g < (nprocs + 1) * (long long)B && i >= 0 && i < PATCH)
			return patch_byte((r + nprocs - 1) % nprocs, i);
		return base_byte(g);
	}
	if (strcmp(state, "updated") == 0) {
		for (r = 0; r < nprocs; r++) {
			i = g - (r * (long long)B + 100);
			if (i >= 0 && i < PATCH)
				return patch_byte(r, i);
			i = g - (size + r * 64);
			if (i >= 0 && i < PATCH)
				return patch_byte(r, 1000 + i);
		}
		if (g >= size + (nprocs - 1) * 64 + PATCH)
			return -1;
		return g < size ? base_byte(g) : 0;	/* a gap between */
	}
	return g < size ? base_byte(g) : -1;
}

/* Read [g, g + n) and compare with the model in STATE. */
static void
expect(MPI_File fh, const char *state, long long g, int n, const char *what)
{
	unsigned char *buf = malloc(n);
	MPI_Status st;
	int i, count = 0;
	char msg[160];

	memset(buf, 0xee, n);
	if (must(MPI_File_read_at(fh, g, buf, n, MPI_BYTE, &st), what)) {
		free(buf);
		return;
	}
	MPI_Get_count(&st, MPI_BYTE, &count);
	for (i = 0; i < n; i++) {
		int want = model(state, g + i);

		if (want < 0 && i < count) {
			fail_at("read past the end of the file", g + i);
			break;
		}
		if (want >= 0 && (i >= count || buf[i] != want)) {
			snprintf(msg, sizeof(msg), "%s: byte %d of the read: "
			    "%d, want %d (read %d bytes)", what, i,
			    i < count ? buf[i] : -1, want, count);
			fail_at(msg, g + i);
			break;
		}
	}
	free(buf);
}

/* every rank's 4 blocks of the base pattern, collectively */
static void
write_base(MPI_File fh)
{
	unsigned char *buf = malloc(B);
	long long g;
	int k, i;

	for (k = 0; k < 4; k++) {
		g = ((long long)k * nprocs + rank) * B;
		for (i = 0; i < B; i++)
			buf[i] = base_byte(g + i);
		must(MPI_File_write_at_all(fh, g, buf, B, MPI_BYTE,
		    MPI_STATUS_IGNORE), "write_at_all");
	}
	free(buf);
}

static void
do_create(const char *path)
{
	MPI_File fh;

	if (must(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE |
	    MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), "open"))
		return;
	write_base(fh);
	must(MPI_File_close(&fh), "close");
}

static void
put_patch(MPI_File fh, long long g, long long seed)
{
	unsigned char buf[PATCH];
	int i;

	for (i = 0; i < PATCH; i++)
		buf[i] = patch_byte(rank, seed + i);
	must(MPI_File_write_at(fh, g, buf, PATCH, MPI_BYTE,
	    MPI_STATUS_IGNORE), "write_at (patch)");
}

static void
do_update(const char *path)
{
	long long size = base_size(), mine = rank * (long long)B + 100;
	long long tail = size + rank * 64;
	MPI_Offset got = 0;
	MPI_File fh;
	int r;

	if (must(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR,
	    MPI_INFO_NULL, &fh), "open RDWR"))
		return;
	must(MPI_File_get_size(fh, &got), "get_size");
	if (got != size)
		fail_at("get_size after the open is not the old size", got);
	/* the old bytes, before anything is written */
	expect(fh, "created", 0, 3 * B, "old bytes before writing");
	MPI_Barrier(MPI_COMM_WORLD);	/* before anyone writes */
	put_patch(fh, mine, 0);
	put_patch(fh, tail, 1000);
	/* its own writes at once, old bytes around them */
	expect(fh, "updated", mine - 30, PATCH + 60, "own patch and around");
	expect(fh, "updated", tail, PATCH, "own patch past the old end");
	must(MPI_File_sync(fh), "sync");
	MPI_Barrier(MPI_COMM_WORLD);
	must(MPI_File_sync(fh), "sync");
	for (r = 0; r < nprocs; r++) {
		expect(fh, "updated", r * (long long)B + 100, PATCH,
		    "a patch of any rank, after sync");
		expect(fh, "updated", size + r * 64, PATCH,
		    "a tail patch of any rank, after sync");
	}
	must(MPI_File_get_size(fh, &got), "get_size");
	if (got != size + (nprocs - 1) * 64 + PATCH)
		fail_at("get_size after the sync", got);
	must(MPI_File_close(&fh), "close");
}

/* The block of rank r in the second (k 0) or third (k 1) region. */
static long long
block_of(int k, int r)
{
	return (1 + (long long)k * nprocs + r) * B;
}

static void
do_order(const char *path, int atomic)
{
	unsigned char *buf = calloc(1, B);
	int next = (rank + 1) % nprocs, i, k;
	MPI_Request req;
	MPI_File fh;

	if (must(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE |
	    MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open CREATE|RDWR"))
		goto out;
	if (atomic)
		must(MPI_File_set_atomicity(fh, 1), "set_atomicity");
	/* sync-barrier-sync (atomic mode: the barrier alone): rank N-1's
	 * bytes are the later ones */
	if (rank == 0)
		put_patch(fh, 0, 500 * (nprocs == 1));
	if (!atomic)
		must(MPI_File_sync(fh), "sync");
	MPI_Barrier(MPI_COMM_WORLD);
	if (!atomic)
		must(MPI_File_sync(fh), "sync");
	if (rank == nprocs - 1)
		put_patch(fh, 0, 500);
	/* two collective calls: the second patches the neighbour's block */
	for (k = 0; k < 2; k++) {
		for (i = 0; i < B; i++)
			buf[i] = k ? 0 : base_byte(block_of(k, rank) + i);
		must(MPI_File_write_at_all(fh, block_of(k, rank), buf, B,
		    MPI_BYTE, MPI_STATUS_IGNORE), "write_at_all");
	}
	for (i = 0; i < PATCH; i++)
		buf[i] = patch_byte(rank, i);
	if (atomic) {	/* independent, ordered by the barrier */
		MPI_Barrier(MPI_COMM_WORLD);
		must(MPI_File_write_at(fh, block_of(0, next) + 100, buf,
		    PATCH, MPI_BYTE, MPI_STATUS_IGNORE), "write_at (patch)");
	} else {
		must(MPI_File_write_at_all(fh, block_of(0, next) + 100,
		    buf, PATCH, MPI_BYTE, MPI_STATUS_IGNORE),
		    "write_at_all (patch)");
	}
	/* the zeros of region 1, then the neighbour's real bytes */
	for (i = 0; i < B; i++)
		buf[i] = base_byte(block_of(1, next) + i);
	if (must(MPI_File_iwrite_at_all(fh, block_of(1, next), buf, B,
	    MPI_BYTE, &req), "iwrite_at_all") == 0)
		must(MPI_Wait(&req, MPI_STATUS_IGNORE), "wait");
	if (atomic) {
		int flag = 0;

		must(MPI_File_get_atomicity(fh, &flag), "get_atomicity");
		if (!flag)
			fail_at("get_atomicity says atomic mode is off", 0);
		must(MPI_File_set_atomicity(fh, 0), "set_atomicity");
	}
	must(MPI_File_sync(fh), "sync");
	MPI_Barrier(MPI_COMM_WORLD);
	must(MPI_File_sync(fh), "sync");
	expect(fh, "ordered", 0, B, "the later of two ordered writes at 0");
	expect(fh, "ordered", block_of(0, rank), B,
	    "a block patched by a later collective call");
	expect(fh, "ordered", block_of(1, rank), B,
	    "zeros overwritten by a later nonblocking collective");
	must(MPI_File_close(&fh), "close");
out:
	free(buf);
}

static void
do_race(const char *path)
{
	MPI_File fh;

	if (must(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE |
	    MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), "open CREATE|WRONLY"))
		return;
	put_patch(fh, 0, 0);
	put_patch(fh, B, 0);
	if (rank == 0)
		put_patch(fh, 2 * B, 0);
	must(MPI_File_close(&fh), "close");
}

static void
do_atomic_read(const char *path)
{
	unsigned char buf[PATCH];
	int next = (rank + 1) % nprocs, i;
	MPI_File fh;

	if (must(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE |
	    MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open CREATE|RDWR"))
		return;
	must(MPI_File_set_atomicity(fh, 1), "set_atomicity");
	put_patch(fh, rank * (long long)PATCH, 0);
	MPI_Barrier(MPI_COMM_WORLD);
	if (must(MPI_File_read_at(fh, next * (long long)PATCH, buf, PATCH,
	    MPI_BYTE, MPI_STATUS_IGNORE), "read_at in atomic mode") == 0)
		for (i = 0; i < PATCH; i++)
			if (buf[i] != patch_byte(next, i)) {
				fail_at("atomic mode: the neighbour's write does "
				    "not show", next * (long long)PATCH + i);
				break;
			}
	must(MPI_File_close(&fh), "close");
}

static void
do_cut(const char *path)
{
	long long half = base_size() / 2;
	MPI_File fh;

	if (must(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY,
	    MPI_INFO_NULL, &fh), "open WRONLY"))
		return;
	must(MPI_File_set_size(fh, half), "set_size");
	if (rank == 0)
		put_patch(fh, half + 1000, 0);
	must(MPI_File_close(&fh), "close");
}

static void
do_delete(const char *path)
{
	MPI_File fh;

	if (must(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR |
	    MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh), "open RDWR|DELETE_ON_CLOSE"))
		return;
	put_patch(fh, rank * (long long)B + 100, 0);
	expect(fh, "updated", rank * (long long)B + 100, PATCH, "own patch");
	must(MPI_File_close(&fh), "close");
}

/* every rank's [0, n) with a collective read, checked */
static void
expect_all(MPI_File fh, const char *state, long long n, const char *what)
{
	unsigned char *buf = malloc(n);
	MPI_Status st;
	long long i;
	int count = 0;

	memset(buf, 0xee, n);
	if (must(MPI_File_read_at_all(fh, 0, buf, (int)n, MPI_BYTE, &st),
	    what) == 0) {
		MPI_Get_count(&st, MPI_BYTE, &count);
		if (count != n)
			fail_at(what, count);
		for (i = 0; i < count; i++)
			if (buf[i] != model(state, i)) {
				fail_at(what, i);
				break;
			}
	}
	free(buf);
}

static void
do_unsynced(const char *path)
{
	long long size = base_size(), g;
	unsigned char *buf = malloc(B);
	int next = (rank + 1) % nprocs, k, i;
	MPI_File fh, fh2;

	if (must(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE |
	    MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open CREATE|RDWR"))
		return;
	for (k = 0; k < 4; k++) {
		g = ((long long)k * nprocs + rank) * B;
		for (i = 0; i < B; i++)
			buf[i] = base_byte(g + i);
		must(MPI_File_write_at_all(fh, g, buf, B, MPI_BYTE,
		    MPI_STATUS_IGNORE), "write_at_all");
	}
	free(buf);
	expect_all(fh, "created", size, "read_at_all after write_at_all, "
	    "no sync");
	MPI_Barrier(MPI_COMM_WORLD);	/* all have read the old bytes */
	put_patch(fh, rank * (long long)B + 100, 0);
	MPI_Barrier(MPI_COMM_WORLD);
	expect(fh, "updated", next * (long long)B + 100, PATCH,
	    "the neighbour's patch after a barrier, no sync");
	if (must(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR,
	    MPI_INFO_NULL, &fh2), "second open on MPI_COMM_SELF") == 0) {
		put_patch(fh2, size + rank * 64, 1000);
		expect(fh2, "updated", size + rank * 64, PATCH,
		    "own tail patch through the second handle");
		must(MPI_File_close(&fh2), "close the second handle");
	}
	MPI_Barrier(MPI_COMM_WORLD);
	expect(fh, "updated", size + next * 64, PATCH, "the neighbour's tail "
	    "patch of the second handle, through the first");
	expect_all(fh, "updated", size + (nprocs - 1) * 64 + PATCH,
	    "the whole file, read_at_all");
	must(MPI_File_close(&fh), "close");
}

static void
do_self(const char *path)
{
	MPI_File fh;
	int rc;

	if (must(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE |
	    MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), "open on MPI_COMM_SELF"))
		return;
	put_patch(fh, rank * (long long)PATCH, 0);
	MPI_Barrier(MPI_COMM_WORLD);
	rc = MPI_File_close(&fh);
	must(rc, "close");
}

static void
do_abort(const char *path)
{
	MPI_File fh;

	if (must(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE |
	    MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open CREATE|RDWR"))
		return;
	write_base(fh);
	put_patch(fh, rank * (long long)B + 100, 0);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == nprocs - 1)
		MPI_Abort(MPI_COMM_WORLD, 3);
	/* the others wait for the end MPICH brings them */
	MPI_Barrier(MPI_COMM_WORLD);
	must(MPI_File_close(&fh), "close");
}

static void
do_check(const char *path, const char *state)
{
	long long size = 0, g;
	MPI_Offset got = 0;
	MPI_File fh;

	if (must(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY,
	    MPI_INFO_NULL, &fh), "open RDONLY"))
		return;
	while (model(state, size) >= 0)
		size++;
	must(MPI_File_get_size(fh, &got), "get_size");
	if (got != size)
		fail_at("the file's size is not the model's", got);
	for (g = 0; g < size; g += 3 * B)
		expect(fh, state, g, g + 3 * B <= size ? 3 * B :
		    (int)(size - g), "the whole file");
	must(MPI_File_close(&fh), "close");
}

int
main(int argc, char **argv)
{
	int all = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	if (argc < 3 || (strcmp(argv[1], "check") == 0 && argc < 4)) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_rdwr create|update|cut|"
			    "delete|order|atomic|atomic-read|race|unsynced|self|abort FILE | "
			    "check "
			    "FILE "
			    "created|"
			    "updated|cut|ordered\n");
		MPI_Finalize();
		return 2;
	}
	if (strcmp(argv[1], "create") == 0)
		do_create(argv[2]);
	else if (strcmp(argv[1], "update") == 0)
		do_update(argv[2]);
	else if (strcmp(argv[1], "cut") == 0)
		do_cut(argv[2]);
	else if (strcmp(argv[1], "delete") == 0)
		do_delete(argv[2]);
	else if (strcmp(argv[1], "order") == 0)
		do_order(argv[2], 0);
	else if (strcmp(argv[1], "atomic") == 0)
		do_order(argv[2], 1);
	else if (strcmp(argv[1], "race") == 0)
		do_race(argv[2]);
	else if (strcmp(argv[1], "atomic-read") == 0)
		do_atomic_read(argv[2]);
	else if (strcmp(argv[1], "unsynced") == 0)
		do_unsynced(argv[2]);
	else if (strcmp(argv[1], "self") == 0)
		do_self(argv[2]);
	else if (strcmp(argv[1], "abort") == 0)
		do_abort(argv[2]);
	else
		do_check(argv[2], argv[3]);
	MPI_Allreduce(&test_failed, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Finalize();
	return all ? 1 : 0;
}
