/*
 * jobgen.c - the random job generator: phases, views and accesses from a seed
 * (one part of mpi_fuzzio: fuzzio.h)
 */
#include "fuzzio.h"

/* ---- jobs ----------------------------------------------------------------------- */

const char *
path_name(int path, int rd)
{
	static char s[8][64];
	static int k;
	char *b = s[k++ % 8];

	snprintf(b, 64, "MPI_File_%s%s%s%s%s%s%s%s", path & P_NB ? "i" : "",
		 rd ? "read" : "write", path & P_AT ? "_at" : "", path & P_COLL ? "_all" : "",
		 path & P_SHARED ? "_shared" : "", path & P_ORDERED ? "_ordered" : "",
		 path & P_SPLIT ? "_begin" : "", path & P_LARGE ? "_c" : "");
	return b;
}

/* the view an access goes through: its rank's, or another's (ST_UNSYNC) */
const struct view *
acc_view(const struct phase *ph, const struct acc *a)
{
	return &ph->v[a->vr >= 0 ? a->vr : a->rank];
}

void
model_reserve(struct model *m, int64_t end)
{
	int64_t cap = m->cap;

	if (end <= cap)
		return;
	while (cap < end)
		cap = cap ? 2 * cap : 1 << 16;
	m->img = xrealloc(m->img, (size_t)cap);
	m->stamp = xrealloc(m->stamp, (size_t)cap * sizeof(*m->stamp));
	memset(m->img + m->cap, 0, (size_t)(cap - m->cap));
	memset(m->stamp + m->cap, 0, (size_t)(cap - m->cap) * sizeof(*m->stamp));
	m->cap = cap;
}

void
view_prepare(struct view *v)
{
	size_t i;

	v->pre = xmalloc((v->ft->rs.n + 1) * sizeof(*v->pre));
	v->pre[0] = 0;
	for (i = 0; i < v->ft->rs.n; i++)
		v->pre[i + 1] = v->pre[i] + v->ft->rs.r[i].len;
}

/* the file runs of stream bytes [s, s + n) of a view */
void
view_map(const struct view *v, int64_t s, int64_t n, struct runs *out)
{
	const struct ty *ft = v->ft;
	int64_t fs = ft->rs.size;

	while (n > 0) {
		int64_t tile = s / fs, r = s % fs, in, take;
		size_t lo = 0, hi = ft->rs.n;

		while (hi - lo > 1) {	/* the run with pre[run] <= r */
			size_t mid = (lo + hi) / 2;

			if (v->pre[mid] <= r)
				lo = mid;
			else
				hi = mid;
		}
		in = r - v->pre[lo];
		take = imin(n, ft->rs.r[lo].len - in);
		runs_add(out, v->disp + tile * ft->ext + ft->rs.r[lo].off + in, take);
		s += take;
		n -= take;
	}
}

int64_t
view_global(const struct view *v, int64_t s)
{
	struct runs r = { 0 };
	int64_t g;

	view_map(v, s, 1, &r);
	g = r.r[0].off;
	runs_free(&r);
	return g;
}

/* stream bytes of the view below file offset size (the view increases) */
int64_t
view_below(const struct view *v, int64_t size)
{
	int64_t lo = 0, hi;

	if (size <= v->disp)
		return 0;
	hi = ((size - v->disp) / v->ft->ext + 2) * v->ft->rs.size;
	while (lo < hi) {	/* the first stream byte at or past size */
		int64_t mid = lo + (hi - lo) / 2;

		if (view_global(v, mid) >= size)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

void
phase_free(struct phase *ph)
{
	int r, i;

	for (i = 0; i < ph->na; i++) {
		runs_free(&ph->a[i].g);
		free(ph->a[i].expect);
	}
	free(ph->a);
	for (r = 0; r < MAXP; r++) {
		free(ph->v[r].pre);
		free(ph->v[r].how);
	}
	memset(ph, 0, sizeof(*ph));
}

/* the phases; the model too unless keep_model (the types stay in the pool) */
void
job_free(struct job *j, int keep_model)
{
	int p;

	for (p = 0; p < j->nph; p++)
		phase_free(&j->ph[p]);
	j->nph = 0;
	if (!keep_model) {
		free(j->m.img);
		free(j->m.stamp);
		memset(&j->m, 0, sizeof(j->m));
	}
}

/* ---- job generation ------------------------------------------------------------ */

struct acc *
new_acc(struct phase *ph)
{
	struct acc *a;

	if (ph->na == ph->cap) {
		ph->cap = ph->cap ? 2 * ph->cap : 32;
		ph->a = xrealloc(ph->a, (size_t)ph->cap * sizeof(*ph->a));
	}
	a = &ph->a[ph->na++];
	memset(a, 0, sizeof(*a));
	a->pos_after = -1;
	a->vr = -1;
	return a;
}

/* a memory type of a random kind, and its kind */
struct ty *
pick_mem(const struct gen *gm, int *kind)
{
	int k = rn(M_N);
	int base = k == M_BOTTOM || k == M_BOTTOM2 ? rn(M_NESTED + 1) : k;

	*kind = o.nobottom ? base : k;
	return gen_mem(gm, base);
}

/* at most n copies of m fit in memory without a byte twice */
int64_t
mem_fit(const struct ty *m, int64_t n)
{
	int64_t span = m->tub - m->tlb, ext = m->ext, k;
	struct runs all = { 0 };
	int ok;

	if (n > 1 && ext > 0)
		n = imin(n, (MEM_MAX - span) / ext + 1);
	if (n <= 1)
		return imax(n, 0);
	if (ext >= span)
		return n;
	for (k = 0; k < n; k++)
		runs_shift(&all, &m->rs, k * ext);
	ok = runs_disjoint(&all);
	runs_free(&all);
	return ok ? n : 1;
}

/*
 * One access of rank r in step s: memory type, place in the stream
 * (below lim bytes), count; busy (NB batches): stream ranges it must not
 * meet, as MPI leaves the order of pending accesses open.
 */
struct acc *
gen_access(struct phase *ph, const struct gen *gm, int r, int s, int path, int rd,
	   int64_t lim, int64_t below, const struct runs *busy, int h)
{
	struct acc *a = new_acc(ph);
	int64_t E = ph->E, msize, n, pos = ph->pos[r];
	size_t i;

	/* two handles, two individual pointers: not followed */
	if (ph->alias)
		pos = ph->pos[r] = -1;
	a->h = h;
	a->rank = r;
	a->step = s;
	a->path = path;
	a->rd = rd;
	a->idx = ph->nidx[r]++;
	a->m = pick_mem(gm, &a->mkind);
	msize = a->m->rs.size;
	lim = lim / E * E;
	if (!(path & P_AT) && pos >= 0 && pos * E < lim && chance(50))
		a->soff = pos * E;
	else
		a->soff = E * rn((int)(lim / E));
	n = (lim - a->soff) / msize;
	n = imin(n, (chance(10) ? 4 * ACC_MAX : ACC_MAX) / msize);
	if (!chance(30))
		n = rn((int)n + 1);
	if (chance(8))
		n = 0;
	a->count = mem_fit(a->m, n);
	a->bytes = a->count * msize;
	for (i = 0; busy && i < busy->n; i++)
		if (a->soff < busy->r[i].off + busy->r[i].len &&
		    busy->r[i].off < a->soff + a->bytes)
			a->count = a->bytes = 0;
	if (!(path & (P_AT | P_SHARED | P_ORDERED))) {
		/* ROMIO 4.0.2 loses track of the pointer through some views (one
		 * or a few etypes short after a write through
		 * hvector(3,2,24,subarray(2, sub 1 at 1))): unless --full, every
		 * access seeks there, and no pointer is checked */
		int draw = chance(70);

		if (!o.full)
			pos = -1;
		if (pos >= 0 && pos * E == a->soff && draw) {
			a->seek = SEEK_NONE;
		} else if (pos >= 0 && chance(40)) {
			a->seek = SEEK_CUR_;
			a->seekarg = a->soff / E - pos;
		} else {
			a->seek = SEEK_SET_;
			a->seekarg = a->soff / E;
		}
		a->pos_after = ph->pos[r] = (a->soff + a->bytes) / E;
		/* a short read moves the pointer by what it read: not followed */
		if ((rd && a->soff + a->bytes > below) || !o.full || ph->alias)
			a->pos_after = ph->pos[r] = -1;
	}
	return a;
}

/* how many tiles of ft a rank's stream may use: mostly a few KB of data */
int64_t
pick_tiles(const struct ty *ft)
{
	int64_t target, t;

	target = chance(20) ? 64 + rn(1024) : chance(75) ? 1024 + rn(16384) : rn(ZONE_BYTES);
	t = imax(1, target / ft->rs.size);
	t = imin(t, imax(1, ZONE_BYTES / ft->rs.size));
	return imin(t, imax(1, ZONE_SPAN / ft->ext));
}

/* the views of one phase, all ranks */
void
gen_views(struct job *j, struct phase *ph, const struct gen *gf)
{
	int N = j->nprocs, r, perm[MAXP], t;
	int64_t E = ph->E, cur = ph->base, fs;
	struct ty *ft;

	for (r = 0; r < N; r++)
		perm[r] = r;
	switch (ph->kind) {
	case K_ZONE:
		shuffle(perm, N);
		for (t = 0; t < N; t++) {
			struct view *v = &ph->v[perm[t]];
			int64_t tiles;

			v->ft = ft = gen_type(gf, rn(4));
			tiles = pick_tiles(ft);
			v->disp = cur + (chance(30) ? E * rn(8) : 0);
			v->usable = tiles * ft->rs.size;
			cur = v->disp + (tiles - 1) * ft->ext + ft->tub;
			cur += chance(50) ? 0 : E * rn(4);
			v->how = fmt("zone %d of %d", t, N);
		}
		break;
	case K_INTERLEAVE: {
		struct ty *b = gen_type(gf, rn(3));
		int64_t e = roundup(imax(b->tub, E), E) + E * rn(2), tiles = -1;
		int var = rn(3);

		for (r = 0; r < N; r++) {
			struct view *v = &ph->v[r];
			struct ty *w = NULL;
			int one = 1;
			MPI_Aint d = (MPI_Aint)(r * e);

			v->disp = cur;
			if (var == 0 && child_ok(C_HINDEXED, b) &&
			    (w = mk_indexed(1, &one, &d, 1, 0, b)))
				w = mk_resized(w, chance(50) || !lb_ok(w) ? 0 : r * e, N * e);
			else if (var == 1 && (w = mk_struct(1, &one, &d, &b)))
				w = mk_resized(w, 0, N * e);
			else if ((w = mk_resized(b, 0, N * e)))
				v->disp = cur + r * e;
			if (!file_ok(w, (int)E)) {
				bug("interleaved filetype of rank %d is not valid: %s", r,
				    w ? w->desc : "(none)");
				w = mk_resized(ph->et, 0, N * E);
				v->disp = cur + r * E;
			}
			v->ft = w;
			if (tiles < 0)
				tiles = pick_tiles(w);
			v->usable = tiles * w->rs.size;
			v->how = fmt("interleaved: block at %lld of every %lld bytes",
				     (long long)(r * e), (long long)(N * e));
		}
		break;
	}
	case K_PARTITION: {
		struct ty *c = chance(50) ? ph->et : gen_type(gf, 1);
		int nd = 1 + rn(3), ps[3] = { 0, 0, 0 }, gs[3], dist[3], darg[3], d;
		int order = chance(50) ? MPI_ORDER_C : MPI_ORDER_FORTRAN, darray = chance(50);
		int lists[3][64], cnt[3];
		int64_t tiles = -1, elems = 1;

		MPI_Dims_create(N, nd, ps);
		if (chance(50))
			for (d = 0; d < nd / 2; d++) {
				t = ps[d];
				ps[d] = ps[nd - 1 - d];
				ps[nd - 1 - d] = t;
			}
		for (d = 0; d < nd; d++) {
			gs[d] = ps[d] + rn(nd == 3 ? 4 : 8);
			elems *= gs[d];
			if (ps[d] == 1 && chance(30))
				dist[d] = MPI_DISTRIBUTE_NONE;
			else
				dist[d] = chance(50) ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC;
			darg[d] = MPI_DISTRIBUTE_DFLT_DARG;
			if (dist[d] == MPI_DISTRIBUTE_BLOCK && chance(40))
				darg[d] = (gs[d] + ps[d] - 1) / ps[d] + rn(2);
			else if (dist[d] == MPI_DISTRIBUTE_CYCLIC && chance(60))
				darg[d] = 1 + rn(3);
		}
		if (elems * c->ext > FT_MAX_EXT || elems * c->rs.size > FT_MAX_SIZE)
			c = ph->et;
		for (r = 0; r < N && darray; r++)	/* every rank must own some */
			if (!darray_lists(r, nd, gs, dist, darg, ps, lists, cnt))
				for (d = 0; d < nd; d++) {
					dist[d] = MPI_DISTRIBUTE_CYCLIC;
					darg[d] = MPI_DISTRIBUTE_DFLT_DARG;
				}
		for (r = 0; r < N; r++) {
			struct view *v = &ph->v[r];

			if (darray) {
				ft = mk_darray(N, r, nd, gs, dist, darg, ps, order, c);
			} else {
				int co[3], rr = r, sub[3], st[3];

				for (d = nd - 1; d >= 0; d--) {
					co[d] = rr % ps[d];
					rr /= ps[d];
				}
				for (d = 0; d < nd; d++) {
					int q = gs[d] / ps[d], rem = gs[d] % ps[d];

					sub[d] = q + (co[d] < rem);
					st[d] = co[d] * q + (co[d] < rem ? co[d] : rem);
				}
				ft = mk_subarray(nd, gs, sub, st, order, c);
			}
			if (!file_ok(ft, (int)E)) {
				bug("partition filetype of rank %d is not valid: %s", r,
				    ft ? ft->desc : "(none)");
				ft = mk_resized(ph->et, 0, N * E);
				v->disp = cur + r * E;
			} else {
				v->disp = cur;
			}
			if (tiles < 0)
				tiles = imin(pick_tiles(ft), 1 + rn(3));
			v->ft = ft;
			v->usable = tiles * ft->rs.size;
			v->how = fmt("partition: %s", darray ? "darray" : "subarray");
		}
		break;
	}
	default: {		/* K_SHARED: one view for all */
		int64_t tiles;

		ft = gen_type(gf, rn(4));
		fs = ft->rs.size;
		tiles = pick_tiles(ft);
		for (r = 0; r < N; r++) {
			ph->v[r].ft = ft;
			ph->v[r].disp = cur;
			ph->v[r].usable = tiles * fs * (j->rd ? 1 : N > 1 ? 2 : 1);
			ph->v[r].how = fmt("shared by all ranks");
		}
		break;
	}
	}
	for (r = 0; r < N; r++)
		view_prepare(&ph->v[r]);
}

/* the read job's limit: a little past the end of the file, or not */
int64_t
read_lim(const struct job *j, const struct view *v, int eof_ok, int64_t below)
{
	/* ROMIO 4.0.2 counts too many bytes in the status of a strided read
	 * past the end of the file: reads cross it only with --full */
	if (eof_ok && chance(15) && o.full)
		return below + v->ft->rs.size + 64;
	return imin(imax(below, 0), v->usable * 4);
}

/* the handle of an independent call, from a draw of rn(4): half of them
 * through the first handle */
int
pick_h(const struct phase *ph, int draw)
{
	if (ph->alias == (AL_SELF | AL_DUP))
		return draw == 3 ? 0 : draw;
	return draw >= 2 ? ph->alias : 0;
}

/*
 * The steps of a phase that is not shared.  Write jobs: writes, then
 * maybe a read-back of what each rank wrote; read jobs: reads.
 */
void
gen_steps(struct job *j, struct phase *ph, const struct gen *gm)
{
	int N = j->nprocs, r, s, i, n, nw;

	ph->nst = 1 + rn(4);
	for (s = 0; s < ph->nst; s++) {
		struct step *st = &ph->st[s];
		int k = 1 + rn(2), cpath = 0, pc = rn(100), hc = chance(50);

		st->sp_after = -1;
		st->rd = j->rd;
		st->type = pc < 35 ? ST_INDEP : pc < 55 ? ST_INDEP_NB : pc < 85 ? ST_COLL : ST_COLL_NB;
		/* a collective step through a dup'ed handle: every rank's call */
		st->h = hc && (ph->alias & AL_DUP) && st->type >= ST_COLL ? AL_DUP : 0;
		if (st->type == ST_COLL)
			cpath = PICK(coll_paths);
		else if (st->type == ST_COLL_NB)
			cpath = PICK(coll_nb_paths);
		for (r = 0; r < N; r++) {
			struct runs busy = { 0 };
			int nb = st->type == ST_INDEP_NB || st->type == ST_COLL_NB;
			int64_t below = j->rd ? view_below(&ph->v[r], j->m.size) : INT64_MAX;

			n = st->type == ST_INDEP ? rn(4) : st->type == ST_INDEP_NB ? 1 + rn(3)
			  : st->type == ST_COLL ? 1 : k;
			for (i = 0; i < n; i++) {
				int path = st->type == ST_INDEP ? PICK(indep_paths)
					 : st->type == ST_INDEP_NB ? PICK(indep_nb_paths) : cpath;
				int64_t lim = j->rd ? read_lim(j, &ph->v[r], !nb, below)
						    : ph->v[r].usable;
				/* independent calls: either handle, each its own */
				int h = st->type >= ST_COLL ? st->h : pick_h(ph, rn(4));
				struct acc *a = gen_access(ph, gm, r, s, path, j->rd, lim,
							   below, nb ? &busy : NULL, h);

				if (nb)
					runs_add(&busy, a->soff, a->bytes);
			}
			runs_free(&busy);
		}
	}
	if (j->rd || !(ph->amode & MPI_MODE_RDWR) || !chance(40) || ph->nst >= 15)
		return;
	/* the read-back: parts of the rank's own writes of this phase */
	s = ph->nst++;
	ph->st[s].type = chance(50) ? ST_INDEP : ST_COLL;
	ph->st[s].rd = 1;
	ph->st[s].sp_after = -1;
	{
		int cpath = PICK(coll_paths), wn = ph->na;

		for (r = 0; r < N; r++) {
			n = ph->st[s].type == ST_COLL ? 1 : 1 + rn(2);
			for (i = 0; i < n; i++) {
				int path = ph->st[s].type == ST_COLL ? cpath : PICK(indep_paths);
				int h = pick_h(ph, rn(4));

				if (ph->st[s].type != ST_INDEP)
					h = 0;

				nw = read_part(ph, gm, r, r, s, path, wn);
				ph->a[nw].h = h;
			}
		}
	}
}

/*
 * A read of rank r in step s, of path: a part of one of the writes of
 * rank wr among the phase's first wn accesses (nothing if wr wrote
 * nothing), through wr's view.  Returns its index.
 */
int
read_part(struct phase *ph, const struct gen *gm, int r, int wr, int s, int path, int wn)
{
	struct acc w = { .bytes = 0 }, *a;
	int cnt = 0, t, nw;

	for (t = 0; t < wn; t++)
		if (ph->a[t].rank == wr && !ph->a[t].rd && ph->a[t].bytes)
			cnt++;
	if (cnt) {
		nw = rn(cnt);
		for (t = 0; t < wn; t++)
			if (ph->a[t].rank == wr && !ph->a[t].rd && ph->a[t].bytes && nw-- == 0)
				w = ph->a[t];	/* new_acc moves them */
	}
	a = new_acc(ph);
	a->rank = r;
	a->vr = wr == r ? -1 : wr;
	a->step = s;
	a->rd = 1;
	a->idx = ph->nidx[r]++;
	a->path = path;
	a->m = pick_mem(gm, &a->mkind);
	if (w.bytes) {
		int64_t E = ph->E, off = E * rn((int)(w.bytes / E));
		int64_t len = w.bytes - off;

		a->soff = w.soff + off;
		if (len < a->m->rs.size) {
			a->m = ph->et;
			a->mkind = M_CONTIG;
		}
		a->count = mem_fit(a->m, len / a->m->rs.size);
		if (chance(50))
			a->count = rn((int)a->count) + 1;
		a->bytes = a->count * a->m->rs.size;
	}
	if (!(a->path & P_AT)) {
		a->seek = SEEK_SET_;
		a->seekarg = a->soff / ph->E;
		a->pos_after = o.full && !ph->alias && wr == r ? (a->soff + a->bytes) / ph->E : -1;
	}
	return (int)(a - ph->a);
}

/*
 * After the phase's writes (and read-backs): a barrier, then a collective
 * read by every rank of a part of a write of rank r + k (mod N) in this
 * phase, without MPI_File_sync.  MPICH on a local file system returns
 * those bytes (its writes are pwrite()s done when the call returns); MPI
 * leaves them undefined, but programs rely on it (the library makes a
 * collective call or a barrier show the other ranks' writes).  A phase
 * that is not shared sets every rank's view to rank r + k's first (in
 * the order sep says, around the barrier); a shared one reads at
 * explicit offsets in its one view.
 */
void
gen_unsync(struct job *j, struct phase *ph, const struct gen *gm)
{
	int N = j->nprocs, s, r, k, cpath, draw = chance(25), wn = ph->na;

	if (j->rd || j->seq || !(ph->amode & MPI_MODE_RDWR) || N < 2 || o.nounsync ||
	    !draw || ph->nst >= 16)
		return;
	k = 1 + rn(N - 1);
	s = ph->nst++;
	ph->st[s].type = ST_UNSYNC;
	ph->st[s].rd = 1;
	ph->st[s].sp_after = -1;
	/* no barrier at all: the library shows the other ranks' writes at a
	 * collective call on the handle (set_view, the read itself); MPICH
	 * need not (ROMIO's collective calls without collective buffering do
	 * not synchronize), so only with --full */
	ph->st[s].sep = rn(3);
	if (ph->st[s].sep == 2 && !o.full)
		ph->st[s].sep = 0;
	ph->vshift = ph->kind == K_SHARED ? 0 : k;
	cpath = ph->kind == K_SHARED ? PICK(unsync_at_paths)
	      : chance(70) ? PICK(coll_paths) : PICK(coll_nb_paths);
	for (r = 0; r < N; r++) {
		int t = read_part(ph, gm, r, (r + k) % N, s, cpath, wn);

		if (ph->kind == K_SHARED)	/* the one view */
			ph->a[t].vr = -1;
	}
}

/* the steps of a shared phase: ordered and one-after-the-other shared */
void
gen_shared_steps(struct job *j, struct phase *ph, const struct gen *gm)
{
	int N = j->nprocs, r, s, t, nwst;
	int64_t sp = 0, lim = ph->v[0].usable, E = ph->E;

	if (j->rd)
		lim = imin(view_below(&ph->v[0], j->m.size), lim);
	nwst = ph->nst = 1 + rn(3);
	for (s = 0; s < ph->nst; s++) {
		struct step *st = &ph->st[s];
		int opath = PICK(ordered_paths);

		st->type = chance(50) ? ST_ORDERED : ST_SHARED;
		st->rd = j->rd;
		for (r = 0; r < N; r++)
			st->order[r] = r;
		if (st->type == ST_SHARED)
			shuffle(st->order, N);
		for (t = 0; t < N; t++) {
			struct acc *a = new_acc(ph);
			int64_t n;

			r = st->order[t];
			a->rank = r;
			a->step = s;
			a->rd = j->rd;
			a->idx = ph->nidx[r]++;
			a->path = st->type == ST_ORDERED ? opath : PICK(shared_paths);
			a->m = pick_mem(gm, &a->mkind);
			n = (lim - sp) / N / a->m->rs.size;
			n = imin(n, ACC_MAX / a->m->rs.size);
			a->count = mem_fit(a->m, chance(10) ? 0 : rn((int)imax(n, 0) + 1));
			a->bytes = a->count * a->m->rs.size;
			a->soff = sp;
			sp += a->bytes;
		}
		st->sp_after = sp / E;
	}
	/* MPI_MODE_SEQUENTIAL: the shared pointer only moves forward */
	if (j->rd || !(ph->amode & MPI_MODE_RDWR) || !chance(40) || j->seq)
		return;
	/* read-back: the pointer to 0, then the same steps as reads */
	s = ph->nst++;
	ph->st[s].type = ST_SEEKSH;
	ph->st[s].sp_after = 0;
	for (s = 0; s < nwst; s++) {
		struct step *st = &ph->st[ph->nst], *w = &ph->st[s];
		int opath = PICK(ordered_paths), wa, na = ph->na;

		*st = *w;
		st->rd = 1;
		for (wa = 0; wa < na; wa++) {
			struct acc *x = &ph->a[wa], *a;

			if (x->step != s)
				continue;
			a = new_acc(ph);
			x = &ph->a[wa];	/* new_acc may move the array */
			*a = *x;
			memset(&a->g, 0, sizeof(a->g));
			a->step = ph->nst;
			a->rd = 1;
			a->idx = ph->nidx[a->rank]++;
			a->path = w->type == ST_ORDERED ? opath : PICK(shared_paths);
			a->m = pick_mem(gm, &a->mkind);
			if (x->bytes % a->m->rs.size || mem_fit(a->m, x->bytes /
			    a->m->rs.size) != x->bytes / a->m->rs.size) {
				a->m = ph->et;
				a->mkind = M_CONTIG;
			}
			a->count = x->bytes / a->m->rs.size;
		}
		ph->nst++;
	}
}

/*
 * Map every access to the file; a write job also checks who wrote what
 * before (returns 1 if the phase rewrites another rank's bytes and that
 * is not allowed) and, when apply, writes the phase into the model.
 */
int
phase_model(struct job *j, int p, int apply)
{
	struct phase *ph = &j->ph[p];
	struct model *m = &j->m;
	int i;
	size_t k;

	if (!apply)
		for (i = 0; i < ph->na; i++) {
			struct acc *a = &ph->a[i];

			runs_free(&a->g);
			view_map(acc_view(ph, a), a->soff, a->bytes, &a->g);
		}
	if (j->rd)
		return 0;
	if (!apply) {
		ph->overlap = 0;
		for (i = 0; i < ph->na; i++) {
			struct acc *a = &ph->a[i];

			for (k = 0; k < a->g.n && !a->rd; k++) {
				int64_t g = a->g.r[k].off, e = g + a->g.r[k].len;

				model_reserve(m, e);
				for (; g < e; g++)
					if (m->stamp[g] && (int)(m->stamp[g] & 7) != a->rank)
						ph->overlap++;
			}
		}
		return ph->overlap && !o.overlap;
	}
	for (i = 0; i < ph->na; i++) {
		struct acc *a = &ph->a[i];
		uint64_t key = acc_key(j->seed, p, a->rank, a->idx);
		int64_t s = 0;
		uint32_t mark = (uint32_t)(p + 1) << 3 | (uint32_t)a->rank;

		for (k = 0; k < a->g.n && !a->rd; k++) {
			int64_t g = a->g.r[k].off, e = g + a->g.r[k].len;

			for (; g < e; g++, s++) {
				uint32_t was = m->stamp[g];

				if ((was >> 3) == (uint32_t)p + 1 && (int)(was & 7) != a->rank)
					bug("phase %d: ranks %d and %d both write byte %lld", p,
					    (int)(was & 7), a->rank, (long long)g);
				m->img[g] = dbyte(key, s);
				m->stamp[g] = mark;
			}
			m->size = imax(m->size, e);
		}
	}
	return 0;
}

/* what reads of the own rank must bring: a copy of the model as it is now */
void
expect_reads(struct job *j, struct phase *ph)
{
	int i;
	size_t k;

	for (i = 0; i < ph->na; i++) {
		struct acc *a = &ph->a[i];
		int64_t s = 0, below;

		if (!a->rd)
			continue;
		/* bytes before the first past the end of the file */
		below = view_below(acc_view(ph, a), j->m.size);
		a->want = imax(0, imin(a->bytes, below - a->soff));
		if (a->rank != me || o.mode == MODE_DESCRIBE)
			continue;
		a->expect = xmalloc((size_t)a->bytes);
		for (k = 0; k < a->g.n && s < a->want; k++) {
			int64_t g = a->g.r[k].off, n = imin(a->g.r[k].len, a->want - s);

			memcpy(a->expect + s, j->m.img + g, (size_t)n);
			s += n;
		}
	}
}

void
new_phase(struct job *j, int p, int fresh)
{
	struct phase *ph = &j->ph[p];
	struct gen gf, gm;
	int kind = rn(100), r;

	memset(ph, 0, sizeof(*ph));
	ph->kind = kind < 35 ? K_ZONE : kind < 60 ? K_INTERLEAVE : kind < 80 ? K_PARTITION
		 : K_SHARED;
	if (j->seq)	/* only the shared pointer moves data */
		ph->kind = K_SHARED;
	ph->dispcur = j->seq;
	kind = rn(100);
	ph->badcur = kind < 5 && !j->seq && !j->rd && !o.nodispcur;
	/* the file closed before the phase, and removed, or opened again as
	 * it is (not when an overlap must be avoided: fresh) */
	ph->amode = p ? j->ph[p - 1].amode : j->amode;
	kind = rn(100);
	ph->rmhow = rn(3);
	if (!j->rd && p > 0 && !o.norecreate && kind < 10)
		ph->reopen = kind < 6 ? RO_RECREATE : fresh ? RO_NONE : RO_REOPEN;
	if (ph->reopen == RO_RECREATE) {
		ph->amode = MPI_MODE_CREATE | MPI_MODE_EXCL | (j->seq ? MPI_MODE_WRONLY |
			    MPI_MODE_SEQUENTIAL : MPI_MODE_RDWR);
		j->m.size = 0;		/* the model starts again from nothing */
		if (j->m.cap) {
			memset(j->m.img, 0, (size_t)j->m.cap);
			memset(j->m.stamp, 0, (size_t)j->m.cap * sizeof(*j->m.stamp));
		}
	} else if (ph->reopen == RO_REOPEN) {
		ph->amode &= ~(MPI_MODE_CREATE | MPI_MODE_EXCL);
	}
	kind = rn(100);
	ph->etk = kind < 30 ? ET_BYTE : kind < 50 ? ET_INT : kind < 70 ? ET_DOUBLE
		: kind < 85 ? ET_INT3 : ET_IDI;
	/* ROMIO 4.0.2 seeks wrong through a resized etype (see --full) */
	if (ph->etk == ET_IDI && o.full && chance(50))
		ph->etk = ET_INTDBL;
	ph->et = mk_etype(ph->etk);
	ph->E = (int)ph->et->ext;
	for (r = 0; r < MAXP; r++)
		ph->pos[r] = 0;
	gf = (struct gen){ .E = ph->E, .etk = ph->etk, .et = ph->et, .mem = 0 };
	gm = gf;
	gm.mem = 1;
	/* where: after the file so far, or over an earlier phase's bytes */
	if (j->rd) {
		ph->base = j->m.size > 0 ? roundup(rn((int)j->m.size), ALIGN) - ALIGN : 0;
		ph->base = chance(20) ? 0 : imax(ph->base, 0);
	} else if (ph->dispcur) {
		/* MPI_DISPLACEMENT_CURRENT: where the shared pointer is, in bytes
		 * of the view before (after an open: the default view at 0) */
		const struct phase *q = &j->ph[p - (p > 0)];

		ph->base = p == 0 || ph->reopen ? 0 :
			   view_global(&q->v[0], q->st[q->nst - 1].sp_after * q->E);
	} else if (!fresh && p > 0 && chance(o.overlap ? 50 : 25)) {
		ph->base = j->ph[rn(p)].base;
	} else {
		ph->base = roundup(j->m.size, ALIGN);
		kind = rn(10);
		if (kind == 0)
			ph->base += ALIGN * rn(16384);	/* large-ish */
		else if (kind < 3)
			ph->base += ALIGN * rn(64);
	}
	gen_views(j, ph, &gf);
	/* a second handle on the path: on MPI_COMM_SELF (as PnetCDF's
	 * independent mode), or on a dup of the job's communicator; kept
	 * open from the phase before now and then */
	kind = rn(100);
	if (!j->rd && !j->seq && ph->kind != K_SHARED && !o.noalias) {
		if (p > 0 && j->ph[p - 1].alias && !ph->reopen && kind >= 75)
			ph->alias = j->ph[p - 1].alias;
		else
			ph->alias = kind < 10 ? AL_SELF : kind < 20 ? AL_DUP :
				    kind < 25 ? AL_SELF | AL_DUP : AL_NONE;
	}
	if (ph->kind == K_SHARED)
		gen_shared_steps(j, ph, &gm);
	else
		gen_steps(j, ph, &gm);
	gen_unsync(j, ph, &gm);
}

void
gen_job(struct job *j, uint64_t seed, int nprocs, int rd)
{
	int p, tries;

	j->seed = seed;
	j->nprocs = nprocs;
	j->rd = rd;
	rnd_seed(mix(seed, rd ? 0x52454144 : 0x5752495445));
	j->amode = MPI_MODE_CREATE | (chance(70) ? MPI_MODE_RDWR : MPI_MODE_WRONLY);
	j->seq = chance(8) && !rd && !o.nodispcur;
	if (j->seq)	/* MPI: SEQUENTIAL with RDWR is erroneous */
		j->amode = MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL;
	if (rd)
		j->amode = MPI_MODE_RDONLY;
	j->nph = 1 + rn(rd ? 3 : 4);
	for (p = 0; p < j->nph; p++) {
		for (tries = 0;; tries++) {
			new_phase(j, p, tries > 0);
			if (!phase_model(j, p, 0))
				break;
			/* another rank's bytes and no epochs: again, elsewhere */
			phase_free(&j->ph[p]);
		}
		phase_model(j, p, 1);
		expect_reads(j, &j->ph[p]);
	}
}
