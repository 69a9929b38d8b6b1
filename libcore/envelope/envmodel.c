/*
 * envmodel.c - the MTC envelope (envelope.h): names, statistics, the JSON
 * document, interpolation between the measured points, and the seed's
 * formulas (1)-(3) that predict the I/O time of a many-task stage.
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

#define ENV_FORMAT	"gfsplit-envelope"
#define ENV_VERSION	1

/* ------------------------------------------------------------ general */

static const char *const metric_names[GFSP_ENV_NMETRIC] = {
	"create", "write", "read-local", "read-remote", "read-shared"
};

static const char *const cache_names[] = { "keep", "drop", "direct" };

static int
name_index(const char *const *names, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return (int)i;
	return -1;
}

const char *
gfsp_env_metric_name(int metric)
{
	return metric >= 0 && metric < GFSP_ENV_NMETRIC ?
	    metric_names[metric] : "?";
}

int
gfsp_env_metric_parse(const char *name)
{
	return name_index(metric_names, GFSP_ENV_NMETRIC, name);
}

const char *
gfsp_env_cache_name(int cache)
{
	return cache >= 0 && (size_t)cache < GFSP_ARRAY_SIZE(cache_names) ?
	    cache_names[cache] : "?";
}

uint64_t
gfsp_env_files_for(const struct gfsp_env_method *m, uint64_t size)
{
	uint64_t n = m->work / (size > 0 ? size : 1);

	/* min_files last: a point always has files to time, even when the
	 * two bounds disagree */
	if (n > m->max_files)
		n = m->max_files;
	if (n < m->min_files)
		n = m->min_files;
	return n;
}

void
gfsp_envelope_free(struct gfsp_envelope *e)
{
	size_t i;

	if (e == NULL)
		return;
	for (i = 0; i < e->npoints; i++)
		free(e->points[i].samples);
	free(e->points);
	free(e->sizes);
	free(e->procs);
	free(e->target);
	free(e->backend);
	free(e->started);
	json_object_put(e->machine);
	free(e);
}

const struct gfsp_env_point *
gfsp_env_find(const struct gfsp_envelope *e, int metric, int procs,
	      uint64_t size)
{
	size_t i;

	for (i = 0; i < e->npoints; i++)
		if (e->points[i].metric == metric &&
		    e->points[i].procs == procs && e->points[i].size == size)
			return &e->points[i];
	return NULL;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct gfsp_env_stat
gfsp_env_stat_of(double *v, size_t n)
{
	struct gfsp_env_stat s = { 0, 0, 0 };

	if (n == 0)
		return s;
	qsort(v, n, sizeof(*v), cmp_double);
	s.min = v[0];
	s.max = v[n - 1];
	s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	return s;
}

/* ------------------------------------------------- writing JSON */

/*
 * json-c answers NULL when out of memory.  The builders carry on and
 * remember it in *oom, so that one check at the end covers a document;
 * a value that could not be added is released.
 */
static void
put(json_object *o, const char *key, json_object *v, int *oom)
{
	if (o == NULL || v == NULL || json_object_object_add(o, key, v) != 0) {
		json_object_put(v);
		*oom = 1;
	}
}

static void
push(json_object *a, json_object *v, int *oom)
{
	if (a == NULL || v == NULL || json_object_array_add(a, v) != 0) {
		json_object_put(v);
		*oom = 1;
	}
}

json_object *
gfsp_env_stat_json(const struct gfsp_env_stat *s, int *oom)
{
	json_object *o = json_object_new_object();

	put(o, "min", json_object_new_double(s->min), oom);
	put(o, "median", json_object_new_double(s->median), oom);
	put(o, "max", json_object_new_double(s->max), oom);
	return o;
}

static json_object *
point_json(const struct gfsp_env_point *p, int *oom)
{
	json_object *o = json_object_new_object(), *a, *x;
	size_t i;

	put(o, "metric", json_object_new_string(
	    gfsp_env_metric_name(p->metric)), oom);
	put(o, "procs", json_object_new_int(p->procs), oom);
	put(o, "size", json_object_new_uint64(p->size), oom);
	put(o, "files", json_object_new_uint64(p->files), oom);
	put(o, "ops_per_s", gfsp_env_stat_json(&p->ops_s, oom), oom);
	put(o, "bytes_per_s", gfsp_env_stat_json(&p->bytes_s, oom), oom);
	if (p->samples == NULL)
		return o;
	a = json_object_new_array();
	for (i = 0; i < p->nsamples; i++) {
		x = json_object_new_object();
		put(x, "seconds", json_object_new_double(p->samples[i].seconds),
		    oom);
		put(x, "ops", json_object_new_uint64(p->samples[i].ops), oom);
		put(x, "bytes", json_object_new_uint64(p->samples[i].bytes),
		    oom);
		push(a, x, oom);
	}
	put(o, "samples", a, oom);
	return o;
}

json_object *
gfsp_env_to_json(const struct gfsp_envelope *e)
{
	const struct gfsp_env_method *m = &e->method;
	json_object *o, *t, *a, *x;
	int oom = 0, ranks = 0;
	int64_t bytes = 0;
	size_t i, k;

	/* the common members: no src or dest but a target; ranks the world
	 * size the sweep ran on; bytes what its timed runs moved */
	if (e->machine != NULL &&
	    json_object_object_get_ex(e->machine, "ranks", &x))
		ranks = json_object_get_int(x);
	for (i = 0; i < e->nprocs; i++)
		ranks = GFSP_MAX(ranks, e->procs[i]);
	for (i = 0; i < e->npoints; i++)
		for (k = 0; k < e->points[i].nsamples; k++)
			bytes += (int64_t)e->points[i].samples[k].bytes;
	o = gfsp_json_doc("envelope-bench", NULL, NULL, ranks, e->seconds,
			 bytes);
	if (o == NULL)
		return NULL;
	put(o, "mode", json_object_new_string("measure"), &oom);
	put(o, "format", json_object_new_string(ENV_FORMAT), &oom);
	put(o, "format_version", json_object_new_int(ENV_VERSION), &oom);
	put(o, "tool", json_object_new_string("envelope-bench "
	    GFSPLIT_VERSION), &oom);
	if (e->started != NULL)
		put(o, "started", json_object_new_string(e->started), &oom);
	if (e->machine != NULL)
		put(o, "machine", json_object_get(e->machine), &oom);

	t = json_object_new_object();
	put(t, "path", json_object_new_string(e->target ? e->target : ""),
	    &oom);
	put(t, "backend", json_object_new_string(e->backend ? e->backend :
	    ""), &oom);
	put(t, "remote_same_as_local", json_object_new_boolean(
	    e->remote_same_as_local), &oom);
	put(o, "target", t, &oom);

	t = json_object_new_object();
	put(t, "reps", json_object_new_int(m->reps), &oom);
	put(t, "warmup", json_object_new_int(m->warmup), &oom);
	put(t, "work", json_object_new_uint64(m->work), &oom);
	put(t, "max_files", json_object_new_uint64(m->max_files), &oom);
	put(t, "min_files", json_object_new_uint64(m->min_files), &oom);
	put(t, "buffer", json_object_new_uint64(m->buffer), &oom);
	put(t, "cache", json_object_new_string(gfsp_env_cache_name(m->cache)),
	    &oom);
	put(t, "fsync", json_object_new_boolean(m->fsync), &oom);
	put(t, "min_time", json_object_new_double(m->min_time), &oom);
	put(o, "method", t, &oom);

	/* empty lists are left out: a reader derives them from the points */
	if (e->nsizes > 0) {
		a = json_object_new_array();
		for (i = 0; i < e->nsizes; i++)
			push(a, json_object_new_uint64(e->sizes[i]), &oom);
		put(o, "sizes", a, &oom);
	}
	if (e->nprocs > 0) {
		a = json_object_new_array();
		for (i = 0; i < e->nprocs; i++)
			push(a, json_object_new_int(e->procs[i]), &oom);
		put(o, "procs", a, &oom);
	}
	a = json_object_new_array();
	for (i = 0; i < e->npoints; i++)
		push(a, point_json(&e->points[i], &oom), &oom);
	put(o, "points", a, &oom);
	if (oom) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

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
	else if (strcmp(format, ENV_FORMAT) != 0)
		rd_fail(r, GFSP_EINVAL, "not an envelope (format '%s')",
		    format);
	/* format_version; "version" before the common members took that
	 * name for the package's version) */
	version = rd_u64(r, doc, "", json_object_object_get_ex(doc,
	    "format_version", NULL) ? "format_version" : "version");
	if (r->rc == 0 && version != ENV_VERSION)
		rd_fail(r, GFSP_EVERSION, "envelope version %" PRIu64 ", this "
		    "build reads version %d", version, ENV_VERSION);
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
	m->cache = x == NULL ? 0 : name_index(cache_names,
	    GFSP_ARRAY_SIZE(cache_names), json_object_get_string(x));
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

/* ------------------------------------------------ interpolation */

/*
 * Per operation, on one process count, as functions of the size s:
 *   tau(s) = 1 / T(s)	the time an operation takes (aggregate)
 *   u(s)   = s / B(s)	the time its bytes take at the aggregate bandwidth
 * Both are affine on each segment between two measured sizes.  For an
 * envelope with B = T * s the two are the same function.  u is INFINITY
 * where B was not measured (create) and 0 for empty files.
 */
static double
tau_of(const struct gfsp_env_point *p)
{
	return p->ops_s.median > 0 ? 1 / p->ops_s.median : INFINITY;
}

static double
u_of(const struct gfsp_env_point *p)
{
	return p->size == 0 ? 0 : p->bytes_s.median > 0 ?
	    (double)p->size / p->bytes_s.median : INFINITY;
}

static int
cmp_point(const void *a, const void *b)
{
	const struct gfsp_env_point *x, *y;

	x = *(const struct gfsp_env_point *const *)a;
	y = *(const struct gfsp_env_point *const *)b;
	if (x->procs != y->procs)
		return x->procs < y->procs ? -1 : 1;
	return x->size < y->size ? -1 : x->size > y->size;
}

/* the end of the run of points of p[g]'s process count */
static size_t
group_end(const struct gfsp_env_point *const *p, size_t n, size_t g)
{
	size_t h = g;

	while (h < n && p[h]->procs == p[g]->procs)
		h++;
	return h;
}

/*
 * The rates at size D from the points p[n] of one process count, sorted
 * by size.  The segment is [p[k], p[k+1]]: the one around D, the first
 * below the smallest size, the last above the largest.
 */
static void
rate_in_size(const struct gfsp_env_point *const *p, size_t n, double D,
	     struct gfsp_env_rate *r)
{
	double s0, s1, bt = 0, bu = 0, tau, u, a, whole;
	size_t k = 0, i;

	r->flags = D < (double)p[0]->size || D > (double)p[n - 1]->size ?
	    GFSP_ENV_EXTRA_SIZE : 0;
	if (n == 1) {
		tau = tau_of(p[0]);
		u = u_of(p[0]);
		r->fixed_share = 1;
		goto rates;
	}
	while (k + 2 < n && (double)p[k + 1]->size <= D)
		k++;
	s0 = (double)p[k]->size;
	s1 = (double)p[k + 1]->size;
	bt = (tau_of(p[k + 1]) - tau_of(p[k])) / (s1 - s0);
	bu = (u_of(p[k + 1]) - u_of(p[k])) / (s1 - s0);
	if (D < s0) {
		/* below the smallest: that size's times (conservative) */
		tau = tau_of(p[0]);
		u = u_of(p[0]);
	} else if (D > s1) {
		/* above the largest the segment goes on, but an operation
		 * never gets faster than at the largest size: a slope that
		 * falls (noise) would end at a time <= 0 */
		bt = GFSP_MAX(bt, 0);
		bu = GFSP_MAX(bu, 0);
		tau = tau_of(p[k + 1]) + bt * (D - s1);
		u = u_of(p[k + 1]) + bu * (D - s1);
	} else {
		tau = tau_of(p[k]) + bt * (D - s0);
		u = u_of(p[k]) + bu * (D - s0);
	}
	/* the fit a + bt*s of the line used (below the smallest: of the
	 * first segment); a is the part that does not grow with the size */
	a = (D < s0 ? tau_of(p[0]) + bt * (D - s0) : tau) - bt * D;
	whole = a + bt * D;
	r->fixed_share = !(a > 0) ? 0 : !(whole > a) ? 1 : a / whole;
rates:
	r->ops_s = isfinite(tau) && tau > 0 ? 1 / tau : 0;
	r->bytes_s = isfinite(u) && u > 0 ? D / u : 0;
	/* a measured size gives its measured rates, without rounding */
	for (i = 0; i < n; i++)
		if ((double)p[i]->size == D) {
			r->ops_s = p[i]->ops_s.median;
			r->bytes_s = p[i]->bytes_s.median;
		}
}

int
gfsp_env_rate(const struct gfsp_envelope *e, int metric, double procs,
	      double size, struct gfsp_env_rate *out, struct gfsp_error *err)
{
	const struct gfsp_env_point **p;
	struct gfsp_env_rate lo, hi;
	size_t n = 0, i, g, h;
	double w;

	memset(out, 0, sizeof(*out));
	if (!(procs > 0) || !(size >= 0) || !isfinite(procs) ||
	    !isfinite(size))
		return gfsp_error_set(err, GFSP_EINVAL, "no %s rate at %g "
		    "processes and %g bytes: out of range",
		    gfsp_env_metric_name(metric), procs, size);
	p = malloc((e->npoints + 1) * sizeof(*p));
	if (p == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	for (i = 0; i < e->npoints; i++)
		if (e->points[i].metric == metric)
			p[n++] = &e->points[i];
	if (n == 0) {
		free(p);
		return gfsp_error_set(err, GFSP_EINVAL, "the envelope of '%s' "
		    "has no %s points", e->target ? e->target : "",
		    gfsp_env_metric_name(metric));
	}
	/* by process count, sizes ascending: p[g..h) is the largest count
	 * <= procs (or the smallest count), p[h..i) the next one, if any */
	qsort(p, n, sizeof(*p), cmp_point);
	g = 0;
	h = group_end(p, n, 0);
	while (h < n && p[h]->procs <= procs) {
		g = h;
		h = group_end(p, n, h);
	}
	i = group_end(p, n, h);
	rate_in_size(p + g, h - g, size, &lo);
	*out = lo;
	if (procs < p[g]->procs) {
		/* below the smallest count: in proportion */
		out->ops_s *= procs / p[g]->procs;
		out->bytes_s *= procs / p[g]->procs;
		out->flags |= GFSP_ENV_EXTRA_PROCS;
	} else if (h == n) {
		/* above the largest: saturated */
		if (procs > p[g]->procs)
			out->flags |= GFSP_ENV_EXTRA_PROCS;
	} else if (procs > p[g]->procs) {
		/* between two counts: T, B (and fixed_share) linearly */
		rate_in_size(p + h, i - h, size, &hi);
		w = (procs - p[g]->procs) / (p[h]->procs - p[g]->procs);
		out->ops_s = lo.ops_s + w * (hi.ops_s - lo.ops_s);
		out->bytes_s = lo.bytes_s + w * (hi.bytes_s - lo.bytes_s);
		out->fixed_share = lo.fixed_share + w * (hi.fixed_share -
		    lo.fixed_share);
		out->flags = lo.flags | hi.flags;
	}
	/* the envelope's rates are at most GFSP_ENV_RATE_MAX, but a segment
	 * extrapolated far past the largest size can pass it (a time per
	 * byte that does not grow makes the bandwidth grow with the size):
	 * no prediction is faster than the fastest rate an envelope holds */
	out->ops_s = GFSP_MIN(out->ops_s, GFSP_ENV_RATE_MAX);
	out->bytes_s = GFSP_MIN(out->bytes_s, GFSP_ENV_RATE_MAX);
	free(p);
	return 0;
}

/* ------------------------------------------------------------ the model */

static const struct {
	const char *name;
	struct gfsp_env_shape shape;
} presets[] = {
	/* the seed's evaluation (4.5): Montage mProjectPP, 955 tasks on 8
	 * nodes writing 4.2 MB each (taken as MiB); each reads a 2 MB image
	 * and the template header all share; 94% of its reads were local
	 * (4.3) */
	{ "mprojectpp", { 955, 8, 4404019, 2 << 20, 1024, 0.94 } },
	{ "bandwidth-bound", { 64, 8, 16 << 20, 16 << 20, GFSP_ENV_NONE, 1 } },
	{ "metadata-bound", { 4000, 8, 1024, 1024, 1024, 1 } },
};

const char *const gfsp_env_preset_names =
	"mprojectpp|bandwidth-bound|metadata-bound";

int
gfsp_env_preset(const char *name, struct gfsp_env_shape *out)
{
	size_t i;

	for (i = 0; i < GFSP_ARRAY_SIZE(presets); i++)
		if (strcmp(presets[i].name, name) == 0) {
			*out = presets[i].shape;
			return 0;
		}
	return -1;
}

/*
 * One term: `ops` operations of `size` bytes at the rates of `rates`
 * (the metric itself, or read-local standing for read-remote).
 */
static int
add_term(const struct gfsp_envelope *e, int metric, int rates, int nodes,
	 double ops, int64_t size, struct gfsp_env_prediction *pr,
	 struct gfsp_error *err)
{
	struct gfsp_env_term *t = &pr->terms[pr->nterms];
	char sz[32];
	int rc;

	if (!(ops > 0))
		return 0;	/* alpha 0 or 1: no such reads */
	t->metric = metric;
	t->ops = ops;
	t->size = (uint64_t)size;
	rc = gfsp_env_rate(e, rates, nodes, (double)size, &t->rate, err);
	if (rc)
		return rc;
	gfsp_format_size(t->size, sz, sizeof(sz));
	if (!(t->rate.ops_s > 0))
		return gfsp_error_set(err, GFSP_EINVAL, "the envelope of '%s' "
		    "has a %s throughput of 0 at %d processes and %s",
		    e->target ? e->target : "", gfsp_env_metric_name(rates),
		    nodes, sz);
	if (metric != GFSP_ENV_CREATE && size > 0 && !(t->rate.bytes_s > 0))
		return gfsp_error_set(err, GFSP_EINVAL, "the envelope of '%s' "
		    "has no %s bandwidth at %d processes and %s",
		    e->target ? e->target : "", gfsp_env_metric_name(rates),
		    nodes, sz);
	t->t_ops = ops / t->rate.ops_s;
	t->t_bytes = metric == GFSP_ENV_CREATE || size == 0 ? 0 :
	    ops * (double)size / t->rate.bytes_s;
	t->seconds = GFSP_MAX(t->t_ops, t->t_bytes);
	if (metric == GFSP_ENV_CREATE)
		t->bound = "metadata";
	else if (fabs(t->t_ops - t->t_bytes) <= 0.01 * t->seconds)
		t->bound = t->rate.fixed_share >= 0.5 ? "throughput" :
		    "bandwidth";
	else
		t->bound = t->t_ops > t->t_bytes ? "throughput" : "bandwidth";
	pr->flags |= t->rate.flags;
	pr->nterms++;
	return 0;
}

int
gfsp_env_predict(const struct gfsp_envelope *e, const struct gfsp_env_shape *s,
		 struct gfsp_env_prediction *out, struct gfsp_error *err)
{
	const double C = s->nodes, a = s->local_fraction;
	double write = 0, read = 0;
	size_t i;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (s->tasks < 1 || s->nodes < 1)
		return gfsp_error_set(err, GFSP_EINVAL, "a stage needs at "
		    "least one task and one node (%" PRIu64 " tasks, %d nodes)",
		    s->tasks, s->nodes);
	if (!(a >= 0 && a <= 1))
		return gfsp_error_set(err, GFSP_EINVAL, "the local fraction %g "
		    "is not in [0, 1]", a);
	if (s->output_size < 0 && s->input_size < 0 && s->shared_size < 0)
		return gfsp_error_set(err, GFSP_EINVAL, "a stage needs an "
		    "output, an input or a shared input size");
	out->rounds = s->tasks / (uint64_t)s->nodes +
	    (s->tasks % (uint64_t)s->nodes != 0);

	/*
	 * The terms of one round of C tasks, in the order of the formulas.
	 * Where the envelope says remote reads are local reads (POSIX), the
	 * remote term keeps its name and its (1 - alpha) C operations but
	 * takes read-local's rates, so the report still shows the split.
	 */
	if (s->output_size >= 0) {
		rc = add_term(e, GFSP_ENV_CREATE, GFSP_ENV_CREATE, s->nodes, C,
		    s->output_size, out, err);
		if (rc == 0)
			rc = add_term(e, GFSP_ENV_WRITE, GFSP_ENV_WRITE,
			    s->nodes, C, s->output_size, out, err);
	}
	if (rc == 0 && s->input_size >= 0) {
		rc = add_term(e, GFSP_ENV_READ_LOCAL, GFSP_ENV_READ_LOCAL,
		    s->nodes, a * C, s->input_size, out, err);
		if (rc == 0)
			rc = add_term(e, GFSP_ENV_READ_REMOTE,
			    e->remote_same_as_local ? GFSP_ENV_READ_LOCAL :
			    GFSP_ENV_READ_REMOTE, s->nodes, (1 - a) * C,
			    s->input_size, out, err);
	}
	if (rc == 0 && s->shared_size >= 0)
		rc = add_term(e, GFSP_ENV_READ_SHARED, GFSP_ENV_READ_SHARED,
		    s->nodes, C, s->shared_size, out, err);
	if (rc)
		return rc;
	for (i = 0; i < out->nterms; i++) {
		if (out->terms[i].metric == GFSP_ENV_CREATE ||
		    out->terms[i].metric == GFSP_ENV_WRITE)
			write += out->terms[i].seconds;
		else
			read += out->terms[i].seconds;
	}
	out->write_s = (double)out->rounds * write;
	out->read_s = (double)out->rounds * read;
	out->total_s = out->write_s + out->read_s;
	return 0;
}

/* ------------------------------------------------------- the prediction out */

/* a size left out is null, not -1 */
static void
put_size(json_object *o, const char *key, int64_t size, int *oom)
{
	if (size >= 0)
		put(o, key, json_object_new_int64(size), oom);
	else if (o != NULL && json_object_object_add(o, key, NULL) != 0)
		*oom = 1;
}

static void
put_flags(json_object *o, int flags, int *oom)
{
	put(o, "extrapolated_size", json_object_new_boolean(flags &
	    GFSP_ENV_EXTRA_SIZE), oom);
	put(o, "extrapolated_procs", json_object_new_boolean(flags &
	    GFSP_ENV_EXTRA_PROCS), oom);
}

json_object *
gfsp_env_prediction_json(const struct gfsp_env_shape *s,
			 const struct gfsp_env_prediction *p)
{
	json_object *o = json_object_new_object(), *sh, *a, *t;
	const struct gfsp_env_term *x;
	int oom = 0;
	size_t i;

	sh = json_object_new_object();
	put(sh, "tasks", json_object_new_uint64(s->tasks), &oom);
	put(sh, "nodes", json_object_new_int(s->nodes), &oom);
	put_size(sh, "output_size", s->output_size, &oom);
	put_size(sh, "input_size", s->input_size, &oom);
	put_size(sh, "shared_size", s->shared_size, &oom);
	put(sh, "local_fraction", json_object_new_double(s->local_fraction),
	    &oom);
	put(o, "shape", sh, &oom);
	put(o, "rounds", json_object_new_uint64(p->rounds), &oom);
	a = json_object_new_array();
	for (i = 0; i < p->nterms; i++) {
		x = &p->terms[i];
		t = json_object_new_object();
		put(t, "metric", json_object_new_string(
		    gfsp_env_metric_name(x->metric)), &oom);
		put(t, "ops", json_object_new_double(x->ops), &oom);
		put(t, "size", json_object_new_uint64(x->size), &oom);
		put(t, "ops_per_s", json_object_new_double(x->rate.ops_s),
		    &oom);
		put(t, "bytes_per_s", json_object_new_double(x->rate.bytes_s),
		    &oom);
		put(t, "fixed_share", json_object_new_double(
		    x->rate.fixed_share), &oom);
		put(t, "t_ops", json_object_new_double(x->t_ops), &oom);
		put(t, "t_bytes", json_object_new_double(x->t_bytes), &oom);
		put(t, "seconds", json_object_new_double(x->seconds), &oom);
		put(t, "bound", json_object_new_string(x->bound), &oom);
		put_flags(t, x->rate.flags, &oom);
		push(a, t, &oom);
	}
	put(o, "terms", a, &oom);
	put(o, "write_s", json_object_new_double(p->write_s), &oom);
	put(o, "read_s", json_object_new_double(p->read_s), &oom);
	put(o, "total_s", json_object_new_double(p->total_s), &oom);
	put_flags(o, p->flags, &oom);
	if (oom) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

json_object *
gfsp_env_prediction_doc(const char *envelope,
			const struct gfsp_env_shape *s,
			const struct gfsp_env_prediction *p, double seconds)
{
	json_object *body = gfsp_env_prediction_json(s, p), *o;
	int ranks = 1, init = 0;

	if (body == NULL)
		return NULL;
	MPI_Initialized(&init);
	if (init)
		MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	/* a computation: no target, no data moved */
	o = gfsp_json_doc("envelope-bench", NULL, NULL, ranks, seconds, -1);
	if (o != NULL) {
		json_object_object_add(o, "mode",
				       json_object_new_string("predict"));
		json_object_object_add(o, "target", NULL);
		json_object_object_add(o, "envelope",
				       json_object_new_string(envelope));
		json_object_object_foreach(body, k, v)
			json_object_object_add(o, k, json_object_get(v));
	}
	json_object_put(body);
	return o;
}

/* "4.20 MiB", or "none" for a size left out */
static const char *
shape_size(int64_t size, char *buf, size_t len)
{
	if (size < 0)
		return "none";
	return gfsp_format_size((uint64_t)size, buf, len);
}

/*
 *   stage: 955 tasks on 8 nodes, 120 rounds
 *     output 4.20 MiB, input 2.00 MiB (94% local), shared input 1.00 KiB
 *   term     ops/round      size  T (ops/s)            B  ...  bound
 *   create           8  4.20 MiB       1000            -  ...  metadata
 *   write            8  4.20 MiB      23.81    100 MiB/s  ...  bandwidth *
 *   ...
 *   write  2.64 s = 120 rounds x (create + write)
 *   ...
 *   * extrapolated: the node count lies outside the envelope's process
 *     counts
 */
void
gfsp_env_prediction_print(FILE *out, const struct gfsp_env_shape *s,
			  const struct gfsp_env_prediction *p)
{
	const struct gfsp_env_term *t;
	char a[32], b[32], c[32];
	size_t i;

	fprintf(out, "stage: %" PRIu64 " tasks on %d nodes, %" PRIu64
	    " rounds\n", s->tasks, s->nodes, p->rounds);
	snprintf(c, sizeof(c), " (%.0f%% local)", 100 * s->local_fraction);
	fprintf(out, "  output %s, input %s%s, ",
	    shape_size(s->output_size, a, sizeof(a)),
	    shape_size(s->input_size, b, sizeof(b)),
	    s->input_size >= 0 ? c : "");
	fprintf(out, "shared input %s\n", shape_size(s->shared_size, a,
	    sizeof(a)));
	fprintf(out, "%-12s %9s %10s %11s %12s %10s %11s %10s  %s\n", "term",
	    "ops/round", "size", "T (ops/s)", "B", "t_ops (s)", "t_bytes (s)",
	    "term (s)", "bound");
	for (i = 0; i < p->nterms; i++) {
		t = &p->terms[i];
		gfsp_format_size(t->size, a, sizeof(a));
		/* a double all the way: an interpolated bandwidth may lie
		 * beyond any integer, or below 1 byte/s */
		if (t->rate.bytes_s > 0)
			gfsp_env_format_rate(t->rate.bytes_s, 1, "/s", b,
			    sizeof(b));
		else
			strcpy(b, "-");
		fprintf(out, "%-12s %9.4g %10s %11.5g %12s %10.4g %11.4g "
		    "%10.4g  %s%s\n", gfsp_env_metric_name(t->metric), t->ops,
		    a, t->rate.ops_s, b, t->t_ops, t->t_bytes, t->seconds,
		    t->bound, t->rate.flags ? " *" : "");
	}
	fprintf(out, "write  %.4g s = %" PRIu64 " rounds x (create + write)\n",
	    p->write_s, p->rounds);
	fprintf(out, "read   %.4g s = %" PRIu64 " rounds x (read-local + "
	    "read-remote + read-shared)\n", p->read_s, p->rounds);
	fprintf(out, "total  %.4g s\n", p->total_s);
	if (p->flags & GFSP_ENV_EXTRA_SIZE)
		fprintf(out, "* extrapolated: a size lies outside the "
		    "envelope's sizes\n");
	if (p->flags & GFSP_ENV_EXTRA_PROCS)
		fprintf(out, "* extrapolated: the node count lies outside the "
		    "envelope's process counts\n");
}
