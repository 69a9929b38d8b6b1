/*
 * mpi_iopat - helper of tests/cmd/mpiio.sh; not a test.  The access
 * patterns of real MPI-IO applications, in plain MPI only: no gfsplit
 * code, so the same program runs on MPICH alone and under the PMPI preload
 * lib/libgfsplit-mpiio.so, and the two files it writes must be the same.
 *
 *   mpiexec -n N mpi_iopat PATTERN write|read FILE [--option=VALUE...]
 *
 * The byte at global offset g is val(g) below, whoever writes it, so any
 * reader (another rank count, another view) checks what it reads on its
 * own; the message of a wrong byte is "byte at offset G is X, expected Y".
 *
 *   ior-at	IOR segmented N-1: for s < segments, rank r's block of
 *		--block bytes at (s*N + r) * block, in --transfer sized
 *		MPI_File_write_at calls, no file view
 *   ior-view	the same file through a view: disp r*block, filetype block
 *		bytes resized to N*block; MPI_File_seek, then MPI_File_write
 *   hpio	HPIO nc-nc: --regions regions of --region-size bytes, region
 *		i of rank r at (i*N + r) * (size + spacing); memory is a vector
 *		with --spacing bytes of gap after each region, the view a vector
 *		of the regions; one MPI_File_write_all.  The spacing bytes of
 *		the file are holes (read as 0)
 *   btio-subarray  a 3-D array of doubles (--dims, C order) over the
 *		process grid of MPI_Dims_create, view MPI_Type_create_subarray
 *		(remainders spread over the first ranks); one write_all
 *   btio-darray  the same array, view MPI_Type_create_darray (block
 *		distribution, default block size: the last ranks may get less)
 *   overlap	rank 0 writes a 64-byte header at offset 0 with the default
 *		view; then rank r's view covers [r*block, (r+2)*block),
 *		overlapping its neighbour's by a block, in one write_all
 *   contig	(read only) the whole file (MPI_File_get_size) in N
 *		contiguous chunks with MPI_File_read_at_all
 *   cyclic	(read only) the whole file through a cyclic view of
 *		--cyclic-block bytes (deliberately unaligned) with read_all
 *
 * In read mode each pattern issues the same calls as read calls and checks
 * every byte (and that a noncontiguous memory type left its gaps alone);
 * contig and cyclic expect val(g), or 0 in the holes of the pattern named
 * by --from (hpio: its spacing).  The status of every data call must count
 * what was asked (MPI_Get_count, MPI_Get_elements); after the data the
 * individual file pointer and MPI_File_get_byte_offset must be where the
 * view says; with --sync (and always in read mode) rank 0 checks that
 * MPI_File_get_size covers the pattern.
 *
 * Options: --api=classic|large|split|nonblocking (the call family of the
 * data calls: MPI_File_write_at/write/write_all..., their MPI-4 _c
 * variants, split collectives (independent
 * calls stay classic), MPI_File_i* with every call of a block posted
 * before MPI_Waitall), --segments, --block, --transfer, --regions,
 * --region-size, --spacing, --dims=XxYxZ, --cyclic-block (sizes take a
 * k/m suffix), --sync (MPI_File_sync before close), --hint[=VALUE] (the
 * MPI_Info hint gfsplit_split, default enable, at open), --from=PATTERN.
 *
 * Errors never abort and never hang: an MPI error prints
 * "mpi_iopat: rank R: CALL: MPI error string"; the ranks agree on failure
 * before any further collective, close the file and exit 1.  On success
 * rank 0 prints "mpi_iopat: PATTERN MODE N ranks BYTES bytes ok".  Usage
 * errors exit 2.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mpi4.h"
#include "testutil.h"

enum api { API_CLASSIC, API_LARGE, API_SPLIT, API_NB };
static const char *const api_names[] = { "classic", "large", "split", "nonblocking" };

static struct {
	enum api api;
	long segments, block, transfer, regions, rsize, spacing, cblock;
	long dims[3];
	int sync;
	const char *hint;	/* gfsplit_split value at open, or NULL */
	int write;
} o = {
	.api = API_CLASSIC, .segments = 4, .block = 256 << 10, .transfer = 64 << 10,
	.regions = 4096, .rsize = 8, .spacing = 128, .cblock = 100000,
	.dims = { 24, 20, 16 },
};

static int rank, nprocs;

#define HDR_LEN		64
#define GAP_BYTE	0xee		/* memory gaps: must never reach a file */
#define ROUND		(16 << 20)	/* contig: bytes per rank per call */

static unsigned char
val(MPI_Offset g)
{
	uint64_t u = (uint64_t)g;

	return (unsigned char)(((u * 2654435761u) >> 13) ^ (u >> 20));
}

/* contig/cyclic, --from=hpio: the file has that pattern's holes */
static int holes;

/* what byte g of the file holds */
static unsigned char
expect(MPI_Offset g)
{
	if (holes && g % (o.rsize + o.spacing) >= o.rsize)
		return 0;
	return val(g);
}

#define TRY(call, expr) do {						\
	int rc_ = (expr);						\
	if (rc_ != MPI_SUCCESS)						\
		return must(rc_, call);					\
} while (0)

/* ---- what one rank transfers ------------------------------------------ */

/* one contiguous run of the rank's data stream in the file */
struct ext {
	MPI_Offset off, len;
};

/*
 * The rank's data stream, in the order the calls move it, lies in the file
 * at ext[0], ext[1], ... and in memory in runs of mrun bytes, each followed
 * by mgap bytes of gap (mgap 0: contiguous):
 *
 *   memory  |run|gap|run|gap|run|gap|       stream byte k at
 *   file       ext[0]    ext[1] ...          (k / mrun) * (mrun + mgap) + k % mrun
 */
struct plan {
	struct ext *ext;
	size_t next, cap;
	MPI_Offset bytes;		/* stream length */
	MPI_Offset fsize;		/* the file is at least this long */
	MPI_Offset mrun, mgap;
	unsigned char *buf;
	size_t buflen;
	int view;			/* set a view before the data calls */
	MPI_Offset disp;
	MPI_Datatype etype, ftype, mtype;
	int etsize;
	MPI_Count mcount;		/* one call: mcount of mtype */
	MPI_Offset hdr;			/* overlap: rank 0's header bytes */
	unsigned char hbuf[HDR_LEN];
};

static int
add_ext(struct plan *p, MPI_Offset off, MPI_Offset len)
{
	if (len <= 0)
		return 0;
	if (p->next && p->ext[p->next - 1].off + p->ext[p->next - 1].len == off) {
		p->ext[p->next - 1].len += len;
	} else {
		if (p->next == p->cap) {
			size_t cap = p->cap ? 2 * p->cap : 64;
			struct ext *e = realloc(p->ext, cap * sizeof(*e));

			if (!e)
				return fail("out of memory");
			p->ext = e;
			p->cap = cap;
		}
		p->ext[p->next].off = off;
		p->ext[p->next].len = len;
		p->next++;
	}
	p->bytes += len;
	return 0;
}

static size_t
mpos(const struct plan *p, MPI_Offset k)
{
	if (!p->mgap)
		return (size_t)k;
	return (size_t)(k / p->mrun * (p->mrun + p->mgap) + k % p->mrun);
}

/* memory for the stream: write: val(g) and gap bytes; read: the opposite
 * of what is expected, so a byte the read did not deliver shows */
static int
fill(struct plan *p)
{
	MPI_Offset k = 0;
	size_t i;

	p->buflen = p->bytes ? mpos(p, p->bytes - 1) + 1 : 1;
	p->buf = malloc(p->buflen);
	if (!p->buf)
		return fail("out of memory for %zu bytes", p->buflen);
	memset(p->buf, GAP_BYTE, p->buflen);
	for (i = 0; i < p->next; i++) {
		MPI_Offset g;

		for (g = p->ext[i].off; g < p->ext[i].off + p->ext[i].len; g++, k++)
			p->buf[mpos(p, k)] = o.write ? val(g) : (unsigned char)~expect(g);
	}
	for (k = 0; k < p->hdr; k++)
		p->hbuf[k] = o.write ? val(k) : (unsigned char)~val(k);
	return 0;
}

static int
verify(const struct plan *p)
{
	MPI_Offset k = 0;
	size_t i, m;

	for (i = 0; i < p->next; i++) {
		MPI_Offset g;

		for (g = p->ext[i].off; g < p->ext[i].off + p->ext[i].len; g++, k++) {
			unsigned char got = p->buf[mpos(p, k)];

			if (got != expect(g))
				return fail("byte at offset %lld is %d, expected %d",
					    (long long)g, got, expect(g));
		}
	}
	for (k = 0; k < p->hdr; k++)
		if (p->hbuf[k] != val(k))
			return fail("byte at offset %lld is %d, expected %d (header)",
				    (long long)k, p->hbuf[k], val(k));
	if (p->mgap)
		for (m = 0; m < p->buflen; m++)
			if (m % (size_t)(p->mrun + p->mgap) >= (size_t)p->mrun &&
			    p->buf[m] != GAP_BYTE)
				return fail("read into the gap of the memory type at "
					    "buffer byte %zu", m);
	return 0;
}

/*
 * ---- datatypes: the classic constructors, also with --api=large.  ROMIO
 * of MPICH 4.0.2 cannot flatten a type made by an MPI-4 _c constructor: a
 * view or memory type of one ends in "Out of memory in file
 * adio/common/flatten.c" and MPI_Abort, so a plain run could not be the
 * reference.
 */

static int
commit(MPI_Datatype *t)
{
	TRY("MPI_Type_commit", MPI_Type_commit(t));
	return 0;
}

static int
mk_vector(MPI_Offset n, MPI_Offset blk, MPI_Offset stride, MPI_Datatype *t)
{
	TRY("MPI_Type_vector", MPI_Type_vector((int)n, (int)blk, (int)stride, MPI_BYTE, t));
	return commit(t);
}

/* blk bytes, extent ext: a block of a cyclic layout */
static int
mk_block(MPI_Offset blk, MPI_Offset ext, MPI_Datatype *t)
{
	MPI_Datatype c;
	int rc;

	TRY("MPI_Type_contiguous", MPI_Type_contiguous((int)blk, MPI_BYTE, &c));
	rc = MPI_Type_create_resized(c, 0, ext, t);
	MPI_Type_free(&c);
	TRY("MPI_Type_create_resized", rc);
	return commit(t);
}

static int
mk_contig(MPI_Offset n, MPI_Datatype *t)
{
	TRY("MPI_Type_contiguous", MPI_Type_contiguous((int)n, MPI_BYTE, t));
	return commit(t);
}

/* ---- the data calls ---------------------------------------------------- */

/* one data call: at offset off (-1: the individual file pointer) */
struct call {
	MPI_Offset off;
	void *buf;
	MPI_Count count;
	MPI_Datatype type;
	MPI_Count elems;	/* basic elements in count of type */
};

static void
call_name(char *s, size_t len, const struct call *c, int coll, const char *suffix)
{
	snprintf(s, len, "MPI_File_%s%s%s%s%s%s", o.api == API_NB ? "i" : "",
		 o.write ? "write" : "read", c->off >= 0 ? "_at" : "",
		 coll ? "_all" : "", suffix, o.api == API_LARGE ? "_c" : "");
}

/* MPI_File_[i]{write,read}POST(ARGS): the one call, in either direction */
#define RW(pre, post, ...)						\
	(o.write ? MPI_File_##pre##write##post(__VA_ARGS__)		\
		 : MPI_File_##pre##read##post(__VA_ARGS__))

static int
classic(MPI_File fh, const struct call *c, int coll, MPI_Status *st)
{
	int n = (int)c->count;

	if (c->off >= 0)
		return coll ? RW(, _at_all, fh, c->off, c->buf, n, c->type, st)
			    : RW(, _at, fh, c->off, c->buf, n, c->type, st);
	return coll ? RW(, _all, fh, c->buf, n, c->type, st)
		    : RW(, , fh, c->buf, n, c->type, st);
}

static int
large(MPI_File fh, const struct call *c, int coll, MPI_Status *st)
{
	if (c->off >= 0)
		return coll ? RW(, _at_all_c, fh, c->off, c->buf, c->count, c->type, st)
			    : RW(, _at_c, fh, c->off, c->buf, c->count, c->type, st);
	return coll ? RW(, _all_c, fh, c->buf, c->count, c->type, st)
		    : RW(, _c, fh, c->buf, c->count, c->type, st);
}

static int
nonblocking(MPI_File fh, const struct call *c, int coll, MPI_Request *req)
{
	int n = (int)c->count;

	if (c->off >= 0)
		return coll ? RW(i, _at_all, fh, c->off, c->buf, n, c->type, req)
			    : RW(i, _at, fh, c->off, c->buf, n, c->type, req);
	return coll ? RW(i, _all, fh, c->buf, n, c->type, req)
		    : RW(i, , fh, c->buf, n, c->type, req);
}

/* split collective: begin, end; names the failing half */
static int
split(MPI_File fh, const struct call *c, MPI_Status *st, const char **half)
{
	int n = (int)c->count, rc;

	*half = "_begin";
	if (c->off >= 0)
		rc = RW(, _at_all_begin, fh, c->off, c->buf, n, c->type);
	else
		rc = RW(, _all_begin, fh, c->buf, n, c->type);
	if (rc != MPI_SUCCESS)
		return rc;
	*half = "_end";
	if (c->off >= 0)
		return RW(, _at_all_end, fh, c->buf, st);
	return RW(, _all_end, fh, c->buf, st);
}

/* the status of a finished call must count what was asked */
static int
check_status(MPI_Status *st, const struct call *c, const char *name)
{
	MPI_Count cnt, el;

	if (o.api == API_LARGE) {
		TRY("MPI_Get_count_c", MPI_Get_count_c(st, c->type, &cnt));
		TRY("MPI_Get_elements_c", MPI_Get_elements_c(st, c->type, &el));
	} else {
		int ic, ie;

		TRY("MPI_Get_count", MPI_Get_count(st, c->type, &ic));
		TRY("MPI_Get_elements", MPI_Get_elements(st, c->type, &ie));
		cnt = ic;
		el = ie;
	}
	if (cnt != c->count || el != c->elems)
		return fail("%s: the status counts %lld items (%lld elements), "
			    "asked for %lld (%lld)", name, (long long)cnt,
			    (long long)el, (long long)c->count, (long long)c->elems);
	return 0;
}

/*
 * Issue the n calls, all collective (coll) or all independent, in order.
 * Nonblocking: all posted before one MPI_Waitall; a failed post still
 * waits for those already posted.
 */
static int
io_calls(MPI_File fh, const struct call *c, int n, int coll)
{
	MPI_Request *req = NULL;
	MPI_Status *sts = NULL;
	const char *half = "";
	char name[64];
	int i, posted = 0, rc = 0, mrc;
	enum api api = o.api;

	if (api == API_SPLIT && !coll)
		o.api = API_CLASSIC;	/* MPI has no independent split calls */
	if (o.api == API_NB) {
		req = calloc((size_t)n, sizeof(*req));
		sts = calloc((size_t)n, sizeof(*sts));
		if (!req || !sts) {
			rc = fail("out of memory");
			goto out;
		}
		for (posted = 0; posted < n; posted++) {
			mrc = nonblocking(fh, &c[posted], coll, &req[posted]);
			if (mrc != MPI_SUCCESS) {
				call_name(name, sizeof(name), &c[posted], coll, "");
				rc = must(mrc, name);
				break;
			}
		}
		mrc = MPI_Waitall(posted, req, sts);
		if (mrc != MPI_SUCCESS) {
			call_name(name, sizeof(name), c, coll, "");
			rc = must(mrc, name);	/* MPI_Wait reports the call's error */
		}
		for (i = 0; i < posted && !rc; i++) {
			call_name(name, sizeof(name), &c[i], coll, "");
			rc = check_status(&sts[i], &c[i], name);
		}
		goto out;
	}
	for (i = 0; i < n && !rc; i++) {
		MPI_Status st;

		if (o.api == API_SPLIT)
			mrc = split(fh, &c[i], &st, &half);
		else if (o.api == API_LARGE)
			mrc = large(fh, &c[i], coll, &st);
		else
			mrc = classic(fh, &c[i], coll, &st);
		call_name(name, sizeof(name), &c[i], coll, half);
		if (mrc != MPI_SUCCESS)
			rc = must(mrc, name);
		else
			rc = check_status(&st, &c[i], name);
	}
out:
	o.api = api;
	free(req);
	free(sts);
	return rc;
}

/* the stream in transfer-sized calls, one batch per extent (IOR) */
static int
io_transfers(MPI_File fh, struct plan *p, int at)
{
	MPI_Offset k = 0, t, most = 0;
	struct call *c;
	size_t i;
	int n, rc = 0;

	for (i = 0; i < p->next; i++)	/* adjacent blocks are one extent */
		most = p->ext[i].len > most ? p->ext[i].len : most;
	c = calloc((size_t)(most / o.transfer + 1), sizeof(*c));
	if (!c)
		return fail("out of memory");
	for (i = 0; i < p->next && !rc; i++) {
		for (n = 0, t = 0; t < p->ext[i].len; t += o.transfer, n++) {
			c[n].off = at ? p->ext[i].off + t : -1;
			c[n].buf = p->buf + k + t;
			c[n].count = c[n].elems = p->ext[i].len - t < o.transfer
						  ? p->ext[i].len - t : o.transfer;
			c[n].type = MPI_BYTE;
		}
		k += p->ext[i].len;
		rc = io_calls(fh, c, n, o.api == API_SPLIT);
	}
	free(c);
	return rc;
}

/* ---- the patterns -------------------------------------------------------- */

struct pattern {
	const char *name;
	int can_write;
	int (*plan)(MPI_File fh, struct plan *p);
	int (*io)(MPI_File fh, struct plan *p);
};

static int
plan_ior(MPI_File fh, struct plan *p)
{
	long s;
	int rc = 0;

	for (s = 0; s < o.segments && !rc; s++)
		rc = add_ext(p, ((MPI_Offset)s * nprocs + rank) * o.block, o.block);
	p->fsize = (MPI_Offset)o.segments * nprocs * o.block;
	return rc;
}

static int
io_ior_at(MPI_File fh, struct plan *p)
{
	return io_transfers(fh, p, 1);
}

static int
plan_ior_view(MPI_File fh, struct plan *p)
{
	p->view = 1;
	p->disp = (MPI_Offset)rank * o.block;
	if (mk_block(o.block, (MPI_Offset)nprocs * o.block, &p->ftype))
		return -1;
	return plan_ior(fh, p);
}

static int
io_ior_view(MPI_File fh, struct plan *p)
{
	TRY("MPI_File_seek", MPI_File_seek(fh, 0, MPI_SEEK_SET));
	return io_transfers(fh, p, 0);
}

/* one collective call at the file pointer: mcount of mtype (whose basic
 * type is the etype in every pattern) */
static int
io_single(MPI_File fh, struct plan *p)
{
	struct call c = {
		.off = -1, .buf = p->buf, .count = p->mcount, .type = p->mtype,
		.elems = p->bytes / p->etsize,
	};

	return io_calls(fh, &c, 1, 1);
}

static int
plan_hpio(MPI_File fh, struct plan *p)
{
	MPI_Offset pitch = o.rsize + o.spacing;
	long i;
	int rc = 0;

	for (i = 0; i < o.regions && !rc; i++)
		rc = add_ext(p, ((MPI_Offset)i * nprocs + rank) * pitch, o.rsize);
	p->fsize = ((MPI_Offset)o.regions * nprocs - 1) * pitch + o.rsize;
	p->mrun = o.rsize;
	p->mgap = o.spacing;
	p->view = 1;
	p->disp = rank * pitch;
	if (rc || mk_vector(o.regions, o.rsize, nprocs * pitch, &p->ftype))
		return -1;
	if (!o.spacing) {
		p->mtype = MPI_BYTE;
		p->mcount = p->bytes;
		return 0;
	}
	p->mcount = 1;
	return mk_vector(o.regions, o.rsize, pitch, &p->mtype);
}

/*
 * BT-IO: a G0 x G1 x G2 array of doubles, C order, over a P0 x P1 x P2
 * process grid (rank = (c0 * P1 + c1) * P2 + c2, as MPI_Type_create_darray
 * numbers it).  lo[d], n[d]: the rank's first index and count in dim d.
 */
static int
plan_btio(MPI_File fh, struct plan *p, int darray)
{
	static const int dist[3] = { MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK,
				     MPI_DISTRIBUTE_BLOCK };
	static const int darg[3] = { MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG,
				     MPI_DISTRIBUTE_DFLT_DARG };
	int pd[3] = { 0, 0, 0 }, c[3], d, rc = 0, gs[3], ss[3], st[3];
	MPI_Offset lo[3], n[3], i, j;

	TRY("MPI_Dims_create", MPI_Dims_create(nprocs, 3, pd));
	c[0] = rank / (pd[1] * pd[2]);
	c[1] = rank / pd[2] % pd[1];
	c[2] = rank % pd[2];
	for (d = 0; d < 3; d++) {
		MPI_Offset g = o.dims[d], q = g / pd[d], rem = g % pd[d];

		if (darray) {		/* MPI_DISTRIBUTE_DFLT_DARG: ceil(g / p) */
			q = (g + pd[d] - 1) / pd[d];
			lo[d] = c[d] * q;
			n[d] = lo[d] >= g ? 0 : (g - lo[d] < q ? g - lo[d] : q);
		} else {
			lo[d] = c[d] * q + (c[d] < rem ? c[d] : rem);
			n[d] = q + (c[d] < rem);
		}
	}
	for (i = 0; i < n[0] && n[2]; i++)
		for (j = 0; j < n[1] && !rc; j++)
			rc = add_ext(p, 8 * (((lo[0] + i) * o.dims[1] + lo[1] + j) *
					     o.dims[2] + lo[2]), 8 * n[2]);
	p->fsize = 8 * (MPI_Offset)o.dims[0] * o.dims[1] * o.dims[2];
	p->view = 1;
	p->etype = p->mtype = MPI_DOUBLE;
	p->etsize = 8;
	p->mcount = p->bytes / 8;
	if (rc)
		return rc;
	for (d = 0; d < 3; d++) {
		gs[d] = (int)o.dims[d];
		ss[d] = (int)n[d];
		st[d] = (int)lo[d];
	}
	if (darray)
		TRY("MPI_Type_create_darray", MPI_Type_create_darray(nprocs, rank, 3,
			gs, dist, darg, pd, MPI_ORDER_C, MPI_DOUBLE, &p->ftype));
	else
		TRY("MPI_Type_create_subarray", MPI_Type_create_subarray(3, gs, ss, st,
			MPI_ORDER_C, MPI_DOUBLE, &p->ftype));
	return commit(&p->ftype);
}

static int
plan_subarray(MPI_File fh, struct plan *p)
{
	return plan_btio(fh, p, 0);
}

static int
plan_darray(MPI_File fh, struct plan *p)
{
	return plan_btio(fh, p, 1);
}

static int
plan_overlap(MPI_File fh, struct plan *p)
{
	p->hdr = rank == 0 ? (o.block < HDR_LEN ? o.block : HDR_LEN) : 0;
	p->view = 1;
	p->disp = (MPI_Offset)rank * o.block;
	p->fsize = (MPI_Offset)(nprocs + 1) * o.block;
	p->mcount = 2 * o.block;
	if (mk_contig(2 * o.block, &p->ftype))
		return -1;
	return add_ext(p, p->disp, 2 * o.block);
}

static int
plan_contig(MPI_File fh, struct plan *p)
{
	MPI_Offset size, chunk, lo;

	TRY("MPI_File_get_size", MPI_File_get_size(fh, &size));
	chunk = (size + nprocs - 1) / nprocs;
	lo = rank * chunk < size ? rank * chunk : size;
	p->fsize = size;
	return add_ext(p, lo, size - lo < chunk ? size - lo : chunk);
}

/* every rank the same number of read_at_all calls, ROUND bytes or less */
static int
io_contig(MPI_File fh, struct plan *p)
{
	MPI_Offset chunk = (p->fsize + nprocs - 1) / nprocs, k;
	int rc = 0;

	for (k = 0; k < chunk && !rc; k += ROUND) {
		MPI_Offset len = p->bytes - k, off = p->next ? p->ext[0].off : 0;
		struct call c = { .off = off + k, .buf = p->buf + k, .type = MPI_BYTE };

		len = len < 0 ? 0 : (len > ROUND ? ROUND : len);
		c.count = c.elems = len;
		rc = io_calls(fh, &c, 1, 1);
	}
	return rc;
}

static int
plan_cyclic(MPI_File fh, struct plan *p)
{
	MPI_Offset size, off;
	int rc = 0;

	TRY("MPI_File_get_size", MPI_File_get_size(fh, &size));
	for (off = (MPI_Offset)rank * o.cblock; off < size && !rc;
	     off += (MPI_Offset)nprocs * o.cblock)
		rc = add_ext(p, off, size - off < o.cblock ? size - off : o.cblock);
	p->fsize = size;
	p->view = 1;
	p->disp = (MPI_Offset)rank * o.cblock;
	p->mcount = p->bytes;
	if (rc)
		return rc;
	return mk_block(o.cblock, (MPI_Offset)nprocs * o.cblock, &p->ftype);
}

static const struct pattern patterns[] = {
	{ "ior-at", 1, plan_ior, io_ior_at },
	{ "ior-view", 1, plan_ior_view, io_ior_view },
	{ "hpio", 1, plan_hpio, io_single },
	{ "btio-subarray", 1, plan_subarray, io_single },
	{ "btio-darray", 1, plan_darray, io_single },
	{ "overlap", 1, plan_overlap, io_single },
	{ "contig", 0, plan_contig, io_contig },
	{ "cyclic", 0, plan_cyclic, io_single },
};

/* ---- around the data: view, checks ---------------------------------------- */

/* MPI_File_get_group: the group of the communicator the file was opened on */
static int
check_group(MPI_File fh)
{
	MPI_Group g, w;
	int cmp = MPI_UNEQUAL;

	TRY("MPI_File_get_group", MPI_File_get_group(fh, &g));
	MPI_Comm_group(MPI_COMM_WORLD, &w);
	MPI_Group_compare(g, w, &cmp);
	MPI_Group_free(&g);
	MPI_Group_free(&w);
	if (cmp != MPI_IDENT)
		return fail("MPI_File_get_group: not MPI_COMM_WORLD's group");
	return 0;
}

/* A copy of a derived type from MPI_File_get_view is the caller's to free. */
static void
free_copy(MPI_Datatype *t)
{
	int ni, na, nd, comb;

	MPI_Type_get_envelope(*t, &ni, &na, &nd, &comb);
	if (comb != MPI_COMBINER_NAMED)
		MPI_Type_free(t);
}

/* MPI_File_get_view gives back the view set: displacement, data
 * representation, and types of the same size and extent */
static int
check_view(MPI_File fh, const struct plan *p)
{
	MPI_Offset disp;
	MPI_Datatype et, ft;
	MPI_Aint lb, ext, wlb, wext;
	char rep[MPI_MAX_DATAREP_STRING];
	int esz, fsz, wsz, bad;

	TRY("MPI_File_get_view", MPI_File_get_view(fh, &disp, &et, &ft, rep));
	MPI_Type_size(et, &esz);
	MPI_Type_size(ft, &fsz);
	MPI_Type_size(p->ftype, &wsz);
	MPI_Type_get_extent(ft, &lb, &ext);
	MPI_Type_get_extent(p->ftype, &wlb, &wext);
	bad = disp != p->disp || strcmp(rep, "native") != 0 ||
	    esz != (int)p->etsize || fsz != wsz || ext != wext || lb != wlb;
	free_copy(&et);
	free_copy(&ft);
	if (bad)
		return fail("MPI_File_get_view: disp %lld, '%s', etype %d, "
			    "filetype %d bytes of extent %ld: not the view set",
			    (long long)disp, rep, esz, fsz, (long)ext);
	return 0;
}

static int
set_view(MPI_File fh, struct plan *p)
{
	if (!p->view)
		return 0;
	TRY("MPI_File_set_view", MPI_File_set_view(fh, p->disp, p->etype, p->ftype,
						  "native", MPI_INFO_NULL));
	return check_view(fh, p);
}

/* the individual pointer after the data, and the byte it points back to */
static int
check_position(MPI_File fh, const struct plan *p)
{
	MPI_Offset pos, want = p->view ? p->bytes / p->etsize : 0, byte, last;

	TRY("MPI_File_get_position", MPI_File_get_position(fh, &pos));
	if (pos != want)
		return fail("MPI_File_get_position says %lld, expected %lld",
			    (long long)pos, (long long)want);
	if (!pos)
		return 0;
	TRY("MPI_File_get_byte_offset", MPI_File_get_byte_offset(fh, pos - 1, &byte));
	last = p->ext[p->next - 1].off + p->ext[p->next - 1].len - p->etsize;
	if (byte != last)
		return fail("MPI_File_get_byte_offset(%lld) says %lld, expected %lld",
			    (long long)(pos - 1), (long long)byte, (long long)last);
	return 0;
}

static int
check_size(MPI_File fh, const struct plan *p)
{
	MPI_Offset size;

	if (rank != 0)
		return 0;
	TRY("MPI_File_get_size", MPI_File_get_size(fh, &size));
	if (size < p->fsize)
		return fail("MPI_File_get_size says %lld, expected at least %lld",
			    (long long)size, (long long)p->fsize);
	return 0;
}

/* everything between open and close; the ranks agree before collectives */
static int
run(MPI_File fh, const struct pattern *pat, struct plan *p)
{
	int rc;

	rc = pat->plan(fh, p);
	if (!rc)
		rc = fill(p);
	if (agree(rc))
		return -1;
	if (p->hdr) {		/* overlap: rank 0 alone, default view */
		struct call h = {
			.off = 0, .buf = p->hbuf, .count = p->hdr, .type = MPI_BYTE,
			.elems = p->hdr,
		};

		rc = io_calls(fh, &h, 1, 0);
	}
	if (agree(rc) || agree(set_view(fh, p)))
		return -1;
	rc = pat->io(fh, p);
	if (!rc && !o.write)
		rc = verify(p);
	if (agree(rc))
		return -1;
	rc = check_position(fh, p);
	if (!o.write) {
		rc |= check_size(fh, p);
	} else if (o.sync) {
		int mrc = MPI_File_sync(fh);

		if (mrc != MPI_SUCCESS)
			return must(mrc, "MPI_File_sync");
		MPI_Barrier(MPI_COMM_WORLD);
		rc |= check_size(fh, p);
	}
	return rc;
}

/* ---- options --------------------------------------------------------------- */

static int
usage(const char *msg)
{
	if (rank == 0)
		fprintf(stderr, "mpi_iopat: %s\nusage: mpi_iopat PATTERN write|read FILE "
			"[--api=classic|large|split|nonblocking] [--segments=N]\n"
			"  [--block=SIZE] [--transfer=SIZE] [--regions=N] [--region-size=SIZE]\n"
			"  [--spacing=SIZE] [--dims=XxYxZ] [--cyclic-block=SIZE] [--sync]\n"
			"  [--hint[=VALUE]] [--from=PATTERN]\n"
			"patterns: ior-at ior-view hpio btio-subarray btio-darray overlap,\n"
			"  read only: contig cyclic\n", msg);
	return 2;
}

static int
size_arg(const char *s, long *v, long min)
{
	char *end;

	*v = strtol(s, &end, 10);
	if (end == s)
		return -1;
	if (*end == 'k' || *end == 'K')
		*v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		*v <<= 20, end++;
	return *end || *v < min || *v > INT_MAX ? -1 : 0;
}

static int
options(int argc, char **argv)
{
	static const struct { const char *name; long *v; long min; } sizes[] = {
		{ "--segments=", &o.segments, 1 }, { "--block=", &o.block, 1 },
		{ "--transfer=", &o.transfer, 1 }, { "--regions=", &o.regions, 1 },
		{ "--region-size=", &o.rsize, 1 }, { "--spacing=", &o.spacing, 0 },
		{ "--cyclic-block=", &o.cblock, 1 },
	};
	int i, a, d;

	for (a = 4; a < argc; a++) {
		const char *s = argv[a];
		size_t k;

		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			size_t l = strlen(sizes[k].name);

			if (!strncmp(s, sizes[k].name, l)) {
				if (size_arg(s + l, sizes[k].v, sizes[k].min))
					return usage("bad size in option");
				break;
			}
		}
		if (k < sizeof(sizes) / sizeof(sizes[0]))
			continue;
		if (!strncmp(s, "--api=", 6)) {
			for (i = 0; i < 4 && strcmp(s + 6, api_names[i]); i++)
				;
			if (i == 4)
				return usage("--api: not one of classic|large|split|nonblocking");
			o.api = (enum api)i;
		} else if (!strncmp(s, "--dims=", 7)) {
			char *p = (char *)s + 7, *end;

			for (d = 0; d < 3; d++, p = end + 1) {
				o.dims[d] = strtol(p, &end, 10);
				if (end == p || o.dims[d] < 1 || o.dims[d] > 1 << 20 ||
				    *end != (d < 2 ? 'x' : '\0'))
					return usage("--dims: not XxYxZ");
			}
		} else if (!strcmp(s, "--sync")) {
			o.sync = 1;
		} else if (!strcmp(s, "--hint")) {
			o.hint = "enable";
		} else if (!strncmp(s, "--hint=", 7)) {
			o.hint = s + 7;
		} else if (!strncmp(s, "--from=", 7)) {
			holes = !strcmp(s + 7, "hpio");
		} else {
			return usage("unknown option");
		}
	}
	return 0;
}

int
main(int argc, char **argv)
{
	const struct pattern *pat = NULL;
	struct plan p = {
		.etype = MPI_BYTE, .etsize = 1, .ftype = MPI_DATATYPE_NULL, .mtype = MPI_BYTE,
	};
	MPI_File fh = MPI_FILE_NULL;
	MPI_Info info = MPI_INFO_NULL;
	long long bytes = 0, all = 0;
	size_t i;
	int rc, amode;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

	rc = argc < 4 ? usage("missing arguments") : options(argc, argv);
	for (i = 0; !rc && i < sizeof(patterns) / sizeof(patterns[0]); i++)
		if (!strcmp(argv[1], patterns[i].name))
			pat = &patterns[i];
	if (!rc && !pat)
		rc = usage("unknown pattern");
	if (!rc && strcmp(argv[2], "write") && strcmp(argv[2], "read"))
		rc = usage("mode is write or read");
	if (!rc && (o.write = !strcmp(argv[2], "write")) && !pat->can_write)
		rc = usage("this pattern only reads");
	if (rc) {
		MPI_Finalize();
		return rc;
	}

	if (o.hint) {
		MPI_Info_create(&info);
		MPI_Info_set(info, "gfsplit_split", o.hint);
	}
	amode = o.write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
	rc = MPI_File_open(MPI_COMM_WORLD, argv[3], amode, info, &fh);
	if (rc != MPI_SUCCESS) {
		rc = must(rc, "MPI_File_open");
		fh = MPI_FILE_NULL;
	} else {
		MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
		rc = check_group(fh);
		if (rc == 0)
			rc = run(fh, pat, &p);
	}
	if (fh != MPI_FILE_NULL) {
		int mrc = MPI_File_close(&fh);

		if (mrc != MPI_SUCCESS)
			rc = must(mrc, "MPI_File_close");
	}
	rc = agree(rc);
	bytes = p.bytes + p.hdr;
	MPI_Reduce(&bytes, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (!rc && rank == 0)
		printf("mpi_iopat: %s %s %d ranks %lld bytes ok\n", pat->name, argv[2],
		       nprocs, all);

	if (info != MPI_INFO_NULL)
		MPI_Info_free(&info);
	if (p.ftype != MPI_DATATYPE_NULL)
		MPI_Type_free(&p.ftype);
	if (p.mtype != MPI_BYTE && p.mtype != MPI_DOUBLE)
		MPI_Type_free(&p.mtype);
	free(p.ext);
	free(p.buf);
	MPI_Finalize();
	return rc ? 1 : 0;
}
