/*
 * mpi_cache.c - the cooperative cache (libcore/cache/cache.c) under real MPI:
 * every rank reads FILE (a path or a gfarm:// URL) through the cache in a
 * pattern and compares every byte with a plain read of FILE.  Rank 0 prints one JSON line: the
 * pattern, the options and the summed statistics; tests/cmd/cache.sh
 * asserts on them.
 *
 *   mpi_cache PATTERN FILE [--groups G] [--block B] [--cache C]
 *             [--ratio R] [--reads N] [--size S] [--passes K] [--ref REF]
 *             [--busy SECONDS] [--go GOFILE]
 *   seq      every rank reads the whole file in order, S bytes a read
 *            (default: the block size), all at once: concentrated access
 *   random   every rank reads N random S-byte pieces (seeded by rank)
 *   strided  IOR's strided read: rank r reads pieces r, r+P, r+2P, ...
 *            of S bytes, K passes
 *   changed  every rank reads the file; rank 0 rewrites it in place (same
 *            size, same second, other bytes); every rank opens it again
 *            and reads it: the new bytes, never the cached old ones
 *   replace  2+ ranks: rank 1 loads block 0, then rank 0 copies it while
 *            a test hook gives rank 1's slot a new token between the data
 *            and the check (a replacement during the copy): rank 0 must
 *            notice (retries >= 1) and still return the right bytes
 *   busy     2+ ranks: each rank loads its strided share of the blocks;
 *            then rank 0 computes for --busy seconds with no MPI call
 *            while every other rank reads the blocks rank 0 holds.  The
 *            JSON's "busy" says how long rank 0 computed and how long the
 *            slowest other rank took for its reads, and whether every
 *            other rank had finished before rank 0 made an MPI call again
 *            (passive-target progress that needs the target would make
 *            them wait for it)
 *
 * GOFILE, if given: every rank waits, once the cache exists and before
 * the pattern's first read, until GOFILE exists (a test's signal that
 * what it set up against the job, strangers on the tcp transport's
 * ports, is in place).
 *
 * REF, if given, is another path holding FILE's bytes that the reads are
 * compared with instead of FILE (so that the storage under FILE serves
 * the cache alone, and its side can count what the cache read).
 *
 * Exit 0 if every byte matched on every rank, 1 otherwise (one line per
 * failure on stderr: "mpi_cache: rank R: ...").
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <mpi.h>

#include "cache.h"
#include "core.h"
#include "store.h"
#include "testutil.h"

static int rank, nprocs;
static struct gfsp_file *ref;	/* FILE read straight (POSIX or Gfarm) */

static uint64_t
parse(const char *s)
{
	uint64_t v = 0;

	if (gfsp_parse_size(s, &v, NULL) != 0) {
		fprintf(stderr, "mpi_cache: bad size '%s'\n", s);
		exit(2);
	}
	return v;
}

/* Read [off, off + len) through the cache and compare with the file. */
static void
check_read(struct gfsp_cache_file *f, uint64_t off, size_t len,
	   unsigned char *got, unsigned char *want)
{
	struct gfsp_error err;
	size_t n = 0, w = 0, i;

	gfsp_error_clear(&err);
	if (gfsp_cache_pread(f, got, len, off, &n, &err) != 0 ||
	    gfsp_pread(ref, want, len, off, &w, &err) != 0) {
		fail("%s", err.msg);
		return;
	}
	if (w != n) {
		fail_ab("short or long read through the cache", (long long)off,
		    (long long)n);
		return;
	}
	for (i = 0; i < n; i++)
		if (got[i] != want[i]) {
			fail_ab("wrong byte at offset, read at", (long long)(off +
			    i), (long long)off);
			return;
		}
}

static uint64_t
rnd_next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Every byte of the file inverted, in place: same size, same inode, and
 * (a POSIX path) the modification time put back to the same second, only
 * the nanoseconds differing: the hardest change to notice. */
static int
rewrite(const char *path, uint64_t size)
{
	struct gfsp_file *w = NULL;
	struct gfsp_error err;
	unsigned char buf[65536];
	struct timespec ts[2];
	struct stat sb;
	uint64_t off;
	size_t n = 0, i;
	int rc, posix = strncmp(path, "gfarm:", 6) != 0;

	gfsp_error_clear(&err);
	if (posix && stat(path, &sb) != 0)
		return -1;
	rc = gfsp_open(path, GFSP_O_RDWR, 0, &w, &err);
	for (off = 0; rc == 0 && off < size; off += n) {
		rc = gfsp_pread(w, buf, sizeof(buf), off, &n, &err);
		for (i = 0; rc == 0 && i < n; i++)
			buf[i] ^= 0xff;
		if (rc == 0)
			rc = gfsp_pwrite(w, buf, n, off, &err);
		if (rc == 0 && n == 0)
			break;
	}
	if (w != NULL && gfsp_close(w, &err) != 0)
		rc = -1;
	if (rc == 0 && posix) {
		ts[0] = sb.st_atim;
		ts[1] = sb.st_mtim;
		ts[1].tv_nsec ^= 1;
		rc = utimensat(AT_FDCWD, path, ts, 0);
	}
	if (rc)
		fprintf(stderr, "mpi_cache: rank %d: %s\n", rank,
		    err.msg[0] ? err.msg : "cannot set the times back");
	return rc;
}

/* --go: sleeping, not spinning, so that the test's own processes get
 * the CPU they need to set up what the job is to meet */
static void
wait_for(const char *path)
{
	struct timespec ms10 = { 0, 10 * 1000 * 1000 };

	while (access(path, F_OK) != 0)
		nanosleep(&ms10, NULL);
}

/* the replace pattern's hook: one new token, on the first copy */
static struct gfsp_cache *hook_cache;
static int hook_calls;

static void
retoken(int src_rank, uint32_t src_slot)
{
	struct gfsp_error err;

	if (hook_calls++ > 0)
		return;
	gfsp_error_clear(&err);
	if (gfsp_cache_test_retoken(hook_cache, src_rank, src_slot, &err))
		fprintf(stderr, "mpi_cache: rank %d: %s\n", rank, err.msg);
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "groups", 1, NULL, 'g' }, { "block", 1, NULL, 'b' },
		{ "cache", 1, NULL, 'c' }, { "ratio", 1, NULL, 'r' },
		{ "reads", 1, NULL, 'n' }, { "size", 1, NULL, 's' },
		{ "passes", 1, NULL, 'k' }, { "local-dir", 1, NULL, 'l' },
		{ "transport", 1, NULL, 't' }, { "busy", 1, NULL, 'B' },
		{ "ref", 1, NULL, 'R' }, { "go", 1, NULL, 'G' },
		{ NULL, 0, NULL, 0 }
	};
	struct gfsp_cache_opts o = { 0 };
	struct gfsp_cache_stats sum;
	struct gfsp_cache_file *f = NULL;
	struct gfsp_cache *c = NULL;
	struct gfsp_error err;
	uint64_t size, piece = 0, nreads = 64, passes = 1, off, x, i, k;
	unsigned char *got, *want;
	const char *pat, *path, *refpath = NULL, *go = NULL;
	double busy = 2, t0, busy_done = 0, others = 0, mine = 0;
	int opt, all = 0, during = 1, provided;

	/* as cache-warm does: the transport's progress thread needs it */
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	o.singlet_ratio = -1;
	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'g': o.groups = atoi(optarg); break;
		case 'b': o.block_size = parse(optarg); break;
		case 'c': o.cache_size = parse(optarg); break;
		case 'r': o.singlet_ratio = atof(optarg); break;
		case 'n': nreads = parse(optarg); break;
		case 's': piece = parse(optarg); break;
		case 'k': passes = parse(optarg); break;
		case 'l': o.local_dir = optarg; break;
		case 't': o.transport = optarg; break;
		case 'B': busy = atof(optarg); break;
		case 'R': refpath = optarg; break;
		case 'G': go = optarg; break;
		default: MPI_Finalize(); return 2;
		}
	}
	if (argc - optind != 2) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_cache seq|random|strided|"
			    "changed|replace|busy FILE [options]\n");
		MPI_Finalize();
		return 2;
	}
	pat = argv[optind];
	path = argv[optind + 1];
	gfsp_error_clear(&err);
	if (gfsp_cache_create(MPI_COMM_WORLD, &o, &c, &err) != 0) {
		fprintf(stderr, "mpi_cache: rank %d: %s\n", rank, err.msg);
		MPI_Finalize();
		return 1;
	}
	if (gfsp_open(refpath ? refpath : path, GFSP_O_RDONLY, 0, &ref,
	    &err) != 0 || gfsp_cache_open(c, path, &f, &err) != 0) {
		fail("cannot open '%s': %s", path,
		    err.msg[0] ? err.msg : "open failed");
	}
	size = f ? gfsp_cache_file_size(f) : 0;
	if (piece == 0)
		piece = gfsp_cache_block_size(c);
	got = malloc(piece);
	want = malloc(piece);
	x = 0x9e3779b97f4a7c15ULL * (uint64_t)(rank + 1);
	if (go != NULL)
		wait_for(go);
	MPI_Barrier(MPI_COMM_WORLD);
	if (f != NULL && strcmp(pat, "seq") == 0) {
		for (off = 0; off < size; off += piece)
			check_read(f, off, piece, got, want);
	} else if (f != NULL && strcmp(pat, "random") == 0) {
		for (i = 0; i < nreads && size > 0; i++)
			check_read(f, rnd_next(&x) % size, piece, got, want);
	} else if (f != NULL && strcmp(pat, "strided") == 0) {
		for (k = 0; k < passes; k++)
			for (off = (uint64_t)rank * piece; off < size;
			    off += (uint64_t)nprocs * piece)
				check_read(f, off, piece, got, want);
	} else if (f != NULL && strcmp(pat, "changed") == 0) {
		for (off = 0; off < size; off += piece)
			check_read(f, off, piece, got, want);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0 && rewrite(path, size) != 0)
			fail_ab("cannot rewrite the file", 0, 0);
		MPI_Barrier(MPI_COMM_WORLD);
		gfsp_cache_close(f);
		gfsp_close(ref, &err);
		ref = NULL;
		f = NULL;
		if (gfsp_open(path, GFSP_O_RDONLY, 0, &ref, &err) != 0 ||
		    gfsp_cache_open(c, path, &f, &err) != 0) {
			fail("%s", err.msg);
		}
		for (off = 0; f != NULL && off < size; off += piece)
			check_read(f, off, piece, got, want);
	} else if (f != NULL && strcmp(pat, "replace") == 0 && nprocs >= 2) {
		if (rank == 1)
			check_read(f, 0, piece, got, want);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			hook_cache = c;
			gfsp_cache_test_hook = retoken;
			check_read(f, 0, piece, got, want);
			gfsp_cache_test_hook = NULL;
			if (hook_calls == 0)
				fail_ab("the copy hook never ran", 0, 0);
		}
	} else if (f != NULL && strcmp(pat, "busy") == 0 && nprocs >= 2) {
		for (off = (uint64_t)rank * piece; off < size;
		    off += (uint64_t)nprocs * piece)
			check_read(f, off, piece, got, want);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		if (rank == 0) {
			while (MPI_Wtime() - t0 < busy)
				;	/* computing: no MPI call */
			busy_done = MPI_Wtime();
		} else {
			for (off = 0; off < size; off += (uint64_t)nprocs *
			    piece)
				check_read(f, off, piece, got, want);
			mine = MPI_Wtime();
		}
		/* MPI_Wtime is global here (one clock for every node) */
		MPI_Allreduce(&mine, &others, 1, MPI_DOUBLE, MPI_MAX,
		    MPI_COMM_WORLD);
		MPI_Bcast(&busy_done, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
		during = others < busy_done;
		busy_done -= t0;
		others -= t0;
	} else if (f != NULL) {
		if (rank == 0)
			fprintf(stderr, "mpi_cache: unknown pattern '%s' (or "
			    "too few ranks)\n", pat);
		test_failed = 1;
	}
	if (gfsp_cache_stats_all(c, &sum, NULL, &err) != 0)
		fail("%s", err.msg);
	if (rank == 0) {
		printf("{\"pattern\":\"%s\",\"nprocs\":%d,\"groups\":%d,"
		    "\"file_size\":%llu,\"block_size\":%llu,\"transport\":"
		    "\"%s\",\"total\":", pat, nprocs, o.groups ? o.groups : 1,
		    (unsigned long long)size,
		    (unsigned long long)gfsp_cache_block_size(c),
		    gfsp_cache_transport(c));
		gfsp_cache_stats_json(stdout, &sum);
		if (strcmp(pat, "busy") == 0)
			printf(",\"busy\":{\"computed_s\":%.3f,"
			    "\"others_read_s\":%.3f,\"done_during\":%s}",
			    busy_done, others, during ? "true" : "false");
		printf("}\n");
		fflush(stdout);
	}
	gfsp_cache_close(f);
	gfsp_cache_destroy(c);
	free(got);
	free(want);
	if (ref != NULL)
		gfsp_close(ref, &err);
	MPI_Allreduce(&test_failed, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Finalize();
	return all ? 1 : 0;
}
