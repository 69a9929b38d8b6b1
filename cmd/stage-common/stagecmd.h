/*
 * stagecmd.h - the command side that stage-in and stage-out share
 * (stagecmd.c, linked into both; see the cmd_rule in Makefile.in): their
 * options, the run and its report.  Included by cmd/stage-in/main.c,
 * cmd/stage-out/main.c and stagecmd.c.
 */
#ifndef GFSP_STAGECMD_H
#define GFSP_STAGECMD_H

#include <stdio.h>
#include "stage.h"

/* Rank 0: a stage run's summary as text lines (with the failures) or one
 * JSON object. */
void stagecmd_print(FILE *fp, const char *cmd, const struct gfsp_stage_opts *o,
		    const struct gfsp_stage_result *r, int json);

/* The whole of stage-in (way GFSP_STAGE_IN) or stage-out, from main(). */
int stagecmd_main(int way, int argc, char **argv);

#endif /* GFSP_STAGECMD_H */
