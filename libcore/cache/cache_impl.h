/*
 * cache_impl.h - the inside of the cooperative cache: struct gfsp_cache,
 * its open files, and what the cache (cache.c), its making (cache_setup.c),
 * its statistics (cache_stats.c) and its read-ahead threads
 * (cache_readahead.c) call of each other.  Included by libcore/cache/ only.
 */
#ifndef GFSP_CACHE_IMPL_H
#define GFSP_CACHE_IMPL_H

#include <pthread.h>
#include <stdint.h>

#include "cache.h"
#include "core.h"
#include "onesided.h"
#include "store.h"
#include "tier.h"

#define ST_INVALID	0
#define ST_LOADING	1
#define ST_LOADED	2

#define RANK_BITS	20
#define SLOT_BITS	22
#define TAG_BITS	20
#define MAX_RANKS	((uint64_t)1 << RANK_BITS)
#define MAX_SLOTS	((uint64_t)1 << SLOT_BITS)

#define NONE		UINT32_MAX	/* no slot */
#define RA_BLOCKS	8		/* read-ahead hint, in blocks */
#define PF_DEFAULT	16		/* read-ahead of the threads, blocks */
#define PF_THREADS	8		/* at most this many of them */
#define PF_QMAX		64		/* blocks queued for them */
#define TURN_WAIT_S	5		/* for the rank whose turn it is */
#define WAIT_LIMIT_S	60		/* a LOADING cell this old is an error */

enum where { W_FREE, W_GENERAL, W_SINGLET };

struct gfsp_cache {
	MPI_Comm comm;
	int rank, nprocs, groups, group, gsize;
	uint64_t bsize, nslots, rd_rows, ad_rows;
	uint64_t rd_off, ad_off, data_off;
	uint64_t max_singlets;
	const struct gfsp_os_ops *os;
	struct gfsp_os *w;
	unsigned char *base;		/* this rank's window */
	uint64_t token;			/* last acquisition token given */
	uint64_t rnd;			/* xorshift state for source choice */

	/* local bookkeeping: never read by peers */
	uint64_t *bid;			/* [nslots] mirror of the slot ids */
	uint64_t *tok;			/* [nslots] and of their tokens */
	uint32_t *prev, *next;		/* [nslots + 2] lists, 2 sentinels */
	unsigned char *where;		/* [nslots] enum where */
	uint32_t *freel;		/* [nslots] free slot stack */
	uint32_t nfree, nsinglet;
	uint32_t *index;		/* bid -> slot, open addressing */
	uint64_t index_mask;

	/* the node-local tier: its valid entries, sorted by key */
	struct gfsp_tier_entry **tier;
	size_t ntier;

	/* blocks this rank read from storage, for max_storage_reads_per_
	 * block (grown as needed) */
	uint64_t *sread;
	size_t nsread, capsread;

	struct gfsp_cache_stats st;
	double timeout;			/* --timeout, GFSPLIT_TIMEOUT; 0: none */
	char gave_up[GFSP_ERRMSG_MAX];	/* "": no peer given up */

	/*
	 * Read-ahead threads, on a transport that takes operations from
	 * several threads at once (onesided.h): they acquire the blocks
	 * after the one a rank reading in order is at, so that its copies
	 * from several peers and its share of the storage reads overlap.
	 * `mu` covers everything above; a thread lets go of it only while
	 * it moves a block's bytes (a get, a storage read) or sleeps, and
	 * the slot it fills is its own meanwhile (in no list, no index).
	 * `busy` holds the blocks being acquired, by any thread, so that no
	 * two threads of the rank acquire one block at once.
	 */
	pthread_mutex_t mu;
	pthread_mutex_t store_mu;	/* the storage, one call at a time */
	pthread_cond_t pf_cv;		/* a job, a block done, the end */
	pthread_t pf_thr[PF_THREADS];
	int npf, pf_on, pf_stop;	/* threads wanted, started; stop */
	int pf_draining;		/* someone waits for them to finish */
	unsigned pf_depth;		/* blocks ahead */
	struct pf_job {
		struct gfsp_cache_file *f;
		uint64_t idx;
	} pf_q[PF_QMAX];
	unsigned pf_head, pf_n;
	struct pf_job busy[PF_THREADS + 1];
	unsigned nbusy;
};

struct gfsp_cache_file {
	struct gfsp_cache *c;
	char *path;
	struct gfsp_file *fh;
	struct gfsp_stat st;		/* at open */
	uint64_t size;
	uint64_t key;			/* gfsp_file_key */
	struct gfsp_tier_entry *tier;	/* this version in the local tier */
	/* read-ahead: this rank's reads of it, block by block */
	uint64_t next_idx;		/* the block after the last one read */
	unsigned run;			/* blocks read in order up to it */
	uint64_t ra_end;		/* hinted up to here (bytes) */
	uint64_t pf_next;		/* queued for the threads up to here */
};

/* list sentinels */
#define GEN(c)	((uint32_t)(c)->nslots)
#define SING(c)	((uint32_t)(c)->nslots + 1)


/*
 * What a read wants of a block: bytes [in, in + len) into dst.  On a
 * mapped transport (every peer's region in our memory) they come straight
 * from a peer that has the block LOADED: one copy, as a hit in our own
 * slots costs, where taking the whole block into a slot of ours first
 * would copy it twice (and a strided reader that uses 16 KiB of each
 * block would copy all of it).  The block stays where it is, so the
 * node's slots hold more blocks.  `done`: the bytes are in dst.
 */
struct piece {
	uint64_t in, len;
	unsigned char *dst;
	int done;
};

/* ------------------------------------------------- cache.c, for both */

/* a 64-bit mixer (the finaliser of MurmurHash3): hashes and seeds */
static inline uint64_t
mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}


/* the id of block idx of the file with identity key */
uint64_t gfsp_cache_block_id(uint64_t key, uint64_t idx);
/* the slot of ours holding block bid (*slot NONE: none) */
uint64_t gfsp_cache_index_find(const struct gfsp_cache *c, uint64_t bid,
			       uint32_t *slot);
/* Block idx (id bid, len bytes) of f into a slot of ours (*slot), or with
 * pc just the piece pc asks for; ahead: for the read-ahead. */
int gfsp_cache_acquire(struct gfsp_cache_file *f, uint64_t idx,
		       uint64_t bid, uint64_t len, struct piece *pc,
		       uint32_t *slot, int ahead, struct gfsp_error *err);
/* Collective: find this node's tier (directory pattern, files matching
 * only, NULL: all) and publish it; every rank's verdict. */
int gfsp_cache_open_tier(struct gfsp_cache *c, const char *pattern,
			 const char *only, struct gfsp_error *err);

/* ------------------------------------- cache_readahead.c, for cache.c */

void gfsp_cache_note_given_up(struct gfsp_cache *c,
			      const struct gfsp_error *err);
void gfsp_cache_busy_take(struct gfsp_cache *c, struct gfsp_cache_file *f,
			  uint64_t idx, uint64_t bid);
void gfsp_cache_unbusy(struct gfsp_cache *c, uint64_t bid);
uint64_t gfsp_cache_block_len(const struct gfsp_cache_file *f,
			      uint64_t idx);
void gfsp_pf_queue(struct gfsp_cache_file *f, uint64_t idx);
void gfsp_pf_drain(struct gfsp_cache *c, const struct gfsp_cache_file *f);
void gfsp_pf_stop(struct gfsp_cache *c);
void gfsp_pf_setup(struct gfsp_cache *c, int want);

#endif /* GFSP_CACHE_IMPL_H */
