/*
 * test_core.c - errors, sizes, the growable array and the POSIX store,
 * without MPI.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <json-c/json.h>

#include "core.h"
#include "driver.h"
#include "store.h"
#include "tap.h"
#include "tpath.h"

static void
test_sizes(void)
{
	static const struct { const char *s; uint64_t v; } good[] = {
		{ "0", 0 }, { "1", 1 }, { "4096", 4096 },
		{ "4k", 4096 }, { "4K", 4096 }, { "4KiB", 4096 },
		{ "4KB", 4096 }, { "4kb", 4096 }, { "4Ki", 4096 },
		{ "512B", 512 }, { "1M", 1 << 20 }, { "1MiB", 1 << 20 },
		{ "1.5G", 3ULL << 29 }, { "1.5K", 1536 }, { "0.5M", 1 << 19 },
		{ "0.1K", 102 }, { "2T", 2ULL << 40 }, { "1P", 1ULL << 50 },
		{ "1E", 1ULL << 60 }, { "15E", 15ULL << 60 },
		{ "18446744073709551615", UINT64_MAX },
		{ "007", 7 },
	};
	static const char *const bad[] = {
		"", "-1", "-4K", "+4", " 4", "4 ", "abc", "4X", "4KX",
		"4KiBB", "K", ".5K", "1.", "1.5", "1.5B", "4iB",
		"18446744073709551616", "16E", "99999999999999999999999",
		"1e3", "0x10",
	};
	struct gfsp_error err;
	uint64_t v;
	size_t i;
	char buf[64];

	for (i = 0; i < GFSP_ARRAY_SIZE(good); i++) {
		v = 12345;
		gfsp_error_clear(&err);
		ok(gfsp_parse_size(good[i].s, &v, &err) == 0 &&
		   v == good[i].v, "parse_size '%s' = %llu (got %llu)",
		   good[i].s, (unsigned long long)good[i].v,
		   (unsigned long long)v);
	}
	for (i = 0; i < GFSP_ARRAY_SIZE(bad); i++) {
		char quoted[64];

		v = 12345;
		gfsp_error_clear(&err);
		snprintf(quoted, sizeof(quoted), "'%s'", bad[i]);
		ok(gfsp_parse_size(bad[i], &v, &err) == GFSP_EINVAL &&
		   err.code == GFSP_EINVAL && v == 12345 &&
		   strstr(err.msg, quoted) != NULL,
		   "parse_size rejects '%s': %s", bad[i], err.msg);
	}
	ok(gfsp_parse_size("x", &v, NULL) == GFSP_EINVAL,
	   "parse_size with a NULL error");

	static const struct { uint64_t n; const char *s; } fmt[] = {
		{ 0, "0 B" }, { 512, "512 B" }, { 1023, "1023 B" },
		{ 1024, "1.00 KiB" }, { 1536, "1.50 KiB" },
		{ 3ULL << 29, "1.50 GiB" }, { 512ULL << 20, "512.0 MiB" },
		{ 100ULL << 10, "100.0 KiB" }, { (1ULL << 20) - 1, "1.00 MiB" },
		{ 1ULL << 40, "1.00 TiB" }, { UINT64_MAX, "16.00 EiB" },
	};
	for (i = 0; i < GFSP_ARRAY_SIZE(fmt); i++) {
		gfsp_format_size(fmt[i].n, buf, sizeof(buf));
		ok(strcmp(buf, fmt[i].s) == 0, "format_size %llu = '%s' "
		   "(got '%s')", (unsigned long long)fmt[i].n, fmt[i].s,
		   buf);
	}
	gfsp_format_size(1ULL << 30, buf, 4);
	ok(strlen(buf) == 3, "format_size truncates to its buffer");

	double t0 = gfsp_now();
	usleep(20000);
	double t1 = gfsp_now();
	ok(t1 - t0 >= 0.019 && t1 - t0 < 5, "gfsp_now is monotonic "
	   "seconds (%.4f)", t1 - t0);
}

static void
test_errors(void)
{
	struct gfsp_error err;
	int code, distinct = 1, i, j;

	for (code = 0; code < GFSP_NERRCODES; code++) {
		const char *s = gfsp_strerror(code);

		ok(s != NULL && s[0] != '\0' &&
		   strcmp(s, "unknown error") != 0,
		   "strerror(%d) = '%s'", code, s);
		for (j = 0; j < code; j++)
			if (strcmp(s, gfsp_strerror(j)) == 0)
				distinct = 0;
	}
	ok(distinct, "strerror texts are distinct");
	ok(strcmp(gfsp_strerror(GFSP_NERRCODES), "unknown error") == 0 &&
	   strcmp(gfsp_strerror(-1), "unknown error") == 0,
	   "strerror of an out-of-range code");

	gfsp_error_clear(&err);
	ok(gfsp_error_set(&err, GFSP_ENOENT, "cannot open '%s'", "a") ==
	   GFSP_ENOENT && err.code == GFSP_ENOENT &&
	   strcmp(err.msg, "cannot open 'a'") == 0,
	   "error_set formats: %s", err.msg);
	ok(gfsp_error_set(&err, GFSP_EIO, "second") == GFSP_EIO &&
	   err.code == GFSP_ENOENT && strcmp(err.msg, "cannot open 'a'") == 0,
	   "error_set: first error wins, returns the new code");
	ok(gfsp_error_set(NULL, GFSP_EIO, "x") == GFSP_EIO,
	   "error_set with NULL returns the code");
	gfsp_error_clear(&err);
	ok(err.code == 0 && err.msg[0] == '\0', "error_clear");
	gfsp_error_set(&err, GFSP_EIO, "inner");
	gfsp_error_clear(&err);
	strcpy(err.msg, "inner");
	gfsp_error_set(&err, GFSP_EIO, "outer: %s", err.msg);
	ok(strcmp(err.msg, "outer: inner") == 0,
	   "error_set may wrap its own message");

	char big[3000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	gfsp_error_clear(&err);
	gfsp_error_set(&err, GFSP_EIO, "%s", big);
	ok(strlen(err.msg) == GFSP_ERRMSG_MAX - 1, "long message truncated");

	gfsp_error_clear(&err);
	ok(gfsp_error_errno(&err, ENOSPC, "cannot write '%s'", "p") ==
	   GFSP_ENOSPC && err.sys == ENOSPC &&
	   strcmp(err.msg, "cannot write 'p': No space left on device") == 0,
	   "error_errno: %s", err.msg);

	static const struct { int e, code; } map[] = {
		{ ENOENT, GFSP_ENOENT }, { ENOTDIR, GFSP_ENOENT },
		{ ENODATA, GFSP_ENOENT },
		{ EEXIST, GFSP_EEXIST }, { ENOTEMPTY, GFSP_EEXIST },
		{ EACCES, GFSP_EACCES }, { EPERM, GFSP_EACCES },
		{ EROFS, GFSP_EACCES }, { ENOSPC, GFSP_ENOSPC },
		{ EDQUOT, GFSP_ENOSPC }, { EFBIG, GFSP_ENOSPC },
		{ ENOMEM, GFSP_ENOMEM }, { ENOTSUP, GFSP_ENOTSUP },
		{ EOPNOTSUPP, GFSP_ENOTSUP }, { ENOSYS, GFSP_ENOTSUP },
		{ ECONNREFUSED, GFSP_ENET }, { ETIMEDOUT, GFSP_ENET },
		{ EHOSTUNREACH, GFSP_ENET }, { EINTR, GFSP_ECANCELED },
		{ EINVAL, GFSP_EINVAL }, { EIO, GFSP_EIO }, { 0, GFSP_EIO },
		{ EBUSY, GFSP_EIO },
	};
	for (i = 0; i < (int)GFSP_ARRAY_SIZE(map); i++)
		ok(gfsp_errcode_from_errno(map[i].e) == map[i].code,
		   "errno %d (%s) -> %s", map[i].e, strerror(map[i].e),
		   gfsp_strerror(map[i].code));

	/* and back: the kept errno where it says more, else the code's */
	static const struct { int code, sys, e; } back[] = {
		{ GFSP_EEXIST, ENOTEMPTY, ENOTEMPTY }, { GFSP_EEXIST, 0, EEXIST },
		{ GFSP_EACCES, EROFS, EROFS }, { GFSP_ENOENT, ENOTDIR, ENOTDIR },
		{ GFSP_ECORRUPT, 0, EIO }, { GFSP_ECHECKSUM, 0, EIO },
		{ GFSP_ESTALE, 0, ESTALE }, { GFSP_EMPI, 17, EIO },
		/* a kept number that is not this code's errno is not used */
		{ GFSP_EIO, ENOENT, EIO }, { GFSP_ENOTSUP, 0, ENOTSUP },
	};
	for (i = 0; i < (int)GFSP_ARRAY_SIZE(back); i++) {
		err.code = back[i].code;
		err.sys = back[i].sys;
		ok(gfsp_errno_of(&err) == back[i].e, "%s (sys %d) -> %s",
		   gfsp_strerror(back[i].code), back[i].sys,
		   strerror(back[i].e));
	}
}

static void
test_store(void)
{
	const struct gfsp_store_ops *ops = NULL;
	struct gfsp_error err;
	struct gfsp_file *f = NULL;
	struct gfsp_stat st;
	unsigned char wbuf[10000], rbuf[12000];
	size_t done, i, n;
	char **names;
	int rc;

	snprintf(tdir, sizeof(tdir), "%s/test_core.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tdir) == NULL) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}

	gfsp_error_clear(&err);
	ok(gfsp_store_for("/a/b", &ops, &err) == 0 && ops == &gfsp_store_posix,
	   "store_for plain path is posix");
	ok(gfsp_store_for("rel/x:y", &ops, &err) == 0 &&
	   ops == &gfsp_store_posix, "store_for relative path with ':'");
	gfsp_error_clear(&err);
	rc = gfsp_store_for("gfarm:///x", &ops, &err);
#ifdef HAVE_GFARM
	ok(rc == 0 && strcmp(ops->name, "gfarm") == 0, "store_for gfarm");
#else
	ok(rc == GFSP_ENOTSUP && strstr(err.msg, "'gfarm:///x'") &&
	   strstr(err.msg, "without Gfarm support"),
	   "store_for gfarm without gfarm: %s", err.msg);
#endif
	gfsp_error_clear(&err);
	rc = gfsp_store_for("foo://x", &ops, &err);
	ok(rc == GFSP_EINVAL && strstr(err.msg, "'foo://x'") &&
	   strstr(err.msg, "unknown scheme 'foo'"),
	   "store_for unknown scheme: %s", err.msg);

	for (i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = (unsigned char)(i * 7 + i / 251);

	/* create, write, read back */
	gfsp_error_clear(&err);
	rc = gfsp_open(tpath("f1"), GFSP_O_WRONLY | GFSP_O_CREAT | GFSP_O_EXCL,
		      0644, &f, &err);
	ok(rc == 0 && f != NULL, "create f1: %s", err.msg);
	if (f == NULL)
		return;
	ok(strcmp(gfsp_file_path(f), tpath("f1")) == 0, "file_path");
	rc = gfsp_pwrite(f, wbuf, sizeof(wbuf), 0, &err);
	rc |= gfsp_pwrite(f, wbuf, 100, 20000, &err);	/* leaves a hole */
	ok(rc == 0, "pwrite: %s", err.msg);
	rc = gfsp_fstat(f, &st, &err);
	ok(rc == 0 && st.size == 20100 && S_ISREG(st.mode),
	   "fstat size %llu", (unsigned long long)st.size);
	ok(gfsp_fsync(f, &err) == 0, "fsync");
	/* reading a write-only file fails with the path in the message */
	gfsp_error_clear(&err);
	rc = gfsp_pread(f, rbuf, 10, 0, &done, &err);
	ok(rc == GFSP_EINVAL && done == 0 &&
	   strstr(err.msg, tpath("f1")) != NULL,
	   "pread on write-only file: %s", err.msg);
	ok(gfsp_close(f, &err) == 0, "close");

	gfsp_error_clear(&err);
	rc = gfsp_open(tpath("f1"), GFSP_O_RDONLY, 0, &f, &err);
	ok(rc == 0, "open f1");
	if (f == NULL)
		return;
	memset(rbuf, 0xee, sizeof(rbuf));
	rc = gfsp_pread(f, rbuf, sizeof(wbuf), 0, &done, &err);
	ok(rc == 0 && done == sizeof(wbuf) &&
	   memcmp(rbuf, wbuf, sizeof(wbuf)) == 0, "pread full");
	rc = gfsp_pread(f, rbuf, 5000, 12345, &done, &err);
	for (i = 0; i < 5000 && rbuf[i] == 0; i++)
		;
	ok(rc == 0 && done == 5000 && i == 5000, "pread of a hole is zeros");
	memset(rbuf, 0xee, sizeof(rbuf));
	rc = gfsp_pread(f, rbuf, 1000, 20000, &done, &err);
	ok(rc == 0 && done == 100 && memcmp(rbuf, wbuf, 100) == 0 &&
	   rbuf[100] == 0xee, "pread short at EOF (%zu)", done);
	rc = gfsp_pread(f, rbuf, 1000, 30000, &done, &err);
	ok(rc == 0 && done == 0, "pread past EOF");
	gfsp_close(f, &err);

	/* O_EXCL on an existing file */
	gfsp_error_clear(&err);
	rc = gfsp_open(tpath("f1"), GFSP_O_WRONLY | GFSP_O_CREAT | GFSP_O_EXCL,
		      0644, &f, &err);
	ok(rc == GFSP_EEXIST && f == NULL && strstr(err.msg, tpath("f1")) &&
	   strstr(err.msg, "File exists"), "create excl: %s", err.msg);

	/* missing file */
	gfsp_error_clear(&err);
	rc = gfsp_open(tpath("nope"), GFSP_O_RDONLY, 0, &f, &err);
	ok(rc == GFSP_ENOENT && err.sys == ENOENT &&
	   strstr(err.msg, "cannot open '") &&
	   strstr(err.msg, tpath("nope")) &&
	   strstr(err.msg, "No such file or directory"),
	   "open missing: %s", err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_stat(tpath("nope"), &st, &err);
	ok(rc == GFSP_ENOENT && strstr(err.msg, tpath("nope")),
	   "stat missing: %s", err.msg);

	/* truncate */
	rc = gfsp_open(tpath("f1"), GFSP_O_RDWR, 0, &f, &err);
	rc |= gfsp_ftruncate(f, 3000, &err);
	rc |= gfsp_fstat(f, &st, &err);
	ok(rc == 0 && st.size == 3000, "ftruncate to 3000");
	rc = gfsp_pread(f, rbuf, sizeof(rbuf), 0, &done, &err);
	ok(rc == 0 && done == 3000 && memcmp(rbuf, wbuf, 3000) == 0,
	   "ftruncate keeps the head");
	gfsp_close(f, &err);
	rc = gfsp_stat(tpath("f1"), &st, &err);
	ok(rc == 0 && st.size == 3000 && S_ISREG(st.mode), "stat");

	/* rename never replaces */
	rc = gfsp_open(tpath("f2"), GFSP_O_WRONLY | GFSP_O_CREAT | GFSP_O_TRUNC,
		      0644, &f, &err);
	rc |= gfsp_pwrite(f, "target", 6, 0, &err);
	rc |= gfsp_close(f, &err);
	ok(rc == 0, "create f2");
	gfsp_error_clear(&err);
	rc = gfsp_rename(tpath("f1"), tpath("f2"), &err);
	ok(rc == GFSP_EEXIST && strstr(err.msg, tpath("f1")) &&
	   strstr(err.msg, tpath("f2")), "rename onto existing: %s",
	   err.msg);
	rc = gfsp_open(tpath("f2"), GFSP_O_RDONLY, 0, &f, &err);
	rc |= gfsp_pread(f, rbuf, sizeof(rbuf), 0, &done, &err);
	gfsp_close(f, &err);
	ok(rc == 0 && done == 6 && memcmp(rbuf, "target", 6) == 0,
	   "rename left the target unchanged");
	ok(gfsp_stat(tpath("f1"), &st, &err) == 0 && st.size == 3000,
	   "rename left the source in place");
	gfsp_error_clear(&err);
	rc = gfsp_rename(tpath("f1"), tpath("f3"), &err);
	ok(rc == 0 && gfsp_stat(tpath("f3"), &st, &err) == 0 &&
	   st.size == 3000 && gfsp_stat(tpath("f1"), &st, NULL) ==
	   GFSP_ENOENT, "rename to a new name: %s", err.msg);

	/* directories */
	gfsp_error_clear(&err);
	ok(gfsp_mkdir(tpath("d"), 0755, &err) == 0, "mkdir");
	gfsp_error_clear(&err);
	rc = gfsp_mkdir(tpath("d"), 0755, &err);
	ok(rc == GFSP_EEXIST && strstr(err.msg, "cannot create directory") &&
	   strstr(err.msg, tpath("d")), "mkdir existing: %s", err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_rename(tpath("f3"), tpath("d"), &err);
	ok(rc == GFSP_EEXIST, "rename file onto a directory: %s", err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_mkdir(tpath("d2"), 0755, &err) == 0 &&
	   gfsp_rename(tpath("d2"), tpath("d"), &err) == GFSP_EEXIST,
	   "rename directory onto a directory: %s", err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_rename(tpath("d2"), tpath("d3"), &err) == 0 &&
	   gfsp_stat(tpath("d3"), &st, &err) == 0 && S_ISDIR(st.mode),
	   "rename directory");

	names = NULL;
	rc = gfsp_readdir(tdir, &names, &n, &err);
	ok(rc == 0 && n == 4 && strcmp(names[0], "d") == 0 &&
	   strcmp(names[1], "d3") == 0 && strcmp(names[2], "f2") == 0 &&
	   strcmp(names[3], "f3") == 0, "readdir: %zu names, sorted, "
	   "no . or ..", n);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	rc = gfsp_readdir(tpath("d"), &names, &n, &err);
	ok(rc == 0 && n == 0, "readdir of an empty directory");
	free(names);
	gfsp_error_clear(&err);
	rc = gfsp_readdir(tpath("nope"), &names, &n, &err);
	ok(rc == GFSP_ENOENT && names == NULL && strstr(err.msg, tpath("nope")),
	   "readdir missing: %s", err.msg);

	/* xattrs: supported, or a clean ENOTSUP */
	gfsp_error_clear(&err);
	rc = gfsp_setxattr(tpath("f2"), "user.gfsplit.test", "v1234", 5, &err);
	if (rc == GFSP_ENOTSUP) {
		skip("xattr: %s", err.msg);
	} else {
		char val[16];
		size_t len = sizeof(val);

		ok(rc == 0, "setxattr: %s", err.msg);
		rc = gfsp_getxattr(tpath("f2"), "user.gfsplit.test", val, &len,
				  &err);
		ok(rc == 0 && len == 5 && memcmp(val, "v1234", 5) == 0,
		   "getxattr round trip");
		len = 2;
		gfsp_error_clear(&err);
		rc = gfsp_getxattr(tpath("f2"), "user.gfsplit.test", val, &len,
				  &err);
		ok(rc == GFSP_EINVAL && len == 5, "getxattr small buffer: "
		   "%s", err.msg);
		len = sizeof(val);
		gfsp_error_clear(&err);
		rc = gfsp_getxattr(tpath("f2"), "user.gfsplit.none", val, &len,
				  &err);
		ok(rc == GFSP_ENOENT && strstr(err.msg, "user.gfsplit.none") &&
		   strstr(err.msg, tpath("f2")), "getxattr missing: %s",
		   err.msg);
	}

	/* removal */
	gfsp_error_clear(&err);
	rc = gfsp_rmdir(tdir, &err);
	ok(rc == GFSP_EEXIST && strstr(err.msg, tdir),
	   "rmdir non-empty: %s", err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_unlink(tpath("f2"), &err);
	rc |= gfsp_unlink(tpath("f3"), &err);
	rc |= gfsp_rmdir(tpath("d"), &err);
	rc |= gfsp_rmdir(tpath("d3"), &err);
	ok(rc == 0, "unlink and rmdir: %s", err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_unlink(tpath("f2"), &err);
	ok(rc == GFSP_ENOENT && strstr(err.msg, "cannot remove") &&
	   strstr(err.msg, tpath("f2")), "unlink missing: %s", err.msg);
	ok(gfsp_rmdir(tdir, &err) == 0, "rmdir");

	/* wrappers refuse schemes before touching anything */
	gfsp_error_clear(&err);
	rc = gfsp_open("foo://x", GFSP_O_RDONLY, 0, &f, &err);
	ok(rc == GFSP_EINVAL && f == NULL, "open foo://x");
	gfsp_error_clear(&err);
	rc = gfsp_rename("/tmp/x", "foo://y", &err);
	ok(rc == GFSP_EINVAL, "rename to an unknown scheme");
}


/* a new file at path holding data (its mode 0644) */
static int
put_file(const char *path, const char *data, struct gfsp_error *err)
{
	struct gfsp_file *f;
	int rc;

	rc = gfsp_open(path, GFSP_O_WRONLY | GFSP_O_CREAT | GFSP_O_EXCL, 0644,
		      &f, err);
	if (rc != 0)
		return rc;
	rc = gfsp_pwrite(f, data, strlen(data), 0, err);
	if (gfsp_close(f, err) != 0 && rc == 0)
		rc = err->code;
	return rc;
}

/* 1 if path holds exactly data */
static int
has_content(const char *path, const char *data)
{
	struct gfsp_error err = { 0 };
	struct gfsp_file *f;
	char buf[256];
	size_t done = 0;

	if (gfsp_open(path, GFSP_O_RDONLY, 0, &f, &err) != 0)
		return 0;
	gfsp_pread(f, buf, sizeof(buf), 0, &done, &err);
	gfsp_close(f, NULL);
	return err.code == 0 && done == strlen(data) &&
	       memcmp(buf, data, done) == 0;
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

/* what a staging tool needs to copy a tree: lstat, symbolic and hard
 * links, times to the nanosecond, permissions */
static void
test_tree_ops(void)
{
	struct gfsp_error err;
	struct gfsp_stat st, lst, fst;
	struct gfsp_file *fh;
	char *t = NULL, *want;
	static const size_t lens[] = { 255, 256, 4000 };
	size_t i;
	int rc;

	snprintf(tdir, sizeof(tdir), "%s/test_core.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tdir) == NULL) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	gfsp_error_clear(&err);
	ok(put_file(tpath("f"), "hello", &err) == 0, "create f: %s", err.msg);

	/* a fresh file: one name, an access time */
	memset(&st, 0, sizeof(st));
	rc = gfsp_stat(tpath("f"), &st, &err);
	ok(rc == 0 && st.nlink == 1 && st.atime > 1000000000 &&
	   st.atime_ns < 1000000000 && st.mtime > 1000000000,
	   "stat: nlink 1 (%llu), atime filled (%lld.%09llu)",
	   (unsigned long long)st.nlink, (long long)st.atime,
	   (unsigned long long)st.atime_ns);
	memset(&st, 0, sizeof(st));
	rc = gfsp_stat(tdir, &st, &err);
	ok(rc == 0 && S_ISDIR(st.mode) && st.nlink >= 2,
	   "stat of a directory: nlink %llu", (unsigned long long)st.nlink);

	/* symbolic link: lstat sees the link, stat what it points to */
	gfsp_error_clear(&err);
	ok(gfsp_symlink("f", tpath("l"), &err) == 0, "symlink l -> f: %s",
	   err.msg);
	memset(&lst, 0, sizeof(lst));
	memset(&st, 0, sizeof(st));
	memset(&fst, 0, sizeof(fst));
	rc = gfsp_lstat(tpath("l"), &lst, &err);
	rc |= gfsp_stat(tpath("l"), &st, &err);
	rc |= gfsp_stat(tpath("f"), &fst, &err);
	ok(rc == 0 && S_ISLNK(lst.mode) && lst.size == 1 &&
	   lst.ino != fst.ino, "lstat of a link: the link, size 1 "
	   "(mode %o size %llu)", lst.mode, (unsigned long long)lst.size);
	ok(rc == 0 && S_ISREG(st.mode) && st.size == 5 && st.ino == fst.ino,
	   "stat of a link: the file it points to (mode %o size %llu)",
	   st.mode, (unsigned long long)st.size);
	memset(&lst, 0, sizeof(lst));
	ok(gfsp_lstat(tpath("f"), &lst, &err) == 0 && S_ISREG(lst.mode) &&
	   lst.ino == fst.ino && lst.size == 5,
	   "lstat of a regular file is its stat");
	gfsp_error_clear(&err);
	rc = gfsp_lstat(tpath("nope"), &lst, &err);
	ok(rc == GFSP_ENOENT && strstr(err.msg, "cannot stat '") &&
	   strstr(err.msg, tpath("nope")) &&
	   strstr(err.msg, "No such file or directory"),
	   "lstat missing: %s", err.msg);

	gfsp_error_clear(&err);
	rc = gfsp_readlink(tpath("l"), &t, &err);
	ok(rc == 0 && t != NULL && strcmp(t, "f") == 0, "readlink l: '%s' %s",
	   t ? t : "(null)", err.msg);
	free(t);
	t = NULL;
	/* around the first buffer's size, and far past it */
	for (i = 0; i < GFSP_ARRAY_SIZE(lens); i++) {
		char name[32];

		want = long_target(lens[i]);
		snprintf(name, sizeof(name), "long%zu", lens[i]);
		gfsp_error_clear(&err);
		rc = gfsp_symlink(want, tpath(name), &err);
		if (rc == 0)
			rc = gfsp_readlink(tpath(name), &t, &err);
		if (rc == 0)
			rc = gfsp_lstat(tpath(name), &lst, &err);
		ok(rc == 0 && t != NULL && strlen(t) == lens[i] &&
		   strcmp(t, want) == 0 && lst.size == lens[i],
		   "readlink of a %zu-byte target returns it whole (%zu) %s",
		   lens[i], t ? strlen(t) : 0, err.msg);
		free(t);
		free(want);
		t = NULL;
		gfsp_unlink(tpath(name), NULL);
	}
	gfsp_error_clear(&err);
	t = (char *)&err;
	rc = gfsp_readlink(tpath("f"), &t, &err);
	ok(rc == GFSP_EINVAL && t == NULL &&
	   strstr(err.msg, "cannot readlink '") &&
	   strstr(err.msg, tpath("f")) && strstr(err.msg, "Invalid argument"),
	   "readlink of a regular file: GFSP_EINVAL (%s)", err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_readlink(tpath("nope"), &t, &err);
	ok(rc == GFSP_ENOENT && t == NULL &&
	   strstr(err.msg, "cannot readlink '") &&
	   strstr(err.msg, tpath("nope")) &&
	   strstr(err.msg, "No such file or directory"),
	   "readlink missing: %s", err.msg);

	/* symlink never replaces */
	gfsp_error_clear(&err);
	rc = gfsp_symlink("other", tpath("l"), &err);
	ok(rc == GFSP_EEXIST && strstr(err.msg, "cannot create symbolic "
					"link '") &&
	   strstr(err.msg, tpath("l")) && strstr(err.msg, "File exists"),
	   "symlink onto a link: GFSP_EEXIST (%s)", err.msg);
	ok(gfsp_readlink(tpath("l"), &t, &err) == 0 && strcmp(t, "f") == 0,
	   "the existing link still points to f");
	free(t);
	t = NULL;
	gfsp_error_clear(&err);
	rc = gfsp_symlink("other", tpath("f"), &err);
	ok(rc == GFSP_EEXIST && strstr(err.msg, tpath("f")) &&
	   gfsp_lstat(tpath("f"), &lst, NULL) == 0 && S_ISREG(lst.mode) &&
	   has_content(tpath("f"), "hello"),
	   "symlink onto a file: GFSP_EEXIST, the file unchanged (%s)",
	   err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_symlink("dangling", tpath("dl"), &err) == 0 &&
	   gfsp_lstat(tpath("dl"), &lst, &err) == 0 && S_ISLNK(lst.mode) &&
	   gfsp_stat(tpath("dl"), &st, NULL) == GFSP_ENOENT,
	   "a link to nothing is made as given %s", err.msg);

	/* hard link: one file, two names */
	gfsp_error_clear(&err);
	ok(gfsp_link(tpath("f"), tpath("h"), &err) == 0, "link f h: %s",
	   err.msg);
	memset(&st, 0, sizeof(st));
	memset(&fst, 0, sizeof(fst));
	rc = gfsp_stat(tpath("h"), &st, &err);
	rc |= gfsp_stat(tpath("f"), &fst, &err);
	ok(rc == 0 && fst.nlink == 2 && st.nlink == 2 && st.ino == fst.ino &&
	   has_content(tpath("h"), "hello"),
	   "after link: nlink 2 (%llu), the same inode, the same data",
	   (unsigned long long)fst.nlink);
	gfsp_error_clear(&err);
	rc = gfsp_link(tpath("f"), tpath("l"), &err);
	ok(rc == GFSP_EEXIST && strstr(err.msg, "cannot link '") &&
	   strstr(err.msg, tpath("f")) && strstr(err.msg, tpath("l")) &&
	   strstr(err.msg, "File exists") &&
	   gfsp_lstat(tpath("l"), &lst, NULL) == 0 && S_ISLNK(lst.mode),
	   "link onto an existing name: GFSP_EEXIST, it stays (%s)", err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_link(tpath("nope"), tpath("h2"), &err);
	ok(rc == GFSP_ENOENT && strstr(err.msg, tpath("nope")) &&
	   gfsp_lstat(tpath("h2"), &lst, NULL) == GFSP_ENOENT,
	   "link of a missing file: GFSP_ENOENT (%s)", err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_link(tpath("f"), "gfarm:///x", &err);
	ok(rc == GFSP_ENOTSUP, "link from POSIX to Gfarm: GFSP_ENOTSUP (%s)",
	   err.msg);

	/* times: set, read back to the nanosecond, also by fstat */
	gfsp_error_clear(&err);
	rc = gfsp_utimens(tpath("f"), 1234567890, 123456789, 1500000000,
			 987654321, &err);
	memset(&st, 0, sizeof(st));
	rc |= gfsp_stat(tpath("f"), &st, &err);
	ok(rc == 0 && st.atime == 1234567890 && st.atime_ns == 123456789 &&
	   st.mtime == 1500000000 && st.mtime_ns == 987654321,
	   "utimens round trip: atime %lld.%09llu mtime %lld.%09llu %s",
	   (long long)st.atime, (unsigned long long)st.atime_ns,
	   (long long)st.mtime, (unsigned long long)st.mtime_ns, err.msg);
	memset(&st, 0, sizeof(st));
	rc = gfsp_open(tpath("h"), GFSP_O_RDONLY, 0, &fh, &err);
	if (rc == 0) {
		rc = gfsp_fstat(fh, &st, &err);
		gfsp_close(fh, NULL);
	}
	ok(rc == 0 && st.atime == 1234567890 && st.atime_ns == 123456789 &&
	   st.nlink == 2, "fstat fills atime and nlink (%lld.%09llu, %llu)",
	   (long long)st.atime, (unsigned long long)st.atime_ns,
	   (unsigned long long)st.nlink);
	/* through the link: the file's times change, not the link's */
	memset(&lst, 0, sizeof(lst));
	gfsp_error_clear(&err);
	rc = gfsp_utimens(tpath("l"), 1000000001, 1, 1000000002, 999999999,
			 &err);
	rc |= gfsp_stat(tpath("f"), &st, &err);
	rc |= gfsp_lstat(tpath("l"), &lst, &err);
	ok(rc == 0 && st.atime == 1000000001 && st.atime_ns == 1 &&
	   st.mtime == 1000000002 && st.mtime_ns == 999999999 &&
	   lst.mtime != 1000000002, "utimens follows a link: the file's "
	   "times set (%lld.%09llu), the link's not (%lld)",
	   (long long)st.mtime, (unsigned long long)st.mtime_ns,
	   (long long)lst.mtime);
	gfsp_error_clear(&err);
	rc = gfsp_utimens(tpath("f"), 5, 1000000000, 6, 0, &err);
	ok(rc == GFSP_EINVAL && strstr(err.msg, tpath("f")) &&
	   strstr(err.msg, "1000000000") &&
	   gfsp_stat(tpath("f"), &st, NULL) == 0 && st.atime == 1000000001,
	   "utimens with 10^9 ns: GFSP_EINVAL, nothing set (%s)", err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_utimens(tpath("nope"), 1, 0, 1, 0, &err);
	ok(rc == GFSP_ENOENT && strstr(err.msg, "cannot set times of '") &&
	   strstr(err.msg, tpath("nope")) &&
	   strstr(err.msg, "No such file or directory"),
	   "utimens missing: %s", err.msg);

	/* permissions: only the bits, through a link to its file */
	gfsp_error_clear(&err);
	rc = gfsp_chmod(tpath("f"), 0600, &err);
	rc |= gfsp_stat(tpath("f"), &st, &err);
	ok(rc == 0 && (st.mode & 07777) == 0600 && S_ISREG(st.mode),
	   "chmod 0600 round trip (%o) %s", st.mode, err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_chmod(tpath("f"), S_IFDIR | 04751, &err);
	rc |= gfsp_stat(tpath("f"), &st, &err);
	ok(rc == 0 && (st.mode & 07777) == 04751 && S_ISREG(st.mode),
	   "chmod: setuid and 0751 set, the type bits given ignored (%o) %s",
	   st.mode, err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_chmod(tpath("l"), 0640, &err);
	rc |= gfsp_stat(tpath("f"), &st, &err);
	rc |= gfsp_lstat(tpath("l"), &lst, &err);
	ok(rc == 0 && (st.mode & 07777) == 0640 && S_ISLNK(lst.mode),
	   "chmod follows a link: the file is 0640 (%o) %s", st.mode,
	   err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_chmod(tpath("nope"), 0644, &err);
	ok(rc == GFSP_ENOENT && strstr(err.msg, "cannot change permissions "
					"of '") &&
	   strstr(err.msg, tpath("nope")) &&
	   strstr(err.msg, "No such file or directory"),
	   "chmod missing: %s", err.msg);

	/* removing a name of two leaves one */
	gfsp_error_clear(&err);
	rc = gfsp_unlink(tpath("h"), &err);
	rc |= gfsp_stat(tpath("f"), &st, &err);
	ok(rc == 0 && st.nlink == 1 && has_content(tpath("f"), "hello"),
	   "unlink of one name: nlink 1 again, the data kept (%llu)",
	   (unsigned long long)st.nlink);
	gfsp_error_clear(&err);
	rc = gfsp_unlink(tpath("l"), &err);
	rc |= gfsp_unlink(tpath("dl"), &err);
	rc |= gfsp_unlink(tpath("f"), &err);
	rc |= gfsp_rmdir(tdir, &err);
	ok(rc == 0, "cleaned up: %s", err.msg);
}

/* ------------------------------------------------------------- driver */

static uint64_t o_bsize = 1, o_n;
static int o_json, o_force;
static const char *o_name;
static int run_argc;
static char run_args[256];

static const struct gfsp_opt tcmd_opts[] = {
	{ "block-size", 'b', GFSP_OPT_SIZE, "SIZE", "cyclic block size",
	  &o_bsize, NULL },
	{ "json", 0, GFSP_OPT_FLAG, NULL, "print a JSON summary", &o_json, NULL },
	{ "force", 'f', GFSP_OPT_FLAG, NULL, "replace DST", &o_force, NULL },
	{ "count", 'n', GFSP_OPT_UINT, "N", "how many", &o_n, NULL },
	{ "name", 0, GFSP_OPT_STRING, "NAME", "a name", &o_name, NULL },
	{ NULL, 0, 0, NULL, NULL, NULL, NULL }
};

/* prints what it was given; fails when the first operand is "fail" */
static int
tcmd_run(int argc, char **argv, MPI_Comm comm)
{
	int i;

	run_argc = argc;
	run_args[0] = '\0';
	for (i = 0; i < argc; i++) {
		strcat(run_args, argv[i]);
		strcat(run_args, i + 1 < argc ? "," : "");
	}
	printf("run argc=%d args=%s bsize=%llu json=%d force=%d n=%llu "
	       "name=%s null=%d verbose=%d quiet=%d level=%d\n", argc,
	       run_args, (unsigned long long)o_bsize, o_json, o_force,
	       (unsigned long long)o_n, o_name ? o_name : "-",
	       comm == MPI_COMM_NULL, gfsp_opt_verbose, gfsp_opt_quiet,
	       gfsp_log_level());
	if (argc > 0 && strcmp(argv[0], "fail") == 0) {
		gfsp_log_error("cannot frob '%s': it failed", argv[0]);
		return 1;
	}
	return 0;
}

static const struct gfsp_cmd tcmd = {
	.name = "tcmd", .usage = "[OPTIONS] A B", .summary = "Test the "
	"command driver.", .opts = tcmd_opts, .min_args = 2, .max_args = 2,
	.uses_mpi = 0, .run = tcmd_run,
};

static char drv_out[8192], drv_err[8192];

/* run gfsp_cmd_main in a child, stdout/stderr captured; exit status */
static int
drive(const char *stdout_path, ...)
{
	char *argv[32], path_o[300], path_e[300];
	va_list ap;
	int argc = 0, status, fd;
	pid_t pid;
	FILE *fp;
	size_t n;

	argv[argc++] = "tcmd";
	va_start(ap, stdout_path);
	while (argc < 31 && (argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	snprintf(path_o, sizeof(path_o), "%s/drv.out", tdir);
	snprintf(path_e, sizeof(path_e), "%s/drv.err", tdir);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		fd = open(stdout_path ? stdout_path : path_o,
			  O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		fd = open(path_e, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		_exit(gfsp_cmd_main(&tcmd, argc, argv));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	drv_out[0] = drv_err[0] = '\0';
	if ((fp = fopen(path_o, "r")) != NULL) {
		n = fread(drv_out, 1, sizeof(drv_out) - 1, fp);
		drv_out[n] = '\0';
		fclose(fp);
	}
	if ((fp = fopen(path_e, "r")) != NULL) {
		n = fread(drv_err, 1, sizeof(drv_err) - 1, fp);
		drv_err[n] = '\0';
		fclose(fp);
	}
	unlink(path_o);
	unlink(path_e);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static const char try_help[] = "Try 'tcmd --help' for more information.\n";

static int
usage_err_is(int rc, const char *msg)
{
	char want[512];

	snprintf(want, sizeof(want), "tcmd: %s\n%s", msg, try_help);
	return rc == 2 && strcmp(drv_err, want) == 0 && drv_out[0] == '\0';
}

static void
test_driver(void)
{
	static const char *const help_lines[] = {
		"Usage: tcmd [OPTIONS] A B\n",
		"\nTest the command driver.\n",
		"\n  -b, --block-size=SIZE  cyclic block size\n",
		"\n      --json             print a JSON summary\n",
		"\n  -f, --force            replace DST\n",
		"\n  -n, --count=N          how many\n",
		"\n      --name=NAME        a name\n",
		"\n  -h, --help             show this help and exit\n",
		"\n  -V, --version          show version",
		"\n  -v, --verbose          ",
		"\n  -q, --quiet            ",
	};
	size_t i;
	int rc, good;

	snprintf(tdir, sizeof(tdir), "%s/test_core.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tdir) == NULL)
		return;

	rc = drive(NULL, "--help", NULL);
	good = rc == 0 && drv_err[0] == '\0' &&
		strncmp(drv_out, help_lines[0], strlen(help_lines[0])) == 0;
	for (i = 1; i < GFSP_ARRAY_SIZE(help_lines); i++)
		good = good && strstr(drv_out, help_lines[i]) != NULL;
	ok(good, "--help: usage, summary, aligned options with the "
	   "common ones");
	if (!good)
		printf("# %s", drv_out);
	rc = drive(NULL, "a", "-h", "b", "c", NULL);
	ok(rc == 0 && strncmp(drv_out, "Usage: tcmd", 11) == 0,
	   "-h wins over an operand count error");

	rc = drive(NULL, "--version", NULL);
	ok(rc == 0 && strncmp(drv_out, "tcmd (gfsplit) " GFSPLIT_VERSION
			      "\nbackends: posix", 33) == 0 &&
	   strstr(drv_out, "\noptional libraries:") != NULL,
	   "--version: %.40s", drv_out);

	rc = drive(NULL, "-b", "4k", "x", "--json", "y", "-n", "7",
		   "--name=foo", "-f", NULL);
	ok(rc == 0 && strcmp(drv_out, "run argc=2 args=x,y bsize=4096 "
			     "json=1 force=1 n=7 name=foo null=1 verbose=0 "
			     "quiet=0 level=1\n") == 0 && drv_err[0] == '\0',
	   "options and operands in any order reach run: %s", drv_out);
	rc = drive(NULL, "--block-size=1.5M", "-vv", "a", "b", NULL);
	ok(rc == 0 && strstr(drv_out, "bsize=1572864 ") &&
	   strstr(drv_out, "verbose=2 quiet=0 level=2"),
	   "--block-size=1.5M and -vv: %s", drv_out);
	rc = drive(NULL, "-q", "--block", "2G", "a", "b", NULL);
	ok(rc == 0 && strstr(drv_out, "bsize=2147483648 ") &&
	   strstr(drv_out, "quiet=1 level=0"),
	   "-q and an abbreviated long option: %s", drv_out);
	rc = drive(NULL, "--", "-a", "b", NULL);
	ok(rc == 0 && strstr(drv_out, "args=-a,b "), "'--' ends options");

	rc = drive(NULL, "fail", "b", NULL);
	ok(rc == 1 && strcmp(drv_err, "tcmd: cannot frob 'fail': it "
			     "failed\n") == 0, "run failing: exit 1 and "
	   "its message: %s", drv_err);

	rc = drive(NULL, "--nope", "a", "b", NULL);
	ok(usage_err_is(rc, "unrecognized option '--nope'"),
	   "unknown long option: %s", drv_err);
	rc = drive(NULL, "-x", "a", "b", NULL);
	ok(usage_err_is(rc, "invalid option -- 'x'"),
	   "unknown short option: %s", drv_err);
	rc = drive(NULL, "a", "b", "--block-size", NULL);
	ok(usage_err_is(rc, "option '--block-size' requires an argument"),
	   "missing argument (long): %s", drv_err);
	rc = drive(NULL, "a", "b", "-b", NULL);
	ok(usage_err_is(rc, "option requires an argument -- 'b'"),
	   "missing argument (short): %s", drv_err);
	rc = drive(NULL, "a", "b", "--name", NULL);
	ok(usage_err_is(rc, "option '--name' requires an argument"),
	   "missing argument (long only): %s", drv_err);
	rc = drive(NULL, "--json=yes", "a", "b", NULL);
	ok(usage_err_is(rc, "option '--json' doesn't allow an argument"),
	   "argument to a flag: %s", drv_err);
	rc = drive(NULL, "-b", "4X", "a", "b", NULL);
	ok(rc == 2 && strstr(drv_err, "tcmd: option '--block-size': "
			     "invalid size '4X'") == drv_err &&
	   strstr(drv_err, try_help) != NULL, "bad size: %s", drv_err);
	rc = drive(NULL, "-n", "-3", "a", "b", NULL);
	ok(usage_err_is(rc, "option '--count': invalid number '-3'"),
	   "bad number: %s", drv_err);
	rc = drive(NULL, NULL);
	ok(usage_err_is(rc, "missing operand"), "no operands: %s", drv_err);
	rc = drive(NULL, "a", NULL);
	ok(usage_err_is(rc, "missing operand after 'a'"),
	   "one operand short: %s", drv_err);
	rc = drive(NULL, "a", "b", "c", NULL);
	ok(usage_err_is(rc, "extra operand 'c'"), "extra operand: %s",
	   drv_err);

	if (access("/dev/full", W_OK) == 0) {
		rc = drive("/dev/full", "a", "b", NULL);
		ok(rc == 1 && strstr(drv_err, "tcmd: write error on stdout"),
		   "stdout write error: exit 1: %s", drv_err);
		rc = drive("/dev/full", "--help", NULL);
		ok(rc == 1 && strstr(drv_err, "write error on stdout"),
		   "--help into a full device: exit 1");
	} else {
		skip("stdout write error: no /dev/full");
	}
	rmdir(tdir);
}

/* GFSPLIT_FAULT is read once, so this test runs last */
static void
test_fault(void)
{
	struct gfsp_error err;
	struct gfsp_file *f = NULL;
	char buf[1000];
	struct gfsp_stat st;
	int rc1, rc2, rc3;

	snprintf(tdir, sizeof(tdir), "%s/test_core.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tdir) == NULL)
		return;
	memset(buf, 'a', sizeof(buf));
	setenv("GFSPLIT_FAULT", "pwrite:0:2500", 1);
	gfsp_fault_init(0);
	gfsp_error_clear(&err);
	gfsp_open(tpath("ff"), GFSP_O_WRONLY | GFSP_O_CREAT, 0644, &f, &err);
	rc1 = gfsp_pwrite(f, buf, 1000, 0, &err);
	rc2 = gfsp_pwrite(f, buf, 1000, 1000, &err);
	rc3 = gfsp_pwrite(f, buf, 1000, 2000, &err);
	gfsp_close(f, NULL);
	ok(rc1 == 0 && rc2 == 0 && rc3 == GFSP_EIO &&
	   strstr(err.msg, "injected fault") && strstr(err.msg, tpath("ff")),
	   "fault injection at the third pwrite: %s", err.msg);
	ok(gfsp_stat(tpath("ff"), &st, NULL) == 0 && st.size == 2000,
	   "the faulty pwrite wrote nothing");
	gfsp_unlink(tpath("ff"), NULL);
	gfsp_rmdir(tdir, NULL);
}

/*
 * Every open, with any flags: a FIFO (by its name or through a link) does
 * not block and is refused, as a directory is; a link to a regular file
 * is followed.  gfsp_open_listed: the file listed opens, another file put
 * at its name is GFSP_ESTALE.  In test_regular_open's directory.
 */
static void
test_any_open(const char *const names[5])
{
	static const int modes[] = {
		GFSP_O_RDONLY, GFSP_O_WRONLY, GFSP_O_RDWR,
		GFSP_O_WRONLY | GFSP_O_CREAT | GFSP_O_TRUNC,
	};
	struct gfsp_error err;
	struct gfsp_file *f = NULL;
	struct gfsp_stat st;
	char want[512];
	size_t i;
	int rc, bad = 0;

	ok(symlink(tpath("p"), tpath("lp")) == 0, "a link to the FIFO");
	for (i = 0; i < 4; i++) {
		const char *n = i < 2 ? "p" : i == 2 ? "lp" : "d";

		snprintf(want, sizeof(want), "'%s': not a regular file",
			 tpath(n));
		gfsp_error_clear(&err);
		f = NULL;
		rc = gfsp_open(tpath(n), modes[i], 0600, &f, &err);
		if (i == 3)	/* a directory cannot be opened to write */
			bad += rc == 0;
		else
			bad += rc != GFSP_EINVAL || strcmp(err.msg, want) != 0;
		if (f != NULL)
			gfsp_close(f, NULL);
	}
	ok(bad == 0, "a FIFO opened to read, to write, through a link, and "
	   "a directory: refused, nothing blocks: %s", err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_open(tpath(names[1]), GFSP_O_RDONLY, 0, &f, &err);
	ok(rc == 0, "a link to a regular file is followed: %s", err.msg);
	if (rc == 0)
		gfsp_close(f, NULL);
	unlink(tpath("lp"));

	gfsp_error_clear(&err);
	rc = gfsp_stat(tpath("r"), &st, &err);
	if (rc == 0)
		rc = gfsp_open_listed(tpath("r"), GFSP_O_RDONLY, &st, 1, &f,
				      &err);
	ok(rc == 0, "gfsp_open_listed: the file listed opens: %s", err.msg);
	if (rc == 0)
		gfsp_close(f, NULL);
	gfsp_error_clear(&err);
	rc = put_file(tpath("r2"), "hello", &err);
	if (rc == 0 && rename(tpath("r2"), tpath("r")) != 0)
		rc = -1;
	snprintf(want, sizeof(want), "'%s' changed since it was listed: "
		 "another file has its name", tpath("r"));
	f = NULL;
	if (rc == 0)
		rc = gfsp_open_listed(tpath("r"), GFSP_O_RDONLY, &st, 0, &f,
				      &err);
	ok(rc == GFSP_ESTALE && f == NULL && strcmp(err.msg, want) == 0,
	   "  another file at its name: refused: %s", err.msg);
}

/*
 * GFSP_O_NOFOLLOW: a link is not followed, a FIFO does not block the open
 * (an alarm fails the test instead of a hang), anything but a regular
 * file is refused, and a regular file reads as usual.
 */
static void
test_regular_open(void)
{
	static const char *names[] = { "r", "l", "dl", "p", "d" };
	struct gfsp_error err;
	struct gfsp_file *f = NULL;
	char buf[8], want[512];
	size_t got = 0, i;
	int rc;

	snprintf(tdir, sizeof(tdir), "%s/test_core.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tdir) == NULL) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	gfsp_error_clear(&err);
	ok(put_file(tpath("r"), "hello", &err) == 0 &&
	   symlink(tpath("r"), tpath("l")) == 0 &&
	   symlink("nowhere", tpath("dl")) == 0 &&
	   mkfifo(tpath("p"), 0600) == 0 && mkdir(tpath("d"), 0700) == 0,
	   "a file, a link to it, a dangling link, a FIFO, a directory");
	alarm(10);
	gfsp_error_clear(&err);
	rc = gfsp_open(tpath("r"), GFSP_O_RDONLY | GFSP_O_NOFOLLOW, 0, &f, &err);
	if (rc == 0)
		rc = gfsp_pread(f, buf, sizeof(buf), 0, &got, &err);
	ok(rc == 0 && got == 5 && memcmp(buf, "hello", 5) == 0,
	   "regular file opens and reads: %s", err.msg);
	if (f != NULL)
		gfsp_close(f, NULL);
	for (i = 1; i < 5; i++) {
		snprintf(want, sizeof(want), "'%s': %s", tpath(names[i]),
			 i < 3 ? "a symbolic link (not followed)" :
			 "not a regular file");
		gfsp_error_clear(&err);
		f = NULL;
		rc = gfsp_open(tpath(names[i]), GFSP_O_RDONLY | GFSP_O_NOFOLLOW,
			       0, &f, &err);
		ok(rc == GFSP_EINVAL && f == NULL &&
		   strcmp(err.msg, want) == 0, "%s refused: %s", names[i],
		   err.msg);
	}
	test_any_open(names);
	alarm(0);
	for (i = 0; i < 4; i++)
		unlink(tpath(names[i]));
	rmdir(tpath("d"));
	rmdir(tdir);
}

/* the common members of every --json document, and the time format */
static void
test_json_doc(void)
{
	char buf[GFSP_ISO_LEN];
	json_object *o;
	const char *s;

	ok(strcmp(gfsp_utc_iso(0, buf, sizeof(buf)), "1970-01-01T00:00:00Z")
	   == 0, "gfsp_utc_iso(0): %s", buf);
	ok(strcmp(gfsp_utc_iso(1795771800, buf, sizeof(buf)),
	   "2026-11-27T09:30:00Z") == 0, "gfsp_utc_iso: UTC, whole seconds: %s",
	   buf);
	ok(strcmp(gfsp_utc_iso(0, buf, 8), "") == 0,
	   "gfsp_utc_iso: a buffer too small gives \"\"");
	o = gfsp_json_doc("tcmd", "a", NULL, 3, 2.0, 10);
	s = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : "";
	ok(strcmp(s, "{\"command\":\"tcmd\",\"version\":\"" GFSPLIT_VERSION
	   "\",\"src\":\"a\",\"dest\":null,\"ranks\":3,\"seconds\":2.0,"
	   "\"bytes\":10,\"bytes_per_sec\":5.0}") == 0,
	   "gfsp_json_doc: the eight members in order, dest null: %s", s);
	json_object_put(o);
	o = gfsp_json_doc("tcmd", NULL, "b", 1, 0.5, -1);
	s = o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN) : "";
	ok(strstr(s, "\"src\":null,\"dest\":\"b\"") != NULL &&
	   strstr(s, "\"bytes\":null,\"bytes_per_sec\":null}") != NULL,
	   "gfsp_json_doc: no bytes moved: bytes and bytes_per_sec null: %s", s);
	json_object_put(o);
}

/* gfsp_same_host: a short name matches its qualified form, nothing else */
static void
test_same_host(void)
{
	static const struct { const char *a, *b; int same; } t[] = {
		{ "n1", "n1", 1 },
		{ "n1", "n1.cluster.example", 1 },
		{ "n1.cluster.example", "n1", 1 },
		{ "n1.a.example", "n1.a.example", 1 },
		{ "n1.a.example", "n1.b.example", 0 },
		{ "n1", "n10", 0 },
		{ "n10", "n1.example", 0 },
		{ "n1", "n2", 0 },
		{ "", "", 1 },
		{ "", ".example", 0 },
	};
	size_t i;

	for (i = 0; i < GFSP_ARRAY_SIZE(t); i++)
		ok(gfsp_same_host(t[i].a, t[i].b) == t[i].same,
		   "same host '%s' '%s': %d", t[i].a, t[i].b, t[i].same);
}

/* gfsp_grow: room for what is asked, the contents kept, and on a size
 * that cannot be the array and its room as they were */
static void
test_grow(void)
{
	uint64_t *v = NULL, *before;
	size_t cap = 0, i, bad = 0;

	for (i = 0; i < 100000; i++) {
		if (gfsp_grow(&v, &cap, i + 1, sizeof(*v)) != 0 || cap <= i)
			break;
		v[i] = i * 2654435761u;
	}
	ok(i == 100000, "grow: 100000 elements, one by one (room %zu)", cap);
	for (i = 0; v != NULL && i < 100000; i++)
		bad += v[i] != i * 2654435761u;
	ok(bad == 0, "grow: every element kept across the moves");
	ok(cap < 2 * 100000 + 16, "grow: the room at most doubles (%zu)", cap);
	ok(gfsp_grow(&v, &cap, 50, sizeof(*v)) == 0 && cap >= 100000,
	   "grow: asking for less keeps what there is");
	before = v;
	i = cap;
	ok(gfsp_grow(&v, &cap, SIZE_MAX / 4, sizeof(*v)) == -1 &&
	   v == before && cap == i,
	   "grow: over SIZE_MAX bytes fails, the array and its room unchanged");
	free(v);
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_sizes();
	test_grow();
	test_same_host();
	test_errors();
	test_store();
	test_tree_ops();
	test_regular_open();
	test_driver();
	test_fault();
	test_json_doc();
	return done_testing();
}
