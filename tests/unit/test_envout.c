/*
 * test_envout.c - the envelope's outputs (envout.c), without MPI.  An
 * envelope is built by hand: create and write at three process counts and
 * three sizes, one write cell missing, the points stored backwards.  The
 * CSV is read back number by number and in order; the table is checked for
 * its lines, notes and columns; the SVG heat maps for their cells, colour
 * scale ends, legend, escaped target and well-formedness (python3's XML
 * parser, when python3 runs here).  Then the errors: create's bandwidth, a
 * metric with no points, a path in a missing directory and a rename onto a
 * directory, neither leaving a temporary file behind.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core.h"
#include "envelope.h"
#include "tap.h"

#define NPROCS	3
#define NSIZES	3
/* every character XML escapes */
#define TARGET		"/scratch/a&b<c>\"q'"
#define TARGET_XML	"/scratch/a&amp;b&lt;c&gt;&quot;q&apos;"
#define TABLE_HEAD	"envelope of " TARGET " (posix): processes 1, 2, 4; " \
			"sizes 1 KiB, 1 MiB, 16 MiB; 5 reps after 1 warm-up; " \
			"cache drop; fsync yes\n"
#define REMOTE_NOTE	"read-remote: not measured: on posix every file is " \
			"as near as any other (read-local stands for it)\n"
#define CSV_HEAD	"metric,procs,size,files,samples,ops_per_s_median," \
			"ops_per_s_min,ops_per_s_max,bytes_per_s_median," \
			"bytes_per_s_min,bytes_per_s_max"

static int proc_counts[NPROCS] = { 1, 2, 4 };
static uint64_t file_sizes[NSIZES] = { 1024, 1 << 20, 16 << 20 };
static struct gfsp_env_point points[2 * NPROCS * NSIZES];
static char tdir[256];

/*
 * The envelope: create and write at every (procs, size) but write at
 * (4, 16 MiB).  ops/s rise with procs and fall with size; flat: every
 * point has 1000 ops/s and 1 MB/s instead.
 */
static void
build(struct gfsp_envelope *e, int flat)
{
	struct gfsp_env_point *p;
	double ops, bytes;
	int m, i, j;

	memset(e, 0, sizeof(*e));
	e->target = (char *)TARGET;
	e->backend = (char *)"posix";
	e->remote_same_as_local = 1;
	e->method = (struct gfsp_env_method){ .reps = 5, .warmup = 1,
	    .cache = GFSP_ENV_CACHE_DROP, .fsync = 1 };
	e->nprocs = NPROCS;
	e->procs = proc_counts;
	e->nsizes = NSIZES;
	e->sizes = file_sizes;
	e->points = points;
	for (m = GFSP_ENV_WRITE; m >= GFSP_ENV_CREATE; m--)
		for (i = NPROCS - 1; i >= 0; i--)
			for (j = NSIZES - 1; j >= 0; j--) {
				if (m == GFSP_ENV_WRITE && i == NPROCS - 1 &&
				    j == NSIZES - 1)
					continue;
				p = &points[e->npoints++];
				ops = flat ? 1000 : 1000.0 * (m + 1) *
				      proc_counts[i] /
				      (1 + file_sizes[j] / 65536.0);
				bytes = m == GFSP_ENV_CREATE ? 0 : flat ? 1e6 :
					ops * (double)file_sizes[j];
				*p = (struct gfsp_env_point){ .metric = m,
				    .procs = proc_counts[i],
				    .size = file_sizes[j], .files = 64u >> j,
				    .ops_s = { ops * 0.9, ops, ops * 1.1 },
				    .bytes_s = { bytes * 0.9, bytes, bytes * 1.1 },
				    .nsamples = 5 };
			}
}

/* What print() writes for e, as one malloc'd string. */
static char *
capture(void (*print)(FILE *, const struct gfsp_envelope *),
	const struct gfsp_envelope *e)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	if (f == NULL)
		return strdup("");
	print(f, e);
	fclose(f);
	return s;
}

/* A whole file as a string, or NULL. */
static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;
	long n;

	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	s = calloc(1, (size_t)n + 1);
	if (s != NULL && fread(s, 1, (size_t)n, f) != (size_t)n) {
		free(s);
		s = NULL;
	}
	fclose(f);
	return s;
}

static int
count(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)) != NULL; s += strlen(what))
		n++;
	return n;
}

static int
near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fabs(b);
}

/* Files in tdir whose name holds ".tmp." */
static int
temp_files(void)
{
	struct dirent *d;
	DIR *dir = opendir(tdir);
	int n = 0;

	while (dir != NULL && (d = readdir(dir)) != NULL)
		n += strstr(d->d_name, ".tmp.") != NULL;
	if (dir != NULL)
		closedir(dir);
	return n;
}

/* 1: python3's XML parser reads file; 0: it does not; -1: no python3 */
static int
well_formed(const char *file)
{
	char *cmd;
	int st;

	if (asprintf(&cmd, "python3 -c 'import xml.etree.ElementTree as E,"
		     "sys; E.parse(sys.argv[1])' '%s'", file) < 0)
		return -1;
	st = system(cmd);
	free(cmd);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) >= 126)
		return -1;
	return WEXITSTATUS(st) == 0;
}

static void
check_xml(const char *file, const char *what)
{
	int wf = well_formed(file);

	if (wf < 0)
		skip("%s: python3 cannot be run here to parse the SVG", what);
	else
		ok(wf, "%s: well-formed XML", what);
}

static void
test_csv(const struct gfsp_envelope *e)
{
	const struct gfsp_env_point *p;
	char *csv = capture(gfsp_env_print_csv, e), *line, *save = NULL;
	char name[32];
	double v[6];
	unsigned long long size, files;
	int rows = 0, procs, prev = -1, key, m;
	size_t ns;

	line = strtok_r(csv, "\n", &save);
	ok(line != NULL && strcmp(line, CSV_HEAD) == 0, "csv: the header");
	group_start();
	while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
		rows++;
		if (!check(sscanf(line, "%31[^,],%d,%llu,%llu,%zu,%lg,%lg,%lg,"
				  "%lg,%lg,%lg", name, &procs, &size, &files,
				  &ns, &v[0], &v[1], &v[2], &v[3], &v[4],
				  &v[5]) == 11, "unreadable row '%s'", line))
			continue;
		m = gfsp_env_metric_parse(name);
		p = gfsp_env_find(e, m, procs, size);
		if (!check(p != NULL, "row of no point: '%s'", line))
			continue;
		/* metric, then procs, then size: a key that only grows */
		key = (m * 100 + procs) * 100 + (int)(log2((double)size));
		check(key > prev, "row out of order: '%s'", line);
		prev = key;
		check(files == p->files && ns == p->nsamples &&
		      near(v[0], p->ops_s.median) && near(v[1], p->ops_s.min) &&
		      near(v[2], p->ops_s.max) &&
		      near(v[3], p->bytes_s.median) &&
		      near(v[4], p->bytes_s.min) && near(v[5], p->bytes_s.max),
		      "numbers differ from the point's: '%s'", line);
	}
	ok(group_failures() == 0 && rows == (int)e->npoints,
	   "csv: %d rows of %zu points, sorted, with their numbers", rows,
	   e->npoints);
	free(csv);
}

static void
test_table(struct gfsp_envelope *e)
{
	char *t = capture(gfsp_env_print_table, e), *line, *save = NULL;
	const char *head, *col;
	size_t ops_col = 0;
	int lines = 0;

	ok(strncmp(t, TABLE_HEAD, strlen(TABLE_HEAD)) == 0,
	   "table: the header line");
	ok(strstr(t, "\n" REMOTE_NOTE) != NULL, "table: the read-remote note");
	ok(strstr(t, "\ncreate ") != NULL && strstr(t, "\nwrite ") != NULL,
	   "table: both metrics");
	head = strstr(t, "\nmetric ");
	if (head != NULL && (col = strstr(head, "ops/s median")) != NULL)
		ops_col = (size_t)(col - head - 1);
	group_start();
	for (line = strtok_r(t, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		lines++;
		if (lines <= 3)	/* header, note, column heads */
			continue;
		check(strlen(line) > ops_col && line[ops_col - 1] == ' ' &&
		      line[ops_col] != ' ', "ops/s not in its column: '%s'",
		      line);
		if (strncmp(line, "create ", 7) == 0)
			check(strcmp(line + strlen(line) - 3, "  -") == 0,
			      "create with a bandwidth: '%s'", line);
		else
			check(count(line, "/s") == 3 && strstr(line, "..") &&
			      strstr(line, " ["), "write without a bandwidth "
			      "median [min..max]: '%s'", line);
	}
	ok(group_failures() == 0 && ops_col > 0 && lines == 3 + (int)e->npoints,
	   "table: %d lines, a row per point, columns aligned, create without "
	   "bandwidth", lines);
	free(t);

	e->remote_same_as_local = 0;
	t = capture(gfsp_env_print_table, e);
	ok(strstr(t, "read-remote") == NULL,
	   "table: no read-remote note where it was measured");
	e->remote_same_as_local = 1;
	free(t);
}

/* tdir/name into buf */
static char *
in_tdir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tdir, name);
	return buf;
}

static void
test_heatmap(struct gfsp_envelope *e)
{
	struct gfsp_error err;
	char path[512], *svg;
	int rc;

	gfsp_error_clear(&err);
	rc = gfsp_env_heatmap(in_tdir(path, sizeof(path), "write.svg"), e,
			      GFSP_ENV_WRITE, 0, &err);
	ok(rc == 0, "heat map of write bandwidth: %s", rc ? err.msg : "ok");
	svg = slurp(path);
	ok(svg != NULL && strncmp(svg, "<?xml", 5) == 0 &&
	   strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"") &&
	   strstr(svg, "viewBox=\"0 0 "), "heat map: an SVG document");
	svg = svg != NULL ? svg : strdup("");
	ok(count(svg, "<rect class=\"cell\"") == NPROCS * NSIZES &&
	   count(svg, ">n/a</text>") == 1,
	   "heat map: %d cells, one of them n/a", count(svg, "class=\"cell\""));
	/* the extremes, (1, 1 KiB) and (4, 1 MiB), at the palette's ends */
	ok(count(svg, "fill=\"#440154\"") == 1 &&
	   count(svg, "fill=\"#fde725\"") == 1,
	   "heat map: the smallest and the largest rate at the scale's ends");
	ok(count(svg, "<rect class=\"legend\"") == 1 &&
	   count(svg, "<stop ") >= 8 && strstr(svg, "median, log scale"),
	   "heat map: a colour bar legend");
	ok(strstr(svg, "write bandwidth") && strstr(svg, TARGET_XML) &&
	   strstr(svg, "(posix)") && !strstr(svg, "a&b"),
	   "heat map: the title, with the target escaped");
	ok(strstr(svg, ">file size</text>") && strstr(svg, ">processes</text>") &&
	   strstr(svg, ">16 MiB</text>") && strstr(svg, ">4</text>") &&
	   strstr(svg, "MiB/s</text>"), "heat map: axes and rates labelled");
	check_xml(path, "heat map of write");
	free(svg);

	rc = gfsp_env_heatmap(in_tdir(path, sizeof(path), "create.svg"), e,
			      GFSP_ENV_CREATE, 1, &err);
	svg = rc == 0 ? slurp(path) : NULL;
	ok(svg != NULL && strstr(svg, "create throughput") &&
	   strstr(svg, " ops/s</text>") && !strstr(svg, "n/a"),
	   "heat map of create throughput: %s", rc ? err.msg : "ok");
	check_xml(path, "heat map of create");
	free(svg);

	/* every rate the same: the middle of the scale, no division by 0;
	 * and an existing file is replaced */
	build(e, 1);
	rc = gfsp_env_heatmap(in_tdir(path, sizeof(path), "write.svg"), e,
			      GFSP_ENV_WRITE, 0, &err);
	svg = rc == 0 ? slurp(path) : NULL;
	ok(svg != NULL && count(svg, "fill=\"#21908c\"") == NPROCS * NSIZES - 1
	   && !strstr(svg, "nan") && !strstr(svg, "inf"),
	   "heat map of one rate everywhere: %s", rc ? err.msg : "ok");
	check_xml(path, "heat map of one rate");
	free(svg);
	ok(temp_files() == 0, "heat maps: no temporary file left");
}

static void
test_errors(const struct gfsp_envelope *e)
{
	struct gfsp_error err;
	struct stat st;
	char path[512];
	int rc;

	gfsp_error_clear(&err);
	rc = gfsp_env_heatmap(in_tdir(path, sizeof(path), "c.svg"), e,
			      GFSP_ENV_CREATE, 0, &err);
	ok(rc == GFSP_EINVAL && strstr(err.msg, "create") &&
	   strstr(err.msg, "no bandwidth") && stat(path, &st) != 0,
	   "create's bandwidth: %s", err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_env_heatmap(path, e, GFSP_ENV_READ_SHARED, 1, &err);
	ok(rc == GFSP_EINVAL && strstr(err.msg, "no read-shared points") &&
	   strstr(err.msg, TARGET) && stat(path, &st) != 0,
	   "a metric with no points: %s", err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_env_heatmap(in_tdir(path, sizeof(path), "missing/w.svg"), e,
			      GFSP_ENV_WRITE, 0, &err);
	ok(rc == GFSP_ENOENT && strstr(err.msg, path) &&
	   strstr(err.msg, "No such file or directory"),
	   "a path in a missing directory: %s", err.msg);
	/* the temporary file is written, then cannot replace a directory */
	gfsp_error_clear(&err);
	if (mkdir(in_tdir(path, sizeof(path), "dir.svg"), 0700) != 0)
		diag("mkdir %s: %m", path);
	rc = gfsp_env_heatmap(path, e, GFSP_ENV_WRITE, 0, &err);
	ok(rc != 0 && strstr(err.msg, "cannot rename") &&
	   strstr(err.msg, path) && stat(path, &st) == 0 &&
	   S_ISDIR(st.st_mode) && temp_files() == 0,
	   "a rename onto a directory fails, no temporary file left: %s",
	   err.msg);
	rmdir(path);
}

/* A rate for people: as a double all the way, "-" for no number (issue
 * 32: a cast to an integer printed 1e300 B/s and 0.5 B/s as "0 B/s"). */
static void
test_format_rate(void)
{
	static const struct {
		double v;
		int bytes;
		const char *want;
	} c[] = {
		{ 0, 1, "0 B/s" }, { 0.5, 1, "0.5 B/s" }, { 1e-6, 0, "1e-06/s" },
		{ 999.4, 1, "999 B/s" }, { 999.5, 1, "0.976 KiB/s" },
		{ 52300, 0, "52.3k/s" }, { 1e18, 1, "888 PiB/s" },
		{ 0x1p64, 1, "16 EiB/s" }, { 1e300, 1, "8.67e+281 EiB/s" },
		{ 1e300, 0, "1e+282E/s" }, { INFINITY, 1, "-" }, { NAN, 1, "-" },
		{ -1, 0, "-" }, { -INFINITY, 0, "-" },
	};
	char buf[48];
	size_t i;

	for (i = 0; i < GFSP_ARRAY_SIZE(c); i++)
		if (strcmp(gfsp_env_format_rate(c[i].v, c[i].bytes, "/s", buf,
		    sizeof(buf)), c[i].want) != 0)
			break;
	ok(i == GFSP_ARRAY_SIZE(c), "rates for people, 0.5 to 1e300, inf and "
	   "nan: %s", i < GFSP_ARRAY_SIZE(c) ? buf : "as they are");
}

/*
 * A heat map of rates 1e-300, 1 and 1e300 (an envelope in memory, where
 * no reader bounded them): the colour scale spans them by the difference
 * of their logarithms (hi / lo overflowed to infinity, which put every
 * cell but the largest at the bottom of the scale and made the number of
 * ticks an int of infinity).
 */
static void
test_heatmap_extremes(void)
{
	static int procs[1] = { 1 };
	static uint64_t sizes[3] = { 1, 2, 3 };
	static const double rate[3] = { 1e-300, 1, 1e300 };
	struct gfsp_env_point pts[3];
	struct gfsp_envelope e;
	struct gfsp_error err;
	char path[512], *svg;
	int i, rc;

	memset(&e, 0, sizeof(e));
	e.target = (char *)"/far";
	e.backend = (char *)"posix";
	e.nprocs = 1;
	e.procs = procs;
	e.nsizes = 3;
	e.sizes = sizes;
	e.npoints = 3;
	e.points = pts;
	for (i = 0; i < 3; i++)
		pts[i] = (struct gfsp_env_point){ .metric = GFSP_ENV_WRITE,
		    .procs = 1, .size = sizes[i], .ops_s = { 1, 1, 1 },
		    .bytes_s = { rate[i], rate[i], rate[i] } };
	gfsp_error_clear(&err);
	rc = gfsp_env_heatmap(in_tdir(path, sizeof(path), "far.svg"), &e,
			      GFSP_ENV_WRITE, 0, &err);
	svg = rc == 0 ? slurp(path) : NULL;
	ok(svg != NULL && count(svg, "fill=\"#440154\"") == 1 &&
	   count(svg, "fill=\"#21908c\"") == 1 &&
	   count(svg, "fill=\"#fde725\"") == 1 && !strstr(svg, "nan") &&
	   !strstr(svg, "inf"), "heat map of 1e-300, 1 and 1e300 B/s: the "
	   "bottom, the middle and the top of the scale: %s",
	   rc ? err.msg : "ok");
	check_xml(path, "heat map of 1e-300 to 1e300");
	free(svg);
}

/* Remove tdir and what the tests left in it. */
static void
clean(void)
{
	char path[512];
	struct dirent *d;
	DIR *dir = opendir(tdir);

	while (dir != NULL && (d = readdir(dir)) != NULL)
		if (d->d_name[0] != '.')
			unlink(in_tdir(path, sizeof(path), d->d_name));
	if (dir != NULL)
		closedir(dir);
	rmdir(tdir);
}

int
main(void)
{
	struct gfsp_envelope e;

	snprintf(tdir, sizeof(tdir), "%s/test_envout.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tdir) == NULL) {
		ok(0, "mkdtemp: %m");
		return done_testing();
	}
	build(&e, 0);
	test_csv(&e);
	test_table(&e);
	test_errors(&e);
	test_heatmap(&e);	/* it makes e flat */
	test_format_rate();
	test_heatmap_extremes();
	clean();
	return done_testing();
}
