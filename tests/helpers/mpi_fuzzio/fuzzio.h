/*
 * fuzzio.h - what the files of mpi_fuzzio (main.c has the program's
 * description) share: the limits, the types of datatypes, jobs and runs,
 * the globals and every function one file calls in another.
 */
#ifndef GFSP_TESTS_FUZZIO_H
#define GFSP_TESTS_FUZZIO_H

#define _GNU_SOURCE
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "mpi4.h"
#include "testutil.h"
#include "rng.h"
#define MAXP		4		/* ranks a job may have */
#define ALIGN		48		/* phase bases: a multiple of every etype */
#define MAX_RUNS	4096		/* runs in the byte map of one type */
#define FT_MAX_EXT	(256 << 10)	/* a filetype's extent */
#define FT_MAX_SIZE	(32 << 10)	/* a filetype's size */
#define ZONE_BYTES	(64 << 10)	/* one rank's stream in a phase */
#define ZONE_SPAN	(512 << 10)	/* bytes of file one rank's view spans */
#define ACC_MAX		(16 << 10)	/* bytes of one access, mostly */
#define MEM_MAX		(1 << 20)	/* bytes of memory one access spans */
#define GAP_BYTE	0xe5		/* write memory gaps: must not reach a file */
#define SENT_BYTE	0x5a		/* read memory: what a read must not touch */

/*
 * Where the bytes of a type (or of an access) lie, in the order MPI moves
 * them: runs of contiguous bytes, adjacent runs merged.  For a type the
 * offsets are relative to the buffer (the type's origin); for an access's
 * file side they are global file offsets, for its memory side addresses.
 */
struct run {
	int64_t off, len;
};

struct runs {
	struct run *r;
	size_t n, cap;
	int64_t size;
	int cap_runs;		/* refuse more than MAX_RUNS runs */
	int over;		/* ... and some were refused */
};

enum ctor {
	C_NAMED, C_CONTIG, C_VECTOR, C_HVECTOR, C_INDEXED, C_HINDEXED,
	C_INDEXED_BLOCK, C_HINDEXED_BLOCK, C_STRUCT, C_SUBARRAY_C, C_SUBARRAY_F,
	C_DARRAY_C, C_DARRAY_F, C_RESIZED, C_DUP, C_NCTOR
};
static const char *const ctor_names[C_NCTOR] __attribute__((unused)) = {
	"named", "contiguous", "vector", "hvector", "indexed", "hindexed",
	"indexed_block", "hindexed_block", "struct", "subarray_c", "subarray_f",
	"darray_c", "darray_f", "resized", "dup",
};

/*
 * A committed type, its byte map (typemap order, offsets from the
 * origin), MPI's lb and extent, and the true bounds of the map.  All the
 * types of a job are on one list, freed with the job.
 */
struct ty {
	MPI_Datatype t;
	int ctor;
	struct runs rs;
	MPI_Aint lb, ext;
	int64_t tlb, tub;
	char *desc;
	struct ty *kid[3];
	int nkid;
	int checked;		/* compared with MPI_Pack */
	int rsz;		/* a resized, subarray or darray inside */
	int neglb;		/* a negative lb inside */
	struct ty *next;
};

enum { ET_BYTE, ET_INT, ET_DOUBLE, ET_INT3, ET_IDI, ET_INTDBL, ET_N };
static const char *const et_names[ET_N] __attribute__((unused)) = { "byte", "int", "double", "int3", "idi", "intdbl" };

struct gen {
	int E;			/* etype size = extent */
	int etk;
	struct ty *et;
	int mem;		/* memory types: any order, negative displacements */
};

enum mkind { M_CONTIG, M_VECTOR, M_HINDEXED_NEG, M_TRUE_LB, M_RESIZED, M_STRUCT,
	     M_NESTED, M_BOTTOM, M_BOTTOM2, M_N };
static const char *const mkind_names[M_N] __attribute__((unused)) = {
	"contig", "vector", "hindexed_neg", "true_lb", "resized", "struct", "nested",
	"bottom", "bottom2",
};

enum { P_AT = 1, P_COLL = 2, P_NB = 4, P_SPLIT = 8, P_LARGE = 16, P_SHARED = 32,
       P_ORDERED = 64, P_N = 128 };
static const int indep_paths[] __attribute__((unused)) = { P_AT, P_AT | P_LARGE, P_AT | P_NB, P_AT | P_NB | P_LARGE,
	0, P_LARGE, P_NB, P_NB | P_LARGE };
static const int indep_nb_paths[] __attribute__((unused)) = { P_AT | P_NB, P_AT | P_NB | P_LARGE, P_NB, P_NB | P_LARGE };
static const int coll_paths[] __attribute__((unused)) = { P_AT | P_COLL, P_AT | P_COLL | P_LARGE, P_AT | P_COLL | P_SPLIT,
	P_AT | P_COLL | P_SPLIT | P_LARGE, P_COLL, P_COLL | P_LARGE, P_COLL | P_SPLIT,
	P_COLL | P_SPLIT | P_LARGE };
static const int coll_nb_paths[] __attribute__((unused)) = { P_AT | P_COLL | P_NB, P_AT | P_COLL | P_NB | P_LARGE,
	P_COLL | P_NB, P_COLL | P_NB | P_LARGE };
static const int shared_paths[] __attribute__((unused)) = { P_SHARED, P_SHARED | P_LARGE, P_SHARED | P_NB,
	P_SHARED | P_NB | P_LARGE };
static const int ordered_paths[] __attribute__((unused)) = { P_ORDERED, P_ORDERED | P_LARGE, P_ORDERED | P_SPLIT,
	P_ORDERED | P_SPLIT | P_LARGE };
#define PICK(a) ((a)[rn((int)(sizeof(a) / sizeof((a)[0])))])

enum { K_ZONE, K_INTERLEAVE, K_PARTITION, K_SHARED, K_N };
static const char *const kind_names[K_N] __attribute__((unused)) = { "zone", "interleave", "partition", "shared" };

enum { ST_INDEP, ST_INDEP_NB, ST_COLL, ST_COLL_NB, ST_ORDERED, ST_SHARED, ST_SEEKSH,
       ST_UNSYNC };
static const char *const st_names[] __attribute__((unused)) = { "independent", "independent nonblocking batch",
	"collective", "collective nonblocking batch", "ordered",
	"shared (one rank after the other)", "seek_shared(0)",
	"collective read of other ranks' bytes without sync" };
/* the collective reads without sync of a shared phase: explicit offsets,
 * the shared pointer stays */
static const int unsync_at_paths[] __attribute__((unused)) = { P_AT | P_COLL, P_AT | P_COLL | P_LARGE,
	P_AT | P_COLL | P_SPLIT, P_AT | P_COLL | P_NB, P_AT | P_COLL | P_NB | P_LARGE };

/* more handles on the path, open during a phase: a mask */
enum { AL_NONE, AL_SELF = 1, AL_DUP = 2 };
static const char *const alias_names[] __attribute__((unused)) = { "none", "MPI_COMM_SELF", "MPI_Comm_dup",
	"MPI_COMM_SELF and on MPI_Comm_dup" };
/* before a phase: the file closed and opened again, or removed and created */
enum { RO_NONE, RO_REOPEN, RO_RECREATE };
enum { RM_DELETE, RM_UNLINK, RM_REMOVE };
static const char *const rm_names[] __attribute__((unused)) = { "MPI_File_delete", "unlink", "remove" };

enum { SEEK_NONE, SEEK_SET_, SEEK_CUR_ };

struct view {
	int64_t disp;
	struct ty *ft;
	int64_t usable;		/* stream bytes the job may use */
	int64_t *pre;		/* pre[i]: stream bytes before run i of a tile */
	char *how;		/* how it was made (kind variant) */
};

struct acc {
	int rank, step, idx, path, rd, mkind;
	int h;			/* AL_SELF, AL_DUP: through that alias, 0: the first */
	int vr;			/* through the view of rank vr (-1: its own) */
	int seek;		/* individual pointer: how the call gets to soff */
	int64_t seekarg;	/* in etypes */
	int64_t soff;		/* stream offset in bytes (a whole etype) */
	int64_t count, bytes;
	int64_t pos_after;	/* the individual pointer after, -1: unknown */
	int64_t want;		/* reads: bytes MPI must deliver (end of file) */
	struct ty *m;
	struct runs g;		/* the file bytes, in stream order */
	unsigned char *expect;	/* reads, own rank: the model's bytes */
};

struct step {
	int type, rd;
	int order[MAXP];	/* ST_SHARED: the ranks' turns */
	int64_t sp_after;	/* shared pointer after the step (etypes), -1: unknown */
	int h;			/* collective steps: AL_DUP: through the dup alias */
	int sep;		/* ST_UNSYNC: 0 barrier then set_view, 1 the reverse,
				 * 2 (--full) no barrier */
};

struct phase {
	int kind, etk, E;
	int64_t base;
	struct ty *et;
	struct view v[MAXP];
	struct step st[16];
	int nst;
	struct acc *a;
	int na, cap;
	int nidx[MAXP];		/* accesses per rank: the data index */
	int64_t overlap;	/* bytes rewritten that another rank wrote before */
	int64_t pos[MAXP];	/* generation: individual pointers (etypes, -1 unknown) */
	int amode;		/* of the handle in this phase */
	int reopen, rmhow;	/* RO_*, RM_*: what happens to the file before */
	int alias;		/* AL_* mask: more handles on the path */
	int dispcur;		/* set_view with MPI_DISPLACEMENT_CURRENT (disp: base) */
	int badcur;		/* not sequential: MPI_DISPLACEMENT_CURRENT tried first,
				 * MPI_ERR_ARG expected */
	int vshift;		/* ST_UNSYNC: rank r reads through rank r+vshift's view */
};

/*
 * The model: the file MPI defines.  stamp[g] = (phase + 1) << 3 | rank of
 * the last write of byte g, 0 if none: a write of another rank in the same
 * phase is a tester bug, in an earlier phase an overlap.
 */
struct model {
	unsigned char *img;
	uint32_t *stamp;
	int64_t size, cap;
};

struct job {
	uint64_t seed;
	int nprocs, rd, amode;
	int seq;		/* MPI_MODE_SEQUENTIAL: shared phases only */
	struct phase ph[8];
	int nph;
	struct model m;		/* read jobs: the write job's */
};

/* one access's memory at run time */
struct io {
	unsigned char *buf[2];
	size_t len[2];
	void *arg;		/* the buffer argument: MPI_BOTTOM or base */
	MPI_Datatype t;		/* the type and count of the call */
	MPI_Count count;
	int own_t;		/* t is the MPI_BOTTOM wrapper */
	struct runs mr;		/* the stream's bytes in memory (addresses) */
	MPI_Request req;
	MPI_Status st;
	int posted, rc;
};

struct run_ctx {
	struct job *j;
	const char *file;
	MPI_File fh;
	MPI_File al[3];		/* al[AL_SELF], al[AL_DUP]: more handles on the path */
	int alias_kind;		/* AL_* mask: those open */
	MPI_Comm dupc;		/* AL_DUP: its communicator */
	FILE *dump;
	int bad;		/* data or status wrong: the job fails, it goes on */
	int nbad;		/* wrong bytes reported */
};

/* the command line: what to run and how */
struct opts {
	enum { MODE_WRITE, MODE_READ, MODE_DESCRIBE, MODE_PROBE } mode;
	uint64_t seed;
	int cases;
	int writers;		/* read: the write job's ranks */
	int nprocs;		/* describe: the job's ranks */
	int overlap;		/* --overlap-epochs */
	int full;		/* --full: also what ROMIO 4.0.2 gets wrong */
	int nobottom;		/* --no-bottom: no MPI_BOTTOM memory types */
	int noalias;		/* --no-alias: no more handles on the path */
	int nounsync;		/* --no-unsync-read: no reads of other ranks'
				 * bytes without MPI_File_sync */
	int norecreate;		/* --no-recreate: the file stays open */
	int nodispcur;		/* --no-dispcur: no MPI_MODE_SEQUENTIAL jobs */
	int describe, quiet, trace;
	int64_t at;		/* describe --at, -1: none */
	const char *file, *model, *dump;
	char cmdline[1024];	/* the options to repeat in a reproduce line */
};

/* what the jobs run so far have covered (the coverage line) */
struct coverage {
	long fctor[C_NCTOR], mctor[C_NCTOR], path[2][P_N], kind[K_N], mkind[M_N], et[ET_N];
	long jobs, failed, phases, accesses, bytes, overlaps;
	long alias[3], reopen[3], rm[3], dispcur, badcur, seq, unsync;
};

extern int me, np;			/* MPI_COMM_WORLD */
extern const char *prog;
extern struct opts o;
extern struct coverage cov;
extern uint64_t cur_seed;		/* the job running, for messages */
extern int tester_bug;			/* this job found a bug of its own */
extern struct ty *pool;

void oom(void) __attribute__((noreturn));
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
int64_t roundup(int64_t x, int64_t a);
int64_t imin(int64_t a, int64_t b);
int64_t imax(int64_t a, int64_t b);
uint64_t mix(uint64_t a, uint64_t b);
uint64_t acc_key(uint64_t seed, int phase, int rank, int idx);
unsigned char dbyte(uint64_t key, int64_t k);
int rn(int n);
int chance(int percent);
void shuffle(int *v, int n);
void set_cur_seed(uint64_t seed);
void bug(const char *f, ...) __attribute__((format(printf, 1, 2)));
void runs_add(struct runs *rs, int64_t off, int64_t len);
void runs_shift(struct runs *dst, const struct runs *src, int64_t shift);
void runs_free(struct runs *rs);
int run_cmp(const void *a, const void *b);
int runs_disjoint(const struct runs *rs);
void pool_free(void);
struct ty *adopt(int rc, MPI_Datatype t, int ctor, struct runs *rs, char *desc, struct ty *const *kids, int nkids);
struct ty *named(MPI_Datatype t, const char *name, int size);
char *blocks_desc(int n, const int *bl, const MPI_Aint *d, int onebl);
struct ty *mk_contig(int n, struct ty *c);
struct ty *mk_vector(int n, int bl, int64_t stride, int h, struct ty *c);
struct ty *mk_indexed(int n, const int *bl, const MPI_Aint *d, int h, int block, struct ty *c);
struct ty *mk_struct(int n, const int *bl, const MPI_Aint *d, struct ty *const *c);
void grid_runs(struct runs *rs, int nd, const int *gs, int *const *idx, const int *n, int order, const struct ty *c);
char *dims_desc(int nd, const int *v);
struct ty *mk_subarray(int nd, const int *gs, const int *sub, const int *st, int order, struct ty *c);
int dist_indices(int g, int dist, int darg, int p, int c, int *idx);
int darray_lists(int rank, int nd, const int *gs, const int *dist, const int *darg, const int *ps, int lists[3][64], int *n);
const char *dist_name(int dist, int darg, char *buf, size_t len);
struct ty *mk_darray(int size, int rank, int nd, const int *gs, const int *dist, const int *darg, const int *ps, int order, struct ty *c);
struct ty *mk_resized(struct ty *c, int64_t lb, int64_t ext);
struct ty *mk_dup(struct ty *c);
void ty_check(struct ty *y);
struct ty *mk_intdbl_padded(void);
struct ty *mk_etype(int k);
int file_ok(const struct ty *y, int E);
int mem_ok(const struct ty *y);
int ty_ok(const struct gen *g, const struct ty *y);
int lb_ok(const struct ty *c);
struct ty *leaf(const struct gen *g);
void place(const struct gen *g, int n, const int64_t *span, const int64_t *tlb, MPI_Aint *d, int hb);
int64_t bspan(int bl, const struct ty *c);
int child_ok(int ctor, const struct ty *c);
int empty_ok(void);
struct ty *gen_ctor(const struct gen *g, int ctor, int depth, int hb);
struct ty *gen_type(const struct gen *g, int depth);
struct ty *gen_mem(const struct gen *g, int kind);
const char *path_name(int path, int rd);
const struct view *acc_view(const struct phase *ph, const struct acc *a);
void model_reserve(struct model *m, int64_t end);
void view_prepare(struct view *v);
void view_map(const struct view *v, int64_t s, int64_t n, struct runs *out);
int64_t view_global(const struct view *v, int64_t s);
int64_t view_below(const struct view *v, int64_t size);
void phase_free(struct phase *ph);
void job_free(struct job *j, int keep_model);
struct acc *new_acc(struct phase *ph);
struct ty *pick_mem(const struct gen *gm, int *kind);
int64_t mem_fit(const struct ty *m, int64_t n);
struct acc *gen_access(struct phase *ph, const struct gen *gm, int r, int s, int path, int rd, int64_t lim, int64_t below, const struct runs *busy, int h);
int64_t pick_tiles(const struct ty *ft);
void gen_views(struct job *j, struct phase *ph, const struct gen *gf);
int64_t read_lim(const struct job *j, const struct view *v, int eof_ok, int64_t below);
int pick_h(const struct phase *ph, int draw);
void gen_steps(struct job *j, struct phase *ph, const struct gen *gm);
int read_part(struct phase *ph, const struct gen *gm, int r, int wr, int s, int path, int wn);
void gen_unsync(struct job *j, struct phase *ph, const struct gen *gm);
void gen_shared_steps(struct job *j, struct phase *ph, const struct gen *gm);
int phase_model(struct job *j, int p, int apply);
void expect_reads(struct job *j, struct phase *ph);
void new_phase(struct job *j, int p, int fresh);
void gen_job(struct job *j, uint64_t seed, int nprocs, int rd);
void describe_acc(FILE *f, const struct phase *ph, const struct acc *a, const char *pfx);
void describe_view(FILE *f, const struct phase *ph, int r, const char *pfx);
void describe_job(FILE *f, const struct job *j, int full, const char *pfx);
void describe_at(FILE *f, const struct job *j, int64_t g);
void cov_ty(long int *tbl, const struct ty *y);
void cov_print(const char *mode);
void copies(struct runs *r, const struct ty *m, int64_t count, intptr_t base);
void span_of(const struct ty *m, int64_t count, int64_t *lo, int64_t *hi);
int io_prepare(const struct job *j, int p, const struct acc *a, struct io *io);
void io_free(struct io *io);
int call(MPI_File fh, int path, int rd, MPI_Offset off, void *b, MPI_Count c, MPI_Datatype t, MPI_Status *st, MPI_Request *rq, const char **half);
void dump_read(struct run_ctx *x, int p, const struct acc *a, const struct io *io, int64_t got);
void verify_read(struct run_ctx *x, int p, const struct acc *a, const struct io *io, int64_t got);
void finish(struct run_ctx *x, int p, const struct acc *a, struct io *io);
MPI_File acc_fh(const struct run_ctx *x, const struct acc *a);
int check_pos(struct run_ctx *x, int p, const struct acc *a);
int run_accs(struct run_ctx *x, int p, struct acc **v, int n, int batch, int coll);
int run_step(struct run_ctx *x, int p, int s, int *pend);
int open_file(struct run_ctx *x, MPI_Comm comm, int amode, MPI_File *fh);
int close_alias(struct run_ctx *x, int mask);
int open_alias(struct run_ctx *x, const struct phase *ph);
int sync_all(struct run_ctx *x);
int reopen(struct run_ctx *x, const struct phase *ph);
int set_view(MPI_File fh, const struct phase *ph, const struct view *v, const char *what);
int run_phase(struct run_ctx *x, int p);
char *subst(const char *pat, uint64_t seed);
int write_model(const struct job *j, const char *path);
void report_failure(const struct job *j, const char *file, const char *argv0);
int run_job(uint64_t seed, const char *argv0);
int describe(void);
int probe_one(const struct ty *m, int64_t count, int bottom, const char *file);
int probe(void);
int usage(const char *msg);
int num(const char *s, long long int lo, long long int hi, long long int *v);
int options(int argc, char **argv);

#endif /* GFSP_TESTS_FUZZIO_H */
