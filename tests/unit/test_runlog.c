/*
 * test_runlog.c - the run-mode writer (writes at any offset, in any order,
 * through a view or not; runlog.c, splitfile.c) and the reader's priority
 * rule (layout.c), on a POSIX directory, as one MPI process.
 *
 * Each case writes through the writer and into a plain reference buffer
 * the same way, commits, and reads the whole logical file back through
 * gfsp_layout_pread: the bytes must equal the reference (bytes never
 * written read as zeros).  The number of runs shows that patterns fold.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "layout_impl.h"
#include "splitfile.h"
#include "runlog.h"
#include "rng.h"
#include "tap.h"

static char topdir[4096];

/* a stamp byte per (write, position), so that a lost overwrite shows */
static unsigned char
stamp(uint64_t w, uint64_t g)
{
	return (unsigned char)(((w + 1) * 131 + g * 7 + (g >> 8)) | 1);
}

struct model {
	unsigned char *ref;	/* what plain MPI-IO would leave */
	uint64_t size;		/* logical size */
	uint64_t nwrites;
	unsigned char *buf;	/* scratch for a write */
};

static void
model_init(struct model *m, uint64_t cap)
{
	m->ref = calloc(1, cap);
	m->buf = malloc(cap);
	m->size = 0;
	m->nwrites = 0;
}

static void
model_free(struct model *m)
{
	free(m->ref);
	free(m->buf);
}

static struct gfsp_split_writer *
open_writer(const char *name, char *path, size_t plen)
{
	struct gfsp_split_writer *w = NULL;
	struct gfsp_error err;

	snprintf(path, plen, "%s/%s", topdir, name);
	gfsp_error_clear(&err);
	if (gfsp_split_create(MPI_COMM_SELF, path, NULL, NULL, &w, NULL, &err))
		diag("create %s: %s", path, err.msg);
	return w;
}

/* Contiguous write of len bytes at g, in the writer and the model. */
static int
put_at(struct gfsp_split_writer *w, struct model *m, uint64_t g,
       uint64_t len)
{
	struct gfsp_error err;
	uint64_t i;

	for (i = 0; i < len; i++)
		m->buf[i] = m->ref[g + i] = stamp(m->nwrites, g + i);
	m->nwrites++;
	m->size = GFSP_MAX(m->size, g + len);
	gfsp_error_clear(&err);
	if (gfsp_split_write_at(w, g, m->buf, len, &err)) {
		diag("write_at %llu: %s", (unsigned long long)g, err.msg);
		return -1;
	}
	return 0;
}

/* The view's bytes in [a, b), written through the view. */
static int
put_view(struct gfsp_split_writer *w, struct model *m, uint32_t id,
	 const struct gfsp_view *v, uint64_t a, uint64_t b)
{
	struct gfsp_error err;
	uint64_t g, n = 0, loff, count;

	uint64_t last = a;

	for (g = a; g < b; g++) {
		if (!gfsp_view_lookup(v, g, &loff, &count))
			continue;
		m->buf[n++] = m->ref[g] = stamp(m->nwrites, g);
		last = g + 1;
	}
	m->size = GFSP_MAX(m->size, last);
	m->nwrites++;
	gfsp_error_clear(&err);
	/* [a, last): the range a write through a view really spans */
	if (gfsp_split_write_view(w, id, a, last, m->buf, n, &err)) {
		diag("write_view [%llu, %llu): %s", (unsigned long long)a,
		    (unsigned long long)b, err.msg);
		return -1;
	}
	return 0;
}

/* Commit and compare the whole logical file with the model. */
static void
finish_and_compare(struct gfsp_split_writer *w, struct model *m,
		   const char *path, uint64_t lsize, const char *what,
		   uint64_t max_runs)
{
	struct gfsp_layout *l = NULL;
	struct gfsp_error err;
	unsigned char *got;
	uint64_t n = 0, runs = gfsp_split_nruns(w);
	uint64_t i;
	int rc;

	gfsp_error_clear(&err);
	rc = gfsp_split_finish(w, 0, lsize, &err);
	ok(rc == 0, "%s: commit (%s)", what, rc ? err.msg : "ok");
	if (rc)
		return;
	rc = gfsp_layout_open(path, &l, &err);
	ok(rc == 0 && gfsp_layout_size(l) == GFSP_MAX(lsize, m->size),
	    "%s: reads back, logical size %llu", what,
	    rc ? 0ull : (unsigned long long)gfsp_layout_size(l));
	if (rc)
		return;
	got = calloc(1, gfsp_layout_size(l) + 1);
	rc = gfsp_layout_pread(l, got, gfsp_layout_size(l), 0, &n, &err);
	for (i = 0; rc == 0 && i < m->size; i++)
		if (got[i] != m->ref[i])
			break;
	ok(rc == 0 && i == m->size, "%s: bytes equal the model%s", what,
	    rc ? err.msg : "");
	if (rc == 0 && i < m->size)
		diag("first difference at %llu: %u, want %u",
		    (unsigned long long)i, got[i], m->ref[i]);
	ok(runs <= max_runs, "%s: %llu runs (at most %llu)", what,
	    (unsigned long long)runs, (unsigned long long)max_runs);
	rc = gfsp_layout_check(l, NULL, NULL, NULL, &err);
	ok(rc == 0, "%s: layout check passes%s%s", what, rc ? ": " : "",
	    rc ? err.msg : "");
	free(got);
	gfsp_layout_close(l);
}

/* IOR-like: rank 1 of 4, 64 segments of 4 KiB blocks in 1 KiB transfers:
 * 256 writes fold into one strided run. */
static void
test_ior_pattern(void)
{
	struct gfsp_split_writer *w;
	struct model m;
	char path[4200];
	uint64_t s, t, B = 4096, T = 1024;

	model_init(&m, 64 * 4 * B);
	w = open_writer("ior", path, sizeof(path));
	for (s = 0; w && s < 64; s++)
		for (t = 0; t < B; t += T)
			if (put_at(w, &m, (s * 4 + 1) * B + t, T))
				break;
	if (w)
		finish_and_compare(w, &m, path, 0, "IOR segmented", 1);
	model_free(&m);
}

/* HPIO-like view: 8-byte regions every 136 bytes (another rank's regions
 * in between), written in several calls that follow each other. */
static void
test_view_runs(void)
{
	struct gfsp_split_writer *w;
	struct gfsp_error err;
	struct gfsp_view v;
	struct model m;
	char path[4200];
	uint64_t off = 0, len = 8, k;
	uint32_t id = 0;

	gfsp_error_clear(&err);
	gfsp_view_init(&v, 8, 136, GFSP_VIEW_UNBOUNDED, 1, &off, &len, &err);
	model_init(&m, 136 * 5000);
	w = open_writer("hpio", path, sizeof(path));
	if (w == NULL || gfsp_split_add_view(w, &v, &id, &err)) {
		diag("add_view: %s", err.msg);
		gfsp_view_free(&v);	/* else the writer has it */
	}
	for (k = 0; w && k < 4; k++)
		put_view(w, &m, id, &v, 8 + k * 136 * 1000,
		    8 + (k + 1) * 136 * 1000);
	if (w)
		finish_and_compare(w, &m, path, 0, "view walked in order", 1);
	model_free(&m);
}

/* Overwrites: later data wins, in dense and view runs alike; a cut by
 * set_size drops what lay past it, and writing again extends. */
static void
test_overwrite_truncate(void)
{
	struct gfsp_split_writer *w;
	struct gfsp_error err;
	struct gfsp_view v;
	struct model m;
	char path[4200];
	uint64_t off = 2, len = 3;
	uint32_t id = 0;

	gfsp_error_clear(&err);
	gfsp_view_init(&v, 0, 10, GFSP_VIEW_UNBOUNDED, 1, &off, &len, &err);
	model_init(&m, 4096);
	w = open_writer("overwrite", path, sizeof(path));
	if (w == NULL || gfsp_split_add_view(w, &v, &id, &err)) {
		diag("add_view: %s", err.msg);
		gfsp_view_free(&v);	/* else the writer has it */
	}
	if (w) {
		put_at(w, &m, 0, 1000);
		put_at(w, &m, 100, 50);
		put_view(w, &m, id, &v, 0, 500);
		put_at(w, &m, 120, 3);
		put_at(w, &m, 990, 30);
		/* cut at 700, as MPI_File_set_size(700) */
		gfsp_split_truncate(w, 700);
		memset(m.ref + 700, 0, 4096 - 700);
		m.size = 700;
		put_at(w, &m, 800, 10);		/* hole [700, 800) */
		finish_and_compare(w, &m, path, 700, "overwrite and cut", 8);
	}
	model_free(&m);
}

/*
 * Epochs: writes that would fold into one run do not across an epoch
 * (each run keeps its own), and epochs never go back.
 */
static void
test_epochs(void)
{
	struct gfsp_split_writer *w;
	const struct gfsp_run *run;
	struct gfsp_layout *l = NULL;
	struct gfsp_error err;
	struct model m;
	char path[4200];
	uint64_t n = 0;
	int rc;

	model_init(&m, 4096);
	w = open_writer("epochs", path, sizeof(path));
	if (w) {
		put_at(w, &m, 0, 100);
		gfsp_error_clear(&err);
		rc = gfsp_split_set_epoch(w, 3, &err);
		put_at(w, &m, 100, 100);	/* would continue the first */
		put_at(w, &m, 200, 100);	/* continues the second */
		ok(rc == 0 && gfsp_split_set_epoch(w, 1, &err) == GFSP_EINVAL &&
		    strstr(err.msg, "epochs only grow"),
		    "an epoch does not go back: %s", err.msg);
		gfsp_error_clear(&err);
		finish_and_compare(w, &m, path, 0, "two epochs", 2);
	}
	gfsp_error_clear(&err);
	rc = gfsp_layout_open(path, &l, &err);
	run = rc == 0 ? gfsp_layout_runs(l, 0, &n) : NULL;
	ok(rc == 0 && n == 2 && run[0].epoch == 0 && run[0].end == 100 &&
	    run[1].epoch == 3 && run[1].begin == 100 && run[1].end == 300,
	    "a run per epoch, each with its epoch (%llu runs)",
	    (unsigned long long)n);
	gfsp_layout_close(l);
	model_free(&m);
}

/* The most blocks a view of a run of rank 0 has, as stored (-1: error). */
static int64_t
stored_blocks(const char *path)
{
	const struct gfsp_view *v;
	const struct gfsp_run *run;
	struct gfsp_layout *l;
	struct gfsp_error err;
	uint64_t i, n = 0;
	int64_t most = 0;

	gfsp_error_clear(&err);
	if (gfsp_layout_open(path, &l, &err)) {
		diag("%s: %s", path, err.msg);
		return -1;
	}
	run = gfsp_layout_runs(l, 0, &n);
	for (i = 0; i < n; i++) {
		v = gfsp_layout_run_view(l, 0, &run[i]);
		if (v != NULL && (int64_t)v->nblocks > most)
			most = (int64_t)v->nblocks;
	}
	gfsp_layout_close(l);
	return most;
}

/*
 * Views of many blocks are stored folded to their period.  An hvector
 * filetype as MPI makes it (C blocks every S bytes, extent (C-1)*S + 8)
 * repeats at S only inside a tile: a walk of tile 0 and one inside tile 1
 * fold, a walk across the edge of tiles 1 and 2 does not (edge != 0).  A
 * 3-D subarray slab (rows in planes, extent a whole number of planes)
 * folds to one plane of rows everywhere, across tile edges too.
 */
#define FOLD_C	1000
#define FOLD_S	136
#define FOLD_E	((FOLD_C - 1) * FOLD_S + 8)

static void
fold_case(int edge)
{
	struct gfsp_split_writer *w;
	struct gfsp_error err;
	struct gfsp_view v, u;
	struct model m;
	char path[4200], what[64];
	static uint64_t off[FOLD_C], len[FOLD_C];
	uint64_t i, e = FOLD_E, s = FOLD_S;
	uint32_t id = 0, jd = 0;
	int64_t most;

	gfsp_error_clear(&err);
	for (i = 0; i < FOLD_C; i++) {
		off[i] = i * s;
		len[i] = 8;
	}
	gfsp_view_init(&v, 8, e, GFSP_VIEW_UNBOUNDED, FOLD_C, off, len, &err);
	/* 4 planes of 50 rows of 16 bytes, rows 64 apart, planes 3840 */
	for (i = 0; i < 200; i++) {
		off[i] = i / 50 * 3840 + i % 50 * 64;
		len[i] = 16;
	}
	gfsp_view_init(&u, 100, 4 * 3840, GFSP_VIEW_UNBOUNDED, 200, off, len,
	    &err);
	snprintf(what, sizeof(what), "folded views%s",
	    edge ? ", a walk across a tile edge" : "");
	model_init(&m, 8 + 4 * e);
	w = open_writer(edge ? "fold-edge" : "fold", path, sizeof(path));
	if (w == NULL || gfsp_split_add_view(w, &v, &id, &err) ||
	    gfsp_split_add_view(w, &u, &jd, &err)) {
		diag("add_view: %s", err.msg);
		model_free(&m);
		return;		/* leaks, in a test that fails anyway */
	}
	put_view(w, &m, id, &v, 8, 8 + e);			/* tile 0 */
	put_view(w, &m, id, &v, 8 + e + 100 * s, 8 + e + 700 * s);
	if (edge)
		put_view(w, &m, id, &v, 8 + 2 * e - 50 * s, 8 + 2 * e + 30 * s);
	put_view(w, &m, jd, &u, 100, 100 + 2 * 4 * 3840 - 10);
	finish_and_compare(w, &m, path, 0, what, 4);
	most = stored_blocks(path);
	if (edge)
		ok(most == FOLD_C, "%s: that walk keeps its view of %d blocks "
		    "(most stored %lld)", what, FOLD_C, (long long)most);
	else
		ok(most == 50, "%s: the views of %d and 200 blocks are "
		    "stored as 1 block and one plane of 50 (most stored %lld)",
		    what, FOLD_C, (long long)most);
	model_free(&m);
}

/* Random writes: any offset, any length, overlapping each other. */
static void
test_random(uint64_t cap, uint64_t nwrites, uint64_t maxlen, int epochs)
{
	struct gfsp_split_writer *w;
	struct gfsp_error err;
	struct model m;
	char path[4200], what[96];
	uint64_t i, g, len, epoch = 0;

	snprintf(what, sizeof(what), "%llu random writes over %llu KiB%s",
	    (unsigned long long)nwrites, (unsigned long long)(cap >> 10),
	    epochs ? ", epochs" : "");
	model_init(&m, cap);
	w = open_writer(epochs ? "random-epochs" : "random", path,
	    sizeof(path));
	gfsp_error_clear(&err);
	for (i = 0; w && i < nwrites; i++) {
		if (epochs && rnd64() % 16 == 0 &&
		    gfsp_split_set_epoch(w, ++epoch, &err))
			break;
		/* mostly small, now and then over several 64 KiB chunks */
		len = 1 + rnd64() % (rnd64() % 8 ? 511 : maxlen);
		g = rnd64() % (cap - len);
		if (put_at(w, &m, g, len))
			break;
	}
	if (w)
		finish_and_compare(w, &m, path, 0, what, 3 * nwrites);
	model_free(&m);
}

/* Nothing written: a valid, empty split file of the size asked. */
static void
test_empty(void)
{
	struct gfsp_split_writer *w;
	struct model m;
	char path[4200];

	model_init(&m, 16);
	w = open_writer("empty", path, sizeof(path));
	if (w)
		finish_and_compare(w, &m, path, 0, "no writes", 0);
	model_free(&m);
}

/*
 * Rewrites go over the rank's own bytes in its part: blocks written in a
 * random order, then rewritten (whole, or a piece), through a view too,
 * across epochs, leave a part of exactly the distinct bytes written, and
 * the reader still sees the last write everywhere.  With more runs than
 * the search looks at, a rewrite of an old run is appended: still right.
 */
#define RW_BLOCKS	100
#define RW_BLEN		97
#define RW_STRIDE	200

static void
mark(unsigned char *seen, uint64_t g, uint64_t len, uint64_t *distinct)
{
	uint64_t i;

	for (i = g; i < g + len; i++)
		if (!seen[i]) {
			seen[i] = 1;
			(*distinct)++;
		}
}

static void
rewrite_case(int nblocks, int exact)
{
	struct gfsp_split_writer *w;
	struct gfsp_error err;
	struct gfsp_view v;
	struct model m;
	char path[4200], what[80];
	uint64_t cap = (uint64_t)nblocks * RW_STRIDE * 2 + 4096, distinct = 0;
	uint64_t vbase = (uint64_t)nblocks * RW_STRIDE, off = 0, len = RW_BLEN;
	uint64_t i, k, a, n, epoch = 0, total;
	unsigned char *seen = calloc(1, cap);
	uint32_t id = 0;
	int *order = malloc(nblocks * sizeof(int)), j, t;

	snprintf(what, sizeof(what), "%d blocks rewritten in place", nblocks);
	model_init(&m, cap);
	w = open_writer(exact ? "rewrite" : "rewrite-many", path, sizeof(path));
	gfsp_error_clear(&err);
	gfsp_view_init(&v, vbase, RW_STRIDE, GFSP_VIEW_UNBOUNDED, 1, &off,
	    &len, &err);
	if (w == NULL || gfsp_split_add_view(w, &v, &id, &err)) {
		diag("add_view: %s", err.msg);
		goto out;
	}
	for (j = 0; j < nblocks; j++)
		order[j] = j;
	for (j = nblocks - 1; j > 0; j--) {	/* a random order */
		t = (int)(rnd64() % (uint64_t)(j + 1));
		k = (uint64_t)order[j];
		order[j] = order[t];
		order[t] = (int)k;
	}
	total = (uint64_t)nblocks * RW_BLEN + 10 * RW_BLEN;
	for (j = 0; j < nblocks; j++) {
		a = (uint64_t)order[j] * RW_STRIDE;
		mark(seen, a, RW_BLEN, &distinct);
		if (put_at(w, &m, a, RW_BLEN))
			goto out;
	}
	/* the view's first 10 blocks, in one write */
	for (i = 0; i < 10; i++)
		mark(seen, vbase + i * RW_STRIDE, RW_BLEN, &distinct);
	if (put_view(w, &m, id, &v, vbase, vbase + 10 * RW_STRIDE))
		goto out;
	/* (exact: few enough runs that the search sees them all) */
	for (i = 0; i < (exact ? 6 : 50) * (uint64_t)nblocks / 5; i++) {
		if (i % 37 == 0 && gfsp_split_set_epoch(w, ++epoch, &err))
			break;
		k = rnd64() % (uint64_t)nblocks;
		a = k * RW_STRIDE;
		switch (rnd64() % 4) {
		case 0:		/* the whole block */
			n = RW_BLEN;
			break;
		case 1:		/* a piece of it */
			a += rnd64() % 50;
			n = 1 + rnd64() % 40;
			break;
		case 2:		/* the view's blocks again */
			total += 10 * RW_BLEN;
			if (put_view(w, &m, id, &v, vbase, vbase + 10 *
			    RW_STRIDE))
				goto out;
			continue;
		default:	/* its tail */
			a += RW_BLEN - 10;
			n = 10;
			break;
		}
		total += n;
		if (put_at(w, &m, a, n))
			goto out;
	}
	if (exact)
		ok(gfsp_split_part_size(w) == distinct, "%s: the part holds "
		    "%llu bytes, each byte written once (%llu)", what,
		    (unsigned long long)gfsp_split_part_size(w),
		    (unsigned long long)distinct);
	else
		ok(gfsp_split_part_size(w) < total, "%s, more runs than "
		    "searched: the part holds %llu bytes, less than the %llu "
		    "written", what,
		    (unsigned long long)gfsp_split_part_size(w),
		    (unsigned long long)total);
	finish_and_compare(w, &m, path, 0, what, 12 * (uint64_t)nblocks);
	w = NULL;
out:
	if (w != NULL)
		ok(0, "%s: the writes", what);
	free(order);
	free(seen);
	model_free(&m);
}

int
main(int argc, char **argv)
{
	const char *t = getenv("TMPDIR");
	char cmd[4200];

	MPI_Init(&argc, &argv);
	snprintf(topdir, sizeof(topdir), "%s/gfsplit-runlog-XXXXXX",
	    t && *t ? t : "/tmp");
	if (mkdtemp(topdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_ior_pattern();
	test_view_runs();
	test_overwrite_truncate();
	test_epochs();
	fold_case(0);
	fold_case(1);
	test_random(1 << 16, 400, 511, 0);
	test_random(8 << 20, 4000, 300000, 1);
	rewrite_case(RW_BLOCKS, 1);
	rewrite_case(4 * GFSP_RUNLOG_SEARCH, 0);
	test_empty();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", topdir);
	if (system(cmd) != 0)
		diag("could not remove %s", topdir);
	MPI_Finalize();
	return done_testing();
}
