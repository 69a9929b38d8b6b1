/*
 * run.c - running a job: its accesses through MPI-IO, and the comparison of every byte with the model
 * (one part of mpi_fuzzio: fuzzio.h)
 */
#include "fuzzio.h"

/* ---- running a job --------------------------------------------------------------- */

/* count copies of m from base (an address) into r; the bytes they span */
void
copies(struct runs *r, const struct ty *m, int64_t count, intptr_t base)
{
	int64_t i;

	for (i = 0; i < count; i++)
		runs_shift(r, &m->rs, (int64_t)base + i * m->ext);
}

void
span_of(const struct ty *m, int64_t count, int64_t *lo, int64_t *hi)
{
	*lo = 0;
	*hi = 1;
	if (count <= 0 || !m->rs.size)
		return;
	*lo = imin(m->tlb, m->tlb + (count - 1) * m->ext);
	*hi = imax(m->tub, m->tub + (count - 1) * m->ext);
}

int
io_prepare(const struct job *j, int p, const struct acc *a, struct io *io)
{
	int nb = a->mkind == M_BOTTOM2 && a->count >= 2 ? 2 : 1, b;
	int64_t cnt[2], lo, hi, k = 0;
	unsigned char fill = a->rd ? SENT_BYTE : GAP_BYTE;
	uint64_t key = acc_key(j->seed, p, a->rank, a->idx);
	size_t i;

	memset(io, 0, sizeof(*io));
	cnt[0] = nb == 2 ? a->count / 2 : a->count;
	cnt[1] = a->count - cnt[0];
	io->t = a->m->t;
	io->count = a->count;
	for (b = 0; b < nb; b++) {
		intptr_t base;

		span_of(a->m, cnt[b], &lo, &hi);
		io->len[b] = (size_t)(hi - lo);
		io->buf[b] = xmalloc(io->len[b]);
		memset(io->buf[b], fill, io->len[b]);
		base = (intptr_t)io->buf[b] - (intptr_t)lo;
		copies(&io->mr, a->m, cnt[b], base);
		if (b == 0)
			io->arg = (void *)base;
	}
	/* ROMIO 4.0.2 leaves the status of an ordered write of one element of
	 * an empty type as it was: nothing to wrap unless --full */
	if ((a->mkind == M_BOTTOM || a->mkind == M_BOTTOM2) && (a->count || o.full)) {
		MPI_Aint d[2];
		MPI_Datatype ts[2] = { a->m->t, a->m->t };
		int bl[2] = { (int)cnt[0], (int)cnt[1] }, rc;

		span_of(a->m, cnt[0], &lo, &hi);
		MPI_Get_address(io->buf[0], &d[0]);
		d[0] = MPI_Aint_add(d[0], (MPI_Aint)-lo);
		if (nb == 2) {
			span_of(a->m, cnt[1], &lo, &hi);
			MPI_Get_address(io->buf[1], &d[1]);
			d[1] = MPI_Aint_add(d[1], (MPI_Aint)-lo);
			rc = MPI_Type_create_struct(2, bl, d, ts, &io->t);
		} else if (child_ok(C_HINDEXED, a->m)) {
			rc = MPI_Type_create_hindexed(1, bl, d, a->m->t, &io->t);
		} else {	/* ROMIO: see child_ok() */
			rc = MPI_Type_create_struct(1, bl, d, ts, &io->t);
		}
		if (rc == MPI_SUCCESS)
			rc = MPI_Type_commit(&io->t);
		if (rc != MPI_SUCCESS)
			return must(rc, "MPI_Type_create_hindexed/struct (MPI_BOTTOM)");
		io->own_t = 1;
		io->arg = MPI_BOTTOM;
		io->count = 1;
	}
	if (!a->rd)
		for (i = 0; i < io->mr.n; i++) {
			unsigned char *q = (unsigned char *)(intptr_t)io->mr.r[i].off;
			int64_t n;

			for (n = 0; n < io->mr.r[i].len; n++)
				q[n] = dbyte(key, k++);
		}
	return 0;
}

void
io_free(struct io *io)
{
	if (io->own_t)
		MPI_Type_free(&io->t);
	free(io->buf[0]);
	free(io->buf[1]);
	runs_free(&io->mr);
}

/* MPI_File_[i]{read,write}POST(ARGS) */
#define RW(rd, pre, post, ...)						\
	((rd) ? MPI_File_##pre##read##post(__VA_ARGS__)			\
	      : MPI_File_##pre##write##post(__VA_ARGS__))

/* the one call of path: post (nonblocking) or complete it; *half names
 * the part of a split collective that failed */
int
call(MPI_File fh, int path, int rd, MPI_Offset off, void *b, MPI_Count c,
     MPI_Datatype t, MPI_Status *st, MPI_Request *rq, const char **half)
{
	int n = (int)c, rc;

	*half = "";
	switch (path) {
	case P_AT: return RW(rd, , _at, fh, off, b, n, t, st);
	case P_AT | P_LARGE: return RW(rd, , _at_c, fh, off, b, c, t, st);
	case P_AT | P_NB: return RW(rd, i, _at, fh, off, b, n, t, rq);
	case P_AT | P_NB | P_LARGE: return RW(rd, i, _at_c, fh, off, b, c, t, rq);
	case 0: return RW(rd, , , fh, b, n, t, st);
	case P_LARGE: return RW(rd, , _c, fh, b, c, t, st);
	case P_NB: return RW(rd, i, , fh, b, n, t, rq);
	case P_NB | P_LARGE: return RW(rd, i, _c, fh, b, c, t, rq);
	case P_AT | P_COLL: return RW(rd, , _at_all, fh, off, b, n, t, st);
	case P_AT | P_COLL | P_LARGE: return RW(rd, , _at_all_c, fh, off, b, c, t, st);
	case P_AT | P_COLL | P_NB: return RW(rd, i, _at_all, fh, off, b, n, t, rq);
	case P_AT | P_COLL | P_NB | P_LARGE: return RW(rd, i, _at_all_c, fh, off, b, c, t, rq);
	case P_COLL: return RW(rd, , _all, fh, b, n, t, st);
	case P_COLL | P_LARGE: return RW(rd, , _all_c, fh, b, c, t, st);
	case P_COLL | P_NB: return RW(rd, i, _all, fh, b, n, t, rq);
	case P_COLL | P_NB | P_LARGE: return RW(rd, i, _all_c, fh, b, c, t, rq);
	case P_SHARED: return RW(rd, , _shared, fh, b, n, t, st);
	case P_SHARED | P_LARGE: return RW(rd, , _shared_c, fh, b, c, t, st);
	case P_SHARED | P_NB: return RW(rd, i, _shared, fh, b, n, t, rq);
	case P_SHARED | P_NB | P_LARGE: return RW(rd, i, _shared_c, fh, b, c, t, rq);
	case P_ORDERED: return RW(rd, , _ordered, fh, b, n, t, st);
	case P_ORDERED | P_LARGE: return RW(rd, , _ordered_c, fh, b, c, t, st);
	case P_AT | P_COLL | P_SPLIT:
		rc = RW(rd, , _at_all_begin, fh, off, b, n, t);
		break;
	case P_AT | P_COLL | P_SPLIT | P_LARGE:
		rc = RW(rd, , _at_all_begin_c, fh, off, b, c, t);
		break;
	case P_COLL | P_SPLIT:
		rc = RW(rd, , _all_begin, fh, b, n, t);
		break;
	case P_COLL | P_SPLIT | P_LARGE:
		rc = RW(rd, , _all_begin_c, fh, b, c, t);
		break;
	case P_ORDERED | P_SPLIT:
		rc = RW(rd, , _ordered_begin, fh, b, n, t);
		break;
	case P_ORDERED | P_SPLIT | P_LARGE:
		rc = RW(rd, , _ordered_begin_c, fh, b, c, t);
		break;
	default:
		return MPI_ERR_ARG;
	}
	if (rc != MPI_SUCCESS)
		return rc;
	*half = "_end";
	if (path & P_ORDERED)
		return RW(rd, , _ordered_end, fh, b, st);
	if (path & P_AT)
		return RW(rd, , _at_all_end, fh, b, st);
	return RW(rd, , _all_end, fh, b, st);
}

void
dump_read(struct run_ctx *x, int p, const struct acc *a, const struct io *io, int64_t got)
{
	int64_t s = 0, n;
	size_t k, i;
	const unsigned char *q;

	fprintf(x->dump, "seed %" PRIu64 " phase %d rank %d access %d %s etype-offset %lld "
		"count %lld bytes %lld got %lld\n", x->j->seed, p, a->rank, a->idx,
		path_name(a->path, 1), (long long)(a->soff / x->j->ph[p].E),
		(long long)a->count, (long long)a->bytes, (long long)got);
	/* walk the file runs and the memory runs side by side */
	for (k = 0, i = 0, n = 0; k < a->g.n && s < got; k++) {
		int64_t g = a->g.r[k].off, e = g + a->g.r[k].len;

		while (g < e && s < got) {
			int64_t line = imin(imin(32, e - g), got - s), c;

			fprintf(x->dump, "%012llx ", (long long)g);
			for (c = 0; c < line; c++) {
				while (n >= io->mr.r[i].len) {
					i++;
					n = 0;
				}
				q = (const unsigned char *)(intptr_t)io->mr.r[i].off;
				fprintf(x->dump, "%02x", q[n++]);
			}
			fprintf(x->dump, "\n");
			g += line;
			s += line;
		}
	}
}

/* the bytes a read brought against the model, and the memory gaps */
void
verify_read(struct run_ctx *x, int p, const struct acc *a, const struct io *io, int64_t got)
{
	int64_t s = 0, n, fk = 0, fg = 0;
	size_t i, k = 0;
	int first = 1, wrong = 0;
	unsigned char w = 0, h = 0;

	for (i = 0; i < io->mr.n && s < imin(got, a->want); i++) {
		const unsigned char *q = (const unsigned char *)(intptr_t)io->mr.r[i].off;

		for (n = 0; n < io->mr.r[i].len && s < imin(got, a->want); n++, s++) {
			if (q[n] == a->expect[s])
				continue;
			if (first) {
				int64_t t = s;

				for (k = 0; k < a->g.n && t >= a->g.r[k].len; k++)
					t -= a->g.r[k].len;
				fg = a->g.r[k].off + t;
				fk = s;
				w = a->expect[s];
				h = q[n];
				first = 0;
			}
			wrong++;
		}
	}
	if (wrong) {
		x->bad = 1;
		if (x->nbad++ < 4)
			fail("phase %d step %d access %d %s: %d of %lld bytes differ from "
			     "the model; first: file byte %lld (stream byte %lld) is 0x%02x, "
			     "expected 0x%02x", p, a->step, a->idx, path_name(a->path, 1),
			     wrong, (long long)imin(got, a->want), (long long)fg,
			     (long long)fk, h, w);
	}
	/* gaps of the memory type keep what was there */
	if (io->mr.n) {
		int b;
		int64_t touched = 0;

		for (b = 0; b < 2; b++) {
			unsigned char *mark;
			intptr_t lo = (intptr_t)io->buf[b];

			if (!io->buf[b])
				continue;
			mark = calloc(io->len[b], 1);
			if (!mark)
				oom();
			for (i = 0; i < io->mr.n; i++) {
				intptr_t r0 = (intptr_t)io->mr.r[i].off;

				if (r0 >= lo && r0 < lo + (intptr_t)io->len[b])
					memset(mark + (r0 - lo), 1, (size_t)io->mr.r[i].len);
			}
			for (i = 0; i < io->len[b]; i++)
				if (!mark[i] && io->buf[b][i] != SENT_BYTE)
					touched++;
			free(mark);
		}
		if (touched) {
			x->bad = 1;
			fail("phase %d step %d access %d %s: %lld bytes of the gaps of the "
			     "memory type %s were written", p, a->step, a->idx,
			     path_name(a->path, 1), (long long)touched, a->m->desc);
		}
	}
}

/* after the call completed: status, pointer, data */
void
finish(struct run_ctx *x, int p, const struct acc *a, struct io *io)
{
	MPI_Count got = -1, cnt = -1;
	int64_t want = a->rd ? a->want : a->bytes;

	if (MPI_Get_elements_x(&io->st, MPI_BYTE, &got) != MPI_SUCCESS)
		got = -1;
	if (got == a->bytes && a->bytes && MPI_Get_count_c(&io->st, io->t, &cnt) == MPI_SUCCESS &&
	    cnt != io->count) {
		x->bad = 1;
		fail("phase %d access %d %s: MPI_Get_count_c says %lld, asked for %lld",
		     p, a->idx, path_name(a->path, a->rd), (long long)cnt,
		     (long long)io->count);
	}
	if (got != want) {
		x->bad = 1;
		fail("phase %d access %d %s: the status says %lld bytes, expected %lld%s",
		     p, a->idx, path_name(a->path, a->rd), (long long)got, (long long)want,
		     a->rd && a->want < a->bytes ? " (a read past the end of the file)" : "");
	}
	if (a->rd) {
		if (x->dump)
			dump_read(x, p, a, io, got < 0 ? 0 : got);
		verify_read(x, p, a, io, got < 0 ? 0 : got);
	}
}

/* the handle an access goes through */
MPI_File
acc_fh(const struct run_ctx *x, const struct acc *a)
{
	return a->h ? x->al[a->h] : x->fh;
}

int
check_pos(struct run_ctx *x, int p, const struct acc *a)
{
	MPI_Offset pos;
	int rc;

	if (a->pos_after < 0 || (a->rd && a->want < a->bytes))
		return 0;
	rc = MPI_File_get_position(acc_fh(x, a), &pos);
	if (rc != MPI_SUCCESS)
		return must(rc, "MPI_File_get_position");
	if (pos != a->pos_after) {
		x->bad = 1;
		fail("phase %d access %d %s: MPI_File_get_position says %lld, expected %lld",
		     p, a->idx, path_name(a->path, a->rd), (long long)pos,
		     (long long)a->pos_after);
	}
	return 0;
}

/*
 * The own accesses v[0..n) of one step.  batch: all posted (nonblocking),
 * then one MPI_Waitall; else one after the other.  coll: every call is a
 * collective, so a rank whose call failed still makes the later ones.
 */
int
run_accs(struct run_ctx *x, int p, struct acc **v, int n, int batch, int coll)
{
	struct io *io = xmalloc((size_t)(n ? n : 1) * sizeof(*io));
	MPI_Request *rq = xmalloc((size_t)(n ? n : 1) * sizeof(*rq));
	MPI_Status *sts = xmalloc((size_t)(n ? n : 1) * sizeof(*sts));
	int i, rc = 0, mrc, nposted = 0;
	const char *half;
	char name[96];

	memset(io, 0, (size_t)(n ? n : 1) * sizeof(*io));	/* io_free() of any */
	for (i = 0; i < n; i++) {
		struct acc *a = v[i];

		if (rc && !coll)
			break;
		if (io_prepare(x->j, p, a, &io[i])) {
			rc = -1;
			if (!coll)
				break;
			/* a collective must still be made: with nothing */
			io[i].t = MPI_BYTE;
			io[i].count = 0;
			io[i].arg = NULL;
		}
		if (a->seek != SEEK_NONE) {
			mrc = MPI_File_seek(acc_fh(x, a), a->seekarg, a->seek == SEEK_SET_ ?
					    MPI_SEEK_SET : MPI_SEEK_CUR);
			if (mrc != MPI_SUCCESS && (rc = must(mrc, "MPI_File_seek")) && !coll)
				break;
		}
		cov.path[a->rd][a->path]++;
		cov.accesses++;
		cov.bytes += a->bytes;
		cov.mkind[a->mkind]++;
		cov_ty(cov.mctor, a->m);
		ty_check(a->m);
		rq[i] = MPI_REQUEST_NULL;
		if (o.trace) {
			fprintf(stderr, "%s: rank %d: trace: phase %d ", prog, me, p);
			describe_acc(stderr, &x->j->ph[p], a, "");
		}
		mrc = call(acc_fh(x, a), a->path, a->rd, a->soff / x->j->ph[p].E, io[i].arg,
			   io[i].count, io[i].t, &io[i].st, &rq[i], &half);
		snprintf(name, sizeof(name), "%s%s", path_name(a->path, a->rd), half);
		if (mrc != MPI_SUCCESS) {
			rc = must(mrc, name);
			continue;
		}
		io[i].posted = 1;
		nposted = i + 1;
		if ((a->path & P_NB) && !batch) {
			mrc = MPI_Wait(&rq[i], &io[i].st);
			if (mrc != MPI_SUCCESS) {
				rc = must(mrc, "MPI_Wait");
				continue;
			}
		}
		if (!(a->path & (P_AT | P_SHARED | P_ORDERED)) && check_pos(x, p, a))
			rc = -1;
		if (!batch || !(a->path & P_NB))
			finish(x, p, a, &io[i]);
	}
	if (batch && nposted) {
		mrc = MPI_Waitall(nposted, rq, sts);
		if (mrc != MPI_SUCCESS)
			rc = must(mrc, "MPI_Waitall");
		for (i = 0; i < nposted && mrc == MPI_SUCCESS; i++)
			if (io[i].posted) {
				io[i].st = sts[i];
				finish(x, p, v[i], &io[i]);
			}
	}
	for (i = 0; i < n; i++)
		io_free(&io[i]);
	free(io);
	free(rq);
	free(sts);
	return rc;
}

/*
 * One step.  IN/OUT *pend: a failure of this rank not yet agreed on.  The
 * ranks agree before a step with collective calls (3 or 4 ranks share 2
 * cores here, and every collective costs milliseconds of polling: no more
 * of them than the rule needs) and after it; returns -1 if any rank failed.
 */
int
run_step(struct run_ctx *x, int p, int s, int *pend)
{
	struct phase *ph = &x->j->ph[p];
	struct step *st = &ph->st[s];
	struct acc *v[64];
	int n = 0, i, rc = 0, t, tok = 0, coll = st->type != ST_INDEP &&
	    st->type != ST_INDEP_NB;

	for (i = 0; i < ph->na && n < 64; i++)
		if (ph->a[i].step == s && ph->a[i].rank == me)
			v[n++] = &ph->a[i];
	if (!coll && *pend)	/* this rank failed: nothing more until they agree */
		return 0;
	if (coll && agree(*pend))
		return -1;
	*pend = 0;
	switch (st->type) {
	case ST_INDEP:
		rc = run_accs(x, p, v, n, 0, 0);
		break;
	case ST_INDEP_NB:
		rc = run_accs(x, p, v, n, 1, 0);
		break;
	case ST_COLL:
	case ST_ORDERED:
		rc = run_accs(x, p, v, n, 0, 1);
		break;
	case ST_COLL_NB:
		rc = run_accs(x, p, v, n, 1, 1);
		break;
	case ST_SHARED:		/* one after the other: a token in the given order */
		for (t = 0; t < x->j->nprocs && st->order[t] != me; t++)
			;
		if (t > 0)
			MPI_Recv(&tok, 1, MPI_INT, st->order[t - 1], 77, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
		rc = run_accs(x, p, v, n, 0, 0);
		if (t + 1 < x->j->nprocs)
			MPI_Send(&tok, 1, MPI_INT, st->order[t + 1], 77, MPI_COMM_WORLD);
		break;
	case ST_SEEKSH:
		i = MPI_File_seek_shared(x->fh, 0, MPI_SEEK_SET);
		if (i != MPI_SUCCESS)
			rc = must(i, "MPI_File_seek_shared");
		break;
	case ST_UNSYNC:		/* no MPI_File_sync: see gen_unsync() */
		if (st->sep == 0)
			MPI_Barrier(MPI_COMM_WORLD);
		if (ph->vshift) {
			const struct view *w = &ph->v[(me + ph->vshift) % x->j->nprocs];

			i = MPI_File_set_view(x->fh, w->disp, ph->et->t, w->ft->t, "native",
					      MPI_INFO_NULL);
			if (i != MPI_SUCCESS)
				rc = must(i, "MPI_File_set_view (another rank's view)");
			if (agree(rc))
				return -1;
		}
		if (st->sep == 1)
			MPI_Barrier(MPI_COMM_WORLD);
		cov.unsync++;
		rc = run_accs(x, p, v, n, 0, 1);
		break;
	}
	if (!coll) {
		*pend = rc;
		return 0;
	}
	if (agree(rc))		/* also: every rank's update of the pointer is in */
		return -1;
	/* MPI_MODE_SEQUENTIAL has no MPI_File_get_position_shared */
	if ((st->type == ST_ORDERED || st->type == ST_SHARED || st->type == ST_SEEKSH) &&
	    !x->j->seq) {
		MPI_Offset sp;
		int mrc = MPI_File_get_position_shared(x->fh, &sp);

		if (mrc != MPI_SUCCESS) {
			*pend = must(mrc, "MPI_File_get_position_shared");
		} else if (st->sp_after >= 0 && sp != st->sp_after) {
			x->bad = 1;
			fail("phase %d step %d (%s): MPI_File_get_position_shared says %lld, "
			     "expected %lld", p, s, st_names[st->type], (long long)sp,
			     (long long)st->sp_after);
		}
	}
	return 0;
}

/* MPI_File_open of the job's file on comm, with the job's hints */
int
open_file(struct run_ctx *x, MPI_Comm comm, int amode, MPI_File *fh)
{
	MPI_Info info;
	int rc;

	/*
	 * ROMIO's data sieving and collective buffering write whole stretches
	 * of a new file, holes and all, from buffers it never initialised:
	 * the holes of the reference would hold garbage
	 */
	MPI_Info_create(&info);
	MPI_Info_set(info, "romio_ds_write", "disable");
	MPI_Info_set(info, "romio_cb_write", "disable");
	/* and its two-phase read aborts in ADIOI_Calc_aggregator() under some
	 * views (hindexed_block(3,[1@0,1@24,1@32],subarray(F,2,sub 1 at 0))) */
	MPI_Info_set(info, "romio_cb_read", "disable");
	rc = MPI_File_open(comm, x->file, amode, info, fh);
	MPI_Info_free(&info);
	if (rc != MPI_SUCCESS) {
		*fh = MPI_FILE_NULL;
		return must(rc, comm == MPI_COMM_WORLD ? "MPI_File_open" :
			    comm == MPI_COMM_SELF ? "MPI_File_open (MPI_COMM_SELF alias)" :
			    "MPI_File_open (MPI_Comm_dup alias)");
	}
	MPI_File_set_errhandler(*fh, MPI_ERRORS_RETURN);
	return 0;
}

/* the aliases of mask that are open: closed (before the first handle,
 * always: the library's aliases cannot outlive it); every rank agrees */
int
close_alias(struct run_ctx *x, int mask)
{
	int rc = 0, mrc, k;

	for (k = AL_SELF; k <= AL_DUP; k++) {
		if (!(x->alias_kind & mask & k))
			continue;
		if (x->al[k] != MPI_FILE_NULL) {
			mrc = MPI_File_close(&x->al[k]);
			if (mrc != MPI_SUCCESS && !rc)
				rc = must(mrc, k == AL_SELF ? "MPI_File_close (MPI_COMM_SELF alias)"
					  : "MPI_File_close (MPI_Comm_dup alias)");
		}
		if (k == AL_DUP)
			MPI_Comm_free(&x->dupc);
		x->al[k] = MPI_FILE_NULL;
		x->alias_kind &= ~k;
	}
	return agree(rc);
}

/* the aliases of the phase that are not open yet */
int
open_alias(struct run_ctx *x, const struct phase *ph)
{
	int rc = 0;

	if ((ph->alias & AL_SELF) && !(x->alias_kind & AL_SELF)) {
		/* as PnetCDF's independent mode: RDWR */
		x->alias_kind |= AL_SELF;
		rc = open_file(x, MPI_COMM_SELF, MPI_MODE_RDWR, &x->al[AL_SELF]);
		cov.alias[AL_SELF]++;
	}
	if ((ph->alias & AL_DUP) && !(x->alias_kind & AL_DUP)) {
		x->alias_kind |= AL_DUP;
		MPI_Comm_dup(MPI_COMM_WORLD, &x->dupc);
		MPI_Comm_set_errhandler(x->dupc, MPI_ERRORS_RETURN);
		if (open_file(x, x->dupc, ph->amode & ~(MPI_MODE_CREATE | MPI_MODE_EXCL),
			      &x->al[AL_DUP]))
			rc = -1;
		cov.alias[AL_DUP]++;
	}
	return agree(rc);
}

/* every open handle synced (MPI 4.1 14.6.1: sync, barrier, sync) */
int
sync_all(struct run_ctx *x)
{
	int rc = MPI_File_sync(x->fh);

	if (rc != MPI_SUCCESS)
		rc = must(rc, "MPI_File_sync");
	if (!rc && x->al[AL_SELF] != MPI_FILE_NULL &&
	    (rc = MPI_File_sync(x->al[AL_SELF])) != MPI_SUCCESS)
		rc = must(rc, "MPI_File_sync (MPI_COMM_SELF alias)");
	if (!rc && x->al[AL_DUP] != MPI_FILE_NULL &&
	    (rc = MPI_File_sync(x->al[AL_DUP])) != MPI_SUCCESS)
		rc = must(rc, "MPI_File_sync (MPI_Comm_dup alias)");
	return agree(rc);
}

/* close the file; remove it (rank 0) if recreate; open it with amode */
int
reopen(struct run_ctx *x, const struct phase *ph)
{
	int rc = 0, mrc;

	if (close_alias(x, AL_SELF | AL_DUP))
		return -1;
	mrc = MPI_File_close(&x->fh);
	if (mrc != MPI_SUCCESS)
		rc = must(mrc, "MPI_File_close (to open it again)");
	if (agree(rc))
		return -1;
	if (ph->reopen == RO_RECREATE && me == 0) {
		if (ph->rmhow == RM_DELETE) {
			mrc = MPI_File_delete(x->file, MPI_INFO_NULL);
			if (mrc != MPI_SUCCESS)
				rc = must(mrc, "MPI_File_delete");
		} else if ((ph->rmhow == RM_UNLINK ? unlink(x->file) : remove(x->file)) != 0) {
			rc = fail("%s '%s': %m", rm_names[ph->rmhow], x->file);
		}
	}
	cov.reopen[ph->reopen]++;
	if (ph->reopen == RO_RECREATE)
		cov.rm[ph->rmhow]++;
	MPI_Barrier(MPI_COMM_WORLD);
	if (agree(rc))
		return -1;
	return agree(open_file(x, MPI_COMM_WORLD, ph->amode, &x->fh));
}

/* MPI_File_set_view of one handle to view v; a view at
 * MPI_DISPLACEMENT_CURRENT must land at v->disp */
int
set_view(MPI_File fh, const struct phase *ph, const struct view *v, const char *what)
{
	char name[96];
	MPI_Offset disp;
	MPI_Datatype et, ft;
	char rep[MPI_MAX_DATAREP_STRING + 1];
	int rc, ni, na, nd, comb;

	rc = MPI_File_set_view(fh, ph->dispcur ? MPI_DISPLACEMENT_CURRENT : v->disp,
			       ph->et->t, v->ft->t, "native", MPI_INFO_NULL);
	snprintf(name, sizeof(name), "MPI_File_set_view%s%s", ph->dispcur ?
		 " (MPI_DISPLACEMENT_CURRENT)" : "", what);
	if (rc != MPI_SUCCESS)
		return must(rc, name);
	if (!ph->dispcur)
		return 0;
	rc = MPI_File_get_view(fh, &disp, &et, &ft, rep);
	if (rc != MPI_SUCCESS)
		return must(rc, "MPI_File_get_view");
	if (MPI_Type_get_envelope(et, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
	    comb != MPI_COMBINER_NAMED)
		MPI_Type_free(&et);
	if (MPI_Type_get_envelope(ft, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
	    comb != MPI_COMBINER_NAMED)
		MPI_Type_free(&ft);
	if (disp != v->disp)
		return fail("%s: MPI_File_get_view says displacement %lld, expected %lld "
			    "(the shared pointer's byte)", name, (long long)disp,
			    (long long)v->disp);
	return 0;
}

int
run_phase(struct run_ctx *x, int p)
{
	struct phase *ph = &x->j->ph[p];
	struct view *v = &ph->v[me];
	int rc, s, pend = 0;

	/* handles the phase has not: they go (all of them before a reopen) */
	if (close_alias(x, ph->reopen ? AL_SELF | AL_DUP : ~ph->alias))
		return -1;
	if (ph->reopen) {
		if (reopen(x, ph))
			return -1;
	} else if (p > 0 && !x->j->rd) {	/* MPI 4.1 14.6.1: sync, barrier, sync */
		if (sync_all(x))
			return -1;
		MPI_Barrier(MPI_COMM_WORLD);
		if (sync_all(x))
			return -1;
	}
	if (ph->alias != x->alias_kind && open_alias(x, ph))
		return -1;
	ty_check(v->ft);
	cov_ty(cov.fctor, v->ft);
	cov.kind[ph->kind]++;
	cov.et[ph->etk]++;
	cov.phases++;
	if (ph->overlap)
		cov.overlaps++;
	if (ph->dispcur)
		cov.dispcur++;
	rc = 0;
	if (ph->badcur) {	/* only MPI_MODE_SEQUENTIAL takes it */
		int cls = -1, mrc = MPI_File_set_view(x->fh, MPI_DISPLACEMENT_CURRENT,
						      ph->et->t, v->ft->t, "native",
						      MPI_INFO_NULL);

		MPI_Error_class(mrc, &cls);
		if (cls != MPI_ERR_ARG)
			rc = fail("MPI_File_set_view (MPI_DISPLACEMENT_CURRENT) of a file not "
				  "opened MPI_MODE_SEQUENTIAL returns error class %d, not "
				  "MPI_ERR_ARG", cls);
		cov.badcur++;
	}
	if (!rc)
		rc = set_view(x->fh, ph, v, "");
	/* the aliases' own views: the same as the rank's */
	if (!rc && x->al[AL_SELF] != MPI_FILE_NULL)
		rc = set_view(x->al[AL_SELF], ph, v, " (MPI_COMM_SELF alias)");
	if (!rc && x->al[AL_DUP] != MPI_FILE_NULL)
		rc = set_view(x->al[AL_DUP], ph, v, " (MPI_Comm_dup alias)");
	if (agree(rc))
		return -1;
	for (s = 0; s < ph->nst; s++)
		if (run_step(x, p, s, &pend))
			return -1;
	return agree(pend);
}

/* FILE with '@' the seed */
char *
subst(const char *pat, uint64_t seed)
{
	const char *at = strchr(pat, '@');

	if (!at)
		return fmt("%s", pat);
	return fmt("%.*s%" PRIu64 "%s", (int)(at - pat), pat, seed, at + 1);
}

int
write_model(const struct job *j, const char *path)
{
	FILE *f = fopen(path, "wb");
	int rc = 0;

	if (!f)
		return fail("cannot create '%s'", path);
	if (j->m.size && fwrite(j->m.img, 1, (size_t)j->m.size, f) != (size_t)j->m.size)
		rc = -1;
	if (fclose(f) || rc)
		return fail("cannot write '%s'", path);
	return 0;
}

void
report_failure(const struct job *j, const char *file, const char *argv0)
{
	if (me != 0)
		return;
	fprintf(stderr, "%s: seed %" PRIu64 ": FAILED%s: reproduce: mpiexec -n %d %s %s %"
		PRIu64 " %s%s\n", prog, j->seed, tester_bug ? " (tester bug)" : "",
		np, argv0, j->rd ? "read" : "write", j->seed, file, o.cmdline);
	fprintf(stderr, "%s: seed %" PRIu64 ": the whole job: %s describe %" PRIu64
		" --nprocs=%d%s\n", prog, j->seed, argv0, j->seed, np, o.cmdline);
	describe_job(stderr, j, 0, "mpi_fuzzio:   ");
}

int
run_job(uint64_t seed, const char *argv0)
{
	struct job j;
	struct run_ctx x = { .j = &j, .fh = MPI_FILE_NULL,
			     .al = { MPI_FILE_NULL, MPI_FILE_NULL, MPI_FILE_NULL },
			     .alias_kind = AL_NONE };
	char *file = subst(o.file, seed), *dump = NULL;
	int rc = 0, p, tb;

	x.file = file;

	set_cur_seed(seed);
	tester_bug = 0;
	memset(&j, 0, sizeof(j));
	if (o.mode == MODE_READ) {
		struct job w;

		memset(&w, 0, sizeof(w));
		gen_job(&w, seed, o.writers, 0);
		j.m = w.m;	/* the file the write job made */
		job_free(&w, 1);
		gen_job(&j, seed, np, 1);
	} else {
		gen_job(&j, seed, np, 0);
	}
	if (o.describe && me == 0)
		describe_job(stdout, &j, 1, "");
	if (o.model && me == 0 && o.mode == MODE_WRITE) {
		char *m = subst(o.model, seed);

		rc = write_model(&j, m);
		free(m);
	}
	if (o.dump) {
		char *d = subst(o.dump, seed);

		dump = fmt("%s.%d", d, me);
		free(d);
		x.dump = fopen(dump, "w");
		if (!x.dump)
			rc = fail("cannot create '%s'", dump);
	}
	if (agree(rc || tester_bug))
		goto out;
	if (o.mode == MODE_WRITE) {	/* a job starts from no file */
		if (me == 0)
			MPI_File_delete(file, MPI_INFO_NULL);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	if (j.seq)
		cov.seq++;
	rc = open_file(&x, MPI_COMM_WORLD, j.amode, &x.fh);
	if (agree(rc))
		goto close;
	if (j.rd && me == 0) {
		MPI_Offset size;
		int mrc = MPI_File_get_size(x.fh, &size);

		if (mrc != MPI_SUCCESS) {
			rc = must(mrc, "MPI_File_get_size");
		} else if (size != j.m.size) {
			x.bad = 1;
			fail("MPI_File_get_size says %lld, the model %lld", (long long)size,
			     (long long)j.m.size);
		}
	}
	if (agree(rc))
		goto close;
	for (p = 0; p < j.nph && !rc; p++)
		rc = run_phase(&x, p);
close:
	if (close_alias(&x, AL_SELF | AL_DUP))	/* before the first handle's close */
		rc = -1;
	if (x.fh != MPI_FILE_NULL) {
		int mrc = MPI_File_close(&x.fh);

		if (mrc != MPI_SUCCESS)
			rc = must(mrc, "MPI_File_close");
	}
out:
	if (x.dump && fclose(x.dump))
		rc = fail("cannot write '%s'", dump);
	tb = tester_bug;
	rc = agree(rc || x.bad || tb);
	MPI_Allreduce(MPI_IN_PLACE, &tb, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	tester_bug = tb;
	cov.jobs++;
	if (rc) {
		cov.failed++;
		report_failure(&j, file, argv0);
	}
	free(file);
	free(dump);
	job_free(&j, 0);
	pool_free();
	return rc;
}
