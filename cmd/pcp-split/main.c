/*
 * pcp-split - parallel copy of an ordinary file into a split file, one part
 * per rank:  mpiexec -n N pcp-split [OPTIONS] SRC DST
 *
 * The options table below is the one source of truth: --help is made from
 * it, and tests/cmd/options.sh checks the man page and the completions
 * against --help.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "driver.h"
#include "copy.h"
#include "copyreport.h"
#include "dst.h"

#define UNSET UINT64_MAX

static uint64_t opt_block = UNSET;
static uint64_t opt_buffer = GFSP_COPY_BUFFER_DEFAULT;
static int opt_force, opt_dry_run, opt_json, opt_sync, opt_preserve,
	   opt_no_sparse;
static const char *opt_hosts;
static const char *opt_placement = "fallback";

static const struct gfsp_opt opts[] = {
	{ "block-size", 'b', GFSP_OPT_SIZE, "SIZE",
	  "cyclic layout: rank r owns blocks r, r+N, ... of SIZE bytes "
	  "(default: one contiguous range per rank)", &opt_block, NULL },
	{ "buffer-size", 0, GFSP_OPT_SIZE, "SIZE",
	  "transfer buffer, two per rank (default 8M)", &opt_buffer, NULL },
	{ "force", 0, GFSP_OPT_FLAG, NULL,
	  "replace an existing DST, only once the new one is complete",
	  &opt_force, NULL },
	{ "dry-run", 'n', GFSP_OPT_FLAG, NULL,
	  "print what each rank would copy; write nothing", &opt_dry_run,
	  NULL },
	{ "json", 0, GFSP_OPT_FLAG, NULL,
	  "print a JSON summary on stdout", &opt_json, NULL },
	{ "hosts", 0, GFSP_OPT_STRING, "LIST",
	  "storage nodes, comma-separated: rank r's part goes to entry r mod K "
	  "(default: $GFSPLIT_GFARM_HOSTS, else each rank's own node)",
	  &opt_hosts, NULL },
	{ "placement", 0, GFSP_OPT_STRING, "POLICY",
	  "when a rank's node is down or full: 'fallback' to another node "
	  "(default) or fail ('strict')", &opt_placement, "strict|fallback" },
	{ "no-sparse", 0, GFSP_OPT_FLAG, NULL,
	  "write a sparse SRC's holes into the parts as zeros",
	  &opt_no_sparse, NULL },
	{ "sync", 0, GFSP_OPT_FLAG, NULL,
	  "fsync parts and metadata before the commit", &opt_sync, NULL },
	{ "preserve", 'p', GFSP_OPT_FLAG, NULL,
	  "record SRC's mode, owner and times in DST, for gfsplit-merge -p "
	  "(split file format 4)", &opt_preserve, NULL },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL }
};

static int
run(int argc, char **argv, MPI_Comm comm)
{
	struct gfsp_split_args a = { 0 };
	struct gfsp_copy_result res;
	struct gfsp_error err = { 0 };
	char *dst = NULL;
	int rank, rc;

	(void)argc;
	MPI_Comm_rank(comm, &rank);
	/* an existing directory DST means DST/NAME, as with cp */
	if (gfsp_dst_resolve(comm, argv[0], argv[1], NULL, &dst, &err) != 0) {
		gfsp_log_gfs_error(&err);
		return 1;
	}
	a.src = argv[0];
	a.dst = dst;
	a.block_size = opt_block == UNSET ? 0 : opt_block;
	a.buffer_size = opt_buffer;
	a.force = opt_force;
	a.dry_run = opt_dry_run;
	a.sync = opt_sync;
	a.preserve = opt_preserve;
	a.no_sparse = opt_no_sparse;
	a.hosts = opt_hosts ? opt_hosts : getenv("GFSPLIT_GFARM_HOSTS");
	a.placement = strcmp(opt_placement, "strict") == 0 ?
		      GFSP_PLACE_STRICT : GFSP_PLACE_FALLBACK;

	rc = gfsp_pcp_split(comm, &a, &res, &err);
	if (rc != 0) {
		gfsp_log_gfs_error(&err);
		free(dst);
		return 1;
	}
	if (rank == 0)
		copyreport_print("pcp-split", a.src, a.dst, &res, opt_json,
			       a.dry_run);
	free(res.plan);
	free(dst);
	return 0;
}

static const struct gfsp_cmd cmd = {
	.name = "pcp-split",
	.usage = "[OPTIONS] SRC DST",
	.summary = "Copy the ordinary file SRC into a new split file DST, "
		   "one part per MPI rank.",
	.opts = opts,
	.min_args = 2,
	.max_args = 2,
	.progress = 1,
	.uses_mpi = 1,
	.stoppable = 1,
	.run = run,
};

int
main(int argc, char **argv)
{
	return gfsp_cmd_main(&cmd, argc, argv);
}
