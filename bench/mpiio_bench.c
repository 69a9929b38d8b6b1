/*
 * mpiio_bench.c - IOR- and HPIO-like writers on plain MPI-IO, so that the
 * same binary can be timed in the same run with and without the PMPI
 * preload library (LD_PRELOAD=lib/libgfsplit-mpiio.so; bench/mpiio.sh).
 * It includes no gfsplit header: whatever the library does, it does to an
 * unmodified MPI program.
 *
 *   mpiio_bench ior    FILE --segments S --block B --transfer T
 *   mpiio_bench ior-nn FILE --segments S --block B --transfer T
 *   mpiio_bench hpio   FILE --regions C --region-size R --spacing P
 *   options of every mode: [--sync] [--verify] [--info KEY=VALUE]..
 *   ior and ior-nn: [--read]: the timed pass reads what a run without it
 *   wrote (MPI_File_read_at of the same pieces; --verify checks them)
 *
 * ior: segmented N-1, as IOR's MPI-IO backend writes it.  Rank r writes
 * its block of every segment at (s*N + r)*B, in B/T MPI_File_write_at
 * calls of T bytes:
 *
 *   FILE  | r0 | r1 | .. | rN-1 | r0 | r1 | .. | rN-1 | ..
 *         |<---- segment 0 ---->|<---- segment 1 ---->|
 *
 * ior-nn: the N-N reference line.  Rank r writes the same S*B bytes to
 * its own FILE.r (opened on MPI_COMM_SELF) at s*B + k*T.
 *
 * hpio: HPIO's nc-nc.  Each rank has C regions of R bytes, P bytes apart
 * in memory (an hvector) and in the file, where the ranks' regions
 * interleave (a file view); one MPI_File_write_all writes them all:
 *
 *   memory  |reg 0|..P..|reg 1|..P..|reg 2| ..
 *   FILE    |r0,0|.P.|r1,0|.P.| .. |rN-1,0|.P.|r0,1|.P.|r1,1| ..
 *           region i of rank r at (i*N + r)*(R + P)
 *
 * Timed as IOR times it: a barrier, then from the earliest MPI_File_open
 * to the latest MPI_File_close over the ranks (with --sync, one
 * MPI_File_sync before the close, as MPI-IO/Gfarm's modified IOR).  The
 * phases apart too: open_s, data_s (the data and the sync) and close_s,
 * each the longest any rank took.
 * Buffers are filled before the clock starts; every transfer of ior carries
 * its file offset in its first 8 bytes, so --verify (after the clock, same
 * views, the file reopened read-only) catches data in the wrong place as
 * well as wrong data.  Rank 0 prints one JSON line, e.g.
 *   {"pattern":"ior","nprocs":2,"bytes":134217728,"seconds":0.5,
 *    "mib_s":256.0,...}
 * where bytes counts data, not holes.  Errors go to stderr as
 * "mpiio_bench: rank R: <what>: <MPI's message>" and the exit status is 1
 * on every rank.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <ctype.h>
#include <time.h>
#include <getopt.h>
#include <mpi.h>

enum mode { IOR, IOR_NN, HPIO };

struct opts {
	enum mode mode;
	const char *file;
	uint64_t segments, block, transfer;	/* ior, ior-nn */
	uint64_t regions, region_size, spacing;	/* hpio */
	int sync, verify, read;
	MPI_Info info;
};

static int rank, nprocs;

static void __attribute__((format(printf, 1, 2)))
say(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mpiio_bench: rank %d: ", rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* MPI call failed: say what with MPI's own message; 0 when it did not */
static int
failed(int rc, const char *what, const char *path)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (rc == MPI_SUCCESS)
		return 0;
	MPI_Error_string(rc, msg, &len);
	msg[len] = '\0';
	say("%s '%s': %s", what, path, msg);
	return 1;
}

/*
 * Non-spinning wait: MPICH's blocking collectives busy-poll, which on a
 * machine with fewer cores than ranks + servers (the emulated Gfarm
 * cluster) takes the CPU from the ranks that are still writing.
 */
static void
wait_idle(MPI_Request *req)
{
	struct timespec ts = { 0, 50000 };
	int done = 0, spins = 0;

	for (;;) {
		MPI_Test(req, &done, MPI_STATUS_IGNORE);
		if (done)
			return;
		if (++spins > 100)
			nanosleep(&ts, NULL);
	}
}

static void
barrier(void)
{
	MPI_Request req;

	MPI_Ibarrier(MPI_COMM_WORLD, &req);
	wait_idle(&req);
}

/* every rank learns whether any rank failed */
static int
agree(int bad)
{
	MPI_Request req;
	int any = 0;

	MPI_Iallreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req);
	wait_idle(&req);
	return any;
}

/* ---- data: a function of (rank, position), filled before the clock ---- */

/* splitmix64: data no layer can shortcut (no runs of zeros to compress) */
static uint64_t
mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* buf[0..len) = the byte stream of rank r from stream position pos */
static void
fill(unsigned char *buf, size_t len, int r, uint64_t pos)
{
	uint64_t w = 0, seed = (uint64_t)r << 48;
	size_t i;

	for (i = 0; i < len; i++) {
		if (i == 0 || ((pos + i) & 7) == 0)
			w = mix(seed + ((pos + i) >> 3));
		buf[i] = (unsigned char)(w >> (8 * ((pos + i) & 7)));
	}
}

/* the first (up to) 8 bytes of an ior transfer: its file offset */
static void
stamp(unsigned char *buf, uint64_t len, MPI_Offset off)
{
	uint64_t v = (uint64_t)off;

	memcpy(buf, &v, len < sizeof(v) ? len : sizeof(v));
}

/* ---- options ----------------------------------------------------------- */

/* "4096", "4K", "4Ki", "4MiB", "1G": binary units */
static int
parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "kmg";
	const char *u;
	char *end;
	unsigned long long v;
	int shift = 0;

	v = strtoull(s, &end, 10);
	if (end == s)
		return -1;
	if (*end != '\0' && (u = strchr(units, tolower(*end))) != NULL) {
		shift = 10 * (int)(u - units + 1);
		end++;
		if (*end == 'i' || *end == 'I')
			end++;
		if (*end == 'b' || *end == 'B')
			end++;
	}
	if (*end != '\0' || v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static void
usage(void)
{
	if (rank == 0)
		fprintf(stderr,
		    "usage: mpiio_bench ior|ior-nn FILE --segments S "
		    "--block B --transfer T [--sync] [--verify] [--read] "
		    "[--info KEY=VALUE]..\n"
		    "       mpiio_bench hpio FILE --regions C --region-size R "
		    "--spacing P [--sync] [--verify] [--info KEY=VALUE]..\n");
}

static int
set_info(MPI_Info info, char *kv)
{
	char *eq = strchr(kv, '=');

	if (eq == NULL || eq == kv) {
		say("bad --info '%s' (KEY=VALUE)", kv);
		return -1;
	}
	*eq = '\0';
	MPI_Info_set(info, kv, eq + 1);
	*eq = '=';
	return 0;
}

/* the sizes that must fit an int count or a buffer, and must divide */
static int
check_opts(const struct opts *o)
{
	if (o->mode == HPIO) {
		if (o->read) {
			say("--read is for ior and ior-nn");
			return -1;
		}
		if (o->regions == 0 || o->region_size == 0 ||
		    o->regions > INT_MAX || o->region_size > INT_MAX ||
		    o->region_size + o->spacing > SIZE_MAX / o->regions) {
			say("need 0 < --regions, --region-size <= %d", INT_MAX);
			return -1;
		}
		return 0;
	}
	if (o->segments == 0 || o->block == 0 || o->transfer == 0 ||
	    o->transfer > INT_MAX || o->block % o->transfer != 0) {
		say("need --segments, --block > 0 and 0 < --transfer <= %d "
		    "dividing --block", INT_MAX);
		return -1;
	}
	return 0;
}

static int
parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "segments", required_argument, NULL, 's' },
		{ "block", required_argument, NULL, 'b' },
		{ "transfer", required_argument, NULL, 't' },
		{ "regions", required_argument, NULL, 'c' },
		{ "region-size", required_argument, NULL, 'r' },
		{ "spacing", required_argument, NULL, 'p' },
		{ "sync", no_argument, NULL, 'S' },
		{ "verify", no_argument, NULL, 'v' },
		{ "read", no_argument, NULL, 'R' },
		{ "info", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 }
	};
	uint64_t *dst;
	int c;

	memset(o, 0, sizeof(*o));
	o->segments = 16;
	o->block = o->transfer = 4 << 20;
	o->regions = 4096;
	o->region_size = 8;
	o->spacing = 128;
	MPI_Info_create(&o->info);
	if (argc < 3) {
		usage();
		return -1;
	}
	if (strcmp(argv[1], "ior") == 0)
		o->mode = IOR;
	else if (strcmp(argv[1], "ior-nn") == 0)
		o->mode = IOR_NN;
	else if (strcmp(argv[1], "hpio") == 0)
		o->mode = HPIO;
	else {
		usage();
		return -1;
	}
	o->file = argv[2];
	optind = 3;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		dst = NULL;
		switch (c) {
		case 's': dst = &o->segments; break;
		case 'b': dst = &o->block; break;
		case 't': dst = &o->transfer; break;
		case 'c': dst = &o->regions; break;
		case 'r': dst = &o->region_size; break;
		case 'p': dst = &o->spacing; break;
		case 'S': o->sync = 1; break;
		case 'v': o->verify = 1; break;
		case 'R': o->read = 1; break;
		case 'i':
			if (set_info(o->info, optarg) != 0)
				return -1;
			break;
		default:
			usage();
			return -1;
		}
		if (dst != NULL && parse_size(optarg, dst) != 0) {
			say("bad size '%s'", optarg);
			return -1;
		}
	}
	if (optind != argc) {
		usage();
		return -1;
	}
	return check_opts(o);
}

/* ---- the patterns ------------------------------------------------------ */

struct run {
	const struct opts *o;
	char path[4096];
	MPI_Comm comm;		/* WORLD for N-1, SELF for ior-nn */
	double t[4];		/* the pass: open, opened, data done, closed */
	unsigned char *buf, *back;	/* what is written, what is read */
	size_t buflen;
	MPI_Datatype memtype, filetype;	/* hpio */
	uint64_t bytes;		/* this rank's data bytes */
};

/* file offset of transfer k of segment s of this rank */
static MPI_Offset
ior_offset(const struct run *x, uint64_t s, uint64_t k)
{
	const struct opts *o = x->o;
	uint64_t blk = o->mode == IOR_NN ? s : s * nprocs + rank;

	return (MPI_Offset)(blk * o->block + k * o->transfer);
}

/* write (read, verify != 0) every transfer of this rank; 0 on success */
static int
ior_io(struct run *x, MPI_File fh, int verify)
{
	const struct opts *o = x->o;
	uint64_t s, k, per = o->block / o->transfer;
	MPI_Offset off;
	int rc;

	for (s = 0; s < o->segments; s++) {
		for (k = 0; k < per; k++) {
			off = ior_offset(x, s, k);
			if (o->read && !verify) {	/* the timed read */
				rc = MPI_File_read_at(fh, off, x->back,
				    (int)o->transfer, MPI_BYTE,
				    MPI_STATUS_IGNORE);
				if (failed(rc, "cannot read", x->path))
					return -1;
				continue;
			}
			stamp(x->buf, o->transfer, off);
			if (verify) {
				memset(x->back, 0, o->transfer);
				rc = MPI_File_read_at(fh, off, x->back,
				    (int)o->transfer, MPI_BYTE,
				    MPI_STATUS_IGNORE);
				if (failed(rc, "cannot read", x->path))
					return -1;
				if (memcmp(x->back, x->buf, o->transfer) != 0) {
					say("'%s' differs within [%lld, %lld)",
					    x->path, (long long)off,
					    (long long)(off + o->transfer));
					return -1;
				}
				continue;
			}
			rc = MPI_File_write_at(fh, off, x->buf,
			    (int)o->transfer, MPI_BYTE, MPI_STATUS_IGNORE);
			if (failed(rc, "cannot write", x->path))
				return -1;
		}
	}
	return 0;
}

static int
ior_setup(struct run *x)
{
	const struct opts *o = x->o;

	if (o->mode == IOR_NN) {
		snprintf(x->path, sizeof(x->path), "%s.%d", o->file, rank);
		x->comm = MPI_COMM_SELF;
	}
	x->buflen = o->transfer;
	x->bytes = o->segments * o->block;
	x->buf = malloc(x->buflen);
	x->back = (o->verify || o->read) ? malloc(x->buflen) : NULL;
	if (x->buf == NULL || ((o->verify || o->read) && x->back == NULL)) {
		say("cannot allocate %zu bytes", x->buflen);
		return -1;
	}
	fill(x->buf, x->buflen, rank, 0);
	return 0;
}

/*
 * HPIO's nc-nc types.  Memory: C blocks of R bytes every R+P bytes.  File:
 * the same C blocks every N*(R+P) bytes, from displacement r*(R+P).
 */
static int
hpio_setup(struct run *x)
{
	const struct opts *o = x->o;
	uint64_t i, pitch = o->region_size + o->spacing;

	x->buflen = o->regions * pitch;
	x->bytes = o->regions * o->region_size;
	x->buf = calloc(1, x->buflen);
	x->back = o->verify ? malloc(x->buflen) : NULL;
	if (x->buf == NULL || (o->verify && x->back == NULL)) {
		say("cannot allocate %zu bytes", x->buflen);
		return -1;
	}
	for (i = 0; i < o->regions; i++)	/* the gaps stay zero */
		fill(x->buf + i * pitch, o->region_size, rank,
		    i * o->region_size);
	MPI_Type_create_hvector((int)o->regions, (int)o->region_size,
	    (MPI_Aint)pitch, MPI_BYTE, &x->memtype);
	MPI_Type_commit(&x->memtype);
	MPI_Type_create_hvector((int)o->regions, (int)o->region_size,
	    (MPI_Aint)(pitch * nprocs), MPI_BYTE, &x->filetype);
	MPI_Type_commit(&x->filetype);
	return 0;
}

static int
hpio_io(struct run *x, MPI_File fh, int verify)
{
	const struct opts *o = x->o;
	MPI_Offset disp = (MPI_Offset)(rank * (o->region_size + o->spacing));
	int rc, bad;

	rc = MPI_File_set_view(fh, disp, MPI_BYTE, x->filetype, "native",
	    o->info);
	if (failed(rc, "cannot set the view of", x->path))
		return -1;
	if (!verify) {
		rc = MPI_File_write_all(fh, x->buf, 1, x->memtype,
		    MPI_STATUS_IGNORE);
		return failed(rc, "cannot write", x->path) ? -1 : 0;
	}
	memset(x->back, 0, x->buflen);
	rc = MPI_File_read_all(fh, x->back, 1, x->memtype, MPI_STATUS_IGNORE);
	bad = failed(rc, "cannot read", x->path);
	if (!bad && memcmp(x->back, x->buf, x->buflen) != 0) {
		say("'%s' differs from what this rank wrote", x->path);
		bad = 1;
	}
	return bad ? -1 : 0;
}

/*
 * One pass: open, the pattern, [sync], close.  The collective calls are
 * made on every rank even after a local failure, so that no rank is left
 * waiting in one; the outcome is agreed on afterwards.
 */
static int
pass(struct run *x, int verify)
{
	int rd = verify || x->o->read;
	int amode = rd ? MPI_MODE_RDONLY : MPI_MODE_CREATE | MPI_MODE_WRONLY;
	MPI_File fh;
	int rc, bad;

	x->t[0] = MPI_Wtime();
	rc = MPI_File_open(x->comm, x->path, amode, x->o->info, &fh);
	if (failed(rc, verify ? "cannot open (to verify)" : "cannot open",
	    x->path))
		return -1;
	x->t[1] = MPI_Wtime();
	if (x->o->mode == HPIO)
		bad = hpio_io(x, fh, verify) != 0;
	else
		bad = ior_io(x, fh, verify) != 0;
	if (x->o->sync && !rd)
		bad |= failed(MPI_File_sync(fh), "cannot sync", x->path);
	x->t[2] = MPI_Wtime();
	bad |= failed(MPI_File_close(&fh), "cannot close", x->path);
	x->t[3] = MPI_Wtime();
	return bad ? -1 : 0;
}

/* ---- report ------------------------------------------------------------ */

static void
print_json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void
report(const struct opts *o, double secs, const double *phase, uint64_t total,
       int verified)
{
	static const char *const names[] = { "ior", "ior-nn", "hpio" };

	printf("{\"pattern\":\"%s\",\"nprocs\":%d,\"bytes\":%llu,"
	    "\"seconds\":%.6f,\"mib_s\":%.3f,\"phase\":\"%s\","
	    "\"open_s\":%.6f,\"data_s\":%.6f,\"close_s\":%.6f,\"file\":",
	    names[o->mode], nprocs, (unsigned long long)total, secs,
	    secs > 0 ? total / 1048576.0 / secs : 0.0,
	    o->read ? "read" : "write", phase[0], phase[1], phase[2]);
	print_json_string(o->file);
	if (o->mode == HPIO)
		printf(",\"regions\":%llu,\"region_size\":%llu,"
		    "\"spacing\":%llu", (unsigned long long)o->regions,
		    (unsigned long long)o->region_size,
		    (unsigned long long)o->spacing);
	else
		printf(",\"segments\":%llu,\"block\":%llu,\"transfer\":%llu",
		    (unsigned long long)o->segments,
		    (unsigned long long)o->block,
		    (unsigned long long)o->transfer);
	printf(",\"sync\":%s,\"verified\":%s}\n", o->sync ? "true" : "false",
	    verified < 0 ? "null" : verified ? "true" : "false");
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	struct opts o;
	struct run x = { .memtype = MPI_DATATYPE_NULL,
	    .filetype = MPI_DATATYPE_NULL };
	double t[2], phase[3], t0, t1;
	int bad, verified = -1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

	bad = parse(argc, argv, &o) != 0;
	if (!bad) {
		x.o = &o;
		x.comm = MPI_COMM_WORLD;
		snprintf(x.path, sizeof(x.path), "%s", o.file);
		bad = (o.mode == HPIO ? hpio_setup(&x) : ior_setup(&x)) != 0;
	}
	if (agree(bad))
		goto fail;

	barrier();
	t0 = MPI_Wtime();
	bad = pass(&x, 0) != 0;
	t1 = MPI_Wtime();
	if (agree(bad))
		goto fail;
	/* IOR's bandwidth: earliest open to latest close; and each phase,
	 * the longest any rank took for it (open, data + sync, close) */
	t[0] = -t0;
	t[1] = t1;
	MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	phase[0] = x.t[1] - x.t[0];
	phase[1] = x.t[2] - x.t[1];
	phase[2] = x.t[3] - x.t[2];
	MPI_Allreduce(MPI_IN_PLACE, phase, 3, MPI_DOUBLE, MPI_MAX,
	    MPI_COMM_WORLD);

	if (o.verify) {
		verified = !agree(pass(&x, 1) != 0);
		bad = !verified;
	}
	if (rank == 0)
		report(&o, t[1] + t[0], phase, x.bytes * nprocs, verified);
	goto out;
fail:
	bad = 1;
out:
	if (x.memtype != MPI_DATATYPE_NULL)
		MPI_Type_free(&x.memtype);
	if (x.filetype != MPI_DATATYPE_NULL)
		MPI_Type_free(&x.filetype);
	if (o.info != MPI_INFO_NULL)
		MPI_Info_free(&o.info);
	free(x.buf);
	free(x.back);
	MPI_Finalize();
	return bad ? 1 : 0;
}
