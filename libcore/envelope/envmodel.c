/*
 * envmodel.c - the MTC envelope's model (envelope.h): names, statistics,
 * the JSON document written, interpolation between the measured points,
 * and the paper's formulas (1)-(3) that predict the I/O time of a
 * many-task stage.  Reading the document back is envload.c.
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

int
gfsp_env_cache_parse(const char *name)
{
	return name_index(cache_names, GFSP_ARRAY_SIZE(cache_names), name);
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
	put(o, "format", json_object_new_string(GFSP_ENV_FORMAT), &oom);
	put(o, "format_version", json_object_new_int(GFSP_ENV_VERSION), &oom);
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
	/* the evaluation (4.5) of Kyou, Tatebe and Tanaka's prediction
	 * model for many-task applications on Gfarm: Montage mProjectPP, 955 tasks on 8
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
