/*
 * zfile.c - the gfsz compressed file format (zfile.h has the picture):
 * header, per-chunk zstd frames, index.  Bytes in, bytes out; no I/O.
 */
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_ZSTD
#include <zstd.h>
#include <zstd_errors.h>
#endif

#include "core.h"
#include "zfile.h"

#define SKIP_MAGIC	0x184D2A5Eu	/* one of zstd's 16 skippable magics */
#define FRAME_HDR	8		/* skippable magic + payload length */
#define HDR_PAYLOAD	(GFSP_Z_HEADER_SIZE - FRAME_HDR)
#define HDR_TAG		"GFSZ"
#define FOOT_TAG	"GFSZIDX1"
/* footer fields, offsets inside the footer */
#define F_INDEX_OFF	0
#define F_NCHUNKS	8
#define F_RAW_SIZE	16
#define F_FILE_HASH	24
#define F_CHECK		32
#define F_TAG		40

/* "name: " or nothing, for messages */
#define NM(name)	(name) != NULL ? (name) : "", (name) != NULL ? ": " : ""

/* ---------------------------------------------------------------- header */

void
gfsp_z_header(unsigned char out[GFSP_Z_HEADER_SIZE], uint64_t chunk_size)
{
	gfsp_put_le32(out, SKIP_MAGIC);
	gfsp_put_le32(out + 4, HDR_PAYLOAD);
	memcpy(out + 8, HDR_TAG, 4);
	gfsp_put_le32(out + 12, GFSP_Z_VERSION);
	gfsp_put_le64(out + 16, chunk_size);
	gfsp_put_le64(out + 24, 0);
}

int
gfsp_z_detect(const void *buf, size_t len, const char *name, int *is_z,
	      uint64_t *chunk_size, struct gfsp_error *err)
{
	const unsigned char *p = buf;
	uint32_t version;

	*is_z = 0;
	if (len < FRAME_HDR + 4 || gfsp_le32(p) != SKIP_MAGIC ||
	    memcmp(p + FRAME_HDR, HDR_TAG, 4) != 0)
		return 0;
	if (len < GFSP_Z_HEADER_SIZE)
		return gfsp_error_set(err, GFSP_ECORRUPT, "%s%sgfsz header "
		    "truncated: %zu bytes of %d", NM(name), len,
		    GFSP_Z_HEADER_SIZE);
	version = gfsp_le32(p + 12);
	if (version != GFSP_Z_VERSION)
		return gfsp_error_set(err, GFSP_EVERSION, "%s%sgfsz version %u "
		    "is not supported by this gfsplit (reads version %d)",
		    NM(name), version, GFSP_Z_VERSION);
	if (gfsp_le32(p + 4) != HDR_PAYLOAD)
		return gfsp_error_set(err, GFSP_ECORRUPT, "%s%sgfsz header "
		    "payload is %u bytes, not %d", NM(name), gfsp_le32(p + 4),
		    HDR_PAYLOAD);
	*chunk_size = gfsp_le64(p + 16);
	if (*chunk_size == 0)
		return gfsp_error_set(err, GFSP_ECORRUPT, "%s%sgfsz header "
		    "gives chunk size 0", NM(name));
	*is_z = 1;
	return 0;
}

/* ----------------------------------------------------------------- chunks */

#ifdef HAVE_ZSTD

struct gfsp_zcodec {
	ZSTD_CCtx *cc;
	ZSTD_DCtx *dc;
};

/* zstd's result r of `what` as an error: memory, or else `code` */
static int
zstd_error(struct gfsp_error *err, size_t r, int code, const char *what)
{
	if (ZSTD_getErrorCode(r) == ZSTD_error_memory_allocation)
		code = GFSP_ENOMEM;
	return gfsp_error_set(err, code, "%s: %s", what, ZSTD_getErrorName(r));
}

int
gfsp_zcodec_new(int level, int workers, struct gfsp_zcodec **out,
		struct gfsp_error *err)
{
	/* the content size lets the reader check a frame before decoding
	 * it; the index's XXH3 makes zstd's own checksum redundant; a
	 * libzstd built without threads refuses workers > 0 */
	const struct {
		ZSTD_cParameter p;
		int v, code;
		const char *what;
	} set[] = {
		{ ZSTD_c_compressionLevel, level != 0 ? level :
		  ZSTD_CLEVEL_DEFAULT, GFSP_EINVAL, "zstd level" },
		{ ZSTD_c_nbWorkers, workers, GFSP_ENOTSUP, "zstd workers" },
		{ ZSTD_c_jobSize, workers > 0 ? (int)GFSP_Z_JOB : 0,
		  GFSP_EINVAL, "zstd job size" },
		{ ZSTD_c_contentSizeFlag, 1, GFSP_EINVAL, "zstd content size" },
		{ ZSTD_c_checksumFlag, 0, GFSP_EINVAL, "zstd checksum" },
	};
	struct gfsp_zcodec *z;
	size_t i, r;
	int rc = 0;

	*out = NULL;
	z = calloc(1, sizeof(*z));
	if (z == NULL || (z->cc = ZSTD_createCCtx()) == NULL ||
	    (z->dc = ZSTD_createDCtx()) == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "cannot allocate a zstd "
		    "context");
	for (i = 0; rc == 0 && i < GFSP_ARRAY_SIZE(set); i++) {
		r = ZSTD_CCtx_setParameter(z->cc, set[i].p, set[i].v);
		if (ZSTD_isError(r))
			rc = zstd_error(err, r, set[i].code, set[i].what);
	}
	if (rc != 0)
		gfsp_zcodec_free(z);
	else
		*out = z;
	return rc;
}

int
gfsp_zcodec_level(struct gfsp_zcodec *z, int level, struct gfsp_error *err)
{
	size_t r = ZSTD_CCtx_setParameter(z->cc, ZSTD_c_compressionLevel,
					  level);

	return ZSTD_isError(r) ? zstd_error(err, r, GFSP_EINVAL, "zstd level")
			       : 0;
}

void
gfsp_zcodec_free(struct gfsp_zcodec *z)
{
	if (z == NULL)
		return;
	ZSTD_freeCCtx(z->cc);
	ZSTD_freeDCtx(z->dc);
	free(z);
}

size_t
gfsp_z_bound(size_t raw_len)
{
	return ZSTD_compressBound(raw_len);
}

int
gfsp_z_compress(struct gfsp_zcodec *z, const void *raw, size_t len,
		void *out, size_t cap, size_t *zlen, struct gfsp_error *err)
{
	size_t r;

	*zlen = 0;
	if (cap < ZSTD_compressBound(len))
		return gfsp_error_set(err, GFSP_EINVAL, "compress: output of "
		    "%zu bytes is below the bound %zu for %zu bytes", cap,
		    ZSTD_compressBound(len), len);
	/* one call, one frame: the content size is known and written */
	r = ZSTD_compress2(z->cc, out, cap, raw, len);
	if (ZSTD_isError(r))
		return zstd_error(err, r, GFSP_EIO, "zstd compression");
	*zlen = r;
	return 0;
}

int
gfsp_z_decompress(struct gfsp_zcodec *z, uint64_t idx,
		  const struct gfsp_zentry *e, const void *frame,
		  void *out, size_t cap, const char *name,
		  struct gfsp_error *err)
{
	unsigned long long csize;
	size_t zlen = (size_t)e->z_len, r;

	if (e->raw_len > cap)
		return gfsp_error_set(err, GFSP_EINVAL, "%s%scompressed chunk "
		    "%llu: %llu bytes do not fit in a buffer of %zu",
		    NM(name), (unsigned long long)idx,
		    (unsigned long long)e->raw_len, cap);
	/* exactly one frame, saying it holds raw_len bytes, before any
	 * decoding: zstd would otherwise read on into a next frame */
	r = ZSTD_findFrameCompressedSize(frame, zlen);
	if (ZSTD_isError(r) || r != zlen)
		return gfsp_error_set(err, GFSP_ECORRUPT, "%s%scompressed "
		    "chunk %llu: not one zstd frame of %zu bytes", NM(name),
		    (unsigned long long)idx, zlen);
	csize = ZSTD_getFrameContentSize(frame, zlen);
	if (csize == ZSTD_CONTENTSIZE_UNKNOWN ||
	    csize == ZSTD_CONTENTSIZE_ERROR)
		return gfsp_error_set(err, GFSP_ECORRUPT, "%s%scompressed "
		    "chunk %llu: frame does not record its size", NM(name),
		    (unsigned long long)idx);
	if (csize != e->raw_len)
		return gfsp_error_set(err, GFSP_ECORRUPT, "%s%scompressed "
		    "chunk %llu: frame holds %llu bytes, index says %llu",
		    NM(name), (unsigned long long)idx, csize,
		    (unsigned long long)e->raw_len);
	r = ZSTD_decompressDCtx(z->dc, out, (size_t)e->raw_len, frame, zlen);
	if (ZSTD_isError(r))
		return gfsp_error_set(err, GFSP_ECORRUPT, "%s%scompressed "
		    "chunk %llu: %s", NM(name), (unsigned long long)idx,
		    ZSTD_getErrorName(r));
	if (r != e->raw_len)
		return gfsp_error_set(err, GFSP_ECORRUPT, "%s%scompressed "
		    "chunk %llu: decodes to %zu bytes, index says %llu",
		    NM(name), (unsigned long long)idx, r,
		    (unsigned long long)e->raw_len);
	if (gfsp_hash64(out, r) != e->hash)
		return gfsp_error_set(err, GFSP_ECHECKSUM, "%s%scompressed "
		    "chunk %llu: checksum mismatch", NM(name),
		    (unsigned long long)idx);
	return 0;
}

#else /* !HAVE_ZSTD */

static int
no_zstd(struct gfsp_error *err)
{
	return gfsp_error_set(err, GFSP_ENOTSUP, "built without zstd");
}

int
gfsp_zcodec_new(int level, int workers, struct gfsp_zcodec **out,
		struct gfsp_error *err)
{
	*out = NULL;
	return no_zstd(err);
}

int
gfsp_zcodec_level(struct gfsp_zcodec *z, int level, struct gfsp_error *err)
{
	return no_zstd(err);
}

void
gfsp_zcodec_free(struct gfsp_zcodec *z)
{
}

size_t
gfsp_z_bound(size_t raw_len)
{
	return 0;
}

int
gfsp_z_compress(struct gfsp_zcodec *z, const void *raw, size_t len,
		void *out, size_t cap, size_t *zlen, struct gfsp_error *err)
{
	*zlen = 0;
	return no_zstd(err);
}

int
gfsp_z_decompress(struct gfsp_zcodec *z, uint64_t idx,
		  const struct gfsp_zentry *e, const void *frame,
		  void *out, size_t cap, const char *name,
		  struct gfsp_error *err)
{
	return no_zstd(err);
}

#endif /* HAVE_ZSTD */

/* ------------------------------------------------------------------ index */

/* entries a skippable frame's u32 payload length can hold */
#define MAX_ENTRIES	((UINT32_MAX - GFSP_Z_FOOTER_SIZE) / GFSP_Z_ENTRY_SIZE)

int
gfsp_z_index_build(const struct gfsp_zentry *e, uint64_t n,
		   uint64_t index_off, uint64_t raw_size, uint64_t file_hash,
		   void **out, size_t *len, struct gfsp_error *err)
{
	unsigned char *p, *q, *foot;
	size_t payload;
	uint64_t k;

	*out = NULL;
	*len = 0;
	if (n > MAX_ENTRIES)
		return gfsp_error_set(err, GFSP_EINVAL, "%llu chunks are too "
		    "many for one gfsz index (at most %llu)",
		    (unsigned long long)n, (unsigned long long)MAX_ENTRIES);
	payload = (size_t)n * GFSP_Z_ENTRY_SIZE + GFSP_Z_FOOTER_SIZE;
	p = malloc(FRAME_HDR + payload);
	if (p == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "cannot allocate a "
		    "gfsz index of %zu bytes", FRAME_HDR + payload);
	gfsp_put_le32(p, SKIP_MAGIC);
	gfsp_put_le32(p + 4, (uint32_t)payload);
	for (k = 0, q = p + FRAME_HDR; k < n; k++, q += GFSP_Z_ENTRY_SIZE) {
		gfsp_put_le64(q, e[k].z_off);
		gfsp_put_le64(q + 8, e[k].z_len);
		gfsp_put_le64(q + 16, e[k].raw_len);
		gfsp_put_le64(q + 24, e[k].hash);
	}
	foot = q;
	gfsp_put_le64(foot + F_INDEX_OFF, index_off);
	gfsp_put_le64(foot + F_NCHUNKS, n);
	gfsp_put_le64(foot + F_RAW_SIZE, raw_size);
	gfsp_put_le64(foot + F_FILE_HASH, file_hash);
	gfsp_put_le64(foot + F_CHECK, gfsp_hash64(p + FRAME_HDR,
	    (size_t)(foot + F_CHECK - (p + FRAME_HDR))));
	memcpy(foot + F_TAG, FOOT_TAG, 8);
	*out = p;
	*len = FRAME_HDR + payload;
	return 0;
}

int
gfsp_z_footer_parse(const unsigned char foot[GFSP_Z_FOOTER_SIZE],
		    uint64_t file_size, const char *name, uint64_t *index_off,
		    uint64_t *index_len, struct gfsp_error *err)
{
	const uint64_t least = GFSP_Z_HEADER_SIZE + FRAME_HDR +
	    GFSP_Z_FOOTER_SIZE;
	uint64_t n, off;

	if (file_size < least || memcmp(foot + F_TAG, FOOT_TAG, 8) != 0)
		return gfsp_error_set(err, GFSP_ECORRUPT, "%s%sno gfsz index "
		    "at the end (file truncated?)", NM(name));
	n = gfsp_le64(foot + F_NCHUNKS);
	off = gfsp_le64(foot + F_INDEX_OFF);
	/* n first, so that the lengths below cannot overflow */
	if (n > MAX_ENTRIES || n > (file_size - least) / GFSP_Z_ENTRY_SIZE)
		return gfsp_error_set(err, GFSP_ECORRUPT, "%s%sgfsz footer: "
		    "%llu chunks cannot fit in %llu bytes", NM(name),
		    (unsigned long long)n, (unsigned long long)file_size);
	*index_len = FRAME_HDR + n * GFSP_Z_ENTRY_SIZE + GFSP_Z_FOOTER_SIZE;
	if (off != file_size - *index_len)
		return gfsp_error_set(err, GFSP_ECORRUPT, "%s%sgfsz footer: "
		    "index at %llu, but %llu chunks put it at %llu (file "
		    "truncated?)", NM(name), (unsigned long long)off,
		    (unsigned long long)n,
		    (unsigned long long)(file_size - *index_len));
	*index_off = off;
	return 0;
}

int
gfsp_z_index_parse(const void *frame, size_t len, uint64_t index_off,
		   uint64_t chunk_size, const char *name,
		   struct gfsp_zindex *out, struct gfsp_error *err)
{
	const unsigned char *p = frame, *foot, *q;
	struct gfsp_zentry *e = NULL;
	uint64_t n, k, pos = GFSP_Z_HEADER_SIZE, raw = 0;
	size_t payload;
	int rc = 0;

	memset(out, 0, sizeof(*out));
#define BAD(...)	do {						\
		rc = gfsp_error_set(err, GFSP_ECORRUPT, __VA_ARGS__);	\
		goto out;						\
	} while (0)
	if (len < FRAME_HDR + GFSP_Z_FOOTER_SIZE || gfsp_le32(p) != SKIP_MAGIC)
		BAD("%s%sgfsz index: not a skippable frame", NM(name));
	payload = len - FRAME_HDR;
	foot = p + len - GFSP_Z_FOOTER_SIZE;
	if (gfsp_le32(p + 4) != payload || memcmp(foot + F_TAG, FOOT_TAG, 8) != 0)
		BAD("%s%sgfsz index: frame of %zu bytes is cut short or "
		    "overlong", NM(name), len);
	/* footer_check covers the payload up to itself */
	if (gfsp_le64(foot + F_CHECK) != gfsp_hash64(p + FRAME_HDR,
	    (size_t)(foot + F_CHECK - (p + FRAME_HDR))))
		BAD("%s%sgfsz index: checksum mismatch", NM(name));
	n = gfsp_le64(foot + F_NCHUNKS);
	if ((payload - GFSP_Z_FOOTER_SIZE) / GFSP_Z_ENTRY_SIZE != n ||
	    (payload - GFSP_Z_FOOTER_SIZE) % GFSP_Z_ENTRY_SIZE != 0)
		BAD("%s%sgfsz index: %llu chunks in a frame of %zu bytes",
		    NM(name), (unsigned long long)n, len);
	if (gfsp_le64(foot + F_INDEX_OFF) != index_off)
		BAD("%s%sgfsz index: read at %llu, footer says %llu", NM(name),
		    (unsigned long long)index_off,
		    (unsigned long long)gfsp_le64(foot + F_INDEX_OFF));
	if (chunk_size == 0)
		BAD("%s%sgfsz index: chunk size 0", NM(name));
	out->chunk_size = chunk_size;
	out->raw_size = gfsp_le64(foot + F_RAW_SIZE);
	out->file_hash = gfsp_le64(foot + F_FILE_HASH);
	if (n > 0 && (e = malloc((size_t)n * sizeof(*e))) == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM, "%s%scannot allocate "
		    "%llu gfsz index entries", NM(name), (unsigned long long)n);
		goto out;
	}
	for (k = 0, q = p + FRAME_HDR; k < n; k++, q += GFSP_Z_ENTRY_SIZE) {
		e[k].z_off = gfsp_le64(q);
		e[k].z_len = gfsp_le64(q + 8);
		e[k].raw_len = gfsp_le64(q + 16);
		e[k].hash = gfsp_le64(q + 24);
		/* pos <= index_off all along, so these cannot overflow */
		if (e[k].z_off != pos)
			BAD("%s%sgfsz index: chunk %llu at %llu, expected at "
			    "%llu", NM(name), (unsigned long long)k,
			    (unsigned long long)e[k].z_off,
			    (unsigned long long)pos);
		if (e[k].z_len == 0 || e[k].z_len > index_off - pos)
			BAD("%s%sgfsz index: chunk %llu of %llu bytes at %llu "
			    "does not fit before the index at %llu", NM(name),
			    (unsigned long long)k,
			    (unsigned long long)e[k].z_len,
			    (unsigned long long)pos,
			    (unsigned long long)index_off);
		if (k + 1 < n ? e[k].raw_len != chunk_size :
		    e[k].raw_len == 0 || e[k].raw_len > chunk_size)
			BAD("%s%sgfsz index: chunk %llu holds %llu raw bytes "
			    "(chunk size %llu)", NM(name),
			    (unsigned long long)k,
			    (unsigned long long)e[k].raw_len,
			    (unsigned long long)chunk_size);
		if (e[k].raw_len > out->raw_size - raw)
			BAD("%s%sgfsz index: chunks hold more than the %llu "
			    "raw bytes of the footer", NM(name),
			    (unsigned long long)out->raw_size);
		pos += e[k].z_len;
		raw += e[k].raw_len;
	}
	if (pos != index_off)
		BAD("%s%sgfsz index: chunks end at %llu, the index is at %llu",
		    NM(name), (unsigned long long)pos,
		    (unsigned long long)index_off);
	if (raw != out->raw_size)
		BAD("%s%sgfsz index: chunks hold %llu raw bytes, footer says "
		    "%llu", NM(name), (unsigned long long)raw,
		    (unsigned long long)out->raw_size);
#undef BAD
	out->n = n;
	out->e = e;
	e = NULL;
out:
	free(e);
	if (rc != 0)
		memset(out, 0, sizeof(*out));
	return rc;
}

void
gfsp_zindex_free(struct gfsp_zindex *ix)
{
	if (ix == NULL)
		return;
	free(ix->e);
	memset(ix, 0, sizeof(*ix));
}
