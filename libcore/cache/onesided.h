/*
 * onesided.h - one-sided transfers between the ranks of a communicator: the
 * transport of the cooperative cache (cache.h).  Included by libcore/,
 * preload/ and tests/.
 *
 * Every rank exposes one region of memory (a "window"); any rank reads and
 * writes any rank's region without the owner's CPU taking part (with
 * "mpi", as far as the MPI library does RMA in hardware: MPICH over
 * shared memory or TCP serves it as active messages, which the owner
 * handles only while it is inside an MPI call -- a rank that computes or
 * sleeps for long outside MPI delays every operation on its region):
 *
 *   rank 0 region         rank 1 region         ...
 *   +---------------+     +---------------+
 *   | bytes 0 .. n  |     | bytes 0 .. n  |     get / put: any bytes
 *   +---------------+     +---------------+     *64: one aligned 64-bit word,
 *                                               atomic against each other
 *
 * A transport is a table of operations (struct gfsp_os_ops).  "mpi" runs
 * everywhere: MPI-3 passive-target RMA in one lock_all epoch, which MPICH
 * maps onto RDMA on InfiniBand.  "tcp" (onesided_tcp.c) serves each
 * rank's region from threads of its own over TCP: for networks without
 * RDMA, where MPI's RMA waits for the target to enter MPI.  "verbs" (onesided_verbs.c, built with
 * libibverbs) posts RDMA reads, writes and atomics itself when a device
 * exists; without one, gfsp_os_create() says so and "auto" takes the
 * next (verbs, shm, tcp, mpi).  "shm" (onesided_mpi.c) is for ranks all on one node: the
 * regions are mapped into every rank and read and written with loads,
 * stores and CPU atomics, nothing running on the target at all.
 *
 * Completion: get and put may still be in flight when they return; flush
 * completes every operation this rank issued to `rank`, at both ends.  The
 * 64-bit operations are complete when they return.  Data a rank writes
 * into its own region by plain stores is published for remote gets by
 * gfsp_os_publish() (MPI_Win_sync); likewise the owner calls publish
 * before reading with plain loads what others put into its region (after
 * whatever told it they flushed: a barrier, a message).  Words others
 * read atomically must be written through put64/cas64 even by their
 * owner, so that every access to them is atomic.  put64 is a CAS loop in
 * both transports (each says why): one round trip onto a word that is
 * still 0, two otherwise.
 *
 * Offsets are bytes from the start of the target's region; a 64-bit word
 * must be 8-byte aligned.  Errors: GFSP_* codes with the operation, the
 * target rank and the transport's own message.
 */
#ifndef GFSP_ONESIDED_H
#define GFSP_ONESIDED_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#include "gfsplit.h"

struct gfsp_os;				/* a window over a communicator */

struct gfsp_os_ops {
	const char *name;		/* "mpi", "shm", "verbs" */
	/* every rank's region is mapped here: a get costs a memcpy, so a
	 * reader may take just the bytes it needs from a peer every time
	 * instead of keeping a copy of its own */
	int mapped;
	/* operations may come from several threads of a rank at once, on
	 * different peers or the same (the cache's read-ahead threads) */
	int threads;
	/* Collective: every rank exposes `bytes` of memory (sizes may differ
	 * between ranks), of which the first `zero` are 0 (the rest is not
	 * touched: pages of a large region not yet used cost nothing).
	 * GFSP_ENOTSUP: not usable here (no device), with the reason in err. */
	int (*create)(MPI_Comm comm, size_t bytes, size_t zero,
		      struct gfsp_os **out, struct gfsp_error *err);
	/* Collective. */
	void (*destroy)(struct gfsp_os *w);
	void *(*base)(struct gfsp_os *w);		/* this rank's region */
	int (*get)(struct gfsp_os *w, int rank, uint64_t off, void *dst,
		   size_t len, struct gfsp_error *err);
	int (*put)(struct gfsp_os *w, int rank, uint64_t off,
		   const void *src, size_t len, struct gfsp_error *err);
	int (*flush)(struct gfsp_os *w, int rank, struct gfsp_error *err);
	int (*get64)(struct gfsp_os *w, int rank, uint64_t off,
		     uint64_t *val, struct gfsp_error *err);
	/* n consecutive words, each read atomically (in no order between
	 * them), in one operation where the transport can */
	int (*getv64)(struct gfsp_os *w, int rank, uint64_t off,
		      uint64_t *vals, size_t n, struct gfsp_error *err);
	int (*put64)(struct gfsp_os *w, int rank, uint64_t off, uint64_t val,
		     struct gfsp_error *err);
	/* *old = word; if word == expect, word = val. */
	int (*cas64)(struct gfsp_os *w, int rank, uint64_t off,
		     uint64_t expect, uint64_t val, uint64_t *old,
		     struct gfsp_error *err);
	/* plain stores to this rank's region become visible to gets */
	void (*publish)(struct gfsp_os *w);
};

extern const struct gfsp_os_ops gfsp_os_mpi;
extern const struct gfsp_os_ops gfsp_os_shm;
extern const struct gfsp_os_ops gfsp_os_tcp;
#ifdef HAVE_IBVERBS
extern const struct gfsp_os_ops gfsp_os_verbs;
#endif

/*
 * Collective: a window of `bytes` per rank (the first `zero` of them 0)
 * on the transport named by
 * `name`: "mpi", "shm", "verbs", or "auto"/NULL (verbs where a device
 * exists on every rank, else shm where all ranks are on one node, else
 * mpi; the choice is agreed by all ranks).  `name` must
 * be the same on every rank.  OUT *ops: the transport taken.  Every rank
 * returns the same verdict.
 */
int gfsp_os_create(MPI_Comm comm, const char *name, size_t bytes,
		   size_t zero, const struct gfsp_os_ops **ops,
		   struct gfsp_os **out, struct gfsp_error *err);

/* The transports compiled in, for --version: "mpi, shm, tcp[, verbs]". */
const char *gfsp_os_builtin(void);

/*
 * For the transports: GFSP_EINVAL unless rank is one of nprocs and
 * [off, off + len) lies in its region of size[rank] bytes (and, if word,
 * off is 8-byte aligned), in the words every transport uses:
 * "one-sided OP DIR rank R (TRANSPORT): ...".
 */
int gfsp_os_check(const char *transport, int nprocs, const uint64_t *size,
		  const char *op, const char *dir, int rank, uint64_t off,
		  uint64_t len, int word, struct gfsp_error *err);

/* For the transports: put64 as a CAS loop through ops->cas64, first
 * guessing 0 (one kind of atomic on every word). */
int gfsp_os_put64_by_cas(const struct gfsp_os_ops *ops, struct gfsp_os *w,
			 int rank, uint64_t off, uint64_t val,
			 struct gfsp_error *err);

#endif /* GFSP_ONESIDED_H */
