/*
 * fuzz_journal.c - the state directory of a transfer (journal.c): the
 * index and the journals, JSON lines of "done" and "chunk" records, read
 * by gfsp_state_open.  The input is the index up to its first form feed
 * (\f) and a journal after it.
 *
 * Whatever loads must compact: gfsp_state_compact writes what it loaded
 * as a new index, and loading and compacting that again writes the same
 * bytes (the index is a fixed point).
 */
#include "fuzz.h"
#include "core.h"
#include "stage.h"

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0;

	*len = 0;
	if (f == NULL)
		FUZZ_FAIL("compaction left no index: %s", path);
	for (;;) {
		if (*len == cap) {
			cap = cap ? 2 * cap : 4096;
			buf = realloc(buf, cap);
			if (buf == NULL)
				abort();
		}
		size_t n = fread(buf + *len, 1, cap - *len, f);
		if (n == 0)
			break;
		*len += n;
	}
	fclose(f);
	return buf;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[PATH_MAX], index[PATH_MAX + 16], journal[PATH_MAX + 16];
	const uint8_t *ff = memchr(data, '\f', size);
	size_t ilen = ff != NULL ? (size_t)(ff - data) : size, n1, n2, first;
	struct gfsp_state *s = NULL;
	struct gfsp_error err;
	const char *tmp;
	uint64_t key;
	char *a, *b;
	size_t i, n;

	fuzz_path(dir, "state");
	mkdir(dir, 0700);
	snprintf(index, sizeof(index), "%s/index", dir);
	snprintf(journal, sizeof(journal), "%s/journal.7.0", dir);
	fuzz_write(index, data, ilen);
	if (ff != NULL)
		fuzz_write(journal, ff + 1, size - ilen - 1);
	else
		unlink(journal);

	gfsp_error_clear(&err);
	if (gfsp_state_open(dir, 0, 0, &s, &err) != 0)
		return 0;
	/* the lookups a transfer makes */
	(void)gfsp_state_done(s, "a");
	n = gfsp_state_chunks(s, "a", &first);
	for (i = 0; i < n; i++)
		(void)gfsp_state_chunk(s, first + i, &tmp, &key);
	if (gfsp_state_compact(s, &err) != 0)
		FUZZ_FAIL("cannot compact what loaded: %s", err.msg);
	a = slurp(index, &n1);
	if (gfsp_state_reload(s, &err) != 0 ||
	    gfsp_state_compact(s, &err) != 0)
		FUZZ_FAIL("cannot load and compact a compacted index: %s",
		    err.msg);
	b = slurp(index, &n2);
	if (n1 != n2 || memcmp(a, b, n1) != 0)
		FUZZ_FAIL("compacting a compacted index changes it");
	free(a);
	free(b);
	gfsp_state_close(s);
	return 0;
}
