/*
 * resolve.c - overlap resolution between the views of a job's ranks (the
 * rule of Kimura and Tatebe's MPI-IO/Gfarm, its section 5.3.1): where
 * views overlap, the lowest rank keeps the bytes and
 * every other rank drops them, so each byte of the file lives in exactly
 * one part.
 *
 * Views are periodic, so the difference of two views is computed over one
 * common period.  For ranks q < r, with L = lcm(extent_q, extent_r) and x
 * counted from disp_r:
 *
 *   x in V_r  iff  x mod extent_r                   lies in r's blocks
 *   x in V_q  iff  (x + disp_r - disp_q) mod extent_q  lies in q's blocks
 *
 * both of period L.  Walking the two patterns over [0, L) gives V_r minus
 * V_q as a pattern of period L (then shrunk to its smallest period).
 *
 * Limitation: the result must again be one periodic view (disp, extent,
 * end, blocks).  That holds when the patterns do not meet inside the
 * common bound range (nothing to drop: the usual contiguous and cyclic
 * layouts), or when V_q's bounds enclose V_r's (disp_q <= disp_r and
 * end_q >= end_r), so that V_q's pattern applies to every byte V_r can
 * have.  Otherwise (say V_q starts after V_r and overlaps it from there
 * on) the difference has a prefix that differs from the rest, which one
 * view cannot record: that fails with GFSP_ENOTSUP naming both ranks.  So
 * does a pair whose common period would expand to more than
 * GFSP_RESOLVE_MAX_BLOCKS blocks.
 *
 * Each rank r subtracts every original V_q, q < r.  That equals
 * subtracting the resolved ones (the bytes the resolved views lack are
 * owned by even lower ranks, which r subtracts too), and lets ranks be
 * processed from the top down while the views below are still original.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "view_impl.h"

struct ivl {
	uint64_t a, b;		/* [a, b) */
};

struct ilist {
	struct ivl *p;
	size_t n, cap;
};

static int
ilist_add(struct ilist *l, uint64_t a, uint64_t b, struct gfsp_error *err)
{
	if (a >= b)
		return 0;
	if (l->n > 0 && l->p[l->n - 1].b == a) {
		l->p[l->n - 1].b = b;
		return 0;
	}
	if (gfsp_grow(&l->p, &l->cap, l->n + 1, sizeof(*l->p)) != 0)
		return gfsp_error_set(err, GFSP_ENOMEM,
		    "cannot resolve view overlaps: out of memory at %zu "
		    "blocks", l->n);
	l->p[l->n++] = (struct ivl){ a, b };
	return 0;
}

/*
 * The blocks of view v repeated with its extent, seen through the window
 * x in [0, L) where x = y - sh (y counts from v's tile origin): yields
 * the pieces in increasing order, clipped to the window.
 */
struct gen {
	const struct gfsp_view *v;
	uint64_t sh, L;
	uint64_t tile, i;
};

static int
gen_next(struct gen *g, uint64_t *a, uint64_t *b)
{
	const struct gfsp_view *v = g->v;

	for (;;) {
		uint64_t ys, ye;

		if (g->i == v->nblocks) {
			g->i = 0;
			g->tile += v->extent;
		}
		ys = g->tile + v->off[g->i];
		ye = ys + v->len[g->i];
		if (ys >= g->sh + g->L)
			return 0;
		g->i++;
		if (ye <= g->sh)
			continue;
		*a = GFSP_MAX(ys, g->sh) - g->sh;
		*b = GFSP_MIN(ye, g->sh + g->L) - g->sh;
		return 1;
	}
}

static uint64_t
gcd64(uint64_t a, uint64_t b)
{
	while (b != 0) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * Does the pattern d (merged pieces of [0, L)) repeat with period p (a
 * divisor of L)?  Cut at multiples of p, every window must hold the same
 * pieces as window 0.
 */
static int
has_period(const struct ilist *d, uint64_t L, uint64_t p)
{
	size_t c0 = 0, k = 0, i;

	while (c0 < d->n && d->p[c0].a < p)
		c0++;
	if (c0 == 0)
		return d->n == 0;
	for (i = 0; i < d->n; i++) {
		uint64_t a = d->p[i].a, b = d->p[i].b;

		while (a < b) {
			uint64_t w = a / p, e = GFSP_MIN(b, (w + 1) * p);
			const struct ivl *z = &d->p[k % c0];

			if (k / c0 != w || a - w * p != z->a ||
			    e - w * p != GFSP_MIN(z->b, p))
				return 0;
			k++;
			a = e;
		}
	}
	return k == c0 * (L / p);
}

/* Shrink the period L of pattern d as far as it repeats. */
static void
shrink_period(struct ilist *d, uint64_t *L)
{
	uint64_t f;
	size_t i;

	/* a pattern with period L/f has at least f pieces (more by one if
	 * a piece wraps), so factors above n+1 cannot work */
	for (f = 2; f <= d->n + 1 && f <= *L; f++) {
		while (*L % f == 0 && has_period(d, *L, *L / f)) {
			*L /= f;
			for (i = 0; i < d->n && d->p[i].a < *L; i++)
				if (d->p[i].b > *L)
					d->p[i].b = *L;
			d->n = i;
		}
	}
}

/* "[disp, end)" or "[disp, unbounded)" */
static const char *
bounds(const struct gfsp_view *v, char *buf, size_t len)
{
	if (v->end == GFSP_VIEW_UNBOUNDED)
		snprintf(buf, len, "[%llu, unbounded)",
			 (unsigned long long)v->disp);
	else
		snprintf(buf, len, "[%llu, %llu)", (unsigned long long)v->disp,
			 (unsigned long long)v->end);
	return buf;
}

/* The common period L of the views of ranks r (cur) and q (vq), if it
 * is below 2^64 and holds at most GFSP_RESOLVE_MAX_BLOCKS blocks. */
static int
common_period(const struct gfsp_view *cur, int r, const struct gfsp_view *vq,
	      int q, uint64_t *Lp, struct gfsp_error *err)
{
	uint64_t L, g, cost_r, cost_q;

	g = gcd64(cur->extent, vq->extent);
	if (__builtin_mul_overflow(cur->extent / g, vq->extent, &L) ||
	    L > UINT64_MAX - 2 * GFSP_MAX(cur->extent, vq->extent))
		return gfsp_error_set(err, GFSP_ENOTSUP,
				     "cannot resolve the overlap of the views of ranks %d and %d: their periods %llu and %llu have no common period below 2^64",
				     q, r, (unsigned long long)vq->extent,
				     (unsigned long long)cur->extent);
	if (__builtin_mul_overflow(cur->nblocks, L / cur->extent, &cost_r) ||
	    __builtin_mul_overflow(vq->nblocks, L / vq->extent + 1, &cost_q) ||
	    __builtin_add_overflow(cost_r, cost_q, &cost_r) ||
	    cost_r > GFSP_RESOLVE_MAX_BLOCKS)
		return gfsp_error_set(err, GFSP_ENOTSUP,
				     "cannot resolve the overlap of the views of ranks %d and %d: their common period of %llu bytes holds more than %u blocks",
				     q, r, (unsigned long long)L,
				     GFSP_RESOLVE_MAX_BLOCKS);
	*Lp = L;
	return 0;
}

/* out: cur's view with period L holding the blocks [a, b) of d. */
static int
view_of(struct gfsp_view *out, const struct gfsp_view *cur,
	const struct ilist *d, uint64_t L, struct gfsp_error *err)
{
	uint64_t *off = NULL, *len = NULL;
	size_t i;
	int rc;

	if (d->n > 0) {
		off = malloc(d->n * sizeof(*off));
		len = malloc(d->n * sizeof(*len));
		if (off == NULL || len == NULL) {
			rc = gfsp_error_set(err, GFSP_ENOMEM,
					   "cannot resolve view overlaps: out of memory at %zu blocks",
					   d->n);
			goto out;
		}
	}
	for (i = 0; i < d->n; i++) {
		off[i] = d->p[i].a;
		len[i] = d->p[i].b - d->p[i].a;
	}
	rc = gfsp_view_init(out, cur->disp, L, cur->end, d->n, off, len, err);
out:
	free(off);
	free(len);
	return rc;
}

/*
 * out = cur (rank r's view so far) minus orig_q (rank q's original view).
 * *changed tells whether there was anything to drop (out is set only then).
 */
static int
subtract(const struct gfsp_view *cur, int r, const struct gfsp_view *vq, int q,
	 struct gfsp_view *out, int *changed, struct gfsp_error *err)
{
	struct ilist d = { 0 };
	struct gen R, Q;
	uint64_t lo, hi, L = 0, sh, ra, rb, qa = 0, qb = 0;
	uint64_t w0 = 0, w1 = 0, wrap = 0;
	int have_q, real = 0, whole, rc = 0;

	*changed = 0;
	if (cur->nblocks == 0 || vq->nblocks == 0)
		return 0;
	lo = GFSP_MAX(cur->disp, vq->disp);
	hi = GFSP_MIN(cur->end, vq->end);
	if (lo >= hi)
		return 0;	/* bound ranges apart: nothing shared */

	rc = common_period(cur, r, vq, q, &L, err);
	if (rc != 0)
		return rc;

	if (cur->disp >= vq->disp)
		sh = (cur->disp - vq->disp) % vq->extent;
	else
		sh = (vq->extent - (vq->disp - cur->disp) % vq->extent) %
		     vq->extent;

	/* the shared bound range [lo, hi) in x, folded into [0, L):
	 * [w0, w1) plus [0, wrap) when it wraps around */
	whole = hi - lo >= L;
	if (!whole) {
		w0 = (lo - cur->disp) % L;
		if (hi - lo <= L - w0) {
			w1 = w0 + (hi - lo);
		} else {
			w1 = L;
			wrap = hi - lo - (L - w0);
		}
	}

	R = (struct gen){ cur, 0, L, 0, 0 };
	Q = (struct gen){ vq, sh, L, 0, 0 };
	have_q = gen_next(&Q, &qa, &qb);
	while (rc == 0 && gen_next(&R, &ra, &rb)) {
		uint64_t x = ra;

		while (have_q && qb <= x)
			have_q = gen_next(&Q, &qa, &qb);
		while (rc == 0 && x < rb) {
			uint64_t ia, ib;

			if (!have_q || qa >= rb) {
				rc = ilist_add(&d, x, rb, err);
				break;
			}
			if (qa > x)
				rc = ilist_add(&d, x, qa, err);
			ia = GFSP_MAX(qa, x);
			ib = GFSP_MIN(qb, rb);
			/* shared bytes: real if some lie in [lo, hi) */
			if (whole || (ia < w1 && ib > w0) || ia < wrap)
				real = 1;
			x = ib;
			if (qb <= rb)
				have_q = gen_next(&Q, &qa, &qb);
		}
	}
	if (rc != 0 || !real)
		goto out;

	if (vq->disp > cur->disp || vq->end < cur->end) {
		char bq[64], br[64];

		rc = gfsp_error_set(err, GFSP_ENOTSUP,
				   "views of ranks %d and %d overlap in a way a single periodic view cannot record (rank %d spans %s, rank %d spans %s)",
				   q, r, q, bounds(vq, bq, sizeof(bq)), r,
				   bounds(cur, br, sizeof(br)));
		goto out;
	}
	shrink_period(&d, &L);
	rc = view_of(out, cur, &d, L, err);
	if (rc == 0)
		*changed = 1;
out:
	free(d.p);
	return rc;
}

int
gfsp_views_resolve(struct gfsp_view *views, int n, struct gfsp_error *err)
{
	struct gfsp_view *res = NULL;
	char *changed = NULL;
	int r, q, rc = 0;

	if (n <= 1)
		return 0;
	res = calloc((size_t)n, sizeof(*res));
	changed = calloc((size_t)n, 1);
	if (res == NULL || changed == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM,
				   "cannot resolve view overlaps of %d ranks: out of memory",
				   n);
		goto out;
	}
	/* results go aside and replace the views only if all succeed */
	for (r = n - 1; r >= 1 && rc == 0; r--) {
		for (q = 0; q < r && rc == 0; q++) {
			struct gfsp_view next;
			int ch;

			rc = subtract(changed[r] ? &res[r] : &views[r], r,
				      &views[q], q, &next, &ch, err);
			if (rc == 0 && ch) {
				gfsp_view_free(&res[r]);
				res[r] = next;
				changed[r] = 1;
			}
		}
	}
	if (rc == 0) {
		for (r = 0; r < n; r++) {
			if (!changed[r])
				continue;
			gfsp_view_free(&views[r]);
			views[r] = res[r];
			memset(&res[r], 0, sizeof(res[r]));
		}
	}
out:
	for (r = 0; res != NULL && r < n; r++)
		gfsp_view_free(&res[r]);
	free(res);
	free(changed);
	return rc;
}

/*
 * Wire form of a view for the exchange, in uint64 words:
 *   disp, extent, end, nblocks, off[nblocks], len[nblocks]
 */
#define WIRE_HDR 4

/* mine in wire form into send (WIRE_HDR + 2 * nblocks words). */
static void
wire_put(uint64_t *send, const struct gfsp_view *mine)
{
	send[0] = mine->disp;
	send[1] = mine->extent;
	send[2] = mine->end;
	send[3] = mine->nblocks;
	if (mine->nblocks > 0) {
		memcpy(send + WIRE_HDR, mine->off,
		       mine->nblocks * sizeof(uint64_t));
		memcpy(send + WIRE_HDR + mine->nblocks, mine->len,
		       mine->nblocks * sizeof(uint64_t));
	}
}

/* views[i] from the counts[i] words at recv + displs[i], each checked. */
static int
wire_get(struct gfsp_view *views, int nprocs, const uint64_t *recv,
	 const int *counts, const int *displs, struct gfsp_error *err)
{
	int i, rc = 0;

	for (i = 0; i < nprocs && rc == 0; i++) {
		const uint64_t *w = recv + displs[i];
		uint64_t nb = counts[i] >= WIRE_HDR ? w[3] : 0;

		if (counts[i] < WIRE_HDR ||
		    nb != ((uint64_t)counts[i] - WIRE_HDR) / 2 ||
		    WIRE_HDR + 2 * nb != (uint64_t)counts[i]) {
			rc = gfsp_error_set(err, GFSP_ECORRUPT,
					   "view of rank %d arrived garbled (%d words)",
					   i, counts[i]);
			break;
		}
		rc = gfsp_view_init(&views[i], w[0], w[1], w[2], nb,
				   w + WIRE_HDR, w + WIRE_HDR + nb, err);
	}
	return rc;
}

int
gfsp_views_allgather(MPI_Comm comm, const struct gfsp_view *mine,
		    struct gfsp_view **all, struct gfsp_error *err)
{
	uint64_t *send = NULL, *recv = NULL, words = 0, total = 0;
	int *counts = NULL, *displs = NULL, nprocs = 0, me, i, rc = 0;
	struct gfsp_view *views = NULL;

	*all = NULL;
	rc = gfsp_mpi_check(MPI_Comm_size(comm, &nprocs),
			   "cannot exchange views", err);
	if (rc == 0)
		rc = gfsp_mpi_check(MPI_Comm_rank(comm, &me),
				   "cannot exchange views", err);
	if (rc != 0)
		return rc;	/* comm is unusable: nothing to agree with */

	if (mine->nblocks > (INT_MAX - WIRE_HDR) / 2) {
		rc = gfsp_error_set(err, GFSP_ENOTSUP,
				   "cannot exchange a view of %llu blocks",
				   (unsigned long long)mine->nblocks);
	} else {
		words = WIRE_HDR + 2 * mine->nblocks;
		send = malloc(words * sizeof(*send));
		counts = malloc((size_t)nprocs * sizeof(*counts));
		displs = malloc((size_t)nprocs * sizeof(*displs));
		views = calloc((size_t)nprocs, sizeof(*views));
		if (send == NULL || counts == NULL || displs == NULL ||
		    views == NULL) {
			rc = gfsp_error_set(err, GFSP_ENOMEM,
					   "cannot exchange views: out of memory");
		} else {
			wire_put(send, mine);
		}
	}
	if ((rc = gfsp_agree(comm, rc, err)) != 0)
		goto out;

	i = (int)words;
	rc = gfsp_mpi_check(gfsp_allgather(&i, 1, MPI_INT, counts, 1, MPI_INT,
					 comm), "cannot exchange views", err);
	if ((rc = gfsp_agree(comm, rc, err)) != 0)
		goto out;
	for (i = 0; i < nprocs; i++) {
		displs[i] = (int)total;
		total += (uint64_t)counts[i];
		if (total > INT_MAX)
			break;
	}
	/* every rank sees the same counts, so every rank decides the same */
	if (total > INT_MAX)
		rc = gfsp_error_set(err, GFSP_ENOTSUP,
				   "cannot exchange views: %d ranks' views exceed %d words",
				   nprocs, INT_MAX);
	else if ((recv = malloc(total * sizeof(*recv))) == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM,
				   "cannot exchange views: out of memory for %llu words",
				   (unsigned long long)total);
	if ((rc = gfsp_agree(comm, rc, err)) != 0)
		goto out;
	rc = gfsp_mpi_check(MPI_Allgatherv(send, (int)words, MPI_UINT64_T,
					  recv, counts, displs, MPI_UINT64_T,
					  comm), "cannot exchange views", err);
	if ((rc = gfsp_agree(comm, rc, err)) != 0)
		goto out;

	rc = wire_get(views, nprocs, recv, counts, displs, err);
	if (rc == 0)
		rc = gfsp_views_resolve(views, nprocs, err);
	/* the same data gives the same verdict; this only covers ENOMEM */
	rc = gfsp_agree(comm, rc, err);
out:
	if (rc == 0) {
		*all = views;
		views = NULL;
	}
	for (i = 0; views != NULL && i < nprocs; i++)
		gfsp_view_free(&views[i]);
	free(views);
	free(send);
	free(recv);
	free(counts);
	free(displs);
	return rc;
}
