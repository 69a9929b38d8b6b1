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
 * The streaming state holds one segment state and one root state; the
 * root is fed one segment hash at a time, so memory does not grow with
 * the part.
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
	XXH3_state_t *root;	/* segment hashes closed so far */
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
	if (h->seg == NULL || h->root == NULL) {
		gfsp_phash_free(h);
		return NULL;
	}
	XXH3_64bits_reset(h->seg);
	XXH3_64bits_reset(h->root);
	return h;
}

static void
close_segment(struct gfsp_phash *h)
{
	unsigned char le[8];

	gfsp_put_le64(le, XXH3_64bits_digest(h->seg));
	XXH3_64bits_update(h->root, le, sizeof(le));
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

/*
 * Non-destructive: the open segment is digested from a copy of the root
 * state, so hashing may go on after a look at the checksum so far.
 */
uint64_t
gfsp_phash_final(struct gfsp_phash *h)
{
	XXH3_state_t tmp;
	unsigned char le[8];

	XXH3_INITSTATE(&tmp);
	XXH3_copyState(&tmp, h->root);
	if (h->in_seg > 0) {
		gfsp_put_le64(le, XXH3_64bits_digest(h->seg));
		XXH3_64bits_update(&tmp, le, sizeof(le));
	}
	return XXH3_64bits_digest(&tmp);
}

void
gfsp_phash_free(struct gfsp_phash *h)
{
	if (h == NULL)
		return;
	XXH3_freeState(h->seg);
	XXH3_freeState(h->root);
	free(h);
}
