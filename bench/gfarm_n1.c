/*
 * gfarm_n1.c - raw MPI writers on the Gfarm C API, the two access patterns
 * that bench/gfarm_scale.sh compares (not a tool of the suite):
 *
 *   --mode=n1  N-1: rank 0 creates ONE ordinary Gfarm file (pinned to the
 *              first --hosts entry when given), then every rank opens it
 *              and writes its disjoint range with gfs_pio_pwrite.  Gfarm
 *              keeps a file whole on one node, so all ranks hit one gfsd.
 *   --mode=nn  N-N: rank r writes its own file PATH.r, pinned to --hosts
 *              entry r mod K, the reference line for pcp-split's parts.
 *
 *   rank r's range of the SIZE bytes:   [r*SIZE/N, (r+1)*SIZE/N)
 *   n1:  PATH    |--- r0 ---|--- r1 ---|--- r2 ---|--- r3 ---|  one gfsd
 *   nn:  PATH.r  |--- rr ---|                                   gfsd of r
 *
 * The timed region runs from a barrier before the create to a barrier
 * after every rank has closed (gfs_pio_pwrite is a round trip to gfsd, so
 * the bytes have reached the node when it returns).  The data is a
 * function of the global offset; --verify reads every range back (untimed)
 * and compares.  Where the file(s) really went is read from gfmd's
 * replica information, not assumed from the pin.  Rank 0 prints one JSON
 * object on stdout; errors go to stderr with Gfarm's message and the exit
 * status is 1.  Without libgfarm the program says so and exits 77.
 *
 *   mpiexec -n N gfarm_n1 [--mode=n1|nn] [--hosts=H0,H1,..]
 *       [--buffer-size=8M] [--verify] [--keep] SIZE PATH
 */
#define _GNU_SOURCE
#include <stdio.h>

#ifndef HAVE_GFARM
int
main(void)
{
	fprintf(stderr, "gfarm_n1: built without Gfarm support "
	    "(libgfarm not found by ./configure; install libgfarm-dev and "
	    "run ./configure --with-gfarm)\n");
	return 77;
}
#else /* HAVE_GFARM */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <getopt.h>
#include <sys/types.h>
#include <mpi.h>
#include <json-c/json.h>
#include <gfarm/gfarm.h>

#include "core.h"

/* exported by libgfarm.so.1 (what gfreg -h uses) but in no installed header */
gfarm_error_t gfs_pio_internal_set_view_section(GFS_File, char *);

#define HOSTLEN		256
#define MAXHOSTS	64

struct opts {
	int nn;			/* 0: one shared file, 1: a file per rank */
	char *hosts[MAXHOSTS];	/* point into hostbuf */
	char *hostbuf;
	int nhosts;
	uint64_t size, bufsize;
	int verify, keep;
	const char *path;
};

static int rank, nprocs;

static void __attribute__((format(printf, 1, 2)))
say(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "gfarm_n1: rank %d: ", rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* splitmix64 of the 8-byte word index: data that no layer can shortcut */
static uint64_t
word_at(uint64_t idx)
{
	uint64_t z = idx + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* buf[0..len) = the pattern bytes at global offsets off..off+len */
static void
fill(unsigned char *buf, uint64_t off, size_t len)
{
	size_t i = 0, n;
	unsigned s;
	uint64_t w;

	while (i < len) {
		s = (off + i) & 7;
		w = word_at((off + i) >> 3);
		n = GFSP_MIN(8 - s, len - i);
		memcpy(buf + i, (unsigned char *)&w + s, n);
		i += n;
	}
}

/* non-spinning barrier: MPICH's blocking one busy-polls, which would take
 * the 2 cores from the gfsd processes and the ranks still writing */
static void
barrier(void)
{
	MPI_Request req;

	MPI_Ibarrier(MPI_COMM_WORLD, &req);
	gfsp_mpi_wait(&req, MPI_STATUS_IGNORE);
}

static int
agree(int bad)
{
	int any = 0;
	MPI_Request req;

	MPI_Iallreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req);
	gfsp_mpi_wait(&req, MPI_STATUS_IGNORE);
	return any;
}

static int
create_pinned(const char *path, const char *host, GFS_File *gfp)
{
	gfarm_error_t e;

	e = gfs_pio_create(path, GFARM_FILE_WRONLY | GFARM_FILE_TRUNC, 0644,
	    gfp);
	if (e != GFARM_ERR_NO_ERROR) {
		say("cannot create '%s': %s", path, gfarm_error_string(e));
		return -1;
	}
	if (host == NULL)
		return 0;
	/* before any I/O; on failure the handle is unusable, the file empty */
	e = gfs_pio_internal_set_view_section(*gfp, (char *)host);
	if (e != GFARM_ERR_NO_ERROR) {
		say("cannot place '%s' on '%s': %s", path, host,
		    gfarm_error_string(e));
		gfs_pio_close(*gfp);
		gfs_unlink(path);
		*gfp = NULL;
		return -1;
	}
	return 0;
}

/* write [off, off+len) of the pattern at file offset foff */
static int
write_range(GFS_File gf, const char *path, unsigned char *buf, size_t bufsize,
    uint64_t off, uint64_t len, uint64_t foff)
{
	uint64_t done = 0;
	size_t n, put;
	int w;
	gfarm_error_t e;

	while (done < len) {
		n = GFSP_MIN((uint64_t)bufsize, len - done);
		fill(buf, off + done, n);
		for (put = 0; put < n; put += w) {
			/* gfs_pio_pwrite takes an int */
			e = gfs_pio_pwrite(gf, buf + put,
			    (int)GFSP_MIN(n - put, (size_t)INT_MAX),
			    (gfarm_off_t)(foff + done + put), &w);
			if (e != GFARM_ERR_NO_ERROR) {
				say("cannot write '%s' at %llu: %s", path,
				    (unsigned long long)(foff + done + put),
				    gfarm_error_string(e));
				return -1;
			}
			if (w <= 0) {
				say("cannot write '%s': no progress", path);
				return -1;
			}
		}
		done += n;
	}
	return 0;
}

/* read [foff, foff+len) back and compare with the pattern at off */
static int
verify_range(const char *path, unsigned char *buf, unsigned char *want,
    size_t bufsize, uint64_t off, uint64_t len, uint64_t foff)
{
	GFS_File gf;
	gfarm_error_t e;
	uint64_t done = 0;
	size_t n, got;
	int r, rc = -1;

	e = gfs_pio_open(path, GFARM_FILE_RDONLY, &gf);
	if (e != GFARM_ERR_NO_ERROR) {
		say("cannot open '%s' to verify: %s", path,
		    gfarm_error_string(e));
		return -1;
	}
	while (done < len) {
		n = GFSP_MIN((uint64_t)bufsize, len - done);
		for (got = 0; got < n; got += r) {
			e = gfs_pio_pread(gf, buf + got,
			    (int)GFSP_MIN(n - got, (size_t)INT_MAX),
			    (gfarm_off_t)(foff + done + got), &r);
			if (e != GFARM_ERR_NO_ERROR) {
				say("cannot read '%s': %s", path,
				    gfarm_error_string(e));
				goto out;
			}
			if (r == 0) {
				say("'%s' is short: end of file at %llu", path,
				    (unsigned long long)(foff + done + got));
				goto out;
			}
		}
		fill(want, off + done, n);
		if (memcmp(buf, want, n) != 0) {
			say("'%s' differs within [%llu, %llu)", path,
			    (unsigned long long)(foff + done),
			    (unsigned long long)(foff + done + n));
			goto out;
		}
		done += n;
	}
	rc = 0;
out:
	gfs_pio_close(gf);
	return rc;
}

/* comma-joined replica hosts of path into out ("?" when unknown) */
static void
where(const char *path, char *out, size_t outlen)
{
	struct gfs_replica_info *ri;
	gfarm_error_t e;
	int i, n;
	size_t used = 0;

	snprintf(out, outlen, "?");
	e = gfs_replica_info_by_name(path, 0, &ri);
	if (e != GFARM_ERR_NO_ERROR) {
		say("cannot get the replicas of '%s': %s", path,
		    gfarm_error_string(e));
		return;
	}
	out[0] = '\0';
	n = gfs_replica_info_number(ri);
	for (i = 0; i < n && used + 1 < outlen; i++)
		used += snprintf(out + used, outlen - used, "%s%s",
		    i ? "," : "", gfs_replica_info_nth_host(ri, i));
	gfs_replica_info_free(ri);
}

static int
parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "hosts", required_argument, NULL, 'H' },
		{ "buffer-size", required_argument, NULL, 'b' },
		{ "verify", no_argument, NULL, 'v' },
		{ "keep", no_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 }
	};
	struct gfsp_error err = { 0 };
	char *s, *tok, *save = NULL;
	int c;

	memset(o, 0, sizeof(*o));
	o->bufsize = 8 << 20;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (strcmp(optarg, "n1") == 0)
				o->nn = 0;
			else if (strcmp(optarg, "nn") == 0)
				o->nn = 1;
			else {
				say("unknown mode '%s' (n1 or nn)", optarg);
				return -1;
			}
			break;
		case 'H':
			free(o->hostbuf);
			s = o->hostbuf = strdup(optarg);
			o->nhosts = 0;
			for (tok = s == NULL ? NULL :
			    strtok_r(s, ",", &save); tok != NULL &&
			    o->nhosts < MAXHOSTS; tok = strtok_r(NULL, ",", &save))
				o->hosts[o->nhosts++] = tok;
			break;
		case 'b':
			if (gfsp_parse_size(optarg, &o->bufsize, &err) != 0 ||
			    o->bufsize == 0) {
				say("bad --buffer-size '%s'", optarg);
				return -1;
			}
			break;
		case 'v':
			o->verify = 1;
			break;
		case 'k':
			o->keep = 1;
			break;
		default:
			return -1;
		}
	}
	if (argc - optind != 2) {
		if (rank == 0)
			fprintf(stderr, "usage: gfarm_n1 [--mode=n1|nn] "
			    "[--hosts=H0,H1,..] [--buffer-size=SIZE] [--verify] "
			    "[--keep] SIZE PATH\n");
		return -1;
	}
	if (gfsp_parse_size(argv[optind], &o->size, &err) != 0) {
		say("bad SIZE '%s'", argv[optind]);
		return -1;
	}
	o->path = argv[optind + 1];
	return 0;
}

int
main(int argc, char **argv)
{
	struct opts o;
	char path[4096], name[4096], host[HOSTLEN] = "", *hosts_all = NULL;
	char *pin, *h, *save;
	unsigned char *buf = NULL, *want = NULL;
	GFS_File gf = NULL;
	gfarm_error_t e;
	uint64_t off, len;
	double t0, t1;
	int bad = 0, verified = -1, i, gfarm_up = 0;
	json_object *j, *files, *f, *hs;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	gfsp_log_setup("gfarm_n1", rank, nprocs, GFSP_LOG_QUIET);

	if (parse(argc, argv, &o) != 0) {
		bad = 1;
		goto out;
	}
	off = o.size * rank / nprocs;
	len = o.size * (rank + 1) / nprocs - off;
	if (o.nn)
		snprintf(path, sizeof(path), "%s.%d", o.path, rank);
	else
		snprintf(path, sizeof(path), "%s", o.path);
	pin = o.nhosts == 0 ? NULL :
	    o.hosts[o.nn ? rank % o.nhosts : 0];

	buf = malloc(o.bufsize);
	want = malloc(o.bufsize);
	if (buf == NULL || want == NULL) {
		say("cannot allocate two buffers of %llu bytes",
		    (unsigned long long)o.bufsize);
		bad = 1;
	}
	if (!bad) {
		e = gfarm_initialize(NULL, NULL);
		if (e != GFARM_ERR_NO_ERROR) {
			say("cannot initialize gfarm: %s",
			    gfarm_error_string(e));
			bad = 1;
		} else
			gfarm_up = 1;
	}
	if (agree(bad))
		goto fail;

	barrier();
	t0 = MPI_Wtime();
	if (o.nn) {
		bad = create_pinned(path, pin, &gf) != 0;
	} else {
		/*
		 * Rank 0 creates the file on its node and closes it; then all
		 * ranks open the existing file, and gfmd sends every writer
		 * to the one replica.
		 */
		if (rank == 0) {
			bad = create_pinned(path, pin, &gf) != 0;
			if (!bad && (e = gfs_pio_close(gf)) !=
			    GFARM_ERR_NO_ERROR) {
				say("cannot close '%s': %s", path,
				    gfarm_error_string(e));
				bad = 1;
			}
			gf = NULL;
		}
		if (agree(bad))
			goto fail;
		e = gfs_pio_open(path, GFARM_FILE_WRONLY, &gf);
		if (e != GFARM_ERR_NO_ERROR) {
			say("cannot open '%s': %s", path,
			    gfarm_error_string(e));
			gf = NULL;
			bad = 1;
		}
	}
	if (!bad)
		bad = write_range(gf, path, buf, o.bufsize, off, len,
		    o.nn ? 0 : off) != 0;
	if (gf != NULL) {
		e = gfs_pio_close(gf);
		gf = NULL;
		if (e != GFARM_ERR_NO_ERROR && !bad) {
			say("cannot close '%s': %s", path,
			    gfarm_error_string(e));
			bad = 1;
		}
	}
	if (agree(bad))
		goto fail;
	t1 = MPI_Wtime();

	/* where the bytes went, as gfmd sees it */
	if (o.nn || rank == 0)
		where(path, host, sizeof(host));
	if (rank == 0)
		hosts_all = calloc(nprocs, HOSTLEN);
	MPI_Gather(host, HOSTLEN, MPI_CHAR, hosts_all, HOSTLEN, MPI_CHAR, 0,
	    MPI_COMM_WORLD);

	if (o.verify) {
		bad = verify_range(path, buf, want, o.bufsize, off, len,
		    o.nn ? 0 : off) != 0;
		verified = !agree(bad);
		bad = 0;
	}

	if (rank == 0) {
		j = json_object_new_object();
		json_object_object_add(j, "program",
		    json_object_new_string("gfarm_n1"));
		json_object_object_add(j, "mode",
		    json_object_new_string(o.nn ? "nn" : "n1"));
		json_object_object_add(j, "ranks", json_object_new_int(nprocs));
		json_object_object_add(j, "bytes",
		    json_object_new_int64((int64_t)o.size));
		json_object_object_add(j, "buffer_size",
		    json_object_new_int64((int64_t)o.bufsize));
		json_object_object_add(j, "seconds",
		    json_object_new_double(t1 - t0));
		json_object_object_add(j, "mib_per_sec", json_object_new_double(
		    t1 > t0 ? o.size / 1048576.0 / (t1 - t0) : 0));
		files = json_object_new_array();
		for (i = 0; i < (o.nn ? nprocs : 1); i++) {
			f = json_object_new_object();
			if (o.nn)
				snprintf(name, sizeof(name), "%s.%d", o.path,
				    i);
			else
				snprintf(name, sizeof(name), "%s", o.path);
			json_object_object_add(f, "path",
			    json_object_new_string(name));
			json_object_object_add(f, "pinned",
			    o.nhosts == 0 ? NULL : json_object_new_string(
			    o.hosts[o.nn ? i % o.nhosts : 0]));
			hs = json_object_new_array();
			save = NULL;
			for (h = strtok_r(hosts_all + (size_t)i * HOSTLEN, ",",
			    &save); h != NULL; h = strtok_r(NULL, ",", &save))
				json_object_array_add(hs,
				    json_object_new_string(h));
			json_object_object_add(f, "hosts", hs);
			json_object_array_add(files, f);
		}
		json_object_object_add(j, "files", files);
		json_object_object_add(j, "verified", verified < 0 ? NULL :
		    json_object_new_boolean(verified));
		printf("%s\n", json_object_to_json_string_ext(j,
		    JSON_C_TO_STRING_PLAIN));
		fflush(stdout);
		json_object_put(j);
	}
	if (verified == 0)
		bad = 1;
	goto done;
fail:
	bad = 1;
done:
	/* the bench runs many rounds against one gfmd: leave nothing behind */
	if (gfarm_up && !o.keep && (o.nn || rank == 0))
		gfs_unlink(path);	/* may not exist after a failed create */
	if (gfarm_up)
		gfarm_terminate();
out:
	free(o.hostbuf);
	free(hosts_all);
	free(buf);
	free(want);
	bad = agree(bad);
	MPI_Finalize();
	return bad ? 1 : 0;
}
#endif /* HAVE_GFARM */
