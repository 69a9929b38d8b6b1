/*
 * typegen.c - etypes, the random filetype generator and the memory types
 * (one part of mpi_fuzzio: fuzzio.h)
 */
#include "fuzzio.h"

/* ---- etypes ---------------------------------------------------------------- */

/* the struct of an int and a double at 4: 12 bytes, extent 16 (padding) */
struct ty *
mk_intdbl_padded(void)
{
	static const int bl[2] = { 1, 1 };
	static const MPI_Aint d[2] = { 0, 4 };
	MPI_Datatype ts[2] = { MPI_INT, MPI_DOUBLE }, t = MPI_DATATYPE_NULL;
	struct runs rs = { 0 };
	int rc = MPI_Type_create_struct(2, bl, d, ts, &t);

	runs_add(&rs, 0, 12);
	return adopt(rc, t, C_STRUCT, &rs, fmt("struct(int@0,double@4)"), NULL, 0);
}

struct ty *
mk_etype(int k)
{
	struct ty *y, *s;

	switch (k) {
	case ET_BYTE:
		return named(MPI_BYTE, "byte", 1);
	case ET_INT:
		return named(MPI_INT, "int", 4);
	case ET_DOUBLE:
		return named(MPI_DOUBLE, "double", 8);
	case ET_INT3:
		y = mk_contig(3, named(MPI_INT, "int", 4));
		break;
	case ET_IDI: {		/* int, double, int: 16 bytes, no padding */
		static const int bl[3] = { 1, 1, 1 };
		static const MPI_Aint d[3] = { 0, 4, 12 };
		MPI_Datatype ts[3] = { MPI_INT, MPI_DOUBLE, MPI_INT }, t = MPI_DATATYPE_NULL;
		struct runs rs = { 0 };
		int rc = MPI_Type_create_struct(3, bl, d, ts, &t);

		runs_add(&rs, 0, 16);
		y = adopt(rc, t, C_STRUCT, &rs, fmt("idi"), NULL, 0);
		break;
	}
	default:
		s = mk_intdbl_padded();
		y = s ? mk_resized(s, 0, 12) : NULL;
		break;
	}
	if (!y) {
		bug("cannot make the etype %s", et_names[k]);
		return named(MPI_BYTE, "byte", 1);
	}
	free(y->desc);
	y->desc = fmt("%s", et_names[k]);
	return y;
}

/* ---- the type generator ------------------------------------------------------ */

/* valid as a filetype: see the header */
int
file_ok(const struct ty *y, int E)
{
	size_t i;

	if (!y || y->rs.size <= 0 || y->ext <= 0 || y->ext % E || y->tlb < 0 ||
	    y->tub - y->tlb > y->ext || y->ext > FT_MAX_EXT || y->rs.size > FT_MAX_SIZE)
		return 0;
	/* ROMIO 4.0.2 puts the file pointer one short after data that ends
	 * past the extent of a tile, and gets pointer and data wrong under a
	 * negative lb anywhere in the filetype: unless --full, neither */
	if (!o.full && (y->tub > y->ext || y->neglb))
		return 0;
	for (i = 0; i < y->rs.n; i++) {
		if (y->rs.r[i].off % E || y->rs.r[i].len % E)
			return 0;
		if (i && y->rs.r[i].off < y->rs.r[i - 1].off + y->rs.r[i - 1].len)
			return 0;
	}
	return 1;
}

/*
 * valid as a memory type: no byte twice, within reason.  ROMIO 4.0.2
 * takes a type whose data is one contiguous run as starting at the
 * buffer, dropping a negative true lb: not unless --full.
 */
int
mem_ok(const struct ty *y)
{
	return y && y->rs.size > 0 && y->rs.size <= 256 << 10 &&
	       y->tub - y->tlb <= MEM_MAX && y->ext > 0 && runs_disjoint(&y->rs) &&
	       (o.full || y->rs.n > 1 || y->tlb >= 0);
}

int
ty_ok(const struct gen *g, const struct ty *y)
{
	return g->mem ? mem_ok(y) : file_ok(y, g->E);
}

/*
 * ROMIO 4.0.2 flattens a resized type whose lb is not 0 as if its data
 * began at lb, and crashes on some (hvector of resized(int, lb -4)):
 * unless --full, resized keeps lb 0
 */
int
lb_ok(const struct ty *c)
{
	return o.full;
}

/* a leaf: the etype, or in memory a copy of it with gaps */
struct ty *
leaf(const struct gen *g)
{
	struct ty *y = NULL;

	if (!g->mem)
		return g->et;
	switch (rn(5)) {
	case 0:
		y = mk_resized(g->et, 0, g->E + 1 + rn(8));
		break;
	case 1:
		y = mk_resized(g->et, lb_ok(g->et) ? -rn(8) : 0, g->E + rn(8));
		break;
	case 2:
		if (g->etk == ET_INTDBL)
			y = mk_intdbl_padded();
		break;
	}
	return y && mem_ok(y) ? y : g->et;
}

/* place n blocks of the given byte spans: file in order with gaps of
 * whole etypes from lo on; memory in a random order around 0 (hb: 1
 * all below 0, 2 all from 136 on, as HDF5's types begin) */
void
place(const struct gen *g, int n, const int64_t *span, const int64_t *tlb,
      MPI_Aint *d, int hb)
{
	int64_t pos[16], cur, shift;
	int perm[16], i;

	cur = g->mem ? 0 : g->E * rn(3);
	if (!g->mem && chance(15))
		cur = roundup(136, g->E);
	for (i = 0; i < n; i++) {
		pos[i] = cur;
		cur += span[i] + (g->mem ? rn(9) : g->E * (chance(50) ? 0 : rn(4)));
		perm[i] = i;
	}
	if (!g->mem) {
		for (i = 0; i < n; i++)
			d[i] = (MPI_Aint)(pos[i] - tlb[i]);
		return;
	}
	shuffle(perm, n);
	shift = hb == 1 ? -cur - rn(64) : hb == 2 ? 136 + rn(64) : -rn((int)cur + 1);
	for (i = 0; i < n; i++)
		d[i] = (MPI_Aint)(pos[perm[i]] + shift - tlb[perm[i]]);
}

/* bytes bl copies of c span, first to last */
int64_t
bspan(int bl, const struct ty *c)
{
	return bl > 0 ? (int64_t)(bl - 1) * c->ext + c->tub - c->tlb : 0;
}

/*
 * ROMIO 4.0.2 flattens indexed and hindexed wrong when their old type has
 * a resized inside (subarray and darray are resized types too): unless
 * --full, their children have none
 */
int
child_ok(int ctor, const struct ty *c)
{
	return o.full || !c->rsz || (ctor != C_INDEXED && ctor != C_HINDEXED);
}

/*
 * an empty block now and then; ROMIO 4.0.2 counts them in a type's
 * bounds (an empty block below the others shifts the data), so not
 * unless --full.  Always draws, so the job is the same otherwise.
 */
int
empty_ok(void)
{
	return chance(12) && o.full;
}

/* one constructor ctor over children of depth below depth */
struct ty *
gen_ctor(const struct gen *g, int ctor, int depth, int hb)
{
	struct ty *c = NULL, *cs[3];
	int try;
	/*
	 * ROMIO 4.0.2 writes into the holes of, or shifts the data of, a
	 * filetype whose blocks' extents overlap while their data does not
	 * (hvector(3,1,64,subarray of extent 480)): unless --full, blocks of
	 * a filetype lie whole extents of their type apart
	 */
	int whole = !g->mem && !o.full;

	for (try = 0; try < 8 && (!c || !child_ok(ctor, c)); try++)
		c = depth > 0 ? gen_type(g, rn(depth)) : leaf(g);
	if (!child_ok(ctor, c))
		c = g->et;
	int64_t sp = c->tub - c->tlb, span[16], tlb[16], E = g->E, lb, ext;
	int n = 1 + rn(4), bl[16], i, nd, gs[3], sub[3], st[3], dist[3], darg[3], ps[3];
	MPI_Aint d[16];

	if (c->ext <= 0)
		return NULL;
	switch (ctor) {
	case C_CONTIG:
		return mk_contig(1 + rn(4), c);
	case C_VECTOR: {
		int b = 1 + rn(3);
		int64_t s = b + (g->mem ? 1 : 0) + rn(4);

		return mk_vector(n, b, g->mem && chance(25) ? -s : s, 0, c);
	}
	case C_HVECTOR: {
		int b = 1 + rn(3);
		int64_t s = (whole ? b * c->ext : bspan(b, c)) + (g->mem ? 1 + rn(9) : E * rn(4));

		return mk_vector(n, b, g->mem && chance(25) ? -s : s, 1, c);
	}
	case C_INDEXED:
	case C_INDEXED_BLOCK: {
		/* whole extents of c: place in units, then scale */
		int64_t cur = rn(3), pos[16];
		int perm[16], blk = 1 + rn(3);

		for (i = 0; i < n; i++) {
			bl[i] = ctor == C_INDEXED_BLOCK ? blk : empty_ok() ? 0 : 1 + rn(3);
			pos[i] = cur;
			cur += bl[i] + rn(3) + (g->mem && c->ext < sp);
			perm[i] = i;
		}
		if (g->mem)
			shuffle(perm, n);
		for (i = 0; i < n; i++)
			d[i] = (MPI_Aint)(pos[perm[i]] - (g->mem ? rn(2) * cur : 0));
		if (g->mem) {
			int tmp[16];

			for (i = 0; i < n; i++)
				tmp[i] = bl[perm[i]];
			memcpy(bl, tmp, sizeof(tmp));
		}
		return mk_indexed(n, bl, d, 0, ctor == C_INDEXED_BLOCK, c);
	}
	case C_HINDEXED:
	case C_HINDEXED_BLOCK: {
		int blk = 1 + rn(3);

		for (i = 0; i < n; i++) {
			bl[i] = ctor == C_HINDEXED_BLOCK ? blk : empty_ok() ? 0 : 1 + rn(3);
			span[i] = whole ? bl[i] * c->ext : bspan(bl[i], c);
			tlb[i] = whole ? c->lb : c->tlb;
		}
		place(g, n, span, tlb, d, hb);
		return mk_indexed(n, bl, d, 1, ctor == C_HINDEXED_BLOCK, c);
	}
	case C_STRUCT:
		n = 1 + rn(3);
		for (i = 0; i < n; i++) {
			cs[i] = i == 0 ? c : depth > 0 ? gen_type(g, rn(depth)) : leaf(g);
			if (cs[i]->ext <= 0)
				return NULL;
			bl[i] = empty_ok() ? 0 : 1 + rn(3);
			span[i] = whole ? bl[i] * cs[i]->ext : bspan(bl[i], cs[i]);
			tlb[i] = whole ? cs[i]->lb : cs[i]->tlb;
		}
		place(g, n, span, tlb, d, hb);
		return mk_struct(n, bl, d, cs);
	case C_SUBARRAY_C:
	case C_SUBARRAY_F:
		nd = 1 + rn(3);
		for (i = 0; i < nd; i++) {
			gs[i] = 1 + rn(nd == 3 ? 4 : 6);
			sub[i] = 1 + rn(gs[i]);
			st[i] = rn(gs[i] - sub[i] + 1);
		}
		return mk_subarray(nd, gs, sub, st, ctor == C_SUBARRAY_C ? MPI_ORDER_C
			: MPI_ORDER_FORTRAN, c);
	case C_DARRAY_C:
	case C_DARRAY_F: {
		int size = 1, lists[3][64], cnt[3];

		nd = 1 + rn(3);
		for (i = 0; i < nd; i++) {
			ps[i] = 1 + rn(3);
			size *= ps[i];
			gs[i] = 1 + rn(nd == 3 ? 5 : 8);
			if (ps[i] == 1 && chance(30))
				dist[i] = MPI_DISTRIBUTE_NONE;
			else
				dist[i] = chance(50) ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC;
			darg[i] = MPI_DISTRIBUTE_DFLT_DARG;
			if (dist[i] == MPI_DISTRIBUTE_BLOCK && chance(50))
				darg[i] = (gs[i] + ps[i] - 1) / ps[i] + rn(2);
			else if (dist[i] == MPI_DISTRIBUTE_CYCLIC && chance(60))
				darg[i] = 1 + rn(3);
		}
		i = rn(size);
		if (darray_lists(i, nd, gs, dist, darg, ps, lists, cnt) == 0)
			return NULL;
		return mk_darray(size, i, nd, gs, dist, darg, ps, ctor == C_DARRAY_C
				 ? MPI_ORDER_C : MPI_ORDER_FORTRAN, c);
	}
	case C_RESIZED:
		if (g->mem) {
			lb = rn(3) == 0 ? c->lb : (int64_t)rn(129) - 64;
			ext = sp + rn(17);
			if (!lb_ok(c))
				lb = 0;
		} else {
			switch (rn(5)) {
			case 0: lb = c->lb; break;
			case 1: lb = c->tlb; break;
			case 2: lb = c->tlb > 0 ? E * rn((int)(c->tlb / E) + 1) : 0; break;
			default: lb = 0; break;
			}
			ext = chance(20) ? 2 * c->ext : sp + E * rn(4);
			if (!lb_ok(c))
				lb = 0;
		}
		return mk_resized(c, lb, ext);
	default:
		return mk_dup(c);
	}
}

/* a random valid type nested up to depth (0: a leaf) */
struct ty *
gen_type(const struct gen *g, int depth)
{
	static const int ctors[] = {
		C_CONTIG, C_VECTOR, C_HVECTOR, C_INDEXED, C_HINDEXED, C_INDEXED_BLOCK,
		C_HINDEXED_BLOCK, C_STRUCT, C_SUBARRAY_C, C_SUBARRAY_F, C_DARRAY_C,
		C_DARRAY_F, C_RESIZED, C_DUP,
	};
	struct ty *y;
	int try;

	if (depth <= 0)
		return leaf(g);
	for (try = 0; try < 16; try++) {
		y = gen_ctor(g, ctors[rn((int)(sizeof(ctors) / sizeof(ctors[0])))], depth, 0);
		if (ty_ok(g, y))
			return y;
	}
	return leaf(g);
}

/* ---- memory types ------------------------------------------------------------- */

struct ty *
gen_mem(const struct gen *g, int kind)
{
	struct ty *y = NULL;
	int try;

	for (try = 0; try < 8; try++) {
		switch (kind) {
		case M_CONTIG:
			y = chance(40) ? g->et : mk_contig(1 + rn(6), g->et);
			break;
		case M_VECTOR:
			y = gen_ctor(g, chance(50) ? C_VECTOR : C_HVECTOR, rn(2), 0);
			break;
		case M_HINDEXED_NEG:
			y = gen_ctor(g, C_HINDEXED, rn(2), 1);
			break;
		case M_TRUE_LB:
			y = gen_ctor(g, chance(50) ? C_HINDEXED : C_STRUCT, rn(2), 2);
			break;
		case M_RESIZED:
			y = gen_ctor(g, C_RESIZED, 1 + rn(2), 0);
			break;
		case M_STRUCT:
			y = gen_ctor(g, C_STRUCT, 1 + rn(2), 0);
			break;
		default:
			y = gen_type(g, 2 + rn(2));
			break;
		}
		if (mem_ok(y))
			return y;
	}
	return g->et;
}
