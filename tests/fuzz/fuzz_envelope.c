/*
 * fuzz_envelope.c - envelope documents (envelope-bench --json) read back
 * for predictions (envmodel.c): gfsp_env_load on the input written to a
 * file, then what envelope-bench predict and the outputs do with an
 * envelope: rates at measured and unmeasured points, the prediction of
 * every preset, the table, the CSV, a heat map.
 *
 * What loads must round-trip: gfsp_env_to_json of it, read back with
 * gfsp_env_from_json, gives the same JSON text again.  And what it
 * predicts must be finite: every rate, every time, for the presets and
 * for stages at the far ends of what the options take (a rate cast to an
 * integer where it was printed overflowed before the reader bounded the
 * rates; UBSan's float-cast-overflow names any such cast).
 */
#include "fuzz.h"
#include <math.h>
#include <json-c/json.h>
#include "core.h"
#include "envelope.h"

static FILE *devnull;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	devnull = fopen("/dev/null", "w");
	if (devnull == NULL)
		abort();
	return 0;
}

static void
roundtrip(const struct gfsp_envelope *e)
{
	struct gfsp_envelope *again = NULL;
	struct gfsp_error err;
	json_object *a, *b;
	const char *sa, *sb;

	gfsp_error_clear(&err);
	a = gfsp_env_to_json(e);
	if (a == NULL)
		abort();
	sa = json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN);
	/* through text, as a file written and read again */
	b = json_tokener_parse(sa);
	if (b == NULL || gfsp_env_from_json(b, "again", &again, &err) != 0)
		FUZZ_FAIL("an envelope written out does not read back: %s",
		    err.msg);
	json_object_put(b);
	b = gfsp_env_to_json(again);
	if (b == NULL)
		abort();
	sb = json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN);
	if (strcmp(sa, sb) != 0)
		FUZZ_FAIL("an envelope changes in a write-read round trip:\n"
		    "%s\n%s", sa, sb);
	json_object_put(a);
	json_object_put(b);
	gfsp_envelope_free(again);
}

/* a prediction has finite rates >= 0 and finite times >= 0 throughout */
static void
finite_prediction(const struct gfsp_env_prediction *p)
{
	const struct gfsp_env_term *t;
	size_t i;

	for (i = 0; i < p->nterms; i++) {
		t = &p->terms[i];
		if (!(isfinite(t->rate.ops_s) && t->rate.ops_s >= 0 &&
		    isfinite(t->rate.bytes_s) && t->rate.bytes_s >= 0 &&
		    isfinite(t->seconds) && t->seconds >= 0))
			FUZZ_FAIL("term %zu (%s): %g ops/s, %g bytes/s, %g s",
			    i, gfsp_env_metric_name(t->metric), t->rate.ops_s,
			    t->rate.bytes_s, t->seconds);
	}
	if (!(isfinite(p->total_s) && p->total_s >= 0))
		FUZZ_FAIL("a prediction of %g s", p->total_s);
}

static void
use(const struct gfsp_envelope *e)
{
	static const char *const presets[] = {
		"mprojectpp", "bandwidth-bound", "metadata-bound",
	};
	/* stages at the ends of what envelope-bench predict takes: every
	 * size from none to INT64_MAX, one node to 2^30, one task to all */
	static const struct gfsp_env_shape far[] = {
		{ UINT64_MAX, 1 << 30, INT64_MAX, INT64_MAX, INT64_MAX, 0.5 },
		{ UINT64_MAX, 1, 0, 0, 0, 0 },
		{ 1, 3, 1, 1, GFSP_ENV_NONE, 1 },
		{ 1000, 7, 3 << 20, 5 << 20, 1 << 30, 0.25 },
	};
	static const double procs[] = { 0.5, 1, 3, 1e6 };
	static const double sizes[] = { 0, 1, 1000, 1 << 20, 1e15 };
	struct gfsp_env_prediction pr;
	struct gfsp_env_shape s;
	struct gfsp_env_rate r;
	struct gfsp_error err;
	char svg[PATH_MAX];
	json_object *j;
	size_t i, k;
	int m;

	for (m = 0; m < GFSP_ENV_NMETRIC; m++)
		for (i = 0; i < GFSP_ARRAY_SIZE(procs); i++)
			for (k = 0; k < GFSP_ARRAY_SIZE(sizes); k++)
				(void)gfsp_env_rate(e, m, procs[i], sizes[k],
				    &r, &err);
	for (i = 0; i < GFSP_ARRAY_SIZE(presets) + GFSP_ARRAY_SIZE(far); i++) {
		if (i >= GFSP_ARRAY_SIZE(presets))
			s = far[i - GFSP_ARRAY_SIZE(presets)];
		else if (gfsp_env_preset(presets[i], &s) != 0)
			abort();
		gfsp_error_clear(&err);
		if (gfsp_env_predict(e, &s, &pr, &err) != 0)
			continue;
		finite_prediction(&pr);
		gfsp_env_prediction_print(devnull, &s, &pr);
		j = gfsp_env_prediction_json(&s, &pr);
		(void)json_object_to_json_string(j);
		json_object_put(j);
	}
	gfsp_env_print_table(devnull, e);
	gfsp_env_print_csv(devnull, e);
	gfsp_error_clear(&err);
	(void)gfsp_env_heatmap(fuzz_path(svg, "heat.svg"), e, GFSP_ENV_WRITE,
	    0, &err);
	fflush(devnull);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gfsp_envelope *e = NULL;
	struct gfsp_error err;
	char path[PATH_MAX];

	fuzz_path(path, "env.json");
	fuzz_write(path, data, size);
	gfsp_error_clear(&err);
	if (gfsp_env_load(path, &e, &err) != 0)
		return 0;
	roundtrip(e);
	use(e);
	gfsp_envelope_free(e);
	return 0;
}
