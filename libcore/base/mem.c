/*
 * mem.c - large arrays and buffers.
 *
 * Arrays of megabytes (a flattened view of a million blocks, its index,
 * a transfer buffer) are aligned to 2 MiB and asked for transparent huge
 * pages: on a VM each first touch of a 4 KiB page is a costly fault, and
 * that, not the work, is most of the time of building such an array; huge
 * pages also spare random lookups their TLB misses.  A hint only: without
 * THP this is plain memory.  Smaller ones get the caller's alignment.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "core.h"

#define HUGE_PAGE	((size_t)2 << 20)

static size_t
round_up(size_t x, size_t a)
{
	return (x + a - 1) / a * a;
}

void *
gfsp_big_alloc(size_t bytes, size_t align)
{
	void *p;

	if (bytes > SIZE_MAX - HUGE_PAGE)
		return NULL;
	if (bytes < 2 * HUGE_PAGE)
		return posix_memalign(&p, align, round_up(bytes ? bytes : 1,
		    align)) == 0 ? p : NULL;
	bytes = round_up(bytes, HUGE_PAGE);
	if (posix_memalign(&p, HUGE_PAGE, bytes) != 0)
		return NULL;
#ifdef MADV_HUGEPAGE
	(void)madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}
