/*
 * warmreport.c - cache-warm's summary: a line a file and the totals, or
 * one JSON object (schemas/cache-warm.schema.json) with the cache's
 * summed statistics.
 */
#include <stdio.h>
#include <json-c/json.h>

#include "cache.h"
#include "core.h"
#include "warmreport.h"

void
warmreport_print(FILE *fp, int json, const struct gfsp_warm_opts *o,
		 struct gfsp_cache *c, int nfiles, char **files,
		 const struct gfsp_warm_result *res, int nnodes,
		 const struct gfsp_cache_stats *sum, double seconds)
{
	const char *keep = o->keep == GFSP_WARM_PART ? "part" : "all";
	json_object *o_, *arr, *f;
	char a[32], b[32];
	uint64_t bytes = 0;
	int i, nprocs;

	MPI_Comm_size(gfsp_cache_comm(c), &nprocs);
	for (i = 0; i < nfiles; i++)
		bytes += res[i].bytes_kept;
	if (!json) {
		for (i = 0; i < nfiles; i++)
			fprintf(fp, "cache-warm: '%s': %s, %s into %d node "
			    "tier%s (keep %s)%s\n", files[i],
			    gfsp_format_size(res[i].size, a, sizeof(a)),
			    gfsp_format_size(res[i].bytes_kept, b,
			    sizeof(b)), nnodes, nnodes == 1 ? "" : "s", keep,
			    res[i].nodes_already_warm ?
			    "; some nodes already held it" : "");
		fprintf(fp, "cache-warm: %s written to '%s' on %d node%s by "
		    "%d ranks in %.2f s\n", gfsp_format_size(bytes, a,
		    sizeof(a)), o->local_dir, nnodes, nnodes == 1 ? "" : "s",
		    nprocs, seconds);
		gfsp_cache_stats_text(fp, "cache-warm: cache", sum);
		return;
	}
	/* src: the FILEs, always a list; dest: the tier directory (its %h
	 * unexpanded); bytes: what went into the tiers */
	o_ = gfsp_json_doc("cache-warm", NULL, o->local_dir, nprocs, seconds,
			   (int64_t)bytes);
	if (o_ == NULL)
		return;
	arr = json_object_new_array();
	for (i = 0; i < nfiles; i++)
		json_object_array_add(arr, json_object_new_string(files[i]));
	json_object_object_add(o_, "src", arr);
	arr = json_object_new_array();
	json_object_object_add(o_, "local_dir",
	    json_object_new_string(o->local_dir));
	json_object_object_add(o_, "keep", json_object_new_string(keep));
	json_object_object_add(o_, "nodes", json_object_new_int(nnodes));
	json_object_object_add(o_, "block_size",
	    json_object_new_uint64(gfsp_cache_block_size(c)));
	json_object_object_add(o_, "transport",
	    json_object_new_string(gfsp_cache_transport(c)));
	for (i = 0; i < nfiles; i++) {
		f = json_object_new_object();
		json_object_object_add(f, "path",
		    json_object_new_string(files[i]));
		json_object_object_add(f, "size",
		    json_object_new_uint64(res[i].size));
		json_object_object_add(f, "bytes_written",
		    json_object_new_uint64(res[i].bytes_kept));
		json_object_object_add(f, "nodes_already_warm",
		    json_object_new_int(res[i].nodes_already_warm));
		json_object_array_add(arr, f);
	}
	json_object_object_add(o_, "files", arr);
	json_object_object_add(o_, "bytes_written",
	    json_object_new_uint64(bytes));
	json_object_object_add(o_, "cache", gfsp_cache_stats_object(sum));
	/* one line: for jq and for logs */
	gfsp_json_print(fp, o_, JSON_C_TO_STRING_PLAIN |
			JSON_C_TO_STRING_NOSLASHESCAPE);
	json_object_put(o_);
}
