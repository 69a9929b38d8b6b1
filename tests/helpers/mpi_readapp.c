/*
 * mpi_readapp.c - an ordinary MPI program that reads a file with POSIX
 * and stdio calls only (no gfsplit header, no MPI-IO): what
 * libgfsplit-cache.so must serve unchanged.  tests/cmd/cache_hook.sh runs
 * it without and with the preload and compares what it prints.
 *
 *   mpi_readapp read FILE [--multiple]
 *       every rank reads FILE in five ways, each folded into an FNV-1a
 *       64-bit checksum of the bytes and of every offset and count the
 *       calls returned (random choices seeded by the rank):
 *         a  open, read in 1000-byte chunks to the end
 *         b  open64 (flags not a constant), 300 preads / pread64s of
 *            random pieces at random offsets, some past the end, into
 *            buffers of known and unknown sizes
 *         c  openat, 300 x lseek / lseek64 (SET, CUR, END) + read; a
 *            dup of the descriptor read as well
 *         d  fopen / fopen64: fread in 777-byte chunks, feof, rewind,
 *            fgets, fgetc, getc, fseek / fseeko (SET, CUR, END), ftell /
 *            ftello, fileno + fstat; fdopen of a descriptor moved first
 *         e  a second thread, as a: the same bytes as a; and a fork
 *            child reads a descriptor and a stream of its parent and
 *            opens the file itself: the same bytes again
 *       rank 0 prints {"nprocs":N,"size":S,"ranks":[{"a":"..",...},..]}
 *       --multiple: MPI_Init_thread(MPI_THREAD_MULTIPLE), else MPI_Init
 *       Then a stream and a descriptor opened before MPI_Finalize are
 *       read on to the end after it, and the file once more with a: the
 *       same bytes as a.
 *
 *   mpi_readapp solo FILE
 *       every rank reads FILE with read() in 1 MiB chunks to the end and
 *       prints "rank R fnv HEX bytes N" at once; no MPI call but
 *       MPI_Init and MPI_Finalize (a job whose ranks never wait for each
 *       other, for the tests of a peer that stops)
 *
 *   mpi_readapp careful FILE UID N
 *       every rank N times, 100 ms apart: FILE opened with O_NOFOLLOW,
 *       checked on the descriptor (a regular file of owner UID's: the
 *       program's own care, in a directory another user writes), read
 *       to its end; prints "rank R open I fnv HEX" or "... refused"
 *
 *   mpi_readapp write SRC DST
 *       rank 0 copies SRC to DST with open(O_WRONLY | O_CREAT | O_TRUNC)
 *       + write, and to DST.stdio with fopen "w" + fwrite; then reads DST
 *       back through open(O_RDWR), fopen "r+" and open(O_RDONLY), each
 *       of which must give SRC's bytes; prints {"src":"..",...}
 *
 * With _FORTIFY_SOURCE (on here when optimising) reads into buffers of a
 * known size are glibc's __read_chk and opens with variable flags
 * __open_2: the hook must take those too.  Exit 0 if every check held on
 * every rank; else 1, with one line per failure on stderr.
 */
#if defined(__OPTIMIZE__) && !defined(_FORTIFY_SOURCE)
#define _FORTIFY_SOURCE 2
#endif
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <mpi.h>

#include "rng.h"
#include "testutil.h"

#define NCHECK	5
#define MAXPIECE 70000

static int rank, nprocs;
static const char *path;
static long long fsize;

/* ------------------------------------------------------------ FNV-1a */

#define FNV_INIT	0xcbf29ce484222325ULL

static uint64_t
fnv(uint64_t h, const void *buf, size_t n)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t
fnv_num(uint64_t h, long long v)
{
	unsigned char b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)((unsigned long long)v >> (8 * i));
	return fnv(h, b, 8);
}

static long long
pick(long long lo, long long hi)	/* lo .. hi */
{
	return lo + (long long)(rnd64() % (uint64_t)(hi - lo + 1));
}

/* ---------------------------------------------------------- the reads */

/* a: open + read in 1000-byte chunks; OUT *total */
static uint64_t
read_whole(long long *total)
{
	char buf[1000];
	/* a buffer of a known size and a count that is not a constant:
	 * __read_chk when fortified */
	volatile size_t chunk = sizeof(buf);
	uint64_t h = FNV_INIT;
	ssize_t n;
	int fd;

	*total = 0;
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		fail_ab("open", 0, 0);
		return 0;
	}
	while ((n = read(fd, buf, chunk)) > 0) {
		h = fnv(h, buf, (size_t)n);
		*total += n;
	}
	if (n < 0)
		fail_ab("read", *total, 0);
	close(fd);
	return h;
}

/* b: random preads */
static uint64_t
read_random(char *heap)
{
	volatile int flags = O_RDONLY;	/* not a constant: __open64_2 */
	char *volatile unknown = heap;	/* a size unknown: plain pread */
	char known[8192];		/* every 4th: __pread_chk */
	uint64_t h = FNV_INIT;
	char *buf;
	long long off, len;
	ssize_t n;
	int fd, i;

	fd = open64(path, flags);
	if (fd < 0) {
		fail_ab("open64", 0, 0);
		return 0;
	}
	for (i = 0; i < 300; i++) {
		off = pick(0, fsize + 5000);
		len = pick(1, i % 4 == 3 ? (long long)sizeof(known) : MAXPIECE);
		if (i % 4 == 3) {
			buf = known;
			n = pread(fd, known, (size_t)len, (off_t)off);
		} else {
			buf = unknown;
			n = i % 2 ? pread(fd, buf, (size_t)len, (off_t)off) :
			    pread64(fd, buf, (size_t)len, (off64_t)off);
		}
		if (n < 0 || n != (off >= fsize ? 0 :
		    off + len > fsize ? fsize - off : len))
			fail_ab("pread returned a wrong count", off, n);
		h = fnv_num(fnv_num(h, off), n);
		if (n > 0)
			h = fnv(h, buf, (size_t)n);
	}
	close(fd);
	return h;
}

/* c: lseek + read, and a dup of the descriptor */
static uint64_t
read_seek(char *heap)
{
	uint64_t h = FNV_INIT;
	long long off, pos, len;
	ssize_t n;
	int fd, fd2, i, whence;

	fd = openat(AT_FDCWD, path, O_RDONLY);
	if (fd < 0) {
		fail_ab("openat", 0, 0);
		return 0;
	}
	for (i = 0; i < 300; i++) {
		whence = (int)pick(0, 2);
		off = whence == SEEK_SET ? pick(0, fsize + 100) :
		    whence == SEEK_CUR ? pick(-5000, 5000) :
		    pick(-fsize, 100);
		pos = i % 2 ? lseek(fd, (off_t)off, whence) :
		    lseek64(fd, (off64_t)off, whence);
		if (pos < 0)		/* before the start: EINVAL, stays */
			pos = lseek(fd, 0, SEEK_CUR);
		len = pick(1, 30000);
		n = read(fd, heap, (size_t)len);
		if (n < 0 || n != (pos >= fsize ? 0 :
		    pos + len > fsize ? fsize - pos : len))
			fail_ab("read after lseek returned a wrong count", pos,
			    n);
		if (lseek(fd, 0, SEEK_CUR) != pos + (n > 0 ? n : 0))
			fail_ab("the offset did not move by the read", pos, n);
		h = fnv_num(fnv_num(h, pos), n);
		if (n > 0)
			h = fnv(h, heap, (size_t)n);
	}
	/* a duplicate shares the offset */
	lseek(fd, fsize / 3, SEEK_SET);
	fd2 = dup(fd);
	n = read(fd2, heap, 4000);
	if (n > 0)
		h = fnv(h, heap, (size_t)n);
	n = read(fd, heap, 4000);
	if (n > 0)
		h = fnv(h, heap, (size_t)n);
	h = fnv_num(h, lseek(fd2, 0, SEEK_CUR));
	close(fd2);
	close(fd);
	return h;
}

/* d: stdio */
static uint64_t
read_stdio(char *heap)
{
	char line[300];
	uint64_t h = FNV_INIT;
	long long total = 0, off, pos;
	struct stat sb;
	size_t n;
	FILE *fp;
	int i, c, fd, whence;

	fp = rank % 2 ? fopen64(path, "rb") : fopen(path, "r");
	if (fp == NULL) {
		fail_ab("fopen", 0, 0);
		return 0;
	}
	if (fstat(fileno(fp), &sb) != 0 || sb.st_size != fsize)
		fail_ab("fstat(fileno()) does not give the file's size", fsize,
		    (long long)sb.st_size);
	while ((n = fread(heap, 1, 777, fp)) > 0) {
		h = fnv(h, heap, n);
		total += (long long)n;
	}
	if (!feof(fp) || ferror(fp) || total != fsize)
		fail_ab("fread to the end", total, fsize);
	rewind(fp);
	for (i = 0; i < 200 && fgets(line, sizeof(line), fp) != NULL; i++)
		h = fnv(h, line, strlen(line));
	h = fnv_num(h, ftell(fp));
	for (i = 0; i < 200; i++) {
		whence = (int)pick(0, 2);
		off = whence == SEEK_SET ? pick(0, fsize + 100) :
		    whence == SEEK_CUR ? pick(-3000, 3000) :
		    pick(-fsize, 50);
		if ((i % 2 ? fseek(fp, (long)off, whence) :
		    fseeko(fp, (off_t)off, whence)) != 0)
			h = fnv_num(h, -1);
		pos = i % 2 ? ftell(fp) : (long long)ftello(fp);
		n = fread(heap, 1, (size_t)pick(1, 20000), fp);
		h = fnv_num(fnv_num(h, pos), (long long)n);
		h = fnv(h, heap, n);
		c = fgetc(fp);
		h = fnv_num(h, c);
		c = getc(fp);
		h = fnv_num(h, c);
		h = fnv_num(h, feof(fp));
		clearerr(fp);
	}
	if (fclose(fp) != 0)
		fail_ab("fclose", 0, 0);

	/* a stream over a descriptor already moved */
	fd = open(path, O_RDONLY);
	if (fd < 0 || lseek(fd, fsize / 2, SEEK_SET) < 0 ||
	    (fp = fdopen(fd, "r")) == NULL) {
		fail_ab("open + fdopen", fd, 0);
		return h;
	}
	n = fread(heap, 1, 5000, fp);
	h = fnv(fnv_num(h, (long long)n), heap, n);
	if (fclose(fp) != 0)
		fail_ab("fclose of the fdopen stream", 0, 0);
	return h;
}

struct thread_read {
	uint64_t h;
	long long total;
};

static void *
thread_main(void *p)
{
	struct thread_read *t = p;

	t->h = read_whole(&t->total);
	return NULL;
}

/* The whole of fd from its offset on. */
static uint64_t
fd_rest(int fd, long long *total)
{
	char buf[4096];
	uint64_t h = FNV_INIT;
	ssize_t n;

	*total = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		h = fnv(h, buf, (size_t)n);
		*total += n;
	}
	return h;
}

/* A fork child reads what its parent opened, and opens the file too. */
static void
check_fork(uint64_t whole, char *heap)
{
	long long total, t2;
	uint64_t h1, h2, h3;
	int fd, st = 0;
	size_t n;
	pid_t pid;
	FILE *fp;

	fd = open(path, O_RDONLY);
	fp = fopen(path, "r");
	if (fd < 0 || fp == NULL) {
		fail_ab("open before fork", fd, fp != NULL);
		return;
	}
	n = fread(heap, 1, 1000, fp);	/* the stream's buffer is filled */
	h3 = fnv(FNV_INIT, heap, n);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		h1 = fd_rest(fd, &total);
		close(fd);
		fd = open(path, O_RDONLY);
		h2 = fd_rest(fd, &t2);
		close(fd);
		while ((n = fread(heap, 1, 4096, fp)) > 0)
			h3 = fnv(h3, heap, n);
		fclose(fp);
		_exit(h1 == whole && h2 == whole && h3 == whole &&
		    total == fsize && t2 == fsize ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0)
		fail_ab("a fork child read other bytes", pid, st);
	fclose(fp);
	close(fd);
}

static int
do_read(uint64_t *sum)
{
	struct thread_read t;
	pthread_t th;
	long long total;
	struct stat sb;
	char *heap;

	if (stat(path, &sb) != 0) {
		fail_ab("stat", 0, 0);
		return 1;
	}
	fsize = (long long)sb.st_size;
	heap = malloc(MAXPIECE);
	if (heap == NULL) {
		fail_ab("out of memory", 0, 0);
		return 1;
	}
	rnd_seed((uint64_t)rank + 1);
	sum[0] = read_whole(&total);
	if (total != fsize)
		fail_ab("read did not give the whole file", total, fsize);
	sum[1] = read_random(heap);
	sum[2] = read_seek(heap);
	sum[3] = read_stdio(heap);
	if (pthread_create(&th, NULL, thread_main, &t) != 0) {
		fail_ab("pthread_create", 0, 0);
	} else {
		pthread_join(th, NULL);
		if (t.h != sum[0] || t.total != fsize)
			fail_ab("the thread read other bytes", t.total, fsize);
		sum[4] = t.h;
	}
	check_fork(sum[0], heap);
	free(heap);
	return 0;
}

/* Across MPI_Finalize: a stream and a descriptor, half read before. */
struct late {
	FILE *fp;
	int fd;
	uint64_t hfp, hfd;
};

static void
late_begin(struct late *l, char *heap)
{
	long long left;
	size_t n;
	ssize_t m;

	l->hfp = l->hfd = FNV_INIT;
	l->fp = fopen(path, "r");
	l->fd = open(path, O_RDONLY);
	if (l->fp == NULL || l->fd < 0) {
		fail_ab("open before MPI_Finalize", l->fp != NULL, l->fd);
		return;
	}
	for (left = fsize / 2; left > 0; left -= (long long)n) {
		n = fread(heap, 1, (size_t)(left < MAXPIECE ? left : MAXPIECE),
		    l->fp);
		if (n == 0)
			break;
		l->hfp = fnv(l->hfp, heap, n);
	}
	for (left = fsize / 3; left > 0; left -= m) {
		m = read(l->fd, heap, (size_t)(left < MAXPIECE ? left :
		    MAXPIECE));
		if (m <= 0)
			break;
		l->hfd = fnv(l->hfd, heap, (size_t)m);
	}
}

/* After MPI_Finalize: no MPI, so the verdict is this rank's own. */
static void
late_end(struct late *l, char *heap, uint64_t whole)
{
	long long total;
	size_t n;
	ssize_t m;

	if (l->fp == NULL || l->fd < 0)
		return;
	while ((n = fread(heap, 1, 4096, l->fp)) > 0)
		l->hfp = fnv(l->hfp, heap, n);
	while ((m = read(l->fd, heap, 4096)) > 0)
		l->hfd = fnv(l->hfd, heap, (size_t)m);
	fclose(l->fp);
	close(l->fd);
	if (l->hfp != whole)
		fail_ab("a stream read across MPI_Finalize gave other bytes", 0, 0);
	if (l->hfd != whole)
		fail_ab("a descriptor read across MPI_Finalize gave other bytes",
		    0, 0);
	if (read_whole(&total) != whole || total != fsize)
		fail_ab("a read after MPI_Finalize gave other bytes", total,
		    fsize);
}

/* ---------------------------------------------------------- the copy */

static int
do_write(const char *src, const char *dst)
{
	char buf[65536], name[4096];
	long long total, t2;
	uint64_t hs, h;
	ssize_t n;
	size_t m;
	int in, out;
	FILE *fi, *fo;

	snprintf(name, sizeof(name), "%s.stdio", dst);
	in = open(src, O_RDONLY);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0) {
		fail_ab("open SRC and DST", in, out);
		return 1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			fail_ab("write", n, 0);
	if (close(out) != 0)
		fail_ab("close DST", 0, 0);
	lseek(in, 0, SEEK_SET);
	hs = fd_rest(in, &total);
	close(in);

	fi = fopen(src, "r");
	fo = fopen(name, "w");
	if (fi == NULL || fo == NULL) {
		fail_ab("fopen SRC and DST.stdio", fi != NULL, fo != NULL);
		return 1;
	}
	while ((m = fread(buf, 1, sizeof(buf), fi)) > 0)
		if (fwrite(buf, 1, m, fo) != m)
			fail_ab("fwrite", (long long)m, 0);
	fclose(fi);
	if (fclose(fo) != 0)
		fail_ab("fclose DST.stdio", 0, 0);

	printf("{\"src\":\"%016" PRIx64 "\"", hs);
	out = open(dst, O_RDWR);
	h = fd_rest(out, &t2);
	close(out);
	printf(",\"rdwr\":\"%016" PRIx64 "\"", h);
	if (h != hs || t2 != total)
		fail_ab("DST read back O_RDWR differs", t2, total);
	fo = fopen(dst, "r+");
	h = FNV_INIT;
	t2 = 0;
	while (fo != NULL && (m = fread(buf, 1, sizeof(buf), fo)) > 0) {
		h = fnv(h, buf, m);
		t2 += (long long)m;
	}
	if (fo != NULL)
		fclose(fo);
	printf(",\"rplus\":\"%016" PRIx64 "\"", h);
	if (h != hs || t2 != total)
		fail_ab("DST read back with fopen r+ differs", t2, total);
	out = open(dst, O_RDONLY);
	h = fd_rest(out, &t2);
	close(out);
	printf(",\"rdonly\":\"%016" PRIx64 "\"}\n", h);
	if (h != hs || t2 != total)
		fail_ab("DST read back O_RDONLY differs", t2, total);
	return 0;
}

static void
do_solo(const char *file)
{
	static unsigned char buf[1 << 20];
	uint64_t h = UINT64_C(14695981039346656037);
	long long total = 0;
	ssize_t k;
	int fd = open(file, O_RDONLY);

	if (fd < 0) {
		fail_ab("solo: cannot open the file", 0, 0);
		return;
	}
	while ((k = read(fd, buf, sizeof(buf))) > 0) {
		h = fnv(h, buf, (size_t)k);
		total += k;
	}
	if (k < 0)
		fail_ab("solo: read failed", total, 0);
	close(fd);
	printf("rank %d fnv %016" PRIx64 " bytes %lld\n", rank, h, total);
	fflush(stdout);
}

/*
 * A careful program in a directory another user writes: FILE opened
 * without following a link, then checked on the descriptor to be a
 * regular file of owner's, then read whole from it; n times, 100 ms
 * apart.  Each open prints "rank R open I fnv HEX" (or "... refused").
 */
static void
do_careful(const char *file, const char *owner, int n)
{
	static unsigned char buf[1 << 16];
	uint64_t h;
	struct stat sb;
	ssize_t k;
	int i, fd;

	for (i = 0; i < n; i++) {
		h = UINT64_C(14695981039346656037);
		fd = open(file, O_RDONLY | O_NOFOLLOW);
		if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) ||
		    sb.st_uid != (uid_t)atol(owner)) {
			printf("rank %d open %d refused\n", rank, i);
		} else {
			while ((k = read(fd, buf, sizeof(buf))) > 0)
				h = fnv(h, buf, (size_t)k);
			if (k < 0)
				fail_ab("careful: read failed", i, 0);
			printf("rank %d open %d fnv %016" PRIx64 "\n", rank,
			    i, h);
		}
		if (fd >= 0)
			close(fd);
		fflush(stdout);
		usleep(100 * 1000);
	}
}

int
main(int argc, char **argv)
{
	uint64_t sum[NCHECK] = { 0 }, *all = NULL;
	const char *names = "abcde";
	struct late late = { NULL, -1, 0, 0 };
	char *heap = NULL;
	int i, j, multiple = 0, provided, any;

	multiple = argc == 4 && strcmp(argv[3], "--multiple") == 0;
	if (multiple)
		MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	else
		MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (argc >= 3 && strcmp(argv[1], "read") == 0 &&
	    (argc == 3 || multiple)) {
		path = argv[2];
		do_read(sum);
		if (rank == 0)
			all = calloc((size_t)nprocs * NCHECK, sizeof(*all));
		MPI_Gather(sum, NCHECK, MPI_UINT64_T, all, NCHECK,
		    MPI_UINT64_T, 0, MPI_COMM_WORLD);
		if (rank == 0 && all != NULL) {
			printf("{\"nprocs\":%d,\"size\":%lld,\"ranks\":[",
			    nprocs, fsize);
			for (i = 0; i < nprocs; i++) {
				for (j = 0; j < NCHECK; j++)
					printf("%s\"%c\":\"%016" PRIx64 "\"",
					    j ? "," : i ? ",{" : "{",
					    names[j], all[i * NCHECK + j]);
				printf("}");
			}
			printf("]}\n");
		}
		free(all);
		if ((heap = malloc(MAXPIECE)) != NULL)
			late_begin(&late, heap);
	} else if (argc == 3 && strcmp(argv[1], "solo") == 0) {
		do_solo(argv[2]);
		MPI_Finalize();
		return test_failed;
	} else if (argc == 5 && strcmp(argv[1], "careful") == 0) {
		do_careful(argv[2], argv[3], atoi(argv[4]));
	} else if (argc == 4 && strcmp(argv[1], "write") == 0) {
		if (rank == 0)
			do_write(argv[2], argv[3]);
	} else {
		if (rank == 0)
			fprintf(stderr, "usage: mpi_readapp read FILE "
			    "[--multiple] | solo FILE | careful FILE UID N | "
			    "write SRC DST\n");
		test_failed = 1;
	}
	fflush(stdout);
	MPI_Allreduce(&test_failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	MPI_Finalize();
	if (heap != NULL) {
		late_end(&late, heap, sum[0]);
		free(heap);
	}
	return any || test_failed;
}
