/*
 * fuzz_marker.c - the split-file marker (gfsplit.meta, man/gfsplit.5):
 * gfsp_marker_decode on the input as it is, and again with its last 8
 * bytes replaced by the right XXH3 trailer so that mutations get past the
 * checksum to the fields.  A marker that decodes must encode (as version
 * 3) and decode back to the same fields; a version-3 one to its own bytes.
 */
#include "fuzz.h"
#include "core.h"
#include "splitfile.h"

static void
roundtrip(const struct gfsp_marker *m, const uint8_t *in, size_t len)
{
	struct gfsp_marker again;
	struct gfsp_error err;
	unsigned char *buf = NULL;
	size_t n = 0;

	gfsp_error_clear(&err);
	if (gfsp_marker_encode(m, &buf, &n, &err) != 0)
		FUZZ_FAIL("a decoded marker does not encode: %s", err.msg);
	if (gfsp_marker_decode(buf, n, "again", &again, &err) != 0)
		FUZZ_FAIL("an encoded marker does not decode: %s", err.msg);
	if (again.nprocs != m->nprocs || again.nnodes != m->nnodes ||
	    again.logical_size != m->logical_size ||
	    again.seg_size != m->seg_size || again.ctime != m->ctime ||
	    strcmp(again.layout, m->layout) != 0 ||
	    again.has_attrs != m->has_attrs ||
	    (m->has_attrs && (again.attrs.mode != m->attrs.mode ||
	     again.attrs.uid != m->attrs.uid || again.attrs.gid != m->attrs.gid ||
	     again.attrs.atime != m->attrs.atime ||
	     again.attrs.atime_ns != m->attrs.atime_ns ||
	     again.attrs.mtime != m->attrs.mtime ||
	     again.attrs.mtime_ns != m->attrs.mtime_ns)))
		FUZZ_FAIL("marker fields change in an encode-decode round trip");
	/* what a writer writes comes back byte for byte: version 3, and 4
	 * with attributes (4 without them is written as 3) */
	if ((m->version == GFSP_FORMAT_WRITE ||
	     (m->version == 4 && m->has_attrs)) &&
	    (n != len || memcmp(buf, in, n) != 0))
		FUZZ_FAIL("a version %u marker encodes to other bytes",
		    m->version);
	free(buf);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gfsp_marker m;
	struct gfsp_error err;
	unsigned char *fixed;

	gfsp_error_clear(&err);
	if (gfsp_marker_decode(data, size, "gfsplit.meta", &m, &err) == 0)
		roundtrip(&m, data, size);
	if (size < 8)
		return 0;
	fixed = malloc(size);
	if (fixed == NULL)
		return 0;
	memcpy(fixed, data, size);
	gfsp_put_le64(fixed + size - 8, gfsp_hash64(fixed, size - 8));
	gfsp_error_clear(&err);
	if (gfsp_marker_decode(fixed, size, "gfsplit.meta", &m, &err) == 0)
		roundtrip(&m, fixed, size);
	free(fixed);
	return 0;
}
