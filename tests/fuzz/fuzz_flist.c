/*
 * fuzz_flist.c - the packed file list of a transfer (walk.c): what rank 0
 * broadcasts to the others after walking the sources, read back by
 * gfsp_flist_unpack.  What unpacks must pack, unpack and pack again to
 * the same bytes.  (Its integers are in the host's byte order: the packed
 * list never leaves one job.)
 */
#include "fuzz.h"
#include "core.h"
#include "stage.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gfsp_flist l, again;
	struct gfsp_error err;
	unsigned char *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;

	gfsp_error_clear(&err);
	if (gfsp_flist_unpack(&l, data, size, &err) == 0) {
		if (gfsp_flist_pack(&l, &a, &na, &err) != 0 ||
		    gfsp_flist_unpack(&again, a, na, &err) != 0 ||
		    gfsp_flist_pack(&again, &b, &nb, &err) != 0)
			FUZZ_FAIL("an unpacked file list does not pack and "
			    "unpack again: %s", err.msg);
		if (na != nb || memcmp(a, b, na) != 0)
			FUZZ_FAIL("a file list packs to other bytes after a "
			    "round trip");
		gfsp_flist_free(&again);
		free(a);
		free(b);
	}
	/* on failure too: the entries unpacked so far are the caller's */
	gfsp_flist_free(&l);
	return 0;
}
