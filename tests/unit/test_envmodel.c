/*
 * test_envmodel.c - the MTC envelope's model (envmodel.c), without MPI:
 * names and statistics; the formulas (1)-(3) of Kyou, Tatebe and
 * Tanaka's prediction model against values worked out by hand (in the
 * comments) on envelopes built in memory, for both kinds of bound;
 * interpolation in size and in process count with its extrapolation
 * flags; the JSON document there and back, and the errors of documents
 * that are wrong; the presets and the prediction's output.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "core.h"
#include "envelope.h"
#include "tap.h"

#define KiB	1024ull
#define MiB	(1024ull * 1024)
#define MAXPTS	256

/* equal within a relative 1e-9 */
static int
near(double x, double y)
{
	return x == y || fabs(x - y) <= 1e-9 * fmax(fabs(x), fabs(y));
}

/* ok(), with the library's message as a diagnostic when it fails */
static int
ok_e(int cond, const char *what, const struct gfsp_error *err)
{
	if (!ok(cond, "%s", what))
		diag("%s", err->msg);
	return cond;
}

/* ------------------------------------------------ envelopes in memory */

static struct gfsp_envelope *
env_new(const char *target, int remote_same_as_local)
{
	struct gfsp_envelope *e = calloc(1, sizeof(*e));

	e->target = strdup(target);
	e->backend = strdup(remote_same_as_local ? "posix" : "gfarm");
	e->remote_same_as_local = remote_same_as_local;
	e->method = (struct gfsp_env_method){ .reps = 3, .warmup = 1,
	    .work = 64 * MiB, .max_files = 1000, .min_files = 4,
	    .buffer = MiB, .cache = GFSP_ENV_CACHE_DROP, .fsync = 1 };
	e->points = calloc(MAXPTS, sizeof(*e->points));
	return e;
}

/* a point with median T ops/s and B bytes/s (min and max around them) */
static struct gfsp_env_point *
env_add(struct gfsp_envelope *e, int metric, int procs, uint64_t size,
	double T, double B)
{
	struct gfsp_env_point *p = &e->points[e->npoints++];

	if (e->npoints > MAXPTS)
		abort();
	p->metric = metric;
	p->procs = procs;
	p->size = size;
	p->files = gfsp_env_files_for(&e->method, size);
	p->ops_s = (struct gfsp_env_stat){ 0.9 * T, T, 1.1 * T };
	p->bytes_s = (struct gfsp_env_stat){ 0.9 * B, B, 1.1 * B };
	return p;
}

/*
 * The "independent" envelope: at 8 processes and at sizes 1 KiB and 16 MiB
 * every metric has the same T and B whatever the size (create: B 0).
 * Then tau = 1/T is flat and u = s/B a line through 0: T and B come out
 * the same at every size in between.
 */
static void
env_flat(struct gfsp_envelope *e, int metric, double T, double B)
{
	env_add(e, metric, 8, KiB, T, metric == GFSP_ENV_CREATE ? 0 : B);
	env_add(e, metric, 8, 16 * MiB, T, metric == GFSP_ENV_CREATE ? 0 : B);
}

/*
 * The "consistent" envelope (B = T * size, as envelope-bench measures):
 * an operation of s bytes takes tau(s) = 1 ms + s / 1e8 s, at 8 processes,
 * measured at 1 KiB, 1 MiB and 16 MiB:
 *   tau(1024)     = 0.001 + 0.00001024 = 0.00101024
 *   tau(1048576)  = 0.001 + 0.01048576 = 0.01148576
 *   tau(16777216) = 0.001 + 0.16777216 = 0.16877216
 * create: 2000 ops/s at every size.
 */
#define F	0.001
#define W	1e8
static double
tau_c(double s)
{
	return F + s / W;
}

static struct gfsp_envelope *
env_consistent(void)
{
	static const uint64_t sizes[] = { KiB, MiB, 16 * MiB };
	struct gfsp_envelope *e = env_new("/consistent", 0);
	size_t i;

	for (i = 0; i < 3; i++) {
		env_add(e, GFSP_ENV_CREATE, 8, sizes[i], 2000, 0);
		env_add(e, GFSP_ENV_WRITE, 8, sizes[i], 1 / tau_c(sizes[i]),
		    sizes[i] / tau_c(sizes[i]));
	}
	return e;
}

/* ---------------------------------------------------------- the tests */

static void
test_basics(void)
{
	struct gfsp_env_method m = { .work = MiB, .min_files = 4,
	    .max_files = 1000 };
	double v[] = { 3, 1, 2 }, w[] = { 4, 1, 3, 2 };
	struct gfsp_env_stat s;
	int i, all = 1;

	for (i = 0; i < GFSP_ENV_NMETRIC; i++)
		all &= gfsp_env_metric_parse(gfsp_env_metric_name(i)) == i;
	ok(all && gfsp_env_metric_parse("read") == -1 &&
	   strcmp(gfsp_env_metric_name(GFSP_ENV_READ_SHARED),
	   "read-shared") == 0, "metric names there and back");
	ok(strcmp(gfsp_env_cache_name(GFSP_ENV_CACHE_KEEP), "keep") == 0 &&
	   strcmp(gfsp_env_cache_name(GFSP_ENV_CACHE_DIRECT), "direct") == 0,
	   "cache names");
	/* 1 MiB of work: 1 KiB -> 1024 files, capped at 1000; 64 KiB -> 16;
	 * 1 MiB -> 1, raised to 4; size 0 counts as 1 byte -> 1000 */
	ok(gfsp_env_files_for(&m, KiB) == 1000 &&
	   gfsp_env_files_for(&m, 64 * KiB) == 16 &&
	   gfsp_env_files_for(&m, MiB) == 4 &&
	   gfsp_env_files_for(&m, 0) == 1000, "files per size within "
	   "[min_files, max_files]");
	s = gfsp_env_stat_of(v, 3);
	ok(s.min == 1 && s.median == 2 && s.max == 3 && v[0] == 1,
	   "stat of 3 values (sorted)");
	s = gfsp_env_stat_of(w, 4);
	ok(s.min == 1 && s.median == 2.5 && s.max == 4,
	   "stat of 4 values: median is the mean of the middle two");
	s = gfsp_env_stat_of(NULL, 0);
	ok(s.min == 0 && s.median == 0 && s.max == 0, "stat of none: zeros");
}

static void
test_bounds_flat(void)
{
	struct gfsp_envelope *e = env_new("/flat", 0);
	struct gfsp_env_shape sh = { 20, 8, KiB, GFSP_ENV_NONE, GFSP_ENV_NONE,
	    1 };
	struct gfsp_env_prediction p;
	struct gfsp_error err = { 0 };
	int rc;

	env_flat(e, GFSP_ENV_CREATE, 1000, 0);
	env_flat(e, GFSP_ENV_WRITE, 1000, 100e6);
	/*
	 * 20 tasks on 8 nodes: ceil(20/8) = 3 rounds.  Output 1 KiB:
	 *   create  8/1000 = 0.008 s
	 *   write   t_ops 8/1000 = 0.008, t_bytes 8*1024/1e8 = 0.00008192
	 *           -> 0.008 s, throughput-bound
	 *   write_s = 3 * (0.008 + 0.008) = 0.048
	 */
	rc = gfsp_env_predict(e, &sh, &p, &err);
	ok_e(rc == 0 && p.rounds == 3 && p.nterms == 2 &&
	     p.terms[0].metric == GFSP_ENV_CREATE &&
	     near(p.terms[0].seconds, 0.008) &&
	     strcmp(p.terms[0].bound, "metadata") == 0 &&
	     near(p.terms[1].t_ops, 0.008) &&
	     near(p.terms[1].t_bytes, 0.00008192) &&
	     strcmp(p.terms[1].bound, "throughput") == 0 &&
	     near(p.write_s, 0.048) && p.read_s == 0 &&
	     near(p.total_s, 0.048) && p.flags == 0,
	     "T and B apart, 1 KiB output: throughput-bound, 0.048 s",
	     &err);
	/*
	 * Output 16 MiB: write t_bytes = 8*16777216/1e8 = 1.34217728 s
	 * against t_ops 0.008 -> bandwidth-bound;
	 *   write_s = 3 * (0.008 + 1.34217728) = 4.05053184
	 */
	sh.output_size = 16 * MiB;
	rc = gfsp_env_predict(e, &sh, &p, &err);
	ok(rc == 0 && near(p.terms[1].t_bytes, 1.34217728) &&
	   strcmp(p.terms[1].bound, "bandwidth") == 0 &&
	   near(p.write_s, 4.05053184), "T and B apart, 16 MiB output: "
	   "bandwidth-bound, 4.05053184 s");
	/*
	 * Output 1 MiB, between the sizes: T stays 1000, B stays 1e8;
	 * t_bytes = 8*1048576/1e8 = 0.08388608; 3 * (0.008 + 0.08388608)
	 * = 0.27565824
	 */
	sh.output_size = MiB;
	rc = gfsp_env_predict(e, &sh, &p, &err);
	ok(rc == 0 && near(p.terms[1].rate.ops_s, 1000) &&
	   near(p.terms[1].rate.bytes_s, 100e6) &&
	   near(p.write_s, 0.27565824) && p.flags == 0,
	   "T and B apart, 1 MiB output: interpolated, 0.27565824 s");
	gfsp_envelope_free(e);
}

static void
test_bounds_consistent(void)
{
	struct gfsp_envelope *e = env_consistent();
	struct gfsp_env_shape sh = { 100, 8, KiB, GFSP_ENV_NONE,
	    GFSP_ENV_NONE, 1 };
	struct gfsp_env_prediction p;
	struct gfsp_error err = { 0 };
	int rc;

	/*
	 * B = T*s: t_ops and t_bytes agree, fixed_share decides.  At 1 KiB
	 * the segment [1 KiB, 1 MiB] has slope (0.01148576 - 0.00101024) /
	 * (1048576 - 1024) = 1e-8 and intercept 0.00101024 - 1e-8*1024 =
	 * 0.001, so fixed_share = 0.001 / 0.00101024 = 0.98986... ->
	 * throughput.  100 tasks on 8 nodes: 13 rounds;
	 *   write_s = 13 * (8/2000 + 8*0.00101024) = 13 * 0.01208192
	 *           = 0.15706496
	 */
	rc = gfsp_env_predict(e, &sh, &p, &err);
	ok_e(rc == 0 && p.rounds == 13 &&
	     near(p.terms[1].t_ops, p.terms[1].t_bytes) &&
	     near(p.terms[1].rate.fixed_share, 0.001 / 0.00101024) &&
	     strcmp(p.terms[1].bound, "throughput") == 0 &&
	     near(p.write_s, 0.15706496), "B = T*size, 1 KiB: throughput by "
	     "fixed_share 0.98986, 0.15706496 s", &err);
	/*
	 * 256 KiB, inside [1 KiB, 1 MiB]: tau = 0.001 + 262144e-8 =
	 * 0.00362144 exactly as the system; fixed_share = 0.001/0.00362144
	 * = 0.276 -> bandwidth.  N = 100 is not a multiple of C = 8:
	 *   write_s = 13 * (8/2000 + 8*0.00362144) = 13 * 0.03297152
	 *           = 0.42862976
	 */
	sh.output_size = 256 * KiB;
	rc = gfsp_env_predict(e, &sh, &p, &err);
	ok(rc == 0 && near(p.terms[1].seconds, 8 * 0.00362144) &&
	   near(p.terms[1].rate.fixed_share, 0.001 / 0.00362144) &&
	   strcmp(p.terms[1].bound, "bandwidth") == 0 &&
	   near(p.write_s, 0.42862976), "B = T*size, 256 KiB: bandwidth, "
	   "0.42862976 s");
	gfsp_envelope_free(e);
}

static void
test_read(void)
{
	struct gfsp_envelope *e = env_new("/read", 0);
	struct gfsp_env_shape sh = { 20, 8, GFSP_ENV_NONE, MiB, KiB, 0.75 };
	struct gfsp_env_prediction p;
	struct gfsp_error err = { 0 };
	int rc;

	env_flat(e, GFSP_ENV_READ_LOCAL, 2000, 200e6);
	env_flat(e, GFSP_ENV_READ_REMOTE, 500, 50e6);
	env_flat(e, GFSP_ENV_READ_SHARED, 4000, 400e6);
	/*
	 * 20 tasks, 8 nodes: 3 rounds; input 1 MiB, shared 1 KiB, alpha
	 * 0.75:
	 *   local   6 ops: t_ops 6/2000 = 0.003, t_bytes 6*1048576/2e8 =
	 *           0.03145728 -> bandwidth
	 *   remote  2 ops: t_ops 2/500 = 0.004, t_bytes 2*1048576/5e7 =
	 *           0.04194304 -> bandwidth
	 *   shared  8 ops: t_ops 8/4000 = 0.002, t_bytes 8*1024/4e8 =
	 *           0.00002048 -> throughput
	 *   read_s = 3 * (0.03145728 + 0.04194304 + 0.002) = 0.22620096
	 */
	rc = gfsp_env_predict(e, &sh, &p, &err);
	ok_e(rc == 0 && p.nterms == 3 && p.terms[0].ops == 6 &&
	     p.terms[1].ops == 2 && p.terms[2].ops == 8 &&
	     near(p.terms[0].seconds, 0.03145728) &&
	     near(p.terms[1].seconds, 0.04194304) &&
	     near(p.terms[2].seconds, 0.002) &&
	     strcmp(p.terms[1].bound, "bandwidth") == 0 &&
	     strcmp(p.terms[2].bound, "throughput") == 0 &&
	     near(p.read_s, 0.22620096) && p.write_s == 0 &&
	     near(p.total_s, 0.22620096), "read, alpha 0.75: 0.22620096 s",
	     &err);
	/* alpha 1: no remote term; 3 * (8*1048576/2e8 + 0.002) =
	 * 3 * (0.04194304 + 0.002) = 0.13182912 */
	sh.local_fraction = 1;
	rc = gfsp_env_predict(e, &sh, &p, &err);
	ok(rc == 0 && p.nterms == 2 &&
	   p.terms[1].metric == GFSP_ENV_READ_SHARED &&
	   near(p.read_s, 0.13182912), "read, alpha 1: no remote term, "
	   "0.13182912 s");
	/* alpha 0: no local term; 3 * (8*1048576/5e7 + 0.002) =
	 * 3 * (0.16777216 + 0.002) = 0.50931648 */
	sh.local_fraction = 0;
	rc = gfsp_env_predict(e, &sh, &p, &err);
	ok(rc == 0 && p.nterms == 2 &&
	   p.terms[0].metric == GFSP_ENV_READ_REMOTE &&
	   near(p.read_s, 0.50931648), "read, alpha 0: no local term, "
	   "0.50931648 s");

	/* write and read together: the flat write of test_bounds_flat at
	 * 1 KiB adds 3 * 0.016 = 0.048 to alpha 0.75's 0.22620096 */
	env_flat(e, GFSP_ENV_CREATE, 1000, 0);
	env_flat(e, GFSP_ENV_WRITE, 1000, 100e6);
	sh.output_size = KiB;
	sh.local_fraction = 0.75;
	rc = gfsp_env_predict(e, &sh, &p, &err);
	ok(rc == 0 && p.nterms == 5 && near(p.write_s, 0.048) &&
	   near(p.read_s, 0.22620096) && near(p.total_s, 0.27420096),
	   "write and read: 0.048 + 0.22620096 = 0.27420096 s");
	gfsp_envelope_free(e);
}

static void
test_same_as_local(void)
{
	struct gfsp_envelope *e = env_new("/posix", 1);
	struct gfsp_env_shape sh = { 20, 8, GFSP_ENV_NONE, MiB, GFSP_ENV_NONE,
	    0.75 };
	struct gfsp_env_prediction p;
	struct gfsp_error err = { 0 };
	int rc;

	/* POSIX: no read-remote points; the remote term takes read-local's
	 * rates and keeps its name:
	 *   local  6 ops: 6*1048576/2e8 = 0.03145728
	 *   remote 2 ops: 2*1048576/2e8 = 0.01048576
	 *   read_s = 3 * 0.04194304 = 0.12582912, as if all were local */
	env_flat(e, GFSP_ENV_READ_LOCAL, 2000, 200e6);
	rc = gfsp_env_predict(e, &sh, &p, &err);
	ok_e(rc == 0 && p.nterms == 2 &&
	     p.terms[1].metric == GFSP_ENV_READ_REMOTE && p.terms[1].ops == 2 &&
	     near(p.terms[1].rate.bytes_s, 200e6) &&
	     near(p.terms[1].seconds, 0.01048576) &&
	     near(p.read_s, 0.12582912), "remote same as local: read-local's "
	     "rates, 0.12582912 s", &err);

	/* the same envelope, not marked so: read-remote is missing */
	e->remote_same_as_local = 0;
	rc = gfsp_env_predict(e, &sh, &p, &err);
	ok(rc == GFSP_EINVAL && strstr(err.msg, "read-remote") != NULL &&
	   strstr(err.msg, "/posix") != NULL,
	   "a missing metric fails naming it: %s", err.msg);
	/* marked, read-local stands for read-remote even where the
	 * envelope has read-remote points */
	env_flat(e, GFSP_ENV_READ_REMOTE, 1, 1);
	e->remote_same_as_local = 1;
	rc = gfsp_env_predict(e, &sh, &p, &err);
	ok(rc == 0 && near(p.read_s, 0.12582912), "remote same as local: "
	   "read-remote points are not used");
	gfsp_error_clear(&err);
	rc = gfsp_env_predict(e, &(struct gfsp_env_shape){ 8, 8, KiB,
	    GFSP_ENV_NONE, GFSP_ENV_NONE, 1 }, &p, &err);
	ok(rc == GFSP_EINVAL && strcmp(err.msg, "the envelope of '/posix' "
	   "has no create points") == 0, "no create points: %s", err.msg);
	gfsp_envelope_free(e);
}

static void
test_rate_size(void)
{
	struct gfsp_envelope *e = env_consistent();
	struct gfsp_env_rate r;
	struct gfsp_error err = { 0 };
	double tau;
	int rc;

	/* 256 KiB between 1 KiB and 1 MiB: tau = 0.00362144, exact */
	rc = gfsp_env_rate(e, GFSP_ENV_WRITE, 8, 256 * KiB, &r, &err);
	ok(rc == 0 && near(r.ops_s, 1 / 0.00362144) &&
	   near(r.bytes_s, 262144 / 0.00362144) && r.flags == 0,
	   "size: between two sizes an affine time comes out exact");
	/* 4 MiB in the second segment: 0.001 + 4194304e-8 = 0.04294304 */
	rc = gfsp_env_rate(e, GFSP_ENV_WRITE, 8, 4 * MiB, &r, &err);
	ok(rc == 0 && near(r.ops_s, 1 / 0.04294304) &&
	   near(r.fixed_share, 0.001 / 0.04294304) && r.flags == 0,
	   "size: the second segment too");
	/* a measured size: its own rates, bit for bit */
	rc = gfsp_env_rate(e, GFSP_ENV_WRITE, 8, MiB, &r, &err);
	ok(rc == 0 && r.ops_s == 1 / tau_c(MiB) &&
	   r.bytes_s == MiB / tau_c(MiB) && r.flags == 0,
	   "size: a measured size gives its measured rates");
	/* 64 MiB, above: the last segment goes on, 0.001 + 0.67108864 */
	tau = 0.67208864;
	rc = gfsp_env_rate(e, GFSP_ENV_WRITE, 8, 64 * MiB, &r, &err);
	ok(rc == 0 && near(r.ops_s, 1 / tau) &&
	   near(r.bytes_s, 64 * MiB / tau) &&
	   r.flags == GFSP_ENV_EXTRA_SIZE, "size: above the largest, "
	   "extrapolated and flagged");
	/* 512 bytes, below: 1 KiB's time 0.00101024; B = 512/0.00101024;
	 * fixed_share from the first segment: 0.001/(0.001 + 512e-8) */
	rc = gfsp_env_rate(e, GFSP_ENV_WRITE, 8, 512, &r, &err);
	ok(rc == 0 && near(r.ops_s, 1 / 0.00101024) &&
	   near(r.bytes_s, 512 / 0.00101024) &&
	   near(r.fixed_share, 0.001 / 0.00100512) &&
	   r.flags == GFSP_ENV_EXTRA_SIZE, "size: below the smallest, its "
	   "time, flagged");
	/* create: B stays 0 */
	rc = gfsp_env_rate(e, GFSP_ENV_CREATE, 8, 100 * KiB, &r, &err);
	ok(rc == 0 && near(r.ops_s, 2000) && r.bytes_s == 0,
	   "size: create has no bandwidth");
	gfsp_envelope_free(e);

	/* time falling with size above the largest (noise) is held at the
	 * largest size's: at 1 MiB 100 ops/s, at 2 MiB 200 ops/s */
	e = env_new("/noisy", 0);
	env_add(e, GFSP_ENV_WRITE, 8, MiB, 100, 100 * MiB);
	env_add(e, GFSP_ENV_WRITE, 8, 2 * MiB, 200, 400 * MiB);
	rc = gfsp_env_rate(e, GFSP_ENV_WRITE, 8, 8 * MiB, &r, &err);
	ok(rc == 0 && near(r.ops_s, 200) && near(r.bytes_s, 1600.0 * MiB) &&
	   r.fixed_share == 1, "size: a falling time is not extrapolated "
	   "below the largest size's");
	gfsp_envelope_free(e);
}

static void
test_rate_procs(void)
{
	struct gfsp_envelope *e = env_new("/procs", 0);
	struct gfsp_env_rate r;
	struct gfsp_error err = { 0 };
	int rc;

	/* one size, 1 MiB: at 4 procs 100 ops/s, at 16 procs 400 */
	env_add(e, GFSP_ENV_WRITE, 4, MiB, 100, 100.0 * MiB);
	env_add(e, GFSP_ENV_WRITE, 16, MiB, 400, 400.0 * MiB);
	/* 4 procs also at 1 KiB (16 procs is not): 2000 ops/s */
	env_add(e, GFSP_ENV_WRITE, 4, KiB, 2000, 2000.0 * KiB);
	/* a process count that only create has */
	env_add(e, GFSP_ENV_CREATE, 32, MiB, 10, 0);

	/* 8 procs: w = (8-4)/(16-4) = 1/3; T = 100 + 300/3 = 200 */
	rc = gfsp_env_rate(e, GFSP_ENV_WRITE, 8, MiB, &r, &err);
	ok_e(rc == 0 && near(r.ops_s, 200) && near(r.bytes_s, 200.0 * MiB) &&
	     r.flags == 0, "procs: linear between two counts", &err);
	/* 32 procs: 16's rates (write has no 32), saturated */
	rc = gfsp_env_rate(e, GFSP_ENV_WRITE, 32, MiB, &r, &err);
	ok(rc == 0 && near(r.ops_s, 400) && r.flags == GFSP_ENV_EXTRA_PROCS,
	   "procs: above the largest, its rates, flagged");
	/* 2 procs: 4's scaled by 2/4: 50 ops/s */
	rc = gfsp_env_rate(e, GFSP_ENV_WRITE, 2, MiB, &r, &err);
	ok(rc == 0 && near(r.ops_s, 50) && near(r.bytes_s, 50.0 * MiB) &&
	   r.flags == GFSP_ENV_EXTRA_PROCS, "procs: below the smallest, in "
	   "proportion, flagged");
	/*
	 * 8 procs at 2 MiB: 16 procs has one size, its time held: T 400,
	 * u = 1 MiB/400 MiB/s = 1/400 -> B = 2 MiB*400; 4 procs continues
	 * [1 KiB, 1 MiB]: tau 1/2000 + (1/100 - 1/2000) / (1048576 - 1024)
	 * * (2097152 - 1024) = 0.0005 + 0.0095 * 2096128/1047552
	 * = 0.019509286..., so T4 = 51.2577...; B (u the same line, since
	 * B = T*s at both sizes) = 2 MiB * T4.  Then 1/3 of the way.
	 */
	{
		double tau4 = 0.0005 + 0.0095 * 2096128.0 / 1047552.0;
		double t4 = 1 / tau4, t = t4 + (400 - t4) / 3;

		rc = gfsp_env_rate(e, GFSP_ENV_WRITE, 8, 2 * MiB, &r, &err);
		ok(rc == 0 && near(r.ops_s, t) &&
		   near(r.bytes_s, 2.0 * MiB * t) &&
		   r.flags == GFSP_ENV_EXTRA_SIZE, "procs: counts with other "
		   "sizes, each interpolated in size first");
	}
	gfsp_error_clear(&err);
	rc = gfsp_env_rate(e, GFSP_ENV_READ_SHARED, 8, MiB, &r, &err);
	ok(rc == GFSP_EINVAL && strcmp(err.msg, "the envelope of '/procs' "
	   "has no read-shared points") == 0, "no points of the metric: %s",
	   err.msg);
	gfsp_envelope_free(e);
}

static void
test_predict_invalid(void)
{
	struct gfsp_envelope *e = env_consistent();
	static const struct {
		struct gfsp_env_shape s;
		const char *what;
	} bad[] = {
		{ { 0, 8, KiB, -1, -1, 1 }, "0 tasks" },
		{ { 10, 0, KiB, -1, -1, 1 }, "0 nodes" },
		{ { 10, 8, KiB, -1, -1, 1.5 }, "alpha 1.5" },
		{ { 10, 8, KiB, -1, -1, -0.1 }, "alpha -0.1" },
		{ { 10, 8, KiB, -1, -1, NAN }, "alpha NaN" },
		{ { 10, 8, -1, -1, -1, 1 }, "no size" },
	};
	struct gfsp_env_prediction p;
	struct gfsp_error err;
	size_t i;
	int rc;

	group_start();
	for (i = 0; i < GFSP_ARRAY_SIZE(bad); i++) {
		gfsp_error_clear(&err);
		rc = gfsp_env_predict(e, &bad[i].s, &p, &err);
		check(rc == GFSP_EINVAL && err.msg[0] != '\0', "%s: rc %d",
		    bad[i].what, rc);
	}
	ok(group_failures() == 0, "predict rejects bad shapes");
	gfsp_envelope_free(e);
}

/* ------------------------------------------------------------ JSON */

/* an envelope with everything: machine, samples on some points */
static struct gfsp_envelope *
env_full(void)
{
	struct gfsp_envelope *e = env_new("gfarm:///env", 0);
	struct gfsp_env_point *p;
	int m;

	for (m = 0; m < GFSP_ENV_NMETRIC; m++) {
		env_add(e, m, 1, KiB, 1234.5 + m, m ? 1234.5 * KiB : 0);
		env_add(e, m, 1, MiB, 0.1 + m, m ? 0.1 * MiB : 0);
		env_add(e, m, 4, KiB, 1e6 / 3, m ? 1e6 / 3 * KiB : 0);
	}
	p = &e->points[1];
	p->nsamples = 2;
	p->samples = calloc(2, sizeof(*p->samples));
	p->samples[0] = (struct gfsp_env_sample){ 0.125, 40, 40 * MiB };
	p->samples[1] = (struct gfsp_env_sample){ 1.0 / 3, 40,
	    UINT64_MAX };
	e->points[2].files = UINT64_MAX;
	e->nsizes = 2;
	e->sizes = malloc(2 * sizeof(*e->sizes));
	e->sizes[0] = KiB;
	e->sizes[1] = MiB;
	e->nprocs = 2;
	e->procs = malloc(2 * sizeof(*e->procs));
	e->procs[0] = 1;
	e->procs[1] = 4;
	e->started = strdup("2024-05-01T12:00:00Z");
	e->seconds = 61.5;
	e->machine = json_tokener_parse("{\"hostname\": \"n1\", \"nodes\": 4,"
	    " \"kernel\": \"6.1\", \"other\": [1, {\"x\": null}]}");
	return e;
}

static int
same_points(const struct gfsp_envelope *a, const struct gfsp_envelope *b)
{
	const struct gfsp_env_point *p, *q;
	size_t i, k;

	if (a->npoints != b->npoints)
		return 0;
	for (i = 0; i < a->npoints; i++) {
		p = &a->points[i];
		q = &b->points[i];
		if (p->metric != q->metric || p->procs != q->procs ||
		    p->size != q->size || p->files != q->files ||
		    memcmp(&p->ops_s, &q->ops_s, sizeof(p->ops_s)) != 0 ||
		    memcmp(&p->bytes_s, &q->bytes_s, sizeof(p->bytes_s)) != 0 ||
		    p->nsamples != q->nsamples ||
		    (p->samples == NULL) != (q->samples == NULL))
			return 0;
		for (k = 0; k < p->nsamples; k++)
			if (memcmp(&p->samples[k], &q->samples[k],
			    sizeof(p->samples[k])) != 0)
				return 0;
	}
	return 1;
}

static void
test_json_round_trip(void)
{
	struct gfsp_envelope *e = env_full(), *f = NULL, *g = NULL;
	struct gfsp_error err = { 0 };
	json_object *doc, *back;
	char path[256];
	const char *text;
	int rc, fd;

	doc = gfsp_env_to_json(e);
	text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY);
	back = json_tokener_parse(text);
	rc = gfsp_env_from_json(back, "mem.json", &f, &err);
	ok_e(rc == 0 && strcmp(f->target, e->target) == 0 &&
	     strcmp(f->backend, "gfarm") == 0 && !f->remote_same_as_local &&
	     memcmp(&f->method, &e->method, sizeof(e->method)) == 0 &&
	     f->nsizes == 2 && f->sizes[1] == MiB && f->nprocs == 2 &&
	     f->procs[1] == 4 && strcmp(f->started, e->started) == 0 &&
	     f->seconds == 61.5 && json_object_equal(f->machine, e->machine) &&
	     same_points(e, f), "JSON there and back: equal, to the bit",
	     &err);
	json_object_put(back);

	/* through a file, and without sizes and procs (derived) */
	snprintf(path, sizeof(path), "%s/test_envmodel.%d.json",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	json_object_object_del(doc, "sizes");
	json_object_object_del(doc, "procs");
	rc = json_object_to_file(path, doc);
	rc = rc == 0 ? gfsp_env_load(path, &g, &err) : -1;
	ok_e(rc == 0 && g->nsizes == 2 && g->sizes[0] == KiB &&
	     g->sizes[1] == MiB && g->nprocs == 2 && g->procs[0] == 1 &&
	     g->procs[1] == 4 && same_points(e, g), "load from a file; sizes "
	     "and procs derived from the points", &err);
	unlink(path);
	gfsp_envelope_free(g);

	/* a syntax error names the file */
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd >= 0 && write(fd, "{\"format\": \"gfsplit-envelope\",\n  x", 34)
	    != 34)
		diag("short write to %s", path);
	if (fd >= 0)
		close(fd);
	gfsp_error_clear(&err);
	rc = gfsp_env_load(path, &g, &err);
	ok(rc == GFSP_EINVAL && g == NULL && strstr(err.msg, path) != NULL &&
	   strstr(err.msg, "not valid JSON") != NULL, "a syntax error names "
	   "the file: %s", err.msg);
	/* ... and so does a file cut short */
	if (truncate(path, 31) != 0)
		diag("truncate %s: %s", path, strerror(errno));
	gfsp_error_clear(&err);
	rc = gfsp_env_load(path, &g, &err);
	ok(rc == GFSP_EINVAL && strstr(err.msg, path) != NULL &&
	   strstr(err.msg, "ends too early") != NULL, "a file cut short: %s",
	   err.msg);
	unlink(path);
	gfsp_error_clear(&err);
	rc = gfsp_env_load(path, &g, &err);
	ok(rc == GFSP_ENOENT && strstr(err.msg, path) != NULL,
	   "a missing file: %s", err.msg);

	json_object_put(doc);
	gfsp_envelope_free(f);
	gfsp_envelope_free(e);
}

/*
 * One damage to a good document: `edit` is a JSON object whose members
 * replace (null: delete) those at `where` ("" the top, "points.1", or
 * "points.1.ops_per_s").
 */
static void
reject(const char *where, const char *edit, int code, const char *msg)
{
	struct gfsp_envelope *e = env_full(), *f = NULL;
	struct gfsp_error err = { 0 };
	json_object *doc = gfsp_env_to_json(e), *o = doc;
	json_object *ed = json_tokener_parse(edit);
	char buf[64], *tok, *save = NULL;
	int rc;

	snprintf(buf, sizeof(buf), "%s", where);
	for (tok = strtok_r(buf, ".", &save); tok != NULL && o != NULL;
	     tok = strtok_r(NULL, ".", &save))
		o = json_object_is_type(o, json_type_array) ?
		    json_object_array_get_idx(o, (size_t)atoi(tok)) :
		    json_object_object_get(o, tok);
	json_object_object_foreach(ed, k, v) {
		if (v == NULL)
			json_object_object_del(o, k);
		else
			json_object_object_add(o, k, json_object_get(v));
	}
	rc = gfsp_env_from_json(doc, "t.json", &f, &err);
	ok(rc == code && f == NULL && strcmp(err.msg, msg) == 0,
	   "rejected: %s %s: %s", where[0] ? where : "top", edit, err.msg);
	json_object_put(ed);
	json_object_put(doc);
	gfsp_envelope_free(e);
}

static void
test_json_reject(void)
{
	reject("points.4.ops_per_s", "{\"median\": null}", GFSP_EINVAL,
	    "'t.json': point 4 (write, 1 procs, 1048576 bytes): "
	    "ops_per_s.median is missing");
	reject("", "{\"format_version\": 2}", GFSP_EVERSION,
	    "'t.json': envelope version 2, this build reads version 1");
	/* a document written before "version" became the package's */
	reject("", "{\"format_version\": null, \"version\": 2}",
	    GFSP_EVERSION,
	    "'t.json': envelope version 2, this build reads version 1");
	reject("", "{\"format\": \"gfsplit-tier\"}", GFSP_EINVAL,
	    "'t.json': not an envelope (format 'gfsplit-tier')");
	reject("", "{\"format\": null}", GFSP_EINVAL,
	    "'t.json': not an envelope (no \"format\")");
	reject("points.3", "{\"metric\": \"delete\"}", GFSP_EINVAL,
	    "'t.json': point 3: unknown metric 'delete'");
	reject("points.5.bytes_per_s", "{\"min\": -1}", GFSP_EINVAL,
	    "'t.json': point 5 (write, 4 procs, 1024 bytes): bytes_per_s.min "
	    "is negative");
	reject("points.0.ops_per_s", "{\"max\": \"fast\"}", GFSP_EINVAL,
	    "'t.json': point 0 (create, 1 procs, 1024 bytes): ops_per_s.max "
	    "is not a number");
	reject("points.0.ops_per_s", "{\"min\": 1e9}", GFSP_EINVAL,
	    "'t.json': point 0 (create, 1 procs, 1024 bytes): ops_per_s: min, "
	    "median and max are not in order");
	reject("points.0.ops_per_s", "{\"max\": 1e400}", GFSP_EINVAL,
	    "'t.json': point 0 (create, 1 procs, 1024 bytes): ops_per_s.max "
	    "is not finite");
	reject("points.1", "{\"samples\": [3]}", GFSP_EINVAL,
	    "'t.json': point 1 (create, 1 procs, 1048576 bytes): samples[0] "
	    "is not an object");
	reject("", "{\"machine\": \"n1\"}", GFSP_EINVAL,
	    "'t.json': machine is not an object");
	reject("points.2", "{\"procs\": 0}", GFSP_EINVAL,
	    "'t.json': point 2: procs is 0, not in [1, 2147483647]");
	reject("points.2", "{\"size\": 1.5}", GFSP_EINVAL,
	    "'t.json': point 2: size is not a whole number");
	reject("points.1", "{\"samples\": [{\"seconds\": 1, \"ops\": 2}]}",
	    GFSP_EINVAL, "'t.json': point 1 (create, 1 procs, 1048576 "
	    "bytes): samples[0].bytes is missing");
	reject("points.4", "{\"size\": 1024}", GFSP_EINVAL,
	    "'t.json': point 4 (write, 1 procs, 1024 bytes): the same as "
	    "point 3");
	reject("", "{\"sizes\": [1048576, 1024]}", GFSP_EINVAL,
	    "'t.json': sizes is not ascending");
	reject("", "{\"procs\": [1]}", GFSP_EINVAL,
	    "'t.json': point 2: 4 is not in procs");
	reject("method", "{\"cache\": \"none\"}", GFSP_EINVAL,
	    "'t.json': method.cache 'none' is not keep, drop or direct");
	reject("target", "{\"path\": 7}", GFSP_EINVAL,
	    "'t.json': target.path is not a string");
	reject("", "{\"points\": {}}", GFSP_EINVAL,
	    "'t.json': points is not an array");
	/* finite is not enough: 1e300 bytes/s was cast to an
	 * integer where it was printed, and 1e-300 ops/s predicts 1e300 s
	 * that a round count turns into infinity */
	reject("points.5.bytes_per_s", "{\"max\": 1e300}", GFSP_EINVAL,
	    "'t.json': point 5 (write, 4 procs, 1024 bytes): bytes_per_s.max "
	    "is 1e+300: a rate is 0 or within [1e-06, 1e+18]");
	reject("points.5.ops_per_s", "{\"min\": 1e-300}", GFSP_EINVAL,
	    "'t.json': point 5 (write, 4 procs, 1024 bytes): ops_per_s.min "
	    "is 1e-300: a rate is 0 or within [1e-06, 1e+18]");
	reject("points.4.bytes_per_s", "{\"median\": NaN}", GFSP_EINVAL,
	    "'t.json': point 4 (write, 1 procs, 1048576 bytes): "
	    "bytes_per_s.median is not finite");
	reject("points.4.bytes_per_s", "{\"min\": -1e-300}", GFSP_EINVAL,
	    "'t.json': point 4 (write, 1 procs, 1048576 bytes): "
	    "bytes_per_s.min is negative");
}

/* doc with member key of (the object at) where replaced by n copies of
 * item (NULL: null), read: rejected with msg */
static void
reject_many(const char *where, const char *key, json_object *item,
	    size_t n, const char *msg)
{
	struct gfsp_envelope *e = env_full(), *f = NULL;
	struct gfsp_error err = { 0 };
	json_object *doc = gfsp_env_to_json(e), *o = doc, *a;
	size_t i;
	int rc;

	if (where[0] != '\0')
		o = json_object_array_get_idx(json_object_object_get(doc,
		    "points"), (size_t)atoi(where));
	a = json_object_new_array_ext((int)n);
	for (i = 0; i < n; i++)
		json_object_array_add(a, json_object_get(item));
	json_object_object_add(o, key, a);
	rc = gfsp_env_from_json(doc, "t.json", &f, &err);
	ok(rc == GFSP_EINVAL && f == NULL && strcmp(err.msg, msg) == 0,
	   "rejected: %zu %s: %s", n, key, err.msg);
	json_object_put(doc);
	gfsp_envelope_free(e);
}

/*
 * The limits of envelope.h, each checked before anything is allocated
 * for the members (a crafted 206 MB envelope once took 3.3 GB and
 * 30 s before it was refused).
 */
static void
test_json_limits(void)
{
	struct gfsp_envelope *e = env_full(), *f = NULL;
	struct gfsp_error err = { 0 };
	json_object *doc, *pts, *p, *x;
	char path[256], want[512];
	double t0;
	int rc, fd;
	size_t i;

	reject_many("", "points", NULL, GFSP_ENV_POINTS_MAX + 1,
	    "'t.json': points has 327681 members, more than 327680 (the most "
	    "a reader takes)");
	x = json_tokener_parse("{\"seconds\": 1, \"ops\": 2, \"bytes\": 3}");
	reject_many("1", "samples", x, GFSP_ENV_SAMPLES_MAX + 1,
	    "'t.json': point 1 (create, 1 procs, 1048576 bytes): samples has "
	    "10001 members, more than 10000 (the most a reader takes)");
	json_object_put(x);
	x = json_object_new_int(1024);
	reject_many("", "sizes", x, GFSP_ENV_SIZES_MAX + 1,
	    "'t.json': sizes has 257 members, more than 256 (the most a "
	    "reader takes)");
	json_object_put(x);

	/* derived: 257 process counts among the points, no "procs" */
	doc = gfsp_env_to_json(e);
	json_object_object_del(doc, "procs");
	pts = json_object_object_get(doc, "points");
	for (i = 0; i < GFSP_ENV_PROCS_MAX + 1; i++) {
		p = NULL;
		json_object_deep_copy(json_object_array_get_idx(pts, 0), &p,
		    NULL);
		json_object_object_add(p, "procs",
		    json_object_new_int(100 + (int)i));
		json_object_array_add(pts, p);
	}
	rc = gfsp_env_from_json(doc, "t.json", &f, &err);
	ok(rc == GFSP_EINVAL && f == NULL && strcmp(err.msg, "'t.json': the "
	   "points have 259 different procs, more than 256 (the most a "
	   "reader takes)") == 0, "rejected: 259 process counts among the "
	   "points: %s", err.msg);
	json_object_put(doc);

	/* a grid of 64 x 64 x 5 points, read in well under a second; the
	 * duplicates are sought in n log n (comparing each point with those
	 * before it took 0.4 s here, and would take 100 s at the limit) */
	doc = gfsp_env_to_json(e);
	json_object_object_del(doc, "procs");
	json_object_object_del(doc, "sizes");
	pts = json_object_new_array();
	for (i = 0; i < 64 * 64 * GFSP_ENV_NMETRIC; i++) {
		p = NULL;
		json_object_deep_copy(json_object_array_get_idx(
		    json_object_object_get(doc, "points"), 0), &p, NULL);
		json_object_object_del(p, "samples");
		json_object_object_add(p, "metric", json_object_new_string(
		    gfsp_env_metric_name((int)(i % GFSP_ENV_NMETRIC))));
		json_object_object_add(p, "procs", json_object_new_int(1 +
		    (int)(i / GFSP_ENV_NMETRIC % 64)));
		json_object_object_add(p, "size", json_object_new_int64(1 +
		    (int64_t)(i / GFSP_ENV_NMETRIC / 64)));
		json_object_array_add(pts, p);
	}
	json_object_object_add(doc, "points", pts);
	t0 = gfsp_now();
	rc = gfsp_env_from_json(doc, "t.json", &f, &err);
	t0 = gfsp_now() - t0;
	ok_e(rc == 0 && f->npoints == 64 * 64 * GFSP_ENV_NMETRIC &&
	     f->nsizes == 64 && f->nprocs == 64 && t0 < 2,
	     "a grid of 20480 points is read, its duplicates sought in n log n",
	     &err);
	diag("20480 points read in %.3f s", t0);
	gfsp_envelope_free(f);
	f = NULL;
	/* ... and its last point made the same as its first */
	p = json_object_array_get_idx(pts, 64 * 64 * GFSP_ENV_NMETRIC - 1);
	json_object_object_add(p, "metric", json_object_new_string("create"));
	json_object_object_add(p, "procs", json_object_new_int(1));
	json_object_object_add(p, "size", json_object_new_int64(1));
	gfsp_error_clear(&err);
	rc = gfsp_env_from_json(doc, "t.json", &f, &err);
	ok(rc == GFSP_EINVAL && f == NULL && strcmp(err.msg, "'t.json': point "
	   "20479 (create, 1 procs, 1 bytes): the same as point 0") == 0,
	   "... a duplicate among them named: %s", err.msg);
	json_object_put(doc);

	/* a file larger than GFSP_ENV_FILE_MAX: refused unread (sparse, it
	 * would read as GFSP_ENV_FILE_MAX * 2 bytes of NULs) */
	snprintf(path, sizeof(path), "%s/test_envmodel.%d.big.json",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 2 * (off_t)GFSP_ENV_FILE_MAX) != 0)
		diag("cannot make %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	gfsp_error_clear(&err);
	t0 = gfsp_now();
	rc = gfsp_env_load(path, &f, &err);
	t0 = gfsp_now() - t0;
	snprintf(want, sizeof(want), "'%s' is larger than an envelope can be "
	    "(32.00 MiB at most): refused unread", path);
	ok(rc == GFSP_EINVAL && f == NULL && strcmp(err.msg, want) == 0 &&
	   t0 < 0.5, "a file of 64 MiB is refused unread: %s", err.msg);
	unlink(path);
	gfsp_envelope_free(e);
}

/* ------------------------------------------------ presets and output */

static void
test_presets(void)
{
	struct gfsp_env_shape s;
	char names[128], *tok, *save = NULL;
	int all = 1, n = 0;

	snprintf(names, sizeof(names), "%s", gfsp_env_preset_names);
	for (tok = strtok_r(names, "|", &save); tok != NULL;
	     tok = strtok_r(NULL, "|", &save), n++)
		all &= gfsp_env_preset(tok, &s) == 0;
	ok(all && n == 3, "every name of gfsp_env_preset_names is a preset");
	ok(gfsp_env_preset("mprojectpp", &s) == 0 && s.tasks == 955 &&
	   s.nodes == 8 && s.output_size == 4404019 &&
	   s.input_size == 2 * (int64_t)MiB && s.shared_size == 1024 &&
	   s.local_fraction == 0.94, "mprojectpp is the paper's stage");
	ok(gfsp_env_preset("bandwidth-bound", &s) == 0 &&
	   s.shared_size == GFSP_ENV_NONE && s.output_size == 16 * (int64_t)MiB
	   && gfsp_env_preset("mProjectPP", &s) == -1, "bandwidth-bound; "
	   "names are exact");
}

static void
test_mprojectpp(void)
{
	struct gfsp_envelope *e = env_new("/flat", 0);
	struct gfsp_env_shape sh;
	struct gfsp_env_prediction p;
	struct gfsp_error err = { 0 };
	int rc;

	env_flat(e, GFSP_ENV_CREATE, 1000, 0);
	env_flat(e, GFSP_ENV_WRITE, 1000, 100e6);
	env_flat(e, GFSP_ENV_READ_LOCAL, 2000, 200e6);
	env_flat(e, GFSP_ENV_READ_REMOTE, 500, 50e6);
	env_flat(e, GFSP_ENV_READ_SHARED, 4000, 400e6);
	gfsp_env_preset("mprojectpp", &sh);
	/*
	 * 955 tasks on 8 nodes: ceil(119.375) = 120 rounds.
	 *   create  8/1000 = 0.008
	 *   write   8*4404019/1e8 = 0.35232152 (t_ops 0.008): bandwidth
	 *   write_s = 120 * 0.36032152 = 43.2385824
	 *   local   7.52 ops: 7.52*2097152/2e8 = 0.0788529152 (t_ops 0.00376)
	 *   remote  0.48 ops: 0.48*2097152/5e7 = 0.0201326592 (t_ops 0.00096)
	 *   shared  8 ops of 1 KiB: 8/4000 = 0.002 (t_bytes 0.00002048)
	 *   read_s = 120 * 0.1009855744 = 12.118268928
	 *   total  = 55.356851328
	 */
	rc = gfsp_env_predict(e, &sh, &p, &err);
	ok_e(rc == 0 && p.rounds == 120 && p.nterms == 5 &&
	     near(p.terms[3].ops, 0.48) &&
	     near(p.terms[3].seconds, 0.0201326592) &&
	     near(p.write_s, 43.2385824) && near(p.read_s, 12.118268928) &&
	     near(p.total_s, 55.356851328) && p.flags == 0,
	     "mprojectpp on a flat envelope: 43.2385824 + 12.118268928 s",
	     &err);
	gfsp_envelope_free(e);
}

static void
test_output(void)
{
	struct gfsp_envelope *e = env_new("/out", 1);
	struct gfsp_env_shape sh;
	struct gfsp_env_prediction p;
	struct gfsp_error err = { 0 };
	json_object *o, *back, *t;
	char *text = NULL, *tok, *save = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	env_flat(e, GFSP_ENV_CREATE, 1000, 0);
	env_flat(e, GFSP_ENV_WRITE, 1000, 100e6);
	env_flat(e, GFSP_ENV_READ_LOCAL, 2000, 200e6);
	env_flat(e, GFSP_ENV_READ_SHARED, 4000, 400e6);
	gfsp_env_preset("bandwidth-bound", &sh);
	sh.nodes = 16;		/* above the measured 8 */
	sh.local_fraction = 0.5;
	rc = gfsp_env_predict(e, &sh, &p, &err);
	o = rc == 0 ? gfsp_env_prediction_json(&sh, &p) : NULL;
	back = o ? json_tokener_parse(json_object_to_json_string(o)) : NULL;
	ok_e(back != NULL && json_object_object_get_ex(back, "shape", &t) &&
	     json_object_is_type(json_object_object_get(t, "shared_size"),
	     json_type_null) &&
	     json_object_get_int64(json_object_object_get(t, "tasks")) == 64 &&
	     json_object_array_length(json_object_object_get(back, "terms")) ==
	     p.nterms &&
	     json_object_get_double(json_object_object_get(back, "total_s")) ==
	     p.total_s &&
	     json_object_get_boolean(json_object_object_get(back,
	     "extrapolated_procs")),
	     "prediction as JSON: shape, terms, total, flags", &err);
	json_object_put(back);
	json_object_put(o);

	f = open_memstream(&text, &len);
	gfsp_env_prediction_print(f, &sh, &p);
	fclose(f);
	ok(strstr(text, "64 tasks on 16 nodes, 4 rounds") != NULL &&
	   strstr(text, "read-remote") != NULL &&
	   strstr(text, "bandwidth *") != NULL &&
	   strstr(text, "shared input none") != NULL &&
	   strstr(text, "total") != NULL && strstr(text, "extrapolated") !=
	   NULL, "prediction as text");
	for (tok = strtok_r(text, "\n", &save); tok != NULL;
	     tok = strtok_r(NULL, "\n", &save))
		diag("%s", tok);
	free(text);
	gfsp_envelope_free(e);
}

/*
 * Rates no integer holds: the table printed a bandwidth by
 * casting it to uint64_t, undefined beyond 2^64 and at infinity (x86 gave
 * "0 B/s"), and 0.5 B/s printed as "0 B/s" too.  A rate extrapolated past
 * GFSP_ENV_RATE_MAX stops there.
 */
static void
test_print_extremes(void)
{
	static const double bw[] = { 0.5, 1e30, 1e300, INFINITY, NAN };
	struct gfsp_envelope *e = env_new("/far", 1);
	struct gfsp_env_shape sh = { 10, 1, 1 << 30, GFSP_ENV_NONE,
	    GFSP_ENV_NONE, 1 };
	struct gfsp_env_prediction p;
	struct gfsp_env_rate r;
	struct gfsp_error err = { 0 };
	char *text = NULL, *tok, *save = NULL;
	const char *want;
	size_t len = 0, i;
	FILE *f;
	int rc;

	/* the time of a byte the same at 1 and 2 bytes: extrapolated, the
	 * bandwidth grows with the size, to 4.6e36 B/s at 2^63 */
	env_add(e, GFSP_ENV_CREATE, 1, 1, 1000, 0);
	env_add(e, GFSP_ENV_CREATE, 1, 2, 1000, 0);
	env_add(e, GFSP_ENV_WRITE, 1, 1, 5e17, 5e17);
	env_add(e, GFSP_ENV_WRITE, 1, 2, 5e17, 1e18);
	rc = gfsp_env_rate(e, GFSP_ENV_WRITE, 1, 0x1p63, &r, &err);
	ok_e(rc == 0 && r.bytes_s == GFSP_ENV_RATE_MAX &&
	     r.ops_s <= GFSP_ENV_RATE_MAX, "an extrapolated bandwidth stops "
	     "at 1e18 B/s", &err);
	diag("%g ops/s, %g B/s", r.ops_s, r.bytes_s);

	rc = gfsp_env_predict(e, &sh, &p, &err);
	ok_e(rc == 0 && p.nterms == 2, "predict 1 GiB outputs", &err);
	/* then the bandwidth of the write term as no envelope gives it,
	 * whatever comes to the printing code */
	for (i = 0; rc == 0 && i < GFSP_ARRAY_SIZE(bw); i++) {
		p.terms[1].rate.bytes_s = bw[i];
		free(text);
		text = NULL;
		f = open_memstream(&text, &len);
		gfsp_env_prediction_print(f, &sh, &p);
		fclose(f);
		tok = strstr(text, "\nwrite ");
		want = i == 0 ? " 0.5 B/s " : i == 1 ? " 8.67e+11 EiB/s " :
		    i == 2 ? " 8.67e+281 EiB/s " : "            - ";
		ok(tok != NULL && strstr(tok, " 0 B/s") == NULL &&
		   strstr(tok, want) != NULL, "a bandwidth of %g B/s printed "
		   "as itself, or as none", bw[i]);
		tok = strtok_r(tok != NULL ? tok + 1 : text, "\n", &save);
		diag("%s", tok != NULL ? tok : "(none)");
	}
	free(text);
	gfsp_envelope_free(e);
}

int
main(void)
{
	test_basics();
	test_bounds_flat();
	test_bounds_consistent();
	test_read();
	test_same_as_local();
	test_rate_size();
	test_rate_procs();
	test_predict_invalid();
	test_json_round_trip();
	test_json_reject();
	test_json_limits();
	test_presets();
	test_mprojectpp();
	test_output();
	test_print_extremes();
	return done_testing();
}
