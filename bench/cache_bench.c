/*
 * cache_bench.c - the cooperative cache (libcore/cache/cache.c) against plain
 * pread by every rank, the experiments of Arai, Ishikawa and Hori's
 * cooperative cache (Anco), its figures 2-4:
 *
 *   cache_bench seq|random|strided FILE [--plain] [--groups G]
 *               [--block B] [--cache C] [--ratio R] [--size S]
 *               [--reads N] [--transport T] [--local-dir D] [--verify]
 *               [--second-pass] [--readahead N]
 *
 *   seq      every rank reads the whole file in order, S bytes a read
 *            (default 256 KiB, as its figure 2): concentrated
 *   random   every rank reads N random 1 MiB pieces (figure 3), each at
 *            a multiple of the piece size, as IOR's random offsets are
 *   strided  IOR's strided read: rank r reads pieces r, r+P, ... of S
 *            bytes (figure 4)
 *   --plain  the baseline: the same reads with pread(2) (or Gfarm's
 *            pread for gfarm:// URLs), no cache
 *   --local-dir  the cache's node-local tier (cache-warm)
 *   --readahead N  the cache's read-ahead threads' depth, blocks (0: the
 *            default; -1: none)
 *   --second-pass  read the same pieces once, untimed, before the timed
 *            reads: with the cache, what a hit costs (the blocks are in
 *            the ranks' slots); plain reads the page cache in both passes
 *   --verify after the timed reads, read the same pieces again with plain
 *            pread, untimed, and compare: every read folds its bytes and
 *            offset into a checksum (in both variants, timed), and the
 *            two checksums must agree ("verified" in the JSON; exit 1 if
 *            not)
 *
 * Timed from a barrier to the last rank's end (MPI_Reduce of the ends);
 * page-cache effects are the caller's business (bench/cache.sh drops
 * them between runs).  Rank 0 prints one JSON line: pattern, variant,
 * ranks, groups, bytes read by all ranks, seconds, aggregate MiB/s, and
 * for the cache its summed statistics (storage_bytes_read, ...) and the
 * seconds that creating the cache and opening the file took (not in the
 * rate: a job pays them once).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

#include "cache.h"
#include "core.h"
#include "store.h"
#include "splitfile.h"

static int rank, nprocs;

/* the pieces a rank reads: *off of the i-th, 0 when there are no more */
struct plan {
	const char *pat;
	uint64_t fsize, piece, nreads, x;
};

static int
plan_next(struct plan *p, uint64_t i, uint64_t *off)
{
	if (strcmp(p->pat, "seq") == 0) {
		*off = i * p->piece;
		return *off < p->fsize;
	}
	if (strcmp(p->pat, "random") == 0) {
		if (i >= p->nreads || p->fsize < p->piece)
			return 0;
		p->x ^= p->x << 13, p->x ^= p->x >> 7, p->x ^= p->x << 17;
		*off = p->x % (p->fsize / p->piece) * p->piece;
		return 1;
	}
	*off = ((uint64_t)rank + i * (uint64_t)nprocs) * p->piece;
	return *off < p->fsize;
}

static void
plan_start(struct plan *p, const char *pat, uint64_t fsize, uint64_t piece,
	   uint64_t nreads)
{
	p->pat = pat;
	p->fsize = fsize;
	p->piece = piece;
	p->nreads = nreads;
	p->x = 0x9e3779b97f4a7c15ULL * (uint64_t)(rank + 1);
}

static uint64_t
size_arg(const char *s)
{
	uint64_t v = 0;

	if (gfsp_parse_size(s, &v, NULL) != 0) {
		fprintf(stderr, "cache_bench: bad size '%s'\n", s);
		exit(2);
	}
	return v;
}

struct reader {
	struct gfsp_cache_file *cf;	/* the cache, or */
	struct gfsp_file *pf;		/* plain pread */
};

static int
read_at(struct reader *r, void *buf, size_t len, uint64_t off,
	struct gfsp_error *err)
{
	size_t got = 0;

	return r->cf ? gfsp_cache_pread(r->cf, buf, len, off, &got, err) :
	    gfsp_pread(r->pf, buf, len, off, &got, err);
}

/* Every piece of the plan `start` through r into buf (piece bytes): OUT
 * *sum, their bytes and offsets folded in; *bytes. */
static int
read_all(struct reader *r, const struct plan *start, unsigned char *buf,
	 uint64_t *sum, uint64_t *bytes, struct gfsp_error *err)
{
	struct plan pl = *start;
	uint64_t i, off, n;
	int rc = 0;

	for (i = 0; rc == 0 && plan_next(&pl, i, &off); i++) {
		n = GFSP_MIN(pl.piece, pl.fsize - off);
		rc = read_at(r, buf, (size_t)n, off, err);
		*sum += gfsp_hash64(buf, (size_t)n) ^ off;
		*bytes += n;
	}
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "plain", 0, NULL, 'p' }, { "groups", 1, NULL, 'g' },
		{ "block", 1, NULL, 'b' }, { "cache", 1, NULL, 'c' },
		{ "ratio", 1, NULL, 'r' }, { "size", 1, NULL, 's' },
		{ "reads", 1, NULL, 'n' }, { "transport", 1, NULL, 't' },
		{ "local-dir", 1, NULL, 'l' }, { "verify", 0, NULL, 'v' },
		{ "second-pass", 0, NULL, '2' }, { "readahead", 1, NULL, 'a' },
		{ NULL, 0, NULL, 0 }
	};
	struct gfsp_cache_opts o = { 0 };
	struct gfsp_cache_stats sum;
	struct gfsp_cache *c = NULL;
	struct reader rd = { NULL, NULL };
	struct gfsp_error err;
	struct gfsp_stat st;
	uint64_t piece = 0, nreads = 256, fsize, bytes = 0, all = 0;
	uint64_t sum_read = 0, sum_check = 0, untimed = 0;
	double t0, t1, tmax = 0, setup, smax = 0;
	const char *pat, *path;
	unsigned char *buf;
	struct plan pl;
	int opt, plain = 0, verify = 0, second = 0, rc = 0, bad = 0, wrong = 0;
	int provided;

	/* as cache-warm and the cache preload: the mpi transport's progress
	 * thread needs MPI_THREAD_MULTIPLE */
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	o.singlet_ratio = -1;
	while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (opt) {
		case 'p': plain = 1; break;
		case 'g': o.groups = atoi(optarg); break;
		case 'b': o.block_size = size_arg(optarg); break;
		case 'c': o.cache_size = size_arg(optarg); break;
		case 'r': o.singlet_ratio = atof(optarg); break;
		case 's': piece = size_arg(optarg); break;
		case 'n': nreads = size_arg(optarg); break;
		case 't': o.transport = optarg; break;
		case 'l': o.local_dir = optarg; break;
		case 'v': verify = 1; break;
		case '2': second = 1; break;
		case 'a': o.readahead = atoi(optarg); break;
		default: MPI_Finalize(); return 2;
		}
	}
	if (argc - optind != 2) {
		if (rank == 0)
			fprintf(stderr, "usage: cache_bench seq|random|strided "
			    "FILE [--plain] [options]\n");
		MPI_Finalize();
		return 2;
	}
	pat = argv[optind];
	path = argv[optind + 1];
	if (piece == 0)
		piece = strcmp(pat, "random") == 0 ? (uint64_t)1 << 20 :
		    (uint64_t)256 << 10;
	gfsp_error_clear(&err);
	MPI_Barrier(MPI_COMM_WORLD);
	setup = MPI_Wtime();
	if (!plain)
		rc = gfsp_cache_create(MPI_COMM_WORLD, &o, &c, &err);
	if (rc == 0)
		rc = plain ? gfsp_open(path, GFSP_O_RDONLY, 0, &rd.pf, &err) :
		    gfsp_cache_open(c, path, &rd.cf, &err);
	if (rc == 0 && rd.pf != NULL)
		rc = gfsp_fstat(rd.pf, &st, &err);
	fsize = rc ? 0 : rd.cf ? gfsp_cache_file_size(rd.cf) : st.size;
	buf = malloc(piece);
	if (rc == 0 && buf == NULL)
		rc = gfsp_error_set(&err, GFSP_ENOMEM, "out of memory");
	if (rc == 0 && strcmp(pat, "random") == 0 && fsize < piece)
		rc = gfsp_error_set(&err, GFSP_EINVAL, "'%s': %llu bytes, "
		    "less than one %llu-byte piece", path,
		    (unsigned long long)fsize, (unsigned long long)piece);
	setup = MPI_Wtime() - setup;
	plan_start(&pl, pat, fsize, piece, nreads);
	/* --second-pass: the same pieces once, untimed */
	if (second && rc == 0)
		rc = read_all(&rd, &pl, buf, &sum_check, &untimed, &err);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	if (rc == 0)
		rc = read_all(&rd, &pl, buf, &sum_read, &bytes, &err);
	t1 = MPI_Wtime() - t0;
	if (rc) {
		fprintf(stderr, "cache_bench: rank %d: %s\n", rank, err.msg);
		bad = 1;
	}
	/* the same pieces with plain pread, untimed */
	if (verify && rc == 0) {
		struct reader vr = { NULL, NULL };

		sum_check = 0;
		rc = gfsp_open(path, GFSP_O_RDONLY, 0, &vr.pf, &err);
		if (rc == 0)
			rc = read_all(&vr, &pl, buf, &sum_check, &untimed,
			    &err);
		if (vr.pf != NULL)
			gfsp_close(vr.pf, &err);
		if (rc) {
			fprintf(stderr, "cache_bench: rank %d: %s\n", rank,
			    err.msg);
			bad = 1;
		}
		wrong = sum_check != sum_read;
		if (wrong)
			fprintf(stderr, "cache_bench: rank %d: the bytes read "
			    "differ from the file's\n", rank);
	}
	MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	bad |= wrong;
	MPI_Reduce(&setup, &smax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&t1, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&bytes, &all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	if (c != NULL && gfsp_cache_stats_all(c, &sum, NULL, &err) != 0) {
		fprintf(stderr, "cache_bench: rank %d: %s\n", rank, err.msg);
		bad = 1;
	}
	if (rank == 0) {
		printf("{\"pattern\":\"%s\",\"variant\":\"%s\",\"ranks\":%d,"
		    "\"file_size\":%llu,\"piece\":%llu,\"bytes\":%llu,"
		    "\"seconds\":%.6f,\"mib_s\":%.3f,\"setup_seconds\":%.6f",
		    pat, plain ? "plain" : "cache", nprocs,
		    (unsigned long long)fsize, (unsigned long long)piece,
		    (unsigned long long)all, tmax,
		    tmax > 0 ? (double)all / 1048576.0 / tmax : 0.0, smax);
		if (verify)
			printf(",\"verified\":%s", wrong ? "false" : "true");
		if (c != NULL) {
			printf(",\"groups\":%d,\"transport\":\"%s\",\"cache\":",
			    o.groups ? o.groups : 1, gfsp_cache_transport(c));
			gfsp_cache_stats_json(stdout, &sum);
		}
		printf("}\n");
	}
	if (rd.pf != NULL)
		gfsp_close(rd.pf, &err);
	gfsp_cache_close(rd.cf);
	gfsp_cache_destroy(c);
	free(buf);
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Finalize();
	return bad;
}
