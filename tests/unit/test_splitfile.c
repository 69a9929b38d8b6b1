/*
 * test_splitfile.c - the split-file writer and its commit rule
 * (splitfile.c) and the reader (layout.c), on a POSIX directory.
 *
 * Runs as one MPI process without mpiexec; under mpiexec -n K every rank
 * writes its own part and rank 0 does the on-disk checks.  The reader is
 * checked against a brute-force oracle that walks each view's blocks byte
 * by byte: pread byte-for-byte (holes as zeros), map, coverage counts.
 * Then metadata and parts are damaged on disk, and each damage must give
 * its exact error code and a message naming the file.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <xxhash.h>

#include "core.h"
#include "layout_impl.h"
#include "splitfile.h"
#include "rng.h"
#include "tap.h"

static int rank, nprocs;
static char topdir[4096];

/* --------------------------------------------------------------- TAP */

/*
 * ok() is for rank 0 only.  ok_all() is collective: it passes only if it
 * passed on every rank; the other ranks count it too, silently.
 */
static int __attribute__((format(printf, 2, 3)))
ok_all(int cond, const char *fmt, ...)
{
	va_list ap;
	int all = 0;

	MPI_Allreduce(&cond, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	va_start(ap, fmt);
	vok(all, fmt, ap);
	va_end(ap);
	return all;
}

/* ----------------------------------------------------------- helpers */

static uint64_t
mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0x7fb5d329728ea185ull;
	x ^= x >> 27;
	x *= 0x81dadef4bc2dd44dull;
	x ^= x >> 33;
	return x;
}

/* Byte i of the data rank r writes in case `tag`: never zero, so a hole
 * read where data belongs cannot pass. */
static unsigned char
data_byte(int tag, int r, uint64_t i)
{
	unsigned char c = (unsigned char)mix((uint64_t)tag << 48 ^
	    (uint64_t)r << 40 ^ i);

	return c ? c : 1;
}

static char *
path2(const char *a, const char *b)
{
	char *s;

	if (asprintf(&s, "%s/%s", a, b) < 0)
		abort();
	return s;
}

static int
rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static void
rm_rf(const char *p)
{
	nftw(p, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static int
exists(const char *p)
{
	struct stat sb;

	return lstat(p, &sb) == 0;
}

/* Names in topdir that a writer may leave behind on failure. */
static int
leftovers(void)
{
	DIR *d = opendir(topdir);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (strstr(e->d_name, ".gfsplit-tmp.") != NULL ||
		    strstr(e->d_name, ".gfsplit-old.") != NULL) {
			diag("leftover: %s", e->d_name);
			n++;
		}
	closedir(d);
	return n;
}

static int
write_file(const char *p, const void *buf, size_t len)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, buf, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

static unsigned char *
read_file(const char *p, size_t *len)
{
	struct stat sb;
	unsigned char *buf;
	int fd = open(p, O_RDONLY);

	if (fd < 0 || fstat(fd, &sb) < 0)
		return NULL;
	buf = malloc(sb.st_size + 1);
	*len = read(fd, buf, sb.st_size);
	close(fd);
	return buf;
}

static void
flip_byte(const char *p, off_t at)
{
	unsigned char c;
	int fd = open(p, O_RDWR);

	if (pread(fd, &c, 1, at) == 1) {
		c ^= 0x10;
		if (pwrite(fd, &c, 1, at) != 1)
			diag("cannot flip a byte of %s", p);
	}
	close(fd);
}

static int
contains(const char *s, const char *sub)
{
	if (strstr(s, sub) != NULL)
		return 1;
	diag("'%s' does not contain '%s'", s, sub);
	return 0;
}

/* ------------------------------------------------------------ oracle */

/*
 * The logical file as it should read, byte by byte, from the block lists
 * alone: expect[g] is the byte of the part holding g (local offset =
 * bytes of that view below g, counted by walking), 0 in holes; cover[g]
 * is how many parts hold g.
 */
struct oracle {
	uint64_t size;
	unsigned char *expect;
	unsigned char *cover;
};

typedef unsigned char (*byte_fn)(int tag, int r, uint64_t i);

static void
oracle_build(struct oracle *o, int n, const struct gfsp_view *views,
	     const uint64_t *psize, uint64_t size, int tag)
{
	uint64_t t, i, g, l;
	int r;

	o->size = size;
	o->expect = calloc(size + 1, 1);
	o->cover = calloc(size + 1, 1);
	for (r = 0; r < n; r++) {
		const struct gfsp_view *v = &views[r];

		l = 0;
		for (t = 0; v->nblocks > 0; t++) {
			uint64_t base = v->disp + t * v->extent;

			if (base >= size || base >= v->end || l >= psize[r])
				break;
			for (i = 0; i < v->nblocks; i++)
				for (g = base + v->off[i];
				    g < base + v->off[i] + v->len[i]; g++) {
					if (g >= v->end || g >= size ||
					    l >= psize[r])
						break;
					o->expect[g] = data_byte(tag, r, l);
					o->cover[g]++;
					l++;
				}
		}
	}
}

static void
oracle_free(struct oracle *o)
{
	free(o->expect);
	free(o->cover);
}

/* pread of the whole file, of random ranges, of ranges past the end */
static int
check_reads(struct gfsp_layout *l, const struct oracle *o, const char *what)
{
	struct gfsp_error err;
	unsigned char *buf = malloc(o->size + 64);
	uint64_t got, a, n;
	int i, good = 1, rc;

	gfsp_error_clear(&err);
	rc = gfsp_layout_pread(l, buf, o->size, 0, &got, &err);
	if (rc || got != o->size || memcmp(buf, o->expect, o->size) != 0) {
		diag("%s: whole read rc %d got %llu: %s", what, rc,
		    (unsigned long long)got, err.msg);
		good = 0;
	}
	for (i = 0; i < 300 && good; i++) {
		a = rnd(o->size + 1);
		n = rnd(i % 3 == 0 ? o->size + 1 : 40);
		memset(buf, 0xee, o->size + 64);
		rc = gfsp_layout_pread(l, buf, n, a, &got, &err);
		if (rc || got != GFSP_MIN(n, o->size - a) ||
		    memcmp(buf, o->expect + a, got) != 0 ||
		    buf[got] != 0xee) {
			diag("%s: pread(%llu, %llu) rc %d got %llu",
			    what, (unsigned long long)a,
			    (unsigned long long)n, rc,
			    (unsigned long long)got);
			good = 0;
		}
	}
	rc = gfsp_layout_pread(l, buf, 10, o->size + 5, &got, &err);
	if (rc || got != 0)
		good = 0;
	free(buf);
	return good;
}

/* map: a partition of [a, b) in order; data extents inside the parts */
static int
check_map(struct gfsp_layout *l, const struct oracle *o)
{
	struct gfsp_extent *ext;
	struct gfsp_error err;
	size_t n, i;
	uint64_t a, len, c;
	int k, good = 1;

	for (k = 0; k < 200 && good; k++) {
		a = rnd(o->size + 1);
		len = rnd(o->size + 1);
		gfsp_error_clear(&err);
		if (gfsp_layout_map(l, a, len, &ext, &n, &err) != 0)
			return 0;
		c = a;
		for (i = 0; i < n; i++) {
			if (ext[i].goff != c || ext[i].len == 0)
				good = 0;
			if (ext[i].part >= 0 && ext[i].loff + ext[i].len >
			    l->part_size[ext[i].part])
				good = 0;
			if (ext[i].part < 0 && o->cover[ext[i].goff] != 0)
				good = 0;
			/* neighbours in one part would be one extent */
			if (i > 0 && ext[i].part >= 0 &&
			    ext[i].part == ext[i - 1].part &&
			    ext[i - 1].loff + ext[i - 1].len == ext[i].loff)
				good = 0;
			if (i > 0 && ext[i].part < 0 && ext[i - 1].part < 0)
				good = 0;
			c += ext[i].len;
		}
		if (c != GFSP_MIN(a + len, o->size) && !(a >= o->size && n == 0))
			good = 0;
		free(ext);
	}
	return good;
}

static int
check_coverage(struct gfsp_layout *l, const struct oracle *o)
{
	struct gfsp_coverage c;
	struct gfsp_error err;
	uint64_t data = 0, hole = 0, holes = 0, over = 0, first = o->size, g;

	for (g = 0; g < o->size; g++) {
		if (o->cover[g]) {
			data++;
		} else {
			hole++;
			if (g == 0 || o->cover[g - 1])
				holes++;
			if (first == o->size)
				first = g;
		}
		if (o->cover[g] > 1)
			over++;
	}
	gfsp_error_clear(&err);
	if (gfsp_layout_coverage(l, &c, &err) != 0)
		return 0;
	if (c.data_bytes != data || c.hole_bytes != hole || c.holes != holes ||
	    c.overlap_bytes != over || c.first_hole != first) {
		diag("coverage data %llu/%llu hole %llu/%llu holes %llu/%llu"
		    " overlap %llu/%llu first %llu/%llu",
		    (unsigned long long)c.data_bytes, (unsigned long long)data,
		    (unsigned long long)c.hole_bytes, (unsigned long long)hole,
		    (unsigned long long)c.holes, (unsigned long long)holes,
		    (unsigned long long)c.overlap_bytes,
		    (unsigned long long)over,
		    (unsigned long long)c.first_hole,
		    (unsigned long long)first);
		return 0;
	}
	return 1;
}

struct reports {
	int n;
	char first[GFSP_ERRMSG_MAX];
	char all[8192];
};

static void
collect_report(void *ctx, const char *msg)
{
	struct reports *r = ctx;

	if (r->n++ == 0)
		snprintf(r->first, sizeof(r->first), "%s", msg);
	if (strlen(r->all) + strlen(msg) + 2 < sizeof(r->all)) {
		strcat(r->all, msg);
		strcat(r->all, "\n");
	}
}

static uint64_t progress_last;

static void
note_progress(void *ctx, uint64_t bytes)
{
	(void)ctx;
	progress_last = bytes;
}

/* ------------------------------------------------ writing via writer */

/*
 * Case A, any number of ranks: rank r owns, in tiles of 13*K bytes from
 * disp 3 + 13r, blocks [0,5) and [7,11), up to 9 tiles and 9 bytes; the
 * last rank writes 10 bytes less than its view (a short part: holes).
 */
#define A_TAG 1

static void
case_a_view(int r, struct gfsp_view *v)
{
	uint64_t off[2] = { 0, 7 }, len[2] = { 5, 4 };
	uint64_t disp = 3 + 13 * (uint64_t)r, ext = 13 * (uint64_t)nprocs;
	struct gfsp_error err;

	gfsp_error_clear(&err);
	if (gfsp_view_init(v, disp, ext, disp + 9 * ext + 9, 2, off, len, &err))
		diag("case A view: %s", err.msg);
}

static uint64_t
case_a_psize(int r)
{
	return r == nprocs - 1 ? 88 - 10 : 88;
}

static uint64_t
case_a_size(void)
{
	return 3 + 13 * (uint64_t)(nprocs - 1) + 10 * 13 * (uint64_t)nprocs +
	    17;
}

/* Write n bytes of (tag, rank) data in random pieces. */
static int
append_data(struct gfsp_split_writer *w, int tag, uint64_t n,
	    struct gfsp_error *err)
{
	unsigned char buf[300];
	uint64_t done = 0, k, i;
	int rc;

	while (done < n) {
		k = rnd(sizeof(buf));	/* GFSP_MIN evaluates twice */
		k = GFSP_MIN(k, n - done);
		for (i = 0; i < k; i++)
			buf[i] = data_byte(tag, rank, done + i);
		rc = gfsp_split_append(w, buf, (size_t)k, err);
		if (rc)
			return rc;
		done += k;
	}
	return 0;
}

static int
write_case_a(const char *dst, int force, int fail_rank,
	     struct gfsp_error *err)
{
	struct gfsp_split_writer *w = NULL;
	struct gfsp_split_opts opts;
	const struct gfsp_view *res = NULL;
	struct gfsp_view v;
	int rc;

	memset(&opts, 0, sizeof(opts));
	opts.force = force;
	opts.layout = "view";
	opts.seg_size = 16;
	case_a_view(rank, &v);
	gfsp_error_clear(err);
	rc = gfsp_split_create(MPI_COMM_WORLD, dst, &v, &opts, &w, &res, err);
	gfsp_view_free(&v);
	if (rc)
		return rc;
	rc = append_data(w, A_TAG, case_a_psize(rank), err);
	if (rank == fail_rank && rc == 0)
		rc = gfsp_error_set(err, GFSP_EIO, "injected failure on rank %d",
		    rank);
	return gfsp_split_finish(w, rc, case_a_size(), err);
}

static void
case_a_oracle(struct oracle *o)
{
	struct gfsp_view *views = calloc(nprocs, sizeof(*views));
	uint64_t *ps = calloc(nprocs, sizeof(*ps));
	int r;

	for (r = 0; r < nprocs; r++) {
		case_a_view(r, &views[r]);
		ps[r] = case_a_psize(r);
	}
	oracle_build(o, nprocs, views, ps, case_a_size(), A_TAG);
	for (r = 0; r < nprocs; r++)
		gfsp_view_free(&views[r]);
	free(views);
	free(ps);
}

static void
test_writer_roundtrip(void)
{
	struct gfsp_layout *l = NULL;
	struct gfsp_error err;
	struct oracle o;
	struct reports rep;
	char *dst = path2(topdir, "a.split"), *p;
	char xv[8];
	ssize_t xn;
	int rc, r, good, want_nodes;

	/* ranks group into location files by node name (GFSPLIT_NODE) */
	{
		char name[GFSP_NAME_MAX];
		char (*all)[GFSP_NAME_MAX] = calloc(nprocs, sizeof(*all));
		int i, j;

		memset(name, 0, sizeof(name));
		gfsp_node_name(name, sizeof(name));
		MPI_Allgather(name, GFSP_NAME_MAX, MPI_CHAR, all, GFSP_NAME_MAX,
		    MPI_CHAR, MPI_COMM_WORLD);
		want_nodes = 0;
		for (i = 0; i < nprocs; i++) {
			for (j = 0; j < i; j++)
				if (strcmp(all[i], all[j]) == 0)
					break;
			if (j == i)
				want_nodes++;
		}
		free(all);
	}
	rc = write_case_a(dst, 0, -1, &err);
	ok_all(rc == 0, "writer: case A committed (%s)", err.msg);
	if (rank != 0) {
		MPI_Barrier(MPI_COMM_WORLD);
		free(dst);
		return;
	}
	ok(leftovers() == 0, "writer: no temporary directory left");
	xn = getxattr(dst, GFSP_XATTR_NAME, xv, sizeof(xv));
	if (xn < 0 && (errno == ENOTSUP || errno == EOPNOTSUPP))
		skip("user xattrs not supported here");
	else
		ok(xn == 1 && xv[0] == '1', "xattr user.gfsplit = \"1\"");
	gfsp_error_clear(&err);
	rc = gfsp_layout_open(dst, &l, &err);
	ok(rc == 0, "reader: open (%s)", err.msg);
	if (rc)
		goto out;
	ok(gfsp_layout_nprocs(l) == nprocs && gfsp_layout_size(l) ==
	    case_a_size() && strcmp(l->marker.layout, "view") == 0 &&
	    l->marker.seg_size == 16 && l->nnodes == want_nodes,
	    "reader: %d writers on %d nodes, logical size %llu",
	    gfsp_layout_nprocs(l), l->nnodes,
	    (unsigned long long)gfsp_layout_size(l));
	good = 1;
	for (r = 0; r < nprocs; r++) {
		struct gfsp_view v;

		case_a_view(r, &v);
		if (l->part_size[r] != case_a_psize(r) ||
		    gfsp_layout_view(l, r)->size != v.size ||
		    gfsp_layout_view(l, r)->disp != v.disp)
			good = 0;
		gfsp_view_free(&v);
	}
	ok(good && gfsp_layout_view(l, nprocs) == NULL,
	    "reader: views and part sizes as written");
	case_a_oracle(&o);
	ok(check_reads(l, &o, "case A"), "reader: pread == oracle, "
	    "byte for byte (holes as zeros)");
	ok(check_map(l, &o), "reader: map partitions the range");
	ok(check_coverage(l, &o), "reader: coverage == oracle");
	memset(&rep, 0, sizeof(rep));
	progress_last = 0;
	gfsp_error_clear(&err);
	rc = gfsp_layout_check(l, collect_report, &rep, note_progress, &err);
	ok(rc == 0 && rep.n == 0, "check: clean split file passes (%s)",
	    rep.first);
	ok(progress_last == 88 * (uint64_t)nprocs - 10,
	    "check: progress counts the bytes hashed (%llu)",
	    (unsigned long long)progress_last);
	gfsp_layout_close(l);
	l = NULL;

	/* a part flipped in place: same size, so only the checksum sees it */
	p = path2(dst, "part.0");
	flip_byte(p, 3);
	free(p);
	rc = gfsp_layout_open(dst, &l, &err);
	ok(rc == 0, "open does not hash parts");
	if (rc == 0) {
		memset(&rep, 0, sizeof(rep));
		gfsp_error_clear(&err);
		rc = gfsp_layout_check(l, collect_report, &rep, NULL, &err);
		p = path2(dst, "part.0: checksum mismatch (recorded 0x");
		ok(rc == GFSP_ECHECKSUM && rep.n == 1 && contains(rep.first, p)
		    && err.code == GFSP_ECHECKSUM && contains(err.msg, p),
		    "check: flipped byte -> checksum mismatch: %s", rep.first);
		free(p);
		gfsp_layout_close(l);
		l = NULL;
	}
	oracle_free(&o);
out:
	free(dst);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Damage a fresh case A split file in one way each; rank 0 checks. */
enum damage { D_TRUNC_PART, D_LONG_PART, D_NO_PART, D_NO_MARKER,
	D_FLIP_LOC, D_LOC_VERSION, D_MARKER_NPROCS, D_TRUNC_LOC,
	D_MARKER_SIZE, D_NDAMAGE };

static void
damage(const char *dst, enum damage d)
{
	char *p;
	unsigned char *buf, *nbuf;
	size_t len, nlen;
	struct gfsp_marker m;
	struct gfsp_error err;

	switch (d) {
	case D_TRUNC_PART:
		p = path2(dst, "part.0");
		if (truncate(p, case_a_psize(0) - 1) != 0)
			diag("truncate failed");
		break;
	case D_LONG_PART:
		p = path2(dst, "part.0");
		if (truncate(p, case_a_psize(0) + 1) != 0)
			diag("truncate failed");
		break;
	case D_NO_PART:
		p = path2(dst, "part.0");
		unlink(p);
		break;
	case D_NO_MARKER:
		p = path2(dst, GFSP_MARKER_NAME);
		unlink(p);
		break;
	case D_FLIP_LOC:
		p = path2(dst, "loc.0");
		flip_byte(p, 30);
		break;
	case D_TRUNC_LOC:
		p = path2(dst, "loc.0");
		if (truncate(p, 50) != 0)
			diag("truncate failed");
		break;
	case D_LOC_VERSION:
		p = path2(dst, "loc.0");
		buf = read_file(p, &len);
		if (buf == NULL || len < 16) {
			diag("cannot damage %s", p);
			free(buf);
			break;
		}
		buf[8] = 9;
		{
			uint64_t h = XXH3_64bits(buf, len - 8);
			int i;

			for (i = 0; i < 8; i++)
				buf[len - 8 + i] = (unsigned char)(h >> 8 * i);
		}
		write_file(p, buf, len);
		free(buf);
		break;
	case D_MARKER_NPROCS:
	case D_MARKER_SIZE:
		p = path2(dst, GFSP_MARKER_NAME);
		buf = read_file(p, &len);
		gfsp_error_clear(&err);
		if (buf == NULL ||
		    gfsp_marker_decode(buf, len, p, &m, &err) != 0) {
			diag("cannot damage %s: %s", p, err.msg);
			free(buf);
			break;
		}
		if (d == D_MARKER_NPROCS)
			m.nprocs++;
		else
			m.logical_size = 40;	/* below what parts hold */
		gfsp_marker_encode(&m, &nbuf, &nlen, &err);
		write_file(p, nbuf, nlen);
		free(buf);
		free(nbuf);
		break;
	default:
		return;
	}
	free(p);
}

static void
test_damage(void)
{
	struct gfsp_layout *l;
	struct gfsp_error err;
	char *dst = path2(topdir, "d.split"), *exp;
	char want[1024];
	int d, rc, good;

	for (d = 0; d < D_NDAMAGE; d++) {
		if (rank == 0)
			rm_rf(dst);
		MPI_Barrier(MPI_COMM_WORLD);
		rc = write_case_a(dst, 0, -1, &err);
		ok_all(rc == 0, "damage %d: fresh split file (%s)", d, err.msg);
		if (rank != 0) {
			MPI_Barrier(MPI_COMM_WORLD);
			continue;
		}
		damage(dst, (enum damage)d);
		l = NULL;
		gfsp_error_clear(&err);
		rc = gfsp_layout_open(dst, &l, &err);
		gfsp_layout_close(l);
		switch (d) {
		case D_TRUNC_PART:
			snprintf(want, sizeof(want), "%s/part.0: %llu bytes "
			    "but loc.0 records %llu (short or truncated part)",
			    dst, (unsigned long long)case_a_psize(0) - 1,
			    (unsigned long long)case_a_psize(0));
			ok(rc == GFSP_ECORRUPT && strcmp(err.msg, want) == 0,
			    "truncated part: %s", err.msg);
			break;
		case D_LONG_PART:
			snprintf(want, sizeof(want), "%s/part.0: %llu bytes "
			    "but loc.0 records %llu (part is longer than "
			    "recorded)", dst,
			    (unsigned long long)case_a_psize(0) + 1,
			    (unsigned long long)case_a_psize(0));
			ok(rc == GFSP_ECORRUPT && strcmp(err.msg, want) == 0,
			    "longer part: %s", err.msg);
			break;
		case D_NO_PART:
			snprintf(want, sizeof(want), "%s/part.0: missing part "
			    "file", dst);
			ok(rc == GFSP_ENOENT && strcmp(err.msg, want) == 0,
			    "missing part: %s", err.msg);
			break;
		case D_NO_MARKER:
			snprintf(want, sizeof(want), "'%s' is not a complete "
			    "split file (no gfsplit.meta: the writer did not "
			    "commit)", dst);
			ok(rc == GFSP_ENOTSPLIT && strcmp(err.msg, want) == 0,
			    "no marker: %s", err.msg);
			break;
		case D_FLIP_LOC:
		case D_TRUNC_LOC:
			snprintf(want, sizeof(want), "%s/loc.0: checksum "
			    "mismatch", dst);
			ok(rc == GFSP_ECORRUPT && contains(err.msg, want),
			    "%s location file: %s", d == D_FLIP_LOC ?
			    "corrupted" : "truncated", err.msg);
			break;
		case D_LOC_VERSION:
			snprintf(want, sizeof(want), "%s/loc.0: format version "
			    "9 is not supported by this gfsplit (reads version "
			    "%d)", dst, GFSP_FORMAT_VERSION);
			ok(rc == GFSP_EVERSION && strcmp(err.msg, want) == 0,
			    "newer location file: %s", err.msg);
			break;
		case D_MARKER_NPROCS:
			snprintf(want, sizeof(want), "%s/loc.0 records %d "
			    "processes but %s/gfsplit.meta records %d", dst,
			    nprocs, dst, nprocs + 1);
			ok(rc == GFSP_ECORRUPT && strcmp(err.msg, want) == 0,
			    "process counts differ: %s", err.msg);
			break;
		case D_MARKER_SIZE:
			snprintf(want, sizeof(want), "loc.0: rank 0 records "
			    "%llu part bytes but its view holds only",
			    (unsigned long long)case_a_psize(0));
			exp = path2(dst, want);
			good = rc == GFSP_ECORRUPT && contains(err.msg, exp);
			ok(good, "part bytes past the logical size: %s",
			    err.msg);
			free(exp);
			break;
		}
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (rank == 0) {
		char *f = path2(topdir, "plain");

		write_file(f, "x", 1);
		gfsp_error_clear(&err);
		rc = gfsp_layout_open(f, &l, &err);
		snprintf(want, sizeof(want), "'%s' is not a split file (not a "
		    "directory)", f);
		ok(rc == GFSP_ENOTSPLIT && strcmp(err.msg, want) == 0,
		    "plain file: %s", err.msg);
		unlink(f);
		gfsp_error_clear(&err);
		rc = gfsp_layout_open(f, &l, &err);
		ok(rc == GFSP_ENOENT && contains(err.msg, f),
		    "missing path: %s", err.msg);
		free(f);
		rm_rf(dst);
	}
	free(dst);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Commit rule: failure leaves nothing; DST is never touched early. */
static void
test_commit_rule(void)
{
	struct gfsp_error err;
	char *dst = path2(topdir, "c.split"), *p = NULL;
	char want[1024];
	unsigned char *buf;
	size_t len = 0;
	struct gfsp_layout *l;
	struct stat sb;
	int rc, fail = nprocs > 1 ? 1 : 0;

	/* a rank fails before finish */
	rc = write_case_a(dst, 0, fail, &err);
	ok_all(rc != 0 && (rank == fail ? rc == GFSP_EIO : rc == GFSP_EPEER),
	    "failed rank: every rank returns an error (%s)", err.msg);
	if (rank == 0)
		ok(!exists(dst) && leftovers() == 0,
		    "failed rank: neither DST nor the temporary directory is "
		    "left");

	/* DST exists */
	if (rank == 0)
		write_file(dst, "old contents", 12);
	MPI_Barrier(MPI_COMM_WORLD);
	rc = write_case_a(dst, 0, -1, &err);
	snprintf(want, sizeof(want), "'%s' exists (use --force to replace "
	    "it)", dst);
	ok_all(rank == 0 ? rc == GFSP_EEXIST && strcmp(err.msg, want) == 0 :
	    rc == GFSP_EPEER, "DST exists: %s", err.msg);
	if (rank == 0) {
		buf = read_file(dst, &len);
		ok(buf && len == 12 && memcmp(buf, "old contents", 12) == 0 &&
		    leftovers() == 0, "DST exists: old DST untouched");
		free(buf);
	}

	/* force, but a rank fails: the old DST stays */
	rc = write_case_a(dst, 1, fail, &err);
	ok_all(rc != 0, "force + failed rank: error");
	if (rank == 0) {
		buf = read_file(dst, &len);
		ok(buf && len == 12 && memcmp(buf, "old contents", 12) == 0 &&
		    leftovers() == 0, "force + failed rank: old DST untouched, "
		    "nothing left");
		free(buf);
	}

	/* force: the old DST is replaced only at the commit */
	{
		struct gfsp_split_writer *w = NULL;
		struct gfsp_split_opts opts;
		struct gfsp_view v;
		int before;

		memset(&opts, 0, sizeof(opts));
		opts.force = 1;
		opts.sync = 1;
		case_a_view(rank, &v);
		gfsp_error_clear(&err);
		rc = gfsp_split_create(MPI_COMM_WORLD, dst, &v, &opts, &w, NULL,
		    &err);
		gfsp_view_free(&v);
		ok_all(rc == 0, "force: create (%s)", err.msg);
		if (rc == 0)
			rc = append_data(w, A_TAG, case_a_psize(rank), &err);
		before = 1;
		if (rank == 0) {
			buf = read_file(dst, &len);
			before = buf && len == 12 &&
			    memcmp(buf, "old contents", 12) == 0;
			free(buf);
		}
		ok_all(before, "force: DST still old after create and writes");
		rc = gfsp_split_finish(w, rc, case_a_size(), &err);
		ok_all(rc == 0, "force: finish (%s)", err.msg);
		if (rank == 0) {
			struct oracle o;

			l = NULL;
			rc = gfsp_layout_open(dst, &l, &err);
			case_a_oracle(&o);
			ok(rc == 0 && stat(dst, &sb) == 0 && S_ISDIR(sb.st_mode)
			    && check_reads(l, &o, "forced") && leftovers() == 0,
			    "force: DST replaced by the split file, old one "
			    "removed");
			gfsp_layout_close(l);
			oracle_free(&o);
		}
	}

	/* force over a split file */
	if (rank == 0) {
		p = path2(dst, "part.0");
		flip_byte(p, 0);	/* mark the old one */
		free(p);
	}
	rc = write_case_a(dst, 1, -1, &err);
	ok_all(rc == 0, "force over a split file (%s)", err.msg);
	if (rank == 0) {
		struct reports rep;

		memset(&rep, 0, sizeof(rep));
		l = NULL;
		rc = gfsp_layout_open(dst, &l, &err);
		if (rc == 0)
			rc = gfsp_layout_check(l, collect_report, &rep, NULL,
			    &err);
		gfsp_layout_close(l);
		ok(rc == 0 && leftovers() == 0,
		    "force over a split file: new one checks clean");
		rm_rf(dst);
		mkdir(dst, 0755);
		p = path2(dst, "precious");
		write_file(p, "keep", 4);
	}
	MPI_Barrier(MPI_COMM_WORLD);

	/* force never wipes a directory that is not a split file */
	rc = write_case_a(dst, 1, -1, &err);
	ok_all(rc != 0, "force over a plain directory refused (%s)", err.msg);
	if (rank == 0) {
		ok(rc == GFSP_EEXIST && contains(err.msg, "not a split file") &&
		    exists(p) && leftovers() == 0,
		    "plain directory untouched: %s", err.msg);
		free(p);
		rm_rf(dst);
	}
	MPI_Barrier(MPI_COMM_WORLD);

	/* parent missing */
	free(dst);
	dst = path2(topdir, "no/such/dir/x.split");
	rc = write_case_a(dst, 0, -1, &err);
	ok_all(rc != 0, "missing parent: error");
	if (rank == 0)
		ok(rc == GFSP_ENOENT && contains(err.msg, dst) &&
		    leftovers() == 0, "missing parent: %s", err.msg);
	free(dst);

	/* more bytes than the view holds below the logical size */
	dst = path2(topdir, "over.split");
	{
		struct gfsp_split_writer *w = NULL;
		struct gfsp_view v;

		case_a_view(rank, &v);
		gfsp_error_clear(&err);
		rc = gfsp_split_create(MPI_COMM_WORLD, dst, &v, NULL, &w, NULL,
		    &err);
		gfsp_view_free(&v);
		if (rc == 0)
			rc = append_data(w, A_TAG, 89, &err);
		rc = gfsp_split_finish(w, rc, case_a_size(), &err);
		ok_all(rc != 0, "part larger than its view: refused");
		if (rank == 0)
			ok(!exists(dst) && leftovers() == 0 && (nprocs > 1 ||
			    (rc == GFSP_EINVAL && contains(err.msg,
			    "89 bytes written"))), "part larger than its view:"
			    " nothing left (%s)", err.msg);
	}
	free(dst);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* Unbounded cyclic views, many checksum segments; empty views. */
static void
test_writer_cyclic_and_empty(void)
{
	struct gfsp_split_writer *w = NULL;
	struct gfsp_split_opts opts;
	struct gfsp_layout *l;
	struct gfsp_error err;
	struct gfsp_view v;
	struct oracle o;
	struct reports rep;
	char *dst = path2(topdir, "cyc.split");
	uint64_t blk = 4096, n, size = 0, last;
	uint64_t *ps;
	struct gfsp_view *views;
	int r, rc;

	memset(&opts, 0, sizeof(opts));
	opts.layout = "cyclic:4096";
	opts.seg_size = 1000;
	gfsp_error_clear(&err);
	gfsp_view_cyclic(&v, rank, nprocs, blk, GFSP_VIEW_UNBOUNDED, &err);
	rc = gfsp_split_create(MPI_COMM_WORLD, dst, &v, &opts, &w, NULL, &err);
	gfsp_view_free(&v);
	n = 50000 + 7000 * (uint64_t)rank;
	if (rc == 0)
		rc = append_data(w, 2, n, &err);
	ok_all(rc == 0 && gfsp_split_part_size(w) == n, "cyclic: written");
	/* each rank's idea of the size: one past its last byte */
	last = (n - 1) / blk * nprocs * blk + rank * blk + (n - 1) % blk;
	rc = gfsp_split_finish(w, rc, last + 1, &err);
	ok_all(rc == 0, "cyclic: committed (%s)", err.msg);
	if (rank == 0) {
		views = calloc(nprocs, sizeof(*views));
		ps = calloc(nprocs, sizeof(*ps));
		for (r = 0; r < nprocs; r++) {
			gfsp_view_cyclic(&views[r], r, nprocs, blk,
			    GFSP_VIEW_UNBOUNDED, &err);
			ps[r] = 50000 + 7000 * (uint64_t)r;
			last = (ps[r] - 1) / blk * nprocs * blk + r * blk +
			    (ps[r] - 1) % blk;
			size = GFSP_MAX(size, last + 1);
		}
		oracle_build(&o, nprocs, views, ps, size, 2);
		l = NULL;
		rc = gfsp_layout_open(dst, &l, &err);
		ok(rc == 0 && gfsp_layout_size(l) == size,
		    "cyclic: logical size is the maximum (%llu)",
		    (unsigned long long)size);
		if (rc == 0) {
			ok(check_reads(l, &o, "cyclic"),
			    "cyclic: pread == oracle");
			ok(check_coverage(l, &o), "cyclic: coverage");
			memset(&rep, 0, sizeof(rep));
			rc = gfsp_layout_check(l, collect_report, &rep, NULL,
			    &err);
			ok(rc == 0, "cyclic: check passes over %llu segments",
			    (unsigned long long)(n / 1000));
		}
		gfsp_layout_close(l);
		oracle_free(&o);
		for (r = 0; r < nprocs; r++)
			gfsp_view_free(&views[r]);
		free(views);
		free(ps);
	}
	free(dst);
	MPI_Barrier(MPI_COMM_WORLD);

	/* empty views: the whole file is one hole */
	dst = path2(topdir, "empty.split");
	gfsp_view_init(&v, 0, 0, GFSP_VIEW_UNBOUNDED, 0, NULL, NULL, &err);
	rc = gfsp_split_create(MPI_COMM_WORLD, dst, &v, NULL, &w, NULL, &err);
	gfsp_view_free(&v);
	rc = gfsp_split_finish(w, rc, 1000, &err);
	ok_all(rc == 0, "empty views: committed (%s)", err.msg);
	if (rank == 0) {
		struct gfsp_coverage c;
		unsigned char buf[1000];
		uint64_t got;
		int zero = 1, i;

		l = NULL;
		rc = gfsp_layout_open(dst, &l, &err);
		if (rc == 0) {
			memset(buf, 1, sizeof(buf));
			rc = gfsp_layout_pread(l, buf, 1000, 0, &got, &err);
			for (i = 0; i < 1000; i++)
				zero &= buf[i] == 0;
			gfsp_layout_coverage(l, &c, &err);
		}
		ok(rc == 0 && got == 1000 && zero && c.holes == 1 &&
		    c.hole_bytes == 1000 && c.data_bytes == 0 &&
		    c.first_hole == 0, "empty views: 1000 bytes of hole");
		memset(&rep, 0, sizeof(rep));
		ok(l && gfsp_layout_check(l, collect_report, &rep, NULL, &err) ==
		    0, "empty views: check passes");
		gfsp_layout_close(l);
	}
	free(dst);
	MPI_Barrier(MPI_COMM_WORLD);
}

/*
 * Overlapping views through the writer: rank r declares [0, 100(r+1))
 * (one tile of 100K bytes), so after resolution (lowest rank owns) it
 * keeps [100r, 100(r+1)) and writes exactly those 100 bytes.
 */
static void
test_writer_overlap(void)
{
	struct gfsp_split_writer *w = NULL;
	const struct gfsp_view *res = NULL;
	struct gfsp_layout *l = NULL;
	struct gfsp_error err;
	struct gfsp_view v;
	char *dst = path2(topdir, "ovl.split");
	uint64_t n = 100 * (uint64_t)(nprocs), g, got;
	uint64_t off = 0, len = 100 * (uint64_t)(rank + 1);
	unsigned char *buf;
	int rc, good;

	gfsp_error_clear(&err);
	gfsp_view_init(&v, 0, n, n, 1, &off, &len, &err);
	rc = gfsp_split_create(MPI_COMM_WORLD, dst, &v, NULL, &w, &res, &err);
	gfsp_view_free(&v);
	good = rc == 0 && res != NULL && res->size == 100 &&
	    gfsp_view_bytes_below(res, UINT64_MAX) == 100 &&
	    gfsp_view_local(res, 100 * (uint64_t)rank) == 0;
	ok_all(good, "overlap: resolved view keeps only this rank's 100 "
	    "bytes (%s)", err.msg);
	if (rc == 0)
		rc = append_data(w, 4, 100, &err);
	rc = gfsp_split_finish(w, rc, n, &err);
	ok_all(rc == 0, "overlap: committed (%s)", err.msg);
	if (rank == 0) {
		rc = gfsp_layout_open(dst, &l, &err);
		buf = malloc(n);
		good = rc == 0 && gfsp_layout_size(l) == n &&
		    gfsp_layout_pread(l, buf, n, 0, &got, &err) == 0 &&
		    got == n;
		for (g = 0; good && g < n; g++)
			if (buf[g] != data_byte(4, (int)(g / 100), g % 100))
				good = 0;
		ok(good, "overlap: byte g comes from rank g/100 (%s)",
		    err.msg);
		gfsp_layout_close(l);
		free(buf);
	}
	free(dst);
	MPI_Barrier(MPI_COMM_WORLD);
}

/* ----------------------------------------- hand-made multi-part files */

/*
 * Four writers on two nodes, written with the encoders directly so that
 * one process can build what K ranks would:
 *
 *   rank 0: tiles of 100 from 0, blocks [0,10) [50,55), up to 1000
 *   rank 1: tiles of 100 from 10, block [0,20), up to 1000; part holds
 *           only 150 of its 180 bytes (the rest reads as holes)
 *   rank 2: tiles of 7 from 1000, blocks [1,4) [5,6), up to 1500
 *           (overlap variant: from 500, into rank 0's blocks)
 *   rank 3: empty
 *   logical size 1600; loc.0 = {0, 2}, loc.1 = {1, 3}
 */
#define H_TAG 3

static void
hand_views(struct gfsp_view *v, int overlap)
{
	uint64_t o0[2] = { 0, 50 }, l0[2] = { 10, 5 };
	uint64_t o1[1] = { 0 }, l1[1] = { 20 };
	uint64_t o2[2] = { 1, 5 }, l2[2] = { 3, 1 };
	struct gfsp_error err;

	gfsp_error_clear(&err);
	gfsp_view_init(&v[0], 0, 100, 1000, 2, o0, l0, &err);
	gfsp_view_init(&v[1], 10, 100, 1000, 1, o1, l1, &err);
	gfsp_view_init(&v[2], overlap ? 500 : 1000, 7, 1500, 2, o2, l2, &err);
	gfsp_view_init(&v[3], 0, 0, GFSP_VIEW_UNBOUNDED, 0, NULL, NULL, &err);
}

static const uint64_t hand_psize[4] = { 150, 150, 284, 0 };
static const int hand_node[4] = { 0, 1, 0, 1 };

/* which: -1 all; else leave out / duplicate records to break it */
enum hand_bad { H_OK, H_NO_LOC1, H_DUP_RANK, H_MISSING_RANK, H_NODE_IDX };

static void
make_hand(const char *dir, const struct gfsp_view *v, enum hand_bad bad)
{
	struct gfsp_marker m;
	struct gfsp_locfile lf;
	struct gfsp_error err;
	unsigned char *buf, *data;
	size_t len;
	uint64_t hash[4], i;
	char name[64], *p;
	int r, k;

	mkdir(dir, 0755);
	for (r = 0; r < 4; r++) {
		struct gfsp_phash *h = gfsp_phash_new(64);

		data = malloc(hand_psize[r] + 1);
		for (i = 0; i < hand_psize[r]; i++)
			data[i] = data_byte(H_TAG, r, i);
		gfsp_phash_update(h, data, hand_psize[r]);
		hash[r] = gfsp_phash_final(h);
		gfsp_phash_free(h);
		snprintf(name, sizeof(name), "part.%d", r);
		p = path2(dir, name);
		write_file(p, data, hand_psize[r]);
		free(p);
		free(data);
	}
	for (k = 0; k < 2; k++) {
		memset(&lf, 0, sizeof(lf));
		lf.nprocs = 4;
		lf.nnodes = 2;
		lf.node = bad == H_NODE_IDX && k == 1 ? 0 : k;
		snprintf(lf.node_name, sizeof(lf.node_name), "n%d", k);
		lf.recs = calloc(4, sizeof(*lf.recs));
		for (r = 0; r < 4; r++) {
			int in = hand_node[r] == k;

			if (bad == H_DUP_RANK && r == 2)
				in = 1;		/* in both files */
			if (bad == H_MISSING_RANK && r == 1)
				in = 0;
			if (!in)
				continue;
			lf.recs[lf.nrecs].rank = r;
			lf.recs[lf.nrecs].view = v[r];
			lf.recs[lf.nrecs].part_size = hand_psize[r];
			lf.recs[lf.nrecs].part_hash = hash[r];
			snprintf(lf.recs[lf.nrecs].host, GFSP_NAME_MAX, "n%d", k);
			lf.nrecs++;
		}
		gfsp_error_clear(&err);
		if (gfsp_locfile_encode(&lf, &buf, &len, &err) != 0)
			diag("encode: %s", err.msg);
		free(lf.recs);
		if (bad == H_NO_LOC1 && k == 1) {
			free(buf);
			continue;
		}
		snprintf(name, sizeof(name), "loc.%d", k);
		p = path2(dir, name);
		write_file(p, buf, len);
		free(p);
		free(buf);
	}
	memset(&m, 0, sizeof(m));
	m.version = 1;
	m.nprocs = 4;
	m.nnodes = 2;
	m.logical_size = 1600;
	m.seg_size = 64;
	snprintf(m.layout, sizeof(m.layout), "view");
	gfsp_marker_encode(&m, &buf, &len, &err);
	p = path2(dir, GFSP_MARKER_NAME);
	write_file(p, buf, len);
	free(p);
	free(buf);
}

static void
test_hand_made(void)
{
	struct gfsp_view v[4];
	struct gfsp_layout *l = NULL;
	struct gfsp_error err;
	struct oracle o;
	struct reports rep;
	char *dir = path2(topdir, "hand.split");
	int rc, r;

	hand_views(v, 0);
	make_hand(dir, v, H_OK);
	gfsp_error_clear(&err);
	rc = gfsp_layout_open(dir, &l, &err);
	ok(rc == 0 && l->nnodes == 2 && l->node_of[1] == 1 &&
	    l->node_of[2] == 0 && strcmp(l->node_name[1], "n1") == 0 &&
	    strcmp(l->host[3], "n1") == 0, "4 writers, 2 location files: "
	    "open (%s)", err.msg);
	if (rc == 0) {
		oracle_build(&o, 4, v, hand_psize, 1600, H_TAG);
		ok(check_reads(l, &o, "hand"), "4 parts: pread == oracle");
		ok(check_map(l, &o), "4 parts: map partitions the range");
		ok(check_coverage(l, &o), "4 parts: coverage == oracle");
		memset(&rep, 0, sizeof(rep));
		ok(gfsp_layout_check(l, collect_report, &rep, NULL, &err) == 0,
		    "4 parts: check passes (%s)", rep.first);
		{
			struct gfsp_extent *ext;
			size_t n;

			rc = gfsp_layout_map(l, 0, 60, &ext, &n, &err);
			ok(rc == 0 && n == 5 && ext[0].part == 0 &&
			    ext[0].len == 10 && ext[1].part == 1 &&
			    ext[1].goff == 10 && ext[1].len == 20 &&
			    ext[1].loff == 0 && ext[2].part == -1 &&
			    ext[2].goff == 30 && ext[2].len == 20 &&
			    ext[3].part == 0 && ext[3].loff == 10 &&
			    ext[3].len == 5 && ext[4].part == -1 &&
			    ext[4].goff == 55 && ext[4].len == 5,
			    "map [0,60): data, data, hole, data, hole");
			free(ext);
		}
		oracle_free(&o);
		gfsp_layout_close(l);
	}
	rm_rf(dir);

	/* overlapping views: counted and reported by check */
	for (r = 0; r < 4; r++)
		gfsp_view_free(&v[r]);
	hand_views(v, 1);
	make_hand(dir, v, H_OK);
	l = NULL;
	rc = gfsp_layout_open(dir, &l, &err);
	if (rc == 0) {
		oracle_build(&o, 4, v, hand_psize, 1600, H_TAG);
		ok(check_coverage(l, &o), "overlapping views: coverage "
		    "counts the overlap");
		memset(&rep, 0, sizeof(rep));
		gfsp_error_clear(&err);
		rc = gfsp_layout_check(l, collect_report, &rep, NULL, &err);
		ok(rc == GFSP_ECORRUPT && rep.n == 1 &&
		    contains(rep.first, "overlap"),
		    "overlapping views: check reports %s", rep.first);
		oracle_free(&o);
		gfsp_layout_close(l);
	} else {
		ok(0, "overlapping views: open (%s)", err.msg);
	}
	rm_rf(dir);

	{
		static const struct {
			enum hand_bad bad;
			int code;
			const char *msg;
		} cases[] = {
			{ H_NO_LOC1, GFSP_ENOENT, "/loc.1: missing location "
			    "file" },
			{ H_DUP_RANK, GFSP_ECORRUPT, "/loc.1: rank 2 is also "
			    "recorded in " },
			{ H_MISSING_RANK, GFSP_ECORRUPT, "': rank 1 is not "
			    "recorded in any location file" },
			{ H_NODE_IDX, GFSP_ECORRUPT, "/loc.1 says it is "
			    "location file 0" },
		};
		size_t i;

		for (i = 0; i < GFSP_ARRAY_SIZE(cases); i++) {
			make_hand(dir, v, cases[i].bad);
			l = NULL;
			gfsp_error_clear(&err);
			rc = gfsp_layout_open(dir, &l, &err);
			gfsp_layout_close(l);
			ok(rc == cases[i].code && contains(err.msg, dir) &&
			    contains(err.msg, cases[i].msg),
			    "bad location files %d: %s", cases[i].bad,
			    err.msg);
			rm_rf(dir);
		}
	}
	for (r = 0; r < 4; r++)
		gfsp_view_free(&v[r]);
	free(dir);
}

/*
 * More parts than the reader keeps open at once: 300 writers, cyclic
 * blocks of 3 bytes, 10 bytes each (the last block of each is short of
 * its view), 3 location files of 100 ranks.
 */
static void
test_many_parts(void)
{
	enum { N = 300, NODES = 3 };
	struct gfsp_view *v = calloc(N, sizeof(*v));
	uint64_t *ps = calloc(N, sizeof(*ps)), hash[N], i, size = 3 * N * 4;
	struct gfsp_layout *l = NULL;
	struct gfsp_locfile lf;
	struct gfsp_marker m;
	struct gfsp_error err;
	struct oracle o;
	struct reports rep;
	unsigned char *buf, data[16];
	size_t len;
	char name[64], *p, *dir = path2(topdir, "many.split");
	struct rlimit saved, lim;
	int r, k, rc;

	mkdir(dir, 0755);
	for (r = 0; r < N; r++) {
		struct gfsp_phash *h = gfsp_phash_new(4);

		gfsp_view_cyclic(&v[r], r, N, 3, size, &err);
		ps[r] = 10;
		for (i = 0; i < ps[r]; i++)
			data[i] = data_byte(5, r, i);
		gfsp_phash_update(h, data, ps[r]);
		hash[r] = gfsp_phash_final(h);
		gfsp_phash_free(h);
		snprintf(name, sizeof(name), "part.%d", r);
		p = path2(dir, name);
		write_file(p, data, ps[r]);
		free(p);
	}
	for (k = 0; k < NODES; k++) {
		memset(&lf, 0, sizeof(lf));
		lf.nprocs = N;
		lf.nnodes = NODES;
		lf.node = k;
		lf.recs = calloc(N / NODES, sizeof(*lf.recs));
		for (r = k * (N / NODES); r < (k + 1) * (N / NODES); r++) {
			lf.recs[lf.nrecs].rank = r;
			lf.recs[lf.nrecs].view = v[r];
			lf.recs[lf.nrecs].part_size = ps[r];
			lf.recs[lf.nrecs].part_hash = hash[r];
			lf.nrecs++;
		}
		gfsp_locfile_encode(&lf, &buf, &len, &err);
		free(lf.recs);
		snprintf(name, sizeof(name), "loc.%d", k);
		p = path2(dir, name);
		write_file(p, buf, len);
		free(p);
		free(buf);
	}
	memset(&m, 0, sizeof(m));
	m.nprocs = N;
	m.nnodes = NODES;
	m.logical_size = size;
	m.seg_size = 4;
	gfsp_marker_encode(&m, &buf, &len, &err);
	p = path2(dir, GFSP_MARKER_NAME);
	write_file(p, buf, len);
	free(p);
	free(buf);

	/* fewer descriptors than parts: the reader must not hold them all */
	getrlimit(RLIMIT_NOFILE, &saved);
	lim = saved;
	lim.rlim_cur = 200;
	if (saved.rlim_cur != RLIM_INFINITY && saved.rlim_cur < lim.rlim_cur)
		lim.rlim_cur = saved.rlim_cur;
	setrlimit(RLIMIT_NOFILE, &lim);
	gfsp_error_clear(&err);
	rc = gfsp_layout_open(dir, &l, &err);
	ok(rc == 0, "300 parts: open (%s)", err.msg);
	if (rc == 0) {
		oracle_build(&o, N, v, ps, size, 5);
		ok(check_reads(l, &o, "many") && check_reads(l, &o, "many"),
		    "300 parts: pread == oracle, twice (bounded open parts)");
		ok(check_coverage(l, &o), "300 parts: coverage");
		memset(&rep, 0, sizeof(rep));
		ok(gfsp_layout_check(l, collect_report, &rep, NULL, &err) == 0,
		    "300 parts: check passes (%s)", rep.first);
		oracle_free(&o);
		gfsp_layout_close(l);
	}
	setrlimit(RLIMIT_NOFILE, &saved);
	for (r = 0; r < N; r++)
		gfsp_view_free(&v[r]);
	free(v);
	free(ps);
	rm_rf(dir);
	free(dir);
}

int
main(int argc, char **argv)
{
	int failed = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	tap_silent = rank != 0;
	if (rank == 0) {
		const char *t = getenv("TMPDIR");

		snprintf(topdir, sizeof(topdir), "%s/gfsplit-test-XXXXXX",
		    t && *t ? t : "/tmp");
		if (mkdtemp(topdir) == NULL) {
			perror("mkdtemp");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	MPI_Bcast(topdir, sizeof(topdir), MPI_CHAR, 0, MPI_COMM_WORLD);
	rnd_seed(RND_SEED ^ (uint64_t)rank * 0x9e3779b97f4a7c15ull);

	test_writer_roundtrip();
	test_damage();
	test_commit_rule();
	test_writer_cyclic_and_empty();
	test_writer_overlap();
	if (rank == 0) {
		test_hand_made();
		test_many_parts();
	}

	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		rm_rf(topdir);
		diag("%d tests, %d failed", tap_ntest, tap_nfail);
	}
	failed = done_testing();
	MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX,
		      MPI_COMM_WORLD);
	MPI_Finalize();
	return failed ? 1 : 0;
}
