/*
 * mpi_conform.c - corners of MPI-IO where the preload library must answer
 * as MPICH does (error classes, info, sequential mode, external32).
 * Plain MPI-IO: the same run on
 * MPICH alone and under the preload prints the same lines, and the files
 * it writes merge to the same bytes (tests/cmd/mpiio_mpich.sh compares).
 * Rank 0 prints; every rank makes every call.
 *
 *   mpi_conform errors DIR     a table of invalid calls, each with
 *                              MPI_ERRORS_RETURN: "name class" lines.
 *                              Opens DIR/e.w (created, write-only), then
 *                              DIR/e.w again read-only (a split file by
 *                              then, under the preload), DIR/e.q
 *                              (sequential), and bad amodes on DIR/e.a*
 *   mpi_conform info FILE      MPI_File_get_info after an open with hints,
 *                              after MPI_File_set_info and after a
 *                              set_view with hints: "key=value" lines
 *                              (not hints on some ranks only: MPICH's
 *                              set_view fails in a collective then)
 *   mpi_conform seq FILE       MPI_MODE_SEQUENTIAL: write_ordered,
 *                              write_shared, set_view with
 *                              MPI_DISPLACEMENT_CURRENT, more writes;
 *                              prints the views and pointers it sees
 *   mpi_conform ext32 FILE     writes through "external32" views (ints
 *                              through a strided filetype, doubles, shorts
 *                              from a strided memory type), then reads it
 *                              back in external32, native and internal and
 *                              prints values (and get_byte_offset of a
 *                              negative offset: MPICH calls the handler
 *                              and returns MPI_SUCCESS)
 *   mpi_conform ext32-calls FILE  rank 0 alone: every write call, then
 *                              every read call, through an external32
 *                              view (which convert in MPICH, which not)
 *   mpi_conform ext32-read FILE  only the reads of ext32 (a file written
 *                              before, by MPICH or the preload)
 *
 * Exit 0 unless an MPI call that must succeed failed ("mpi_conform: rank
 * R: CALL: ..." on stderr).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>

#include "mpi4.h"
#include "testutil.h"

static int rank, nprocs;

static void
say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
say(const char *fmt, ...)
{
	va_list ap;

	if (rank != 0)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* ------------------------------------------------------------ errors */

static const char *
class_name(int cls)
{
	static char other[32];

	switch (cls) {
	case MPI_SUCCESS:			return "MPI_SUCCESS";
	case MPI_ERR_ARG:			return "MPI_ERR_ARG";
	case MPI_ERR_TYPE:			return "MPI_ERR_TYPE";
	case MPI_ERR_COUNT:			return "MPI_ERR_COUNT";
	case MPI_ERR_IO:			return "MPI_ERR_IO";
	case MPI_ERR_AMODE:			return "MPI_ERR_AMODE";
	case MPI_ERR_ACCESS:			return "MPI_ERR_ACCESS";
	case MPI_ERR_READ_ONLY:			return "MPI_ERR_READ_ONLY";
	case MPI_ERR_FILE:			return "MPI_ERR_FILE";
	case MPI_ERR_FILE_EXISTS:		return "MPI_ERR_FILE_EXISTS";
	case MPI_ERR_NO_SUCH_FILE:		return "MPI_ERR_NO_SUCH_FILE";
	case MPI_ERR_UNSUPPORTED_DATAREP:	return "MPI_ERR_UNSUPPORTED_DATAREP";
	case MPI_ERR_UNSUPPORTED_OPERATION:	return "MPI_ERR_UNSUPPORTED_OPERATION";
	case MPI_ERR_NOT_SAME:			return "MPI_ERR_NOT_SAME";
	case MPI_ERR_OTHER:			return "MPI_ERR_OTHER";
	case MPI_ERR_INTERN:			return "MPI_ERR_INTERN";
	}
	snprintf(other, sizeof(other), "class %d", cls);
	return other;
}

static void
result(const char *name, int rc)
{
	int cls = rc;

	if (rc != MPI_SUCCESS)
		MPI_Error_class(rc, &cls);
	say("%-34s %s\n", name, class_name(cls));
}

/* Filetypes MPI or ROMIO refuse in a view: MPI_DATATYPE_NULL: none. */
enum { T_DECREASING, T_NEGATIVE, T_MISMATCH, T_UNCOMMITTED, T_OVERLAP,
       T_NTYPES };

static MPI_Datatype
bad_type(int which)
{
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int bl[2] = { 4, 4 }, d[2];

	switch (which) {
	case T_DECREASING:	/* blocks at 8, then 0 */
		d[0] = 8, d[1] = 0;
		MPI_Type_indexed(2, bl, d, MPI_BYTE, &t);
		break;
	case T_NEGATIVE:	/* a block before the displacement */
		d[0] = -8, d[1] = 0;
		MPI_Type_indexed(2, bl, d, MPI_BYTE, &t);
		break;
	case T_MISMATCH:	/* 6 bytes: not a whole number of ints */
		MPI_Type_contiguous(6, MPI_BYTE, &t);
		break;
	case T_UNCOMMITTED:
		MPI_Type_contiguous(8, MPI_BYTE, &t);
		return t;
	case T_OVERLAP:		/* both blocks at 0 */
		d[0] = 0, d[1] = 0;
		MPI_Type_indexed(2, bl, d, MPI_BYTE, &t);
		break;
	}
	MPI_Type_commit(&t);
	return t;
}

/* The calls of the table on one open handle; tag names the handle. */
static void
handle_calls(MPI_File fh, const char *tag, int seq)
{
	MPI_Datatype t[T_NTYPES];
	MPI_Offset off = 0;
	MPI_Aint ext = 0;
	char name[64], buf[64] = { 0 };
	int i;

	for (i = 0; i < T_NTYPES; i++)
		t[i] = bad_type(i);
#define ROW(label, call) do {						\
		snprintf(name, sizeof(name), "%s %s", tag, label);	\
		result(name, call);					\
	} while (0)
	if (!seq)
		ROW("view disp current", MPI_File_set_view(fh,
		    MPI_DISPLACEMENT_CURRENT, MPI_BYTE, MPI_BYTE, "native",
		    MPI_INFO_NULL));
	ROW("view disp -1", MPI_File_set_view(fh, -1, MPI_BYTE, MPI_BYTE,
	    "native", MPI_INFO_NULL));
	ROW("view decreasing", MPI_File_set_view(fh, 0, MPI_BYTE,
	    t[T_DECREASING], "native", MPI_INFO_NULL));
	ROW("view negative block", MPI_File_set_view(fh, 64, MPI_BYTE,
	    t[T_NEGATIVE], "native", MPI_INFO_NULL));
	ROW("view etype mismatch", MPI_File_set_view(fh, 0, MPI_INT,
	    t[T_MISMATCH], "native", MPI_INFO_NULL));
	ROW("view uncommitted", MPI_File_set_view(fh, 0, MPI_BYTE,
	    t[T_UNCOMMITTED], "native", MPI_INFO_NULL));
	ROW("view etype null", MPI_File_set_view(fh, 0, MPI_DATATYPE_NULL,
	    MPI_BYTE, "native", MPI_INFO_NULL));
	ROW("view filetype null", MPI_File_set_view(fh, 0, MPI_BYTE,
	    MPI_DATATYPE_NULL, "native", MPI_INFO_NULL));
	ROW("view datarep foo", MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE,
	    "foo", MPI_INFO_NULL));
	ROW("view datarep Native", MPI_File_set_view(fh, 0, MPI_BYTE,
	    MPI_BYTE, "Native", MPI_INFO_NULL));
	ROW("view overlap", MPI_File_set_view(fh, 0, MPI_BYTE, t[T_OVERLAP],
	    "native", MPI_INFO_NULL));
	/* back to a plain view for what follows (sequential: not allowed) */
	ROW("view plain", MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE,
	    "native", MPI_INFO_NULL));
	ROW("seek whence 99", MPI_File_seek(fh, 0, 99));
	ROW("seek set -1", MPI_File_seek(fh, -1, MPI_SEEK_SET));
	ROW("seek cur -1", MPI_File_seek(fh, -1, MPI_SEEK_CUR));
	/* ROMIO checks seek_shared's whence and result on rank 0 alone,
	 * and the other ranks wait in its barrier: one rank only */
	if (nprocs == 1) {
		ROW("seek_shared whence 99", MPI_File_seek_shared(fh, 0, 99));
		ROW("seek_shared set -1", MPI_File_seek_shared(fh, -1,
		    MPI_SEEK_SET));
	}
	ROW("get_position", MPI_File_get_position(fh, &off));
	ROW("get_byte_offset -1", MPI_File_get_byte_offset(fh, -1, &off));
	ROW("get_type_extent null", MPI_File_get_type_extent(fh,
	    MPI_DATATYPE_NULL, &ext));
	ROW("set_size -1", MPI_File_set_size(fh, -1));
	ROW("preallocate -1", MPI_File_preallocate(fh, -1));
	ROW("set_size 16", MPI_File_set_size(fh, 16));
	ROW("write_at 0", MPI_File_write_at(fh, 0, buf, 4, MPI_BYTE,
	    MPI_STATUS_IGNORE));
	ROW("read_at 0", MPI_File_read_at(fh, 0, buf, 4, MPI_BYTE,
	    MPI_STATUS_IGNORE));
	ROW("write_all", MPI_File_write_all(fh, buf, 4, MPI_BYTE,
	    MPI_STATUS_IGNORE));
	ROW("write_ordered", MPI_File_write_ordered(fh, buf, 4, MPI_BYTE,
	    MPI_STATUS_IGNORE));
	ROW("read_ordered", MPI_File_read_ordered(fh, buf, 4, MPI_BYTE,
	    MPI_STATUS_IGNORE));
	ROW("write", MPI_File_write(fh, buf, 4, MPI_BYTE,
	    MPI_STATUS_IGNORE));
	ROW("read", MPI_File_read(fh, buf, 4, MPI_BYTE, MPI_STATUS_IGNORE));
	ROW("write_at -1", MPI_File_write_at(fh, -1, buf, 4, MPI_BYTE,
	    MPI_STATUS_IGNORE));
	ROW("read_at -1", MPI_File_read_at(fh, -1, buf, 4, MPI_BYTE,
	    MPI_STATUS_IGNORE));
	ROW("write_at count -1", MPI_File_write_at(fh, 0, buf, -1, MPI_BYTE,
	    MPI_STATUS_IGNORE));
	ROW("read_at count -1", MPI_File_read_at(fh, 0, buf, -1, MPI_BYTE,
	    MPI_STATUS_IGNORE));
	ROW("write_at type null", MPI_File_write_at(fh, 0, buf, 4,
	    MPI_DATATYPE_NULL, MPI_STATUS_IGNORE));
	ROW("read_at uncommitted", MPI_File_read_at(fh, 0, buf, 1,
	    t[T_UNCOMMITTED], MPI_STATUS_IGNORE));
	ROW("write_at_all -1", MPI_File_write_at_all(fh, -1, buf, 4,
	    MPI_BYTE, MPI_STATUS_IGNORE));
	ROW("write_shared", MPI_File_write_shared(fh, buf, 4, MPI_BYTE,
	    MPI_STATUS_IGNORE));
	ROW("read_shared", MPI_File_read_shared(fh, buf, 4, MPI_BYTE,
	    MPI_STATUS_IGNORE));
	if (!seq) {
		/* an int etype: 3 bytes are not a whole etype */
		ROW("view int", MPI_File_set_view(fh, 0, MPI_INT, MPI_INT,
		    "native", MPI_INFO_NULL));
		ROW("write_at 3 bytes of int view", MPI_File_write_at(fh, 0,
		    buf, 3, MPI_BYTE, MPI_STATUS_IGNORE));
		ROW("read_at 3 bytes of int view", MPI_File_read_at(fh, 0,
		    buf, 3, MPI_BYTE, MPI_STATUS_IGNORE));
		ROW("read_shared 3 bytes of int view", MPI_File_read_shared(fh,
		    buf, 3, MPI_BYTE, MPI_STATUS_IGNORE));
		ROW("write_ordered 3 bytes of int view",
		    MPI_File_write_ordered(fh, buf, 3, MPI_BYTE,
		    MPI_STATUS_IGNORE));
		ROW("view back", MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE,
		    "native", MPI_INFO_NULL));
	}
#undef ROW
	for (i = 0; i < T_NTYPES; i++)
		MPI_Type_free(&t[i]);
}

static void
do_errors(const char *dir)
{
	static const struct { const char *label; int amode; int exist; } am[] = {
		{ "rdonly|create", MPI_MODE_RDONLY | MPI_MODE_CREATE, 0 },
		{ "rdonly|excl", MPI_MODE_RDONLY | MPI_MODE_EXCL, 1 },
		{ "rdwr|sequential", MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, 0 },
		{ "rdonly|wronly", MPI_MODE_RDONLY | MPI_MODE_WRONLY |
		    MPI_MODE_CREATE, 0 },
		{ "no access mode", MPI_MODE_CREATE, 0 },
		{ "excl, exists", MPI_MODE_WRONLY | MPI_MODE_CREATE |
		    MPI_MODE_EXCL, 1 },
		{ "no create, absent", MPI_MODE_WRONLY, 0 },
	};
	char path[4096], w[4096], name[64];
	MPI_File fh = MPI_FILE_NULL;
	size_t i;
	int rc;

	MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
	snprintf(w, sizeof(w), "%s/e.w", dir);
	rc = MPI_File_open(MPI_COMM_WORLD, w, MPI_MODE_CREATE |
	    MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
	if (must(rc, "open e.w"))
		return;
	MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
	/* something to read past, on a 4-byte boundary */
	if (rank == 0)
		must(MPI_File_write_at(fh, 0, "0123456789abcdef", 16, MPI_BYTE,
		    MPI_STATUS_IGNORE), "write_at e.w");
	handle_calls(fh, "wronly", 0);
	must(MPI_File_close(&fh), "close e.w");

	rc = MPI_File_open(MPI_COMM_WORLD, w, MPI_MODE_RDONLY, MPI_INFO_NULL,
	    &fh);
	if (must(rc, "open e.w read-only"))
		return;
	MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
	handle_calls(fh, "rdonly", 0);
	must(MPI_File_close(&fh), "close e.w read-only");

	snprintf(path, sizeof(path), "%s/e.q", dir);
	rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE |
	    MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh);
	if (must(rc, "open e.q"))
		return;
	MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
	handle_calls(fh, "sequential", 1);
	must(MPI_File_close(&fh), "close e.q");

	for (i = 0; i < sizeof(am) / sizeof(am[0]); i++) {
		snprintf(path, sizeof(path), "%s/e.a%zu", dir, i);
		if (am[i].exist) {
			must(MPI_File_open(MPI_COMM_WORLD, path,
			    MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
			    &fh), "open to create");
			must(MPI_File_close(&fh), "close");
		}
		fh = MPI_FILE_NULL;
		rc = MPI_File_open(MPI_COMM_WORLD, path, am[i].amode,
		    MPI_INFO_NULL, &fh);
		snprintf(name, sizeof(name), "open %s", am[i].label);
		result(name, rc);
		if (rc == MPI_SUCCESS)
			MPI_File_close(&fh);
	}
}

/* -------------------------------------------------------------- info */

static void
print_info(MPI_File fh, const char *when)
{
	char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
	MPI_Info info;
	int n = 0, i, flag;

	if (must(MPI_File_get_info(fh, &info), "get_info"))
		return;
	MPI_Info_get_nkeys(info, &n);
	say("-- %s: %d keys\n", when, n);
	for (i = 0; i < n; i++) {
		MPI_Info_get_nthkey(info, i, key);
		MPI_Info_get(info, key, MPI_MAX_INFO_VAL, val, &flag);
		say("%s=%s\n", key, val);
	}
	MPI_Info_free(&info);
}

static void
do_info(const char *path)
{
	MPI_Info info;
	MPI_File fh;

	MPI_Info_create(&info);
	MPI_Info_set(info, "romio_ds_write", "disable");
	MPI_Info_set(info, "romio_cb_write", "enable");
	MPI_Info_set(info, "cb_buffer_size", "1048576");
	MPI_Info_set(info, "striping_unit", "65536");
	MPI_Info_set(info, "ind_wr_buffer_size", "131072");
	MPI_Info_set(info, "no_such_hint", "whatever");
	/* an aggregator per process: what MPICH returns depends on the
	 * communicator of the open */
	MPI_Info_set(info, "cb_config_list", "*:*");
	MPI_Info_set(info, "cb_nodes", "2");
	if (must(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE |
	    MPI_MODE_RDWR, info, &fh), "open"))
		return;
	MPI_Info_free(&info);
	print_info(fh, "open");

	MPI_Info_create(&info);
	MPI_Info_set(info, "romio_cb_read", "disable");
	MPI_Info_set(info, "cb_buffer_size", "2097152");
	MPI_Info_set(info, "romio_ds_read", "enable");
	must(MPI_File_set_info(fh, info), "set_info");
	MPI_Info_free(&info);
	print_info(fh, "set_info");

	MPI_Info_create(&info);
	MPI_Info_set(info, "romio_ds_write", "enable");
	MPI_Info_set(info, "ind_rd_buffer_size", "65536");
	must(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", info),
	    "set_view");
	MPI_Info_free(&info);
	print_info(fh, "set_view");
	must(MPI_File_close(&fh), "close");
}

/* -------------------------------------------------------- sequential */

/* seq: MPI_MODE_SEQUENTIAL, where MPICH answers no position */
static void
show_view(MPI_File fh, const char *when, int seq)
{
	MPI_Datatype e, t;
	MPI_Offset disp = -1, sh = -1, b = -1;
	char rep[MPI_MAX_DATAREP_STRING + 1] = "";
	int esz = 0, tsz = 0, ni, na, nd, comb;

	if (must(MPI_File_get_view(fh, &disp, &e, &t, rep), "get_view"))
		return;
	MPI_Type_size(e, &esz);
	MPI_Type_size(t, &tsz);
	if (!seq) {
		must(MPI_File_get_position_shared(fh, &sh),
		    "get_position_shared");
		must(MPI_File_get_byte_offset(fh, sh, &b), "get_byte_offset");
	}
	say("%s: disp %lld etype %d filetype %d datarep %s shared %lld "
	    "byte %lld\n", when, (long long)disp, esz, tsz, rep,
	    (long long)sh, (long long)b);
	MPI_Type_get_envelope(e, &ni, &na, &nd, &comb);
	if (comb != MPI_COMBINER_NAMED)
		MPI_Type_free(&e);
	MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
	if (comb != MPI_COMBINER_NAMED)
		MPI_Type_free(&t);
}

static void
do_seq(const char *path)
{
	MPI_Datatype ft, two;
	MPI_Info info;
	MPI_File fh;
	char c[64];
	int v[16], i, rc;

	/* ROMIO's data sieving would fill the view's holes past the end
	 * with whatever its buffer held: no sieving, holes are holes */
	MPI_Info_create(&info);
	MPI_Info_set(info, "romio_ds_write", "disable");
	rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE |
	    MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL, info, &fh);
	MPI_Info_free(&info);
	if (must(rc, "open"))
		return;
	show_view(fh, "open", 1);
	/* 10 + rank bytes each, in rank order */
	memset(c, 'A' + rank, sizeof(c));
	must(MPI_File_write_ordered(fh, c, 10 + rank, MPI_CHAR,
	    MPI_STATUS_IGNORE), "write_ordered");
	/* the same bytes from every rank: their order does not matter */
	memset(c, 's', sizeof(c));
	must(MPI_File_write_shared(fh, c, 3, MPI_CHAR, MPI_STATUS_IGNORE),
	    "write_shared");
	MPI_Barrier(MPI_COMM_WORLD);
	show_view(fh, "bytes", 1);

	/* the view starts where the shared pointer is, in bytes */
	must(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, MPI_INT,
	    "native", MPI_INFO_NULL), "set_view current int");
	show_view(fh, "ints", 1);
	for (i = 0; i < 16; i++)
		v[i] = 0x01020300 + rank * 16 + i;
	must(MPI_File_write_ordered(fh, v, 2 + rank, MPI_INT,
	    MPI_STATUS_IGNORE), "write_ordered ints");
	show_view(fh, "ints written", 1);

	/* two ints of every three: the pointer counts etypes of the view */
	MPI_Type_contiguous(2, MPI_INT, &two);
	MPI_Type_create_resized(two, 0, 3 * sizeof(int), &ft);
	MPI_Type_commit(&ft);
	must(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_INT, ft,
	    "native", MPI_INFO_NULL), "set_view current strided");
	show_view(fh, "strided", 1);
	must(MPI_File_write_ordered(fh, v, 3, MPI_INT, MPI_STATUS_IGNORE),
	    "write_ordered strided");
	show_view(fh, "strided written", 1);
	must(MPI_File_set_view(fh, MPI_DISPLACEMENT_CURRENT, MPI_BYTE,
	    MPI_BYTE, "native", MPI_INFO_NULL), "set_view current bytes");
	show_view(fh, "tail", 1);
	memset(c, 'a' + rank, sizeof(c));
	must(MPI_File_write_ordered(fh, c, 5, MPI_CHAR, MPI_STATUS_IGNORE),
	    "write_ordered tail");
	show_view(fh, "end", 1);
	MPI_Type_free(&ft);
	MPI_Type_free(&two);
	must(MPI_File_close(&fh), "close");
}

/* ---------------------------------------------------------- external32 */

#define NI	6
#define ND	3
#define NS	4		/* shorts, every other one of 2*NS in memory */

/* Every other short in memory: a noncontiguous memory type (ROMIO's
 * external32 of a struct type crashes in MPI_Pack_external_size). */
static MPI_Datatype
every_other_short(void)
{
	MPI_Datatype t, r;

	MPI_Type_vector(NS, 1, 2, MPI_SHORT, &t);
	MPI_Type_create_resized(t, 0, 2 * NS * sizeof(short), &r);
	MPI_Type_free(&t);
	MPI_Type_commit(&r);
	return r;
}

/* A strided view of ints: every rank owns 2 of each 2*nprocs. */
static MPI_Datatype
strided_ints(void)
{
	MPI_Datatype two, ft;

	MPI_Type_contiguous(2, MPI_INT, &two);
	MPI_Type_create_resized(two, 0, 2 * nprocs * sizeof(int), &ft);
	MPI_Type_free(&two);
	MPI_Type_commit(&ft);
	return ft;
}

/*
 *   [0, 64)        rank 0: a header of chars, native
 *   64 + ...       external32: NI ints of each rank, strided view
 *   H2 = 64 + 4*NI*nprocs: external32, ND doubles of each rank, then NS
 *                  shorts of each (from every other short in memory)
 */
static int handler_calls;

static void
count_errors(MPI_File *fh, int *code, ...)
{
	handler_calls++;
}

static MPI_Offset
h2(void)
{
	return 64 + 4 * NI * (MPI_Offset)nprocs;
}

static short
short_of(int i)
{
	return (short)(-3 - 7 * rank - i);
}

static void
do_ext32_write(const char *path, int seq)
{
	MPI_Datatype ft = strided_ints(), st = every_other_short();
	short sh[2 * NS];
	MPI_Aint ext = 0;
	MPI_Offset at;
	MPI_File fh;
	double d[ND];
	char hdr[64];
	int v[NI], i;

	if (must(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE |
	    MPI_MODE_WRONLY, MPI_INFO_NULL, &fh), "open"))
		return;
	memset(hdr, '#', sizeof(hdr));
	if (rank == 0)
		must(MPI_File_write_at(fh, 0, hdr, 64, MPI_CHAR,
		    MPI_STATUS_IGNORE), "write_at header");
	must(MPI_File_set_view(fh, 64 + 2 * rank * sizeof(int), MPI_INT, ft,
	    "external32", MPI_INFO_NULL), "set_view external32 ints");
	show_view(fh, "ext32 ints", seq);
	must(MPI_File_get_type_extent(fh, MPI_LONG_DOUBLE, &ext),
	    "get_type_extent");
	say("type extent long double: %ld\n", (long)ext);
	must(MPI_File_get_type_extent(fh, st, &ext), "get_type_extent");
	say("type extent of every other short: %ld\n", (long)ext);
	for (i = 0; i < NI; i++)
		v[i] = 0x01020304 * (rank + 1) + i;
	must(MPI_File_write_all(fh, v, NI / 2, MPI_INT, MPI_STATUS_IGNORE),
	    "write_all ints");
	must(MPI_File_write(fh, v + NI / 2, NI / 2, MPI_INT,
	    MPI_STATUS_IGNORE), "write ints");
	show_view(fh, "ext32 ints written", seq);

	must(MPI_File_set_view(fh, h2(), MPI_BYTE, MPI_BYTE, "EXTERNAL32",
	    MPI_INFO_NULL), "set_view EXTERNAL32 bytes");
	show_view(fh, "EXTERNAL32 bytes", seq);
	for (i = 0; i < ND; i++)
		d[i] = 1.5 + rank * 100 + i / 8.0;
	at = (MPI_Offset)rank * ND * 8;
	must(MPI_File_write_at_all(fh, at, d, ND, MPI_DOUBLE,
	    MPI_STATUS_IGNORE), "write_at_all doubles");
	for (i = 0; i < 2 * NS; i++)
		sh[i] = i % 2 ? 0x5555 : short_of(i / 2);
	at = (MPI_Offset)nprocs * ND * 8 + (MPI_Offset)rank * NS * 2;
	must(MPI_File_write_at(fh, at, sh, 1, st, MPI_STATUS_IGNORE),
	    "write_at shorts");
	MPI_Type_free(&ft);
	MPI_Type_free(&st);
	must(MPI_File_close(&fh), "close");
}

static void
do_ext32_read(const char *path, int seq)
{
	MPI_Datatype ft = strided_ints(), st = every_other_short();
	MPI_Status status;
	short sh[2 * NS];
	MPI_File fh;
	double d[ND];
	int v[NI], i, n = 0;

	if (must(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY,
	    MPI_INFO_NULL, &fh), "open read"))
		return;
	must(MPI_File_set_view(fh, 64 + 2 * rank * sizeof(int), MPI_INT, ft,
	    "external32", MPI_INFO_NULL), "set_view external32 ints");
	memset(v, 0, sizeof(v));
	must(MPI_File_read_all(fh, v, NI, MPI_INT, &status), "read_all ints");
	MPI_Get_count(&status, MPI_INT, &n);
	for (i = 0; i < NI; i++)
		if (v[i] != 0x01020304 * (rank + 1) + i)
			fail("external32 int %d reads %#x", i, v[i]);
	say("ext32 ints read: %d, first %#x\n", n, v[0]);
	/* native: the file's bytes as they are */
	must(MPI_File_set_view(fh, 64 + 2 * rank * sizeof(int), MPI_INT, ft,
	    "native", MPI_INFO_NULL), "set_view native ints");
	must(MPI_File_read_all(fh, v, NI, MPI_INT, &status),
	    "read_all native");
	say("native ints read: first %#x last %#x\n", v[0], v[NI - 1]);
	show_view(fh, "native again", seq);
	/* MPICH calls the error handler, then returns MPI_SUCCESS and
	 * leaves the answer alone */
	{
		MPI_Errhandler eh;
		MPI_Offset b = 12345;

		MPI_File_create_errhandler(count_errors, &eh);
		MPI_File_set_errhandler(fh, eh);
		say("get_byte_offset -3: %d", MPI_File_get_byte_offset(fh, -3,
		    &b));
		say(", %lld, %d calls of the error handler\n", (long long)b,
		    handler_calls);
		MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
		MPI_Errhandler_free(&eh);
	}
	must(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "internal",
	    MPI_INFO_NULL), "set_view internal");
	show_view(fh, "internal", seq);
	must(MPI_File_read_at(fh, 64, v, 1, MPI_INT, &status),
	    "read_at internal");
	say("internal int at 64: %#x\n", v[0]);

	must(MPI_File_set_view(fh, h2(), MPI_BYTE, MPI_BYTE, "external32",
	    MPI_INFO_NULL), "set_view external32 bytes");
	must(MPI_File_read_at_all(fh, (MPI_Offset)rank * ND * 8, d, ND,
	    MPI_DOUBLE, &status), "read_at_all doubles");
	for (i = 0; i < ND; i++)
		if (d[i] != 1.5 + rank * 100 + i / 8.0)
			fail("external32 double %d reads %g", i, d[i]);
	say("ext32 doubles read: %g %g %g\n", d[0], d[1], d[2]);
	memset(sh, 0, sizeof(sh));
	must(MPI_File_read_at(fh, (MPI_Offset)nprocs * ND * 8 +
	    (MPI_Offset)rank * NS * 2, sh, 1, st, &status), "read_at shorts");
	for (i = 0; i < 2 * NS; i++)
		if (sh[i] != (i % 2 ? 0 : short_of(i / 2)))
			fail("external32 short %d reads %d", i, sh[i]);
	say("ext32 shorts read: %d %d %d\n", sh[0], sh[1], sh[2]);
	MPI_Type_free(&ft);
	MPI_Type_free(&st);
	must(MPI_File_close(&fh), "close read");
}

/*
 * Every write and read call through an external32 view: does it convert?
 * ROMIO converts in the blocking ones, write_shared, read_shared,
 * write_ordered and the split collectives, not in iread, iwrite,
 * iread_at, iwrite_at, iread_shared, iwrite_shared and read_ordered.
 * Rank 0 alone, one int each, slot k at 4*k; then the file's bytes as
 * they are, and what each read call returns for slot k.  Not iwrite_all
 * and iwrite_at_all (slots 7 and 8): MPICH writes freed memory there.
 */
#define NCALLS	22

static int
ext32_call(MPI_File fh, int write, int k, int *v)
{
	MPI_Offset at = k;
	MPI_Request rq;
	MPI_Status st;
	int rc = MPI_SUCCESS;

	if (k >= 14 && k != 19) {	/* shared pointer: at slot k first */
		rc = MPI_File_seek_shared(fh, at, MPI_SEEK_SET);
		if (rc != MPI_SUCCESS)
			return rc;
	} else {
		rc = MPI_File_seek(fh, at, MPI_SEEK_SET);
		if (rc != MPI_SUCCESS)
			return rc;
	}
#define W(wr, rd) (write ? (wr) : (rd))
	switch (k) {
	case 0: return W(MPI_File_write(fh, v, 1, MPI_INT, &st),
	    MPI_File_read(fh, v, 1, MPI_INT, &st));
	case 1: return W(MPI_File_write_c(fh, v, 1, MPI_INT, &st),
	    MPI_File_read_c(fh, v, 1, MPI_INT, &st));
	case 2: return W(MPI_File_write_at(fh, at, v, 1, MPI_INT, &st),
	    MPI_File_read_at(fh, at, v, 1, MPI_INT, &st));
	case 3: return W(MPI_File_write_all(fh, v, 1, MPI_INT, &st),
	    MPI_File_read_all(fh, v, 1, MPI_INT, &st));
	case 4: return W(MPI_File_write_at_all(fh, at, v, 1, MPI_INT, &st),
	    MPI_File_read_at_all(fh, at, v, 1, MPI_INT, &st));
	case 5: rc = W(MPI_File_iwrite(fh, v, 1, MPI_INT, &rq),
	    MPI_File_iread(fh, v, 1, MPI_INT, &rq));
		break;
	case 6: rc = W(MPI_File_iwrite_at(fh, at, v, 1, MPI_INT, &rq),
	    MPI_File_iread_at(fh, at, v, 1, MPI_INT, &rq));
		break;
	case 7: rc = W(MPI_File_iwrite_all(fh, v, 1, MPI_INT, &rq),
	    MPI_File_iread_all(fh, v, 1, MPI_INT, &rq));
		break;
	case 8: rc = W(MPI_File_iwrite_at_all(fh, at, v, 1, MPI_INT, &rq),
	    MPI_File_iread_at_all(fh, at, v, 1, MPI_INT, &rq));
		break;
	case 9: rc = W(MPI_File_write_all_begin(fh, v, 1, MPI_INT),
	    MPI_File_read_all_begin(fh, v, 1, MPI_INT));
		return rc != MPI_SUCCESS ? rc : W(MPI_File_write_all_end(fh, v,
		    &st), MPI_File_read_all_end(fh, v, &st));
	case 10: rc = W(MPI_File_write_at_all_begin(fh, at, v, 1, MPI_INT),
	    MPI_File_read_at_all_begin(fh, at, v, 1, MPI_INT));
		return rc != MPI_SUCCESS ? rc : W(MPI_File_write_at_all_end(fh,
		    v, &st), MPI_File_read_at_all_end(fh, v, &st));
	case 11: return W(MPI_File_write_all_c(fh, v, 1, MPI_INT, &st),
	    MPI_File_read_all_c(fh, v, 1, MPI_INT, &st));
	case 12: return W(MPI_File_write_at_c(fh, at, v, 1, MPI_INT, &st),
	    MPI_File_read_at_c(fh, at, v, 1, MPI_INT, &st));
	case 13: rc = W(MPI_File_iwrite_c(fh, v, 1, MPI_INT, &rq),
	    MPI_File_iread_c(fh, v, 1, MPI_INT, &rq));
		break;
	case 14: return W(MPI_File_write_shared(fh, v, 1, MPI_INT, &st),
	    MPI_File_read_shared(fh, v, 1, MPI_INT, &st));
	case 15: rc = W(MPI_File_iwrite_shared(fh, v, 1, MPI_INT, &rq),
	    MPI_File_iread_shared(fh, v, 1, MPI_INT, &rq));
		break;
	case 16: return W(MPI_File_write_ordered(fh, v, 1, MPI_INT, &st),
	    MPI_File_read_ordered(fh, v, 1, MPI_INT, &st));
	case 17: rc = W(MPI_File_write_ordered_begin(fh, v, 1, MPI_INT),
	    MPI_File_read_ordered_begin(fh, v, 1, MPI_INT));
		return rc != MPI_SUCCESS ? rc : W(MPI_File_write_ordered_end(fh,
		    v, &st), MPI_File_read_ordered_end(fh, v, &st));
	case 18: return W(MPI_File_write_ordered_c(fh, v, 1, MPI_INT, &st),
	    MPI_File_read_ordered_c(fh, v, 1, MPI_INT, &st));
	case 19: rc = W(MPI_File_iwrite_at_c(fh, at, v, 1, MPI_INT, &rq),
	    MPI_File_iread_at_c(fh, at, v, 1, MPI_INT, &rq));
		break;
	case 20: rc = W(MPI_File_iwrite_shared_c(fh, v, 1, MPI_INT, &rq),
	    MPI_File_iread_shared_c(fh, v, 1, MPI_INT, &rq));
		break;
	case 21: return W(MPI_File_write_shared_c(fh, v, 1, MPI_INT, &st),
	    MPI_File_read_shared_c(fh, v, 1, MPI_INT, &st));
	}
#undef W
	return rc != MPI_SUCCESS ? rc : MPI_Wait(&rq, MPI_STATUS_IGNORE);
}

static void
do_ext32_calls(const char *path)
{
	unsigned char bytes[4 * NCALLS];
	char name[32];
	MPI_File fh;
	int v, k, i, rc;

	/* one process: the collective and ordered calls of one rank */
	if (must(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE |
	    MPI_MODE_RDWR, MPI_INFO_NULL, &fh), "open"))
		return;
	MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
	must(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32",
	    MPI_INFO_NULL), "set_view external32");
	for (k = 0; k < NCALLS; k++) {
		if (k == 7 || k == 8)
			continue;
		v = 0x01020300 + k;
		snprintf(name, sizeof(name), "write call %d", k);
		result(name, ext32_call(fh, 1, k, &v));
	}
	must(MPI_File_sync(fh), "sync");
	for (k = 0; k < NCALLS; k++) {
		if (k == 7 || k == 8)
			continue;
		v = 0;
		rc = ext32_call(fh, 0, k, &v);
		snprintf(name, sizeof(name), "read call %d", k);
		result(name, rc);
		say("  value %#x\n", v);
	}
	must(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native",
	    MPI_INFO_NULL), "set_view native");
	memset(bytes, 0, sizeof(bytes));
	must(MPI_File_read_at(fh, 0, bytes, sizeof(bytes), MPI_BYTE,
	    MPI_STATUS_IGNORE), "read_at");
	for (k = 0; k < NCALLS; k++) {
		say("slot %2d:", k);
		for (i = 0; i < 4; i++)
			say(" %02x", bytes[4 * k + i]);
		say("\n");
	}
	must(MPI_File_close(&fh), "close");
}

int
main(int argc, char **argv)
{
	int all = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (argc != 3) {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_conform errors|info|seq|"
			    "ext32|ext32-read PATH\n");
		MPI_Finalize();
		return 2;
	}
	if (strcmp(argv[1], "errors") == 0)
		do_errors(argv[2]);
	else if (strcmp(argv[1], "info") == 0)
		do_info(argv[2]);
	else if (strcmp(argv[1], "seq") == 0)
		do_seq(argv[2]);
	else if (strcmp(argv[1], "ext32-calls") == 0) {
		if (rank == 0)
			do_ext32_calls(argv[2]);
	} else if (strcmp(argv[1], "ext32") == 0) {
		do_ext32_write(argv[2], 0);
		do_ext32_read(argv[2], 0);
	} else if (strcmp(argv[1], "ext32-read") == 0)
		do_ext32_read(argv[2], 0);
	else {
		if (rank == 0)
			fprintf(stderr, "mpi_conform: unknown mode '%s'\n",
			    argv[1]);
		test_failed = 1;
	}
	MPI_Allreduce(&test_failed, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Finalize();
	return all ? 1 : 0;
}
