/*
 * stage.h - the stage wing (libcore/stage/): moving job data between
 * shared and node-local storage (stage-in, stage-out, the asynchronous
 * mover).  Uses base, store and split (dst.h) only.  The commands' glue
 * is cmd/stage-common/.  Included by cmd/, libcore/stage/ and tests/.
 *
 * Three layers, each usable without the next:
 *
 *   walk.c     what to move: a list of entries (files, directories,
 *              symbolic links, second names of hard-linked files), from
 *              source trees or a manifest, with the source's identity
 *   journal.c  the state directory on the node-local side: what was
 *              installed (so a re-run skips it) and which chunks of an
 *              unfinished file are already in its temporary file (so an
 *              interrupted run resumes without recopying them)
 *   xfer.c     the transfer engine: a rank's list of pieces (a file, or a
 *              range of a large one) copied through the double-buffered
 *              pipeline (pipe.h), hashed, optionally zstd-compressed or
 *              decompressed (zfile.h), rate-limited, journalled, written
 *              to a temporary sibling and installed only when complete;
 *              xfer_resume.c picks up after an earlier run, xfer_tree.c
 *              makes directories and links
 *   stage.c    the collective commands on top: planning (stage_plan.c),
 *              forwarding of files every node needs, per-file failures,
 *              --delete (stage_delete.c), the summary
 *
 * Nothing appears under its final name before it is whole: a file is
 * written to ".NAME.gfsplit-stage.KEY.NONCE" in its destination directory
 * (KEY: a hash of the source's path; NONCE: the transfer's random number,
 * so no one can plant the name first; a resumed run finds the file through
 * the journal), created O_EXCL, then synced, given the source's mode and
 * times on its descriptor, and renamed into place.  Destination roots are
 * confined (gfsp_confine): no symbolic link below them is followed.
 */
#ifndef GFSP_STAGE_H
#define GFSP_STAGE_H

#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

#include "gfsplit.h"
#include "store.h"

struct gfsp_progress;

#define GFSP_STATE_DIR		".gfsplit-stage"	/* in the local root */
#define GFSP_STAGE_TMP_TAG	".gfsplit-stage."	/* in temporary names */
#define GFSP_STAGE_CHUNK_DEFAULT	(8u << 20)	/* bytes per chunk */

/* ------------------------------------------------------ entries (walk.c) */

enum gfsp_sf_type {
	GFSP_SF_FILE = 0,
	GFSP_SF_DIR,
	GFSP_SF_SYMLINK,
	GFSP_SF_HARDLINK	/* a second name of an earlier FILE entry */
};

struct gfsp_sfile {
	char *src;		/* the source, as a full store path */
	char *rel;		/* where it goes, under the destination root */
	char *link;		/* SYMLINK: its target; HARDLINK: the rel of
				 * the FILE entry it is another name of */
	int type;		/* enum gfsp_sf_type */
	int node;		/* the node that writes it; -1: every node */
	uint32_t tree;		/* which source argument it came from */
	int gfsz;		/* a large file that starts with a gfsz header
				 * (probed once, by the rank that lists) */
	struct gfsp_stat st;	/* the source when listed (not following a
				 * last symbolic link) */
};

struct gfsp_flist {
	struct gfsp_sfile *v;
	size_t n, cap;
	size_t special;		/* FIFOs, sockets, devices met: left out
				 * (the lister's list only) */
	/* trees added as "DIR/" (their contents), and the last one's stat:
	 * with exactly one, what the destination root is a copy of */
	size_t nroots;
	struct gfsp_stat root;
};

/*
 * Add SRC to the list, the way rsync names things: "dir" puts the
 * directory itself at "dir" under the destination (rel = its last
 * component), "dir/" puts its contents (rel = the names inside it).  A
 * tree is walked without following symbolic links; files with several
 * links that the walk meets more than once become HARDLINK entries.
 * Entries with names of ours (gfsp_stage_internal_name) are left out: a
 * GFSP_STATE_DIR at the top of a "dir/" tree quietly (the tree's own
 * state), any other with a warning.  A "dir" so named is refused.  Every
 * entry is listed with its parents before it.
 */
int gfsp_flist_add_tree(struct gfsp_flist *l, const char *src,
		       struct gfsp_error *err);

/*
 * Add the pairs of a manifest: one "SRC DST" pair a line, the two fields
 * separated by blanks; a backslash escapes the next character (so "\ "
 * is a space in a name, "\n" a newline, "\\" a backslash); empty lines and
 * lines starting with '#' are skipped.  DST is relative to the destination
 * root: absolute names, names with a ".." component and names that name
 * or enter one of ours (gfsp_stage_check_dst) are rejected, naming the
 * manifest and the line.  SRC may be a file or a directory
 * (copied whole, to DST).
 */
int gfsp_flist_add_manifest(struct gfsp_flist *l, const char *manifest,
			   struct gfsp_error *err);

/* Sort by rel (parents before children) and reject two entries with the
 * same rel, naming both sources. */
int gfsp_flist_finish(struct gfsp_flist *l, struct gfsp_error *err);

void gfsp_flist_free(struct gfsp_flist *l);

/* The list as bytes, and back (for MPI_Bcast). */
int gfsp_flist_pack(const struct gfsp_flist *l, unsigned char **buf,
		   size_t *len, struct gfsp_error *err);
int gfsp_flist_unpack(struct gfsp_flist *l, const unsigned char *buf,
		     size_t len, struct gfsp_error *err);

/* Collective: rank `root`'s list to every rank of comm. */
int gfsp_flist_bcast(MPI_Comm comm, int root, struct gfsp_flist *l,
		    struct gfsp_error *err);

/* "dir/.NAME.gfsplit-stage.KEY.NONCE" for the final path, the source (KEY:
 * a hash of its path) and a transfer's random nonce (malloc'd, NULL when
 * out of memory). */
char *gfsp_stage_tmp_name(const char *path, const struct gfsp_sfile *f,
			 uint64_t nonce);


/* 1 if NAME (one component) is one of ours: the state directory or a
 * temporary file of a transfer. */
int gfsp_stage_internal_name(const char *name);

/*
 * A destination (a manifest's DST, DEST itself) must neither name nor
 * enter one of ours: staged over ".gfsplit-stage/index" a file would
 * replace the state, and one named as a temporary would be swept as a
 * killed transfer's leftover.  0, or GFSP_EINVAL naming path and the
 * component; what: a prefix for the message ("MANIFEST:LINE: ", or "").
 */
int gfsp_stage_check_dst(const char *what, const char *path,
			struct gfsp_error *err);

/* ------------------------------------------------- the state (journal.c) */

/*
 * The state directory, GFSP_STATE_DIR in the local root of a transfer
 * (DEST of stage-in, SRC of stage-out), one per node:
 *
 *   lock               flock(2)'ed by a running transfer
 *   running            there while a transfer holds the lock, removed
 *                      when it ends cleanly: found at open, the last
 *                      one was killed
 *   index              JSON lines: the files installed by earlier runs
 *   journal.PID.R      JSON lines appended by the rank R of a run
 *
 * A line is one record:
 *   {"done":REL,"key":K,"size":S,"mtime":T,"mtime_ns":N,"hash":H,
 *    "dino":I,"dmtime_ns":M,"dctime":C,"dctime_ns":CN}
 *       REL was installed from the source version K, with checksum H; the
 *       installed file had inode I, mtime T.M and ctime C.CN then (ctime,
 *       which no one can set back, tells a file changed in place)
 *   {"chunk":REL,"key":K,"tmp":NAME,"off":O,"len":L,"zoff":ZO,"zlen":ZL,
 *    "zhash":H,"seg":[h,...]}
 *       raw bytes [O, O+L) of source version K are in the temporary file
 *       NAME (compressed: the frame at [ZO, ZO+ZL)); seg: XXH3 of each
 *       1 MiB segment.  Written after the bytes.
 */
struct gfsp_state;

/* Open (creating it) the state directory `dir`, lock it, load what it
 * holds.  rank: the writer's number, for this run's journal name.  lock:
 * take the lock (one rank of a node). */
int gfsp_state_open(const char *dir, int rank, int lock,
		   struct gfsp_state **out, struct gfsp_error *err);
/* The same for the state directory name in the directory pfd (dir: its
 * whole path, for messages): the one below a confined root, held open,
 * whatever the root's name leads to now (gfsp_confined_fd). */
int gfsp_state_openat(int pfd, const char *name, const char *dir, int rank,
		     int lock, struct gfsp_state **out,
		     struct gfsp_error *err);

struct gfsp_done {
	int64_t t;		/* when it was recorded (wall clock, ns) */
	uint64_t key, size, hash, dino;
	int64_t mtime, dctime;
	uint64_t mtime_ns, dmtime_ns, dctime_ns;
};

/* The installed record of rel, or NULL. */
const struct gfsp_done *gfsp_state_done(struct gfsp_state *s, const char *rel);

struct gfsp_chunkrec {
	int64_t t;		/* when it was recorded (wall clock, ns) */
	uint64_t off, len, zoff, zlen;
	uint64_t zhash;		/* compressed: XXH3 of the raw chunk */
	uint64_t nseg;
	uint64_t *seg;
};

/* The chunks of rel already in its temporary file, from any version of
 * the source: how many, sorted by off (the same off: older first),
 * numbered from *first on for gfsp_state_chunk (which also gives the
 * temporary file's name and the source version, key). */
size_t gfsp_state_chunks(struct gfsp_state *s, const char *rel, size_t *first);
const struct gfsp_chunkrec *gfsp_state_chunk(struct gfsp_state *s, size_t i,
					   const char **tmp, uint64_t *key);

/* 1: the last transfer that held this state was killed (it may have left
 * temporary files that no record names). */
int gfsp_state_interrupted(const struct gfsp_state *s);
/* Make the state directory, as it was opened and checked (its held
 * descriptor, never its name again), the process's working directory */
int gfsp_state_fchdir(const struct gfsp_state *s, struct gfsp_error *err);
/* 1: a chunk record names the temporary file tmp (a path). */
int gfsp_state_tmp_used(const struct gfsp_state *s, const char *tmp);

/* Read the records again (what this process and others appended since). */
int gfsp_state_reload(struct gfsp_state *s, struct gfsp_error *err);

int gfsp_state_add_chunk(struct gfsp_state *s, const char *rel, uint64_t key,
			const char *tmp, const struct gfsp_chunkrec *c,
			struct gfsp_error *err);
int gfsp_state_add_done(struct gfsp_state *s, const char *rel,
		       const struct gfsp_done *d, struct gfsp_error *err);

/*
 * After a run: rewrite the index with every installed file (this run's
 * records over the older ones), keep the chunk records of files still not
 * installed, and remove the journals that are now in it.  One rank of the
 * node, after all its ranks are done writing records.
 */
int gfsp_state_compact(struct gfsp_state *s, struct gfsp_error *err);

void gfsp_state_close(struct gfsp_state *s);

/* ------------------------------------------------- the engine (xfer*.c) */

struct gfsp_xfer_opts {
	uint64_t chunk;		/* bytes per chunk, a multiple of 1 MiB */
	int compress;		/* store the destination zstd-compressed */
	int level;		/* zstd level (0: default) */
	int adapt;		/* level from the measured rates, as zstd
				 * --adapt (--compress=auto); level unused */
	int workers;		/* zstd worker threads (0: none) */
	int checksum;		/* verify recorded checksums on resume and
				 * when deciding a file is already there */
	int raw;		/* copy gfsz sources as they are */
	int sparse;		/* a sparse source's zeros become holes */
	uint64_t bwlimit;	/* bytes per second for this rank, 0: none */
	int sync;		/* fsync each file before installing it */
	uint64_t nonce;		/* of new temporary names: random, the same
				 * on every rank of the transfer */
};

/*
 * One piece of work: bytes [off, off + len) of file `file` (a whole file
 * when off == 0 and len == its size).  A piece whose bytes every node
 * needs is read by one rank (`reader`, a rank of bcomm) and forwarded to
 * the others of bcomm, which write it to their own node.
 */
struct gfsp_piece {
	uint32_t file;
	uint32_t npieces;	/* pieces of this file (1: whole) */
	int precopy;		/* a file still being written: its whole
				 * chunks into the temporary file and the
				 * journal, not installed (the mover) */
	uint64_t off, len;
	MPI_Comm bcomm;		/* MPI_COMM_NULL: read and written here */
	int reader;		/* rank in bcomm that reads */
};

/* What became of one file on this rank. */
struct gfsp_fresult {
	int rc;			/* 0 or the GFSP_E* code of its failure */
	char *msg;		/* the failure, naming the file */
	uint64_t hash;		/* checksum of the raw bytes */
	uint64_t stored;	/* bytes written (compressed: stored size) */
	uint64_t *seg;		/* segment hashes, while pieces gather */
	uint64_t nseg;
	int installed;		/* 1: installed by this rank */
	int skipped;		/* already there, identical */
	uint64_t resumed;	/* bytes found done in a temporary file */
};

struct gfsp_xfer_stats {
	uint64_t bytes_read;	/* from sources */
	uint64_t bytes_written;	/* to destinations */
	uint64_t bytes_resumed;	/* found done in a temporary file */
	uint64_t bytes_forwarded;	/* received from another rank */
	uint64_t bytes_holes;	/* of bytes_written: left holes (sparse) */
	uint64_t raw_bytes;	/* content moved, uncompressed */
	uint64_t files;		/* installed */
};

struct gfsp_xfer;

/*
 * A transfer of the entries `files` to the destination root `dst` with
 * the state `st` (may be NULL: no journal).  res: one per file, filled by
 * gfsp_xfer_run and gfsp_xfer_finish.
 */
int gfsp_xfer_new(const struct gfsp_xfer_opts *o, const struct gfsp_flist *files,
		 const char *dst, struct gfsp_state *st,
		 struct gfsp_fresult *res, struct gfsp_progress *prog,
		 struct gfsp_xfer **out, struct gfsp_error *err);

/*
 * Copy this rank's pieces, in order.  Whole files are installed as soon
 * as they are complete; pieces of a split file are left in its temporary
 * file for gfsp_xfer_finish.  A file that fails is recorded in res and
 * the others go on; the return is nonzero only when the transfer cannot
 * go on at all (out of memory, MPI).  Collective over the bcomm of every
 * forwarded piece: the ranks of a bcomm must list its pieces in the same
 * order.
 */
int gfsp_xfer_run(struct gfsp_xfer *x, const struct gfsp_piece *p, size_t n,
		 struct gfsp_error *err);

/* Install split file `file` whose pieces are all written and whose
 * segment hashes are res[file].seg (in order). */
int gfsp_xfer_finish(struct gfsp_xfer *x, uint32_t file);

/* Make the directory, symbolic link or hard link `file` (after the files
 * it needs are in place); directories get their mode and times in
 * gfsp_xfer_dir_times, deepest first, once everything under them is. */
int gfsp_xfer_make(struct gfsp_xfer *x, uint32_t file);
void gfsp_xfer_dir_times(struct gfsp_xfer *x);

/* Is `file` already at its destination, identical: a regular file of the
 * same size and mtime, and either the state's record of it matches both
 * sides, or (checksum) the contents hash alike. */
int gfsp_xfer_present(struct gfsp_xfer *x, uint32_t file);

/* Count this rank's bytes into prog from now on (NULL: none). */
void gfsp_xfer_set_progress(struct gfsp_xfer *x, struct gfsp_progress *prog);

const struct gfsp_xfer_stats *gfsp_xfer_stats(const struct gfsp_xfer *x);
void gfsp_xfer_free(struct gfsp_xfer *x);

/*
 * After a killed transfer (gfsp_state_interrupted): remove from the tree
 * below root the temporary files that no record of st names, which a
 * later run would neither resume nor reuse (a record's file is resumed,
 * or dropped once its file is installed).  Only regular files of this
 * user's and links are removed, never followed.  Returns how many.
 */
size_t gfsp_xfer_sweep(const char *root, struct gfsp_state *st);

/* The destination path of an entry (malloc'd). */
char *gfsp_xfer_dst_path(const struct gfsp_xfer *x, uint32_t file);

/* ------------------------------------ asynchronous stage-out (mover.c) */

struct gfsp_mover_opts {
	const char *src;	/* the node's SRC, absolute */
	const char *dst;	/* the node's destination root */
	const char *dst_root;	/* DEST of DEST/NODE (or dst): nothing
				 * below it is followed */
	const char *state_dir;	/* absolute */
	struct gfsp_xfer_opts x;
	double interval;	/* seconds between periodic passes; also how
				 * long a file must rest to count as written */
	const char *cpus;	/* "0,2-3": the mover's cores, or NULL */
};

/* The mover itself (in its own process, no MPI): until a wait request
 * or SIGTERM. */
int gfsp_mover_run(const struct gfsp_mover_opts *o, struct gfsp_error *err);

/* Start a mover for state directory `state` running argv (this program,
 * which sees GFSPLIT_STAGE_MOVER, _SRC, _DST and _ROOT); returns when it
 * answers, its process id (a child of this process) in *pid.
 * GFSP_EEXIST if one already runs there. */
int gfsp_mover_spawn(char **argv, const char *state, const char *src,
		    const char *dst, const char *dst_root, pid_t *pid,
		    struct gfsp_error *err);

/* Ask the mover of `state`: "status", "flush" or "wait"; its JSON answer
 * in *reply (caller puts it).  GFSP_ENOENT when none runs there. */
int gfsp_mover_request(const char *state, const char *req,
		      json_object **reply, struct gfsp_error *err);

/* The state directories of this user's movers on node `node`: those that
 * run, and those that stopped or were killed before a wait saw all their
 * files out (they no longer answer).  Free with gfsp_strv_free. */
int gfsp_mover_list(const char *node, char ***states, size_t *n,
		   struct gfsp_error *err);
/* A mover of `state` that does not answer: *reply, as its status would
 * be, "running": false, with "unsaved" (the files of its SRC not on
 * shared storage as they are now) and "error" (what it left and the
 * stage-out that finishes it); NULL when it left nothing unsaved.
 * GFSP_ENOENT when no mover ever ran there. */
int gfsp_mover_gone(const char *state, json_object **reply,
		   struct gfsp_error *err);
/* Unlist the mover of `state` on `node` if it does not answer (it is gone
 * and left nothing, or a stage-out finished its work). */
void gfsp_mover_forget(const char *node, const char *state);
const char *gfsp_mover_registry(void);

/* ------------------------------------------ the commands (stage*.c) */

enum gfsp_stage_way { GFSP_STAGE_IN = 0, GFSP_STAGE_OUT };

struct gfsp_stage_opts {
	int way;		/* enum gfsp_stage_way */
	int nsrc;
	char **src;		/* in: SRC...; out: the one SRC (may hold %h) */
	const char *manifest;	/* in: "SRC DST" pairs, or NULL */
	const char *dst;	/* in: node-local DEST (may hold %h) */
	int scatter;		/* in: each file to one node only */
	int merge;		/* out: one tree, not DEST/NODE/ */
	const char *state_dir;	/* NULL: GFSP_STATE_DIR in the local root */
	int delete;		/* in: remove what the sources no longer hold
				 * from the directories staged */
	int dry_run;
	struct gfsp_xfer_opts x;
};

/* Rank 0's summary of a run. */
struct gfsp_stage_result {
	int nodes, ranks;
	uint64_t files;		/* regular files installed (node copies) */
	uint64_t skipped;	/* already there */
	uint64_t links, dirs;	/* made */
	uint64_t failed;	/* entries that failed on some node */
	uint64_t special;	/* FIFOs, sockets, devices: not staged */
	uint64_t deleted;	/* --delete: entries removed (dry run: that
				 * would be), summed over nodes */
	uint64_t listed;	/* entries listed (summed over nodes for out) */
	uint64_t planned_bytes;	/* bytes to copy, before skipping */
	struct gfsp_xfer_stats sum;	/* summed over ranks */
	double seconds;
	long max_rss_kib;
	double cpu_seconds;
	json_object *failures;	/* [{"path","node","error"}] */
	json_object *plan;	/* dry run: [{"rank","node","bytes","pieces"}] */
};

/*
 * Collective: stage in or out as o says.  Returns 0 when every entry is
 * in place; GFSP_EIO with res->failures naming each entry that is not
 * (the others are in place); another code when nothing could be done
 * (res->failures NULL).  Every rank returns the same code.
 */
int gfsp_stage(MPI_Comm comm, const struct gfsp_stage_opts *o,
	      struct gfsp_stage_result *res, struct gfsp_error *err);

void gfsp_stage_result_free(struct gfsp_stage_result *r);

#endif /* GFSP_STAGE_H */
