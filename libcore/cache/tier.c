/*
 * tier.c - the node-local tier of the cooperative cache (tier.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "core.h"
#include "cache.h"
#include "tier.h"

#define MAP_FORMAT	"gfsplit-tier"
#define MAP_VERSION	2	/* 2: "sums", a checksum of each block */

const char *
gfsp_cache_local_dir_default(void)
{
	static char buf[64];
	const char *env = getenv("GFSPLIT_CACHE_LOCAL_DIR");

	if (env != NULL && env[0] != '\0')
		return env;
	snprintf(buf, sizeof(buf), "/dev/shm/gfsplit-cache-%u",
	    (unsigned)getuid());
	return buf;
}



/* ------------------------------------------------------------ reading */

static char *
join(const char *dir, const char *name)
{
	char *s = NULL;

	if (asprintf(&s, "%s/%s", dir, name) < 0)
		return NULL;
	return s;
}

static char *
map_name(const char *dir, uint64_t key, const char *suffix)
{
	char *s = NULL;

	if (asprintf(&s, "%s/%016llx.map%s", dir, (unsigned long long)key,
	    suffix) < 0)
		return NULL;
	return s;
}

static int
get_u64(json_object *o, const char *k, uint64_t *v)
{
	json_object *x;

	if (!json_object_object_get_ex(o, k, &x) ||
	    !json_object_is_type(x, json_type_int))
		return -1;
	*v = json_object_get_uint64(x);
	return 0;
}

static int
hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' :
	    c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

void
gfsp_tier_free(struct gfsp_tier_entry *e)
{
	struct gfsp_error err;

	if (e == NULL)
		return;
	if (e->data != NULL)
		gfsp_close(e->data, &err);
	free(e->path);
	free(e->have);
	free(e->sum);
	free(e);
}

void
gfsp_tier_free_all(struct gfsp_tier_entry **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		gfsp_tier_free(v[i]);
	free(v);
}

/*
 * Parse map file `mpath` of `dir`.  With open_data, the data file is
 * opened too.  OUT *data_name (if not NULL): the data file's name.
 */
static int
map_read(const char *dir, const char *mpath, int open_data,
	 struct gfsp_tier_entry **out, char **data_name,
	 struct gfsp_error *err)
{
	struct gfsp_tier_entry *e = NULL;
	json_object *o = NULL;
	const char *path, *have, *data, *sums = NULL;
	unsigned char *text = NULL;
	char *dpath = NULL;
	uint64_t ver = 0, mt = 0, ct = 0, i;
	size_t len;
	int rc, bad = 0;

	*out = NULL;
	rc = gfsp_read_whole(mpath, &text, &len, err);
	if (rc)
		return rc;
	text[len] = '\0';	/* gfsp_read_whole leaves a byte for it */
	o = json_tokener_parse((const char *)text);
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
		goto out;
	}
	path = o ? gfsp_json_str(o, "path") : NULL;
	have = o ? gfsp_json_str(o, "have") : NULL;
	data = o ? gfsp_json_str(o, "data") : NULL;
	sums = o ? gfsp_json_str(o, "sums") : NULL;
	bad = o == NULL || path == NULL || have == NULL || data == NULL ||
	    strchr(data, '/') != NULL ||
	    strcmp(gfsp_json_str(o, "format") ? gfsp_json_str(o, "format") : "",
	    MAP_FORMAT) != 0 || get_u64(o, "version", &ver) ||
	    get_u64(o, "size", &e->st.size) || get_u64(o, "mtime", &mt) ||
	    get_u64(o, "mtime_ns", &e->st.mtime_ns) ||
	    get_u64(o, "ino", &e->st.ino) || get_u64(o, "gen", &e->st.gen) ||
	    get_u64(o, "ctime", &ct) || get_u64(o, "ctime_ns", &e->st.ctime_ns) ||
	    get_u64(o, "block_size", &e->bsize) || e->bsize == 0;
	if (!bad && ver != MAP_VERSION) {
		rc = gfsp_error_set(err, GFSP_EVERSION, "'%s': tier map "
		    "version %llu, this is version %d", mpath,
		    (unsigned long long)ver, MAP_VERSION);
		goto out;
	}
	if (!bad) {
		e->st.mtime = (int64_t)mt;
		e->st.ctime = (int64_t)ct;
		e->nblocks = (e->st.size + e->bsize - 1) / e->bsize;
		bad = strlen(have) != 2 * ((e->nblocks + 7) / 8) ||
		    sums == NULL || strlen(sums) != 16 * e->nblocks ||
		    strspn(sums, "0123456789abcdef") != 16 * e->nblocks;
	}
	if (bad) {
		rc = gfsp_error_set(err, GFSP_ECORRUPT, "'%s' is not a tier "
		    "map (or is damaged)", mpath);
		goto out;
	}
	e->key = gfsp_file_key(path, &e->st);
	e->path = strdup(path);
	e->have = calloc((e->nblocks + 7) / 8 + 1, 1);
	e->sum = malloc((e->nblocks + 1) * sizeof(uint64_t));
	if (e->path == NULL || e->have == NULL || e->sum == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < (e->nblocks + 7) / 8; i++) {
		int hi = hexval(have[2 * i]), lo = hexval(have[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			rc = gfsp_error_set(err, GFSP_ECORRUPT, "'%s': bad "
			    "block bitmap", mpath);
			goto out;
		}
		e->have[i] = (unsigned char)(hi << 4 | lo);
	}
	for (i = 0; i < e->nblocks; i++) {
		char h[17];

		memcpy(h, sums + 16 * i, 16);
		h[16] = '\0';
		e->sum[i] = strtoull(h, NULL, 16);
	}
	dpath = join(dir, data);
	if (dpath == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	else if (open_data)
		rc = gfsp_open(dpath, GFSP_O_RDONLY, 0, &e->data, err);
	if (rc == 0 && data_name != NULL && (*data_name = strdup(data)) ==
	    NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
out:
	if (o != NULL)
		json_object_put(o);
	free(text);
	free(dpath);
	if (rc)
		gfsp_tier_free(e);
	else
		*out = e;
	return rc;
}


/* The names in the tier directory held (gfsp_hold_private): "DIR/.",
 * its descriptor, not its name again */
static int
readdir_held(const char *dir, char ***names, size_t *n, struct gfsp_error *err)
{
	char *dot;
	int rc;

	if (asprintf(&dot, "%s/.", dir) < 0)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	rc = gfsp_readdir(dot, names, n, err);
	free(dot);
	return rc;
}

int
gfsp_tier_find(const char *dir, const char *path, const struct gfsp_stat *st,
	       struct gfsp_tier_entry **out, struct gfsp_error *err)
{
	struct gfsp_tier_entry *e = NULL;
	struct gfsp_stat mst;
	struct gfsp_error e2;
	char *mpath;
	int rc;

	*out = NULL;
	gfsp_error_clear(&e2);
	if (gfsp_stat(dir, &mst, &e2) != 0)
		return 0;		/* no tier here */
	rc = gfsp_hold_private(dir, err);
	if (rc)
		return rc;
	mpath = map_name(dir, gfsp_file_key(path, st), "");
	if (mpath == NULL)
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	else if (gfsp_stat(mpath, &mst, &e2) == 0)
		rc = map_read(dir, mpath, 1, &e, NULL, err);
	/* (else not warmed) */
	free(mpath);
	gfsp_unconfine(dir);
	if (rc || e == NULL)
		return rc;
	/* the key says it is this version; the map says so too? */
	if (strcmp(e->path, path) != 0 || !gfsp_same_identity(&e->st, st))
		gfsp_tier_free(e);
	else
		*out = e;
	return 0;
}

static int
cmp_key(const void *a, const void *b)
{
	const struct gfsp_tier_entry *x = *(struct gfsp_tier_entry *const *)a;
	const struct gfsp_tier_entry *y = *(struct gfsp_tier_entry *const *)b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static int
is_map_name(const char *n)
{
	size_t len = strlen(n);

	return len == 20 && strcmp(n + 16, ".map") == 0 &&
	    strspn(n, "0123456789abcdef") == 16;
}

int
gfsp_tier_scan(const char *dir, struct gfsp_tier_entry ***out, size_t *n,
	       struct gfsp_error *err)
{
	struct gfsp_tier_entry **v = NULL, *e;
	struct gfsp_stat st;
	struct gfsp_error e2;
	char **names = NULL, *mpath;
	size_t nn = 0, nv_len = 0, cap = 0, i;
	int rc = 0;

	*out = NULL;
	*n = 0;
	gfsp_error_clear(&e2);
	if (gfsp_stat(dir, &st, &e2) != 0)
		return 0;		/* no tier here */
	rc = gfsp_hold_private(dir, err);
	if (rc)
		return rc;
	rc = readdir_held(dir, &names, &nn, err);
	for (i = 0; rc == 0 && i < nn; i++) {
		if (!is_map_name(names[i]))
			continue;
		mpath = join(dir, names[i]);
		if (mpath == NULL) {
			rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
			break;
		}
		gfsp_error_clear(&e2);
		if (map_read(dir, mpath, 1, &e, NULL, &e2) != 0) {
			/* the tier is a cache: a bad entry is not used */
			gfsp_log_warn("local tier: %s; not used", e2.msg);
			free(mpath);
			continue;
		}
		free(mpath);
		gfsp_error_clear(&e2);
		if (gfsp_stat(e->path, &st, &e2) != 0 ||
		    !gfsp_same_identity(&st, &e->st)) {
			gfsp_log_verbose("local tier: '%s' changed since it "
			    "was warmed (or is gone): its blocks in '%s' are "
			    "not used", e->path, dir);
			gfsp_tier_free(e);
			continue;
		}
		if (gfsp_grow(&v, &cap, nv_len + 1, sizeof(*v)) != 0) {
			gfsp_tier_free(e);
			rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
			break;
		}
		v[nv_len++] = e;
	}
	gfsp_strv_free(names, nn);
	gfsp_unconfine(dir);
	if (rc) {
		gfsp_tier_free_all(v, nv_len);
		return rc;
	}
	if (nv_len > 1)
		qsort(v, nv_len, sizeof(*v), cmp_key);
	*out = v;
	*n = nv_len;
	return 0;
}

static int
have_block(const unsigned char *have, uint64_t i)
{
	return have[i / 8] >> (i % 8) & 1;
}

int
gfsp_tier_covers(const struct gfsp_tier_entry *e, uint64_t off, uint64_t len)
{
	uint64_t i;

	if (len == 0 || off + len > e->st.size)
		return 0;
	for (i = off / e->bsize; i <= (off + len - 1) / e->bsize; i++)
		if (!have_block(e->have, i))
			return 0;
	return 1;
}

/*
 * Every block is checked against its checksum in the map before any of
 * it is used: the tier is memory or a local disk that outlives jobs, and
 * bytes that are not the source's must never reach a reader.  A read that
 * is not whole blocks reads the blocks around it.
 */
int
gfsp_tier_pread(struct gfsp_tier_entry *e, void *buf, uint64_t len,
		uint64_t off, struct gfsp_error *err)
{
	uint64_t b0 = off / e->bsize, b1, lo, hi, b;
	unsigned char *tmp = NULL, *p = buf;
	size_t got = 0, n;
	int rc;

	if (len == 0)
		return 0;
	b1 = (off + len - 1) / e->bsize;
	lo = b0 * e->bsize;
	hi = GFSP_MIN((b1 + 1) * e->bsize, e->st.size);
	if (lo != off || hi != off + len) {
		tmp = malloc(hi - lo);
		if (tmp == NULL)
			return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
		p = tmp;
	}
	rc = gfsp_pread(e->data, p, (size_t)(hi - lo), lo, &got, err);
	if (rc == 0 && got < hi - lo)
		rc = gfsp_error_set(err, GFSP_EIO, "'%s': the local tier's "
		    "copy of '%s' is short at %llu", gfsp_file_path(e->data),
		    e->path, (unsigned long long)(lo + got));
	for (b = b0; rc == 0 && b <= b1; b++) {
		n = (size_t)GFSP_MIN(e->bsize, e->st.size - b * e->bsize);
		if (gfsp_hash64(p + (b - b0) * e->bsize, n) != e->sum[b])
			rc = gfsp_error_set(err, GFSP_ECHECKSUM, "'%s': the "
			    "local tier's block %llu of '%s' does not match "
			    "its checksum", gfsp_file_path(e->data),
			    (unsigned long long)b, e->path);
	}
	if (rc == 0 && tmp != NULL)
		memcpy(buf, tmp + (off - lo), (size_t)len);
	free(tmp);
	return rc;
}

/* ------------------------------------------------------------ writing */

/* dir and its missing parents, 0700 */
static int
mkdir_parents(const char *dir, struct gfsp_error *err)
{
	struct gfsp_stat st;
	struct gfsp_error e;
	char *p, *s, *slash;
	int rc = 0, held;

	gfsp_error_clear(&e);
	if (gfsp_stat(dir, &st, &e) == 0)
		return 0;
	s = strdup(dir);
	if (s == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	for (p = strchr(s + 1, '/'); rc == 0; p = strchr(p + 1, '/')) {
		if (p != NULL)
			*p = '\0';
		gfsp_error_clear(&e);
		if (gfsp_stat(s, &st, &e) != 0) {
			/* made from its parent's descriptor, the parent
			 * opened following no other user's link */
			held = 0;
			slash = strrchr(s, '/');
			if (slash != NULL && slash != s) {
				*slash = '\0';
				rc = gfsp_confine_dir(s, GFSP_CONFINE_NAMES |
						      GFSP_CONFINE_SAFE, err);
				held = rc == 0;
				*slash = '/';
			}
			gfsp_error_clear(&e);
			if (rc == 0 && gfsp_mkdir(s, 0700, &e) != 0 &&
			    e.code != GFSP_EEXIST)
				rc = gfsp_error_set(err, e.code, "%s", e.msg);
			if (held) {
				*slash = '\0';
				gfsp_unconfine(s);
				*slash = '/';
			}
		}
		if (p == NULL)
			break;
		*p = '/';
	}
	free(s);
	return rc;
}

struct gfsp_tier_writer {
	char *dir, *path, *tmp;		/* tmp: the data file being written */
	struct gfsp_stat st;
	uint64_t bsize, key;
	struct gfsp_file *f;
	int creator;
	int held;			/* gfsp_hold_private(dir) */
};

void
gfsp_tier_abort(struct gfsp_tier_writer *w)
{
	struct gfsp_error e;

	if (w == NULL)
		return;
	if (w->f != NULL)
		gfsp_close(w->f, &e);
	if (w->creator && w->tmp != NULL && w->held)
		gfsp_unlink(w->tmp, &e);
	if (w->held)
		gfsp_unconfine(w->dir);
	free(w->dir);
	free(w->path);
	free(w->tmp);
	free(w);
}

int
gfsp_tier_begin(const char *dir, const char *path, const struct gfsp_stat *st,
		uint64_t bsize, int create, struct gfsp_tier_writer **out,
		struct gfsp_error *err)
{
	struct gfsp_tier_writer *w;
	struct gfsp_error e;
	int rc = 0;

	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	w->st = *st;
	w->bsize = bsize;
	w->key = gfsp_file_key(path, st);
	w->creator = create;
	w->dir = strdup(dir);
	w->path = strdup(path);
	if (w->dir == NULL || w->path == NULL ||
	    asprintf(&w->tmp, "%s/.%016llx.data.tmp", dir,
	    (unsigned long long)w->key) < 0) {
		w->tmp = NULL;
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	if (rc == 0 && strstr(dir, "://") != NULL)
		rc = gfsp_error_set(err, GFSP_EINVAL, "local tier '%s': a "
		    "node-local directory, please (not a URL)", dir);
	if (rc == 0 && create)
		rc = mkdir_parents(dir, err);
	if (rc == 0 && (rc = gfsp_hold_private(dir, err)) == 0)
		w->held = 1;
	if (rc == 0 && create) {
		gfsp_error_clear(&e);
		gfsp_unlink(w->tmp, &e);	/* a crashed warm's */
		rc = gfsp_create(w->tmp, 0600, NULL, &w->f, err);
	} else if (rc == 0) {
		/* the creator's, as it made it: a regular file of ours */
		rc = gfsp_open(w->tmp, GFSP_O_WRONLY | GFSP_O_PRIVATE, 0,
			       &w->f, err);
	}
	if (rc) {
		gfsp_tier_abort(w);
		return rc;
	}
	*out = w;
	return 0;
}

int
gfsp_tier_write(struct gfsp_tier_writer *w, uint64_t idx, const void *buf,
		uint64_t len, struct gfsp_error *err)
{
	return gfsp_pwrite(w->f, buf, (size_t)len, idx * w->bsize, err);
}

/*
 * The checksums of the present blocks of the data file, as 16 hex digits
 * a block (0 for an absent one), read back from it: the blocks were
 * written by every rank of the node.  malloc'd into *out.
 */
static int
block_sums(struct gfsp_tier_writer *w, const unsigned char *have,
	   uint64_t nblocks, char **out, struct gfsp_error *err)
{
	struct gfsp_file *f = NULL;
	unsigned char *buf = NULL;
	char *hex;
	uint64_t i, n;
	size_t got;
	int rc;

	*out = hex = calloc(16 * nblocks + 1, 1);
	if (hex == NULL || (nblocks > 0 && (buf = malloc(w->bsize)) == NULL))
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	rc = gfsp_open(w->tmp, GFSP_O_RDONLY, 0, &f, err);
	for (i = 0; rc == 0 && i < nblocks; i++) {
		n = GFSP_MIN(w->bsize, w->st.size - i * w->bsize);
		if (!have_block(have, i)) {
			memset(hex + 16 * i, '0', 16);
			continue;
		}
		rc = gfsp_pread(f, buf, (size_t)n, i * w->bsize, &got, err);
		if (rc == 0 && got < n)
			rc = gfsp_error_set(err, GFSP_EIO, "'%s' is short at "
			    "block %llu", w->tmp, (unsigned long long)i);
		if (rc == 0)
			snprintf(hex + 16 * i, 17, "%016llx",
			    (unsigned long long)gfsp_hash64(buf, (size_t)n));
	}
	if (f != NULL)
		gfsp_close(f, NULL);
	free(buf);
	return rc;
}

/*
 * Remove the entries of w's source other than `keep_data` (an older
 * version of the file, or the entry this commit replaced).
 */
static void
remove_others(struct gfsp_tier_writer *w, const char *keep_data)
{
	struct gfsp_tier_entry *e;
	struct gfsp_error e2;
	char **names = NULL, *mpath, *dname, *dpath, pfx[18];
	size_t nn = 0, i, len;

	gfsp_error_clear(&e2);
	if (readdir_held(w->dir, &names, &nn, &e2) != 0)
		return;
	snprintf(pfx, sizeof(pfx), "%016llx.", (unsigned long long)w->key);
	for (i = 0; i < nn; i++) {
		len = strlen(names[i]);
		if (strcmp(names[i], keep_data) == 0)
			continue;
		if (len > 22 && strncmp(names[i], pfx, 17) == 0 &&
		    strcmp(names[i] + len - 5, ".data") == 0) {
			/* the data of the entry this commit replaced */
			if ((dpath = join(w->dir, names[i])) != NULL)
				gfsp_unlink(dpath, &e2);
			free(dpath);
			continue;
		}
		if (!is_map_name(names[i]))
			continue;
		mpath = join(w->dir, names[i]);
		dname = NULL;
		if (mpath == NULL || map_read(w->dir, mpath, 0, &e, &dname,
		    &e2) != 0) {
			free(mpath);
			continue;
		}
		if (strcmp(e->path, w->path) == 0 && e->key != w->key) {
			gfsp_log_verbose("local tier: removing the blocks of "
			    "an older version of '%s'", w->path);
			gfsp_unlink(mpath, &e2);
			if ((dpath = join(w->dir, dname)) != NULL)
				gfsp_unlink(dpath, &e2);
			free(dpath);
		}
		gfsp_tier_free(e);
		free(dname);
		free(mpath);
	}
	gfsp_strv_free(names, nn);
}

int
gfsp_tier_commit(struct gfsp_tier_writer *w, const unsigned char *have,
		 struct gfsp_error *err)
{
	uint64_t nblocks = (w->st.size + w->bsize - 1) / w->bsize, i;
	json_object *o = NULL;
	char *hex = NULL, *data = NULL, *dpath = NULL, *mtmp = NULL;
	char *mpath = NULL, *sums = NULL;
	const char *text;
	struct timespec ts;
	int rc = 0;

	if (!w->creator)
		return gfsp_error_set(err, GFSP_EINVAL, "only the creator "
		    "of a tier entry commits it");
	clock_gettime(CLOCK_REALTIME, &ts);
	hex = malloc(2 * ((nblocks + 7) / 8) + 1);
	o = json_object_new_object();
	if (hex == NULL || o == NULL ||
	    asprintf(&data, "%016llx.%llx%09ld.data",
	    (unsigned long long)w->key, (unsigned long long)ts.tv_sec,
	    ts.tv_nsec) < 0 || (dpath = join(w->dir, data)) == NULL ||
	    (mtmp = map_name(w->dir, w->key, ".tmp")) == NULL ||
	    (mpath = map_name(w->dir, w->key, "")) == NULL) {
		rc = gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < (nblocks + 7) / 8; i++)
		sprintf(hex + 2 * i, "%02x", have[i]);
	hex[2 * ((nblocks + 7) / 8)] = '\0';
	/* the data whole and on disk before its checksums are taken */
	rc = gfsp_fsync(w->f, err);
	if (rc == 0)
		rc = block_sums(w, have, nblocks, &sums, err);
	if (rc)
		goto out;
	json_object_object_add(o, "format", json_object_new_string(MAP_FORMAT));
	json_object_object_add(o, "version", json_object_new_int(MAP_VERSION));
	json_object_object_add(o, "path", json_object_new_string(w->path));
	json_object_object_add(o, "size", json_object_new_uint64(w->st.size));
	json_object_object_add(o, "mtime",
	    json_object_new_uint64((uint64_t)w->st.mtime));
	json_object_object_add(o, "mtime_ns",
	    json_object_new_uint64(w->st.mtime_ns));
	json_object_object_add(o, "ino", json_object_new_uint64(w->st.ino));
	json_object_object_add(o, "gen", json_object_new_uint64(w->st.gen));
	json_object_object_add(o, "ctime",
	    json_object_new_uint64((uint64_t)w->st.ctime));
	json_object_object_add(o, "ctime_ns",
	    json_object_new_uint64(w->st.ctime_ns));
	json_object_object_add(o, "block_size", json_object_new_uint64(w->bsize));
	json_object_object_add(o, "have", json_object_new_string(hex));
	json_object_object_add(o, "sums", json_object_new_string(sums));
	json_object_object_add(o, "data", json_object_new_string(data));
	/* the data under its own name; then the map, atomically; then the
	 * entry it replaced goes */
	rc = gfsp_install(w->tmp, dpath, NULL, 0, err);
	if (rc == 0) {
		text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
		    JSON_C_TO_STRING_NOSLASHESCAPE);
		rc = gfsp_write_whole(mpath, mtmp, text, strlen(text), 0600,
		    GFSP_PUT_REPLACE | GFSP_PUT_SYNC, err);
	}
	if (rc) {
		struct gfsp_error e;

		gfsp_unlink(dpath, &e);
		goto out;
	}
	remove_others(w, data);
out:
	if (o != NULL)
		json_object_put(o);
	free(hex);
	free(sums);
	free(data);
	free(dpath);
	free(mtmp);
	free(mpath);
	return rc;
}
