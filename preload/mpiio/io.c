/*
 * io.c - the data path of the MPI-IO layer (mpiio.h).
 *
 * A write becomes one append to this rank's part, whatever the view and
 * the memory datatype (as in Kimura and Tatebe's MPI-IO/Gfarm, its
 * section 7.3.4): noncontiguous memory is packed
 * first, and the writer records which global bytes the appended stretch
 * holds (runs, runlog.h).  With the default or any contiguous view that is
 * a dense range from the view's first byte on; with any other view it is the view's
 * bytes between the global offsets of the first and the last byte.
 *
 * A read maps the same global bytes through the split file's layout;
 * bytes no rank wrote read as zeros, and a read past the end of the file
 * is short, as in MPICH.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core.h"
#include "mpiio.h"
#include "splitfile.h"
#include "view_impl.h"

/* Collective calls: every rank learns whether any failed.  A rank that
 * did not fail returns MPI_ERR_IO naming the rank that did. */
static int
agree(struct sfile *f, int rc, struct gfsp_error *err)
{
	return gfsp_agree(f->comm, rc, err);
}

/* ------------------------------------------------------------ views */

static int
dense_view(const struct gfsp_view *v)
{
	return v->nblocks == 1 && v->off[0] == 0 && v->len[0] == v->extent &&
	    v->end == GFSP_VIEW_UNBOUNDED;
}

/* A named type as it is, any other duplicated (MPI_File_get_view's rule). */
static int
type_copy(MPI_Datatype t, MPI_Datatype *out)
{
	int ni, na, nd, comb;

	if (MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS)
		return MPI_ERR_TYPE;
	if (comb == MPI_COMBINER_NAMED) {
		*out = t;
		return MPI_SUCCESS;
	}
	return MPI_Type_dup(t, out);
}

static void
type_drop(MPI_Datatype *t)
{
	int ni, na, nd, comb;

	if (*t != MPI_DATATYPE_NULL && MPI_Type_get_envelope(*t, &ni, &na,
	    &nd, &comb) == MPI_SUCCESS && comb != MPI_COMBINER_NAMED)
		MPI_Type_free(t);
	*t = MPI_DATATYPE_NULL;
}

/* f's copies of the view's types (MPI_DATATYPE_NULL: the default view). */
static int
keep_types(struct sfile *f, MPI_Datatype etype, MPI_Datatype filetype)
{
	MPI_Datatype e = MPI_DATATYPE_NULL, t = MPI_DATATYPE_NULL;
	int rc;

	rc = type_copy(etype, &e);
	if (rc == MPI_SUCCESS && (rc = type_copy(filetype, &t)) != MPI_SUCCESS)
		type_drop(&e);
	if (rc != MPI_SUCCESS)
		return rc;
	sf_view_types_free(f);
	f->etype = e;
	f->filetype = t;
	return MPI_SUCCESS;
}

void
sf_view_types_free(struct sfile *f)
{
	type_drop(&f->etype);
	type_drop(&f->filetype);
}

int
sf_get_view(struct sfile *f, MPI_Offset *disp, MPI_Datatype *etype,
	    MPI_Datatype *filetype, char *datarep)
{
	int rc;

	*disp = (MPI_Offset)f->user_disp;
	/* ROMIO's names: "internal" is "native" there */
	strcpy(datarep, f->ext32 ? "external32" : "native");
	if (f->etype == MPI_DATATYPE_NULL) {	/* never set */
		*etype = *filetype = MPI_BYTE;
		return MPI_SUCCESS;
	}
	rc = type_copy(f->etype, etype);
	if (rc == MPI_SUCCESS && (rc = type_copy(f->filetype, filetype)) !=
	    MPI_SUCCESS)
		type_drop(etype);
	return rc == MPI_SUCCESS ? rc : sf_fail_code(f, rc, "'%s': "
	    "get_view: cannot copy the view's datatypes", f->path);
}

int
sf_type_class(struct sfile *f, MPI_Datatype t)
{
	char one[1] = { 0 };
	int pos = 0;

	if (t == MPI_DATATYPE_NULL)
		return MPI_ERR_TYPE;
	/* MPI has no call that tells; MPI_Pack of nothing refuses a type
	 * not committed (f->comm returns errors).  Its buffers are real:
	 * Open MPI refuses NULL ones whatever the count. */
	return PMPI_Pack(one, 0, t, one, (int)sizeof(one), &pos, f->comm) ==
	    MPI_SUCCESS ? 0 : MPI_ERR_TYPE;
}

/* ROMIO's names (set_view.c); anything else, even "Native", it refuses. */
static int
datarep_of(const char *datarep, int *ext32)
{
	static const char *const native[] = { "native", "NATIVE", "internal",
	    "INTERNAL" };
	size_t i;

	*ext32 = 0;
	if (datarep == NULL)
		return -1;
	for (i = 0; i < sizeof(native) / sizeof(native[0]); i++)
		if (strcmp(datarep, native[i]) == 0)
			return 0;
	if (strcmp(datarep, "external32") == 0 ||
	    strcmp(datarep, "EXTERNAL32") == 0) {
		*ext32 = 1;
		return 0;
	}
	return -1;
}

/*
 * set_view's arguments, checked as MPICH checks them and in its order
 * (ROMIO's mpi-io/set_view.c), so that a view with several faults fails
 * with MPICH's class.  Returns 0 or the class; the reason in err.
 */
static int
view_args(struct sfile *f, MPI_Offset disp, MPI_Datatype etype,
	  MPI_Datatype filetype, const char *datarep, int *ext32,
	  MPI_Count *esz, struct gfsp_error *err)
{
	int seq = (f->amode & MPI_MODE_SEQUENTIAL) != 0, cls;
	MPI_Count fsz = 0;

	if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT) {
		gfsp_error_set(err, GFSP_EINVAL, "'%s': set_view: negative "
		    "displacement %lld", f->path, (long long)disp);
		return MPI_ERR_ARG;
	}
	if (etype == MPI_DATATYPE_NULL || filetype == MPI_DATATYPE_NULL) {
		gfsp_error_set(err, GFSP_EINVAL, "'%s': set_view: %s is "
		    "MPI_DATATYPE_NULL", f->path, etype == MPI_DATATYPE_NULL ?
		    "the etype" : "the filetype");
		/* ROMIO checks the etype's commit before the filetype */
		return etype != MPI_DATATYPE_NULL && sf_type_class(f, etype) ?
		    MPI_ERR_TYPE : MPI_ERR_ARG;
	}
	if ((cls = sf_type_class(f, etype)) != 0 ||
	    (cls = sf_type_class(f, filetype)) != 0) {
		gfsp_error_set(err, GFSP_EINVAL, "'%s': set_view: a datatype "
		    "is not committed", f->path);
		return cls;
	}
	if (seq != (disp == MPI_DISPLACEMENT_CURRENT)) {
		gfsp_error_set(err, GFSP_EINVAL, "'%s': set_view: the "
		    "displacement must be MPI_DISPLACEMENT_CURRENT %s "
		    "MPI_MODE_SEQUENTIAL", f->path, seq ? "with" :
		    "only with");
		return MPI_ERR_ARG;
	}
	MPI_Type_size_x(etype, esz);
	MPI_Type_size_x(filetype, &fsz);
	if (*esz != 0 && fsz % *esz != 0) {
		gfsp_error_set(err, GFSP_EINVAL, "'%s': set_view: the "
		    "filetype (%lld bytes) is not made of etypes (%lld bytes)",
		    f->path, (long long)fsz, (long long)*esz);
		return MPI_ERR_ARG;
	}
	if (datarep_of(datarep, ext32) != 0) {
		gfsp_error_set(err, GFSP_ENOTSUP, "'%s': data representation "
		    "'%s' is not supported (MPICH's: native, internal, "
		    "external32)", f->path, datarep ? datarep : "");
		return MPI_ERR_UNSUPPORTED_DATAREP;
	}
	if (*esz <= 0) {
		gfsp_error_set(err, GFSP_EINVAL, "'%s': etype of size %lld",
		    f->path, (long long)*esz);
		return MPI_ERR_ARG;
	}
	return 0;
}

int
sf_set_view(struct sfile *f, MPI_Offset disp, MPI_Datatype etype,
	    MPI_Datatype filetype, const char *datarep, MPI_Info info)
{
	struct gfsp_error err;
	struct gfsp_view v;
	MPI_Offset ptr = 0;
	MPI_Count esz = 0;
	unsigned shape = 0;
	uint32_t id = 0;
	int rc = 0, mrc, have = 0, cls, ext32 = 0;

	gfsp_error_clear(&err);
	memset(&v, 0, sizeof(v));
	cls = view_args(f, disp, etype, filetype, datarep, &ext32, &esz, &err);
	rc = agree(f, cls ? err.code : 0, &err);
	if (cls)
		return sf_fail_code(f, cls, "%s", err.msg);
	if (rc)
		return sf_fail(f, &err);
	/* MPI_MODE_SEQUENTIAL: the view starts where the shared pointer is,
	 * in bytes of the view before (MPI 4.1 section 14.3) */
	if (disp == MPI_DISPLACEMENT_CURRENT) {
		rc = sf_shared_position(f, &ptr, &err);
		if (rc)
			return sf_fail(f, &err);
		sf_get_byte_offset(f, ptr, &disp);
	}
	rc = gfsp_view_from_mpi_shape(disp, etype, filetype, &v, &shape, &err);
	have = rc == 0;
	/* what ROMIO's flattening refuses, as it does: MPI_ERR_IO */
	cls = 0;
	if (shape & (GFSP_TYPEMAP_DECREASING | GFSP_TYPEMAP_NEGATIVE) ||
	    ((shape & GFSP_TYPEMAP_OVERLAP) &&
	    (f->amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR)))) {
		cls = MPI_ERR_IO;
		rc = gfsp_error_set(&err, GFSP_EIO, "'%s': set_view: the "
		    "filetype's displacements %s", f->path, shape &
		    GFSP_TYPEMAP_NEGATIVE ? "are negative" : shape &
		    GFSP_TYPEMAP_DECREASING ? "decrease" : "overlap, and the "
		    "file is open for writing");
	}
	if (rc == 0 && f->mode == SF_WRITE && !dense_view(&v)) {
		rc = gfsp_split_add_view(SF_DATA(f)->w, &v, &id, &err);
		have = rc != 0;		/* else the writer's now */
	}
	rc = agree(f, rc, &err);
	if (rc) {
		if (have)
			gfsp_view_free(&v);
		return cls ? sf_fail_code(f, cls, "%s", err.msg) :
		    sf_fail(f, &err);
	}
	/*
	 * get_view answers from copies of the types (MPICH's own set_view on
	 * the shadow would flatten the filetype again: a tenth of a second
	 * for a million blocks); the hints go to the shadow.
	 */
	mrc = keep_types(f, etype, filetype);
	if (mrc == MPI_SUCCESS && info != MPI_INFO_NULL)
		mrc = PMPI_File_set_info(f->fh, info);
	if (mrc != MPI_SUCCESS) {
		if (id == 0)
			gfsp_view_free(&v);
		return mrc;
	}
	sf_view_release(f);
	f->view = v;
	f->view_lent = id != 0;
	f->dense = dense_view(&v);
	f->user_disp = (uint64_t)disp;
	f->etype_size = (uint64_t)esz;
	f->view_id = id;
	f->one_tile = (shape & GFSP_TYPEMAP_ONE_TILE) != 0;
	f->ext32 = ext32;
	f->pos = 0;
	return MPI_SUCCESS;
}

void
sf_view_release(struct sfile *f)
{
	if (!f->view_lent)
		gfsp_view_free(&f->view);
	memset(&f->view, 0, sizeof(f->view));
	f->view_lent = 0;
}

/*
 * View stream offset s -> global offset.  A dense view starts at its
 * first byte, f->view.disp: MPI's disp plus the filetype's first byte
 * (an hindexed type whose blocks are contiguous but start at 136 is
 * dense from disp + 136), never the disp argument alone.
 */
static uint64_t
global_of(const struct sfile *f, uint64_t s)
{
	return f->dense ? f->view.disp + s : gfsp_view_global(&f->view, s);
}

/*
 * A negative offset: MPICH (ROMIO's get_bytoff.c) passes MPI_ERR_ARG to
 * the file's error handler, then returns MPI_SUCCESS with *disp as it
 * was; so does this, so that a program that goes on gets what it gets
 * under MPICH.
 */
int
sf_get_byte_offset(struct sfile *f, MPI_Offset offset, MPI_Offset *disp)
{
	if (offset < 0) {
		sf_fail_code(f, MPI_ERR_ARG, "'%s': get_byte_offset: negative "
		    "offset %lld", f->path, (long long)offset);
		return MPI_SUCCESS;
	}
	*disp = (MPI_Offset)global_of(f, (uint64_t)offset * f->etype_size);
	return MPI_SUCCESS;
}

int
sf_get_type_extent(struct sfile *f, MPI_Datatype t, MPI_Count *extent)
{
	MPI_Count lb;

	if (sf_type_class(f, t) != 0)
		return sf_fail_code(f, MPI_ERR_TYPE, "'%s': get_type_extent: "
		    "datatype null or not committed", f->path);
	return MPI_Type_get_extent_x(t, &lb, extent);
}

/* The view bytes of the whole file: where SEEK_END puts the pointer. */
uint64_t
sf_stream_size(const struct sfile *f)
{
	uint64_t size = SF_DATA(f)->size;

	if (f->dense)
		return size > f->view.disp ? size - f->view.disp : 0;
	return gfsp_view_bytes_below(&f->view, size);
}

/* ------------------------------------------------------------ reads */

struct rd {
	struct sfile *f;
	unsigned char *dst;
	uint64_t s;		/* stream offset of dst[0] */
	uint64_t got;
	struct gfsp_error *err;
};

/* Global [g, g + n) of the file: a split file read, or the one being
 * written as this rank sees it (its writes, the others' as of a sync). */
static int
pread_global(struct sfile *f, void *dst, uint64_t n, uint64_t g,
	     uint64_t *got, struct gfsp_error *err)
{
	if (f->mode == SF_READ)
		return gfsp_layout_pread(f->layout, dst, n, g, got, err);
	return gfsp_split_pread(SF_DATA(f)->w, dst, n, g, SF_DATA(f)->size,
	    got, err);
}

static int
read_piece(void *ctx, uint64_t goff, uint64_t loff, uint64_t len)
{
	struct rd *r = ctx;
	uint64_t n = 0;
	int rc;

	rc = pread_global(r->f, r->dst + (loff - r->s), len, goff, &n, r->err);
	if (rc)
		return rc;
	r->got = loff - r->s + n;
	return n < len ? -1 : 0;	/* end of file: stop */
}

static int
read_stream(struct sfile *f, uint64_t s, void *dst, uint64_t n,
	    uint64_t *got, struct gfsp_error *err)
{
	struct rd r = { f, dst, s, 0, err };
	int rc;

	*got = 0;
	if (n == 0)
		return 0;
	if (f->dense) {
		return pread_global(f, dst, n, global_of(f, s), got, err);
	}
	rc = gfsp_view_extents(&f->view, global_of(f, s), SF_DATA(f)->size,
	    s + n, read_piece, &r);
	*got = r.got;
	return rc > 0 ? rc : 0;
}

/* -------------------------------------------------------- the data path */

int
sf_check_args(struct sfile *f, int write, int flags, MPI_Offset offset,
	      MPI_Count count, MPI_Datatype type, uint64_t *bytes,
	      struct gfsp_error *err)
{
	int acc = f->amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY |
	    MPI_MODE_RDWR), shared = flags & (SF_SHARED | SF_ORDERED), cls;
	MPI_Count tsz = 0;

	*bytes = 0;
	if ((flags & SF_AT) && !shared && offset < 0) {
		gfsp_error_set(err, GFSP_EINVAL, "'%s': negative offset %lld",
		    f->path, (long long)offset);
		return MPI_ERR_ARG;
	}
	if (count < 0) {
		gfsp_error_set(err, GFSP_EINVAL, "'%s': negative count %lld",
		    f->path, (long long)count);
		return MPI_ERR_COUNT;
	}
	if ((cls = sf_type_class(f, type)) != 0) {
		gfsp_error_set(err, GFSP_EINVAL, "'%s': datatype null or not "
		    "committed", f->path);
		return cls;
	}
	MPI_Type_size_x(type, &tsz);
	*bytes = (uint64_t)count * (uint64_t)tsz;
	if (*bytes % f->etype_size != 0) {
		gfsp_error_set(err, GFSP_EIO, "'%s': %llu bytes are not a whole "
		    "number of etypes (%llu bytes)", f->path,
		    (unsigned long long)*bytes,
		    (unsigned long long)f->etype_size);
		return MPI_ERR_IO;
	}
	/*
	 * ROMIO checks the access mode of the individual and explicit-offset
	 * calls and of read_shared; write_shared and write_ordered on a
	 * read-only file fail in the write (MPI_ERR_IO), and read_ordered on
	 * a write-only file reads (ROMIO opens it read-write).
	 */
	if (write && (f->mode == SF_READ || acc == MPI_MODE_RDONLY)) {
		gfsp_error_set(err, GFSP_EACCES, "'%s': write to a file opened "
		    "read-only", f->path);
		return shared ? MPI_ERR_IO : MPI_ERR_READ_ONLY;
	}
	if (!write && acc == MPI_MODE_WRONLY && !(flags & SF_ORDERED)) {
		gfsp_error_set(err, GFSP_EACCES, "'%s': read from a file opened "
		    "write-only", f->path);
		return MPI_ERR_ACCESS;
	}
	if (!shared && (f->amode & MPI_MODE_SEQUENTIAL)) {
		gfsp_error_set(err, GFSP_ENOTSUP, "'%s': only the shared file "
		    "pointer is used with MPI_MODE_SEQUENTIAL", f->path);
		return MPI_ERR_UNSUPPORTED_OPERATION;
	}
	return 0;
}

/*
 * external32 (ROMIO's MPIU_write_external32_conversion_fn): the data of
 * count elements of type, in typemap order, each element big-endian.
 * ROMIO writes it at the native sizes, as the view counts them, so this
 * is MPI_Pack_external's stream only where the two sizes agree; where
 * they do not (MPI_LONG, long double: external32 sizes 4 and 16 are not
 * native 8 and 16 bytes of x86-64 here) ROMIO writes the shorter stream
 * and leaves the rest of the native size unset, which no one can match,
 * so such a type is refused.
 */
static int
ext32_buffer(struct sfile *f, MPI_Datatype type, MPI_Count count, uint64_t n,
	     unsigned char **out, struct gfsp_error *err)
{
	MPI_Aint esize = 0;

	*out = NULL;
	if (count > INT32_MAX || MPI_Pack_external_size("external32",
	    (int)count, type, &esize) != MPI_SUCCESS)
		return gfsp_error_set(err, GFSP_EINVAL, "'%s': external32: "
		    "cannot size %lld elements", f->path, (long long)count);
	if ((uint64_t)esize != n)
		return gfsp_error_set(err, GFSP_ENOTSUP, "'%s': external32: "
		    "the datatype's elements are %llu bytes in external32 and "
		    "%llu natively; MPICH leaves the difference unset, so "
		    "this is not supported on split files", f->path,
		    (unsigned long long)esize, (unsigned long long)n);
	if ((*out = calloc(1, n)) == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "'%s': no memory to "
		    "convert %llu bytes", f->path, (unsigned long long)n);
	return 0;
}

static int
ext32_pack(struct sfile *f, const void *buf, MPI_Count count,
	   MPI_Datatype type, unsigned char *out, uint64_t n,
	   struct gfsp_error *err)
{
	MPI_Aint pos = 0;

	if (MPI_Pack_external("external32", buf, (int)count, type, out,
	    (MPI_Aint)n, &pos) != MPI_SUCCESS)
		return gfsp_error_set(err, GFSP_EMPI, "'%s': external32: "
		    "MPI_Pack_external failed", f->path);
	return 0;
}

/* As ROMIO, every element is converted, read or not (a short read
 * leaves the rest of the buffer zeros, converted). */
static int
ext32_unpack(struct sfile *f, unsigned char *in, uint64_t n, void *buf,
	     MPI_Count count, MPI_Datatype type, struct gfsp_error *err)
{
	MPI_Aint pos = 0;

	if (MPI_Unpack_external("external32", in, (MPI_Aint)n, &pos, buf,
	    (int)count, type) != MPI_SUCCESS)
		return gfsp_error_set(err, GFSP_EMPI, "'%s': external32: "
		    "MPI_Unpack_external failed", f->path);
	return 0;
}

static int
write_stream(struct sfile *f, uint64_t s, const void *data, uint64_t n,
	     struct gfsp_error *err)
{
	struct sfile *d = SF_DATA(f);
	uint64_t begin, end;
	int rc;

	if (n == 0)
		return 0;
	if (f->atomic && (rc = sf_clock_tick(f, &d->epoch, err)) != 0)
		return rc;
	if ((rc = gfsp_split_set_epoch(d->w, d->epoch, err)) != 0)
		return rc;
	if (!f->dense && gfsp_view_total(&f->view) != UINT64_MAX &&
	    s + n > gfsp_view_total(&f->view))
		return gfsp_error_set(err, GFSP_EINVAL, "'%s': write past the "
		    "end of the file view", f->path);
	if (f->dense) {
		begin = global_of(f, s);
		end = begin + n;
		rc = gfsp_split_write_at(d->w, begin, data, n, err);
	} else {
		begin = global_of(f, s);
		end = global_of(f, s + n - 1) + 1;
		rc = gfsp_split_write_view(d->w, f->view_id, begin, end, data,
		    n, err);
	}
	if (rc == 0) {
		d->size = GFSP_MAX(d->size, end);
		d->dirty = 1;
	}
	return rc;
}

static int
io(struct sfile *f, int write, int flags, MPI_Offset offset, void *buf,
   MPI_Count count, MPI_Datatype type, MPI_Count *bytes)
{
	struct gfsp_error err;
	MPI_Count lb = 0;
	unsigned char *data = NULL, *packed = NULL;
	uint64_t n = 0, s, got = 0;
	int rc = 0, cls;

	*bytes = 0;
	gfsp_error_clear(&err);
	if (flags & SF_COLL)
		sf_next_epoch(f);
	cls = sf_check_args(f, write, flags, offset, count, type, &n, &err);
	if (cls)
		rc = err.code;
	if (rc == 0 && f->orphan)
		rc = gfsp_error_set(&err, GFSP_EIO, "'%s': the file's first "
		    "handle was closed before this one: its split-write is "
		    "committed, and this handle cannot reach it", f->path);
	/* a collective read sees what the ranks wrote before it */
	if ((flags & SF_COLL) && !write)
		rc = gfsp_agree(f->comm, rc, &err);
	if (rc == 0 && (flags & SF_COLL) && !write)
		rc = sf_catch_up(f, &err);
	/* what other ranks wrote shows at a sync, not at once */
	if (rc == 0 && !write && f->atomic && f->mode == SF_WRITE &&
	    f->nprocs > 1)
		rc = gfsp_error_set(&err, GFSP_ENOTSUP, "'%s': reads in atomic "
		    "mode of a split file open for writing are not supported "
		    "(the other ranks' writes show only after MPI_File_sync); "
		    "turn atomic mode off to read, or leave the file out of "
		    "GFSPLIT_SPLIT_FILES", f->path);
	if (rc == 0 && n > 0) {
		if (f->ext32 && !(flags & SF_RAW)) {
			rc = ext32_buffer(f, type, count, n, &packed, &err);
			data = packed;
			if (rc == 0 && write)
				rc = ext32_pack(f, buf, count, type, packed, n,
				    &err);
		} else if (gfsp_type_dense(type, count, &lb)) {
			/* integers: buf may be MPI_BOTTOM */
			data = (unsigned char *)((uintptr_t)buf + (intptr_t)lb);
		} else if ((packed = malloc(n)) == NULL) {
			rc = gfsp_error_set(&err, GFSP_ENOMEM, "'%s': no memory "
			    "to pack %llu bytes", f->path,
			    (unsigned long long)n);
		} else {
			data = packed;
			if (write)
				rc = gfsp_type_copy(type, count, buf, packed, n,
				    1, &err);
		}
	}
	s = (uint64_t)((flags & SF_AT) ? offset : f->pos) * f->etype_size;
	if (rc == 0 && f->one_tile && n > f->view.size - GFSP_MIN(s,
	    f->view.size))
		rc = gfsp_error_set(&err, GFSP_ENOTSUP, "'%s': an access past "
		    "the first tile of the file view, whose filetype's tiles "
		    "interleave (its typemap spans more than its extent): the "
		    "library keeps that tile alone", f->path);
	if (rc == 0 && write) {
		rc = write_stream(f, s, data, n, &err);
		got = rc ? 0 : n;
		if (rc)
			SF_DATA(f)->failed = 1;
	} else if (rc == 0) {
		rc = read_stream(f, s, data, n, &got, &err);
		if (rc == 0 && f->ext32 && !(flags & SF_RAW) && got > 0)
			rc = ext32_unpack(f, data, n, buf, count, type, &err);
		else if (rc == 0 && packed != NULL && got > 0)
			rc = gfsp_type_copy(type, count, buf, packed, got, 0,
			    &err);
	}
	free(packed);
	if (rc == 0 && !(flags & SF_AT))
		f->pos += (MPI_Offset)(got / f->etype_size);
	if (flags & SF_COLL) {
		rc = agree(f, rc, &err);
		sf_next_epoch(f);
	}
	if (cls)
		return sf_fail_code(f, cls, "%s", err.msg);
	if (rc)
		return sf_fail(f, &err);
	*bytes = (MPI_Count)got;
	return MPI_SUCCESS;
}

int
sf_io(struct sfile *f, int write, int flags, MPI_Offset offset, void *buf,
      MPI_Count count, MPI_Datatype type, MPI_Count *bytes)
{
	return SF_WORK(io(f, write, flags, offset, buf, count, type, bytes));
}

/* ---------------------------------------------------- statuses, requests */

void
sf_status(MPI_Status *st, MPI_Count bytes)
{
	if (st == MPI_STATUS_IGNORE)
		return;
	MPI_Status_set_elements_x(st, MPI_BYTE, bytes);
	MPI_Status_set_cancelled(st, 0);
}

/* A nonblocking call is done when it returns: its request is a
 * generalized request completed at once, carrying the byte count. */
static int
req_query(void *extra, MPI_Status *st)
{
	sf_status(st, *(MPI_Count *)extra);
	st->MPI_SOURCE = MPI_UNDEFINED;
	st->MPI_TAG = MPI_UNDEFINED;
	return MPI_SUCCESS;
}

static int
req_free(void *extra)
{
	free(extra);
	return MPI_SUCCESS;
}

static int
req_cancel(void *extra, int complete)
{
	return MPI_SUCCESS;
}

int
sf_request(MPI_Count bytes, MPI_Request *req)
{
	MPI_Count *x = malloc(sizeof(*x));
	int rc;

	if (x == NULL)
		return MPI_ERR_NO_MEM;
	*x = bytes;
	rc = MPI_Grequest_start(req_query, req_free, req_cancel, x, req);
	if (rc != MPI_SUCCESS) {
		free(x);
		return rc;
	}
	return MPI_Grequest_complete(*req);
}

/* ------------------------------------------------ pointer, size, sync */

int
sf_seek(struct sfile *f, MPI_Offset off, int whence)
{
	MPI_Offset base;

	if (f->amode & MPI_MODE_SEQUENTIAL)
		return sf_fail_code(f, MPI_ERR_UNSUPPORTED_OPERATION, "'%s': "
		    "seek: the file is opened with MPI_MODE_SEQUENTIAL",
		    f->path);
	switch (whence) {
	case MPI_SEEK_SET:
		base = 0;
		break;
	case MPI_SEEK_CUR:
		base = f->pos;
		break;
	case MPI_SEEK_END:
		/* a partial etype at the end counts, as in ROMIO */
		base = (MPI_Offset)((sf_stream_size(f) + f->etype_size - 1) /
		    f->etype_size);
		break;
	default:
		return sf_fail_code(f, MPI_ERR_ARG, "'%s': seek: bad whence "
		    "%d", f->path, whence);
	}
	if (base + off < 0)
		return sf_fail_code(f, MPI_ERR_ARG, "'%s': seek to a negative "
		    "offset", f->path);
	f->pos = base + off;
	return MPI_SUCCESS;
}

int
sf_get_size(struct sfile *f, MPI_Offset *size)
{
	*size = (MPI_Offset)SF_DATA(f)->size;
	return MPI_SUCCESS;
}

/*
 * Collective.  Every rank's writes are its own, so a cut applies to each
 * rank's record; the size all agree on is the largest any of them knows
 * (set_size) or that and the request (preallocate).
 */
int
sf_set_size(struct sfile *f, MPI_Offset size, int grow_only)
{
	struct gfsp_error err;
	uint64_t mine = SF_DATA(f)->size, all = 0;
	int rc = 0;

	int cls = 0;

	/* MPICH's checks and classes, in its order */
	gfsp_error_clear(&err);
	if (!grow_only && (f->amode & MPI_MODE_SEQUENTIAL)) {
		cls = MPI_ERR_UNSUPPORTED_OPERATION;
		rc = gfsp_error_set(&err, GFSP_ENOTSUP, "'%s': set_size: the "
		    "file is opened with MPI_MODE_SEQUENTIAL", f->path);
	} else if (size < 0) {
		cls = MPI_ERR_ARG;
		rc = gfsp_error_set(&err, GFSP_EINVAL, "'%s': negative size "
		    "%lld", f->path, (long long)size);
	} else if (f->mode != SF_WRITE) {
		cls = MPI_ERR_READ_ONLY;
		rc = gfsp_error_set(&err, GFSP_EACCES, "'%s': cannot change "
		    "the size of a file opened read-only", f->path);
	}
	rc = agree(f, rc, &err);
	if (cls)
		return sf_fail_code(f, cls, "%s", err.msg);
	if (rc == 0)
		rc = gfsp_mpi_check(gfsp_allreduce(&mine, &all, 1,
		    MPI_UINT64_T, MPI_MAX, f->comm), "cannot agree on the "
		    "file size", &err);
	if (rc)
		return sf_fail(f, &err);
	sf_next_epoch(f);	/* writes after the cut are not cut */
	if (grow_only) {
		SF_DATA(f)->size = GFSP_MAX(all, (uint64_t)size);
		return MPI_SUCCESS;
	}
	if ((uint64_t)size < all)
		gfsp_split_truncate(SF_DATA(f)->w, (uint64_t)size);
	SF_DATA(f)->size = (uint64_t)size;
	return MPI_SUCCESS;
}

void
sf_next_epoch(struct sfile *f)
{
	/* the write clock orders them; an alias's collective calls are not
	 * the owner's communicator's */
	if (!f->atomic && f->owner == NULL)
		f->epoch++;
}

int
sf_catch_up(struct sfile *f, struct gfsp_error *err)
{
	uint64_t mine[2] = { f->dirty, f->size }, all[2] = { 0, 0 };
	int rc;

	if (f->owner != NULL || f->mode != SF_WRITE || f->nprocs == 1)
		return 0;
	rc = gfsp_mpi_check(gfsp_allreduce(mine, all, 2, MPI_UINT64_T,
	    MPI_MAX, f->comm), "cannot agree on the file size", err);
	if (rc || all[0] == 0)
		return rc;
	rc = gfsp_split_refresh(f->w, err);
	if (rc == 0) {
		f->size = all[1];
		f->dirty = 0;
	}
	return rc;
}

/*
 * Collective.  On: the write clock starts past every epoch so far (they
 * are equal on all ranks here).  Off: the epoch goes past every tick any
 * rank took.  The shadow keeps the flag for MPI_File_get_atomicity.
 */
int
sf_set_atomicity(struct sfile *f, int flag)
{
	struct gfsp_error err;
	int want[2] = { !!flag, -!!flag }, all[2] = { 0, 0 }, rc;
	uint64_t top = 0;

	gfsp_error_clear(&err);
	rc = gfsp_mpi_check(gfsp_allreduce(want, all, 2, MPI_INT, MPI_MAX,
	    f->comm), "cannot agree on atomic mode", &err);
	/* the write clock is the owner's, over the owner's ranks */
	if (rc == 0 && f->owner != NULL && flag)
		rc = gfsp_error_set(&err, GFSP_ENOTSUP, "'%s': atomic mode on "
		    "a second handle of a file being split-written is not "
		    "supported (set it on the first)", f->path);
	if (rc == 0 && all[0] != -all[1])
		rc = gfsp_error_set(&err, GFSP_EINVAL, "'%s': set_atomicity: "
		    "the ranks passed different flags", f->path);
	if (rc == 0 && f->mode == SF_WRITE && flag && !f->atomic &&
	    f->rank == 0)
		rc = sf_clock_set(f, SF_DATA(f)->epoch + 1, &err);
	if (rc == 0 && f->mode == SF_WRITE && !flag && f->atomic)
		rc = gfsp_mpi_check(gfsp_allreduce(&SF_DATA(f)->epoch, &top, 1,
		    MPI_UINT64_T, MPI_MAX, f->comm), "cannot agree on atomic "
		    "mode", &err);
	rc = agree(f, rc, &err);
	if (rc)
		return sf_fail(f, &err);
	if (f->mode == SF_WRITE && !flag && f->atomic)
		SF_DATA(f)->epoch = top + 1;
	f->atomic = !!flag;
	return PMPI_File_set_atomicity(f->fh, flag);
}

/* Collective: the parts are on stable storage, and every rank knows the
 * size all writes made; writes after it are MPI-later than those before
 * it on every rank (with the barrier of sync-barrier-sync, MPI 4.1
 * section 14.6.1, the program orders them; without it MPI leaves their
 * order open, and the epoch orders them as time did: the sync agrees). */
int
sf_sync(struct sfile *f)
{
	struct gfsp_error err;
	uint64_t mine = SF_DATA(f)->size, all = 0;
	int rc = 0;

	gfsp_error_clear(&err);
	if (f->mode == SF_WRITE)
		rc = gfsp_split_sync(SF_DATA(f)->w, &err);
	/* an alias's ranks are not the writer's: its bytes are on disk, and
	 * the others see them at the owner's next catch-up */
	if (f->owner != NULL) {
		rc = agree(f, rc, &err);
		return rc ? sf_fail(f, &err) : MPI_SUCCESS;
	}
	rc = agree(f, rc, &err);
	/* and every rank's writes show in every rank's reads */
	if (rc == 0 && f->mode == SF_WRITE)
		rc = gfsp_split_refresh(SF_DATA(f)->w, &err);
	if (rc == 0)
		rc = gfsp_mpi_check(gfsp_allreduce(&mine, &all, 1,
		    MPI_UINT64_T, MPI_MAX, f->comm),
		    "cannot agree on the file size", &err);
	rc = agree(f, rc, &err);
	sf_next_epoch(f);
	if (rc)
		return sf_fail(f, &err);
	f->size = all;
	f->dirty = 0;
	return MPI_SUCCESS;
}
