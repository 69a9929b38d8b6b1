/*
 * counter.c - where the shared file pointer's two counters live (the
 * pointer and atomic mode's write clock, shared.c), and their one atomic
 * access (mpiio.h, sf_counter).
 *
 * The counters are on rank 0 of the file's communicator; every rank
 * reaches them one-sidedly, so that an independent call (write_shared)
 * needs nothing from the other ranks.  Which means, tried at the open in
 * this order, the first that works on every rank:
 *
 *   one rank       the process's own memory: no window (Open MPI 4.1
 *                  cannot make an MPI_Win_create window over one rank)
 *   MPI_Win_create on rank 0's memory, set to 0 before the window exists
 *                  (MPI_Win_allocate maps a shared-memory segment whose
 *                  counters must then be set through the window, ~7 ms
 *                  more per open here)
 *   MPI_Win_allocate  the MPI's own memory, where it cannot expose ours
 *   a transport of gfsplit's (libcore/cache/onesided.h, "auto": verbs,
 *                  shm, tcp): where the MPI makes no window at all, as
 *                  Open MPI 4.1 as Debian ships it across Ethernet nodes
 *                  (its one-sided components need an RDMA network there)
 *   none           the open succeeds; only the calls that need a counter
 *                  fail, with the reason (f->shwhy)
 *
 * With MPI the access is MPI_Fetch_and_op, flushed (MPI_SUM, MPI_NO_OP,
 * MPI_REPLACE on one word are atomic with respect to each other); with a
 * gfsplit transport, get64 and a cas64 loop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "mpiio.h"
#include "onesided.h"

#define COUNTERS_BYTES	(2 * sizeof(MPI_Offset))

/* one access on this process's memory */
static int
local_access(MPI_Offset *c, MPI_Op op, MPI_Offset v, MPI_Offset *old)
{
	if (old != NULL)
		*old = *c;
	if (op == MPI_SUM)
		*c += v;
	else if (op == MPI_REPLACE)
		*c = v;
	return 0;
}

/* one access through a gfsplit transport: a read, or a CAS loop from the
 * value read until the word has not changed in between */
static int
os_access(struct sfile *f, int which, MPI_Op op, MPI_Offset v,
	  MPI_Offset *old, struct gfsp_error *err)
{
	uint64_t off = (uint64_t)which * sizeof(MPI_Offset), cur = 0, was;
	int rc;

	rc = f->shops->get64(f->shos, 0, off, &cur, err);
	while (rc == 0 && op != MPI_NO_OP) {
		uint64_t want = op == MPI_SUM ? cur + (uint64_t)v : (uint64_t)v;

		rc = f->shops->cas64(f->shos, 0, off, cur, want, &was, err);
		if (rc != 0 || was == cur)
			break;
		cur = was;
	}
	if (old != NULL)
		*old = (MPI_Offset)cur;
	return rc;
}

/* "'PATH': shared file pointer: WHY", formatted only when it failed */
static int
counter_fail(const struct sfile *f, int which, int code, const char *why,
	     struct gfsp_error *err)
{
	return gfsp_error_set(err, code, "'%s': %s: %s", f->path,
	    which == SF_PTR ? "shared file pointer" :
	    "atomic mode's write clock", why);
}

int
sf_counter(struct sfile *f, int which, MPI_Op op, MPI_Offset v,
	   MPI_Offset *old, struct gfsp_error *err)
{
	struct gfsp_error oerr;
	MPI_Offset o = 0;
	int mrc;

	if (f->nprocs == 1)
		return local_access(f->shptr + which, op, v, old);
	gfsp_error_clear(&oerr);
	if (f->shos != NULL)
		return os_access(f, which, op, v, old, &oerr) == 0 ? 0 :
		    counter_fail(f, which, oerr.code, oerr.msg, err);
	if (f->shwin == MPI_WIN_NULL)
		return counter_fail(f, which, GFSP_ENOTSUP, f->shwhy != NULL ?
		    f->shwhy : "no window", err);
	mrc = MPI_Fetch_and_op(&v, &o, MPI_OFFSET, 0, which, op, f->shwin);
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Win_flush(0, f->shwin);
	if (old != NULL)
		*old = o;
	if (gfsp_mpi_check(mrc, "MPI_Fetch_and_op", &oerr) == 0)
		return 0;
	return counter_fail(f, which, oerr.code, oerr.msg, err);
}

int
sf_counters_ready(const struct sfile *f)
{
	return f->nprocs == 1 || f->shos != NULL || f->shwin != MPI_WIN_NULL;
}

/* MPI_Win_create, else MPI_Win_allocate; 0 or the error, agreed */
static int
make_window(struct sfile *f, struct gfsp_error *err)
{
	MPI_Aint size = f->rank == 0 ? (MPI_Aint)COUNTERS_BYTES : 0;
	MPI_Offset *mem = NULL;
	int rc;

	rc = gfsp_mpi_check(MPI_Win_create(f->shptr, size,
	    sizeof(MPI_Offset), MPI_INFO_NULL, f->comm, &f->shwin),
	    "MPI_Win_create", err);
	if (gfsp_agree(f->comm, rc, err) == 0)
		return 0;
	rc = gfsp_mpi_check(MPI_Win_allocate(size, sizeof(MPI_Offset),
	    MPI_INFO_NULL, f->comm, &mem, &f->shwin), "MPI_Win_allocate",
	    err);
	if (rc == 0 && f->rank == 0)
		memset(mem, 0, COUNTERS_BYTES);	/* nobody reaches in yet */
	rc = gfsp_agree(f->comm, rc, err);
	if (rc != 0)
		f->shwin = MPI_WIN_NULL;	/* nothing to free */
	return rc;
}

/* the window ready for passive-target access from every rank */
static int
lock_window(struct sfile *f, struct gfsp_error *err)
{
	/* an RMA error is ours to report, not a reason to abort */
	MPI_Win_set_errhandler(f->shwin, MPI_ERRORS_RETURN);
	/* no rank ever locks it exclusively */
	return gfsp_agree(f->comm, gfsp_mpi_check(MPI_Win_lock_all(
	    MPI_MODE_NOCHECK, f->shwin), "cannot use the shared file "
	    "pointer's window", err), err);
}

int
sf_shared_open(struct sfile *f, struct gfsp_error *err)
{
	struct gfsp_error why, tw;
	char msg[2 * sizeof(why.msg) + 64];
	int rc = 0;

	f->shptr = f->rank == 0 ? calloc(2, sizeof(MPI_Offset)) : NULL;
	if (f->rank == 0 && f->shptr == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	if ((rc = gfsp_agree(f->comm, rc, err)) != 0 || f->nprocs == 1)
		return rc;
	gfsp_error_clear(&why);
	if (make_window(f, &why) == 0)
		return lock_window(f, err);
	gfsp_error_clear(&tw);
	if (gfsp_os_create(f->comm, "auto", COUNTERS_BYTES, COUNTERS_BYTES,
	    &f->shops, &f->shos, &tw) == 0)
		return 0;
	f->shos = NULL;
	snprintf(msg, sizeof(msg), "no one-sided counter: %s; %s", why.msg,
	    tw.msg);
	f->shwhy = strdup(msg);
	return 0;
}

void
sf_shared_close(struct sfile *f)
{
	if (f->shwin != MPI_WIN_NULL) {
		MPI_Win_unlock_all(f->shwin);
		MPI_Win_free(&f->shwin);
	}
	if (f->shos != NULL)
		f->shops->destroy(f->shos);
	f->shos = NULL;
	free(f->shptr);
	f->shptr = NULL;
	free(f->shwhy);
	f->shwhy = NULL;
}
