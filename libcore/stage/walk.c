/*
 * walk.c - the list of what a transfer moves (stage.h): source trees and
 * manifests turned into entries, sorted so that a directory comes before
 * what it holds, and packed into bytes to be broadcast.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core.h"
#include "stage.h"

#define OOM(err) gfsp_error_set(err, GFSP_ENOMEM, "out of memory")

static int
flist_push(struct gfsp_flist *l, struct gfsp_sfile **out,
	   struct gfsp_error *err)
{
	if (gfsp_grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v)) != 0)
		return OOM(err);
	*out = &l->v[l->n++];
	memset(*out, 0, sizeof(**out));
	(*out)->node = -1;
	return 0;
}

static void
sfile_free(struct gfsp_sfile *f)
{
	free(f->src);
	free(f->rel);
	free(f->link);
}

void
gfsp_flist_free(struct gfsp_flist *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		sfile_free(&l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int
gfsp_stage_internal_name(const char *name)
{
	return strcmp(name, GFSP_STATE_DIR) == 0 ||
	       (name[0] == '.' && strstr(name, GFSP_STAGE_TMP_TAG) != NULL);
}

/* The first component of path that is one of ours (its length in *len),
 * or NULL. */
static const char *
internal_component(const char *path, size_t *len)
{
	char comp[NAME_MAX + 1];
	const char *p = path;
	size_t n;

	while (*p) {
		n = strcspn(p, "/");
		if (n > 0 && n <= NAME_MAX) {
			memcpy(comp, p, n);
			comp[n] = '\0';
			if (gfsp_stage_internal_name(comp)) {
				*len = n;
				return p;
			}
		}
		p += n;
		while (*p == '/')
			p++;
	}
	return NULL;
}

int
gfsp_stage_check_dst(const char *what, const char *path,
		    struct gfsp_error *err)
{
	const char *c;
	size_t n;

	c = internal_component(path, &n);
	if (c == NULL)
		return 0;
	if (n == strlen(GFSP_STATE_DIR) && strncmp(c, GFSP_STATE_DIR, n) == 0)
		return gfsp_error_set(err, GFSP_EINVAL, "%s'%s' names or enters "
		    "stage's own state directory '%s': refused, nothing "
		    "staged", what, path, GFSP_STATE_DIR);
	return gfsp_error_set(err, GFSP_EINVAL, "%s'%s': '%.*s' is named as "
	    "stage's temporary files are ('.NAME%sKEY.NONCE'): refused, "
	    "nothing staged", what, path, (int)n, c, GFSP_STAGE_TMP_TAG);
}

char *
gfsp_stage_tmp_name(const char *path, const struct gfsp_sfile *f,
		   uint64_t nonce)
{
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	char *s;

	if (asprintf(&s, "%.*s.%s%s%016llx.%016llx", dirlen, path,
		     path + dirlen, GFSP_STAGE_TMP_TAG,
		     (unsigned long long)gfsp_hash64(f->src, strlen(f->src)),
		     (unsigned long long)nonce) < 0)
		return NULL;
	return s;
}


static char *
join(const char *a, const char *b)
{
	char *s;

	if (*a == '\0')
		return strdup(b);
	if (asprintf(&s, "%s%s%s", a, a[strlen(a) - 1] == '/' ? "" : "/",
		     b) < 0)
		return NULL;
	return s;
}

/* One entry for src (lstat'ed as st), then, for a directory, what it
 * holds. */
static int
walk(struct gfsp_flist *l, uint32_t tree, const char *src, const char *rel,
     const struct gfsp_stat *st, struct gfsp_error *err)
{
	struct gfsp_sfile *f;
	struct gfsp_stat cst;
	char **names = NULL, *csrc = NULL, *crel = NULL;
	size_t n = 0, i;
	int rc;

	if (*rel != '\0' && !S_ISDIR(st->mode) && !S_ISLNK(st->mode) &&
	    !S_ISREG(st->mode)) {
		/* left out, the rest staged; the command's status says so */
		gfsp_log_warn("'%s': a %s, not staged (only files, directories "
			      "and symbolic links are)", src,
			      S_ISFIFO(st->mode) ? "FIFO" : S_ISSOCK(st->mode) ?
			      "socket" : "device");
		l->special++;
		return 0;
	}
	if (*rel != '\0') {	/* "" is the destination root: not made */
		rc = flist_push(l, &f, err);
		if (rc)
			return rc;
		f->tree = tree;
		f->st = *st;
		f->src = strdup(src);
		f->rel = strdup(rel);
		if (f->src == NULL || f->rel == NULL)
			return OOM(err);
		if (S_ISDIR(st->mode)) {
			f->type = GFSP_SF_DIR;
		} else if (S_ISLNK(st->mode)) {
			f->type = GFSP_SF_SYMLINK;
			rc = gfsp_readlink(src, &f->link, err);
			if (rc)
				return rc;
		} else {
			f->type = GFSP_SF_FILE;
		}
	}
	if (!S_ISDIR(st->mode))
		return 0;

	rc = gfsp_readdir(src, &names, &n, err);
	for (i = 0; rc == 0 && i < n; i++) {
		/* ours, not data: the state at the top of a tree is that
		 * tree's own (stage-out's SRC, a former DEST), left out
		 * quietly; anything else so named (a state deeper down, a
		 * killed transfer's temporary) is left out with a word, since
		 * at the destination we would take it for our own */
		if (gfsp_stage_internal_name(names[i])) {
			if (*rel != '\0' || strcmp(names[i], GFSP_STATE_DIR))
				gfsp_log_warn("'%s/%s': named as stage's own "
				    "files are (its state directory '%s', or "
				    "a transfer's temporary '.NAME%s...'): "
				    "not staged", src, names[i],
				    GFSP_STATE_DIR, GFSP_STAGE_TMP_TAG);
			continue;
		}
		csrc = join(src, names[i]);
		crel = join(rel, names[i]);
		if (csrc == NULL || crel == NULL)
			rc = OOM(err);
		if (rc == 0)
			rc = gfsp_lstat(csrc, &cst, err);
		if (rc == 0)
			rc = walk(l, tree, csrc, crel, &cst, err);
		free(csrc);
		free(crel);
	}
	gfsp_strv_free(names, n);
	return rc;
}

static uint32_t
next_tree(const struct gfsp_flist *l)
{
	return l->n ? l->v[l->n - 1].tree + 1 : 0;
}

int
gfsp_flist_add_tree(struct gfsp_flist *l, const char *src,
		   struct gfsp_error *err)
{
	struct gfsp_stat st;
	char *path, *base, *scheme, *root;
	size_t len, min;
	int contents = 0, rc;

	path = strdup(src);
	if (path == NULL)
		return OOM(err);
	/* "dir/": the contents; the root ("/", "gfarm://host/") keeps its
	 * slash */
	len = strlen(path);
	scheme = strstr(path, "://");
	root = scheme ? strchr(scheme + 3, '/') : NULL;
	min = root ? (size_t)(root - path) + 1 : 1;
	while (len > min && path[len - 1] == '/') {
		path[--len] = '\0';
		contents = 1;
	}
	rc = gfsp_lstat(path, &st, err);
	if (rc == 0 && contents && S_ISLNK(st.mode))
		rc = gfsp_stat(path, &st, err);	/* "link/" means its target */
	if (rc == 0 && contents && !S_ISDIR(st.mode))
		rc = gfsp_error_set(err, GFSP_EINVAL, "'%s' is not a "
		    "directory", src);
	if (rc == 0) {
		base = strrchr(path, '/');
		base = base ? base + 1 : path;
		if (!contents && (*base == '\0' || strcmp(base, ".") == 0 ||
				  strcmp(base, "..") == 0))
			rc = gfsp_error_set(err, GFSP_EINVAL, "'%s' has no name "
			    "to copy it under (give 'DIR/' to copy what it "
			    "holds)", src);
		else if (!contents && gfsp_stage_internal_name(base))
			rc = gfsp_error_set(err, GFSP_EINVAL, "'%s' would be "
			    "staged as '%s', a name of stage's own (its state "
			    "directory '%s', or a transfer's temporary file "
			    "'.NAME%sKEY.NONCE'): refused, nothing staged",
			    src, base, GFSP_STATE_DIR, GFSP_STAGE_TMP_TAG);
		else
			rc = walk(l, next_tree(l), path, contents ? "" : base,
				  &st, err);
		/* what DEST itself is a copy of, when one "DIR/" is all */
		if (rc == 0 && contents) {
			l->root = st;
			l->nroots++;
		}
	}
	free(path);
	return rc;
}

/* ---------------------------------------------------------- manifests */

/* The next field of line *p (escapes undone, in place); NULL at its end. */
static char *
next_field(char **p, int *bad)
{
	char *s = *p, *start, *o;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0' || *s == '\n')
		return NULL;
	start = o = s;
	while (*s != '\0' && *s != ' ' && *s != '\t' && *s != '\n') {
		if (*s == '\\') {
			s++;
			switch (*s) {
			case 'n': *o++ = '\n'; break;
			case 't': *o++ = '\t'; break;
			case '\0': *bad = 1; return NULL;
			default: *o++ = *s; break;
			}
			s++;
		} else {
			*o++ = *s++;
		}
	}
	if (*s != '\0')
		s++;
	*o = '\0';
	*p = s;
	return start;
}

/* DST of a manifest: relative, no "..", no empty name. */
static int
rel_ok(const char *rel)
{
	const char *p = rel;
	size_t n;

	if (*rel == '\0' || *rel == '/')
		return 0;
	while (*p) {
		n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return 0;
		p += n;
		while (*p == '/')
			p++;
	}
	return 1;
}

int
gfsp_flist_add_manifest(struct gfsp_flist *l, const char *manifest,
		       struct gfsp_error *err)
{
	unsigned char *buf = NULL;
	char *line, *next, *p, *src, *dst, *extra, *clean = NULL;
	const char *dst0;
	size_t len, at;
	struct gfsp_stat st;
	char where[PATH_MAX + 32];
	int rc, bad = 0;
	unsigned lineno = 0;

	rc = gfsp_read_whole(manifest, &buf, &len, err);
	if (rc)
		return rc;
	/* NUL-terminate a copy: the buffer is exactly the file */
	line = malloc(len + 1);
	if (line == NULL) {
		free(buf);
		return OOM(err);
	}
	memcpy(line, buf, len);
	line[len] = '\0';
	free(buf);
	buf = (unsigned char *)line;

	for (p = line; rc == 0 && p != NULL && *p != '\0'; p = next) {
		lineno++;
		next = strchr(p, '\n');
		if (next != NULL)
			*next++ = '\0';
		if (*p == '#')
			continue;
		src = next_field(&p, &bad);
		dst = bad ? NULL : next_field(&p, &bad);
		extra = bad ? NULL : next_field(&p, &bad);
		if (src == NULL && !bad)
			continue;	/* an empty line */
		if (bad || dst == NULL || extra != NULL) {
			rc = gfsp_error_set(err, GFSP_EINVAL, "%s:%u: expected "
			    "'SRC DST' (escape blanks in names with '\\')",
			    manifest, lineno);
			break;
		}
		dst0 = dst;
		if (*dst == '/') {
			rc = gfsp_error_set(err, GFSP_EINVAL, "%s:%u: '%s' is "
			    "absolute: a manifest's DST is under the "
			    "destination, refused", manifest, lineno, dst);
			break;
		}
		/* "a//b/" and "a/./b" are "a/b"; "." and "./" are the
		 * destination itself, which no file replaces: refused here,
		 * before anything is copied */
		free(clean);
		clean = malloc(strlen(dst) + 1);
		if (clean == NULL) {
			rc = OOM(err);
			break;
		}
		for (at = 0; *dst; dst++) {
			if (*dst == '.' && (at == 0 || clean[at - 1] == '/') &&
			    (dst[1] == '/' || dst[1] == '\0'))
				continue;		/* a "." component */
			if (*dst != '/' || (at > 0 && clean[at - 1] != '/'))
				clean[at++] = *dst;
		}
		while (at > 0 && clean[at - 1] == '/')
			at--;
		clean[at] = '\0';
		if (*clean == '\0') {
			rc = gfsp_error_set(err, GFSP_EINVAL, "%s:%u: '%s' "
			    "names the destination itself, not a file under "
			    "it: refused", manifest, lineno, dst0);
			break;
		}
		if (!rel_ok(clean)) {
			rc = gfsp_error_set(err, GFSP_EINVAL, "%s:%u: '%s' "
			    "leaves the destination (absolute, empty or with "
			    "'..'): refused", manifest, lineno, clean);
			break;
		}
		/* over our state (".gfsplit-stage/index") or into it, or
		 * under a temporary's name: refused with the rest, before
		 * anything is copied */
		snprintf(where, sizeof(where), "%s:%u: ", manifest, lineno);
		rc = gfsp_stage_check_dst(where, clean, err);
		if (rc)
			break;
		rc = gfsp_lstat(src, &st, err);
		if (rc == 0)
			rc = walk(l, next_tree(l), src, clean, &st, err);
	}
	free(clean);
	free(buf);
	return rc;
}

/* ------------------------------------------------------- sort and check */

static int
rel_cmp(const void *a, const void *b)
{
	const struct gfsp_sfile *x = a, *y = b;

	return strcmp(x->rel, y->rel);
}

static int
ino_cmp(const void *a, const void *b)
{
	const struct gfsp_sfile *x = *(const struct gfsp_sfile *const *)a;
	const struct gfsp_sfile *y = *(const struct gfsp_sfile *const *)b;

	if (x->tree != y->tree)
		return x->tree < y->tree ? -1 : 1;
	if (x->st.ino != y->st.ino)
		return x->st.ino < y->st.ino ? -1 : 1;
	return strcmp(x->rel, y->rel);
}

/* Files of one tree with one inode: the first by name is copied, the
 * others become its second names. */
static int
mark_hardlinks(struct gfsp_flist *l, struct gfsp_error *err)
{
	struct gfsp_sfile **v, *first = NULL;
	size_t i, n = 0;

	v = malloc((l->n + 1) * sizeof(*v));
	if (v == NULL)
		return OOM(err);
	for (i = 0; i < l->n; i++)
		if (l->v[i].type == GFSP_SF_FILE && l->v[i].st.nlink > 1)
			v[n++] = &l->v[i];
	qsort(v, n, sizeof(*v), ino_cmp);
	for (i = 0; i < n; i++) {
		if (first == NULL || first->tree != v[i]->tree ||
		    first->st.ino != v[i]->st.ino) {
			first = v[i];
			continue;
		}
		v[i]->type = GFSP_SF_HARDLINK;
		free(v[i]->link);
		v[i]->link = strdup(first->rel);
		if (v[i]->link == NULL) {
			free(v);
			return OOM(err);
		}
	}
	free(v);
	return 0;
}

int
gfsp_flist_finish(struct gfsp_flist *l, struct gfsp_error *err)
{
	size_t i;

	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), rel_cmp);
	for (i = 1; i < l->n; i++)
		if (strcmp(l->v[i - 1].rel, l->v[i].rel) == 0)
			return gfsp_error_set(err, GFSP_EEXIST, "'%s' and '%s' "
			    "would both be staged to '%s'", l->v[i - 1].src,
			    l->v[i].src, l->v[i].rel);
	return mark_hardlinks(l, err);
}

/* ------------------------------------------------------- pack / unpack */

struct wbuf {
	unsigned char *p;
	size_t len, cap;
	int oom;
};

static void
put(struct wbuf *w, const void *src, size_t n)
{
	if (w->oom)
		return;
	if (n > SIZE_MAX - w->len ||
	    gfsp_grow(&w->p, &w->cap, w->len + n, 1) != 0) {
		w->oom = 1;
		return;
	}
	memcpy(w->p + w->len, src, n);
	w->len += n;
}

static void
put_u64(struct wbuf *w, uint64_t v)
{
	put(w, &v, sizeof(v));	/* the same machine reads it back */
}

static void
put_str(struct wbuf *w, const char *s)
{
	uint64_t n = s ? strlen(s) + 1 : 0;

	put_u64(w, n);
	if (n)
		put(w, s, n);
}

int
gfsp_flist_pack(const struct gfsp_flist *l, unsigned char **buf, size_t *len,
	       struct gfsp_error *err)
{
	struct wbuf w = { 0 };
	const struct gfsp_sfile *f;
	size_t i;

	put_u64(&w, l->n);
	for (i = 0; i < l->n; i++) {
		f = &l->v[i];
		put_u64(&w, (uint64_t)f->type);
		put_u64(&w, (uint64_t)(int64_t)f->node);
		put_u64(&w, f->tree);
		put_u64(&w, (uint64_t)f->gfsz);
		put(&w, &f->st, sizeof(f->st));
		put_str(&w, f->src);
		put_str(&w, f->rel);
		put_str(&w, f->link);
	}
	put_u64(&w, l->nroots);
	put(&w, &l->root, sizeof(l->root));
	if (w.oom) {
		free(w.p);
		return OOM(err);
	}
	*buf = w.p;
	*len = w.len;
	return 0;
}

struct rbuf {
	const unsigned char *p;
	size_t len, at;
	int bad;
};

static void
get(struct rbuf *r, void *dst, size_t n)
{
	if (r->bad || r->len - r->at < n) {
		r->bad = 1;
		memset(dst, 0, n);
		return;
	}
	memcpy(dst, r->p + r->at, n);
	r->at += n;
}

static uint64_t
get_u64(struct rbuf *r)
{
	uint64_t v;

	get(r, &v, sizeof(v));
	return v;
}

static char *
get_str(struct rbuf *r)
{
	uint64_t n = get_u64(r);
	char *s;

	if (n == 0 || r->bad)
		return NULL;
	if (r->len - r->at < n || r->p[r->at + n - 1] != '\0') {
		r->bad = 1;
		return NULL;
	}
	s = strdup((const char *)r->p + r->at);
	if (s == NULL)
		r->bad = 2;
	r->at += n;
	return s;
}

int
gfsp_flist_unpack(struct gfsp_flist *l, const unsigned char *buf, size_t len,
		 struct gfsp_error *err)
{
	struct rbuf r = { buf, len, 0, 0 };
	struct gfsp_sfile *f;
	uint64_t n, i;
	int rc;

	memset(l, 0, sizeof(*l));
	n = get_u64(&r);
	for (i = 0; i < n && !r.bad; i++) {
		rc = flist_push(l, &f, err);
		if (rc)
			return rc;
		f->type = (int)get_u64(&r);
		f->node = (int)(int64_t)get_u64(&r);
		f->tree = (uint32_t)get_u64(&r);
		f->gfsz = (int)get_u64(&r);
		get(&r, &f->st, sizeof(f->st));
		f->src = get_str(&r);
		f->rel = get_str(&r);
		f->link = get_str(&r);
		if (!r.bad && (f->src == NULL || f->rel == NULL))
			r.bad = 1;
	}
	l->nroots = (size_t)get_u64(&r);
	get(&r, &l->root, sizeof(l->root));
	if (r.bad == 2)
		return OOM(err);
	if (r.bad)
		return gfsp_error_set(err, GFSP_ECORRUPT, "file list: "
		    "truncated or malformed (%zu bytes)", len);
	return 0;
}

int
gfsp_flist_bcast(MPI_Comm comm, int root, struct gfsp_flist *l,
		struct gfsp_error *err)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	uint64_t n;
	int rank, rc = 0;

	MPI_Comm_rank(comm, &rank);
	if (rank == root)
		rc = gfsp_flist_pack(l, &buf, &len, err);
	n = rc ? UINT64_MAX : (uint64_t)len;
	rc = gfsp_mpi_check(gfsp_bcast(&n, 1, MPI_UINT64_T, root, comm),
			   "MPI_Bcast", err);
	if (rc == 0 && n == UINT64_MAX)
		rc = rank == root ? GFSP_ENOMEM
		    : gfsp_error_set(err, GFSP_EPEER, "rank %d could not "
				     "send the file list", root);
	if (rc == 0 && rank != root) {
		buf = malloc(n ? n : 1);
		if (buf == NULL)
			rc = OOM(err);	/* the bcast below still must run */
	}
	if (n != UINT64_MAX && n > 0 && (rc == 0 || rank != root)) {
		/* MPI counts are int: send in pieces of at most 1 GiB */
		uint64_t at, k;
		unsigned char dummy[1];

		for (at = 0; at < n; at += k) {
			k = GFSP_MIN(n - at, (uint64_t)1 << 30);
			if (gfsp_bcast(buf ? buf + at : dummy, buf ? (int)k : 0,
				      MPI_BYTE, root, comm) != MPI_SUCCESS &&
			    rc == 0)
				rc = gfsp_error_set(err, GFSP_EMPI,
						   "MPI_Bcast failed");
		}
	}
	if (rc == 0 && rank != root)
		rc = gfsp_flist_unpack(l, buf, n, err);
	free(buf);
	return rc;
}
