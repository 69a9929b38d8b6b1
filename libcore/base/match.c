/*
 * match.c - the path selection rule of the preload libraries
 * (GFSPLIT_SPLIT_FILES, GFSPLIT_CACHE_FILES).
 */
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core.h"

int
gfsp_path_matches(const char *patterns, const char *path)
{
	const char *p = patterns, *c;
	char pat[4096];
	size_t n;

	while (p != NULL && *p != '\0') {
		c = strchr(p, ':');
		n = c ? (size_t)(c - p) : strlen(p);
		/* "gfarm://" holds a colon of its own: keep the URL whole */
		if (c != NULL && n == 5 && strncmp(p, "gfarm", 5) == 0) {
			c = strchr(c + 1, ':');
			n = c ? (size_t)(c - p) : strlen(p);
		}
		if (n > 0 && n < sizeof(pat)) {
			memcpy(pat, p, n);
			pat[n] = '\0';
			if (fnmatch(pat, path, 0) == 0)
				return 1;
		}
		p = c ? c + 1 : NULL;
	}
	return 0;
}

int
gfsp_path_selected(const char *patterns, const char *path)
{
	char abs[PATH_MAX];
	size_t n;

	if (gfsp_path_matches(patterns, path))
		return 1;
	if (path[0] == '/' || strstr(path, "://") != NULL ||
	    getcwd(abs, sizeof(abs)) == NULL)
		return 0;
	n = strlen(abs);
	if (snprintf(abs + n, sizeof(abs) - n, "/%s", path) >=
	    (int)(sizeof(abs) - n))
		return 0;
	return gfsp_path_matches(patterns, abs);
}
