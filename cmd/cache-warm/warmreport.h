/*
 * warmreport.h - cache-warm's summary (warmreport.c).  Included by
 * cmd/cache-warm/main.c and warmreport.c.
 */
#ifndef GFSP_WARMREPORT_H
#define GFSP_WARMREPORT_H

#include <stdio.h>
#include "cache.h"

/* Rank 0: the summary of a warm-up of nfiles files (res, the statistics
 * summed over the ranks in sum) on fp: text, or one JSON object. */
void warmreport_print(FILE *fp, int json, const struct gfsp_warm_opts *o,
		      struct gfsp_cache *c, int nfiles, char **files,
		      const struct gfsp_warm_result *res, int nnodes,
		      const struct gfsp_cache_stats *sum, double seconds);

#endif /* GFSP_WARMREPORT_H */
