/*
 * cache.c - the cooperative cache (cache.h; Arai, Ishikawa and Hori,
 * "Lightweight cooperative caching for RDMA clusters", section 2).
 *
 * Window of each rank (onesided.h), 8-byte words unless said:
 *
 *   0          slots: nslots x { bid, tok }        read by peers
 *   rd_off     repdir: rd_rows x { key, G cells }  b's row: on rank h(b)
 *                                                  mod P, a hash table
 *                                                  keyed by b (probing)
 *   ad_off     altdir: ad_rows cells               group g's table, spread
 *                                                  over g's members
 *   data_off   data: nslots x block_size           (4 KiB aligned)
 *
 * A repdir row belongs to one block for good: its key word goes from 0 to
 * the block id by compare-and-swap, and lookups probe from h(b) until they
 * meet b or 0 (rd_rows is 8 times the blocks of a cache, so a file of up
 * to 8 times all the caches is coordinated; past that, a block that finds
 * no row is read from storage without coordination).  A cell: state (2
 * bits) | tag (20) | rank (20) | slot (22).  An altdir cell (a lossy hash,
 * as in Arai, Ishikawa and Hori's Anco): 1 | tag (21) | rank (20) | slot (22), or 0.  Nothing
 * relies on a tag being unique: a location is only ever used after the
 * source slot's full block id has been read.
 *
 * Slot protocol (the paper's 2.2.1): install writes the data, then a new token,
 * then the block id; discard clears the id, then the token, and only then
 * is the data reused.  A copy reads id and token, the data, token and id
 * again, and keeps the data only if nothing changed.
 *
 * Directory cells change only by compare-and-swap: INVALID -> LOADING by
 * the rank that will load the block for its group (so no other rank of
 * the group reads it from storage meanwhile), LOADING -> LOADED by that
 * rank, and LOADED(me) -> substitute or INVALID by its holder when it
 * drops the block.  A LOADED cell whose slot fails the check is stale
 * (its holder dropped the block and the substitute was stale too): it is
 * claimed like an INVALID one.
 *
 * The structures are in cache_impl.h; the read-ahead threads, which take
 * blocks through the same protocol, are cache_readahead.c; making and
 * freeing a cache is cache_setup.c, its statistics cache_stats.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache_impl.h"

/* ------------------------------------------------------------ encoding */

static uint64_t
tag_of(uint64_t bid)
{
	return mix(bid ^ 0x9e3779b97f4a7c15ULL) >> (64 - TAG_BITS);
}

static uint64_t
cell(int st, uint64_t bid, int rank, uint32_t slot)
{
	return (uint64_t)st << 62 | tag_of(bid) << (RANK_BITS + SLOT_BITS) |
	    (uint64_t)rank << SLOT_BITS | slot;
}

static int
cell_state(uint64_t v, uint64_t bid)
{
	int st = (int)(v >> 62);

	if (st == ST_INVALID ||
	    ((v >> (RANK_BITS + SLOT_BITS)) & ((1u << TAG_BITS) - 1)) !=
	    tag_of(bid))
		return ST_INVALID;
	return st;
}

static int
cell_rank(uint64_t v)
{
	return (int)((v >> SLOT_BITS) & (MAX_RANKS - 1));
}

static uint32_t
cell_slot(uint64_t v)
{
	return (uint32_t)(v & (MAX_SLOTS - 1));
}

/* altdir cell: valid bit, 21 tag bits, rank, slot */
static uint64_t
acell(uint64_t bid, int rank, uint32_t slot)
{
	return (uint64_t)1 << 63 |
	    (tag_of(bid) << 1 & ((1u << 21) - 1)) << (RANK_BITS + SLOT_BITS) |
	    (uint64_t)rank << SLOT_BITS | slot;
}

static int
acell_is(uint64_t v, uint64_t bid)
{
	return (v >> 63) && (v & ~((uint64_t)1 << 63)) >>
	    (RANK_BITS + SLOT_BITS) == (tag_of(bid) << 1 & ((1u << 21) - 1));
}

/* where block bid's group's altdir cell lives */
static void
ad_home(const struct gfsp_cache *c, uint64_t bid, int *rank, uint64_t *off)
{
	uint64_t h = mix(bid ^ 0x5851f42d4c957f2dULL);

	*rank = c->group + (int)(h % (uint64_t)c->gsize) * c->groups;
	*off = c->ad_off + (h / (uint64_t)c->gsize % c->ad_rows) * 8;
}

/* block idx of the file with identity key */
uint64_t
gfsp_cache_block_id(uint64_t key, uint64_t idx)
{
	return mix(key ^ mix(idx + 1)) | 1;
}

static uint64_t
slot_off(uint32_t s)
{
	return (uint64_t)s * 16;
}

static unsigned char *
data_of(struct gfsp_cache *c, uint32_t s)
{
	return c->base + c->data_off + (uint64_t)s * c->bsize;
}

static uint64_t
rnd_next(struct gfsp_cache *c)
{
	c->rnd ^= c->rnd << 13;
	c->rnd ^= c->rnd >> 7;
	c->rnd ^= c->rnd << 17;
	return c->rnd;
}

/* ----------------------------------------------------- local bookkeeping */

uint64_t
gfsp_cache_index_find(const struct gfsp_cache *c, uint64_t bid,
		      uint32_t *slot)
{
	uint64_t i = mix(bid) & c->index_mask;

	while (c->index[i] != NONE) {
		if (c->bid[c->index[i]] == bid) {
			*slot = c->index[i];
			return i;
		}
		i = (i + 1) & c->index_mask;
	}
	*slot = NONE;
	return i;
}

static void
index_add(struct gfsp_cache *c, uint64_t bid, uint32_t s)
{
	uint32_t found;
	uint64_t i = gfsp_cache_index_find(c, bid, &found);

	if (found == NONE)
		c->index[i] = s;
}

/* Remove bid, shifting the probe run back over the hole. */
static void
index_del(struct gfsp_cache *c, uint64_t bid)
{
	uint32_t found;
	uint64_t i = gfsp_cache_index_find(c, bid, &found), j = i, k;

	if (found == NONE)
		return;
	for (;;) {
		c->index[i] = NONE;
		for (;;) {
			j = (j + 1) & c->index_mask;
			if (c->index[j] == NONE)
				return;
			k = mix(c->bid[c->index[j]]) & c->index_mask;
			/* may j's entry move to i?  only if its home k is
			 * not inside (i, j] cyclically */
			if (i <= j ? (k <= i || k > j) : (k <= i && k > j))
				break;
		}
		c->index[i] = c->index[j];
		i = j;
	}
}

static void
list_unlink(struct gfsp_cache *c, uint32_t s)
{
	c->next[c->prev[s]] = c->next[s];
	c->prev[c->next[s]] = c->prev[s];
	if (c->where[s] == W_SINGLET)
		c->nsinglet--;
	c->where[s] = W_FREE;
}

/* s at the tail (most recent / newest) of list head */
static void
list_append(struct gfsp_cache *c, uint32_t head, uint32_t s)
{
	c->prev[s] = c->prev[head];
	c->next[s] = head;
	c->next[c->prev[head]] = s;
	c->prev[head] = s;
	c->where[s] = head == GEN(c) ? W_GENERAL : W_SINGLET;
	if (head == SING(c))
		c->nsinglet++;
}

/*
 * Around a long wait (a block's bytes on the way, a sleep) of a thread
 * that holds c->mu: the read-ahead threads go on meanwhile.
 */
static void
let_go(struct gfsp_cache *c)
{
	pthread_mutex_unlock(&c->mu);
}

static void
take_back(struct gfsp_cache *c)
{
	pthread_mutex_lock(&c->mu);
}

/* --------------------------------------------------------- one-sided */

#define RD_PROBES	32

/* a block's repdir row, once found */
struct rdref {
	int home;
	uint64_t off;		/* of its key word; 0: no row */
};

/*
 * Read block bid's row into row[] (all INVALID if it has none).  With
 * claim, a block without a row takes a free one on the way.
 */
static int
rd_row(struct gfsp_cache *c, uint64_t bid, int claim, struct rdref *ref,
       uint64_t *row, struct gfsp_error *err)
{
	uint64_t h = mix(bid), start, off, kc[65], old;
	int p, rc = 0;

	memset(row, 0, (size_t)c->groups * sizeof(*row));
	ref->home = (int)(h % (uint64_t)c->nprocs);
	ref->off = 0;
	start = h / (uint64_t)c->nprocs;
	for (p = 0; rc == 0 && p < RD_PROBES; p++) {
		off = c->rd_off + (start + (uint64_t)p) % c->rd_rows *
		    ((uint64_t)c->groups + 1) * 8;
		/* key and cells in one operation */
		rc = c->os->getv64(c->w, ref->home, off, kc,
		    (size_t)c->groups + 1, err);
		if (rc == 0 && kc[0] == 0 && claim) {
			rc = c->os->cas64(c->w, ref->home, off, 0, bid, &old,
			    err);
			kc[0] = old == 0 ? bid : old;
			if (old == 0)	/* a fresh row: no cell set yet */
				memset(kc + 1, 0, (size_t)c->groups * 8);
			else if (old == bid && rc == 0)
				rc = c->os->getv64(c->w, ref->home, off, kc,
				    (size_t)c->groups + 1, err);
		}
		if (rc || kc[0] == 0)
			break;		/* not there */
		if (kc[0] == bid) {
			ref->off = off;
			memcpy(row, kc + 1, (size_t)c->groups * 8);
			break;
		}
	}
	return rc;
}

/* Our group's cell of the row: expect -> val.  OUT *done. */
static int
rd_cas(struct gfsp_cache *c, const struct rdref *ref, uint64_t expect,
       uint64_t val, int *done, struct gfsp_error *err)
{
	uint64_t old = 0;
	int rc;

	*done = 0;
	if (ref->off == 0)
		return 0;
	rc = c->os->cas64(c->w, ref->home, ref->off + 8 +
	    (uint64_t)c->group * 8, expect, val, &old, err);
	*done = rc == 0 && old == expect;
	return rc;
}

/*
 * Copy bytes [in, in + len) of block bid from (rank, slot) into dst,
 * checked: the source's id and token before and after the data are the
 * same and name bid.  OUT *ok: 1 if the copy is good.
 */
static int
copy_checked(struct gfsp_cache *c, uint64_t bid, int rank, uint32_t slot,
	     uint64_t in, void *dst, uint64_t len, int *ok,
	     struct gfsp_error *err)
{
	uint64_t bt1[2] = { 0, 0 }, bt2[2] = { 0, 0 }, so = slot_off(slot);
	int rc;

	/*
	 * Each pair is read in one operation, in no order between its two
	 * words.  That is enough: a discard clears the id and then the
	 * token before the slot is reused, and tokens are never reused, so
	 * any pair torn by an install or a discard has a 0 or a token that
	 * is not the first one.
	 */
	*ok = 0;
	if (slot >= c->nslots)
		return 0;		/* a cell from a larger cache? stale */
	rc = c->os->getv64(c->w, rank, so, bt1, 2, err);
	if (rc || bt1[0] != bid || bt1[1] == 0)
		return rc;
	let_go(c);
	rc = c->os->get(c->w, rank, c->data_off + (uint64_t)slot * c->bsize +
	    in, dst, len, err);
	if (rc == 0)
		rc = c->os->flush(c->w, rank, err);
	take_back(c);
	if (rc == 0 && gfsp_cache_test_hook != NULL)
		gfsp_cache_test_hook(rank, slot);
	if (rc == 0)
		rc = c->os->getv64(c->w, rank, so, bt2, 2, err);
	*ok = rc == 0 && bt2[0] == bid && bt2[1] == bt1[1];
	return rc;
}

/* copy_checked from the location in cell k of row, counted: block bid
 * into our slot s, or with pc, just the piece into pc->dst. */
static int
copy_from(struct gfsp_cache *c, uint64_t bid, const uint64_t *row, int k,
	  uint32_t s, uint64_t len, struct piece *pc, int *ok,
	  struct gfsp_error *err)
{
	int rc;

	rc = copy_checked(c, bid, cell_rank(row[k]), cell_slot(row[k]),
	    pc ? pc->in : 0, pc ? (void *)pc->dst : data_of(c, s),
	    pc ? pc->len : len, ok, err);
	if (rc == 0 && *ok && pc != NULL) {
		c->st.peer_pieces++;
		c->st.peer_piece_bytes += pc->len;
		pc->done = 1;
	} else if (rc == 0 && *ok) {
		c->st.peer_copies++;
		c->st.peer_bytes += len;
	} else if (rc == 0) {
		c->st.retries++;
	}
	return rc;
}

/* Publish slot s as holding bid: data (already there), token, id. */
static int
install(struct gfsp_cache *c, uint32_t s, uint64_t bid,
	struct gfsp_error *err)
{
	int rc;

	c->os->publish(c->w);
	rc = c->os->put64(c->w, c->rank, slot_off(s) + 8, ++c->token, err);
	if (rc == 0)
		rc = c->os->put64(c->w, c->rank, slot_off(s), bid, err);
	if (rc == 0) {
		c->bid[s] = bid;
		c->tok[s] = c->token;
		index_add(c, bid, s);
	}
	return rc;
}

/* One of our own slot words, whose value we know, to 0: one round trip
 * (put64 would take two); a word someone changed (a test) the long way. */
static int
own_clear(struct gfsp_cache *c, uint64_t off, uint64_t now,
	  struct gfsp_error *err)
{
	uint64_t old = 0;
	int rc;

	rc = c->os->cas64(c->w, c->rank, off, now, 0, &old, err);
	if (rc == 0 && old != now)
		rc = c->os->put64(c->w, c->rank, off, 0, err);
	return rc;
}

/* ----------------------------------------------------------- discard */

/*
 * Block bid in slot s is held by another rank too, as far as the
 * directories tell (a singlet is held by no one else).
 */
static int
held_elsewhere(struct gfsp_cache *c, uint64_t bid, uint32_t s, int *yes,
	       struct gfsp_error *err)
{
	uint64_t row[64], a = 0, off;
	struct rdref ref;
	int k, home, rc, st;

	*yes = 0;
	rc = rd_row(c, bid, 0, &ref, row, err);
	for (k = 0; rc == 0 && k < c->groups; k++) {
		st = cell_state(row[k], bid);
		if (st != ST_INVALID && (cell_rank(row[k]) != c->rank ||
		    cell_slot(row[k]) != s))
			*yes = 1;
	}
	if (rc || *yes)
		return rc;
	ad_home(c, bid, &home, &off);
	rc = c->os->get64(c->w, home, off, &a, err);
	if (rc == 0 && acell_is(a, bid) && (cell_rank(a) != c->rank ||
	    cell_slot(a) != s))
		*yes = 1;
	return rc;
}

/*
 * Drop the block in slot s (the paper's 2.5.2): a representative hands its cell
 * to another holder its group's altdir knows, or clears it; our altdir
 * entry goes; then the id and token, and the slot is free for reuse.
 * keep_last: a block chosen because another rank held it, which is found
 * to have no other holder now (that rank dropped it meanwhile, counting
 * on us), is kept: *kept, and nothing changed.
 */
static int
discard(struct gfsp_cache *c, uint32_t s, int keep_last, int *kept,
	struct gfsp_error *err)
{
	uint64_t bid = c->bid[s], row[64], a = 0, off, sub, mine;
	struct rdref ref;
	int home, rc, done;

	*kept = 0;
	mine = cell(ST_LOADED, bid, c->rank, s);
	rc = rd_row(c, bid, 0, &ref, row, err);
	if (rc == 0 && row[c->group] == mine) {
		ad_home(c, bid, &home, &off);
		rc = c->os->get64(c->w, home, off, &a, err);
		sub = rc == 0 && acell_is(a, bid) && (cell_rank(a) !=
		    c->rank || cell_slot(a) != s) ?
		    cell(ST_LOADED, bid, cell_rank(a), cell_slot(a)) : 0;
		if (rc == 0 && sub == 0 && keep_last) {
			*kept = 1;
			return 0;
		}
		if (rc == 0)
			rc = rd_cas(c, &ref, mine, sub, &done, err);
	}
	if (rc == 0) {
		ad_home(c, bid, &home, &off);
		rc = c->os->cas64(c->w, home, off, acell(bid, c->rank, s), 0,
		    &a, err);
	}
	if (rc == 0)
		rc = own_clear(c, slot_off(s), bid, err);
	if (rc == 0)
		rc = own_clear(c, slot_off(s) + 8, c->tok[s], err);
	index_del(c, bid);
	c->bid[s] = 0;
	c->tok[s] = 0;
	return rc;
}

/*
 * A slot to fill (the paper's 2.2.2): a free one, else the general list's least
 * recent block, unless it is a singlet: those move to the singlet FIFO,
 * whose oldest block is dropped when it holds more than its share.
 */
static int
alloc_slot(struct gfsp_cache *c, uint32_t *out, struct gfsp_error *err)
{
	uint32_t v;
	int rc, other, general, kept;

	if (c->nfree > 0) {
		*out = c->freel[--c->nfree];
		return 0;
	}
	for (;;) {
		v = c->next[GEN(c)];
		general = 1;
		if (v == GEN(c) || (c->nsinglet > c->max_singlets &&
		    c->next[SING(c)] != SING(c))) {
			v = c->next[SING(c)];	/* oldest singlet */
			if (v == SING(c))	/* every slot checked out */
				return gfsp_error_set(err, GFSP_EINVAL,
				    "cache: no slot to replace (%llu slots)",
				    (unsigned long long)c->nslots);
			general = 0;
		} else if (c->max_singlets > 0) {
			rc = held_elsewhere(c, c->bid[v], v, &other, err);
			if (rc)
				return rc;
			if (!other) {
				list_unlink(c, v);
				list_append(c, SING(c), v);
				c->st.to_singlet++;
				continue;
			}
		}
		list_unlink(c, v);
		/* the holder it counted on may have dropped it since, on
		 * the same count: then it is a singlet after all */
		rc = discard(c, v, general && c->max_singlets > 0, &kept, err);
		if (rc == 0 && kept) {
			list_append(c, SING(c), v);
			c->st.to_singlet++;
			continue;
		}
		if (general)
			c->st.evict_general++;
		else
			c->st.evict_singlet++;
		*out = v;
		return rc;
	}
}

/* ----------------------------------------------------------- acquire */

/*
 * Tell the directories that slot s holds bid, which came from no peer:
 * our group's cell if no one of the group has it, our group's altdir.
 */
static int
announce(struct gfsp_cache *c, uint64_t bid, uint32_t s,
	 struct gfsp_error *err)
{
	uint64_t row[64], off;
	struct rdref ref;
	int rc, done = 0, home;

	rc = rd_row(c, bid, 1, &ref, row, err);
	if (rc == 0 && cell_state(row[c->group], bid) == ST_INVALID)
		rc = rd_cas(c, &ref, row[c->group],
		    cell(ST_LOADED, bid, c->rank, s), &done, err);
	if (rc == 0) {
		ad_home(c, bid, &home, &off);
		rc = c->os->put64(c->w, home, off, acell(bid, c->rank, s),
		    err);
	}
	return rc;
}

/*
 * Block idx (id bid, len bytes) of tier entry e into slot s, published.
 * A tier that cannot be read is not an error: it is warned of and not
 * used again, and *used says 0 (the block comes from elsewhere).
 */
static int
tier_load(struct gfsp_cache *c, struct gfsp_tier_entry *e, uint64_t idx,
	  uint64_t bid, uint32_t s, uint64_t len, int *used,
	  struct gfsp_error *err)
{
	struct gfsp_error terr;
	int rc;

	*used = 0;
	gfsp_error_clear(&terr);
	if (gfsp_tier_pread(e, data_of(c, s), len, idx * c->bsize,
	    &terr) != 0) {
		gfsp_log_warn("local tier not used for '%s': %s", e->path,
		    terr.msg);
		memset(e->have, 0, (e->nblocks + 7) / 8);
		return 0;
	}
	*used = 1;
	rc = install(c, s, bid, err);
	if (rc == 0)
		rc = announce(c, bid, s, err);
	if (rc == 0) {
		c->st.tier_reads++;
		c->st.tier_bytes += len;
	}
	return rc;
}

static int
storage_read(struct gfsp_cache_file *f, uint64_t idx, uint64_t bid,
	     uint32_t s, uint64_t len, struct gfsp_error *err)
{
	struct gfsp_cache *c = f->c;
	size_t done = 0;
	uint64_t from = 0, to = 0;
	int rc;

	/*
	 * A rank reading in order: the storage is told of the next blocks.
	 * When all ranks walk a file in step, each block is read from
	 * storage by whichever rank gets to it first, so no one descriptor
	 * reads in order and the kernel's own read-ahead never starts.
	 */
	if (f->run >= 2 && (idx + 1 + RA_BLOCKS) * c->bsize > f->ra_end) {
		from = GFSP_MAX(f->ra_end, (idx + 1) * c->bsize);
		to = f->ra_end = (idx + 1 + RA_BLOCKS) * c->bsize;
	}
	let_go(c);
	pthread_mutex_lock(&c->store_mu);
	if (to > from)
		gfsp_willneed(f->fh, from, to - from);
	rc = gfsp_pread(f->fh, data_of(c, s), (size_t)len, idx * c->bsize,
	    &done, err);
	pthread_mutex_unlock(&c->store_mu);
	take_back(c);
	if (rc == 0 && done < len)
		return gfsp_error_set(err, GFSP_EIO, "'%s' changed while "
		    "cached: block %llu is short (%zu of %llu bytes)",
		    f->path, (unsigned long long)idx, done,
		    (unsigned long long)len);
	if (rc)
		return rc;
	c->st.storage_reads++;
	c->st.storage_bytes += len;
	if (gfsp_grow(&c->sread, &c->capsread, c->nsread + 1,
	    sizeof(*c->sread)) != 0)
		return 0;	/* the statistic only */
	c->sread[c->nsread++] = bid;
	return 0;
}

/* Is it this rank's turn, of its group's, to load block idx of a file? */
static int
my_turn(const struct gfsp_cache *c, uint64_t idx)
{
	return idx % (uint64_t)c->gsize == (uint64_t)(c->rank / c->groups);
}

/* A random LOADED cell of row (any group but `skip`, -1: none). */
static int
pick_loaded(struct gfsp_cache *c, const uint64_t *row, uint64_t bid,
	    int skip)
{
	int k, n = 0, pick[64];

	for (k = 0; k < c->groups; k++)
		if (k != skip && cell_state(row[k], bid) == ST_LOADED)
			pick[n++] = k;
	return n ? pick[rnd_next(c) % (uint64_t)n] : -1;
}

/*
 * Between two looks at a cell another rank is loading.  Over a network
 * every look is a round trip that a thread of the cell's home answers:
 * there the pause grows, from 50 us to 2 ms (a block takes longer);
 * mapped, a look is a load, and the first 64 come without one.
 */
static void
pause_a_little(struct gfsp_cache *c, unsigned *spins)
{
	struct timespec ts = { 0, 0 };
	unsigned n = (*spins)++;

	if (c->os->mapped && n < 64)
		return;
	ts.tv_nsec = c->os->mapped ? 50000 :
	    GFSP_MIN(50000L << GFSP_MIN(n / 8, 6), 2000000L);
	let_go(c);
	nanosleep(&ts, NULL);
	take_back(c);
}

/* The piece from a peer, if our group has the block LOADED (pc->done):
 * where acquire would copy it from a peer without a claim. */
static int
peer_piece(struct gfsp_cache *c, uint64_t bid, struct piece *pc,
	   struct gfsp_error *err)
{
	uint64_t row[64];
	struct rdref ref;
	int k, ok, rc;

	rc = rd_row(c, bid, 0, &ref, row, err);
	if (rc == 0 && ref.off != 0 &&
	    cell_state(row[c->group], bid) == ST_LOADED &&
	    (k = pick_loaded(c, row, bid, -1)) >= 0)
		rc = copy_from(c, bid, row, k, NONE, 0, pc, &ok, err);
	return rc;
}

/*
 * Block idx of f into our cache; OUT *slot.  A hit costs nothing
 * remote; a miss follows the row of the block (the paper's 2.5.1).  On a mapped
 * transport a block a peer has LOADED is not taken: the piece pc is
 * copied from there instead (pc->done; no slot).
 *
 * `ahead`: for a read-ahead thread, which leaves a block that no one has
 * yet to the rank of the group whose turn it is to load it (my_turn),
 * waiting for it, unless our own reader already is: so the reads from
 * storage spread over the ranks, and so do the copies from them, where
 * ranks reading in step would otherwise load whatever the quickest of
 * them gets to first, and serve it alone.  It gives the block up (*slot
 * NONE, no error) when the threads are called off, or after TURN_WAIT_S
 * (the rank whose turn it is may not read this file at all).
 */
/* What claim() found a block's row to ask of us */
enum claimed {
	CL_LOAD,	/* ours to load: our group's cell says LOADING by us */
	CL_GOT,		/* copied from a peer into our slot */
	CL_PIECE,	/* only the piece copied (mapped); the slot unused */
	CL_SKIP		/* a read-ahead thread gives the block up */
};

/* A read-ahead thread waits for the rank of the group whose turn it is
 * to load a block (none of the group has it, our reader is not there
 * yet); 1: the wait is over, give the block up */
static int
turn_over(struct gfsp_cache *c, time_t *since, unsigned *spins)
{
	if (*since == 0)
		*since = time(NULL);
	if (c->pf_stop || c->pf_draining || time(NULL) - *since > TURN_WAIT_S)
		return 1;
	pause_a_little(c, spins);
	return 0;
}

/* Another rank of the group loads bid: wait for it, up to the limit */
static int
wait_loader(struct gfsp_cache_file *f, uint64_t idx, const uint64_t *row,
	    time_t *since, unsigned *spins, struct gfsp_error *err)
{
	struct gfsp_cache *c = f->c;
	double limit = c->timeout > 0 ? c->timeout : WAIT_LIMIT_S;

	if (*since == 0) {
		*since = time(NULL);
		c->st.waits++;
	} else if (time(NULL) - *since > limit) {
		/* with a timeout, a rank that stopped is given up like one
		 * that does not answer */
		return gfsp_error_set(err, c->timeout > 0 ? GFSP_ENET :
		    GFSP_EIO, "'%s': block %llu: rank %d has been loading it "
		    "for %.0f s%s", f->path, (unsigned long long)idx,
		    cell_rank(row[c->group]), limit,
		    c->timeout > 0 ? " (--timeout)" : "");
	}
	pause_a_little(c, spins);
	return 0;
}

/* Follow bid's row until it tells us what to do (*how); our group's cell
 * claimed as LOADING by us (mine) when it is ours to load.  ref, row:
 * the row as last read. */
static int
claim(struct gfsp_cache_file *f, uint64_t idx, uint64_t bid, uint64_t len,
      struct piece *pc, uint32_t s, int ahead, struct rdref *ref,
      uint64_t *row, enum claimed *how, struct gfsp_error *err)
{
	struct gfsp_cache *c = f->c;
	uint64_t mine = cell(ST_LOADING, bid, c->rank, s);
	time_t since = 0, turn_since = 0;
	unsigned spins = 0;
	int rc, k, ok, done;

	for (;;) {
		rc = rd_row(c, bid, 1, ref, row, err);
		if (rc || ref->off == 0) {	/* directory full: uncoordinated */
			*how = CL_LOAD;
			return rc;
		}
		switch (cell_state(row[c->group], bid)) {
		case ST_LOADED:
			k = pick_loaded(c, row, bid, -1);
			/* mapped: just the piece, the slot unused */
			rc = copy_from(c, bid, row, k, s, len,
			    c->os->mapped ? pc : NULL, &ok, err);
			if (rc || ok) {
				*how = ok && pc->done ? CL_PIECE : CL_GOT;
				return rc;
			}
			/* our group's own location is stale: claim it */
			if (k != c->group)
				continue;
			break;
		case ST_LOADING:
			if (ahead && (c->pf_stop || c->pf_draining)) {
				*how = CL_SKIP;
				return 0;
			}
			rc = wait_loader(f, idx, row, &since, &spins, err);
			if (rc)
				return rc;
			continue;
		default:
			if (ahead && !my_turn(c, idx) && f->next_idx <= idx &&
			    pick_loaded(c, row, bid, c->group) < 0) {
				if (turn_over(c, &turn_since, &spins)) {
					*how = CL_SKIP;
					return 0;
				}
				continue;
			}
			break;
		}
		rc = rd_cas(c, ref, row[c->group], mine, &done, err);
		if (rc || done) {
			*how = CL_LOAD;
			return rc;
		}
		/* someone else changed it: read the row again */
	}
}

/* Block bid, claimed by us (mine), into slot s: from another group's
 * copy if there is one, else from the storage; then marked LOADED.  On
 * an error the claim is let go, so the group's waiters try themselves. */
static int
load_claimed(struct gfsp_cache_file *f, uint64_t idx, uint64_t bid,
	     uint64_t len, uint32_t s, struct rdref *ref, const uint64_t *row,
	     struct gfsp_error *err)
{
	struct gfsp_cache *c = f->c;
	uint64_t mine = cell(ST_LOADING, bid, c->rank, s);
	struct gfsp_error e;
	int rc = 0, k, ok = 0, done;

	k = pick_loaded(c, row, bid, c->group);
	if (k >= 0)
		rc = copy_from(c, bid, row, k, s, len, NULL, &ok, err);
	if (rc == 0 && !ok)
		rc = storage_read(f, idx, bid, s, len, err);
	if (rc == 0)
		rc = install(c, s, bid, err);
	if (rc == 0)
		return rd_cas(c, ref, mine, cell(ST_LOADED, bid, c->rank, s),
			      &done, err);
	gfsp_error_clear(&e);
	rd_cas(c, ref, mine, 0, &done, &e);
	return rc;
}

/* Slot s given back; a block half-installed in it discarded */
static void
give_back(struct gfsp_cache *c, uint32_t s)
{
	struct gfsp_error e;
	int kept;

	if (c->bid[s] != 0) {
		gfsp_error_clear(&e);
		discard(c, s, 0, &kept, &e);
	}
	c->freel[c->nfree++] = s;
}

/* Block bid into slot s through its row: claimed and loaded, or copied
 * from a peer (*how) */
static int
fill_slot(struct gfsp_cache_file *f, uint64_t idx, uint64_t bid,
	  uint64_t len, struct piece *pc, uint32_t s, int ahead,
	  enum claimed *how, struct gfsp_error *err)
{
	uint64_t row[64];
	struct rdref ref;
	int rc;

	rc = claim(f, idx, bid, len, pc, s, ahead, &ref, row, how, err);
	if (rc == 0 && *how == CL_LOAD)
		rc = load_claimed(f, idx, bid, len, s, &ref, row, err);
	else if (rc == 0 && *how == CL_GOT)
		rc = install(f->c, s, bid, err);
	return rc;
}

int
gfsp_cache_acquire(struct gfsp_cache_file *f, uint64_t idx, uint64_t bid,
		   uint64_t len, struct piece *pc, uint32_t *slot, int ahead,
		   struct gfsp_error *err)
{
	struct gfsp_cache *c = f->c;
	enum claimed how = CL_LOAD;
	uint64_t off;
	uint32_t s;
	int rc, home, used = 0;

	gfsp_cache_index_find(c, bid, &s);
	if (s != NONE) {
		c->st.hits++;
		list_unlink(c, s);
		list_append(c, GEN(c), s);
		*slot = s;
		return 0;
	}
	/* not ours: on a mapped transport a peer's copy first, before a
	 * slot is taken */
	if (c->os->mapped) {
		rc = peer_piece(c, bid, pc, err);
		if (rc || pc->done)
			return rc;
	}
	rc = alloc_slot(c, &s, err);
	if (rc)
		return rc;
	if (f->tier != NULL && gfsp_tier_covers(f->tier, idx * c->bsize, len))
		rc = tier_load(c, f->tier, idx, bid, s, len, &used, err);
	if (rc == 0 && !used)
		rc = fill_slot(f, idx, bid, len, pc, s, ahead, &how, err);
	if (rc) {
		give_back(c, s);
		return rc;
	}
	if (!used && (how == CL_PIECE || how == CL_SKIP)) {
		c->freel[c->nfree++] = s;
		if (how == CL_SKIP)
			*slot = NONE;
		return 0;
	}
	if (!used) {
		/* our group's altdir learns that we hold it too */
		ad_home(c, bid, &home, &off);
		rc = c->os->put64(c->w, home, off, acell(bid, c->rank, s),
				  err);
	}
	list_append(c, GEN(c), s);
	*slot = s;
	return rc;
}

/* ------------------------------------------------------------ the API */

void (*gfsp_cache_test_hook)(int rank, uint32_t slot);

int
gfsp_cache_test_retoken(struct gfsp_cache *c, int rank, uint32_t slot,
			struct gfsp_error *err)
{
	/* the top bit: never one of the owner's own tokens */
	return c->os->put64(c->w, rank, slot_off(slot) + 8,
	    (uint64_t)1 << 63 | ++c->token, err);
}

/*
 * The blocks of this node's tier (of the files matching `only`, NULL:
 * all) into the node's ranks' free slots, each published as a block this
 * rank loaded.  Local.
 */
static int
publish_tier(struct gfsp_cache *c, const char *only, int nrank, int nsize,
	     struct gfsp_error *err)
{
	struct gfsp_tier_entry *e;
	uint64_t j, nb, len, m;
	size_t i;
	uint32_t s;
	int rc = 0, used;

	/* block j of entry i goes to node rank (i + m) mod nsize, m counting
	 * the entry's blocks: the same on every rank of the node, whatever
	 * one of them met in another entry */
	for (i = 0; rc == 0 && i < c->ntier && c->nfree > 0; i++) {
		e = c->tier[i];
		if (only != NULL && !gfsp_path_matches(only, e->path))
			continue;
		nb = (e->st.size + c->bsize - 1) / c->bsize;
		for (j = 0, m = i; rc == 0 && j < nb && c->nfree > 0; j++) {
			len = GFSP_MIN(c->bsize, e->st.size - j * c->bsize);
			if (!gfsp_tier_covers(e, j * c->bsize, len) ||
			    m++ % (uint64_t)nsize != (uint64_t)nrank)
				continue;
			s = c->freel[--c->nfree];
			rc = tier_load(c, e, j, gfsp_cache_block_id(e->key, j), s, len,
			    &used, err);
			if (rc == 0 && !used) {
				c->freel[c->nfree++] = s;
				break;
			}
			if (rc == 0) {
				list_append(c, GEN(c), s);
				c->st.published++;
			}
		}
	}
	/* these were not reads of the job */
	c->st.tier_reads = 0;
	c->st.tier_bytes = 0;
	return rc;
}

/* Collective: find this node's tier and publish it; every rank's verdict. */
int
gfsp_cache_open_tier(struct gfsp_cache *c, const char *pattern,
		     const char *only, struct gfsp_error *err)
{
	MPI_Comm node = MPI_COMM_NULL;
	char *dir;
	int rc, nrank = 0, nsize = 1, index, nnodes;

	dir = gfsp_node_path(pattern);
	rc = dir == NULL ? gfsp_error_set(err, GFSP_ENOMEM, "out of memory") :
	    gfsp_tier_scan(dir, &c->tier, &c->ntier, err);
	if (rc == GFSP_EACCES) {
		/* someone else's directory: read from the sources instead */
		gfsp_log_warn("local tier not used: %s", err->msg);
		gfsp_error_clear(err);
		rc = 0;
	}
	rc = gfsp_agree(c->comm, rc, err);
	if (rc == 0)
		rc = gfsp_node_comm(c->comm, &node, &index, &nnodes, err);
	if (rc == 0) {
		MPI_Comm_rank(node, &nrank);
		MPI_Comm_size(node, &nsize);
		rc = publish_tier(c, only, nrank, nsize, err);
	}
	if (node != MPI_COMM_NULL)
		MPI_Comm_free(&node);
	if (rc == 0 && c->ntier > 0)
		gfsp_log_verbose("local tier '%s': %zu files, %llu blocks "
		    "published by this rank", dir, c->ntier,
		    (unsigned long long)c->st.published);
	free(dir);
	return gfsp_agree(c->comm, rc, err);
}

const char *
gfsp_cache_transport(const struct gfsp_cache *c)
{
	return c->os->name;
}

uint64_t
gfsp_cache_block_size(const struct gfsp_cache *c)
{
	return c->bsize;
}

MPI_Comm
gfsp_cache_comm(const struct gfsp_cache *c)
{
	return c->comm;
}

int
gfsp_cache_open(struct gfsp_cache *c, const char *path,
		struct gfsp_cache_file **out, struct gfsp_error *err)
{
	return gfsp_cache_open_as(c, path, path, out, err);
}

int
gfsp_cache_open_as(struct gfsp_cache *c, const char *name, const char *path,
		   struct gfsp_cache_file **out, struct gfsp_error *err)
{
	struct gfsp_cache_file *f;
	size_t i;
	int rc;

	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (f == NULL || (f->path = strdup(name)) == NULL) {
		free(f);
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	f->c = c;
	pthread_mutex_lock(&c->store_mu);
	rc = gfsp_open(path, GFSP_O_RDONLY, 0, &f->fh, err);
	if (rc == 0)
		rc = gfsp_fstat(f->fh, &f->st, err);
	pthread_mutex_unlock(&c->store_mu);
	if (rc) {
		gfsp_cache_close(f);
		return rc;
	}
	f->size = f->st.size;
	/* a changed file is another file: its blocks get other ids, and
	 * the tier's copy of an older version is not its copy */
	f->key = gfsp_file_key(name, &f->st);
	for (i = 0; i < c->ntier && f->tier == NULL; i++)
		if (c->tier[i]->key == f->key &&
		    strcmp(c->tier[i]->path, name) == 0)
			f->tier = c->tier[i];
	*out = f;
	return 0;
}

const struct gfsp_stat *
gfsp_cache_file_stat(const struct gfsp_cache_file *f)
{
	return &f->st;
}

uint64_t
gfsp_cache_file_size(const struct gfsp_cache_file *f)
{
	return f->size;
}

void
gfsp_cache_close(struct gfsp_cache_file *f)
{
	struct gfsp_error e;

	if (f == NULL)
		return;
	pthread_mutex_lock(&f->c->mu);
	gfsp_pf_drain(f->c, f);
	pthread_mutex_unlock(&f->c->mu);
	if (f->fh != NULL) {
		pthread_mutex_lock(&f->c->store_mu);
		gfsp_close(f->fh, &e);
		pthread_mutex_unlock(&f->c->store_mu);
	}
	free(f->path);
	free(f);
}

/*
 * A peer did not answer in time (the transport gave it up, or it has
 * been loading a block for longer than the timeout): the piece comes
 * straight from storage, outside the cache, and so will every later
 * piece that meets that peer (the transport fails at once from now on).
 * The first such peer is remembered, and said once.
 */
static int
given_up(struct gfsp_cache_file *f, struct piece *pc, uint64_t off,
	 struct gfsp_error *err)
{
	struct gfsp_cache *c = f->c;
	size_t done = 0;
	int rc;

	gfsp_cache_note_given_up(c, err);
	gfsp_error_clear(err);
	pthread_mutex_lock(&c->store_mu);
	rc = gfsp_pread(f->fh, pc->dst, (size_t)pc->len, off, &done, err);
	pthread_mutex_unlock(&c->store_mu);
	if (rc == 0 && done < pc->len)
		rc = gfsp_error_set(err, GFSP_EIO, "'%s' changed while cached: "
		    "%zu of %llu bytes at %llu", f->path, done,
		    (unsigned long long)pc->len, (unsigned long long)off);
	if (rc == 0) {
		pc->done = 1;
		c->st.given_up_reads++;
		c->st.given_up_bytes += pc->len;
	}
	return rc;
}

const char *
gfsp_cache_gave_up(const struct gfsp_cache *c)
{
	return c->gave_up[0] ? c->gave_up : NULL;
}

int
gfsp_cache_pread(struct gfsp_cache_file *f, void *buf, size_t len,
		 uint64_t off, size_t *got, struct gfsp_error *err)
{
	struct gfsp_cache *c = f->c;
	unsigned char *dst = buf;
	uint64_t idx, in, n, blen, bid;
	struct piece pc;
	uint32_t s;
	int rc;

	*got = 0;
	pthread_mutex_lock(&c->mu);
	c->st.reads++;
	if (off >= f->size || len == 0)
		len = 0;
	else if (len > f->size - off)
		len = (size_t)(f->size - off);
	for (rc = 0; rc == 0 && *got < len; ) {
		idx = (off + *got) / c->bsize;
		in = (off + *got) % c->bsize;
		blen = gfsp_cache_block_len(f, idx);
		n = GFSP_MIN(blen - in, len - *got);
		bid = gfsp_cache_block_id(f->key, idx);
		if (idx == f->next_idx) {
			f->run++;
		} else if (idx + 1 != f->next_idx) {
			f->run = 0;
			f->pf_next = 0;
		}
		f->next_idx = idx + 1;
		gfsp_pf_queue(f, idx);
		pc.in = in;
		pc.len = n;
		pc.dst = dst + *got;
		pc.done = 0;
		gfsp_cache_busy_take(c, f, idx, bid);
		rc = gfsp_cache_acquire(f, idx, bid, blen, &pc, &s, 0, err);
		gfsp_cache_unbusy(c, bid);
		if (rc == GFSP_ENET)
			rc = given_up(f, &pc, idx * c->bsize + in, err);
		if (rc == 0 && !pc.done)
			memcpy(pc.dst, data_of(c, s) + in, (size_t)n);
		if (rc == 0)
			*got += (size_t)n;
	}
	if (rc == 0)
		c->st.bytes += len;
	pthread_mutex_unlock(&c->mu);
	return rc;
}
