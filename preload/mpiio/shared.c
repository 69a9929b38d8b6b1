/*
 * shared.c - the shared file pointer of a managed file (mpiio.h).
 *
 * MPICH (ROMIO) keeps the shared file pointer of a file in a hidden file
 * beside it; the shadow handle's would belong to /dev/null.  The library
 * keeps its own: one MPI_Offset, in etypes of the current view, on rank 0
 * of the file's communicator, which every rank reaches one-sidedly
 * (counter.c: an MPI window where the MPI makes one, else a transport of
 * gfsplit's).  A second MPI_Offset is the write clock of atomic mode
 * (sf_clock_tick).
 *
 *   rank 0 of f->comm        ranks 1..N-1
 *   +------------------+     (they only
 *   | MPI_Offset ptr   |      reach in)
 *   | MPI_Offset clock |
 *   +------------------+
 *        ^  sf_counter, one atomic access from any rank, complete when
 *           it returns:
 *           MPI_SUM n     claim n etypes, get where they start
 *           MPI_NO_OP     read it (get_position_shared)
 *           MPI_REPLACE   set it (set_view, seek_shared); it starts at 0
 *
 * The data then goes through sf_io at an explicit offset, like any
 * write_at or read_at: it is split-written, or read from the parts.
 *
 * Independent calls (read_shared, write_shared and their i* and _c forms)
 * claim their n etypes and use the old value.  Ordered calls are
 * collective: with c_r the etypes of rank r, rank r's data starts at
 * b + p_r, where p_r = c_0 + ... + c_{r-1} (MPI_Exscan) and b is the
 * pointer before the call, which rank 0 claims for all T = sum c_r at once
 * and broadcasts:
 *
 *   b         b+p_1            b+p_2          b+T
 *   | rank 0  | rank 1         | rank 2  ...  | (the pointer after)
 *
 * Every rank's earlier shared-pointer calls finished their claims before
 * it joined the MPI_Reduce, and rank 0 claims only when the reduction
 * has heard from every rank; a rank's later calls start only after the
 * broadcast, which rank 0 sends after its claim.  So the ordered region
 * lands after every earlier access and before every later one, as MPI-4.0
 * section 14.4.4 asks.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core.h"
#include "mpiio.h"

/* ------------------------------------------------------------ helpers */

static void
notice(struct sfile *f, const char *call)
{
	static int told;	/* once per process */

	if (f->rank == 0)
		sf_notice_once(&told, "%s on '%s': shared file pointer kept "
		    "by gfsplit (one-sided counter on rank 0); the data is %s "
		    "like any other", call, f->path, f->mode == SF_WRITE ?
		    "split-written" : "read from the split file");
}

static int
counter(struct sfile *f, MPI_Op op, MPI_Offset v, MPI_Offset *old,
	struct gfsp_error *err)
{
	return sf_counter(f, SF_PTR, op, v, old, err);
}

int
sf_clock_tick(struct sfile *f, uint64_t *tick, struct gfsp_error *err)
{
	MPI_Offset t = 0;
	int rc = sf_counter(f, SF_CLOCK, MPI_SUM, 1, &t, err);

	*tick = (uint64_t)t;
	return rc;
}

int
sf_clock_set(struct sfile *f, uint64_t value, struct gfsp_error *err)
{
	return sf_counter(f, SF_CLOCK, MPI_REPLACE, (MPI_Offset)value, NULL,
	    err);
}

/*
 * What a call checks before it moves the pointer, so that a call that
 * fails leaves it where it was (sf_check_args, as MPICH checks it).  OUT
 * *n: the etypes the call moves.  Returns 0 or an MPI error class, the
 * reason in err (not yet reported).
 */
static int
check(struct sfile *f, int write, int flags, MPI_Count count,
      MPI_Datatype type, MPI_Offset *n, struct gfsp_error *err)
{
	uint64_t bytes = 0;
	int cls;

	cls = sf_check_args(f, write, flags | SF_AT, 0, count, type, &bytes,
	    err);
	*n = (MPI_Offset)(bytes / f->etype_size);
	return cls;
}

/* --------------------------------------------------------- the calls */

int
sf_shared_io(struct sfile *f, const char *call, int write, int flags,
	     void *buf, MPI_Count count, MPI_Datatype type, MPI_Count *bytes)
{
	struct gfsp_error err;
	MPI_Offset n = 0, at = 0;
	int rc;

	*bytes = 0;
	notice(f, call);
	gfsp_error_clear(&err);
	rc = check(f, write, SF_SHARED, count, type, &n, &err);
	if (rc != MPI_SUCCESS)
		return sf_fail_code(f, rc, "%s", err.msg);
	if (counter(f, MPI_SUM, n, &at, &err) != 0)
		return sf_fail(f, &err);
	/* a read short of the end still moved the pointer by n, as MPICH */
	return sf_io(f, write, SF_AT | SF_SHARED | flags, at, buf, count,
	    type, bytes);
}

int
sf_ordered(struct sfile *f, const char *call, int write, int flags,
	   void *buf, MPI_Count count, MPI_Datatype type, MPI_Count *bytes)
{
	struct gfsp_error err;
	MPI_Offset n = 0, before = 0, total = 0, base = 0;
	int cls, rc, mrc;

	*bytes = 0;
	notice(f, call);
	gfsp_error_clear(&err);
	cls = check(f, write, SF_ORDERED, count, type, &n, &err);
	rc = gfsp_agree(f->comm, cls == MPI_SUCCESS ? 0 : err.code, &err);
	if (cls != MPI_SUCCESS)
		return sf_fail_code(f, cls, "%s", err.msg);
	if (rc)
		return sf_fail(f, &err);

	/* every rank makes every collective call; the first error wins */
	rc = gfsp_mpi_check(MPI_Exscan(&n, &before, 1, MPI_OFFSET, MPI_SUM,
	    f->comm), "ordered access: MPI_Exscan", &err);
	mrc = gfsp_reduce(&n, &total, 1, MPI_OFFSET, MPI_SUM, 0, f->comm);
	if (rc == 0)
		rc = gfsp_mpi_check(mrc, "ordered access: MPI_Reduce", &err);
	if (f->rank == 0) {
		before = 0;	/* MPI_Exscan leaves rank 0's undefined */
		if (rc == 0)
			rc = counter(f, MPI_SUM, total, &base, &err);
	}
	mrc = gfsp_bcast(&base, 1, MPI_OFFSET, 0, f->comm);
	if (rc == 0)
		rc = gfsp_mpi_check(mrc, "ordered access: MPI_Bcast", &err);
	rc = gfsp_agree(f->comm, rc, &err);
	if (rc)
		return sf_fail(f, &err);
	return sf_io(f, write, SF_AT | SF_COLL | SF_ORDERED | flags,
	    base + before, buf, count, type, bytes);
}

/*
 * Collective.  All ranks must pass the same offset and whence (one
 * MPI_Allreduce checks, and carries the largest size any rank knows, for
 * MPI_SEEK_END); rank 0 finds the new value, every rank checks it, rank 0
 * sets it, and the closing agreement keeps every rank's next
 * shared-pointer access after the set.
 */
int
sf_seek_shared(struct sfile *f, MPI_Offset off, int whence)
{
	struct gfsp_error err;
	struct sfile all;
	MPI_Offset in[5], max[5], out[2] = { 0, 0 }, cur = 0;
	uint64_t s;
	int rc = 0, mrc;

	notice(f, "MPI_File_seek_shared");
	gfsp_error_clear(&err);
	if (f->amode & MPI_MODE_SEQUENTIAL)
		return sf_fail_code(f, MPI_ERR_UNSUPPORTED_OPERATION, "'%s': "
		    "seek_shared: the file is opened with MPI_MODE_SEQUENTIAL",
		    f->path);
	/* max of ~x is ~(min of x): equal to max of x on every rank iff
	 * all passed the same x */
	in[0] = off;
	in[1] = ~off;
	in[2] = whence;
	in[3] = ~(MPI_Offset)whence;
	in[4] = (MPI_Offset)SF_DATA(f)->size;
	mrc = gfsp_allreduce(in, max, 5, MPI_OFFSET, MPI_MAX, f->comm);
	if (mrc != MPI_SUCCESS)
		return sf_fail_code(f, MPI_ERR_OTHER, "'%s': seek_shared: "
		    "cannot compare the arguments of the ranks", f->path);
	/* from here on the same verdict on every rank, or rank 0's */
	if (max[0] != ~max[1] || max[2] != ~max[3])
		return sf_fail_code(f, MPI_ERR_ARG, "'%s': seek_shared: the "
		    "ranks passed different offsets or whences", f->path);
	if (whence != MPI_SEEK_SET && whence != MPI_SEEK_CUR &&
	    whence != MPI_SEEK_END)
		return sf_fail_code(f, MPI_ERR_ARG, "'%s': seek_shared: bad "
		    "whence %d", f->path, whence);

	if (f->rank == 0) {
		switch (whence) {
		case MPI_SEEK_CUR:
			rc = counter(f, MPI_NO_OP, 0, &cur, &err);
			out[0] = cur;
			break;
		case MPI_SEEK_END:
			/* the view bytes below the end of every rank's
			 * writes (f->size is only this rank's), rounded up
			 * to a whole etype, as ROMIO's ADIOI_Get_eof_offset
			 * does */
			all = *f;
			all.owner = NULL;
			all.size = (uint64_t)max[4];
			s = sf_stream_size(&all);
			out[0] = (MPI_Offset)((s + f->etype_size - 1) /
			    f->etype_size);
			break;
		}
		out[1] = rc;
	}
	mrc = gfsp_bcast(out, 2, MPI_OFFSET, 0, f->comm);
	if (mrc != MPI_SUCCESS)
		return sf_fail_code(f, MPI_ERR_OTHER, "'%s': seek_shared: "
		    "cannot hear from rank 0", f->path);
	if (out[1] != 0) {
		if (f->rank != 0)
			gfsp_error_set(&err, GFSP_EPEER, "rank 0 failed: %s",
			    gfsp_strerror((int)out[1]));
		return sf_fail(f, &err);
	}
	if (off < -out[0] || off > INT64_MAX - out[0])
		return sf_fail_code(f, MPI_ERR_ARG, "'%s': seek_shared to "
		    "offset %lld%+lld: out of range", f->path,
		    (long long)out[0], (long long)off);
	if (f->rank == 0)
		rc = counter(f, MPI_REPLACE, out[0] + off, NULL, &err);
	rc = gfsp_agree(f->comm, rc, &err);
	return rc ? sf_fail(f, &err) : MPI_SUCCESS;
}

int
sf_get_position_shared(struct sfile *f, MPI_Offset *off)
{
	struct gfsp_error err;

	notice(f, "MPI_File_get_position_shared");
	gfsp_error_clear(&err);
	if (f->amode & MPI_MODE_SEQUENTIAL)
		return sf_fail_code(f, MPI_ERR_UNSUPPORTED_OPERATION, "'%s': "
		    "get_position_shared: the file is opened with "
		    "MPI_MODE_SEQUENTIAL", f->path);
	if (counter(f, MPI_NO_OP, 0, off, &err) != 0)
		return sf_fail(f, &err);
	return MPI_SUCCESS;
}

/* Collective: every rank's earlier accesses have claimed their etypes
 * before rank 0 reads the pointer (it hears from all in the agreement),
 * and no rank's later one starts before the broadcast. */
int
sf_shared_position(struct sfile *f, MPI_Offset *off, struct gfsp_error *err)
{
	int rc;

	*off = 0;
	rc = gfsp_agree(f->comm, 0, err);
	if (rc == 0 && f->rank == 0)
		rc = counter(f, MPI_NO_OP, 0, off, err);
	rc = gfsp_agree(f->comm, rc, err);
	if (rc == 0)
		rc = gfsp_mpi_check(gfsp_bcast(off, 1, MPI_OFFSET, 0, f->comm),
		    "shared file pointer: MPI_Bcast", err);
	return gfsp_agree(f->comm, rc, err);
}

/* Collective, after a successful set_view: the pointer goes back to 0
 * (MPI-4.0 section 14.3), and no rank uses it before it has. */
int
sf_shared_reset(struct sfile *f)
{
	struct gfsp_error err;
	int rc = 0;

	gfsp_error_clear(&err);
	if (!sf_counters_ready(f))
		return MPI_SUCCESS;	/* no pointer to reset (counter.c) */
	if (f->rank == 0)
		rc = counter(f, MPI_REPLACE, 0, NULL, &err);
	rc = gfsp_agree(f->comm, rc, &err);
	return rc ? sf_fail(f, &err) : MPI_SUCCESS;
}
