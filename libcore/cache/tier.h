/*
 * tier.h - the node-local tier of the cooperative cache: blocks of shared
 * files kept in a directory of each node (/dev/shm, a local SSD) by
 * cache-warm, so that a job's cache starts warm.  Included by
 * libcore/cache/ only.
 *
 * A warmed file is two files in the tier directory:
 *
 *   KEY.map          JSON: the source's path and identity when warmed
 *                    (size, mtime and ctime to the nanosecond, inode,
 *                    Gfarm generation), the block size, which blocks are
 *                    present (a hex bitmap), the XXH3-64 of each block
 *                    (16 hex digits a block; 0 for an absent one,
 *                    checked before any use) and the name of the data
 *                    file
 *   KEY.NONCE.data   the present blocks at their own offsets (sparse)
 *
 * KEY is the file's identity key (gfsp_file_key, 16 hex digits): a file
 * that changed has another key, so its old entry is never found for it,
 * and the identity in the map is compared again before any use.  An entry
 * is written whole before it appears: the data under a temporary name,
 * synced, then the map under a temporary name, renamed over KEY.map (one
 * atomic step from the old entry, if any, to the new), and only then is
 * the old data file removed.
 *
 * The directory must be this user's own (0700, gfsp_private_dir): one that
 * someone else made is refused, never read or written.
 *
 * A directory name may hold "%h", which is replaced by the node's name
 * (gfsp_node_name: GFSPLIT_NODE, or MPI's processor name): one shared
 * path pattern then names each node's own directory.
 */
#ifndef GFSP_TIER_H
#define GFSP_TIER_H

#include <stdint.h>
#include <mpi.h>

#include "gfsplit.h"
#include "store.h"

struct gfsp_tier_entry {
	char *path;		/* the source file */
	struct gfsp_stat st;	/* its identity when warmed */
	uint64_t key;
	uint64_t bsize;		/* the tier's block size */
	uint64_t nblocks;	/* of the source, at bsize */
	unsigned char *have;	/* bitmap of present blocks */
	uint64_t *sum;		/* XXH3-64 of each present block */
	struct gfsp_file *data;	/* open, read only */
};

/*
 * The entry of DIR for the source `path` as st describes it now: *out is
 * NULL (and 0 returned) when there is none, or it is for another version
 * of the file.  A map that cannot be parsed is an error naming it.
 */
int gfsp_tier_find(const char *dir, const char *path,
		  const struct gfsp_stat *st, struct gfsp_tier_entry **out,
		  struct gfsp_error *err);

/*
 * Every entry of DIR whose source is unchanged (each source is stat'ed
 * now), sorted by key; stale entries are skipped (told at -v).  A DIR
 * that does not exist has none; an entry that cannot be read is warned
 * of and skipped.
 */
int gfsp_tier_scan(const char *dir, struct gfsp_tier_entry ***out,
		  size_t *n, struct gfsp_error *err);

/* All of bytes [off, off + len) of the source are present. */
int gfsp_tier_covers(const struct gfsp_tier_entry *e, uint64_t off,
		    uint64_t len);

/* Read them (gfsp_tier_covers first). */
int gfsp_tier_pread(struct gfsp_tier_entry *e, void *buf, uint64_t len,
		   uint64_t off, struct gfsp_error *err);

void gfsp_tier_free(struct gfsp_tier_entry *e);
void gfsp_tier_free_all(struct gfsp_tier_entry **v, size_t n);

/*
 * Writing an entry.  One rank of the node creates the data file
 * (gfsp_tier_begin with create = 1), then the node's ranks open it
 * (create = 0) and write blocks into it; when all are done, the creator
 * commits: the bitmap `have` names every block written.  Abort removes
 * the temporary file (creator) and frees.
 */
struct gfsp_tier_writer;

int gfsp_tier_begin(const char *dir, const char *path,
		   const struct gfsp_stat *st, uint64_t bsize, int create,
		   struct gfsp_tier_writer **out, struct gfsp_error *err);
int gfsp_tier_write(struct gfsp_tier_writer *w, uint64_t idx,
		   const void *buf, uint64_t len, struct gfsp_error *err);
int gfsp_tier_commit(struct gfsp_tier_writer *w, const unsigned char *have,
		    struct gfsp_error *err);
void gfsp_tier_abort(struct gfsp_tier_writer *w);

#endif /* GFSP_TIER_H */
