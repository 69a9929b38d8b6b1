/*
 * layout.c - opening a split file: load the marker and the location files,
 * cross-check all metadata against each other and the parts, and hold the
 * parts open on demand.  Mapping a logical range is layout_map.c, reading
 * layout_read.c, coverage and stat-layout's full check layout_check.c.
 * No MPI calls: stat-layout runs without MPI_Init.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "layout_impl.h"
#include "view_impl.h"

/* ------------------------------------------------------------- paths */

char *
gfsp_part_path(const char *dir, int rank)
{
	char *s;

	return asprintf(&s, "%s/part.%d", dir, rank) < 0 ? NULL : s;
}

uint64_t
gfsp_parts_allocated(const char *dir, int nprocs)
{
	struct gfsp_stat st;
	uint64_t sum = 0;
	char *p;
	int r;

	for (r = 0; r < nprocs; r++) {
		p = gfsp_part_path(dir, r);
		if (p != NULL && gfsp_stat(p, &st, NULL) == 0)
			sum += st.blocks_bytes;
		free(p);
	}
	return sum;
}

uint64_t
gfsp_layout_allocated(const struct gfsp_layout *l)
{
	return gfsp_parts_allocated(l->path, l->nprocs);
}

int
gfsp_layout_sparse(const struct gfsp_layout *l)
{
	uint64_t sizes = 0;
	int r;

	for (r = 0; r < l->nprocs; r++)
		sizes += l->part_size[r];
	return gfsp_layout_allocated(l) < sizes;
}

char *
gfsp_loc_path(const char *dir, int node)
{
	char *s;

	return asprintf(&s, "%s/loc.%d", dir, node) < 0 ? NULL : s;
}

char *
gfsp_marker_path(const char *dir)
{
	char *s;

	return asprintf(&s, "%s/%s", dir, GFSP_MARKER_NAME) < 0 ? NULL : s;
}

int
gfsp_has_marker(const char *dir)
{
	struct gfsp_stat st;
	char *marker = gfsp_marker_path(dir);
	int yes = marker != NULL && gfsp_stat(marker, &st, NULL) == 0;

	free(marker);
	return yes;
}

/* -------------------------------------------------------------- open */

static int
view_held(const struct gfsp_view *v)
{
	return v->off != NULL || v->len != NULL || v->pre != NULL ||
	    v->index != NULL;
}

void
gfsp_layout_close(struct gfsp_layout *l)
{
	struct gfsp_error e;
	int r;

	if (l == NULL)
		return;
	/* Only the entries a location file filled are freed: the others
	 * are as calloc left them, and writing them would commit memory
	 * for every rank the marker claims (2^24 ranks: gigabytes, for a
	 * corrupt marker whose loc.0 is refused). */
	for (r = 0; r < l->nprocs; r++) {
		if (l->parts != NULL && l->parts[r] != NULL) {
			gfsp_error_clear(&e);
			gfsp_close(l->parts[r], &e);
		}
		if (l->views != NULL && view_held(&l->views[r]))
			gfsp_view_free(&l->views[r]);
		if (l->recs != NULL && (view_held(&l->recs[r].view) ||
		    l->recs[r].xviews != NULL || l->recs[r].runs != NULL))
			gfsp_locrec_free(&l->recs[r]);
	}
	free(l->parts);
	free(l->views);
	free(l->recs);
	free(l->part_size);
	free(l->part_hash);
	free(l->node_of);
	free(l->host);
	free(l->node_name);
	free(l->verified);
	gfsp_layout_readcheck_free(l);
	free(l->open_list);
	free(l->path);
	if (l->held)
		pthread_mutex_destroy(&l->vlock);
	free(l);
}

/* GFSP_O_NOFOLLOW refuses a link or a FIFO with GFSP_EINVAL: in a split
 * directory that is corrupt metadata, as a part that is no file is */
static int
as_corrupt(int rc)
{
	return rc == GFSP_EINVAL ? GFSP_ECORRUPT : rc;
}

/* a marker is a hundred bytes or so; anything this long is not one */
#define MARKER_MAX	((size_t)64 << 10)

/* dir holds a part or a location file (a writer that did not commit) */
static int
has_parts(const char *dir)
{
	char **names = NULL;
	size_t n = 0, i;
	int found = 0;

	if (gfsp_readdir(dir, &names, &n, NULL) != 0)
		return 1;	/* cannot tell: the commoner cause */
	for (i = 0; i < n && !found; i++)
		found = strncmp(names[i], "part.", 5) == 0 ||
			strncmp(names[i], "loc.", 4) == 0;
	gfsp_strv_free(names, n);
	return found;
}

/* gfsp_split_version, and OUT *raw, *rawlen (if raw is not NULL): the
 * marker's bytes, for gfsp_layout_open_comm to pass on */
static int
split_version_raw(const char *dir, uint64_t *version, struct gfsp_marker *m,
		  unsigned char **raw, size_t *rawlen, struct gfsp_error *err)
{
	struct gfsp_marker tmp;
	struct gfsp_stat st;
	struct gfsp_error rerr;
	unsigned char *buf = NULL;
	size_t len = 0;
	char *path;
	int rc;

	path = gfsp_marker_path(dir);
	if (path == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	/* the identity and the bytes of one file: both from one handle */
	gfsp_error_clear(&rerr);
	rc = gfsp_read_whole_stat(path, GFSP_O_NOFOLLOW, MARKER_MAX, &buf, &len,
	    &st, &rerr);
	if (rc == GFSP_ENOENT && !has_parts(dir))
		rc = gfsp_error_set(err, GFSP_ENOTSPLIT,
		    "'%s' is not a split file (no %s, no parts, no location "
		    "files)", dir, GFSP_MARKER_NAME);
	else if (rc == GFSP_ENOENT)
		rc = gfsp_error_set(err, GFSP_ENOTSPLIT,
		    "'%s' is not a complete split file (no %s: the writer "
		    "did not commit)", dir, GFSP_MARKER_NAME);
	else if (rc)
		rc = gfsp_error_set(err, as_corrupt(rc), "%s", rerr.msg);
	else
		rc = gfsp_marker_decode(buf, len, path, m != NULL ? m : &tmp,
		    err);
	if (rc == 0)
		*version = gfsp_file_key(path, &st);
	if (rc == 0 && raw != NULL) {
		*raw = buf;
		*rawlen = len;
		buf = NULL;
	}
	free(buf);
	free(path);
	return rc;
}

int
gfsp_split_version(const char *dir, uint64_t *version, struct gfsp_marker *m,
		   struct gfsp_error *err)
{
	return split_version_raw(dir, version, m, NULL, NULL, err);
}

/* ------------------------------------------- where the metadata comes from
 *
 * An open reads the marker and the location files from the directory,
 * unless l->in holds them: the bytes another rank read, as
 * gfsp_layout_open_comm passes them on; l->out collects them so:
 *
 *   u64 version | u64 n | marker (n bytes) | u64 n | loc.0 | ... | loc.K-1
 */
static int
meta_put(struct gfsp_meta_bytes *o, const void *p, size_t n,
	 struct gfsp_error *err)
{
	if (n > SIZE_MAX / 4 - o->len ||
	    gfsp_grow(&o->buf, &o->cap, o->len + n, 1) != 0)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	return 0;
}

/* Append a u64 and, unless buf is NULL, the n bytes of buf. */
static int
meta_keep(struct gfsp_meta_bytes *o, uint64_t n, const void *buf,
	  struct gfsp_error *err)
{
	unsigned char le[8];

	if (o == NULL)
		return 0;
	gfsp_put_le64(le, n);
	if (meta_put(o, le, 8, err) != 0 ||
	    (buf != NULL && meta_put(o, buf, (size_t)n, err) != 0))
		return GFSP_ENOMEM;
	return 0;
}

/* Index l->in: where each file starts (at[0] the marker's). */
static int
meta_index(struct gfsp_layout *l, struct gfsp_error *err)
{
	struct gfsp_meta_bytes *in = l->in;
	size_t pos = 8, cap = 0;
	uint64_t n;

	while (in->len >= 8 && pos < in->len) {
		if (in->len - pos < 8 ||
		    (n = gfsp_le64(in->buf + pos)) > in->len - pos - 8)
			goto bad;
		if (gfsp_grow(&in->at, &cap, in->nat + 1,
		    sizeof(*in->at)) != 0)
			return gfsp_error_set(err, GFSP_ENOMEM,
			    "out of memory");
		in->at[in->nat++] = pos;
		pos += 8 + (size_t)n;
	}
	if (in->nat > 0)
		return 0;
bad:
	return gfsp_error_set(err, GFSP_ECORRUPT, "'%s': the metadata another "
	    "rank read is truncated", l->path);
}

/* File i of l->in (0: the marker, 1 + k: loc.k). */
static void
meta_file(const struct gfsp_layout *l, size_t i, const unsigned char **p,
	  size_t *n)
{
	const unsigned char *at = l->in->buf + l->in->at[i];

	*n = (size_t)gfsp_le64(at);
	*p = at + 8;
}

static int
load_marker(struct gfsp_layout *l, struct gfsp_error *err)
{
	const unsigned char *p;
	unsigned char *raw = NULL;
	char *path;
	size_t len = 0;
	int rc;

	if (l->in == NULL) {
		rc = split_version_raw(l->path, &l->version, &l->marker,
		    l->out != NULL ? &raw : NULL, &len, err);
		if (rc == 0 && (meta_keep(l->out, l->version, NULL, err) ||
		    meta_keep(l->out, len, raw, err)))
			rc = GFSP_ENOMEM;
		free(raw);
		return rc;
	}
	rc = meta_index(l, err);
	if (rc)
		return rc;
	l->version = gfsp_le64(l->in->buf);
	meta_file(l, 0, &p, &len);
	path = gfsp_marker_path(l->path);
	rc = path == NULL ? gfsp_error_set(err, GFSP_ENOMEM, "out of memory") :
	     gfsp_marker_decode(p, len, path, &l->marker, err);
	free(path);
	if (rc == 0 && l->in->nat != 1 + (size_t)l->marker.nnodes)
		rc = gfsp_error_set(err, GFSP_ECORRUPT, "'%s': another rank "
		    "read %zu location files, the marker records %u", l->path,
		    l->in->nat - 1, l->marker.nnodes);
	return rc;
}

/* What layout_alloc() and gfsp_layout_open() take per rank and per node. */
#define RANK_BYTES	(sizeof(struct gfsp_view) + sizeof(struct gfsp_locrec) + \
			 2 * sizeof(uint64_t) + 2 * sizeof(int) + GFSP_NAME_MAX + \
			 sizeof(struct gfsp_file *) + 1)
#define NODE_BYTES	GFSP_NAME_MAX

static int load_locfile(struct gfsp_layout *l, int k, int *seen,
			struct gfsp_error *err);

/* Count `bytes` more against GFSP_OPEN_MEM_MAX. */
static int
budget(struct gfsp_layout *l, uint64_t bytes, const char *what,
       struct gfsp_error *err)
{
	if (bytes <= GFSP_OPEN_MEM_MAX && l->mem <= GFSP_OPEN_MEM_MAX - bytes) {
		l->mem += bytes;
		return 0;
	}
	return gfsp_error_set(err, GFSP_ENOMEM, "'%s': opening it needs more "
	    "than the %llu MiB one open may use (%s)", l->path,
	    (unsigned long long)(GFSP_OPEN_MEM_MAX >> 20), what);
}

/*
 * Before anything is allocated for the marker's counts: every location
 * file is there, is a regular file, and together they have room for
 * nprocs records; the tables and the location files fit the budget.  A
 * 66-byte marker claiming 2^24 ranks costs nnodes lstat calls at most.
 */
static int
check_counts(struct gfsp_layout *l, struct gfsp_error *err)
{
	struct gfsp_stat st;
	struct gfsp_error serr;
	const unsigned char *p;
	uint64_t room = 0, bytes = 0, sz;
	char *path, what[160];
	size_t n;
	int k, rc = 0;

	for (k = 0; rc == 0 && k < l->nnodes; k++) {
		if (l->in != NULL) {	/* the files another rank read */
			meta_file(l, 1 + (size_t)k, &p, &n);
			room += gfsp_locfile_max_records(n);
			bytes += n;
			continue;
		}
		path = gfsp_loc_path(l->path, k);
		if (path == NULL)
			return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
		gfsp_error_clear(&serr);
		rc = gfsp_lstat(path, &st, &serr);
		if (rc == GFSP_ENOENT)
			rc = gfsp_error_set(err, GFSP_ENOENT, "%s: missing "
			    "location file (%s records %d nodes)", path,
			    GFSP_MARKER_NAME, l->nnodes);
		else if (rc)
			rc = gfsp_error_set(err, rc, "%s", serr.msg);
		else if (S_ISLNK(st.mode))
			rc = gfsp_error_set(err, GFSP_ECORRUPT, "'%s': a "
			    "symbolic link (not followed)", path);
		else if (!S_ISREG(st.mode))
			rc = gfsp_error_set(err, GFSP_ECORRUPT, "'%s': not a "
			    "regular file", path);
		/* past 2 GiB a file is refused when read (1 GiB at most),
		 * and 2^24 of them cannot overflow the sums */
		sz = rc ? 0 : GFSP_MIN(st.size, (uint64_t)2 << 30);
		room += gfsp_locfile_max_records(sz);
		bytes += sz;
		free(path);
	}
	if (rc)
		return rc;
	if ((uint64_t)l->nprocs <= room)
		goto fits;
	/* a location file's own fault (corrupt, another job's) is the
	 * better message: their sizes bound the decoding */
	for (k = 0; rc == 0 && k < l->nnodes; k++)
		rc = load_locfile(l, k, NULL, err);
	if (rc == 0)
		rc = gfsp_error_set(err, GFSP_ECORRUPT, "%s/%s records %d "
		    "processes but its %d location file%s (%llu bytes) can "
		    "hold at most %llu records", l->path, GFSP_MARKER_NAME,
		    l->nprocs, l->nnodes, l->nnodes == 1 ? "" : "s",
		    (unsigned long long)bytes, (unsigned long long)room);
	return rc;
fits:
	l->loc_counted = bytes;
	snprintf(what, sizeof(what), "%d processes, %d location files of "
	    "%llu bytes", l->nprocs, l->nnodes, (unsigned long long)bytes);
	return budget(l, (uint64_t)l->nprocs * RANK_BYTES +
	    (uint64_t)l->nnodes * NODE_BYTES + 2 * bytes, what, err);
}

/* The arrays of l for l->nprocs ranks and l->nnodes nodes. */
static int
layout_alloc(struct gfsp_layout *l, struct gfsp_error *err)
{
	l->views = calloc(l->nprocs, sizeof(*l->views));
	l->recs = calloc(l->nprocs, sizeof(*l->recs));
	l->part_size = calloc(l->nprocs, sizeof(*l->part_size));
	l->part_hash = calloc(l->nprocs, sizeof(*l->part_hash));
	l->node_of = calloc(l->nprocs, sizeof(*l->node_of));
	l->host = calloc(l->nprocs, sizeof(*l->host));
	l->node_name = calloc(l->nnodes, sizeof(*l->node_name));
	l->parts = calloc(l->nprocs, sizeof(*l->parts));
	l->verified = calloc(l->nprocs, sizeof(*l->verified));
	if (l->views == NULL || l->recs == NULL || l->part_size == NULL ||
	    l->part_hash == NULL || l->node_of == NULL || l->host == NULL ||
	    l->node_name == NULL || l->parts == NULL || l->verified == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM,
		    "'%s': out of memory for %d processes", l->path,
		    l->nprocs);
	return 0;
}

/* Move record r into l (rec is left empty). */
static void
take_record(struct gfsp_layout *l, int r, struct gfsp_locrec *rec)
{
	l->views[r] = rec->view;
	memset(&rec->view, 0, sizeof(rec->view));
	l->recs[r] = *rec;
	memset(rec, 0, sizeof(*rec));
	if (l->recs[r].nruns > 0)
		l->has_runs = 1;
	l->part_size[r] = l->recs[r].part_size;
	l->part_hash[r] = l->recs[r].part_hash;
	snprintf(l->host[r], GFSP_NAME_MAX, "%s", l->recs[r].host);
}

/* Load loc.<k>, cross-check it with the marker and the files before it,
 * and move its records into l.  seen[r]: node that recorded rank r + 1;
 * seen NULL: only decode and cross-check it with the marker (the tables
 * are not there yet). */
static int
load_locfile(struct gfsp_layout *l, int k, int *seen, struct gfsp_error *err)
{
	struct gfsp_locfile lf;
	struct gfsp_error rerr;
	unsigned char *buf = NULL;
	const unsigned char *in;
	size_t len = 0;
	const char *mpath = GFSP_MARKER_NAME;
	char *path;
	uint32_t i;
	int rc, r;

	memset(&lf, 0, sizeof(lf));
	path = gfsp_loc_path(l->path, k);
	if (path == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	gfsp_error_clear(&rerr);
	if (l->in != NULL) {
		meta_file(l, 1 + (size_t)k, &in, &len);
		rc = 0;
	} else {
		rc = gfsp_read_meta(path, &buf, &len, &rerr);
		in = buf;
	}
	if (rc == GFSP_ENOENT) {
		rc = gfsp_error_set(err, GFSP_ENOENT,
		    "%s: missing location file (%s records %d nodes)", path,
		    mpath, l->nnodes);
		goto out;
	}
	if (rc) {
		rc = gfsp_error_set(err, as_corrupt(rc), "%s", rerr.msg);
		goto out;
	}
	/* check_counts() counted the files' sizes: count what they grew */
	l->loc_read += seen != NULL ? len : 0;
	if (l->loc_read > l->loc_counted) {
		rc = budget(l, 2 * (l->loc_read - l->loc_counted), path, err);
		l->loc_counted = l->loc_read;
		if (rc)
			goto out;
	}
	rc = gfsp_locfile_decode(in, len, path, &lf, err);
	if (rc == 0 && seen != NULL && meta_keep(l->out, len, in, err))
		rc = GFSP_ENOMEM;
	if (rc)
		goto out;
	if (lf.nprocs != (uint32_t)l->nprocs) {
		rc = gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s records %u processes but %s/%s records %d", path,
		    lf.nprocs, l->path, mpath, l->nprocs);
		goto out;
	}
	if (lf.nnodes != (uint32_t)l->nnodes) {
		rc = gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s records %u nodes but %s/%s records %d", path,
		    lf.nnodes, l->path, mpath, l->nnodes);
		goto out;
	}
	if (lf.node != (uint32_t)k) {
		rc = gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s says it is location file %u", path, lf.node);
		goto out;
	}
	if (seen == NULL)
		goto out;
	snprintf(l->node_name[k], GFSP_NAME_MAX, "%s", lf.node_name);
	for (i = 0; i < lf.nrecs; i++) {
		struct gfsp_locrec *rec = &lf.recs[i];

		r = (int)rec->rank;
		if (seen[r]) {
			rc = gfsp_error_set(err, GFSP_ECORRUPT,
			    "%s: rank %d is also recorded in %s/loc.%d", path,
			    r, l->path, seen[r] - 1);
			goto out;
		}
		seen[r] = k + 1;
		/* the record moves into l; lf keeps an empty one */
		take_record(l, r, rec);
		l->node_of[r] = k;
	}
out:
	gfsp_locfile_free(&lf);
	free(buf);
	free(path);
	return rc;
}

/* part.<r> must be a regular file (a link is not followed, and nothing
 * of its target is told) with exactly its recorded size */
int
gfsp_layout_check_part_file(const struct gfsp_layout *l, int r,
			    struct gfsp_error *err)
{
	struct gfsp_stat st;
	struct gfsp_error serr;
	char *path;
	int rc;

	path = gfsp_part_path(l->path, r);
	if (path == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	gfsp_error_clear(&serr);
	rc = gfsp_lstat(path, &st, &serr);
	if (rc == GFSP_ENOENT)
		rc = gfsp_error_set(err, GFSP_ENOENT, "%s: missing part file",
		    path);
	else if (rc)
		rc = gfsp_error_set(err, rc, "%s", serr.msg);
	else if (S_ISLNK(st.mode))
		rc = gfsp_error_set(err, GFSP_ECORRUPT,
		    "'%s': a symbolic link (not followed)", path);
	else if (!S_ISREG(st.mode))
		rc = gfsp_error_set(err, GFSP_ECORRUPT,
		    "'%s': not a regular file", path);
	else if (st.size != l->part_size[r])
		rc = gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s: %llu bytes but loc.%d records %llu (%s)", path,
		    (unsigned long long)st.size, l->node_of[r],
		    (unsigned long long)l->part_size[r],
		    st.size < l->part_size[r] ? "short or truncated part" :
		    "part is longer than recorded");
	free(path);
	return rc;
}

/* The part a held layout holds has its recorded size. */
int
gfsp_layout_check_held_part(const struct gfsp_layout *l, int r,
			    struct gfsp_error *err)
{
	struct gfsp_stat st;
	int rc;

	rc = gfsp_fstat(l->parts[r], &st, err);
	if (rc == 0 && st.size != l->part_size[r])
		rc = gfsp_error_set(err, GFSP_ECORRUPT,
		    "%s/part.%d: %llu bytes but loc.%d records %llu (the part "
		    "changed after it was opened)", l->path, r,
		    (unsigned long long)st.size, l->node_of[r],
		    (unsigned long long)l->part_size[r]);
	return rc;
}

/* The implicit run of a v1 record: the whole view from part offset 0. */
static const struct gfsp_run whole_view = { 0, 0, UINT64_MAX, 0, 0 };

const struct gfsp_run *
gfsp_layout_runs(const struct gfsp_layout *l, int r, uint64_t *n)
{
	if (l->recs[r].nruns == 0) {
		*n = 1;
		return &whole_view;
	}
	*n = l->recs[r].nruns;
	return l->recs[r].runs;
}

const struct gfsp_view *
gfsp_layout_run_view(const struct gfsp_layout *l, int r,
		    const struct gfsp_run *run)
{
	if (run->view == 0)
		return &l->views[r];
	return gfsp_locrec_view(&l->recs[r], run->view);
}

uint64_t
gfsp_run_bytes(const struct gfsp_view *v, const struct gfsp_run *run)
{
	if (v == NULL)
		return run->end - run->begin;
	return gfsp_view_local(v, run->end) - gfsp_view_local(v, run->begin);
}

/*
 * Every byte of part r must have a place in the logical file, and every
 * run's bytes must be in the part: a v1 part longer than its view below
 * the logical size is corrupt, and so is a v2 run that reaches past the
 * end of its part.
 */
int
gfsp_layout_part_fits(const struct gfsp_layout *l, int r,
		      struct gfsp_error *err)
{
	const struct gfsp_run *runs;
	uint64_t below, i, n, bytes;

	if (l->recs[r].nruns > 0) {
		runs = gfsp_layout_runs(l, r, &n);
		for (i = 0; i < n; i++) {
			bytes = gfsp_run_bytes(gfsp_layout_run_view(l, r,
			    &runs[i]), &runs[i]);
			if (runs[i].loff <= l->part_size[r] &&
			    bytes <= l->part_size[r] - runs[i].loff)
				continue;
			return gfsp_error_set(err, GFSP_ECORRUPT,
			    "%s/loc.%d: rank %d run %llu holds %llu bytes at "
			    "part offset %llu, past the end of its %llu-byte "
			    "part", l->path, l->node_of[r], r,
			    (unsigned long long)i, (unsigned long long)bytes,
			    (unsigned long long)runs[i].loff,
			    (unsigned long long)l->part_size[r]);
		}
		return 0;
	}
	below = gfsp_view_bytes_below(&l->views[r], l->marker.logical_size);
	if (l->part_size[r] <= below)
		return 0;
	return gfsp_error_set(err, GFSP_ECORRUPT,
	    "%s/loc.%d: rank %d records %llu part bytes but its view holds "
	    "only %llu below the logical size %llu", l->path, l->node_of[r],
	    r, (unsigned long long)l->part_size[r],
	    (unsigned long long)below,
	    (unsigned long long)l->marker.logical_size);
}

/* One past the last logical byte part r holds (0: none). */
static uint64_t
part_data_end(const struct gfsp_layout *l, int r)
{
	const struct gfsp_view *v;
	const struct gfsp_run *runs;
	uint64_t i, n, avail, base, bytes, last, end = 0;

	runs = gfsp_layout_runs(l, r, &n);
	for (i = 0; i < n; i++) {
		if (runs[i].loff >= l->part_size[r] ||
		    runs[i].begin >= runs[i].end)
			continue;
		avail = l->part_size[r] - runs[i].loff;
		v = gfsp_layout_run_view(l, r, &runs[i]);
		if (v == NULL) {
			end = GFSP_MAX(end, runs[i].begin +
			    GFSP_MIN(avail, runs[i].end - runs[i].begin));
			continue;
		}
		base = gfsp_view_bytes_below(v, runs[i].begin);
		bytes = gfsp_view_bytes_below(v, runs[i].end) - base;
		if (bytes == 0)
			continue;
		last = gfsp_view_global(v, base + GFSP_MIN(avail, bytes) - 1);
		end = GFSP_MAX(end, last == UINT64_MAX ? last : last + 1);
	}
	return end;
}

static void
find_data_end(struct gfsp_layout *l)
{
	int r;

	l->data_end = 0;
	for (r = 0; r < l->nprocs; r++)
		if (l->part_size[r] > 0)
			l->data_end = GFSP_MAX(l->data_end,
			    part_data_end(l, r));
	l->data_end = GFSP_MIN(l->data_end, l->marker.logical_size);
}

static int
verify_env(void)
{
	const char *v = getenv("GFSPLIT_VERIFY");

	return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

void
gfsp_layout_set_verify(struct gfsp_layout *l, int on)
{
	l->verify = on;
}

int
gfsp_layout_from_records(const char *dir, int nprocs, struct gfsp_locrec *recs,
			 uint64_t size, struct gfsp_layout **out,
			 struct gfsp_error *err)
{
	struct gfsp_layout *l;
	int r, rc;

	*out = NULL;
	l = calloc(1, sizeof(*l));
	if (l == NULL || (l->path = strdup(dir)) == NULL) {
		free(l);
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	l->marker.version = GFSP_FORMAT_VERSION;
	l->marker.nprocs = (uint32_t)nprocs;
	l->marker.nnodes = 1;
	l->marker.logical_size = size;
	l->nprocs = nprocs;
	l->nnodes = 1;
	rc = layout_alloc(l, err);
	if (rc) {
		gfsp_layout_close(l);
		return rc;
	}
	for (r = 0; r < nprocs; r++)
		take_record(l, r, &recs[r]);
	find_data_end(l);
	*out = l;
	return 0;
}

int
gfsp_layout_load(const char *path, struct gfsp_meta_bytes *in,
		 struct gfsp_meta_bytes *keep, struct gfsp_layout **out,
		 struct gfsp_error *err)
{
	struct gfsp_layout *l;
	struct gfsp_stat st;
	int *seen = NULL;
	size_t n;
	int rc, r, k;

	*out = NULL;
	/* bytes another rank read: it looked at the directory */
	rc = in != NULL ? 0 : gfsp_stat(path, &st, err);
	if (rc)
		return rc;
	if (in == NULL && !S_ISDIR(st.mode))
		return gfsp_error_set(err, GFSP_ENOTSPLIT,
		    "'%s' is not a split file (not a directory)", path);
	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	l->in = in;
	l->out = keep;
	l->path = strdup(path);
	if (l->path == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
		goto fail;
	}
	/* "x.split/" and "x.split" name the same thing in messages */
	n = strlen(l->path);
	while (n > 1 && l->path[n - 1] == '/')
		l->path[--n] = '\0';
	rc = load_marker(l, err);
	if (rc)
		goto fail;
	/* the decoder bounds both counts (nprocs <= 2^24); the files
	 * bound them before anything is allocated for them */
	l->nprocs = (int)l->marker.nprocs;
	l->nnodes = (int)l->marker.nnodes;
	rc = check_counts(l, err);
	if (rc)
		goto fail;
	rc = layout_alloc(l, err);
	if (rc)
		goto fail;
	seen = calloc(l->nprocs, sizeof(*seen));
	if (seen == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
		goto fail;
	}
	for (k = 0; k < l->nnodes; k++) {
		rc = load_locfile(l, k, seen, err);
		if (rc)
			goto fail;
	}
	for (r = 0; r < l->nprocs; r++)
		if (!seen[r]) {
			rc = gfsp_error_set(err, GFSP_ECORRUPT,
			    "'%s': rank %d is not recorded in any location "
			    "file", l->path, r);
			goto fail;
		}
	for (r = 0; r < l->nprocs; r++) {
		/* the parts: checked by the rank that read the files */
		rc = in != NULL ? 0 : gfsp_layout_check_part_file(l, r, err);
		if (rc)
			goto fail;
		rc = gfsp_layout_part_fits(l, r, err);
		if (rc)
			goto fail;
	}
	find_data_end(l);
	l->verify = verify_env();
	l->in = l->out = NULL;
	free(seen);
	*out = l;
	return 0;
fail:
	free(seen);
	gfsp_layout_close(l);
	return rc;
}

int
gfsp_layout_open(const char *path, struct gfsp_layout **out,
		struct gfsp_error *err)
{
	return gfsp_layout_load(path, NULL, NULL, out, err);
}

void
gfsp_meta_bytes_free(struct gfsp_meta_bytes *m)
{
	free(m->buf);
	free(m->at);
	memset(m, 0, sizeof(*m));
}

int
gfsp_layout_open_held(const char *path, struct gfsp_layout **out,
		      uint64_t *version, struct gfsp_error *err)
{
	struct gfsp_layout *l = NULL;
	struct gfsp_file *f;
	struct gfsp_error verr;
	uint64_t before, now;
	int try, r, rc;

	*out = NULL;
	for (try = 0; try < 3; try++) {
		rc = gfsp_split_version(path, &before, NULL, err);
		if (rc)
			return rc;
		rc = gfsp_layout_open(path, &l, err);
		if (rc == 0) {
			l->held = 1;
			pthread_mutex_init(&l->vlock, NULL);
		}
		for (r = 0; rc == 0 && r < l->nprocs; r++)
			rc = gfsp_layout_part(l, r, &f, err);
		/* one version from before the marker was read until every
		 * part is open: everything loaded and held is of it.  A
		 * failure (a part gone, metadata of two versions) while the
		 * version changed is that change, and the open is tried
		 * again */
		gfsp_error_clear(&verr);
		if (gfsp_split_version(path, &now, NULL, &verr) == 0 &&
		    now == before && (l == NULL || l->version == before)) {
			if (rc) {
				gfsp_layout_close(l);
				return rc;
			}
			*out = l;
			*version = now;
			return 0;
		}
		gfsp_layout_close(l);
		l = NULL;
		if (err != NULL)
			gfsp_error_clear(err);
	}
	return gfsp_error_set(err, GFSP_ESTALE,
	    "'%s' changed %d times while it was being opened", path, try);
}

uint64_t
gfsp_layout_size(const struct gfsp_layout *l)
{
	return l->marker.logical_size;
}

int
gfsp_layout_nprocs(const struct gfsp_layout *l)
{
	return l->nprocs;
}

const struct gfsp_view *
gfsp_layout_view(const struct gfsp_layout *l, int rank)
{
	if (rank < 0 || rank >= l->nprocs)
		return NULL;
	return &l->views[rank];
}

/*
 * Parts stay open once used, but a split file may have more parts than a
 * process may hold descriptors: past open_max (max_open()), every cached
 * part is closed before the next one opens.  The ranks of the open parts
 * are listed (l->open_list), so that counting and closing them costs
 * nothing per rank of the file: a merge of 16 Ki parts opens each part
 * several times.  So a file returned by gfsp_layout_part() is valid until
 * the next call of it or gfsp_layout_close().  A held layout keeps every
 * part and lists none.
 */
static int
max_open(void)
{
	struct rlimit rl;
	rlim_t n = 256;

	/* a quarter of the descriptors, the rest is the caller's */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		n = GFSP_MIN(n, rl.rlim_cur / 4);
	return (int)GFSP_MAX(n, (rlim_t)4);
}

static void
close_parts(struct gfsp_layout *l)
{
	struct gfsp_error e;
	int i, r;

	for (i = 0; i < l->nopen; i++) {
		r = l->open_list[i];
		gfsp_error_clear(&e);
		gfsp_close(l->parts[r], &e);	/* read-only */
		l->parts[r] = NULL;
	}
	l->nopen = 0;
}

/* Room in the list for one more open part (closing them all if full). */
static int
make_room(struct gfsp_layout *l, struct gfsp_error *err)
{
	if (l->open_list == NULL) {
		l->open_max = max_open();
		l->open_list = malloc((size_t)l->open_max *
		    sizeof(*l->open_list));
		if (l->open_list == NULL)
			return gfsp_error_set(err, GFSP_ENOMEM,
			    "out of memory");
	}
	if (l->nopen >= l->open_max)
		close_parts(l);
	return 0;
}

int
gfsp_layout_part(struct gfsp_layout *l, int rank, struct gfsp_file **f,
		struct gfsp_error *err)
{
	char *path;
	int rc;

	if (rank < 0 || rank >= l->nprocs)
		return gfsp_error_set(err, GFSP_EINVAL,
		    "'%s': no part %d (%d writers)", l->path, rank,
		    l->nprocs);
	if (l->parts[rank] == NULL) {
		/* a held layout keeps every part (and may run out of
		 * descriptors instead: the open fails, naming the part) */
		if (!l->held && (rc = make_room(l, err)) != 0)
			return rc;
		path = gfsp_part_path(l->path, rank);
		if (path == NULL)
			return gfsp_error_set(err, GFSP_ENOMEM,
			    "out of memory");
		rc = gfsp_open(path, GFSP_O_RDONLY | GFSP_O_NOFOLLOW, 0,
		    &l->parts[rank], err);
		free(path);
		if (rc)
			return rc;
		if (!l->held)
			l->open_list[l->nopen++] = rank;
	}
	*f = l->parts[rank];
	return 0;
}

int
gfsp_layout_part_where(const struct gfsp_layout *l, int r, char ***hosts,
		       size_t *n, struct gfsp_error *err)
{
	const struct gfsp_store_ops *ops;
	char *path;
	int rc;

	*hosts = NULL;
	*n = 0;
	rc = gfsp_store_for(l->path, &ops, err);
	if (rc == 0 && ops->places) {
		path = gfsp_part_path(l->path, r);
		if (path == NULL)
			return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
		rc = gfsp_where(path, hosts, n, err);
		free(path);
	}
	if (rc != 0 || *n > 0 || l->host[r][0] == '\0')
		return rc;
	*hosts = malloc(sizeof(**hosts));
	if (*hosts != NULL && ((*hosts)[0] = strdup(l->host[r])) == NULL) {
		free(*hosts);
		*hosts = NULL;
	}
	if (*hosts == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	*n = 1;
	return 0;
}
