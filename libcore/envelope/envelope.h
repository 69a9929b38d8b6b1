/*
 * envelope.h - the MTC envelope of a storage target (Kyou, Tatebe and
 * Tanaka, "A performance prediction model for many-task applications on
 * the Gfarm file system", 2014, after Zhang et al.): a handful of
 * measured rates that bound the I/O of a many-task workflow, and the
 * model that predicts the I/O time of one workflow stage from them.  The
 * envelope wing (libcore/envelope/) uses base and store only.  Included
 * by libcore/envelope/, cmd/ and tests/.
 *
 *   envbench.c  measuring the envelope, and replaying a synthetic stage
 *   envmodel.c  the envelope document written (JSON, json-c),
 *               interpolation and the paper's formulas (1)-(3)
 *   envload.c   the envelope document read back and checked
 *   envout.c    the table, CSV and the SVG heat map
 *
 * Every rate is an aggregate over the processes that ran together: ops/s
 * is operations completed by all of them per second of the phase's wall
 * time (start barrier to the last process's end), bytes/s likewise.
 */
#ifndef GFSP_ENVELOPE_H
#define GFSP_ENVELOPE_H

#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

#include "gfsplit.h"

struct json_object;

/*
 * The metrics.  A task of a many-task stage opens and reads its inputs
 * and creates and writes its output; each metric times one of those steps
 * so that the steps of a task add up without overlap:
 *
 *   create       open(O_CREAT|O_EXCL) of a new file placed on the
 *                process's own node
 *   write        write SIZE bytes into that new file and close it
 *   read-local   1-to-1: open, read all SIZE bytes, close a file of the
 *                process's own, stored on its own node
 *   read-remote  the same, the file stored on another node
 *   read-shared  N-to-1: every process opens, reads and closes the same
 *                files
 *
 * create and write are timed in one phase (each file created, written
 * and closed in turn; the phase's time split between the two steps in
 * the proportion of the time spent in each), so a create point exists for
 * each size written.
 */
enum gfsp_env_metric {
	GFSP_ENV_CREATE,
	GFSP_ENV_WRITE,
	GFSP_ENV_READ_LOCAL,
	GFSP_ENV_READ_REMOTE,
	GFSP_ENV_READ_SHARED,
	GFSP_ENV_NMETRIC
};

/* "create", "write", "read-local", "read-remote", "read-shared" */
const char *gfsp_env_metric_name(int metric);
/* the metric of a name, or -1 */
int gfsp_env_metric_parse(const char *name);

/* One timed repetition of a phase (all processes of the point). */
struct gfsp_env_sample {
	double seconds;		/* start barrier to the last process's end */
	uint64_t ops;		/* operations, all processes */
	uint64_t bytes;		/* bytes moved, all processes (0: create) */
};

struct gfsp_env_stat {
	double min, median, max;
};

/* One (metric, process count, file size) point of the envelope. */
struct gfsp_env_point {
	int metric;
	int procs;
	uint64_t size;		/* bytes per file */
	uint64_t files;		/* files per process per repetition */
	struct gfsp_env_stat ops_s;	/* ops/s over the samples */
	struct gfsp_env_stat bytes_s;	/* bytes/s over the samples */
	size_t nsamples;
	struct gfsp_env_sample *samples;	/* may be NULL (loaded
						 * without samples) */
};

/* Page cache handling of the reads (and, with fsync, the writes). */
enum gfsp_env_cache {
	GFSP_ENV_CACHE_KEEP,	/* as the system does: a file read soon
				 * after it was written comes from memory */
	GFSP_ENV_CACHE_DROP,	/* files to be read are evicted first */
	GFSP_ENV_CACHE_DIRECT	/* O_DIRECT (POSIX only) */
};

const char *gfsp_env_cache_name(int cache);	/* "keep", "drop", "direct" */
int gfsp_env_cache_parse(const char *name);	/* -1: none of them */

/* How the envelope was measured. */
struct gfsp_env_method {
	int reps;		/* timed repetitions per point */
	int warmup;		/* untimed repetitions before them */
	uint64_t work;		/* bytes per process per repetition */
	uint64_t max_files;	/* files per process per repetition, at most */
	uint64_t min_files;	/* ... and at least */
	uint64_t buffer;	/* bytes per read or write call */
	int cache;		/* enum gfsp_env_cache */
	int fsync;		/* write includes fsync before close */
	/* seconds a repetition should last at least: when the first warm-up
	 * is shorter, the files per process grow for the timed ones (at most
	 * 100 times); 0: never */
	double min_time;
};

/*
 * files per process per repetition for a size: work / size, within
 * [min_files, max_files]
 */
uint64_t gfsp_env_files_for(const struct gfsp_env_method *m, uint64_t size);

struct gfsp_envelope {
	char *target;		/* as given */
	char *backend;		/* "posix", "gfarm" */
	/* POSIX has no nodes of its own: every file is as near as any other,
	 * read-remote is not measured and read-local stands for it */
	int remote_same_as_local;
	struct gfsp_env_method method;
	size_t nsizes, nprocs;
	uint64_t *sizes;	/* ascending */
	int *procs;		/* ascending */
	size_t npoints;
	struct gfsp_env_point *points;
	/* kept as they are, written back as they were (may be NULL):
	 * machine ("hostname", "nodes", "cores", "memory_bytes", "kernel",
	 * "mpi") and anything else a reader need not understand */
	struct json_object *machine;
	char *started;		/* ISO 8601, UTC */
	double seconds;		/* the whole measurement */
};

void gfsp_envelope_free(struct gfsp_envelope *e);

/* The point of (metric, procs, size), or NULL. */
const struct gfsp_env_point *gfsp_env_find(const struct gfsp_envelope *e,
					 int metric, int procs, uint64_t size);

/* min, median and max of n values (sorts v) */
struct gfsp_env_stat gfsp_env_stat_of(double *v, size_t n);
/* { "min", "median", "max" }; *oom set when memory ran out */
struct json_object *gfsp_env_stat_json(const struct gfsp_env_stat *s,
				     int *oom);

/* ------------------------------------------------- the document (JSON) */

/*
 * The envelope as one JSON document (see envelope-bench(1)):
 *   { the common members of every document (gfsp_json_doc: "command",
 *     "version" of the package, src and dest null, "ranks", "seconds",
 *     "bytes" of the timed runs, "bytes_per_sec"), "mode": "measure",
 *     "format": "gfsplit-envelope", "format_version": 1, "tool",
 *     "started", "machine", "target": { "path", "backend",
 *     "remote_same_as_local" }, "method": {...}, "sizes": [...],
 *     "procs": [...], "points": [ { "metric", "procs", "size", "files",
 *     "ops_per_s": { "min", "median", "max" }, "bytes_per_s": {...},
 *     "samples": [ { "seconds", "ops", "bytes" } ] } ] }
 * NULL: out of memory.
 */
struct json_object *gfsp_env_to_json(const struct gfsp_envelope *e);

/*
 * What a reader takes.  A file is refused by its size before it is
 * parsed (json-c needs some 16 bytes of memory per byte of text, and a
 * crafted 200 MB file took 3.3 GB and half a minute before this limit);
 * the lists and the points by their lengths before anything is allocated
 * for their members.  Each limit is far above any real envelope:
 * envelope-bench's default sweep on 1024 ranks is 5 metrics x 11 process
 * counts x 4 sizes = 220 points, some 160 KB as --json writes it with 3
 * samples a point; a sweep of 5 x 32 x 64 points with 10 samples each
 * would be some 15 MB.  envelope-bench refuses to measure more sizes,
 * process counts or repetitions than a reader takes.
 */
/* the document's "format" and "version" (envmodel.c writes, envload.c
 * reads) */
#define GFSP_ENV_FORMAT		"gfsplit-envelope"
#define GFSP_ENV_VERSION	1
#define GFSP_ENV_FILE_MAX	(32u << 20)	/* bytes of an envelope file */
#define GFSP_ENV_SIZES_MAX	256	/* the sizes, the process counts */
#define GFSP_ENV_PROCS_MAX	256
#define GFSP_ENV_SAMPLES_MAX	10000	/* samples of one point */
/* one point per (metric, process count, size) */
#define GFSP_ENV_POINTS_MAX	(GFSP_ENV_NMETRIC * GFSP_ENV_SIZES_MAX * \
				 GFSP_ENV_PROCS_MAX)
/*
 * A rate (ops/s or bytes/s, min, median or max) is 0 or within these:
 * 1e18/s is some hundred thousand times the aggregate bandwidth of
 * today's largest file systems (about 10 TB/s), 1e-6/s one operation (or
 * byte) in eleven days.  Rates within them keep every prediction finite.
 */
#define GFSP_ENV_RATE_MIN	1e-6
#define GFSP_ENV_RATE_MAX	1e18

/*
 * Read an envelope document.  name is for messages (the file).  Checks
 * the format and format_version (an integer "version" in documents
 * written before the common members), the limits above, that every point
 * has a known metric, procs >= 1, a size, and rates that are 0 or within
 * [GFSP_ENV_RATE_MIN, GFSP_ENV_RATE_MAX]; errors name the file and the
 * point and the member.
 */
int gfsp_env_from_json(struct json_object *doc, const char *name,
		      struct gfsp_envelope **out, struct gfsp_error *err);
/* the same from a file (json-c's parser; a syntax error names the file,
 * and so does a file larger than GFSP_ENV_FILE_MAX, refused unread) */
int gfsp_env_load(const char *path, struct gfsp_envelope **out,
		 struct gfsp_error *err);

/* ------------------------------------------------ interpolation, model */

/* gfsp_env_rate flags */
#define GFSP_ENV_EXTRA_SIZE	0x1	/* size outside the measured sizes */
#define GFSP_ENV_EXTRA_PROCS	0x2	/* procs outside the measured counts */

/* The envelope's rates of one metric at (procs, size), interpolated. */
struct gfsp_env_rate {
	double ops_s;		/* T: aggregate operations per second */
	double bytes_s;		/* B: aggregate bytes per second */
	/* of the time one operation takes at this size, the share that does
	 * not grow with the size (per-operation cost: open, close, requests),
	 * from the two measured sizes around it; 1 with one measured size */
	double fixed_share;
	int flags;		/* GFSP_ENV_EXTRA_* */
};

/*
 * Interpolation (documented in envelope-bench(1)):
 *  - in size, at a measured process count: the time per operation, 1/T,
 *    is taken as affine in the size between the two measured sizes
 *    around it (cost = fixed part + size / bandwidth), which is exact
 *    when the system behaves so and meets every measured point; above the
 *    largest size the last segment goes on (extrapolation), below the
 *    smallest the smallest size's time is used.  B is interpolated the
 *    same way through D/B, so that B = T * D where the envelope has it.
 *  - in process count: T and B linearly between the two measured counts
 *    around it; above the largest, the largest's rates (the system taken
 *    as saturated); below the smallest, scaled down in proportion.
 *  - no rate comes out above GFSP_ENV_RATE_MAX, however far it is
 *    extrapolated.
 * Fails (GFSP_EINVAL, naming the envelope and the metric) when the
 * envelope has no point of the metric.
 */
int gfsp_env_rate(const struct gfsp_envelope *e, int metric, double procs,
		 double size, struct gfsp_env_rate *out, struct gfsp_error *err);

/* One many-task workflow stage. */
struct gfsp_env_shape {
	uint64_t tasks;		/* N */
	int nodes;		/* C: tasks that run at once, one per node */
	/* each task's output (D), its own input (D1) and the input every task
	 * reads (DN); a size < 0 (GFSP_ENV_NONE) leaves its terms out */
	int64_t output_size, input_size, shared_size;
	double local_fraction;	/* alpha: share of 1-to-1 reads that are
				 * local */
};

#define GFSP_ENV_NONE (-1)

/* The presets by name ("mprojectpp", the paper's evaluation;
 * "bandwidth-bound", "metadata-bound"); -1 if there is none of that
 * name. */
int gfsp_env_preset(const char *name, struct gfsp_env_shape *out);
extern const char *const gfsp_env_preset_names;	/* "a|b|c" */

/* One term of formulas (1)-(3), for one round of C tasks. */
struct gfsp_env_term {
	int metric;
	double ops;		/* operations in a round (alpha C, ...) */
	uint64_t size;		/* bytes per operation */
	struct gfsp_env_rate rate;	/* T and B at (C, size) */
	double t_ops;		/* ops / T */
	double t_bytes;		/* ops * size / B (0 for create) */
	double seconds;		/* the term: max(t_ops, t_bytes) */
	/* "metadata" (create), "throughput" or "bandwidth": the larger of
	 * t_ops and t_bytes; when they agree within 1% (they do for
	 * envelopes measured by envelope-bench, where B = T * size), the
	 * larger part of the operation's time: fixed_share >= 0.5 is
	 * throughput */
	const char *bound;
};

struct gfsp_env_prediction {
	uint64_t rounds;	/* ceil(N / C) */
	size_t nterms;
	struct gfsp_env_term terms[GFSP_ENV_NMETRIC];
	double write_s;		/* (1)/(2): rounds * (create + write) */
	double read_s;		/* (3): rounds * (local + remote + shared) */
	double total_s;		/* write_s + read_s */
	int flags;		/* GFSP_ENV_EXTRA_* of any term */
};

/*
 * The paper's formulas (see the head of this file) with rates of the
 * envelope at process count C:
 *   write (1)/(2):  ceil(N/C) * ( C/Tm + max(C/TL, C*D/BL) )
 *   read (3):       ceil(N/C) * ( max(aC/T1L, aC*D1/B1L)
 *                               + max((1-a)C/T1R, (1-a)C*D1/B1R)
 *                               + max(C/TN, C*DN/BN) )
 * The paper writes the create term 1/Tm, reading Tm as the rate one task
 * sees while C create together; with Tm the aggregate rate that is C/Tm.
 * read-remote is read-local where the envelope says they are the same.
 */
int gfsp_env_predict(const struct gfsp_envelope *e,
		    const struct gfsp_env_shape *s,
		    struct gfsp_env_prediction *out, struct gfsp_error *err);

/* The prediction as JSON (shape, rounds, terms, times). */
struct json_object *gfsp_env_prediction_json(const struct gfsp_env_shape *s,
					    const struct gfsp_env_prediction *p);
/* envelope-bench predict --json: the same inside the common members
 * (gfsp_json_doc; "mode": "predict", "target" null, "envelope" the file
 * read; bytes null); seconds the time it took.  NULL: out of memory. */
struct json_object *gfsp_env_prediction_doc(const char *envelope,
					   const struct gfsp_env_shape *s,
					   const struct gfsp_env_prediction *p,
					   double seconds);
/* ... and as text */
void gfsp_env_prediction_print(FILE *out, const struct gfsp_env_shape *s,
			       const struct gfsp_env_prediction *p);

/* --------------------------------------------------------- output (envout.c) */

/*
 * A rate for people, into buf: three significant digits and a unit, binary
 * multiples for bytes ("812 MiB", "1.23 GiB"), SI letters for counts
 * ("52.3k"), then suffix ("/s", " ops/s"); "-" when v is not a finite
 * number >= 0.  The value stays a double throughout: none, however large,
 * is converted to an integer, and none below 1 prints as 0.
 */
const char *gfsp_env_format_rate(double v, int bytes, const char *suffix,
				 char *buf, size_t len);

/* A readable table: one line per point, medians with [min..max]. */
void gfsp_env_print_table(FILE *out, const struct gfsp_envelope *e);
/* CSV with a header line: one row per point (medians, min, max). */
void gfsp_env_print_csv(FILE *out, const struct gfsp_envelope *e);

/*
 * An SVG heat map of one metric (as the prediction model's paper draws
 * the envelope, its figure 2): file size across, process
 * count up, each cell coloured by the metric's median rate (bandwidth, or
 * throughput when `throughput`), on a log colour scale with a legend, the
 * value written in the cell.  Written to path (a local file) whole: under a
 * temporary name, then renamed.
 */
int gfsp_env_heatmap(const char *path, const struct gfsp_envelope *e,
		    int metric, int throughput, struct gfsp_error *err);

/* --------------------------------------------------------- measuring */

struct gfsp_env_opts {
	const char *target;		/* a directory, POSIX or gfarm:// */
	const uint64_t *sizes;		/* ascending */
	size_t nsizes;
	const int *procs;		/* ascending, each <= the comm size */
	size_t nprocs;
	unsigned metrics;		/* bit (1 << metric) per metric */
	struct gfsp_env_method method;
	const char *hosts;		/* node per rank (rank mod K), or NULL */
	/* read-remote is in metrics by default, not by request: where there
	 * is no second node it is left out with a warning, not an error */
	int remote_optional;
	/* replay: round by round, a barrier after every rank's reads and
	 * after every rank's writes (as formulas (1)-(3) count a stage),
	 * instead of free running */
	int lockstep;
	/* replay: leave the inputs and the last run's outputs in the private
	 * directory (named at the end), to look at */
	int keep;
};

/*
 * Collective over comm: measure the envelope of o->target.  Works in a
 * private directory under the target, removed again whatever happens.
 * *out on every rank; complete on rank 0 only (the others hold the points
 * they took part in).
 */
int gfsp_env_measure(MPI_Comm comm, const struct gfsp_env_opts *o,
		    struct gfsp_envelope **out, struct gfsp_error *err);

/* A replay's measured times against the prediction. */
struct gfsp_env_replay {
	struct gfsp_env_shape shape;
	int lockstep;		/* how it ran (gfsp_env_opts) */
	int reps;
	double *seconds;	/* [reps] the whole stage, per repetition */
	struct gfsp_env_stat stage;	/* min, median, max of seconds */
	/* medians over repetitions of the slowest rank's time in each kind of
	 * step (diagnostic: steps of different ranks overlap) */
	double write_s, read_s;
	struct gfsp_env_prediction predicted;
	double error;		/* (predicted - measured median) / measured */
};

/*
 * Collective over comm (C = comm size must be shape->nodes): run the
 * synthetic stage on o->target with o->method's repetitions, and predict
 * it from e.  Inputs are written first (untimed), placed for the local
 * fraction; each task reads its input and the shared input and writes its
 * output.
 */
int gfsp_env_replay(MPI_Comm comm, const struct gfsp_env_opts *o,
		   const struct gfsp_envelope *e,
		   const struct gfsp_env_shape *shape,
		   struct gfsp_env_replay *out, struct gfsp_error *err);
void gfsp_env_replay_free(struct gfsp_env_replay *r);
/* the replay as JSON (the common members of gfsp_json_doc with "mode":
 * "replay", then target, shape, samples, statistics, prediction, error)
 * and as text */
struct json_object *gfsp_env_replay_json(const char *target,
				       const struct gfsp_env_replay *r);
void gfsp_env_replay_print(FILE *out, const char *target,
			   const struct gfsp_env_replay *r);

#endif /* GFSP_ENVELOPE_H */
