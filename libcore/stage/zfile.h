/*
 * zfile.h - "gfsz", gfsplit's compressed file format (zstd): the bytes of
 * its header, chunks and index, encoded and parsed.  No file I/O: the
 * caller reads and writes at the offsets these functions name or return.
 * Included by libcore/stage/ and tests/.
 *
 * The file is a sequence of zstd frames, so `zstd -d` decompresses it to
 * the original bytes (it skips skippable frames).  Integers little-endian.
 *
 *               0 +----------------------------------------------------+
 *                 | header: skippable frame (GFSP_Z_HEADER_SIZE = 32)  |
 *                 |  u32 0x184D2A5E | u32 24 = payload length          |
 *                 |  "GFSZ" | u32 version 1 | u64 chunk_size | u64 0   |
 * 32 = e[0].z_off +----------------------------------------------------+
 *                 | chunk 0: one zstd frame, its content size in its   |
 *                 |  frame header; raw bytes [0, chunk_size)           |
 *      e[1].z_off +----------------------------------------------------+
 *                 | chunk 1: raw [chunk_size, 2*chunk_size)            |
 *                 | ...       (e[k+1].z_off = e[k].z_off + e[k].z_len) |
 *                 | chunk n-1: the rest, 1..chunk_size raw bytes       |
 *       index_off +----------------------------------------------------+
 *                 | index: skippable frame                             |
 *                 |  u32 0x184D2A5E | u32 32*n + 48 = payload length   |
 *                 |  n entries of 32: u64 z_off | u64 z_len |          |
 *                 |                   u64 raw_len | u64 hash           |
 *                 |  footer of 48:    u64 index_off | u64 n |          |
 *                 |                   u64 raw_size | u64 file_hash |   |
 *                 |                   u64 footer_check | "GFSZIDX1"    |
 *       file_size +----------------------------------------------------+
 *
 * hash is XXH3-64 of the chunk's raw bytes (gfsp_hash64); footer_check is
 * XXH3-64 of the index payload before it (the entries and the footer's
 * first 32 bytes); file_hash is the writer's own checksum of the whole raw
 * file, passed through.  The header's last u64 is written 0 and not read.
 * The chunks tile the file from byte 32 to index_off with no gap, every
 * chunk but the last holds chunk_size raw bytes, and an empty file has no
 * chunk (index_off == 32).  Chunk k holds raw bytes [k*chunk_size, ...),
 * so chunks compress and decompress independently, in parallel, in any
 * order.
 *
 * Reading: gfsp_z_detect on the first 32 bytes, gfsp_z_footer_parse on the
 * last 48, gfsp_z_index_parse on the index frame, then gfsp_z_decompress
 * per chunk.  Writing: gfsp_z_header, gfsp_z_compress per chunk, then
 * gfsp_z_index_build.
 *
 * Errors: functions return 0 or a GFSP_E* code.  Those that parse a file's
 * bytes take `name` (IN: the file as the user knows it) and put it first in
 * their messages ("x.gfsz: compressed chunk 3: checksum mismatch"; NULL:
 * no name); those that only encode have nothing to name.
 *
 * Without zstd (a build with no HAVE_ZSTD) the format functions still
 * work, so a gfsz file is still recognised as one, but gfsp_zcodec_new,
 * gfsp_z_compress and gfsp_z_decompress return GFSP_ENOTSUP "built without
 * zstd" and gfsp_z_bound returns 0.
 */
#ifndef GFSP_ZFILE_H
#define GFSP_ZFILE_H

#include <stddef.h>
#include <stdint.h>
#include "gfsplit.h"

#define GFSP_Z_VERSION		1
#define GFSP_Z_HEADER_SIZE	32	/* the header frame */
#define GFSP_Z_FOOTER_SIZE	48	/* the index's last bytes */
#define GFSP_Z_ENTRY_SIZE	32	/* one chunk in the index */

/* One chunk: its frame at [z_off, z_off + z_len) of the file; raw_len
 * bytes once decompressed, of XXH3-64 hash. */
struct gfsp_zentry {
	uint64_t z_off, z_len, raw_len, hash;
};

/* A parsed index; e has n entries (NULL when n == 0). */
struct gfsp_zindex {
	uint64_t chunk_size, raw_size, file_hash, n;
	struct gfsp_zentry *e;
};

/* ---------------------------------------------------------------- header */

/* OUT out: the header frame of a file of chunk_size-byte chunks. */
void gfsp_z_header(unsigned char out[GFSP_Z_HEADER_SIZE], uint64_t chunk_size);

/*
 * Is this a gfsz file?  IN buf: its first len bytes (pass
 * GFSP_Z_HEADER_SIZE when the file has that many).  OUT *is_z: 1 and
 * *chunk_size set, or 0 for anything else (a user's own .zst included:
 * another magic, or a payload that is not "GFSZ"; fewer than 12 bytes).
 * Fails with GFSP_EVERSION on our header with another version, and with
 * GFSP_ECORRUPT on our header cut short, of a wrong length or chunk size 0.
 */
int gfsp_z_detect(const void *buf, size_t len, const char *name, int *is_z,
		  uint64_t *chunk_size, struct gfsp_error *err);

/* ----------------------------------------------------------------- chunks */

/*
 * A compression context and a decompression context, reused chunk after
 * chunk; one thread at a time.  level: zstd level (0: zstd's default, 3);
 * workers: zstd's own compression threads (0: none, all in the caller),
 * each given jobs of GFSP_Z_JOB bytes so that one chunk keeps them busy.
 * OUT *out: free with gfsp_zcodec_free (NULL is fine).
 */
#define GFSP_Z_JOB	(1u << 20)
struct gfsp_zcodec;
int gfsp_zcodec_new(int level, int workers, struct gfsp_zcodec **out,
		    struct gfsp_error *err);
/* The level of the frames compressed from now on. */
int gfsp_zcodec_level(struct gfsp_zcodec *z, int level,
		      struct gfsp_error *err);
void gfsp_zcodec_free(struct gfsp_zcodec *z);

/* The largest frame gfsp_z_compress makes of raw_len bytes. */
size_t gfsp_z_bound(size_t raw_len);

/* One chunk: IN raw[len] -> OUT out[cap] (cap >= gfsp_z_bound(len)), one
 * zstd frame of *zlen bytes with the content size in its header. */
int gfsp_z_compress(struct gfsp_zcodec *z, const void *raw, size_t len,
		    void *out, size_t cap, size_t *zlen,
		    struct gfsp_error *err);

/*
 * Chunk idx: IN frame, e->z_len bytes read from e->z_off -> OUT out[cap]
 * (cap >= e->raw_len), e->raw_len bytes.  GFSP_ECORRUPT if frame is not
 * one zstd frame of exactly that length decoding to e->raw_len bytes,
 * GFSP_ECHECKSUM if their XXH3-64 is not e->hash; messages name idx.
 */
int gfsp_z_decompress(struct gfsp_zcodec *z, uint64_t idx,
		      const struct gfsp_zentry *e, const void *frame,
		      void *out, size_t cap, const char *name,
		      struct gfsp_error *err);

/* ------------------------------------------------------------------ index */

/*
 * The index frame for IN e[n], to be written at index_off: OUT *out
 * (malloc'd, free()) of *len bytes, which end the file.  The entries are
 * taken as given; gfsp_z_index_parse is the one that checks them.
 */
int gfsp_z_index_build(const struct gfsp_zentry *e, uint64_t n,
		       uint64_t index_off, uint64_t raw_size,
		       uint64_t file_hash, void **out, size_t *len,
		       struct gfsp_error *err);

/*
 * IN foot: the last GFSP_Z_FOOTER_SIZE bytes of a file of file_size bytes.
 * OUT *index_off, *index_len: where the index frame is (it ends the file).
 * Checks what the footer alone can tell; GFSP_ECORRUPT otherwise (a
 * truncated file has no footer where one is looked for).  foot is not
 * read when file_size is below the smallest gfsz file (88 bytes).
 */
int gfsp_z_footer_parse(const unsigned char foot[GFSP_Z_FOOTER_SIZE],
			uint64_t file_size, const char *name,
			uint64_t *index_off, uint64_t *index_len,
			struct gfsp_error *err);

/*
 * IN frame: the len bytes of the index frame read at index_off of a file
 * whose header said chunk_size.  OUT *out: the index (free with
 * gfsp_zindex_free).  GFSP_ECORRUPT naming what is wrong unless: the
 * frame and footer are well formed, footer_check matches, the footer
 * names index_off, the chunks tile [GFSP_Z_HEADER_SIZE, index_off) in
 * order with z_len > 0, each holds chunk_size raw bytes but the last
 * (1..chunk_size), and they add up to raw_size.
 */
int gfsp_z_index_parse(const void *frame, size_t len, uint64_t index_off,
		       uint64_t chunk_size, const char *name,
		       struct gfsp_zindex *out, struct gfsp_error *err);
void gfsp_zindex_free(struct gfsp_zindex *ix);

#endif /* GFSP_ZFILE_H */
