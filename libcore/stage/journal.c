/*
 * journal.c - the state directory of a transfer (stage.h): which files
 * are installed, and which chunks of unfinished ones are in their
 * temporary files.
 *
 * Records are JSON lines appended with one write(2) each, so a process
 * killed at any point leaves whole lines and at most a torn last one,
 * which the loader skips.  A chunk's record is written after its bytes,
 * so every record names bytes that are there (a killed process loses at
 * most the chunks it had not recorded yet; Gfarm's client buffer is
 * flushed first, see xfer.c).  Each rank appends to its own journal; the
 * records of all of them are read back in any order: "done" records carry
 * the time they were made and the latest wins.
 *
 * The state directory is on the node-local side and is a plain POSIX
 * directory, whatever the backend of the transfer.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "core.h"
#include "stage.h"

#define OOM(err) gfsp_error_set(err, GFSP_ENOMEM, "out of memory")

struct donerec {
	char *rel;
	int64_t t;		/* when recorded (ns of the wall clock) */
	struct gfsp_done d;
};

struct chunkent {
	char *rel;
	char *tmp;
	uint64_t key;
	int64_t t;
	struct gfsp_chunkrec c;
};

struct gfsp_state {
	char *dir;
	int dfd;		/* dir, checked to be ours: everything in it
				 * is opened from here, never by path */
	int lockfd;		/* -1: not locked here */
	int jfd;		/* this run's journal, -1 until first record */
	char *jname;		/* its name */
	int rank;
	struct donerec *done;
	size_t ndone, capdone;
	struct chunkent *chunk;
	size_t nchunk, capchunk;
	char **loaded;		/* journal files read at open */
	size_t nloaded;
	int interrupted;	/* the last transfer here did not end */
	int clean;		/* compacted: this one ends well */
};

static int64_t
wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t
jget_u64(json_object *o, const char *k)
{
	json_object *x;

	if (!json_object_object_get_ex(o, k, &x))
		return 0;
	if (json_object_is_type(x, json_type_string))
		return strtoull(json_object_get_string(x), NULL, 16);
	return (uint64_t)json_object_get_int64(x);
}

/* One line; a line that is not a record (a torn last line) is skipped. */
static int
load_line(struct gfsp_state *s, const char *line)
{
	json_object *o, *seg;
	const char *rel, *tmp;
	struct donerec *d;
	struct chunkent *c;
	size_t i, n;
	int rc = 0;

	o = json_tokener_parse(line);
	if (o == NULL || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return 0;
	}
	if ((rel = gfsp_json_str(o, "done")) != NULL) {
		if (gfsp_grow(&s->done, &s->capdone, s->ndone + 1,
		    sizeof(*s->done))) {
			rc = -1;
			goto out;
		}
		d = &s->done[s->ndone];
		d->rel = strdup(rel);
		if (d->rel == NULL) {
			rc = -1;
			goto out;
		}
		d->t = d->d.t = (int64_t)jget_u64(o, "t");
		d->d.key = jget_u64(o, "key");
		d->d.size = jget_u64(o, "size");
		d->d.mtime = (int64_t)jget_u64(o, "mtime");
		d->d.mtime_ns = jget_u64(o, "mtime_ns");
		d->d.hash = jget_u64(o, "hash");
		d->d.dino = jget_u64(o, "dino");
		d->d.dmtime_ns = jget_u64(o, "dmtime_ns");
		d->d.dctime = (int64_t)jget_u64(o, "dctime");
		d->d.dctime_ns = jget_u64(o, "dctime_ns");
		s->ndone++;
	} else if ((rel = gfsp_json_str(o, "chunk")) != NULL &&
		   (tmp = gfsp_json_str(o, "tmp")) != NULL &&
		   json_object_object_get_ex(o, "seg", &seg) &&
		   json_object_is_type(seg, json_type_array)) {
		if (gfsp_grow(&s->chunk, &s->capchunk, s->nchunk + 1,
		    sizeof(*s->chunk))) {
			rc = -1;
			goto out;
		}
		c = &s->chunk[s->nchunk];
		memset(c, 0, sizeof(*c));
		n = json_object_array_length(seg);
		c->rel = strdup(rel);
		c->tmp = strdup(tmp);
		c->c.seg = malloc((n ? n : 1) * sizeof(uint64_t));
		if (c->rel == NULL || c->tmp == NULL || c->c.seg == NULL) {
			free(c->rel);
			free(c->tmp);
			free(c->c.seg);
			rc = -1;
			goto out;
		}
		for (i = 0; i < n; i++) {
			/* a null in the list has no text: a hash of 0,
			 * which no chunk matches, so it is copied again */
			const char *h = json_object_get_string(
			    json_object_array_get_idx(seg, i));

			c->c.seg[i] = h != NULL ? strtoull(h, NULL, 16) : 0;
		}
		c->c.nseg = n;
		c->key = jget_u64(o, "key");
		c->t = c->c.t = (int64_t)jget_u64(o, "t");
		c->c.off = jget_u64(o, "off");
		c->c.len = jget_u64(o, "len");
		c->c.zoff = jget_u64(o, "zoff");
		c->c.zlen = jget_u64(o, "zlen");
		c->c.zhash = jget_u64(o, "zhash");
		s->nchunk++;
	}
out:
	json_object_put(o);
	return rc;
}

static int
load_file(struct gfsp_state *s, const char *name, struct gfsp_error *err)
{
	char *path, *line = NULL;
	size_t cap = 0;
	FILE *fp;
	int rc = 0, fd;

	if (asprintf(&path, "%s/%s", s->dir, name) < 0)
		return OOM(err);
	fd = gfsp_openat_private(s->dfd, s->dir, name, O_RDONLY, err);
	fp = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (fp == NULL) {
		if (fd >= 0)
			close(fd), rc = OOM(err);
		else if (fd == -GFSP_ENOENT)	/* compacted away meanwhile */
			gfsp_error_clear(err);
		else
			rc = -fd;
		free(path);
		return rc;
	}
	while (rc == 0 && getline(&line, &cap, fp) > 0)
		if (load_line(s, line))
			rc = OOM(err);
	if (rc == 0 && ferror(fp))
		rc = gfsp_error_errno(err, errno, "cannot read '%s'", path);
	fclose(fp);
	free(line);
	free(path);
	return rc;
}

static int
done_cmp(const void *a, const void *b)
{
	const struct donerec *x = a, *y = b;
	int c = strcmp(x->rel, y->rel);

	if (c)
		return c;
	return x->t < y->t ? -1 : x->t > y->t;
}

static int
chunk_cmp(const void *a, const void *b)
{
	const struct chunkent *x = a, *y = b;
	int c = strcmp(x->rel, y->rel);

	if (c)
		return c;
	if (x->c.off != y->c.off)
		return x->c.off < y->c.off ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

static void
free_records(struct gfsp_state *s)
{
	size_t i;

	for (i = 0; i < s->ndone; i++)
		free(s->done[i].rel);
	for (i = 0; i < s->nchunk; i++) {
		free(s->chunk[i].rel);
		free(s->chunk[i].tmp);
		free(s->chunk[i].c.seg);
	}
	free(s->done);
	free(s->chunk);
	s->done = NULL;
	s->chunk = NULL;
	s->ndone = s->capdone = s->nchunk = s->capchunk = 0;
	gfsp_strv_free(s->loaded, s->nloaded);
	s->loaded = NULL;
	s->nloaded = 0;
}

/* The names in the state directory, from its descriptor. */
static int
list_names(struct gfsp_state *s, char ***names, size_t *n,
	   struct gfsp_error *err)
{
	struct dirent *de;
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	int fd = dup(s->dfd), rc = 0;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	*names = NULL;
	*n = 0;
	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return gfsp_error_errno(err, errno, "cannot read '%s'", s->dir);
	}
	rewinddir(d);	/* a dup shares the offset of the last listing */
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (gfsp_grow(&v, &cap, cnt + 1, sizeof(*v)) != 0 ||
		    (v[cnt] = strdup(de->d_name)) == NULL) {
			rc = OOM(err);
			break;
		}
		cnt++;
	}
	closedir(d);
	if (rc) {
		gfsp_strv_free(v, cnt);
		return rc;
	}
	*names = v;
	*n = cnt;
	return 0;
}

/* Read the index and every journal; sort. */
static int
load_all(struct gfsp_state *s, struct gfsp_error *err)
{
	char **names = NULL;
	size_t n = 0, i;
	int rc;

	free_records(s);
	rc = list_names(s, &names, &n, err);
	for (i = 0; rc == 0 && i < n; i++) {
		if (strcmp(names[i], "index") != 0 &&
		    strncmp(names[i], "journal.", 8) != 0)
			continue;
		rc = load_file(s, names[i], err);
	}
	if (rc) {
		gfsp_strv_free(names, n);
		return rc;
	}
	s->loaded = names;
	s->nloaded = n;
	if (s->ndone > 1)
		qsort(s->done, s->ndone, sizeof(*s->done), done_cmp);
	if (s->nchunk > 1)
		qsort(s->chunk, s->nchunk, sizeof(*s->chunk), chunk_cmp);
	return 0;
}

int
gfsp_state_fchdir(const struct gfsp_state *s, struct gfsp_error *err)
{
	if (fchdir(s->dfd) != 0)
		return gfsp_error_errno(err, errno, "cannot enter '%s'",
				       s->dir);
	return 0;
}

int
gfsp_state_interrupted(const struct gfsp_state *s)
{
	return s->interrupted;
}

int
gfsp_state_tmp_used(const struct gfsp_state *s, const char *tmp)
{
	size_t i;

	for (i = 0; i < s->nchunk; i++)
		if (strcmp(s->chunk[i].tmp, tmp) == 0)
			return 1;
	return 0;
}

int
gfsp_state_reload(struct gfsp_state *s, struct gfsp_error *err)
{
	return load_all(s, err);
}

int
gfsp_state_open(const char *dir, int rank, int lock, struct gfsp_state **out,
	       struct gfsp_error *err)
{
	return gfsp_state_openat(AT_FDCWD, dir, dir, rank, lock, out, err);
}

int
gfsp_state_openat(int pfd, const char *name, const char *dir, int rank,
		 int lock, struct gfsp_state **out, struct gfsp_error *err)
{
	struct gfsp_state *s;
	char *path = NULL;
	int rc = 0, fd;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL || (s->dir = strdup(dir)) == NULL) {
		free(s);
		return OOM(err);
	}
	s->lockfd = s->jfd = s->dfd = -1;
	s->rank = rank;
	/* someone else's state directory is refused: its lock, index and
	 * journals would steer what this run writes, and where */
	rc = gfsp_private_dirat(pfd, name, dir, 1, &s->dfd, err);
	if (rc)
		goto out;
	if (lock) {
		if (asprintf(&path, "%s/lock", dir) < 0) {
			rc = OOM(err);
			goto out;
		}
		s->lockfd = gfsp_openat_private(s->dfd, dir, "lock",
					       O_RDWR | O_CREAT, err);
		if (s->lockfd < 0) {
			rc = -s->lockfd;
			s->lockfd = -1;
			goto out;
		}
		if (flock(s->lockfd, LOCK_EX | LOCK_NB) != 0) {
			rc = errno == EWOULDBLOCK
			    ? gfsp_error_set(err, GFSP_EEXIST, "'%s' is in use "
				"by another transfer (a running stage command "
				"or mover holds '%s')", dir, path)
			    : gfsp_error_errno(err, errno, "cannot lock '%s'",
					      path);
			goto out;
		}
		/* "running" from open to a clean close: found at open, the
		 * last holder was killed and left temporaries behind */
		s->interrupted = faccessat(s->dfd, "running", F_OK,
					   AT_SYMLINK_NOFOLLOW) == 0;
		fd = gfsp_openat_private(s->dfd, dir, "running",
					 O_WRONLY | O_CREAT, err);
		if (fd < 0) {
			rc = -fd;
			goto out;
		}
		close(fd);
	}
	rc = load_all(s, err);
out:
	free(path);
	if (rc)
		gfsp_state_close(s);
	else
		*out = s;
	return rc;
}

void
gfsp_state_close(struct gfsp_state *s)
{
	if (s == NULL)
		return;
	if (s->jfd >= 0)
		close(s->jfd);
	if (s->lockfd >= 0 && s->clean)
		unlinkat(s->dfd, "running", 0);
	if (s->lockfd >= 0)
		close(s->lockfd);	/* releases the lock */
	if (s->dfd >= 0)
		close(s->dfd);
	free_records(s);
	free(s->jname);
	free(s->dir);
	free(s);
}

/* The latest record of rel, or NULL. */
static struct donerec *
find_done(struct gfsp_state *s, const char *rel)
{
	size_t lo = 0, hi = s->ndone, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strcmp(s->done[mid].rel, rel) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || strcmp(s->done[lo - 1].rel, rel) != 0)
		return NULL;
	return &s->done[lo - 1];
}

const struct gfsp_done *
gfsp_state_done(struct gfsp_state *s, const char *rel)
{
	struct donerec *d = find_done(s, rel);

	return d ? &d->d : NULL;
}

size_t
gfsp_state_chunks(struct gfsp_state *s, const char *rel, size_t *first)
{
	size_t lo = 0, hi = s->nchunk, mid, end;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (strcmp(s->chunk[mid].rel, rel) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < s->nchunk && strcmp(s->chunk[end].rel, rel) == 0;
	     end++)
		;
	*first = lo;
	return end - lo;
}

const struct gfsp_chunkrec *
gfsp_state_chunk(struct gfsp_state *s, size_t i, const char **tmp,
		 uint64_t *key)
{
	if (tmp != NULL)
		*tmp = s->chunk[i].tmp;
	if (key != NULL)
		*key = s->chunk[i].key;
	return &s->chunk[i].c;
}

static int
append(struct gfsp_state *s, json_object *o, struct gfsp_error *err)
{
	const char *text;
	char *line;
	size_t len;
	ssize_t w;
	int rc = 0;

	json_object_object_add(o, "t", json_object_new_int64(wall_ns()));
	if (s->jfd < 0) {
		if (asprintf(&s->jname, "%s/journal.%ld.%d", s->dir,
			     (long)getpid(), s->rank) < 0) {
			s->jname = NULL;
			return OOM(err);
		}
		s->jfd = gfsp_openat_private(s->dfd, s->dir,
					    strrchr(s->jname, '/') + 1,
					    O_WRONLY | O_APPEND | O_CREAT, err);
		if (s->jfd < 0) {
			rc = -s->jfd;
			s->jfd = -1;
			return rc;
		}
	}
	text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	len = strlen(text);
	line = malloc(len + 2);
	if (line == NULL)
		return OOM(err);
	memcpy(line, text, len);
	line[len++] = '\n';
	w = write(s->jfd, line, len);
	if (w != (ssize_t)len)
		rc = gfsp_error_errno(err, w < 0 ? errno : EIO, "cannot write "
				     "the journal '%s'", s->jname);
	free(line);
	return rc;
}

static json_object *
hex(uint64_t v)
{
	char b[20];

	snprintf(b, sizeof(b), "%016llx", (unsigned long long)v);
	return json_object_new_string(b);
}

static json_object *
chunk_json(const char *rel, uint64_t key, const char *tmp,
	   const struct gfsp_chunkrec *c)
{
	json_object *o = json_object_new_object(), *seg;
	uint64_t i;

	if (o == NULL)
		return NULL;
	seg = json_object_new_array();
	for (i = 0; i < c->nseg; i++)
		json_object_array_add(seg, hex(c->seg[i]));
	json_object_object_add(o, "chunk", json_object_new_string(rel));
	json_object_object_add(o, "key", hex(key));
	json_object_object_add(o, "tmp", json_object_new_string(tmp));
	json_object_object_add(o, "off", json_object_new_int64((int64_t)c->off));
	json_object_object_add(o, "len", json_object_new_int64((int64_t)c->len));
	json_object_object_add(o, "zoff", json_object_new_int64((int64_t)c->zoff));
	json_object_object_add(o, "zlen", json_object_new_int64((int64_t)c->zlen));
	json_object_object_add(o, "zhash", hex(c->zhash));
	json_object_object_add(o, "seg", seg);
	return o;
}

int
gfsp_state_add_chunk(struct gfsp_state *s, const char *rel, uint64_t key,
		    const char *tmp, const struct gfsp_chunkrec *c,
		    struct gfsp_error *err)
{
	json_object *o = chunk_json(rel, key, tmp, c);
	int rc;

	if (o == NULL)
		return OOM(err);
	rc = append(s, o, err);
	json_object_put(o);
	return rc;
}

static json_object *
done_json(const char *rel, const struct gfsp_done *d)
{
	json_object *o = json_object_new_object();

	if (o == NULL)
		return NULL;
	json_object_object_add(o, "done", json_object_new_string(rel));
	json_object_object_add(o, "key", hex(d->key));
	json_object_object_add(o, "size", json_object_new_int64((int64_t)d->size));
	json_object_object_add(o, "mtime", json_object_new_int64(d->mtime));
	json_object_object_add(o, "mtime_ns",
			       json_object_new_int64((int64_t)d->mtime_ns));
	json_object_object_add(o, "hash", hex(d->hash));
	json_object_object_add(o, "dino", json_object_new_int64((int64_t)d->dino));
	json_object_object_add(o, "dmtime_ns",
			       json_object_new_int64((int64_t)d->dmtime_ns));
	json_object_object_add(o, "dctime", json_object_new_int64(d->dctime));
	json_object_object_add(o, "dctime_ns",
			       json_object_new_int64((int64_t)d->dctime_ns));
	return o;
}

int
gfsp_state_add_done(struct gfsp_state *s, const char *rel,
		   const struct gfsp_done *d, struct gfsp_error *err)
{
	json_object *o = done_json(rel, d);
	int rc;

	if (o == NULL)
		return OOM(err);
	rc = append(s, o, err);
	json_object_put(o);
	return rc;
}

/* One line of the index: o, with the time it was recorded */
static int
put_record(FILE *fp, json_object *o, int64_t t)
{
	if (o == NULL)
		return GFSP_ENOMEM;
	json_object_object_add(o, "t", json_object_new_int64(t));
	fprintf(fp, "%s\n", json_object_to_json_string_ext(o,
		JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return 0;
}

/* gfsp_write_whole_at's fill: the index, every record still of use */
static int
fill_index(FILE *fp, void *arg)
{
	struct gfsp_state *s = arg;
	size_t i;
	int rc = 0;

	for (i = 0; rc == 0 && i < s->ndone; i++) {
		/* the last of each rel's records */
		if (i + 1 < s->ndone && strcmp(s->done[i].rel,
					       s->done[i + 1].rel) == 0)
			continue;
		rc = put_record(fp, done_json(s->done[i].rel, &s->done[i].d),
				s->done[i].t);
	}
	for (i = 0; rc == 0 && i < s->nchunk; i++) {
		struct chunkent *c = &s->chunk[i];
		const struct donerec *d = find_done(s, c->rel);

		/* a chunk of a version installed since is of no more use
		 * (its temporary file was renamed into place) */
		if (d != NULL && d->t > c->t)
			continue;
		rc = put_record(fp, chunk_json(c->rel, c->key, c->tmp, &c->c),
				c->t);
	}
	return rc;
}

int
gfsp_state_compact(struct gfsp_state *s, struct gfsp_error *err)
{
	size_t i;
	int rc;

	if (s->jfd >= 0) {
		close(s->jfd);
		s->jfd = -1;
	}
	rc = load_all(s, err);	/* what every rank of the run wrote */
	/* one atomic step from the old index to the new; the journals it
	 * now holds go after it */
	if (rc == 0)
		rc = gfsp_write_whole_at(s->dfd, s->dir, "index", "index.new",
					 fill_index, s, GFSP_PUT_SYNC, err);
	if (rc)
		return rc;
	s->clean = 1;
	for (i = 0; i < s->nloaded; i++) {
		if (strncmp(s->loaded[i], "journal.", 8) == 0)
			unlinkat(s->dfd, s->loaded[i], 0);
	}
	return 0;
}
