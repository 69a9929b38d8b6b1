/*
 * mpiio.h - inside libgfsplit-mpiio.so, the preloadable MPI-IO layer that
 * turns N-1 writes of unmodified programs into split files (Kimura and
 * Tatebe, "MPI-IO/Gfarm: an implementation of MPI-IO for the Gfarm file
 * system", sections 4-6) and reads split files as one file.
 *
 *   LD_PRELOAD=libgfsplit-mpiio.so mpiexec -n N ./app
 *
 * The library defines MPI_File_* (wrap.c); the application's calls reach
 * it before MPICH's, and it reaches MPICH through the profiling names
 * (PMPI_File_*).  A file it manages is opened in MPICH too, on /dev/null
 * over the open's communicator, with its hints: that "shadow" handle is what
 * the application holds, so every call the library does not handle
 * (errhandlers, info, atomicity, Fortran handle conversion) works
 * unchanged on a real MPICH handle, and the error handler the application
 * set gets its own handle back.  The view and the group are the
 * library's.
 *
 *   file.c    selection, open, close, delete, the table of managed
 *             files, errors as MPI error classes through the file's handler
 *   io.c      views, reads and writes, file pointers, sizes, sync,
 *             completed requests for the nonblocking forms
 *   shared.c  the shared file pointer: a one-sided counter on rank 0
 *   counter.c where that counter lives (an MPI window, a transport of
 *             gfsplit's) and its one atomic access
 *   posix.c   split files as regular files to POSIX and stdio calls (the
 *             backend of the descriptor hook, preload/hook/fdhook.h)
 *   names.c   split files removed, renamed and truncated by name (the
 *             hook's unlink, rename, truncate and their *at forms)
 *   wrap.c    the MPI_File_* symbols: a managed handle goes to file.c,
 *             io.c or shared.c, any other to PMPI_File_*
 */
#ifndef GFSP_MPIIO_H
#define GFSP_MPIIO_H

#include <mpi.h>
#include <stdint.h>

#include "gfsplit.h"
#include "../hook/fdhook.h"

struct gfsp_os;			/* libcore/cache/onesided.h */
struct gfsp_os_ops;

/*
 * The library's own work on a managed file (wrap.c): while it runs, the
 * descriptor hook passes every POSIX call to libc, so libcore sees a
 * split directory as the directory it is.  (The hook also tells the
 * library's calls apart by their return address, but a sanitizer's
 * interceptor between the two hides that.)
 */
#define SF_WORK(call) __extension__ ({					\
	int was_ = hk_inside, rc_;					\
									\
	hk_inside = 1;							\
	rc_ = (call);							\
	hk_inside = was_;						\
	rc_;								\
})

enum sf_mode {
	SF_READ = 1,		/* an existing split file, read as one file */
	SF_WRITE = 2		/* a new split file being written */
};

/*
 * A handle on a path this process already has open for split-write (a
 * second MPI_File_open of it, on any communicator whose ranks all have
 * it open, as PnetCDF's independent data mode opens it again on
 * MPI_COMM_SELF) is an alias: it has a view, pointers and a communicator
 * of its own, and writes and reads through its owner's writer, so that
 * both handles' bytes land in the one split file the owner commits.
 * The fields marked [owner] are used through SF_DATA(f), the owner's.
 */
struct sfile {
	MPI_File fh;		/* the shadow handle the application holds */
	MPI_Comm comm;		/* private duplicate of the open's comm */
	MPI_Group group;	/* the open's comm's: MPI_Barrier on a comm
				 * of this group orders writes (sf_barrier) */
	int rank, nprocs;
	int amode;
	enum sf_mode mode;
	char *path;
	struct sfile *owner;	/* an alias: the first handle; else NULL */
	int aliases;		/* the owner: how many aliases are open */
	int orphan;		/* an alias whose owner was closed first */
	struct gfsp_split_writer *w;	/* [owner] SF_WRITE */
	struct gfsp_layout *layout;	/* SF_READ */
	int failed;		/* [owner] a write failed: close must not
				 * commit */
	int had_base;		/* SF_WRITE: a file was there at the open */
	int dirty;		/* [owner] written since the ranks last saw
				 * each other's writes (sf_catch_up) */
	uint64_t key_dev, key_ino;	/* the path's directory, and */
	char *key_name;		/* its name there: how an open finds it */

	/* the file view, flattened */
	struct gfsp_view view;
	int dense;		/* view is every byte from view.disp on */
	uint64_t user_disp;	/* set_view's disp, for get_view only: the
				 * view starts at view.disp (the filetype's
				 * first byte may lie past it) */
	uint64_t etype_size;
	uint32_t view_id;	/* the writer's id of the view, 0: none */
	int one_tile;		/* the view is its first tile alone
				 * (GFSP_TYPEMAP_ONE_TILE): no byte past it */
	int ext32;		/* datarep "external32": the file holds each
				 * datatype's elements big-endian, at their
				 * native sizes and extents, as ROMIO does */
	MPI_Datatype etype, filetype;	/* for get_view; NULL: never set */
	int view_lent;		/* view's arrays belong to the writer */

	MPI_Offset pos;		/* individual file pointer, in etypes */
	/* the shared file pointer's counters, on rank 0 (counter.c) */
	MPI_Win shwin;		/* an MPI window, or */
	const struct gfsp_os_ops *shops;	/* a transport of gfsplit's, */
	struct gfsp_os *shos;	/* or neither */
	MPI_Offset *shptr;	/* rank 0: the counters' memory (NULL: the
				 * MPI's, in the window) */
	char *shwhy;		/* no window: why (the calls that need the
				 * shared pointer fail with it) */
	uint64_t size;		/* [owner] logical size as this rank knows it */
	/* the writes' epoch (splitfile.h): every rank counts the same
	 * collective calls, so it is the same on every rank between two of
	 * them without a message; +1 at MPI_File_sync and on entering and
	 * leaving each collective call (sf_next_epoch).  In atomic mode each
	 * write takes its epoch from the write clock (sf_clock_tick).
	 * [owner]: an alias's collective calls do not count. */
	uint64_t epoch;
	int atomic;		/* MPI_File_set_atomicity(fh, 1) */

	/* split collective: result of the _begin for its _end */
	int split_active;
	int split_rc;
	MPI_Count split_bytes;

	struct sfile *next;
};

/* The handle whose writer, size and epoch f uses: its owner, or f. */
#define SF_DATA(f)	((f)->owner != NULL ? (f)->owner : (f))

/* file.c */
struct sfile *sf_find(MPI_File fh);
/* MPI_Barrier(comm), before MPICH's: on every open split-write whose
 * communicator has comm's group, a point that orders writes, where the
 * ranks see each other's writes (sf_catch_up).  Returns an MPI code. */
int sf_barrier(MPI_Comm comm);
int sf_open(MPI_Comm comm, const char *path, int amode, MPI_Info info,
	    MPI_File *fh);
int sf_close(struct sfile *f, MPI_File *fh);
int sf_delete(const char *path, MPI_Info info, int *handled);
/* Report err on this rank (stderr) and return it as an MPI error class
 * through f's error handler (f NULL: MPI_FILE_NULL's). */
int sf_fail(struct sfile *f, const struct gfsp_error *err);
/* The same for an error found on some rank of a collective call. */
int sf_fail_code(struct sfile *f, int mpi_class, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The one-line notices (verbose selection, unsupported calls). */
void sf_notice_once(int *done, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* posix.c */
/* The hooked call came from the program, not from this library. */
int sf_from_program(void);
/* The logical size of the split directory at dirfd/path, if it is one
 * (its marker reads): 0 and *size, else -1. */
int sf_split_size(int dirfd, const char *path, uint64_t *size);

/* io.c */
/* Drop f->view (freed unless the writer holds it). */
void sf_view_release(struct sfile *f);
void sf_view_types_free(struct sfile *f);
/* MPI_File_get_view and MPI_File_get_byte_offset from f's own view. */
int sf_get_view(struct sfile *f, MPI_Offset *disp, MPI_Datatype *etype,
		MPI_Datatype *filetype, char *datarep);
int sf_get_byte_offset(struct sfile *f, MPI_Offset offset, MPI_Offset *disp);
int sf_set_view(struct sfile *f, MPI_Offset disp, MPI_Datatype etype,
		MPI_Datatype filetype, const char *datarep, MPI_Info info);
enum { SF_AT = 1, SF_COLL = 2, SF_SHARED = 4, SF_ORDERED = 8, SF_RAW = 16 };
/*
 * One read or write: at the individual pointer, or at `offset` (SF_AT);
 * SF_COLL makes it collective (errors agreed over the communicator).
 * SF_SHARED (read_shared, write_shared) and SF_ORDERED (read_ordered,
 * write_ordered) come with SF_AT from shared.c: they check what ROMIO
 * checks for those calls (sf_check_args).  SF_RAW: no external32
 * conversion, where MPICH makes none (its iread, iwrite, iread_at,
 * iwrite_at, iread_shared, iwrite_shared and read_ordered move the bytes
 * as they are, whatever the view's data representation).
 * OUT *bytes: bytes moved.  Returns MPI_SUCCESS or an MPI error code
 * already passed through the error handler.
 */
int sf_io(struct sfile *f, int write, int flags, MPI_Offset offset,
	  void *buf, MPI_Count count, MPI_Datatype type, MPI_Count *bytes);
/*
 * What MPICH checks before a read or write moves a byte, in its order,
 * with its error classes: the explicit offset, the count, the datatype,
 * a whole number of etypes, the access mode, MPI_MODE_SEQUENTIAL.  OUT
 * *bytes: the call's bytes.  Returns 0 or the MPI error class, the reason
 * in err (not yet reported).
 */
int sf_check_args(struct sfile *f, int write, int flags, MPI_Offset offset,
		  MPI_Count count, MPI_Datatype type, uint64_t *bytes,
		  struct gfsp_error *err);
/* 0, or MPI_ERR_TYPE for MPI_DATATYPE_NULL or a type not committed. */
int sf_type_class(struct sfile *f, MPI_Datatype t);
/* MPI_File_get_type_extent: native and external32 extents are alike. */
int sf_get_type_extent(struct sfile *f, MPI_Datatype t, MPI_Count *extent);
void sf_status(MPI_Status *st, MPI_Count bytes);
int sf_request(MPI_Count bytes, MPI_Request *req);
int sf_seek(struct sfile *f, MPI_Offset off, int whence);
int sf_get_size(struct sfile *f, MPI_Offset *size);
int sf_set_size(struct sfile *f, MPI_Offset size, int grow_only);
int sf_sync(struct sfile *f);
int sf_set_atomicity(struct sfile *f, int flag);
/* A collective call begins or ends: later writes are MPI-later. */
void sf_next_epoch(struct sfile *f);
/* Collective: if any rank wrote since the ranks last saw each other's
 * writes, every rank's writes show in every rank's reads from now on, as
 * in ROMIO where a collective call or a barrier separates them.  A gfsplit
 * code, agreed. */
int sf_catch_up(struct sfile *f, struct gfsp_error *err);
/* The bytes of the view below f->size: where MPI_SEEK_END points. */
uint64_t sf_stream_size(const struct sfile *f);

/* counter.c: the counters on rank 0.  Collective, in sf_open: both at 0.
 * Returns a gfsplit code, agreed (no one-sided means is not an error);
 * sf_shared_close (collective, in sf_close) frees them. */
int sf_shared_open(struct sfile *f, struct gfsp_error *err);
void sf_shared_close(struct sfile *f);
enum { SF_PTR = 0, SF_CLOCK = 1 };
/* One atomic access to counter `which` (SF_PTR, SF_CLOCK) from any rank:
 * OUT *old (may be NULL) = counter; counter = op(counter, v), op MPI_SUM,
 * MPI_NO_OP or MPI_REPLACE.  Complete at rank 0 when it returns. */
int sf_counter(struct sfile *f, int which, MPI_Op op, MPI_Offset v,
	       MPI_Offset *old, struct gfsp_error *err);
/* The counters exist (else every sf_counter fails, saying why). */
int sf_counters_ready(const struct sfile *f);

/*
 * shared.c: the shared file pointer, in etypes of the view.  Calls that
 * move data return like sf_io (OUT *bytes); `call` names the MPI call in
 * the one-time notice; flags: 0 or SF_RAW.
 */
/* read_shared, write_shared and their i* and _c forms: independent */
int sf_shared_io(struct sfile *f, const char *call, int write, int flags,
		 void *buf, MPI_Count count, MPI_Datatype type,
		 MPI_Count *bytes);
/* read_ordered, write_ordered, their _c and _begin forms: collective */
int sf_ordered(struct sfile *f, const char *call, int write, int flags,
	       void *buf, MPI_Count count, MPI_Datatype type,
	       MPI_Count *bytes);
int sf_seek_shared(struct sfile *f, MPI_Offset off, int whence);
int sf_get_position_shared(struct sfile *f, MPI_Offset *off);
/* Collective: the pointer as every rank's earlier accesses left it
 * (set_view's MPI_DISPLACEMENT_CURRENT).  Returns a gfsplit code, agreed. */
int sf_shared_position(struct sfile *f, MPI_Offset *off,
		       struct gfsp_error *err);
/* Collective, after a successful sf_set_view: the pointer back to 0. */
int sf_shared_reset(struct sfile *f);
/*
 * The write clock of atomic mode, beside the pointer: a tick is the next
 * epoch, and since a tick is taken before the write it orders, a write
 * that starts after another has ended gets the higher one (MPI 4.1
 * section 14.6.1: in atomic mode the later write wins).  sf_clock_set
 * puts it at value (rank 0, with every rank waiting).
 */
int sf_clock_tick(struct sfile *f, uint64_t *tick, struct gfsp_error *err);
int sf_clock_set(struct sfile *f, uint64_t value, struct gfsp_error *err);

#endif /* GFSP_MPIIO_H */
