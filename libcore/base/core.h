/*
 * core.h - the base wing (libcore/base/): errors, logging, collective
 * agreement and waiting (with --timeout's watch), sizes, progress,
 * checksums and byte order, this node's identity, private directories on
 * shared machines, job usage, and the double-buffered pipeline (pipe.h).
 * The bottom of libcore: it uses no other wing (only MPI, libc, xxHash,
 * json-c).  Included by libcore/, cmd/, preload/, tests/ and bench/; not
 * installed.
 */
#ifndef GFSP_CORE_H
#define GFSP_CORE_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include "gfsplit.h"

#define GFSP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define GFSP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define GFSP_MAX(a, b) ((a) > (b) ? (a) : (b))

/* ------------------------------------------------------------ memory (mem.c) */

/* malloc for arrays and buffers that may be megabytes: aligned to `align`
 * (a power of two, at least sizeof(void *)), and from 4 MiB on to 2 MiB
 * with a transparent-huge-page hint.  Released with free(). */
void *gfsp_big_alloc(size_t bytes, size_t align);

/* The growable array: room for `n` elements of `size` bytes in *arr (any
 * T **, passed as &array), whose room is *cap elements.  When n is over
 * *cap the room doubles (at least `n`, at least 16) by realloc.  0, or
 * -1 out of memory or over SIZE_MAX bytes, *arr and *cap as they were.
 * The one way the library grows an array:
 *	if (gfsp_grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v)) != 0)
 *		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory"); */
int gfsp_grow(void *arr, size_t *cap, size_t n, size_t size);

/* A read-only mapping of [off, off + len) of the open file fd, its pages
 * read in before it returns (GFSP_EIO naming `name` if the file no longer
 * has them).  `data` is the first byte; `name` is kept, not copied. */
struct gfsp_rmap {
	const unsigned char *data;
	void *base;
	size_t span;
	const char *name;
};
int gfsp_rmap_open(int fd, uint64_t off, size_t len, const char *name,
		  struct gfsp_rmap *m, struct gfsp_error *err);
/* Unmap; a zeroed (never opened) mapping is left alone. */
void gfsp_rmap_close(struct gfsp_rmap *m);
/* 1 if pages of the mapping have vanished (its file was truncated): then
 * *err (replaced, whatever it held) says so.  For a write from it that
 * failed with EFAULT. */
int gfsp_rmap_vanished(const struct gfsp_rmap *m, struct gfsp_error *err);
/* Run fn(arg) in this thread with mapped pages that vanish (the file was
 * truncated) failing it: GFSP_EIO naming `name` instead of SIGBUS.  Only
 * for code that holds no lock while it touches a mapping: it is left
 * where the fault hit. */
int gfsp_guard(int (*fn)(void *), void *arg, const char *name,
	      struct gfsp_error *err);

/* ---------------------------------------------------------- paths (match.c) */

/* 1: path matches one of the colon-separated fnmatch(3) patterns (no
 * flags; a gfarm:// URL is one pattern although it holds a colon). */
int gfsp_path_matches(const char *patterns, const char *path);
/* The same of path as given, or of a relative one joined to the working
 * directory (a pattern of absolute paths selects "out.dat" opened in
 * them): the preload libraries' selection. */
int gfsp_path_selected(const char *patterns, const char *path);

/* ------------------------------------------------- shared machines (safe.c) */

/* A random number no one can guess (names of temporaries). */
uint64_t gfsp_random64(void);

/* path made absolute against the working directory, without resolving
 * symbolic links ("./" prefixes dropped); URLs as they are.  malloc'd,
 * NULL when out of memory or the working directory is gone. */
char *gfsp_path_abs(const char *path);

/*
 * A directory of our own on a shared machine: created 0700 when create is
 * set and it is absent; refused (GFSP_EACCES, naming the owner or the
 * mode) when it is a symbolic link, belongs to another user, or is open to
 * group or others.  OUT *fd (if fdp is not NULL): the directory, opened
 * O_DIRECTORY; open everything in it from there.
 */
int gfsp_private_dir(const char *path, int create, int *fdp,
		    struct gfsp_error *err);
/* The same for name in the directory pfd (AT_FDCWD: as a path); path:
 * the whole, for messages. */
int gfsp_private_dirat(int pfd, const char *name, const char *path,
		      int create, int *fdp, struct gfsp_error *err);
/* The same check of an open directory (path: for the message). */
int gfsp_private_fd(int fd, const char *path, struct gfsp_error *err);

/*
 * openat(dfd, name, flags) of a file in a private directory (dir: its
 * path, for messages), never following a symbolic link, never blocking on
 * a FIFO; the file must be a regular file of this user's with one name.
 * Returns the descriptor, or minus a GFSP_E* code with err set.  dir
 * NULL: name is the whole path (dfd AT_FDCWD), and messages say it alone.
 */
int gfsp_openat_private(int dfd, const char *dir, const char *name, int flags,
		       struct gfsp_error *err);

/* ------------------------------------------------ stuck ranks (watch.c) */

/*
 * --timeout: from now on no rank of comm (MPI_COMM_NULL: a command without
 * MPI) waits for its peers, or goes without progress, longer than timeout
 * seconds (0: forever); past it, every rank that can says which rank and
 * phase it waited for, and the job ends with exit status 1.  Collective
 * when timeout > 0.  Also prints the rank and phase when a rank is
 * terminated by SIGTERM or SIGINT.
 */
int gfsp_watch_start(const char *prog, MPI_Comm comm, double timeout,
		    struct gfsp_error *err);
/* GFSPLIT_TIMEOUT's seconds into *t (unset or empty: 0); -1 if it is not
 * a number of seconds. */
int gfsp_timeout_env(double *t);
/* The timeout in force: the watch's (a command's --timeout), else
 * GFSPLIT_TIMEOUT's (a preloaded library), else 0 (none). */
double gfsp_timeout_setting(void);
/* After gfsp_watch_stoppable(1) (a copy command, from its run to its exit)
 * and until (0), the first SIGINT or SIGTERM does not end the process: gfsp_watch_stopped()
 * then returns it, the pipeline's chunk loops fail with GFSP_ECANCELED,
 * the engine removes what it made, and the command exits 128 + the
 * signal.  Another one (not the same one again within 2 s, which is one
 * request that came two ways) ends the process at once, exit 128 + it. */
void gfsp_watch_stoppable(int on);
int gfsp_watch_stopped(void);
/* A daemon's own signal handler: stop the copies under way as above
 * (async-signal-safe). */
void gfsp_watch_stop(int sig);
/* The phase a command is in (a string that outlives the run), for the
 * messages above. */
void gfsp_watch_phase(const char *phase);
/*
 * What to undo when --timeout ends the job: a writer's temporaries.  Run
 * by each rank before it ends the job (the one that gave up, those told
 * of it, one whose watchdog fired), newest first, each once; best effort,
 * and within a few seconds (a file system that hangs cannot keep the
 * process).  Push when something is made, pop when it is committed or
 * removed.  At most GFSP_UNDO_MAX at once: a push beyond fails (-1).
 */
#define GFSP_UNDO_MAX	32
int gfsp_watch_undo_push(void (*fn)(void *), void *arg);
void gfsp_watch_undo_pop(void (*fn)(void *), void *arg);
/* Undo what is registered now, as the timeout would (newest first, once,
 * bounded in time): for a library whose program ends the job itself
 * (MPI_Abort) while writers are open. */
void gfsp_watch_run_undo(void);
/* Progress was made (the store's operations say so). */
void gfsp_watch_beat(void);
/* A wait for peers on req: begin (returns a mark), poll at each turn of
 * the waiting loop (may end the job), end. */
int64_t gfsp_watch_wait_begin(void);
void gfsp_watch_wait_poll(MPI_Request *req, int64_t since);
void gfsp_watch_wait_end(int64_t since);

/* ------------------------------------------------------- this node (node.c) */

/* The node name grouping ranks into location files when no storage host is
 * given: $GFSPLIT_NODE if set, else MPI_Get_processor_name. */
void gfsp_node_name(char *buf, size_t len);

/*
 * Do host names a and b name one node?  The same name, or the same host
 * written once short and once qualified ("n1" and "n1.cluster.example"):
 * MPI_Get_processor_name and a storage system's host table (Gfarm's
 * gfsd names) need not agree on the domain.
 */
int gfsp_same_host(const char *a, const char *b);

/* DIR with "%h" replaced by this node's name; malloc'ed, NULL: no memory */
char *gfsp_node_path(const char *pattern);

/* The cores this process may run on (its affinity mask), at least 1. */
int gfsp_usable_cpus(void);

/*
 * Collective over comm: the ranks on this rank's node (same node name) as
 * *node (MPI_Comm_free it), the node's index among the nodes (in order of
 * their lowest rank) and the number of nodes.
 */
int gfsp_node_comm(MPI_Comm comm, MPI_Comm *node, int *index, int *nnodes,
		  struct gfsp_error *err);

/* Entry rank mod K of a comma-separated host list of K entries
 * (pcp-split --hosts, $GFSPLIT_GFARM_HOSTS) into buf; buf is empty when
 * the list is NULL or empty. */
int gfsp_host_for_rank(const char *list, int rank, char *buf, size_t len,
		      struct gfsp_error *err);

/* ------------------------------------------------ mounts (mountinfo.c) */

#define GFSP_MOUNT_PATH	4096
struct gfsp_mount {
	unsigned maj, min;		/* the device */
	char point[GFSP_MOUNT_PATH];	/* where it is mounted */
	char type[256];			/* "ext4", "fuse.gfsplit" */
	char source[GFSP_MOUNT_PATH];
};
/*
 * The mount on top at mount point `point` (a resolved path), or with
 * point NULL the mount of device maj:min, from /proc/self/mountinfo
 * (escapes undone): 1 with *out, 0 none, -1 unreadable.  No stat of the
 * mount itself, which a hung FUSE daemon would hold up.
 */
int gfsp_mount_find(const char *point, unsigned maj, unsigned min,
		    struct gfsp_mount *out);

/* --------------------------------- checksums and byte order (hash.c) */

#define GFSP_SEG_SIZE_DEFAULT	(1u << 20)	/* checksum segment: 1 MiB */

/*
 * Part checksum: the part is cut into segments of seg_size bytes (the last
 * may be short); each segment gets XXH3-64; the part checksum is XXH3-64 of
 * the little-endian concatenation of the segment hashes (an empty part:
 * XXH3-64 of nothing).  Segment hashes let a part be verified by several
 * ranks that each read whole segments, in any order.
 */
struct gfsp_phash;
struct gfsp_phash *gfsp_phash_new(uint64_t seg_size);
void gfsp_phash_update(struct gfsp_phash *h, const void *buf, size_t len);
uint64_t gfsp_phash_final(struct gfsp_phash *h);	/* does not free */
/* Keep every segment's hash (a writer's: before any update), so that
 * segments can be changed in place: */
void gfsp_phash_keep(struct gfsp_phash *h);
/* Bytes [off, off + len) already hashed were changed in place: their
 * segments are stale until gfsp_phash_redo hashes them again. */
void gfsp_phash_touch(struct gfsp_phash *h, uint64_t off, uint64_t len);
/* 1 and the first stale segment's range (*off, *len), 0 if none is; -1
 * if a segment hash found no memory (the checksum is lost). */
int gfsp_phash_stale(const struct gfsp_phash *h, uint64_t *off,
		     uint64_t *len);
/* buf[len] is the whole segment at off as it is now. */
void gfsp_phash_redo(struct gfsp_phash *h, uint64_t off, const void *buf,
		     size_t len);
void gfsp_phash_free(struct gfsp_phash *h);
uint64_t gfsp_seg_hash(const void *buf, size_t len);
/* Root from segment hashes in order. */
uint64_t gfsp_phash_root(const uint64_t *seg, uint64_t nseg);
/* Little-endian integers in bytes: the byte order of every format here. */
void gfsp_put_le32(unsigned char *p, uint32_t v);
void gfsp_put_le64(unsigned char *p, uint64_t v);
uint32_t gfsp_le32(const unsigned char *p);
uint64_t gfsp_le64(const unsigned char *p);
/* General-purpose XXH3-64 (metadata trailers). */
uint64_t gfsp_hash64(const void *buf, size_t len);

/* ------------------------------------------------------------ errors (err.c) */

/* Set err (if non-NULL and not already set) and return code. */
int gfsp_error_set(struct gfsp_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Same, from an errno value: the code is mapped from errnum and
 * ": <strerror(errnum)>" is appended to the message. */
int gfsp_error_errno(struct gfsp_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Map an errno to a gfsp_errcode. */
int gfsp_errcode_from_errno(int errnum);
/* The other way: the errno a system call would fail with for this error
 * (a file system answering the kernel: gfsplit-mount) */
int gfsp_errno_of(const struct gfsp_error *err);
void gfsp_error_clear(struct gfsp_error *err);

/* ---------------------------------------------------- collective (agree.c) */

/*
 * Agree on the outcome of a phase across comm.  Every rank passes its own rc
 * (0 or a code) and err; all ranks return the same verdict: 0 if every rank
 * succeeded, otherwise a nonzero code.  A rank that succeeded while another
 * failed gets GFSP_EPEER and a message naming the lowest failed rank.
 * Collective: every rank must call it the same number of times, which is
 * what keeps a failing rank from leaving the others waiting.
 */
int gfsp_agree(MPI_Comm comm, int rc, struct gfsp_error *err);

/*
 * Wait for a request without spinning a core: test it, then sleep with a
 * backoff that grows to 100 us.  MPICH's blocking calls busy-poll, so on an
 * oversubscribed node the ranks that finished first would take the CPU from
 * the ranks still copying; the waits between phases use this instead.
 * Returns the MPI code.
 */
int gfsp_mpi_wait(MPI_Request *req, MPI_Status *st);
/* A barrier that waits the same way (MPI_Ibarrier + gfsp_mpi_wait): ranks
 * that arrive first leave the CPU to those still working.  Returns the MPI
 * code. */
int gfsp_quiet_barrier(MPI_Comm comm);
/* The same for a rank with nothing to do for long (seconds, and no
 * one-sided operations aimed at it): sleeps of up to 5 ms, so idle ranks
 * do not disturb the timing of those at work.  Returns the MPI code. */
int gfsp_idle_barrier(MPI_Comm comm);
/* The collectives of the phases, waiting the same way (their nonblocking
 * forms + gfsp_mpi_wait); arguments as MPI's, MPI codes returned.  On 4
 * ranks sharing 2 cores, each blocking collective cost a rank about a
 * scheduler slice (7 ms) of others' spinning. */
int gfsp_bcast(void *buf, int count, MPI_Datatype type, int root,
	       MPI_Comm comm);
/* len bytes from root to every rank of comm, pipelined down the chain
 * root, root + 1, ... in segments: each link carries them once (MPI's
 * broadcast of a large message scatters it and gathers it again, about
 * twice the bytes on the root's link), in the time of one transfer plus a
 * segment a rank.  Point-to-point on comm with a tag of its own; waits
 * as gfsp_mpi_wait.  Returns the MPI code. */
int gfsp_bcast_chain(void *buf, size_t len, int root, MPI_Comm comm);
int gfsp_allgather(const void *sbuf, int scount, MPI_Datatype stype,
		   void *rbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm);
int gfsp_gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
		int rcount, MPI_Datatype rtype, int root, MPI_Comm comm);
int gfsp_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
		   MPI_Op op, MPI_Comm comm);
int gfsp_reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
		MPI_Op op, int root, MPI_Comm comm);
int gfsp_comm_dup(MPI_Comm comm, MPI_Comm *out);

/* Check an MPI return code; on failure set err (GFSP_EMPI, with the MPI
 * error string) and return GFSP_EMPI. */
int gfsp_mpi_check(int mpirc, const char *what, struct gfsp_error *err);

/* ----------------------------------------------------------- JSON (usage.c) */

struct json_object;
/* The string member `key` of object o, or NULL (absent, or not a string). */
const char *gfsp_json_str(struct json_object *o, const char *key);

/* t as an ISO 8601 UTC string, "2026-11-27T09:30:00Z", in buf (at least
 * GFSP_ISO_LEN bytes); returns buf.  Every time value in a JSON document
 * is one of these; durations stay numbers of seconds. */
#define GFSP_ISO_LEN 32
const char *gfsp_utc_iso(int64_t t, char *buf, size_t len);

/*
 * A new JSON document of the convention every --json output follows
 * (schemas/common.schema.json): an object that starts with "command",
 * "version" (GFSPLIT_VERSION), "src", "dest" (null when NULL: the command
 * has no such operand), "ranks" (the MPI world size), "seconds" (the wall
 * time of the work reported), "bytes" (the data moved; null when bytes < 0:
 * the command moves none) and "bytes_per_sec" (bytes / seconds, null with
 * bytes).  The caller adds its own members; adding one of these again
 * replaces it in place.  NULL: out of memory.
 */
struct json_object *gfsp_json_doc(const char *command, const char *src,
				 const char *dest, int ranks, double seconds,
				 int64_t bytes);

/* Print document o on fp, one line (or pretty: JSON_C_TO_STRING_* flags),
 * and remember that the run printed its document. */
void gfsp_json_print(FILE *fp, struct json_object *o, int flags);
int gfsp_json_printed(void);

/* Collective (usage.c): the job's peak RSS per rank (KiB) and CPU seconds
 * summed over ranks (at rank 0), and *seconds made the slowest rank's. */
int gfsp_job_usage(MPI_Comm comm, double *seconds, long *max_rss_kib,
		  double *cpu_seconds, struct gfsp_error *err);

/* ---------------------------------------------------------- logging (log.c) */

enum gfsp_loglevel { GFSP_LOG_QUIET = 0, GFSP_LOG_NORMAL = 1, GFSP_LOG_VERBOSE = 2 };

/* Set once by the driver. */
void gfsp_log_setup(const char *prog, int rank, int nprocs, int level);
/* Where messages go: standard error (the default); the same with the
 * time in front (a daemon's log file); syslog, facility daemon. */
enum gfsp_logsink { GFSP_LOG_STDERR, GFSP_LOG_STAMPED, GFSP_LOG_SYSLOG };
void gfsp_log_sink(int sink);
int gfsp_log_level(void);
/* "prog: rank R: msg" on stderr, from any rank (rank omitted when nprocs==1) */
void gfsp_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void gfsp_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* the text of this rank's last error message ("" if none); remember: a
 * message printed another way (the driver's usage errors) */
const char *gfsp_log_last_error(void);
void gfsp_log_remember(const char *msg);
/* rank 0 only, stderr, suppressed by -q */
void gfsp_log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* rank 0 only, only with -v */
void gfsp_log_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* any rank, only with -v: one line of the listing of what was done to
 * each file or part, as "prog: rank R: copied 'x' (1.00 MiB)" */
void gfsp_log_each(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* print an error struct from this rank (peer failures only with -v) */
void gfsp_log_gfs_error(const struct gfsp_error *err);

/* ------------------------------------------------------------- sizes (size.c) */

/* "4096", "4k", "4K", "4KiB", "1M", "1.5G", "2T": binary multiples. */
int gfsp_parse_size(const char *s, uint64_t *out, struct gfsp_error *err);
/* "1.50 GiB" into buf */
const char *gfsp_format_size(uint64_t n, char *buf, size_t len);
/* "1K,128K,1M": sorted, duplicates dropped, each >= 1.  OUT *v malloc'ed */
int gfsp_parse_size_list(const char *s, uint64_t **v, size_t *n,
			struct gfsp_error *err);
double gfsp_now(void);		/* monotonic seconds */

/* ------------------------------------------------------- progress (progress.c) */

/*
 * Progress of one long collective job.  Each rank sends its own done count
 * to rank 0 with non-blocking point-to-point messages on a private
 * communicator (so the job's own collectives never wait for progress, and a
 * rank that never calls update costs nothing); rank 0 sums them and, when
 * the terminal of mpiexec (or stderr) is a TTY and -q was not given, redraws
 * one line (GFSPLIT_PROGRESS=1 forces it, =0 turns it off):
 *   "pcp-split: 512.0 MiB / 1.00 GiB  50%  812.3 MiB/s  ETA 0:01"
 * Calls are cheap; updates are rate-limited to a few per second.
 */
struct gfsp_progress;

/* --progress[=SECONDS]: draw the line even when stderr is not a terminal,
 * there as one line every period seconds (set once, before any start). */
void gfsp_progress_force(double period);

struct gfsp_progress *gfsp_progress_start(MPI_Comm comm, const char *label,
					uint64_t total);
/* The same, counting things other than bytes: "label: 12 / 96 phases"
 * (unit: a static string). */
struct gfsp_progress *gfsp_progress_start_count(MPI_Comm comm,
					       const char *label,
					       uint64_t total,
					       const char *unit);
/* Report this rank's cumulative count; non-blocking. */
void gfsp_progress_update(struct gfsp_progress *p, uint64_t done);
/* Collective: final line (on a TTY), then free. */
void gfsp_progress_finish(struct gfsp_progress *p);

#endif /* GFSP_CORE_H */
