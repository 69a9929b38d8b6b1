/*
 * fuzz.h - what the libFuzzer harnesses (tests/fuzz/fuzz_*.c) share: a
 * private directory for the parsers that read files, and a way to fail.
 *
 * Include it first (it defines _GNU_SOURCE).  A harness calls the library's real entry point on the fuzzer's bytes;
 * where that entry point takes a path, the bytes are written to a file in
 * the harness's own directory (mkdtemp under $TMPDIR, 0700, removed at
 * exit) first.  Besides the sanitizers, harnesses check what a parser
 * promises: what it accepts encodes and decodes back to the same thing.
 * A broken promise is FUZZ_FAIL: a message and abort(), which libFuzzer
 * reports as a crash with the input saved.
 */
#ifndef GFSP_FUZZ_H
#define GFSP_FUZZ_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FUZZ_FAIL(...)	do {						\
		fprintf(stderr, "fuzz: %s:%d: ", __FILE__, __LINE__);	\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		abort();						\
	} while (0)

static char fuzz_dir_path[PATH_MAX];

static inline int
fuzz_rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)remove(path);	/* best effort */
	return 0;
}

/* Remove path and everything below it (best effort). */
static inline void
fuzz_rm_tree(const char *path)
{
	nftw(path, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void
fuzz_rm_dir(void)
{
	if (fuzz_dir_path[0] != '\0')
		fuzz_rm_tree(fuzz_dir_path);
}

/* The harness's private directory, made on first use. */
static inline const char *
fuzz_dir(void)
{
	const char *t = getenv("TMPDIR");

	if (fuzz_dir_path[0] != '\0')
		return fuzz_dir_path;
	snprintf(fuzz_dir_path, sizeof(fuzz_dir_path), "%s/gfsplit-fuzz.XXXXXX",
	    t != NULL && *t != '\0' ? t : "/tmp");
	if (mkdtemp(fuzz_dir_path) == NULL) {
		perror("fuzz: mkdtemp");
		abort();
	}
	atexit(fuzz_rm_dir);
	return fuzz_dir_path;
}

/* "DIR/name" in buf[PATH_MAX] */
static inline char *
fuzz_path(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/%s", fuzz_dir(), name);
	return buf;
}

/* Write buf[len] to path, replacing what was there. */
static inline void
fuzz_write(const char *path, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t w;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		perror(path);
		abort();
	}
	while (len > 0) {
		w = write(fd, p, len);
		if (w <= 0) {
			perror(path);
			abort();
		}
		p += w;
		len -= (size_t)w;
	}
	close(fd);
}

#endif /* GFSP_FUZZ_H */
