/*
 * fuzz_layout.c - a whole split directory (layout.c, man/gfsplit.5) as
 * stat-layout and gfsplit-merge open it: the marker and the location
 * files cross-checked against each other and the parts, then mapped, read
 * and checked.
 *
 * The input is the marker, then loc.0, loc.1, ... separated by "\n==\n",
 * each without its 8-byte XXH3 trailer, which the harness appends (the
 * decoders' own checks are fuzz_marker's and fuzz_locfile's).  Parts are
 * made with the sizes the records give, their bytes a pattern of rank and
 * offset, so what gfsp_layout_pread returns can be checked byte for byte
 * against the extents gfsp_layout_map gives: each part byte where the map
 * names a part, zeros in holes.  The map must tile the window in order
 * and never name a byte past the end of a part.
 *
 * Inputs with over 64 ranks or a part over 64 KiB are skipped: making the
 * parts would cost more than the parsing.  (A marker alone claiming 2^24
 * ranks makes gfsp_layout_open allocate its per-rank arrays, gigabytes,
 * before it reads one location file.)
 */
#include "fuzz.h"
#include "core.h"
#include "splitfile.h"
#include "layout_impl.h"

#define MAX_RANKS	64
#define MAX_PART	(64u << 10)
#define SEP		"\n==\n"
#define SEP_LEN		4
#define WINDOW		(64u << 10)

static char dir[PATH_MAX];

static unsigned char
pattern(int rank, uint64_t off)
{
	return (unsigned char)(rank * 131 + off * 7 + (off >> 8) + 1);
}

static void
put_file(const char *name, const uint8_t *body, size_t len)
{
	char path[PATH_MAX + 32];
	unsigned char *buf = malloc(len + 8);

	if (buf == NULL)
		abort();
	memcpy(buf, body, len);
	gfsp_put_le64(buf + len, gfsp_hash64(buf, len));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fuzz_write(path, buf, len + 8);
	free(buf);
}

static void
put_part(int rank, uint64_t size)
{
	char path[PATH_MAX + 32];
	unsigned char *buf = malloc(size + 1);
	uint64_t i;

	if (buf == NULL)
		abort();
	for (i = 0; i < size; i++)
		buf[i] = pattern(rank, i);
	snprintf(path, sizeof(path), "%s/part.%d", dir, rank);
	fuzz_write(path, buf, size);
	free(buf);
}

/* every file of the last input gone */
static void
reset(void)
{
	fuzz_rm_tree(dir);
	if (mkdir(dir, 0700) != 0)
		abort();
}

static void
report(void *ctx, const char *msg)
{
}

/* map and read [goff, goff + len), and compare */
static void
window(struct gfsp_layout *l, uint64_t goff, uint64_t len)
{
	struct gfsp_extent *ext = NULL;
	struct gfsp_error err;
	unsigned char *buf;
	uint64_t at, got = 0, i;
	size_t n = 0, k;

	gfsp_error_clear(&err);
	buf = malloc(len + 1);
	if (buf == NULL)
		abort();
	/* views that overlap in a file without runs: readers refuse the
	 * bytes two ranks claim (as --check does), and must refuse alike */
	if (gfsp_layout_map(l, goff, len, &ext, &n, &err) == GFSP_ECORRUPT &&
	    strstr(err.msg, "overlap") != NULL) {
		gfsp_error_clear(&err);
		if (gfsp_layout_pread(l, buf, len, goff, &got, &err) !=
		    GFSP_ECORRUPT)
			FUZZ_FAIL("map refuses [%llu, +%llu) for overlapping "
			    "views, but pread does not", (unsigned long long)
			    goff, (unsigned long long)len);
		free(buf);
		return;
	}
	if (err.code != 0)
		FUZZ_FAIL("an opened layout does not map [%llu, +%llu): %s",
		    (unsigned long long)goff, (unsigned long long)len,
		    err.msg);
	if (gfsp_layout_pread(l, buf, len, goff, &got, &err) != 0)
		FUZZ_FAIL("an opened layout does not read [%llu, +%llu): %s",
		    (unsigned long long)goff, (unsigned long long)len,
		    err.msg);
	if (got != len)
		FUZZ_FAIL("read %llu of %llu bytes inside the logical size",
		    (unsigned long long)got, (unsigned long long)len);
	at = goff;
	for (k = 0; k < n; k++) {
		const struct gfsp_extent *e = &ext[k];

		if (e->goff != at || e->len == 0 || e->len > goff + len - at)
			FUZZ_FAIL("extent %zu [%llu, +%llu) does not follow "
			    "%llu", k, (unsigned long long)e->goff,
			    (unsigned long long)e->len,
			    (unsigned long long)at);
		if (e->part < -1 || e->part >= l->nprocs)
			FUZZ_FAIL("extent %zu names part %d of %d", k,
			    (int)e->part, l->nprocs);
		if (e->part >= 0 && (e->loff > l->part_size[e->part] ||
		    e->len > l->part_size[e->part] - e->loff))
			FUZZ_FAIL("extent %zu: part %d bytes [%llu, +%llu) "
			    "past its size %llu", k, (int)e->part,
			    (unsigned long long)e->loff,
			    (unsigned long long)e->len,
			    (unsigned long long)l->part_size[e->part]);
		for (i = 0; i < e->len; i++) {
			unsigned char want = e->part < 0 ? 0 :
			    pattern(e->part, e->loff + i);

			if (buf[e->goff - goff + i] != want)
				FUZZ_FAIL("byte %llu reads %u, the map says "
				    "%u (part %d offset %llu)",
				    (unsigned long long)(e->goff + i),
				    buf[e->goff - goff + i], want,
				    (int)e->part,
				    (unsigned long long)(e->loff + i));
		}
		at += e->len;
	}
	if (at != goff + len)
		FUZZ_FAIL("the map of [%llu, +%llu) ends at %llu",
		    (unsigned long long)goff, (unsigned long long)len,
		    (unsigned long long)at);
	free(ext);
	free(buf);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_path(dir, "f.split");
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *piece[MAX_RANKS + 1], *p = data, *end = data + size, *s;
	size_t plen[MAX_RANKS + 1], npieces = 0, k;
	struct gfsp_marker m;
	struct gfsp_locfile lf;
	struct gfsp_layout *l = NULL;
	struct gfsp_coverage cov;
	struct gfsp_error err;
	unsigned char *buf;
	char name[32];
	uint64_t lsize, total = 0;
	uint32_t i;

	while (npieces <= MAX_RANKS) {
		s = memmem(p, (size_t)(end - p), SEP, SEP_LEN);
		piece[npieces] = p;
		plen[npieces++] = (size_t)((s ? s : end) - p);
		if (s == NULL)
			break;
		p = s + SEP_LEN;
	}
	reset();
	put_file(GFSP_MARKER_NAME, piece[0], plen[0]);
	buf = malloc(plen[0] + 8);
	memcpy(buf, piece[0], plen[0]);
	gfsp_put_le64(buf + plen[0], gfsp_hash64(buf, plen[0]));
	gfsp_error_clear(&err);
	k = gfsp_marker_decode(buf, plen[0] + 8, "m", &m, &err);
	free(buf);
	if (k == 0 && m.nprocs > MAX_RANKS)
		return 0;
	for (k = 1; k < npieces; k++) {
		snprintf(name, sizeof(name), "loc.%zu", k - 1);
		put_file(name, piece[k], plen[k]);
		buf = malloc(plen[k] + 8);
		memcpy(buf, piece[k], plen[k]);
		gfsp_put_le64(buf + plen[k], gfsp_hash64(buf, plen[k]));
		if (gfsp_locfile_decode(buf, plen[k] + 8, name, &lf, &err) ==
		    0) {
			for (i = 0; i < lf.nrecs; i++) {
				if (lf.recs[i].part_size > MAX_PART) {
					gfsp_locfile_free(&lf);
					free(buf);
					return 0;
				}
				if (lf.recs[i].rank < MAX_RANKS)
					put_part((int)lf.recs[i].rank,
					    lf.recs[i].part_size);
				total += lf.recs[i].part_size;
			}
			gfsp_locfile_free(&lf);
		}
		free(buf);
	}

	gfsp_error_clear(&err);
	if (gfsp_layout_open(dir, &l, &err) != 0)
		return 0;
	lsize = gfsp_layout_size(l);
	if (lsize > 0) {
		window(l, 0, lsize < WINDOW ? lsize : WINDOW);
		if (lsize > WINDOW)
			window(l, lsize - 4096, 4096);
	}
	(void)gfsp_layout_coverage(l, &cov, &err);
	if (total <= 4 * MAX_PART)
		(void)gfsp_layout_check(l, report, NULL, NULL, &err);
	gfsp_layout_close(l);
	return 0;
}
