/*
 * flatten.c - turn an MPI file view (disp, etype, filetype) into a
 * struct gfsp_view: the byte blocks of one filetype tile.
 *
 * The typemap is computed by recursion over MPI_Type_get_envelope /
 * MPI_Type_get_contents.  Each constructor flattens its child once into a
 * list of (displacement, length) pieces relative to the child's origin and
 * replicates that list at the constructor's displacements; pieces that
 * touch the previous one are merged on append, so a list grows with the
 * number of blocks of the result, not with its bytes or element count.
 * Subarray and darray are expanded from their definitions in MPI-3.1
 * sections 4.1.3 and 4.1.4 (one dimension at a time, fastest first), not
 * from MPICH internals.
 *
 * Displacements are signed while recursing (hindexed and resized allow
 * negative ones); the final typemap must be non-negative, as MPI requires
 * of filetypes.
 */
#include <stdlib.h>
#include <string.h>
#include <stddef.h>

#include "core.h"
#include "view_impl.h"

/*
 * MPI-1's combiners of the Fortran constructors with integer strides and
 * displacements were removed in MPI-3.0.  MPICH still has them; Open MPI
 * built without its MPI-1 compatibility keeps only their numbers
 * (OMPI_WAS_*, which its library may still return for such a type) and
 * turns the old names into a compile error.
 */
#if defined(OPEN_MPI) && !OMPI_ENABLE_MPI1_COMPAT
#define COMBINER_HVECTOR_INTEGER	OMPI_WAS_MPI_COMBINER_HVECTOR_INTEGER
#define COMBINER_HINDEXED_INTEGER	OMPI_WAS_MPI_COMBINER_HINDEXED_INTEGER
#define COMBINER_STRUCT_INTEGER		OMPI_WAS_MPI_COMBINER_STRUCT_INTEGER
#else
#define COMBINER_HVECTOR_INTEGER	MPI_COMBINER_HVECTOR_INTEGER
#define COMBINER_HINDEXED_INTEGER	MPI_COMBINER_HINDEXED_INTEGER
#define COMBINER_STRUCT_INTEGER		MPI_COMBINER_STRUCT_INTEGER
#endif

/* More pieces than this in one list is a pathological datatype. */
#define FLAT_MAX_PIECES	((size_t)1 << 27)

struct piece {
	int64_t off;
	uint64_t len;
};

struct plist {
	struct piece *p;
	size_t n, cap;
};

static void
plist_free(struct plist *l)
{
	free(l->p);
	memset(l, 0, sizeof(*l));
}

static int
overflow(struct gfsp_error *err)
{
	return gfsp_error_set(err, GFSP_EINVAL,
			     "cannot flatten datatype: a displacement overflows 64 bits");
}

/* Append [off, off+len), merging with the last piece when they touch. */
static int
plist_add(struct plist *l, int64_t off, uint64_t len, struct gfsp_error *err)
{
	struct piece *last;

	if (len == 0)
		return 0;
	if (len > INT64_MAX)
		return overflow(err);
	if (l->n > 0) {
		int64_t end;

		last = &l->p[l->n - 1];
		if (!__builtin_add_overflow(last->off, (int64_t)last->len,
					    &end) && end == off &&
		    last->len <= INT64_MAX - len) {
			last->len += len;
			return 0;
		}
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct piece *p;

		if (l->n >= FLAT_MAX_PIECES)
			return gfsp_error_set(err, GFSP_ENOMEM,
					     "cannot flatten datatype: more than %zu blocks",
					     FLAT_MAX_PIECES);
		p = gfsp_big_alloc(cap * sizeof(*p), 64);
		if (p == NULL)
			return gfsp_error_set(err, GFSP_ENOMEM,
					     "cannot flatten datatype: out of memory at %zu blocks",
					     l->n);
		if (l->n > 0)
			memcpy(p, l->p, l->n * sizeof(*p));
		free(l->p);
		l->p = p;
		l->cap = cap;
	}
	l->p[l->n].off = off;
	l->p[l->n].len = len;
	l->n++;
	return 0;
}

/*
 * Append `count` copies of src, copy j shifted by shift + j*stride.  A
 * single piece as long as the stride (a dense element) becomes one piece,
 * so contiguous runs of any count cost O(1).
 */
static int
replicate(struct plist *dst, const struct plist *src, int64_t count,
	  int64_t stride, int64_t shift, struct gfsp_error *err)
{
	int64_t j, base, o, total;
	size_t i;
	int rc;

	if (count <= 0 || src->n == 0)
		return 0;
	if (src->n == 1 && stride > 0 && src->p[0].len == (uint64_t)stride) {
		if (__builtin_mul_overflow(count, stride, &total) ||
		    __builtin_add_overflow(shift, src->p[0].off, &o))
			return overflow(err);
		return plist_add(dst, o, (uint64_t)total, err);
	}
	for (j = 0; j < count; j++) {
		if (__builtin_mul_overflow(j, stride, &base) ||
		    __builtin_add_overflow(base, shift, &base))
			return overflow(err);
		for (i = 0; i < src->n; i++) {
			if (__builtin_add_overflow(base, src->p[i].off, &o))
				return overflow(err);
			if ((rc = plist_add(dst, o, src->p[i].len, err)) != 0)
				return rc;
		}
	}
	return 0;
}

static int flatten(MPI_Datatype t, struct plist *out, struct gfsp_error *err);

static int
type_extent(MPI_Datatype t, int64_t *ext, struct gfsp_error *err)
{
	MPI_Aint lb, extent;
	int rc;

	rc = gfsp_mpi_check(MPI_Type_get_extent(t, &lb, &extent),
			   "cannot get datatype extent", err);
	*ext = extent;
	return rc;
}

/*
 * Named types are their bytes, except the pair types of MINLOC/MAXLOC,
 * which are C structs {value; int} and may have padding between the two
 * members (MPI_SHORT_INT does).
 */
struct pair_float_int { float a; int b; };
struct pair_double_int { double a; int b; };
struct pair_long_int { long a; int b; };
struct pair_short_int { short a; int b; };
struct pair_ldouble_int { long double a; int b; };

static int
flatten_named(MPI_Datatype t, struct plist *out, struct gfsp_error *err)
{
	static const struct {
		MPI_Datatype t, first;
		size_t boff;
	} pairs[] = {
		{ MPI_FLOAT_INT, MPI_FLOAT, offsetof(struct pair_float_int, b) },
		{ MPI_DOUBLE_INT, MPI_DOUBLE, offsetof(struct pair_double_int, b) },
		{ MPI_LONG_INT, MPI_LONG, offsetof(struct pair_long_int, b) },
		{ MPI_SHORT_INT, MPI_SHORT, offsetof(struct pair_short_int, b) },
		{ MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE,
		  offsetof(struct pair_ldouble_int, b) },
	};
	MPI_Aint tlb, text;
	int size, rc;
	size_t i;

	for (i = 0; i < GFSP_ARRAY_SIZE(pairs); i++) {
		if (t != pairs[i].t)
			continue;
		if ((rc = gfsp_mpi_check(MPI_Type_size(pairs[i].first, &size),
					"cannot get datatype size", err)) != 0 ||
		    (rc = plist_add(out, 0, (uint64_t)size, err)) != 0)
			return rc;
		return plist_add(out, (int64_t)pairs[i].boff, sizeof(int), err);
	}
	if ((rc = gfsp_mpi_check(MPI_Type_size(t, &size),
				"cannot get datatype size", err)) != 0 ||
	    (rc = gfsp_mpi_check(MPI_Type_get_true_extent(t, &tlb, &text),
				"cannot get datatype true extent", err)) != 0)
		return rc;
	if (size == 0)
		return 0;	/* MPI_LB, MPI_UB: markers, no data */
	if ((MPI_Aint)size != text)
		return gfsp_error_set(err, GFSP_ENOTSUP,
				     "cannot flatten a predefined datatype of %d bytes with holes (true extent %ld)",
				     size, (long)text);
	return plist_add(out, tlb, (uint64_t)size, err);
}

/* The global indices one process owns in one darray dimension, as runs. */
struct run {
	int64_t start, count;
};

static int
darray_runs(int distrib, int darg, int gsize, int psize, int coord,
	    struct run **runs, size_t *nruns, struct gfsp_error *err)
{
	int64_t b, s, n = 0;

	*runs = NULL;
	*nruns = 0;
	if (gsize < 0 || psize <= 0 || coord < 0 || coord >= psize)
		return gfsp_error_set(err, GFSP_EINVAL,
				     "cannot flatten darray: bad dimension (gsize %d, psize %d, coordinate %d)",
				     gsize, psize, coord);
	switch (distrib) {
	case MPI_DISTRIBUTE_NONE:
		b = gsize;
		n = gsize > 0;
		break;
	case MPI_DISTRIBUTE_BLOCK:
		b = darg == MPI_DISTRIBUTE_DFLT_DARG ?
		    ((int64_t)gsize + psize - 1) / psize : darg;
		if (b <= 0)
			goto bad_darg;
		n = (int64_t)coord * b < gsize;
		break;
	case MPI_DISTRIBUTE_CYCLIC:
		b = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
		if (b <= 0)
			goto bad_darg;
		for (s = (int64_t)coord * b; s < gsize; s += (int64_t)psize * b)
			n++;
		break;
	default:
		return gfsp_error_set(err, GFSP_EINVAL,
				     "cannot flatten darray: unknown distribution %d",
				     distrib);
	}
	if (n == 0)
		return 0;
	if ((*runs = calloc((size_t)n, sizeof(**runs))) == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM,
				     "cannot flatten darray: out of memory");
	switch (distrib) {
	case MPI_DISTRIBUTE_NONE:
		(*runs)[0] = (struct run){ 0, gsize };
		break;
	case MPI_DISTRIBUTE_BLOCK:
		s = (int64_t)coord * b;
		(*runs)[0] = (struct run){ s, GFSP_MIN(b, gsize - s) };
		break;
	default:
		n = 0;
		for (s = (int64_t)coord * b; s < gsize; s += (int64_t)psize * b)
			(*runs)[n++] = (struct run){ s, GFSP_MIN(b, gsize - s) };
	}
	*nruns = (size_t)n;
	return 0;
bad_darg:
	return gfsp_error_set(err, GFSP_EINVAL,
			     "cannot flatten darray: bad distribution argument %d",
			     darg);
}

/*
 * One dimension of a subarray or darray: the element list `cur` (extent
 * *ext) becomes the list of a row of `gsize` elements of which the given
 * runs are present; the row's extent is gsize * *ext.
 */
static int
grow_dim(struct plist *cur, int64_t *ext, int gsize, const struct run *runs,
	 size_t nruns, struct gfsp_error *err)
{
	struct plist next = { 0 };
	int64_t shift;
	size_t i;
	int rc = 0;

	for (i = 0; i < nruns && rc == 0; i++) {
		if (__builtin_mul_overflow(runs[i].start, *ext, &shift))
			rc = overflow(err);
		else
			rc = replicate(&next, cur, runs[i].count, *ext, shift,
				       err);
	}
	if (rc == 0 && __builtin_mul_overflow((int64_t)gsize, *ext, ext))
		rc = overflow(err);
	plist_free(cur);
	*cur = next;
	if (rc != 0)
		plist_free(cur);
	return rc;
}

/*
 * MPI-3.1 4.1.3/4.1.4: the array is laid out with dimension ndims-1
 * fastest (C order) or dimension 0 fastest (Fortran order); element
 * (i_0, ..., i_{n-1}) of the old type sits at its linear index times the
 * old extent, the old type's own displacements included.  The result has
 * lb 0 and extent prod(gsizes) * old extent, which MPI reports itself.
 */
static int
flatten_array(int ndims, const int *gsizes, int order, struct run **runs,
	      const size_t *nruns, MPI_Datatype old, struct plist *out,
	      struct gfsp_error *err)
{
	struct plist cur = { 0 };
	int64_t ext;
	int k, d, rc;

	if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
		return gfsp_error_set(err, GFSP_EINVAL,
				     "cannot flatten array datatype: unknown order %d",
				     order);
	if ((rc = type_extent(old, &ext, err)) != 0 ||
	    (rc = flatten(old, &cur, err)) != 0)
		goto out;
	for (k = 0; k < ndims && rc == 0; k++) {
		d = order == MPI_ORDER_C ? ndims - 1 - k : k;
		rc = grow_dim(&cur, &ext, gsizes[d], runs[d], nruns[d], err);
	}
	if (rc == 0)
		rc = replicate(out, &cur, 1, 0, 0, err);
out:
	plist_free(&cur);
	return rc;
}

static int
flatten_subarray(const int *ints, MPI_Datatype old, struct plist *out,
		 struct gfsp_error *err)
{
	int nd = ints[0], d, rc = 0;
	const int *sizes = ints + 1, *subsizes = ints + 1 + nd;
	const int *starts = ints + 1 + 2 * nd;
	struct run *runs = calloc((size_t)nd + 1, sizeof(*runs));
	struct run **rp = calloc((size_t)nd + 1, sizeof(*rp));
	size_t *nruns = calloc((size_t)nd + 1, sizeof(*nruns));

	if (runs == NULL || rp == NULL || nruns == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM,
				   "cannot flatten subarray: out of memory");
		goto out;
	}
	for (d = 0; d < nd; d++) {
		if (starts[d] < 0 || subsizes[d] < 0 ||
		    (int64_t)starts[d] + subsizes[d] > sizes[d]) {
			rc = gfsp_error_set(err, GFSP_EINVAL,
					   "cannot flatten subarray: dimension %d start %d size %d outside %d",
					   d, starts[d], subsizes[d], sizes[d]);
			goto out;
		}
		runs[d] = (struct run){ starts[d], subsizes[d] };
		rp[d] = &runs[d];
		nruns[d] = 1;
	}
	rc = flatten_array(nd, sizes, ints[1 + 3 * nd], rp, nruns, old, out,
			   err);
out:
	free(runs);
	free(rp);
	free(nruns);
	return rc;
}

static int
flatten_darray(const int *ints, MPI_Datatype old, struct plist *out,
	       struct gfsp_error *err)
{
	int size = ints[0], rank = ints[1], nd = ints[2], d, r, rc = 0;
	const int *gsizes = ints + 3, *distribs = ints + 3 + nd;
	const int *dargs = ints + 3 + 2 * nd, *psizes = ints + 3 + 3 * nd;
	int order = ints[3 + 4 * nd];
	struct run **runs = calloc((size_t)nd + 1, sizeof(*runs));
	size_t *nruns = calloc((size_t)nd + 1, sizeof(*nruns));
	int *coord = calloc((size_t)nd + 1, sizeof(*coord));

	if (runs == NULL || nruns == NULL || coord == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM,
				   "cannot flatten darray: out of memory");
		goto out;
	}
	if (rank < 0 || rank >= size) {
		rc = gfsp_error_set(err, GFSP_EINVAL,
				   "cannot flatten darray: rank %d of %d", rank,
				   size);
		goto out;
	}
	/* the process grid is row-major whatever the array order */
	for (d = nd - 1, r = rank; d >= 0; d--) {
		if (psizes[d] <= 0) {
			rc = gfsp_error_set(err, GFSP_EINVAL,
					   "cannot flatten darray: process grid dimension %d is %d",
					   d, psizes[d]);
			goto out;
		}
		coord[d] = r % psizes[d];
		r /= psizes[d];
	}
	for (d = 0; d < nd && rc == 0; d++)
		rc = darray_runs(distribs[d], dargs[d], gsizes[d], psizes[d],
				 coord[d], &runs[d], &nruns[d], err);
	if (rc == 0)
		rc = flatten_array(nd, gsizes, order, runs, nruns, old, out,
				   err);
out:
	for (d = 0; runs != NULL && d < nd; d++)
		free(runs[d]);
	free(runs);
	free(nruns);
	free(coord);
	return rc;
}

/*
 * The general block constructor: block i holds bl[i] elements of type
 * types[i] (or types[0] when one type serves all) starting at byte
 * displacement disp[i].
 */
static int
flatten_blocks(int count, const int64_t *bl, const int64_t *disp,
	       const MPI_Datatype *types, int ntypes, struct plist *out,
	       struct gfsp_error *err)
{
	struct plist elem = { 0 };
	int64_t ext = 0;
	int i, rc = 0;

	for (i = 0; i < count && rc == 0; i++) {
		if (i == 0 || ntypes > 1) {
			plist_free(&elem);
			if ((rc = type_extent(types[ntypes > 1 ? i : 0], &ext,
					      err)) != 0 ||
			    (rc = flatten(types[ntypes > 1 ? i : 0], &elem,
					  err)) != 0)
				break;
		}
		if (bl[i] < 0)
			rc = gfsp_error_set(err, GFSP_EINVAL,
					   "cannot flatten datatype: negative block length %lld",
					   (long long)bl[i]);
		else
			rc = replicate(out, &elem, bl[i], ext, disp[i], err);
	}
	plist_free(&elem);
	return rc;
}

/* Release the datatypes get_contents handed out (named ones are not ours). */
static void
free_contents(MPI_Datatype *types, int n)
{
	int i, ni, na, nd, comb;

	for (i = 0; i < n; i++) {
		if (MPI_Type_get_envelope(types[i], &ni, &na, &nd, &comb) ==
		    MPI_SUCCESS && comb != MPI_COMBINER_NAMED)
			MPI_Type_free(&types[i]);
	}
}

/* (bl[i], disp[i] in bytes) of each of the count blocks of a block
 * constructor, from what MPI_Type_get_contents gave; ext is the extent
 * of types[0], the unit of displacements given in elements. */
static int
block_layout(int comb, int count, const int *ints, const MPI_Aint *aints,
	     int64_t ext, int64_t *bl, int64_t *disp, struct gfsp_error *err)
{
	int i;

	/*
	 * get_contents layouts (MPI-3.1 table 4.1):
	 *   contiguous         ints {count}
	 *   vector             ints {count, bl, stride (elements)}
	 *   hvector            ints {count, bl}, aints {stride}
	 *   hvector_integer    ints {count, bl, stride (bytes)}
	 *   indexed            ints {count, bl[count], displ[count] (elements)}
	 *   hindexed           ints {count, bl[count]}, aints {displ[count]}
	 *   hindexed_integer   ints {count, bl[count], displ[count] (bytes)}
	 *   indexed_block      ints {count, bl, displ[count] (elements)}
	 *   hindexed_block     ints {count, bl}, aints {displ[count]}
	 *   struct             ints {count, bl[count]}, aints {displ[count]},
	 *                      types[count]
	 *   struct_integer     ints {count, bl[count], displ[count]}, types
	 */
	for (i = 0; i < count; i++) {
		int64_t d = 0, stride;

		switch (comb) {
		case MPI_COMBINER_VECTOR:
			bl[i] = ints[1];
			d = (int64_t)i * ints[2];
			stride = ext;
			break;
		case MPI_COMBINER_HVECTOR:
			bl[i] = ints[1];
			d = (int64_t)i * aints[0];
			stride = 1;
			break;
		case COMBINER_HVECTOR_INTEGER:
			bl[i] = ints[1];
			d = (int64_t)i * ints[2];
			stride = 1;
			break;
		case MPI_COMBINER_INDEXED:
			bl[i] = ints[1 + i];
			d = ints[1 + count + i];
			stride = ext;
			break;
		case MPI_COMBINER_HINDEXED:
		case MPI_COMBINER_STRUCT:
			bl[i] = ints[1 + i];
			d = aints[i];
			stride = 1;
			break;
		case COMBINER_HINDEXED_INTEGER:
		case COMBINER_STRUCT_INTEGER:
			bl[i] = ints[1 + i];
			d = ints[1 + count + i];
			stride = 1;
			break;
		case MPI_COMBINER_INDEXED_BLOCK:
			bl[i] = ints[1];
			d = ints[2 + i];
			stride = ext;
			break;
		default:	/* MPI_COMBINER_HINDEXED_BLOCK */
			bl[i] = ints[1];
			d = aints[i];
			stride = 1;
			break;
		}
		if (__builtin_mul_overflow(d, stride, &disp[i])) {
			return overflow(err);
		}
	}
	return 0;
}

/* Append the typemap of a block constructor (every combiner that
 * reduces to count blocks of (bl[i], disp[i])) to out. */
static int
flatten_blocked(int comb, int count, const int *ints, const MPI_Aint *aints,
		const MPI_Datatype *types, struct plist *out,
		struct gfsp_error *err)
{
	int64_t *bl = NULL, *disp = NULL, ext;
	int rc;

	if (count < 0) {
		rc = gfsp_error_set(err, GFSP_EINVAL,
				   "cannot flatten datatype: negative count %d",
				   count);
		goto out;
	}
	bl = malloc(((size_t)count + 1) * sizeof(*bl));
	disp = malloc(((size_t)count + 1) * sizeof(*disp));
	if (bl == NULL || disp == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM,
				   "cannot decode datatype: out of memory");
		goto out;
	}
	ext = 0;
	if (count > 0 && (rc = type_extent(types[0], &ext, err)) != 0)
		goto out;
	if (comb == MPI_COMBINER_CONTIGUOUS) {
		/* one block of count elements: replicate merges dense ones */
		bl[0] = count;
		disp[0] = 0;
		rc = flatten_blocks(count > 0, bl, disp, types, 1, out, err);
		goto out;
	}
	rc = block_layout(comb, count, ints, aints, ext, bl, disp, err);
	if (rc != 0)
		goto out;
	rc = flatten_blocks(count, bl, disp, types,
			    comb == MPI_COMBINER_STRUCT ||
			    comb == COMBINER_STRUCT_INTEGER ? count : 1,
			    out, err);
out:
	free(bl);
	free(disp);
	return rc;
}

/* Append the typemap of t (displacements from t's origin) to out. */
static int
flatten(MPI_Datatype t, struct plist *out, struct gfsp_error *err)
{
	int ni, na, nd, comb, count, rc;
	int *ints = NULL;
	MPI_Aint *aints = NULL;
	MPI_Datatype *types = NULL;
	int got = 0;

	rc = gfsp_mpi_check(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb),
			   "cannot decode datatype", err);
	if (rc != 0)
		return rc;
	switch (comb) {
	case MPI_COMBINER_NAMED:
	case MPI_COMBINER_F90_REAL:	/* predefined in all but name */
	case MPI_COMBINER_F90_COMPLEX:
	case MPI_COMBINER_F90_INTEGER:
		return flatten_named(t, out, err);
	}

	ints = malloc(((size_t)ni + 1) * sizeof(*ints));
	aints = malloc(((size_t)na + 1) * sizeof(*aints));
	types = malloc(((size_t)nd + 1) * sizeof(*types));
	if (ints == NULL || aints == NULL || types == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM,
				   "cannot decode datatype: out of memory");
		goto out;
	}
	rc = gfsp_mpi_check(MPI_Type_get_contents(t, ni, na, nd, ints, aints,
						 types),
			   "cannot decode datatype", err);
	if (rc != 0)
		goto out;
	got = 1;

	/* every block constructor is reduced to (count, bl[], disp[]) */
	count = ni > 0 ? ints[0] : 0;
	switch (comb) {
	case MPI_COMBINER_DUP:
	case MPI_COMBINER_RESIZED:	/* only the bounds change */
		rc = flatten(types[0], out, err);
		goto out;
	case MPI_COMBINER_SUBARRAY:
		rc = flatten_subarray(ints, types[0], out, err);
		goto out;
	case MPI_COMBINER_DARRAY:
		rc = flatten_darray(ints, types[0], out, err);
		goto out;
	case MPI_COMBINER_CONTIGUOUS:
	case MPI_COMBINER_VECTOR:
	case MPI_COMBINER_HVECTOR:
	case COMBINER_HVECTOR_INTEGER:
	case MPI_COMBINER_INDEXED:
	case MPI_COMBINER_HINDEXED:
	case COMBINER_HINDEXED_INTEGER:
	case MPI_COMBINER_INDEXED_BLOCK:
	case MPI_COMBINER_HINDEXED_BLOCK:
	case MPI_COMBINER_STRUCT:
	case COMBINER_STRUCT_INTEGER:
		break;
	default:
		rc = gfsp_error_set(err, GFSP_ENOTSUP,
				   "cannot flatten datatype: unknown combiner %d",
				   comb);
		goto out;
	}
	rc = flatten_blocked(comb, count, ints, aints, types, out, err);
out:
	if (got)
		free_contents(types, nd);
	free(ints);
	free(aints);
	free(types);
	return rc;
}

static int
piece_cmp(const void *pa, const void *pb)
{
	const struct piece *a = pa, *b = pb;

	return a->off < b->off ? -1 : a->off > b->off;
}

/* Sort and merge overlapping or touching pieces (a typemap may repeat
 * bytes; the view is a set). */
static void
normalize(struct plist *l)
{
	size_t i, m;

	if (l->n == 0)
		return;
	for (i = 1; i < l->n && l->p[i - 1].off <= l->p[i].off; i++)
		;
	if (i < l->n)	/* most typemaps come in order */
		qsort(l->p, l->n, sizeof(*l->p), piece_cmp);
	for (i = 1, m = 0; i < l->n; i++) {
		int64_t end = l->p[m].off + (int64_t)l->p[m].len;
		int64_t e2 = l->p[i].off + (int64_t)l->p[i].len;

		if (l->p[i].off <= end) {
			if (e2 > end)
				l->p[m].len = (uint64_t)(e2 - l->p[m].off);
		} else {
			l->p[++m] = l->p[i];
		}
	}
	l->n = m + 1;
}

int
gfsp_type_dense(MPI_Datatype t, MPI_Count count, MPI_Count *first)
{
	struct plist l = { 0 };
	struct gfsp_error err;
	MPI_Count lb, extent, tlb, text, size;
	int dense;

	*first = 0;
	if (MPI_Type_get_extent_x(t, &lb, &extent) != MPI_SUCCESS ||
	    MPI_Type_get_true_extent_x(t, &tlb, &text) != MPI_SUCCESS ||
	    MPI_Type_size_x(t, &size) != MPI_SUCCESS)
		return 0;
	*first = tlb;
	if (size == 0)
		return 1;
	/* elements back to back, each one block of its bytes ... */
	if (text != size || (count > 1 && extent != size))
		return 0;
	/* ... in typemap order: a struct of {int at 4, int at 0} is not */
	gfsp_error_clear(&err);
	dense = flatten(t, &l, &err) == 0 && l.n == 1 && l.p[0].off == tlb;
	plist_free(&l);
	return dense;
}

int
gfsp_type_copy(MPI_Datatype t, MPI_Count count, void *buf, void *dense,
	       uint64_t n, int pack, struct gfsp_error *err)
{
	struct plist l = { 0 };
	MPI_Count lb, extent;
	uint64_t done = 0, len;
	unsigned char *d = dense;
	uintptr_t base;
	MPI_Count k;
	size_t i;
	int rc;

	rc = gfsp_mpi_check(MPI_Type_get_extent_x(t, &lb, &extent),
	    "cannot get datatype extent", err);
	if (rc == 0)
		rc = flatten(t, &l, err);	/* in typemap order */
	for (k = 0; rc == 0 && k < count && done < n; k++) {
		/* integers, not pointers: buf may be MPI_BOTTOM */
		base = (uintptr_t)buf + (uintptr_t)(k * extent);
		for (i = 0; i < l.n && done < n; i++) {
			len = GFSP_MIN(l.p[i].len, n - done);
			if (pack)
				memcpy(d + done, (void *)(base +
				    (uintptr_t)l.p[i].off), len);
			else
				memcpy((void *)(base + (uintptr_t)l.p[i].off),
				    d + done, len);
			done += len;
		}
	}
	plist_free(&l);
	return rc;
}

/* The GFSP_TYPEMAP_* bits of l, in typemap order (before normalize). */
static unsigned
typemap_shape(const struct plist *l)
{
	unsigned shape = 0;
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (l->p[i].off < 0)
			shape |= GFSP_TYPEMAP_NEGATIVE;
		if (i == 0)
			continue;
		if (l->p[i].off < l->p[i - 1].off)
			shape |= GFSP_TYPEMAP_DECREASING;
		else if (l->p[i].off < l->p[i - 1].off +
		    (int64_t)l->p[i - 1].len)
			shape |= GFSP_TYPEMAP_OVERLAP;
	}
	return shape;
}

int
gfsp_view_from_mpi(MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
		  struct gfsp_view *v, struct gfsp_error *err)
{
	unsigned shape;

	return gfsp_view_from_mpi_shape(disp, etype, filetype, v, &shape, err);
}

int
gfsp_view_from_mpi_shape(MPI_Offset disp, MPI_Datatype etype,
			MPI_Datatype filetype, struct gfsp_view *v,
			unsigned *shape, struct gfsp_error *err)
{
	struct plist l = { 0 };
	uint64_t *off = NULL, *len = NULL, E, s, m, M, base, end, n = 0;
	MPI_Aint lb, extent;
	int esize, rc;
	size_t i;

	memset(v, 0, sizeof(*v));
	*shape = 0;
	if (disp < 0) {
		rc = gfsp_error_set(err, GFSP_EINVAL,
				   "invalid file view: displacement %lld is negative",
				   (long long)disp);
		goto out;
	}
	if ((rc = gfsp_mpi_check(MPI_Type_size(etype, &esize),
				"cannot get etype size", err)) != 0 ||
	    (rc = gfsp_mpi_check(MPI_Type_get_extent(filetype, &lb, &extent),
				"cannot get filetype extent", err)) != 0)
		goto out;
	if (esize <= 0) {
		rc = gfsp_error_set(err, GFSP_EINVAL,
				   "invalid file view: etype has size %d", esize);
		goto out;
	}
	*shape = 0;
	if ((rc = flatten(filetype, &l, err)) != 0)
		goto out;
	*shape = typemap_shape(&l);
	normalize(&l);
	if (l.n == 0) {
		gfsp_view_empty(v, (uint64_t)disp, extent > 0 ? extent : 0);
		goto out;
	}
	if (extent <= 0) {
		rc = gfsp_error_set(err, GFSP_EINVAL,
				   "invalid file view: filetype extent %ld is not positive",
				   (long)extent);
		goto out;
	}
	if (l.p[0].off < 0) {
		rc = gfsp_error_set(err, GFSP_EINVAL,
				   "invalid file view: filetype has a negative displacement (%lld)",
				   (long long)l.p[0].off);
		goto out;
	}

	/*
	 * Tile k holds the typemap shifted by disp + k*extent.  The view
	 * wants blocks inside one tile [0, E), so the typemap [m, M) is moved
	 * by s, a multiple of E where that is enough, else by m itself
	 * (disp grows by s: the same bytes).  A typemap still wider than E
	 * makes tiles interleave in the file (a header and a subarray whose
	 * bounds Open MPI keeps, as it must, for the struct of both; a
	 * vector resized to one element): tile 1 starts before tile 0 ends,
	 * so MPI's stream, tile after tile, is not in file order, and no
	 * periodic view holds it.  The view is then tile 0 alone, exact:
	 * extent M - s, bounded at its end (GFSP_TYPEMAP_ONE_TILE), and an
	 * access past it is refused (the MPI-IO library says so).
	 */
	E = (uint64_t)extent;
	m = (uint64_t)l.p[0].off;
	M = (uint64_t)l.p[l.n - 1].off + l.p[l.n - 1].len;	/* sorted, merged */
	s = m / E * E;
	if (M - s > E)
		s = m;
	end = GFSP_VIEW_UNBOUNDED;
	if (__builtin_add_overflow((uint64_t)disp, s, &base) ||
	    (M - s > E && __builtin_add_overflow(base, M - s, &end))) {
		rc = overflow(err);
		goto out;
	}
	if (M - s > E) {
		*shape |= GFSP_TYPEMAP_ONE_TILE;
		E = M - s;
	}
	off = gfsp_big_alloc(l.n * sizeof(*off), 64);
	len = gfsp_big_alloc(l.n * sizeof(*len), 64);
	if (off == NULL || len == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM,
				   "cannot flatten datatype: out of memory at %zu blocks",
				   l.n);
		goto out;
	}
	for (i = 0; i < l.n; i++) {
		off[i] = (uint64_t)l.p[i].off - s;
		len[i] = l.p[i].len;
	}
	n = l.n;
	rc = gfsp_view_init(v, base, E, end, n, off, len, err);
out:
	plist_free(&l);
	free(off);
	free(len);
	return rc;
}
