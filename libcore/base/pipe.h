/*
 * pipe.h - double-buffered transfer pipeline.  One helper thread produces
 * (reads) the next chunk while the calling thread consumes (writes) the
 * current one:
 *
 *   helper:  read c0 | read c1 | read c2 | ...
 *   caller:          | write c0 | write c1 | write c2
 *
 * Two buffers of `bufsize` bytes, so memory is 2*bufsize whatever the data.
 * A producer may map its source instead of reading it into the buffer
 * (gfsp_rmap_open); both sides run under gfsp_guard, so a mapped page that
 * vanishes is an error of the side that touched it.
 * The helper thread makes no MPI calls.  The first error on either side
 * stops both and is returned.  Included by libcore/ and tests/.
 */
#ifndef GFSP_PIPE_H
#define GFSP_PIPE_H

#include <stddef.h>
#include <stdint.h>
#include "core.h"

struct gfsp_chunk {
	void *buf;		/* bufsize bytes, owned by the pipe */
	size_t cap;		/* bufsize */
	size_t len;		/* bytes filled by produce */
	/* the len bytes to consume: buf, or where produce mapped them
	 * instead of reading them (map.data; the pipe unmaps it once the
	 * chunk is consumed) */
	const void *data;
	struct gfsp_rmap map;
	uint64_t tag[4];	/* producer's notes for the consumer */
};

struct gfsp_pipe_ops {
	/* In the helper thread: fill c (c->len, c->tag); set *done = 1 and
	 * leave c unused when there is nothing more. */
	int (*produce)(void *ctx, struct gfsp_chunk *c, int *done,
		       struct gfsp_error *err);
	/* In the calling thread, chunks in production order. */
	int (*consume)(void *ctx, const struct gfsp_chunk *c,
		       struct gfsp_error *err);
};

int gfsp_pipe_run(const struct gfsp_pipe_ops *ops, void *ctx, size_t bufsize,
		 struct gfsp_error *err);

#endif /* GFSP_PIPE_H */
