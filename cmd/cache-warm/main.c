/*
 * cache-warm - fill each node's local tier with the blocks of files before
 * a job, through the cooperative cache:
 *   mpiexec -n N cache-warm [OPTIONS] FILE...
 *
 * The options table below is the one source of truth: --help is made from
 * it, and tests/cmd/options.sh checks the man page and the completions
 * against --help.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "core.h"
#include "driver.h"
#include "warmreport.h"

static const char *opt_dir;
static const char *opt_keep = "all";
static uint64_t opt_groups = 1;
static uint64_t opt_block = GFSP_CACHE_BLOCK_DEFAULT;
static uint64_t opt_cache = GFSP_CACHE_SIZE_DEFAULT;
static const char *opt_ratio;
static const char *opt_transport = "auto";
static int opt_force, opt_json;

static const struct gfsp_opt opts[] = {
	{ "local-dir", 'd', GFSP_OPT_STRING, "DIR",
	  "each node's tier directory, \"%h\" standing for the node's name "
	  "(default: $GFSPLIT_CACHE_LOCAL_DIR, else /dev/shm/gfsplit-cache-UID)",
	  &opt_dir, NULL },
	{ "keep", 'k', GFSP_OPT_STRING, "WHICH",
	  "blocks each node keeps: 'all' (default) or 'part' (block j on node "
	  "j mod nodes: the nodes hold each file once)", &opt_keep, "all|part" },
	{ "groups", 'g', GFSP_OPT_UINT, "G",
	  "cache groups (rank mod G): a block is read from shared storage "
	  "about once per group (default 1)", &opt_groups, NULL },
	{ "block-size", 'b', GFSP_OPT_SIZE, "SIZE",
	  "cache and tier block (default 1M)", &opt_block, NULL },
	{ "cache-size", 'c', GFSP_OPT_SIZE, "SIZE",
	  "cache memory per rank while warming (default 256M)", &opt_cache,
	  NULL },
	{ "singlet-ratio", 0, GFSP_OPT_STRING, "R",
	  "share of the cache kept for blocks no other rank holds, 0 to 1 "
	  "(default 0.5)", &opt_ratio, NULL },
	{ "transport", 0, GFSP_OPT_STRING, "NAME",
	  "one-sided transport: 'auto' (default), 'mpi', 'shm', 'tcp' or 'verbs'",
	  &opt_transport, "auto|mpi|shm|tcp|verbs" },
	{ "force", 0, GFSP_OPT_FLAG, NULL,
	  "warm again files a node's tier already holds", &opt_force, NULL },
	{ "json", 0, GFSP_OPT_FLAG, NULL,
	  "print a JSON summary on stdout", &opt_json, NULL },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL }
};

static int
run(int argc, char **argv, MPI_Comm comm)
{
	struct gfsp_cache_opts co = { 0 };
	struct gfsp_warm_opts wo = { 0 };
	struct gfsp_warm_result *res;
	struct gfsp_cache_stats sum;
	struct gfsp_cache *c = NULL;
	struct gfsp_error err = { 0 };
	double t0 = gfsp_now();
	char *end = NULL;
	int rc, nnodes = 0, rank;

	MPI_Comm_rank(comm, &rank);
	co.block_size = opt_block;
	co.cache_size = opt_cache;
	co.groups = (int)GFSP_MIN(opt_groups, 1u << 20);
	co.transport = opt_transport;
	co.singlet_ratio = opt_ratio ? strtod(opt_ratio, &end) : -1;
	if (opt_ratio && (end == opt_ratio || *end != '\0' ||
	    co.singlet_ratio < 0 || co.singlet_ratio > 1)) {
		if (rank == 0)
			gfsp_log_error("--singlet-ratio '%s': a number from 0 "
			    "to 1, please", opt_ratio);
		return 2;
	}
	wo.local_dir = opt_dir ? opt_dir : gfsp_cache_local_dir_default();
	wo.keep = strcmp(opt_keep, "part") == 0 ? GFSP_WARM_PART :
	    GFSP_WARM_ALL;
	wo.force = opt_force;
	res = calloc((size_t)argc, sizeof(*res));
	rc = gfsp_agree(comm, res == NULL ? gfsp_error_set(&err, GFSP_ENOMEM,
	    "out of memory") : 0, &err);
	if (rc == 0)
		rc = gfsp_cache_create(comm, &co, &c, &err);
	if (rc == 0)
		rc = gfsp_cache_warm(c, &wo, argc, argv, res, &nnodes, &err);
	if (rc == 0)
		rc = gfsp_cache_stats_all(c, &sum, NULL, &err);
	if (rc == 0 && rank == 0 && (opt_json || !gfsp_opt_quiet))
		warmreport_print(stdout, opt_json, &wo, c, argc, argv, res,
		    nnodes, &sum, gfsp_now() - t0);
	gfsp_cache_destroy(c);
	free(res);
	if (rc) {
		gfsp_log_gfs_error(&err);
		return 1;
	}
	return 0;
}

static const struct gfsp_cmd cmd = {
	.name = "cache-warm",
	.usage = "[OPTIONS] FILE...",
	.summary = "Fill each node's local tier with the blocks of FILEs, "
		   "read through the cooperative cache, so that jobs using "
		   "the cache start warm.",
	.opts = opts,
	.min_args = 1,
	.max_args = -1,
	.progress = 1,
	.uses_mpi = 1,
	.mpi_multiple = 1,	/* the cache's progress thread */
	.run = run,
};

int
main(int argc, char **argv)
{
	return gfsp_cmd_main(&cmd, argc, argv);
}
