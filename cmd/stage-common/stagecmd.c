/*
 * stagecmd.c - the command side of stage-in and stage-out: one options
 * table for what both take, one for each, and the glue from options to
 * gfsp_stage() and its summary, which it prints.  Linked into both
 * cmd/stage-in and cmd/stage-out (Makefile.in), each one call into here;
 * the library returns a struct gfsp_stage_result and prints nothing.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "core.h"
#include "driver.h"
#include "dst.h"
#include "stage.h"
#include "stagecmd.h"

static uint64_t opt_chunk = GFSP_STAGE_CHUNK_DEFAULT;
static int64_t opt_compress = -1;
static uint64_t opt_threads = UINT64_MAX;	/* not given */
static uint64_t opt_bwlimit;
static const char *opt_state;
static const char *opt_manifest;
static int opt_raw, opt_no_checksum, opt_dry_run, opt_json;
static int opt_no_sparse;
static int opt_scatter, opt_merge, opt_sync, opt_delete;
static int opt_async, opt_flush, opt_wait, opt_status, opt_attach;
static pid_t mover_pid;		/* the mover this process started */
static uint64_t opt_interval = 30;
static const char *opt_cpus;
static char **main_argv;	/* for the mover: this program's own */

#define COMMON_OPTS \
	{ "chunk-size", 0, GFSP_OPT_SIZE, "SIZE", \
	  "bytes read and written at a time, a multiple of 1M up to 128M " \
	  "(default 8M; two buffers of it per rank)", &opt_chunk, NULL }, \
	{ "compress", 'z', GFSP_OPT_OPTUINT, "LEVEL", \
	  "store the copies zstd-compressed, at LEVEL (default 3), or auto: " \
	  "the level that keeps up with the storage; a compressed source is " \
	  "always decompressed", &opt_compress, "auto" }, \
	{ "threads", 0, GFSP_OPT_UINT, "N", \
	  "zstd worker threads per rank (default: the cores the rank may " \
	  "run on; 0: compress in the reading thread and decompress one " \
	  "chunk at a time)", &opt_threads, NULL }, \
	{ "raw", 0, GFSP_OPT_FLAG, NULL, \
	  "copy compressed sources as they are, without decompressing", \
	  &opt_raw, NULL }, \
	{ "no-sparse", 0, GFSP_OPT_FLAG, NULL, \
	  "write the holes of sparse files as zeros (default: keep them as " \
	  "holes, as cp does)", &opt_no_sparse, NULL }, \
	{ "no-checksum", 0, GFSP_OPT_FLAG, NULL, \
	  "trust size and time alone when deciding a file is already there, " \
	  "and resumed chunks without reading them back", &opt_no_checksum, \
	  NULL }, \
	{ "bwlimit", 0, GFSP_OPT_SIZE, "RATE", \
	  "bytes per second each node writes at most (e.g. 200M)", \
	  &opt_bwlimit, NULL }, \
	{ "state-dir", 0, GFSP_OPT_STRING, "DIR", \
	  "each node's journal and index (default: .gfsplit-stage in the " \
	  "node-local root); \"%h\" stands for the node's name", &opt_state, \
	  NULL }, \
	{ "dry-run", 'n', GFSP_OPT_FLAG, NULL, \
	  "list and plan, copy nothing", &opt_dry_run, NULL }, \
	{ "json", 0, GFSP_OPT_FLAG, NULL, \
	  "print a JSON summary on stdout", &opt_json, NULL }

static const struct gfsp_opt in_opts[] = {
	{ "manifest", 'm', GFSP_OPT_STRING, "FILE",
	  "also stage the 'SRC DST' pairs of FILE (DST under DEST)",
	  &opt_manifest, NULL },
	{ "scatter", 0, GFSP_OPT_FLAG, NULL,
	  "spread the files over the nodes (each to one node) instead of "
	  "giving every node all of them", &opt_scatter, NULL },
	{ "sync", 0, GFSP_OPT_FLAG, NULL,
	  "fsync each file before it takes its name", &opt_sync, NULL },
	{ "delete", 0, GFSP_OPT_FLAG, NULL,
	  "remove from the directories staged what the sources no longer "
	  "hold (once all else is in place)", &opt_delete, NULL },
	COMMON_OPTS,
	{ NULL, 0, 0, NULL, NULL, NULL, NULL }
};

static const struct gfsp_opt out_opts[] = {
	{ "merge", 0, GFSP_OPT_FLAG, NULL,
	  "put every node's files in one tree DEST/ (names must not clash) "
	  "instead of DEST/NODE/", &opt_merge, NULL },
	{ "sync", 0, GFSP_OPT_FLAG, NULL,
	  "fsync each file before it takes its name", &opt_sync, NULL },
	{ "async", 0, GFSP_OPT_FLAG, NULL,
	  "start a background mover on each node and return: it writes files "
	  "back as they are closed, every --interval, and on --flush",
	  &opt_async, NULL },
	{ "attach", 0, GFSP_OPT_FLAG, NULL,
	  "with --async: stay until the node's mover ends (run it in the "
	  "background where a batch system ends a step's processes with the "
	  "step, as Slurm's proctrack/cgroup does)", &opt_attach, NULL },
	{ "flush", 0, GFSP_OPT_FLAG, NULL,
	  "have the movers write back everything now; returns when done",
	  &opt_flush, NULL },
	{ "wait", 0, GFSP_OPT_FLAG, NULL,
	  "wait until the movers have written everything back, report, and "
	  "end them", &opt_wait, NULL },
	{ "status", 0, GFSP_OPT_FLAG, NULL,
	  "show what the movers have pending, done and failed", &opt_status,
	  NULL },
	{ "interval", 0, GFSP_OPT_UINT, "SECONDS",
	  "the movers' period, and how long a file must rest to count as "
	  "written without a close (default 30)", &opt_interval, NULL },
	{ "cpus", 0, GFSP_OPT_STRING, "LIST",
	  "cores the movers run on, e.g. 7 or 6-7 (default: any, at the "
	  "lowest priority)", &opt_cpus, NULL },
	COMMON_OPTS,
	{ NULL, 0, 0, NULL, NULL, NULL, NULL }
};

/* -c is cache-warm's --cache-size; stage-out synced by default once */
static const struct gfsp_alias aliases[] = {
	{ 'c', NULL, "chunk-size", "-c is deprecated here (it is --cache-size "
	  "in cache-warm): use --chunk-size" },
	{ 0, "no-sync", NULL, "--no-sync is deprecated: not syncing is the "
	  "default now (--sync to sync)" },
	{ 0, NULL, NULL, NULL }
};

static int
options(int way, struct gfsp_stage_opts *o, int rank)
{
	int cpus;

	memset(o, 0, sizeof(*o));
	o->way = way;
	o->manifest = opt_manifest;
	o->scatter = opt_scatter;
	o->delete = opt_delete;
	o->merge = opt_merge;
	o->state_dir = opt_state;
	o->dry_run = opt_dry_run;
	o->x.chunk = opt_chunk;
	o->x.compress = opt_compress != -1;
	o->x.adapt = opt_compress == -2;	/* --compress=auto */
	o->x.level = opt_compress > 0 ? (int)GFSP_MIN(opt_compress, 22) : 0;
	/* by default one zstd worker a usable core; a single worker only
	 * leaves the calling thread waiting, so one core means none */
	cpus = GFSP_MIN(gfsp_usable_cpus(), 64);
	o->x.workers = opt_threads != UINT64_MAX ?
		       (int)GFSP_MIN(opt_threads, 64u) : cpus > 1 ? cpus : 0;
	o->x.checksum = !opt_no_checksum;
	o->x.raw = opt_raw;
	o->x.sparse = !opt_no_sparse;
	o->x.bwlimit = opt_bwlimit;
	o->x.sync = opt_sync;
	if (opt_chunk % (1u << 20) != 0 || opt_chunk > (128u << 20)) {
		if (rank == 0)
			gfsp_log_error("--chunk-size: a multiple of 1M up to "
				      "128M, please");
		return 2;
	}
	if (opt_raw && o->x.compress) {
		if (rank == 0)
			gfsp_log_error("--raw and --compress: choose one");
		return 2;
	}
	return 0;
}

/* ------------------------------------------------ asynchronous stage-out */

/* This node's SRC, destination root (DEST/NODE, or DEST: *root) and state
 * directory, absolute. */
static int
node_paths(const char *src_arg, const char *dst_arg, char **src, char **dst,
	   char **root, char **state, struct gfsp_error *err)
{
	char node[256], *s, *real = NULL;
	int rc = 0;

	*src = *dst = *root = *state = NULL;
	s = gfsp_node_path(src_arg);
	if (s == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	if (strstr(s, "://") == NULL) {
		real = realpath(s, NULL);
		if (real == NULL)
			rc = gfsp_error_errno(err, errno, "'%s'", s);
		free(s);
		s = real;
	}
	*src = s;
	gfsp_node_name(node, sizeof(node));
	/* absolute now: the mover works from its state directory */
	if (rc == 0 && dst_arg != NULL) {
		char *abs = gfsp_path_abs(dst_arg);

		if (abs == NULL || (opt_merge ? asprintf(dst, "%s", abs)
				    : asprintf(dst, "%s/%s", abs, node)) < 0)
			*dst = NULL, rc = gfsp_error_errno(err, errno ? errno
			    : ENOMEM, "'%s'", dst_arg);
		*root = abs;
	}
	if (rc == 0 && opt_state != NULL) {
		char *e = gfsp_node_path(opt_state);

		*state = e ? realpath(e, NULL) : NULL;
		if (*state == NULL && e != NULL &&
		    gfsp_private_dir(e, 1, NULL, err) == 0)
			*state = realpath(e, NULL);
		if (*state == NULL)
			rc = gfsp_error_errno(err, errno, "--state-dir '%s'",
					     opt_state);
		free(e);
	} else if (rc == 0 && asprintf(state, "%s/%s", *src,
				       GFSP_STATE_DIR) < 0) {
		*state = NULL;
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	return rc;
}

/* --attach, after MPI_Finalize: this node's first rank stays until its
 * mover ends (at stage-out --wait), so that the job step it belongs to
 * lives as long; a mover that did not end of itself is an error. */
static int
wait_mover(void)
{
	int status;
	pid_t p;

	if (mover_pid <= 0)
		return 0;
	do
		p = waitpid(mover_pid, &status, 0);
	while (p < 0 && errno == EINTR && gfsp_watch_stopped() == 0);
	if (p < 0 && gfsp_watch_stopped() != 0) {
		/* SIGINT, SIGTERM: this process goes, the mover stays */
		gfsp_log_info("stopped; the mover (process %ld) goes on until "
			     "stage-out --wait", (long)mover_pid);
		return 128 + gfsp_watch_stopped();
	}
	if (p < 0) {
		gfsp_log_error("cannot wait for the mover (process %ld): %s",
			      (long)mover_pid, strerror(errno));
		return 1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status))
		gfsp_log_error("the mover (process %ld) was killed by signal "
			      "%d before stage-out --wait", (long)mover_pid,
			      WTERMSIG(status));
	else
		gfsp_log_error("the mover (process %ld) ended with status %d",
			      (long)mover_pid, WEXITSTATUS(status));
	return 1;
}

/* --async: each node's first rank starts its node's mover. */
static int
start_movers(MPI_Comm comm, const struct gfsp_stage_opts *o)
{
	struct gfsp_error err = { 0 };
	MPI_Comm node = MPI_COMM_NULL;
	char *src = NULL, *dst = NULL, *root = NULL, *state = NULL;
	int rc, lrank = 0, idx, nn, rank, confined = 0;

	MPI_Comm_rank(comm, &rank);
	rc = gfsp_node_comm(comm, &node, &idx, &nn, &err);
	if (rc == 0)
		MPI_Comm_rank(node, &lrank);
	/* not into our state, nor under a temporary's name (stage.h) */
	if (rc == 0)
		rc = gfsp_stage_check_dst("DEST ", o->dst, &err);
	if (rc == 0 && !opt_merge && rank == 0)
		rc = gfsp_mkdirs(o->dst, 0755, &err);
	rc = gfsp_agree(comm, rc, &err);
	if (rc == 0 && lrank == 0) {
		rc = node_paths(o->src[0], o->dst, &src, &dst, &root, &state,
				&err);
		/* DEST/NODE, not through a link someone planted there */
		if (rc == 0 && !opt_merge)
			rc = gfsp_confine(root, &err);
		confined = rc == 0 && !opt_merge;
		if (rc == 0)
			rc = gfsp_mkdirs(dst, 0755, &err);
		if (rc == 0)
			rc = gfsp_private_dir(state, 1, NULL, &err);
		/* where --wait without SRC finds it */
		if (rc == 0)
			rc = gfsp_private_dir(gfsp_mover_registry(), 1, NULL,
					     &err);
		if (rc == 0)
			rc = gfsp_mover_spawn(main_argv, state, src, dst, root,
					     &mover_pid, &err);
		if (confined)
			gfsp_unconfine(root);
		if (rc == 0)
			gfsp_log_info("mover started: '%s' -> '%s'", src, dst);
	}
	if (rc)
		gfsp_log_gfs_error(&err);
	free(src);
	free(dst);
	free(root);
	free(state);
	if (node != MPI_COMM_NULL)
		MPI_Comm_free(&node);
	rc = gfsp_agree(comm, rc, &err) ? 1 : 0;
	if (rc == 0 && opt_attach)
		gfsp_cmd_then(wait_mover);
	return rc;
}

#define UNSAVED_SHOWN	20	/* files of a gone mover listed as text */

/*
 * The movers' answers: one JSON object holding them ("movers", one per
 * mover of each node; schemas/stage-out-status.schema.json), or a few
 * lines each.  src is the SRC asked about (null: all); no dest, no bytes
 * of its own (each mover has them); seconds the time the request took.
 */
static void
print_movers(json_object *all, const char *req, const char *src, int ranks,
	     double seconds)
{
	size_t i, n = json_object_array_length(all), k;
	json_object *doc;

	if (opt_json) {
		doc = gfsp_json_doc("stage-out", src, NULL, ranks, seconds, -1);
		if (doc == NULL) {
			gfsp_log_error("out of memory");
			return;
		}
		json_object_object_add(doc, "request",
				       json_object_new_string(req));
		json_object_object_add(doc, "movers", json_object_get(all));
		gfsp_json_print(stdout, doc, JSON_C_TO_STRING_PLAIN);
		json_object_put(doc);
		return;
	}
	if (n == 0)
		gfsp_log_info("no mover runs");
	for (i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(all, i), *x, *f;
		const char *node = gfsp_json_str(o, "node");

		if (gfsp_json_str(o, "error") != NULL &&
		    (!json_object_object_get_ex(o, "pid", &x) ||
		     json_object_object_get_ex(o, "unsaved", &f))) {
			/* no answer; or gone, with what it left */
			gfsp_log_error("%s: %s", node ? node : "?",
				      gfsp_json_str(o, "error"));
			if (!json_object_object_get_ex(o, "unsaved", &x))
				continue;
			for (k = 0; k < json_object_array_length(x) &&
			     k < UNSAVED_SHOWN; k++)
				printf("  not written back: %s\n",
				       json_object_get_string(
				       json_object_array_get_idx(x, k)));
			if (k < json_object_array_length(x))
				printf("  ... and %zu more (--json lists them "
				       "all)\n", json_object_array_length(x) - k);
			continue;
		}
		printf("%s: mover %d, '%s' -> '%s': %s\n", node ? node : "?",
		       json_object_get_int(json_object_object_get_ex(o, "pid", &x) ? x : NULL),
		       gfsp_json_str(o, "src"), gfsp_json_str(o, "dest"),
		       strcmp(req, "wait") == 0 ? "done" : "running");
		if (json_object_object_get_ex(o, "files_done", &x))
			printf("  %lld files written back, %lld bytes\n",
			       (long long)json_object_get_int64(x),
			       (long long)json_object_get_int64(
			       json_object_object_get_ex(o, "bytes_done", &f) ? f : NULL));
		if (json_object_object_get_ex(o, "pending", &x))
			for (k = 0; k < json_object_array_length(x); k++)
				printf("  pending: %s\n", json_object_get_string(
				       json_object_array_get_idx(x, k)));
		if (json_object_object_get_ex(o, "failed", &x))
			for (k = 0; k < json_object_array_length(x); k++) {
				f = json_object_array_get_idx(x, k);
				printf("  failed: %s: %s\n",
				       gfsp_json_str(f, "path"),
				       gfsp_json_str(f, "error"));
			}
	}
}

/* Ask one mover (its state file) for req; its answer, or what it left
 * or why it did not answer, as one JSON line on fp.  A mover gone with
 * nothing to tell is forgotten; by_src: SRC was named, so a mover that
 * never ran is told as an error. */
static void
ask_mover(FILE *fp, const char *node_name, const char *state,
	  const char *req, int by_src)
{
	struct gfsp_error e = { 0 };
	json_object *reply = NULL;
	int grc;

	if (gfsp_mover_request(state, req, &reply, &e) == GFSP_ENOENT) {
		/* gone: what did it leave?  Nothing: unlisted.  No
		 * record, asked by SRC: "no mover runs" */
		gfsp_error_clear(&e);
		grc = gfsp_mover_gone(state, &reply, &e);
		if ((grc == 0 && reply == NULL) ||
		    (grc == GFSP_ENOENT && !by_src)) {
			gfsp_mover_forget(node_name, state);
			return;
		}
		if (grc == GFSP_ENOENT) {
			gfsp_error_clear(&e);
			gfsp_error_set(&e, GFSP_ENOENT, "no mover runs for "
				       "'%s'", state);
		}
	}
	if (reply == NULL) {
		reply = json_object_new_object();
		json_object_object_add(reply, "node",
				       json_object_new_string(node_name));
		json_object_object_add(reply, "state",
				       json_object_new_string(state));
		json_object_object_add(reply, "error",
				       json_object_new_string(e.msg));
	}
	fprintf(fp, "%s\n", json_object_to_json_string_ext(reply,
		JSON_C_TO_STRING_PLAIN));
	json_object_put(reply);
}

/* Rank 0: the movers' answers (JSON lines from every node) printed;
 * 1 when one failed a file or did not answer, or (--wait) still has a
 * file open for writing. */
static int
print_answers(char *gathered, const char *req, const char *src, int size,
	      double secs)
{
	json_object *all = json_object_new_array();
	char *line, *save = NULL;
	int bad = 0;

	for (line = strtok_r(gathered, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		json_object *o = json_tokener_parse(line), *x;

		if (o == NULL)
			continue;
		if (json_object_object_get_ex(o, "error", &x) ||
		    (opt_status == 0 &&
		     json_object_object_get_ex(o, "failed", &x) &&
		     json_object_array_length(x) > 0) ||
		    (opt_wait &&
		     json_object_object_get_ex(o, "pending", &x) &&
		     json_object_array_length(x) > 0))
			bad = 1;
		json_object_array_add(all, o);
	}
	print_movers(all, req, src, size, secs);
	json_object_put(all);
	return bad;
}

/* --flush, --wait, --status: each node's first rank asks its movers (of
 * SRC, or all of them); rank 0 prints their answers. */
static int
control(MPI_Comm comm, int argc, char **argv)
{
	const char *req = opt_flush ? "flush" : opt_wait ? "wait" : "status";
	struct gfsp_error err = { 0 };
	MPI_Comm node = MPI_COMM_NULL;
	char **states = NULL, *src = NULL, *dst = NULL, *root = NULL, *one = NULL;
	char node_name[256];
	char *text = NULL, *gathered = NULL;
	size_t n = 0, i, len = 0;
	int rc, lrank = 0, idx, nn, rank, size, bad = 0;
	double t0 = gfsp_now();
	FILE *fp;

	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	gfsp_node_name(node_name, sizeof(node_name));
	rc = gfsp_node_comm(comm, &node, &idx, &nn, &err);
	if (rc == 0)
		MPI_Comm_rank(node, &lrank);
	fp = open_memstream(&text, &len);
	if (rc == 0 && lrank == 0 && argc > 0) {
		rc = node_paths(argv[0], NULL, &src, &dst, &root, &one, &err);
		if (rc == 0) {
			states = calloc(1, sizeof(char *));
			if (states != NULL) {
				states[0] = one;
				n = 1;
			}
		}
	} else if (rc == 0 && lrank == 0) {
		rc = gfsp_mover_list(node_name, &states, &n, &err);
	}
	for (i = 0; rc == 0 && lrank == 0 && i < n; i++)
		ask_mover(fp, node_name, states[i], req, argc > 0);
	fclose(fp);
	if (rc)
		gfsp_log_gfs_error(&err);
	rc = gfsp_agree(comm, rc, &err);
	if (rc == 0)
		rc = gfsp_gather_text(comm, text, len, &gathered, &err);
	if (rc == 0 && rank == 0)
		bad = print_answers(gathered, req, argc > 0 ? argv[0] : NULL,
				    size, gfsp_now() - t0);
	MPI_Bcast(&bad, 1, MPI_INT, 0, comm);
	gfsp_strv_free(states, n);
	free(src);
	free(dst);
	free(root);
	free(text);
	free(gathered);
	if (node != MPI_COMM_NULL)
		MPI_Comm_free(&node);
	return rc || bad ? 1 : 0;
}

static int
run(int way, int argc, char **argv, MPI_Comm comm)
{
	struct gfsp_stage_opts o;
	struct gfsp_stage_result res;
	struct gfsp_error err = { 0 };
	const char *name = way == GFSP_STAGE_IN ? "stage-in" : "stage-out";
	int rank, rc;

	MPI_Comm_rank(comm, &rank);
	rc = options(way, &o, rank);
	if (rc)
		return rc;
	o.nsrc = argc - 1;
	o.src = argv;
	o.dst = argv[argc - 1];
	if (way == GFSP_STAGE_IN && o.nsrc == 0 && o.manifest == NULL) {
		if (rank == 0)
			gfsp_log_error("nothing to stage: give SRC... or "
				      "--manifest");
		return 2;
	}
	if (way == GFSP_STAGE_OUT &&
	    opt_async + opt_flush + opt_wait + opt_status > 1) {
		if (rank == 0)
			gfsp_log_error("--async, --flush, --wait and --status: "
				      "one at a time");
		return 2;
	}
	if (way == GFSP_STAGE_OUT && opt_attach && !opt_async) {
		if (rank == 0)
			gfsp_log_error("--attach goes with --async");
		return 2;
	}
	if (way == GFSP_STAGE_OUT && o.dry_run &&
	    opt_async + opt_flush + opt_wait + opt_status > 0) {
		if (rank == 0)
			gfsp_log_error("--dry-run plans a synchronous stage-out "
				      "only");
		return 2;
	}
	if (way == GFSP_STAGE_OUT && (opt_flush || opt_wait || opt_status))
		return control(comm, argc, argv);
	if (way == GFSP_STAGE_OUT && argc < 2) {
		if (rank == 0)
			gfsp_log_error("missing operand: stage-out takes SRC "
				      "and DEST (or --flush, --wait, --status)");
		return 2;
	}
	if (way == GFSP_STAGE_OUT && opt_async)
		return start_movers(comm, &o);
	rc = gfsp_stage(comm, &o, &res, &err);
	if (rank == 0 && (rc == 0 || res.failures != NULL))
		stagecmd_print(stdout, name, &o, &res, opt_json);
	if (rc && res.failures == NULL)
		gfsp_log_gfs_error(&err);
	gfsp_stage_result_free(&res);
	/* everything that could be staged is, but not all: rank 0's status
	 * is every rank's (the driver takes the worst) */
	return rc ? 1 : rank == 0 && res.special > 0 ? GFSP_EXIT_PARTIAL : 0;
}

static int
run_in(int argc, char **argv, MPI_Comm comm)
{
	return run(GFSP_STAGE_IN, argc, argv, comm);
}

static int
run_out(int argc, char **argv, MPI_Comm comm)
{
	return run(GFSP_STAGE_OUT, argc, argv, comm);
}

/* The mover's own run: no MPI; paths from the environment. */
static int
run_mover(int argc, char **argv, MPI_Comm comm)
{
	struct gfsp_mover_opts mo;
	struct gfsp_stage_opts o;
	struct gfsp_error err = { 0 };
	const char *state = getenv("GFSPLIT_STAGE_MOVER");
	int rc;

	rc = options(GFSP_STAGE_OUT, &o, 0);
	if (rc)
		return rc;
	memset(&mo, 0, sizeof(mo));
	mo.src = getenv("GFSPLIT_MOVER_SRC");
	mo.dst = getenv("GFSPLIT_MOVER_DST");
	mo.dst_root = getenv("GFSPLIT_MOVER_ROOT");
	mo.state_dir = state;
	mo.x = o.x;
	mo.x.nonce = gfsp_random64();
	mo.interval = opt_interval > 0 ? (double)opt_interval : 30;
	mo.cpus = opt_cpus;
	if (mo.src == NULL || mo.dst == NULL || state == NULL) {
		gfsp_log_error("the mover needs GFSPLIT_MOVER_SRC and _DST");
		return 2;
	}
	/* it works from its state directory: a relative path would land
	 * below it */
	if (mo.src[0] != '/' || state[0] != '/' ||
	    (mo.dst[0] != '/' && strstr(mo.dst, "://") == NULL)) {
		gfsp_log_error("the mover needs absolute paths, not '%s' -> "
			      "'%s' (state '%s')", mo.src, mo.dst, state);
		return 2;
	}
	rc = gfsp_mover_run(&mo, &err);
	if (rc)
		gfsp_log_gfs_error(&err);
	return rc ? 1 : 0;
}

int
stagecmd_main(int way, int argc, char **argv)
{
	static const struct gfsp_cmd in = {
		.name = "stage-in",
		.usage = "[OPTIONS] SRC... DEST",
		.summary = "Copy files and trees from shared storage into the "
			   "node-local directory DEST of every node, reading "
			   "each file from shared storage once.",
		.opts = in_opts,
		.aliases = aliases,
		.progress = 1,
		.min_args = 1,
		.max_args = -1,
		.uses_mpi = 1,
		.run = run_in,
	};
	static const struct gfsp_cmd out = {
		.name = "stage-out",
		.usage = "[OPTIONS] SRC DEST | --flush|--wait|--status [SRC]",
		.summary = "Copy each node's node-local results SRC back to "
			   "shared storage, into DEST/NODE/ or one merged tree; "
			   "with --async in the background while the job runs.",
		.opts = out_opts,
		.aliases = aliases,
		.progress = 1,
		.min_args = 0,
		.max_args = 2,
		.uses_mpi = 1,
		.run = run_out,
	};
	static const struct gfsp_cmd mover = {
		.name = "stage-out",
		.usage = "(mover)",
		.opts = out_opts,
		.aliases = aliases,
		.progress = 1,
		.min_args = 0,
		.max_args = 2,
		.uses_mpi = 0,
		.daemon = 1,
		.run = run_mover,
	};

	main_argv = argv;
	if (way == GFSP_STAGE_OUT && getenv("GFSPLIT_STAGE_MOVER") != NULL)
		return gfsp_cmd_main(&mover, argc, argv);
	return gfsp_cmd_main(way == GFSP_STAGE_IN ? &in : &out, argc, argv);
}

/* ------------------------------------------------------------ summary */

static void
add_u64(json_object *j, const char *key, uint64_t v)
{
	json_object_object_add(j, key, json_object_new_uint64(v));
}

/* The summary as one JSON document (schemas/stage-in.schema.json).
 * stage-in: src the list of SRC operands (and the manifest); stage-out:
 * its one SRC.  bytes: written to DEST, or in a dry run to write. */
static void
print_json(FILE *fp, const char *cmd, const struct gfsp_stage_opts *o,
	   const struct gfsp_stage_result *r)
{
	json_object *j, *srcs;
	int k;

	j = gfsp_json_doc(cmd, o->nsrc > 0 ? o->src[0] : NULL, o->dst,
			  r->ranks, r->seconds, (int64_t)(o->dry_run ?
			  r->planned_bytes : r->sum.bytes_written));
	if (j == NULL)
		return;
	if (o->dry_run)
		json_object_object_add(j, "bytes_per_sec", NULL);
	if (strcmp(cmd, "stage-in") == 0) {
		srcs = json_object_new_array();
		for (k = 0; k < o->nsrc; k++)
			json_object_array_add(srcs,
					      json_object_new_string(o->src[k]));
		json_object_object_add(j, "src", srcs);
		json_object_object_add(j, "manifest", o->manifest ?
		    json_object_new_string(o->manifest) : NULL);
	}
	json_object_object_add(j, "nodes", json_object_new_int(r->nodes));
	json_object_object_add(j, "dry_run",
			       json_object_new_boolean(o->dry_run));
	add_u64(j, "entries", r->listed);
	add_u64(j, "planned_bytes", r->planned_bytes);
	add_u64(j, "files", r->files);
	add_u64(j, "skipped", r->skipped);
	add_u64(j, "links", r->links);
	add_u64(j, "dirs", r->dirs);
	add_u64(j, "failed", r->failed);
	add_u64(j, "not_staged", r->special);
	if (o->delete)
		add_u64(j, "deleted", r->deleted);
	add_u64(j, "bytes_read", r->sum.bytes_read);
	add_u64(j, "bytes_written", r->sum.bytes_written);
	add_u64(j, "bytes_resumed", r->sum.bytes_resumed);
	add_u64(j, "bytes_forwarded", r->sum.bytes_forwarded);
	add_u64(j, "bytes_holes", r->sum.bytes_holes);
	add_u64(j, "raw_bytes", r->sum.raw_bytes);
	json_object_object_add(j, "max_rss_kib",
			       json_object_new_int64(r->max_rss_kib));
	json_object_object_add(j, "cpu_seconds",
			       json_object_new_double(r->cpu_seconds));
	json_object_object_add(j, "failures", r->failures ?
			       json_object_get(r->failures) :
			       json_object_new_array());
	if (r->plan)
		json_object_object_add(j, "plan", json_object_get(r->plan));
	gfsp_json_print(fp, j, JSON_C_TO_STRING_PLAIN);
	json_object_put(j);
}

/* A dry run: what would be copied, then each rank's share; tail: the
 * "not staged" and "deleted" counts */
static void
print_dry_run(FILE *fp, const char *cmd, const struct gfsp_stage_result *r,
	      const char *tail)
{
	size_t i, n = r->plan ? json_object_array_length(r->plan) : 0;
	char a[32];

	fprintf(fp, "%s: would copy %s of %llu entries to %d node%s, "
		"%llu already there (same size and time)%s\n", cmd,
		gfsp_format_size(r->planned_bytes, a, sizeof(a)),
		(unsigned long long)r->listed, r->nodes,
		r->nodes == 1 ? "" : "s", (unsigned long long)r->skipped, tail);
	for (i = 0; i < n; i++) {
		json_object *p = json_object_array_get_idx(r->plan, i), *x;
		uint64_t bytes = 0, pieces = 0;

		if (json_object_object_get_ex(p, "bytes", &x))
			bytes = (uint64_t)json_object_get_int64(x);
		if (json_object_object_get_ex(p, "pieces", &x))
			pieces = (uint64_t)json_object_get_int64(x);
		fprintf(fp, "  rank %zu: %s in %llu piece%s\n", i,
			gfsp_format_size(bytes, a, sizeof(a)),
			(unsigned long long)pieces, pieces == 1 ? "" : "s");
	}
}

/* Each failed file as an error line: "NODE: MESSAGE" */
static void
log_failures(const struct gfsp_stage_result *r)
{
	size_t i, n = r->failures ? json_object_array_length(r->failures) : 0;

	for (i = 0; i < n; i++) {
		json_object *f = json_object_array_get_idx(r->failures, i), *x;
		const char *node = "", *msg = "";

		if (json_object_object_get_ex(f, "node", &x))
			node = json_object_get_string(x);
		if (json_object_object_get_ex(f, "error", &x))
			msg = json_object_get_string(x);
		gfsp_log_error("%s: %s", node, msg);
	}
}

void
stagecmd_print(FILE *fp, const char *cmd, const struct gfsp_stage_opts *o,
	       const struct gfsp_stage_result *r, int json)
{
	char a[32], b[32], c[96], d[96], e[32];

	if (json) {
		print_json(fp, cmd, o, r);
		return;
	}
	c[0] = '\0';
	if (r->special > 0)
		snprintf(c, sizeof(c), ", %llu not staged",
			 (unsigned long long)r->special);
	if (o->delete)
		snprintf(c + strlen(c), sizeof(c) - strlen(c), ", %llu %s",
			 (unsigned long long)r->deleted, o->dry_run ?
			 "would be deleted" : "deleted");
	log_failures(r);
	if (o->dry_run) {
		print_dry_run(fp, cmd, r, c);
		return;
	}
	d[0] = '\0';
	if (r->sum.bytes_resumed > 0)
		snprintf(d, sizeof(d), " (%s more found done by an earlier "
			 "run)", gfsp_format_size(r->sum.bytes_resumed, b,
						  sizeof(b)));
	gfsp_log_info("%llu file%s installed on %d node%s, %llu already "
		      "there, %llu link%s, %llu failed%s; copied %s%s, read "
		      "%s in %.2f s",
		      (unsigned long long)r->files, r->files == 1 ? "" : "s",
		      r->nodes, r->nodes == 1 ? "" : "s",
		      (unsigned long long)r->skipped,
		      (unsigned long long)r->links, r->links == 1 ? "" : "s",
		      (unsigned long long)r->failed,
		      c, gfsp_format_size(r->sum.raw_bytes, a, sizeof(a)), d,
		      gfsp_format_size(r->sum.bytes_read, e, sizeof(e)),
		      r->seconds);
}
