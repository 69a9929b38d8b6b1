/*
 * mpi_rewrite.c - a file rewritten in place: every rank writes its bytes,
 * then writes them again, round after round, as a program rewriting its
 * output (or a checkpoint) in place does.  Plain MPI-IO, so that the same
 * run checks MPICH and the preload library (tests/cmd/mpiio_rewrite.sh,
 * which also checks that the split file's parts hold each byte once).
 *
 *   mpi_rewrite PATTERN FILE [ROUNDS] [BLOCK] [SEGMENTS]
 *
 * The file is SEGMENTS x N blocks of BLOCK bytes (N ranks); rank r owns
 * block k*N + r of each segment (IOR's segmented N-1 layout).  Round t
 * writes the round's bytes (a hash of rank, offset and t).  Patterns:
 *
 *   coll       each round: write_at_all of every own block (a collective
 *              between rounds: a new write epoch each round)
 *   indep      each round: write_at of every own block, no collective
 *              between rounds (one epoch), then sync, barrier, sync
 *   view       a vector file view of the own blocks, write_all of them all
 *              in one call each round
 *   halves     each round writes every own block in two write_at calls,
 *              second half first
 *   neighbour  round 0 as coll; round 1: each rank writes the first half
 *              of its right neighbour's first block (sync-barrier-sync
 *              around it); round 2 and later: coll again, so the owner's
 *              rewrite must win over the neighbour's bytes
 *   grow       round t writes the first (t+1)/ROUNDS of each own block:
 *              part of each write rewrites, the rest is new
 *
 * After the rounds every rank reads the whole file back (after sync,
 * barrier, sync) and checks it against the last round's bytes.  Rank 0
 * then prints "distinct BYTES": the bytes the ranks wrote, each byte a
 * rank wrote counted once (what the parts need to hold at most).
 *
 * Exit 0 if every check passed on every rank; otherwise 1 and one line per
 * failure on stderr ("mpi_rewrite: rank R: ...").
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static int rank, nprocs;
static long long B = 4096, S = 8, R = 3;

static unsigned char
byte_of(int r, long long g, int t)
{
	unsigned long long x = (unsigned long long)g * 2654435761u +
	    (unsigned long long)r * 40503u + (unsigned long long)t * 977u;

	return (unsigned char)(x ^ x >> 13);
}

static long long
block_at(long long k, int r)
{
	return (k * nprocs + r) * B;
}

/* the round-t bytes of rank r at [g, g + n) into buf */
static void
fill(unsigned char *buf, int r, long long g, long long n, int t)
{
	long long i;

	for (i = 0; i < n; i++)
		buf[i] = byte_of(r, g + i, t);
}

static void
sync_barrier_sync(MPI_File fh)
{
	must(MPI_File_sync(fh), "sync");
	MPI_Barrier(MPI_COMM_WORLD);
	must(MPI_File_sync(fh), "sync");
}

static void
write_blocks(MPI_File fh, int t, long long len, int coll)
{
	unsigned char *buf = malloc(B);
	long long k, g;
	int rc;

	for (k = 0; k < S; k++) {
		g = block_at(k, rank);
		fill(buf, rank, g, len, t);
		rc = coll ? MPI_File_write_at_all(fh, g, buf, (int)len,
		    MPI_BYTE, MPI_STATUS_IGNORE) : MPI_File_write_at(fh, g,
		    buf, (int)len, MPI_BYTE, MPI_STATUS_IGNORE);
		must(rc, coll ? "write_at_all" : "write_at");
	}
	free(buf);
}

static void
write_halves(MPI_File fh, int t)
{
	unsigned char *buf = malloc(B);
	long long k, g, h = B / 2;

	for (k = 0; k < S; k++) {
		g = block_at(k, rank);
		fill(buf, rank, g, B, t);
		must(MPI_File_write_at(fh, g + h, buf + h, (int)(B - h),
		    MPI_BYTE, MPI_STATUS_IGNORE), "write_at (second half)");
		must(MPI_File_write_at(fh, g, buf, (int)h, MPI_BYTE,
		    MPI_STATUS_IGNORE), "write_at (first half)");
	}
	free(buf);
}

static void
write_view(MPI_File fh, int t)
{
	unsigned char *buf = malloc(S * B);
	MPI_Datatype ft;
	long long k;

	MPI_Type_vector((int)S, (int)B, (int)(nprocs * B), MPI_BYTE, &ft);
	MPI_Type_commit(&ft);
	must(MPI_File_set_view(fh, rank * B, MPI_BYTE, ft, "native",
	    MPI_INFO_NULL), "set_view");
	for (k = 0; k < S; k++)
		fill(buf + k * B, rank, block_at(k, rank), B, t);
	must(MPI_File_write_all(fh, buf, (int)(S * B), MPI_BYTE,
	    MPI_STATUS_IGNORE), "write_all");
	must(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native",
	    MPI_INFO_NULL), "set_view back");
	MPI_Type_free(&ft);
	free(buf);
}

/* neighbour round: the first half of the right neighbour's first block */
static void
write_neighbour(MPI_File fh, int t)
{
	int right = (rank + 1) % nprocs;
	long long g = block_at(0, right), h = B / 2;
	unsigned char *buf = malloc(h);

	sync_barrier_sync(fh);
	fill(buf, rank, g, h, t);
	must(MPI_File_write_at(fh, g, buf, (int)h, MPI_BYTE,
	    MPI_STATUS_IGNORE), "write_at (neighbour's block)");
	sync_barrier_sync(fh);
	free(buf);
}

static void
check_file(MPI_File fh)
{
	long long k, i, g;
	unsigned char *buf = malloc(B), want;
	MPI_Status st;
	int r, got, last = (int)R - 1;
	char msg[160];

	sync_barrier_sync(fh);
	for (k = 0; k < S * nprocs; k++) {
		g = k * B;
		r = (int)(k % nprocs);
		if (must(MPI_File_read_at(fh, g, buf, (int)B, MPI_BYTE,
		    &st), "read_at"))
			break;
		MPI_Get_count(&st, MPI_BYTE, &got);
		if (got != B) {
			snprintf(msg, sizeof(msg), "read %d bytes of block "
			    "%lld, want %lld", got, k, B);
			fail_at(msg, g);
			continue;
		}
		for (i = 0; i < B; i++) {
			want = byte_of(r, g + i, last);
			if (buf[i] != want) {
				snprintf(msg, sizeof(msg), "block %lld of "
				    "rank %d byte %lld is %d, want %d (round "
				    "%d's)", k, r, i, buf[i], want, last);
				fail_at(msg, g + i);
				break;
			}
		}
	}
	free(buf);
}

int
main(int argc, char **argv)
{
	const char *pattern, *path;
	long long distinct;
	MPI_File fh;
	int t, all = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	if (argc < 3) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_rewrite coll|indep|view|"
			    "halves|neighbour|grow FILE [ROUNDS] [BLOCK] "
			    "[SEGMENTS]\n");
		MPI_Finalize();
		return 2;
	}
	pattern = argv[1];
	path = argv[2];
	if (argc > 3)
		R = atoll(argv[3]);
	if (argc > 4)
		B = atoll(argv[4]);
	if (argc > 5)
		S = atoll(argv[5]);
	if (R < 1 || B < 2 || S < 1 || (strcmp(pattern, "neighbour") == 0 &&
	    R < 3)) {
		if (rank == 0)
			fprintf(stderr, "mpi_rewrite: bad ROUNDS, BLOCK or "
			    "SEGMENTS (neighbour needs 3 rounds)\n");
		MPI_Finalize();
		return 2;
	}
	if (must(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE |
	    MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open")) {
		MPI_Finalize();
		return 1;
	}
	distinct = S * nprocs * B;
	for (t = 0; t < R; t++) {
		if (strcmp(pattern, "coll") == 0)
			write_blocks(fh, t, B, 1);
		else if (strcmp(pattern, "indep") == 0)
			write_blocks(fh, t, B, 0);
		else if (strcmp(pattern, "view") == 0)
			write_view(fh, t);
		else if (strcmp(pattern, "halves") == 0)
			write_halves(fh, t);
		else if (strcmp(pattern, "grow") == 0)
			write_blocks(fh, t, B * (t + 1) / R, 0);
		else if (strcmp(pattern, "neighbour") == 0 && t == 1)
			write_neighbour(fh, t);
		else if (strcmp(pattern, "neighbour") == 0)
			write_blocks(fh, t, B, 1);
		else {
			if (rank == 0)
				fprintf(stderr, "mpi_rewrite: unknown pattern "
				    "'%s'\n", pattern);
			test_failed = 1;
			break;
		}
	}
	if (strcmp(pattern, "neighbour") == 0 && nprocs > 1)
		distinct += nprocs * (B / 2);	/* each rank's neighbour half */
	if (!test_failed)
		check_file(fh);
	must(MPI_File_close(&fh), "close");
	MPI_Allreduce(&test_failed, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0 && !all)
		printf("distinct %lld\n", distinct);
	MPI_Finalize();
	return all ? 1 : 0;
}
