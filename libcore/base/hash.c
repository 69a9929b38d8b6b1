/*
 * hash.c - part checksums (splitfile.h, man/gfsplit.5 "CHECKSUMS").
 *
 * A part is cut into segments of seg_size bytes, the last one possibly
 * short.  Each segment gets XXH3-64; the part checksum is XXH3-64 of the
 * segment hashes written as 8 little-endian bytes each, in order:
 *
 *   part:   |<- seg 0 ->|<- seg 1 ->| ... |<- seg n-1 ->|
 *   hashes:     h0          h1               h(n-1)
 *   root:   XXH3-64( le64(h0) le64(h1) ... le64(h(n-1)) )
 *
 * An empty part has no segment, so its checksum is XXH3-64 of nothing.
 * The streaming state holds the open segment's state and a root state fed
 * one segment hash at a time, so memory does not grow with the part; a
 * writer's (gfsp_phash_keep) keeps the closed segments' hashes instead (8
 * bytes a segment: 8 KiB a GiB at the default size), so that a segment
 * changed in place (a rank rewriting its own bytes,
 * gfsp_phash_touch) is hashed again from the part alone, at the end.
 */
#include <stdlib.h>
#include <string.h>
/* stack-allocated XXH3 states need the struct definition */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "core.h"

struct gfsp_phash {
	uint64_t seg_size;
	uint64_t in_seg;	/* bytes hashed into the open segment */
	XXH3_state_t *seg;	/* open segment, valid when in_seg > 0 */
	XXH3_state_t *root;	/* hashes of the closed segments, fed in */
	int keep;		/* gfsp_phash_keep: h[] and stale[] kept */
	uint64_t *h;		/* [nseg] hashes of the closed segments */
	uint64_t nseg, cap;
	unsigned char *stale;	/* [cap + 1] changed since hashed */
	int nomem;		/* a segment hash found no room */
};

void
gfsp_put_le32(unsigned char *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

void
gfsp_put_le64(unsigned char *p, uint64_t v)
{
	gfsp_put_le32(p, (uint32_t)v);
	gfsp_put_le32(p + 4, (uint32_t)(v >> 32));
}

uint32_t
gfsp_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

uint64_t
gfsp_le64(const unsigned char *p)
{
	return (uint64_t)gfsp_le32(p) | (uint64_t)gfsp_le32(p + 4) << 32;
}

uint64_t
gfsp_hash64(const void *buf, size_t len)
{
	return XXH3_64bits(buf, len);
}

uint64_t
gfsp_seg_hash(const void *buf, size_t len)
{
	return XXH3_64bits(buf, len);
}

uint64_t
gfsp_phash_root(const uint64_t *seg, uint64_t nseg)
{
	XXH3_state_t st;
	unsigned char le[8];
	uint64_t i;

	XXH3_INITSTATE(&st);
	XXH3_64bits_reset(&st);
	for (i = 0; i < nseg; i++) {
		gfsp_put_le64(le, seg[i]);
		XXH3_64bits_update(&st, le, sizeof(le));
	}
	return XXH3_64bits_digest(&st);
}

struct gfsp_phash *
gfsp_phash_new(uint64_t seg_size)
{
	struct gfsp_phash *h;

	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return NULL;
	h->seg_size = seg_size ? seg_size : GFSP_SEG_SIZE_DEFAULT;
	h->seg = XXH3_createState();
	h->root = XXH3_createState();
	h->stale = calloc(1, 1);
	if (h->seg == NULL || h->root == NULL || h->stale == NULL) {
		gfsp_phash_free(h);
		return NULL;
	}
	XXH3_64bits_reset(h->seg);
	XXH3_64bits_reset(h->root);
	return h;
}

void
gfsp_phash_keep(struct gfsp_phash *h)
{
	h->keep = 1;
}

static void
close_segment(struct gfsp_phash *h)
{
	uint64_t *nh, ncap;
	unsigned char *ns, le[8];

	if (!h->keep) {
		gfsp_put_le64(le, XXH3_64bits_digest(h->seg));
		XXH3_64bits_update(h->root, le, sizeof(le));
		XXH3_64bits_reset(h->seg);
		h->in_seg = 0;
		return;
	}
	if (h->nseg == h->cap) {
		ncap = h->cap ? 2 * h->cap : 64;
		nh = realloc(h->h, (size_t)ncap * sizeof(*nh));
		if (nh != NULL)
			h->h = nh;
		ns = nh ? realloc(h->stale, (size_t)ncap + 1) : NULL;
		if (ns == NULL) {
			h->nomem = 1;	/* the final checksum says so */
			XXH3_64bits_reset(h->seg);
			h->in_seg = 0;
			return;
		}
		memset(ns + h->cap + 1, 0, (size_t)(ncap - h->cap));
		h->stale = ns;
		h->cap = ncap;
	}
	h->h[h->nseg++] = XXH3_64bits_digest(h->seg);
	h->stale[h->nseg] = 0;	/* the new open segment */
	XXH3_64bits_reset(h->seg);
	h->in_seg = 0;
}

void
gfsp_phash_update(struct gfsp_phash *h, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t n;

	while (len > 0) {
		n = h->seg_size - h->in_seg;
		if (n > len)
			n = len;
		XXH3_64bits_update(h->seg, p, (size_t)n);
		h->in_seg += n;
		p += n;
		len -= (size_t)n;
		/* a full segment is closed at once, so a part of exactly
		 * k segments has k hashes and no empty trailing one */
		if (h->in_seg == h->seg_size)
			close_segment(h);
	}
}

void
gfsp_phash_touch(struct gfsp_phash *h, uint64_t off, uint64_t len)
{
	uint64_t s, last;

	if (len == 0 || !h->keep)
		return;
	last = (off + len - 1) / h->seg_size;
	for (s = off / h->seg_size; s <= last && s <= h->nseg; s++)
		h->stale[s] = 1;
}

int
gfsp_phash_stale(const struct gfsp_phash *h, uint64_t *off, uint64_t *len)
{
	uint64_t s;

	if (h->nomem)
		return -1;
	for (s = 0; s <= h->nseg; s++)
		if (h->stale[s]) {
			*off = s * h->seg_size;
			*len = s < h->nseg ? h->seg_size : h->in_seg;
			return 1;
		}
	return 0;
}

void
gfsp_phash_redo(struct gfsp_phash *h, uint64_t off, const void *buf,
		size_t len)
{
	uint64_t s = off / h->seg_size;

	if (s < h->nseg) {
		h->h[s] = XXH3_64bits(buf, len);
	} else if (s == h->nseg) {
		XXH3_64bits_reset(h->seg);
		XXH3_64bits_update(h->seg, buf, len);
	} else {
		return;
	}
	h->stale[s] = 0;
}

/*
 * Non-destructive: the open segment is digested from its state as it is,
 * so hashing may go on after a look at the checksum so far.  A checksum
 * with a stale segment, or one that found no memory, is of no part: it is
 * never the one a reader computes.
 */
uint64_t
gfsp_phash_final(struct gfsp_phash *h)
{
	XXH3_state_t root;
	unsigned char le[8];
	uint64_t s, sum;

	XXH3_INITSTATE(&root);
	if (!h->keep) {
		XXH3_copyState(&root, h->root);
		if (h->in_seg > 0) {
			gfsp_put_le64(le, XXH3_64bits_digest(h->seg));
			XXH3_64bits_update(&root, le, sizeof(le));
		}
		return XXH3_64bits_digest(&root);
	}
	XXH3_64bits_reset(&root);
	for (s = 0; s < h->nseg; s++) {
		gfsp_put_le64(le, h->h[s]);
		XXH3_64bits_update(&root, le, sizeof(le));
	}
	if (h->in_seg > 0) {
		gfsp_put_le64(le, XXH3_64bits_digest(h->seg));
		XXH3_64bits_update(&root, le, sizeof(le));
	}
	sum = XXH3_64bits_digest(&root);
	for (s = 0; s <= h->nseg; s++)
		if (h->stale[s])
			return ~sum;
	return h->nomem ? ~sum : sum;
}

void
gfsp_phash_free(struct gfsp_phash *h)
{
	if (h == NULL)
		return;
	XXH3_freeState(h->seg);
	XXH3_freeState(h->root);
	free(h->h);
	free(h->stale);
	free(h);
}
