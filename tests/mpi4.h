/*
 * mpi4.h - MPI-4.0's large-count calls for the test programs, on an MPI
 * that implements MPI 3.1 only (Open MPI 4.1, the second build: make
 * ompi).
 *
 * Each MPI_File_*_c and MPI_Get_{count,elements}_c the programs call is
 * defined here as the int-count call when the count fits an int, and
 * fails with MPI_ERR_COUNT (without the file's error handler) when it
 * does not.  So the programs build and run the same on both MPIs, and an
 * option that picks the large-count API ("--api=large") runs the classic
 * calls there: on such an MPI no program can call the _c forms, and the
 * preload library does not define them (preload/mpiio/wrap.c).  On MPI
 * 4.0 and later this header is empty.
 */
#ifndef GFSPLIT_TESTS_MPI4_H
#define GFSPLIT_TESTS_MPI4_H

#include <limits.h>
#include <mpi.h>

#if MPI_VERSION < 4

#define MPI4_FITS(c)	((c) >= 0 && (c) <= INT_MAX)

/* (fh, buf, count, type, status or request) */
#define MPI4_C(op, B, L)						\
static inline int							\
MPI_File_##op##_c(MPI_File fh, B *b, MPI_Count c, MPI_Datatype t, L *l)	\
{									\
	return MPI4_FITS(c) ? MPI_File_##op(fh, b, (int)c, t, l) :	\
	    MPI_ERR_COUNT;						\
}
/* (fh, offset, buf, count, type, status or request) */
#define MPI4_AT_C(op, B, L)						\
static inline int							\
MPI_File_##op##_c(MPI_File fh, MPI_Offset o, B *b, MPI_Count c,		\
		  MPI_Datatype t, L *l)					\
{									\
	return MPI4_FITS(c) ? MPI_File_##op(fh, o, b, (int)c, t, l) :	\
	    MPI_ERR_COUNT;						\
}
/* the _begin of a split collective: (fh, [offset,] buf, count, type) */
#define MPI4_BEGIN_C(op, B)						\
static inline int							\
MPI_File_##op##_c(MPI_File fh, B *b, MPI_Count c, MPI_Datatype t)	\
{									\
	return MPI4_FITS(c) ? MPI_File_##op(fh, b, (int)c, t) :		\
	    MPI_ERR_COUNT;						\
}
#define MPI4_AT_BEGIN_C(op, B)						\
static inline int							\
MPI_File_##op##_c(MPI_File fh, MPI_Offset o, B *b, MPI_Count c,		\
		  MPI_Datatype t)					\
{									\
	return MPI4_FITS(c) ? MPI_File_##op(fh, o, b, (int)c, t) :	\
	    MPI_ERR_COUNT;						\
}

MPI4_C(read, void, MPI_Status)
MPI4_C(write, const void, MPI_Status)
MPI4_C(read_all, void, MPI_Status)
MPI4_C(write_all, const void, MPI_Status)
MPI4_C(read_shared, void, MPI_Status)
MPI4_C(write_shared, const void, MPI_Status)
MPI4_C(read_ordered, void, MPI_Status)
MPI4_C(write_ordered, const void, MPI_Status)
MPI4_C(iread, void, MPI_Request)
MPI4_C(iwrite, const void, MPI_Request)
MPI4_C(iread_all, void, MPI_Request)
MPI4_C(iwrite_all, const void, MPI_Request)
MPI4_C(iread_shared, void, MPI_Request)
MPI4_C(iwrite_shared, const void, MPI_Request)
MPI4_AT_C(read_at, void, MPI_Status)
MPI4_AT_C(write_at, const void, MPI_Status)
MPI4_AT_C(read_at_all, void, MPI_Status)
MPI4_AT_C(write_at_all, const void, MPI_Status)
MPI4_AT_C(iread_at, void, MPI_Request)
MPI4_AT_C(iwrite_at, const void, MPI_Request)
MPI4_AT_C(iread_at_all, void, MPI_Request)
MPI4_AT_C(iwrite_at_all, const void, MPI_Request)
MPI4_BEGIN_C(read_all_begin, void)
MPI4_BEGIN_C(write_all_begin, const void)
MPI4_BEGIN_C(read_ordered_begin, void)
MPI4_BEGIN_C(write_ordered_begin, const void)
MPI4_AT_BEGIN_C(read_at_all_begin, void)
MPI4_AT_BEGIN_C(write_at_all_begin, const void)

static inline int
MPI_Get_count_c(const MPI_Status *st, MPI_Datatype t, MPI_Count *c)
{
	int n = 0, rc = MPI_Get_count(st, t, &n);

	*c = n == MPI_UNDEFINED ? MPI_UNDEFINED : (MPI_Count)n;
	return rc;
}

static inline int
MPI_Get_elements_c(const MPI_Status *st, MPI_Datatype t, MPI_Count *c)
{
	return MPI_Get_elements_x(st, t, c);
}

#endif /* MPI_VERSION < 4 */
#endif /* GFSPLIT_TESTS_MPI4_H */
