/*
 * gfsplit-merge - reassemble a split file into one ordinary file with any
 * number of ranks:  mpiexec -n M gfsplit-merge [OPTIONS] SRC DST
 *
 * The options table below is the one source of truth: --help is made from
 * it, and tests/cmd/options.sh checks the man page and the completions
 * against --help.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core.h"
#include "driver.h"
#include "copy.h"
#include "copyreport.h"
#include "dst.h"

static uint64_t opt_stripe = GFSP_MERGE_STRIPE_DEFAULT;
static uint64_t opt_buffer = GFSP_COPY_BUFFER_DEFAULT;
static int opt_no_verify, opt_force, opt_dry_run, opt_json, opt_sync;
static int opt_preserve, opt_no_sparse;

static const struct gfsp_opt opts[] = {
	{ "stripe-size", 0, GFSP_OPT_SIZE, "SIZE",
	  "output stripe; the share of each node goes to one of its "
	  "ranks (default 64M)",
	  &opt_stripe, NULL },
	{ "buffer-size", 0, GFSP_OPT_SIZE, "SIZE",
	  "transfer buffer, two per rank (default 8M)", &opt_buffer, NULL },
	{ "no-verify", 0, GFSP_OPT_FLAG, NULL,
	  "do not check the part checksums", &opt_no_verify, NULL },
	{ "force", 0, GFSP_OPT_FLAG, NULL,
	  "replace an existing DST, only once the new one is complete",
	  &opt_force, NULL },
	{ "dry-run", 'n', GFSP_OPT_FLAG, NULL,
	  "print what each rank would write; write nothing", &opt_dry_run,
	  NULL },
	{ "json", 0, GFSP_OPT_FLAG, NULL,
	  "print a JSON summary on stdout", &opt_json, NULL },
	{ "no-sparse", 0, GFSP_OPT_FLAG, NULL,
	  "write the holes of parts that have them into DST as zeros",
	  &opt_no_sparse, NULL },
	{ "sync", 0, GFSP_OPT_FLAG, NULL,
	  "fsync DST before it is renamed into place", &opt_sync, NULL },
	{ "preserve", 'p', GFSP_OPT_FLAG, NULL,
	  "give DST the mode, owner (where allowed) and times pcp-split -p "
	  "recorded", &opt_preserve, NULL },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL }
};

static int
run(int argc, char **argv, MPI_Comm comm)
{
	struct gfsp_merge_args a = { 0 };
	struct gfsp_copy_result res;
	struct gfsp_error err = { 0 };
	char *dst = NULL;
	int rank, rc;

	(void)argc;
	MPI_Comm_rank(comm, &rank);
	/* an existing directory DST means DST/NAME, as with cp */
	if (gfsp_dst_resolve(comm, argv[0], argv[1], ".split", &dst, &err) != 0) {
		gfsp_log_gfs_error(&err);
		return 1;
	}
	a.src = argv[0];
	a.dst = dst;
	a.stripe_size = opt_stripe;
	a.buffer_size = opt_buffer;
	a.verify = !opt_no_verify;
	a.force = opt_force;
	a.dry_run = opt_dry_run;
	a.sync = opt_sync;
	a.preserve = opt_preserve;
	a.no_sparse = opt_no_sparse;

	rc = gfsp_merge(comm, &a, &res, &err);
	if (rc != 0) {
		gfsp_log_gfs_error(&err);
		free(dst);
		return 1;
	}
	if (rank == 0)
		copyreport_print("gfsplit-merge", a.src, a.dst, &res, opt_json,
			       a.dry_run);
	free(res.plan);
	free(dst);
	return 0;
}

static const struct gfsp_cmd cmd = {
	.name = "gfsplit-merge",
	.usage = "[OPTIONS] SRC DST",
	.summary = "Reassemble the split file SRC into the ordinary file DST "
		   "with any number of MPI ranks.",
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
