/*
 * cache.h - the cooperative cache ("Anco": Arai, Ishikawa and Hori,
 * "Lightweight cooperative caching for RDMA clusters"): every rank's cache
 * memory is one global cache of file blocks, a block is read from shared
 * storage about once per group, and the other ranks copy it from each
 * other with one-sided transfers that never interrupt the owner's CPU
 * (onesided.h).  The cache wing (libcore/cache/) also holds the node-local
 * tier (tier.h) and cache-warm (warm.c).  Uses base, store and split; no
 * other wing of its level.  Included by libcore/cache/, cmd/, preload/,
 * tests/ and bench/.
 *
 * Each rank's window holds (cache.c has the exact layout):
 *
 *   slots    [nslots] { block id, acquisition token }
 *   repdir   its share of the representative directory: rows of G cells
 *            (block b's row lives on rank b mod P), a cell saying where
 *            group g has b: LOADED(rank, slot), LOADING(rank, slot) or
 *            INVALID
 *   altdir   its share of its group's alternative directory: cells
 *            (rank, slot) of a group member holding b (lossy hash)
 *   data     [nslots] blocks
 *
 * Groups are rank mod G.  A read of block b: own slot (hit), else the row
 * of b: if group g's cell is LOADED, copy from a random LOADED location of
 * any group; if LOADING, wait; if INVALID, claim the cell with
 * compare-and-swap (so at most one rank per group reads b from shared
 * storage at a time; the paper accepts a race here), copy from another
 * group or read the storage, mark it LOADED.  Every remote copy checks the
 * source slot's block id and token before and after: a block replaced
 * during the copy is detected and fetched again, never returned.
 * Replacement: a general LRU of this rank's own accesses plus a FIFO of
 * singlets (blocks no one else holds) of at most singlet_ratio of the
 * slots.
 *
 * On a transport that takes operations from several threads (tcp), a
 * rank reading a file in order has threads of the cache fetch the next
 * blocks meanwhile (cache.c, "read-ahead"), leaving a block no one holds
 * yet to the group member whose turn it is to load it (i mod the group's
 * size): ranks reading in step then share the storage reads and the
 * serving of their blocks, every link busy at once.
 *
 * With a node-local tier (cache-warm, tier.h), create loads the blocks the
 * node's tier holds into the node's ranks' slots and publishes them in
 * the directories; a miss then reads the tier first, peers next, shared
 * storage last.
 *
 * Blocks are named by a 64-bit id from the file's identity (path, size,
 * modification and change times to the nanosecond, inode, and on Gfarm
 * the generation: the same on every node) and the block index: a file
 * that changed is another file, never served stale.
 */
#ifndef GFSP_CACHE_H
#define GFSP_CACHE_H

#include <stdint.h>
#include <stdio.h>
#include <mpi.h>

#include "gfsplit.h"
#include "store.h"

#define GFSP_CACHE_BLOCK_DEFAULT	((uint64_t)1 << 20)
#define GFSP_CACHE_SIZE_DEFAULT		((uint64_t)256 << 20)
#define GFSP_CACHE_RATIO_DEFAULT	0.5

struct gfsp_cache_opts {
	uint64_t block_size;	/* 0: GFSP_CACHE_BLOCK_DEFAULT */
	uint64_t cache_size;	/* per rank, bytes; 0: the default */
	int groups;		/* G, 1 .. nprocs; 0: 1 */
	double singlet_ratio;	/* 0 .. 1; < 0: the default (0.5) */
	const char *transport;	/* "auto" (NULL), "mpi", "verbs" */
	/* the node-local tier (tier.h; "%h": the node's name), NULL: none.
	 * Its warmed blocks are published at create, and a miss reads the
	 * tier before peers and shared storage. */
	const char *local_dir;
	/* publish only the tier's files whose paths match these patterns
	 * (gfsp_path_matches; NULL: every file the tier holds) */
	const char *local_only;
	/* blocks a rank reading a file in order has on their way ahead of
	 * it, fetched by threads of the cache so that its copies from
	 * several peers and its reads from storage overlap; on a transport
	 * that takes operations from several threads ("tcp") only.  0:
	 * GFSPLIT_CACHE_READAHEAD's (0 there: none), else 16; < 0: none.
	 * At most a quarter of the cache's blocks. */
	int readahead;
};

struct gfsp_cache_stats {
	uint64_t reads;		/* gfsp_cache_pread calls */
	uint64_t bytes;		/* bytes they returned */
	uint64_t hits;		/* blocks found in this rank's own slots */
	uint64_t peer_copies;	/* blocks copied from another rank */
	uint64_t peer_bytes;
	uint64_t storage_reads;	/* blocks read from shared storage */
	uint64_t storage_bytes;
	uint64_t retries;	/* copies that failed the id/token check */
	uint64_t waits;		/* times another rank of the group was loading */
	uint64_t evict_general;	/* blocks dropped from the LRU */
	uint64_t evict_singlet;	/* blocks dropped from the singlet FIFO */
	uint64_t to_singlet;	/* LRU victims kept as singlets */
	uint64_t tier_reads;	/* blocks read from the node-local tier */
	uint64_t tier_bytes;
	uint64_t published;	/* tier blocks loaded and published at create */
	/* mapped transport (shm): reads served straight from a peer's slot,
	 * the bytes wanted and no more, the block left where it was */
	uint64_t peer_pieces;
	uint64_t peer_piece_bytes;
	/* reads of blocks a peer that stopped answering (onesided_tcp.c's
	 * timeout, GFSP_ENET) was part of: served from storage instead */
	uint64_t given_up_reads;
	uint64_t given_up_bytes;
	/* blocks the read-ahead threads brought into this rank's slots
	 * (the reader then finds them there: hits) */
	uint64_t readahead;
	/* gfsp_cache_stats_all only: the most reads from shared storage of
	 * any one block, summed over all ranks */
	uint64_t max_storage_reads_per_block;
};

struct gfsp_cache;
struct gfsp_cache_file;

/*
 * Collective over comm: the cache of every rank, `cache_size` bytes of
 * blocks each plus the directories.  Every rank returns the same verdict.
 */
int gfsp_cache_create(MPI_Comm comm, const struct gfsp_cache_opts *opts,
		     struct gfsp_cache **out, struct gfsp_error *err);

/* Collective: waits until every rank is done (its blocks may still be
 * copied by others until then), then frees everything. */
void gfsp_cache_destroy(struct gfsp_cache *c);

/* The transport in use ("mpi", "tcp", "verbs"), the block size, the group. */
const char *gfsp_cache_transport(const struct gfsp_cache *c);
/* NULL, or why this rank gave up on a peer (the first one: "one-sided get
 * from rank 3 (tcp, node n2 at ...): no answer within 10 s"); the ranks
 * may then disagree on who is alive, and the job can only end. */
const char *gfsp_cache_gave_up(const struct gfsp_cache *c);
uint64_t gfsp_cache_block_size(const struct gfsp_cache *c);
MPI_Comm gfsp_cache_comm(const struct gfsp_cache *c);

/*
 * Local: open a file (POSIX path or gfarm:// URL) to read through the
 * cache.  Its identity is taken now: if the file changes later, its old
 * blocks are another file's and are never returned for it.
 */
int gfsp_cache_open(struct gfsp_cache *c, const char *path,
		   struct gfsp_cache_file **out, struct gfsp_error *err);
/*
 * The same for a file another open already holds: `name` is the file's
 * name on every rank (its blocks' ids and its tier copy go by it), `path`
 * what to open, a name that cannot lead anywhere else
 * ("/proc/self/fd/7": the very file of descriptor 7).
 */
int gfsp_cache_open_as(struct gfsp_cache *c, const char *name,
		      const char *path, struct gfsp_cache_file **out,
		      struct gfsp_error *err);
uint64_t gfsp_cache_file_size(const struct gfsp_cache_file *f);
/* Its identity as taken at open (gfsp_file_key of it is the file's key). */
const struct gfsp_stat *gfsp_cache_file_stat(const struct gfsp_cache_file *f);
void gfsp_cache_close(struct gfsp_cache_file *f);

/*
 * Local (one-sided underneath): read len bytes at off, through the cache.
 * *got is short only at the end of the file.
 */
int gfsp_cache_pread(struct gfsp_cache_file *f, void *buf, size_t len,
		    uint64_t off, size_t *got, struct gfsp_error *err);

/* This rank's counters. */
void gfsp_cache_stats(const struct gfsp_cache *c, struct gfsp_cache_stats *s);

/*
 * Collective: the counters summed over all ranks (max_storage_reads_per
 * _block included), and every rank's own in mine[] on rank 0 (NULL
 * elsewhere, or if not wanted).
 */
int gfsp_cache_stats_all(struct gfsp_cache *c, struct gfsp_cache_stats *sum,
			struct gfsp_cache_stats *mine, struct gfsp_error *err);

/* The counters as one JSON object (json-c's, to put) / printed / as text
 * lines, to fp. */
struct json_object *gfsp_cache_stats_object(const struct gfsp_cache_stats *s);
void gfsp_cache_stats_json(FILE *fp, const struct gfsp_cache_stats *s);
void gfsp_cache_stats_text(FILE *fp, const char *who,
			   const struct gfsp_cache_stats *s);

/*
 * Warming the node-local tiers (cache-warm; warm.c).  Collective over the
 * cache's communicator: the blocks of each file that each node keeps
 * (keep: every block, or block j on node j mod nodes) are read through
 * the cache and written to the node's tier o->local_dir ("%h": the
 * node's name), unless the node's tier already holds them (o->force:
 * warm again).  res[i]: file i's size, the bytes written to all tiers,
 * the nodes that already held it.  *nnodes: the nodes of the job.
 */
enum gfsp_warm_keep { GFSP_WARM_ALL, GFSP_WARM_PART };

struct gfsp_warm_opts {
	const char *local_dir;
	enum gfsp_warm_keep keep;
	int force;
};

struct gfsp_warm_result {
	uint64_t size;
	uint64_t bytes_kept;
	int nodes_already_warm;
};

int gfsp_cache_warm(struct gfsp_cache *c, const struct gfsp_warm_opts *o,
		   int nfiles, char **files, struct gfsp_warm_result *res,
		   int *nnodes, struct gfsp_error *err);

/* The default tier directory: $GFSPLIT_CACHE_LOCAL_DIR, else
 * /dev/shm/gfsplit-cache-UID (static storage). */
const char *gfsp_cache_local_dir_default(void);

/*
 * Tests only.  The hook runs in every remote copy after the data arrived
 * and before the check, with the source; retoken gives a rank's slot a
 * new acquisition token, as replacing its block by the same block would.
 */
extern void (*gfsp_cache_test_hook)(int rank, uint32_t slot);
int gfsp_cache_test_retoken(struct gfsp_cache *c, int rank, uint32_t slot,
			   struct gfsp_error *err);

#endif /* GFSP_CACHE_H */
