/*
 * fuzz_locfile.c - location files (loc.<k>, man/gfsplit.5) and the records
 * in them: gfsp_locfile_decode on the input as it is and with the right
 * XXH3 trailer put in its last 8 bytes (so mutations reach the records),
 * and gfsp_locrec_decode on the input as one record alone (what ranks
 * exchange while writing).
 *
 * What decodes must round-trip: encoding it and decoding that gives a
 * file that encodes to the same bytes again (the first decode may
 * normalise views: blocks are sorted and merged), and every record alone
 * encodes and decodes to the same bytes as well.
 */
#include "fuzz.h"
#include "core.h"
#include "splitfile.h"

static void
rec_roundtrip(const struct gfsp_locrec *rec, uint32_t nprocs)
{
	struct gfsp_locrec again;
	struct gfsp_error err;
	unsigned char *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;

	gfsp_error_clear(&err);
	if (gfsp_locrec_encode(rec, &a, &na, &err) != 0)
		FUZZ_FAIL("a decoded record does not encode: %s", err.msg);
	if (gfsp_locrec_decode(a, na, nprocs, "rec", &again, &err) != 0)
		FUZZ_FAIL("an encoded record does not decode: %s", err.msg);
	if (gfsp_locrec_encode(&again, &b, &nb, &err) != 0)
		FUZZ_FAIL("a record does not encode again: %s", err.msg);
	if (na != nb || memcmp(a, b, na) != 0)
		FUZZ_FAIL("a record encodes to other bytes after a round trip");
	gfsp_locrec_free(&again);
	free(a);
	free(b);
}

static void
file_roundtrip(const struct gfsp_locfile *lf)
{
	struct gfsp_locfile again;
	struct gfsp_error err;
	unsigned char *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	uint32_t i;

	gfsp_error_clear(&err);
	if (gfsp_locfile_encode(lf, &a, &na, &err) != 0)
		FUZZ_FAIL("a decoded location file does not encode: %s",
		    err.msg);
	if (gfsp_locfile_decode(a, na, "again", &again, &err) != 0)
		FUZZ_FAIL("an encoded location file does not decode: %s",
		    err.msg);
	if (gfsp_locfile_encode(&again, &b, &nb, &err) != 0)
		FUZZ_FAIL("a location file does not encode again: %s", err.msg);
	if (na != nb || memcmp(a, b, na) != 0)
		FUZZ_FAIL("a location file encodes to other bytes after a "
		    "round trip");
	for (i = 0; i < lf->nrecs; i++)
		rec_roundtrip(&lf->recs[i], lf->nprocs);
	gfsp_locfile_free(&again);
	free(a);
	free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gfsp_locfile lf;
	struct gfsp_locrec rec;
	struct gfsp_error err;
	unsigned char *fixed;

	gfsp_error_clear(&err);
	if (gfsp_locfile_decode(data, size, "loc.0", &lf, &err) == 0) {
		file_roundtrip(&lf);
		gfsp_locfile_free(&lf);
	}
	gfsp_error_clear(&err);
	if (gfsp_locrec_decode(data, size, 1u << 24, "rec", &rec, &err) == 0) {
		rec_roundtrip(&rec, 1u << 24);
		gfsp_locrec_free(&rec);
	}
	if (size < 8)
		return 0;
	fixed = malloc(size);
	if (fixed == NULL)
		return 0;
	memcpy(fixed, data, size);
	gfsp_put_le64(fixed + size - 8, gfsp_hash64(fixed, size - 8));
	gfsp_error_clear(&err);
	if (gfsp_locfile_decode(fixed, size, "loc.0", &lf, &err) == 0) {
		file_roundtrip(&lf);
		gfsp_locfile_free(&lf);
	}
	free(fixed);
	return 0;
}
