/*
 * test_format.c - split-file metadata encodings and part checksums
 * (format.c, hash.c), without MPI: round trips, the exact byte layout of
 * man/gfsplit.5, and rejection of every truncation, every single-byte
 * flip, wrong magic, newer versions and corrupt counts under a valid
 * trailer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "core.h"
#include "splitfile.h"
#include "tap.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t
rnd(void)
{
	/* xorshift64*: deterministic, so a failure reproduces */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint32_t
rd32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static uint64_t
rd64(const unsigned char *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static void
wr32(unsigned char *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void
wr64(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Recompute the trailer after a deliberate edit, so the decoder gets
 * past the checksum to the check under test. */
static void
resign(unsigned char *buf, size_t len)
{
	wr64(buf + len - 8, XXH3_64bits(buf, len - 8));
}

static int
same_view(const struct gfsp_view *a, const struct gfsp_view *b)
{
	uint64_t i;

	if (a->disp != b->disp || a->extent != b->extent ||
	    a->size != b->size || a->end != b->end ||
	    a->nblocks != b->nblocks)
		return 0;
	for (i = 0; i < a->nblocks; i++)
		if (a->off[i] != b->off[i] || a->len[i] != b->len[i] ||
		    a->pre[i] != b->pre[i])
			return 0;
	return 1;
}

/* ------------------------------------------------------------ marker */

static void
test_marker(void)
{
	static const char *layouts[] = {
		"", "contiguous", "cyclic:4194304", "view",
		"0123456789012345678901234567890",	/* 31: the maximum */
	};
	struct gfsp_marker m, d;
	struct gfsp_error err;
	unsigned char *buf = NULL, *copy;
	size_t len = 0, i, l, bad;
	int rc, allok;

	for (i = 0; i < GFSP_ARRAY_SIZE(layouts); i++) {
		memset(&m, 0, sizeof(m));
		m.version = GFSP_FORMAT_VERSION;
		m.nprocs = 64 + (uint32_t)i;
		m.nnodes = 4;
		m.logical_size = 0x0102030405060708ull + i;
		m.seg_size = GFSP_SEG_SIZE_DEFAULT;
		m.ctime = -5 + (int64_t)i * 1700000000;
		snprintf(m.layout, sizeof(m.layout), "%s", layouts[i]);
		gfsp_error_clear(&err);
		rc = gfsp_marker_encode(&m, &buf, &len, &err);
		ok(rc == 0 && len == 56 + strlen(layouts[i]),
		    "marker '%s' encodes to %zu bytes", layouts[i], len);
		memset(&d, 0xa5, sizeof(d));
		rc = gfsp_marker_decode(buf, len, "gfsplit.meta", &d, &err);
		ok(rc == 0 && d.version == GFSP_FORMAT_WRITE && d.nprocs == m.nprocs &&
		    d.nnodes == 4 && d.logical_size == m.logical_size &&
		    d.seg_size == m.seg_size && d.ctime == m.ctime &&
		    strcmp(d.layout, m.layout) == 0,
		    "marker '%s' round trip", layouts[i]);
		free(buf);
	}

	/* the byte layout of gfsplit(5), field by field */
	memset(&m, 0, sizeof(m));
	m.nprocs = 3;
	m.nnodes = 2;
	m.logical_size = 100000;
	m.seg_size = 4096;
	m.ctime = 1700000000;
	strcpy(m.layout, "cyclic:4");
	rc = gfsp_marker_encode(&m, &buf, &len, &err);
	ok(rc == 0 && len == 64 && memcmp(buf, "GFSPLITM", 8) == 0 &&
	    rd32(buf + 8) == 3 && rd32(buf + 12) == 3 && rd32(buf + 16) == 2 &&
	    rd64(buf + 20) == 100000 && rd64(buf + 28) == 4096 &&
	    rd64(buf + 36) == 1700000000 && rd32(buf + 44) == 8 &&
	    memcmp(buf + 48, "cyclic:4", 8) == 0 &&
	    rd64(buf + 56) == XXH3_64bits(buf, 56),
	    "marker bytes match the documented layout");

	/* v4: the source's attributes (pcp-split -p) after the layout */
	{
		struct gfsp_marker a = m;
		unsigned char *b4 = NULL, *c4;
		size_t n4 = 0, k;

		a.has_attrs = 1;
		a.attrs.mode = 0640;
		a.attrs.uid = 1234;
		a.attrs.gid = 99;
		a.attrs.atime = -7;
		a.attrs.atime_ns = 999999999;
		a.attrs.mtime = 1700000001;
		a.attrs.mtime_ns = 5;
		rc = gfsp_marker_encode(&a, &b4, &n4, &err);
		ok(rc == 0 && n4 == 64 + 40 && rd32(b4 + 8) == 4 &&
		    rd32(b4 + 56) == 1 && rd32(b4 + 60) == 0640 &&
		    rd32(b4 + 64) == 1234 && rd32(b4 + 68) == 99 &&
		    rd64(b4 + 72) == (uint64_t)-7 && rd32(b4 + 80) == 999999999 &&
		    rd64(b4 + 84) == 1700000001 && rd32(b4 + 92) == 5 &&
		    rd64(b4 + 96) == XXH3_64bits(b4, 96),
		    "a marker with attributes is version 4, laid out as "
		    "documented");
		memset(&d, 0xa5, sizeof(d));
		rc = gfsp_marker_decode(b4, n4, "gfsplit.meta", &d, &err);
		ok(rc == 0 && d.version == 4 && d.has_attrs &&
		    d.attrs.mode == 0640 && d.attrs.uid == 1234 &&
		    d.attrs.gid == 99 && d.attrs.atime == -7 &&
		    d.attrs.atime_ns == 999999999 &&
		    d.attrs.mtime == 1700000001 && d.attrs.mtime_ns == 5 &&
		    strcmp(d.layout, "cyclic:4") == 0,
		    "v4 marker round trip");
		rc = gfsp_marker_decode(buf, len, "gfsplit.meta", &d, &err);
		ok(rc == 0 && !d.has_attrs, "a v3 marker has no attributes");
		c4 = malloc(n4);
		/* flags 0: nothing follows; an unknown flag; a bad mode */
		memcpy(c4, b4, 60);
		wr32(c4 + 56, 0);
		resign(c4, 68);
		rc = gfsp_marker_decode(c4, 68, "gfsplit.meta", &d, &err);
		ok(rc == 0 && d.version == 4 && !d.has_attrs,
		    "v4 with flags 0: no attributes");
		memcpy(c4, b4, n4);
		wr32(c4 + 56, 3);
		resign(c4, n4);
		gfsp_error_clear(&err);
		rc = gfsp_marker_decode(c4, n4, "gfsplit.meta", &d, &err);
		ok(rc == GFSP_ECORRUPT && strstr(err.msg, "unknown flags 0x3"),
		    "v4 with an unknown flag: %s", err.msg);
		memcpy(c4, b4, n4);
		wr32(c4 + 60, 010000);
		resign(c4, n4);
		gfsp_error_clear(&err);
		rc = gfsp_marker_decode(c4, n4, "gfsplit.meta", &d, &err);
		ok(rc == GFSP_ECORRUPT && strstr(err.msg, "bad attributes"),
		    "v4 with mode 010000: %s", err.msg);
		allok = 1;
		for (k = 0; k < n4; k++) {
			gfsp_error_clear(&err);
			rc = gfsp_marker_decode(b4, k, "gfsplit.meta", &d,
						&err);
			if (rc != GFSP_ECORRUPT)
				allok = 0;
		}
		ok(allok, "every truncation of a v4 marker is rejected");
		/* a v3 marker claiming version 4: its trailer is too early */
		memcpy(c4, buf, len);
		wr32(c4 + 8, 4);
		resign(c4, len);
		rc = gfsp_marker_decode(c4, len, "gfsplit.meta", &d, &err);
		ok(rc == GFSP_ECORRUPT, "a v3 body under version 4 is rejected");
		free(c4);
		free(b4);
	}

	/* every truncation */
	allok = 1;
	for (l = 0; l < len; l++) {
		gfsp_error_clear(&err);
		rc = gfsp_marker_decode(buf, l, "gfsplit.meta", &d, &err);
		if (rc != GFSP_ECORRUPT ||
		    strncmp(err.msg, "gfsplit.meta: ", 14) != 0)
			allok = 0;
	}
	ok(allok, "every truncation of the marker is rejected (%zu)", len);

	/* every single-byte flip, two patterns each */
	copy = malloc(len);
	allok = 1;
	bad = 0;
	for (i = 0; i < len; i++) {
		unsigned char x;

		for (x = 0x01; x; x = x == 0x01 ? 0xff : 0) {
			memcpy(copy, buf, len);
			copy[i] ^= x;
			gfsp_error_clear(&err);
			rc = gfsp_marker_decode(copy, len, "gfsplit.meta", &d,
			    &err);
			if (rc != GFSP_ECORRUPT) {
				allok = 0;
				bad = i;
			}
		}
	}
	ok(allok, "every single-byte flip of the marker is rejected "
	    "(first miss at %zu)", bad);

	memcpy(copy, buf, len);
	copy[len - 1] ^= 0x40;
	gfsp_error_clear(&err);
	rc = gfsp_marker_decode(copy, len, "x/gfsplit.meta", &d, &err);
	ok(rc == GFSP_ECORRUPT && strcmp(err.msg, "x/gfsplit.meta: checksum "
	    "mismatch (file is corrupt or truncated)") == 0,
	    "checksum message: %s", err.msg);

	/* newer version, correctly signed: the version check answers */
	memcpy(copy, buf, len);
	wr32(copy + 8, 9);
	resign(copy, len);
	gfsp_error_clear(&err);
	rc = gfsp_marker_decode(copy, len, "gfsplit.meta", &d, &err);
	ok(rc == GFSP_EVERSION && strcmp(err.msg, "gfsplit.meta: format "
	    "version 9 is not supported by this gfsplit (reads version 4)")
	    == 0, "newer marker version: %s", err.msg);

	/* signed but inconsistent */
	memcpy(copy, buf, len);
	wr32(copy + 16, 4);		/* nnodes 4 > nprocs 3 */
	resign(copy, len);
	gfsp_error_clear(&err);
	rc = gfsp_marker_decode(copy, len, "gfsplit.meta", &d, &err);
	ok(rc == GFSP_ECORRUPT && strstr(err.msg, "node count") != NULL,
	    "more nodes than processes: %s", err.msg);
	memcpy(copy, buf, len);
	wr32(copy + 44, 0xfffffff0u);	/* layout length */
	resign(copy, len);
	gfsp_error_clear(&err);
	rc = gfsp_marker_decode(copy, len, "gfsplit.meta", &d, &err);
	ok(rc == GFSP_ECORRUPT, "huge layout length: %s", err.msg);
	memcpy(copy, buf, len);
	wr32(copy + 12, 0);
	resign(copy, len);
	gfsp_error_clear(&err);
	rc = gfsp_marker_decode(copy, len, "gfsplit.meta", &d, &err);
	ok(rc == GFSP_ECORRUPT && strstr(err.msg, "process count") != NULL,
	    "zero processes: %s", err.msg);

	/* a location file is not a marker */
	memcpy(copy, buf, len);
	memcpy(copy, "GFSPLITL", 8);
	gfsp_error_clear(&err);
	rc = gfsp_marker_decode(copy, len, "gfsplit.meta", &d, &err);
	ok(rc == GFSP_ECORRUPT && strcmp(err.msg, "gfsplit.meta: bad magic: "
	    "not a gfsplit split-file marker") == 0,
	    "wrong magic: %s", err.msg);
	free(copy);
	free(buf);

	/* encoder refuses what it cannot write */
	memset(&m, 0, sizeof(m));
	m.nprocs = 1;
	m.nnodes = 2;
	m.seg_size = 1;
	gfsp_error_clear(&err);
	ok(gfsp_marker_encode(&m, &buf, &len, &err) == GFSP_EINVAL,
	    "encoder refuses nnodes > nprocs");
}

/* ---------------------------------------------------- location files */

/* MPI-IO/Gfarm's Table 1: three processes, extent 48, zero-length padding blocks. */
static const uint64_t t1_len[3][6] = {
	{ 4, 4, 4, 0 }, { 0, 8, 4, 4, 4, 0 }, { 0, 8, 4, 4 } };
static const uint64_t t1_off[3][6] = {
	{ 0, 12, 36, 48 }, { 0, 4, 16, 28, 40, 48 }, { 0, 20, 32, 44 } };
static const uint64_t t1_n[3] = { 4, 6, 4 };
static const uint64_t t1_size[3] = { 12, 20, 16 };

static void
free_recs(struct gfsp_locrec *recs, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		gfsp_locrec_free(&recs[i]);
	free(recs);
}

static int
same_locfile(const struct gfsp_locfile *a, const struct gfsp_locfile *b)
{
	uint32_t i;

	if (a->nprocs != b->nprocs || a->nnodes != b->nnodes ||
	    a->node != b->node || strcmp(a->node_name, b->node_name) != 0 ||
	    a->nrecs != b->nrecs)
		return 0;
	for (i = 0; i < a->nrecs; i++) {
		const struct gfsp_locrec *x = &a->recs[i], *y = &b->recs[i];

		if (x->rank != y->rank || x->part_size != y->part_size ||
		    x->part_hash != y->part_hash ||
		    strcmp(x->host, y->host) != 0 ||
		    !same_view(&x->view, &y->view) ||
		    x->nxviews != y->nxviews || x->nruns != y->nruns)
			return 0;
		for (uint32_t k = 0; k < x->nxviews; k++)
			if (!same_view(&x->xviews[k], &y->xviews[k]))
				return 0;
		for (uint64_t k = 0; k < x->nruns; k++)
			if (x->runs[k].view != y->runs[k].view ||
			    x->runs[k].begin != y->runs[k].begin ||
			    x->runs[k].end != y->runs[k].end ||
			    x->runs[k].loff != y->runs[k].loff ||
			    x->runs[k].epoch != y->runs[k].epoch)
				return 0;
	}
	return 1;
}

/* Offset of record i's rank field in an encoded location file. */
static size_t
rec_offset(const unsigned char *buf, uint32_t i)
{
	size_t p = 24;
	uint32_t k;

	p += 4 + rd32(buf + p);		/* node name */
	p += 4;				/* nrecs */
	for (k = 0; k < i; k++) {
		uint64_t alen = rd64(buf + p + 36);
		uint32_t hl = rd32(buf + p + 60);

		uint32_t nx;

		p += 64 + hl + 16 * alen;
		/* the v2 tail: extra views, then runs (v3: of 36 bytes) */
		nx = rd32(buf + p);
		p += 4;
		while (nx-- > 0)
			p += 40 + 16 * rd64(buf + p + 32);
		p += 8 + (rd32(buf + 8) >= 3 ? 36 : 28) * rd64(buf + p);
	}
	return p;
}

/* The three records of Table 1 as the location file of node 1 of 2. */
static void
table1_locfile(struct gfsp_locfile *lf)
{
	struct gfsp_error err;
	uint32_t i;

	memset(lf, 0, sizeof(*lf));
	lf->nprocs = 5;
	lf->nnodes = 2;
	lf->node = 1;
	strcpy(lf->node_name, "node-b.example");
	lf->nrecs = 3;
	lf->recs = calloc(3, sizeof(*lf->recs));
	for (i = 0; i < 3; i++) {
		lf->recs[i].rank = i + 2;
		gfsp_error_clear(&err);
		if (gfsp_view_init(&lf->recs[i].view, 0, 48,
		    GFSP_VIEW_UNBOUNDED, t1_n[i], t1_off[i], t1_len[i], &err))
			diag("view init: %s", err.msg);
		lf->recs[i].part_size = 1000 * i;
		lf->recs[i].part_hash = 0xfedcba9876543210ull ^ i;
		snprintf(lf->recs[i].host, GFSP_NAME_MAX, "host-%u", i);
	}
}

static void
test_locfile_roundtrips(void)
{
	struct gfsp_locfile lf, d;
	struct gfsp_error err;
	unsigned char *buf = NULL;
	size_t len = 0, p;
	uint64_t *off, *lens, i, n;
	int rc;

	table1_locfile(&lf);
	ok(lf.recs[0].view.size == 12 && lf.recs[1].view.size == 20 &&
	    lf.recs[2].view.size == 16 && lf.recs[0].view.nblocks == 3,
	    "MPI-IO/Gfarm Table 1 views: filetype sizes 12, 20, 16");
	gfsp_error_clear(&err);
	rc = gfsp_locfile_encode(&lf, &buf, &len, &err);
	ok(rc == 0, "Table 1 location file encodes (%zu bytes)", len);
	rc = gfsp_locfile_decode(buf, len, "loc.1", &d, &err);
	ok(rc == 0 && same_locfile(&lf, &d), "Table 1 round trip");
	/* fields of the first record where gfsplit(5) puts them */
	p = rec_offset(buf, 0);
	ok(memcmp(buf, "GFSPLITL", 8) == 0 && rd32(buf + 8) == 3 &&
	    rd32(buf + 12) == 5 && rd32(buf + 16) == 2 && rd32(buf + 20) == 1 &&
	    rd32(buf + 24) == 14 && memcmp(buf + 28, "node-b.example", 14) == 0
	    && rd32(buf + 42) == 3 && p == 46 && rd32(buf + p) == 2 &&
	    rd64(buf + p + 4) == 0 && rd64(buf + p + 12) == 48 &&
	    rd64(buf + p + 20) == t1_size[0] &&
	    rd64(buf + p + 28) == GFSP_VIEW_UNBOUNDED &&
	    rd64(buf + p + 36) == 3 && rd64(buf + p + 44) == 0 &&
	    rd64(buf + p + 52) == 0xfedcba9876543210ull &&
	    rd32(buf + p + 60) == 6 && memcmp(buf + p + 64, "host-0", 6) == 0
	    && rd64(buf + p + 70) == 4 && rd64(buf + p + 70 + 24) == 0 &&
	    rd64(buf + p + 70 + 32) == 12 && rd64(buf + p + 70 + 40) == 36 &&
	    rd64(buf + len - 8) == XXH3_64bits(buf, len - 8),
	    "location file bytes match the documented layout");
	gfsp_locfile_free(&d);
	ok(d.recs == NULL && d.nrecs == 0, "gfsp_locfile_free clears");
	free(buf);

	/* an empty view, a bounded view, and a big arr_len */
	free_recs(lf.recs, lf.nrecs);
	memset(&lf, 0, sizeof(lf));
	lf.nprocs = 3;
	lf.nnodes = 1;
	lf.node = 0;
	lf.nrecs = 3;
	lf.recs = calloc(3, sizeof(*lf.recs));
	lf.recs[0].rank = 0;
	gfsp_view_init(&lf.recs[0].view, 77, 10, 1000, 0, NULL, NULL, &err);
	lf.recs[1].rank = 1;
	{
		uint64_t o[2] = { 3, 0 }, l[2] = { 4, 2 };

		gfsp_view_init(&lf.recs[1].view, 5, 9, 500, 2, o, l, &err);
	}
	n = 200000;
	off = malloc(n * sizeof(*off));
	lens = malloc(n * sizeof(*lens));
	for (i = 0; i < n; i++) {
		off[i] = 3 * i;
		lens[i] = 1 + (i & 1);
	}
	lf.recs[2].rank = 2;
	gfsp_error_clear(&err);
	rc = gfsp_view_init(&lf.recs[2].view, 1, 3 * n, GFSP_VIEW_UNBOUNDED, n,
	    off, lens, &err);
	lf.recs[2].part_size = UINT64_MAX;
	strcpy(lf.recs[2].host, "h\xc3\xa9te");
	free(off);
	free(lens);
	ok(rc == 0 && lf.recs[2].view.nblocks == n, "big view: %llu blocks",
	    (unsigned long long)n);
	gfsp_error_clear(&err);
	rc = gfsp_locfile_encode(&lf, &buf, &len, &err);
	ok(rc == 0 && len > 16 * n, "location file with a big view encodes "
	    "(%zu bytes)", len);
	rc = gfsp_locfile_decode(buf, len, "loc.0", &d, &err);
	ok(rc == 0 && same_locfile(&lf, &d) && d.recs[0].view.nblocks == 0 &&
	    d.recs[0].view.disp == 77 && d.recs[1].view.end == 500,
	    "empty, bounded and big views round trip");
	gfsp_locfile_free(&d);
	free(buf);
	free_recs(lf.recs, lf.nrecs);

	/* encoder refuses unsorted records */
	table1_locfile(&lf);
	lf.recs[1].rank = 2;
	gfsp_error_clear(&err);
	ok(gfsp_locfile_encode(&lf, &buf, &len, &err) == GFSP_EINVAL,
	    "encoder refuses duplicate ranks");
	free_recs(lf.recs, lf.nrecs);
}

static int
decode_code(const unsigned char *buf, size_t len, struct gfsp_error *err)
{
	struct gfsp_locfile d;
	int rc;

	gfsp_error_clear(err);
	memset(&d, 0x5a, sizeof(d));
	rc = gfsp_locfile_decode(buf, len, "loc.1", &d, err);
	if (rc == 0)
		gfsp_locfile_free(&d);
	else if (d.recs != NULL || d.nrecs != 0)
		return -1;	/* a failed decode must leave nothing */
	return rc;
}

static void
test_locfile_corrupt(void)
{
	struct gfsp_locfile lf;
	struct gfsp_error err;
	unsigned char *buf = NULL, *copy;
	size_t len = 0, l, i, p0, p1, p2, miss = 0;
	int rc, allok;

	table1_locfile(&lf);
	gfsp_locfile_encode(&lf, &buf, &len, &err);
	free_recs(lf.recs, lf.nrecs);
	copy = malloc(len);

	allok = 1;
	for (l = 0; l < len; l++) {
		rc = decode_code(buf, l, &err);
		if (rc != GFSP_ECORRUPT || strncmp(err.msg, "loc.1: ", 7) != 0) {
			allok = 0;
			miss = l;
		}
	}
	ok(allok, "every truncation of a location file is rejected (%zu "
	    "lengths, first miss %zu)", len, miss);

	allok = 1;
	for (i = 0; i < len; i++) {
		memcpy(copy, buf, len);
		copy[i] ^= 0x80;
		if (decode_code(copy, len, &err) != GFSP_ECORRUPT) {
			allok = 0;
			miss = i;
		}
		memcpy(copy, buf, len);
		copy[i] = (unsigned char)~copy[i];
		if (decode_code(copy, len, &err) != GFSP_ECORRUPT) {
			allok = 0;
			miss = i;
		}
	}
	ok(allok, "every single-byte flip of a location file is rejected "
	    "(first miss at %zu)", miss);

	/* trailing garbage after a valid trailer */
	{
		unsigned char *big = malloc(len + 3);

		memcpy(big, buf, len);
		memset(big + len, 0, 3);
		rc = decode_code(big, len + 3, &err);
		ok(rc == GFSP_ECORRUPT, "appended bytes rejected: %s", err.msg);
		free(big);
	}

	memcpy(copy, buf, len);
	memcpy(copy, "GFSPLITM", 8);
	rc = decode_code(copy, len, &err);
	ok(rc == GFSP_ECORRUPT && strcmp(err.msg, "loc.1: bad magic: not a "
	    "gfsplit location file") == 0, "wrong magic: %s", err.msg);
	memcpy(copy, buf, len);
	memcpy(copy, "\x7f" "ELF", 4);
	rc = decode_code(copy, 3, &err);
	ok(rc == GFSP_ECORRUPT && strstr(err.msg, "bad magic") != NULL,
	    "short foreign file: %s", err.msg);
	rc = decode_code(buf, 5, &err);
	ok(rc == GFSP_ECORRUPT && strstr(err.msg, "truncated") != NULL,
	    "5 bytes of a location file: %s", err.msg);

	memcpy(copy, buf, len);
	wr32(copy + 8, 9);
	resign(copy, len);
	rc = decode_code(copy, len, &err);
	ok(rc == GFSP_EVERSION && strcmp(err.msg, "loc.1: format version 9 is "
	    "not supported by this gfsplit (reads version 4)") == 0,
	    "newer version: %s", err.msg);

	p0 = rec_offset(buf, 0);
	p1 = rec_offset(buf, 1);
	p2 = rec_offset(buf, 2);

	/* counts that a valid trailer does not make true */
	{
		static const uint64_t bad_alen[] = {
			4, 1000, (uint64_t)1 << 28, (uint64_t)1 << 60,
			UINT64_MAX / 16 + 1, UINT64_MAX };

		allok = 1;
		for (i = 0; i < GFSP_ARRAY_SIZE(bad_alen); i++) {
			memcpy(copy, buf, len);
			wr64(copy + p2 + 36, bad_alen[i]);
			resign(copy, len);
			rc = decode_code(copy, len, &err);
			if (rc != GFSP_ECORRUPT) {
				diag("arr_len %llu: rc %d %s",
				    (unsigned long long)bad_alen[i], rc,
				    err.msg);
				allok = 0;
			}
		}
		ok(allok, "corrupt arr_len under a valid trailer: clean "
		    "error, no huge allocation (%s)", err.msg);
	}
	memcpy(copy, buf, len);
	wr32(copy + 42, 0xffffffffu);	/* nrecs */
	resign(copy, len);
	rc = decode_code(copy, len, &err);
	ok(rc == GFSP_ECORRUPT, "corrupt record count: %s", err.msg);
	memcpy(copy, buf, len);
	wr32(copy + 12, 2);		/* nrecs 3 > nprocs 2 */
	resign(copy, len);
	rc = decode_code(copy, len, &err);
	ok(rc == GFSP_ECORRUPT, "more records than processes: %s", err.msg);
	memcpy(copy, buf, len);
	wr32(copy + 12, 0x7fffffffu);	/* nprocs */
	resign(copy, len);
	rc = decode_code(copy, len, &err);
	ok(rc == GFSP_ECORRUPT && strstr(err.msg, "process count") != NULL,
	    "absurd process count: %s", err.msg);
	memcpy(copy, buf, len);
	wr32(copy + 24, 0xfffffff0u);	/* node name length */
	resign(copy, len);
	rc = decode_code(copy, len, &err);
	ok(rc == GFSP_ECORRUPT, "huge node name length: %s", err.msg);
	memcpy(copy, buf, len);
	wr32(copy + p0 + 60, 200);	/* host length past the record */
	resign(copy, len);
	rc = decode_code(copy, len, &err);
	ok(rc == GFSP_ECORRUPT, "wrong host length: %s", err.msg);

	memcpy(copy, buf, len);
	wr32(copy + p1, 2);		/* rank of record 1 = rank of record 0 */
	resign(copy, len);
	rc = decode_code(copy, len, &err);
	ok(rc == GFSP_ECORRUPT && strcmp(err.msg, "loc.1: rank 2 is recorded "
	    "twice") == 0, "duplicate rank: %s", err.msg);
	memcpy(copy, buf, len);
	wr32(copy + p2, 0);		/* 0 after 3 */
	resign(copy, len);
	rc = decode_code(copy, len, &err);
	ok(rc == GFSP_ECORRUPT && strstr(err.msg, "not sorted") != NULL,
	    "unsorted ranks: %s", err.msg);
	memcpy(copy, buf, len);
	wr32(copy + p2, 5);		/* nprocs is 5 */
	resign(copy, len);
	rc = decode_code(copy, len, &err);
	ok(rc == GFSP_ECORRUPT && strcmp(err.msg, "loc.1: rank 5 is out of "
	    "range (5 processes)") == 0, "rank >= nprocs: %s", err.msg);
	memcpy(copy, buf, len);
	wr32(copy + 20, 2);		/* node 2 of 2 */
	resign(copy, len);
	rc = decode_code(copy, len, &err);
	ok(rc == GFSP_ECORRUPT && strstr(err.msg, "node index 2") != NULL,
	    "node >= nnodes: %s", err.msg);
	memcpy(copy, buf, len);
	wr64(copy + p1 + 20, 21);	/* size field: 20 recomputed */
	resign(copy, len);
	rc = decode_code(copy, len, &err);
	ok(rc == GFSP_ECORRUPT && strstr(err.msg, "rank 3: filetype size 21")
	    != NULL, "size field != sum of blocks: %s", err.msg);
	memcpy(copy, buf, len);
	wr64(copy + p1 + 12, 40);	/* extent 40: block [40,+4) outside */
	resign(copy, len);
	rc = decode_code(copy, len, &err);
	ok(rc == GFSP_ECORRUPT && strstr(err.msg, "rank 3: invalid view")
	    != NULL, "block outside the extent: %s", err.msg);
	memcpy(copy, buf, len);
	/* overlapping blocks: first block of rank 2 at 10 overlaps [12,+4) */
	wr64(copy + p0 + 64 + 6 + 24, 10);
	resign(copy, len);
	rc = decode_code(copy, len, &err);
	ok(rc == GFSP_ECORRUPT, "overlapping blocks: %s", err.msg);
	memcpy(copy, buf, len);
	wr64(copy + p0 + 28, 0);	/* end 0 below disp... disp is 0 */
	wr64(copy + p0 + 4, 5);		/* disp 5 > end 0 */
	resign(copy, len);
	rc = decode_code(copy, len, &err);
	ok(rc == GFSP_ECORRUPT, "end below disp: %s", err.msg);
	memcpy(copy, buf, len);
	copy[p0 + 64 + 2] = '\0';	/* NUL inside the host name */
	resign(copy, len);
	rc = decode_code(copy, len, &err);
	ok(rc == GFSP_ECORRUPT && strstr(err.msg, "NUL") != NULL,
	    "NUL in a name: %s", err.msg);

	free(copy);
	free(buf);
}

/* ---------------------------------------------------- part checksums */

static void
test_phash(void)
{
	static const uint64_t segs[] = { 1, 7, 4096, 65536, 1 << 20 };
	size_t n = 3 * 65536 + 123, i, k, off, piece;
	unsigned char *data = malloc(n);
	uint64_t *sh, nseg, root, one, stream, mid1, mid2;
	struct gfsp_phash *h;
	int allok;

	for (i = 0; i < n; i++)
		data[i] = (unsigned char)rnd();

	h = gfsp_phash_new(4096);
	ok(gfsp_phash_final(h) == XXH3_64bits(NULL, 0) &&
	    gfsp_phash_root(NULL, 0) == XXH3_64bits(NULL, 0),
	    "empty part: XXH3-64 of nothing");
	gfsp_phash_free(h);

	for (k = 0; k < GFSP_ARRAY_SIZE(segs); k++) {
		uint64_t seg = segs[k];
		size_t len = seg == 1 ? 3000 : n;

		nseg = (len + seg - 1) / seg;
		sh = malloc(nseg * sizeof(*sh));
		for (i = 0; i < nseg; i++)
			sh[i] = gfsp_seg_hash(data + i * seg,
			    GFSP_MIN(seg, len - i * seg));
		root = gfsp_phash_root(sh, nseg);

		/* independent root: hash of the little-endian concatenation */
		{
			unsigned char *cat = malloc(8 * nseg);

			for (i = 0; i < nseg; i++)
				wr64(cat + 8 * i, sh[i]);
			ok(root == XXH3_64bits(cat, 8 * nseg),
			    "seg %llu: root = XXH3-64 of le64 segment hashes",
			    (unsigned long long)seg);
			free(cat);
		}

		h = gfsp_phash_new(seg);
		gfsp_phash_update(h, data, len);
		one = gfsp_phash_final(h);
		gfsp_phash_free(h);

		allok = 1;
		for (i = 0; i < 5; i++) {
			h = gfsp_phash_new(seg);
			mid1 = mid2 = 0;
			for (off = 0; off < len; off += piece) {
				piece = (size_t)(rnd() % (3 * seg + 5));
				if (rnd() % 4 == 0)
					piece = 0;
				piece = GFSP_MIN(piece, len - off);
				gfsp_phash_update(h, data + off, piece);
				if (mid1 == 0 && off > len / 2) {
					/* final does not disturb the stream */
					mid1 = gfsp_phash_final(h);
					mid2 = gfsp_phash_final(h);
				}
			}
			stream = gfsp_phash_final(h);
			gfsp_phash_free(h);
			if (stream != one || mid1 != mid2)
				allok = 0;
		}
		ok(allok && one == root, "seg %llu: streaming in random pieces "
		    "== one-shot == root of segment hashes",
		    (unsigned long long)seg);
		free(sh);
	}

	/* exactly one segment: no trailing empty segment hash */
	h = gfsp_phash_new(1000);
	gfsp_phash_update(h, data, 1000);
	one = gfsp_phash_final(h);
	sh = malloc(sizeof(*sh));
	sh[0] = gfsp_seg_hash(data, 1000);
	ok(one == gfsp_phash_root(sh, 1), "a part of exactly one segment");
	gfsp_phash_free(h);
	free(sh);

	/* seg_size 0 means the default */
	h = gfsp_phash_new(0);
	gfsp_phash_update(h, data, n);
	one = gfsp_phash_final(h);
	gfsp_phash_free(h);
	h = gfsp_phash_new(GFSP_SEG_SIZE_DEFAULT);
	gfsp_phash_update(h, data, n);
	ok(one == gfsp_phash_final(h), "segment size 0 is the default");
	gfsp_phash_free(h);
	ok(gfsp_hash64(data, 100) == XXH3_64bits(data, 100),
	    "gfsp_hash64 is XXH3-64");
	free(data);
}

/* Format v2: extra views and runs round trip; a v1 file (no tails) still
 * reads, as records with the implicit run; bad runs are refused. */
static void
test_runs(void)
{
	static const uint64_t o1[1] = { 0 }, l1[1] = { 8 };
	struct gfsp_locfile lf, d;
	struct gfsp_error err;
	unsigned char *buf = NULL, *v1;
	size_t len = 0, p, q, n1;
	uint32_t i;
	int rc;

	table1_locfile(&lf);
	/* record 0: two more views and three runs */
	lf.recs[0].nxviews = 2;
	lf.recs[0].xviews = calloc(2, sizeof(*lf.recs[0].xviews));
	gfsp_view_init(&lf.recs[0].xviews[0], 100, 136, 100 + 136 * 4096, 1,
	    o1, l1, &err);
	gfsp_view_init(&lf.recs[0].xviews[1], 0, 64, GFSP_VIEW_UNBOUNDED, 1,
	    o1, l1, &err);
	lf.recs[0].nruns = 3;
	lf.recs[0].runs = calloc(3, sizeof(*lf.recs[0].runs));
	lf.recs[0].runs[0] = (struct gfsp_run){ GFSP_RUN_DENSE, 0, 4096, 0,
						7 };
	lf.recs[0].runs[1] = (struct gfsp_run){ 1, 100, 100 + 136 * 4096,
						4096, 0 };
	lf.recs[0].runs[2] = (struct gfsp_run){ 2, 64, 640, 4096 + 32768,
						(uint64_t)1 << 40 };
	gfsp_error_clear(&err);
	rc = gfsp_locfile_encode(&lf, &buf, &len, &err);
	ok(rc == 0 && rd32(buf + 8) == 3,
	    "v3 location file with runs encodes (%zu bytes)", len);
	rc = gfsp_locfile_decode(buf, len, "loc.1", &d, &err);
	ok(rc == 0 && same_locfile(&lf, &d) && d.recs[0].nruns == 3 &&
	    d.recs[0].runs[1].view == 1 && d.recs[0].xviews[0].extent == 136 &&
	    d.recs[0].runs[2].epoch == (uint64_t)1 << 40 &&
	    d.recs[1].nruns == 0, "views, runs and epochs round trip: %s",
	    err.msg);
	gfsp_locfile_free(&d);

	/* v2: the same file with no epoch in any run reads as epoch 0 */
	{
		size_t r0 = rec_offset(buf, 1) - 3 * 36, k, n2 = 0;
		unsigned char *v2 = malloc(len);

		memcpy(v2, buf, r0);
		n2 = r0;
		for (k = 0; k < 3; k++) {
			memcpy(v2 + n2, buf + r0 + 36 * k, 28);
			n2 += 28;
		}
		memcpy(v2 + n2, buf + r0 + 3 * 36, len - (r0 + 3 * 36));
		n2 += len - (r0 + 3 * 36);
		v2[8] = 2;
		resign(v2, n2);
		rc = gfsp_locfile_decode(v2, n2, "loc.1", &d, &err);
		ok(rc == 0 && d.recs[0].nruns == 3 &&
		    d.recs[0].runs[2].loff == 4096 + 32768 &&
		    d.recs[0].runs[0].epoch == 0 &&
		    d.recs[0].runs[2].epoch == 0 && d.recs[2].nruns == 0,
		    "a format v2 location file (runs without epochs) still "
		    "reads, in epoch 0: %s", err.msg);
		gfsp_locfile_free(&d);
		free(v2);
	}
	ok(gfsp_locrec_view(&lf.recs[0], 2) == &lf.recs[0].xviews[1] &&
	    gfsp_locrec_view(&lf.recs[0], 3) == NULL &&
	    gfsp_locrec_view(&lf.recs[0], GFSP_RUN_DENSE) == NULL,
	    "gfsp_locrec_view indexes view 0, the extra views, nothing else");

	/* a run naming a view that does not exist */
	p = rec_offset(buf, 1) - 36;	/* the last run of record 0 */
	buf[p] = 7;
	resign(buf, len);
	gfsp_error_clear(&err);
	rc = gfsp_locfile_decode(buf, len, "loc.1", &d, &err);
	ok(rc == GFSP_ECORRUPT && strstr(err.msg, "view 7 does not exist"),
	    "run with a bad view index: %s", err.msg);
	buf[p] = 2;
	gfsp_error_clear(&err);
	/* begin after end */
	buf[p + 4 + 7] = 0x7f;
	resign(buf, len);
	rc = gfsp_locfile_decode(buf, len, "loc.1", &d, &err);
	ok(rc == GFSP_ECORRUPT && strstr(err.msg, "after its end"),
	    "run beginning after its end: %s", err.msg);
	free(buf);
	free_recs(lf.recs, lf.nrecs);

	/* v1: the same file without the 12-byte tail of each record */
	table1_locfile(&lf);
	rc = gfsp_locfile_encode(&lf, &buf, &len, &err);
	v1 = malloc(len);
	n1 = p = 0;
	q = rec_offset(buf, 0);
	memcpy(v1, buf, q);
	n1 = q;
	for (i = 0; i < lf.nrecs; i++) {
		p = rec_offset(buf, i);
		q = (i + 1 < lf.nrecs ? rec_offset(buf, i + 1) : len - 8) - 12;
		memcpy(v1 + n1, buf + p, q - p);
		n1 += q - p;
	}
	n1 += 8;
	v1[8] = 1;
	resign(v1, n1);
	rc = gfsp_locfile_decode(v1, n1, "loc.1", &d, &err);
	ok(rc == 0 && same_locfile(&lf, &d) && d.recs[2].nruns == 0,
	    "a format v1 location file still reads: %s", err.msg);
	gfsp_locfile_free(&d);
	free(v1);
	free(buf);
	free_recs(lf.recs, lf.nrecs);
}

int
main(void)
{
	test_marker();
	test_locfile_roundtrips();
	test_runs();
	test_locfile_corrupt();
	test_phash();
	diag("%d tests, %d failed", tap_ntest, tap_nfail);
	return done_testing();
}
