/*
 * tpath.h - a unit test's scratch directory: tdir (the test makes it,
 * with mkdtemp) and tpath("name"), "tdir/name" in one of four rotating
 * buffers, so that two or three may be arguments of one call.  Include
 * once, from the test's .c file.
 */
#ifndef GFSP_TESTS_TPATH_H
#define GFSP_TESTS_TPATH_H

#include <stdio.h>

static char tdir[256];

static __attribute__((unused)) char *
tpath(const char *name)
{
	static char buf[4][512];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tdir, name);
	return buf[k];
}

#endif /* GFSP_TESTS_TPATH_H */
