/*
 * describe.c - a job on paper: its description, the coverage counts and the model of the file it writes
 * (one part of mpi_fuzzio: fuzzio.h)
 */
#include "fuzzio.h"

struct coverage cov;

/* ---- describing a job ---------------------------------------------------------- */

void
describe_acc(FILE *f, const struct phase *ph, const struct acc *a, const char *pfx)
{
	const char *seek = a->seek == SEEK_SET_ ? " after seek(SET)" :
			   a->seek == SEEK_CUR_ ? " after seek(CUR)" : "";

	fprintf(f, "%sstep %d rank %d access %d: %s%s%s etype-offset %lld count %lld "
		"(%lld bytes) of %s%s%s -> file",
		pfx, a->step, a->rank, a->idx, a->h == AL_SELF ? "(COMM_SELF alias) " :
		a->h == AL_DUP ? "(dup alias) " : "", path_name(a->path, a->rd),
		(a->path & (P_AT | P_SHARED | P_ORDERED)) ? "" : seek,
		(long long)(a->soff / ph->E), (long long)a->count, (long long)a->bytes,
		a->mkind == M_BOTTOM ? "MPI_BOTTOM+hindexed of " :
		a->mkind == M_BOTTOM2 ? "MPI_BOTTOM+struct of 2 buffers of " : "",
		a->m->desc, a->rd && a->want < a->bytes ? " (short: end of file)" : "");
	if (!a->g.n)
		fprintf(f, " nothing");
	else
		fprintf(f, " [%lld, %lld) in %zu runs", (long long)a->g.r[0].off,
			(long long)(a->g.r[a->g.n - 1].off + a->g.r[a->g.n - 1].len), a->g.n);
	fprintf(f, "\n");
}

void
describe_view(FILE *f, const struct phase *ph, int r, const char *pfx)
{
	const struct view *v = &ph->v[r];
	const struct ty *t = v->ft;

	fprintf(f, "%sview of rank %d: disp %lld etype %s filetype %s (size %lld, lb %ld, "
		"extent %ld, bytes at [%lld, %lld) of a tile; %s; %lld stream bytes used)\n",
		pfx, r, (long long)v->disp, ph->et->desc, t->desc, (long long)t->rs.size,
		(long)t->lb, (long)t->ext, (long long)t->tlb, (long long)t->tub, v->how,
		(long long)v->usable);
}

void
describe_job(FILE *f, const struct job *j, int full, const char *pfx)
{
	int p, r, s, i;

	fprintf(f, "%sjob seed %" PRIu64 ": %s, %d ranks, %d phases, %s%s, file size %lld%s\n",
		pfx, j->seed, j->rd ? "reads" : "writes", j->nprocs, j->nph,
		j->amode & MPI_MODE_RDWR ? "RDWR" : j->amode & MPI_MODE_WRONLY ? "WRONLY"
		: "RDONLY", j->seq ? "|SEQUENTIAL" : "", (long long)j->m.size,
		o.overlap ? "" : ", --no-overlap-epochs");
	for (p = 0; p < j->nph; p++) {
		const struct phase *ph = &j->ph[p];

		if (ph->reopen == RO_REOPEN)
			fprintf(f, "%sthe file closed, opened again (%s, no CREATE)\n", pfx,
				ph->amode & MPI_MODE_RDWR ? "RDWR" : "WRONLY");
		else if (ph->reopen == RO_RECREATE)
			fprintf(f, "%sthe file closed, removed by rank 0 (%s), barrier, created "
				"again (CREATE|EXCL|RDWR): the model starts from nothing\n", pfx,
				rm_names[ph->rmhow]);
		fprintf(f, "%sphase %d: %s, etype %s, base %lld%s", pfx, p, kind_names[ph->kind],
			ph->et->desc, (long long)ph->base, ph->dispcur ?
			" (set_view at MPI_DISPLACEMENT_CURRENT)" : "");
		if (ph->alias)
			fprintf(f, ", handles on %s too", alias_names[ph->alias]);
		if (ph->badcur)
			fprintf(f, ", set_view at MPI_DISPLACEMENT_CURRENT refused first");
		if (ph->vshift)
			fprintf(f, ", the read without sync through the view of rank +%d",
				ph->vshift);
		if (ph->overlap)
			fprintf(f, ", rewrites %lld bytes other ranks wrote before",
				(long long)ph->overlap);
		fprintf(f, "; steps:");
		for (s = 0; s < ph->nst; s++)
			fprintf(f, " %s%s%s", s ? "; " : "", st_names[ph->st[s].type],
				ph->st[s].type != ST_UNSYNC ? "" : ph->st[s].sep == 2 ?
				" (no barrier)" : ph->st[s].sep == 1 && ph->vshift ?
				" (set_view, MPI_Barrier)" : " (MPI_Barrier first)");
		fprintf(f, "\n");
		for (r = 0; r < j->nprocs; r++) {
			char pp[64];

			snprintf(pp, sizeof(pp), "%s  ", pfx);
			describe_view(f, ph, r, pp);
		}
		for (i = 0; i < ph->na && full; i++) {
			char pp[64];

			snprintf(pp, sizeof(pp), "%s    ", pfx);
			describe_acc(f, ph, &ph->a[i], pp);
		}
	}
}

/* who wrote (or reads) byte g, and what the model holds there */
void
describe_at(FILE *f, const struct job *j, int64_t g)
{
	int p, i;
	size_t k;

	fprintf(f, "byte %lld: the model holds 0x%02x (file size %lld)\n", (long long)g,
		g < j->m.size ? j->m.img[g] : 0, (long long)j->m.size);
	for (p = 0; p < j->nph; p++) {
		const struct phase *ph = &j->ph[p];

		for (i = 0; i < ph->na; i++) {
			const struct acc *a = &ph->a[i];
			int64_t s = 0;

			for (k = 0; k < a->g.n; k++) {
				if (g >= a->g.r[k].off && g < a->g.r[k].off + a->g.r[k].len) {
					s += g - a->g.r[k].off;
					fprintf(f, "phase %d (%s), stream byte %lld of ", p,
						kind_names[ph->kind], (long long)s);
					if (!a->rd)
						fprintf(f, "a write of 0x%02x: ",
							dbyte(acc_key(j->seed, p, a->rank, a->idx), s));
					else
						fprintf(f, "a read: ");
					describe_acc(f, ph, a, "");
					fprintf(f, "  ");
					describe_view(f, ph, a->vr >= 0 ? a->vr : a->rank, "");
					break;
				}
				s += a->g.r[k].len;
			}
		}
	}
}

/* ---- coverage ---------------------------------------------------------------- */

void
cov_ty(long *tbl, const struct ty *y)
{
	int k;

	tbl[y->ctor]++;
	for (k = 0; k < y->nkid; k++)
		cov_ty(tbl, y->kid[k]);
}

void
cov_print(const char *mode)
{
	long all[sizeof(cov) / sizeof(long)];
	int i, rd;

	MPI_Reduce(&cov, all, (int)(sizeof(cov) / sizeof(long)), MPI_LONG, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	if (me != 0)
		return;
	memcpy(&cov, all, sizeof(cov));
	printf("%s: %s: %ld jobs, %ld failed\n", prog, mode, cov.jobs / np, cov.failed / np);
	printf("%s: coverage: jobs=%ld phases=%ld accesses=%ld bytes=%ld overlap_phases=%ld",
	       prog, cov.jobs / np, cov.phases / np, cov.accesses, cov.bytes, cov.overlaps / np);
	for (i = 0; i < C_NCTOR; i++)
		printf(" file.%s=%ld", ctor_names[i], cov.fctor[i]);
	for (i = 0; i < C_NCTOR; i++)
		printf(" mem.%s=%ld", ctor_names[i], cov.mctor[i]);
	for (i = 0; i < M_N; i++)
		printf(" memkind.%s=%ld", mkind_names[i], cov.mkind[i]);
	for (i = 0; i < K_N; i++)
		printf(" kind.%s=%ld", kind_names[i], cov.kind[i] / np);
	for (i = 0; i < ET_N; i++)
		printf(" etype.%s=%ld", et_names[i], cov.et[i] / np);
	printf(" feat.alias_self=%ld feat.alias_dup=%ld feat.reopen=%ld feat.recreate=%ld"
	       " feat.rm_%s=%ld feat.rm_%s=%ld feat.rm_%s=%ld feat.sequential_jobs=%ld"
	       " feat.view_dispcur=%ld feat.dispcur_refused=%ld feat.unsync_reads=%ld",
	       cov.alias[AL_SELF] / np,
	       cov.alias[AL_DUP] / np, cov.reopen[RO_REOPEN] / np, cov.reopen[RO_RECREATE] / np,
	       rm_names[0], cov.rm[0] / np, rm_names[1], cov.rm[1] / np, rm_names[2],
	       cov.rm[2] / np, cov.seq / np, cov.dispcur / np, cov.badcur / np,
	       cov.unsync / np);
	for (rd = 0; rd < 2; rd++)
		for (i = 0; i < P_N; i++)
			if (cov.path[rd][i])
				printf(" %s=%ld", path_name(i, rd), cov.path[rd][i]);
	printf("\n");
	fflush(stdout);
}

/* ---- describe: a job on paper ---------------------------------------------------- */

int
describe(void)
{
	struct job j;
	int rc = 0;

	set_cur_seed(o.seed);
	if (o.writers) {	/* a read job: the model of the write job first */
		struct job w;

		memset(&w, 0, sizeof(w));
		gen_job(&w, o.seed, o.writers, 0);
		memset(&j, 0, sizeof(j));
		j.m = w.m;
		job_free(&w, 1);
		gen_job(&j, o.seed, o.nprocs, 1);
	} else {
		memset(&j, 0, sizeof(j));
		gen_job(&j, o.seed, o.nprocs, 0);
	}
	if (o.at < 0)
		describe_job(stdout, &j, 1, "");
	else
		describe_at(stdout, &j, o.at);
	if (o.model)
		rc = write_model(&j, o.model);
	job_free(&j, 0);
	pool_free();
	return rc || tester_bug;
}

/*
 * ---- probe: the MPI library's own I/O through memory types.  On one
 * rank, K random memory types (as write jobs make them, seed SEED on),
 * each a random count of it written from memory with write_at, then
 * write_at_all, and read back with read_at and read_at_all, against
 * MPI_Pack and MPI_Unpack; a type the library gets wrong is printed.
 * This is how the rules that keep plain MPICH a valid reference (see
 * --full) were found.
 */
int
probe_one(const struct ty *m, int64_t count, int bottom, const char *file)
{
	struct acc a = { .count = count, .m = (struct ty *)m, .mkind = bottom ? M_BOTTOM : M_CONTIG };
	struct job j = { .seed = cur_seed };
	struct io io;
	MPI_File fh;
	MPI_Status st;
	MPI_Info info;
	unsigned char *want, *got, *mem;
	int64_t n = count * m->rs.size, k;
	int bad = 0, way, rc;
	size_t i;

	if (io_prepare(&j, 0, &a, &io))
		return -1;
	want = xmalloc((size_t)n);
	got = xmalloc((size_t)n);
	/* the byte map, not MPI_Pack: MPICH 4.0.2 packs nothing from MPI_BOTTOM */
	for (i = 0, k = 0; i < io.mr.n; i++) {
		memcpy(want + k, (unsigned char *)(intptr_t)io.mr.r[i].off, (size_t)io.mr.r[i].len);
		k += io.mr.r[i].len;
	}
	MPI_Info_create(&info);
	MPI_Info_set(info, "romio_ds_write", "disable");
	MPI_Info_set(info, "romio_cb_write", "disable");
	for (way = 0; way < 4 && !bad; way++) {
		MPI_File_delete(file, MPI_INFO_NULL);
		rc = MPI_File_open(MPI_COMM_SELF, file, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh);
		if (rc != MPI_SUCCESS) {
			bad = must(rc, "MPI_File_open");
			break;
		}
		memset(got, 0, (size_t)n);
		if (way < 2) {		/* memory -> file */
			rc = way ? MPI_File_write_at_all(fh, 0, io.arg, (int)io.count, io.t, &st)
				 : MPI_File_write_at(fh, 0, io.arg, (int)io.count, io.t, &st);
			if (rc == MPI_SUCCESS)
				rc = MPI_File_read_at(fh, 0, got, (int)n, MPI_BYTE, &st);
		} else {		/* file -> memory, gaps kept */
			rc = MPI_File_write_at(fh, 0, want, (int)n, MPI_BYTE, &st);
			for (i = 0; i < 2; i++)
				if (io.buf[i])
					memset(io.buf[i], SENT_BYTE, io.len[i]);
			if (rc == MPI_SUCCESS)
				rc = way == 3 ? MPI_File_read_at_all(fh, 0, io.arg, (int)io.count, io.t, &st)
					      : MPI_File_read_at(fh, 0, io.arg, (int)io.count, io.t, &st);
			for (i = 0, k = 0; i < io.mr.n; i++) {
				mem = (unsigned char *)(intptr_t)io.mr.r[i].off;
				memcpy(got + k, mem, (size_t)io.mr.r[i].len);
				k += io.mr.r[i].len;
			}
		}
		MPI_File_close(&fh);
		if (rc != MPI_SUCCESS) {
			bad = 1;
			printf("probe: seed %" PRIu64 ": %s fails\n", cur_seed,
			       (const char *[]){ "write_at", "write_at_all", "read_at", "read_at_all" }[way]);
		} else if (memcmp(got, want, (size_t)n)) {
			for (k = 0; got[k] == want[k]; k++)
				;
			bad = 1;
			printf("probe: seed %" PRIu64 ": %s: stream byte %lld of %lld wrong\n", cur_seed,
			       (const char *[]){ "write_at", "write_at_all", "read_at", "read_at_all" }[way],
			       (long long)k, (long long)n);
		}
	}
	if (bad)
		printf("probe: seed %" PRIu64 ":   %lld of %s%s (lb %ld extent %ld, bytes at [%lld, %lld))\n",
		       cur_seed, (long long)count, bottom ? "MPI_BOTTOM+hindexed of " : "", m->desc,
		       (long)m->lb, (long)m->ext, (long long)m->tlb, (long long)m->tub);
	MPI_Info_free(&info);
	free(want);
	free(got);
	io_free(&io);
	return bad;
}

int
probe(void)
{
	int i, bad = 0, kind;
	char *file = fmt("%s", o.file ? o.file : "mpi_fuzzio.probe");

	for (i = 0; i < o.cases; i++) {
		struct gen g = { .mem = 1 };
		struct ty *m;
		int64_t count;

		set_cur_seed(o.seed + (uint64_t)i);
		rnd_seed(mix(cur_seed, 0x50524f4245));
		g.etk = rn(ET_N);
		if (g.etk == ET_INTDBL && !o.full)
			g.etk = ET_IDI;
		g.et = mk_etype(g.etk);
		g.E = (int)g.et->ext;
		m = pick_mem(&g, &kind);
		count = mem_fit(m, 1 + rn(5));
		ty_check(m);
		if (probe_one(m, count, kind == M_BOTTOM, file))
			bad++;
		pool_free();
	}
	MPI_File_delete(file, MPI_INFO_NULL);
	free(file);
	printf("probe: %d of %d memory types wrong\n", bad, o.cases);
	return bad != 0 || tester_bug;
}
