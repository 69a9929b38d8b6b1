/*
 * copyreport.c - what pcp-split and gfsplit-merge tell their users about
 * a copy engine's result (struct gfsp_copy_result, copy.h): the --json
 * summary, the --dry-run plan and the one-line summary.  Linked into both
 * commands (the cmd_rule in Makefile.in).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "copy.h"
#include "copyreport.h"

static void
add_u64(json_object *o, const char *key, uint64_t v)
{
	json_object_object_add(o, key, json_object_new_uint64(v));
}

/* The summary object of --json: the common members (gfsp_json_doc),
 * layout, max_rss_kib, cpu_seconds (+ the plan on a dry run).  Caller
 * puts it. */
static json_object *
copyreport_json(const char *command, const char *src, const char *dst,
		     const struct gfsp_copy_result *res, int dry_run)
{
	json_object *o, *plan, *p;
	int r;

	/* bytes: the logical size, copied (or, in a dry run, to copy) */
	o = gfsp_json_doc(command, src, dst, res->ranks, res->seconds,
			 (int64_t)res->bytes);
	if (o == NULL)
		return NULL;
	if (dry_run)
		json_object_object_add(o, "bytes_per_sec", NULL);
	json_object_object_add(o, "layout",
			       json_object_new_string(res->layout));
	json_object_object_add(o, "dry_run", json_object_new_boolean(dry_run));
	if (res->writers > 0) {		/* merge */
		json_object_object_add(o, "writers",
				       json_object_new_int(res->writers));
		add_u64(o, "stripe_size", res->stripe_size);
		if (!dry_run) {
			json_object_object_add(o, "verified",
			    json_object_new_boolean(res->verified));
			add_u64(o, "data_bytes", res->data_bytes);
		}
	}
	if (!dry_run && res->writers == 0)	/* split */
		json_object_object_add(o, "misplaced_parts",
				       json_object_new_int(res->misplaced));
	if (!dry_run)
		add_u64(o, "hole_bytes", res->hole_bytes);
	if (!dry_run) {
		json_object_object_add(o, "max_rss_kib",
		    json_object_new_int64(res->max_rss_kib));
		json_object_object_add(o, "cpu_seconds",
		    json_object_new_double(res->cpu_seconds));
	}
	if (dry_run && res->plan != NULL) {
		plan = json_object_new_array();
		for (r = 0; r < res->ranks; r++) {
			p = json_object_new_object();
			json_object_object_add(p, "rank",
					       json_object_new_int(r));
			add_u64(p, "bytes", res->plan[r].bytes);
			add_u64(p, "pieces", res->plan[r].pieces);
			add_u64(p, "first", res->plan[r].first);
			add_u64(p, "last", res->plan[r].last);
			json_object_array_add(plan, p);
		}
		json_object_object_add(o, "plan", plan);
	}
	return o;
}

/* One line for humans: "24.00 MiB in 0.12 s (200.0 MiB/s, ...)". */
static const char *
copyreport_line(const struct gfsp_copy_result *res, char *buf,
		     size_t len)
{
	char sz[32], rate[32];
	double secs = res->seconds;

	gfsp_format_size(res->bytes, sz, sizeof(sz));
	gfsp_format_size(secs > 0 ? (uint64_t)(res->bytes / secs) : 0, rate,
			sizeof(rate));
	snprintf(buf, len, "%s in %.2f s (%s/s, %d rank%s, peak rss %ld KiB)",
		 sz, secs, rate, res->ranks, res->ranks == 1 ? "" : "s",
		 res->max_rss_kib);
	if (res->hole_bytes > 0 && strlen(buf) + 1 < len)
		snprintf(buf + strlen(buf), len - strlen(buf), ", %s of it "
			 "holes kept", gfsp_format_size(res->hole_bytes, sz,
							sizeof(sz)));
	return buf;
}

/* One --dry-run line: "rank 1: 12.00 MiB in 3 blocks, [4194304,
 * 16777216)"; `what` names the pieces ("blocks", "stripes"). */
static const char *
copyreport_plan_line(const struct gfsp_plan_rank *p, int rank, const char *what,
	      char *buf, size_t len)
{
	char sz[32];

	gfsp_format_size(p->bytes, sz, sizeof(sz));
	if (p->bytes == 0)
		snprintf(buf, len, "rank %d: nothing", rank);
	else
		snprintf(buf, len, "rank %d: %s (%" PRIu64 " bytes) in %"
			 PRIu64 " %s, offsets [%" PRIu64 ", %" PRIu64 ")",
			 rank, sz, p->bytes, p->pieces, what, p->first,
			 p->last);
	return buf;
}

void
copyreport_print(const char *command, const char *src, const char *dst,
	       const struct gfsp_copy_result *res, int json, int dry_run)
{
	const int merge = res->writers > 0;
	char line[512];
	json_object *o;
	int r;

	if (json) {
		o = copyreport_json(command, src, dst, res, dry_run);
		gfsp_json_print(stdout, o, JSON_C_TO_STRING_PLAIN);
		json_object_put(o);
	} else if (dry_run) {
		printf("dry run: would %s '%s' (%" PRIu64 " bytes, layout %s) "
		       "into '%s' with %d ranks\n", merge ? "merge" : "split",
		       src, res->bytes, res->layout, dst, res->ranks);
		for (r = 0; r < res->ranks && res->plan != NULL; r++)
			printf("  %s\n", copyreport_plan_line(&res->plan[r], r,
			       merge ? "stripes" : "blocks", line,
			       sizeof(line)));
	}
	if (!dry_run && res->misplaced > 0)
		gfsp_log_warn("%d part%s did not land on %s rank's node (the "
		    "node was down or full); 'stat-layout %s' shows where",
		    res->misplaced, res->misplaced == 1 ? "" : "s",
		    res->misplaced == 1 ? "its" : "their", dst);
	if (!dry_run)
		gfsp_log_info("%s '%s' into '%s': %s%s", merge ? "merged" :
		    "split", src, dst, copyreport_line(res, line,
		    sizeof(line)), !merge ? "" : res->verified ?
		    ", checksums ok" : ", checksums not verified");
}
