/*
 * io.c - the data path of the MPI-IO layer (mpiio.h).
 *
 * A write becomes one append to this rank's part, whatever the view and
 * the memory datatype (seed section 7.3.4): noncontiguous memory is packed
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
	strcpy(datarep, "native");
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
sf_set_view(struct sfile *f, MPI_Offset disp, MPI_Datatype etype,
	    MPI_Datatype filetype, const char *datarep, MPI_Info info)
{
	struct gfsp_error err;
	struct gfsp_view v;
	MPI_Count esz = 0;
	uint32_t id = 0;
	int rc = 0, mrc, have = 0;

	gfsp_error_clear(&err);
	memset(&v, 0, sizeof(v));
	if (datarep == NULL || strcasecmp(datarep, "native") != 0)
		rc = gfsp_error_set(&err, GFSP_ENOTSUP, "'%s': data "
		    "representation '%s' is not supported on split files "
		    "(only \"native\")", f->path, datarep ? datarep : "");
	if (rc == 0 && disp < 0)
		rc = gfsp_error_set(&err, GFSP_EINVAL, "'%s': negative view "
		    "displacement %lld", f->path, (long long)disp);
	if (rc == 0 && (MPI_Type_size_x(etype, &esz) != MPI_SUCCESS ||
	    esz <= 0))
		rc = gfsp_error_set(&err, GFSP_EINVAL, "'%s': etype of size "
		    "%lld", f->path, (long long)esz);
	if (rc == 0) {
		rc = gfsp_view_from_mpi(disp, etype, filetype, &v, &err);
		have = rc == 0;
	}
	if (rc == 0 && f->mode == SF_WRITE && !dense_view(&v)) {
		rc = gfsp_split_add_view(SF_DATA(f)->w, &v, &id, &err);
		have = rc != 0;		/* else the writer's now */
	}
	rc = agree(f, rc, &err);
	if (rc) {
		if (have)
			gfsp_view_free(&v);
		return rc == GFSP_ENOTSUP && strstr(err.msg, "representation") ?
		    sf_fail_code(f, MPI_ERR_UNSUPPORTED_DATAREP, "%s",
		    err.msg) : sf_fail(f, &err);
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

int
sf_get_byte_offset(struct sfile *f, MPI_Offset offset, MPI_Offset *disp)
{
	if (offset < 0)
		return sf_fail_code(f, MPI_ERR_ARG, "'%s': get_byte_offset: "
		    "negative offset %lld", f->path, (long long)offset);
	*disp = (MPI_Offset)global_of(f, (uint64_t)offset * f->etype_size);
	return MPI_SUCCESS;
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

static int
check_access(struct sfile *f, int write, struct gfsp_error *err)
{
	int acc = f->amode & (MPI_MODE_RDONLY | MPI_MODE_WRONLY |
	    MPI_MODE_RDWR);

	if (write && (f->mode == SF_READ || acc == MPI_MODE_RDONLY))
		return gfsp_error_set(err, GFSP_EACCES, "'%s': write to a "
		    "file opened read-only", f->path);
	if (!write && acc == MPI_MODE_WRONLY)
		return gfsp_error_set(err, GFSP_EACCES, "'%s': read from a "
		    "file opened write-only", f->path);
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
	MPI_Count tsz = 0, lb = 0;
	unsigned char *data = NULL, *packed = NULL;
	uint64_t n = 0, s, got = 0;
	int rc = 0;

	*bytes = 0;
	gfsp_error_clear(&err);
	if (flags & SF_COLL)
		sf_next_epoch(f);
	if (count < 0 || MPI_Type_size_x(type, &tsz) != MPI_SUCCESS)
		rc = gfsp_error_set(&err, GFSP_EINVAL, "'%s': bad count or "
		    "datatype", f->path);
	if (rc == 0)
		rc = check_access(f, write, &err);
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
	if (rc == 0) {
		n = (uint64_t)count * (uint64_t)tsz;
		if ((flags & SF_AT) && offset < 0)
			rc = gfsp_error_set(&err, GFSP_EINVAL, "'%s': negative "
			    "offset %lld", f->path, (long long)offset);
		else if (n % f->etype_size != 0)
			rc = gfsp_error_set(&err, GFSP_EINVAL, "'%s': %llu bytes "
			    "are not a whole number of etypes (%llu bytes)",
			    f->path, (unsigned long long)n,
			    (unsigned long long)f->etype_size);
	}
	if (rc == 0 && n > 0) {
		if (gfsp_type_dense(type, count, &lb)) {
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
	if (rc == 0 && write) {
		rc = write_stream(f, s, data, n, &err);
		got = rc ? 0 : n;
		if (rc)
			SF_DATA(f)->failed = 1;
	} else if (rc == 0) {
		rc = read_stream(f, s, data, n, &got, &err);
		if (rc == 0 && packed != NULL && got > 0)
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

	gfsp_error_clear(&err);
	if (size < 0)
		rc = gfsp_error_set(&err, GFSP_EINVAL, "'%s': negative size "
		    "%lld", f->path, (long long)size);
	else if (f->mode != SF_WRITE)
		rc = gfsp_error_set(&err, GFSP_EACCES, "'%s': cannot change "
		    "the size of a file opened read-only", f->path);
	rc = agree(f, rc, &err);
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
