/*
 * mpi_fuzzio (main.c: its options and driver) - helper of
 * tests/cmd/mpiio_diff.sh; not a test by itself.
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
#include "fuzzio.h"

int me, np;			/* MPI_COMM_WORLD */
const char *prog = "mpi_fuzzio";
struct opts o = { .cases = 1, .at = -1, .overlap = 1 };

/* ---- options ------------------------------------------------------------------- */

int
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

int
num(const char *s, long long lo, long long hi, long long *v)
{
	char *end;

	*v = strtoll(s, &end, 10);
	return end == s || *end || *v < lo || *v > hi ? -1 : 0;
}

int
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
