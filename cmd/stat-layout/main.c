/*
 * stat-layout - show and check the layout of a split file; runs without
 * mpiexec:  stat-layout [--json] [--check] [--map OFFSET] SPLITFILE
 *
 * The options table below is the one source of truth: --help is made from
 * it, and tests/cmd/options.sh checks the man page and the completions
 * against --help.
 */
#include <stdio.h>
#include <stdlib.h>
#include <json-c/json.h>

#include "core.h"
#include "driver.h"
#include "layout_impl.h"

#define UNSET UINT64_MAX

static int opt_json, opt_check;
static uint64_t opt_map = UNSET;

static const struct gfsp_opt opts[] = {
	{ "json", 0, GFSP_OPT_FLAG, NULL,
	  "print one JSON object instead of text", &opt_json, NULL },
	{ "check", 0, GFSP_OPT_FLAG, NULL,
	  "verify every checksum and invariant; exit 1 on any problem",
	  &opt_check, NULL },
	{ "map", 0, GFSP_OPT_OFFSET, "OFFSET",
	  "tell which part and local offset hold global OFFSET", &opt_map,
	  NULL },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL }
};

static int
run(int argc, char **argv, MPI_Comm comm)
{
	struct gfsp_statinfo_opts o = { 0 };
	struct gfsp_error err = { 0 };
	json_object *info = NULL, *doc;
	double t0 = gfsp_now();
	char *text;
	int rc, size = 1;

	(void)argc;
	(void)comm;		/* no MPI: one process, "ranks": 1 */
	o.check = opt_check;
	o.map = opt_map != UNSET;
	o.map_offset = opt_map;
	rc = gfsp_statinfo(argv[0], &o, &info, &err);
	/* -q --check: the exit status says it (a problem still on stderr) */
	if (info != NULL && !(opt_check && gfsp_opt_quiet && !opt_json)) {
		if (opt_json) {
			/* --map answers just that; the layout too with -v */
			doc = gfsp_statinfo_doc(info, argv[0], size,
					       gfsp_now() - t0, o.map &&
					       !gfsp_opt_verbose);
			if (doc != NULL)
				gfsp_json_print(stdout, doc,
				    JSON_C_TO_STRING_PRETTY |
				    JSON_C_TO_STRING_NOSLASHESCAPE);
			else
				gfsp_log_error("out of memory");
			json_object_put(doc);
		} else {
			/* --map answers just that; the layout too with -v */
			text = gfsp_statinfo_text(info, o.map &&
						  !gfsp_opt_verbose);
			if (text != NULL)
				fputs(text, stdout);
			else
				gfsp_log_error("out of memory");
			free(text);
		}
	}
	json_object_put(info);
	if (rc) {
		gfsp_log_gfs_error(&err);
		return 1;
	}
	return 0;
}

static const struct gfsp_cmd cmd = {
	.name = "stat-layout",
	.usage = "[OPTIONS] SPLITFILE",
	.summary = "Show the layout of a split file: writers, views, parts, "
		   "coverage; map an offset; check it.",
	.opts = opts,
	.min_args = 1,
	.max_args = 1,
	.progress = 1,
	.uses_mpi = 0,
	.run = run,
};

int
main(int argc, char **argv)
{
	return gfsp_cmd_main(&cmd, argc, argv);
}
