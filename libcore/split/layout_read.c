/*
 * layout_read.c - reading an open split file: gfsp_layout_pread over the
 * map (layout_map.c), the verification of a part before its first read,
 * the read-through check of a held layout's parts, and SEEK_DATA /
 * SEEK_HOLE over the logical file.  No MPI calls.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "layout_impl.h"
#include "view_impl.h"

/* a part's read-through check (gfsp_layout_set_readcheck) */
struct gfsp_readcheck {
	enum { RC_FOLLOW, RC_GOOD, RC_BAD, RC_GIVEN_UP } state;
	uint64_t at;			/* bytes [0, at) of the part hashed */
	struct gfsp_phash *h;		/* RC_FOLLOW with at > 0 */
	uint64_t sum;			/* RC_BAD: what the bytes hashed to */
};

/* ------------------------------------------- the read-through check */

#define READCHECK_GAP	((uint64_t)8 << 20)	/* see layout_impl.h */
#define READCHECK_BUF	((size_t)1 << 20)

/* A part bad stays counted in l->following: its reads must go on
 * passing the check, which fails them. */
static void
readcheck_settle(struct gfsp_layout *l, struct gfsp_readcheck *c, int state)
{
	c->state = state;
	gfsp_phash_free(c->h);
	c->h = NULL;
	if (state != RC_BAD)
		__atomic_sub_fetch(&l->following, 1, __ATOMIC_RELAXED);
}

int
gfsp_layout_set_readcheck(struct gfsp_layout *l, struct gfsp_error *err)
{
	int r;

	if (!l->held)
		return gfsp_error_set(err, GFSP_EINVAL, "'%s': a read-through "
		    "check needs a held layout", l->path);
	l->rcheck = calloc(l->nprocs, sizeof(*l->rcheck));
	if (l->rcheck == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	l->following = l->nprocs;
	/* an empty part: no read reaches it, it is settled now */
	for (r = 0; r < l->nprocs; r++)
		if (l->part_size[r] == 0) {
			l->rcheck[r].sum = gfsp_phash_root(NULL, 0);
			readcheck_settle(l, &l->rcheck[r], l->rcheck[r].sum ==
			    l->part_hash[r] ? RC_GOOD : RC_BAD);
		}
	return 0;
}

void
gfsp_layout_readcheck_free(struct gfsp_layout *l)
{
	int r;

	for (r = 0; l->rcheck != NULL && r < l->nprocs; r++)
		gfsp_phash_free(l->rcheck[r].h);
	free(l->rcheck);
	l->rcheck = NULL;
}

int
gfsp_layout_readcheck_pending(const struct gfsp_layout *l)
{
	return l->rcheck == NULL ? 0 :
	    __atomic_load_n(&l->following, __ATOMIC_RELAXED);
}

static int
readcheck_mismatch(struct gfsp_layout *l, int r, uint64_t sum,
		   struct gfsp_error *err)
{
	return gfsp_error_set(err, GFSP_ECHECKSUM, "%s/part.%d: checksum "
	    "mismatch (recorded 0x%016llx, computed 0x%016llx as the part "
	    "was read through)", l->path, r,
	    (unsigned long long)l->part_hash[r], (unsigned long long)sum);
}

/* Hash buf, len bytes of part r that start at byte `at` of it. */
static int
readcheck_hash(struct gfsp_layout *l, int r, struct gfsp_readcheck *c,
	       const void *buf, uint64_t len, struct gfsp_error *err)
{
	if (c->h == NULL && (c->h = gfsp_phash_new(l->marker.seg_size)) ==
	    NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	gfsp_phash_update(c->h, buf, (size_t)len);
	c->at += len;
	if (c->at < l->part_size[r])
		return 0;
	c->sum = gfsp_phash_final(c->h);
	if (c->sum == l->part_hash[r]) {
		readcheck_settle(l, c, RC_GOOD);
		return 0;
	}
	readcheck_settle(l, c, RC_BAD);
	return readcheck_mismatch(l, r, c->sum, err);
}

/* Bytes [c->at, to) of part r read and hashed: a gap before a read. */
static int
readcheck_gap(struct gfsp_layout *l, int r, struct gfsp_readcheck *c,
	      uint64_t to, struct gfsp_error *err)
{
	struct gfsp_file *f;
	unsigned char *buf = malloc(READCHECK_BUF);
	size_t n, done;
	int rc;

	if (buf == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	rc = gfsp_layout_part(l, r, &f, err);
	while (rc == 0 && c->state == RC_FOLLOW && c->at < to) {
		n = (size_t)GFSP_MIN(to - c->at, (uint64_t)READCHECK_BUF);
		rc = gfsp_pread(f, buf, n, c->at, &done, err);
		if (rc == 0 && done < n)
			rc = gfsp_error_set(err, GFSP_ECORRUPT, "%s/part.%d: "
			    "short read at offset %llu (part is shorter than "
			    "recorded)", l->path, r,
			    (unsigned long long)(c->at + done));
		if (rc == 0)
			rc = readcheck_hash(l, r, c, buf, n, err);
	}
	free(buf);
	return rc;
}

/* Bytes [off, off + len) of part r, just read into buf, pass the check. */
static int
readcheck(struct gfsp_layout *l, int r, uint64_t off, const void *buf,
	  uint64_t len, struct gfsp_error *err)
{
	struct gfsp_readcheck *c = &l->rcheck[r];
	int rc = 0;

	pthread_mutex_lock(&l->vlock);
	if (c->state == RC_BAD)
		rc = readcheck_mismatch(l, r, c->sum, err);
	else if (c->state != RC_FOLLOW || off + len <= c->at)
		rc = 0;
	else if (off > c->at && off - c->at > READCHECK_GAP)
		readcheck_settle(l, c, RC_GIVEN_UP);
	else if (off > c->at)
		rc = readcheck_gap(l, r, c, off, err);
	if (rc == 0 && c->state == RC_FOLLOW && off + len > c->at)
		rc = readcheck_hash(l, r, c, (const unsigned char *)buf +
		    (c->at - off), off + len - c->at, err);
	pthread_mutex_unlock(&l->vlock);
	return rc;
}

int
gfsp_layout_pread(struct gfsp_layout *l, void *buf, uint64_t len,
		 uint64_t goff, uint64_t *got, struct gfsp_error *err)
{
	return gfsp_layout_pread_holes(l, buf, len, goff, got, NULL, NULL,
	    err);
}

int
gfsp_layout_pread_holes(struct gfsp_layout *l, void *buf, uint64_t len,
			uint64_t goff, uint64_t *got,
			int (*hole)(void *ctx, void *dst, uint64_t goff,
				    uint64_t len, struct gfsp_error *err),
			void *ctx, struct gfsp_error *err)
{
	struct gfsp_extent *ext = NULL;
	struct gfsp_file *f;
	unsigned char *p = buf;
	size_t n = 0, i, done;
	uint64_t size = l->marker.logical_size;
	int rc;

	*got = 0;
	if (goff >= size || len == 0)
		return 0;
	if (len > size - goff)
		len = size - goff;
	rc = gfsp_layout_map(l, goff, len, &ext, &n, err);
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		struct gfsp_extent *e = &ext[i];
		unsigned char *dst = p + (e->goff - goff);

		if (e->part < 0) {
			if (hole == NULL)
				memset(dst, 0, (size_t)e->len);
			else if ((rc = hole(ctx, dst, e->goff, e->len, err)))
				goto out;
			continue;
		}
		if (l->verify && !__atomic_load_n(&l->verified[e->part],
		    __ATOMIC_ACQUIRE)) {
			if (l->held)
				pthread_mutex_lock(&l->vlock);
			rc = l->verified[e->part] ? 0 :
			    gfsp_layout_verify_part(l, e->part, err);
			if (rc == 0)
				__atomic_store_n(&l->verified[e->part], 1,
				    __ATOMIC_RELEASE);
			if (l->held)
				pthread_mutex_unlock(&l->vlock);
			if (rc)
				goto out;
		}
		rc = gfsp_layout_part(l, e->part, &f, err);
		if (rc)
			goto out;
		rc = gfsp_pread(f, dst, (size_t)e->len, e->loff, &done, err);
		if (rc)
			goto out;
		if (done < e->len) {
			rc = gfsp_error_set(err, GFSP_ECORRUPT,
			    "%s/part.%d: short read at offset %llu: %zu of "
			    "%llu bytes (part is shorter than recorded)",
			    l->path, e->part, (unsigned long long)e->loff,
			    done, (unsigned long long)e->len);
			goto out;
		}
		if (l->rcheck != NULL && !l->verify) {
			rc = readcheck(l, e->part, e->loff, dst, e->len, err);
			if (rc)
				goto out;
		}
	}
	*got = len;
out:
	free(ext);
	return rc;
}

#define SEEK_WINDOW	((uint64_t)64 << 20)	/* logical bytes per map */

/*
 * Inside extent e (from logical offset g on): where the next data
 * (data) or hole of its part is, as a logical offset, or e's end if none
 * before it.  A part's own holes (pcp-split of a sparse source) are asked
 * of the part's descriptor (SEEK_DATA, SEEK_HOLE): the part the layout
 * reads, never its name again (a held layout's parts are the ones it
 * opened with it, whatever the names lead to now); a part that cannot be
 * opened, or a store without descriptors (Gfarm), has no holes of its own.
 */
static uint64_t
part_seek(struct gfsp_layout *l, const struct gfsp_extent *e, uint64_t g,
	  int data)
{
	uint64_t end = e->goff + e->len, lo = e->loff + (g - e->goff);
	struct gfsp_file *f;
	off_t r;
	int fd;

	fd = gfsp_layout_part(l, e->part, &f, NULL) == 0 ?
	    gfsp_file_fd(f) : -1;
	if (fd < 0)
		r = data ? (off_t)lo : (off_t)(e->loff + e->len);
	else
		r = lseek(fd, (off_t)lo, data ? SEEK_DATA : SEEK_HOLE);
	if (r < 0)		/* ENXIO: no data from there on */
		return end;
	if ((uint64_t)r < lo)
		r = (off_t)lo;
	return GFSP_MIN(e->goff + ((uint64_t)r - e->loff), end);
}

int
gfsp_layout_seek(struct gfsp_layout *l, uint64_t off, int data,
		 uint64_t *at, int *found, struct gfsp_error *err)
{
	uint64_t size = l->marker.logical_size, g = off, w, from, x = 0;
	struct gfsp_extent *ext;
	size_t n, i;
	int rc = 0;

	*found = 0;
	if (off >= size)
		return 0;
	/* past the last byte any part holds, all is one trailing hole */
	while (g < l->data_end && !*found) {
		w = GFSP_MIN(l->data_end - g, SEEK_WINDOW);
		rc = gfsp_layout_map(l, g, w, &ext, &n, err);
		if (rc)
			break;
		for (i = 0; i < n && !*found; i++) {
			from = GFSP_MAX(ext[i].goff, off);
			if (ext[i].part < 0)
				x = from;
			else
				x = part_seek(l, &ext[i], from, data);
			*found = ext[i].part < 0 ? !data :
			    x < ext[i].goff + ext[i].len;
		}
		free(ext);
		g += w;
	}
	if (rc)
		return rc;
	if (*found)
		*at = x;
	else if (!data) {
		*at = GFSP_MAX(g, off);
		*found = 1;
	}
	return 0;
}
