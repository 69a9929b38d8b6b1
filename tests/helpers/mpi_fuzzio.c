/*
 * mpi_fuzzio - helper of tests/cmd/mpiio_diff.sh; not a test by itself.
 * A seeded, randomized differential tester of MPI-IO in plain MPI (no
 * gfsplit code), so one binary runs on MPICH alone and under the PMPI
 * preload lib/libgfsplit-mpiio.so, and the script compares the two.
 *
 *   mpiexec -n N mpi_fuzzio write SEED FILE [--cases=K] [--model=PATH]
 *   mpiexec -n M mpi_fuzzio read SEED FILE --writers=N [--cases=K] [--dump=PATH]
 *   mpi_fuzzio describe SEED --nprocs=N [--writers=W] [--at=OFFSET] [--model=PATH]
 *   mpi_fuzzio probe SEED [--cases=K] [FILE]
 *
 * Job options (a read job must get those of the write job it reads):
 *   --no-overlap-epochs  no phase rewrites bytes another rank wrote in an
 *                        earlier phase (by default they do: MPI says the
 *                        later write wins)
 *   --full               everything MPI allows, also what MPICH 4.0.2's
 *                        ROMIO gets wrong (below): plain MPICH is then no
 *                        reference, compare with the model
 *   --no-bottom          no MPI_BOTTOM memory types (the same draws)
 *   --no-alias           no more handles on the path (below)
 *   --no-unsync-read     no collective reads of other ranks' bytes
 *                        without MPI_File_sync
 *   --no-recreate        the file stays open from the first phase to
 *                        the last: never closed and opened again, never
 *                        removed and created again
 *   --no-dispcur         no MPI_MODE_SEQUENTIAL jobs (the only ones that
 *                        set views at MPI_DISPLACEMENT_CURRENT)
 * The four --no-X draw what they would have drawn and drop it, so a job
 * stays much the same job without the feature.
 * and --describe (print every job), --trace (each call before it is
 * made), --quiet (no coverage line).  With --cases=K the program runs the
 * jobs SEED, SEED+1, ... one after the other, a file each: an '@' in FILE,
 * --model and --dump stands for the seed.  A dump is a file per rank:
 * PATH.RANK.
 *
 * A job follows from (SEED, the rank count, the options) alone, the same
 * on every rank:
 *
 *   job     1-4 phases.  A phase is one MPI_File_set_view on every rank,
 *           then steps of accesses; between phases MPI_File_sync,
 *           MPI_Barrier, MPI_File_sync (MPI 4.1, 14.6.1).
 *   view    disp (a multiple of the etype size, sometimes 0, sometimes
 *           large), etype (byte, int, double, int3 = contiguous(3, int),
 *           idi = struct {int at 0, double at 4, int at 12}: 16 bytes, no
 *           gap; with --full also intdbl = struct {int, double at 4}
 *           resized to 12), filetype from every constructor (contiguous,
 *           vector, hvector, indexed, hindexed, indexed_block,
 *           hindexed_block, struct, subarray C and Fortran, darray C and
 *           Fortran, resized, dup), nested up to three deep, built from
 *           whole etypes; hindexed types start at 136 now and then, as
 *           HDF5's do
 *   kinds   how the ranks of a phase never write the same byte:
 *           zone        each rank its own filetype in its own byte range
 *           interleave  one block type B resized to e; rank r's filetype
 *                       puts B at r*e in an extent of N*e (or the disp
 *                       moves by r*e): tiles shared, bytes never
 *           partition   darray or subarray (C or Fortran order) of one
 *                       global array over the N ranks
 *           shared      one view on all ranks; write_ordered, or
 *                       write_shared one rank after the other (a token)
 *   steps   independent calls (explicit offset, or MPI_File_seek and the
 *           individual pointer), the same nonblocking and posted together
 *           before MPI_Waitall (disjoint bytes), collective (blocking,
 *           split _begin/_end, nonblocking), ordered, shared; every family
 *           also in its MPI-4 _c form.  Every rank makes every collective
 *           call; a rank with nothing to move passes count 0.
 *   memory  each access its own memory type: contiguous, vector with
 *           gaps, hindexed with negative displacements, a true lb past 0,
 *           resized, struct, nested, MPI_BOTTOM with absolute addresses
 *           (MPI_Get_address; one buffer, or a struct of two)
 *   data    byte k of a write is a hash of (seed, phase, rank, access, k);
 *           a rank may rewrite its own bytes in a phase
 *   reads   in RDWR jobs a phase may read back what the rank wrote in it,
 *           through its own view (its own writes are defined at once);
 *           after write_ordered, seek_shared(0) and read_ordered
 *   unsync  at the end of a phase of an RDWR job (2+ ranks), without
 *           MPI_File_sync: MPI_Barrier, then every rank reads a part of
 *           what rank r+k (mod N) wrote in the phase with one collective
 *           read (read_at_all, read_all, split, nonblocking, _c); a shared
 *           phase at explicit offsets of its one view, any other after
 *           MPI_File_set_view to rank r+k's view (before or after the
 *           barrier).  MPI leaves these bytes undefined; MPICH on a local
 *           file system returns them (its writes are pwrite()s by then) and
 *           programs rely on it (PnetCDF), so they are checked as defined.
 *           With --full also without the barrier: the collective calls on
 *           the handle alone separate write and read (the library's
 *           promise; ROMIO's collective calls without collective
 *           buffering do not synchronize, so MPICH may return old bytes)
 *   alias   a phase that is not shared may have more handles on the
 *           path: every rank opens it again on MPI_COMM_SELF, RDWR
 *           without CREATE (as PnetCDF's independent mode), or the job
 *           opens it on an MPI_Comm_dup of its communicator (its amode
 *           without CREATE), or both, the first handle staying open.  An
 *           alias gets the rank's view too; independent calls go through
 *           any handle (each its own), a collective step through the dup
 *           alias goes all through it.  An alias may stay open into the
 *           next phase; it is always closed before the first handle (the
 *           library's aliases fail once the first is closed), and
 *           sync-barrier-sync between phases syncs every open handle.  No
 *           individual pointer is checked in such a phase
 *   reopen  before a phase (not the first): the file closed (aliases
 *           first) and opened again without CREATE, the model going on;
 *           or closed, removed by rank 0 (MPI_File_delete, unlink() or
 *           remove()), MPI_Barrier, and created again with
 *           CREATE|EXCL|RDWR, the model starting from nothing
 *   seq     a job may open MPI_MODE_SEQUENTIAL (WRONLY: MPI forbids it
 *           with RDWR): shared phases only, no read-backs, no
 *           get_position_shared or seek_shared (not allowed there), and
 *           every view set at MPI_DISPLACEMENT_CURRENT, so the
 *           displacement is the byte of the shared pointer through the
 *           view before (0 after an open); MPI_File_get_view must say
 *           that byte.  MPICH 4.0.2 does this as the model (displacements
 *           not a multiple of the new etype too).  A phase of a job not
 *           opened sequentially may try MPI_DISPLACEMENT_CURRENT first:
 *           the error class must be MPI_ERR_ARG, and the handle goes on
 *
 * Every rank also builds the model: the file MPI defines for the job.
 * Write mode checks every read-back against it and, with --model, rank 0
 * writes it to PATH.  Read mode rebuilds the model of the write job
 * (SEED, --writers) and runs a job of its own (another random stream,
 * another rank count) of reads through random views, every path, memory
 * types and all; each rank checks every byte it reads against the model
 * and, with --dump, writes what it read and where it lies in the file
 * (text: a header line per read, then "OFFSET HEX" lines), so the script
 * can cmp the dumps of MPICH and of the preload.  describe prints a job
 * without running it (one process, no I/O); --at=OFFSET says which
 * accesses wrote (or read) the byte at OFFSET and what the model holds
 * there.  probe runs K random memory types (one process) through the
 * MPI library's own write_at, write_at_all, read_at and read_at_all,
 * against their byte maps, and prints those it gets wrong.
 *
 * The generator knows the byte map of every type it builds (runs of
 * bytes in typemap order) and checks it against MPI_Pack; a filetype is
 * kept only if it is valid for a view: whole etypes, displacements
 * non-negative and increasing, no byte twice in a tile, tiles that do not
 * overlap, holes a multiple of the etype.  A map that disagrees with MPI,
 * or two ranks of one phase on one byte, is a "tester bug".
 *
 * MPICH 4.0.2's ROMIO gets these wrong (probe, and small programs, show
 * each); unless --full the jobs keep clear of them:
 *   - a resized type with another lb: data shifted by lb, or a crash
 *   - indexed and hindexed of a type with a resized inside (subarray and
 *     darray are resized types): wrong bytes, memory and file side
 *   - empty blocks (blocklength 0) below the others: data shifted
 *   - a memory type whose data is one run below its origin (negative
 *     true lb): read and written from the origin
 *   - filetypes with a negative lb inside, data past the extent, or
 *     blocks whose extents overlap (hvector(3,1,64,subarray of extent
 *     480)): data in the holes or shifted, pointers off
 *   - a resized etype (struct {int, double} resized to 12): seek and
 *     get_byte_offset wrong
 *   - the individual pointer after some writes through views (one or a
 *     few etypes short): every access seeks (SEEK_SET) first, no pointer
 *     checks
 *   - the status of an ordered write of one element of an empty type:
 *     left as it was (count 0 is passed instead)
 *   - the status of a strided read past the end of the file counts too
 *     much: reads stay before the end
 *   - data sieving and collective buffering write garbage into the
 *     holes of a new file, and the two-phase read aborts in
 *     ADIOI_Calc_aggregator() under some views: the jobs open with the
 *     hints romio_ds_write, romio_cb_write and romio_cb_read "disable"
 * MPICH's MPI_Pack and MPI_Unpack refuse MPI_BOTTOM ("Null pointer in
 * parameter inbuf"); ROMIO handles MPI_BOTTOM itself.
 *
 * Checked on the fly: every status (bytes moved, MPI_Get_count), the
 * individual (--full) and shared pointers after the calls that move them,
 * the bytes of every read and that no read touches a gap of its memory
 * type, MPI_File_get_size in read mode.  Errors never abort and never
 * hang: an MPI error prints "mpi_fuzzio: rank R: seed S: CALL: message",
 * a failed rank makes no more independent calls and the ranks agree before
 * any further collective, the job stops, the file is closed.  A failed job
 * prints "mpi_fuzzio: seed S: FAILED ..." with the command that reproduces
 * it and a summary of the job; the next job runs.  At the end rank 0
 * prints "mpi_fuzzio: MODE: K jobs, F failed" and a line of coverage
 * counts ("mpi_fuzzio: coverage: key=count ...").  Exit 0, 1 if any job
 * failed, 2 on a usage error.
 */
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

static int me, np;			/* MPI_COMM_WORLD */
static const char *prog = "mpi_fuzzio";

static struct {
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
} o = { .cases = 1, .at = -1, .overlap = 1 };

/* ---- small helpers ------------------------------------------------------ */

static void __attribute__((noreturn))
oom(void)
{
	fprintf(stderr, "%s: rank %d: out of memory\n", prog, me);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

static void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom();
	return p;
}

static void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

static char * __attribute__((format(printf, 1, 2)))
fmt(const char *f, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, f);
	n = vasprintf(&s, f, ap);
	va_end(ap);
	if (n < 0)
		oom();
	return s;
}

static int64_t
roundup(int64_t x, int64_t a)
{
	return (x + a - 1) / a * a;
}

static int64_t
imin(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t
imax(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* splitmix64 of a combined with b: seeds of sub-streams, data bytes */
static uint64_t
mix(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ (b * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull);

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* the data of one write access: byte k of its stream */
static uint64_t
acc_key(uint64_t seed, int phase, int rank, int idx)
{
	return mix(mix(seed, 0x64617461 + phase), (uint64_t)rank << 20 | (uint64_t)idx);
}

static unsigned char
dbyte(uint64_t key, int64_t k)
{
	return (unsigned char)(mix(key, (uint64_t)k) >> 24);
}

/* random helpers over rng.h's one stream: every rank draws the same */
static int
rn(int n)
{
	return (int)rnd((uint64_t)(n > 0 ? n : 0));
}

static int
chance(int percent)
{
	return rn(100) < percent;
}

static void
shuffle(int *v, int n)
{
	int i;

	for (i = n - 1; i > 0; i--) {
		int k = rn(i + 1), t = v[i];

		v[i] = v[k];
		v[k] = t;
	}
}

/* ---- errors -------------------------------------------------------------- */

static uint64_t cur_seed;		/* the job running, for messages */
static int tester_bug;			/* this job found a bug of its own */

/* the job running is seed's: every message names it (fail()'s context) */
static void
set_cur_seed(uint64_t seed)
{
	cur_seed = seed;
	snprintf(test_context, sizeof(test_context), "seed %" PRIu64, seed);
}

static void __attribute__((format(printf, 1, 2)))
bug(const char *f, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, f);
	vsnprintf(msg, sizeof(msg), f, ap);
	va_end(ap);
	if (tester_bug++ < 3)
		fail("tester bug: %s", msg);
}

/* ---- byte maps ------------------------------------------------------------ */

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

static void
runs_add(struct runs *rs, int64_t off, int64_t len)
{
	if (len <= 0 || rs->over)
		return;
	rs->size += len;
	if (rs->n && rs->r[rs->n - 1].off + rs->r[rs->n - 1].len == off) {
		rs->r[rs->n - 1].len += len;
		return;
	}
	if (rs->cap_runs && rs->n >= MAX_RUNS) {
		rs->over = 1;
		return;
	}
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? 2 * rs->cap : 8;
		rs->r = xrealloc(rs->r, rs->cap * sizeof(*rs->r));
	}
	rs->r[rs->n].off = off;
	rs->r[rs->n].len = len;
	rs->n++;
}

static void
runs_shift(struct runs *dst, const struct runs *src, int64_t shift)
{
	size_t i;

	for (i = 0; i < src->n && !dst->over; i++)
		runs_add(dst, src->r[i].off + shift, src->r[i].len);
}

static void
runs_free(struct runs *rs)
{
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}

static int
run_cmp(const void *a, const void *b)
{
	const struct run *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* no byte twice */
static int
runs_disjoint(const struct runs *rs)
{
	struct run *s;
	size_t i;
	int ok = 1;

	if (rs->n < 2)
		return 1;
	s = xmalloc(rs->n * sizeof(*s));
	memcpy(s, rs->r, rs->n * sizeof(*s));
	qsort(s, rs->n, sizeof(*s), run_cmp);
	for (i = 1; i < rs->n && ok; i++)
		ok = s[i].off >= s[i - 1].off + s[i - 1].len;
	free(s);
	return ok;
}

/* ---- datatypes with their byte maps ---------------------------------------- */

enum ctor {
	C_NAMED, C_CONTIG, C_VECTOR, C_HVECTOR, C_INDEXED, C_HINDEXED,
	C_INDEXED_BLOCK, C_HINDEXED_BLOCK, C_STRUCT, C_SUBARRAY_C, C_SUBARRAY_F,
	C_DARRAY_C, C_DARRAY_F, C_RESIZED, C_DUP, C_NCTOR
};
static const char *const ctor_names[C_NCTOR] = {
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

static struct ty *pool;

static void
pool_free(void)
{
	while (pool) {
		struct ty *y = pool;

		pool = y->next;
		if (y->ctor != C_NAMED)
			MPI_Type_free(&y->t);
		runs_free(&y->rs);
		free(y->desc);
		free(y);
	}
}

/*
 * Take the type a constructor just returned (rc) with the byte map rs
 * and the description desc (both taken over); NULL when MPI refused it or
 * the map grew too big, which the generator takes as "try another".
 */
static struct ty *
adopt(int rc, MPI_Datatype t, int ctor, struct runs *rs, char *desc,
      struct ty *const *kids, int nkids)
{
	struct ty *y;
	MPI_Count size = -1;
	size_t i;
	int k;

	if (rc != MPI_SUCCESS || rs->over || rs->size > 64 << 20) {
		if (rc == MPI_SUCCESS)
			MPI_Type_free(&t);
		runs_free(rs);
		free(desc);
		return NULL;
	}
	if (MPI_Type_commit(&t) != MPI_SUCCESS) {
		MPI_Type_free(&t);
		runs_free(rs);
		free(desc);
		return NULL;
	}
	y = xmalloc(sizeof(*y));
	memset(y, 0, sizeof(*y));
	y->t = t;
	y->ctor = ctor;
	y->rs = *rs;
	y->desc = desc;
	for (k = 0; k < nkids && k < 3; k++) {
		y->kid[y->nkid++] = kids[k];
		y->rsz |= kids[k]->rsz;
		y->neglb |= kids[k]->neglb;
	}
	y->rsz |= ctor == C_RESIZED || ctor == C_SUBARRAY_C || ctor == C_SUBARRAY_F ||
		  ctor == C_DARRAY_C || ctor == C_DARRAY_F;
	MPI_Type_get_extent(t, &y->lb, &y->ext);
	y->neglb |= y->lb < 0;
	MPI_Type_size_x(t, &size);
	if (y->rs.n) {
		y->tlb = INT64_MAX;
		y->tub = INT64_MIN;
	}
	for (i = 0; i < y->rs.n; i++) {
		y->tlb = imin(y->tlb, y->rs.r[i].off);
		y->tub = imax(y->tub, y->rs.r[i].off + y->rs.r[i].len);
	}
	y->next = pool;
	pool = y;
	if (size != y->rs.size)
		bug("type %s: MPI says %lld bytes, the byte map %lld", desc,
		    (long long)size, (long long)y->rs.size);
	return y;
}

static struct ty *
named(MPI_Datatype t, const char *name, int size)
{
	struct ty *y = xmalloc(sizeof(*y));

	memset(y, 0, sizeof(*y));
	y->t = t;
	y->ctor = C_NAMED;
	runs_add(&y->rs, 0, size);
	y->ext = size;
	y->tub = size;
	y->desc = fmt("%s", name);
	y->next = pool;
	pool = y;
	return y;
}

/* "[2@0,1@24,...]": the blocks of an indexed type, shortened */
static char *
blocks_desc(int n, const int *bl, const MPI_Aint *d, int onebl)
{
	char buf[256];
	size_t len = 0;
	int i;

	buf[len++] = '[';
	for (i = 0; i < n && len < sizeof(buf) - 40; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d@%ld",
					i ? "," : "", onebl ? bl[0] : bl[i], (long)d[i]);
	if (i < n)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, ",...");
	snprintf(buf + len, sizeof(buf) - len, "]");
	return fmt("%s", buf);
}

static struct ty *
mk_contig(int n, struct ty *c)
{
	struct runs rs = { .cap_runs = 1 };
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int i, rc = MPI_Type_contiguous(n, c->t, &t);

	for (i = 0; i < n; i++)
		runs_shift(&rs, &c->rs, (int64_t)i * c->ext);
	return adopt(rc, t, C_CONTIG, &rs, fmt("contig(%d,%s)", n, c->desc), &c, 1);
}

/* vector and hvector: stride in extents of c, or in bytes (h) */
static struct ty *
mk_vector(int n, int bl, int64_t stride, int h, struct ty *c)
{
	struct runs rs = { .cap_runs = 1 };
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int64_t bstride = h ? stride : stride * c->ext;
	int i, j, rc;

	rc = h ? MPI_Type_create_hvector(n, bl, (MPI_Aint)stride, c->t, &t)
	       : MPI_Type_vector(n, bl, (int)stride, c->t, &t);
	for (i = 0; i < n; i++)
		for (j = 0; j < bl; j++)
			runs_shift(&rs, &c->rs, i * bstride + (int64_t)j * c->ext);
	return adopt(rc, t, h ? C_HVECTOR : C_VECTOR, &rs,
		     fmt("%s(%d,%d,%lld,%s)", h ? "hvector" : "vector", n, bl,
			 (long long)stride, c->desc), &c, 1);
}

/*
 * indexed, hindexed and their _block forms: block i of bl[i] (or bl[0])
 * copies of c at d[i], in extents of c or in bytes (h)
 */
static struct ty *
mk_indexed(int n, const int *bl, const MPI_Aint *d, int h, int block, struct ty *c)
{
	struct runs rs = { .cap_runs = 1 };
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int id[16], i, j, rc, ctor;

	for (i = 0; i < n; i++)
		id[i] = (int)d[i];
	if (block)
		rc = h ? MPI_Type_create_hindexed_block(n, bl[0], d, c->t, &t)
		       : MPI_Type_create_indexed_block(n, bl[0], id, c->t, &t);
	else
		rc = h ? MPI_Type_create_hindexed(n, bl, d, c->t, &t)
		       : MPI_Type_indexed(n, bl, id, c->t, &t);
	for (i = 0; i < n; i++)
		for (j = 0; j < (block ? bl[0] : bl[i]); j++)
			runs_shift(&rs, &c->rs, (h ? d[i] : d[i] * c->ext) +
				   (int64_t)j * c->ext);
	ctor = block ? (h ? C_HINDEXED_BLOCK : C_INDEXED_BLOCK) : (h ? C_HINDEXED : C_INDEXED);
	{
		char *b = blocks_desc(n, bl, d, block);
		struct ty *y = adopt(rc, t, ctor, &rs, fmt("%s(%d,%s,%s)",
				     ctor_names[ctor], n, b, c->desc), &c, 1);

		free(b);
		return y;
	}
}

static struct ty *
mk_struct(int n, const int *bl, const MPI_Aint *d, struct ty *const *c)
{
	struct runs rs = { .cap_runs = 1 };
	MPI_Datatype t = MPI_DATATYPE_NULL, ts[3];
	char *desc = fmt("struct(%d,[", n), *s;
	int i, j, rc;

	for (i = 0; i < n; i++) {
		ts[i] = c[i]->t;
		for (j = 0; j < bl[i]; j++)
			runs_shift(&rs, &c[i]->rs, d[i] + (int64_t)j * c[i]->ext);
		s = fmt("%s%s%d@%ld %s", desc, i ? "," : "", bl[i], (long)d[i], c[i]->desc);
		free(desc);
		desc = s;
	}
	rc = MPI_Type_create_struct(n, bl, d, ts, &t);
	s = fmt("%s])", desc);
	free(desc);
	return adopt(rc, t, C_STRUCT, &rs, s, c, n);
}

/*
 * The elements of a gs[0] x ... array of c that the index lists idx[d]
 * (n[d] each, ascending) select, in the order of the array in memory:
 * C (dim 0 slowest) or Fortran (dim 0 fastest); subarray and darray both.
 */
static void
grid_runs(struct runs *rs, int nd, const int *gs, int *const *idx, const int *n,
	  int order, const struct ty *c)
{
	int64_t stride[3];
	int k[3] = { 0, 0, 0 }, d;

	for (d = 0; d < nd; d++)
		if (n[d] == 0)
			return;
	if (order == MPI_ORDER_C) {
		stride[nd - 1] = 1;
		for (d = nd - 2; d >= 0; d--)
			stride[d] = stride[d + 1] * gs[d + 1];
	} else {
		stride[0] = 1;
		for (d = 1; d < nd; d++)
			stride[d] = stride[d - 1] * gs[d - 1];
	}
	for (;;) {
		int64_t lin = 0;

		for (d = 0; d < nd; d++)
			lin += idx[d][k[d]] * stride[d];
		runs_shift(rs, &c->rs, lin * c->ext);
		if (rs->over)
			return;
		/* the fastest dimension first */
		for (d = order == MPI_ORDER_C ? nd - 1 : 0;
		     order == MPI_ORDER_C ? d >= 0 : d < nd;
		     d += order == MPI_ORDER_C ? -1 : 1) {
			if (++k[d] < n[d])
				break;
			k[d] = 0;
		}
		if (order == MPI_ORDER_C ? d < 0 : d >= nd)
			return;
	}
}

static char *
dims_desc(int nd, const int *v)
{
	return nd == 1 ? fmt("%d", v[0]) : nd == 2 ? fmt("%dx%d", v[0], v[1])
					 : fmt("%dx%dx%d", v[0], v[1], v[2]);
}

static struct ty *
mk_subarray(int nd, const int *gs, const int *sub, const int *st, int order, struct ty *c)
{
	struct runs rs = { .cap_runs = 1 };
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int lists[3][64], *idx[3] = { lists[0], lists[1], lists[2] }, d, i;
	char *a, *b, *s;
	struct ty *y;
	int rc = MPI_Type_create_subarray(nd, gs, sub, st, order, c->t, &t);

	for (d = 0; d < nd; d++)
		for (i = 0; i < sub[d]; i++)
			lists[d][i] = st[d] + i;
	grid_runs(&rs, nd, gs, idx, sub, order, c);
	a = dims_desc(nd, gs);
	b = dims_desc(nd, sub);
	s = dims_desc(nd, st);
	y = adopt(rc, t, order == MPI_ORDER_C ? C_SUBARRAY_C : C_SUBARRAY_F, &rs,
		  fmt("subarray(%s,%s,sub %s at %s,%s)", order == MPI_ORDER_C ? "C" : "F",
		      a, b, s, c->desc), &c, 1);
	free(a);
	free(b);
	free(s);
	return y;
}

/* the indices of a dimension of g elements that coordinate c of p owns */
static int
dist_indices(int g, int dist, int darg, int p, int c, int *idx)
{
	int n = 0, i, b;

	if (dist == MPI_DISTRIBUTE_NONE) {
		for (i = 0; i < g; i++)
			idx[n++] = i;
	} else if (dist == MPI_DISTRIBUTE_BLOCK) {
		b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
		for (i = c * b; i < g && i < (c + 1) * b; i++)
			idx[n++] = i;
	} else {
		b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
		for (i = 0; i < g; i++)
			if (i / b % p == c)
				idx[n++] = i;
	}
	return n;
}

/* the elements rank owns, per dimension; the process grid is row-major */
static int
darray_lists(int rank, int nd, const int *gs, const int *dist, const int *darg,
	     const int *ps, int lists[3][64], int *n)
{
	int c[3], d, r = rank, total = 1;

	for (d = nd - 1; d >= 0; d--) {
		c[d] = r % ps[d];
		r /= ps[d];
	}
	for (d = 0; d < nd; d++) {
		n[d] = dist_indices(gs[d], dist[d], darg[d], ps[d], c[d], lists[d]);
		total *= n[d];
	}
	return total;
}

static const char *
dist_name(int dist, int darg, char *buf, size_t len)
{
	const char *n = dist == MPI_DISTRIBUTE_NONE ? "none" :
			dist == MPI_DISTRIBUTE_BLOCK ? "block" : "cyclic";

	if (darg == MPI_DISTRIBUTE_DFLT_DARG || dist == MPI_DISTRIBUTE_NONE)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "%s(%d)", n, darg);
	return buf;
}

static struct ty *
mk_darray(int size, int rank, int nd, const int *gs, const int *dist,
	  const int *darg, const int *ps, int order, struct ty *c)
{
	struct runs rs = { .cap_runs = 1 };
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int lists[3][64], *idx[3] = { lists[0], lists[1], lists[2] }, n[3], d;
	char dd[256], b[32];
	size_t len = 0;
	int rc = MPI_Type_create_darray(size, rank, nd, gs, dist, darg, ps, order,
					c->t, &t);

	darray_lists(rank, nd, gs, dist, darg, ps, lists, n);
	grid_runs(&rs, nd, gs, idx, n, order, c);
	for (d = 0; d < nd; d++)
		len += (size_t)snprintf(dd + len, sizeof(dd) - len, "%s%d %s/%d",
					d ? "," : "", gs[d],
					dist_name(dist[d], darg[d], b, sizeof(b)), ps[d]);
	return adopt(rc, t, order == MPI_ORDER_C ? C_DARRAY_C : C_DARRAY_F, &rs,
		     fmt("darray(%s,rank %d of %d,[%s],%s)", order == MPI_ORDER_C ? "C" : "F",
			 rank, size, dd, c->desc), &c, 1);
}

static struct ty *
mk_resized(struct ty *c, int64_t lb, int64_t ext)
{
	struct runs rs = { .cap_runs = 1 };
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int rc = MPI_Type_create_resized(c->t, (MPI_Aint)lb, (MPI_Aint)ext, &t);

	runs_shift(&rs, &c->rs, 0);
	return adopt(rc, t, C_RESIZED, &rs, fmt("resized(%s,lb %lld,ext %lld)", c->desc,
						 (long long)lb, (long long)ext), &c, 1);
}

static struct ty *
mk_dup(struct ty *c)
{
	struct runs rs = { .cap_runs = 1 };
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int rc = MPI_Type_dup(c->t, &t);

	runs_shift(&rs, &c->rs, 0);
	return adopt(rc, t, C_DUP, &rs, fmt("dup(%s)", c->desc), &c, 1);
}

/*
 * The byte map against MPI: pack one copy of the type from a buffer whose
 * byte i holds byte p of i (for each p until i is covered), and every
 * packed byte must be what the map says lies at its place.
 */
static void
ty_check(struct ty *y)
{
	int64_t span = y->tub - y->tlb, k, j;
	unsigned char *src, *dst;
	size_t i;
	int pass, pos;

	if (y->checked || y->rs.size == 0 || span > (8 << 20))
		return;
	y->checked = 1;
	src = xmalloc((size_t)span);
	dst = xmalloc((size_t)y->rs.size);
	for (pass = 0; pass == 0 || (span - 1) >> (8 * pass); pass++) {
		for (k = 0; k < span; k++)
			src[k] = (unsigned char)(k >> (8 * pass));
		pos = 0;
		if (MPI_Pack(src - y->tlb, 1, y->t, dst, (int)y->rs.size, &pos,
			     MPI_COMM_SELF) != MPI_SUCCESS || pos != y->rs.size) {
			bug("type %s: MPI_Pack fails or packs %d bytes", y->desc, pos);
			break;
		}
		for (i = 0, k = 0; i < y->rs.n; i++)
			for (j = 0; j < y->rs.r[i].len; j++, k++)
				if (dst[k] != (unsigned char)((y->rs.r[i].off + j - y->tlb)
							      >> (8 * pass))) {
					bug("type %s: packed byte %lld is not from offset %lld",
					    y->desc, (long long)k, (long long)(y->rs.r[i].off + j));
					goto out;
				}
	}
out:
	free(src);
	free(dst);
}

/* ---- etypes ---------------------------------------------------------------- */

enum { ET_BYTE, ET_INT, ET_DOUBLE, ET_INT3, ET_IDI, ET_INTDBL, ET_N };
static const char *const et_names[ET_N] = { "byte", "int", "double", "int3", "idi", "intdbl" };

/* the struct of an int and a double at 4: 12 bytes, extent 16 (padding) */
static struct ty *
mk_intdbl_padded(void)
{
	static const int bl[2] = { 1, 1 };
	static const MPI_Aint d[2] = { 0, 4 };
	MPI_Datatype ts[2] = { MPI_INT, MPI_DOUBLE }, t = MPI_DATATYPE_NULL;
	struct runs rs = { 0 };
	int rc = MPI_Type_create_struct(2, bl, d, ts, &t);

	runs_add(&rs, 0, 12);
	return adopt(rc, t, C_STRUCT, &rs, fmt("struct(int@0,double@4)"), NULL, 0);
}

static struct ty *
mk_etype(int k)
{
	struct ty *y, *s;

	switch (k) {
	case ET_BYTE:
		return named(MPI_BYTE, "byte", 1);
	case ET_INT:
		return named(MPI_INT, "int", 4);
	case ET_DOUBLE:
		return named(MPI_DOUBLE, "double", 8);
	case ET_INT3:
		y = mk_contig(3, named(MPI_INT, "int", 4));
		break;
	case ET_IDI: {		/* int, double, int: 16 bytes, no padding */
		static const int bl[3] = { 1, 1, 1 };
		static const MPI_Aint d[3] = { 0, 4, 12 };
		MPI_Datatype ts[3] = { MPI_INT, MPI_DOUBLE, MPI_INT }, t = MPI_DATATYPE_NULL;
		struct runs rs = { 0 };
		int rc = MPI_Type_create_struct(3, bl, d, ts, &t);

		runs_add(&rs, 0, 16);
		y = adopt(rc, t, C_STRUCT, &rs, fmt("idi"), NULL, 0);
		break;
	}
	default:
		s = mk_intdbl_padded();
		y = s ? mk_resized(s, 0, 12) : NULL;
		break;
	}
	if (!y) {
		bug("cannot make the etype %s", et_names[k]);
		return named(MPI_BYTE, "byte", 1);
	}
	free(y->desc);
	y->desc = fmt("%s", et_names[k]);
	return y;
}

/* ---- the type generator ------------------------------------------------------ */

struct gen {
	int E;			/* etype size = extent */
	int etk;
	struct ty *et;
	int mem;		/* memory types: any order, negative displacements */
};

/* valid as a filetype: see the header */
static int
file_ok(const struct ty *y, int E)
{
	size_t i;

	if (!y || y->rs.size <= 0 || y->ext <= 0 || y->ext % E || y->tlb < 0 ||
	    y->tub - y->tlb > y->ext || y->ext > FT_MAX_EXT || y->rs.size > FT_MAX_SIZE)
		return 0;
	/* ROMIO 4.0.2 puts the file pointer one short after data that ends
	 * past the extent of a tile, and gets pointer and data wrong under a
	 * negative lb anywhere in the filetype: unless --full, neither */
	if (!o.full && (y->tub > y->ext || y->neglb))
		return 0;
	for (i = 0; i < y->rs.n; i++) {
		if (y->rs.r[i].off % E || y->rs.r[i].len % E)
			return 0;
		if (i && y->rs.r[i].off < y->rs.r[i - 1].off + y->rs.r[i - 1].len)
			return 0;
	}
	return 1;
}

/*
 * valid as a memory type: no byte twice, within reason.  ROMIO 4.0.2
 * takes a type whose data is one contiguous run as starting at the
 * buffer, dropping a negative true lb: not unless --full.
 */
static int
mem_ok(const struct ty *y)
{
	return y && y->rs.size > 0 && y->rs.size <= 256 << 10 &&
	       y->tub - y->tlb <= MEM_MAX && y->ext > 0 && runs_disjoint(&y->rs) &&
	       (o.full || y->rs.n > 1 || y->tlb >= 0);
}

static int
ty_ok(const struct gen *g, const struct ty *y)
{
	return g->mem ? mem_ok(y) : file_ok(y, g->E);
}

static struct ty *gen_type(const struct gen *g, int depth);

/*
 * ROMIO 4.0.2 flattens a resized type whose lb is not 0 as if its data
 * began at lb, and crashes on some (hvector of resized(int, lb -4)):
 * unless --full, resized keeps lb 0
 */
static int
lb_ok(const struct ty *c)
{
	return o.full;
}

/* a leaf: the etype, or in memory a copy of it with gaps */
static struct ty *
leaf(const struct gen *g)
{
	struct ty *y = NULL;

	if (!g->mem)
		return g->et;
	switch (rn(5)) {
	case 0:
		y = mk_resized(g->et, 0, g->E + 1 + rn(8));
		break;
	case 1:
		y = mk_resized(g->et, lb_ok(g->et) ? -rn(8) : 0, g->E + rn(8));
		break;
	case 2:
		if (g->etk == ET_INTDBL)
			y = mk_intdbl_padded();
		break;
	}
	return y && mem_ok(y) ? y : g->et;
}

/* place n blocks of the given byte spans: file in order with gaps of
 * whole etypes from lo on; memory in a random order around 0 (hb: 1
 * all below 0, 2 all from 136 on, as HDF5's types begin) */
static void
place(const struct gen *g, int n, const int64_t *span, const int64_t *tlb,
      MPI_Aint *d, int hb)
{
	int64_t pos[16], cur, shift;
	int perm[16], i;

	cur = g->mem ? 0 : g->E * rn(3);
	if (!g->mem && chance(15))
		cur = roundup(136, g->E);
	for (i = 0; i < n; i++) {
		pos[i] = cur;
		cur += span[i] + (g->mem ? rn(9) : g->E * (chance(50) ? 0 : rn(4)));
		perm[i] = i;
	}
	if (!g->mem) {
		for (i = 0; i < n; i++)
			d[i] = (MPI_Aint)(pos[i] - tlb[i]);
		return;
	}
	shuffle(perm, n);
	shift = hb == 1 ? -cur - rn(64) : hb == 2 ? 136 + rn(64) : -rn((int)cur + 1);
	for (i = 0; i < n; i++)
		d[i] = (MPI_Aint)(pos[perm[i]] + shift - tlb[perm[i]]);
}

/* bytes bl copies of c span, first to last */
static int64_t
bspan(int bl, const struct ty *c)
{
	return bl > 0 ? (int64_t)(bl - 1) * c->ext + c->tub - c->tlb : 0;
}

/*
 * ROMIO 4.0.2 flattens indexed and hindexed wrong when their old type has
 * a resized inside (subarray and darray are resized types too): unless
 * --full, their children have none
 */
static int
child_ok(int ctor, const struct ty *c)
{
	return o.full || !c->rsz || (ctor != C_INDEXED && ctor != C_HINDEXED);
}

/*
 * an empty block now and then; ROMIO 4.0.2 counts them in a type's
 * bounds (an empty block below the others shifts the data), so not
 * unless --full.  Always draws, so the job is the same otherwise.
 */
static int
empty_ok(void)
{
	return chance(12) && o.full;
}

/* one constructor ctor over children of depth below depth */
static struct ty *
gen_ctor(const struct gen *g, int ctor, int depth, int hb)
{
	struct ty *c = NULL, *cs[3];
	int try;
	/*
	 * ROMIO 4.0.2 writes into the holes of, or shifts the data of, a
	 * filetype whose blocks' extents overlap while their data does not
	 * (hvector(3,1,64,subarray of extent 480)): unless --full, blocks of
	 * a filetype lie whole extents of their type apart
	 */
	int whole = !g->mem && !o.full;

	for (try = 0; try < 8 && (!c || !child_ok(ctor, c)); try++)
		c = depth > 0 ? gen_type(g, rn(depth)) : leaf(g);
	if (!child_ok(ctor, c))
		c = g->et;
	int64_t sp = c->tub - c->tlb, span[16], tlb[16], E = g->E, lb, ext;
	int n = 1 + rn(4), bl[16], i, nd, gs[3], sub[3], st[3], dist[3], darg[3], ps[3];
	MPI_Aint d[16];

	if (c->ext <= 0)
		return NULL;
	switch (ctor) {
	case C_CONTIG:
		return mk_contig(1 + rn(4), c);
	case C_VECTOR: {
		int b = 1 + rn(3);
		int64_t s = b + (g->mem ? 1 : 0) + rn(4);

		return mk_vector(n, b, g->mem && chance(25) ? -s : s, 0, c);
	}
	case C_HVECTOR: {
		int b = 1 + rn(3);
		int64_t s = (whole ? b * c->ext : bspan(b, c)) + (g->mem ? 1 + rn(9) : E * rn(4));

		return mk_vector(n, b, g->mem && chance(25) ? -s : s, 1, c);
	}
	case C_INDEXED:
	case C_INDEXED_BLOCK: {
		/* whole extents of c: place in units, then scale */
		int64_t cur = rn(3), pos[16];
		int perm[16], blk = 1 + rn(3);

		for (i = 0; i < n; i++) {
			bl[i] = ctor == C_INDEXED_BLOCK ? blk : empty_ok() ? 0 : 1 + rn(3);
			pos[i] = cur;
			cur += bl[i] + rn(3) + (g->mem && c->ext < sp);
			perm[i] = i;
		}
		if (g->mem)
			shuffle(perm, n);
		for (i = 0; i < n; i++)
			d[i] = (MPI_Aint)(pos[perm[i]] - (g->mem ? rn(2) * cur : 0));
		if (g->mem) {
			int tmp[16];

			for (i = 0; i < n; i++)
				tmp[i] = bl[perm[i]];
			memcpy(bl, tmp, sizeof(tmp));
		}
		return mk_indexed(n, bl, d, 0, ctor == C_INDEXED_BLOCK, c);
	}
	case C_HINDEXED:
	case C_HINDEXED_BLOCK: {
		int blk = 1 + rn(3);

		for (i = 0; i < n; i++) {
			bl[i] = ctor == C_HINDEXED_BLOCK ? blk : empty_ok() ? 0 : 1 + rn(3);
			span[i] = whole ? bl[i] * c->ext : bspan(bl[i], c);
			tlb[i] = whole ? c->lb : c->tlb;
		}
		place(g, n, span, tlb, d, hb);
		return mk_indexed(n, bl, d, 1, ctor == C_HINDEXED_BLOCK, c);
	}
	case C_STRUCT:
		n = 1 + rn(3);
		for (i = 0; i < n; i++) {
			cs[i] = i == 0 ? c : depth > 0 ? gen_type(g, rn(depth)) : leaf(g);
			if (cs[i]->ext <= 0)
				return NULL;
			bl[i] = empty_ok() ? 0 : 1 + rn(3);
			span[i] = whole ? bl[i] * cs[i]->ext : bspan(bl[i], cs[i]);
			tlb[i] = whole ? cs[i]->lb : cs[i]->tlb;
		}
		place(g, n, span, tlb, d, hb);
		return mk_struct(n, bl, d, cs);
	case C_SUBARRAY_C:
	case C_SUBARRAY_F:
		nd = 1 + rn(3);
		for (i = 0; i < nd; i++) {
			gs[i] = 1 + rn(nd == 3 ? 4 : 6);
			sub[i] = 1 + rn(gs[i]);
			st[i] = rn(gs[i] - sub[i] + 1);
		}
		return mk_subarray(nd, gs, sub, st, ctor == C_SUBARRAY_C ? MPI_ORDER_C
			: MPI_ORDER_FORTRAN, c);
	case C_DARRAY_C:
	case C_DARRAY_F: {
		int size = 1, lists[3][64], cnt[3];

		nd = 1 + rn(3);
		for (i = 0; i < nd; i++) {
			ps[i] = 1 + rn(3);
			size *= ps[i];
			gs[i] = 1 + rn(nd == 3 ? 5 : 8);
			if (ps[i] == 1 && chance(30))
				dist[i] = MPI_DISTRIBUTE_NONE;
			else
				dist[i] = chance(50) ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC;
			darg[i] = MPI_DISTRIBUTE_DFLT_DARG;
			if (dist[i] == MPI_DISTRIBUTE_BLOCK && chance(50))
				darg[i] = (gs[i] + ps[i] - 1) / ps[i] + rn(2);
			else if (dist[i] == MPI_DISTRIBUTE_CYCLIC && chance(60))
				darg[i] = 1 + rn(3);
		}
		i = rn(size);
		if (darray_lists(i, nd, gs, dist, darg, ps, lists, cnt) == 0)
			return NULL;
		return mk_darray(size, i, nd, gs, dist, darg, ps, ctor == C_DARRAY_C
				 ? MPI_ORDER_C : MPI_ORDER_FORTRAN, c);
	}
	case C_RESIZED:
		if (g->mem) {
			lb = rn(3) == 0 ? c->lb : (int64_t)rn(129) - 64;
			ext = sp + rn(17);
			if (!lb_ok(c))
				lb = 0;
		} else {
			switch (rn(5)) {
			case 0: lb = c->lb; break;
			case 1: lb = c->tlb; break;
			case 2: lb = c->tlb > 0 ? E * rn((int)(c->tlb / E) + 1) : 0; break;
			default: lb = 0; break;
			}
			ext = chance(20) ? 2 * c->ext : sp + E * rn(4);
			if (!lb_ok(c))
				lb = 0;
		}
		return mk_resized(c, lb, ext);
	default:
		return mk_dup(c);
	}
}

/* a random valid type nested up to depth (0: a leaf) */
static struct ty *
gen_type(const struct gen *g, int depth)
{
	static const int ctors[] = {
		C_CONTIG, C_VECTOR, C_HVECTOR, C_INDEXED, C_HINDEXED, C_INDEXED_BLOCK,
		C_HINDEXED_BLOCK, C_STRUCT, C_SUBARRAY_C, C_SUBARRAY_F, C_DARRAY_C,
		C_DARRAY_F, C_RESIZED, C_DUP,
	};
	struct ty *y;
	int try;

	if (depth <= 0)
		return leaf(g);
	for (try = 0; try < 16; try++) {
		y = gen_ctor(g, ctors[rn((int)(sizeof(ctors) / sizeof(ctors[0])))], depth, 0);
		if (ty_ok(g, y))
			return y;
	}
	return leaf(g);
}

/* ---- memory types ------------------------------------------------------------- */

enum mkind { M_CONTIG, M_VECTOR, M_HINDEXED_NEG, M_TRUE_LB, M_RESIZED, M_STRUCT,
	     M_NESTED, M_BOTTOM, M_BOTTOM2, M_N };
static const char *const mkind_names[M_N] = {
	"contig", "vector", "hindexed_neg", "true_lb", "resized", "struct", "nested",
	"bottom", "bottom2",
};

static struct ty *
gen_mem(const struct gen *g, int kind)
{
	struct ty *y = NULL;
	int try;

	for (try = 0; try < 8; try++) {
		switch (kind) {
		case M_CONTIG:
			y = chance(40) ? g->et : mk_contig(1 + rn(6), g->et);
			break;
		case M_VECTOR:
			y = gen_ctor(g, chance(50) ? C_VECTOR : C_HVECTOR, rn(2), 0);
			break;
		case M_HINDEXED_NEG:
			y = gen_ctor(g, C_HINDEXED, rn(2), 1);
			break;
		case M_TRUE_LB:
			y = gen_ctor(g, chance(50) ? C_HINDEXED : C_STRUCT, rn(2), 2);
			break;
		case M_RESIZED:
			y = gen_ctor(g, C_RESIZED, 1 + rn(2), 0);
			break;
		case M_STRUCT:
			y = gen_ctor(g, C_STRUCT, 1 + rn(2), 0);
			break;
		default:
			y = gen_type(g, 2 + rn(2));
			break;
		}
		if (mem_ok(y))
			return y;
	}
	return g->et;
}

/* ---- jobs ----------------------------------------------------------------------- */

enum { P_AT = 1, P_COLL = 2, P_NB = 4, P_SPLIT = 8, P_LARGE = 16, P_SHARED = 32,
       P_ORDERED = 64, P_N = 128 };
static const int indep_paths[] = { P_AT, P_AT | P_LARGE, P_AT | P_NB, P_AT | P_NB | P_LARGE,
	0, P_LARGE, P_NB, P_NB | P_LARGE };
static const int indep_nb_paths[] = { P_AT | P_NB, P_AT | P_NB | P_LARGE, P_NB, P_NB | P_LARGE };
static const int coll_paths[] = { P_AT | P_COLL, P_AT | P_COLL | P_LARGE, P_AT | P_COLL | P_SPLIT,
	P_AT | P_COLL | P_SPLIT | P_LARGE, P_COLL, P_COLL | P_LARGE, P_COLL | P_SPLIT,
	P_COLL | P_SPLIT | P_LARGE };
static const int coll_nb_paths[] = { P_AT | P_COLL | P_NB, P_AT | P_COLL | P_NB | P_LARGE,
	P_COLL | P_NB, P_COLL | P_NB | P_LARGE };
static const int shared_paths[] = { P_SHARED, P_SHARED | P_LARGE, P_SHARED | P_NB,
	P_SHARED | P_NB | P_LARGE };
static const int ordered_paths[] = { P_ORDERED, P_ORDERED | P_LARGE, P_ORDERED | P_SPLIT,
	P_ORDERED | P_SPLIT | P_LARGE };
#define PICK(a) ((a)[rn((int)(sizeof(a) / sizeof((a)[0])))])

static const char *
path_name(int path, int rd)
{
	static char s[8][64];
	static int k;
	char *b = s[k++ % 8];

	snprintf(b, 64, "MPI_File_%s%s%s%s%s%s%s%s", path & P_NB ? "i" : "",
		 rd ? "read" : "write", path & P_AT ? "_at" : "", path & P_COLL ? "_all" : "",
		 path & P_SHARED ? "_shared" : "", path & P_ORDERED ? "_ordered" : "",
		 path & P_SPLIT ? "_begin" : "", path & P_LARGE ? "_c" : "");
	return b;
}

enum { K_ZONE, K_INTERLEAVE, K_PARTITION, K_SHARED, K_N };
static const char *const kind_names[K_N] = { "zone", "interleave", "partition", "shared" };

enum { ST_INDEP, ST_INDEP_NB, ST_COLL, ST_COLL_NB, ST_ORDERED, ST_SHARED, ST_SEEKSH,
       ST_UNSYNC };
static const char *const st_names[] = { "independent", "independent nonblocking batch",
	"collective", "collective nonblocking batch", "ordered",
	"shared (one rank after the other)", "seek_shared(0)",
	"collective read of other ranks' bytes without sync" };
/* the collective reads without sync of a shared phase: explicit offsets,
 * the shared pointer stays */
static const int unsync_at_paths[] = { P_AT | P_COLL, P_AT | P_COLL | P_LARGE,
	P_AT | P_COLL | P_SPLIT, P_AT | P_COLL | P_NB, P_AT | P_COLL | P_NB | P_LARGE };

/* more handles on the path, open during a phase: a mask */
enum { AL_NONE, AL_SELF = 1, AL_DUP = 2 };
static const char *const alias_names[] = { "none", "MPI_COMM_SELF", "MPI_Comm_dup",
	"MPI_COMM_SELF and on MPI_Comm_dup" };
/* before a phase: the file closed and opened again, or removed and created */
enum { RO_NONE, RO_REOPEN, RO_RECREATE };
enum { RM_DELETE, RM_UNLINK, RM_REMOVE };
static const char *const rm_names[] = { "MPI_File_delete", "unlink", "remove" };

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

/* the view an access goes through: its rank's, or another's (ST_UNSYNC) */
static const struct view *
acc_view(const struct phase *ph, const struct acc *a)
{
	return &ph->v[a->vr >= 0 ? a->vr : a->rank];
}

static void
model_reserve(struct model *m, int64_t end)
{
	int64_t cap = m->cap;

	if (end <= cap)
		return;
	while (cap < end)
		cap = cap ? 2 * cap : 1 << 16;
	m->img = xrealloc(m->img, (size_t)cap);
	m->stamp = xrealloc(m->stamp, (size_t)cap * sizeof(*m->stamp));
	memset(m->img + m->cap, 0, (size_t)(cap - m->cap));
	memset(m->stamp + m->cap, 0, (size_t)(cap - m->cap) * sizeof(*m->stamp));
	m->cap = cap;
}

static void
view_prepare(struct view *v)
{
	size_t i;

	v->pre = xmalloc((v->ft->rs.n + 1) * sizeof(*v->pre));
	v->pre[0] = 0;
	for (i = 0; i < v->ft->rs.n; i++)
		v->pre[i + 1] = v->pre[i] + v->ft->rs.r[i].len;
}

/* the file runs of stream bytes [s, s + n) of a view */
static void
view_map(const struct view *v, int64_t s, int64_t n, struct runs *out)
{
	const struct ty *ft = v->ft;
	int64_t fs = ft->rs.size;

	while (n > 0) {
		int64_t tile = s / fs, r = s % fs, in, take;
		size_t lo = 0, hi = ft->rs.n;

		while (hi - lo > 1) {	/* the run with pre[run] <= r */
			size_t mid = (lo + hi) / 2;

			if (v->pre[mid] <= r)
				lo = mid;
			else
				hi = mid;
		}
		in = r - v->pre[lo];
		take = imin(n, ft->rs.r[lo].len - in);
		runs_add(out, v->disp + tile * ft->ext + ft->rs.r[lo].off + in, take);
		s += take;
		n -= take;
	}
}

static int64_t
view_global(const struct view *v, int64_t s)
{
	struct runs r = { 0 };
	int64_t g;

	view_map(v, s, 1, &r);
	g = r.r[0].off;
	runs_free(&r);
	return g;
}

/* stream bytes of the view below file offset size (the view increases) */
static int64_t
view_below(const struct view *v, int64_t size)
{
	int64_t lo = 0, hi;

	if (size <= v->disp)
		return 0;
	hi = ((size - v->disp) / v->ft->ext + 2) * v->ft->rs.size;
	while (lo < hi) {	/* the first stream byte at or past size */
		int64_t mid = lo + (hi - lo) / 2;

		if (view_global(v, mid) >= size)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static void
phase_free(struct phase *ph)
{
	int r, i;

	for (i = 0; i < ph->na; i++) {
		runs_free(&ph->a[i].g);
		free(ph->a[i].expect);
	}
	free(ph->a);
	for (r = 0; r < MAXP; r++) {
		free(ph->v[r].pre);
		free(ph->v[r].how);
	}
	memset(ph, 0, sizeof(*ph));
}

/* the phases; the model too unless keep_model (the types stay in the pool) */
static void
job_free(struct job *j, int keep_model)
{
	int p;

	for (p = 0; p < j->nph; p++)
		phase_free(&j->ph[p]);
	j->nph = 0;
	if (!keep_model) {
		free(j->m.img);
		free(j->m.stamp);
		memset(&j->m, 0, sizeof(j->m));
	}
}

/* ---- job generation ------------------------------------------------------------ */

static struct acc *
new_acc(struct phase *ph)
{
	struct acc *a;

	if (ph->na == ph->cap) {
		ph->cap = ph->cap ? 2 * ph->cap : 32;
		ph->a = xrealloc(ph->a, (size_t)ph->cap * sizeof(*ph->a));
	}
	a = &ph->a[ph->na++];
	memset(a, 0, sizeof(*a));
	a->pos_after = -1;
	a->vr = -1;
	return a;
}

/* a memory type of a random kind, and its kind */
static struct ty *
pick_mem(const struct gen *gm, int *kind)
{
	int k = rn(M_N);
	int base = k == M_BOTTOM || k == M_BOTTOM2 ? rn(M_NESTED + 1) : k;

	*kind = o.nobottom ? base : k;
	return gen_mem(gm, base);
}

/* at most n copies of m fit in memory without a byte twice */
static int64_t
mem_fit(const struct ty *m, int64_t n)
{
	int64_t span = m->tub - m->tlb, ext = m->ext, k;
	struct runs all = { 0 };
	int ok;

	if (n > 1 && ext > 0)
		n = imin(n, (MEM_MAX - span) / ext + 1);
	if (n <= 1)
		return imax(n, 0);
	if (ext >= span)
		return n;
	for (k = 0; k < n; k++)
		runs_shift(&all, &m->rs, k * ext);
	ok = runs_disjoint(&all);
	runs_free(&all);
	return ok ? n : 1;
}

/*
 * One access of rank r in step s: memory type, place in the stream
 * (below lim bytes), count; busy (NB batches): stream ranges it must not
 * meet, as MPI leaves the order of pending accesses open.
 */
static struct acc *
gen_access(struct phase *ph, const struct gen *gm, int r, int s, int path, int rd,
	   int64_t lim, int64_t below, const struct runs *busy, int h)
{
	struct acc *a = new_acc(ph);
	int64_t E = ph->E, msize, n, pos = ph->pos[r];
	size_t i;

	/* two handles, two individual pointers: not followed */
	if (ph->alias)
		pos = ph->pos[r] = -1;
	a->h = h;
	a->rank = r;
	a->step = s;
	a->path = path;
	a->rd = rd;
	a->idx = ph->nidx[r]++;
	a->m = pick_mem(gm, &a->mkind);
	msize = a->m->rs.size;
	lim = lim / E * E;
	if (!(path & P_AT) && pos >= 0 && pos * E < lim && chance(50))
		a->soff = pos * E;
	else
		a->soff = E * rn((int)(lim / E));
	n = (lim - a->soff) / msize;
	n = imin(n, (chance(10) ? 4 * ACC_MAX : ACC_MAX) / msize);
	if (!chance(30))
		n = rn((int)n + 1);
	if (chance(8))
		n = 0;
	a->count = mem_fit(a->m, n);
	a->bytes = a->count * msize;
	for (i = 0; busy && i < busy->n; i++)
		if (a->soff < busy->r[i].off + busy->r[i].len &&
		    busy->r[i].off < a->soff + a->bytes)
			a->count = a->bytes = 0;
	if (!(path & (P_AT | P_SHARED | P_ORDERED))) {
		/* ROMIO 4.0.2 loses track of the pointer through some views (one
		 * or a few etypes short after a write through
		 * hvector(3,2,24,subarray(2, sub 1 at 1))): unless --full, every
		 * access seeks there, and no pointer is checked */
		int draw = chance(70);

		if (!o.full)
			pos = -1;
		if (pos >= 0 && pos * E == a->soff && draw) {
			a->seek = SEEK_NONE;
		} else if (pos >= 0 && chance(40)) {
			a->seek = SEEK_CUR_;
			a->seekarg = a->soff / E - pos;
		} else {
			a->seek = SEEK_SET_;
			a->seekarg = a->soff / E;
		}
		a->pos_after = ph->pos[r] = (a->soff + a->bytes) / E;
		/* a short read moves the pointer by what it read: not followed */
		if ((rd && a->soff + a->bytes > below) || !o.full || ph->alias)
			a->pos_after = ph->pos[r] = -1;
	}
	return a;
}

/* how many tiles of ft a rank's stream may use: mostly a few KB of data */
static int64_t
pick_tiles(const struct ty *ft)
{
	int64_t target, t;

	target = chance(20) ? 64 + rn(1024) : chance(75) ? 1024 + rn(16384) : rn(ZONE_BYTES);
	t = imax(1, target / ft->rs.size);
	t = imin(t, imax(1, ZONE_BYTES / ft->rs.size));
	return imin(t, imax(1, ZONE_SPAN / ft->ext));
}

/* the views of one phase, all ranks */
static void
gen_views(struct job *j, struct phase *ph, const struct gen *gf)
{
	int N = j->nprocs, r, perm[MAXP], t;
	int64_t E = ph->E, cur = ph->base, fs;
	struct ty *ft;

	for (r = 0; r < N; r++)
		perm[r] = r;
	switch (ph->kind) {
	case K_ZONE:
		shuffle(perm, N);
		for (t = 0; t < N; t++) {
			struct view *v = &ph->v[perm[t]];
			int64_t tiles;

			v->ft = ft = gen_type(gf, rn(4));
			tiles = pick_tiles(ft);
			v->disp = cur + (chance(30) ? E * rn(8) : 0);
			v->usable = tiles * ft->rs.size;
			cur = v->disp + (tiles - 1) * ft->ext + ft->tub;
			cur += chance(50) ? 0 : E * rn(4);
			v->how = fmt("zone %d of %d", t, N);
		}
		break;
	case K_INTERLEAVE: {
		struct ty *b = gen_type(gf, rn(3));
		int64_t e = roundup(imax(b->tub, E), E) + E * rn(2), tiles = -1;
		int var = rn(3);

		for (r = 0; r < N; r++) {
			struct view *v = &ph->v[r];
			struct ty *w = NULL;
			int one = 1;
			MPI_Aint d = (MPI_Aint)(r * e);

			v->disp = cur;
			if (var == 0 && child_ok(C_HINDEXED, b) &&
			    (w = mk_indexed(1, &one, &d, 1, 0, b)))
				w = mk_resized(w, chance(50) || !lb_ok(w) ? 0 : r * e, N * e);
			else if (var == 1 && (w = mk_struct(1, &one, &d, &b)))
				w = mk_resized(w, 0, N * e);
			else if ((w = mk_resized(b, 0, N * e)))
				v->disp = cur + r * e;
			if (!file_ok(w, (int)E)) {
				bug("interleaved filetype of rank %d is not valid: %s", r,
				    w ? w->desc : "(none)");
				w = mk_resized(ph->et, 0, N * E);
				v->disp = cur + r * E;
			}
			v->ft = w;
			if (tiles < 0)
				tiles = pick_tiles(w);
			v->usable = tiles * w->rs.size;
			v->how = fmt("interleaved: block at %lld of every %lld bytes",
				     (long long)(r * e), (long long)(N * e));
		}
		break;
	}
	case K_PARTITION: {
		struct ty *c = chance(50) ? ph->et : gen_type(gf, 1);
		int nd = 1 + rn(3), ps[3] = { 0, 0, 0 }, gs[3], dist[3], darg[3], d;
		int order = chance(50) ? MPI_ORDER_C : MPI_ORDER_FORTRAN, darray = chance(50);
		int lists[3][64], cnt[3];
		int64_t tiles = -1, elems = 1;

		MPI_Dims_create(N, nd, ps);
		if (chance(50))
			for (d = 0; d < nd / 2; d++) {
				t = ps[d];
				ps[d] = ps[nd - 1 - d];
				ps[nd - 1 - d] = t;
			}
		for (d = 0; d < nd; d++) {
			gs[d] = ps[d] + rn(nd == 3 ? 4 : 8);
			elems *= gs[d];
			if (ps[d] == 1 && chance(30))
				dist[d] = MPI_DISTRIBUTE_NONE;
			else
				dist[d] = chance(50) ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC;
			darg[d] = MPI_DISTRIBUTE_DFLT_DARG;
			if (dist[d] == MPI_DISTRIBUTE_BLOCK && chance(40))
				darg[d] = (gs[d] + ps[d] - 1) / ps[d] + rn(2);
			else if (dist[d] == MPI_DISTRIBUTE_CYCLIC && chance(60))
				darg[d] = 1 + rn(3);
		}
		if (elems * c->ext > FT_MAX_EXT || elems * c->rs.size > FT_MAX_SIZE)
			c = ph->et;
		for (r = 0; r < N && darray; r++)	/* every rank must own some */
			if (!darray_lists(r, nd, gs, dist, darg, ps, lists, cnt))
				for (d = 0; d < nd; d++) {
					dist[d] = MPI_DISTRIBUTE_CYCLIC;
					darg[d] = MPI_DISTRIBUTE_DFLT_DARG;
				}
		for (r = 0; r < N; r++) {
			struct view *v = &ph->v[r];

			if (darray) {
				ft = mk_darray(N, r, nd, gs, dist, darg, ps, order, c);
			} else {
				int co[3], rr = r, sub[3], st[3];

				for (d = nd - 1; d >= 0; d--) {
					co[d] = rr % ps[d];
					rr /= ps[d];
				}
				for (d = 0; d < nd; d++) {
					int q = gs[d] / ps[d], rem = gs[d] % ps[d];

					sub[d] = q + (co[d] < rem);
					st[d] = co[d] * q + (co[d] < rem ? co[d] : rem);
				}
				ft = mk_subarray(nd, gs, sub, st, order, c);
			}
			if (!file_ok(ft, (int)E)) {
				bug("partition filetype of rank %d is not valid: %s", r,
				    ft ? ft->desc : "(none)");
				ft = mk_resized(ph->et, 0, N * E);
				v->disp = cur + r * E;
			} else {
				v->disp = cur;
			}
			if (tiles < 0)
				tiles = imin(pick_tiles(ft), 1 + rn(3));
			v->ft = ft;
			v->usable = tiles * ft->rs.size;
			v->how = fmt("partition: %s", darray ? "darray" : "subarray");
		}
		break;
	}
	default: {		/* K_SHARED: one view for all */
		int64_t tiles;

		ft = gen_type(gf, rn(4));
		fs = ft->rs.size;
		tiles = pick_tiles(ft);
		for (r = 0; r < N; r++) {
			ph->v[r].ft = ft;
			ph->v[r].disp = cur;
			ph->v[r].usable = tiles * fs * (j->rd ? 1 : N > 1 ? 2 : 1);
			ph->v[r].how = fmt("shared by all ranks");
		}
		break;
	}
	}
	for (r = 0; r < N; r++)
		view_prepare(&ph->v[r]);
}

/* the read job's limit: a little past the end of the file, or not */
static int64_t
read_lim(const struct job *j, const struct view *v, int eof_ok, int64_t below)
{
	/* ROMIO 4.0.2 counts too many bytes in the status of a strided read
	 * past the end of the file: reads cross it only with --full */
	if (eof_ok && chance(15) && o.full)
		return below + v->ft->rs.size + 64;
	return imin(imax(below, 0), v->usable * 4);
}

static int read_part(struct phase *ph, const struct gen *gm, int r, int wr, int s,
		     int path, int wn);

/* the handle of an independent call, from a draw of rn(4): half of them
 * through the first handle */
static int
pick_h(const struct phase *ph, int draw)
{
	if (ph->alias == (AL_SELF | AL_DUP))
		return draw == 3 ? 0 : draw;
	return draw >= 2 ? ph->alias : 0;
}

/*
 * The steps of a phase that is not shared.  Write jobs: writes, then
 * maybe a read-back of what each rank wrote; read jobs: reads.
 */
static void
gen_steps(struct job *j, struct phase *ph, const struct gen *gm)
{
	int N = j->nprocs, r, s, i, n, nw;

	ph->nst = 1 + rn(4);
	for (s = 0; s < ph->nst; s++) {
		struct step *st = &ph->st[s];
		int k = 1 + rn(2), cpath = 0, pc = rn(100), hc = chance(50);

		st->sp_after = -1;
		st->rd = j->rd;
		st->type = pc < 35 ? ST_INDEP : pc < 55 ? ST_INDEP_NB : pc < 85 ? ST_COLL : ST_COLL_NB;
		/* a collective step through a dup'ed handle: every rank's call */
		st->h = hc && (ph->alias & AL_DUP) && st->type >= ST_COLL ? AL_DUP : 0;
		if (st->type == ST_COLL)
			cpath = PICK(coll_paths);
		else if (st->type == ST_COLL_NB)
			cpath = PICK(coll_nb_paths);
		for (r = 0; r < N; r++) {
			struct runs busy = { 0 };
			int nb = st->type == ST_INDEP_NB || st->type == ST_COLL_NB;
			int64_t below = j->rd ? view_below(&ph->v[r], j->m.size) : INT64_MAX;

			n = st->type == ST_INDEP ? rn(4) : st->type == ST_INDEP_NB ? 1 + rn(3)
			  : st->type == ST_COLL ? 1 : k;
			for (i = 0; i < n; i++) {
				int path = st->type == ST_INDEP ? PICK(indep_paths)
					 : st->type == ST_INDEP_NB ? PICK(indep_nb_paths) : cpath;
				int64_t lim = j->rd ? read_lim(j, &ph->v[r], !nb, below)
						    : ph->v[r].usable;
				/* independent calls: either handle, each its own */
				int h = st->type >= ST_COLL ? st->h : pick_h(ph, rn(4));
				struct acc *a = gen_access(ph, gm, r, s, path, j->rd, lim,
							   below, nb ? &busy : NULL, h);

				if (nb)
					runs_add(&busy, a->soff, a->bytes);
			}
			runs_free(&busy);
		}
	}
	if (j->rd || !(ph->amode & MPI_MODE_RDWR) || !chance(40) || ph->nst >= 15)
		return;
	/* the read-back: parts of the rank's own writes of this phase */
	s = ph->nst++;
	ph->st[s].type = chance(50) ? ST_INDEP : ST_COLL;
	ph->st[s].rd = 1;
	ph->st[s].sp_after = -1;
	{
		int cpath = PICK(coll_paths), wn = ph->na;

		for (r = 0; r < N; r++) {
			n = ph->st[s].type == ST_COLL ? 1 : 1 + rn(2);
			for (i = 0; i < n; i++) {
				int path = ph->st[s].type == ST_COLL ? cpath : PICK(indep_paths);
				int h = pick_h(ph, rn(4));

				if (ph->st[s].type != ST_INDEP)
					h = 0;

				nw = read_part(ph, gm, r, r, s, path, wn);
				ph->a[nw].h = h;
			}
		}
	}
}

/*
 * A read of rank r in step s, of path: a part of one of the writes of
 * rank wr among the phase's first wn accesses (nothing if wr wrote
 * nothing), through wr's view.  Returns its index.
 */
static int
read_part(struct phase *ph, const struct gen *gm, int r, int wr, int s, int path, int wn)
{
	struct acc w = { .bytes = 0 }, *a;
	int cnt = 0, t, nw;

	for (t = 0; t < wn; t++)
		if (ph->a[t].rank == wr && !ph->a[t].rd && ph->a[t].bytes)
			cnt++;
	if (cnt) {
		nw = rn(cnt);
		for (t = 0; t < wn; t++)
			if (ph->a[t].rank == wr && !ph->a[t].rd && ph->a[t].bytes && nw-- == 0)
				w = ph->a[t];	/* new_acc moves them */
	}
	a = new_acc(ph);
	a->rank = r;
	a->vr = wr == r ? -1 : wr;
	a->step = s;
	a->rd = 1;
	a->idx = ph->nidx[r]++;
	a->path = path;
	a->m = pick_mem(gm, &a->mkind);
	if (w.bytes) {
		int64_t E = ph->E, off = E * rn((int)(w.bytes / E));
		int64_t len = w.bytes - off;

		a->soff = w.soff + off;
		if (len < a->m->rs.size) {
			a->m = ph->et;
			a->mkind = M_CONTIG;
		}
		a->count = mem_fit(a->m, len / a->m->rs.size);
		if (chance(50))
			a->count = rn((int)a->count) + 1;
		a->bytes = a->count * a->m->rs.size;
	}
	if (!(a->path & P_AT)) {
		a->seek = SEEK_SET_;
		a->seekarg = a->soff / ph->E;
		a->pos_after = o.full && !ph->alias && wr == r ? (a->soff + a->bytes) / ph->E : -1;
	}
	return (int)(a - ph->a);
}

/*
 * After the phase's writes (and read-backs): a barrier, then a collective
 * read by every rank of a part of a write of rank r + k (mod N) in this
 * phase, without MPI_File_sync.  MPICH on a local file system returns
 * those bytes (its writes are pwrite()s done when the call returns); MPI
 * leaves them undefined, but programs rely on it (the library makes a
 * collective call or a barrier show the other ranks' writes).  A phase
 * that is not shared sets every rank's view to rank r + k's first (in
 * the order sep says, around the barrier); a shared one reads at
 * explicit offsets in its one view.
 */
static void
gen_unsync(struct job *j, struct phase *ph, const struct gen *gm)
{
	int N = j->nprocs, s, r, k, cpath, draw = chance(25), wn = ph->na;

	if (j->rd || j->seq || !(ph->amode & MPI_MODE_RDWR) || N < 2 || o.nounsync ||
	    !draw || ph->nst >= 16)
		return;
	k = 1 + rn(N - 1);
	s = ph->nst++;
	ph->st[s].type = ST_UNSYNC;
	ph->st[s].rd = 1;
	ph->st[s].sp_after = -1;
	/* no barrier at all: the library shows the other ranks' writes at a
	 * collective call on the handle (set_view, the read itself); MPICH
	 * need not (ROMIO's collective calls without collective buffering do
	 * not synchronize), so only with --full */
	ph->st[s].sep = rn(3);
	if (ph->st[s].sep == 2 && !o.full)
		ph->st[s].sep = 0;
	ph->vshift = ph->kind == K_SHARED ? 0 : k;
	cpath = ph->kind == K_SHARED ? PICK(unsync_at_paths)
	      : chance(70) ? PICK(coll_paths) : PICK(coll_nb_paths);
	for (r = 0; r < N; r++) {
		int t = read_part(ph, gm, r, (r + k) % N, s, cpath, wn);

		if (ph->kind == K_SHARED)	/* the one view */
			ph->a[t].vr = -1;
	}
}

/* the steps of a shared phase: ordered and one-after-the-other shared */
static void
gen_shared_steps(struct job *j, struct phase *ph, const struct gen *gm)
{
	int N = j->nprocs, r, s, t, nwst;
	int64_t sp = 0, lim = ph->v[0].usable, E = ph->E;

	if (j->rd)
		lim = imin(view_below(&ph->v[0], j->m.size), lim);
	nwst = ph->nst = 1 + rn(3);
	for (s = 0; s < ph->nst; s++) {
		struct step *st = &ph->st[s];
		int opath = PICK(ordered_paths);

		st->type = chance(50) ? ST_ORDERED : ST_SHARED;
		st->rd = j->rd;
		for (r = 0; r < N; r++)
			st->order[r] = r;
		if (st->type == ST_SHARED)
			shuffle(st->order, N);
		for (t = 0; t < N; t++) {
			struct acc *a = new_acc(ph);
			int64_t n;

			r = st->order[t];
			a->rank = r;
			a->step = s;
			a->rd = j->rd;
			a->idx = ph->nidx[r]++;
			a->path = st->type == ST_ORDERED ? opath : PICK(shared_paths);
			a->m = pick_mem(gm, &a->mkind);
			n = (lim - sp) / N / a->m->rs.size;
			n = imin(n, ACC_MAX / a->m->rs.size);
			a->count = mem_fit(a->m, chance(10) ? 0 : rn((int)imax(n, 0) + 1));
			a->bytes = a->count * a->m->rs.size;
			a->soff = sp;
			sp += a->bytes;
		}
		st->sp_after = sp / E;
	}
	/* MPI_MODE_SEQUENTIAL: the shared pointer only moves forward */
	if (j->rd || !(ph->amode & MPI_MODE_RDWR) || !chance(40) || j->seq)
		return;
	/* read-back: the pointer to 0, then the same steps as reads */
	s = ph->nst++;
	ph->st[s].type = ST_SEEKSH;
	ph->st[s].sp_after = 0;
	for (s = 0; s < nwst; s++) {
		struct step *st = &ph->st[ph->nst], *w = &ph->st[s];
		int opath = PICK(ordered_paths), wa, na = ph->na;

		*st = *w;
		st->rd = 1;
		for (wa = 0; wa < na; wa++) {
			struct acc *x = &ph->a[wa], *a;

			if (x->step != s)
				continue;
			a = new_acc(ph);
			x = &ph->a[wa];	/* new_acc may move the array */
			*a = *x;
			memset(&a->g, 0, sizeof(a->g));
			a->step = ph->nst;
			a->rd = 1;
			a->idx = ph->nidx[a->rank]++;
			a->path = w->type == ST_ORDERED ? opath : PICK(shared_paths);
			a->m = pick_mem(gm, &a->mkind);
			if (x->bytes % a->m->rs.size || mem_fit(a->m, x->bytes /
			    a->m->rs.size) != x->bytes / a->m->rs.size) {
				a->m = ph->et;
				a->mkind = M_CONTIG;
			}
			a->count = x->bytes / a->m->rs.size;
		}
		ph->nst++;
	}
}

/*
 * Map every access to the file; a write job also checks who wrote what
 * before (returns 1 if the phase rewrites another rank's bytes and that
 * is not allowed) and, when apply, writes the phase into the model.
 */
static int
phase_model(struct job *j, int p, int apply)
{
	struct phase *ph = &j->ph[p];
	struct model *m = &j->m;
	int i;
	size_t k;

	if (!apply)
		for (i = 0; i < ph->na; i++) {
			struct acc *a = &ph->a[i];

			runs_free(&a->g);
			view_map(acc_view(ph, a), a->soff, a->bytes, &a->g);
		}
	if (j->rd)
		return 0;
	if (!apply) {
		ph->overlap = 0;
		for (i = 0; i < ph->na; i++) {
			struct acc *a = &ph->a[i];

			for (k = 0; k < a->g.n && !a->rd; k++) {
				int64_t g = a->g.r[k].off, e = g + a->g.r[k].len;

				model_reserve(m, e);
				for (; g < e; g++)
					if (m->stamp[g] && (int)(m->stamp[g] & 7) != a->rank)
						ph->overlap++;
			}
		}
		return ph->overlap && !o.overlap;
	}
	for (i = 0; i < ph->na; i++) {
		struct acc *a = &ph->a[i];
		uint64_t key = acc_key(j->seed, p, a->rank, a->idx);
		int64_t s = 0;
		uint32_t mark = (uint32_t)(p + 1) << 3 | (uint32_t)a->rank;

		for (k = 0; k < a->g.n && !a->rd; k++) {
			int64_t g = a->g.r[k].off, e = g + a->g.r[k].len;

			for (; g < e; g++, s++) {
				uint32_t was = m->stamp[g];

				if ((was >> 3) == (uint32_t)p + 1 && (int)(was & 7) != a->rank)
					bug("phase %d: ranks %d and %d both write byte %lld", p,
					    (int)(was & 7), a->rank, (long long)g);
				m->img[g] = dbyte(key, s);
				m->stamp[g] = mark;
			}
			m->size = imax(m->size, e);
		}
	}
	return 0;
}

/* what reads of the own rank must bring: a copy of the model as it is now */
static void
expect_reads(struct job *j, struct phase *ph)
{
	int i;
	size_t k;

	for (i = 0; i < ph->na; i++) {
		struct acc *a = &ph->a[i];
		int64_t s = 0, below;

		if (!a->rd)
			continue;
		/* bytes before the first past the end of the file */
		below = view_below(acc_view(ph, a), j->m.size);
		a->want = imax(0, imin(a->bytes, below - a->soff));
		if (a->rank != me || o.mode == MODE_DESCRIBE)
			continue;
		a->expect = xmalloc((size_t)a->bytes);
		for (k = 0; k < a->g.n && s < a->want; k++) {
			int64_t g = a->g.r[k].off, n = imin(a->g.r[k].len, a->want - s);

			memcpy(a->expect + s, j->m.img + g, (size_t)n);
			s += n;
		}
	}
}

static void
new_phase(struct job *j, int p, int fresh)
{
	struct phase *ph = &j->ph[p];
	struct gen gf, gm;
	int kind = rn(100), r;

	memset(ph, 0, sizeof(*ph));
	ph->kind = kind < 35 ? K_ZONE : kind < 60 ? K_INTERLEAVE : kind < 80 ? K_PARTITION
		 : K_SHARED;
	if (j->seq)	/* only the shared pointer moves data */
		ph->kind = K_SHARED;
	ph->dispcur = j->seq;
	kind = rn(100);
	ph->badcur = kind < 5 && !j->seq && !j->rd && !o.nodispcur;
	/* the file closed before the phase, and removed, or opened again as
	 * it is (not when an overlap must be avoided: fresh) */
	ph->amode = p ? j->ph[p - 1].amode : j->amode;
	kind = rn(100);
	ph->rmhow = rn(3);
	if (!j->rd && p > 0 && !o.norecreate && kind < 10)
		ph->reopen = kind < 6 ? RO_RECREATE : fresh ? RO_NONE : RO_REOPEN;
	if (ph->reopen == RO_RECREATE) {
		ph->amode = MPI_MODE_CREATE | MPI_MODE_EXCL | (j->seq ? MPI_MODE_WRONLY |
			    MPI_MODE_SEQUENTIAL : MPI_MODE_RDWR);
		j->m.size = 0;		/* the model starts again from nothing */
		if (j->m.cap) {
			memset(j->m.img, 0, (size_t)j->m.cap);
			memset(j->m.stamp, 0, (size_t)j->m.cap * sizeof(*j->m.stamp));
		}
	} else if (ph->reopen == RO_REOPEN) {
		ph->amode &= ~(MPI_MODE_CREATE | MPI_MODE_EXCL);
	}
	kind = rn(100);
	ph->etk = kind < 30 ? ET_BYTE : kind < 50 ? ET_INT : kind < 70 ? ET_DOUBLE
		: kind < 85 ? ET_INT3 : ET_IDI;
	/* ROMIO 4.0.2 seeks wrong through a resized etype (see --full) */
	if (ph->etk == ET_IDI && o.full && chance(50))
		ph->etk = ET_INTDBL;
	ph->et = mk_etype(ph->etk);
	ph->E = (int)ph->et->ext;
	for (r = 0; r < MAXP; r++)
		ph->pos[r] = 0;
	gf = (struct gen){ .E = ph->E, .etk = ph->etk, .et = ph->et, .mem = 0 };
	gm = gf;
	gm.mem = 1;
	/* where: after the file so far, or over an earlier phase's bytes */
	if (j->rd) {
		ph->base = j->m.size > 0 ? roundup(rn((int)j->m.size), ALIGN) - ALIGN : 0;
		ph->base = chance(20) ? 0 : imax(ph->base, 0);
	} else if (ph->dispcur) {
		/* MPI_DISPLACEMENT_CURRENT: where the shared pointer is, in bytes
		 * of the view before (after an open: the default view at 0) */
		const struct phase *q = &j->ph[p - (p > 0)];

		ph->base = p == 0 || ph->reopen ? 0 :
			   view_global(&q->v[0], q->st[q->nst - 1].sp_after * q->E);
	} else if (!fresh && p > 0 && chance(o.overlap ? 50 : 25)) {
		ph->base = j->ph[rn(p)].base;
	} else {
		ph->base = roundup(j->m.size, ALIGN);
		kind = rn(10);
		if (kind == 0)
			ph->base += ALIGN * rn(16384);	/* large-ish */
		else if (kind < 3)
			ph->base += ALIGN * rn(64);
	}
	gen_views(j, ph, &gf);
	/* a second handle on the path: on MPI_COMM_SELF (as PnetCDF's
	 * independent mode), or on a dup of the job's communicator; kept
	 * open from the phase before now and then */
	kind = rn(100);
	if (!j->rd && !j->seq && ph->kind != K_SHARED && !o.noalias) {
		if (p > 0 && j->ph[p - 1].alias && !ph->reopen && kind >= 75)
			ph->alias = j->ph[p - 1].alias;
		else
			ph->alias = kind < 10 ? AL_SELF : kind < 20 ? AL_DUP :
				    kind < 25 ? AL_SELF | AL_DUP : AL_NONE;
	}
	if (ph->kind == K_SHARED)
		gen_shared_steps(j, ph, &gm);
	else
		gen_steps(j, ph, &gm);
	gen_unsync(j, ph, &gm);
}

static void
gen_job(struct job *j, uint64_t seed, int nprocs, int rd)
{
	int p, tries;

	j->seed = seed;
	j->nprocs = nprocs;
	j->rd = rd;
	rnd_seed(mix(seed, rd ? 0x52454144 : 0x5752495445));
	j->amode = MPI_MODE_CREATE | (chance(70) ? MPI_MODE_RDWR : MPI_MODE_WRONLY);
	j->seq = chance(8) && !rd && !o.nodispcur;
	if (j->seq)	/* MPI: SEQUENTIAL with RDWR is erroneous */
		j->amode = MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL;
	if (rd)
		j->amode = MPI_MODE_RDONLY;
	j->nph = 1 + rn(rd ? 3 : 4);
	for (p = 0; p < j->nph; p++) {
		for (tries = 0;; tries++) {
			new_phase(j, p, tries > 0);
			if (!phase_model(j, p, 0))
				break;
			/* another rank's bytes and no epochs: again, elsewhere */
			phase_free(&j->ph[p]);
		}
		phase_model(j, p, 1);
		expect_reads(j, &j->ph[p]);
	}
}

/* ---- describing a job ---------------------------------------------------------- */

static void
describe_acc(FILE *f, const struct phase *ph, const struct acc *a, const char *pfx)
{
	const char *seek = a->seek == SEEK_SET_ ? " after seek(SET)" :
			   a->seek == SEEK_CUR_ ? " after seek(CUR)" : "";

	fprintf(f, "%sstep %d rank %d access %d: %s%s%s etype-offset %lld count %lld "
		"(%lld bytes) of %s%s%s -> file",
		pfx, a->step, a->rank, a->idx, a->h == AL_SELF ? "(COMM_SELF alias) " :
		a->h == AL_DUP ? "(dup alias) " : "", path_name(a->path, a->rd),
		(a->path & (P_AT | P_SHARED | P_ORDERED)) ? "" : seek,
		(long long)(a->soff / ph->E), (long long)a->count, (long long)a->bytes,
		a->mkind == M_BOTTOM ? "MPI_BOTTOM+hindexed of " :
		a->mkind == M_BOTTOM2 ? "MPI_BOTTOM+struct of 2 buffers of " : "",
		a->m->desc, a->rd && a->want < a->bytes ? " (short: end of file)" : "");
	if (!a->g.n)
		fprintf(f, " nothing");
	else
		fprintf(f, " [%lld, %lld) in %zu runs", (long long)a->g.r[0].off,
			(long long)(a->g.r[a->g.n - 1].off + a->g.r[a->g.n - 1].len), a->g.n);
	fprintf(f, "\n");
}

static void
describe_view(FILE *f, const struct phase *ph, int r, const char *pfx)
{
	const struct view *v = &ph->v[r];
	const struct ty *t = v->ft;

	fprintf(f, "%sview of rank %d: disp %lld etype %s filetype %s (size %lld, lb %ld, "
		"extent %ld, bytes at [%lld, %lld) of a tile; %s; %lld stream bytes used)\n",
		pfx, r, (long long)v->disp, ph->et->desc, t->desc, (long long)t->rs.size,
		(long)t->lb, (long)t->ext, (long long)t->tlb, (long long)t->tub, v->how,
		(long long)v->usable);
}

static void
describe_job(FILE *f, const struct job *j, int full, const char *pfx)
{
	int p, r, s, i;

	fprintf(f, "%sjob seed %" PRIu64 ": %s, %d ranks, %d phases, %s%s, file size %lld%s\n",
		pfx, j->seed, j->rd ? "reads" : "writes", j->nprocs, j->nph,
		j->amode & MPI_MODE_RDWR ? "RDWR" : j->amode & MPI_MODE_WRONLY ? "WRONLY"
		: "RDONLY", j->seq ? "|SEQUENTIAL" : "", (long long)j->m.size,
		o.overlap ? "" : ", --no-overlap-epochs");
	for (p = 0; p < j->nph; p++) {
		const struct phase *ph = &j->ph[p];

		if (ph->reopen == RO_REOPEN)
			fprintf(f, "%sthe file closed, opened again (%s, no CREATE)\n", pfx,
				ph->amode & MPI_MODE_RDWR ? "RDWR" : "WRONLY");
		else if (ph->reopen == RO_RECREATE)
			fprintf(f, "%sthe file closed, removed by rank 0 (%s), barrier, created "
				"again (CREATE|EXCL|RDWR): the model starts from nothing\n", pfx,
				rm_names[ph->rmhow]);
		fprintf(f, "%sphase %d: %s, etype %s, base %lld%s", pfx, p, kind_names[ph->kind],
			ph->et->desc, (long long)ph->base, ph->dispcur ?
			" (set_view at MPI_DISPLACEMENT_CURRENT)" : "");
		if (ph->alias)
			fprintf(f, ", handles on %s too", alias_names[ph->alias]);
		if (ph->badcur)
			fprintf(f, ", set_view at MPI_DISPLACEMENT_CURRENT refused first");
		if (ph->vshift)
			fprintf(f, ", the read without sync through the view of rank +%d",
				ph->vshift);
		if (ph->overlap)
			fprintf(f, ", rewrites %lld bytes other ranks wrote before",
				(long long)ph->overlap);
		fprintf(f, "; steps:");
		for (s = 0; s < ph->nst; s++)
			fprintf(f, " %s%s%s", s ? "; " : "", st_names[ph->st[s].type],
				ph->st[s].type != ST_UNSYNC ? "" : ph->st[s].sep == 2 ?
				" (no barrier)" : ph->st[s].sep == 1 && ph->vshift ?
				" (set_view, MPI_Barrier)" : " (MPI_Barrier first)");
		fprintf(f, "\n");
		for (r = 0; r < j->nprocs; r++) {
			char pp[64];

			snprintf(pp, sizeof(pp), "%s  ", pfx);
			describe_view(f, ph, r, pp);
		}
		for (i = 0; i < ph->na && full; i++) {
			char pp[64];

			snprintf(pp, sizeof(pp), "%s    ", pfx);
			describe_acc(f, ph, &ph->a[i], pp);
		}
	}
}

/* who wrote (or reads) byte g, and what the model holds there */
static void
describe_at(FILE *f, const struct job *j, int64_t g)
{
	int p, i;
	size_t k;

	fprintf(f, "byte %lld: the model holds 0x%02x (file size %lld)\n", (long long)g,
		g < j->m.size ? j->m.img[g] : 0, (long long)j->m.size);
	for (p = 0; p < j->nph; p++) {
		const struct phase *ph = &j->ph[p];

		for (i = 0; i < ph->na; i++) {
			const struct acc *a = &ph->a[i];
			int64_t s = 0;

			for (k = 0; k < a->g.n; k++) {
				if (g >= a->g.r[k].off && g < a->g.r[k].off + a->g.r[k].len) {
					s += g - a->g.r[k].off;
					fprintf(f, "phase %d (%s), stream byte %lld of ", p,
						kind_names[ph->kind], (long long)s);
					if (!a->rd)
						fprintf(f, "a write of 0x%02x: ",
							dbyte(acc_key(j->seed, p, a->rank, a->idx), s));
					else
						fprintf(f, "a read: ");
					describe_acc(f, ph, a, "");
					fprintf(f, "  ");
					describe_view(f, ph, a->vr >= 0 ? a->vr : a->rank, "");
					break;
				}
				s += a->g.r[k].len;
			}
		}
	}
}

/* ---- coverage ---------------------------------------------------------------- */

static struct {
	long fctor[C_NCTOR], mctor[C_NCTOR], path[2][P_N], kind[K_N], mkind[M_N], et[ET_N];
	long jobs, failed, phases, accesses, bytes, overlaps;
	long alias[3], reopen[3], rm[3], dispcur, badcur, seq, unsync;
} cov;

static void
cov_ty(long *tbl, const struct ty *y)
{
	int k;

	tbl[y->ctor]++;
	for (k = 0; k < y->nkid; k++)
		cov_ty(tbl, y->kid[k]);
}

static void
cov_print(const char *mode)
{
	long all[sizeof(cov) / sizeof(long)];
	int i, rd;

	MPI_Reduce(&cov, all, (int)(sizeof(cov) / sizeof(long)), MPI_LONG, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	if (me != 0)
		return;
	memcpy(&cov, all, sizeof(cov));
	printf("%s: %s: %ld jobs, %ld failed\n", prog, mode, cov.jobs / np, cov.failed / np);
	printf("%s: coverage: jobs=%ld phases=%ld accesses=%ld bytes=%ld overlap_phases=%ld",
	       prog, cov.jobs / np, cov.phases / np, cov.accesses, cov.bytes, cov.overlaps / np);
	for (i = 0; i < C_NCTOR; i++)
		printf(" file.%s=%ld", ctor_names[i], cov.fctor[i]);
	for (i = 0; i < C_NCTOR; i++)
		printf(" mem.%s=%ld", ctor_names[i], cov.mctor[i]);
	for (i = 0; i < M_N; i++)
		printf(" memkind.%s=%ld", mkind_names[i], cov.mkind[i]);
	for (i = 0; i < K_N; i++)
		printf(" kind.%s=%ld", kind_names[i], cov.kind[i] / np);
	for (i = 0; i < ET_N; i++)
		printf(" etype.%s=%ld", et_names[i], cov.et[i] / np);
	printf(" feat.alias_self=%ld feat.alias_dup=%ld feat.reopen=%ld feat.recreate=%ld"
	       " feat.rm_%s=%ld feat.rm_%s=%ld feat.rm_%s=%ld feat.sequential_jobs=%ld"
	       " feat.view_dispcur=%ld feat.dispcur_refused=%ld feat.unsync_reads=%ld",
	       cov.alias[AL_SELF] / np,
	       cov.alias[AL_DUP] / np, cov.reopen[RO_REOPEN] / np, cov.reopen[RO_RECREATE] / np,
	       rm_names[0], cov.rm[0] / np, rm_names[1], cov.rm[1] / np, rm_names[2],
	       cov.rm[2] / np, cov.seq / np, cov.dispcur / np, cov.badcur / np,
	       cov.unsync / np);
	for (rd = 0; rd < 2; rd++)
		for (i = 0; i < P_N; i++)
			if (cov.path[rd][i])
				printf(" %s=%ld", path_name(i, rd), cov.path[rd][i]);
	printf("\n");
	fflush(stdout);
}

/* ---- running a job --------------------------------------------------------------- */

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

/* count copies of m from base (an address) into r; the bytes they span */
static void
copies(struct runs *r, const struct ty *m, int64_t count, intptr_t base)
{
	int64_t i;

	for (i = 0; i < count; i++)
		runs_shift(r, &m->rs, (int64_t)base + i * m->ext);
}

static void
span_of(const struct ty *m, int64_t count, int64_t *lo, int64_t *hi)
{
	*lo = 0;
	*hi = 1;
	if (count <= 0 || !m->rs.size)
		return;
	*lo = imin(m->tlb, m->tlb + (count - 1) * m->ext);
	*hi = imax(m->tub, m->tub + (count - 1) * m->ext);
}

static int
io_prepare(const struct job *j, int p, const struct acc *a, struct io *io)
{
	int nb = a->mkind == M_BOTTOM2 && a->count >= 2 ? 2 : 1, b;
	int64_t cnt[2], lo, hi, k = 0;
	unsigned char fill = a->rd ? SENT_BYTE : GAP_BYTE;
	uint64_t key = acc_key(j->seed, p, a->rank, a->idx);
	size_t i;

	memset(io, 0, sizeof(*io));
	cnt[0] = nb == 2 ? a->count / 2 : a->count;
	cnt[1] = a->count - cnt[0];
	io->t = a->m->t;
	io->count = a->count;
	for (b = 0; b < nb; b++) {
		intptr_t base;

		span_of(a->m, cnt[b], &lo, &hi);
		io->len[b] = (size_t)(hi - lo);
		io->buf[b] = xmalloc(io->len[b]);
		memset(io->buf[b], fill, io->len[b]);
		base = (intptr_t)io->buf[b] - (intptr_t)lo;
		copies(&io->mr, a->m, cnt[b], base);
		if (b == 0)
			io->arg = (void *)base;
	}
	/* ROMIO 4.0.2 leaves the status of an ordered write of one element of
	 * an empty type as it was: nothing to wrap unless --full */
	if ((a->mkind == M_BOTTOM || a->mkind == M_BOTTOM2) && (a->count || o.full)) {
		MPI_Aint d[2];
		MPI_Datatype ts[2] = { a->m->t, a->m->t };
		int bl[2] = { (int)cnt[0], (int)cnt[1] }, rc;

		span_of(a->m, cnt[0], &lo, &hi);
		MPI_Get_address(io->buf[0], &d[0]);
		d[0] = MPI_Aint_add(d[0], (MPI_Aint)-lo);
		if (nb == 2) {
			span_of(a->m, cnt[1], &lo, &hi);
			MPI_Get_address(io->buf[1], &d[1]);
			d[1] = MPI_Aint_add(d[1], (MPI_Aint)-lo);
			rc = MPI_Type_create_struct(2, bl, d, ts, &io->t);
		} else if (child_ok(C_HINDEXED, a->m)) {
			rc = MPI_Type_create_hindexed(1, bl, d, a->m->t, &io->t);
		} else {	/* ROMIO: see child_ok() */
			rc = MPI_Type_create_struct(1, bl, d, ts, &io->t);
		}
		if (rc == MPI_SUCCESS)
			rc = MPI_Type_commit(&io->t);
		if (rc != MPI_SUCCESS)
			return must(rc, "MPI_Type_create_hindexed/struct (MPI_BOTTOM)");
		io->own_t = 1;
		io->arg = MPI_BOTTOM;
		io->count = 1;
	}
	if (!a->rd)
		for (i = 0; i < io->mr.n; i++) {
			unsigned char *q = (unsigned char *)(intptr_t)io->mr.r[i].off;
			int64_t n;

			for (n = 0; n < io->mr.r[i].len; n++)
				q[n] = dbyte(key, k++);
		}
	return 0;
}

static void
io_free(struct io *io)
{
	if (io->own_t)
		MPI_Type_free(&io->t);
	free(io->buf[0]);
	free(io->buf[1]);
	runs_free(&io->mr);
}

/* MPI_File_[i]{read,write}POST(ARGS) */
#define RW(rd, pre, post, ...)						\
	((rd) ? MPI_File_##pre##read##post(__VA_ARGS__)			\
	      : MPI_File_##pre##write##post(__VA_ARGS__))

/* the one call of path: post (nonblocking) or complete it; *half names
 * the part of a split collective that failed */
static int
call(MPI_File fh, int path, int rd, MPI_Offset off, void *b, MPI_Count c,
     MPI_Datatype t, MPI_Status *st, MPI_Request *rq, const char **half)
{
	int n = (int)c, rc;

	*half = "";
	switch (path) {
	case P_AT: return RW(rd, , _at, fh, off, b, n, t, st);
	case P_AT | P_LARGE: return RW(rd, , _at_c, fh, off, b, c, t, st);
	case P_AT | P_NB: return RW(rd, i, _at, fh, off, b, n, t, rq);
	case P_AT | P_NB | P_LARGE: return RW(rd, i, _at_c, fh, off, b, c, t, rq);
	case 0: return RW(rd, , , fh, b, n, t, st);
	case P_LARGE: return RW(rd, , _c, fh, b, c, t, st);
	case P_NB: return RW(rd, i, , fh, b, n, t, rq);
	case P_NB | P_LARGE: return RW(rd, i, _c, fh, b, c, t, rq);
	case P_AT | P_COLL: return RW(rd, , _at_all, fh, off, b, n, t, st);
	case P_AT | P_COLL | P_LARGE: return RW(rd, , _at_all_c, fh, off, b, c, t, st);
	case P_AT | P_COLL | P_NB: return RW(rd, i, _at_all, fh, off, b, n, t, rq);
	case P_AT | P_COLL | P_NB | P_LARGE: return RW(rd, i, _at_all_c, fh, off, b, c, t, rq);
	case P_COLL: return RW(rd, , _all, fh, b, n, t, st);
	case P_COLL | P_LARGE: return RW(rd, , _all_c, fh, b, c, t, st);
	case P_COLL | P_NB: return RW(rd, i, _all, fh, b, n, t, rq);
	case P_COLL | P_NB | P_LARGE: return RW(rd, i, _all_c, fh, b, c, t, rq);
	case P_SHARED: return RW(rd, , _shared, fh, b, n, t, st);
	case P_SHARED | P_LARGE: return RW(rd, , _shared_c, fh, b, c, t, st);
	case P_SHARED | P_NB: return RW(rd, i, _shared, fh, b, n, t, rq);
	case P_SHARED | P_NB | P_LARGE: return RW(rd, i, _shared_c, fh, b, c, t, rq);
	case P_ORDERED: return RW(rd, , _ordered, fh, b, n, t, st);
	case P_ORDERED | P_LARGE: return RW(rd, , _ordered_c, fh, b, c, t, st);
	case P_AT | P_COLL | P_SPLIT:
		rc = RW(rd, , _at_all_begin, fh, off, b, n, t);
		break;
	case P_AT | P_COLL | P_SPLIT | P_LARGE:
		rc = RW(rd, , _at_all_begin_c, fh, off, b, c, t);
		break;
	case P_COLL | P_SPLIT:
		rc = RW(rd, , _all_begin, fh, b, n, t);
		break;
	case P_COLL | P_SPLIT | P_LARGE:
		rc = RW(rd, , _all_begin_c, fh, b, c, t);
		break;
	case P_ORDERED | P_SPLIT:
		rc = RW(rd, , _ordered_begin, fh, b, n, t);
		break;
	case P_ORDERED | P_SPLIT | P_LARGE:
		rc = RW(rd, , _ordered_begin_c, fh, b, c, t);
		break;
	default:
		return MPI_ERR_ARG;
	}
	if (rc != MPI_SUCCESS)
		return rc;
	*half = "_end";
	if (path & P_ORDERED)
		return RW(rd, , _ordered_end, fh, b, st);
	if (path & P_AT)
		return RW(rd, , _at_all_end, fh, b, st);
	return RW(rd, , _all_end, fh, b, st);
}

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

static void
dump_read(struct run_ctx *x, int p, const struct acc *a, const struct io *io, int64_t got)
{
	int64_t s = 0, n;
	size_t k, i;
	const unsigned char *q;

	fprintf(x->dump, "seed %" PRIu64 " phase %d rank %d access %d %s etype-offset %lld "
		"count %lld bytes %lld got %lld\n", x->j->seed, p, a->rank, a->idx,
		path_name(a->path, 1), (long long)(a->soff / x->j->ph[p].E),
		(long long)a->count, (long long)a->bytes, (long long)got);
	/* walk the file runs and the memory runs side by side */
	for (k = 0, i = 0, n = 0; k < a->g.n && s < got; k++) {
		int64_t g = a->g.r[k].off, e = g + a->g.r[k].len;

		while (g < e && s < got) {
			int64_t line = imin(imin(32, e - g), got - s), c;

			fprintf(x->dump, "%012llx ", (long long)g);
			for (c = 0; c < line; c++) {
				while (n >= io->mr.r[i].len) {
					i++;
					n = 0;
				}
				q = (const unsigned char *)(intptr_t)io->mr.r[i].off;
				fprintf(x->dump, "%02x", q[n++]);
			}
			fprintf(x->dump, "\n");
			g += line;
			s += line;
		}
	}
}

/* the bytes a read brought against the model, and the memory gaps */
static void
verify_read(struct run_ctx *x, int p, const struct acc *a, const struct io *io, int64_t got)
{
	int64_t s = 0, n, fk = 0, fg = 0;
	size_t i, k = 0;
	int first = 1, wrong = 0;
	unsigned char w = 0, h = 0;

	for (i = 0; i < io->mr.n && s < imin(got, a->want); i++) {
		const unsigned char *q = (const unsigned char *)(intptr_t)io->mr.r[i].off;

		for (n = 0; n < io->mr.r[i].len && s < imin(got, a->want); n++, s++) {
			if (q[n] == a->expect[s])
				continue;
			if (first) {
				int64_t t = s;

				for (k = 0; k < a->g.n && t >= a->g.r[k].len; k++)
					t -= a->g.r[k].len;
				fg = a->g.r[k].off + t;
				fk = s;
				w = a->expect[s];
				h = q[n];
				first = 0;
			}
			wrong++;
		}
	}
	if (wrong) {
		x->bad = 1;
		if (x->nbad++ < 4)
			fail("phase %d step %d access %d %s: %d of %lld bytes differ from "
			     "the model; first: file byte %lld (stream byte %lld) is 0x%02x, "
			     "expected 0x%02x", p, a->step, a->idx, path_name(a->path, 1),
			     wrong, (long long)imin(got, a->want), (long long)fg,
			     (long long)fk, h, w);
	}
	/* gaps of the memory type keep what was there */
	if (io->mr.n) {
		int b;
		int64_t touched = 0;

		for (b = 0; b < 2; b++) {
			unsigned char *mark;
			intptr_t lo = (intptr_t)io->buf[b];

			if (!io->buf[b])
				continue;
			mark = calloc(io->len[b], 1);
			if (!mark)
				oom();
			for (i = 0; i < io->mr.n; i++) {
				intptr_t r0 = (intptr_t)io->mr.r[i].off;

				if (r0 >= lo && r0 < lo + (intptr_t)io->len[b])
					memset(mark + (r0 - lo), 1, (size_t)io->mr.r[i].len);
			}
			for (i = 0; i < io->len[b]; i++)
				if (!mark[i] && io->buf[b][i] != SENT_BYTE)
					touched++;
			free(mark);
		}
		if (touched) {
			x->bad = 1;
			fail("phase %d step %d access %d %s: %lld bytes of the gaps of the "
			     "memory type %s were written", p, a->step, a->idx,
			     path_name(a->path, 1), (long long)touched, a->m->desc);
		}
	}
}

/* after the call completed: status, pointer, data */
static void
finish(struct run_ctx *x, int p, const struct acc *a, struct io *io)
{
	MPI_Count got = -1, cnt = -1;
	int64_t want = a->rd ? a->want : a->bytes;

	if (MPI_Get_elements_x(&io->st, MPI_BYTE, &got) != MPI_SUCCESS)
		got = -1;
	if (got == a->bytes && a->bytes && MPI_Get_count_c(&io->st, io->t, &cnt) == MPI_SUCCESS &&
	    cnt != io->count) {
		x->bad = 1;
		fail("phase %d access %d %s: MPI_Get_count_c says %lld, asked for %lld",
		     p, a->idx, path_name(a->path, a->rd), (long long)cnt,
		     (long long)io->count);
	}
	if (got != want) {
		x->bad = 1;
		fail("phase %d access %d %s: the status says %lld bytes, expected %lld%s",
		     p, a->idx, path_name(a->path, a->rd), (long long)got, (long long)want,
		     a->rd && a->want < a->bytes ? " (a read past the end of the file)" : "");
	}
	if (a->rd) {
		if (x->dump)
			dump_read(x, p, a, io, got < 0 ? 0 : got);
		verify_read(x, p, a, io, got < 0 ? 0 : got);
	}
}

/* the handle an access goes through */
static MPI_File
acc_fh(const struct run_ctx *x, const struct acc *a)
{
	return a->h ? x->al[a->h] : x->fh;
}

static int
check_pos(struct run_ctx *x, int p, const struct acc *a)
{
	MPI_Offset pos;
	int rc;

	if (a->pos_after < 0 || (a->rd && a->want < a->bytes))
		return 0;
	rc = MPI_File_get_position(acc_fh(x, a), &pos);
	if (rc != MPI_SUCCESS)
		return must(rc, "MPI_File_get_position");
	if (pos != a->pos_after) {
		x->bad = 1;
		fail("phase %d access %d %s: MPI_File_get_position says %lld, expected %lld",
		     p, a->idx, path_name(a->path, a->rd), (long long)pos,
		     (long long)a->pos_after);
	}
	return 0;
}

/*
 * The own accesses v[0..n) of one step.  batch: all posted (nonblocking),
 * then one MPI_Waitall; else one after the other.  coll: every call is a
 * collective, so a rank whose call failed still makes the later ones.
 */
static int
run_accs(struct run_ctx *x, int p, struct acc **v, int n, int batch, int coll)
{
	struct io *io = xmalloc((size_t)(n ? n : 1) * sizeof(*io));
	MPI_Request *rq = xmalloc((size_t)(n ? n : 1) * sizeof(*rq));
	MPI_Status *sts = xmalloc((size_t)(n ? n : 1) * sizeof(*sts));
	int i, rc = 0, mrc, nposted = 0;
	const char *half;
	char name[96];

	memset(io, 0, (size_t)(n ? n : 1) * sizeof(*io));	/* io_free() of any */
	for (i = 0; i < n; i++) {
		struct acc *a = v[i];

		if (rc && !coll)
			break;
		if (io_prepare(x->j, p, a, &io[i])) {
			rc = -1;
			if (!coll)
				break;
			/* a collective must still be made: with nothing */
			io[i].t = MPI_BYTE;
			io[i].count = 0;
			io[i].arg = NULL;
		}
		if (a->seek != SEEK_NONE) {
			mrc = MPI_File_seek(acc_fh(x, a), a->seekarg, a->seek == SEEK_SET_ ?
					    MPI_SEEK_SET : MPI_SEEK_CUR);
			if (mrc != MPI_SUCCESS && (rc = must(mrc, "MPI_File_seek")) && !coll)
				break;
		}
		cov.path[a->rd][a->path]++;
		cov.accesses++;
		cov.bytes += a->bytes;
		cov.mkind[a->mkind]++;
		cov_ty(cov.mctor, a->m);
		ty_check(a->m);
		rq[i] = MPI_REQUEST_NULL;
		if (o.trace) {
			fprintf(stderr, "%s: rank %d: trace: phase %d ", prog, me, p);
			describe_acc(stderr, &x->j->ph[p], a, "");
		}
		mrc = call(acc_fh(x, a), a->path, a->rd, a->soff / x->j->ph[p].E, io[i].arg,
			   io[i].count, io[i].t, &io[i].st, &rq[i], &half);
		snprintf(name, sizeof(name), "%s%s", path_name(a->path, a->rd), half);
		if (mrc != MPI_SUCCESS) {
			rc = must(mrc, name);
			continue;
		}
		io[i].posted = 1;
		nposted = i + 1;
		if ((a->path & P_NB) && !batch) {
			mrc = MPI_Wait(&rq[i], &io[i].st);
			if (mrc != MPI_SUCCESS) {
				rc = must(mrc, "MPI_Wait");
				continue;
			}
		}
		if (!(a->path & (P_AT | P_SHARED | P_ORDERED)) && check_pos(x, p, a))
			rc = -1;
		if (!batch || !(a->path & P_NB))
			finish(x, p, a, &io[i]);
	}
	if (batch && nposted) {
		mrc = MPI_Waitall(nposted, rq, sts);
		if (mrc != MPI_SUCCESS)
			rc = must(mrc, "MPI_Waitall");
		for (i = 0; i < nposted && mrc == MPI_SUCCESS; i++)
			if (io[i].posted) {
				io[i].st = sts[i];
				finish(x, p, v[i], &io[i]);
			}
	}
	for (i = 0; i < n; i++)
		io_free(&io[i]);
	free(io);
	free(rq);
	free(sts);
	return rc;
}

/*
 * One step.  IN/OUT *pend: a failure of this rank not yet agreed on.  The
 * ranks agree before a step with collective calls (3 or 4 ranks share 2
 * cores here, and every collective costs milliseconds of polling: no more
 * of them than the rule needs) and after it; returns -1 if any rank failed.
 */
static int
run_step(struct run_ctx *x, int p, int s, int *pend)
{
	struct phase *ph = &x->j->ph[p];
	struct step *st = &ph->st[s];
	struct acc *v[64];
	int n = 0, i, rc = 0, t, tok = 0, coll = st->type != ST_INDEP &&
	    st->type != ST_INDEP_NB;

	for (i = 0; i < ph->na && n < 64; i++)
		if (ph->a[i].step == s && ph->a[i].rank == me)
			v[n++] = &ph->a[i];
	if (!coll && *pend)	/* this rank failed: nothing more until they agree */
		return 0;
	if (coll && agree(*pend))
		return -1;
	*pend = 0;
	switch (st->type) {
	case ST_INDEP:
		rc = run_accs(x, p, v, n, 0, 0);
		break;
	case ST_INDEP_NB:
		rc = run_accs(x, p, v, n, 1, 0);
		break;
	case ST_COLL:
	case ST_ORDERED:
		rc = run_accs(x, p, v, n, 0, 1);
		break;
	case ST_COLL_NB:
		rc = run_accs(x, p, v, n, 1, 1);
		break;
	case ST_SHARED:		/* one after the other: a token in the given order */
		for (t = 0; t < x->j->nprocs && st->order[t] != me; t++)
			;
		if (t > 0)
			MPI_Recv(&tok, 1, MPI_INT, st->order[t - 1], 77, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		rc = run_accs(x, p, v, n, 0, 0);
		if (t + 1 < x->j->nprocs)
			MPI_Send(&tok, 1, MPI_INT, st->order[t + 1], 77, MPI_COMM_WORLD);
		break;
	case ST_SEEKSH:
		i = MPI_File_seek_shared(x->fh, 0, MPI_SEEK_SET);
		if (i != MPI_SUCCESS)
			rc = must(i, "MPI_File_seek_shared");
		break;
	case ST_UNSYNC:		/* no MPI_File_sync: see gen_unsync() */
		if (st->sep == 0)
			MPI_Barrier(MPI_COMM_WORLD);
		if (ph->vshift) {
			const struct view *w = &ph->v[(me + ph->vshift) % x->j->nprocs];

			i = MPI_File_set_view(x->fh, w->disp, ph->et->t, w->ft->t, "native",
					      MPI_INFO_NULL);
			if (i != MPI_SUCCESS)
				rc = must(i, "MPI_File_set_view (another rank's view)");
			if (agree(rc))
				return -1;
		}
		if (st->sep == 1)
			MPI_Barrier(MPI_COMM_WORLD);
		cov.unsync++;
		rc = run_accs(x, p, v, n, 0, 1);
		break;
	}
	if (!coll) {
		*pend = rc;
		return 0;
	}
	if (agree(rc))		/* also: every rank's update of the pointer is in */
		return -1;
	/* MPI_MODE_SEQUENTIAL has no MPI_File_get_position_shared */
	if ((st->type == ST_ORDERED || st->type == ST_SHARED || st->type == ST_SEEKSH) &&
	    !x->j->seq) {
		MPI_Offset sp;
		int mrc = MPI_File_get_position_shared(x->fh, &sp);

		if (mrc != MPI_SUCCESS) {
			*pend = must(mrc, "MPI_File_get_position_shared");
		} else if (st->sp_after >= 0 && sp != st->sp_after) {
			x->bad = 1;
			fail("phase %d step %d (%s): MPI_File_get_position_shared says %lld, "
			     "expected %lld", p, s, st_names[st->type], (long long)sp,
			     (long long)st->sp_after);
		}
	}
	return 0;
}

/* MPI_File_open of the job's file on comm, with the job's hints */
static int
open_file(struct run_ctx *x, MPI_Comm comm, int amode, MPI_File *fh)
{
	MPI_Info info;
	int rc;

	/*
	 * ROMIO's data sieving and collective buffering write whole stretches
	 * of a new file, holes and all, from buffers it never initialised:
	 * the holes of the reference would hold garbage
	 */
	MPI_Info_create(&info);
	MPI_Info_set(info, "romio_ds_write", "disable");
	MPI_Info_set(info, "romio_cb_write", "disable");
	/* and its two-phase read aborts in ADIOI_Calc_aggregator() under some
	 * views (hindexed_block(3,[1@0,1@24,1@32],subarray(F,2,sub 1 at 0))) */
	MPI_Info_set(info, "romio_cb_read", "disable");
	rc = MPI_File_open(comm, x->file, amode, info, fh);
	MPI_Info_free(&info);
	if (rc != MPI_SUCCESS) {
		*fh = MPI_FILE_NULL;
		return must(rc, comm == MPI_COMM_WORLD ? "MPI_File_open" :
			    comm == MPI_COMM_SELF ? "MPI_File_open (MPI_COMM_SELF alias)" :
			    "MPI_File_open (MPI_Comm_dup alias)");
	}
	MPI_File_set_errhandler(*fh, MPI_ERRORS_RETURN);
	return 0;
}

/* the aliases of mask that are open: closed (before the first handle,
 * always: the library's aliases cannot outlive it); every rank agrees */
static int
close_alias(struct run_ctx *x, int mask)
{
	int rc = 0, mrc, k;

	for (k = AL_SELF; k <= AL_DUP; k++) {
		if (!(x->alias_kind & mask & k))
			continue;
		if (x->al[k] != MPI_FILE_NULL) {
			mrc = MPI_File_close(&x->al[k]);
			if (mrc != MPI_SUCCESS && !rc)
				rc = must(mrc, k == AL_SELF ? "MPI_File_close (MPI_COMM_SELF alias)"
					  : "MPI_File_close (MPI_Comm_dup alias)");
		}
		if (k == AL_DUP)
			MPI_Comm_free(&x->dupc);
		x->al[k] = MPI_FILE_NULL;
		x->alias_kind &= ~k;
	}
	return agree(rc);
}

/* the aliases of the phase that are not open yet */
static int
open_alias(struct run_ctx *x, const struct phase *ph)
{
	int rc = 0;

	if ((ph->alias & AL_SELF) && !(x->alias_kind & AL_SELF)) {
		/* as PnetCDF's independent mode: RDWR */
		x->alias_kind |= AL_SELF;
		rc = open_file(x, MPI_COMM_SELF, MPI_MODE_RDWR, &x->al[AL_SELF]);
		cov.alias[AL_SELF]++;
	}
	if ((ph->alias & AL_DUP) && !(x->alias_kind & AL_DUP)) {
		x->alias_kind |= AL_DUP;
		MPI_Comm_dup(MPI_COMM_WORLD, &x->dupc);
		MPI_Comm_set_errhandler(x->dupc, MPI_ERRORS_RETURN);
		if (open_file(x, x->dupc, ph->amode & ~(MPI_MODE_CREATE | MPI_MODE_EXCL),
			      &x->al[AL_DUP]))
			rc = -1;
		cov.alias[AL_DUP]++;
	}
	return agree(rc);
}

/* every open handle synced (MPI 4.1 14.6.1: sync, barrier, sync) */
static int
sync_all(struct run_ctx *x)
{
	int rc = MPI_File_sync(x->fh);

	if (rc != MPI_SUCCESS)
		rc = must(rc, "MPI_File_sync");
	if (!rc && x->al[AL_SELF] != MPI_FILE_NULL &&
	    (rc = MPI_File_sync(x->al[AL_SELF])) != MPI_SUCCESS)
		rc = must(rc, "MPI_File_sync (MPI_COMM_SELF alias)");
	if (!rc && x->al[AL_DUP] != MPI_FILE_NULL &&
	    (rc = MPI_File_sync(x->al[AL_DUP])) != MPI_SUCCESS)
		rc = must(rc, "MPI_File_sync (MPI_Comm_dup alias)");
	return agree(rc);
}

/* close the file; remove it (rank 0) if recreate; open it with amode */
static int
reopen(struct run_ctx *x, const struct phase *ph)
{
	int rc = 0, mrc;

	if (close_alias(x, AL_SELF | AL_DUP))
		return -1;
	mrc = MPI_File_close(&x->fh);
	if (mrc != MPI_SUCCESS)
		rc = must(mrc, "MPI_File_close (to open it again)");
	if (agree(rc))
		return -1;
	if (ph->reopen == RO_RECREATE && me == 0) {
		if (ph->rmhow == RM_DELETE) {
			mrc = MPI_File_delete(x->file, MPI_INFO_NULL);
			if (mrc != MPI_SUCCESS)
				rc = must(mrc, "MPI_File_delete");
		} else if ((ph->rmhow == RM_UNLINK ? unlink(x->file) : remove(x->file)) != 0) {
			rc = fail("%s '%s': %m", rm_names[ph->rmhow], x->file);
		}
	}
	cov.reopen[ph->reopen]++;
	if (ph->reopen == RO_RECREATE)
		cov.rm[ph->rmhow]++;
	MPI_Barrier(MPI_COMM_WORLD);
	if (agree(rc))
		return -1;
	return agree(open_file(x, MPI_COMM_WORLD, ph->amode, &x->fh));
}

/* MPI_File_set_view of one handle to view v; a view at
 * MPI_DISPLACEMENT_CURRENT must land at v->disp */
static int
set_view(MPI_File fh, const struct phase *ph, const struct view *v, const char *what)
{
	char name[96];
	MPI_Offset disp;
	MPI_Datatype et, ft;
	char rep[MPI_MAX_DATAREP_STRING + 1];
	int rc, ni, na, nd, comb;

	rc = MPI_File_set_view(fh, ph->dispcur ? MPI_DISPLACEMENT_CURRENT : v->disp,
			       ph->et->t, v->ft->t, "native", MPI_INFO_NULL);
	snprintf(name, sizeof(name), "MPI_File_set_view%s%s", ph->dispcur ?
		 " (MPI_DISPLACEMENT_CURRENT)" : "", what);
	if (rc != MPI_SUCCESS)
		return must(rc, name);
	if (!ph->dispcur)
		return 0;
	rc = MPI_File_get_view(fh, &disp, &et, &ft, rep);
	if (rc != MPI_SUCCESS)
		return must(rc, "MPI_File_get_view");
	if (MPI_Type_get_envelope(et, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
	    comb != MPI_COMBINER_NAMED)
		MPI_Type_free(&et);
	if (MPI_Type_get_envelope(ft, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
	    comb != MPI_COMBINER_NAMED)
		MPI_Type_free(&ft);
	if (disp != v->disp)
		return fail("%s: MPI_File_get_view says displacement %lld, expected %lld "
			    "(the shared pointer's byte)", name, (long long)disp,
			    (long long)v->disp);
	return 0;
}

static int
run_phase(struct run_ctx *x, int p)
{
	struct phase *ph = &x->j->ph[p];
	struct view *v = &ph->v[me];
	int rc, s, pend = 0;

	/* handles the phase has not: they go (all of them before a reopen) */
	if (close_alias(x, ph->reopen ? AL_SELF | AL_DUP : ~ph->alias))
		return -1;
	if (ph->reopen) {
		if (reopen(x, ph))
			return -1;
	} else if (p > 0 && !x->j->rd) {	/* MPI 4.1 14.6.1: sync, barrier, sync */
		if (sync_all(x))
			return -1;
		MPI_Barrier(MPI_COMM_WORLD);
		if (sync_all(x))
			return -1;
	}
	if (ph->alias != x->alias_kind && open_alias(x, ph))
		return -1;
	ty_check(v->ft);
	cov_ty(cov.fctor, v->ft);
	cov.kind[ph->kind]++;
	cov.et[ph->etk]++;
	cov.phases++;
	if (ph->overlap)
		cov.overlaps++;
	if (ph->dispcur)
		cov.dispcur++;
	rc = 0;
	if (ph->badcur) {	/* only MPI_MODE_SEQUENTIAL takes it */
		int cls = -1, mrc = MPI_File_set_view(x->fh, MPI_DISPLACEMENT_CURRENT,
						      ph->et->t, v->ft->t, "native",
						      MPI_INFO_NULL);

		MPI_Error_class(mrc, &cls);
		if (cls != MPI_ERR_ARG)
			rc = fail("MPI_File_set_view (MPI_DISPLACEMENT_CURRENT) of a file not "
				  "opened MPI_MODE_SEQUENTIAL returns error class %d, not "
				  "MPI_ERR_ARG", cls);
		cov.badcur++;
	}
	if (!rc)
		rc = set_view(x->fh, ph, v, "");
	/* the aliases' own views: the same as the rank's */
	if (!rc && x->al[AL_SELF] != MPI_FILE_NULL)
		rc = set_view(x->al[AL_SELF], ph, v, " (MPI_COMM_SELF alias)");
	if (!rc && x->al[AL_DUP] != MPI_FILE_NULL)
		rc = set_view(x->al[AL_DUP], ph, v, " (MPI_Comm_dup alias)");
	if (agree(rc))
		return -1;
	for (s = 0; s < ph->nst; s++)
		if (run_step(x, p, s, &pend))
			return -1;
	return agree(pend);
}

/* FILE with '@' the seed */
static char *
subst(const char *pat, uint64_t seed)
{
	const char *at = strchr(pat, '@');

	if (!at)
		return fmt("%s", pat);
	return fmt("%.*s%" PRIu64 "%s", (int)(at - pat), pat, seed, at + 1);
}

static int
write_model(const struct job *j, const char *path)
{
	FILE *f = fopen(path, "wb");
	int rc = 0;

	if (!f)
		return fail("cannot create '%s'", path);
	if (j->m.size && fwrite(j->m.img, 1, (size_t)j->m.size, f) != (size_t)j->m.size)
		rc = -1;
	if (fclose(f) || rc)
		return fail("cannot write '%s'", path);
	return 0;
}

static void
report_failure(const struct job *j, const char *file, const char *argv0)
{
	if (me != 0)
		return;
	fprintf(stderr, "%s: seed %" PRIu64 ": FAILED%s: reproduce: mpiexec -n %d %s %s %"
		PRIu64 " %s%s\n", prog, j->seed, tester_bug ? " (tester bug)" : "",
		np, argv0, j->rd ? "read" : "write", j->seed, file, o.cmdline);
	fprintf(stderr, "%s: seed %" PRIu64 ": the whole job: %s describe %" PRIu64
		" --nprocs=%d%s\n", prog, j->seed, argv0, j->seed, np, o.cmdline);
	describe_job(stderr, j, 0, "mpi_fuzzio:   ");
}

static int
run_job(uint64_t seed, const char *argv0)
{
	struct job j;
	struct run_ctx x = { .j = &j, .fh = MPI_FILE_NULL,
			     .al = { MPI_FILE_NULL, MPI_FILE_NULL, MPI_FILE_NULL },
			     .alias_kind = AL_NONE };
	char *file = subst(o.file, seed), *dump = NULL;
	int rc = 0, p, tb;

	x.file = file;

	set_cur_seed(seed);
	tester_bug = 0;
	memset(&j, 0, sizeof(j));
	if (o.mode == MODE_READ) {
		struct job w;

		memset(&w, 0, sizeof(w));
		gen_job(&w, seed, o.writers, 0);
		j.m = w.m;	/* the file the write job made */
		job_free(&w, 1);
		gen_job(&j, seed, np, 1);
	} else {
		gen_job(&j, seed, np, 0);
	}
	if (o.describe && me == 0)
		describe_job(stdout, &j, 1, "");
	if (o.model && me == 0 && o.mode == MODE_WRITE) {
		char *m = subst(o.model, seed);

		rc = write_model(&j, m);
		free(m);
	}
	if (o.dump) {
		char *d = subst(o.dump, seed);

		dump = fmt("%s.%d", d, me);
		free(d);
		x.dump = fopen(dump, "w");
		if (!x.dump)
			rc = fail("cannot create '%s'", dump);
	}
	if (agree(rc || tester_bug))
		goto out;
	if (o.mode == MODE_WRITE) {	/* a job starts from no file */
		if (me == 0)
			MPI_File_delete(file, MPI_INFO_NULL);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (j.seq)
		cov.seq++;
	rc = open_file(&x, MPI_COMM_WORLD, j.amode, &x.fh);
	if (agree(rc))
		goto close;
	if (j.rd && me == 0) {
		MPI_Offset size;
		int mrc = MPI_File_get_size(x.fh, &size);

		if (mrc != MPI_SUCCESS) {
			rc = must(mrc, "MPI_File_get_size");
		} else if (size != j.m.size) {
			x.bad = 1;
			fail("MPI_File_get_size says %lld, the model %lld", (long long)size,
			     (long long)j.m.size);
		}
	}
	if (agree(rc))
		goto close;
	for (p = 0; p < j.nph && !rc; p++)
		rc = run_phase(&x, p);
close:
	if (close_alias(&x, AL_SELF | AL_DUP))	/* before the first handle's close */
		rc = -1;
	if (x.fh != MPI_FILE_NULL) {
		int mrc = MPI_File_close(&x.fh);

		if (mrc != MPI_SUCCESS)
			rc = must(mrc, "MPI_File_close");
	}
out:
	if (x.dump && fclose(x.dump))
		rc = fail("cannot write '%s'", dump);
	tb = tester_bug;
	rc = agree(rc || x.bad || tb);
	MPI_Allreduce(MPI_IN_PLACE, &tb, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	tester_bug = tb;
	cov.jobs++;
	if (rc) {
		cov.failed++;
		report_failure(&j, file, argv0);
	}
	free(file);
	free(dump);
	job_free(&j, 0);
	pool_free();
	return rc;
}

/* ---- describe: a job on paper ---------------------------------------------------- */

static int
describe(void)
{
	struct job j;
	int rc = 0;

	set_cur_seed(o.seed);
	if (o.writers) {	/* a read job: the model of the write job first */
		struct job w;

		memset(&w, 0, sizeof(w));
		gen_job(&w, o.seed, o.writers, 0);
		memset(&j, 0, sizeof(j));
		j.m = w.m;
		job_free(&w, 1);
		gen_job(&j, o.seed, o.nprocs, 1);
	} else {
		memset(&j, 0, sizeof(j));
		gen_job(&j, o.seed, o.nprocs, 0);
	}
	if (o.at < 0)
		describe_job(stdout, &j, 1, "");
	else
		describe_at(stdout, &j, o.at);
	if (o.model)
		rc = write_model(&j, o.model);
	job_free(&j, 0);
	pool_free();
	return rc || tester_bug;
}

/*
 * ---- probe: the MPI library's own I/O through memory types.  On one
 * rank, K random memory types (as write jobs make them, seed SEED on),
 * each a random count of it written from memory with write_at, then
 * write_at_all, and read back with read_at and read_at_all, against
 * MPI_Pack and MPI_Unpack; a type the library gets wrong is printed.
 * This is how the rules that keep plain MPICH a valid reference (see
 * --full) were found.
 */
static int
probe_one(const struct ty *m, int64_t count, int bottom, const char *file)
{
	struct acc a = { .count = count, .m = (struct ty *)m, .mkind = bottom ? M_BOTTOM : M_CONTIG };
	struct job j = { .seed = cur_seed };
	struct io io;
	MPI_File fh;
	MPI_Status st;
	MPI_Info info;
	unsigned char *want, *got, *mem;
	int64_t n = count * m->rs.size, k;
	int bad = 0, way, rc;
	size_t i;

	if (io_prepare(&j, 0, &a, &io))
		return -1;
	want = xmalloc((size_t)n);
	got = xmalloc((size_t)n);
	/* the byte map, not MPI_Pack: MPICH 4.0.2 packs nothing from MPI_BOTTOM */
	for (i = 0, k = 0; i < io.mr.n; i++) {
		memcpy(want + k, (unsigned char *)(intptr_t)io.mr.r[i].off, (size_t)io.mr.r[i].len);
		k += io.mr.r[i].len;
	}
	MPI_Info_create(&info);
	MPI_Info_set(info, "romio_ds_write", "disable");
	MPI_Info_set(info, "romio_cb_write", "disable");
	for (way = 0; way < 4 && !bad; way++) {
		MPI_File_delete(file, MPI_INFO_NULL);
		rc = MPI_File_open(MPI_COMM_SELF, file, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
		if (rc != MPI_SUCCESS) {
			bad = must(rc, "MPI_File_open");
			break;
		}
		memset(got, 0, (size_t)n);
		if (way < 2) {		/* memory -> file */
			rc = way ? MPI_File_write_at_all(fh, 0, io.arg, (int)io.count, io.t, &st)
				 : MPI_File_write_at(fh, 0, io.arg, (int)io.count, io.t, &st);
			if (rc == MPI_SUCCESS)
				rc = MPI_File_read_at(fh, 0, got, (int)n, MPI_BYTE, &st);
		} else {		/* file -> memory, gaps kept */
			rc = MPI_File_write_at(fh, 0, want, (int)n, MPI_BYTE, &st);
			for (i = 0; i < 2; i++)
				if (io.buf[i])
					memset(io.buf[i], SENT_BYTE, io.len[i]);
			if (rc == MPI_SUCCESS)
				rc = way == 3 ? MPI_File_read_at_all(fh, 0, io.arg, (int)io.count, io.t, &st)
					      : MPI_File_read_at(fh, 0, io.arg, (int)io.count, io.t, &st);
			for (i = 0, k = 0; i < io.mr.n; i++) {
				mem = (unsigned char *)(intptr_t)io.mr.r[i].off;
				memcpy(got + k, mem, (size_t)io.mr.r[i].len);
				k += io.mr.r[i].len;
			}
		}
		MPI_File_close(&fh);
		if (rc != MPI_SUCCESS) {
			bad = 1;
			printf("probe: seed %" PRIu64 ": %s fails\n", cur_seed,
			       (const char *[]){ "write_at", "write_at_all", "read_at", "read_at_all" }[way]);
		} else if (memcmp(got, want, (size_t)n)) {
			for (k = 0; got[k] == want[k]; k++)
				;
			bad = 1;
			printf("probe: seed %" PRIu64 ": %s: stream byte %lld of %lld wrong\n", cur_seed,
			       (const char *[]){ "write_at", "write_at_all", "read_at", "read_at_all" }[way],
			       (long long)k, (long long)n);
		}
	}
	if (bad)
		printf("probe: seed %" PRIu64 ":   %lld of %s%s (lb %ld extent %ld, bytes at [%lld, %lld))\n",
		       cur_seed, (long long)count, bottom ? "MPI_BOTTOM+hindexed of " : "", m->desc,
		       (long)m->lb, (long)m->ext, (long long)m->tlb, (long long)m->tub);
	MPI_Info_free(&info);
	free(want);
	free(got);
	io_free(&io);
	return bad;
}

static int
probe(void)
{
	int i, bad = 0, kind;
	char *file = fmt("%s", o.file ? o.file : "mpi_fuzzio.probe");

	for (i = 0; i < o.cases; i++) {
		struct gen g = { .mem = 1 };
		struct ty *m;
		int64_t count;

		set_cur_seed(o.seed + (uint64_t)i);
		rnd_seed(mix(cur_seed, 0x50524f4245));
		g.etk = rn(ET_N);
		if (g.etk == ET_INTDBL && !o.full)
			g.etk = ET_IDI;
		g.et = mk_etype(g.etk);
		g.E = (int)g.et->ext;
		m = pick_mem(&g, &kind);
		count = mem_fit(m, 1 + rn(5));
		ty_check(m);
		if (probe_one(m, count, kind == M_BOTTOM, file))
			bad++;
		pool_free();
	}
	MPI_File_delete(file, MPI_INFO_NULL);
	free(file);
	printf("probe: %d of %d memory types wrong\n", bad, o.cases);
	return bad != 0 || tester_bug;
}

/* ---- options ------------------------------------------------------------------- */

static int
usage(const char *msg)
{
	if (me == 0)
		fprintf(stderr, "%s: %s\nusage: mpiexec -n N mpi_fuzzio write SEED FILE "
			"[--cases=K] [--model=PATH]\n"
			"       mpiexec -n M mpi_fuzzio read SEED FILE --writers=N [--cases=K] "
			"[--dump=PATH]\n"
			"       mpi_fuzzio describe SEED --nprocs=N [--writers=W] [--at=OFFSET] "
			"[--model=PATH]\n"
			"       mpi_fuzzio probe SEED [--cases=K] [FILE]\n"
			"job options: --no-overlap-epochs --full --no-bottom --no-alias "
			"--no-unsync-read\n             --no-recreate --no-dispcur; also --describe "
			"--trace --quiet\n"
			"'@' in FILE and PATH: the seed\n", prog, msg);
	return 2;
}

static int
num(const char *s, long long lo, long long hi, long long *v)
{
	char *end;

	*v = strtoll(s, &end, 10);
	return end == s || *end || *v < lo || *v > hi ? -1 : 0;
}

static int
options(int argc, char **argv)
{
	long long v;
	size_t len = 0;
	int a, first;

	if (argc < 3)
		return usage("missing arguments");
	if (!strcmp(argv[1], "write"))
		o.mode = MODE_WRITE;
	else if (!strcmp(argv[1], "read"))
		o.mode = MODE_READ;
	else if (!strcmp(argv[1], "describe"))
		o.mode = MODE_DESCRIBE;
	else if (!strcmp(argv[1], "probe"))
		o.mode = MODE_PROBE;
	else
		return usage("the mode is write, read or describe");
	if (num(argv[2], 0, LLONG_MAX, &v))
		return usage("bad SEED");
	o.seed = (uint64_t)v;
	first = 3;
	if (o.mode == MODE_PROBE && argc > 3 && argv[3][0] != '-') {
		o.file = argv[3];
		first = 4;
	} else if (o.mode != MODE_DESCRIBE && o.mode != MODE_PROBE) {
		if (argc < 4)
			return usage("missing FILE");
		o.file = argv[3];
		first = 4;
	}
	for (a = first; a < argc; a++) {
		const char *s = argv[a];
		int repeat = 1;

		if (!strncmp(s, "--cases=", 8)) {
			if (num(s + 8, 1, 1000000, &v))
				return usage("bad --cases");
			o.cases = (int)v;
			repeat = 0;
		} else if (!strncmp(s, "--writers=", 10)) {
			if (num(s + 10, 1, MAXP, &v))
				return usage("bad --writers");
			o.writers = (int)v;
		} else if (!strncmp(s, "--nprocs=", 9)) {
			if (num(s + 9, 1, MAXP, &v))
				return usage("bad --nprocs");
			o.nprocs = (int)v;
			repeat = 0;
		} else if (!strncmp(s, "--at=", 5)) {
			if (num(s + 5, 0, LLONG_MAX, &v))
				return usage("bad --at");
			o.at = v;
			repeat = 0;
		} else if (!strncmp(s, "--model=", 8)) {
			o.model = s + 8;
			repeat = 0;
		} else if (!strncmp(s, "--dump=", 7)) {
			o.dump = s + 7;
			repeat = 0;
		} else if (!strcmp(s, "--overlap-epochs")) {
			o.overlap = 1;
		} else if (!strcmp(s, "--no-overlap-epochs")) {
			o.overlap = 0;
		} else if (!strcmp(s, "--full")) {
			o.full = 1;
		} else if (!strcmp(s, "--no-bottom")) {
			o.nobottom = 1;
		} else if (!strcmp(s, "--no-alias")) {
			o.noalias = 1;
		} else if (!strcmp(s, "--no-unsync-read")) {
			o.nounsync = 1;
		} else if (!strcmp(s, "--no-recreate")) {
			o.norecreate = 1;
		} else if (!strcmp(s, "--no-dispcur")) {
			o.nodispcur = 1;
		} else if (!strcmp(s, "--describe")) {
			o.describe = 1;
			repeat = 0;
		} else if (!strcmp(s, "--trace")) {
			o.trace = 1;
			repeat = 0;
		} else if (!strcmp(s, "--quiet")) {
			o.quiet = 1;
			repeat = 0;
		} else {
			return usage("unknown option");
		}
		if (repeat && len + strlen(s) + 2 < sizeof(o.cmdline))
			len += (size_t)snprintf(o.cmdline + len, sizeof(o.cmdline) - len,
						" %s", s);
	}
	if (o.mode == MODE_READ && !o.writers)
		return usage("read needs --writers=N (the ranks that wrote FILE)");
	if (o.mode == MODE_DESCRIBE && !o.nprocs)
		return usage("describe needs --nprocs=N");
	if (o.cases > 1 && o.file && (!strchr(o.file, '@') || (o.model && !strchr(o.model, '@')) ||
			    (o.dump && !strchr(o.dump, '@'))))
		return usage("with --cases, FILE, --model and --dump need an '@'");
	return 0;
}

int
main(int argc, char **argv)
{
	int rc, i, failed = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

	rc = options(argc, argv);
	if (!rc && o.mode != MODE_DESCRIBE && np > MAXP)
		rc = usage("at most 4 ranks");
	if (rc) {
		MPI_Finalize();
		return rc;
	}
	if (o.mode == MODE_PROBE) {
		rc = probe();
		MPI_Finalize();
		return rc ? 1 : 0;
	}
	if (o.mode == MODE_DESCRIBE) {
		rc = describe();
		MPI_Finalize();
		return rc ? 1 : 0;
	}
	for (i = 0; i < o.cases; i++)
		if (run_job(o.seed + (uint64_t)i, argv[0]))
			failed++;
	if (!o.quiet)
		cov_print(o.mode == MODE_WRITE ? "write" : "read");
	MPI_Finalize();
	return failed ? 1 : 0;
}
