/*
 * test_flatten.c - gfsp_view_from_mpi against MPICH itself.  One process,
 * MPI_Init without mpiexec.
 *
 * The oracle: a source buffer full of 0xFF is packed with K elements of
 * the datatype and unpacked into a zeroed buffer that covers the K
 * elements' true extent; exactly the bytes of the typemap (of tiles 0..K-1)
 * come back as 0xFF.  The view, placed at a displacement D, must hold
 * exactly those bytes below D + K*extent + true_lb, where tile K would
 * start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "view_impl.h"
#include "tap.h"

#define K 3

/* Compare the view of t at displacement disp with MPICH's pack/unpack. */
static int
same_bytes(MPI_Datatype t, MPI_Offset disp, int exact_size, char *why,
	   size_t whylen)
{
	MPI_Aint lb, ext, tlb, text, span, w, g;
	struct gfsp_error err = { 0 };
	struct gfsp_view v;
	unsigned char *src = NULL, *dst = NULL, *pack = NULL;
	int size, psize, pos = 0, okay = 0;

	MPI_Type_get_extent(t, &lb, &ext);
	MPI_Type_get_true_extent(t, &tlb, &text);
	MPI_Type_size(t, &size);
	span = (K - 1) * ext + text;
	if (ext <= 0 || tlb < 0 || span > (8 << 20)) {
		snprintf(why, whylen, "test type unsuitable (extent %ld, true lb %ld)",
			 (long)ext, (long)tlb);
		return 0;
	}
	src = malloc(span + 1);
	dst = calloc(span + 1, 1);
	MPI_Pack_size(K, t, MPI_COMM_WORLD, &psize);
	pack = malloc(psize + 1);
	memset(src, 0xff, span + 1);
	MPI_Pack(src - tlb, K, t, pack, psize, &pos, MPI_COMM_WORLD);
	psize = pos;
	pos = 0;
	MPI_Unpack(pack, psize, &pos, dst - tlb, K, t, MPI_COMM_WORLD);

	if (gfsp_view_from_mpi(disp, MPI_BYTE, t, &v, &err) != 0) {
		snprintf(why, whylen, "gfsp_view_from_mpi: %s", err.msg);
		goto out;
	}
	if (v.nblocks > 0 && v.extent != (uint64_t)ext) {
		snprintf(why, whylen, "extent %llu, MPI says %ld",
			 (unsigned long long)v.extent, (long)ext);
		goto out;
	}
	if (exact_size && v.size != (uint64_t)size) {
		snprintf(why, whylen, "size %llu, MPI says %d",
			 (unsigned long long)v.size, size);
		goto out;
	}
	w = disp + K * ext + tlb;
	for (g = 0; g < w; g++) {
		MPI_Aint x = g - disp - tlb;
		int want = x >= 0 && x < span && dst[x] == 0xff;
		uint64_t loff, count;
		int got = gfsp_view_lookup(&v, g, &loff, &count);

		if (got != want) {
			snprintf(why, whylen,
				 "byte %ld: view says %d, MPI says %d (view disp %llu extent %llu nblocks %llu)",
				 (long)g, got, want, (unsigned long long)v.disp,
				 (unsigned long long)v.extent,
				 (unsigned long long)v.nblocks);
			goto out;
		}
	}
	snprintf(why, whylen, "%llu blocks, %llu bytes per tile",
		 (unsigned long long)v.nblocks, (unsigned long long)v.size);
	okay = 1;
out:
	gfsp_view_free(&v);
	free(src);
	free(dst);
	free(pack);
	return okay;
}

/* One report line per type; the type is freed. */
static void
check_type(MPI_Datatype t, const char *name, int exact_size)
{
	static const MPI_Offset disps[] = { 0, 5 };
	char why[1200];
	size_t i;
	int okay = 1;

	MPI_Type_commit(&t);
	for (i = 0; i < GFSP_ARRAY_SIZE(disps) && okay; i++)
		okay = same_bytes(t, disps[i], exact_size, why, sizeof(why));
	ok(okay, "%s: %s", name, why);
	MPI_Type_free(&t);
}

/*
 * A filetype whose tiles interleave (its typemap, from true lb 0, spans
 * less than 256 bytes and more than its extent): the view is the first
 * tile alone, each of its stream bytes where MPI puts it (MPI_Pack of
 * one element of a buffer whose byte x holds x), bounded there.  The type
 * is freed.
 */
static void
check_one_tile(MPI_Datatype t, const char *name)
{
	struct gfsp_error err = { 0 };
	struct gfsp_view v;
	unsigned char src[256], pack[256];
	unsigned shape = 0;
	int i, size, pos = 0, rc, bad = -1;

	MPI_Type_commit(&t);
	MPI_Type_size(t, &size);
	for (i = 0; i < 256; i++)
		src[i] = (unsigned char)i;
	MPI_Pack(src, 1, t, pack, sizeof(pack), &pos, MPI_COMM_WORLD);
	rc = gfsp_view_from_mpi_shape(5, MPI_BYTE, t, &v, &shape, &err);
	for (i = 0; rc == 0 && i < size && bad < 0; i++)
		if (gfsp_view_global(&v, (uint64_t)i) != 5u + pack[i])
			bad = i;
	ok(rc == 0 && (shape & GFSP_TYPEMAP_ONE_TILE) && bad < 0 &&
	   v.size == (uint64_t)size &&
	   gfsp_view_global(&v, (uint64_t)size) == UINT64_MAX,
	   "%s: the first tile alone (rc %d \"%s\", shape %u, size %llu of "
	   "%d, first wrong stream byte %d)", name, rc, err.msg, shape,
	   (unsigned long long)v.size, size, bad);
	gfsp_view_free(&v);
	MPI_Type_free(&t);
}

static MPI_Datatype
dup(MPI_Datatype t)
{
	MPI_Datatype d;

	MPI_Type_dup(t, &d);
	return d;
}

static MPI_Datatype
resized(MPI_Datatype t, MPI_Aint lb, MPI_Aint ext)
{
	MPI_Datatype r;

	MPI_Type_create_resized(t, lb, ext, &r);
	return r;
}

/* struct {char; int} with its padding: size 5, extent 8 */
static MPI_Datatype
char_int(void)
{
	int bl[2] = { 1, 1 };
	MPI_Aint d[2] = { 0, 4 };
	MPI_Datatype ty[2] = { MPI_CHAR, MPI_INT }, t;

	MPI_Type_create_struct(2, bl, d, ty, &t);
	return t;
}

static void
test_named(void)
{
	static const struct { MPI_Datatype t; const char *name; } n[] = {
		{ MPI_BYTE, "MPI_BYTE" }, { MPI_INT, "MPI_INT" },
		{ MPI_DOUBLE, "MPI_DOUBLE" }, { MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE" },
		{ MPI_SHORT_INT, "MPI_SHORT_INT (padded pair)" },
		{ MPI_DOUBLE_INT, "MPI_DOUBLE_INT" },
		{ MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT" },
		{ MPI_FLOAT_INT, "MPI_FLOAT_INT" }, { MPI_LONG_INT, "MPI_LONG_INT" },
		{ MPI_2INT, "MPI_2INT" },
		{ MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX" },
	};
	size_t i;

	/* named types cannot be freed: check them through a dup */
	for (i = 0; i < GFSP_ARRAY_SIZE(n); i++)
		check_type(dup(n[i].t), n[i].name, 1);
}

static void
test_f90(void)
{
	MPI_Datatype t;
	int eh_rc;

	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	eh_rc = MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t);
	if (eh_rc == MPI_SUCCESS) {
		MPI_Datatype v;

		/* f90 types are predefined: wrap, do not free */
		MPI_Type_vector(3, 1, 2, t, &v);
		check_type(v, "vector of MPI_Type_create_f90_real(6)", 1);
	} else {
		skip("MPI_Type_create_f90_real not available");
	}
	eh_rc = MPI_Type_create_f90_integer(4, &t);
	if (eh_rc == MPI_SUCCESS) {
		MPI_Datatype v;

		MPI_Type_contiguous(2, t, &v);
		check_type(v, "contiguous of MPI_Type_create_f90_integer(4)", 1);
	} else {
		skip("MPI_Type_create_f90_integer not available");
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void
test_constructors(void)
{
	MPI_Datatype t, u, w;

	MPI_Type_contiguous(5, MPI_INT, &t);
	check_type(t, "contiguous(5, int)", 1);
	MPI_Type_contiguous(3, MPI_SHORT_INT, &t);
	check_type(t, "contiguous(3, short_int) keeps the pair padding", 1);
	MPI_Type_contiguous(1 << 20, MPI_BYTE, &t);
	check_type(t, "contiguous(1M, byte) is one block", 1);

	MPI_Type_vector(4, 2, 5, MPI_INT, &t);
	check_type(t, "vector(4, 2, 5, int)", 1);
	MPI_Type_vector(100000, 1, 2, MPI_CHAR, &t);
	check_type(t, "vector(100000, 1, 2, char): many blocks", 1);
	{
		/* negative stride, moved to positive ground by a struct */
		int bl = 1;
		MPI_Aint d = 64;

		MPI_Type_vector(3, 1, -2, MPI_INT, &u);
		MPI_Type_create_struct(1, &bl, &d, &u, &t);
		MPI_Type_free(&u);
		check_type(t, "struct of vector with negative stride", 1);
	}
	MPI_Type_create_hvector(3, 2, 20, MPI_SHORT, &t);
	check_type(t, "hvector(3, 2, 20 bytes, short)", 1);
	MPI_Type_create_hvector(4, 1, 3, MPI_INT, &t);
	check_type(t, "hvector with overlapping elements (stride 3 < 4)", 0);
	{
		int bl[3] = { 1, 3, 2 }, d[3] = { 5, 0, 9 };

		MPI_Type_indexed(3, bl, d, MPI_INT, &t);
		check_type(t, "indexed(unsorted displacements, int)", 1);
	}
	{
		int bl[2] = { 2, 1 };
		MPI_Aint d[2] = { 100, 3 };

		MPI_Type_create_hindexed(2, bl, d, MPI_DOUBLE, &t);
		check_type(t, "hindexed(misaligned, double)", 1);
	}
	{
		int d[3] = { 0, 5, 10 };

		MPI_Type_create_indexed_block(3, 2, d, MPI_FLOAT, &t);
		check_type(t, "indexed_block(3, 2, float)", 1);
	}
	{
		MPI_Aint d[3] = { 0, 17, 40 };

		MPI_Type_create_hindexed_block(3, 1, d, MPI_INT, &t);
		check_type(t, "hindexed_block(3, 1, int)", 1);
	}
	{
		int bl[3] = { 1, 2, 3 };
		MPI_Aint d[3] = { 0, 8, 40 };
		MPI_Datatype ty[3] = { MPI_INT, MPI_DOUBLE, MPI_CHAR };

		MPI_Type_create_struct(3, bl, d, ty, &t);
		check_type(t, "struct(int, 2 double, 3 char)", 1);
	}
	{
		int bl[2] = { 0, 2 };
		MPI_Aint d[2] = { 0, 4 };
		MPI_Datatype ty[2] = { MPI_INT, MPI_INT };

		MPI_Type_create_struct(2, bl, d, ty, &t);
		check_type(t, "struct with an empty block", 1);
	}
	MPI_Type_contiguous(0, MPI_INT, &t);
	MPI_Type_commit(&t);
	{
		struct gfsp_error err = { 0 };
		struct gfsp_view v;
		int rc = gfsp_view_from_mpi(0, MPI_BYTE, t, &v, &err);

		ok(rc == 0 && v.nblocks == 0 && v.size == 0,
		   "contiguous(0): empty view");
		gfsp_view_free(&v);
	}
	MPI_Type_free(&t);

	MPI_Type_vector(2, 3, 4, MPI_INT, &u);
	check_type(dup(u), "dup(vector)", 1);
	MPI_Type_free(&u);

	check_type(resized(MPI_INT, 0, 10), "resized(int, 0, 10)", 1);
	check_type(resized(MPI_INT, -8, 16), "resized with negative lb, data at 0", 1);
	{
		/* data beyond the extent: tile k at 20 + 16k */
		int bl = 1;
		MPI_Aint d = 20;

		MPI_Type_create_struct(1, &bl, &d, (MPI_Datatype[]){ MPI_INT },
				       &u);
		check_type(resized(u, 0, 16), "resized(struct{int at 20}, 0, 16)", 1);
		MPI_Type_free(&u);
	}
	/* tiles interleave: a vector resized to one element */
	MPI_Type_vector(3, 1, 4, MPI_INT, &u);
	check_one_tile(resized(u, 0, 4), "resized(vector(3,1,4,int), 0, 4): interleaved tiles");
	MPI_Type_free(&u);
	MPI_Type_vector(2, 1, 4, MPI_INT, &u);
	check_one_tile(resized(u, 0, 8), "resized(vector(2,1,4,int), 0, 8): interleaved, gaps");
	MPI_Type_free(&u);

	/* nested */
	u = char_int();
	MPI_Type_vector(3, 2, 3, u, &t);
	check_type(t, "vector of struct{char,int}", 1);
	MPI_Type_free(&u);
	{
		int bl[2] = { 3, 2 };
		MPI_Aint d[2] = { 0, 50 };

		u = resized(MPI_INT, 0, 10);
		MPI_Type_create_hindexed(2, bl, d, u, &t);
		check_type(t, "hindexed of resized(int, 0, 10)", 1);
		MPI_Type_free(&u);
	}
	{
		int bl[2] = { 2, 1 };
		MPI_Aint d[2] = { 4, 200 };
		MPI_Datatype ty[2];

		u = char_int();
		MPI_Type_create_hvector(2, 1, 12, u, &w);
		MPI_Type_vector(2, 1, 2, w, &ty[0]);
		ty[1] = MPI_SHORT_INT;
		MPI_Type_create_struct(2, bl, d, ty, &t);
		MPI_Type_free(&u);
		MPI_Type_free(&w);
		MPI_Type_free(&ty[0]);
		u = t;
		MPI_Type_contiguous(2, u, &t);
		MPI_Type_free(&u);
		check_type(t, "contiguous(struct(vector(hvector(struct)), short_int))", 1);
	}
}

static void
test_subarray(void)
{
	static const struct {
		int nd, sizes[3], sub[3], starts[3];
	} s[] = {
		{ 2, { 6, 7 }, { 3, 2 }, { 1, 4 } },
		{ 3, { 4, 5, 6 }, { 2, 3, 4 }, { 1, 0, 2 } },
		{ 2, { 5, 4 }, { 5, 2 }, { 0, 2 } },
		{ 2, { 5, 4 }, { 5, 4 }, { 0, 0 } },
		{ 1, { 9 }, { 0 }, { 3 } },
	};
	MPI_Datatype old[3], t;
	const char *oldname[3] = { "int", "resized(int,0,12)", "struct{char,int}" };
	char name[200];
	size_t i;
	int o, ord;

	old[0] = MPI_INT;
	old[1] = resized(MPI_INT, 0, 12);
	old[2] = char_int();
	for (i = 0; i < GFSP_ARRAY_SIZE(s); i++) {
		for (o = 0; o < 3; o++) {
			for (ord = 0; ord < 2; ord++) {
				/* a subsize of 0 is MPI 4.0's (3.1 asks >= 1) */
				if (s[i].sub[0] == 0 && MPI_VERSION < 4) {
					skip("subarray %zu of %s: a subsize of 0 "
					     "needs MPI 4.0, this MPI is %d.%d",
					     i, oldname[o], MPI_VERSION,
					     MPI_SUBVERSION);
					continue;
				}
				MPI_Type_create_subarray(s[i].nd, s[i].sizes,
							 s[i].sub, s[i].starts,
							 ord ? MPI_ORDER_FORTRAN : MPI_ORDER_C,
							 old[o], &t);
				snprintf(name, sizeof(name),
					 "subarray %zu, %s order, of %s", i,
					 ord ? "Fortran" : "C", oldname[o]);
				if (s[i].sub[0] == 0) {
					struct gfsp_error err = { 0 };
					struct gfsp_view v;
					int rc;

					MPI_Type_commit(&t);
					rc = gfsp_view_from_mpi(0, MPI_BYTE, t, &v, &err);
					ok(rc == 0 && v.nblocks == 0,
					   "%s: empty", name);
					gfsp_view_free(&v);
					MPI_Type_free(&t);
				} else {
					check_type(t, name, 1);
				}
			}
		}
	}
	/* resized subarray: a 2x2 tile of a 4x4 int array, padded */
	{
		int sz[2] = { 4, 4 }, sub[2] = { 2, 2 }, st[2] = { 1, 1 };
		MPI_Datatype u;

		MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &u);
		check_type(resized(u, 0, 80), "resized(subarray, 0, 80)", 1);
		MPI_Type_free(&u);
	}
	MPI_Type_free(&old[1]);
	MPI_Type_free(&old[2]);
}

static void
test_darray(void)
{
	static const struct {
		int nd, gsizes[3], distribs[3], dargs[3], psizes[3];
		const char *what;
	} d[] = {
#define B MPI_DISTRIBUTE_BLOCK
#define C MPI_DISTRIBUTE_CYCLIC
#define N MPI_DISTRIBUTE_NONE
#define D MPI_DISTRIBUTE_DFLT_DARG
		{ 2, { 7, 5 }, { B, B }, { D, D }, { 2, 3 }, "block x block" },
		{ 2, { 7, 5 }, { C, C }, { D, 2 }, { 2, 3 }, "cyclic x cyclic(2)" },
		{ 2, { 7, 5 }, { B, C }, { 4, D }, { 2, 2 }, "block(4) x cyclic" },
		{ 2, { 7, 5 }, { N, C }, { D, 1 }, { 1, 3 }, "none x cyclic(1)" },
		{ 2, { 7, 5 }, { C, N }, { 2, D }, { 3, 1 }, "cyclic(2) x none" },
		{ 3, { 4, 5, 6 }, { B, N, C }, { D, D, D }, { 2, 1, 2 }, "3-D block x none x cyclic" },
		{ 3, { 3, 4, 5 }, { C, B, C }, { 2, D, 3 }, { 2, 2, 2 }, "3-D cyclic(2) x block x cyclic(3)" },
		{ 1, { 10 }, { B }, { D }, { 4 }, "1-D block over 4" },
		{ 1, { 10 }, { C }, { 3 }, { 4 }, "1-D cyclic(3) over 4" },
		{ 1, { 10 }, { B }, { 4 }, { 4 }, "1-D block(4) over 4 (last rank empty)" },
#undef B
#undef C
#undef N
#undef D
	};
	MPI_Datatype old[2], t;
	const char *oldname[2] = { "int", "short_int" };
	size_t i;
	int o, ord, rank, size, okay, d_i;

	old[0] = MPI_INT;
	old[1] = MPI_SHORT_INT;
	for (i = 0; i < GFSP_ARRAY_SIZE(d); i++) {
		for (o = 0; o < 2; o++) {
			for (ord = 0; ord < 2; ord++) {
				char why[1200] = "", name[200];

				size = 1;
				for (d_i = 0; d_i < d[i].nd; d_i++)
					size *= d[i].psizes[d_i];
				okay = 1;
				for (rank = 0; rank < size && okay; rank++) {
					MPI_Aint tlb, text;

					MPI_Type_create_darray(size, rank, d[i].nd,
							       d[i].gsizes,
							       d[i].distribs,
							       d[i].dargs,
							       d[i].psizes,
							       ord ? MPI_ORDER_FORTRAN : MPI_ORDER_C,
							       old[o], &t);
					MPI_Type_commit(&t);
					MPI_Type_get_true_extent(t, &tlb, &text);
					if (text == 0) {
						/* no elements: the view must be empty */
						struct gfsp_error err = { 0 };
						struct gfsp_view v;

						okay = gfsp_view_from_mpi(0, MPI_BYTE, t, &v, &err) == 0 &&
						       v.nblocks == 0;
						snprintf(why, sizeof(why), "rank %d: empty", rank);
						gfsp_view_free(&v);
					} else {
						okay = same_bytes(t, 3, 1, why, sizeof(why));
					}
					if (!okay)
						snprintf(name, sizeof(name), " (rank %d)", rank);
					MPI_Type_free(&t);
				}
				ok(okay, "darray %s, %s order, of %s, all %d ranks%s: %s",
				   d[i].what, ord ? "Fortran" : "C",
				   oldname[o], size, okay ? "" : name, why);
			}
		}
	}
}

static void
test_table1(void)
{
	/* rank 1 of MPI-IO/Gfarm's Table 1 as an MPI filetype */
	int bl[4] = { 8, 4, 4, 4 };
	MPI_Aint d[4] = { 4, 16, 28, 40 };
	static const uint64_t off[4] = { 4, 16, 28, 40 }, len[4] = { 8, 4, 4, 4 };
	struct gfsp_error err = { 0 };
	struct gfsp_view v;
	MPI_Datatype u, t;
	int rc, same = 1, i;

	MPI_Type_create_hindexed(4, bl, d, MPI_BYTE, &u);
	MPI_Type_create_resized(u, 0, 48, &t);
	MPI_Type_commit(&t);
	rc = gfsp_view_from_mpi(96, MPI_BYTE, t, &v, &err);
	same = rc == 0 && v.disp == 96 && v.extent == 48 && v.size == 20 &&
	       v.nblocks == 4 && v.end == GFSP_VIEW_UNBOUNDED;
	for (i = 0; same && i < 4; i++)
		same = v.off[i] == off[i] && v.len[i] == len[i];
	ok(same, "MPI-IO/Gfarm table 1 rank 1 as hindexed+resized gives its record");
	gfsp_view_free(&v);
	MPI_Type_free(&u);
	MPI_Type_free(&t);
}

static void
test_errors(void)
{
	struct gfsp_error err = { 0 };
	struct gfsp_view v;
	MPI_Datatype t;
	int rc, bl = 1;
	MPI_Aint d = -8;

	MPI_Type_create_hindexed(1, &bl, &d, MPI_INT, &t);
	MPI_Type_commit(&t);
	rc = gfsp_view_from_mpi(0, MPI_BYTE, t, &v, &err);
	ok(rc == GFSP_EINVAL && strstr(err.msg, "negative") != NULL,
	   "negative typemap displacement rejected: \"%s\"", err.msg);
	MPI_Type_free(&t);

	memset(&err, 0, sizeof(err));
	rc = gfsp_view_from_mpi(-1, MPI_BYTE, MPI_INT, &v, &err);
	ok(rc == GFSP_EINVAL && strstr(err.msg, "displacement -1") != NULL,
	   "negative file displacement rejected: \"%s\"", err.msg);

	/* (MPI_LB, which MPI 3.0 removed, is no longer in every mpi.h) */
	MPI_Type_contiguous(0, MPI_INT, &t);
	MPI_Type_commit(&t);
	memset(&err, 0, sizeof(err));
	rc = gfsp_view_from_mpi(0, t, MPI_INT, &v, &err);
	ok(rc == GFSP_EINVAL && strstr(err.msg, "etype") != NULL,
	   "etype of size 0 rejected: \"%s\"", err.msg);
	MPI_Type_free(&t);
}

/* Memory types the MPI-IO library may use as they are, unpacked. */
static void
test_dense(void)
{
	int bl[2] = { 1, 1 };
	MPI_Aint d[2] = { 4, 0 }, d2[2] = { -8, -4 };
	MPI_Datatype ts[2] = { MPI_INT, MPI_INT }, t, c, r, h;
	MPI_Count first = -1;
	int dense;

	ok(gfsp_type_dense(MPI_DOUBLE, 5, &first) && first == 0,
	    "a named type is dense");
	MPI_Type_contiguous(100, MPI_INT, &c);
	MPI_Type_commit(&c);
	ok(gfsp_type_dense(c, 3, &first) && first == 0,
	    "a contiguous type is dense, any count");
	MPI_Type_create_struct(2, bl, d, ts, &t);
	MPI_Type_commit(&t);
	ok(!gfsp_type_dense(t, 1, &first),
	    "a struct {int at 4, int at 0} is not: its bytes are out of order");
	MPI_Type_create_hindexed(2, bl, d2, MPI_INT, &h);
	MPI_Type_commit(&h);
	dense = gfsp_type_dense(h, 1, &first);
	ok(dense && first == -8,
	    "an hindexed type at -8 and -4 is dense from byte -8 (%lld)",
	    (long long)first);
	MPI_Type_create_resized(MPI_INT, 0, 8, &r);
	MPI_Type_commit(&r);
	ok(gfsp_type_dense(r, 1, &first) && !gfsp_type_dense(r, 2, &first),
	    "an int resized to 8 bytes: one is dense, two are apart");
	MPI_Type_free(&c);
	MPI_Type_free(&t);
	MPI_Type_free(&h);
	MPI_Type_free(&r);
}

/*
 * Tiles that fill gaps of the first one: Open MPI gives a struct of a
 * header and a subarray the subarray's (sticky) bounds, so tile 1 lands
 * between the header and the subarray.  Here the same shape, made with
 * MPI_Type_create_resized on every MPI: bytes [0, 8) and [40, 44), lb 40,
 * extent 16.  The view is the first tile alone, bounded at its end.
 */
static void
test_one_tile(void)
{
	struct gfsp_error err = { 0 };
	struct gfsp_view v;
	MPI_Datatype ty[2] = { MPI_BYTE, MPI_INT }, t, r;
	MPI_Aint d[2] = { 0, 40 };
	int bl[2] = { 8, 1 }, in0, in1, rc;
	unsigned shape = 0;
	uint64_t loff, count;

	MPI_Type_create_struct(2, bl, d, ty, &t);
	MPI_Type_create_resized(t, 40, 16, &r);
	MPI_Type_commit(&r);
	rc = gfsp_view_from_mpi_shape(100, MPI_BYTE, r, &v, &shape, &err);
	ok(rc == 0 && (shape & GFSP_TYPEMAP_ONE_TILE) && v.disp == 100 &&
	   v.extent == 44 && v.end == 144 && v.size == 12 && v.nblocks == 2,
	   "interleaving tiles: the first tile alone (rc %d \"%s\", shape "
	   "%u, disp %llu extent %llu end %llu size %llu)", rc, err.msg,
	   shape, (unsigned long long)v.disp, (unsigned long long)v.extent,
	   (unsigned long long)v.end, (unsigned long long)v.size);
	in0 = gfsp_view_lookup(&v, 107, &loff, &count) &&
	    !gfsp_view_lookup(&v, 108, &loff, &count) &&
	    gfsp_view_lookup(&v, 143, &loff, &count) && loff == 11;
	in1 = !gfsp_view_lookup(&v, 116, &loff, &count) &&
	    !gfsp_view_lookup(&v, 156, &loff, &count) &&
	    gfsp_view_global(&v, 12) == UINT64_MAX;
	ok(rc == 0 && in0 && in1, "  its bytes are tile 0's, none of tile 1's "
	   "(%d, %d)", in0, in1);
	gfsp_view_free(&v);
	MPI_Type_free(&r);
	MPI_Type_free(&t);
}

int
main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	test_dense();
	test_named();
	test_f90();
	test_constructors();
	test_subarray();
	test_darray();
	test_table1();
	test_errors();
	test_one_tile();
	MPI_Finalize();
	return done_testing();
}
