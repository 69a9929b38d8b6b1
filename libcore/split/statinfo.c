/*
 * statinfo.c - what stat-layout reports about a split file, as one JSON
 * object, and its human form.  No MPI: stat-layout runs without mpiexec.
 *
 * The JSON object is the single description; the text is rendered from it,
 * so --json and the human output can never disagree:
 *
 *   { "path", "format_version", "logical_size", "layout", "seg_size",
 *     "ctime" (ISO 8601 UTC), "nprocs", "nnodes",
 *     "source": { "mode", "uid", "gid", "atime", "mtime" },  (v4: -p)
 *     "nodes":    [ { "node", "name", "ranks": [..] } ],
 *     "parts":    [ { "rank", "node", "node_name", "host",
 *                     "view": { "disp", "extent", "size", "blocks", "end" },
 *                     "part", "part_size", "part_hash", "nruns",
 *                     "more_views": [..], "runs": [ { "view", "begin",
 *                     "end", "part_offset" } ], "runs_truncated",  (v2)
 *                     "replicas": [..], "on_writer_node" } ],  (Gfarm)
 *     "misplaced_parts",   (parts not on their writer's node)
 *     "coverage": { "data_bytes", "hole_bytes", "holes", "first_hole",
 *                   "overlap_bytes", "allocated_bytes" },
 *                   (allocated: the space the parts hold, less than
 *                   data_bytes where they have holes: a sparse source)
 *     "map":      { "offset", "hole", "part", "file", "local_offset",
 *                   "contiguous" },                       (with --map)
 *     "check":    { "ok", "problems": [..] } }            (with --check)
 *
 * Checksums are hex strings ("0x..."): JSON numbers cannot hold 64 bits.
 * stat-layout --json prints it inside the common members of every
 * command's document (gfsp_statinfo_doc; schemas/stat-layout.schema.json);
 * gfsplit-mount's user.gfsplit.layout is the object alone.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"
#include "dst.h"
#include "layout_impl.h"

static void
add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

static void
add_str(json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, json_object_new_string(v));
}

static json_object *
view_json(const struct gfsp_view *v)
{
	json_object *o = json_object_new_object();

	add_u64(o, "disp", v->disp);
	add_u64(o, "extent", v->extent);
	add_u64(o, "size", v->size);
	add_u64(o, "blocks", v->nblocks);
	if (v->end == GFSP_VIEW_UNBOUNDED)
		json_object_object_add(o, "end", NULL);
	else
		add_u64(o, "end", v->end);
	return o;
}

/*
 * Format v2 records written through the MPI-IO library: their extra views
 * and runs (the first RUNS_SHOWN of them; "nruns" counts all).
 */
#define RUNS_SHOWN	64

static void
runs_json(const struct gfsp_layout *l, int r, json_object *n)
{
	const struct gfsp_locrec *rec = &l->recs[r];
	json_object *arr, *x;
	uint64_t i;
	uint32_t v;

	add_u64(n, "nruns", rec->nruns);
	if (rec->nruns == 0)
		return;
	arr = json_object_new_array();
	for (v = 0; v < rec->nxviews; v++)
		json_object_array_add(arr, view_json(&rec->xviews[v]));
	json_object_object_add(n, "more_views", arr);
	arr = json_object_new_array();
	for (i = 0; i < rec->nruns && i < RUNS_SHOWN; i++) {
		const struct gfsp_run *run = &rec->runs[i];

		x = json_object_new_object();
		if (run->view == GFSP_RUN_DENSE)
			json_object_object_add(x, "view", NULL);
		else
			json_object_object_add(x, "view",
			    json_object_new_int((int)run->view));
		add_u64(x, "begin", run->begin);
		add_u64(x, "end", run->end);
		add_u64(x, "part_offset", run->loff);
		add_u64(x, "epoch", run->epoch);
		json_object_array_add(arr, x);
	}
	json_object_object_add(n, "runs", arr);
	json_object_object_add(n, "runs_truncated",
	    json_object_new_boolean(rec->nruns > RUNS_SHOWN));
}

/*
 * Where global offset g lives: the first extent of the map from g.  The
 * contiguous count stops where the part holding g stops holding the next
 * bytes (end of a view block, a run, the part, the logical file), looked
 * at within MAP_WINDOW bytes.
 */
#define MAP_WINDOW	((uint64_t)16 << 20)

static json_object *
map_json(const struct gfsp_layout *l, uint64_t g, struct gfsp_error *err)
{
	json_object *o;
	struct gfsp_extent *ext = NULL;
	uint64_t size = gfsp_layout_size(l);
	size_t n = 0;
	char name[32];

	if (gfsp_layout_map(l, g, GFSP_MIN(size - g, MAP_WINDOW), &ext, &n,
	    err) != 0)
		return NULL;
	o = json_object_new_object();
	add_u64(o, "offset", g);
	if (n > 0 && ext[0].part >= 0) {
		snprintf(name, sizeof(name), "part.%d", ext[0].part);
		json_object_object_add(o, "hole", json_object_new_boolean(0));
		json_object_object_add(o, "part",
		    json_object_new_int(ext[0].part));
		add_str(o, "file", name);
		add_u64(o, "local_offset", ext[0].loff);
		add_u64(o, "contiguous", ext[0].len);
	} else {
		json_object_object_add(o, "hole", json_object_new_boolean(1));
		add_u64(o, "contiguous", n > 0 ? ext[0].len : 0);
	}
	free(ext);
	return o;
}

struct check_ctx {
	json_object *problems;
	struct gfsp_progress *prog;
};

static void
check_report(void *arg, const char *msg)
{
	struct check_ctx *c = arg;

	json_object_array_add(c->problems, json_object_new_string(msg));
}

static void
check_progress(void *arg, uint64_t bytes)
{
	struct check_ctx *c = arg;

	gfsp_progress_update(c->prog, bytes);
}

/*
 * Where part r's data is, asked of the storage (Gfarm: its replicas), and
 * whether that is its writer's node.  Backends without storage nodes
 * (POSIX) add nothing.  Returns 1 if the part is not on its writer's node.
 */
static int
replicas_json(const struct gfsp_layout *l, int r, json_object *n)
{
	const char *node = l->node_name[l->node_of[r]];
	struct gfsp_error e = { 0 };
	json_object *arr;
	char **hosts = NULL, *path;
	size_t nh = 0, i;
	int local = 0;

	path = gfsp_part_path(l->path, r);
	if (path == NULL || gfsp_where(path, &hosts, &nh, &e) != 0) {
		add_str(n, "replicas_error", path ? e.msg : "out of memory");
		free(path);
		return 0;
	}
	free(path);
	if (nh == 0)
		return 0;
	arr = json_object_new_array();
	for (i = 0; i < nh; i++) {
		json_object_array_add(arr, json_object_new_string(hosts[i]));
		local |= strcmp(hosts[i], node) == 0;
	}
	json_object_object_add(n, "replicas", arr);
	json_object_object_add(n, "on_writer_node",
			       json_object_new_boolean(local));
	gfsp_strv_free(hosts, nh);
	return !local;
}

/* "2021-03-04T05:06:07.123456789Z" */
static json_object *
iso_ns(int64_t sec, uint32_t ns)
{
	char buf[64];
	size_t n = strlen(gfsp_utc_iso(sec, buf, sizeof(buf)));

	if (n == 0)
		return json_object_new_null();
	snprintf(buf + n - 1, sizeof(buf) - (n - 1), ".%09uZ", ns);
	return json_object_new_string(buf);
}

/* what pcp-split -p recorded of the source */
static json_object *
attrs_json(const struct gfsp_attrs *a)
{
	json_object *o = json_object_new_object();
	char mode[8];

	snprintf(mode, sizeof(mode), "%04o", a->mode);
	json_object_object_add(o, "mode", json_object_new_string(mode));
	json_object_object_add(o, "uid", json_object_new_int64(a->uid));
	json_object_object_add(o, "gid", json_object_new_int64(a->gid));
	json_object_object_add(o, "atime", iso_ns(a->atime, a->atime_ns));
	json_object_object_add(o, "mtime", iso_ns(a->mtime, a->mtime_ns));
	return o;
}

/*
 * "temporaries": what runs into path left next to it (a run that was
 * killed, or one still running), which the next run into path on their
 * node removes once their process is gone.  Made an object of its own
 * when there is no split file to describe.
 */
static void
add_leftovers(const char *path, json_object **info)
{
	static const char *const state[] = { "gone", "running",
					     "another node" };
	struct gfsp_leftover *v = NULL;
	struct gfsp_dst d = { 0 };
	json_object *arr, *e;
	size_t n = 0, i;

	if (gfsp_dst_parse(&d, path, NULL) != 0 ||
	    gfsp_dst_leftovers(&d, "tmp", &v, &n) != 0 || n == 0) {
		gfsp_dst_free(&d);
		return;
	}
	if (*info == NULL) {
		*info = json_object_new_object();
		add_str(*info, "path", path);
	}
	arr = json_object_new_array();
	for (i = 0; i < n; i++) {
		e = json_object_new_object();
		add_str(e, "path", v[i].path);
		add_str(e, "node", v[i].node);
		json_object_object_add(e, "pid", json_object_new_int64(
		    v[i].pid));
		add_str(e, "process", state[v[i].state]);
		json_object_object_add(e, "bytes", json_object_new_uint64(
		    gfsp_tree_bytes(v[i].path)));
		json_object_array_add(arr, e);
	}
	json_object_object_add(*info, "temporaries", arr);
	gfsp_dst_leftovers_free(v, n);
	gfsp_dst_free(&d);
}

int
gfsp_statinfo(const char *path, const struct gfsp_statinfo_opts *opt,
	     json_object **out, struct gfsp_error *err)
{
	struct gfsp_layout *l = NULL;
	int rc;

	*out = NULL;
	rc = gfsp_layout_open(path, &l, err);
	if (rc == 0) {
		rc = gfsp_statinfo_layout(l, path, opt, out, err);
		gfsp_layout_close(l);
	}
	add_leftovers(path, out);
	return rc;
}

/* o.nodes: each node's name and ranks. */
static void
nodes_json(const struct gfsp_layout *l, json_object *o)
{
	json_object *arr, *n, *ranks;
	int r, k;

	arr = json_object_new_array();
	for (k = 0; k < l->nnodes; k++) {
		n = json_object_new_object();
		ranks = json_object_new_array();
		json_object_object_add(n, "node", json_object_new_int(k));
		add_str(n, "name", l->node_name[k]);
		for (r = 0; r < l->nprocs; r++)
			if (l->node_of[r] == k)
				json_object_array_add(ranks,
				    json_object_new_int(r));
		json_object_object_add(n, "ranks", ranks);
		json_object_array_add(arr, n);
	}
	json_object_object_add(o, "nodes", arr);
}

/* o.parts and o.misplaced_parts; returns the bytes of all parts. */
static uint64_t
parts_json(const struct gfsp_layout *l, json_object *o)
{
	json_object *arr, *n;
	uint64_t total = 0;
	int misplaced = 0, r;
	char hex[32];

	arr = json_object_new_array();
	for (r = 0; r < l->nprocs; r++) {
		n = json_object_new_object();
		json_object_object_add(n, "rank", json_object_new_int(r));
		json_object_object_add(n, "node",
				       json_object_new_int(l->node_of[r]));
		add_str(n, "node_name", l->node_name[l->node_of[r]]);
		add_str(n, "host", l->host[r]);
		json_object_object_add(n, "view", view_json(&l->views[r]));
		runs_json(l, r, n);
		snprintf(hex, sizeof(hex), "part.%d", r);
		add_str(n, "part", hex);
		add_u64(n, "part_size", l->part_size[r]);
		snprintf(hex, sizeof(hex), "0x%016" PRIx64, l->part_hash[r]);
		add_str(n, "part_hash", hex);
		misplaced += replicas_json(l, r, n);
		json_object_array_add(arr, n);
		total += l->part_size[r];
	}
	json_object_object_add(o, "parts", arr);
	json_object_object_add(o, "misplaced_parts",
			       json_object_new_int(misplaced));
	return total;
}

/* o.coverage */
static void
coverage_json(const struct gfsp_layout *l, const struct gfsp_coverage *cv,
	      json_object *o)
{
	json_object *c;

	c = json_object_new_object();
	add_u64(c, "data_bytes", cv->data_bytes);
	add_u64(c, "hole_bytes", cv->hole_bytes);
	add_u64(c, "holes", cv->holes);
	if (cv->holes > 0)
		add_u64(c, "first_hole", cv->first_hole);
	else
		json_object_object_add(c, "first_hole", NULL);
	add_u64(c, "overlap_bytes", cv->overlap_bytes);
	add_u64(c, "allocated_bytes", gfsp_layout_allocated(l));
	json_object_object_add(o, "coverage", c);
}

int
gfsp_statinfo_layout(struct gfsp_layout *l, const char *path,
		     const struct gfsp_statinfo_opts *opt, json_object **out,
		     struct gfsp_error *err)
{
	struct gfsp_coverage cov;
	struct check_ctx cc = { 0 };
	json_object *o = NULL, *c;
	uint64_t total;
	char hex[32];
	int rc;

	*out = NULL;
	if (opt->map && opt->map_offset >= gfsp_layout_size(l)) {
		rc = gfsp_error_set(err, GFSP_EINVAL,
		    "offset %" PRIu64 " is not inside '%s' (logical size %"
		    PRIu64 ")", opt->map_offset, path, gfsp_layout_size(l));
		goto out;
	}
	rc = gfsp_layout_coverage(l, &cov, err);
	if (rc)
		goto out;

	o = json_object_new_object();
	add_str(o, "path", path);
	json_object_object_add(o, "format_version",
			       json_object_new_int((int)l->marker.version));
	add_u64(o, "logical_size", gfsp_layout_size(l));
	add_str(o, "layout", l->marker.layout);
	add_u64(o, "seg_size", l->marker.seg_size);
	add_str(o, "ctime", gfsp_utc_iso(l->marker.ctime, hex, sizeof(hex)));
	json_object_object_add(o, "nprocs", json_object_new_int(l->nprocs));
	json_object_object_add(o, "nnodes", json_object_new_int(l->nnodes));
	if (l->marker.has_attrs)
		json_object_object_add(o, "source", attrs_json(&l->marker.attrs));

	nodes_json(l, o);

	total = parts_json(l, o);

	coverage_json(l, &cov, o);

	if (opt->map) {
		c = map_json(l, opt->map_offset, err);
		if (c == NULL) {
			rc = err->code;
			goto out;
		}
		json_object_object_add(o, "map", c);
	}

	if (opt->check) {
		cc.problems = json_object_new_array();
		cc.prog = gfsp_progress_start(MPI_COMM_NULL, "stat-layout",
					     total);
		rc = gfsp_layout_check(l, check_report, &cc, check_progress,
				      err);
		gfsp_progress_finish(cc.prog);
		/* an error the check could not turn into a problem */
		if (rc && json_object_array_length(cc.problems) == 0)
			check_report(&cc, err->msg);
		c = json_object_new_object();
		json_object_object_add(c, "ok", json_object_new_boolean(
		    rc == 0 && json_object_array_length(cc.problems) == 0));
		json_object_object_add(c, "problems", cc.problems);
		json_object_object_add(o, "check", c);
		if (rc == 0 && json_object_array_length(cc.problems) > 0)
			rc = gfsp_error_set(err, GFSP_ECORRUPT,
			    "'%s': check found %zu problems", path,
			    json_object_array_length(cc.problems));
	}
	*out = o;
	o = NULL;
out:
	json_object_put(o);
	return rc;
}

/* ----------------------------------------------------------- text */

static uint64_t
u64(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_uint64(v)
						     : 0;
}

static const char *
str(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ?
	       json_object_get_string(v) : "";
}

static json_object *
get(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static void
text_replicas(FILE *f, json_object *r)
{
	json_object *arr = get(r, "replicas");
	size_t i;

	if (get(r, "replicas_error") != NULL)
		fprintf(f, "    replicas: unknown (%s)\n",
			str(r, "replicas_error"));
	if (arr == NULL)
		return;
	fprintf(f, "    replicas:");
	for (i = 0; i < json_object_array_length(arr); i++)
		fprintf(f, " %s", json_object_get_string(
			json_object_array_get_idx(arr, i)));
	fprintf(f, "%s\n", json_object_get_boolean(get(r, "on_writer_node")) ?
		"" : "  (NOT on its writer's node)");
}

static void
text_view(FILE *f, const char *label, json_object *v)
{
	fprintf(f, "    %s: disp %" PRIu64 ", extent %" PRIu64
		", size %" PRIu64 " per tile, %" PRIu64 " blocks, end ", label,
		u64(v, "disp"), u64(v, "extent"), u64(v, "size"),
		u64(v, "blocks"));
	if (get(v, "end") == NULL)
		fprintf(f, "unbounded\n");
	else
		fprintf(f, "%" PRIu64 "\n", u64(v, "end"));
}

/* Format v2 records: the runs of the writes, with their views. */
static void
text_runs(FILE *f, json_object *r)
{
	json_object *views = get(r, "more_views"), *runs = get(r, "runs"), *x;
	char label[32];
	size_t i;

	fprintf(f, "    runs: %" PRIu64 "%s\n", u64(r, "nruns"),
		json_object_get_boolean(get(r, "runs_truncated")) ?
		" (the first shown)" : "");
	for (i = 0; runs != NULL && i < json_object_array_length(runs); i++) {
		x = json_object_array_get_idx(runs, i);
		fprintf(f, "      [%" PRIu64 ", %" PRIu64 ") from part offset %"
			PRIu64 ", epoch %" PRIu64, u64(x, "begin"),
			u64(x, "end"), u64(x, "part_offset"),
			u64(x, "epoch"));
		if (get(x, "view") == NULL)
			fprintf(f, ", every byte\n");
		else
			fprintf(f, ", view %" PRIu64 "\n", u64(x, "view"));
	}
	for (i = 0; views != NULL && i < json_object_array_length(views);
	     i++) {
		snprintf(label, sizeof(label), "view %zu", i + 1);
		text_view(f, label, json_object_array_get_idx(views, i));
	}
}

static void
text_ranks(FILE *f, json_object *info)
{
	json_object *arr = get(info, "parts"), *r, *v;
	char sz[32];
	size_t i;

	fprintf(f, "ranks:\n");
	for (i = 0; arr != NULL && i < json_object_array_length(arr); i++) {
		r = json_object_array_get_idx(arr, i);
		v = get(r, "view");
		fprintf(f, "  rank %" PRIu64 ": node %" PRIu64 " (%s), "
			"host %s\n", u64(r, "rank"), u64(r, "node"),
			str(r, "node_name"), str(r, "host"));
		if (u64(r, "nruns") > 0)
			text_runs(f, r);
		else
			text_view(f, "view", v);
		fprintf(f, "    part: %s, %" PRIu64 " bytes (%s), "
			"checksum %s\n", str(r, "part"), u64(r, "part_size"),
			gfsp_format_size(u64(r, "part_size"), sz, sizeof(sz)),
			str(r, "part_hash"));
		text_replicas(f, r);
	}
}

/* The line of "map", after its label (or none) */
static void
text_map(FILE *f, json_object *m, const char *label)
{
	fputs(label, f);
	if (json_object_get_boolean(get(m, "hole")))
		fprintf(f, "offset %" PRIu64 " is in a hole (%"
			PRIu64 " bytes of zeros from there)\n",
			u64(m, "offset"), u64(m, "contiguous"));
	else
		fprintf(f, "offset %" PRIu64 " is in %s at local "
			"offset %" PRIu64 ", %" PRIu64 " bytes contiguous\n",
			u64(m, "offset"), str(m, "file"),
			u64(m, "local_offset"), u64(m, "contiguous"));
}

/* The lines of "temporaries". */
static void
text_leftovers(FILE *f, json_object *info)
{
	json_object *arr = get(info, "temporaries"), *e;
	char sz[32];
	size_t i;

	for (i = 0; arr != NULL && i < json_object_array_length(arr); i++) {
		e = json_object_array_get_idx(arr, i);
		fprintf(f, "left over:    %s (%s; process %" PRIu64 " on %s: "
			"%s)\n", str(e, "path"), gfsp_format_size(u64(e,
			"bytes"), sz, sizeof(sz)), u64(e, "pid"),
			str(e, "node"), str(e, "process"));
	}
}

char *
gfsp_statinfo_text(json_object *info, int map_only)
{
	json_object *arr, *n, *c, *m, *ranks;
	char *text = NULL, sz[32], when[64], *z;
	size_t len = 0, i, j;
	FILE *f;

	f = open_memstream(&text, &len);
	if (f == NULL)
		return NULL;
	if (get(info, "layout") == NULL) {	/* no split file: what is left */
		text_leftovers(f, info);
		goto out;
	}
	if (map_only && (m = get(info, "map")) != NULL) {
		text_map(f, m, "");
		goto out;
	}
	fprintf(f, "split file:   %s\n", str(info, "path"));
	fprintf(f, "format:       version %" PRIu64 ", layout %s, checksum "
		"segments of %" PRIu64 " bytes\n", u64(info, "format_version"),
		str(info, "layout"), u64(info, "seg_size"));
	if ((m = get(info, "source")) != NULL)
		fprintf(f, "source:       mode %s, owner %" PRIu64 ":%" PRIu64
			", modified %s (kept by pcp-split -p)\n", str(m, "mode"),
			u64(m, "uid"), u64(m, "gid"), str(m, "mtime"));
	/* "2026-11-27T09:30:00Z" as "2026-11-27 09:30:00 UTC" */
	snprintf(when, sizeof(when), "%s", str(info, "ctime"));
	if ((z = strchr(when, 'T')) != NULL)
		*z = ' ';
	if ((z = strchr(when, 'Z')) != NULL)
		*z = '\0';
	if (when[0] != '\0')
		fprintf(f, "created:      %s UTC\n", when);
	fprintf(f, "logical size: %" PRIu64 " bytes (%s)\n",
		u64(info, "logical_size"),
		gfsp_format_size(u64(info, "logical_size"), sz, sizeof(sz)));
	fprintf(f, "writers:      %" PRIu64 " ranks\n", u64(info, "nprocs"));
	fprintf(f, "nodes:        %" PRIu64 "\n", u64(info, "nnodes"));
	arr = get(info, "nodes");
	for (i = 0; arr != NULL && i < json_object_array_length(arr); i++) {
		n = json_object_array_get_idx(arr, i);
		ranks = get(n, "ranks");
		fprintf(f, "  node %" PRIu64 ": %s (loc.%" PRIu64 "), ranks",
			u64(n, "node"), str(n, "name"), u64(n, "node"));
		for (j = 0; j < json_object_array_length(ranks); j++)
			fprintf(f, " %d", json_object_get_int(
			    json_object_array_get_idx(ranks, j)));
		fprintf(f, "\n");
	}
	text_ranks(f, info);

	c = get(info, "coverage");
	fprintf(f, "coverage:     %" PRIu64 " data bytes, %" PRIu64
		" holes (%" PRIu64 " bytes)", u64(c, "data_bytes"),
		u64(c, "holes"), u64(c, "hole_bytes"));
	if (get(c, "first_hole") != NULL)
		fprintf(f, ", first hole at %" PRIu64, u64(c, "first_hole"));
	fprintf(f, ", %" PRIu64 " bytes overlapping\n",
		u64(c, "overlap_bytes"));
	if (u64(c, "allocated_bytes") < u64(c, "data_bytes"))
		fprintf(f, "space:        %s allocated: the parts keep holes "
			"(a sparse source)\n", gfsp_format_size(u64(c,
			"allocated_bytes"), sz, sizeof(sz)));

	if ((m = get(info, "map")) != NULL)
		text_map(f, m, "map:          ");
	if ((c = get(info, "check")) != NULL) {
		arr = get(c, "problems");
		for (i = 0; i < json_object_array_length(arr); i++)
			fprintf(f, "check: %s\n", json_object_get_string(
			    json_object_array_get_idx(arr, i)));
		if (json_object_get_boolean(get(c, "ok")))
			fprintf(f, "check: ok\n");
		else
			fprintf(f, "check: FAILED (%zu problem%s)\n",
				json_object_array_length(arr),
				json_object_array_length(arr) == 1 ? "" : "s");
	}
	text_leftovers(f, info);
out:
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

json_object *
gfsp_statinfo_doc(json_object *info, const char *path, int ranks,
		  double seconds, int map_only)
{
	json_object *doc, *arr, *c;
	int64_t bytes = -1;
	size_t i;

	/* bytes: what --check read, every part whole */
	if ((c = get(info, "check")) != NULL &&
	    (arr = get(info, "parts")) != NULL)
		for (bytes = 0, i = 0; i < json_object_array_length(arr); i++)
			bytes += (int64_t)u64(json_object_array_get_idx(arr, i),
					      "part_size");
	doc = gfsp_json_doc("stat-layout", path, NULL, ranks, seconds, bytes);
	if (doc == NULL)
		return NULL;
	json_object_object_foreach(info, k, v)
		if (!map_only || strcmp(k, "path") == 0 ||
		    strcmp(k, "logical_size") == 0 || strcmp(k, "map") == 0 ||
		    strcmp(k, "check") == 0)
			json_object_object_add(doc, k, json_object_get(v));
	return doc;
}
