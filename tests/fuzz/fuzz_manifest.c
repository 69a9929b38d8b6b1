/*
 * fuzz_manifest.c - stage-in manifests (walk.c): "SRC DST" pairs, one a
 * line, '#' comments, '\' escapes; gfsp_flist_add_manifest on the input
 * written to a file, then gfsp_flist_finish, as stage-in does, and the
 * list packed and unpacked (what rank 0 broadcasts) must pack to the same
 * bytes again.
 *
 * A manifest names sources anywhere ("/ x" walks the whole machine), so
 * this harness is linked with --wrap for gfsp_lstat, gfsp_readdir and
 * gfsp_readlink (Makefile.in): a relative SRC is looked up in a small
 * tree of the harness's own (files, a directory, a symbolic link, a hard
 * link), anything else does not exist.  The parsing is what is fuzzed.
 */
#include "fuzz.h"
#include "core.h"
#include "stage.h"

int __real_gfsp_lstat(const char *path, struct gfsp_stat *st,
		      struct gfsp_error *err);
int __real_gfsp_readdir(const char *path, char ***names, size_t *n,
			struct gfsp_error *err);
int __real_gfsp_readlink(const char *path, char **target,
			 struct gfsp_error *err);
int __wrap_gfsp_lstat(const char *path, struct gfsp_stat *st,
		      struct gfsp_error *err);
int __wrap_gfsp_readdir(const char *path, char ***names, size_t *n,
			struct gfsp_error *err);
int __wrap_gfsp_readlink(const char *path, char **target,
			 struct gfsp_error *err);

static char tree[PATH_MAX];

/* path inside the tree in buf, or NULL: absolute, a URL, or with ".." */
static const char *
in_tree(const char *path, char *buf, size_t len)
{
	const char *p = path;
	size_t n;

	if (*path == '/' || strstr(path, "://") != NULL)
		return NULL;
	while (*p) {
		n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return NULL;
		p += n;
		while (*p == '/')
			p++;
	}
	if ((size_t)snprintf(buf, len, "%s/%s", tree, path) >= len)
		return NULL;
	return buf;
}

int
__wrap_gfsp_lstat(const char *path, struct gfsp_stat *st,
		  struct gfsp_error *err)
{
	char buf[PATH_MAX];

	if (in_tree(path, buf, sizeof(buf)) == NULL)
		return gfsp_error_errno(err, ENOENT, "cannot stat '%s'", path);
	return __real_gfsp_lstat(buf, st, err);
}

int
__wrap_gfsp_readdir(const char *path, char ***names, size_t *n,
		    struct gfsp_error *err)
{
	char buf[PATH_MAX];

	if (in_tree(path, buf, sizeof(buf)) == NULL)
		return gfsp_error_errno(err, ENOENT, "cannot read '%s'", path);
	return __real_gfsp_readdir(buf, names, n, err);
}

int
__wrap_gfsp_readlink(const char *path, char **target, struct gfsp_error *err)
{
	char buf[PATH_MAX];

	if (in_tree(path, buf, sizeof(buf)) == NULL)
		return gfsp_error_errno(err, ENOENT, "cannot read '%s'", path);
	return __real_gfsp_readlink(buf, target, err);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char p[PATH_MAX + 32];

	fuzz_path(tree, "tree");
	mkdir(tree, 0700);
	snprintf(p, sizeof(p), "%s/d", tree);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/d/e", tree);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/a", tree);
	fuzz_write(p, "a\n", 2);
	snprintf(p, sizeof(p), "%s/d/b c", tree);
	fuzz_write(p, "", 0);
	snprintf(p, sizeof(p), "%s/d/e/f", tree);
	fuzz_write(p, "f\n", 2);
	snprintf(p, sizeof(p), "%s/d/l", tree);
	if (symlink("../a", p) != 0)
		abort();
	snprintf(p, sizeof(p), "%s/d/h", tree);
	{
		char a[PATH_MAX + 8];

		snprintf(a, sizeof(a), "%s/a", tree);
		if (link(a, p) != 0)
			abort();
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gfsp_flist l, back;
	struct gfsp_error err;
	unsigned char *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	char path[PATH_MAX];

	fuzz_path(path, "manifest");
	fuzz_write(path, data, size);
	memset(&l, 0, sizeof(l));
	gfsp_error_clear(&err);
	if (gfsp_flist_add_manifest(&l, path, &err) == 0 &&
	    gfsp_flist_finish(&l, &err) == 0) {
		if (gfsp_flist_pack(&l, &a, &na, &err) != 0 ||
		    gfsp_flist_unpack(&back, a, na, &err) != 0 ||
		    gfsp_flist_pack(&back, &b, &nb, &err) != 0)
			FUZZ_FAIL("a file list does not pack and unpack: %s",
			    err.msg);
		if (na != nb || memcmp(a, b, na) != 0)
			FUZZ_FAIL("a file list packs to other bytes after a "
			    "round trip");
		gfsp_flist_free(&back);
		free(a);
		free(b);
	}
	gfsp_flist_free(&l);
	return 0;
}
