/*
 * xattr.c - the extended attributes gfsplit-mount shows on a split file,
 * made from the version a layout holds, so that a getfattr on the file
 * tells what stat-layout would of the directory.  listxattr (getfattr -d)
 * names the small ones only: the layout and the checksums grow with the
 * parts (10 KB for 64) and are read by name.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "layout_impl.h"
#include "mount.h"

static const char *const names[] = {	/* listed */
	"user.gfsplit.parts",
	"user.gfsplit.source",
};

static int
take(char *s, int n, char **val, size_t *len, struct gfsp_error *err)
{
	if (s == NULL || n < 0) {
		free(s);
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	*val = s;
	*len = (size_t)n;
	return 0;
}

static int
list(char **val, size_t *len, struct gfsp_error *err)
{
	size_t i, n = 0;
	char *s;

	for (i = 0; i < GFSP_ARRAY_SIZE(names); i++)
		n += strlen(names[i]) + 1;
	s = malloc(n);
	if (s == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	*len = n;
	*val = s;
	for (i = 0; i < GFSP_ARRAY_SIZE(names); i++) {
		memcpy(s, names[i], strlen(names[i]) + 1);
		s += strlen(names[i]) + 1;
	}
	return 0;
}

static int
checksums(const struct gfsp_layout *l, char **val, size_t *len,
	  struct gfsp_error *err)
{
	size_t n = 0;
	char *s = NULL;
	FILE *fp = open_memstream(&s, &n);
	int r;

	if (fp == NULL)
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	for (r = 0; r < l->nprocs; r++)
		fprintf(fp, "part.%d %" PRIu64 " 0x%016" PRIx64 "\n", r,
		    l->part_size[r], l->part_hash[r]);
	if (fclose(fp) != 0) {
		free(s);
		return gfsp_error_set(err, GFSP_ENOMEM, "out of memory");
	}
	*val = s;
	*len = n;
	return 0;
}

int
gfsp_mxattr(struct gfsp_layout *l, const char *path, const char *name,
	    char **val, size_t *len, struct gfsp_error *err)
{
	struct gfsp_statinfo_opts o = { 0 };
	json_object *info = NULL;
	char *s = NULL;
	int rc;

	*val = NULL;
	*len = 0;
	if (name == NULL)
		return list(val, len, err);
	if (strcmp(name, "user.gfsplit.parts") == 0) {
		rc = asprintf(&s, "%d", l->nprocs);
		return take(rc < 0 ? NULL : s, rc, val, len, err);
	}
	if (strcmp(name, "user.gfsplit.source") == 0) {
		rc = asprintf(&s, "%s", path);
		return take(rc < 0 ? NULL : s, rc, val, len, err);
	}
	if (strcmp(name, "user.gfsplit.checksums") == 0)
		return checksums(l, val, len, err);
	if (strcmp(name, "user.gfsplit.layout") == 0) {
		rc = gfsp_statinfo_layout(l, path, &o, &info, err);
		if (rc)
			return rc;
		s = strdup(json_object_to_json_string_ext(info,
		    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(info);
		return take(s, s != NULL ? (int)strlen(s) : -1, val, len, err);
	}
	return gfsp_error_set(err, GFSP_ENOENT, "'%s': no attribute %s", path,
	    name);
}
