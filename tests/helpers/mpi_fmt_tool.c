/*
 * mpi_fmt_tool - helper of the command tests (tests/cmd); not a test.
 *
 *   mpi_fmt_tool resign FILE
 *	recompute the XXH3-64 trailer of a metadata file (loc.K or
 *	gfsplit.meta) after a test edited its bytes, so that the decoder gets
 *	past the checksum to the field the test changed
 *   mpi_fmt_tool set32 FILE OFFSET VALUE
 *	store VALUE as a little-endian u32 at OFFSET, then resign
 *   mpi_fmt_tool set64 FILE OFFSET VALUE
 *	the same with a u64 (VALUE in decimal or 0x hex, up to 2^64-1)
 *   mpiexec -n N mpi_fmt_tool holes DST LOGICAL_SIZE
 *	write split file DST through the library's writer with views that
 *	leave holes: tile extent 2*N*64 KiB, rank r owns [r*128K, r*128K+64K)
 *	of each tile, views end at 2 MiB (a multiple of the tile for N <= 8);
 *	the logical size may go past it (a trailing hole).  Byte g of the
 *	logical file is data(g) below, or 0 in a hole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "splitfile.h"

#define BLK	(64u << 10)
#define VEND	(2u << 20)

static unsigned char
data(uint64_t g)
{
	return (unsigned char)((g % 251) ^ (g >> 16));
}

static int
resign(const char *path, long off, uint64_t val, int width)
{
	unsigned char *buf;
	uint64_t h;
	long len;
	FILE *f;
	int i;

	f = fopen(path, "r+b");
	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 8) {
		perror(path);
		return 1;
	}
	buf = malloc((size_t)len);
	rewind(f);
	if (buf == NULL || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		perror(path);
		return 1;
	}
	if (off >= 0) {
		if (off + width > len - 8) {
			fprintf(stderr, "%s: offset %ld out of range\n", path,
				off);
			return 1;
		}
		for (i = 0; i < width; i++)
			buf[off + i] = (unsigned char)(val >> (8 * i));
	}
	h = gfsp_hash64(buf, (size_t)len - 8);
	for (i = 0; i < 8; i++)
		buf[len - 8 + i] = (unsigned char)(h >> (8 * i));
	rewind(f);
	if (fwrite(buf, 1, (size_t)len, f) != (size_t)len || fclose(f) != 0) {
		perror(path);
		return 1;
	}
	free(buf);
	return 0;
}

static int
holes(const char *dst, const char *sizearg)
{
	struct gfsp_split_opts opts = { 0 };
	struct gfsp_split_writer *w = NULL;
	struct gfsp_error err = { 0 };
	struct gfsp_view v = { 0 };
	unsigned char *buf = NULL;
	uint64_t off, len = BLK, size, g;
	int rank, n, rc;

	MPI_Init(NULL, NULL);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	size = strtoull(sizearg, NULL, 10);
	off = (uint64_t)rank * 2 * BLK;
	buf = malloc(BLK);
	opts.layout = "view";
	rc = gfsp_view_init(&v, 0, (uint64_t)n * 2 * BLK, VEND, 1, &off, &len,
			   &err);
	rc = gfsp_agree(MPI_COMM_WORLD, rc, &err);
	if (rc == 0)
		rc = gfsp_split_create(MPI_COMM_WORLD, dst, &v, &opts, &w, NULL,
				      &err);
	if (rc == 0) {
		/* the view's bytes in global order, one block at a time */
		for (g = off; rc == 0 && g < VEND; g += (uint64_t)n * 2 * BLK) {
			for (uint64_t i = 0; i < BLK; i++)
				buf[i] = data(g + i);
			rc = gfsp_split_append(w, buf, BLK, &err);
		}
		rc = gfsp_split_finish(w, rc, size, &err);
	}
	if (rc)
		fprintf(stderr, "mpi_fmt_tool: rank %d: %s\n", rank, err.msg);
	gfsp_view_free(&v);
	free(buf);
	MPI_Finalize();
	return rc ? 1 : 0;
}

int
main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "resign") == 0)
		return resign(argv[2], -1, 0, 0);
	if (argc == 5 && strcmp(argv[1], "set32") == 0)
		return resign(argv[2], strtol(argv[3], NULL, 0),
			      strtoull(argv[4], NULL, 0) & UINT32_MAX, 4);
	if (argc == 5 && strcmp(argv[1], "set64") == 0)
		return resign(argv[2], strtol(argv[3], NULL, 0),
			      strtoull(argv[4], NULL, 0), 8);
	if (argc == 4 && strcmp(argv[1], "holes") == 0)
		return holes(argv[2], argv[3]);
	fprintf(stderr, "usage: mpi_fmt_tool resign FILE | set32|set64 FILE "
		"OFFSET VALUE | holes DST LOGICAL_SIZE (under mpiexec)\n");
	return 2;
}
