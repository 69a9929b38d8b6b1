/*
 * test_zfile.c - the gfsz compressed format (zfile.c), without MPI: whole
 * files assembled in memory the way a writer would (header, frames, index)
 * and read back the way a reader would (detect, footer, index, chunks),
 * byte for byte; compression ratios; detection of other data; damage to
 * frames, index and length, each with its error code; and the zstd CLI
 * decompressing a file written to disk, when the CLI is installed.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef HAVE_ZSTD
#include <zstd.h>
#endif

#include "core.h"
#include "splitfile.h"
#include "zfile.h"
#include "rng.h"
#include "tap.h"

#define MiB	(1u << 20)
#define NAME	"t.gfsz"

#ifndef HAVE_ZSTD

int
main(void)
{
	struct gfsp_error err = { 0 };
	struct gfsp_zcodec *z = NULL;
	unsigned char h[GFSP_Z_HEADER_SIZE];
	uint64_t cs = 0;
	int is_z = 0, rc;

	skip("built without zstd");
	rc = gfsp_zcodec_new(0, 0, &z, &err);
	ok(rc == GFSP_ENOTSUP && strcmp(err.msg, "built without zstd") == 0,
	   "no zstd: gfsp_zcodec_new says '%s'", err.msg);
	gfsp_z_header(h, MiB);
	rc = gfsp_z_detect(h, sizeof(h), NAME, &is_z, &cs, &err);
	ok(rc == 0 && is_z && cs == MiB, "no zstd: a gfsz header is still "
	   "recognised");
	return done_testing();
}

#else /* HAVE_ZSTD */

static struct gfsp_zcodec *zc;

/* A gfsz file in memory. */
struct zf {
	unsigned char *p;
	size_t len;
	uint64_t nchunks;
};

/* Write raw[size] as a gfsz file of chunk-byte chunks, as a writer does:
 * header, a frame per chunk at the offset reached, the index last. */
static int
zf_write(struct gfsp_zcodec *z, const void *raw, size_t size, uint64_t chunk,
	 struct zf *f, struct gfsp_error *err)
{
	struct gfsp_zentry *e;
	uint64_t n = (size + chunk - 1) / chunk, k;
	size_t cap = GFSP_Z_HEADER_SIZE, zlen, ilen, rlen;
	void *ix = NULL;
	int rc = 0;

	for (k = 0; k < n; k++)
		cap += gfsp_z_bound(GFSP_MIN(chunk, size - k * chunk));
	e = calloc(n + 1, sizeof(*e));
	f->p = malloc(cap);
	f->nchunks = n;
	gfsp_z_header(f->p, chunk);
	f->len = GFSP_Z_HEADER_SIZE;
	for (k = 0; k < n && rc == 0; k++) {
		rlen = (size_t)GFSP_MIN(chunk, size - k * chunk);
		rc = gfsp_z_compress(z, (const char *)raw + k * chunk, rlen,
		    f->p + f->len, cap - f->len, &zlen, err);
		e[k] = (struct gfsp_zentry){ f->len, zlen, rlen,
		    gfsp_hash64((const char *)raw + k * chunk, rlen) };
		f->len += zlen;
	}
	if (rc == 0)
		rc = gfsp_z_index_build(e, n, f->len, size,
		    gfsp_hash64(raw, size), &ix, &ilen, err);
	if (rc == 0) {
		f->p = realloc(f->p, f->len + ilen);
		memcpy(f->p + f->len, ix, ilen);
		f->len += ilen;
	}
	free(ix);
	free(e);
	return rc;
}

/*
 * Read a gfsz file held in p[len] as a reader does: detect, footer, index
 * and, if out is non-NULL, every chunk into *out (malloc'd, *outlen).
 */
static int
zf_read(const unsigned char *p, size_t len, struct gfsp_zindex *ix,
	unsigned char **out, size_t *outlen, struct gfsp_error *err)
{
	static const unsigned char zeros[GFSP_Z_FOOTER_SIZE];
	uint64_t cs, ioff, ilen, k;
	unsigned char *raw = NULL;
	int rc, is_z;

	memset(ix, 0, sizeof(*ix));
	rc = gfsp_z_detect(p, GFSP_MIN(len, (size_t)GFSP_Z_HEADER_SIZE), NAME,
	    &is_z, &cs, err);
	if (rc == 0 && !is_z)
		rc = gfsp_error_set(err, GFSP_ENOTSPLIT, "not gfsz");
	if (rc == 0)
		rc = gfsp_z_footer_parse(len >= GFSP_Z_FOOTER_SIZE ?
		    p + len - GFSP_Z_FOOTER_SIZE : zeros, len, NAME, &ioff,
		    &ilen, err);
	if (rc == 0)
		rc = gfsp_z_index_parse(p + ioff, (size_t)ilen, ioff, cs, NAME,
		    ix, err);
	if (rc == 0 && out != NULL) {
		raw = malloc(ix->raw_size + 1);
		for (k = 0; k < ix->n && rc == 0; k++)
			rc = gfsp_z_decompress(zc, k, &ix->e[k],
			    p + ix->e[k].z_off, raw + k * cs,
			    (size_t)(ix->raw_size - k * cs), NAME, err);
		if (rc == 0 && gfsp_hash64(raw, ix->raw_size) != ix->file_hash)
			rc = gfsp_error_set(err, GFSP_ECHECKSUM, "file hash");
		*out = raw;
		*outlen = (size_t)ix->raw_size;
		if (rc != 0) {
			free(raw);
			*out = NULL;
		}
	}
	if (rc != 0)
		gfsp_zindex_free(ix);
	return rc;
}

/* Write, read back, compare; OUT f (kept for damage) and *ratio. */
static void
roundtrip(const char *what, const void *raw, size_t size, uint64_t chunk,
	  struct zf *f, double *ratio)
{
	struct gfsp_error err = { 0 };
	struct gfsp_zindex ix;
	unsigned char *back = NULL;
	size_t blen = 0;
	int rc;

	rc = zf_write(zc, raw, size, chunk, f, &err);
	if (!ok(rc == 0, "%s: write %zu bytes in %llu chunks", what, size,
	    (unsigned long long)f->nchunks)) {
		diag("%s", err.msg);
		return;
	}
	rc = zf_read(f->p, f->len, &ix, &back, &blen, &err);
	ok(rc == 0 && ix.n == f->nchunks && ix.chunk_size == chunk &&
	   blen == size && memcmp(back, raw, size) == 0,
	   "%s: read back byte for byte (%s)", what, rc ? err.msg : "ok");
	*ratio = size ? (double)f->len / (double)size : 0;
	free(back);
	gfsp_zindex_free(&ix);
}

/* The zstd CLI decompresses f to raw[size], or says why it was skipped. */
static void
zstd_cli(const char *what, const struct zf *f, const void *raw, size_t size)
{
	char dir[] = "/tmp/test_zfile.XXXXXX", zpath[64], cmd[256];
	unsigned char *got;
	FILE *fp;
	size_t n;
	int rc;

	if (system("command -v zstd >/dev/null 2>&1") != 0) {
		skip("%s: zstd CLI not installed (Debian package zstd)", what);
		return;
	}
	if (mkdtemp(dir) == NULL) {
		ok(0, "%s: mkdtemp", what);
		return;
	}
	snprintf(zpath, sizeof(zpath), "%s/f.gfsz", dir);
	fp = fopen(zpath, "wb");
	n = fp ? fwrite(f->p, 1, f->len, fp) : 0;
	if (fp == NULL || fclose(fp) != 0 || n != f->len) {
		ok(0, "%s: write %s", what, zpath);
		return;
	}
	snprintf(cmd, sizeof(cmd), "zstd -d -q -c %s", zpath);
	fp = popen(cmd, "r");
	got = malloc(size + 2);
	n = fp ? fread(got, 1, size + 2, fp) : 0;
	rc = fp ? pclose(fp) : -1;
	ok(rc == 0 && n == size && memcmp(got, raw, size) == 0,
	   "%s: zstd -d gives the same %zu bytes (exit %d, %zu bytes)", what,
	   size, rc, n);
	free(got);
	unlink(zpath);
	rmdir(dir);
}

/* Every flip of one byte of f at the positions pos[np] must fail with one
 * of two codes (b == a for one); returns the failures seen. */
static int
damage(const struct zf *f, const size_t *pos, size_t np, int decode,
       int a, int b, const char *what)
{
	struct gfsp_error err;
	struct gfsp_zindex ix;
	unsigned char *copy = malloc(f->len), *out = NULL;
	size_t i, olen;
	int rc;

	group_start();
	for (i = 0; i < np; i++) {
		memcpy(copy, f->p, f->len);
		copy[pos[i]] ^= 0x5a;
		memset(&err, 0, sizeof(err));
		rc = zf_read(copy, f->len, &ix, decode ? &out : NULL, &olen,
		    &err);
		check(rc == a || rc == b, "%s: flip at %zu gives %d (%s)", what,
		    pos[i], rc, rc ? err.msg : "success");
		if (i == 0)
			diag("%s: %s", what, rc ? err.msg : "success");
		free(out);
		out = NULL;
		gfsp_zindex_free(&ix);
	}
	free(copy);
	return ok(group_failures() == 0, "%s: %zu flips all fail", what, np);
}

static void
test_detect(void)
{
	struct gfsp_error err = { 0 };
	unsigned char h[GFSP_Z_HEADER_SIZE], buf[256], z[256];
	uint64_t cs = 0;
	size_t zn, i;
	int is_z = -1, rc;

	gfsp_z_header(h, 3 * MiB);
	rc = gfsp_z_detect(h, sizeof(h), NAME, &is_z, &cs, &err);
	ok(rc == 0 && is_z == 1 && cs == 3 * MiB, "detect: our header, chunk "
	   "size %llu", (unsigned long long)cs);

	memset(buf, 'a', sizeof(buf));
	zn = ZSTD_compress(z, sizeof(z), buf, sizeof(buf), 3);
	rc = gfsp_z_detect(z, zn, NAME, &is_z, &cs, &err);
	ok(rc == 0 && is_z == 0, "detect: a plain zstd frame is not ours");

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)rnd64();
	rc = gfsp_z_detect(buf, sizeof(buf), NAME, &is_z, &cs, &err);
	ok(rc == 0 && is_z == 0, "detect: random bytes are not ours");

	rc = gfsp_z_detect(h, 8, NAME, &is_z, &cs, &err);
	ok(rc == 0 && is_z == 0, "detect: 8 bytes are not ours");
	rc = gfsp_z_detect(h, 0, NAME, &is_z, &cs, &err);
	ok(rc == 0 && is_z == 0, "detect: 0 bytes are not ours");

	/* a user's own skippable frame with our magic, other payload */
	memcpy(buf, h, sizeof(h));
	memcpy(buf + 8, "MINE", 4);
	rc = gfsp_z_detect(buf, sizeof(h), NAME, &is_z, &cs, &err);
	ok(rc == 0 && is_z == 0, "detect: same skippable magic, another "
	   "payload is not ours");

	memcpy(buf, h, sizeof(h));
	buf[12] = 2;
	rc = gfsp_z_detect(buf, sizeof(h), NAME, &is_z, &cs, &err);
	ok(rc == GFSP_EVERSION && is_z == 0 && strstr(err.msg, NAME ": ") ==
	   err.msg, "detect: version 2 -> GFSP_EVERSION (%s)", err.msg);

	memset(&err, 0, sizeof(err));
	rc = gfsp_z_detect(h, 20, NAME, &is_z, &cs, &err);
	ok(rc == GFSP_ECORRUPT && is_z == 0, "detect: our header cut to 20 "
	   "bytes -> GFSP_ECORRUPT (%s)", err.msg);

	memset(&err, 0, sizeof(err));
	gfsp_z_header(buf, 0);
	rc = gfsp_z_detect(buf, sizeof(h), NAME, &is_z, &cs, &err);
	ok(rc == GFSP_ECORRUPT && is_z == 0, "detect: chunk size 0 -> "
	   "GFSP_ECORRUPT (%s)", err.msg);
}

/* One chunk decoded against entries that do not describe it. */
static void
test_bad_entries(void)
{
	struct gfsp_error err;
	ZSTD_CCtx *nosize;
	struct gfsp_zentry e, x;
	unsigned char raw[5000], frame[6000], two[12000], out[5000];
	size_t zlen, zlen2, i;
	int rc;

	for (i = 0; i < sizeof(raw); i++)
		raw[i] = (unsigned char)(i / 7);
	memset(&err, 0, sizeof(err));
	rc = gfsp_z_compress(zc, raw, sizeof(raw), frame, sizeof(frame), &zlen,
	    &err);
	e = (struct gfsp_zentry){ 0, zlen, sizeof(raw),
	    gfsp_hash64(raw, sizeof(raw)) };
	rc = rc ? rc : gfsp_z_decompress(zc, 7, &e, frame, out, sizeof(out),
	    NAME, &err);
	ok(rc == 0 && memcmp(out, raw, sizeof(raw)) == 0, "decompress: one "
	   "chunk of %zu bytes in %zu", sizeof(raw), zlen);

#define EXPECT(code, what, ...) do {					\
		memset(&err, 0, sizeof(err));				\
		rc = gfsp_z_decompress(zc, 7, __VA_ARGS__, NAME, &err);	\
		ok(rc == (code) && strstr(err.msg, NAME ": compressed "	\
		   "chunk 7: ") == err.msg, "decompress: %s -> %d (%s)",\
		   what, rc, err.msg);					\
	} while (0)
	x = e, x.hash ^= 1;
	EXPECT(GFSP_ECHECKSUM, "wrong hash", &x, frame, out, sizeof(out));
	x = e, x.raw_len--;
	EXPECT(GFSP_ECORRUPT, "raw_len one short", &x, frame, out, sizeof(out));
	x = e, x.z_len--;
	EXPECT(GFSP_ECORRUPT, "z_len one short", &x, frame, out, sizeof(out));
	/* two whole frames under one entry: zstd alone would decode both */
	memcpy(two, frame, zlen);
	gfsp_z_compress(zc, raw, 10, two + zlen, sizeof(two) - zlen, &zlen2,
	    &err);
	x = e, x.z_len = zlen + zlen2;
	EXPECT(GFSP_ECORRUPT, "two frames", &x, two, out, sizeof(out));

	memset(&err, 0, sizeof(err));
	rc = gfsp_z_decompress(zc, 7, &e, frame, out, sizeof(out) - 1, NAME,
	    &err);
	ok(rc == GFSP_EINVAL, "decompress: buffer one byte short -> "
	   "GFSP_EINVAL (%s)", err.msg);

	/* a frame without its content size (another zstd writer) */
	nosize = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(nosize, ZSTD_c_contentSizeFlag, 0);
	zlen = ZSTD_compress2(nosize, frame, sizeof(frame), raw, sizeof(raw));
	ZSTD_freeCCtx(nosize);
	x = e, x.z_len = zlen;
	EXPECT(GFSP_ECORRUPT, "no content size", &x, frame, out, sizeof(out));
#undef EXPECT
}

/* Indexes with a valid checksum that break an invariant each. */
static void
test_bad_index(void)
{
	struct { const char *what; uint64_t *field; int64_t d; } t[4];
	struct gfsp_zentry e[3], x[3];
	struct gfsp_error err;
	struct gfsp_zindex ix;
	uint64_t cs = 100, off, size;
	size_t i, len;
	void *p;
	int rc;

	for (i = 0; i < 3; i++)
		e[i] = (struct gfsp_zentry){ GFSP_Z_HEADER_SIZE + 40 * i, 40,
		    i < 2 ? cs : 30, i };
	off = GFSP_Z_HEADER_SIZE + 120;
	size = 230;
	memcpy(x, e, sizeof(e));
	rc = gfsp_z_index_build(x, 3, off, size, 0, &p, &len, &err);
	rc = rc ? rc : gfsp_z_index_parse(p, len, off, cs, NAME, &ix, &err);
	ok(rc == 0 && ix.n == 3 && ix.raw_size == size &&
	   memcmp(ix.e, e, sizeof(e)) == 0, "index: a good one parses");
	free(p);
	gfsp_zindex_free(&ix);

	t[0].what = "gap between chunks";
	t[0].field = &x[1].z_off, t[0].d = 1;
	t[1].what = "short middle chunk";
	t[1].field = &x[1].raw_len, t[1].d = -1;
	t[2].what = "z_len 0";
	t[2].field = &x[2].z_len, t[2].d = -40;
	t[3].what = "last chunk over chunk size";
	t[3].field = &x[2].raw_len, t[3].d = 71;
	for (i = 0; i < 4; i++) {
		memcpy(x, e, sizeof(e));
		*t[i].field += (uint64_t)t[i].d;
		memset(&err, 0, sizeof(err));
		rc = gfsp_z_index_build(x, 3, off, size, 0, &p, &len, &err);
		rc = rc ? rc : gfsp_z_index_parse(p, len, off, cs, NAME, &ix,
		    &err);
		ok(rc == GFSP_ECORRUPT && ix.e == NULL, "index: %s -> "
		   "GFSP_ECORRUPT (%s)", t[i].what, err.msg);
		free(p);
	}
	memset(&err, 0, sizeof(err));
	rc = gfsp_z_index_build(e, 3, off, size + 1, 0, &p, &len, &err);
	rc = rc ? rc : gfsp_z_index_parse(p, len, off, cs, NAME, &ix, &err);
	ok(rc == GFSP_ECORRUPT, "index: raw size off by one -> GFSP_ECORRUPT "
	   "(%s)", err.msg);
	free(p);
	memset(&err, 0, sizeof(err));
	rc = gfsp_z_index_build(e, 3, off, size, 0, &p, &len, &err);
	rc = rc ? rc : gfsp_z_index_parse(p, len, off + 1, cs, NAME, &ix,
	    &err);
	ok(rc == GFSP_ECORRUPT, "index: read elsewhere than it says -> "
	   "GFSP_ECORRUPT (%s)", err.msg);
	free(p);
}

int
main(void)
{
	struct gfsp_error err = { 0 };
	struct gfsp_zcodec *mt = NULL;
	struct zf ff = { 0 }, fe = { 0 }, fr = { 0 }, f3 = { 0 }, fm = { 0 };
	struct gfsp_zindex ix;
	size_t nf = 3 * MiB / 4 + 1000, i, k, pos[200], np, rsize, zmax;
	float *fl = malloc(nf * sizeof(float));
	unsigned char *rnd_buf, *cut;
	double rf = 0, rr = 0, r3 = 0, rm = 0, re = 0;
	uint64_t ioff, ilen;
	int rc;

	if (gfsp_zcodec_new(0, 0, &zc, &err) != 0) {
		ok(0, "gfsp_zcodec_new: %s", err.msg);
		return done_testing();
	}

	/* smooth floats: 3 MiB + 4000 bytes -> 3 full chunks + 4000 */
	for (i = 0; i < nf; i++)
		fl[i] = sinf((float)i * 0.001f);
	roundtrip("floats", fl, nf * sizeof(float), MiB, &ff, &rf);
	ok(ff.nchunks == 4 && rf < 1.0, "floats: 4 chunks, ratio %.3f < 1",
	   rf);
	roundtrip("floats 3 MiB", fl, 3 * MiB, MiB, &f3, &r3);
	ok(f3.nchunks == 3, "floats 3 MiB: exactly 3 chunks, ratio %.3f", r3);

	/* random data: no chunk grows past a few bytes of framing */
	rsize = 2 * MiB + 12345;
	rnd_buf = malloc(rsize);
	for (i = 0; i < rsize; i++)
		rnd_buf[i] = (unsigned char)(rnd64() >> 29);
	roundtrip("random", rnd_buf, rsize, MiB, &fr, &rr);
	rc = zf_read(fr.p, fr.len, &ix, NULL, NULL, &err);
	zmax = 0;
	group_start();
	for (k = 0; rc == 0 && k < ix.n; k++) {
		zmax = GFSP_MAX(zmax,
		    (size_t)(ix.e[k].z_len - ix.e[k].raw_len));
		check(ix.e[k].z_len <= ix.e[k].raw_len + ix.e[k].raw_len / 4096
		    + 32, "random chunk %zu: %llu bytes for %llu", k,
		    (unsigned long long)ix.e[k].z_len,
		    (unsigned long long)ix.e[k].raw_len);
	}
	ok(rc == 0 && group_failures() == 0, "random: each frame at most "
	   "raw_len + raw_len/4096 + 32 (largest excess %zu bytes), file "
	   "ratio %.5f", zmax, rr);
	gfsp_zindex_free(&ix);

	/* zstd's own threads, another level: still one frame per chunk */
	rc = gfsp_zcodec_new(1, 2, &mt, &err);
	if (ok(rc == 0, "codec with level 1 and 2 workers (%s)",
	    rc ? err.msg : "ok")) {
		struct gfsp_zcodec *save = zc;

		zc = mt;
		roundtrip("floats, 2 workers", fl, nf * sizeof(float), MiB,
		    &fm, &rm);
		zc = save;
	}
	gfsp_zcodec_free(mt);

	roundtrip("empty file", "", 0, MiB, &fe, &re);
	ok(fe.nchunks == 0 && fe.len == GFSP_Z_HEADER_SIZE + 8 +
	   GFSP_Z_FOOTER_SIZE, "empty file: header and index only, %zu bytes",
	   fe.len);

	diag("ratios (file bytes / raw bytes): floats %.4f, floats 3 MiB "
	     "%.4f, floats level 1 + 2 workers %.4f, random %.5f", rf, r3, rm,
	     rr);

	test_detect();
	test_bad_entries();
	test_bad_index();

	/* flips inside the chunk frames, compressed (floats) or stored raw
	 * (random) by zstd: corrupt or a checksum mismatch, never success */
	rnd_seed(7);
	np = 0;
	for (k = 0; k < ff.nchunks; k++) {
		/* a byte of the first frame's header */
		pos[np++] = GFSP_Z_HEADER_SIZE + 4 + k;
		for (i = 0; i < 24; i++)
			pos[np++] = GFSP_Z_HEADER_SIZE + (size_t)rnd(ff.len -
			    GFSP_Z_HEADER_SIZE - 8 - 4 * 32 - 48);
	}
	damage(&ff, pos, np, 1, GFSP_ECHECKSUM, GFSP_ECORRUPT,
	       "floats frames");
	for (np = 0; np < 40; np++)
		pos[np] = GFSP_Z_HEADER_SIZE + 20 + (size_t)rnd(2 * MiB);
	damage(&fr, pos, np, 1, GFSP_ECHECKSUM, GFSP_ECHECKSUM,
	       "random frames (raw blocks)");

	/* every byte of the index frame, and of the header */
	rc = gfsp_z_footer_parse(ff.p + ff.len - GFSP_Z_FOOTER_SIZE, ff.len,
	    NAME, &ioff, &ilen, &err);
	for (np = 0; np < ilen; np++)
		pos[np] = (size_t)(ioff + np);
	damage(&ff, pos, np, 0, GFSP_ECORRUPT, GFSP_ECORRUPT,
	       "index frame");
	{
		/* an entry's byte: only footer_check can tell */
		unsigned char *c = malloc(ff.len);

		memcpy(c, ff.p, ff.len);
		c[ioff + 8 + 32 + 20] ^= 1;	/* entry 1, raw_len */
		memset(&err, 0, sizeof(err));
		rc = zf_read(c, ff.len, &ix, NULL, NULL, &err);
		ok(rc == GFSP_ECORRUPT && strcmp(err.msg, NAME ": gfsz index: "
		   "checksum mismatch") == 0, "index entry flip -> "
		   "GFSP_ECORRUPT by footer_check (%s)", err.msg);
		free(c);
	}
	for (np = 0; np < GFSP_Z_HEADER_SIZE; np++)
		pos[np] = np;
	{
		/* a header flip is not ours, a version, a length or a
		 * chunk size error: never a file read as if whole */
		struct gfsp_zindex x;
		unsigned char *c = malloc(ff.len);
		int is_z;
		uint64_t cs;

		group_start();
		for (i = 0; i < np; i++) {
			memcpy(c, ff.p, ff.len);
			c[i] ^= 0x5a;
			memset(&err, 0, sizeof(err));
			rc = zf_read(c, ff.len, &x, NULL, NULL, &err);
			gfsp_z_detect(c, GFSP_Z_HEADER_SIZE, NAME, &is_z, &cs,
			    &err);
			check(rc != 0 || (i >= 24 && is_z), "header flip at "
			    "%zu reads as a gfsz file", i);
			gfsp_zindex_free(&x);
		}
		ok(group_failures() == 0, "header: no flip reads as a good "
		   "file (reserved bytes 24..31 are not read)");
		free(c);
	}

	/* truncation anywhere: the footer is not where it should be */
	cut = malloc(ff.len);
	group_start();
	for (i = 1; i < ff.len; i += 1 + i / 3) {
		memcpy(cut, ff.p, ff.len - i);
		memset(&err, 0, sizeof(err));
		rc = zf_read(cut, ff.len - i, &ix, NULL, NULL, &err);
		/* below 12 bytes nothing says gfsz any more */
		check(rc == GFSP_ECORRUPT || (ff.len - i < 12 &&
		    rc == GFSP_ENOTSPLIT), "cut by %zu: %d (%s)", i, rc,
		    err.msg);
		gfsp_zindex_free(&ix);
	}
	memset(&err, 0, sizeof(err));
	rc = zf_read(ff.p, ff.len - 1, &ix, NULL, NULL, &err);
	diag("cut by 1: %s", err.msg);
	ok(group_failures() == 0, "truncated file: GFSP_ECORRUPT at every "
	   "length tried");
	free(cut);

	zstd_cli("floats", &ff, fl, nf * sizeof(float));
	zstd_cli("empty file", &fe, "", 0);

	free(ff.p);
	free(f3.p);
	free(fr.p);
	free(fm.p);
	free(fe.p);
	free(rnd_buf);
	free(fl);
	gfsp_zcodec_free(zc);
	return done_testing();
}

#endif /* HAVE_ZSTD */
