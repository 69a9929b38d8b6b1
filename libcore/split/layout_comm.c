/*
 * layout_comm.c - one open of a split file for all the ranks of a job
 * (gfsp_layout_open_comm, layout_impl.h).
 *
 * An open by itself reads the marker and every location file and stats
 * every part: for a file of R writer ranks, R + 2K metadata calls.  M
 * ranks opening it each alone make M times that, which for a job reading
 * back its own output (M = R) grows as R^2 on the metadata server.  Here
 * rank 0 alone opens it from the directory, keeping the bytes of the
 * files it read; they are broadcast, and the other ranks load the same
 * layout from them, without a call to the file system:
 *
 *   rank 0:   marker, loc.0 .. loc.K-1, part.0 .. part.R-1   (the files)
 *               | outcome (code, message, bytes' length): MPI_Bcast
 *               | the bytes (gfsplit.meta and loc.*):       MPI_Bcast
 *   rank i:   decode the same bytes, the same checks but the parts'
 *
 * Every rank returns rank 0's outcome with its message, as if each had
 * failed the same way by itself.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "layout_impl.h"

#define BCAST_CHUNK	((size_t)1 << 30)	/* bytes a call, < INT_MAX */

int
gfsp_layout_open_comm(MPI_Comm comm, const char *path,
		      struct gfsp_layout **out, struct gfsp_error *err)
{
	struct gfsp_meta_bytes m = { 0 };
	struct {
		struct gfsp_error e;
		uint64_t len;
		int rc;
	} h;
	size_t off, n;
	int rank, rc = 0;

	*out = NULL;
	MPI_Comm_rank(comm, &rank);
	memset(&h, 0, sizeof(h));
	if (rank == 0) {
		h.rc = gfsp_layout_load(path, NULL, &m, out, &h.e);
		h.len = m.len;
	}
	rc = gfsp_mpi_check(gfsp_bcast(&h, (int)sizeof(h), MPI_BYTE, 0, comm),
	    "cannot share the metadata of a split file", err);
	if (rc == 0 && h.rc != 0) {
		if (err != NULL)
			*err = h.e;
		rc = h.rc;
	}
	if (rc == 0 && rank != 0 && h.len > 0 &&
	    (m.buf = malloc((size_t)h.len)) == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "'%s': out of memory for "
		    "%llu bytes of metadata", path, (unsigned long long)h.len);
	if (h.rc == 0)		/* else every rank returns now, unanimous */
		rc = gfsp_agree(comm, rc, err);
	for (off = 0; rc == 0 && off < h.len; off += n) {
		n = GFSP_MIN((size_t)h.len - off, BCAST_CHUNK);
		rc = gfsp_mpi_check(gfsp_bcast(m.buf + off, (int)n, MPI_BYTE,
		    0, comm), "cannot share the metadata of a split file", err);
	}
	m.len = (size_t)h.len;
	if (rc == 0 && rank != 0)
		rc = gfsp_layout_load(path, &m, NULL, out, err);
	if (h.rc == 0)
		rc = gfsp_agree(comm, rc, err);
	if (rc != 0 && *out != NULL) {
		gfsp_layout_close(*out);
		*out = NULL;
	}
	gfsp_meta_bytes_free(&m);
	return rc;
}
