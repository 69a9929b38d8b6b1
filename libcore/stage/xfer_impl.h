/*
 * xfer_impl.h - the inside of the transfer engine: a chunk's header, the
 * producer's and the consumer's state, struct gfsp_xfer, and what the
 * copy pipeline (xfer.c), picking up after an earlier run
 * (xfer_resume.c) and the directories and links (xfer_tree.c) call of
 * each other.  Included by libcore/stage/ only.
 */
#ifndef GFSP_XFER_IMPL_H
#define GFSP_XFER_IMPL_H

#include <pthread.h>
#include <stdint.h>

#include "core.h"
#include "stage.h"
#include "zfile.h"

#define OOM(err) gfsp_error_set(err, GFSP_ENOMEM, "out of memory")
#define SEG	GFSP_SEG_SIZE_DEFAULT
#define SEG_MAX	128			/* segments a chunk: 128 MiB chunks */
#define MIB	1048576.0
#define XHDR	4096			/* header room at a buffer's start */

enum { K_DATA = 1, K_RESUMED, K_FAIL, K_RECV };

struct xhdr {
	uint32_t kind;
	int32_t code;			/* K_FAIL: the GFSP_E* code */
	uint32_t piece;			/* index in the run's list */
	uint32_t last;			/* last chunk of the piece */
	uint32_t zdst;			/* the file is stored compressed */
	uint32_t has_zent;
	uint64_t raw_off, raw_len;	/* the source's bytes it holds */
	uint64_t dst_off, dst_len;	/* what to write where */
	uint64_t stored;		/* K_DATA last: the file's stored size */
	struct gfsp_zentry zent;	/* compressed: this chunk's frame */
	uint64_t nseg;
	uint64_t seg[SEG_MAX];
	char msg[GFSP_ERRMSG_MAX];
};

_Static_assert(sizeof(struct xhdr) <= XHDR, "xhdr fits its room");

/* The producer's side of the current piece. */
struct rd {
	struct gfsp_file *src;
	struct gfsp_file *tmp;		/* resume: the temporary, to verify */
	int zsrc;			/* the source is gfsz */
	struct gfsp_zindex zix;
	uint64_t next;			/* next raw offset (or chunk) */
	uint64_t end;			/* one past the piece's raw bytes */
	int zdst;			/* -1: not decided yet */
	uint64_t zoff;			/* next frame's offset */
	size_t rfirst, rn, ri;		/* the journal's chunks of the file */
	int resumable;			/* resume still allowed here */
	int64_t after;			/* records older: before an install */
	uint64_t key;			/* the source's version now */
	uint64_t tmpsize;		/* the temporary file's size */
	char *tmpname;			/* its name (resume only) */
	int failed;			/* a FAIL header went out */
};

/*
 * Decompressing a gfsz source two chunks at a time: while the producer
 * decompresses chunk k, a thread of its own decompresses k + 1 (its frame
 * read by the producer first: a Gfarm handle is one thread's) into a
 * buffer of its own, which the producer copies out at the next call.  A
 * frame takes a core for all its length, so one stream decompresses at
 * one core's speed; two give the rank twice that where it has the cores
 * (the workers of --threads; none: one stream).
 */
struct zahead {
	pthread_t th;
	int running;			/* started, not joined */
	uint64_t idx;			/* the chunk it decompresses */
	const struct gfsp_zentry *e;
	const char *name;
	struct gfsp_zcodec *zc;		/* its own contexts */
	unsigned char *frame, *raw;	/* scap bytes each */
	size_t cap;
	int rc;
	struct gfsp_error err;
};

/* The consumer's side of the file it writes. */
struct wr {
	uint32_t file;
	uint32_t piece;			/* index in the run's list */
	char *dst, *tmp;
	struct gfsp_file *out;
	int rc;				/* the first failure on this node */
	int sys;			/* its errno, 0 if none */
	char *msg;
	int journaled;			/* chunks of it recorded in this run */
	struct gfsp_zentry *ze;		/* compressed: frames so far */
	size_t nze, capze;
	uint64_t stored;
};

struct gfsp_xfer {
	struct gfsp_xfer_opts o;
	const struct gfsp_flist *fl;
	char *root;
	struct gfsp_state *st;
	struct gfsp_fresult *res;
	struct gfsp_progress *prog;
	struct gfsp_zcodec *zc;		/* the producer's */
	struct zahead za;		/* the producer's second stream */
	struct gfsp_zcodec *zcw;	/* the consumer's (checks) */
	unsigned char *scratch;		/* producer: raw or frame bytes */
	size_t scap;
	unsigned char *rbuf;		/* consumer: forwarded chunks */
	size_t bufsize;
	/* the run */
	const struct gfsp_piece *p;
	size_t np;
	unsigned char *reads;		/* per piece: this rank reads it (the
					 * helper thread makes no MPI call) */
	size_t pi;			/* producer: current piece */
	int pstarted;
	struct rd rd;
	struct wr wr;
	/* rate limit: tokens in bytes, refilled at o.bwlimit per second */
	double tokens, tlast;
	/* --compress=auto: the producer's level, and what writing cost the
	 * consumer last, in ns per MiB stored (atomic: both threads) */
	int level;
	uint64_t wr_ns_mib;
	struct gfsp_xfer_stats stats;
	uint64_t progress;
};

/* Record a failure of file f on this rank (the first one stays). */
void gfsp_xfer_fail_file(struct gfsp_xfer *x, uint32_t f, int code,
			 const char *msg);
/* The segment hashes of len bytes at buf into seg (*nseg of them). */
void gfsp_xfer_segs(const void *buf, uint64_t len, uint64_t *seg,
		    uint64_t *nseg);
/* The directory that holds path, made with its parents. */
int gfsp_xfer_make_parent(const char *path, struct gfsp_error *e);
/* Record in the state that dst holds file's source as it is now. */
int gfsp_xfer_record_done(struct gfsp_xfer *x, uint32_t file,
			  const char *dst, uint64_t hash,
			  struct gfsp_error *e);

/* xfer_resume.c: the temporary file of entry `file` (malloc'd), and
 * whether the chunk at raw offset off is already in it (1: h filled) */
char *gfsp_xfer_tmp_path(const struct gfsp_xfer *x, uint32_t file);
int gfsp_xfer_rd_resumed(struct gfsp_xfer *x, const struct gfsp_piece *p,
			 uint64_t off, uint64_t len, struct xhdr *h,
			 unsigned char *out);

#endif /* GFSP_XFER_IMPL_H */
