/*
 * envload.c - reading an MTC envelope back (envelope.h): its JSON
 * document checked member by member into struct gfsp_envelope, from a
 * json-c object or a file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <json-c/json.h>

#include "core.h"
#include "envelope.h"

/* ------------------------------------------------- reading JSON */

/*
 * A document being read.  Like the builders above, the readers carry on
 * after a failure and do nothing more: the first error is kept in rc and
 * every later call returns at once (0, NULL), so a reader is a flat list
 * of members.  A message names the file and, inside a point, the point:
 * its index in "points" (from 0, as jq counts) and, once read, its
 * metric, process count and size:
 *   'env.json': point 3 (write, 4 procs, 1024 bytes): ops_per_s.median
 *   is missing
 * Members are named by their path ("method.", "samples[2].") given as
 * ctx.  A null member counts as missing.
 */
struct rd {
	const char *name;
	char at[128];
	struct gfsp_error *err;
	int rc;
};

static void __attribute__((format(printf, 3, 4)))
rd_fail(struct rd *r, int code, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	if (r->rc != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	r->rc = gfsp_error_set(r->err, code, "'%s': %s%s", r->name, r->at,
	    what);
}

static void
rd_oom(struct rd *r)
{
	if (r->rc == 0)
		r->rc = gfsp_error_set(r->err, GFSP_ENOMEM, "out of memory");
}

/* n + 1 zeroed elements (never a NULL for none) */
static void *
rd_alloc(struct rd *r, size_t n, size_t size)
{
	void *p = r->rc == 0 ? calloc(n + 1, size) : NULL;

	if (p == NULL)
		rd_oom(r);
	return p;
}

/* member key of o, of the type (json_type_double: any number), or NULL:
 * absent (an error unless optional) or of another type (an error) */
static json_object *
rd_get(struct rd *r, json_object *o, const char *ctx, const char *key,
       json_type type, int optional)
{
	json_object *x = NULL;

	if (r->rc != 0)
		return NULL;
	if (!json_object_object_get_ex(o, key, &x) || x == NULL) {
		if (!optional)
			rd_fail(r, GFSP_EINVAL, "%s%s is missing", ctx, key);
		return NULL;
	}
	if (json_object_is_type(x, type) || (type == json_type_double &&
	    json_object_is_type(x, json_type_int)))
		return x;
	rd_fail(r, GFSP_EINVAL, "%s%s is not %s", ctx, key,
	    type == json_type_double ? "a number" :
	    type == json_type_int ? "a whole number" :
	    type == json_type_string ? "a string" :
	    type == json_type_boolean ? "true or false" :
	    type == json_type_array ? "an array" : "an object");
	return NULL;
}

/* x (named ctx+key) as a whole number >= 0; 0 when x is NULL.  json-c
 * keeps a number above INT64_MAX as unsigned, below 0 as signed. */
static uint64_t
rd_u64_of(struct rd *r, json_object *x, const char *ctx, const char *key)
{
	if (r->rc != 0 || x == NULL)
		return 0;
	if (!json_object_is_type(x, json_type_int))
		rd_fail(r, GFSP_EINVAL, "%s%s is not a whole number", ctx, key);
	else if (json_object_get_int64(x) < 0)
		rd_fail(r, GFSP_EINVAL, "%s%s is negative", ctx, key);
	return r->rc == 0 ? json_object_get_uint64(x) : 0;
}

static uint64_t
rd_u64(struct rd *r, json_object *o, const char *ctx, const char *key)
{
	return rd_u64_of(r, rd_get(r, o, ctx, key, json_type_int, 0), ctx,
	    key);
}

static int
rd_int(struct rd *r, json_object *o, const char *ctx, const char *key,
       int min)
{
	uint64_t u = rd_u64(r, o, ctx, key);

	if (r->rc == 0 && (u < (uint64_t)min || u > INT_MAX))
		rd_fail(r, GFSP_EINVAL, "%s%s is %" PRIu64 ", not in [%d, %d]",
		    ctx, key, u, min, INT_MAX);
	return r->rc == 0 ? (int)u : 0;
}

/* x as a finite number >= 0; 0 when x is NULL */
static double
rd_num_of(struct rd *r, json_object *x, const char *ctx, const char *key)
{
	double d = r->rc == 0 && x != NULL ? json_object_get_double(x) : 0;

	if (!isfinite(d))
		rd_fail(r, GFSP_EINVAL, "%s%s is not finite", ctx, key);
	else if (d < 0)
		rd_fail(r, GFSP_EINVAL, "%s%s is negative", ctx, key);
	return r->rc == 0 ? d : 0;
}

static double
rd_num(struct rd *r, json_object *o, const char *ctx, const char *key)
{
	return rd_num_of(r, rd_get(r, o, ctx, key, json_type_double, 0), ctx,
	    key);
}

/*
 * A rate: 0, or within [GFSP_ENV_RATE_MIN, GFSP_ENV_RATE_MAX].  Finite is
 * not enough: 1e300 bytes/s overflows what is computed from it, and
 * 1e-300 ops/s makes a prediction of 1e300 s that a round count turns
 * into infinity.
 */
static double
rd_rate(struct rd *r, json_object *o, const char *ctx, const char *key)
{
	double d = rd_num(r, o, ctx, key);

	if (r->rc == 0 && d != 0 && !(d >= GFSP_ENV_RATE_MIN &&
	    d <= GFSP_ENV_RATE_MAX))
		rd_fail(r, GFSP_EINVAL, "%s%s is %g: a rate is 0 or within "
		    "[%g, %g]", ctx, key, d, GFSP_ENV_RATE_MIN,
		    GFSP_ENV_RATE_MAX);
	return r->rc == 0 ? d : 0;
}

/* the length of array a (named what), failing above max: a limit checked
 * before anything is allocated for its members (envelope.h) */
static size_t
rd_len(struct rd *r, json_object *a, const char *what, size_t max)
{
	size_t n = a != NULL && r->rc == 0 ? json_object_array_length(a) : 0;

	if (n > max) {
		rd_fail(r, GFSP_EINVAL, "%s has %zu members, more than %zu (the "
		    "most a reader takes)", what, n, max);
		n = 0;
	}
	return n;
}

/* a copy of the string, or NULL */
static char *
rd_str(struct rd *r, json_object *o, const char *ctx, const char *key,
       int optional)
{
	json_object *x = rd_get(r, o, ctx, key, json_type_string, optional);
	char *s = x != NULL ? strdup(json_object_get_string(x)) : NULL;

	if (x != NULL && s == NULL)
		rd_oom(r);
	return s;
}

static int
rd_bool(struct rd *r, json_object *o, const char *ctx, const char *key)
{
	json_object *x = rd_get(r, o, ctx, key, json_type_boolean, 0);

	return x != NULL && json_object_get_boolean(x);
}

static void
rd_stat(struct rd *r, json_object *o, const char *key,
	struct gfsp_env_stat *s)
{
	json_object *x = rd_get(r, o, "", key, json_type_object, 0);
	char ctx[32];

	snprintf(ctx, sizeof(ctx), "%s.", key);
	s->min = rd_rate(r, x, ctx, "min");
	s->median = rd_rate(r, x, ctx, "median");
	s->max = rd_rate(r, x, ctx, "max");
	if (r->rc == 0 && !(s->min <= s->median && s->median <= s->max))
		rd_fail(r, GFSP_EINVAL, "%s: min, median and max are not in "
		    "order", key);
}

static void
rd_samples(struct rd *r, json_object *o, struct gfsp_env_point *p)
{
	json_object *a = rd_get(r, o, "", "samples", json_type_array, 1), *x;
	char ctx[48];
	size_t i;

	if (a == NULL)
		return;		/* none kept */
	p->nsamples = rd_len(r, a, "samples", GFSP_ENV_SAMPLES_MAX);
	p->samples = rd_alloc(r, p->nsamples, sizeof(*p->samples));
	if (p->samples == NULL)
		p->nsamples = 0;
	for (i = 0; i < p->nsamples && r->rc == 0; i++) {
		x = json_object_array_get_idx(a, i);
		snprintf(ctx, sizeof(ctx), "samples[%zu].", i);
		if (!json_object_is_type(x, json_type_object))
			rd_fail(r, GFSP_EINVAL, "samples[%zu] is not an object",
			    i);
		p->samples[i].seconds = rd_num(r, x, ctx, "seconds");
		p->samples[i].ops = rd_u64(r, x, ctx, "ops");
		p->samples[i].bytes = rd_u64(r, x, ctx, "bytes");
	}
}

/* messages of point p from now on name it by its index and key */
static void
rd_at_point(struct rd *r, size_t index, const struct gfsp_env_point *p)
{
	snprintf(r->at, sizeof(r->at), "point %zu (%s, %d procs, %" PRIu64
	    " bytes): ", index, gfsp_env_metric_name(p->metric), p->procs,
	    p->size);
}

static void
rd_point(struct rd *r, json_object *o, size_t index, struct gfsp_env_point *p)
{
	json_object *x;

	snprintf(r->at, sizeof(r->at), "point %zu: ", index);
	if (!json_object_is_type(o, json_type_object))
		rd_fail(r, GFSP_EINVAL, "not an object");
	x = rd_get(r, o, "", "metric", json_type_string, 0);
	p->metric = x != NULL ? gfsp_env_metric_parse(json_object_get_string(x))
	    : 0;
	if (p->metric < 0)
		rd_fail(r, GFSP_EINVAL, "unknown metric '%s'",
		    json_object_get_string(x));
	p->procs = rd_int(r, o, "", "procs", 1);
	p->size = rd_u64(r, o, "", "size");
	if (r->rc == 0)
		rd_at_point(r, index, p);
	p->files = rd_u64(r, o, "", "files");
	rd_stat(r, o, "ops_per_s", &p->ops_s);
	rd_stat(r, o, "bytes_per_s", &p->bytes_s);
	rd_samples(r, o, p);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The list "key" (sizes or procs): strictly ascending, each at least min,
 * at most max long, holding vals[n] (each point's value).  Absent, it is
 * the distinct values of vals.  *len: its length.
 */
static uint64_t *
rd_list(struct rd *r, json_object *doc, const char *key, uint64_t min,
	size_t max, const uint64_t *vals, size_t n, size_t *len)
{
	json_object *a = rd_get(r, doc, "", key, json_type_array, 1);
	size_t i, k = a != NULL ? rd_len(r, a, key, max) : n;
	uint64_t *v = rd_alloc(r, k, sizeof(*v));
	char ctx[32];

	*len = 0;
	if (v == NULL)
		return NULL;
	if (a == NULL) {
		memcpy(v, vals, n * sizeof(*v));
		qsort(v, n, sizeof(*v), cmp_u64);
		for (i = k = 0; i < n; i++)
			if (k == 0 || v[k - 1] != v[i])
				v[k++] = v[i];
		if (k > max)
			rd_fail(r, GFSP_EINVAL, "the points have %zu different "
			    "%s, more than %zu (the most a reader takes)", k,
			    key, max);
	}
	for (i = 0; a != NULL && i < k && r->rc == 0; i++) {
		snprintf(ctx, sizeof(ctx), "%s[%zu]", key, i);
		v[i] = rd_u64_of(r, json_object_array_get_idx(a, i), ctx, "");
		if (json_object_array_get_idx(a, i) == NULL)
			rd_fail(r, GFSP_EINVAL, "%s is null", ctx);
		else if (r->rc == 0 && v[i] < min)
			rd_fail(r, GFSP_EINVAL, "%s is less than %" PRIu64,
			    ctx, min);
		else if (r->rc == 0 && i > 0 && v[i] <= v[i - 1])
			rd_fail(r, GFSP_EINVAL, "%s is not ascending", key);
	}
	for (i = 0; i < n && r->rc == 0; i++)
		if (bsearch(&vals[i], v, k, sizeof(*v), cmp_u64) == NULL)
			rd_fail(r, GFSP_EINVAL, "point %zu: %" PRIu64 " is not "
			    "in %s", i, vals[i], key);
	*len = k;
	return v;
}

/* (metric, procs, size) of two points: the same or in which order */
static int
cmp_key(const struct gfsp_env_point *x, const struct gfsp_env_point *y)
{
	if (x->metric != y->metric)
		return x->metric < y->metric ? -1 : 1;
	if (x->procs != y->procs)
		return x->procs < y->procs ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* by key, then by place in the document */
static int
cmp_key_place(const void *a, const void *b)
{
	const struct gfsp_env_point *x, *y;
	int c;

	x = *(const struct gfsp_env_point *const *)a;
	y = *(const struct gfsp_env_point *const *)b;
	c = cmp_key(x, y);
	return c != 0 ? c : x < y ? -1 : x > y;
}

/*
 * Interpolation needs one point per (metric, procs, size).  Sorted by key,
 * points of the same key are neighbours, so that a document at the limit
 * of points is checked in n log n (comparing each point with those before
 * it would take some 100 s there).  The duplicate named is the first in the
 * document, as the same as the first point of its key.
 */
static void
rd_unique(struct rd *r, struct gfsp_envelope *e)
{
	const struct gfsp_env_point **v, *dup = NULL, *first = NULL;
	size_t i, g;

	if (r->rc != 0 || e->npoints < 2)
		return;
	v = rd_alloc(r, e->npoints, sizeof(*v));
	if (v == NULL)
		return;
	for (i = 0; i < e->npoints; i++)
		v[i] = &e->points[i];
	qsort(v, e->npoints, sizeof(*v), cmp_key_place);
	for (g = 0, i = 1; i < e->npoints; i++) {
		if (cmp_key(v[g], v[i]) != 0)
			g = i;
		else if (dup == NULL || v[i] < dup)
			dup = v[i], first = v[g];
	}
	if (dup != NULL) {
		rd_at_point(r, (size_t)(dup - e->points), dup);
		rd_fail(r, GFSP_EINVAL, "the same as point %zu",
		    (size_t)(first - e->points));
	}
	free(v);
}

/* sizes and procs, checked against the points or derived from them */
static void
rd_grid(struct rd *r, json_object *doc, struct gfsp_envelope *e)
{
	uint64_t *vals = rd_alloc(r, e->npoints, sizeof(*vals)), *procs;
	size_t i;

	for (i = 0; vals != NULL && i < e->npoints; i++)
		vals[i] = e->points[i].size;
	e->sizes = rd_list(r, doc, "sizes", 0, GFSP_ENV_SIZES_MAX, vals,
	    e->npoints, &e->nsizes);
	for (i = 0; vals != NULL && i < e->npoints; i++)
		vals[i] = (uint64_t)e->points[i].procs;
	procs = rd_list(r, doc, "procs", 1, GFSP_ENV_PROCS_MAX, vals,
	    e->npoints, &e->nprocs);
	e->procs = rd_alloc(r, e->nprocs, sizeof(*e->procs));
	for (i = 0; r->rc == 0 && i < e->nprocs; i++) {
		if (procs[i] > INT_MAX)
			rd_fail(r, GFSP_EINVAL, "procs[%zu] is too large", i);
		e->procs[i] = (int)procs[i];
	}
	free(procs);
	free(vals);
}

static void
rd_head(struct rd *r, json_object *doc, struct gfsp_envelope *e)
{
	struct gfsp_env_method *m = &e->method;
	const char *format = json_object_is_type(doc, json_type_object) ?
	    gfsp_json_str(doc, "format") : NULL;
	json_object *t, *x;
	uint64_t version;

	if (format == NULL)
		rd_fail(r, GFSP_EINVAL, "not an envelope (no \"format\")");
	else if (strcmp(format, GFSP_ENV_FORMAT) != 0)
		rd_fail(r, GFSP_EINVAL, "not an envelope (format '%s')",
		    format);
	/* format_version; "version" before the common members took that
	 * name for the package's version) */
	version = rd_u64(r, doc, "", json_object_object_get_ex(doc,
	    "format_version", NULL) ? "format_version" : "version");
	if (r->rc == 0 && version != GFSP_ENV_VERSION)
		rd_fail(r, GFSP_EVERSION, "envelope version %" PRIu64 ", this "
		    "build reads version %d", version, GFSP_ENV_VERSION);
	e->started = rd_str(r, doc, "", "started", 1);
	e->seconds = rd_num_of(r, rd_get(r, doc, "", "seconds",
	    json_type_double, 1), "", "seconds");
	e->machine = json_object_get(rd_get(r, doc, "", "machine",
	    json_type_object, 1));

	t = rd_get(r, doc, "", "target", json_type_object, 0);
	e->target = rd_str(r, t, "target.", "path", 0);
	e->backend = rd_str(r, t, "target.", "backend", 0);
	e->remote_same_as_local = rd_bool(r, t, "target.",
	    "remote_same_as_local");

	t = rd_get(r, doc, "", "method", json_type_object, 0);
	m->reps = rd_int(r, t, "method.", "reps", 0);
	m->warmup = rd_int(r, t, "method.", "warmup", 0);
	m->work = rd_u64(r, t, "method.", "work");
	m->max_files = rd_u64(r, t, "method.", "max_files");
	m->min_files = rd_u64(r, t, "method.", "min_files");
	m->buffer = rd_u64(r, t, "method.", "buffer");
	x = rd_get(r, t, "method.", "cache", json_type_string, 0);
	m->cache = x == NULL ? 0 : gfsp_env_cache_parse(
	    json_object_get_string(x));
	if (m->cache < 0)
		rd_fail(r, GFSP_EINVAL, "method.cache '%s' is not keep, drop "
		    "or direct", json_object_get_string(x));
	m->fsync = rd_bool(r, t, "method.", "fsync");
	/* optional: envelopes measured without calibration lack it */
	x = rd_get(r, t, "method.", "min_time", json_type_double, 1);
	m->min_time = x != NULL ? rd_num_of(r, x, "method.", "min_time") : 0;
}

int
gfsp_env_from_json(json_object *doc, const char *name,
		   struct gfsp_envelope **out, struct gfsp_error *err)
{
	struct rd r = { .name = name, .at = "", .err = err, .rc = 0 };
	struct gfsp_envelope *e = rd_alloc(&r, 0, sizeof(*e));
	json_object *a;
	size_t i, n;

	*out = NULL;
	if (e == NULL)
		return r.rc;
	rd_head(&r, doc, e);
	a = rd_get(&r, doc, "", "points", json_type_array, 0);
	n = rd_len(&r, a, "points", GFSP_ENV_POINTS_MAX);
	e->points = rd_alloc(&r, n, sizeof(*e->points));
	e->npoints = e->points != NULL ? n : 0;
	for (i = 0; i < e->npoints && r.rc == 0; i++)
		rd_point(&r, json_object_array_get_idx(a, i), i,
		    &e->points[i]);
	rd_unique(&r, e);
	r.at[0] = '\0';
	rd_grid(&r, doc, e);
	if (r.rc != 0) {
		/* points not reached are zeroed, free as they are */
		gfsp_envelope_free(e);
		return r.rc;
	}
	*out = e;
	return 0;
}

/*
 * The text of an envelope file, NUL-terminated, into *out (*len bytes).
 * A file larger than GFSP_ENV_FILE_MAX is refused before json-c sees it:
 * a regular file by its size, unread, however large or sparse; anything
 * else (a pipe) once one byte past the limit has been read.
 */
static int
env_read(int fd, const char *path, char **out, size_t *len,
	 struct gfsp_error *err)
{
	const size_t limit = (size_t)GFSP_ENV_FILE_MAX + 1;
	size_t n = 0, cap;
	struct stat st;
	char *buf, *b, max[32];
	ssize_t got;

	*out = NULL;
	gfsp_format_size(GFSP_ENV_FILE_MAX, max, sizeof(max));
	if (fstat(fd, &st) != 0)
		return gfsp_error_errno(err, errno, "cannot stat '%s'", path);
	if (S_ISREG(st.st_mode) && st.st_size > (off_t)GFSP_ENV_FILE_MAX)
		return gfsp_error_set(err, GFSP_EINVAL, "'%s' is larger than an "
		    "envelope can be (%s at most): refused unread", path, max);
	/* cap - 1 bytes of text, and the NUL */
	cap = (S_ISREG(st.st_mode) ? (size_t)st.st_size : 0) + 4096;
	cap = GFSP_MIN(cap, limit) + 1;
	if ((buf = malloc(cap)) == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "cannot read '%s': out "
		    "of memory", path);
	for (;;) {
		if (n == cap - 1) {
			if (n >= limit)
				break;
			cap = GFSP_MIN(2 * n, limit) + 1;
			if ((b = realloc(buf, cap)) == NULL) {
				free(buf);
				return gfsp_error_set(err, GFSP_ENOMEM, "cannot "
				    "read '%s': out of memory", path);
			}
			buf = b;
		}
		got = read(fd, buf + n, cap - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			free(buf);
			return gfsp_error_errno(err, errno, "cannot read '%s'",
			    path);
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	if (n > GFSP_ENV_FILE_MAX) {
		free(buf);
		return gfsp_error_set(err, GFSP_EINVAL, "'%s' is larger than an "
		    "envelope can be (%s at most): refused once that much was "
		    "read", path, max);
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int
gfsp_env_load(const char *path, struct gfsp_envelope **out,
	      struct gfsp_error *err)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	json_object *doc;
	const char *why;
	char *text;
	size_t len = 0;
	int fd, rc;

	*out = NULL;
	/* opened here rather than by json_object_from_file, so that a
	 * missing file is ENOENT with its errno, not a parse error, and a
	 * file too large is refused before it is read.  The open does not
	 * wait for a FIFO's writer (one someone put at the name: the read
	 * then finds nothing); a pipe given as the file (-e <(...)) is read
	 * as it comes */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return gfsp_error_errno(err, errno, "cannot open '%s'", path);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	rc = env_read(fd, path, &text, &len, err);
	close(fd);
	if (rc != 0)
		return rc;
	tok = json_tokener_new();
	if (tok == NULL) {
		free(text);
		return gfsp_error_set(err, GFSP_ENOMEM, "cannot read '%s': out "
		    "of memory", path);
	}
	/* len <= GFSP_ENV_FILE_MAX: an int */
	doc = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	json_tokener_free(tok);
	free(text);
	if (doc == NULL) {
		/* "continue": the tokener wanted more text */
		why = jerr == json_tokener_continue ? "it ends too early" :
		    json_tokener_error_desc(jerr);
		return gfsp_error_set(err, GFSP_EINVAL, "'%s' is not valid "
		    "JSON: %s", path, why);
	}
	rc = gfsp_env_from_json(doc, path, out, err);
	json_object_put(doc);
	return rc;
}
