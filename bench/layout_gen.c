/*
 * layout_gen.c - write a complete, committed split file of R ranks on N
 * nodes directly, without an R-rank job: what bench/layout_scale.sh opens,
 * checks and plans at 1 Ki to 16 Ki ranks, and tests/cmd/layout_gen.sh
 * checks at 256.
 *
 *   layout_gen [--ranks R] [--nodes N] [--block B] [--count C]
 *              [--contiguous] [--short K] [--seg-size S] DIR
 *
 * Rank r lives on node r / (R / N) (block placement, as mpiexec puts
 * consecutive ranks on one node), so node k's location file holds ranks
 * k*R/N .. (k+1)*R/N - 1 (R must be a multiple of N).  Its view is
 *
 *   strided (default):  C blocks of B bytes, R*B apart, the first at r*B
 *                       (an N-1 strided write: gfsp_view_cyclic)
 *   --contiguous:       one block of B*C bytes at r*B*C (gfsp_view_contiguous)
 *
 *   logical:  |r0|r1|..|rR-1|r0|r1|..|rR-1| ...   C tiles of R*B bytes
 *
 * and the logical size is R*B*C.  With --short K every rank r with
 * r mod K == K-1 holds only the first half of its view's bytes (its part
 * is shorter than its view: the rest reads as holes).  The byte at
 * logical offset g is byte_at(g) below, so a reader can tell where any
 * byte came from (tests/cmd/layout_gen.sh computes the expected file from
 * this definition on its own).
 *
 * Everything goes through the library's own format code: views from
 * gfsp_view_cyclic / _contiguous, part checksums from gfsp_phash, the
 * location files and the marker from gfsp_locfile_encode and
 * gfsp_marker_encode.  The files are written into a sibling temporary
 * directory (.DIR.gfsplit-tmp.layout_gen.PID), the marker last, which is
 * then renamed to DIR (the commit rule of gfsplit(5), on one process).
 * DIR must not exist; its name must not end in '/'.  No MPI.
 *
 * Prints one JSON object: ranks, nodes, loc_files, metadata_bytes,
 * logical_size, part_bytes, seconds.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "store.h"
#include "splitfile.h"
#include "layout_impl.h"

struct gen {
	uint32_t ranks, nodes;
	uint64_t block, count, seg_size;
	int contiguous;
	uint32_t short_every;	/* 0: every part holds its whole view */
	const char *dir;
	char *tmp;
	unsigned char *buf;	/* one part's bytes */
	uint64_t meta_bytes, part_bytes;
};

/* The byte at logical offset g (the same in C's 64-bit arithmetic and in
 * Python's: only bits 24..31 of the product matter). */
static unsigned char
byte_at(uint64_t g)
{
	return (unsigned char)((g * 0x9E3779B1ull) >> 24);
}

static int
make_view(const struct gen *x, uint32_t r, struct gfsp_view *v,
	  struct gfsp_error *err)
{
	uint64_t total = (uint64_t)x->ranks * x->block * x->count;

	if (x->contiguous)
		return gfsp_view_contiguous(v, (int)r, (int)x->ranks, total,
		    x->block * x->count, err);
	return gfsp_view_cyclic(v, (int)r, (int)x->ranks, x->block, total,
	    err);
}

/* Write part r (its view's bytes, densely, up to its size) and fill the
 * part fields of its record. */
static int
write_part(struct gen *x, struct gfsp_locrec *rec, struct gfsp_error *err)
{
	const struct gfsp_view *v = &rec->view;
	struct gfsp_phash *h;
	uint64_t size, i;
	char *path;
	int rc;

	size = x->block * x->count;
	if (x->short_every && rec->rank % x->short_every == x->short_every - 1)
		size /= 2;
	for (i = 0; i < size; i++)
		x->buf[i] = byte_at(gfsp_view_global(v, i));
	h = gfsp_phash_new(x->seg_size);
	path = gfsp_part_path(x->tmp, (int)rec->rank);
	if (h == NULL || path == NULL) {
		gfsp_phash_free(h);
		free(path);
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	gfsp_phash_update(h, x->buf, (size_t)size);
	rec->part_size = size;
	rec->part_hash = gfsp_phash_final(h);
	gfsp_phash_free(h);
	rc = gfsp_write_whole(path, NULL, x->buf, (size_t)size, 0644,
	    GFSP_PUT_REPLACE, err);
	free(path);
	x->part_bytes += size;
	return rc;
}

/* Node k: its ranks' parts, then its location file. */
static int
write_node(struct gen *x, uint32_t k, struct gfsp_error *err)
{
	struct gfsp_locfile lf;
	uint32_t ppn = x->ranks / x->nodes, i;
	unsigned char *buf = NULL;
	size_t len = 0;
	char *path = NULL;
	int rc = 0;

	memset(&lf, 0, sizeof(lf));
	lf.nprocs = x->ranks;
	lf.nnodes = x->nodes;
	lf.node = k;
	snprintf(lf.node_name, sizeof(lf.node_name), "node%u", k);
	lf.recs = calloc(ppn, sizeof(*lf.recs));
	if (lf.recs == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	for (i = 0; i < ppn && rc == 0; i++) {
		struct gfsp_locrec *rec = &lf.recs[i];

		rec->rank = k * ppn + i;
		snprintf(rec->host, sizeof(rec->host), "%s", lf.node_name);
		rc = make_view(x, rec->rank, &rec->view, err);
		if (rc)
			break;
		lf.nrecs = i + 1;
		rc = write_part(x, rec, err);
	}
	if (rc == 0)
		rc = gfsp_locfile_encode(&lf, &buf, &len, err);
	if (rc == 0 && (path = gfsp_loc_path(x->tmp, (int)k)) == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	if (rc == 0)
		rc = gfsp_write_whole(path, NULL, buf, len, 0644,
		    GFSP_PUT_REPLACE, err);
	x->meta_bytes += len;
	free(path);
	free(buf);
	gfsp_locfile_free(&lf);
	return rc;
}

/* The marker, written last: from now on the directory is a split file. */
static int
write_marker(struct gen *x, struct gfsp_error *err)
{
	struct gfsp_marker m;
	unsigned char *buf = NULL;
	size_t len = 0;
	char *path;
	int rc;

	memset(&m, 0, sizeof(m));
	m.nprocs = x->ranks;
	m.nnodes = x->nodes;
	m.logical_size = (uint64_t)x->ranks * x->block * x->count;
	m.seg_size = x->seg_size;
	m.ctime = (int64_t)time(NULL);
	if (x->contiguous)
		snprintf(m.layout, sizeof(m.layout), "contiguous");
	else
		snprintf(m.layout, sizeof(m.layout), "cyclic:%llu",
		    (unsigned long long)x->block);
	rc = gfsp_marker_encode(&m, &buf, &len, err);
	if (rc)
		return rc;
	path = gfsp_marker_path(x->tmp);
	rc = path == NULL ? gfsp_error_set(err, GFSP_ENOMEM, "out of memory") :
	     gfsp_write_whole(path, NULL, buf, len, 0644,
		    GFSP_PUT_REPLACE, err);
	x->meta_bytes += len;
	free(path);
	free(buf);
	return rc;
}

/* "PARENT/.BASE.gfsplit-tmp.layout_gen.PID": a writer's temporary, as
 * the library names its own (gfsplit(5), COMMIT) */
static char *
tmp_sibling(const char *dir)
{
	const char *slash = strrchr(dir, '/');
	char *s;

	if (asprintf(&s, "%.*s.%s.gfsplit-tmp.layout_gen.%ld",
	    slash ? (int)(slash - dir + 1) : 0, dir, slash ? slash + 1 : dir,
	    (long)getpid()) < 0)
		return NULL;
	return s;
}

static void
usage(void)
{
	fprintf(stderr, "usage: layout_gen [--ranks R] [--nodes N] "
	    "[--block B] [--count C] [--contiguous] [--short K] "
	    "[--seg-size S] DIR\n");
	exit(2);
}

static uint64_t
size_arg(const char *s)
{
	struct gfsp_error e;
	uint64_t v;

	gfsp_error_clear(&e);
	if (gfsp_parse_size(s, &v, &e) != 0 || v == 0) {
		fprintf(stderr, "layout_gen: bad size '%s'\n", s);
		exit(2);
	}
	return v;
}

int
main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "ranks", required_argument, NULL, 'r' },
		{ "nodes", required_argument, NULL, 'n' },
		{ "block", required_argument, NULL, 'b' },
		{ "count", required_argument, NULL, 'c' },
		{ "contiguous", no_argument, NULL, 'C' },
		{ "short", required_argument, NULL, 's' },
		{ "seg-size", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 }
	};
	struct gen x = { .ranks = 1024, .nodes = 16, .block = 1024,
			 .count = 4, .seg_size = GFSP_SEG_SIZE_DEFAULT };
	struct gfsp_error err;
	struct gfsp_stat st;
	double t0 = gfsp_now();
	uint32_t k;
	int c, rc = 0;

	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'r': x.ranks = (uint32_t)size_arg(optarg); break;
		case 'n': x.nodes = (uint32_t)size_arg(optarg); break;
		case 'b': x.block = size_arg(optarg); break;
		case 'c': x.count = size_arg(optarg); break;
		case 'C': x.contiguous = 1; break;
		case 's': x.short_every = (uint32_t)size_arg(optarg); break;
		case 'S': x.seg_size = size_arg(optarg); break;
		default: usage();
		}
	}
	if (optind != argc - 1 || x.nodes > x.ranks || x.ranks % x.nodes ||
	    x.block * x.count > ((uint64_t)1 << 30))
		usage();
	x.dir = argv[optind];
	gfsp_error_clear(&err);
	if (gfsp_lstat(x.dir, &st, NULL) == 0) {
		fprintf(stderr, "layout_gen: '%s' exists\n", x.dir);
		return 1;
	}
	x.buf = malloc(x.block * x.count);
	if (x.buf == NULL || (x.tmp = tmp_sibling(x.dir)) == NULL) {
		fprintf(stderr, "layout_gen: out of memory\n");
		return 1;
	}
	rc = gfsp_mkdir(x.tmp, 0755, &err);
	for (k = 0; rc == 0 && k < x.nodes; k++)
		rc = write_node(&x, k, &err);
	if (rc == 0)
		rc = write_marker(&x, &err);
	if (rc == 0)
		rc = gfsp_rename(x.tmp, x.dir, &err);
	if (rc) {
		fprintf(stderr, "layout_gen: %s\n", err.msg);
		gfsp_remove_tree(x.tmp, NULL);
	} else {
		printf("{\"ranks\": %u, \"nodes\": %u, \"loc_files\": %u, "
		    "\"metadata_bytes\": %llu, \"logical_size\": %llu, "
		    "\"part_bytes\": %llu, \"seconds\": %.3f}\n", x.ranks,
		    x.nodes, x.nodes, (unsigned long long)x.meta_bytes,
		    (unsigned long long)x.ranks * x.block * x.count,
		    (unsigned long long)x.part_bytes, gfsp_now() - t0);
	}
	free(x.tmp);
	free(x.buf);
	return rc ? 1 : 0;
}
