/*
 * fuzz_zfile.c - gfsz, the compressed file format (zfile.h): the input is
 * a whole file, read the way the transfer engine reads a compressed
 * source (xfer.c, open_zsrc): gfsp_z_detect on the first 32 bytes, a
 * chunk size it can hold, gfsp_z_footer_parse on the last 48 bytes,
 * gfsp_z_index_parse on the index frame, then gfsp_z_decompress on every
 * chunk into a buffer of one chunk.  Every byte the index names must lie
 * inside the file, and the chunks decompressed must add up to the raw
 * size the footer gives.
 */
#include "fuzz.h"
#include "core.h"
#include "zfile.h"

/* the largest chunk read here (the engine's bound is its buffer size) */
#define CHUNK_MAX	(1u << 20)

static struct gfsp_zcodec *codec;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct gfsp_error err;

	gfsp_error_clear(&err);
	if (gfsp_zcodec_new(0, 0, &codec, &err) != 0)
		codec = NULL;	/* built without zstd: the index only */
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gfsp_zindex ix;
	struct gfsp_error err;
	uint64_t csize = 0, ioff, ilen, k, raw = 0;
	unsigned char *out;
	int isz = 0;

	gfsp_error_clear(&err);
	if (gfsp_z_detect(data, size < GFSP_Z_HEADER_SIZE ? size :
	    GFSP_Z_HEADER_SIZE, "f.gfsz", &isz, &csize, &err) != 0 || !isz)
		return 0;
	if (csize == 0 || csize > CHUNK_MAX || size < GFSP_Z_FOOTER_SIZE)
		return 0;
	if (gfsp_z_footer_parse(data + size - GFSP_Z_FOOTER_SIZE, size,
	    "f.gfsz", &ioff, &ilen, &err) != 0)
		return 0;
	if (ioff > size || ilen > size - ioff)
		FUZZ_FAIL("footer puts the index at %llu+%llu, past the end "
		    "%zu", (unsigned long long)ioff, (unsigned long long)ilen,
		    size);
	if (gfsp_z_index_parse(data + ioff, (size_t)ilen, ioff, csize,
	    "f.gfsz", &ix, &err) != 0)
		return 0;
	out = malloc(csize);
	if (out == NULL)
		abort();
	for (k = 0; k < ix.n; k++) {
		const struct gfsp_zentry *e = &ix.e[k];

		if (e->z_off > ioff || e->z_len > ioff - e->z_off ||
		    e->raw_len > csize)
			FUZZ_FAIL("index entry %llu is outside the file or "
			    "larger than a chunk", (unsigned long long)k);
		if (codec == NULL || gfsp_z_decompress(codec, k, e,
		    data + e->z_off, out, csize, "f.gfsz", &err) != 0)
			break;
		raw += e->raw_len;
	}
	if (codec != NULL && k == ix.n && raw != ix.raw_size)
		FUZZ_FAIL("chunks decompress to %llu bytes, the footer says "
		    "%llu", (unsigned long long)raw,
		    (unsigned long long)ix.raw_size);
	free(out);
	gfsp_zindex_free(&ix);
	return 0;
}
