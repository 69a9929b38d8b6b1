/*
 * match.c - the path selection rule of the preload libraries
 * (GFSPLIT_SPLIT_FILES, GFSPLIT_CACHE_FILES).
 */
#include <fnmatch.h>
#include <string.h>

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
