/*
 * pipe.h - double-buffered transfer pipeline.  One helper thread produces
 * (reads) the next chunk while the calling thread consumes (writes) the
 * current one:
 *
 *   helper:  read c0 | read c1 | read c2 | ...
 *   caller:          | write c0 | write c1 | write c2
 *
 * Two buffers of `bufsize` bytes, so memory is 2*bufsize whatever the data.
 * The helper thread makes no MPI calls.  The first error on either side
 * stops both and is returned.  Included by libcore/ only.
 */
#ifndef GFS_PIPE_H
#define GFS_PIPE_H

#include <stddef.h>
#include <stdint.h>
#include "gfsplit.h"

struct gfs_chunk {
	void *buf;		/* bufsize bytes, owned by the pipe */
	size_t cap;		/* bufsize */
	size_t len;		/* bytes filled by produce */
	uint64_t tag[4];	/* producer's notes for the consumer */
};

struct gfs_pipe_ops {
	/* In the helper thread: fill c (c->len, c->tag); set *done = 1 and
	 * leave c unused when there is nothing more. */
	int (*produce)(void *ctx, struct gfs_chunk *c, int *done,
		       struct gfs_error *err);
	/* In the calling thread, chunks in production order. */
	int (*consume)(void *ctx, const struct gfs_chunk *c,
		       struct gfs_error *err);
};

int gfs_pipe_run(const struct gfs_pipe_ops *ops, void *ctx, size_t bufsize,
		 struct gfs_error *err);

#endif /* GFS_PIPE_H */
