/*
 * splitfile_base.c - what a run-mode writer reads (splitfile.h): the old
 * file it starts from (gfsp_split_set_base, and its bytes no rank
 * rewrote copied into the parts before the commit) under reads of the
 * file being written (gfsp_split_pread, gfsp_split_refresh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "core.h"
#include "layout_impl.h"
#include "splitfile.h"
#include "splitfile_impl.h"
#include "view_impl.h"

void
gfsp_split_drop_base(struct gfsp_split_writer *w)
{
	struct gfsp_error e;

	gfsp_layout_close(w->base_l);
	if (w->base_f != NULL)
		gfsp_close(w->base_f, &e);	/* read-only */
	w->base_l = NULL;
	w->base_f = NULL;
	w->base_size = 0;
}

int
gfsp_split_set_base(struct gfsp_split_writer *w, const char *path,
		    uint64_t *size, struct gfsp_error *err)
{
	struct gfsp_stat st;
	int rc = gfsp_split_run_mode(w, err);

	*size = 0;
	if (rc)
		return rc;
	gfsp_split_drop_base(w);
	rc = gfsp_stat(path, &st, err);
	if (rc == 0 && S_ISDIR(st.mode)) {
		rc = gfsp_layout_open(path, &w->base_l, err);
		if (rc == 0)
			w->base_size = gfsp_layout_size(w->base_l);
	} else if (rc == 0) {
		/* not through a link (DST's parent is held, and the name in
		 * it not followed); the size and mode of what is read */
		rc = gfsp_open(path, GFSP_O_RDONLY | GFSP_O_NOFOLLOW, 0,
			       &w->base_f, err);
		if (rc == 0)
			rc = gfsp_fstat(w->base_f, &st, err);
		if (rc == 0)
			w->base_size = st.size;
		/* its bytes go into the parts: no more readable than it */
		if (rc == 0 && (w->fmode & ~st.mode & 0666) != 0) {
			w->fmode &= st.mode & 0666;
			if (gfsp_file_fd(w->part) >= 0 &&
			    fchmod(gfsp_file_fd(w->part), w->fmode) != 0)
				rc = gfsp_error_errno(err, errno, "cannot change "
				    "permissions of '%s'", w->part_path);
		}
	}
	*size = w->base_size;
	gfsp_split_stale(w);
	return rc;
}

/* Global [goff, goff + len) of the old file, zeros past what stays of it. */
static int
base_read(void *ctx, void *dst, uint64_t goff, uint64_t len,
	  struct gfsp_error *err)
{
	struct gfsp_split_writer *w = ctx;
	uint64_t n = 0, want;
	size_t done = 0;
	int rc = 0;

	want = goff < w->base_size ? GFSP_MIN(len, w->base_size - goff) : 0;
	if (want > 0 && w->base_l != NULL) {
		rc = gfsp_layout_pread(w->base_l, dst, want, goff, &n, err);
	} else if (want > 0 && w->base_f != NULL) {
		rc = gfsp_pread(w->base_f, dst, (size_t)want, goff, &done, err);
		n = done;
	}
	if (rc == 0)
		memset((unsigned char *)dst + n, 0, (size_t)(len - n));
	return rc;
}

/*
 * The layout reads see: this rank's record as it is now, the others' as
 * of the last refresh (none before it), over the old file.
 */
static int
build_snap(struct gfsp_split_writer *w, uint64_t size, struct gfsp_error *err)
{
	struct gfsp_locrec *recs;
	int r, rc = 0;

	if (w->snap != NULL) {
		w->snap->marker.logical_size = size;
		return 0;
	}
	if (w->dirty) {
		rc = gfsp_flush(w->part, err);
		if (rc)
			return rc;
		w->dirty = 0;
	}
	recs = calloc(w->nprocs, sizeof(*recs));
	if (recs == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	for (r = 0; rc == 0 && r < w->nprocs; r++) {
		if (r == w->rank)
			rc = gfsp_split_my_record(w, 0, &recs[r], err);
		else if (w->seen.buf != NULL)
			rc = gfsp_locrec_decode(w->seen.buf + w->seen.off[r],
			    w->seen.len[r], w->nprocs, w->tmp, &recs[r], err);
		else {	/* nothing seen of rank r yet */
			recs[r].rank = (uint32_t)r;
			gfsp_view_empty(&recs[r].view, 0, 0);
		}
	}
	if (rc == 0)
		rc = gfsp_layout_from_records(w->tmp, w->nprocs, recs, size,
		    &w->snap, err);
	for (r = 0; r < w->nprocs; r++)
		gfsp_locrec_free(&recs[r]);
	free(recs);
	return rc;
}

int
gfsp_split_pread(struct gfsp_split_writer *w, void *buf, uint64_t len,
		 uint64_t goff, uint64_t size, uint64_t *got,
		 struct gfsp_error *err)
{
	int rc = gfsp_split_run_mode(w, err);

	*got = 0;
	if (rc || goff >= size || len == 0)
		return rc;
	rc = build_snap(w, size, err);
	if (rc == 0)
		rc = gfsp_layout_pread_holes(w->snap, buf, len, goff, got,
		    base_read, w, err);
	return rc;
}

int
gfsp_split_refresh(struct gfsp_split_writer *w, struct gfsp_error *err)
{
	struct recs x;
	int rc = gfsp_split_run_mode(w, err);

	/* the others are about to read this part */
	if (rc == 0 && w->dirty && (rc = gfsp_flush(w->part, err)) == 0)
		w->dirty = 0;
	rc = gfsp_agree(w->comm, rc, err);
	if (rc == 0)
		rc = gfsp_split_exchange_records(w, 0, &x, err);
	if (rc)
		return rc;
	gfsp_recs_free(&w->seen);
	w->seen = x;
	gfsp_layout_close(w->snap);
	w->snap = NULL;
	return 0;
}

/*
 * Collective, before the commit: the old file's bytes that no rank
 * rewrote go into the parts, so that the new file holds them as MPI would
 * (it never drops a file's data on open).  Rank r copies those in its
 * r-th of the old size, as dense writes of its own: they overlap no run,
 * so no priority decides anything.
 */
#define FILL_WINDOW	((uint64_t)64 << 20)

int
gfsp_split_fill_from_base(struct gfsp_split_writer *w, struct gfsp_error *err)
{
	struct gfsp_locrec *recs = NULL;
	struct gfsp_layout *l = NULL;
	struct gfsp_extent *ext = NULL;
	unsigned char *buf = NULL;
	struct recs x;
	uint64_t a, b, g, n, k, piece;
	size_t next = 0, i;
	int r, rc;

	rc = gfsp_split_exchange_records(w, 0, &x, err);
	if (rc)
		return rc;
	recs = calloc(w->nprocs, sizeof(*recs));
	buf = malloc(FILL_WINDOW);
	if (recs == NULL || buf == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	for (r = 0; rc == 0 && r < w->nprocs; r++)
		rc = gfsp_locrec_decode(x.buf + x.off[r], x.len[r], w->nprocs,
		    w->tmp, &recs[r], err);
	if (rc == 0)
		rc = gfsp_layout_from_records(w->tmp, w->nprocs, recs,
		    w->base_size, &l, err);
	a = (uint64_t)((unsigned __int128)w->base_size * w->rank / w->nprocs);
	b = (uint64_t)((unsigned __int128)w->base_size * (w->rank + 1) /
	    w->nprocs);
	for (g = a; rc == 0 && g < b; g += n) {
		n = GFSP_MIN(b - g, FILL_WINDOW);
		rc = gfsp_layout_map(l, g, n, &ext, &next, err);
		for (i = 0; rc == 0 && i < next; i++) {
			if (ext[i].part >= 0)
				continue;
			for (k = 0; rc == 0 && k < ext[i].len; k += piece) {
				piece = GFSP_MIN(ext[i].len - k, FILL_WINDOW);
				rc = base_read(w, buf, ext[i].goff + k, piece,
				    err);
				if (rc == 0)
					rc = gfsp_split_write_at(w,
					    ext[i].goff + k, buf, piece, err);
			}
		}
		free(ext);
		ext = NULL;
	}
	gfsp_layout_close(l);
	for (r = 0; recs != NULL && r < w->nprocs; r++)
		gfsp_locrec_free(&recs[r]);
	free(recs);
	free(buf);
	gfsp_recs_free(&x);
	return gfsp_agree(w->comm, rc, err);
}
