/*
 * gfarm_store.c - the Gfarm storage backend against a real Gfarm: every
 * operation of struct gfsp_store_ops through the store.h wrappers, data
 * compared byte for byte, placement checked through where().
 *
 * Not a test_* program: it needs a running Gfarm, which
 * tests/cmd/gfarm_store.sh starts and then runs
 *
 *   gfarm_store [--keep] [--hostport HOST:PORT] BASE HOSTS [DOWN]
 *   gfarm_store --placement BASE HOSTS DOWN
 *
 *   BASE      a Gfarm directory URL ("gfarm:///"); the test works in a new
 *             directory BASE/gfarm_store.PID and removes it at the end
 *   HOSTS     the gfsd hosts that are up, comma-separated: a file pinned
 *             to each must be there
 *   DOWN      a registered gfsd host that is down: STRICT placement on it
 *             fails, FALLBACK lands on one of HOSTS
 *   --keep    keep the pinned files and print "# pinned URL HOST" for
 *             each, so the caller can check them with gfwhere
 *   --hostport the gfmd as HOST:PORT: the same files through
 *             "gfarm://HOST:PORT/..." URLs
 *   --placement  only the placement tests (pins, STRICT and FALLBACK):
 *             the second run, after the caller stopped DOWN's gfsd
 *
 * Gfarm's error texts are lowercase ("no such file or directory",
 * "already exists") where strerror's are capitalised, so a message ending
 * in one shows that the cause came from libgfarm.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "store.h"
#include "tap.h"
#include "rng.h"

#ifdef HAVE_GFARM

#define FILE_SIZE	(3 * 1024 * 1024 + 12345)
#define FAR_OFF		(5ULL << 30)	/* past 4 GiB: 64-bit offsets */

static char dir[1024];			/* BASE/gfarm_store.PID */
static char *hosts[64];
static int nhosts;
static const char *down_host;
static const char *hostport;
static int keep;
static int placement_only;

static void
pattern(unsigned char *buf, size_t len, uint64_t seed)
{
	size_t i;

	rnd_seed(seed);
	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)(rnd64() >> 56);
}

static const char *
path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
	return buf;
}

static int
has(const struct gfsp_error *err, const char *s)
{
	return strstr(err->msg, s) != NULL;
}

/* write buf to a new file through create(place), in uneven pieces */
static int
write_file(const char *path, const struct gfsp_place *place,
	   const unsigned char *buf, size_t len, struct gfsp_error *err)
{
	struct gfsp_file *f;
	size_t off = 0, n;
	int rc;

	rc = gfsp_create(path, 0644, place, &f, err);
	if (rc != 0)
		return rc;
	while (rc == 0 && off < len) {
		n = GFSP_MIN(len - off, 100000 + off % 77777);
		rc = gfsp_pwrite(f, buf + off, n, off, err);
		off += n;
	}
	if (gfsp_close(f, err) != 0 && rc == 0)
		rc = err->code;
	return rc;
}

/* read all of path and compare with want[len]; 1 if equal */
static int
same_content(const char *path, const unsigned char *want, size_t len)
{
	struct gfsp_error err = { 0 };
	struct gfsp_file *f;
	unsigned char *got = malloc(len + 100);
	size_t done = 0;
	int same = 0;

	if (got == NULL)
		return 0;
	if (gfsp_open(path, GFSP_O_RDONLY, 0, &f, &err) == 0) {
		/* ask for more than there is: short only at end of file */
		if (gfsp_pread(f, got, len + 100, 0, &done, &err) == 0)
			same = done == len && memcmp(got, want, len) == 0;
		gfsp_close(f, &err);
	}
	if (!same)
		diag("%s: %zu bytes read of %zu; %s", path, done, len,
		     err.msg);
	free(got);
	return same;
}

/* where() of path is exactly one host; it is copied to out */
static int
one_host(const char *path, char *out, size_t outlen)
{
	struct gfsp_error err = { 0 };
	char **h;
	size_t n, i;
	int rc;

	out[0] = '\0';
	rc = gfsp_where(path, &h, &n, &err);
	if (rc != 0) {
		diag("where %s: %s", path, err.msg);
		return 0;
	}
	if (n == 1)
		snprintf(out, outlen, "%s", h[0]);
	else
		for (i = 0; i < n; i++)
			diag("where %s: replica %zu on %s", path, i, h[i]);
	gfsp_strv_free(h, n);
	return n == 1;
}

static int
is_live_host(const char *h)
{
	int i;

	for (i = 0; i < nhosts; i++)
		if (strcmp(hosts[i], h) == 0)
			return 1;
	return 0;
}

static int
absent(const char *path)
{
	struct gfsp_error err = { 0 };
	struct gfsp_stat st = { 0 };

	return gfsp_stat(path, &st, &err) == GFSP_ENOENT;
}

/* ------------------------------------------------------------- tests */

static void
test_dirs(void)
{
	struct gfsp_error err = { 0 };
	const struct gfsp_store_ops *ops;
	struct gfsp_stat st = { 0 };
	int rc;

	ok(gfsp_store_for(dir, &ops, &err) == 0 &&
	   strcmp(ops->name, "gfarm") == 0, "'%s' goes to the gfarm backend",
	   dir);
	gfsp_error_clear(&err);
	ok(gfsp_mkdir(dir, 0755, &err) == 0, "mkdir %s %s", dir, err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_stat(dir, &st, &err);
	ok(rc == 0 && S_ISDIR(st.mode) && (st.mode & 0777) == 0755,
	   "stat: a directory, mode 0755 (%o)", st.mode);
	gfsp_error_clear(&err);
	ok(gfsp_mkdir(dir, 0755, &err) == GFSP_EEXIST &&
	   has(&err, "cannot create directory '") && has(&err, dir) &&
	   has(&err, "': already exists"),
	   "mkdir of an existing directory: GFSP_EEXIST, gfarm's text (%s)",
	   err.msg);
}

static void
test_data(void)
{
	unsigned char *buf = malloc(FILE_SIZE), *got = malloc(FILE_SIZE);
	struct gfsp_error err = { 0 };
	struct gfsp_file *f = NULL;
	struct gfsp_stat st = { 0 };
	char p[1200];
	size_t done = 0, off, n;
	int rc;

	if (buf == NULL || got == NULL)
		abort();
	pattern(buf, FILE_SIZE, 1);
	path_of(p, sizeof(p), "data");

	/* written out of order: the second half first, then the first */
	rc = gfsp_create(p, 0640, NULL, &f, &err);
	ok(rc == 0, "create %s %s", p, err.msg);
	if (rc != 0)
		goto out;
	group_start();
	for (off = FILE_SIZE / 2; off < FILE_SIZE; off += n) {
		n = GFSP_MIN(FILE_SIZE - off, 65536 + off % 1000);
		check(gfsp_pwrite(f, buf + off, n, off, &err) == 0,
		      "pwrite at %zu: %s", off, err.msg);
	}
	check(gfsp_fstat(f, &st, &err) == 0 && st.size == FILE_SIZE,
	      "fstat while writing: size %llu, want %d (%s)",
	      (unsigned long long)st.size, FILE_SIZE, err.msg);
	check(gfsp_pwrite(f, buf, FILE_SIZE / 2, 0, &err) == 0,
	      "pwrite of the first half: %s", err.msg);
	check(gfsp_fsync(f, &err) == 0, "fsync: %s", err.msg);
	check(gfsp_fstat(f, &st, &err) == 0 && st.size == FILE_SIZE &&
	      S_ISREG(st.mode), "fstat after fsync: size %llu mode %o",
	      (unsigned long long)st.size, st.mode);
	check(gfsp_close(f, &err) == 0, "close: %s", err.msg);
	ok(group_failures() == 0, "pwrite out of order, fstat sees the "
	   "current size while open, fsync, close");

	gfsp_error_clear(&err);
	ok(gfsp_stat(p, &st, &err) == 0 && st.size == FILE_SIZE &&
	   S_ISREG(st.mode) && (st.mode & 0777) == 0640 &&
	   st.blocks_bytes == FILE_SIZE && st.mtime > 1000000000,
	   "stat after close: size %llu, regular, mode 0640 (%o) %s",
	   (unsigned long long)st.size, st.mode, err.msg);
	ok(same_content(p, buf, FILE_SIZE), "read back byte for byte");

	/* reads: across the end, at the end, past the end */
	gfsp_error_clear(&err);
	rc = gfsp_open(p, GFSP_O_RDONLY, 0, &f, &err);
	ok(rc == 0, "open for reading %s", err.msg);
	if (rc != 0)
		goto out;
	memset(got, 0, 1000);
	rc = gfsp_pread(f, got, 1000, FILE_SIZE - 300, &done, &err);
	ok(rc == 0 && done == 300 &&
	   memcmp(got, buf + FILE_SIZE - 300, 300) == 0,
	   "pread across the end: short, 300 bytes (%zu)", done);
	ok(gfsp_pread(f, got, 10, FILE_SIZE, &done, &err) == 0 && done == 0,
	   "pread at the end: 0 bytes");
	ok(gfsp_pread(f, got, 10, FILE_SIZE + 5000, &done, &err) == 0 &&
	   done == 0, "pread past the end: 0 bytes");
	ok(gfsp_pread(f, got, 4096, 12345, &done, &err) == 0 &&
	   done == 4096 && memcmp(got, buf + 12345, 4096) == 0,
	   "pread in the middle");
	gfsp_error_clear(&err);
	ok(gfsp_pwrite(f, buf, 10, 0, &err) != 0 && has(&err, p) &&
	   has(&err, "cannot write"), "pwrite on a read-only handle "
	   "fails: %s", err.msg);
	gfsp_close(f, NULL);

	/* truncate down and up on an RDWR handle */
	gfsp_error_clear(&err);
	rc = gfsp_open(p, GFSP_O_RDWR, 0, &f, &err);
	ok(rc == 0, "open read-write %s", err.msg);
	if (rc != 0)
		goto out;
	group_start();
	check(gfsp_ftruncate(f, 1000, &err) == 0, "truncate 1000: %s",
	      err.msg);
	check(gfsp_fstat(f, &st, &err) == 0 && st.size == 1000,
	      "fstat after truncate: %llu", (unsigned long long)st.size);
	check(gfsp_ftruncate(f, 5000, &err) == 0, "truncate 5000: %s",
	      err.msg);
	check(gfsp_fstat(f, &st, &err) == 0 && st.size == 5000,
	      "fstat after growing: %llu", (unsigned long long)st.size);
	check(gfsp_close(f, &err) == 0, "close: %s", err.msg);
	ok(group_failures() == 0, "ftruncate down to 1000 and up to 5000");
	memcpy(got, buf, 1000);
	memset(got + 1000, 0, 4000);
	ok(same_content(p, got, 5000), "after truncate: the first 1000 "
	   "bytes kept, zeros up to 5000");

	/* a byte far past 4 GiB: offsets are 64-bit all the way */
	gfsp_error_clear(&err);
	rc = gfsp_open(p, GFSP_O_WRONLY, 0, &f, &err);
	if (rc == 0) {
		rc = gfsp_pwrite(f, "far!", 4, FAR_OFF, &err);
		if (rc == 0)
			rc = gfsp_fstat(f, &st, &err);
		gfsp_close(f, rc == 0 ? &err : NULL);
	}
	ok(rc == 0 && st.size == FAR_OFF + 4, "pwrite at 5 GiB: size "
	   "%llu %s", (unsigned long long)st.size, err.msg);
	gfsp_error_clear(&err);
	memset(got, 0, 8);
	rc = gfsp_open(p, GFSP_O_RDONLY, 0, &f, &err);
	if (rc == 0) {
		rc = gfsp_pread(f, got, 8, FAR_OFF - 2, &done, &err);
		gfsp_close(f, NULL);
	}
	ok(rc == 0 && done == 6 && memcmp(got, "\0\0far!", 6) == 0,
	   "pread at 5 GiB - 2: the hole, then the bytes (%zu) %s", done,
	   err.msg);

	/* open flags */
	gfsp_error_clear(&err);
	ok(gfsp_open(p, GFSP_O_WRONLY | GFSP_O_CREAT | GFSP_O_EXCL, 0644, &f,
		    &err) == GFSP_EEXIST && f == NULL &&
	   has(&err, "cannot create '") && has(&err, "': already exists"),
	   "open O_CREAT|O_EXCL of an existing file: GFSP_EEXIST (%s)",
	   err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_open(p, GFSP_O_WRONLY | GFSP_O_TRUNC, 0, &f, &err);
	if (rc == 0) {
		rc = gfsp_fstat(f, &st, &err);
		gfsp_close(f, NULL);
	}
	ok(rc == 0 && st.size == 0 && gfsp_stat(p, &st, &err) == 0 &&
	   st.size == 0, "open O_TRUNC empties the file (%llu) %s",
	   (unsigned long long)st.size, err.msg);
	gfsp_error_clear(&err);
	path_of(p, sizeof(p), "created-by-open");
	rc = gfsp_open(p, GFSP_O_RDWR | GFSP_O_CREAT, 0600, &f, &err);
	if (rc == 0) {
		rc = gfsp_pwrite(f, buf, 777, 0, &err);
		if (rc == 0)
			rc = gfsp_pread(f, got, 777, 0, &done, &err);
		gfsp_close(f, NULL);
	}
	ok(rc == 0 && done == 777 && memcmp(got, buf, 777) == 0 &&
	   gfsp_stat(p, &st, &err) == 0 && (st.mode & 0777) == 0600,
	   "open O_RDWR|O_CREAT creates, writes and reads back (%s)",
	   err.msg);
out:
	free(buf);
	free(got);
}

static void
test_errors(void)
{
	struct gfsp_error err = { 0 };
	struct gfsp_file *f = (struct gfsp_file *)&err;
	struct gfsp_stat st = { 0 };
	char p[1200], want[1400], **names = NULL;
	size_t n = 0;
	int rc;

	path_of(p, sizeof(p), "nosuch");
	snprintf(want, sizeof(want), "cannot open '%s': no such file or "
		 "directory", p);
	rc = gfsp_open(p, GFSP_O_RDONLY, 0, &f, &err);
	ok(rc == GFSP_ENOENT && f == NULL && strcmp(err.msg, want) == 0 &&
	   err.sys != 0, "open of a missing file: GFSP_ENOENT, \"%s\"",
	   err.msg);
	gfsp_error_clear(&err);
	path_of(p, sizeof(p), "nosuchdir/x");
	rc = gfsp_create(p, 0644, NULL, &f, &err);
	ok(rc == GFSP_ENOENT && has(&err, p) &&
	   has(&err, ": no such file or directory"),
	   "create under a missing directory: GFSP_ENOENT (%s)", err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_stat(p, &st, &err) == GFSP_ENOENT &&
	   has(&err, "cannot stat '") && has(&err, p),
	   "stat of a missing path: GFSP_ENOENT (%s)", err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_open(dir, GFSP_O_RDONLY, 0, &f, &err) == GFSP_EINVAL &&
	   has(&err, ": is a directory"), "open of a directory: GFSP_EINVAL "
	   "(%s)", err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_unlink(p, &err) == GFSP_ENOENT && has(&err, "cannot remove '"),
	   "unlink of a missing file: GFSP_ENOENT (%s)", err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_where(p, &names, &n, &err) == GFSP_ENOENT && names == NULL &&
	   n == 0 && has(&err, p) && has(&err, ": no such file or directory"),
	   "where of a missing file: GFSP_ENOENT (%s)", err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_where(dir, &names, &n, &err) == 0 && n == 0,
	   "where of a directory: no hosts, as on POSIX (%zu) %s", n,
	   err.msg);
	gfsp_strv_free(names, n);
	gfsp_error_clear(&err);
	ok(gfsp_stat("gfarm://localhost:99999/x", &st, &err) == GFSP_EINVAL &&
	   has(&err, "gfarm://localhost:99999/x") &&
	   has(&err, "port number is invalid"),
	   "a bad port in the URL: GFSP_EINVAL (%s)", err.msg);
}

static void
test_rename_readdir(void)
{
	unsigned char a[5000], b[3000];
	struct gfsp_error err = { 0 };
	char pa[1200], pb[1200], pc[1200], pd[1200], sub[1200];
	char **names = NULL;
	static const char *const want[] = {
		"created-by-open", "data", "sub", "ya", "yb"
	};
	size_t n = 0, i;
	int same;

	pattern(a, sizeof(a), 2);
	pattern(b, sizeof(b), 3);
	path_of(pa, sizeof(pa), "ya");
	path_of(pb, sizeof(pb), "yb");
	path_of(pc, sizeof(pc), "yc");
	path_of(sub, sizeof(sub), "sub");
	ok(write_file(pa, NULL, a, sizeof(a), &err) == 0 &&
	   write_file(pb, NULL, b, sizeof(b), &err) == 0 &&
	   gfsp_mkdir(sub, 0700, &err) == 0, "two files and a directory "
	   "%s", err.msg);

	ok(gfsp_readdir(dir, &names, &n, &err) == 0, "readdir %s", err.msg);
	same = n == GFSP_ARRAY_SIZE(want);
	for (i = 0; same && i < n; i++)
		same = strcmp(names[i], want[i]) == 0;
	for (i = 0; !same && i < n; i++)
		diag("readdir: %s", names[i]);
	ok(same, "readdir: the %zu names, sorted, no . or ..", n);
	gfsp_strv_free(names, n);
	gfsp_error_clear(&err);
	ok(gfsp_readdir(pa, &names, &n, &err) == GFSP_ENOENT &&
	   has(&err, "cannot open directory '") &&
	   has(&err, ": not a directory"),
	   "readdir of a file: GFSP_ENOENT (%s)", err.msg);

	gfsp_error_clear(&err);
	ok(gfsp_rename(pa, pb, &err) == GFSP_EEXIST &&
	   has(&err, "cannot rename '") && has(&err, pb) &&
	   has(&err, ": already exists"),
	   "rename onto an existing file: GFSP_EEXIST (%s)", err.msg);
	ok(same_content(pa, a, sizeof(a)) && same_content(pb, b, sizeof(b)),
	   "both files unchanged after the refused rename");
	gfsp_error_clear(&err);
	ok(gfsp_rename(pa, sub, &err) == GFSP_EEXIST,
	   "rename onto an existing directory: GFSP_EEXIST (%s)", err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_rename(pa, pc, &err) == 0 && absent(pa) &&
	   same_content(pc, a, sizeof(a)), "rename to a new name moves the "
	   "data %s", err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_rename(pa, path_of(pd, sizeof(pd), "yd"), &err) == GFSP_ENOENT &&
	   has(&err, ": no such file or directory") && absent(pd),
	   "rename of a missing file: GFSP_ENOENT (%s)", err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_rename(pc, "/tmp/x", &err) == GFSP_ENOTSUP,
	   "rename from Gfarm to POSIX: GFSP_ENOTSUP (%s)", err.msg);

	gfsp_error_clear(&err);
	ok(gfsp_rmdir(dir, &err) == GFSP_EEXIST &&
	   has(&err, "cannot remove directory '") &&
	   has(&err, ": directory not empty"),
	   "rmdir of a non-empty directory: GFSP_EEXIST (%s)", err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_rmdir(pc, &err) == GFSP_ENOENT, "rmdir of a file fails (%s)",
	   err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_unlink(pc, &err) == 0 && gfsp_unlink(pb, &err) == 0 &&
	   absent(pc) && absent(pb) && gfsp_rmdir(sub, &err) == 0 &&
	   absent(sub), "unlink and rmdir remove %s", err.msg);
}

static void
test_xattr(void)
{
	static const char val[] = "gfsplit\0v1\n\xff";
	struct gfsp_error err = { 0 };
	char buf[64], p[1200];
	size_t len;
	int rc;

	gfsp_error_clear(&err);
	ok(gfsp_setxattr(dir, "user.gfsplit", val, sizeof(val), &err) == 0,
	   "setxattr user.gfsplit on the directory %s", err.msg);
	len = sizeof(buf);
	memset(buf, 0, sizeof(buf));
	rc = gfsp_getxattr(dir, "user.gfsplit", buf, &len, &err);
	ok(rc == 0 && len == sizeof(val) && memcmp(buf, val, len) == 0,
	   "getxattr returns the same %zu bytes (%zu) %s", sizeof(val), len,
	   err.msg);
	ok(gfsp_setxattr(dir, "user.gfsplit", "x", 1, &err) == 0 &&
	   (len = sizeof(buf), gfsp_getxattr(dir, "user.gfsplit", buf, &len,
					   &err) == 0) &&
	   len == 1 && buf[0] == 'x', "setxattr replaces the value");
	len = 3;
	gfsp_setxattr(dir, "user.long", val, sizeof(val), &err);
	gfsp_error_clear(&err);
	ok(gfsp_getxattr(dir, "user.long", buf, &len, &err) == GFSP_EINVAL &&
	   len == sizeof(val) && has(&err, "larger than 3 bytes"),
	   "getxattr into a small buffer: GFSP_EINVAL, size given (%zu) (%s)",
	   len, err.msg);
	len = sizeof(buf);
	gfsp_error_clear(&err);
	ok(gfsp_getxattr(dir, "user.nosuch", buf, &len, &err) == GFSP_ENOENT &&
	   has(&err, "cannot get attribute 'user.nosuch' of '") &&
	   has(&err, ": no such object"),
	   "getxattr of a missing attribute: GFSP_ENOENT (%s)", err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_setxattr(dir, "nonamespace", "x", 1, &err) == GFSP_ENOTSUP &&
	   has(&err, "operation not supported"),
	   "setxattr outside user.*: GFSP_ENOTSUP (%s)", err.msg);
	path_of(p, sizeof(p), "data");
	gfsp_error_clear(&err);
	len = sizeof(buf);
	ok(gfsp_setxattr(p, "user.f", "on a file", 9, &err) == 0 &&
	   gfsp_getxattr(p, "user.f", buf, &len, &err) == 0 && len == 9 &&
	   memcmp(buf, "on a file", 9) == 0, "xattr round trip on a file %s",
	   err.msg);
}

/* a target of len bytes, a different byte at each place */
static char *
long_target(size_t len)
{
	char *t = malloc(len + 1);
	size_t i;

	if (t == NULL)
		abort();
	for (i = 0; i < len; i++)
		t[i] = i % 16 == 15 ? '/' :
		       (char)('a' + (i * 7 + i / 16) % 26);
	t[len] = '\0';
	return t;
}

/*
 * What a staging tool needs to copy a tree, as test_core.c checks it on
 * POSIX: lstat, symbolic and hard links, times, permissions.  Gfarm keeps
 * times as struct gfarm_timespec (int64 seconds, int32 nanoseconds) in
 * gfmd, and gfs_utimes() sends both parts: what is set, stat reads back
 * to the nanosecond, as on a local file system.
 */
static void
test_links_times(void)
{
	/* gfmd takes targets up to 1024 bytes (GFARM_PATH_MAX) */
	static const size_t lens[] = { 255, 256, 1024 };
	unsigned char data[7000];
	struct gfsp_error err = { 0 };
	struct gfsp_stat st = { 0 }, lst = { 0 }, fst = { 0 };
	struct gfsp_file *fh;
	char f[1200], l[1200], h[1200], p[1200], q[1200], name[64];
	char *t = NULL, *want;
	size_t i;
	int rc;

	pattern(data, sizeof(data), 21);
	path_of(f, sizeof(f), "tf");
	path_of(l, sizeof(l), "tl");
	path_of(h, sizeof(h), "th");
	ok(write_file(f, NULL, data, sizeof(data), &err) == 0, "create %s %s",
	   f, err.msg);
	rc = gfsp_stat(f, &fst, &err);
	ok(rc == 0 && fst.nlink == 1 && fst.atime > 1000000000 &&
	   fst.atime_ns < 1000000000, "stat: nlink 1 (%llu), atime filled "
	   "(%lld.%09llu) %s", (unsigned long long)fst.nlink,
	   (long long)fst.atime, (unsigned long long)fst.atime_ns, err.msg);
	rc = gfsp_stat(dir, &st, &err);
	ok(rc == 0 && S_ISDIR(st.mode) && st.nlink >= 2,
	   "stat of a directory: nlink %llu", (unsigned long long)st.nlink);

	/* symbolic link: lstat sees the link, stat the file */
	gfsp_error_clear(&err);
	ok(gfsp_symlink("tf", l, &err) == 0, "symlink %s -> tf %s", l,
	   err.msg);
	memset(&st, 0, sizeof(st));
	rc = gfsp_lstat(l, &lst, &err);
	rc |= gfsp_stat(l, &st, &err);
	/* Gfarm gives a link size 0, where POSIX gives its target's length */
	ok(rc == 0 && S_ISLNK(lst.mode) && lst.ino != fst.ino &&
	   lst.size == 0,
	   "lstat of a link: the link, size 0 (mode %o, ino %llu, size "
	   "%llu) %s",
	   lst.mode, (unsigned long long)lst.ino,
	   (unsigned long long)lst.size, err.msg);
	ok(rc == 0 && S_ISREG(st.mode) && st.size == sizeof(data) &&
	   st.ino == fst.ino && st.gen == fst.gen,
	   "stat of a link: the file it points to (mode %o, size %llu)",
	   st.mode, (unsigned long long)st.size);
	ok(gfsp_lstat(f, &lst, &err) == 0 && S_ISREG(lst.mode) &&
	   lst.ino == fst.ino && lst.size == sizeof(data),
	   "lstat of a regular file is its stat %s", err.msg);
	path_of(p, sizeof(p), "nosuch");
	gfsp_error_clear(&err);
	ok(gfsp_lstat(p, &lst, &err) == GFSP_ENOENT &&
	   has(&err, "cannot stat '") && has(&err, p) &&
	   has(&err, ": no such file or directory"),
	   "lstat of a missing path: GFSP_ENOENT (%s)", err.msg);

	gfsp_error_clear(&err);
	rc = gfsp_readlink(l, &t, &err);
	ok(rc == 0 && t != NULL && strcmp(t, "tf") == 0, "readlink: '%s' %s",
	   t ? t : "(null)", err.msg);
	free(t);
	t = NULL;
	for (i = 0; i < GFSP_ARRAY_SIZE(lens); i++) {
		want = long_target(lens[i]);
		snprintf(name, sizeof(name), "long%zu", lens[i]);
		path_of(p, sizeof(p), name);
		gfsp_error_clear(&err);
		rc = gfsp_symlink(want, p, &err);
		if (rc == 0)
			rc = gfsp_readlink(p, &t, &err);
		ok(rc == 0 && t != NULL && strlen(t) == lens[i] &&
		   strcmp(t, want) == 0, "readlink of a %zu-byte target "
		   "returns it whole (%zu) %s", lens[i], t ? strlen(t) : 0,
		   err.msg);
		free(t);
		free(want);
		t = NULL;
		gfsp_unlink(p, NULL);
	}
	want = long_target(1025);
	path_of(p, sizeof(p), "long1025");
	gfsp_error_clear(&err);
	ok(gfsp_symlink(want, p, &err) == GFSP_EINVAL &&
	   has(&err, "cannot create symbolic link '") && has(&err, p) &&
	   has(&err, ": file name too long") &&
	   gfsp_lstat(p, &lst, NULL) == GFSP_ENOENT,
	   "symlink of a 1025-byte target: GFSP_EINVAL, no link made (%s)",
	   err.msg);
	free(want);
	gfsp_error_clear(&err);
	t = (char *)&err;
	rc = gfsp_readlink(f, &t, &err);
	ok(rc == GFSP_EINVAL && t == NULL && has(&err, "cannot readlink '") &&
	   has(&err, f) && has(&err, ": invalid argument"),
	   "readlink of a regular file: GFSP_EINVAL (%s)", err.msg);
	path_of(p, sizeof(p), "nosuch");
	gfsp_error_clear(&err);
	ok(gfsp_readlink(p, &t, &err) == GFSP_ENOENT && t == NULL &&
	   has(&err, "cannot readlink '") && has(&err, p) &&
	   has(&err, ": no such file or directory"),
	   "readlink of a missing path: GFSP_ENOENT (%s)", err.msg);

	gfsp_error_clear(&err);
	ok(gfsp_symlink("other", l, &err) == GFSP_EEXIST &&
	   has(&err, "cannot create symbolic link '") && has(&err, l) &&
	   has(&err, ": already exists"),
	   "symlink onto a link: GFSP_EEXIST (%s)", err.msg);
	ok(gfsp_readlink(l, &t, &err) == 0 && strcmp(t, "tf") == 0,
	   "the existing link still points to tf");
	free(t);
	t = NULL;
	gfsp_error_clear(&err);
	ok(gfsp_symlink("other", f, &err) == GFSP_EEXIST &&
	   gfsp_lstat(f, &lst, NULL) == 0 && S_ISREG(lst.mode) &&
	   same_content(f, data, sizeof(data)),
	   "symlink onto a file: GFSP_EEXIST, the file unchanged (%s)",
	   err.msg);

	/* hard link */
	gfsp_error_clear(&err);
	ok(gfsp_link(f, h, &err) == 0, "link %s %s %s", f, h, err.msg);
	memset(&st, 0, sizeof(st));
	rc = gfsp_stat(h, &st, &err);
	rc |= gfsp_stat(f, &fst, &err);
	ok(rc == 0 && fst.nlink == 2 && st.nlink == 2 && st.ino == fst.ino &&
	   st.gen == fst.gen && same_content(h, data, sizeof(data)),
	   "after link: nlink 2 (%llu), the same inode, the same data",
	   (unsigned long long)fst.nlink);
	gfsp_error_clear(&err);
	ok(gfsp_link(f, l, &err) == GFSP_EEXIST && has(&err, "cannot link '") &&
	   has(&err, f) && has(&err, l) && has(&err, ": already exists") &&
	   gfsp_lstat(l, &lst, NULL) == 0 && S_ISLNK(lst.mode),
	   "link onto an existing name: GFSP_EEXIST, it stays (%s)", err.msg);
	path_of(p, sizeof(p), "nosuch");
	path_of(q, sizeof(q), "th2");
	gfsp_error_clear(&err);
	ok(gfsp_link(p, q, &err) == GFSP_ENOENT && has(&err, "cannot link '") &&
	   has(&err, p) && has(&err, ": no such file or directory") &&
	   absent(q), "link of a missing file: GFSP_ENOENT (%s)", err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_link(f, "/tmp/x", &err) == GFSP_ENOTSUP,
	   "link from Gfarm to POSIX: GFSP_ENOTSUP (%s)", err.msg);

	/* times to the nanosecond, also past 2038 (64-bit seconds) */
	gfsp_error_clear(&err);
	rc = gfsp_utimens(f, 1234567890, 123456789, 1500000000, 987654321,
			 &err);
	memset(&st, 0, sizeof(st));
	rc |= gfsp_stat(f, &st, &err);
	ok(rc == 0 && st.atime == 1234567890 && st.atime_ns == 123456789 &&
	   st.mtime == 1500000000 && st.mtime_ns == 987654321,
	   "utimens round trip: atime %lld.%09llu mtime %lld.%09llu %s",
	   (long long)st.atime, (unsigned long long)st.atime_ns,
	   (long long)st.mtime, (unsigned long long)st.mtime_ns, err.msg);
	/*
	 * fstat of a read-only handle is gfmd's (gfs_fstat): the times set
	 * above, as stat sees them, so an open file compares equal to its
	 * path (a writing handle's are the data node's copy's, which
	 * gfs_utimes() does not change).
	 */
	memset(&st, 0, sizeof(st));
	memset(&lst, 0, sizeof(lst));
	rc = gfsp_open(h, GFSP_O_RDONLY, 0, &fh, &err);
	if (rc == 0) {
		rc = gfsp_fstat(fh, &st, &err);
		rc |= gfsp_stat(h, &lst, &err);
		gfsp_close(fh, NULL);
	}
	ok(rc == 0 && st.atime_ns < 1000000000 && st.nlink == 2 &&
	   st.ctime == lst.ctime && st.ctime_ns == lst.ctime_ns &&
	   st.mtime == 1500000000 && st.mtime_ns == 987654321 &&
	   st.mtime == lst.mtime && st.mtime_ns == lst.mtime_ns,
	   "read-only fstat sees stat's times (mtime %lld.%09llu) and nlink "
	   "(%llu) %s", (long long)st.mtime, (unsigned long long)st.mtime_ns,
	   (unsigned long long)st.nlink, err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_utimens(f, 5000000000LL, 1, 4000000000LL, 999999999, &err);
	rc |= gfsp_stat(f, &st, &err);
	ok(rc == 0 && st.atime == 5000000000LL && st.atime_ns == 1 &&
	   st.mtime == 4000000000LL && st.mtime_ns == 999999999,
	   "utimens past 2038: atime %lld.%09llu mtime %lld.%09llu %s",
	   (long long)st.atime, (unsigned long long)st.atime_ns,
	   (long long)st.mtime, (unsigned long long)st.mtime_ns, err.msg);
	/* through the link: the file's times change, not the link's */
	gfsp_error_clear(&err);
	rc = gfsp_utimens(l, 1000000001, 1, 1000000002, 2, &err);
	rc |= gfsp_stat(f, &st, &err);
	rc |= gfsp_lstat(l, &lst, &err);
	ok(rc == 0 && st.atime == 1000000001 && st.atime_ns == 1 &&
	   st.mtime == 1000000002 && st.mtime_ns == 2 &&
	   lst.mtime != 1000000002, "utimens follows a link: the file's "
	   "times set (%lld.%09llu), the link's not (%lld)",
	   (long long)st.mtime, (unsigned long long)st.mtime_ns,
	   (long long)lst.mtime);
	path_of(p, sizeof(p), "nosuch");
	gfsp_error_clear(&err);
	ok(gfsp_utimens(p, 1, 0, 1, 0, &err) == GFSP_ENOENT &&
	   has(&err, "cannot set times of '") && has(&err, p) &&
	   has(&err, ": no such file or directory"),
	   "utimens of a missing path: GFSP_ENOENT (%s)", err.msg);

	/* permissions */
	gfsp_error_clear(&err);
	rc = gfsp_chmod(f, 0600, &err);
	rc |= gfsp_stat(f, &st, &err);
	ok(rc == 0 && (st.mode & 07777) == 0600 && S_ISREG(st.mode),
	   "chmod 0600 round trip (%o) %s", st.mode, err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_chmod(f, S_IFDIR | 04751, &err);
	rc |= gfsp_stat(f, &st, &err);
	ok(rc == 0 && (st.mode & 07777) == 04751 && S_ISREG(st.mode),
	   "chmod: setuid and 0751 set, the type bits given ignored (%o) %s",
	   st.mode, err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_chmod(l, 0640, &err);
	rc |= gfsp_stat(f, &st, &err);
	rc |= gfsp_lstat(l, &lst, &err);
	ok(rc == 0 && (st.mode & 07777) == 0640 && S_ISLNK(lst.mode),
	   "chmod follows a link: the file is 0640 (%o) %s", st.mode,
	   err.msg);
	path_of(p, sizeof(p), "nosuch");
	gfsp_error_clear(&err);
	ok(gfsp_chmod(p, 0644, &err) == GFSP_ENOENT &&
	   has(&err, "cannot change permissions of '") && has(&err, p) &&
	   has(&err, ": no such file or directory"),
	   "chmod of a missing path: GFSP_ENOENT (%s)", err.msg);

	gfsp_error_clear(&err);
	rc = gfsp_unlink(h, &err);
	rc |= gfsp_stat(f, &st, &err);
	ok(rc == 0 && st.nlink == 1 && same_content(f, data, sizeof(data)),
	   "unlink of one name: nlink 1 again, the data kept (%llu) %s",
	   (unsigned long long)st.nlink, err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_unlink(l, &err) == 0 && absent(l) &&
	   gfsp_stat(f, &st, &err) == 0 && gfsp_unlink(f, &err) == 0 &&
	   absent(f), "unlink removes the link, not the file, then the file "
	   "%s", err.msg);
}

/* each live host: a file pinned there, STRICT, is there and reads back */
static void
test_pinned(void)
{
	struct gfsp_error err = { 0 };
	unsigned char buf[100000];
	char p[1200], name[64], at[256];
	int i, rc;

	for (i = 0; i < nhosts; i++) {
		struct gfsp_place place = { hosts[i], GFSP_PLACE_STRICT };

		snprintf(name, sizeof(name), "pin.%d", i);
		path_of(p, sizeof(p), name);
		pattern(buf, sizeof(buf), 100 + (uint64_t)i);
		gfsp_error_clear(&err);
		rc = write_file(p, &place, buf, sizeof(buf) - (size_t)i, &err);
		ok(rc == 0, "create pinned to %s, STRICT %s", hosts[i],
		   err.msg);
		ok(one_host(p, at, sizeof(at)) && strcmp(at, hosts[i]) == 0,
		   "where: %s is on %s only (%s)", name, hosts[i], at);
		ok(same_content(p, buf, sizeof(buf) - (size_t)i),
		   "%s reads back", name);
		if (keep)
			diag("pinned %s %s", p, hosts[i]);
	}
}

/* STRICT on a node that cannot take the file fails and leaves nothing;
 * FALLBACK puts it on a live node */
static void
test_unplaceable(const char *host, const char *why, const char *cause)
{
	struct gfsp_place strict = { host, GFSP_PLACE_STRICT };
	struct gfsp_place fallback = { host, GFSP_PLACE_FALLBACK };
	struct gfsp_error err = { 0 };
	struct gfsp_file *f = (struct gfsp_file *)&err;
	unsigned char buf[70000];
	char p[1200], name[64], at[256], want[1500];
	int rc;

	snprintf(name, sizeof(name), "strict.%s", why);
	path_of(p, sizeof(p), name);
	snprintf(want, sizeof(want), "cannot create '%s' on node '%s': %s", p,
		 host, cause);
	rc = gfsp_create(p, 0644, &strict, &f, &err);
	ok(rc == GFSP_ENET && f == NULL && strcmp(err.msg, want) == 0,
	   "STRICT on %s node %s: GFSP_ENET, \"%s\"", why, host, err.msg);
	if (rc == 0)
		gfsp_close(f, NULL);
	ok(absent(p), "STRICT on %s node: no file left behind", why);

	snprintf(name, sizeof(name), "fallback.%s", why);
	path_of(p, sizeof(p), name);
	pattern(buf, sizeof(buf), 7);
	gfsp_error_clear(&err);
	rc = write_file(p, &fallback, buf, sizeof(buf), &err);
	ok(rc == 0, "FALLBACK on %s node %s: created %s", why, host, err.msg);
	ok(one_host(p, at, sizeof(at)) && is_live_host(at),
	   "FALLBACK: landed on a live node (%s)", at);
	ok(same_content(p, buf, sizeof(buf)), "FALLBACK file reads back");
	gfsp_unlink(p, NULL);
}

/* the same file through gfarm://HOST:PORT/... */
static void
test_hostport(void)
{
	unsigned char buf[50000];
	struct gfsp_error err = { 0 };
	struct gfsp_stat st = { 0 };
	char p[1200], q[1400], at[256];
	const char *rest;

	/* dir is "gfarm:///..." or "gfarm://h:p/...": keep the path */
	rest = strchr(dir + strlen("gfarm://"), '/');
	snprintf(q, sizeof(q), "gfarm://%s%s/viahostport", hostport, rest);
	path_of(p, sizeof(p), "viahostport");
	pattern(buf, sizeof(buf), 9);
	ok(write_file(q, NULL, buf, sizeof(buf), &err) == 0,
	   "create through %s %s", q, err.msg);
	ok(same_content(p, buf, sizeof(buf)) && same_content(q, buf,
							      sizeof(buf)),
	   "the file reads back through both URL forms");
	ok(gfsp_stat(q, &st, &err) == 0 && st.size == sizeof(buf) &&
	   one_host(q, at, sizeof(at)), "stat and where through host:port "
	   "%s", err.msg);
	gfsp_unlink(q, NULL);

	/* the URL's gfmd is the one asked, not the configured one: nothing
	 * listens on port 1 */
	gfsp_error_clear(&err);
	ok(gfsp_stat("gfarm://127.0.0.1:1/x", &st, &err) == GFSP_ENET &&
	   strcmp(err.msg, "cannot stat 'gfarm://127.0.0.1:1/x': connection "
		  "refused") == 0, "a gfmd that is not there: GFSP_ENET (%s)",
	   err.msg);
}

/* the pipeline calls from two threads at once: one reads, one writes */
struct thr {
	const char *path;
	int reader;
	int failures;
};

static void *
thr_run(void *arg)
{
	struct thr *t = arg;
	unsigned char buf[65536], want[65536];
	struct gfsp_error err = { 0 };
	struct gfsp_file *f;
	size_t done;
	int i;

	pattern(want, sizeof(want), 11);
	if (gfsp_open(t->path, t->reader ? GFSP_O_RDONLY : GFSP_O_WRONLY, 0, &f,
		     &err) != 0) {
		t->failures++;
		return NULL;
	}
	for (i = 0; i < 64; i++) {
		if (t->reader) {
			if (gfsp_pread(f, buf, sizeof(buf),
				      (uint64_t)i * sizeof(buf), &done,
				      &err) != 0 || done != sizeof(buf) ||
			    memcmp(buf, want, sizeof(buf)) != 0)
				t->failures++;
		} else if (gfsp_pwrite(f, want, sizeof(want),
				      (uint64_t)i * sizeof(want), &err) != 0) {
			t->failures++;
		}
	}
	if (gfsp_close(f, &err) != 0)
		t->failures++;
	return NULL;
}

static void
test_threads(void)
{
	unsigned char want[65536];
	struct gfsp_error err = { 0 };
	struct gfsp_file *f;
	char src[1200], dst[1200];
	struct thr t[2];
	pthread_t th[2];
	int i, rc;

	pattern(want, sizeof(want), 11);
	path_of(src, sizeof(src), "thr.src");
	path_of(dst, sizeof(dst), "thr.dst");
	rc = gfsp_create(src, 0644, NULL, &f, &err);
	for (i = 0; rc == 0 && i < 64; i++)
		rc = gfsp_pwrite(f, want, sizeof(want),
				(uint64_t)i * sizeof(want), &err);
	if (f != NULL)
		gfsp_close(f, NULL);
	rc = rc ? rc : gfsp_create(dst, 0644, NULL, &f, &err);
	if (rc == 0)
		gfsp_close(f, NULL);
	t[0] = (struct thr){ src, 1, 0 };
	t[1] = (struct thr){ dst, 0, 0 };
	for (i = 0; rc == 0 && i < 2; i++)
		rc = pthread_create(&th[i], NULL, thr_run, &t[i]);
	for (i = 0; rc == 0 && i < 2; i++)
		pthread_join(th[i], NULL);
	ok(rc == 0 && t[0].failures == 0 && t[1].failures == 0,
	   "a reader and a writer thread at once (%d, %d failures) %s",
	   t[0].failures, t[1].failures, err.msg);
	gfsp_unlink(src, NULL);
	gfsp_unlink(dst, NULL);
}

static void
cleanup(void)
{
	struct gfsp_error err = { 0 };
	char **names = NULL, p[1200];
	size_t n = 0, i;

	if (keep)
		return;
	if (gfsp_readdir(dir, &names, &n, &err) == 0) {
		for (i = 0; i < n; i++)
			gfsp_unlink(path_of(p, sizeof(p), names[i]), NULL);
		gfsp_strv_free(names, n);
	}
	gfsp_error_clear(&err);
	ok(gfsp_rmdir(dir, &err) == 0 && absent(dir), "cleaned up %s %s", dir,
	   err.msg);
}

int
main(int argc, char **argv)
{
	char *list, *h;
	int i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--keep") == 0)
			keep = 1;
		else if (strcmp(argv[i], "--placement") == 0)
			placement_only = 1;
		else if (strcmp(argv[i], "--hostport") == 0 && i + 1 < argc)
			hostport = argv[++i];
		else
			break;
	}
	if (argc - i < 2 || argc - i > 3 ||
	    (placement_only && argc - i != 3)) {
		skip("needs a running Gfarm: run by tests/cmd/gfarm_store.sh "
		     "(usage: %s [--keep] [--hostport H:P] BASE HOSTS [DOWN]"
		     " or --placement BASE HOSTS DOWN)", argv[0]);
		return done_testing();
	}
	snprintf(dir, sizeof(dir), "%s%sgfarm_store.%ld", argv[i],
		 argv[i][strlen(argv[i]) - 1] == '/' ? "" : "/",
		 (long)getpid());
	list = strdup(argv[i + 1]);
	for (h = strtok(list, ","); h != NULL && nhosts < 64;
	     h = strtok(NULL, ","))
		hosts[nhosts++] = h;
	down_host = argc - i == 3 ? argv[i + 2] : NULL;

	test_dirs();
	if (placement_only) {
		test_pinned();
		test_unplaceable(down_host, "down", "connection refused");
		cleanup();
		free(list);
		return done_testing();
	}
	test_data();
	test_errors();
	test_rename_readdir();
	test_xattr();
	test_links_times();
	test_pinned();
	test_unplaceable("nosuchnode.invalid", "unknown", "unknown host");
	if (down_host != NULL)
		test_unplaceable(down_host, "down", "connection refused");
	else
		skip("STRICT/FALLBACK on a node that is down: no DOWN host "
		     "given (gfarm_store.sh runs them with --placement)");
	if (hostport != NULL)
		test_hostport();
	else
		skip("gfarm://HOST:PORT URLs: no --hostport given");
	test_threads();
	cleanup();
	free(list);
	return done_testing();
}

#else /* !HAVE_GFARM */

int
main(void)
{
	skip("gfsplit was built without Gfarm (./configure --with-gfarm)");
	return done_testing();
}

#endif /* HAVE_GFARM */
