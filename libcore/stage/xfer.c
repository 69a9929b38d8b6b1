/*
 * xfer.c - the transfer engine's copy pipeline (stage.h); what an
 * earlier run left is xfer_resume.c's, directories and links
 * xfer_tree.c's.
 *
 * A rank works through its list of pieces with one double-buffered
 * pipeline (pipe.h).  The helper thread produces: it opens each source,
 * reads a chunk (decompressing a gfsz source), hashes it, compresses it
 * when the destination is stored compressed, and hands over a buffer that
 * starts with a header describing what to write where:
 *
 *   chunk buffer:  | struct xhdr (XHDR bytes) | bytes to write ... |
 *
 * The calling thread consumes: it writes the bytes into the file's
 * temporary sibling, records the chunk in the journal, and installs the
 * file when its last chunk is in.  A piece that every node needs is read
 * by one rank of its bcomm; that rank's consumer broadcasts each header
 * and its bytes before writing them, and the other ranks of the bcomm
 * (whose producer only put a RECV marker in the pipe for the piece)
 * receive them in their consumer and write them to their own node:
 *
 *   reader:    produce c0 | produce c1 | ...
 *              consume:   bcast c0, write c0 | bcast c1, write c1
 *   others:    produce RECV marker
 *              consume:   recv c0, write c0 | recv c1, write c1 | ...
 *
 * A failure of one file (its source vanished or changed, a full disk) is
 * carried in a FAIL header, so every rank of a bcomm sees the same number
 * of headers whatever happened, and the run goes on with the next piece.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core.h"
#include "dst.h"
#include "pipe.h"
#include "stage.h"
#include "xfer_impl.h"
#include "zfile.h"

static uint64_t
chunk_of(const struct gfsp_xfer *x)
{
	return x->o.chunk ? x->o.chunk : GFSP_STAGE_CHUNK_DEFAULT;
}

char *
gfsp_xfer_dst_path(const struct gfsp_xfer *x, uint32_t file)
{
	char *s;

	if (asprintf(&s, "%s/%s", x->root, x->fl->v[file].rel) < 0)
		return NULL;
	return s;
}

int
gfsp_xfer_new(const struct gfsp_xfer_opts *o, const struct gfsp_flist *fl,
	     const char *dst, struct gfsp_state *st, struct gfsp_fresult *res,
	     struct gfsp_progress *prog, struct gfsp_xfer **out,
	     struct gfsp_error *err)
{
	struct gfsp_xfer *x;
	uint64_t chunk;
	int rc = 0;

	*out = NULL;
	x = calloc(1, sizeof(*x));
	if (x == NULL)
		return OOM(err);
	x->o = *o;
	x->fl = fl;
	x->st = st;
	x->res = res;
	x->prog = prog;
	x->root = strdup(dst);
	chunk = chunk_of(x);
	if (chunk % SEG != 0 || chunk / SEG > SEG_MAX) {
		rc = gfsp_error_set(err, GFSP_EINVAL, "chunk size %llu: not a "
		    "multiple of 1 MiB up to %d MiB", (unsigned long long)chunk,
		    SEG_MAX);
		goto out;
	}
	x->scap = gfsp_z_bound((size_t)chunk) + GFSP_Z_HEADER_SIZE;
	x->bufsize = XHDR + x->scap;
	x->scratch = gfsp_big_alloc(x->scap, 4096);
	x->rbuf = gfsp_big_alloc(x->bufsize, 4096);
	if (x->root == NULL || x->scratch == NULL || x->rbuf == NULL) {
		rc = OOM(err);
		goto out;
	}
	x->level = o->adapt ? 1 : o->level;
	rc = gfsp_zcodec_new(x->level, o->workers, &x->zc, err);
	if (rc == GFSP_ENOTSUP && !o->compress) {
		/* without zstd: plain copies work, gfsz sources fail each */
		gfsp_error_clear(err);
		rc = 0;
	}
	if (rc == 0 && x->zc != NULL)
		rc = gfsp_zcodec_new(0, 0, &x->zcw, err);
out:
	if (rc)
		gfsp_xfer_free(x);
	else
		*out = x;
	return rc;
}

void
gfsp_xfer_free(struct gfsp_xfer *x)
{
	if (x == NULL)
		return;
	gfsp_zcodec_free(x->zc);
	gfsp_zcodec_free(x->zcw);
	gfsp_zcodec_free(x->za.zc);
	free(x->za.frame);
	free(x->za.raw);
	free(x->scratch);
	free(x->rbuf);
	free(x->root);
	free(x);
}

void
gfsp_xfer_set_progress(struct gfsp_xfer *x, struct gfsp_progress *prog)
{
	x->prog = prog;
}

const struct gfsp_xfer_stats *
gfsp_xfer_stats(const struct gfsp_xfer *x)
{
	return &x->stats;
}

/* ------------------------------------------------------------ helpers */

/* Record a failure of file f on this rank (the first one stays). */
void
gfsp_xfer_fail_file(struct gfsp_xfer *x, uint32_t f, int code,
		    const char *msg)
{
	struct gfsp_fresult *r = &x->res[f];

	if (r->rc != 0)
		return;
	r->rc = code ? code : GFSP_EIO;
	r->msg = strdup(msg);
}

static void
rate_wait(struct gfsp_xfer *x, uint64_t n)
{
	double now, need;
	struct timespec ts;

	if (x->o.bwlimit == 0 || n == 0)
		return;
	now = gfsp_now();
	if (x->tlast == 0)
		x->tokens = 0;		/* no burst: the rate from the start */
	else
		x->tokens = GFSP_MIN(x->tokens + (now - x->tlast) *
				     (double)x->o.bwlimit,
				     (double)chunk_of(x));
	x->tlast = now;
	x->tokens -= (double)n;
	if (x->tokens >= 0)
		return;
	need = -x->tokens / (double)x->o.bwlimit;
	ts.tv_sec = (time_t)need;
	ts.tv_nsec = (long)((need - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	x->tlast = gfsp_now();
	x->tokens = 0;
}

void
gfsp_xfer_segs(const void *buf, uint64_t len, uint64_t *seg,
	       uint64_t *nseg)
{
	const unsigned char *p = buf;
	uint64_t n = 0, k;

	while (len > 0) {
		k = GFSP_MIN(len, (uint64_t)SEG);
		seg[n++] = gfsp_seg_hash(p, (size_t)k);
		p += k;
		len -= k;
	}
	*nseg = n;
}

/* ------------------------------------------------------------ producer */

/* Frame ze of the current gfsz source into buf. */
static int
rd_frame(struct gfsp_xfer *x, const char *name, const struct gfsp_zentry *ze,
	 unsigned char *buf, struct gfsp_error *e)
{
	size_t got;
	int rc;

	rc = gfsp_pread(x->rd.src, buf, ze->z_len, ze->z_off, &got, e);
	if (rc == 0 && got != ze->z_len)
		rc = gfsp_error_set(e, GFSP_ECORRUPT, "'%s': compressed file "
				   "cut short", name);
	if (rc == 0)
		x->stats.bytes_read += ze->z_len;
	return rc;
}

static void *
za_main(void *arg)
{
	struct zahead *a = arg;

	a->rc = gfsp_z_decompress(a->zc, a->idx, a->e, a->frame, a->raw,
				  a->cap, a->name, &a->err);
	return NULL;
}

/* Wait for the second stream; its verdict (its error into e). */
static int
za_join(struct gfsp_xfer *x, struct gfsp_error *e)
{
	struct zahead *a = &x->za;

	if (!a->running)
		return 0;
	pthread_join(a->th, NULL);
	a->running = 0;
	if (a->rc != 0 && e != NULL)
		*e = a->err;
	return a->rc;
}

/*
 * Chunk idx of the current gfsz source to the second stream, if the rank
 * has one.  Its buffers and contexts are made at the first use; a thread
 * that cannot start leaves the chunk to the producer.
 */
static int
za_start(struct gfsp_xfer *x, const char *name, uint64_t idx,
	 struct gfsp_error *e)
{
	struct zahead *a = &x->za;
	int rc;

	if (x->o.workers == 0)
		return 0;
	if (a->zc == NULL) {
		a->cap = x->scap;
		a->frame = gfsp_big_alloc(a->cap, 4096);
		a->raw = gfsp_big_alloc(a->cap, 4096);
		if (a->frame == NULL || a->raw == NULL)
			return OOM(e);
		rc = gfsp_zcodec_new(0, 0, &a->zc, e);
		if (rc)
			return rc;
	}
	a->idx = idx;
	a->e = &x->rd.zix.e[idx];
	a->name = name;
	rc = rd_frame(x, name, a->e, a->frame, e);
	if (rc)
		return rc;
	gfsp_error_clear(&a->err);
	a->running = pthread_create(&a->th, NULL, za_main, a) == 0;
	return 0;
}

static void
rd_close(struct gfsp_xfer *x)
{
	struct gfsp_error e = { 0 };

	za_join(x, NULL);
	if (x->rd.src)
		gfsp_close(x->rd.src, &e);
	if (x->rd.tmp)
		gfsp_close(x->rd.tmp, &e);
	if (x->rd.zsrc)
		gfsp_zindex_free(&x->rd.zix);
	free(x->rd.tmpname);
	memset(&x->rd, 0, sizeof(x->rd));
}

/* A FAIL header: the piece is over for everyone. */
static void
produce_fail(struct gfsp_xfer *x, struct gfsp_chunk *c, struct xhdr *h,
	     const struct gfsp_error *e)
{
	h->kind = K_FAIL;
	h->code = e->code ? e->code : GFSP_EIO;
	h->last = 1;
	snprintf(h->msg, sizeof(h->msg), "%s", e->msg);
	c->len = XHDR;
	x->rd.failed = 1;
}

/* Read a gfsz source's index (the source is open). */
static int
open_zsrc(struct gfsp_xfer *x, const struct gfsp_sfile *f,
	  struct gfsp_error *e)
{
	unsigned char foot[GFSP_Z_FOOTER_SIZE];
	uint64_t ioff, ilen, csize = 0;
	size_t got;
	void *frame;
	int isz = 0, rc;

	rc = gfsp_pread(x->rd.src, x->scratch, GFSP_Z_HEADER_SIZE, 0, &got, e);
	if (rc)
		return rc;
	rc = gfsp_z_detect(x->scratch, got, f->src, &isz, &csize, e);
	if (rc || !isz)
		return rc;
	if (x->zc == NULL)
		return gfsp_error_set(e, GFSP_ENOTSUP, "'%s' is compressed and "
		    "this build has no zstd (give --raw to copy it as it is)",
		    f->src);
	if (csize + GFSP_Z_HEADER_SIZE > x->scap || csize == 0)
		return gfsp_error_set(e, GFSP_ECORRUPT, "'%s': compressed "
		    "chunks of %llu bytes: larger than this build reads",
		    f->src, (unsigned long long)csize);
	rc = gfsp_pread(x->rd.src, foot, sizeof(foot),
			f->st.size - sizeof(foot), &got, e);
	if (rc == 0 && (got != sizeof(foot) || f->st.size < sizeof(foot)))
		rc = gfsp_error_set(e, GFSP_ECORRUPT, "'%s': compressed file "
				   "cut short", f->src);
	if (rc == 0)
		rc = gfsp_z_footer_parse(foot, f->st.size, f->src, &ioff, &ilen,
					 e);
	if (rc)
		return rc;
	frame = malloc(ilen ? ilen : 1);
	if (frame == NULL)
		return OOM(e);
	rc = gfsp_pread(x->rd.src, frame, ilen, ioff, &got, e);
	if (rc == 0 && got != ilen)
		rc = gfsp_error_set(e, GFSP_ECORRUPT, "'%s': compressed file "
				   "cut short", f->src);
	if (rc == 0)
		rc = gfsp_z_index_parse(frame, ilen, ioff, csize, f->src,
					&x->rd.zix, e);
	free(frame);
	if (rc == 0)
		x->rd.zsrc = 1;
	return rc;
}

/* Open the source of piece p and check it is the version listed. */
static int
rd_begin(struct gfsp_xfer *x, const struct gfsp_piece *p,
	 struct gfsp_error *e)
{
	const struct gfsp_sfile *f = &x->fl->v[p->file];
	int rc;

	memset(&x->rd, 0, sizeof(x->rd));
	x->rd.zdst = -1;
	/* the file listed (one still being written, a pre-copy's, may have
	 * grown since) */
	rc = gfsp_open_listed(f->src, GFSP_O_RDONLY, &f->st, !p->precopy,
			      &x->rd.src, e);
	if (rc == 0 && !x->o.raw && p->off == 0 && p->npieces == 1)
		rc = open_zsrc(x, f, e);
	if (rc)
		return rc;
	x->rd.next = x->rd.zsrc ? 0 : p->off;
	x->rd.end = x->rd.zsrc ? x->rd.zix.n : p->off + p->len;
	if (x->o.compress && !x->rd.zsrc && p->npieces == 1)
		x->rd.zdst = -1;	/* decided at the first chunk */
	else
		x->rd.zdst = 0;
	/* resume: only where this rank alone writes the file here, from
	 * records newer than its last install, into a temporary file that
	 * is there */
	if (x->st != NULL && p->bcomm == MPI_COMM_NULL && !x->rd.zsrc) {
		const struct gfsp_done *d = gfsp_state_done(x->st, f->rel);
		struct gfsp_stat tst;

		x->rd.rn = gfsp_state_chunks(x->st, f->rel, &x->rd.rfirst);
		x->rd.after = d ? d->t : INT64_MIN;
		x->rd.key = gfsp_file_key(f->src, &f->st);
		x->rd.tmpname = x->rd.rn > 0 ? gfsp_xfer_tmp_path(x, p->file)
					       : NULL;
		x->rd.resumable = x->rd.tmpname != NULL &&
		    gfsp_stat(x->rd.tmpname, &tst, NULL) == 0;
		x->rd.tmpsize = x->rd.resumable ? tst.size : 0;
	}
	return 0;
}

/*
 * --compress=auto, after a chunk took `secs` to compress into zlen bytes:
 * the level that keeps compressing about as fast as writing.  A chunk
 * that took longer to compress than its bytes take to write means the
 * writer waits: one level down, down to -1 (zstd's fast levels, near
 * memcpy speed, for storage faster than compressing; 0 is not a level
 * but "the default").  One that compressed in under a third of that
 * time leaves the compressor idle: one level up (a level may cost twice
 * the one below, hence the margin, which keeps the level from swinging
 * between two).  Until the consumer has written a compressed chunk
 * there is nothing to go by, so the first chunks use level 1.
 */
#define ADAPT_MIN (-1)
#define ADAPT_MAX 15

static void
adapt_level(struct gfsp_xfer *x, size_t zlen, double secs)
{
	uint64_t ns = __atomic_load_n(&x->wr_ns_mib, __ATOMIC_RELAXED);
	double wsecs = (double)ns * 1e-9 * (double)zlen / MIB;
	int level = x->level;

	if (ns == 0)
		return;
	if (secs > wsecs && level > ADAPT_MIN)
		level = level == 1 ? -1 : level - 1;
	else if (3 * secs < wsecs && level < ADAPT_MAX)
		level = level == -1 ? 1 : level + 1;
	if (level != x->level && gfsp_zcodec_level(x->zc, level, NULL) == 0)
		x->level = level;
}

/*
 * The bytes to store for the raw chunk `raw` (len bytes at raw offset
 * off) into out, described in h.  At the first chunk the file is stored
 * compressed only if that chunk, with the format's overhead, shrinks by
 * at least 1/64: random data and empty files are stored as they are.
 */
static int
rd_compress(struct gfsp_xfer *x, const unsigned char *raw, uint64_t len,
	    uint64_t off, struct xhdr *h, unsigned char *out,
	    struct gfsp_error *e)
{
	const uint64_t overhead = GFSP_Z_HEADER_SIZE + 8 + GFSP_Z_ENTRY_SIZE +
				  GFSP_Z_FOOTER_SIZE;
	size_t zlen = 0, at = off == 0 ? GFSP_Z_HEADER_SIZE : 0;
	double t0 = gfsp_now();
	int rc;

	if (x->rd.zdst != 0) {
		rc = gfsp_z_compress(x->zc, raw, (size_t)len, out + at,
				     x->scap - at, &zlen, e);
		if (rc)
			return rc;
		if (x->o.adapt)
			adapt_level(x, zlen, gfsp_now() - t0);
		if (x->rd.zdst == -1)
			x->rd.zdst = len > 0 &&
			    zlen + overhead + len / 64 < len ? 1 : 0;
	}
	if (x->rd.zdst == 0) {
		memcpy(out, raw, (size_t)len);
		h->dst_off = off;
		h->dst_len = len;
		return 0;
	}
	if (off == 0) {
		gfsp_z_header(out, chunk_of(x));
		x->rd.zoff = GFSP_Z_HEADER_SIZE;
	}
	h->has_zent = 1;
	h->zent.z_off = x->rd.zoff;
	h->zent.z_len = zlen;
	h->zent.raw_len = len;
	h->zent.hash = gfsp_hash64(raw, (size_t)len);
	h->dst_off = x->rd.zoff - at;
	h->dst_len = at + zlen;
	x->rd.zoff += zlen;
	return 0;
}

/* 1: [off, off + len) of the source is mapped into c (it is read where it
 * cannot be: another file system, or the file shrank, which the read
 * reports) */
static int
rd_map(struct gfsp_xfer *x, uint64_t off, uint64_t len, const char *name,
       struct gfsp_chunk *c)
{
	int fd = gfsp_mappable(x->rd.src, x->root);

	if (fd < 0 || gfsp_rmap_open(fd, off, (size_t)len, name, &c->map,
				     NULL) != 0)
		return 0;
	c->data = c->map.data;
	return 1;
}

/* One chunk of the current piece into c (h at its start, the data after
 * it or mapped: c->map). */
static int
rd_chunk(struct gfsp_xfer *x, const struct gfsp_piece *p,
	 struct gfsp_chunk *c, struct xhdr *h, struct gfsp_error *e)
{
	const struct gfsp_sfile *f = &x->fl->v[p->file];
	unsigned char *data = (unsigned char *)c->buf + XHDR;
	const struct gfsp_zentry *ze;
	uint64_t off, len;
	size_t got;
	int rc;

	h->kind = K_DATA;
	if (x->rd.zsrc && x->rd.zix.n == 0) {	/* an empty gfsz file */
		off = len = 0;
		h->nseg = h->dst_off = h->dst_len = 0;
	} else if (x->rd.zsrc) {	/* chunk rd.next of a gfsz source */
		ze = &x->rd.zix.e[x->rd.next];
		off = x->rd.next * x->rd.zix.chunk_size;
		len = ze->raw_len;
		if (x->za.running && x->za.idx == x->rd.next) {
			/* decompressed alongside the chunk before */
			rc = za_join(x, e);
			if (rc == 0)
				memcpy(data, x->za.raw, (size_t)len);
		} else {
			rc = 0;
			if (x->rd.next + 1 < x->rd.end)
				rc = za_start(x, f->src, x->rd.next + 1, e);
			if (rc == 0)
				rc = rd_frame(x, f->src, ze, x->scratch, e);
			if (rc == 0)
				rc = gfsp_z_decompress(x->zc, x->rd.next, ze,
				    x->scratch, data, x->scap, f->src, e);
		}
		if (rc)
			return rc;
		x->rd.next++;
		gfsp_xfer_segs(data, len, h->seg, &h->nseg);
		h->dst_off = off;
		h->dst_len = len;
	} else {
		off = x->rd.next;
		len = GFSP_MIN(chunk_of(x), x->rd.end - off);
		x->rd.next += len;
		if (x->rd.resumable &&
		    gfsp_xfer_rd_resumed(x, p, off, len, h, data))
			goto out;
		/* to compress, read into scratch and store into data;
		 * else a long chunk this rank writes itself is mapped, and
		 * the writer copies from the page cache */
		if (!x->rd.zdst && p->bcomm == MPI_COMM_NULL &&
		    len >= GFSP_MAP_MIN && rd_map(x, off, len, f->src, c)) {
			data = (unsigned char *)c->map.data;
			rc = 0;
			got = len;
		} else {
			rc = gfsp_pread(x->rd.src, x->rd.zdst ? x->scratch :
					data, len, off, &got, e);
		}
		if (rc == 0 && got != len)
			rc = gfsp_error_set(e, GFSP_EIO, "'%s' changed while it "
			    "was staged: it ends at %llu, it was listed with "
			    "%llu bytes", f->src,
			    (unsigned long long)(off + got),
			    (unsigned long long)f->st.size);
		if (rc)
			return rc;
		x->stats.bytes_read += len;
		if (x->rd.zdst) {
			gfsp_xfer_segs(x->scratch, len, h->seg, &h->nseg);
			rc = rd_compress(x, x->scratch, len, off, h, data, e);
			if (rc)
				return rc;
		} else {
			gfsp_xfer_segs(data, len, h->seg, &h->nseg);
			h->dst_off = off;
			h->dst_len = len;
		}
	}
out:
	h->raw_off = off;
	h->raw_len = len;
	h->zdst = x->rd.zdst == 1;
	h->last = x->rd.next >= x->rd.end;
	c->len = XHDR + (h->kind == K_DATA ? h->dst_len : 0);
	return 0;
}

/* The source must still be the version listed once the piece is read. */
static int
rd_end(struct gfsp_xfer *x, const struct gfsp_piece *p, struct gfsp_error *e)
{
	const struct gfsp_sfile *f = &x->fl->v[p->file];
	struct gfsp_stat now;
	int rc;

	rc = gfsp_fstat(x->rd.src, &now, e);
	if (rc == 0 && !gfsp_same_identity(&now, &f->st))
		rc = gfsp_error_set(e, GFSP_EIO, "'%s' changed while it was "
				   "staged (size, time or inode differ from "
				   "when it was listed)", f->src);
	return rc;
}


/*
 * The pipe's producer: the next chunk of the current piece, a RECV marker
 * for a piece another rank reads, or done.  A failure of the piece's file
 * becomes a FAIL header (the pipe goes on); only a failure to make a
 * header at all stops the pipe.
 */
static int
xfer_produce(void *arg, struct gfsp_chunk *c, int *done,
	     struct gfsp_error *err)
{
	struct gfsp_xfer *x = arg;
	struct xhdr *h = c->buf;
	struct gfsp_error e = { 0 };
	const struct gfsp_piece *p;
	int rc;

	if (x->pi >= x->np) {
		*done = 1;
		return 0;
	}
	p = &x->p[x->pi];
	memset(h, 0, offsetof(struct xhdr, seg));
	h->msg[0] = '\0';
	h->piece = (uint32_t)x->pi;
	if (!x->reads[x->pi]) {
		h->kind = K_RECV;
		c->len = XHDR;
		x->pi++;
		return 0;
	}
	if (!x->pstarted) {
		x->pstarted = 1;
		rc = rd_begin(x, p, &e);
		if (rc) {
			produce_fail(x, c, h, &e);
			goto next;
		}
	}
	rc = rd_chunk(x, p, c, h, &e);
	if (rc == 0 && h->last && !p->precopy)
		rc = rd_end(x, p, &e);
	if (rc) {
		produce_fail(x, c, h, &e);
		goto next;
	}
	if (!h->last)
		return 0;
next:
	rd_close(x);
	x->pstarted = 0;
	x->pi++;
	return 0;
}

/* ------------------------------------------------------------ consumer */

/* Keep the segment hashes of a chunk at their place in the file's list. */
static int
keep_segs(struct gfsp_xfer *x, uint32_t f, const struct xhdr *h,
	  struct gfsp_error *err)
{
	struct gfsp_fresult *r = &x->res[f];
	uint64_t first = h->raw_off / SEG, need = first + h->nseg, *v;

	if (need > r->nseg) {
		v = realloc(r->seg, need * sizeof(*v));
		if (v == NULL)
			return OOM(err);
		memset(v + r->nseg, 0, (need - r->nseg) * sizeof(*v));
		r->seg = v;
		r->nseg = need;
	}
	if (h->nseg > 0)	/* an empty file has none */
		memcpy(r->seg + first, h->seg, h->nseg * sizeof(*v));
	return 0;
}

static int
keep_zent(struct gfsp_xfer *x, const struct gfsp_zentry *ze,
	  struct gfsp_error *err)
{
	struct wr *w = &x->wr;

	if (gfsp_grow(&w->ze, &w->capze, w->nze + 1, sizeof(*w->ze)) != 0)
		return OOM(err);
	w->ze[w->nze++] = *ze;
	return 0;
}

/* The first failure of the file on this node (kept in wr). */
static void
wr_fail(struct gfsp_xfer *x, const struct gfsp_error *e)
{
	if (x->wr.rc != 0)
		return;
	x->wr.rc = e->code ? e->code : GFSP_EIO;
	x->wr.sys = e->sys;
	x->wr.msg = strdup(e->msg);
}

static void
wr_reset(struct gfsp_xfer *x)
{
	struct gfsp_error e = { 0 };

	if (x->wr.out)
		gfsp_close(x->wr.out, &e);
	free(x->wr.dst);
	free(x->wr.tmp);
	free(x->wr.msg);
	free(x->wr.ze);
	memset(&x->wr, 0, sizeof(x->wr));
}

/* The directory that holds path, made with its parents (for manifest
 * entries, whose parents are not listed). */
int
gfsp_xfer_make_parent(const char *path, struct gfsp_error *e)
{
	char *dir = strdup(path), *slash;
	int rc;

	if (dir == NULL)
		return OOM(e);
	slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir) {
		free(dir);
		return 0;
	}
	*slash = '\0';
	rc = gfsp_mkdirs(dir, 0755, e);
	free(dir);
	return rc;
}

#define TMP_FLAGS	(GFSP_O_WRONLY | GFSP_O_CREAT | GFSP_O_PRIVATE)

static int
wr_begin(struct gfsp_xfer *x, const struct gfsp_piece *p)
{
	struct gfsp_error e = { 0 };

	wr_reset(x);
	x->wr.file = p->file;
	x->wr.dst = gfsp_xfer_dst_path(x, p->file);
	x->wr.tmp = gfsp_xfer_tmp_path(x, p->file);
	if (x->wr.dst == NULL || x->wr.tmp == NULL)
		return GFSP_ENOMEM;
	/* no O_TRUNC: chunks found in the journal are already in it, and
	 * every other byte up to the end is written now.  A new file, or
	 * one that is surely ours (GFSP_O_PRIVATE): never someone's planted
	 * link or file */
	if (gfsp_open(x->wr.tmp, TMP_FLAGS, 0600, &x->wr.out, &e) ==
	    GFSP_ENOENT) {
		gfsp_error_clear(&e);
		if (gfsp_xfer_make_parent(x->wr.tmp, &e) == 0)
			gfsp_open(x->wr.tmp, TMP_FLAGS, 0600, &x->wr.out, &e);
	}
	if (x->wr.out == NULL)
		wr_fail(x, &e);
	return 0;
}

/* Record in the state that dst holds file's source as it is now. */
int
gfsp_xfer_record_done(struct gfsp_xfer *x, uint32_t file, const char *dst,
		      uint64_t hash, struct gfsp_error *e)
{
	const struct gfsp_sfile *f = &x->fl->v[file];
	struct gfsp_stat now;
	struct gfsp_done rec;
	int rc;

	if (x->st == NULL)
		return 0;
	/* what a re-run compares: this source version, that installed file */
	rc = gfsp_stat(dst, &now, e);
	if (rc)
		return rc;
	memset(&rec, 0, sizeof(rec));
	rec.key = gfsp_file_key(f->src, &f->st);
	rec.size = now.size;
	rec.mtime = now.mtime;
	rec.mtime_ns = now.mtime_ns;
	rec.dmtime_ns = now.mtime_ns;
	rec.dino = now.ino;
	rec.dctime = now.ctime;
	rec.dctime_ns = now.ctime_ns;
	rec.hash = hash;
	return gfsp_state_add_done(x->st, f->rel, &rec, e);
}

/* Give the finished temporary file, still open, the source's mode and
 * times: on its descriptor, whatever may have happened to its name.  The
 * copy is this user's: the source's set-id bits only where that is the
 * owner (group) they were set with (gfsp_copy_mode). */
static int
set_attrs(struct gfsp_xfer *x, uint32_t file, struct gfsp_file *out,
	  struct gfsp_error *e)
{
	const struct gfsp_sfile *f = &x->fl->v[file];
	struct gfsp_stat now;
	int rc;

	rc = gfsp_fstat(out, &now, e);
	if (rc)
		return rc;
	return gfsp_fsetattr(out, gfsp_copy_mode(&f->st, now.uid, now.gid),
			     f->st.atime, f->st.atime_ns, f->st.mtime,
			     f->st.mtime_ns, e);
}

/* Rename the finished temporary file (closed, its attributes set) into
 * place; record it as installed. */
static int
install(struct gfsp_xfer *x, uint32_t file, const char *tmp, const char *dst,
	uint64_t stored, uint64_t hash, struct gfsp_error *e)
{
	int rc;

	rc = gfsp_install(tmp, dst, NULL, GFSP_PUT_ASIDE | GFSP_PUT_NODIR, e);
	if (rc)
		return rc;
	x->res[file].installed = 1;
	x->res[file].hash = hash;
	x->res[file].stored = stored;
	x->stats.files++;
	return gfsp_xfer_record_done(x, file, dst, hash, e);
}

/* The file's checksum from its segment hashes (all of them here). */
static uint64_t
file_hash(const struct gfsp_fresult *r)
{
	return gfsp_phash_root(r->seg, r->nseg);
}

/* Does the journal hold chunks of the file? */
static int
journaled(struct gfsp_xfer *x, uint32_t file)
{
	const struct gfsp_sfile *f = &x->fl->v[file];
	size_t first;

	return x->st != NULL && gfsp_state_chunks(x->st, f->rel, &first) > 0;
}

/* The last chunk of the piece is in: close the temporary file, and
 * install a file that was one piece. */
static void
wr_end(struct gfsp_xfer *x, const struct gfsp_piece *p)
{
	struct gfsp_error e = { 0 };
	struct wr *w = &x->wr;
	void *ix = NULL;
	size_t ixlen = 0;
	uint64_t raw = 0, hash;
	size_t i;
	int rc = w->rc;

	hash = file_hash(&x->res[p->file]);
	if (p->precopy)
		goto close;		/* the rest comes with the next copy */
	if (rc == 0 && w->nze > 0) {	/* stored compressed: the index */
		for (i = 0; i < w->nze; i++)
			raw += w->ze[i].raw_len;
		rc = gfsp_z_index_build(w->ze, w->nze, w->stored, raw, hash,
					&ix, &ixlen, &e);
		if (rc == 0)
			rc = gfsp_pwrite(w->out, ix, ixlen, w->stored, &e);
		if (rc == 0)
			w->stored += ixlen;
		free(ix);
	}
	if (rc == 0 && p->npieces == 1)
		rc = gfsp_ftruncate(w->out, w->stored, &e);
	if (rc == 0 && p->npieces == 1)
		rc = set_attrs(x, p->file, w->out, &e);
	if (rc == 0 && p->npieces == 1 && x->o.sync)
		rc = gfsp_fsync(w->out, &e);
close:
	if (w->out) {
		int crc = gfsp_close(w->out, rc ? NULL : &e);

		w->out = NULL;
		if (rc == 0)
			rc = crc;
	}
	if (rc == 0 && p->npieces == 1 && !p->precopy)
		rc = install(x, p->file, w->tmp, w->dst, w->stored, hash, &e);
	if (rc && w->rc == 0)
		wr_fail(x, &e);
	if (w->rc) {
		char *msg = NULL;
		int full = w->sys == ENOSPC || w->sys == EDQUOT;

		/* what no journal record keeps for a resume only takes room;
		 * on a full file system or quota, room is what the user needs
		 * back first: the partial copy goes, the next run starts over */
		if (p->npieces == 1 && (full || (!w->journaled &&
		    !journaled(x, p->file))) &&
		    gfsp_unlink(w->tmp, NULL) == 0 && full) {
			char sz[32];

			if (asprintf(&msg, "%s (the partial copy, %s, was "
				     "removed to give the space back)", w->msg,
				     gfsp_format_size(w->stored, sz,
						      sizeof(sz))) < 0)
				msg = NULL;
		}
		gfsp_xfer_fail_file(x, p->file, w->rc, msg ? msg : w->msg);
		free(msg);
	}
	wr_reset(x);
}

/*
 * A chunk's bytes into the destination.  Of a sparse source (fewer blocks
 * than its size needs; --no-sparse off), each aligned run of
 * GFSP_HOLE_MIN zero bytes becomes a hole, punched rather than skipped so
 * that whatever a temporary held there before (a resumed copy) reads as
 * zeros; the file's size is set at its end.  Elsewhere, and where holes
 * cannot be punched, the bytes are written.
 */
static int
wr_data(struct gfsp_xfer *x, const struct gfsp_sfile *f, const struct xhdr *h,
	const unsigned char *data, struct gfsp_error *e)
{
	struct wr *w = &x->wr;

	if (!x->o.sparse || h->zdst || f->gfsz ||
	    f->st.blocks_bytes >= f->st.size)
		return gfsp_pwrite(w->out, data, h->dst_len, h->dst_off, e);
	return gfsp_pwrite_sparse(w->out, data, h->dst_len, h->dst_off, 0,
				  &x->stats.bytes_holes, e);
}

/* Write one chunk (h, data) of piece p here. */
static int
wr_chunk(struct gfsp_xfer *x, const struct gfsp_piece *p,
	 const struct xhdr *h, const unsigned char *data,
	 const struct gfsp_rmap *map, struct gfsp_error *err)
{
	const struct gfsp_sfile *f = &x->fl->v[p->file];
	struct gfsp_error e = { 0 };
	struct gfsp_chunkrec rec;
	struct wr *w = &x->wr;
	double t0;
	int rc;

	if (w->dst == NULL || w->piece != h->piece) {
		if (h->kind == K_FAIL) {	/* before anything was made */
			gfsp_xfer_fail_file(x, p->file, h->code, h->msg);
			return 0;
		}
		if (wr_begin(x, p))
			return OOM(err);
		w->piece = h->piece;
	}
	if (h->kind == K_FAIL) {
		gfsp_error_set(&e, h->code, "%s", h->msg);
		wr_fail(x, &e);
		wr_end(x, p);
		return 0;
	}
	rc = keep_segs(x, p->file, h, err);
	if (rc == 0 && h->has_zent)
		rc = keep_zent(x, &h->zent, err);
	if (rc)
		return rc;
	if (h->kind == K_DATA && w->rc == 0 && h->dst_len > 0) {
		t0 = gfsp_now();
		rate_wait(x, h->dst_len);
		if (wr_data(x, f, h, data, &e) != 0) {
			if (map != NULL)	/* EFAULT: the source shrank? */
				gfsp_rmap_vanished(map, &e);
			wr_fail(x, &e);
		}
		else
			x->stats.bytes_written += h->dst_len;
		if (h->zdst && x->o.adapt)
			__atomic_store_n(&x->wr_ns_mib, (uint64_t)((gfsp_now() -
			    t0) * 1e9 * MIB / (double)h->dst_len) + 1,
			    __ATOMIC_RELAXED);
	}
	if (h->kind == K_RESUMED) {
		x->stats.bytes_resumed += h->raw_len;
		x->res[p->file].resumed += h->raw_len;
	} else
		x->stats.raw_bytes += h->raw_len;
	w->stored = GFSP_MAX(w->stored, h->kind == K_RESUMED && h->has_zent
			     ? h->zent.z_off + h->zent.z_len
			     : h->kind == K_RESUMED ? h->raw_off + h->raw_len
			     : h->dst_off + h->dst_len);
	/* a chunk of a file of several, written by this rank alone: into
	 * the journal once its bytes are out of the client (Gfarm buffers) */
	if (h->kind == K_DATA && w->rc == 0 && x->st != NULL &&
	    p->bcomm == MPI_COMM_NULL && (p->precopy ||
	    (f->st.size > chunk_of(x) && !(h->last && p->npieces == 1)))) {
		if (gfsp_flush(w->out, &e) != 0) {
			wr_fail(x, &e);
		} else {
			memset(&rec, 0, sizeof(rec));
			rec.off = h->raw_off;
			rec.len = h->raw_len;
			if (h->has_zent) {
				rec.zoff = h->zent.z_off;
				rec.zlen = h->zent.z_len;
				rec.zhash = h->zent.hash;
			}
			rec.nseg = h->nseg;
			rec.seg = (uint64_t *)h->seg;
			if (gfsp_state_add_chunk(x->st, f->rel,
						 gfsp_file_key(f->src, &f->st),
						 w->tmp, &rec, &e) != 0)
				wr_fail(x, &e);
			else
				w->journaled = 1;
		}
	}
	x->progress += h->raw_len;
	if (x->prog)
		gfsp_progress_update(x->prog, x->progress);
	if (h->last)
		wr_end(x, p);
	return 0;
}

/* Ranks of a slot wait for a reader that is still reading: gfsp_bcast,
 * which does not spin, for a header; a chunk's bytes go down the chain of
 * the slot's nodes (gfsp_bcast_chain), each link carrying them once. */
static int
bcast(void *buf, size_t len, int root, MPI_Comm comm, struct gfsp_error *err)
{
	return gfsp_mpi_check(gfsp_bcast(buf, (int)len, MPI_BYTE, root, comm),
			      "MPI_Ibcast", err);
}

static int
bcast_data(void *buf, size_t len, int root, MPI_Comm comm,
	   struct gfsp_error *err)
{
	return gfsp_mpi_check(gfsp_bcast_chain(buf, len, root, comm),
			      "forwarding a chunk down the nodes", err);
}

/* Receive piece p, chunk after chunk, from its reader, and write it. */
static int
recv_piece(struct gfsp_xfer *x, const struct gfsp_piece *p,
	   struct gfsp_error *err)
{
	struct xhdr *h = (struct xhdr *)x->rbuf;
	int rc;

	do {
		rc = bcast(x->rbuf, XHDR, p->reader, p->bcomm, err);
		if (rc == 0 && h->kind == K_DATA && h->dst_len > 0)
			rc = bcast_data(x->rbuf + XHDR, h->dst_len, p->reader,
					p->bcomm, err);
		if (rc == 0 && h->kind != K_DATA && h->kind != K_FAIL &&
		    h->kind != K_RESUMED)
			rc = gfsp_error_set(err, GFSP_ECORRUPT, "forwarded "
					   "chunk of unknown kind %u", h->kind);
		if (rc == 0) {
			if (h->kind == K_DATA)
				x->stats.bytes_forwarded += h->dst_len;
			rc = wr_chunk(x, p, h, x->rbuf + XHDR, NULL, err);
		}
	} while (rc == 0 && !h->last);
	return rc;
}

static int
xfer_consume(void *arg, const struct gfsp_chunk *c, struct gfsp_error *err)
{
	struct gfsp_xfer *x = arg;
	const struct xhdr *h = c->buf;
	const struct gfsp_piece *p = &x->p[h->piece];
	int rc;

	if (h->kind == K_RECV)
		return recv_piece(x, p, err);
	if (p->bcomm != MPI_COMM_NULL) {
		rc = bcast(c->buf, XHDR, p->reader, p->bcomm, err);
		if (rc == 0 && h->kind == K_DATA && h->dst_len > 0)
			rc = bcast_data((char *)c->buf + XHDR, h->dst_len,
					p->reader, p->bcomm, err);
		if (rc)
			return rc;
	}
	return wr_chunk(x, p, h, c->map.data ? c->map.data :
			(const unsigned char *)c->buf + XHDR, &c->map, err);
}

static const struct gfsp_pipe_ops xfer_pipe_ops = {
	.produce = xfer_produce,
	.consume = xfer_consume,
};

int
gfsp_xfer_run(struct gfsp_xfer *x, const struct gfsp_piece *p, size_t n,
	     struct gfsp_error *err)
{
	size_t i;
	int rc;

	if (n == 0)
		return 0;
	x->reads = malloc(n);
	if (x->reads == NULL)
		return OOM(err);
	for (i = 0; i < n; i++) {
		int r = 0;

		if (p[i].bcomm != MPI_COMM_NULL)
			MPI_Comm_rank(p[i].bcomm, &r);
		x->reads[i] = p[i].bcomm == MPI_COMM_NULL || r == p[i].reader;
	}
	x->p = p;
	x->np = n;
	x->pi = 0;
	x->pstarted = 0;
	rc = gfsp_pipe_run(&xfer_pipe_ops, x, x->bufsize, err);
	free(x->reads);
	x->reads = NULL;
	rd_close(x);
	wr_reset(x);
	x->p = NULL;
	x->np = 0;
	return rc;
}

int
gfsp_xfer_finish(struct gfsp_xfer *x, uint32_t file)
{
	const struct gfsp_sfile *f = &x->fl->v[file];
	struct gfsp_fresult *r = &x->res[file];
	struct gfsp_error e = { 0 };
	struct gfsp_file *out = NULL;
	char *dst = gfsp_xfer_dst_path(x, file);
	char *tmp = gfsp_xfer_tmp_path(x, file);
	int rc;

	if (dst == NULL || tmp == NULL) {
		rc = OOM(&e);
		goto out;
	}
	rc = gfsp_open(tmp, GFSP_O_WRONLY | GFSP_O_PRIVATE, 0, &out, &e);
	if (rc == 0)
		rc = gfsp_ftruncate(out, f->st.size, &e);
	if (rc == 0)
		rc = set_attrs(x, file, out, &e);
	if (rc == 0 && x->o.sync)
		rc = gfsp_fsync(out, &e);
	if (out != NULL) {
		int crc = gfsp_close(out, rc ? NULL : &e);

		if (rc == 0)
			rc = crc;
	}
	if (rc == 0)
		rc = install(x, file, tmp, dst, f->st.size, file_hash(r), &e);
out:
	if (rc)
		gfsp_xfer_fail_file(x, file, rc, e.msg);
	free(dst);
	free(tmp);
	return rc;
}
