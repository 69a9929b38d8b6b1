/*
 * envelope-bench - measure a storage target's MTC envelope, and predict
 * (and check by replaying) the I/O time of a many-task workflow stage:
 *
 *   mpiexec -n N envelope-bench [OPTIONS] TARGET
 *   envelope-bench predict --envelope ENV.json [SHAPE OPTIONS]
 *   mpiexec -n C envelope-bench replay --envelope ENV.json [SHAPE] TARGET
 *
 * The options table below is the one source of truth: --help is made from
 * it, and tests/cmd/options.sh checks the man page and the completions
 * against --help.  Each option belongs to some of the three modes; one
 * given to another mode is a usage error.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "core.h"
#include "driver.h"
#include "envelope.h"

#define UNSET UINT64_MAX

enum { MEASURE = 1, PREDICT = 2, REPLAY = 4 };

static const char *opt_sizes, *opt_procs, *opt_metrics, *opt_heatmap,
	*opt_heatmap_metric, *opt_envelope, *opt_preset,
	*opt_fraction, *opt_hosts, *opt_cache, *opt_min_time;
static int opt_json, opt_csv, opt_fsync, opt_lockstep, opt_keep;
static uint64_t opt_reps = UNSET, opt_warmup = UNSET, opt_work = UNSET,
	opt_files = UNSET, opt_buffer = UNSET, opt_tasks = UNSET,
	opt_nodes = UNSET, opt_output = UNSET, opt_input = UNSET,
	opt_shared = UNSET;

static const struct gfsp_opt opts[] = {
	{ "sizes", 0, GFSP_OPT_STRING, "LIST",
	  "file sizes to measure (default 1K,128K,1M,16M)", &opt_sizes,
	  NULL },
	{ "procs", 0, GFSP_OPT_STRING, "LIST",
	  "process counts to measure (default 1,2,4,... and N)",
	  &opt_procs, NULL },
	{ "metrics", 0, GFSP_OPT_STRING, "LIST",
	  "of create,write,read-local,read-remote,read-shared (default all)",
	  &opt_metrics, NULL },
	{ "reps", 'r', GFSP_OPT_UINT, "N",
	  "timed repetitions of each phase (default 3)", &opt_reps, NULL },
	{ "warmup", 0, GFSP_OPT_UINT, "N",
	  "untimed repetitions before them (default 1)", &opt_warmup, NULL },
	{ "work", 0, GFSP_OPT_SIZE, "SIZE",
	  "bytes per process per repetition (default 256M)", &opt_work, NULL },
	{ "files", 0, GFSP_OPT_UINT, "N",
	  "files per process per repetition, at most (default 512)",
	  &opt_files, NULL },
	{ "min-time", 0, GFSP_OPT_STRING, "SEC",
	  "a repetition lasts at least this long: more files if the warm-up "
	  "was shorter (default 0.2; 0: never)", &opt_min_time, NULL },
	{ "buffer-size", 0, GFSP_OPT_SIZE, "SIZE",
	  "bytes per read or write call (default 8M)", &opt_buffer, NULL },
	{ "cache", 0, GFSP_OPT_STRING, "MODE",
	  "page cache for reads: keep, drop (evict first), direct (O_DIRECT)",
	  &opt_cache, "keep|drop|direct" },
	{ "fsync", 0, GFSP_OPT_FLAG, NULL,
	  "writes include fsync before close", &opt_fsync, NULL },
	{ "hosts", 0, GFSP_OPT_STRING, "LIST",
	  "Gfarm: node of rank r is entry r mod K (default "
	  "$GFSPLIT_GFARM_HOSTS, else where its files land)", &opt_hosts,
	  NULL },
	{ "json", 0, GFSP_OPT_FLAG, NULL,
	  "print one JSON document (the envelope file, with every sample)",
	  &opt_json, NULL },
	{ "csv", 0, GFSP_OPT_FLAG, NULL,
	  "print CSV, one row per point", &opt_csv, NULL },
	{ "heatmap", 0, GFSP_OPT_STRING, "FILE.svg",
	  "also draw a heat map of one metric (process count x file size)",
	  &opt_heatmap, NULL },
	{ "heatmap-metric", 0, GFSP_OPT_STRING, "METRIC",
	  "what the heat map shows (default write-bandwidth)",
	  &opt_heatmap_metric,
	  "write-bandwidth|write-throughput|create-throughput|"
	  "read-local-bandwidth|read-local-throughput|read-remote-bandwidth|"
	  "read-remote-throughput|read-shared-bandwidth|"
	  "read-shared-throughput" },
	{ "lockstep", 0, GFSP_OPT_FLAG, NULL,
	  "replay: round by round, a barrier after the reads and after the "
	  "writes (as the formulas count)", &opt_lockstep, NULL },
	{ "keep", 0, GFSP_OPT_FLAG, NULL,
	  "replay: leave the inputs and the last run's outputs, to look at",
	  &opt_keep, NULL },
	{ "envelope", 'e', GFSP_OPT_STRING, "FILE",
	  "predict, replay: the envelope (from --json)", &opt_envelope, NULL },
	{ "preset", 0, GFSP_OPT_STRING, "NAME",
	  "predict, replay: a stage shape (options given override it)",
	  &opt_preset, "mprojectpp|bandwidth-bound|metadata-bound" },
	{ "tasks", 'N', GFSP_OPT_UINT, "N",
	  "predict, replay: tasks in the stage", &opt_tasks, NULL },
	{ "nodes", 'C', GFSP_OPT_UINT, "C",
	  "predict, replay: nodes, tasks running at once", &opt_nodes, NULL },
	{ "output-size", 0, GFSP_OPT_OFFSET, "D",
	  "predict, replay: each task's output", &opt_output, NULL },
	{ "input-size", 0, GFSP_OPT_OFFSET, "D1",
	  "predict, replay: each task's own input", &opt_input, NULL },
	{ "shared-input-size", 0, GFSP_OPT_OFFSET, "DN",
	  "predict, replay: the input every task reads", &opt_shared, NULL },
	{ "local-fraction", 0, GFSP_OPT_STRING, "ALPHA",
	  "predict, replay: share of own inputs on the task's node (0..1, "
	  "default 1)", &opt_fraction, NULL },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL }
};

/* which modes take each option; one not listed is every mode's */
static const struct {
	const char *name;
	int modes;
} belongs[] = {
	{ "sizes", MEASURE }, { "procs", MEASURE }, { "metrics", MEASURE },
	{ "work", MEASURE }, { "files", MEASURE },
	{ "min-time", MEASURE },
	{ "csv", MEASURE },
	{ "heatmap", MEASURE | PREDICT },
	{ "heatmap-metric", MEASURE | PREDICT },
	{ "reps", MEASURE | REPLAY }, { "warmup", MEASURE | REPLAY },
	{ "buffer-size", MEASURE | REPLAY }, { "cache", MEASURE | REPLAY },
	{ "fsync", MEASURE | REPLAY }, { "hosts", MEASURE | REPLAY },
	{ "envelope", PREDICT | REPLAY }, { "preset", PREDICT | REPLAY },
	{ "tasks", PREDICT | REPLAY }, { "nodes", PREDICT | REPLAY },
	{ "output-size", PREDICT | REPLAY }, { "input-size", PREDICT | REPLAY },
	{ "shared-input-size", PREDICT | REPLAY },
	{ "local-fraction", PREDICT | REPLAY }, { "lockstep", REPLAY },
	{ "keep", REPLAY },
};

static const char *const mode_name[] = {
	[MEASURE] = "measuring", [PREDICT] = "predict", [REPLAY] = "replay"
};

/* was o given?  Every value starts unset: NULL, 0 or UNSET */
static int
given(const struct gfsp_opt *o)
{
	switch (o->type) {
	case GFSP_OPT_FLAG:
		return *(int *)o->value != 0;
	case GFSP_OPT_STRING:
		return *(const char **)o->value != NULL;
	default:
		return *(uint64_t *)o->value != UNSET;
	}
}

/* 0, or 2 (usage) when an option of another mode was given */
static int
check_modes(int mode, int rank)
{
	const struct gfsp_opt *o;
	size_t i;

	for (o = opts; o->lname != NULL; o++)
		for (i = 0; i < GFSP_ARRAY_SIZE(belongs); i++)
			if (!strcmp(o->lname, belongs[i].name) &&
			    !(belongs[i].modes & mode) && given(o)) {
				if (rank == 0)
					gfsp_log_error("--%s does not go with "
						      "%s", o->lname,
						      mode_name[mode]);
				return 2;
			}
	return 0;
}

static int
usage(int rank, const char *msg)
{
	if (rank == 0)
		gfsp_log_error("%s", msg);
	return 2;
}

/* a number >= 0; "94%" is 0.94 where percent is allowed */
static int
number(const char *s, int percent, double *out)
{
	char *end;

	*out = strtod(s, &end);
	if (percent && end != s && *end == '%')
		*out /= 100, end++;
	return end == s || *end != '\0' || !(*out >= 0) ? -1 : 0;
}

static uint64_t
or_default(uint64_t v, uint64_t dflt)
{
	return v == UNSET ? dflt : v;
}

/* the measuring method from the options (the defaults of --help) */
static void
method_of(struct gfsp_env_method *m)
{
	m->reps = (int)GFSP_MIN(or_default(opt_reps, 3), 1000000);
	m->warmup = (int)GFSP_MIN(or_default(opt_warmup, 1), 1000000);
	m->work = or_default(opt_work, 256ull << 20);
	m->max_files = or_default(opt_files, 512);
	m->min_files = GFSP_MIN(4, m->max_files);
	m->buffer = or_default(opt_buffer, 8u << 20);
	m->cache = opt_cache == NULL || !strcmp(opt_cache, "keep") ?
		   GFSP_ENV_CACHE_KEEP : !strcmp(opt_cache, "drop") ?
		   GFSP_ENV_CACHE_DROP : GFSP_ENV_CACHE_DIRECT;
	m->fsync = opt_fsync;
	m->min_time = 0.2;
	if (opt_min_time != NULL)
		number(opt_min_time, 0, &m->min_time);	/* checked in run */
}

/* "write-bandwidth" -> (write, 0); "create-throughput" -> (create, 1) */
static void
heatmap_of(int *metric, int *throughput)
{
	const char *name = opt_heatmap_metric ? opt_heatmap_metric :
			   "write-bandwidth";
	char m[32];
	const char *dash = strrchr(name, '-');

	snprintf(m, sizeof(m), "%.*s", (int)(dash - name), name);
	*metric = gfsp_env_metric_parse(m);
	*throughput = strcmp(dash + 1, "throughput") == 0;
}

static int
heatmap(const struct gfsp_envelope *e)
{
	struct gfsp_error err = { 0 };
	int metric, throughput;

	heatmap_of(&metric, &throughput);
	if (gfsp_env_heatmap(opt_heatmap, e, metric, throughput, &err) != 0) {
		gfsp_log_gfs_error(&err);
		return 1;
	}
	gfsp_log_info("heat map of %s in %s",
		      opt_heatmap_metric ? opt_heatmap_metric :
		      "write-bandwidth", opt_heatmap);
	return 0;
}

/* print the document and free it; 1 if there is none (out of memory) */
static int
print_json(json_object *o)
{
	if (o == NULL) {
		gfsp_log_error("out of memory");
		return 1;
	}
	gfsp_json_print(stdout, o, JSON_C_TO_STRING_PRETTY |
			JSON_C_TO_STRING_NOSLASHESCAPE);
	json_object_put(o);
	return 0;
}

/* ------------------------------------------------------------ measure */

/* --procs, or 1, 2, 4, ... below nprocs, and nprocs */
static int
procs_of(int nprocs, int **v, size_t *n, struct gfsp_error *err)
{
	uint64_t *list = NULL;
	size_t i, k = 0;
	int rc = 0, p;

	if (opt_procs != NULL) {
		rc = gfsp_parse_size_list(opt_procs, &list, &k, err);
		if (rc == 0 && list[k - 1] > (uint64_t)nprocs)
			rc = gfsp_error_set(err, GFSP_EINVAL, "--procs %s: "
					   "this run has %d ranks", opt_procs,
					   nprocs);
	}
	*v = malloc((opt_procs ? k : 32) * sizeof(**v));
	if (rc == 0 && *v == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	if (rc == 0 && opt_procs != NULL) {
		for (i = 0; i < k; i++)
			(*v)[i] = (int)list[i];
		*n = k;
	} else if (rc == 0) {
		for (p = 1, *n = 0; p < nprocs; p *= 2)
			(*v)[(*n)++] = p;
		(*v)[(*n)++] = nprocs;
	}
	free(list);
	return rc;
}

static int
metrics_of(unsigned *bits, struct gfsp_error *err)
{
	char *copy, *tok, *save = NULL;
	int m, rc = 0;

	*bits = 0;
	if (opt_metrics == NULL) {
		*bits = (1u << GFSP_ENV_NMETRIC) - 1;
		return 0;
	}
	if ((copy = strdup(opt_metrics)) == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	for (tok = strtok_r(copy, ",", &save); rc == 0 && tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		m = gfsp_env_metric_parse(tok);
		if (m < 0)
			rc = gfsp_error_set(err, GFSP_EINVAL, "--metrics: "
					   "unknown metric '%s' (create, "
					   "write, read-local, read-remote, "
					   "read-shared)", tok);
		else
			*bits |= 1u << m;
	}
	free(copy);
	if (rc == 0 && *bits == 0)
		rc = gfsp_error_set(err, GFSP_EINVAL, "--metrics: empty");
	return rc;
}

static int
measure(const char *target, MPI_Comm comm, int rank, int nprocs)
{
	struct gfsp_env_opts o = { 0 };
	struct gfsp_envelope *e = NULL;
	struct gfsp_error err = { 0 };
	uint64_t *sizes = NULL;
	int *procs = NULL, rc;

	o.target = target;
	rc = gfsp_parse_size_list(opt_sizes ? opt_sizes : "1K,128K,1M,16M",
				  &sizes, &o.nsizes, &err);
	if (rc == 0)
		rc = procs_of(nprocs, &procs, &o.nprocs, &err);
	if (rc == 0)
		rc = metrics_of(&o.metrics, &err);
	/* never measure an envelope that no reader takes (envelope.h) */
	if (rc == 0 && o.nsizes > GFSP_ENV_SIZES_MAX)
		rc = gfsp_error_set(&err, GFSP_EINVAL, "--sizes: %zu sizes, an "
				   "envelope holds %d at most", o.nsizes,
				   GFSP_ENV_SIZES_MAX);
	if (rc == 0 && o.nprocs > GFSP_ENV_PROCS_MAX)
		rc = gfsp_error_set(&err, GFSP_EINVAL, "--procs: %zu process "
				   "counts, an envelope holds %d at most",
				   o.nprocs, GFSP_ENV_PROCS_MAX);
	if (rc == 0 && opt_reps != UNSET && opt_reps > GFSP_ENV_SAMPLES_MAX)
		rc = gfsp_error_set(&err, GFSP_EINVAL, "--reps %" PRIu64 ": an "
				   "envelope holds %d samples a point at most",
				   opt_reps, GFSP_ENV_SAMPLES_MAX);
	if (rc != 0) {
		if (rank == 0)
			gfsp_log_error("%s", err.msg);
		rc = 2;
		goto out;
	}
	o.sizes = sizes;
	o.procs = procs;
	o.remote_optional = opt_metrics == NULL;
	o.hosts = opt_hosts ? opt_hosts : getenv("GFSPLIT_GFARM_HOSTS");
	method_of(&o.method);
	rc = gfsp_env_measure(comm, &o, &e, &err);
	if (rc != 0) {
		gfsp_log_gfs_error(&err);
		rc = 1;
		goto out;
	}
	if (rank == 0) {
		if (opt_json)
			rc = print_json(gfsp_env_to_json(e));
		else if (opt_csv)
			gfsp_env_print_csv(stdout, e);
		else
			gfsp_env_print_table(stdout, e);
		if (opt_heatmap != NULL && heatmap(e) != 0)
			rc = 1;
	}
out:
	gfsp_envelope_free(e);
	free(sizes);
	free(procs);
	return rc;
}

/* --------------------------------------------------- predict, replay */

/* the stage shape: the preset, then the options given over it */
static int
shape_of(struct gfsp_env_shape *s, int rank)
{
	double a;

	memset(s, 0, sizeof(*s));
	s->output_size = s->input_size = s->shared_size = GFSP_ENV_NONE;
	s->local_fraction = 1;
	if (opt_preset != NULL && gfsp_env_preset(opt_preset, s) != 0)
		return usage(rank, "--preset: no such preset");
	if (opt_tasks != UNSET)
		s->tasks = opt_tasks;
	if (opt_nodes != UNSET)
		s->nodes = (int)GFSP_MIN(opt_nodes, 1u << 30);
	if (opt_output != UNSET)
		s->output_size = (int64_t)GFSP_MIN(opt_output, INT64_MAX);
	if (opt_input != UNSET)
		s->input_size = (int64_t)GFSP_MIN(opt_input, INT64_MAX);
	if (opt_shared != UNSET)
		s->shared_size = (int64_t)GFSP_MIN(opt_shared, INT64_MAX);
	if (opt_fraction != NULL) {
		if (number(opt_fraction, 1, &a) != 0 || a > 1)
			return usage(rank, "--local-fraction: a number from 0 "
				     "to 1 (or a percentage), please");
		s->local_fraction = a;
	}
	if (s->tasks == 0 || s->nodes == 0)
		return usage(rank, "a stage needs --tasks and --nodes (or "
			     "--preset)");
	if (s->output_size < 0 && s->input_size < 0 && s->shared_size < 0)
		return usage(rank, "a stage needs at least one of "
			     "--output-size, --input-size, "
			     "--shared-input-size");
	return 0;
}

/* every rank that asks reads it; rank 0 tells what is wrong */
static int
load(struct gfsp_envelope **e, int rank)
{
	struct gfsp_error err = { 0 };

	if (gfsp_env_load(opt_envelope, e, &err) != 0) {
		if (rank == 0)
			gfsp_log_gfs_error(&err);
		return 1;
	}
	return 0;
}

/* a stage given: predict does not only draw a heat map */
static int
stage_given(void)
{
	return opt_preset || opt_tasks != UNSET || opt_nodes != UNSET ||
	       opt_output != UNSET || opt_input != UNSET ||
	       opt_shared != UNSET || opt_fraction != NULL;
}

static int
predict(int rank)
{
	struct gfsp_envelope *e = NULL;
	struct gfsp_env_prediction p;
	struct gfsp_env_shape s;
	struct gfsp_error err = { 0 };
	int rc, stage = !opt_heatmap || stage_given();
	double t0 = gfsp_now();

	if (opt_envelope == NULL)
		return usage(rank, "predict needs --envelope FILE");
	if (stage && (rc = shape_of(&s, rank)) != 0)
		return rc;
	if (rank != 0)
		return 0;
	rc = load(&e, rank);
	if (rc == 0 && opt_heatmap != NULL)
		rc = heatmap(e);
	if (rc == 0 && stage) {
		if (gfsp_env_predict(e, &s, &p, &err) != 0) {
			gfsp_log_error("'%s': %s", opt_envelope, err.msg);
			rc = 1;
		} else if (opt_json) {
			rc = print_json(gfsp_env_prediction_doc(opt_envelope,
			    &s, &p, gfsp_now() - t0));
		} else {
			gfsp_env_prediction_print(stdout, &s, &p);
		}
	}
	gfsp_envelope_free(e);
	return rc;
}

static int
replay(const char *target, MPI_Comm comm, int rank)
{
	struct gfsp_env_opts o = { 0 };
	struct gfsp_envelope *e = NULL;
	struct gfsp_env_replay r;
	struct gfsp_env_shape s;
	struct gfsp_error err = { 0 };
	int rc;

	if (opt_envelope == NULL)
		return usage(rank, "replay needs --envelope FILE (from "
			     "envelope-bench --json)");
	rc = shape_of(&s, rank);
	if (rc != 0)
		return rc;
	/* every rank reads the envelope: all of them predict */
	rc = gfsp_agree(comm, load(&e, rank), NULL);
	if (rc != 0) {
		gfsp_envelope_free(e);
		return 1;
	}
	/* the same verdict on every rank: rank 0 tells it, naming the file */
	if (gfsp_env_predict(e, &s, &r.predicted, &err) != 0) {
		if (rank == 0)
			gfsp_log_error("'%s': %s", opt_envelope, err.msg);
		gfsp_envelope_free(e);
		return 1;
	}
	o.target = target;
	o.hosts = opt_hosts ? opt_hosts : getenv("GFSPLIT_GFARM_HOSTS");
	o.lockstep = opt_lockstep;
	o.keep = opt_keep;
	method_of(&o.method);
	rc = gfsp_env_replay(comm, &o, e, &s, &r, &err);
	if (rc != 0) {
		gfsp_log_gfs_error(&err);
		rc = 1;
	} else if (rank == 0 && opt_json) {
		rc = print_json(gfsp_env_replay_json(target, &r));
	} else if (rank == 0) {
		gfsp_env_replay_print(stdout, target, &r);
	}
	gfsp_env_replay_free(&r);
	gfsp_envelope_free(e);
	return rc;
}

static int
run(int argc, char **argv, MPI_Comm comm)
{
	int rank, nprocs, mode = MEASURE, rc;
	double t;

	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &nprocs);
	if (!strcmp(argv[0], "predict"))
		mode = PREDICT;
	else if (!strcmp(argv[0], "replay"))
		mode = REPLAY;
	if (mode != MEASURE)
		argc--, argv++;
	if (argc != (mode == PREDICT ? 0 : 1))
		return usage(rank, mode == PREDICT ? "predict takes no "
			     "operand" : argc == 0 ? "missing TARGET" :
			     "extra operand");
	rc = check_modes(mode, rank);
	if (rc != 0)
		return rc;
	if (opt_json && opt_csv)
		return usage(rank, "--json and --csv: choose one");
	if (opt_min_time != NULL && number(opt_min_time, 0, &t) != 0)
		return usage(rank, "--min-time: a number of seconds, please");
	if (opt_reps == 0 || opt_files == 0 || opt_buffer == 0)
		return usage(rank, "--reps, --files and --buffer-size: at "
			     "least 1, please");
	switch (mode) {
	case PREDICT:
		return predict(rank);
	case REPLAY:
		return replay(argv[0], comm, rank);
	default:
		return measure(argv[0], comm, rank, nprocs);
	}
}

/* -b was --buffer-size here, and is --block-size in pcp-split and
 * cache-warm */
static const struct gfsp_alias aliases[] = {
	{ 'b', NULL, "buffer-size", "-b is deprecated here (it is "
	  "--block-size in pcp-split and cache-warm): use --buffer-size" },
	{ 0, NULL, NULL, NULL }
};

static const struct gfsp_cmd cmd = {
	.name = "envelope-bench",
	.usage = "[OPTIONS] TARGET\n"
		 "       envelope-bench predict --envelope FILE [OPTIONS]\n"
		 "       envelope-bench replay --envelope FILE [OPTIONS] "
		 "TARGET",
	.summary = "Measure a storage target's MTC envelope (create, read "
		   "and write rates over process counts and file sizes); "
		   "predict a many-task stage's I/O time from it; replay a "
		   "synthetic stage to check the prediction.",
	.opts = opts,
	.aliases = aliases,
	.min_args = 1,
	.max_args = 2,
	.progress = 1,
	.uses_mpi = 1,
	.run = run,
};

int
main(int argc, char **argv)
{
	return gfsp_cmd_main(&cmd, argc, argv);
}
