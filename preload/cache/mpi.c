/*
 * mpi.c - the life of the cache (hook.h): MPI_Init and MPI_Init_thread
 * create it over a duplicate of MPI_COMM_WORLD, MPI_Finalize sums the
 * statistics and destroys it, before MPICH's own calls (PMPI_*) finish.
 *
 * Settings: rank 0 reads the environment and broadcasts what it found,
 * so every rank builds the same cache (the cache needs equal sizes and
 * groups) and selects the same files:
 *
 *   GFSPLIT_CACHE_FILES      colon-separated patterns; unset or empty:
 *                            no cache at all
 *   GFSPLIT_CACHE_SIZE       per rank, with suffixes (gfsp_parse_size)
 *   GFSPLIT_CACHE_BLOCK      block size
 *   GFSPLIT_CACHE_GROUPS     G
 *   GFSPLIT_CACHE_RATIO      singlet ratio, 0 .. 1
 *   GFSPLIT_CACHE_TRANSPORT  auto, mpi, shm, tcp, verbs
 *   GFSPLIT_CACHE_STATS      "text" or "json" (stderr) or a path (JSON)
 *   GFSPLIT_VERBOSE          the settings and each file, from rank 0
 *
 * Nothing here aborts: a bad setting or a cache that cannot be created
 * is one line from rank 0, and then every call goes to libc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <mpi.h>

#include "core.h"
#include "hook.h"

#define TRANSPORT_MAX	16

/* What rank 0 broadcasts, then the two strings. */
struct wire {
	uint64_t block_size, cache_size;
	double ratio;
	int groups;
	int on;			/* 0: no cache */
	int verbose;
	int patterns_len, stats_len;	/* with the NUL; 0: none */
	char transport[TRANSPORT_MAX];	/* "": auto */
};

static struct gfsp_cache *cache;
static MPI_Comm comm = MPI_COMM_NULL;
static struct ch_conf conf;
static char *patterns, *stats;

/* -------------------------------------------------------- settings */

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && v[0] != '\0' ? v : NULL;
}

static int
env_size(const char *name, uint64_t *out, struct gfsp_error *err)
{
	const char *v = env(name);
	struct gfsp_error e;

	*out = 0;
	gfsp_error_clear(&e);
	if (v != NULL && gfsp_parse_size(v, out, &e) != 0)
		return gfsp_error_set(err, GFSP_EINVAL, "%s: %s", name, e.msg);
	return 0;
}

/* Rank 0: the settings from the environment.  An error turns it off. */
static void
read_env(struct wire *w)
{
	const char *v;
	struct gfsp_error err;
	char *end;
	long g;
	int rc;

	memset(w, 0, sizeof(*w));
	w->ratio = -1;
	v = getenv("GFSPLIT_VERBOSE");
	w->verbose = v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
	if ((v = env("GFSPLIT_CACHE_FILES")) == NULL) {
		if (w->verbose)
			ch_say("GFSPLIT_CACHE_FILES is not set: no file is "
			    "read through the cache");
		return;
	}
	w->patterns_len = (int)strlen(v) + 1;
	if ((v = env("GFSPLIT_CACHE_STATS")) != NULL)
		w->stats_len = (int)strlen(v) + 1;
	gfsp_error_clear(&err);
	rc = env_size("GFSPLIT_CACHE_SIZE", &w->cache_size, &err);
	if (rc == 0)
		rc = env_size("GFSPLIT_CACHE_BLOCK", &w->block_size, &err);
	if (rc == 0 && (v = env("GFSPLIT_CACHE_GROUPS")) != NULL) {
		errno = 0;
		g = strtol(v, &end, 10);
		if (errno != 0 || *end != '\0' || g < 1 || g > 1 << 20)
			rc = gfsp_error_set(&err, GFSP_EINVAL,
			    "GFSPLIT_CACHE_GROUPS: '%s' is not a number of "
			    "groups (1 or more)", v);
		w->groups = (int)g;
	}
	if (rc == 0 && (v = env("GFSPLIT_CACHE_RATIO")) != NULL) {
		errno = 0;
		w->ratio = strtod(v, &end);
		if (errno != 0 || *end != '\0' || !(w->ratio >= 0 &&
		    w->ratio <= 1))
			rc = gfsp_error_set(&err, GFSP_EINVAL,
			    "GFSPLIT_CACHE_RATIO: '%s' is not a ratio "
			    "between 0 and 1", v);
	}
	if (rc == 0 && (v = env("GFSPLIT_CACHE_TRANSPORT")) != NULL) {
		if (strlen(v) >= TRANSPORT_MAX)
			rc = gfsp_error_set(&err, GFSP_EINVAL,
			    "GFSPLIT_CACHE_TRANSPORT: unknown transport '%s' "
			    "(auto, mpi, shm, tcp, verbs)", v);
		else
			strcpy(w->transport, v);
	}
	if (rc) {
		ch_say("%s; the cache is off", err.msg);
		return;
	}
	w->on = 1;
}

/* Every rank: rank 0's settings into conf.  0: no cache. */
static int
settings(void)
{
	struct wire w;
	int ok;

	if (ch_rank == 0)
		read_env(&w);
	MPI_Bcast(&w, (int)sizeof(w), MPI_BYTE, 0, MPI_COMM_WORLD);
	if (!w.on)
		return 0;
	free(patterns);
	free(stats);
	patterns = calloc(1, (size_t)w.patterns_len);
	stats = w.stats_len ? calloc(1, (size_t)w.stats_len) : NULL;
	if (ch_rank == 0) {
		if (patterns != NULL)
			strcpy(patterns, getenv("GFSPLIT_CACHE_FILES"));
		if (stats != NULL)
			strcpy(stats, getenv("GFSPLIT_CACHE_STATS"));
	}
	/* out of memory anywhere: off everywhere */
	ok = patterns != NULL && (w.stats_len == 0 || stats != NULL);
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (!ok) {
		if (ch_rank == 0)
			ch_say("out of memory; the cache is off");
		return 0;
	}
	MPI_Bcast(patterns, w.patterns_len, MPI_CHAR, 0, MPI_COMM_WORLD);
	if (stats != NULL)
		MPI_Bcast(stats, w.stats_len, MPI_CHAR, 0, MPI_COMM_WORLD);
	memset(&conf, 0, sizeof(conf));
	conf.opts.block_size = w.block_size;
	conf.opts.cache_size = w.cache_size;
	conf.opts.groups = w.groups;
	conf.opts.singlet_ratio = w.ratio;
	conf.opts.transport = w.transport[0] ? strdup(w.transport) : NULL;
	/* each rank's own: its node's tier ("%h") */
	conf.opts.local_dir = gfsp_cache_local_dir_default();
	/* of what the tier holds, only the files this job selects */
	conf.opts.local_only = patterns;
	conf.patterns = patterns;
	conf.stats = stats;
	conf.verbose = w.verbose;
	return 1;
}

/* --------------------------------------------------------- the cache */

/* After MPICH's init: the cache, if it is wanted and can be.  level is the
 * thread level the program asked for: only at MPI_THREAD_MULTIPLE do its
 * other threads read through the cache. */
static void
begin(int level)
{
	struct gfsp_error err;
	char size[32], block[32];
	int nprocs, rc;

	hk_inside = 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &ch_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (!settings())
		goto out;
	gfsp_error_clear(&err);
	rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm) == MPI_SUCCESS ? 0 :
	    gfsp_error_set(&err, GFSP_EMPI, "cannot duplicate "
	    "MPI_COMM_WORLD");
	if (rc == 0)
		rc = gfsp_cache_create(comm, &conf.opts, &cache, &err);
	if (rc == 0) {
		rc = ch_start(cache, &conf, level == MPI_THREAD_MULTIPLE);
		if (rc)
			gfsp_error_set(&err, rc, "out of memory for the "
			    "table of descriptors");
		rc = gfsp_agree(comm, rc, &err);
		if (rc) {
			uint64_t none;

			ch_stop(&none);
			gfsp_cache_destroy(cache);
			cache = NULL;
		}
	}
	if (rc) {
		if (ch_rank == 0)
			ch_say("the cache is off: %s", err.msg);
		if (comm != MPI_COMM_NULL)
			MPI_Comm_free(&comm);
		goto out;
	}
	if (conf.verbose && ch_rank == 0)
		ch_say("reads of files matching GFSPLIT_CACHE_FILES='%s' go "
		    "through a cooperative cache of %s a rank on %d rank%s "
		    "(blocks of %s, %d group%s, transport %s)%s", patterns,
		    gfsp_format_size(conf.opts.cache_size ?
		    conf.opts.cache_size : GFSP_CACHE_SIZE_DEFAULT, size,
		    sizeof(size)), nprocs, nprocs > 1 ? "s" : "",
		    gfsp_format_size(gfsp_cache_block_size(cache), block,
		    sizeof(block)), conf.opts.groups ? conf.opts.groups : 1,
		    conf.opts.groups > 1 ? "s" : "",
		    gfsp_cache_transport(cache), level == MPI_THREAD_MULTIPLE ?
		    "" : "; only the thread that called MPI_Init uses it");
out:
	hk_inside = 0;
}

/* Rank 0: the summed statistics where GFSPLIT_CACHE_STATS says. */
/*
 * The statistics file (GFSPLIT_CACHE_STATS=FILE): made anew (0600), or
 * one of this user's, a regular file with one name, which it then
 * replaces; never through a final symbolic link, never blocking on a
 * FIFO.  A job run as root in /tmp writes neither into a file another
 * user made there for it nor into the file a link or a hard link she
 * planted leads to.  (Called with hk_inside set: libc's own calls.)
 */
static FILE *
stats_file(const char *path, struct gfsp_error *err)
{
	FILE *fp;
	int fd;

	fd = gfsp_openat_private(AT_FDCWD, NULL, path, O_WRONLY | O_CREAT,
				 err);
	if (fd < 0)
		return NULL;
	if (ftruncate(fd, 0) != 0 || (fp = LIBC(fdopen)(fd, "w")) == NULL) {
		gfsp_error_errno(err, errno, "cannot write '%s'", path);
		LIBC(close)(fd);
		return NULL;
	}
	return fp;
}

static void
print_stats(struct gfsp_cache *c, const struct gfsp_cache_stats *sum,
	    uint64_t opened, int nprocs)
{
	const char *to = conf.stats;
	struct gfsp_error err = { 0 };
	FILE *fp = stderr;
	char who[64];

	if (strcmp(to, "text") == 0) {
		snprintf(who, sizeof(who), "gfsplit-cache: %d ranks, %llu "
		    "opens", nprocs, (unsigned long long)opened);
		gfsp_cache_stats_text(stderr, who, sum);
		return;
	}
	if (strcmp(to, "json") != 0 && (fp = stats_file(to, &err)) == NULL) {
		ch_say("cannot write the statistics to '%s': %s", to, err.msg);
		return;
	}
	fprintf(fp, "{\"nprocs\":%d,\"block_size\":%llu,\"cache_size\":%llu,"
	    "\"groups\":%d,\"transport\":\"%s\",\"files_opened\":%llu,"
	    "\"total\":", nprocs,
	    (unsigned long long)gfsp_cache_block_size(c),
	    (unsigned long long)(conf.opts.cache_size ? conf.opts.cache_size :
	    GFSP_CACHE_SIZE_DEFAULT), conf.opts.groups ? conf.opts.groups : 1,
	    gfsp_cache_transport(c), (unsigned long long)opened);
	gfsp_cache_stats_json(fp, sum);
	fprintf(fp, "}\n");
	if (fp != stderr && fclose(fp) != 0)
		ch_say("cannot write the statistics to '%s': %s", to,
		    strerror(errno));
}

/* Before MPICH's finalize: statistics, then the cache goes. */
static void
end(void)
{
	struct gfsp_cache_stats sum;
	struct gfsp_error err;
	uint64_t opened = 0, all = 0;
	struct gfsp_cache *c;
	int nprocs;

	c = ch_stop(&opened);
	if (c == NULL)
		return;
	hk_inside = 1;
	/* a peer that stopped answering (GFSPLIT_TIMEOUT) was given up: what
	 * it held came from storage, but it will not meet the others in
	 * the collectives below or in MPI's own finalize */
	if (gfsp_cache_gave_up(c) != NULL) {
		ch_say("rank %d: %s: the job cannot end normally; ending it",
		    ch_rank, gfsp_cache_gave_up(c));
		/* a moment for mpiexec to pass the line on: the abort ends
		 * the processes that forward it */
		sleep(1);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (conf.stats != NULL) {
		gfsp_error_clear(&err);
		MPI_Comm_size(comm, &nprocs);
		MPI_Reduce(&opened, &all, 1, MPI_UINT64_T, MPI_SUM, 0, comm);
		if (gfsp_cache_stats_all(c, &sum, NULL, &err) != 0) {
			if (ch_rank == 0)
				ch_say("no statistics: %s", err.msg);
		} else if (ch_rank == 0) {
			print_stats(c, &sum, all, nprocs);
		}
	}
	gfsp_cache_destroy(c);
	cache = NULL;
	MPI_Comm_free(&comm);
	hk_inside = 0;
}

/* ------------------------------------------------------ the MPI calls */

/*
 * MPI is initialised with MPI_THREAD_MULTIPLE whatever the program asked:
 * the cache's "mpi" transport then runs a progress thread, so that a rank
 * computing without MPI calls does not stall the peers reading its blocks
 * (libcore/cache/onesided_mpi.c).  The program is told the level it asked
 * for, where MPI gave at least that, and uses MPI as it would have.
 */
int
MPI_Init(int *argc, char ***argv)
{
	int provided;
	int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);

	if (rc == MPI_SUCCESS)
		begin(MPI_THREAD_SINGLE);
	return rc;
}

int
MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, provided);

	if (rc == MPI_SUCCESS && *provided > required)
		*provided = required;
	if (rc == MPI_SUCCESS)
		begin(*provided);
	return rc;
}

int
MPI_Finalize(void)
{
	end();
	return PMPI_Finalize();
}
