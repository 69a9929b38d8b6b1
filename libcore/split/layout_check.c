/*
 * layout_check.c - what stat-layout asks of an open split file: coverage
 * of the logical range by the parts' data, and the full check (sizes,
 * checksums, placement, overlapping runs that disagree).  The reader it
 * walks is layout.c.  No MPI calls: stat-layout runs without MPI_Init.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "layout_impl.h"
#include "view_impl.h"

/* ---------------------------------------------------------- coverage */

struct event {
	uint64_t at;
	int delta;
};

static int
cmp_event(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	/* ends before starts: touching pieces do not overlap */
	return x->delta - y->delta;
}

/* Bytes in pieces covered by two or more of them. */
static int
overlap_bytes(const struct pieces *p, uint64_t *out)
{
	struct event *ev;
	uint64_t total = 0, prev = 0;
	size_t i;
	int depth = 0;

	*out = 0;
	if (p->n < 2)
		return 0;
	ev = malloc(2 * p->n * sizeof(*ev));
	if (ev == NULL)
		return GFSP_ENOMEM;
	for (i = 0; i < p->n; i++) {
		ev[2 * i].at = p->v[i].goff;
		ev[2 * i].delta = 1;
		ev[2 * i + 1].at = p->v[i].goff + p->v[i].len;
		ev[2 * i + 1].delta = -1;
	}
	qsort(ev, 2 * p->n, sizeof(*ev), cmp_event);
	for (i = 0; i < 2 * p->n; i++) {
		if (depth >= 2)
			total += ev[i].at - prev;
		depth += ev[i].delta;
		prev = ev[i].at;
	}
	free(ev);
	*out = total;
	return 0;
}

/*
 * Walk [0, data_end) in windows of logical space; past data_end the file
 * is one trailing hole, counted at once.  A window whose pieces would
 * pass COVER_MAXPIECES is halved and tried again, so memory stays bounded
 * whatever the views' block sizes; a window that was cheap lets the next
 * one grow back, and an empty one doubles it, so a hole of any size (a
 * logical size of 2^62 bytes) takes O(log size) windows.
 */
static uint64_t
next_window(uint64_t win, const struct pieces *p)
{
	if (p->n == 0)
		return win > UINT64_MAX / 2 ? win : 2 * win;
	if (win > COVER_WINDOW)
		return COVER_WINDOW;	/* data again: steps of the usual size */
	if (p->n < p->max / 4 && win < COVER_WINDOW)
		return 2 * win;
	return win;
}

/* After PIECES_FULL: a smaller window (0: it cannot shrink). */
static uint64_t
smaller_window(uint64_t win)
{
	return win > COVER_WINDOW ? COVER_WINDOW : win / 2;
}

int
gfsp_layout_coverage(const struct gfsp_layout *l, struct gfsp_coverage *c,
		    struct gfsp_error *err)
{
	struct pieces p;
	uint64_t size = l->marker.logical_size, a = 0, b, win = COVER_WINDOW;
	uint64_t cur, ov, e, dend = l->data_end;
	size_t i;
	int rc = 0, in_hole = 0;

	memset(c, 0, sizeof(*c));
	c->first_hole = size;
	memset(&p, 0, sizeof(p));
	/* a 1-byte window holds at most one piece per part */
	p.max = GFSP_MAX(COVER_MAXPIECES, (size_t)l->nprocs * 2);
	while (a < dend) {
		b = win > dend - a ? dend : a + win;
		rc = gfsp_layout_collect(l, a, b, &p, err);
		if (rc == PIECES_FULL && win > 1) {
			win = smaller_window(win);
			continue;
		}
		if (rc) {
			if (rc == PIECES_FULL)
				rc = gfsp_error_set(err, GFSP_ENOMEM,
				    "'%s': too many pieces at offset %llu",
				    l->path, (unsigned long long)a);
			goto out;
		}
		if (overlap_bytes(&p, &ov)) {
			rc = gfsp_error_set(err, GFSP_ENOMEM,
			    "out of memory computing overlaps");
			goto out;
		}
		c->overlap_bytes += ov;
		cur = a;
		for (i = 0; i <= p.n; i++) {
			uint64_t start = i < p.n ? p.v[i].goff : b;

			if (start > cur) {
				/* a hole run continues across windows */
				if (!in_hole) {
					c->holes++;
					if (c->first_hole == size)
						c->first_hole = cur;
				}
				c->hole_bytes += start - cur;
				in_hole = 1;
				cur = start;
			}
			if (i == p.n)
				break;
			e = p.v[i].goff + p.v[i].len;
			if (e > cur) {
				c->data_bytes += e - cur;
				in_hole = 0;
				cur = e;
			}
		}
		a = b;
		win = next_window(win, &p);
	}
	if (rc == 0 && dend < size) {		/* the trailing hole */
		if (!in_hole) {
			c->holes++;
			if (c->first_hole == size)
				c->first_hole = dend;
		}
		c->hole_bytes += size - dend;
	}
out:
	free(p.v);
	return rc;
}

/* ------------------------------------------------------------- check */

struct checker {
	struct gfsp_layout *l;
	void (*report)(void *ctx, const char *msg);
	void *ctx;
	int checksum_bad;
	int other_bad;
	struct gfsp_error first_checksum;	/* first problem of each kind */
	struct gfsp_error first_other;
};

static void
problem(struct checker *ck, int code, const struct gfsp_error *e)
{
	if (code == GFSP_ECHECKSUM) {
		ck->checksum_bad++;
		gfsp_error_set(&ck->first_checksum, code, "%s", e->msg);
	} else {
		ck->other_bad++;
		gfsp_error_set(&ck->first_other, GFSP_ECORRUPT, "%s", e->msg);
	}
	if (ck->report != NULL)
		ck->report(ck->ctx, e->msg);
}

/* Size and checksum of part r, read sequentially with buf (CHECK_BUF
 * bytes); *hashed counts the bytes, progress is told of them. */
static int
verify_part(struct gfsp_layout *l, int r, unsigned char *buf,
	    uint64_t *hashed, void (*progress)(void *, uint64_t), void *ctx,
	    struct gfsp_error *err)
{
	struct gfsp_phash *h = NULL;
	struct gfsp_file *f;
	uint64_t off = 0, want = l->part_size[r], sum;
	size_t n, done;
	int rc;

	/* the part may have changed since open: stat it again (a held
	 * layout: the part it holds, whatever is at its path now) */
	rc = l->held ? gfsp_layout_check_held_part(l, r, err) : gfsp_layout_check_part_file(l, r, err);
	if (rc)
		return rc;
	h = gfsp_phash_new(l->marker.seg_size);
	if (h == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM,
		    "%s/part.%d: out of memory", l->path, r);
	rc = gfsp_layout_part(l, r, &f, err);
	while (rc == 0 && off < want) {
		n = (size_t)GFSP_MIN(want - off, (uint64_t)CHECK_BUF);
		rc = gfsp_pread(f, buf, n, off, &done, err);
		if (rc == 0 && done < n)
			rc = gfsp_error_set(err, GFSP_ECORRUPT,
			    "%s/part.%d: short read at offset %llu (part is "
			    "shorter than recorded)", l->path, r,
			    (unsigned long long)(off + done));
		if (rc)
			break;
		gfsp_phash_update(h, buf, n);
		off += n;
		*hashed += n;
		if (progress != NULL)
			progress(ctx, *hashed);
	}
	if (rc == 0) {
		sum = gfsp_phash_final(h);
		if (sum != l->part_hash[r])
			rc = gfsp_error_set(err, GFSP_ECHECKSUM,
			    "%s/part.%d: checksum mismatch (recorded "
			    "0x%016llx, computed 0x%016llx)", l->path, r,
			    (unsigned long long)l->part_hash[r],
			    (unsigned long long)sum);
	}
	gfsp_phash_free(h);
	return rc;
}

int
gfsp_layout_verify_part(struct gfsp_layout *l, int r, struct gfsp_error *err)
{
	unsigned char *buf = malloc(CHECK_BUF);
	uint64_t hashed = 0;
	int rc;

	if (buf == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM,
		    "out of memory for the check buffer");
	rc = verify_part(l, r, buf, &hashed, NULL, NULL, err);
	free(buf);
	return rc;
}

static void
check_part(struct checker *ck, int r, unsigned char *buf,
	   uint64_t *hashed, void (*progress)(void *, uint64_t))
{
	struct gfsp_error e;
	int rc;

	gfsp_error_clear(&e);
	rc = verify_part(ck->l, r, buf, hashed, progress, ck->ctx, &e);
	if (rc)
		problem(ck, rc, &e);
}

/*
 * Runs of different ranks in one epoch over the same bytes are writes MPI
 * leaves undefined (the lowest rank's are read).  Holding the same bytes
 * (ghost cells written by both) they are harmless; holding different ones
 * they are a conflict the program did not order, or a view recorded
 * wrong: each such range is a problem.  At most CONFLICTS_SHOWN are told.
 */
#define CONFLICTS_SHOWN	10

struct conflicts {
	struct checker *ck;
	unsigned char *a, *b;	/* CHECK_BUF / 2 each */
	uint64_t ranges;	/* conflicting ranges found */
	uint64_t bytes;		/* bytes in them */
};

/* Do x and y hold the same bytes in [s, e)?  1 yes, 0 no, <0 error. */
static int
same_bytes(struct gfsp_layout *l, const struct piece *x,
	   const struct piece *y, uint64_t s, uint64_t e, unsigned char *a,
	   unsigned char *b, struct gfsp_error *err)
{
	struct gfsp_file *fx, *fy;
	uint64_t g, n;
	size_t dx = 0, dy = 0;
	int rc;

	for (g = s; g < e; g += n) {
		n = GFSP_MIN(e - g, (uint64_t)CHECK_BUF / 2);
		rc = gfsp_layout_part(l, x->part, &fx, err);
		if (rc == 0)
			rc = gfsp_pread(fx, a, n, x->loff + (g - x->goff), &dx,
			    err);
		if (rc == 0)
			rc = gfsp_layout_part(l, y->part, &fy, err);
		if (rc == 0)
			rc = gfsp_pread(fy, b, n, y->loff + (g - y->goff), &dy,
			    err);
		if (rc)
			return -rc;
		if (dx != n || dy != n || memcmp(a, b, n) != 0)
			return 0;
	}
	return 1;
}

static int
conflicts_in(struct conflicts *cf, const struct pieces *p,
	     struct gfsp_error *err)
{
	struct gfsp_layout *l = cf->ck->l;
	struct gfsp_error e;
	size_t *act, nact = 0, i, k, m;
	uint64_t s, end;
	int rc = 0;

	if (p->n < 2)
		return 0;
	act = malloc(p->n * sizeof(*act));
	if (act == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	for (i = 0; i < p->n && rc >= 0; i++) {
		const struct piece *x = &p->v[i];

		for (k = m = 0; k < nact; k++)	/* the ones still open */
			if (p->v[act[k]].goff + p->v[act[k]].len > x->goff)
				act[m++] = act[k];
		nact = m;
		for (k = 0; k < nact && rc >= 0; k++) {
			const struct piece *y = &p->v[act[k]];

			if (y->part == x->part || y->ep != x->ep)
				continue;
			s = x->goff;
			end = GFSP_MIN(x->goff + x->len, y->goff + y->len);
			rc = same_bytes(l, x, y, s, end, cf->a, cf->b, err);
			if (rc != 0)
				continue;
			cf->ranges++;
			cf->bytes += end - s;
			if (cf->ranges > CONFLICTS_SHOWN)
				continue;
			gfsp_error_clear(&e);
			gfsp_error_set(&e, GFSP_ECORRUPT, "'%s': ranks %d and "
			    "%d wrote different bytes to [%llu, %llu) in one "
			    "epoch (MPI leaves such writes undefined; rank "
			    "%d's are read): the program did not order them, "
			    "or a file view was recorded wrong", l->path,
			    GFSP_MIN(x->part, y->part),
			    GFSP_MAX(x->part, y->part), (unsigned long long)s,
			    (unsigned long long)end,
			    gfsp_piece_wins(x, y) ? x->part : y->part);
			problem(cf->ck, GFSP_ECORRUPT, &e);
		}
		act[nact++] = i;
	}
	free(act);
	return rc < 0 ? -rc : 0;
}

/* Windows of logical space as in gfsp_layout_coverage. */
static int
check_conflicts(struct checker *ck, struct gfsp_error *err)
{
	struct conflicts cf = { ck, NULL, NULL, 0, 0 };
	const struct gfsp_layout *l = ck->l;
	struct pieces p;
	struct gfsp_error e;
	uint64_t size = l->data_end, a = 0, b, win = COVER_WINDOW;
	int rc = 0;

	memset(&p, 0, sizeof(p));
	p.max = GFSP_MAX(COVER_MAXPIECES, (size_t)l->nprocs * 2);
	cf.a = malloc(CHECK_BUF / 2);
	cf.b = malloc(CHECK_BUF / 2);
	if (cf.a == NULL || cf.b == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	while (rc == 0 && a < size) {	/* nothing to compare past data_end */
		b = win > size - a ? size : a + win;
		rc = gfsp_layout_collect(l, a, b, &p, err);
		if (rc == PIECES_FULL && win > 1) {
			win = smaller_window(win);
			rc = 0;
			continue;
		}
		if (rc == PIECES_FULL)
			rc = gfsp_error_set(err, GFSP_ENOMEM, "'%s': too many "
			    "pieces at offset %llu", l->path,
			    (unsigned long long)a);
		if (rc == 0)
			rc = conflicts_in(&cf, &p, err);
		a = b;
		win = next_window(win, &p);
	}
	if (rc == 0 && cf.ranges > CONFLICTS_SHOWN) {
		gfsp_error_clear(&e);
		gfsp_error_set(&e, GFSP_ECORRUPT, "'%s': %llu ranges (%llu "
		    "bytes) written differently by two ranks in one epoch in "
		    "all", l->path, (unsigned long long)cf.ranges,
		    (unsigned long long)cf.bytes);
		problem(ck, GFSP_ECORRUPT, &e);
	}
	free(cf.a);
	free(cf.b);
	free(p.v);
	return rc;
}

int
gfsp_layout_check(struct gfsp_layout *l,
		 void (*report)(void *ctx, const char *msg), void *ctx,
		 void (*progress)(void *ctx, uint64_t bytes),
		 struct gfsp_error *err)
{
	struct checker ck;
	struct gfsp_coverage cov;
	struct gfsp_error e;
	unsigned char *buf;
	uint64_t hashed = 0;
	int r, rc;

	memset(&ck, 0, sizeof(ck));
	ck.l = l;
	ck.report = report;
	ck.ctx = ctx;
	buf = malloc(CHECK_BUF);
	if (buf == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM,
		    "out of memory for the check buffer");
	for (r = 0; r < l->nprocs; r++) {
		gfsp_error_clear(&e);
		if (gfsp_layout_part_fits(l, r, &e))
			problem(&ck, GFSP_ECORRUPT, &e);
		check_part(&ck, r, buf, &hashed, progress);
	}
	free(buf);
	gfsp_error_clear(&e);
	rc = gfsp_layout_coverage(l, &cov, &e);
	if (rc) {
		problem(&ck, rc, &e);
	} else if (cov.overlap_bytes > 0 && !l->has_runs) {
		gfsp_error_set(&e, GFSP_ECORRUPT,
		    "'%s': views of different ranks overlap in %llu bytes",
		    l->path, (unsigned long long)cov.overlap_bytes);
		problem(&ck, GFSP_ECORRUPT, &e);
	} else if (cov.overlap_bytes > 0) {
		gfsp_error_clear(&e);
		if (check_conflicts(&ck, &e))
			problem(&ck, e.code, &e);
	}
	/* the message of the first problem of the kind returned */
	if (ck.checksum_bad)
		return gfsp_error_set(err, GFSP_ECHECKSUM, "%s",
		    ck.first_checksum.msg);
	if (ck.other_bad)
		return gfsp_error_set(err, GFSP_ECORRUPT, "%s",
		    ck.first_other.msg);
	return 0;
}
