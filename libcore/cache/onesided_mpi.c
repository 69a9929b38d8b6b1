/*
 * onesided_mpi.c - the "mpi" one-sided transport: MPI-3 passive-target RMA
 * on a window from MPI_Win_allocate, in one MPI_Win_lock_all epoch that
 * lasts from create to destroy.
 *
 *   create:   Comm_dup -> Win_allocate -> memset 0 (the first `zero`
 *             bytes) -> lock_all -> Win_sync
 *             -> Allgather of the region sizes (for bounds checks) -> agree
 *             (the agreement is the barrier: no rank returns, and so none
 *             reads, before every rank has zeroed its region)
 *   get/put:  MPI_Get / MPI_Put, complete at flush (MPI_Win_flush)
 *   *64:      accumulate-class calls on MPI_UINT64_T, flushed at once
 *   destroy:  (progress thread joined) -> unlock_all -> Win_free ->
 *             Comm_free
 *
 * Progress.  Where MPI serves RMA as active messages (MPICH ch4:ucx over
 * TCP: UCX emulates get and put in software), an operation on a rank
 * completes only when that rank's process enters MPI.  A rank that
 * computes for seconds without an MPI call then stalls every peer that
 * reads a block it holds, for as long as it computes (measured on the
 * emulated cluster: 2.8 s for a 2 s computation; tests/cmd/cluster_cache.sh).
 * So when MPI was initialised with MPI_THREAD_MULTIPLE, the "mpi"
 * transport runs a progress thread: every GFSPLIT_CACHE_PROGRESS_US
 * microseconds (default 200; 0 turns it off) it calls MPI_Iprobe on the
 * window's communicator, which drives MPI's progress engine and with it
 * the peers' operations on this rank's region.  cache-warm and the cache
 * preload initialise MPI so; an application that links the library and
 * initialises MPI with a lower level gets no thread and the stall.
 *
 * Atomicity of the 64-bit words.  MPI makes accumulate-class calls atomic
 * against each other only under the window's "accumulate_ops" hint, whose
 * default, same_op_no_op, lets the implementation assume that concurrent
 * calls on one address use one operation or MPI_NO_OP.  A put64 done with
 * MPI_REPLACE beside a cas64 would break that promise (and with it, on
 * networks with hardware atomics, the atomicity).  So only two operations
 * ever touch a word: compare-and-swap (cas64, and put64 as a CAS loop) and
 * MPI_NO_OP (get64, by MPI_Fetch_and_op).
 *
 * One node.  When every rank of the communicator is on one node, the
 * "mpi" window is made by MPI_Win_allocate_shared too (its RMA calls stay
 * the same): that is the window every MPI serves best there, in shared
 * memory, and Open MPI 4.1's other one there (osc/rdma over its
 * shared-memory transport, vader, which emulates atomics) crashes in
 * every MPI_Compare_and_swap (Open MPI's report "Segfault OpenMpi 4.1.1
 * MPI_Compare_and_swap"; Debian 12's 4.1.4 still does), where its
 * shared-memory window (osc/sm) does not.
 *
 * The "shm" transport is the same window made by MPI_Win_allocate_shared,
 * for a communicator whose ranks are all on one node: every rank maps
 * every region (MPI_Win_shared_query) and reads and writes it with plain
 * loads and stores, the 64-bit words with the CPU's atomic instructions.
 * Nothing runs on the target, which matters where MPI serves RMA as
 * active messages (MPICH ch4:ucx on one node): there every operation
 * waits until the target enters MPI, and on an oversubscribed node that
 * is a time slice.  It is not used across nodes, where the words would be
 * changed by two kinds of atomics (the CPU's and the network's) that are
 * not atomic against each other.
 */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "onesided.h"

/* MPI_Get/MPI_Put take an int count: larger transfers go in pieces */
#define MPI_RMA_CHUNK	((size_t)1 << 30)

/* every struct gfsp_os handed out by this file is one of these */
struct os_mpi {
	const char *name;		/* "mpi", "shm" */
	MPI_Comm comm;			/* private duplicate of the caller's */
	MPI_Win win;
	void *base;			/* this rank's region */
	int rank, nprocs;
	uint64_t *size;			/* [nprocs]: every rank's region size */
	unsigned char **peer;		/* shm: [nprocs] every region, mapped */
	pthread_t progress;		/* mpi: the progress thread, if on */
	int progress_on;
	atomic_int progress_quit;	/* set: the thread ends */
	long progress_ns;		/* its period */
};

#define PROGRESS_US_DEFAULT	200
#define PROGRESS_TAG		0x6f73	/* never sent: probed only */

static struct os_mpi *
os_mpi(struct gfsp_os *w)
{
	return (struct os_mpi *)w;
}

/*
 * Check the target and the byte range before MPI sees them, so that a bad
 * offset is reported in the transport's words rather than as whatever the
 * MPI library makes of it.  `op` and `dir` make the subject of the
 * message: "one-sided get from rank 3".
 */
static int
check_target(const struct os_mpi *m, const char *op, const char *dir,
	     int rank, uint64_t off, uint64_t len, struct gfsp_error *err)
{
	return gfsp_os_check(m->name, m->nprocs, m->size, op, dir, rank, off,
			     len, 0, err);
}

static int
check_word(const struct os_mpi *m, const char *op, const char *dir,
	   int rank, uint64_t off, struct gfsp_error *err)
{
	return gfsp_os_check(m->name, m->nprocs, m->size, op, dir, rank, off,
			     8, 1, err);
}

/* "one-sided get from rank 3 (mpi): <MPI's message>" */
static int
rma_fail(int mrc, const char *op, const char *dir, int rank,
	 struct gfsp_error *err)
{
	char what[128];

	snprintf(what, sizeof(what), "one-sided %s %s rank %d (mpi)", op, dir,
		 rank);
	return gfsp_mpi_check(mrc, what, err);
}

/* "one-sided window (mpi): MPI_Win_allocate: <MPI's message>" */
static int
setup_fail(int mrc, const char *call, struct gfsp_error *err)
{
	char what[128];

	snprintf(what, sizeof(what), "one-sided window (mpi): %s", call);
	return gfsp_mpi_check(mrc, what, err);
}

/*
 * MPICH 4.0 (ch4) puts the regions of the ranks on one node side by side
 * in one shared segment when their sizes are not whole pages, and there
 * its gets from rank 1 and up read the wrong bytes (seen with 4.0.2
 * ch4:ucx: byte 0 of rank 1 read as a byte of rank 0's region).  Whole
 * pages, and the hint that the regions need not be contiguous, take it
 * to its per-rank mapping instead, which is right.  Both cost nothing
 * elsewhere: the bounds this file checks are the sizes asked for.
 */
static int
win_allocate(struct os_mpi *m, size_t bytes, int shared,
	     struct gfsp_error *err)
{
	MPI_Info info = MPI_INFO_NULL;
	long pagesz = sysconf(_SC_PAGESIZE);
	size_t page = pagesz > 0 ? (size_t)pagesz : 4096, whole = bytes;
	int mrc;

	if (bytes <= PTRDIFF_MAX - page)
		whole = (bytes + page - 1) / page * page;
	/* a hint: a rank that cannot make it goes on without, never skips
	 * the collective */
	if (MPI_Info_create(&info) != MPI_SUCCESS)
		info = MPI_INFO_NULL;
	else if (MPI_Info_set(info, "alloc_shared_noncontig", "true") !=
		 MPI_SUCCESS)
		MPI_Info_free(&info);
	if (shared)
		mrc = MPI_Win_allocate_shared((MPI_Aint)whole, 1, info, m->comm,
					      &m->base, &m->win);
	else
		mrc = MPI_Win_allocate((MPI_Aint)whole, 1, info, m->comm,
				       &m->base, &m->win);
	if (info != MPI_INFO_NULL)
		MPI_Info_free(&info);
	return setup_fail(mrc, shared ? "MPI_Win_allocate_shared" :
			  "MPI_Win_allocate", err);
}

/*
 * Make a region resident now, in one call, rather than a page fault at a
 * time while it is first used: in a virtual machine a fault costs tens of
 * microseconds, and 4 KiB pages of a 1 MiB block are 256 of them (most
 * of the time of a cold read here).  MPI's RMA on a network pins its
 * windows at creation anyway.  A hint: a kernel without
 * MADV_POPULATE_WRITE (before 5.14) faults the pages in as they are used.
 */
static void
populate(void *base, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
	long pagesz = sysconf(_SC_PAGESIZE);
	uintptr_t page = pagesz > 0 ? (uintptr_t)pagesz : 4096;
	uintptr_t from = (uintptr_t)base / page * page;

	if (bytes > 0)
		(void)madvise((void *)from, (uintptr_t)base + bytes - from,
			      MADV_POPULATE_WRITE);
#else
	(void)base;
	(void)bytes;
#endif
}

/* shm: every rank's region, mapped into this process */
static int
map_peers(struct os_mpi *m, struct gfsp_error *err)
{
	MPI_Aint sz;
	int r, du, mrc = MPI_SUCCESS;
	void *p;

	m->peer = calloc((size_t)m->nprocs, sizeof(*m->peer));
	if (m->peer == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "one-sided window "
				     "(shm): out of memory");
	for (r = 0; r < m->nprocs && mrc == MPI_SUCCESS; r++) {
		mrc = MPI_Win_shared_query(m->win, r, &sz, &du, &p);
		m->peer[r] = p;
	}
	return setup_fail(mrc, "MPI_Win_shared_query", err);
}

/* OUT *all: every rank of comm is on this node (the same on every rank) */
static int
on_one_node(MPI_Comm comm, int nprocs, int *all, struct gfsp_error *err)
{
	MPI_Comm node = MPI_COMM_NULL;
	int n = 0, mrc;

	mrc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0,
				  MPI_INFO_NULL, &node);
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Comm_size(node, &n);
	if (node != MPI_COMM_NULL)
		MPI_Comm_free(&node);
	n = mrc == MPI_SUCCESS && n == nprocs;
	*all = 0;
	mrc = MPI_Allreduce(&n, all, 1, MPI_INT, MPI_LAND, comm);
	return setup_fail(mrc, "MPI_Comm_split_type", err);
}

/* shm: GFSP_ENOTSUP unless every rank of comm is on this node (agreed) */
static int
one_node(MPI_Comm comm, int nprocs, struct gfsp_error *err)
{
	int all = 0, rc = on_one_node(comm, nprocs, &all, err);

	if (rc == 0 && !all)
		rc = gfsp_error_set(err, GFSP_ENOTSUP, "one-sided window "
				   "(shm): the ranks are on more than one "
				   "node");
	return rc;
}

/*
 * Creation is a chain of collective steps, each followed by an agreement.
 * After a failure, every rank undoes the steps that succeeded everywhere.
 * A step that failed on some ranks only is not undone on the others: its
 * undo (MPI_Comm_free, MPI_Win_free) is collective too, and the ranks
 * where it failed could not take part; a leak beats a hang.
 */
static int
window_create(MPI_Comm comm, size_t bytes, size_t zero, int shared,
	      struct gfsp_os **out, struct gfsp_error *err)
{
	struct os_mpi *m;
	uint64_t mine = bytes;
	int rc = 0, mrc, have_comm = 0, have_win = 0, locked = 0, local;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM, "one-sided window (mpi):"
				   " out of memory");
	} else {
		m->name = shared ? "shm" : "mpi";
		m->comm = MPI_COMM_NULL;
		m->win = MPI_WIN_NULL;
		mrc = MPI_Comm_rank(comm, &m->rank);
		if (mrc == MPI_SUCCESS)
			mrc = MPI_Comm_size(comm, &m->nprocs);
		rc = setup_fail(mrc, "MPI_Comm_size", err);
		if (rc == 0 && (m->size = calloc((size_t)m->nprocs,
						 sizeof(*m->size))) == NULL)
			rc = gfsp_error_set(err, GFSP_ENOMEM, "one-sided "
					   "window (mpi): out of memory");
		/* MPI_Aint is signed: a region of more than half the
		 * address space cannot be described */
		if (rc == 0 && bytes > PTRDIFF_MAX)
			rc = gfsp_error_set(err, GFSP_EINVAL, "one-sided "
					   "window (mpi): %zu bytes is too "
					   "large a region", bytes);
	}
	rc = gfsp_agree(comm, rc, err);
	if (rc != 0)
		goto fail;

	/* a private communicator: our collectives never meet the caller's,
	 * and its error handler is ours to set */
	mrc = MPI_Comm_dup(comm, &m->comm);
	rc = setup_fail(mrc, "MPI_Comm_dup", err);
	if (rc == 0)
		rc = setup_fail(MPI_Comm_set_errhandler(m->comm,
			MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler", err);
	rc = gfsp_agree(comm, rc, err);
	if (rc != 0)
		goto fail;
	have_comm = 1;

	/* mpi on one node: a shared-memory window all the same (its RMA
	 * calls stay what they are); see the top of the file */
	if ((local = shared) == 0)
		rc = on_one_node(m->comm, m->nprocs, &local, err);
	if (rc == 0)
		rc = win_allocate(m, bytes, local, err);
	rc = gfsp_agree(m->comm, rc, err);
	if (rc != 0)
		goto fail;
	have_win = 1;

	/* a window's error handler is not inherited from its communicator */
	rc = setup_fail(MPI_Win_set_errhandler(m->win, MPI_ERRORS_RETURN),
			"MPI_Win_set_errhandler", err);
	/* MPI_Win_allocate hands out uninitialised memory; the contract
	 * promises zeroes where asked */
	if (rc == 0 && bytes > 0)
		memset(m->base, 0, GFSP_MIN(zero, bytes));
	if (rc == 0)
		populate(m->base, bytes);
	if (rc == 0) {
		rc = setup_fail(MPI_Win_lock_all(MPI_MODE_NOCHECK, m->win),
				"MPI_Win_lock_all", err);
		locked = rc == 0;
	}
	if (rc == 0)
		rc = setup_fail(MPI_Win_sync(m->win), "MPI_Win_sync", err);
	if (rc == 0 && shared)
		rc = map_peers(m, err);
	/* a collective: every rank takes part, whatever happened above */
	mrc = MPI_Allgather(&mine, 1, MPI_UINT64_T, m->size, 1, MPI_UINT64_T,
			    m->comm);
	if (rc == 0)
		rc = setup_fail(mrc, "MPI_Allgather", err);
	/* also the barrier after the zeroing (see the top of the file) */
	rc = gfsp_agree(m->comm, rc, err);
	if (rc != 0)
		goto fail;
	*out = (struct gfsp_os *)m;
	return 0;

fail:
	if (m != NULL) {
		if (locked)
			MPI_Win_unlock_all(m->win);
		if (have_win)
			MPI_Win_free(&m->win);
		if (have_comm)
			MPI_Comm_free(&m->comm);
		free(m->size);
		free(m->peer);
		free(m);
	}
	return rc;
}

/* the progress thread: MPI_Iprobe, which drives MPI's progress engine,
 * every progress_ns until told to stop */
static void *
progress_main(void *arg)
{
	struct os_mpi *m = arg;
	struct timespec ts = { 0, m->progress_ns };
	int flag;

	while (!atomic_load(&m->progress_quit)) {
		MPI_Iprobe(MPI_ANY_SOURCE, PROGRESS_TAG, m->comm, &flag,
			   MPI_STATUS_IGNORE);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Start the progress thread where MPI allows calls from it (see the top
 * of the file); a rank that cannot start one goes on without. */
static void
progress_start(struct os_mpi *m)
{
	const char *e = getenv("GFSPLIT_CACHE_PROGRESS_US");
	long us = PROGRESS_US_DEFAULT;
	int level = MPI_THREAD_SINGLE;

	if (e != NULL && *e != '\0')
		us = strtol(e, NULL, 10);
	if (us <= 0 || MPI_Query_thread(&level) != MPI_SUCCESS ||
	    level != MPI_THREAD_MULTIPLE)
		return;
	m->progress_ns = GFSP_MIN(us, 999999L) * 1000L;
	atomic_store(&m->progress_quit, 0);
	m->progress_on = pthread_create(&m->progress, NULL, progress_main,
					m) == 0;
}

static void
progress_stop(struct os_mpi *m)
{
	if (!m->progress_on)
		return;
	atomic_store(&m->progress_quit, 1);
	pthread_join(m->progress, NULL);
	m->progress_on = 0;
}

static int
mpi_create(MPI_Comm comm, size_t bytes, size_t zero, struct gfsp_os **out,
	   struct gfsp_error *err)
{
	int rc = window_create(comm, bytes, zero, 0, out, err);

	if (rc == 0)
		progress_start((struct os_mpi *)*out);
	return rc;
}

static void
mpi_destroy(struct gfsp_os *w)
{
	struct os_mpi *m = os_mpi(w);

	if (m == NULL)
		return;
	progress_stop(m);
	/* MPI_Win_free waits for every rank, so nobody still reads or
	 * writes this region when it goes */
	MPI_Win_unlock_all(m->win);
	MPI_Win_free(&m->win);
	MPI_Comm_free(&m->comm);
	free(m->size);
	free(m->peer);
	free(m);
}

static void *
mpi_base(struct gfsp_os *w)
{
	return os_mpi(w)->base;
}

static int
mpi_get(struct gfsp_os *w, int rank, uint64_t off, void *dst, size_t len,
	struct gfsp_error *err)
{
	struct os_mpi *m = os_mpi(w);
	size_t done, n;
	int rc, mrc;

	if ((rc = check_target(m, "get", "from", rank, off, len, err)) != 0)
		return rc;
	for (done = 0; done < len; done += n) {
		n = GFSP_MIN(len - done, MPI_RMA_CHUNK);
		mrc = MPI_Get((char *)dst + done, (int)n, MPI_BYTE, rank,
			      (MPI_Aint)(off + done), (int)n, MPI_BYTE, m->win);
		if (mrc != MPI_SUCCESS)
			return rma_fail(mrc, "get", "from", rank, err);
	}
	return 0;
}

static int
mpi_put(struct gfsp_os *w, int rank, uint64_t off, const void *src,
	size_t len, struct gfsp_error *err)
{
	struct os_mpi *m = os_mpi(w);
	size_t done, n;
	int rc, mrc;

	if ((rc = check_target(m, "put", "to", rank, off, len, err)) != 0)
		return rc;
	for (done = 0; done < len; done += n) {
		n = GFSP_MIN(len - done, MPI_RMA_CHUNK);
		mrc = MPI_Put((const char *)src + done, (int)n, MPI_BYTE, rank,
			      (MPI_Aint)(off + done), (int)n, MPI_BYTE, m->win);
		if (mrc != MPI_SUCCESS)
			return rma_fail(mrc, "put", "to", rank, err);
	}
	return 0;
}

static int
mpi_flush(struct gfsp_os *w, int rank, struct gfsp_error *err)
{
	struct os_mpi *m = os_mpi(w);
	int rc;

	if ((rc = check_target(m, "flush", "of", rank, 0, 0, err)) != 0)
		return rc;
	return rma_fail(MPI_Win_flush(rank, m->win), "flush", "of", rank, err);
}

/* MPI_Get_accumulate with MPI_NO_OP: each element an atomic read, all of
 * them in one round trip */
static int
mpi_getv64(struct gfsp_os *w, int rank, uint64_t off, uint64_t *vals,
	   size_t n, struct gfsp_error *err)
{
	struct os_mpi *m = os_mpi(w);
	int rc, mrc;

	if ((rc = check_word(m, "getv64", "from", rank, off, err)) != 0 ||
	    (rc = check_target(m, "getv64", "from", rank, off, n * 8, err)))
		return rc;
	if (n > INT_MAX / 8)
		return gfsp_error_set(err, GFSP_EINVAL, "one-sided getv64 from "
				     "rank %d (mpi): %zu words at once", rank,
				     n);
	mrc = MPI_Get_accumulate(NULL, 0, MPI_UINT64_T, vals, (int)n,
				 MPI_UINT64_T, rank, (MPI_Aint)off, (int)n,
				 MPI_UINT64_T, MPI_NO_OP, m->win);
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Win_flush(rank, m->win);
	return rma_fail(mrc, "getv64", "from", rank, err);
}

static int
mpi_get64(struct gfsp_os *w, int rank, uint64_t off, uint64_t *val,
	  struct gfsp_error *err)
{
	struct os_mpi *m = os_mpi(w);
	int rc, mrc;

	if ((rc = check_word(m, "get64", "from", rank, off, err)) != 0)
		return rc;
	/* a fetch with MPI_NO_OP: an atomic read, where MPI_Get is not */
	mrc = MPI_Fetch_and_op(NULL, val, MPI_UINT64_T, rank, (MPI_Aint)off,
			       MPI_NO_OP, m->win);
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Win_flush(rank, m->win);
	return rma_fail(mrc, "get64", "from", rank, err);
}

static int
mpi_cas64(struct gfsp_os *w, int rank, uint64_t off, uint64_t expect,
	  uint64_t val, uint64_t *old, struct gfsp_error *err)
{
	struct os_mpi *m = os_mpi(w);
	int rc, mrc;

	if ((rc = check_word(m, "cas64", "on", rank, off, err)) != 0)
		return rc;
	mrc = MPI_Compare_and_swap(&val, &expect, old, MPI_UINT64_T, rank,
				   (MPI_Aint)off, m->win);
	if (mrc == MPI_SUCCESS)
		mrc = MPI_Win_flush(rank, m->win);
	return rma_fail(mrc, "cas64", "on", rank, err);
}

/*
 * A store as a CAS loop (see the top of the file for why not
 * MPI_REPLACE).  The first guess is 0, what a word holds before anyone
 * wrote it, so the first store to a word costs one round trip and later
 * ones two; each miss returns the word's current value, the next guess.
 */
static int
mpi_put64(struct gfsp_os *w, int rank, uint64_t off, uint64_t val,
	  struct gfsp_error *err)
{
	struct os_mpi *m = os_mpi(w);
	uint64_t expect = 0, old;
	int rc, mrc;

	if ((rc = check_word(m, "put64", "to", rank, off, err)) != 0)
		return rc;
	for (;;) {
		mrc = MPI_Compare_and_swap(&val, &expect, &old, MPI_UINT64_T,
					   rank, (MPI_Aint)off, m->win);
		if (mrc == MPI_SUCCESS)
			mrc = MPI_Win_flush(rank, m->win);
		if (mrc != MPI_SUCCESS)
			return rma_fail(mrc, "put64", "to", rank, err);
		if (old == expect)
			return 0;
		expect = old;
	}
}

static void
mpi_publish(struct gfsp_os *w)
{
	/* in MPI's unified memory model, the memory barrier that makes this
	 * rank's stores visible to the others' gets */
	MPI_Win_sync(os_mpi(w)->win);
}

const struct gfsp_os_ops gfsp_os_mpi = {
	.name		= "mpi",
	.create		= mpi_create,
	.destroy	= mpi_destroy,
	.base		= mpi_base,
	.get		= mpi_get,
	.put		= mpi_put,
	.flush		= mpi_flush,
	.get64		= mpi_get64,
	.getv64		= mpi_getv64,
	.put64		= mpi_put64,
	.cas64		= mpi_cas64,
	.publish	= mpi_publish,
};

/* ------------------------------------------------------------------ shm */

static int
shm_create(MPI_Comm comm, size_t bytes, size_t zero, struct gfsp_os **out,
	   struct gfsp_error *err)
{
	int nprocs, rc;

	*out = NULL;
	MPI_Comm_size(comm, &nprocs);
	rc = one_node(comm, nprocs, err);
	return rc ? rc : window_create(comm, bytes, zero, 1, out, err);
}

/* the word at off of rank's region */
static _Atomic uint64_t *
word(struct os_mpi *m, int rank, uint64_t off)
{
	return (_Atomic uint64_t *)(void *)(m->peer[rank] + off);
}

static int
shm_get(struct gfsp_os *w, int rank, uint64_t off, void *dst, size_t len,
	struct gfsp_error *err)
{
	struct os_mpi *m = os_mpi(w);
	int rc;

	if ((rc = check_target(m, "get", "from", rank, off, len, err)) != 0)
		return rc;
	if (len > 0)	/* an empty region may be mapped nowhere */
		memcpy(dst, m->peer[rank] + off, len);
	return 0;
}

static int
shm_put(struct gfsp_os *w, int rank, uint64_t off, const void *src,
	size_t len, struct gfsp_error *err)
{
	struct os_mpi *m = os_mpi(w);
	int rc;

	if ((rc = check_target(m, "put", "to", rank, off, len, err)) != 0)
		return rc;
	if (len > 0)
		memcpy(m->peer[rank] + off, src, len);
	return 0;
}

/* the copies before it are done before anything after it: a full fence
 * (so that a check read after a get sees the target as it was after the
 * data, as the cache's token check needs) */
static int
shm_flush(struct gfsp_os *w, int rank, struct gfsp_error *err)
{
	struct os_mpi *m = os_mpi(w);
	int rc;

	if ((rc = check_target(m, "flush", "of", rank, 0, 0, err)) != 0)
		return rc;
	atomic_thread_fence(memory_order_seq_cst);
	return 0;
}

static int
shm_getv64(struct gfsp_os *w, int rank, uint64_t off, uint64_t *vals,
	   size_t n, struct gfsp_error *err)
{
	struct os_mpi *m = os_mpi(w);
	size_t i;
	int rc;

	if ((rc = check_word(m, "getv64", "from", rank, off, err)) != 0 ||
	    (rc = check_target(m, "getv64", "from", rank, off, n * 8, err)))
		return rc;
	for (i = 0; i < n; i++)
		vals[i] = atomic_load(word(m, rank, off + 8 * i));
	return 0;
}

static int
shm_get64(struct gfsp_os *w, int rank, uint64_t off, uint64_t *val,
	  struct gfsp_error *err)
{
	return shm_getv64(w, rank, off, val, 1, err);
}

static int
shm_cas64(struct gfsp_os *w, int rank, uint64_t off, uint64_t expect,
	  uint64_t val, uint64_t *old, struct gfsp_error *err)
{
	struct os_mpi *m = os_mpi(w);
	int rc;

	if ((rc = check_word(m, "cas64", "on", rank, off, err)) != 0)
		return rc;
	/* on failure, expect becomes the word's value: *old either way */
	atomic_compare_exchange_strong(word(m, rank, off), &expect, val);
	*old = expect;
	return 0;
}

static int
shm_put64(struct gfsp_os *w, int rank, uint64_t off, uint64_t val,
	  struct gfsp_error *err)
{
	struct os_mpi *m = os_mpi(w);
	int rc;

	if ((rc = check_word(m, "put64", "to", rank, off, err)) != 0)
		return rc;
	atomic_store(word(m, rank, off), val);
	return 0;
}

static void
shm_publish(struct gfsp_os *w)
{
	(void)w;
	atomic_thread_fence(memory_order_seq_cst);
}

const struct gfsp_os_ops gfsp_os_shm = {
	.name		= "shm",
	.mapped		= 1,
	.create		= shm_create,
	.destroy	= mpi_destroy,
	.base		= mpi_base,
	.get		= shm_get,
	.put		= shm_put,
	.flush		= shm_flush,
	.get64		= shm_get64,
	.getv64		= shm_getv64,
	.put64		= shm_put64,
	.cas64		= shm_cas64,
	.publish	= shm_publish,
};
