/*
 * cache_bench.c - the cooperative cache (libcore/cache.c) against plain
 * pread by every rank, the seed's experiments (001, figures 2-4):
 *
 *   cache_bench seq|random|strided FILE [--plain] [--groups G]
 *               [--block B] [--cache C] [--ratio R] [--size S]
 *               [--reads N] [--transport T]
 *
 *   seq      every rank reads the whole file in order, S bytes a read
 *            (default 256 KiB, as the seed's figure 2): concentrated
 *   random   every rank reads N random 1 MiB pieces (figure 3)
 *   strided  IOR's strided read: rank r reads pieces r, r+P, ... of S
 *            bytes (figure 4)
 *   --plain  the baseline: the same reads with pread(2) (or Gfarm's
 *            pread for gfarm:// URLs), no cache
 *
 * Timed from a barrier to the last rank's end (MPI_Reduce of the ends);
 * page-cache effects are the caller's business (bench/cache.sh drops
 * them between runs).  Rank 0 prints one JSON line: pattern, variant,
 * ranks, groups, bytes read by all ranks, seconds, aggregate MiB/s, and
 * for the cache its summed statistics (storage_bytes_read, ...).
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

static int rank, nprocs;

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

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "plain", 0, NULL, 'p' }, { "groups", 1, NULL, 'g' },
		{ "block", 1, NULL, 'b' }, { "cache", 1, NULL, 'c' },
		{ "ratio", 1, NULL, 'r' }, { "size", 1, NULL, 's' },
		{ "reads", 1, NULL, 'n' }, { "transport", 1, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	struct gfsp_cache_opts o = { 0 };
	struct gfsp_cache_stats sum;
	struct gfsp_cache *c = NULL;
	struct reader rd = { NULL, NULL };
	struct gfsp_error err;
	struct gfsp_stat st;
	uint64_t piece = 0, nreads = 256, fsize, off, x, i, bytes = 0, all = 0;
	double t0, t1, tmax = 0;
	const char *pat, *path;
	unsigned char *buf;
	int opt, plain = 0, rc = 0, bad = 0;

	MPI_Init(&argc, &argv);
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
	if (!plain)
		rc = gfsp_cache_create(MPI_COMM_WORLD, &o, &c, &err);
	if (rc == 0)
		rc = plain ? gfsp_open(path, GFSP_O_RDONLY, 0, &rd.pf, &err) :
		    gfsp_cache_open(c, path, &rd.cf, &err);
	if (rc == 0 && rd.pf != NULL)
		rc = gfsp_fstat(rd.pf, &st, &err);
	fsize = rc ? 0 : rd.cf ? gfsp_cache_file_size(rd.cf) : st.size;
	buf = malloc(piece);
	x = 0x9e3779b97f4a7c15ULL * (uint64_t)(rank + 1);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	if (rc == 0 && strcmp(pat, "seq") == 0) {
		for (off = 0; rc == 0 && off < fsize; off += piece) {
			rc = read_at(&rd, buf, piece, off, &err);
			bytes += GFSP_MIN(piece, fsize - off);
		}
	} else if (rc == 0 && strcmp(pat, "random") == 0) {
		for (i = 0; rc == 0 && i < nreads && fsize > piece; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			rc = read_at(&rd, buf, piece, x % (fsize - piece), &err);
			bytes += piece;
		}
	} else if (rc == 0 && strcmp(pat, "strided") == 0) {
		for (off = (uint64_t)rank * piece; rc == 0 && off < fsize;
		    off += (uint64_t)nprocs * piece) {
			rc = read_at(&rd, buf, piece, off, &err);
			bytes += GFSP_MIN(piece, fsize - off);
		}
	}
	t1 = MPI_Wtime() - t0;
	if (rc) {
		fprintf(stderr, "cache_bench: rank %d: %s\n", rank, err.msg);
		bad = 1;
	}
	MPI_Reduce(&t1, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&bytes, &all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	if (c != NULL && gfsp_cache_stats_all(c, &sum, NULL, &err) != 0)
		bad = 1;
	if (rank == 0) {
		printf("{\"pattern\":\"%s\",\"variant\":\"%s\",\"ranks\":%d,"
		    "\"groups\":%d,\"file_size\":%llu,\"piece\":%llu,"
		    "\"bytes\":%llu,\"seconds\":%.6f,\"mib_s\":%.3f", pat,
		    plain ? "plain" : "cache", nprocs,
		    o.groups ? o.groups : 1, (unsigned long long)fsize,
		    (unsigned long long)piece, (unsigned long long)all, tmax,
		    tmax > 0 ? (double)all / 1048576.0 / tmax : 0.0);
		if (c != NULL) {
			printf(",\"transport\":\"%s\",\"cache\":",
			    gfsp_cache_transport(c));
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
