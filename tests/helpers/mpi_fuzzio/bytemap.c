/*
 * bytemap.c - small helpers, the errors of a job, byte maps and the MPI datatypes built with theirs
 * (one part of mpi_fuzzio: fuzzio.h)
 */
#include "fuzzio.h"

/* ---- small helpers ------------------------------------------------------ */

void __attribute__((noreturn))
oom(void)
{
	fprintf(stderr, "%s: rank %d: out of memory\n", prog, me);
	MPI_Abort(MPI_COMM_WORLD, 1);
	exit(1);
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom();
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char * __attribute__((format(printf, 1, 2)))
fmt(const char *f, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, f);
	n = vasprintf(&s, f, ap);
	va_end(ap);
	if (n < 0)
		oom();
	return s;
}

int64_t
roundup(int64_t x, int64_t a)
{
	return (x + a - 1) / a * a;
}

int64_t
imin(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

int64_t
imax(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* splitmix64 of a combined with b: seeds of sub-streams, data bytes */
uint64_t
mix(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ (b * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull);

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* the data of one write access: byte k of its stream */
uint64_t
acc_key(uint64_t seed, int phase, int rank, int idx)
{
	return mix(mix(seed, 0x64617461 + phase), (uint64_t)rank << 20 | (uint64_t)idx);
}

unsigned char
dbyte(uint64_t key, int64_t k)
{
	return (unsigned char)(mix(key, (uint64_t)k) >> 24);
}

/* random helpers over rng.h's one stream: every rank draws the same */
int
rn(int n)
{
	return (int)rnd((uint64_t)(n > 0 ? n : 0));
}

int
chance(int percent)
{
	return rn(100) < percent;
}

void
shuffle(int *v, int n)
{
	int i;

	for (i = n - 1; i > 0; i--) {
		int k = rn(i + 1), t = v[i];

		v[i] = v[k];
		v[k] = t;
	}
}

/* ---- errors -------------------------------------------------------------- */

uint64_t cur_seed;		/* the job running, for messages */
int tester_bug;			/* this job found a bug of its own */

/* the job running is seed's: every message names it (fail()'s context) */
void
set_cur_seed(uint64_t seed)
{
	cur_seed = seed;
	snprintf(test_context, sizeof(test_context), "seed %" PRIu64, seed);
}

void __attribute__((format(printf, 1, 2)))
bug(const char *f, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, f);
	vsnprintf(msg, sizeof(msg), f, ap);
	va_end(ap);
	if (tester_bug++ < 3)
		fail("tester bug: %s", msg);
}

/* ---- byte maps ------------------------------------------------------------ */

void
runs_add(struct runs *rs, int64_t off, int64_t len)
{
	if (len <= 0 || rs->over)
		return;
	rs->size += len;
	if (rs->n && rs->r[rs->n - 1].off + rs->r[rs->n - 1].len == off) {
		rs->r[rs->n - 1].len += len;
		return;
	}
	if (rs->cap_runs && rs->n >= MAX_RUNS) {
		rs->over = 1;
		return;
	}
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? 2 * rs->cap : 8;
		rs->r = xrealloc(rs->r, rs->cap * sizeof(*rs->r));
	}
	rs->r[rs->n].off = off;
	rs->r[rs->n].len = len;
	rs->n++;
}

void
runs_shift(struct runs *dst, const struct runs *src, int64_t shift)
{
	size_t i;

	for (i = 0; i < src->n && !dst->over; i++)
		runs_add(dst, src->r[i].off + shift, src->r[i].len);
}

void
runs_free(struct runs *rs)
{
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}

int
run_cmp(const void *a, const void *b)
{
	const struct run *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* no byte twice */
int
runs_disjoint(const struct runs *rs)
{
	struct run *s;
	size_t i;
	int ok = 1;

	if (rs->n < 2)
		return 1;
	s = xmalloc(rs->n * sizeof(*s));
	memcpy(s, rs->r, rs->n * sizeof(*s));
	qsort(s, rs->n, sizeof(*s), run_cmp);
	for (i = 1; i < rs->n && ok; i++)
		ok = s[i].off >= s[i - 1].off + s[i - 1].len;
	free(s);
	return ok;
}

/* ---- datatypes with their byte maps ---------------------------------------- */

struct ty *pool;

void
pool_free(void)
{
	while (pool) {
		struct ty *y = pool;

		pool = y->next;
		if (y->ctor != C_NAMED)
			MPI_Type_free(&y->t);
		runs_free(&y->rs);
		free(y->desc);
		free(y);
	}
}

/*
 * Take the type a constructor just returned (rc) with the byte map rs
 * and the description desc (both taken over); NULL when MPI refused it or
 * the map grew too big, which the generator takes as "try another".
 */
struct ty *
adopt(int rc, MPI_Datatype t, int ctor, struct runs *rs, char *desc,
      struct ty *const *kids, int nkids)
{
	struct ty *y;
	MPI_Count size = -1;
	size_t i;
	int k;

	if (rc != MPI_SUCCESS || rs->over || rs->size > 64 << 20) {
		if (rc == MPI_SUCCESS)
			MPI_Type_free(&t);
		runs_free(rs);
		free(desc);
		return NULL;
	}
	if (MPI_Type_commit(&t) != MPI_SUCCESS) {
		MPI_Type_free(&t);
		runs_free(rs);
		free(desc);
		return NULL;
	}
	y = xmalloc(sizeof(*y));
	memset(y, 0, sizeof(*y));
	y->t = t;
	y->ctor = ctor;
	y->rs = *rs;
	y->desc = desc;
	for (k = 0; k < nkids && k < 3; k++) {
		y->kid[y->nkid++] = kids[k];
		y->rsz |= kids[k]->rsz;
		y->neglb |= kids[k]->neglb;
	}
	y->rsz |= ctor == C_RESIZED || ctor == C_SUBARRAY_C || ctor == C_SUBARRAY_F ||
		  ctor == C_DARRAY_C || ctor == C_DARRAY_F;
	MPI_Type_get_extent(t, &y->lb, &y->ext);
	y->neglb |= y->lb < 0;
	MPI_Type_size_x(t, &size);
	if (y->rs.n) {
		y->tlb = INT64_MAX;
		y->tub = INT64_MIN;
	}
	for (i = 0; i < y->rs.n; i++) {
		y->tlb = imin(y->tlb, y->rs.r[i].off);
		y->tub = imax(y->tub, y->rs.r[i].off + y->rs.r[i].len);
	}
	y->next = pool;
	pool = y;
	if (size != y->rs.size)
		bug("type %s: MPI says %lld bytes, the byte map %lld", desc,
		    (long long)size, (long long)y->rs.size);
	return y;
}

struct ty *
named(MPI_Datatype t, const char *name, int size)
{
	struct ty *y = xmalloc(sizeof(*y));

	memset(y, 0, sizeof(*y));
	y->t = t;
	y->ctor = C_NAMED;
	runs_add(&y->rs, 0, size);
	y->ext = size;
	y->tub = size;
	y->desc = fmt("%s", name);
	y->next = pool;
	pool = y;
	return y;
}

/* "[2@0,1@24,...]": the blocks of an indexed type, shortened */
char *
blocks_desc(int n, const int *bl, const MPI_Aint *d, int onebl)
{
	char buf[256];
	size_t len = 0;
	int i;

	buf[len++] = '[';
	for (i = 0; i < n && len < sizeof(buf) - 40; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%d@%ld",
					i ? "," : "", onebl ? bl[0] : bl[i], (long)d[i]);
	if (i < n)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, ",...");
	snprintf(buf + len, sizeof(buf) - len, "]");
	return fmt("%s", buf);
}

struct ty *
mk_contig(int n, struct ty *c)
{
	struct runs rs = { .cap_runs = 1 };
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int i, rc = MPI_Type_contiguous(n, c->t, &t);

	for (i = 0; i < n; i++)
		runs_shift(&rs, &c->rs, (int64_t)i * c->ext);
	return adopt(rc, t, C_CONTIG, &rs, fmt("contig(%d,%s)", n, c->desc), &c, 1);
}

/* vector and hvector: stride in extents of c, or in bytes (h) */
struct ty *
mk_vector(int n, int bl, int64_t stride, int h, struct ty *c)
{
	struct runs rs = { .cap_runs = 1 };
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int64_t bstride = h ? stride : stride * c->ext;
	int i, j, rc;

	rc = h ? MPI_Type_create_hvector(n, bl, (MPI_Aint)stride, c->t, &t)
	       : MPI_Type_vector(n, bl, (int)stride, c->t, &t);
	for (i = 0; i < n; i++)
		for (j = 0; j < bl; j++)
			runs_shift(&rs, &c->rs, i * bstride + (int64_t)j * c->ext);
	return adopt(rc, t, h ? C_HVECTOR : C_VECTOR, &rs,
		     fmt("%s(%d,%d,%lld,%s)", h ? "hvector" : "vector", n, bl,
			 (long long)stride, c->desc), &c, 1);
}

/*
 * indexed, hindexed and their _block forms: block i of bl[i] (or bl[0])
 * copies of c at d[i], in extents of c or in bytes (h)
 */
struct ty *
mk_indexed(int n, const int *bl, const MPI_Aint *d, int h, int block, struct ty *c)
{
	struct runs rs = { .cap_runs = 1 };
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int id[16], i, j, rc, ctor;

	for (i = 0; i < n; i++)
		id[i] = (int)d[i];
	if (block)
		rc = h ? MPI_Type_create_hindexed_block(n, bl[0], d, c->t, &t)
		       : MPI_Type_create_indexed_block(n, bl[0], id, c->t, &t);
	else
		rc = h ? MPI_Type_create_hindexed(n, bl, d, c->t, &t)
		       : MPI_Type_indexed(n, bl, id, c->t, &t);
	for (i = 0; i < n; i++)
		for (j = 0; j < (block ? bl[0] : bl[i]); j++)
			runs_shift(&rs, &c->rs, (h ? d[i] : d[i] * c->ext) +
				   (int64_t)j * c->ext);
	ctor = block ? (h ? C_HINDEXED_BLOCK : C_INDEXED_BLOCK) : (h ? C_HINDEXED : C_INDEXED);
	{
		char *b = blocks_desc(n, bl, d, block);
		struct ty *y = adopt(rc, t, ctor, &rs, fmt("%s(%d,%s,%s)",
				     ctor_names[ctor], n, b, c->desc), &c, 1);

		free(b);
		return y;
	}
}

struct ty *
mk_struct(int n, const int *bl, const MPI_Aint *d, struct ty *const *c)
{
	struct runs rs = { .cap_runs = 1 };
	MPI_Datatype t = MPI_DATATYPE_NULL, ts[3];
	char *desc = fmt("struct(%d,[", n), *s;
	int i, j, rc;

	for (i = 0; i < n; i++) {
		ts[i] = c[i]->t;
		for (j = 0; j < bl[i]; j++)
			runs_shift(&rs, &c[i]->rs, d[i] + (int64_t)j * c[i]->ext);
		s = fmt("%s%s%d@%ld %s", desc, i ? "," : "", bl[i], (long)d[i], c[i]->desc);
		free(desc);
		desc = s;
	}
	rc = MPI_Type_create_struct(n, bl, d, ts, &t);
	s = fmt("%s])", desc);
	free(desc);
	return adopt(rc, t, C_STRUCT, &rs, s, c, n);
}

/*
 * The elements of a gs[0] x ... array of c that the index lists idx[d]
 * (n[d] each, ascending) select, in the order of the array in memory:
 * C (dim 0 slowest) or Fortran (dim 0 fastest); subarray and darray both.
 */
void
grid_runs(struct runs *rs, int nd, const int *gs, int *const *idx, const int *n,
	  int order, const struct ty *c)
{
	int64_t stride[3];
	int k[3] = { 0, 0, 0 }, d;

	for (d = 0; d < nd; d++)
		if (n[d] == 0)
			return;
	if (order == MPI_ORDER_C) {
		stride[nd - 1] = 1;
		for (d = nd - 2; d >= 0; d--)
			stride[d] = stride[d + 1] * gs[d + 1];
	} else {
		stride[0] = 1;
		for (d = 1; d < nd; d++)
			stride[d] = stride[d - 1] * gs[d - 1];
	}
	for (;;) {
		int64_t lin = 0;

		for (d = 0; d < nd; d++)
			lin += idx[d][k[d]] * stride[d];
		runs_shift(rs, &c->rs, lin * c->ext);
		if (rs->over)
			return;
		/* the fastest dimension first */
		for (d = order == MPI_ORDER_C ? nd - 1 : 0;
		     order == MPI_ORDER_C ? d >= 0 : d < nd;
		     d += order == MPI_ORDER_C ? -1 : 1) {
			if (++k[d] < n[d])
				break;
			k[d] = 0;
		}
		if (order == MPI_ORDER_C ? d < 0 : d >= nd)
			return;
	}
}

char *
dims_desc(int nd, const int *v)
{
	return nd == 1 ? fmt("%d", v[0]) : nd == 2 ? fmt("%dx%d", v[0], v[1])
					 : fmt("%dx%dx%d", v[0], v[1], v[2]);
}

struct ty *
mk_subarray(int nd, const int *gs, const int *sub, const int *st, int order, struct ty *c)
{
	struct runs rs = { .cap_runs = 1 };
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int lists[3][64], *idx[3] = { lists[0], lists[1], lists[2] }, d, i;
	char *a, *b, *s;
	struct ty *y;
	int rc = MPI_Type_create_subarray(nd, gs, sub, st, order, c->t, &t);

	for (d = 0; d < nd; d++)
		for (i = 0; i < sub[d]; i++)
			lists[d][i] = st[d] + i;
	grid_runs(&rs, nd, gs, idx, sub, order, c);
	a = dims_desc(nd, gs);
	b = dims_desc(nd, sub);
	s = dims_desc(nd, st);
	y = adopt(rc, t, order == MPI_ORDER_C ? C_SUBARRAY_C : C_SUBARRAY_F, &rs,
		  fmt("subarray(%s,%s,sub %s at %s,%s)", order == MPI_ORDER_C ? "C" : "F",
		      a, b, s, c->desc), &c, 1);
	free(a);
	free(b);
	free(s);
	return y;
}

/* the indices of a dimension of g elements that coordinate c of p owns */
int
dist_indices(int g, int dist, int darg, int p, int c, int *idx)
{
	int n = 0, i, b;

	if (dist == MPI_DISTRIBUTE_NONE) {
		for (i = 0; i < g; i++)
			idx[n++] = i;
	} else if (dist == MPI_DISTRIBUTE_BLOCK) {
		b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : darg;
		for (i = c * b; i < g && i < (c + 1) * b; i++)
			idx[n++] = i;
	} else {
		b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
		for (i = 0; i < g; i++)
			if (i / b % p == c)
				idx[n++] = i;
	}
	return n;
}

/* the elements rank owns, per dimension; the process grid is row-major */
int
darray_lists(int rank, int nd, const int *gs, const int *dist, const int *darg,
	     const int *ps, int lists[3][64], int *n)
{
	int c[3], d, r = rank, total = 1;

	for (d = nd - 1; d >= 0; d--) {
		c[d] = r % ps[d];
		r /= ps[d];
	}
	for (d = 0; d < nd; d++) {
		n[d] = dist_indices(gs[d], dist[d], darg[d], ps[d], c[d], lists[d]);
		total *= n[d];
	}
	return total;
}

const char *
dist_name(int dist, int darg, char *buf, size_t len)
{
	const char *n = dist == MPI_DISTRIBUTE_NONE ? "none" :
			dist == MPI_DISTRIBUTE_BLOCK ? "block" : "cyclic";

	if (darg == MPI_DISTRIBUTE_DFLT_DARG || dist == MPI_DISTRIBUTE_NONE)
		snprintf(buf, len, "%s", n);
	else
		snprintf(buf, len, "%s(%d)", n, darg);
	return buf;
}

struct ty *
mk_darray(int size, int rank, int nd, const int *gs, const int *dist,
	  const int *darg, const int *ps, int order, struct ty *c)
{
	struct runs rs = { .cap_runs = 1 };
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int lists[3][64], *idx[3] = { lists[0], lists[1], lists[2] }, n[3], d;
	char dd[256], b[32];
	size_t len = 0;
	int rc = MPI_Type_create_darray(size, rank, nd, gs, dist, darg, ps, order,
					c->t, &t);

	darray_lists(rank, nd, gs, dist, darg, ps, lists, n);
	grid_runs(&rs, nd, gs, idx, n, order, c);
	for (d = 0; d < nd; d++)
		len += (size_t)snprintf(dd + len, sizeof(dd) - len, "%s%d %s/%d",
					d ? "," : "", gs[d],
					dist_name(dist[d], darg[d], b, sizeof(b)), ps[d]);
	return adopt(rc, t, order == MPI_ORDER_C ? C_DARRAY_C : C_DARRAY_F, &rs,
		     fmt("darray(%s,rank %d of %d,[%s],%s)", order == MPI_ORDER_C ? "C" : "F",
			 rank, size, dd, c->desc), &c, 1);
}

struct ty *
mk_resized(struct ty *c, int64_t lb, int64_t ext)
{
	struct runs rs = { .cap_runs = 1 };
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int rc = MPI_Type_create_resized(c->t, (MPI_Aint)lb, (MPI_Aint)ext, &t);

	runs_shift(&rs, &c->rs, 0);
	return adopt(rc, t, C_RESIZED, &rs, fmt("resized(%s,lb %lld,ext %lld)", c->desc,
						 (long long)lb, (long long)ext), &c, 1);
}

struct ty *
mk_dup(struct ty *c)
{
	struct runs rs = { .cap_runs = 1 };
	MPI_Datatype t = MPI_DATATYPE_NULL;
	int rc = MPI_Type_dup(c->t, &t);

	runs_shift(&rs, &c->rs, 0);
	return adopt(rc, t, C_DUP, &rs, fmt("dup(%s)", c->desc), &c, 1);
}

/*
 * The byte map against MPI: pack one copy of the type from a buffer whose
 * byte i holds byte p of i (for each p until i is covered), and every
 * packed byte must be what the map says lies at its place.
 */
void
ty_check(struct ty *y)
{
	int64_t span = y->tub - y->tlb, k, j;
	unsigned char *src, *dst;
	size_t i;
	int pass, pos;

	if (y->checked || y->rs.size == 0 || span > (8 << 20))
		return;
	y->checked = 1;
	src = xmalloc((size_t)span);
	dst = xmalloc((size_t)y->rs.size);
	for (pass = 0; pass == 0 || (span - 1) >> (8 * pass); pass++) {
		for (k = 0; k < span; k++)
			src[k] = (unsigned char)(k >> (8 * pass));
		pos = 0;
		if (MPI_Pack(src - y->tlb, 1, y->t, dst, (int)y->rs.size, &pos,
			     MPI_COMM_SELF) != MPI_SUCCESS || pos != y->rs.size) {
			bug("type %s: MPI_Pack fails or packs %d bytes", y->desc, pos);
			break;
		}
		for (i = 0, k = 0; i < y->rs.n; i++)
			for (j = 0; j < y->rs.r[i].len; j++, k++)
				if (dst[k] != (unsigned char)((y->rs.r[i].off + j - y->tlb)
							      >> (8 * pass))) {
					bug("type %s: packed byte %lld is not from offset %lld",
					    y->desc, (long long)k, (long long)(y->rs.r[i].off + j));
					goto out;
				}
	}
out:
	free(src);
	free(dst);
}
