/*
 * copyreport.h - the report that pcp-split and gfsplit-merge share
 * (copyreport.c, linked into both).  Included by cmd/pcp-split/main.c,
 * cmd/gfsplit-merge/main.c and copyreport.c.
 */
#ifndef GFSP_COPYREPORT_H
#define GFSP_COPYREPORT_H

#include "copy.h"

/*
 * Rank 0, after an engine succeeded: print the --json summary
 * (schemas/pcp-split.schema.json, gfsplit-merge.schema.json), or the
 * --dry-run plan, on stdout, and (unless a dry run) the one-line summary
 * at info level.  A result with writers > 0 is a merge's.
 */
void copyreport_print(const char *command, const char *src, const char *dst,
		      const struct gfsp_copy_result *res, int json,
		      int dry_run);

#endif /* GFSP_COPYREPORT_H */
