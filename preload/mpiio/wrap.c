/*
 * wrap.c - the MPI_File_* symbols of libgfsplit-mpiio.so (mpiio.h).
 *
 * Each one looks the handle up: a file the library manages goes to
 * file.c / io.c / shared.c, any other straight to MPICH through
 * PMPI_File_*.  Calls that only touch what the shadow handle holds (info,
 * get_atomicity, errhandlers) are not defined here at all: MPICH answers
 * them on the shadow (opened on /dev/null over the open's communicator).
 * The view is ours alone (MPICH's set_view would flatten the filetype a
 * second time), so get_view, get_byte_offset and get_type_extent are
 * answered here.
 *
 * Reads and writes come in 4 positionings x 3 completions x 2 count types;
 * the macros below spell each family once.  Nonblocking forms complete
 * before they return (their request is already done); split collectives
 * do the work in _begin and hand its outcome to _end.  The large-count
 * (_c) forms are MPI-4.0's: an MPI-3.1 library (Open MPI 4) has none, so
 * there is nothing of theirs to take over.
 */
#include <mpi.h>

#include "core.h"
#include "mpiio.h"

/* ------------------------------------------------ open, close, delete */

int
MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
	      MPI_File *fh)
{
	return SF_WORK(sf_open(comm, filename, amode, info, fh));
}

int
MPI_File_close(MPI_File *fh)
{
	struct sfile *f = fh ? sf_find(*fh) : NULL;

	return f ? SF_WORK(sf_close(f, fh)) : PMPI_File_close(fh);
}

int
MPI_File_delete(const char *filename, MPI_Info info)
{
	int handled, rc;

	rc = SF_WORK(sf_delete(filename, info, &handled));
	return handled ? rc : PMPI_File_delete(filename, info);
}

/*
 * A program that ends the job (MPI_Abort; PnetCDF and HDF5 do on errors)
 * leaves no temporary of a split-write it had open: this rank removes
 * the temporaries of its open writers (all their ranks' parts; best
 * effort, within seconds) before MPICH ends the job.  The destinations
 * stay as they were before the open.
 */
int
MPI_Abort(MPI_Comm comm, int errorcode)
{
	gfsp_watch_run_undo();
	return PMPI_Abort(comm, errorcode);
}

/* A barrier of a split-write's ranks orders their writes (io.c) */
int
MPI_Barrier(MPI_Comm comm)
{
	int rc = sf_barrier(comm);

	return rc != MPI_SUCCESS ? rc : PMPI_Barrier(comm);
}

int
MPI_File_set_atomicity(MPI_File fh, int flag)
{
	struct sfile *f = sf_find(fh);

	return f ? sf_set_atomicity(f, flag) :
	    PMPI_File_set_atomicity(fh, flag);
}

/* The file's group is the open's (f->comm is a duplicate of it). */
int
MPI_File_get_group(MPI_File fh, MPI_Group *group)
{
	struct sfile *f = sf_find(fh);

	return f ? MPI_Comm_group(f->comm, group) :
	    PMPI_File_get_group(fh, group);
}

int
MPI_File_get_amode(MPI_File fh, int *amode)
{
	struct sfile *f = sf_find(fh);

	if (f == NULL)
		return PMPI_File_get_amode(fh, amode);
	*amode = f->amode;
	return MPI_SUCCESS;
}

/* ------------------------------------------------------ view, pointer */

int
MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
		  MPI_Datatype filetype, const char *datarep, MPI_Info info)
{
	struct sfile *f = sf_find(fh);
	int rc;

	if (f == NULL)
		return PMPI_File_set_view(fh, disp, etype, filetype, datarep,
		    info);
	rc = SF_WORK(sf_set_view(f, disp, etype, filetype, datarep,
	    info));
	/* a new view puts the shared file pointer back to 0 as well */
	return rc == MPI_SUCCESS ? sf_shared_reset(f) : rc;
}

int
MPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
		  MPI_Datatype *filetype, char *datarep)
{
	struct sfile *f = sf_find(fh);

	return f ? sf_get_view(f, disp, etype, filetype, datarep) :
	    PMPI_File_get_view(fh, disp, etype, filetype, datarep);
}

int
MPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
	struct sfile *f = sf_find(fh);

	return f ? sf_get_byte_offset(f, offset, disp) :
	    PMPI_File_get_byte_offset(fh, offset, disp);
}

/* A type's extent in the file is its extent, in every representation
 * MPICH has (its external32 keeps native sizes, io.c). */
int
MPI_File_get_type_extent(MPI_File fh, MPI_Datatype type, MPI_Aint *extent)
{
	struct sfile *f = sf_find(fh);
	MPI_Count x = 0;
	int rc;

	if (f == NULL)
		return PMPI_File_get_type_extent(fh, type, extent);
	rc = sf_get_type_extent(f, type, &x);
	if (rc == MPI_SUCCESS)
		*extent = (MPI_Aint)x;
	return rc;
}

#if MPI_VERSION >= 4
int
MPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype type, MPI_Count *extent)
{
	struct sfile *f = sf_find(fh);

	return f ? sf_get_type_extent(f, type, extent) :
	    PMPI_File_get_type_extent_c(fh, type, extent);
}
#endif

int
MPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
	struct sfile *f = sf_find(fh);

	return f ? sf_seek(f, offset, whence) :
	    PMPI_File_seek(fh, offset, whence);
}

int
MPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
	struct sfile *f = sf_find(fh);

	if (f == NULL)
		return PMPI_File_get_position(fh, offset);
	*offset = f->pos;
	return MPI_SUCCESS;
}

/* ----------------------------------------------------- size and sync */

int
MPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
	struct sfile *f = sf_find(fh);

	return f ? sf_get_size(f, size) : PMPI_File_get_size(fh, size);
}

int
MPI_File_set_size(MPI_File fh, MPI_Offset size)
{
	struct sfile *f = sf_find(fh);

	return f ? SF_WORK(sf_set_size(f, size, 0)) :
	    PMPI_File_set_size(fh, size);
}

int
MPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
	struct sfile *f = sf_find(fh);

	return f ? SF_WORK(sf_set_size(f, size, 1)) :
	    PMPI_File_preallocate(fh, size);
}

int
MPI_File_sync(MPI_File fh)
{
	struct sfile *f = sf_find(fh);

	return f ? SF_WORK(sf_sync(f)) : PMPI_File_sync(fh);
}

/* ------------------------------------------------- reads and writes */

/*
 * BLOCKING(NAME, CONST, CNT, WRITE, FLAGS): MPI_File_NAME at the
 * individual pointer; BLOCKING_AT the same with an explicit offset.
 * CONST is `const` for writes; CNT is int or MPI_Count.
 */
#define BLOCKING(NAME, CONST, CNT, WRITE, FLAGS)			\
int									\
MPI_File_##NAME(MPI_File fh, CONST void *buf, CNT count,		\
		MPI_Datatype type, MPI_Status *status)			\
{									\
	struct sfile *f = sf_find(fh);					\
	MPI_Count n;							\
	int rc;								\
									\
	if (f == NULL)							\
		return PMPI_File_##NAME(fh, buf, count, type, status);	\
	rc = sf_io(f, WRITE, FLAGS, 0, (void *)buf, count, type, &n);	\
	if (rc == MPI_SUCCESS)						\
		sf_status(status, n);					\
	return rc;							\
}

#define BLOCKING_AT(NAME, CONST, CNT, WRITE, FLAGS)			\
int									\
MPI_File_##NAME(MPI_File fh, MPI_Offset offset, CONST void *buf,	\
		CNT count, MPI_Datatype type, MPI_Status *status)	\
{									\
	struct sfile *f = sf_find(fh);					\
	MPI_Count n;							\
	int rc;								\
									\
	if (f == NULL)							\
		return PMPI_File_##NAME(fh, offset, buf, count, type,	\
		    status);						\
	rc = sf_io(f, WRITE, (FLAGS) | SF_AT, offset, (void *)buf, count,\
	    type, &n);							\
	if (rc == MPI_SUCCESS)						\
		sf_status(status, n);					\
	return rc;							\
}

/* Nonblocking: done now, the request only reports it.  MPICH converts
 * no data to external32 in the independent ones (SF_RAW, mpiio.h). */
#define NONBLOCKING(NAME, CONST, CNT, WRITE, FLAGS)			\
int									\
MPI_File_##NAME(MPI_File fh, CONST void *buf, CNT count,		\
		MPI_Datatype type, MPI_Request *req)			\
{									\
	struct sfile *f = sf_find(fh);					\
	MPI_Count n;							\
	int rc;								\
									\
	if (f == NULL)							\
		return PMPI_File_##NAME(fh, buf, count, type, req);	\
	rc = sf_io(f, WRITE, (FLAGS) | ((FLAGS) & SF_COLL ? 0 : SF_RAW),	\
	    0, (void *)buf, count, type, &n);				\
	return rc == MPI_SUCCESS ? sf_request(n, req) : rc;		\
}

#define NONBLOCKING_AT(NAME, CONST, CNT, WRITE, FLAGS)			\
int									\
MPI_File_##NAME(MPI_File fh, MPI_Offset offset, CONST void *buf,	\
		CNT count, MPI_Datatype type, MPI_Request *req)		\
{									\
	struct sfile *f = sf_find(fh);					\
	MPI_Count n;							\
	int rc;								\
									\
	if (f == NULL)							\
		return PMPI_File_##NAME(fh, offset, buf, count, type, req);\
	rc = sf_io(f, WRITE, (FLAGS) | SF_AT | ((FLAGS) & SF_COLL ? 0 :	\
	    SF_RAW), offset, (void *)buf, count, type, &n);		\
	return rc == MPI_SUCCESS ? sf_request(n, req) : rc;		\
}

/*
 * Split collective: _begin does the collective work, _end reports it.
 * The work is sf_io, or for the ordered forms (ordered: the call's name)
 * sf_ordered; either way one split collective at a time per handle.
 */
static int
begin_io(struct sfile *f, const char *ordered, int write, int flags,
	 MPI_Offset offset, void *buf, MPI_Count count, MPI_Datatype type)
{
	MPI_Count n = 0;

	if (f->split_active)
		return sf_fail_code(f, MPI_ERR_OTHER, "'%s': a split "
		    "collective is already active on this file", f->path);
	if (ordered != NULL)
		f->split_rc = sf_ordered(f, ordered, write, 0, buf, count,
		    type, &n);
	else
		f->split_rc = sf_io(f, write, flags | SF_COLL, offset, buf,
		    count, type, &n);
	f->split_bytes = n;
	f->split_active = 1;
	return f->split_rc;
}

static int
end_io(struct sfile *f, MPI_Status *status)
{
	if (!f->split_active)
		return sf_fail_code(f, MPI_ERR_OTHER, "'%s': _end without "
		    "_begin", f->path);
	f->split_active = 0;
	if (f->split_rc == MPI_SUCCESS)
		sf_status(status, f->split_bytes);
	return f->split_rc;
}

#define BEGIN(NAME, CONST, CNT, WRITE)					\
int									\
MPI_File_##NAME(MPI_File fh, CONST void *buf, CNT count,		\
		MPI_Datatype type)					\
{									\
	struct sfile *f = sf_find(fh);					\
									\
	if (f == NULL)							\
		return PMPI_File_##NAME(fh, buf, count, type);		\
	return begin_io(f, NULL, WRITE, 0, 0, (void *)buf, count, type);\
}

#define BEGIN_AT(NAME, CONST, CNT, WRITE)				\
int									\
MPI_File_##NAME(MPI_File fh, MPI_Offset offset, CONST void *buf,	\
		CNT count, MPI_Datatype type)				\
{									\
	struct sfile *f = sf_find(fh);					\
									\
	if (f == NULL)							\
		return PMPI_File_##NAME(fh, offset, buf, count, type);	\
	return begin_io(f, NULL, WRITE, SF_AT, offset, (void *)buf,	\
	    count, type);						\
}

#define END(NAME, CONST)						\
int									\
MPI_File_##NAME(MPI_File fh, CONST void *buf, MPI_Status *status)	\
{									\
	struct sfile *f = sf_find(fh);					\
									\
	if (f == NULL)							\
		return PMPI_File_##NAME(fh, buf, status);		\
	return end_io(f, status);					\
}

BLOCKING(read, , int, 0, 0)
BLOCKING(write, const, int, 1, 0)
BLOCKING(read_all, , int, 0, SF_COLL)
BLOCKING(write_all, const, int, 1, SF_COLL)
BLOCKING_AT(read_at, , int, 0, 0)
BLOCKING_AT(write_at, const, int, 1, 0)
BLOCKING_AT(read_at_all, , int, 0, SF_COLL)
BLOCKING_AT(write_at_all, const, int, 1, SF_COLL)
#if MPI_VERSION >= 4
BLOCKING(read_c, , MPI_Count, 0, 0)
BLOCKING(write_c, const, MPI_Count, 1, 0)
BLOCKING(read_all_c, , MPI_Count, 0, SF_COLL)
BLOCKING(write_all_c, const, MPI_Count, 1, SF_COLL)
BLOCKING_AT(read_at_c, , MPI_Count, 0, 0)
BLOCKING_AT(write_at_c, const, MPI_Count, 1, 0)
BLOCKING_AT(read_at_all_c, , MPI_Count, 0, SF_COLL)
BLOCKING_AT(write_at_all_c, const, MPI_Count, 1, SF_COLL)
#endif

NONBLOCKING(iread, , int, 0, 0)
NONBLOCKING(iwrite, const, int, 1, 0)
NONBLOCKING(iread_all, , int, 0, SF_COLL)
NONBLOCKING(iwrite_all, const, int, 1, SF_COLL)
NONBLOCKING_AT(iread_at, , int, 0, 0)
NONBLOCKING_AT(iwrite_at, const, int, 1, 0)
NONBLOCKING_AT(iread_at_all, , int, 0, SF_COLL)
NONBLOCKING_AT(iwrite_at_all, const, int, 1, SF_COLL)
#if MPI_VERSION >= 4
NONBLOCKING(iread_c, , MPI_Count, 0, 0)
NONBLOCKING(iwrite_c, const, MPI_Count, 1, 0)
NONBLOCKING(iread_all_c, , MPI_Count, 0, SF_COLL)
NONBLOCKING(iwrite_all_c, const, MPI_Count, 1, SF_COLL)
NONBLOCKING_AT(iread_at_c, , MPI_Count, 0, 0)
NONBLOCKING_AT(iwrite_at_c, const, MPI_Count, 1, 0)
NONBLOCKING_AT(iread_at_all_c, , MPI_Count, 0, SF_COLL)
NONBLOCKING_AT(iwrite_at_all_c, const, MPI_Count, 1, SF_COLL)
#endif

BEGIN(read_all_begin, , int, 0)
BEGIN(write_all_begin, const, int, 1)
BEGIN_AT(read_at_all_begin, , int, 0)
BEGIN_AT(write_at_all_begin, const, int, 1)
END(read_all_end, )
END(write_all_end, const)
END(read_at_all_end, )
END(write_at_all_end, const)
#if MPI_VERSION >= 4
BEGIN(read_all_begin_c, , MPI_Count, 0)
BEGIN(write_all_begin_c, const, MPI_Count, 1)
BEGIN_AT(read_at_all_begin_c, , MPI_Count, 0)
BEGIN_AT(write_at_all_begin_c, const, MPI_Count, 1)
#endif

/* ------------------------------------------ shared file pointer calls */

/*
 * SHARED(NAME, CONST, CNT, WRITE, FN, FLAGS): FN is sf_shared_io
 * (independent) or sf_ordered (collective), FLAGS SF_RAW where MPICH
 * converts nothing to external32 (read_ordered); SHARED_REQ the
 * nonblocking independent forms, done now like the others (SF_RAW too);
 * SHARED_BEGIN the split collective ordered forms, whose _end is end_io's
 * as for the other split ones.
 */
#define SHARED(NAME, CONST, CNT, WRITE, FN, FLAGS)			\
int									\
MPI_File_##NAME(MPI_File fh, CONST void *buf, CNT count,		\
		MPI_Datatype type, MPI_Status *status)			\
{									\
	struct sfile *f = sf_find(fh);					\
	MPI_Count n;							\
	int rc;								\
									\
	if (f == NULL)							\
		return PMPI_File_##NAME(fh, buf, count, type, status);	\
	rc = FN(f, "MPI_File_" #NAME, WRITE, FLAGS, (void *)buf, count,	\
	    type, &n);							\
	if (rc == MPI_SUCCESS)						\
		sf_status(status, n);					\
	return rc;							\
}

#define SHARED_REQ(NAME, CONST, CNT, WRITE)				\
int									\
MPI_File_##NAME(MPI_File fh, CONST void *buf, CNT count,		\
		MPI_Datatype type, MPI_Request *req)			\
{									\
	struct sfile *f = sf_find(fh);					\
	MPI_Count n;							\
	int rc;								\
									\
	if (f == NULL)							\
		return PMPI_File_##NAME(fh, buf, count, type, req);	\
	rc = sf_shared_io(f, "MPI_File_" #NAME, WRITE, SF_RAW,		\
	    (void *)buf, count, type, &n);				\
	return rc == MPI_SUCCESS ? sf_request(n, req) : rc;		\
}

#define SHARED_BEGIN(NAME, CONST, CNT, WRITE)				\
int									\
MPI_File_##NAME(MPI_File fh, CONST void *buf, CNT count,		\
		MPI_Datatype type)					\
{									\
	struct sfile *f = sf_find(fh);					\
									\
	if (f == NULL)							\
		return PMPI_File_##NAME(fh, buf, count, type);		\
	return begin_io(f, "MPI_File_" #NAME, WRITE, 0, 0, (void *)buf,\
	    count, type);						\
}

SHARED(read_shared, , int, 0, sf_shared_io, 0)
SHARED(write_shared, const, int, 1, sf_shared_io, 0)
SHARED(read_ordered, , int, 0, sf_ordered, SF_RAW)
SHARED(write_ordered, const, int, 1, sf_ordered, 0)
SHARED_REQ(iread_shared, , int, 0)
SHARED_REQ(iwrite_shared, const, int, 1)
SHARED_BEGIN(read_ordered_begin, , int, 0)
SHARED_BEGIN(write_ordered_begin, const, int, 1)
END(read_ordered_end, )
END(write_ordered_end, const)
#if MPI_VERSION >= 4
SHARED(read_shared_c, , MPI_Count, 0, sf_shared_io, 0)
SHARED(write_shared_c, const, MPI_Count, 1, sf_shared_io, 0)
SHARED(read_ordered_c, , MPI_Count, 0, sf_ordered, SF_RAW)
SHARED(write_ordered_c, const, MPI_Count, 1, sf_ordered, 0)
SHARED_REQ(iread_shared_c, , MPI_Count, 0)
SHARED_REQ(iwrite_shared_c, const, MPI_Count, 1)
SHARED_BEGIN(read_ordered_begin_c, , MPI_Count, 0)
SHARED_BEGIN(write_ordered_begin_c, const, MPI_Count, 1)
#endif

int
MPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
	struct sfile *f = sf_find(fh);

	return f ? sf_seek_shared(f, offset, whence) :
	    PMPI_File_seek_shared(fh, offset, whence);
}

int
MPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
	struct sfile *f = sf_find(fh);

	return f ? sf_get_position_shared(f, offset) :
	    PMPI_File_get_position_shared(fh, offset);
}
