/*
 * envout.c - the envelope for people and for other programs: a table, CSV,
 * and an SVG heat map of one metric (as Kyou, Tatebe and Tanaka draw the
 * envelope, their figure 2).
 *
 * The table and the CSV list the points grouped by metric, then process
 * count, then size, whatever order they were measured or stored in.  Rates
 * for people have three significant digits, bytes in binary units ("812
 * MiB/s"), counts with SI letters ("52.3k"); the CSV has plain numbers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "envelope.h"
#include "store.h"

#define LABEL_MAX 48		/* one value with its unit, "1.23 GiB/s" */

/* A name of the envelope, "?" where it has none. */
static const char *
known(const char *s)
{
	return s != NULL ? s : "?";
}

static const char *
metric_name(int metric)
{
	return known(gfsp_env_metric_name(metric));
}

/*
 * (envelope.h) The next unit is taken once v would print as 1000 or more
 * in this one; past the last, %g's exponent takes over ("1.2e+04 EiB/s").
 */
const char *
gfsp_env_format_rate(double v, int bytes, const char *suffix, char *buf,
		     size_t len)
{
	static const char *const bunit[] = {
		" B", " KiB", " MiB", " GiB", " TiB", " PiB", " EiB"
	};
	static const char *const cunit[] = { "", "k", "M", "G", "T", "P", "E" };
	size_t i;

	if (!(v >= 0) || !isfinite(v)) {
		snprintf(buf, len, "-");
		return buf;
	}
	for (i = 0; i + 1 < GFSP_ARRAY_SIZE(bunit) && v >= 999.5; i++)
		v /= bytes ? 1024 : 1000;
	snprintf(buf, len, "%.3g%s%s", v, (bytes ? bunit : cunit)[i], suffix);
	return buf;
}

/*
 * A file size as people write it: "1000 B", "128 KiB", "16 MiB" when it is
 * a whole number of its unit, otherwise gfsp_format_size's "1.50 MiB".
 */
static const char *
size_name(uint64_t n, char *buf, size_t len)
{
	static const char *const units[] = {
		"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"
	};
	uint64_t q = n;
	size_t i = 0;

	while (q >= 1024 && q % 1024 == 0) {
		q /= 1024;
		i++;
	}
	if (q >= 1024)
		return gfsp_format_size(n, buf, len);
	snprintf(buf, len, "%" PRIu64 " %s", q, units[i]);
	return buf;
}

/* ------------------------------------------------------ table and CSV */

/* metric, then procs, then size; equal keys keep their stored order
 * (qsort is not stable) */
static int
point_cmp(const void *a, const void *b)
{
	const struct gfsp_env_point *p = *(const struct gfsp_env_point *const *)a;
	const struct gfsp_env_point *q = *(const struct gfsp_env_point *const *)b;

	if (p->metric != q->metric)
		return p->metric < q->metric ? -1 : 1;
	if (p->procs != q->procs)
		return p->procs < q->procs ? -1 : 1;
	if (p->size != q->size)
		return p->size < q->size ? -1 : 1;
	return p < q ? -1 : p > q;
}

/*
 * The points in the order of the table and the CSV.  NULL when there are
 * none or memory is short; nth_point then gives the stored order, which
 * is still every point once (printing has no error to return).
 */
static const struct gfsp_env_point **
points_in_order(const struct gfsp_envelope *e)
{
	const struct gfsp_env_point **v;
	size_t i;

	if (e->npoints == 0 || (v = malloc(e->npoints * sizeof(*v))) == NULL)
		return NULL;
	for (i = 0; i < e->npoints; i++)
		v[i] = &e->points[i];
	qsort(v, e->npoints, sizeof(*v), point_cmp);
	return v;
}

static const struct gfsp_env_point *
nth_point(const struct gfsp_envelope *e, const struct gfsp_env_point **order,
	  size_t i)
{
	return order != NULL ? order[i] : &e->points[i];
}

enum { COL_METRIC, COL_PROCS, COL_SIZE, COL_FILES, COL_OPS, COL_BYTES, NCOL };
#define CELL_MAX 160

static const struct {
	const char *head;
	int right;		/* numbers are right-aligned */
} columns[NCOL] = {
	{ "metric", 0 }, { "procs", 1 }, { "size", 1 }, { "files", 1 },
	{ "ops/s median [min..max]", 0 }, { "bandwidth median [min..max]", 0 },
};

/* "52.3k [50.1k..53k]", "812 MiB/s [790 MiB/s..1.02 GiB/s]" */
static void
stat_cell(const struct gfsp_env_stat *s, int bytes, char *buf)
{
	const char *suffix = bytes ? "/s" : "";
	char a[LABEL_MAX], b[LABEL_MAX], c[LABEL_MAX];

	snprintf(buf, CELL_MAX, "%s [%s..%s]",
		 gfsp_env_format_rate(s->median, bytes, suffix, a, sizeof(a)),
		 gfsp_env_format_rate(s->min, bytes, suffix, b, sizeof(b)),
		 gfsp_env_format_rate(s->max, bytes, suffix, c, sizeof(c)));
}

/* The cells of p's row of the table; p NULL: the column heads. */
static void
table_row(const struct gfsp_env_point *p, char cell[NCOL][CELL_MAX])
{
	int i;

	if (p == NULL) {
		for (i = 0; i < NCOL; i++)
			snprintf(cell[i], CELL_MAX, "%s", columns[i].head);
		return;
	}
	snprintf(cell[COL_METRIC], CELL_MAX, "%s", metric_name(p->metric));
	snprintf(cell[COL_PROCS], CELL_MAX, "%d", p->procs);
	size_name(p->size, cell[COL_SIZE], CELL_MAX);
	snprintf(cell[COL_FILES], CELL_MAX, "%" PRIu64, p->files);
	stat_cell(&p->ops_s, 0, cell[COL_OPS]);
	if (p->metric == GFSP_ENV_CREATE)	/* moves no bytes */
		snprintf(cell[COL_BYTES], CELL_MAX, "-");
	else
		stat_cell(&p->bytes_s, 1, cell[COL_BYTES]);
}

/* One line of the table; the last column is not padded, so that no line
 * ends in blanks (a negative field width pads on the right). */
static void
table_line(FILE *out, char cell[NCOL][CELL_MAX], const int width[NCOL])
{
	int i, w;

	for (i = 0; i < NCOL; i++) {
		w = columns[i].right ? width[i] : i + 1 < NCOL ? -width[i] : 0;
		fprintf(out, "%s%*s", i > 0 ? "  " : "", w, cell[i]);
	}
	putc('\n', out);
}

/* What was measured and how, in one line, and what was not. */
static void
table_header(FILE *out, const struct gfsp_envelope *e)
{
	const struct gfsp_env_method *m = &e->method;
	char b[LABEL_MAX];
	size_t i;

	fprintf(out, "envelope of %s (%s): processes", known(e->target),
		known(e->backend));
	for (i = 0; i < e->nprocs; i++)
		fprintf(out, "%s%d", i > 0 ? ", " : " ", e->procs[i]);
	fputs("; sizes", out);
	for (i = 0; i < e->nsizes; i++)
		fprintf(out, "%s%s", i > 0 ? ", " : " ",
			size_name(e->sizes[i], b, sizeof(b)));
	fprintf(out, "; %d reps after %d warm-up; cache %s; fsync %s\n",
		m->reps, m->warmup, known(gfsp_env_cache_name(m->cache)),
		m->fsync ? "yes" : "no");
	if (e->remote_same_as_local)
		fprintf(out, "read-remote: not measured: on %s every file is "
			"as near as any other (read-local stands for it)\n",
			known(e->backend));
}

void
gfsp_env_print_table(FILE *out, const struct gfsp_envelope *e)
{
	const struct gfsp_env_point **order = points_in_order(e);
	char cell[NCOL][CELL_MAX];
	int width[NCOL] = { 0 }, i, w;
	size_t k;

	table_header(out, e);
	/* two passes over the same cells: their widths, then the lines */
	for (k = 0; k <= e->npoints; k++) {
		table_row(k == 0 ? NULL : nth_point(e, order, k - 1), cell);
		for (i = 0; i < NCOL; i++) {
			w = (int)strlen(cell[i]);
			width[i] = GFSP_MAX(width[i], w);
		}
	}
	for (k = 0; k <= e->npoints; k++) {
		table_row(k == 0 ? NULL : nth_point(e, order, k - 1), cell);
		table_line(out, cell, width);
	}
	free(order);
}

void
gfsp_env_print_csv(FILE *out, const struct gfsp_envelope *e)
{
	const struct gfsp_env_point **order = points_in_order(e);
	const struct gfsp_env_point *p;
	size_t i;

	fputs("metric,procs,size,files,samples,"
	      "ops_per_s_median,ops_per_s_min,ops_per_s_max,"
	      "bytes_per_s_median,bytes_per_s_min,bytes_per_s_max\n", out);
	/* %.10g: ten digits are more than any rate was measured to, and
	 * read back as the same numbers for any plotting */
	for (i = 0; i < e->npoints; i++) {
		p = nth_point(e, order, i);
		fprintf(out, "%s,%d,%" PRIu64 ",%" PRIu64 ",%zu,"
			"%.10g,%.10g,%.10g,%.10g,%.10g,%.10g\n",
			metric_name(p->metric), p->procs, p->size, p->files,
			p->nsamples, p->ops_s.median, p->ops_s.min,
			p->ops_s.max, p->bytes_s.median, p->bytes_s.min,
			p->bytes_s.max);
	}
	free(order);
}

/* ----------------------------------------------------------- heat map */

/*
 * The picture, in pixels:
 *
 *            title
 *     where the bytes came from or went (page cache or storage)
 *   P  +-----+-----+-----+      caption
 *   r  |cell |cell |cell |   +-+ hi
 *   o  +-----+-----+-----+   | | ...    colour bar with its ticks,
 *   c  |cell |cell |cell |   | |        log scale, lo at the bottom
 *      +-----+-----+-----+   +-+ lo
 *       1 KiB 128 KiB 1 MiB
 *           file size
 *
 * Process counts go up (the smallest at the bottom), sizes across.
 */
#define HM_LEFT		80	/* "processes" and the counts */
#define HM_TOP		76	/* the title, what was measured, the
				 * bar's caption */
#define HM_BOTTOM	56	/* the sizes and "file size" */
#define HM_CELL_W	100
#define HM_CELL_H	40
#define HM_BAR_GAP	28
#define HM_BAR_W	18
#define HM_BAR_TEXT	90	/* the bar's tick labels */
#define HM_BAR_MIN_H	160
#define HM_TICK_ROOM	14	/* vertical room of a tick label */
#define HM_TITLE_EM	10	/* width of a title character (bold, 15 px) */

/*
 * viridis (matplotlib's, by van der Walt and Smith) at nine even steps,
 * dark to light: perceptually uniform, so equal ratios of rate look equally
 * far apart, and legible in grey and to most colour-blind readers.
 */
static const unsigned char viridis[][3] = {
	{ 0x44, 0x01, 0x54 }, { 0x47, 0x2d, 0x7b }, { 0x3b, 0x52, 0x8b },
	{ 0x2c, 0x72, 0x8e }, { 0x21, 0x90, 0x8c }, { 0x27, 0xad, 0x81 },
	{ 0x5d, 0xc8, 0x63 }, { 0xaa, 0xdc, 0x32 }, { 0xfd, 0xe7, 0x25 },
};
#define NSTOP GFSP_ARRAY_SIZE(viridis)

struct heat {
	const struct gfsp_envelope *e;
	int metric, throughput;
	char *title;
	const char *source;	/* where reads came from, writes went */
	/* the metric's points by (procs, size), looked up once per cell
	 * (going through all of them for each cell would take a minute at
	 * the reader's limits: 256 x 256 cells, 327680 points) */
	const struct gfsp_env_point **pts;
	size_t npts;
	double lo, hi;		/* the smallest rate > 0 and the largest */
	int gw, gh, barh;	/* grid width and height, bar height */
	int w, h;		/* the picture */
};

/*
 * The colour of t in [0, 1] as "#rrggbb", linear between the stops;
 * *light: the colour is light enough for black text (Rec. 709 luma of
 * the sRGB values over half way), else white text is used.
 */
static void
palette(double t, char hex[8], int *light)
{
	double x = GFSP_MIN(GFSP_MAX(t, 0.0), 1.0) * (double)(NSTOP - 1), c[3];
	size_t k = GFSP_MIN((size_t)x, NSTOP - 2);
	int j;

	for (j = 0; j < 3; j++)
		c[j] = viridis[k][j] + (x - (double)k) *
		       (viridis[k + 1][j] - viridis[k][j]);
	snprintf(hex, 8, "#%02x%02x%02x", (unsigned)lround(c[0]),
		 (unsigned)lround(c[1]), (unsigned)lround(c[2]));
	*light = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2] > 128;
}

static int
cmp_cell(const void *a, const void *b)
{
	const struct gfsp_env_point *p = *(const struct gfsp_env_point *const *)a;
	const struct gfsp_env_point *q = *(const struct gfsp_env_point *const *)b;

	if (p->procs != q->procs)
		return p->procs < q->procs ? -1 : 1;
	return p->size < q->size ? -1 : p->size > q->size;
}

/* h->pts: the points of h->metric, sorted for cell_rate */
static int
heat_points(struct heat *h)
{
	size_t i;

	h->npts = 0;
	h->pts = malloc((h->e->npoints + 1) * sizeof(*h->pts));
	if (h->pts == NULL)
		return -1;
	for (i = 0; i < h->e->npoints; i++)
		if (h->e->points[i].metric == h->metric)
			h->pts[h->npts++] = &h->e->points[i];
	qsort(h->pts, h->npts, sizeof(*h->pts), cmp_cell);
	return 0;
}

/*
 * The rate drawn at (procs, size), or -1 where the envelope has no point
 * (or one whose rate is not a finite number >= 0, which a loaded envelope
 * never has: it is drawn as missing rather than spoil the scale).
 */
static double
cell_rate(const struct heat *h, int procs, uint64_t size)
{
	struct gfsp_env_point key = { .procs = procs, .size = size };
	const struct gfsp_env_point *k = &key, *const *at, *p;
	double v;

	at = bsearch(&k, h->pts, h->npts, sizeof(*h->pts), cmp_cell);
	if (at == NULL)
		return -1;
	p = *at;
	v = h->throughput ? p->ops_s.median : p->bytes_s.median;
	return v >= 0 && isfinite(v) ? v : -1;
}

/* Where v lies on the colour scale, 0 (lo) to 1 (hi), by its logarithm;
 * the middle when every cell has the same rate.  Differences of
 * logarithms, not the logarithm of a ratio: hi / lo may overflow where
 * both are finite. */
static double
scale_at(const struct heat *h, double v)
{
	if (!(h->hi > h->lo))
		return 0.5;
	if (v <= h->lo)
		return 0;
	if (v >= h->hi)
		return 1;
	return (log(v) - log(h->lo)) / (log(h->hi) - log(h->lo));
}

static const char *
rate_label(const struct heat *h, double v, char *buf, size_t len)
{
	return gfsp_env_format_rate(v, !h->throughput,
				    h->throughput ? " ops/s" : "/s", buf, len);
}

/* Text for XML, as content or in an attribute: the markup characters as
 * references, and the control characters XML 1.0 forbids as '?'. */
static void
xml_puts(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			putc((unsigned char)*s < 0x20 && *s != '\t' &&
			     *s != '\n' && *s != '\r' ? '?' : *s, f);
		}
	}
}

/* <text> at (x, y) with more attributes (" name=\"v\"...", or "") */
static void
svg_text(FILE *f, double x, double y, const char *attrs, const char *text)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\"%s>", x, y, attrs);
	xml_puts(f, text);
	fputs("</text>\n", f);
}

/* One tick of the colour bar at rate v, its label to the right. */
static void
bar_tick(FILE *f, const struct heat *h, double v, double bx, double by)
{
	double y = by + h->barh * (1 - scale_at(h, v));
	char label[LABEL_MAX];

	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
		"stroke=\"#000\"/>\n", bx + HM_BAR_W, y, bx + HM_BAR_W + 4, y);
	svg_text(f, bx + HM_BAR_W + 7, y + 4, "",
		 rate_label(h, v, label, sizeof(label)));
}

/*
 * The colour bar's ticks: its two ends, and between them powers of 2
 * (bytes/s) or of 10 (ops/s), every k-th power so that about four fit,
 * leaving out those whose labels would run into an end's.
 */
static void
bar_ticks(FILE *f, const struct heat *h, double bx, double by)
{
	double base = h->throughput ? 10 : 2, span, v, room;
	int k, m, m0, m1;

	bar_tick(f, h, h->lo, bx, by);
	if (!(h->hi > h->lo))
		return;
	bar_tick(f, h, h->hi, bx, by);
	/* lo > 0 and hi finite: the span and the powers are within the
	 * exponents of a double (2^-1074 to 2^1024), ints all */
	span = (log(h->hi) - log(h->lo)) / log(base);
	k = GFSP_MAX((int)ceil(span / 4), 1);
	m0 = (int)ceil(log(h->lo) / log(base) - 1e-9);
	m1 = (int)floor(log(h->hi) / log(base) + 1e-9);
	room = (double)HM_TICK_ROOM / h->barh;
	for (m = m0; m <= m1; m++) {
		v = pow(base, m);
		if ((m % k + k) % k == 0 && scale_at(h, v) >= room &&
		    scale_at(h, v) <= 1 - room)
			bar_tick(f, h, v, bx, by);
	}
}

/* The grid: a cell per (procs, size), coloured, with its rate written in. */
static void
svg_cells(FILE *f, const struct heat *h)
{
	const struct gfsp_envelope *e = h->e;
	char hex[8], label[LABEL_MAX], attrs[96];
	const char *fill, *ink, *text;
	double v;
	size_t r, c;
	int x, y, light;

	for (r = 0; r < e->nprocs; r++) {
		for (c = 0; c < e->nsizes; c++) {
			x = HM_LEFT + (int)c * HM_CELL_W;
			y = HM_TOP + (int)(e->nprocs - 1 - r) * HM_CELL_H;
			v = cell_rate(h, e->procs[r], e->sizes[c]);
			if (v < 0) {
				fill = "#d9d9d9";
				ink = "#555";
				text = "n/a";
			} else {
				palette(scale_at(h, v), hex, &light);
				fill = hex;
				ink = light ? "#000" : "#fff";
				text = rate_label(h, v, label, sizeof(label));
			}
			fprintf(f, "<rect class=\"cell\" x=\"%d\" y=\"%d\" "
				"width=\"%d\" height=\"%d\" fill=\"%s\" "
				"stroke=\"#fff\"/>\n", x, y, HM_CELL_W,
				HM_CELL_H, fill);
			snprintf(attrs, sizeof(attrs), " text-anchor=\"middle\""
				 " fill=\"%s\"", ink);
			svg_text(f, x + HM_CELL_W / 2.0, y + HM_CELL_H / 2.0 + 4,
				 attrs, text);
		}
	}
}

/* The axes' labels: sizes under the columns, counts left of the rows. */
static void
svg_axes(FILE *f, const struct heat *h)
{
	const struct gfsp_envelope *e = h->e;
	char b[LABEL_MAX], attrs[96];
	size_t i;

	for (i = 0; i < e->nsizes; i++)
		svg_text(f, HM_LEFT + (i + 0.5) * HM_CELL_W, HM_TOP + h->gh + 18,
			 " text-anchor=\"middle\"",
			 size_name(e->sizes[i], b, sizeof(b)));
	for (i = 0; i < e->nprocs; i++) {
		snprintf(b, sizeof(b), "%d", e->procs[i]);
		svg_text(f, HM_LEFT - 8,
			 HM_TOP + (e->nprocs - 1 - i + 0.5) * HM_CELL_H + 4,
			 " text-anchor=\"end\"", b);
	}
	svg_text(f, HM_LEFT + h->gw / 2.0, HM_TOP + h->gh + 42,
		 " text-anchor=\"middle\"", "file size");
	snprintf(attrs, sizeof(attrs), " transform=\"translate(24 %.1f) "
		 "rotate(-90)\" text-anchor=\"middle\"", HM_TOP + h->gh / 2.0);
	svg_text(f, 0, 0, attrs, "processes");
}

/* The whole picture (write_whole's fill for struct heat). */
static void
heat_svg(FILE *f, const void *arg)
{
	const struct heat *h = arg;
	double bx = HM_LEFT + h->gw + HM_BAR_GAP;
	size_t i;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\""
		" font-size=\"12\">\n<title>", h->w, h->h, h->w, h->h);
	xml_puts(f, h->title);
	/* the bar's gradient runs up, through the palette's own stops */
	fputs("</title>\n<defs><linearGradient id=\"scale\" x1=\"0\" y1=\"1\" "
	      "x2=\"0\" y2=\"0\">\n", f);
	for (i = 0; i < NSTOP; i++)
		fprintf(f, "<stop offset=\"%.4f\" stop-color=\"#%02x%02x%02x\"/>"
			"\n", (double)i / (NSTOP - 1), viridis[i][0],
			viridis[i][1], viridis[i][2]);
	fputs("</linearGradient></defs>\n"
	      "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n", f);
	svg_text(f, h->w / 2.0, 26, " text-anchor=\"middle\" font-size=\"15\""
		 " font-weight=\"bold\"", h->title);
	svg_text(f, h->w / 2.0, 46, " text-anchor=\"middle\" font-size=\"11\"",
		 h->source);
	svg_cells(f, h);
	svg_axes(f, h);
	fprintf(f, "<rect class=\"legend\" x=\"%.1f\" y=\"%d\" width=\"%d\" "
		"height=\"%d\" fill=\"url(#scale)\" stroke=\"#000\"/>\n", bx,
		HM_TOP, HM_BAR_W, h->barh);
	svg_text(f, bx, HM_TOP - 14, " font-size=\"11\"", "median, log scale");
	bar_ticks(f, h, bx, HM_TOP);
	fputs("</svg>\n", f);
}

/*
 * Write path whole: fill() draws into memory, and the store writes it to
 * a temporary file beside path, synced, and renames it over path
 * (gfsp_write_whole).  On failure path is as it was.
 */
static int
write_whole(const char *path, void (*fill)(FILE *, const void *),
	    const void *arg, struct gfsp_error *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if ((f = open_memstream(&buf, &len)) == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM,
				      "cannot write '%s': out of memory", path);
	fill(f, arg);
	if (ferror(f) || fclose(f) != 0) {
		free(buf);
		return gfsp_error_set(err, GFSP_ENOMEM,
				      "cannot write '%s': out of memory", path);
	}
	rc = gfsp_write_whole(path, NULL, buf, len, 0666,
			      GFSP_PUT_REPLACE | GFSP_PUT_SYNC, err);
	free(buf);
	return rc;
}

/* The range of the rates drawn, and the layout; fails when no cell has
 * a point. */
static int
heat_setup(struct heat *h, struct gfsp_error *err)
{
	const struct gfsp_envelope *e = h->e;
	size_t r, c, found = 0;
	double v;

	h->lo = h->hi = 0;
	for (r = 0; r < e->nprocs; r++) {
		for (c = 0; c < e->nsizes; c++) {
			if ((v = cell_rate(h, e->procs[r], e->sizes[c])) < 0)
				continue;
			found++;
			if (v > 0 && (h->lo == 0 || v < h->lo))
				h->lo = v;
			h->hi = GFSP_MAX(h->hi, v);
		}
	}
	if (found == 0)
		return gfsp_error_set(err, GFSP_EINVAL, "no %s points in the "
				      "envelope of '%s' to draw",
				      metric_name(h->metric), known(e->target));
	if (h->lo == 0)		/* all zero: any scale will do */
		h->lo = h->hi = 1;
	h->gw = (int)e->nsizes * HM_CELL_W;
	h->gh = (int)e->nprocs * HM_CELL_H;
	h->barh = GFSP_MAX(h->gh, HM_BAR_MIN_H);
	h->w = GFSP_MAX(HM_LEFT + h->gw + HM_BAR_GAP + HM_BAR_W + HM_BAR_TEXT,
			24 + HM_TITLE_EM * (int)strlen(h->title));
	h->w = GFSP_MAX(h->w, 24 + HM_TITLE_EM * 7 / 10 *
			(int)strlen(h->source));
	h->h = HM_TOP + h->barh + HM_BOTTOM;
	return 0;
}

/* where the measured bytes came from or went: a read at memory speed
 * must not pass for the storage's */
static const char *
heat_source(int metric, const struct gfsp_env_method *m)
{
	if (metric == GFSP_ENV_CREATE || metric == GFSP_ENV_WRITE)
		return m->fsync ? "writes end with fsync: to storage (--fsync)"
			: "writes may end in the page cache (no --fsync)";
	switch (m->cache) {
	case GFSP_ENV_CACHE_DROP:
		return "page cache dropped before each read phase: reads "
		       "from storage (--cache drop)";
	case GFSP_ENV_CACHE_DIRECT:
		return "reads bypass the page cache (--cache direct)";
	default:
		return "reads may come from the page cache, at memory speed "
		       "(--cache keep)";
	}
}

int
gfsp_env_heatmap(const char *path, const struct gfsp_envelope *e,
		 int metric, int throughput, struct gfsp_error *err)
{
	struct heat h = { .e = e, .metric = metric, .throughput = throughput };
	int rc;

	if (metric < 0 || metric >= GFSP_ENV_NMETRIC)
		return gfsp_error_set(err, GFSP_EINVAL, "heat map: no metric "
				      "number %d", metric);
	if (metric == GFSP_ENV_CREATE && !throughput)
		return gfsp_error_set(err, GFSP_EINVAL, "heat map of create: "
				      "creating a file moves no bytes, so create "
				      "has a throughput (ops/s) but no bandwidth");
	/* "\xe2\x80\x94": an em dash in UTF-8, the document's encoding */
	if (asprintf(&h.title, "%s %s \xe2\x80\x94 %s (%s)",
		     metric_name(metric), throughput ? "throughput" : "bandwidth",
		     known(e->target), known(e->backend)) < 0)
		return gfsp_error_set(err, GFSP_ENOMEM,
				      "cannot write '%s': out of memory", path);
	h.source = heat_source(metric, &e->method);
	if (heat_points(&h) != 0)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "cannot write '%s': out "
				    "of memory", path);
	else
		rc = heat_setup(&h, err);
	if (rc == 0)
		rc = write_whole(path, heat_svg, &h, err);
	free(h.pts);
	free(h.title);
	return rc;
}
