/*
 * format.c - encoders and decoders of the split-file metadata, format v1
 * (man/gfsplit.5), and whole-file helpers over the store.
 *
 * The encoders and decoders are pure: no I/O, no MPI.  All integers are
 * little-endian, written and read one byte at a time so the host's byte
 * order never matters; strings are a u32 length and that many bytes (no
 * NUL); every file ends with XXH3-64 of all the bytes before it.
 *
 * Marker (gfsplit.meta):
 *
 *   off  size  field
 *     0     8  magic "GFSPLITM"
 *     8     4  version (3, or 4 with the attributes; 1 and 2 are read)
 *    12     4  nprocs            writer ranks, 1..2^24
 *    16     4  nnodes            location files, 1..nprocs
 *    20     8  logical_size
 *    28     8  seg_size          checksum segment, > 0
 *    36     8  ctime             signed seconds since the epoch
 *    44     4  L                 layout string length, 0..31
 *    48     L  layout
 *              v4: 4  flags     bit 0: the source's attributes follow;
 *                               no other bit is defined
 *                  36 attributes mode, uid, gid (4 each), atime (8),
 *                               atime_ns (4), mtime (8), mtime_ns (4)
 *   end-8   8  XXH3-64 of all preceding bytes
 *
 * Location file (loc.<k>):
 *
 *     0     8  magic "GFSPLITL"
 *     8     4  version (3; 1 and 2 are read too; 4 is read as 3)
 *    12     4  nprocs
 *    16     4  nnodes
 *    20     4  node              this file's index k, < nnodes
 *    24     4  N                 node name length, 0..255
 *    28     N  node name
 *  28+N     4  nrecs             1..nprocs
 *     ...      nrecs records, strictly increasing rank
 *   end-8   8  XXH3-64 of all preceding bytes
 *
 * Record (v1: 64 + H + 16*A bytes; v2 adds the tail after indices[]; v3
 * adds an epoch to each run):
 *
 *     0     4  rank              < nprocs
 *     4     8  disp
 *    12     8  extent
 *    20     8  size              filetype size = sum of blocklens
 *    28     8  end               2^64-1: unbounded
 *    36     8  arr_len A
 *    44     8  part_size
 *    52     8  part_hash
 *    60     4  H                 host name length, 0..255
 *    64     H  host
 *  64+H   8*A  blocklens[]
 * 64+H+8A 8*A  indices[]
 *              v2 tail:
 *           4  X                 more views (1..X; view 0 is the above)
 *              X times: disp, extent, size, end, A (8 each),
 *                       blocklens[A], indices[A]
 *           8  R                 runs; 0: the implicit v1 run
 *              R times: view (4; 2^32-1: dense), begin, end, loff (8 each)
 *                       v3: and epoch (8)
 *
 * Decoders check, in this order: magic, minimum length, the trailer,
 * the version, then every count against the bytes that remain before
 * allocating anything, then the invariants.  A count is never trusted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "splitfile.h"

#define MARKER_MAGIC	"GFSPLITM"
#define LOC_MAGIC	"GFSPLITL"
#define MAGIC_LEN	8
#define TRAILER_LEN	8
#define MAX_NPROCS	(1u << 24)
#define MARKER_FIXED	(MAGIC_LEN + 4 + 4 + 4 + 8 + 8 + 8 + 4 + TRAILER_LEN)
#define MARKER_ATTRS	(4 + 4 + 4 + 4 + 8 + 4 + 8 + 4)	/* v4 flags + attrs */
#define MARKER_HAS_ATTRS	1u
#define LOC_FIXED	(MAGIC_LEN + 4 + 4 + 4 + 4 + 4 + 4 + TRAILER_LEN)
#define REC_FIXED	(4 + 8 * 7 + 4)

/* ------------------------------------------------------ byte helpers */

struct wcur {
	unsigned char *p;
	size_t pos;
};

static void
put_u32(struct wcur *w, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		w->p[w->pos++] = (unsigned char)(v >> (8 * i));
}

static void
put_u64(struct wcur *w, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		w->p[w->pos++] = (unsigned char)(v >> (8 * i));
}

static void
put_bytes(struct wcur *w, const void *b, size_t n)
{
	memcpy(w->p + w->pos, b, n);
	w->pos += n;
}

static void
put_str(struct wcur *w, const char *s, size_t n)
{
	put_u32(w, (uint32_t)n);
	put_bytes(w, s, n);
}

/* A read cursor over the body (everything before the trailer). */
struct rcur {
	const unsigned char *p;
	size_t len;		/* body length */
	size_t pos;
	const char *name;
	struct gfsp_error *err;
};

static size_t
left(const struct rcur *r)
{
	return r->len - r->pos;
}

static int
need(struct rcur *r, size_t n, const char *what)
{
	if (left(r) >= n)
		return 0;
	return gfsp_error_set(r->err, GFSP_ECORRUPT,
	    "%s: truncated: %s needs %zu bytes at offset %zu, %zu left",
	    r->name, what, n, r->pos, left(r));
}

static int
get_u32(struct rcur *r, uint32_t *v, const char *what)
{
	if (need(r, 4, what))
		return GFSP_ECORRUPT;
	*v = gfsp_le32(r->p + r->pos);
	r->pos += 4;
	return 0;
}

static int
get_u64(struct rcur *r, uint64_t *v, const char *what)
{
	if (need(r, 8, what))
		return GFSP_ECORRUPT;
	*v = gfsp_le64(r->p + r->pos);
	r->pos += 8;
	return 0;
}

/* A string of at most max-1 bytes into buf[max], NUL-terminated. */
static int
get_str(struct rcur *r, char *buf, size_t max, const char *what)
{
	uint32_t n;

	if (get_u32(r, &n, what))
		return GFSP_ECORRUPT;
	if (n >= max)
		return gfsp_error_set(r->err, GFSP_ECORRUPT,
		    "%s: %s is %u bytes long (at most %zu allowed)",
		    r->name, what, n, max - 1);
	if (need(r, n, what))
		return GFSP_ECORRUPT;
	if (memchr(r->p + r->pos, '\0', n) != NULL)
		return gfsp_error_set(r->err, GFSP_ECORRUPT,
		    "%s: %s contains a NUL byte", r->name, what);
	memcpy(buf, r->p + r->pos, n);
	buf[n] = '\0';
	r->pos += n;
	return 0;
}

/*
 * Common header checks: magic, minimum length, trailer, version.  On
 * success r covers the body after the version field.
 */
static int
open_body(const unsigned char *buf, size_t len, const char *name,
	  const char *magic, const char *what, size_t minlen,
	  struct rcur *r, struct gfsp_error *err)
{
	uint64_t want, got;
	uint32_t version;

	if (buf == NULL && len > 0)
		return gfsp_error_set(err, GFSP_EINVAL, "%s: no buffer", name);
	if (memcmp(buf, magic, len < MAGIC_LEN ? len : MAGIC_LEN) != 0)
		return gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s: bad magic: not a gfsplit %s", name, what);
	if (len < minlen)
		return gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s: truncated: %zu bytes, a %s has at least %zu",
		    name, len, what, minlen);
	want = gfsp_le64(buf + len - TRAILER_LEN);
	got = gfsp_hash64(buf, len - TRAILER_LEN);
	if (want != got)
		return gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s: checksum mismatch (file is corrupt or truncated)",
		    name);
	version = gfsp_le32(buf + MAGIC_LEN);
	if (version > GFSP_FORMAT_VERSION)
		return gfsp_error_set(err, GFSP_EVERSION,
		    "%s: format version %u is not supported by this gfsplit "
		    "(reads version %d)", name, version, GFSP_FORMAT_VERSION);
	if (version == 0)
		return gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s: bad format version 0", name);
	r->p = buf;
	r->len = len - TRAILER_LEN;
	r->pos = MAGIC_LEN + 4;
	r->name = name;
	r->err = err;
	return 0;
}

static int
body_done(struct rcur *r)
{
	if (r->pos == r->len)
		return 0;
	return gfsp_error_set(r->err, GFSP_ECORRUPT,
	    "%s: %zu unexpected bytes before the trailer", r->name, left(r));
}

/* ------------------------------------------------------------ marker */

int
gfsp_marker_encode(const struct gfsp_marker *m, unsigned char **buf,
		  size_t *len, struct gfsp_error *err)
{
	struct wcur w;
	size_t ll, n;

	ll = strnlen(m->layout, sizeof(m->layout));
	if (ll >= sizeof(m->layout))
		return gfsp_error_set(err, GFSP_EINVAL,
		    "layout string is not terminated within %zu bytes",
		    sizeof(m->layout));
	if (m->nprocs < 1 || m->nprocs > MAX_NPROCS || m->nnodes < 1 ||
	    m->nnodes > m->nprocs || m->seg_size == 0 ||
	    m->logical_size > GFSP_SIZE_MAX)
		return gfsp_error_set(err, GFSP_EINVAL,
		    "bad marker: nprocs %u, nnodes %u, segment size %llu, "
		    "logical size %llu", m->nprocs, m->nnodes,
		    (unsigned long long)m->seg_size,
		    (unsigned long long)m->logical_size);
	if (m->has_attrs && (m->attrs.mode > 07777 ||
	    m->attrs.atime_ns >= 1000000000u || m->attrs.mtime_ns >= 1000000000u))
		return gfsp_error_set(err, GFSP_EINVAL,
		    "bad attributes: mode %o, nanoseconds %u and %u",
		    m->attrs.mode, m->attrs.atime_ns, m->attrs.mtime_ns);
	n = MARKER_FIXED + ll + (m->has_attrs ? MARKER_ATTRS : 0);
	w.p = malloc(n);
	if (w.p == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM,
		    "cannot encode the marker: out of memory");
	w.pos = 0;
	put_bytes(&w, MARKER_MAGIC, MAGIC_LEN);
	put_u32(&w, m->has_attrs ? 4 : GFSP_FORMAT_WRITE);
	put_u32(&w, m->nprocs);
	put_u32(&w, m->nnodes);
	put_u64(&w, m->logical_size);
	put_u64(&w, m->seg_size);
	put_u64(&w, (uint64_t)m->ctime);
	put_str(&w, m->layout, ll);
	if (m->has_attrs) {
		put_u32(&w, MARKER_HAS_ATTRS);
		put_u32(&w, m->attrs.mode);
		put_u32(&w, m->attrs.uid);
		put_u32(&w, m->attrs.gid);
		put_u64(&w, (uint64_t)m->attrs.atime);
		put_u32(&w, m->attrs.atime_ns);
		put_u64(&w, (uint64_t)m->attrs.mtime);
		put_u32(&w, m->attrs.mtime_ns);
	}
	put_u64(&w, gfsp_hash64(w.p, w.pos));
	*buf = w.p;
	*len = w.pos;
	return 0;
}

/* v4: the flags and, with bit 0, the source's attributes */
static int
get_attrs(struct rcur *r, struct gfsp_marker *m)
{
	uint64_t at, mt;
	uint32_t flags;

	if (get_u32(r, &flags, "flags"))
		return GFSP_ECORRUPT;
	if (flags & ~MARKER_HAS_ATTRS)
		return gfsp_error_set(r->err, GFSP_ECORRUPT, "%s: unknown "
		    "flags 0x%x", r->name, flags);
	if (!(flags & MARKER_HAS_ATTRS))
		return 0;
	if (get_u32(r, &m->attrs.mode, "mode") ||
	    get_u32(r, &m->attrs.uid, "owner") ||
	    get_u32(r, &m->attrs.gid, "group") ||
	    get_u64(r, &at, "atime") ||
	    get_u32(r, &m->attrs.atime_ns, "atime nanoseconds") ||
	    get_u64(r, &mt, "mtime") ||
	    get_u32(r, &m->attrs.mtime_ns, "mtime nanoseconds"))
		return GFSP_ECORRUPT;
	if (m->attrs.mode > 07777 || m->attrs.atime_ns >= 1000000000u ||
	    m->attrs.mtime_ns >= 1000000000u)
		return gfsp_error_set(r->err, GFSP_ECORRUPT, "%s: bad "
		    "attributes: mode %o, nanoseconds %u and %u", r->name,
		    m->attrs.mode, m->attrs.atime_ns, m->attrs.mtime_ns);
	m->attrs.atime = (int64_t)at;
	m->attrs.mtime = (int64_t)mt;
	m->has_attrs = 1;
	return 0;
}

int
gfsp_marker_decode(const unsigned char *buf, size_t len, const char *name,
		  struct gfsp_marker *m, struct gfsp_error *err)
{
	struct gfsp_marker t;
	struct rcur r;
	uint64_t ct;
	int rc;

	memset(&t, 0, sizeof(t));
	rc = open_body(buf, len, name, MARKER_MAGIC, "split-file marker",
	    MARKER_FIXED, &r, err);
	if (rc)
		return rc;
	t.version = gfsp_le32(buf + MAGIC_LEN);
	if (get_u32(&r, &t.nprocs, "nprocs") ||
	    get_u32(&r, &t.nnodes, "nnodes") ||
	    get_u64(&r, &t.logical_size, "logical size") ||
	    get_u64(&r, &t.seg_size, "segment size") ||
	    get_u64(&r, &ct, "ctime") ||
	    get_str(&r, t.layout, sizeof(t.layout), "layout string") ||
	    (t.version >= 4 && get_attrs(&r, &t) != 0) ||
	    body_done(&r))
		return GFSP_ECORRUPT;
	t.ctime = (int64_t)ct;
	if (t.nprocs < 1 || t.nprocs > MAX_NPROCS)
		return gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s: bad process count %u", name, t.nprocs);
	if (t.nnodes < 1 || t.nnodes > t.nprocs)
		return gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s: bad node count %u for %u processes", name, t.nnodes,
		    t.nprocs);
	if (t.seg_size == 0)
		return gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s: checksum segment size is 0", name);
	/* every reader's offsets are off_t or MPI_Offset: signed 64-bit */
	if (t.logical_size > GFSP_SIZE_MAX)
		return gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s: logical size %llu is past the largest file offset "
		    "(%llu)", name, (unsigned long long)t.logical_size,
		    (unsigned long long)GFSP_SIZE_MAX);
	*m = t;
	return 0;
}

/* ---------------------------------------------------- location files */

#define VIEW_FIXED	(8 * 5)			/* disp extent size end A */
#define RUN_LEN		(4 + 8 * 4)	/* v3; a v2 run has no epoch */
#define RUN_LEN_V2	(4 + 8 * 3)

void
gfsp_locrec_free(struct gfsp_locrec *rec)
{
	uint32_t i;

	if (rec == NULL)
		return;
	gfsp_view_free(&rec->view);
	for (i = 0; i < rec->nxviews; i++)
		gfsp_view_free(&rec->xviews[i]);
	free(rec->xviews);
	free(rec->runs);
	rec->xviews = NULL;
	rec->nxviews = 0;
	rec->runs = NULL;
	rec->nruns = 0;
}

const struct gfsp_view *
gfsp_locrec_view(const struct gfsp_locrec *rec, uint32_t i)
{
	if (i == 0)
		return &rec->view;
	if (i == GFSP_RUN_DENSE || i > rec->nxviews)
		return NULL;
	return &rec->xviews[i - 1];
}

void
gfsp_locfile_free(struct gfsp_locfile *lf)
{
	uint32_t i;

	if (lf == NULL)
		return;
	if (lf->recs != NULL)
		for (i = 0; i < lf->nrecs; i++)
			gfsp_locrec_free(&lf->recs[i]);
	free(lf->recs);
	memset(lf, 0, sizeof(*lf));
}

static size_t
view_bytes(const struct gfsp_view *v)
{
	return (size_t)v->nblocks * 16;
}

/* Encoded size of a record, or 0 if it cannot be encoded. */
static size_t
rec_len(const struct gfsp_locrec *rec, struct gfsp_error *err)
{
	size_t n, hl;
	uint32_t i;

	hl = strnlen(rec->host, GFSP_NAME_MAX);
	if (hl >= GFSP_NAME_MAX) {
		gfsp_error_set(err, GFSP_EINVAL,
		    "host name of rank %u is not terminated", rec->rank);
		return 0;
	}
	if (rec->nruns > (SIZE_MAX / 2) / RUN_LEN ||
	    rec->view.nblocks > (SIZE_MAX / 4) / 16)
		goto big;
	n = REC_FIXED + hl + view_bytes(&rec->view) + 4 + 8 +
	    (size_t)rec->nruns * RUN_LEN;
	for (i = 0; i < rec->nxviews; i++) {
		if (rec->xviews[i].nblocks > (SIZE_MAX / 4 - n) / 16)
			goto big;
		n += VIEW_FIXED + view_bytes(&rec->xviews[i]);
	}
	return n;
big:
	gfsp_error_set(err, GFSP_EINVAL, "record of rank %u is too large to "
	    "encode", rec->rank);
	return 0;
}

static void
put_view_head(struct wcur *w, const struct gfsp_view *v)
{
	put_u64(w, v->disp);
	put_u64(w, v->extent);
	put_u64(w, v->size);
	put_u64(w, v->end);
	put_u64(w, v->nblocks);
}

static void
put_view_arrays(struct wcur *w, const struct gfsp_view *v)
{
	uint64_t k;

	for (k = 0; k < v->nblocks; k++)
		put_u64(w, v->len[k]);
	for (k = 0; k < v->nblocks; k++)
		put_u64(w, v->off[k]);
}

/* Record layout: the v1 record (view 0 with the part fields between its
 * head and its arrays), then the v2 tail: extra views and runs. */
static void
put_rec(struct wcur *w, const struct gfsp_locrec *rec)
{
	uint64_t k;
	uint32_t i;

	put_u32(w, rec->rank);
	put_view_head(w, &rec->view);
	put_u64(w, rec->part_size);
	put_u64(w, rec->part_hash);
	put_str(w, rec->host, strlen(rec->host));
	put_view_arrays(w, &rec->view);
	put_u32(w, rec->nxviews);
	for (i = 0; i < rec->nxviews; i++) {
		put_view_head(w, &rec->xviews[i]);
		put_view_arrays(w, &rec->xviews[i]);
	}
	put_u64(w, rec->nruns);
	for (k = 0; k < rec->nruns; k++) {
		put_u32(w, rec->runs[k].view);
		put_u64(w, rec->runs[k].begin);
		put_u64(w, rec->runs[k].end);
		put_u64(w, rec->runs[k].loff);
		put_u64(w, rec->runs[k].epoch);
	}
}

int
gfsp_locrec_encode(const struct gfsp_locrec *rec, unsigned char **buf,
		  size_t *len, struct gfsp_error *err)
{
	struct wcur w;
	size_t n;

	n = rec_len(rec, err);
	if (n == 0)
		return err ? err->code : GFSP_EINVAL;
	w.p = malloc(n);
	if (w.p == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM,
		    "cannot encode the record of rank %u: out of memory",
		    rec->rank);
	w.pos = 0;
	put_rec(&w, rec);
	*buf = w.p;
	*len = w.pos;
	return 0;
}

int
gfsp_locfile_encode(const struct gfsp_locfile *lf, unsigned char **buf,
		   size_t *len, struct gfsp_error *err)
{
	const struct gfsp_locrec *rec;
	struct wcur w;
	size_t nl, n, add;
	uint32_t i;

	nl = strnlen(lf->node_name, GFSP_NAME_MAX);
	if (nl >= GFSP_NAME_MAX)
		return gfsp_error_set(err, GFSP_EINVAL,
		    "node name is not terminated within %d bytes",
		    GFSP_NAME_MAX);
	if (lf->nprocs < 1 || lf->nprocs > MAX_NPROCS || lf->nnodes < 1 ||
	    lf->nnodes > lf->nprocs || lf->node >= lf->nnodes ||
	    lf->nrecs < 1 || lf->nrecs > lf->nprocs)
		return gfsp_error_set(err, GFSP_EINVAL,
		    "bad location file: nprocs %u, nnodes %u, node %u, "
		    "%u records", lf->nprocs, lf->nnodes, lf->node,
		    lf->nrecs);
	n = LOC_FIXED + nl;
	for (i = 0; i < lf->nrecs; i++) {
		rec = &lf->recs[i];
		if (rec->rank >= lf->nprocs ||
		    (i > 0 && rec->rank <= lf->recs[i - 1].rank))
			return gfsp_error_set(err, GFSP_EINVAL,
			    "location record %u: rank %u out of order or "
			    "out of range", i, rec->rank);
		add = rec_len(rec, err);
		if (add == 0)
			return err ? err->code : GFSP_EINVAL;
		if (add > SIZE_MAX / 2 - n)
			return gfsp_error_set(err, GFSP_EINVAL,
			    "location file is too large to encode");
		n += add;
	}
	w.p = malloc(n);
	if (w.p == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM,
		    "cannot encode location file %u: out of memory",
		    lf->node);
	w.pos = 0;
	put_bytes(&w, LOC_MAGIC, MAGIC_LEN);
	put_u32(&w, GFSP_FORMAT_WRITE);
	put_u32(&w, lf->nprocs);
	put_u32(&w, lf->nnodes);
	put_u32(&w, lf->node);
	put_str(&w, lf->node_name, nl);
	put_u32(&w, lf->nrecs);
	for (i = 0; i < lf->nrecs; i++)
		put_rec(&w, &lf->recs[i]);
	put_u64(&w, gfsp_hash64(w.p, w.pos));
	*buf = w.p;
	*len = w.pos;
	return 0;
}

struct vhead {
	uint64_t disp, extent, size, end, alen;
};

static int
get_view_head(struct rcur *r, struct vhead *h)
{
	if (get_u64(r, &h->disp, "disp") ||
	    get_u64(r, &h->extent, "extent") ||
	    get_u64(r, &h->size, "filetype size") ||
	    get_u64(r, &h->end, "view end") ||
	    get_u64(r, &h->alen, "arr_len"))
		return GFSP_ECORRUPT;
	return 0;
}

/* The block arrays of a view whose head is h; v is initialised only on
 * success.  `which` names the view in messages. */
static int
get_view_arrays(struct rcur *r, const struct vhead *h, uint32_t rank,
		uint32_t which, struct gfsp_view *v)
{
	struct gfsp_error verr;
	uint64_t k, sum, alen = h->alen;
	uint64_t *arr = NULL;
	const char *name = r->name;
	char vn[24] = "";		/* view 0 is "the" view of v1 */
	int rc;

	if (which > 0)
		snprintf(vn, sizeof(vn), " view %u", which);

	/* the arrays must fit in what is left before anything is
	 * allocated for them: a corrupt arr_len costs nothing */
	if (alen > left(r) / 16)
		return gfsp_error_set(r->err, GFSP_ECORRUPT,
		    "%s: rank %u%s: arr_len %llu does not fit in the "
		    "%zu bytes left", name, rank, vn,
		    (unsigned long long)alen, left(r));
	if (alen > 0) {
		arr = malloc((size_t)alen * 2 * sizeof(*arr));
		if (arr == NULL)
			return gfsp_error_set(r->err, GFSP_ENOMEM,
			    "%s: rank %u: out of memory for %llu blocks",
			    name, rank, (unsigned long long)alen);
	}
	sum = 0;
	for (k = 0; k < 2 * alen; k++) {
		arr[k] = gfsp_le64(r->p + r->pos);
		r->pos += 8;
	}
	for (k = 0; k < alen; k++) {
		if (arr[k] > UINT64_MAX - sum) {
			rc = gfsp_error_set(r->err, GFSP_ECORRUPT,
			    "%s: rank %u%s: block lengths overflow",
			    name, rank, vn);
			goto out;
		}
		sum += arr[k];
	}
	if (sum != h->size) {
		rc = gfsp_error_set(r->err, GFSP_ECORRUPT,
		    "%s: rank %u%s: filetype size %llu does not match "
		    "its blocks (sum %llu)", name, rank, vn,
		    (unsigned long long)h->size, (unsigned long long)sum);
		goto out;
	}
	gfsp_error_clear(&verr);
	rc = gfsp_view_init(v, h->disp, h->extent, h->end, alen,
	    alen ? arr + alen : NULL, arr, &verr);
	if (rc) {
		rc = gfsp_error_set(r->err, rc == GFSP_ENOMEM ? rc :
		    GFSP_ECORRUPT, "%s: rank %u%s: %s", name, rank,
		    vn, verr.msg);
		goto out;
	}
	if (v->size != h->size) {
		rc = gfsp_error_set(r->err, GFSP_ECORRUPT,
		    "%s: rank %u%s: blocks overlap (filetype size "
		    "%llu, %llu distinct bytes)", name, rank, vn,
		    (unsigned long long)h->size,
		    (unsigned long long)v->size);
		gfsp_view_free(v);
		goto out;
	}
	rc = 0;
out:
	free(arr);
	return rc;
}

/* The v2 tail: extra views and runs (v3: runs with their epoch). */
static int
decode_tail(struct rcur *r, uint32_t version, struct gfsp_locrec *rec)
{
	size_t run_len = version >= 3 ? RUN_LEN : RUN_LEN_V2;
	struct vhead h;
	uint32_t nx, i;
	uint64_t nruns, k;
	struct gfsp_run *run;
	const char *name = r->name;
	int rc;

	if (get_u32(r, &nx, "view count"))
		return GFSP_ECORRUPT;
	if (nx > left(r) / VIEW_FIXED)
		return gfsp_error_set(r->err, GFSP_ECORRUPT,
		    "%s: rank %u: %u views do not fit in the %zu bytes left",
		    name, rec->rank, nx, left(r));
	if (nx > 0) {
		rec->xviews = calloc(nx, sizeof(*rec->xviews));
		if (rec->xviews == NULL)
			return gfsp_error_set(r->err, GFSP_ENOMEM,
			    "%s: out of memory for %u views", name, nx);
	}
	for (i = 0; i < nx; i++) {
		rc = get_view_head(r, &h);
		if (rc == 0)
			rc = get_view_arrays(r, &h, rec->rank, i + 1,
			    &rec->xviews[i]);
		if (rc)
			return rc;
		rec->nxviews = i + 1;
	}
	if (get_u64(r, &nruns, "run count"))
		return GFSP_ECORRUPT;
	if (nruns > left(r) / run_len)
		return gfsp_error_set(r->err, GFSP_ECORRUPT,
		    "%s: rank %u: %llu runs do not fit in the %zu bytes left",
		    name, rec->rank, (unsigned long long)nruns, left(r));
	if (nruns > 0) {
		rec->runs = malloc((size_t)nruns * sizeof(*rec->runs));
		if (rec->runs == NULL)
			return gfsp_error_set(r->err, GFSP_ENOMEM,
			    "%s: out of memory for %llu runs", name,
			    (unsigned long long)nruns);
	}
	rec->nruns = nruns;
	for (k = 0; k < nruns; k++) {
		run = &rec->runs[k];
		get_u32(r, &run->view, "run");
		get_u64(r, &run->begin, "run");
		get_u64(r, &run->end, "run");
		get_u64(r, &run->loff, "run");
		run->epoch = 0;		/* before v3: one epoch */
		if (version >= 3)
			get_u64(r, &run->epoch, "run");
		if (run->view != GFSP_RUN_DENSE && run->view > nx)
			return gfsp_error_set(r->err, GFSP_ECORRUPT,
			    "%s: rank %u run %llu: view %u does not exist "
			    "(%u views)", name, rec->rank,
			    (unsigned long long)k, run->view, nx + 1);
		if (run->begin > run->end)
			return gfsp_error_set(r->err, GFSP_ECORRUPT,
			    "%s: rank %u run %llu: begins at %llu after its "
			    "end %llu", name, rec->rank,
			    (unsigned long long)k,
			    (unsigned long long)run->begin,
			    (unsigned long long)run->end);
	}
	return 0;
}

/* One record at r (format `version`); on failure rec holds nothing. */
static int
decode_rec(struct rcur *r, uint32_t version, uint32_t nprocs,
	   struct gfsp_locrec *rec)
{
	struct vhead h;
	int rc;

	memset(rec, 0, sizeof(*rec));
	if (get_u32(r, &rec->rank, "rank") ||
	    get_view_head(r, &h) ||
	    get_u64(r, &rec->part_size, "part size") ||
	    get_u64(r, &rec->part_hash, "part checksum") ||
	    get_str(r, rec->host, sizeof(rec->host), "host name"))
		return GFSP_ECORRUPT;
	if (rec->rank >= nprocs)
		return gfsp_error_set(r->err, GFSP_ECORRUPT,
		    "%s: rank %u is out of range (%u processes)", r->name,
		    rec->rank, nprocs);
	rc = get_view_arrays(r, &h, rec->rank, 0, &rec->view);
	if (rc)
		return rc;
	if (version >= 2) {
		rc = decode_tail(r, version, rec);
		if (rc)
			gfsp_locrec_free(rec);
	}
	return rc;
}

int
gfsp_locrec_decode(const unsigned char *buf, size_t len, uint32_t nprocs,
		  const char *name, struct gfsp_locrec *rec,
		  struct gfsp_error *err)
{
	struct rcur r;
	int rc;

	r.p = buf;
	r.len = len;
	r.pos = 0;
	r.name = name;
	r.err = err;
	rc = decode_rec(&r, GFSP_FORMAT_VERSION, nprocs, rec);
	if (rc == 0 && (rc = body_done(&r)) != 0)
		gfsp_locrec_free(rec);
	return rc;
}

int
gfsp_locfile_decode(const unsigned char *buf, size_t len, const char *name,
		   struct gfsp_locfile *lf, struct gfsp_error *err)
{
	struct gfsp_locfile t;
	struct rcur r;
	uint32_t i, nrecs;
	int rc;

	memset(&t, 0, sizeof(t));
	memset(lf, 0, sizeof(*lf));
	rc = open_body(buf, len, name, LOC_MAGIC, "location file", LOC_FIXED,
	    &r, err);
	if (rc)
		return rc;
	if (get_u32(&r, &t.nprocs, "nprocs") ||
	    get_u32(&r, &t.nnodes, "nnodes") ||
	    get_u32(&r, &t.node, "node index") ||
	    get_str(&r, t.node_name, sizeof(t.node_name), "node name") ||
	    get_u32(&r, &t.nrecs, "record count"))
		return GFSP_ECORRUPT;
	if (t.nprocs < 1 || t.nprocs > MAX_NPROCS)
		return gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s: bad process count %u", name, t.nprocs);
	if (t.nnodes < 1 || t.nnodes > t.nprocs)
		return gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s: bad node count %u for %u processes", name, t.nnodes,
		    t.nprocs);
	if (t.node >= t.nnodes)
		return gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s: node index %u is out of range (%u nodes)", name,
		    t.node, t.nnodes);
	if (t.nrecs < 1 || t.nrecs > t.nprocs)
		return gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s: bad record count %u (%u processes)", name, t.nrecs,
		    t.nprocs);
	if (t.nrecs > left(&r) / REC_FIXED)
		return gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s: %u records do not fit in the %zu bytes left", name,
		    t.nrecs, left(&r));
	nrecs = t.nrecs;
	t.nrecs = 0;
	t.recs = calloc(nrecs, sizeof(*t.recs));
	if (t.recs == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM,
		    "%s: out of memory for %u records", name, nrecs);
	for (i = 0; i < nrecs; i++) {
		struct gfsp_locrec *rec = &t.recs[i];

		rc = decode_rec(&r, gfsp_le32(buf + MAGIC_LEN), t.nprocs, rec);
		if (rc)
			goto fail;
		/* t.nrecs counts the records that hold allocations,
		 * so that gfsp_locfile_free() frees exactly those */
		t.nrecs = i + 1;
		if (i > 0 && rec->rank == t.recs[i - 1].rank) {
			rc = gfsp_error_set(err, GFSP_ECORRUPT,
			    "%s: rank %u is recorded twice", name, rec->rank);
			goto fail;
		}
		if (i > 0 && rec->rank < t.recs[i - 1].rank) {
			rc = gfsp_error_set(err, GFSP_ECORRUPT,
			    "%s: records are not sorted by rank (%u after %u)",
			    name, rec->rank, t.recs[i - 1].rank);
			goto fail;
		}
	}
	rc = body_done(&r);
	if (rc)
		goto fail;
	*lf = t;
	return 0;
fail:
	gfsp_locfile_free(&t);
	return rc;
}

uint64_t
gfsp_locfile_max_records(uint64_t size)
{
	/* a record is never shorter than its fixed fields */
	return size < LOC_FIXED ? 0 : (size - LOC_FIXED) / REC_FIXED;
}

