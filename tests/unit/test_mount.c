/*
 * test_mount.c - the mount wing without FUSE: what a source path is shown
 * as (plain, split, a marker that is none), and the node tree: paths,
 * one node per object, a new node for a replaced file or a new commit,
 * ESTALE for a node whose name now leads elsewhere, renames, forgets.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "layout_impl.h"
#include "mount.h"
#include "tap.h"
#include "tpath.h"


/* a directory with a marker, and the location file and two parts it
 * counts (empty: what their bits and owners are is all gfsp_mentry_stat
 * looks at) */
static void
make_marker(const char *dir, uint64_t size, int64_t ctime)
{
	static const char *const files[] = { "loc.0", "part.0", "part.1" };
	struct gfsp_marker m = { 0 };
	struct gfsp_error err = { 0 };
	unsigned char *buf = NULL;
	char path[600];
	size_t len = 0, i;
	FILE *fp;

	m.version = 3;
	m.nprocs = 2;
	m.nnodes = 1;
	m.logical_size = size;
	m.seg_size = 1 << 20;
	m.ctime = ctime;
	snprintf(m.layout, sizeof(m.layout), "contiguous");
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/gfsplit.meta", dir);
	unlink(path);
	if (gfsp_marker_encode(&m, &buf, &len, &err) != 0 ||
	    gfsp_write_whole(path, NULL, buf, len, 0644, GFSP_PUT_REPLACE,
	    &err) != 0)
		fprintf(stderr, "marker: %s\n", err.msg);
	free(buf);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if ((fp = fopen(path, "w")) != NULL)
			fclose(fp);
	}
}

/* split file dir's shown bits, with `file` of it made mode, uid:gid
 * (uid -1: left as it is) */
static unsigned
shown_with(const char *dir, const char *file, mode_t mode, int uid, int gid)
{
	struct gfsp_error err = { 0 };
	struct gfsp_mentry e;
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (chmod(path, mode) != 0 ||
	    (uid >= 0 && chown(path, (uid_t)uid, (gid_t)gid) != 0) ||
	    gfsp_mentry_stat(dir, &e, NULL, &err) != 0)
		return 07777;
	return e.st.mode & 07777;
}

/* the bits a split file is shown with, and who may read it, case by case
 * (gfsp_msplit_mode, gfsp_msplit_access) */
static void
test_access(void)
{
	struct gfsp_error err = { 0 };
	uint32_t grp[1] = { 4321 };
	struct gfsp_mcaller who = { 1000, 1000, NULL, 0 };
	struct gfsp_mcaller root = { 0, 0, NULL, 0 };
	const char *d = tpath("a.split");
	unsigned me = getuid(), m;
	char meta[600];
	int rc;

	make_marker(d, 1000, 1700000000);
	chmod(d, 0755);
	snprintf(meta, sizeof(meta), "%s/gfsplit.meta", d);
	m = shown_with(d, "part.1", 0644, -1, -1);
	ok(m == 0644,
	   "everything 0644 in a 0755 directory: shown 0644 (%o)", m);
	m = shown_with(d, "part.1", 0600, -1, -1);
	ok(m == 0600,
	   "a part 0600: shown 0600 (%o)", m);
	m = shown_with(d, "part.1", 06777, -1, -1);
	ok(m == 0644,
	   "a part 06777: no execute or set-id bit shown (%o)", m);
	chmod(d, 0744);
	m = shown_with(d, "part.1", 0644, -1, -1);
	ok(m == 0600,
	   "a directory 0744 (others may not search it): shown 0600 (%o)", m);
	chmod(d, 0755);
	m = shown_with(d, "loc.0", 0640, -1, -1);
	ok(m == 0640,
	   "a location file 0640: shown 0640 (%o)", m);
	shown_with(d, "loc.0", 0644, -1, -1);
	snprintf(meta, sizeof(meta), "%s/part.1", d);
	unlink(meta);
	m = shown_with(d, "part.0", 0644, -1, -1);
	ok(m == 0644,
	   "a part missing: the others' bits (its open fails) (%o)", m);
	mkdir(meta, 0700);
	m = shown_with(d, "part.0", 0644, -1, -1);
	ok(m == 0644,
	   "a part that is a directory: likewise (%o)", m);
	rmdir(meta);
	make_marker(d, 1000, 1700000000);
	if (me == 0) {
		/* another's file: the owner of the directory may be in its
		 * group or not, anyone else may be its owner */
		m = shown_with(d, "part.1", 0640, 4321, 4321);
		ok(m == 0,
		   "a part of another's, 0640: shown 0 (%o)", m);
		m = shown_with(d, "part.1", 0644, 4321, 4321);
		ok(m == 0444,
		   "a part of another's, 0644: shown 0444 (%o)", m);
		m = shown_with(d, "part.1", 0640, 0, 4321);
		ok(m == 0600,
		   "a part of the owner's in another group, 0640: shown "
		   "0600 (%o)", m);
		m = shown_with(d, "part.1", 0604, 0, 0);
		ok(m == 0604,
		   "a part 0604 of the directory's owner and group: shown "
		   "0604 (%o)", m);
		m = shown_with(d, "part.1", 0604, 0, 4321);
		ok(m == 0600,
		   "a part 0604 of another group: shown 0600 (who is in "
		   "that group, the bits shown cannot tell) (%o)", m);
		shown_with(d, "part.1", 0644, 0, 0);
	} else {
		skip("files of other owners: not root");
	}

	/* the check of an open (no layout: the directory and the marker) */
	snprintf(meta, sizeof(meta), "%s/gfsplit.meta", d);
	chmod(meta, 0644);
	ok(gfsp_msplit_access(d, NULL, &who, &err) == 0,
	   "anyone may read a 0644 marker in a 0755 directory");
	chmod(meta, 0600);
	rc = gfsp_msplit_access(d, NULL, &who, &err);
	ok(rc == GFSP_EACCES && strstr(err.msg, "gfsplit.meta") != NULL,
	   "a 0600 marker of another's: EACCES naming it (%s)", err.msg);
	ok(gfsp_msplit_access(d, NULL, &root, &err) == 0,
	   "  root may, as the kernel lets her");
	chmod(meta, 0644);
	chmod(d, 0700);
	gfsp_error_clear(&err);
	rc = gfsp_msplit_access(d, NULL, &who, &err);
	ok(rc == GFSP_EACCES && strstr(err.msg, "search") != NULL,
	   "a 0700 directory of another's: EACCES (%s)", err.msg);
	chmod(d, 0755);
	if (me == 0 && chown(meta, 0, 4321) == 0) {
		chmod(meta, 0640);
		ok(gfsp_msplit_access(d, NULL, &who, &err) != 0,
		   "a 0640 marker of a group she is not in: EACCES");
		who.groups = grp;
		who.ngroups = 1;
		ok(gfsp_msplit_access(d, NULL, &who, &err) == 0,
		   "  in it by a supplementary group: she may");
		chmod(meta, 0604);
		ok(gfsp_msplit_access(d, NULL, &who, &err) != 0,
		   "  a 0604 marker keeps its group out, as the kernel does");
		chown(meta, 0, 0);
		chmod(meta, 0644);
	} else {
		skip("groups of other owners: not root");
	}
}

static void
test_entries(void)
{
	struct gfsp_error err = { 0 }, why = { 0 };
	struct gfsp_mentry e;
	FILE *fp;
	int rc;

	fp = fopen(tpath("plain"), "w");
	fputs("12345", fp);
	fclose(fp);
	ok(gfsp_mentry_stat(tpath("plain"), &e, NULL, &err) == 0 &&
	   e.kind == GFSP_MPLAIN && e.st.size == 5 && S_ISREG(e.st.mode) &&
	   e.st.uid == getuid(), "a plain file is shown as it is");
	mkdir(tpath("dir"), 0750);
	ok(gfsp_mentry_stat(tpath("dir"), &e, NULL, &err) == 0 &&
	   e.kind == GFSP_MPLAIN && S_ISDIR(e.st.mode),
	   "a directory without a marker is a directory");
	make_marker(tpath("s.split"), 123456789, 1700000000);
	chmod(tpath("s.split"), 0751);
	rc = gfsp_mentry_stat(tpath("s.split"), &e, NULL, &err);
	ok(rc == 0 && e.kind == GFSP_MSPLIT && S_ISREG(e.st.mode) &&
	   (e.st.mode & 07777) == 0640 && e.st.size == 123456789 &&
	   e.st.mtime == 1700000000 && e.st.nlink == 1 && e.version != 0,
	   "a split file: a regular file, mode less x, logical size, "
	   "commit time (mode %o size %llu)", e.st.mode & 07777,
	   (unsigned long long)e.st.size);
	mkdir(tpath("bad.split"), 0755);
	fp = fopen(tpath("bad.split/gfsplit.meta"), "w");
	fputs("not a marker", fp);
	fclose(fp);
	rc = gfsp_mentry_stat(tpath("bad.split"), &e, &why, &err);
	ok(rc == 0 && e.kind == GFSP_MBADSPLIT && S_ISREG(e.st.mode) && e.st.size == 0 &&
	   strstr(why.msg, "gfsplit.meta") != NULL,
	   "a marker that is none: an empty file, the cause kept (%s)",
	   why.msg);
	ok(gfsp_mentry_stat(tpath("none"), &e, NULL, &err) == GFSP_ENOENT,
	   "a missing name: ENOENT");
}

static void
test_tree(void)
{
	struct gfsp_mtree t;
	struct gfsp_error err = { 0 };
	struct gfsp_mentry e;
	struct gfsp_mnode *a, *a2, *d, *f, *s1, *s2, *none;
	char *p = NULL, *want;
	int rc;
	FILE *fp;

	ok(gfsp_mtree_init(&t, tpath("s.split"), &err) == GFSP_EINVAL &&
	   strstr(err.msg, "a split file") != NULL,
	   "a split file is no source: %s", err.msg);
	gfsp_error_clear(&err);
	ok(gfsp_mtree_init(&t, tpath("plain"), &err) == GFSP_EINVAL,
	   "a plain file is no source: %s", err.msg);
	gfsp_error_clear(&err);
	if (gfsp_mtree_init(&t, tdir, &err) != 0) {
		ok(0, "a tree over the test directory: %s", err.msg);
		return;
	}
	ok(1, "a tree over the test directory");
	rc = gfsp_mtree_lookup(&t, &t.top, "plain", &a, &e, &err);
	ok(rc == 0 && a->nlookup == 1 && e.st.size == 5, "lookup plain");
	rc = gfsp_mtree_lookup(&t, &t.top, "plain", &a2, NULL, &err);
	ok(rc == 0 && a2 == a && a->nlookup == 2,
	   "the same object again: the same node, one more reference");
	p = gfsp_mtree_path(&t, a, NULL);
	want = tpath("plain");
	ok(p != NULL && strcmp(p, want) == 0, "its path: %s", p);
	free(p);
	rc = gfsp_mtree_lookup(&t, &t.top, "dir", &d, NULL, &err);
	fp = fopen(tpath("dir/f"), "w");
	fclose(fp);
	rc = rc ? rc : gfsp_mtree_lookup(&t, d, "f", &f, NULL, &err);
	p = rc ? NULL : gfsp_mtree_path(&t, f, NULL);
	ok(p != NULL && strcmp(p, tpath("dir/f")) == 0 && d->children == 1,
	   "a nested node's path: %s", p);
	free(p);
	ok(gfsp_mtree_lookup(&t, &t.top, "..", &none, NULL, &err) ==
	   GFSP_EINVAL,
	   "'..' is no name of the tree");
	gfsp_error_clear(&err);

	/* replaced under its name (renamed over it, as editors and
	 * writers do: a file of its own inode): the old node is stale, a
	 * new one comes */
	fp = fopen(tpath("plain.new"), "w");
	fputs("other", fp);
	fclose(fp);
	rename(tpath("plain.new"), tpath("plain"));
	ok(gfsp_mtree_stat(&t, a, &e, NULL, &err) == GFSP_ESTALE,
	   "a replaced file's node: ESTALE (%s)", err.msg);
	gfsp_error_clear(&err);
	rc = gfsp_mtree_lookup(&t, &t.top, "plain", &a2, NULL, &err);
	ok(rc == 0 && a2 != a && !a->linked && a2->linked,
	   "looked up again: a new node, the old one unlinked");
	gfsp_mtree_forget(&t, a, 2);

	/* a split file committed again is another file */
	rc = gfsp_mtree_lookup(&t, &t.top, "s.split", &s1, &e, &err);
	ok(rc == 0 && e.kind == GFSP_MSPLIT, "lookup s.split");
	ok(gfsp_mtree_stat(&t, s1, &e, NULL, &err) == 0,
	   "unchanged: its node stats");
	usleep(10000);
	make_marker(tpath("s.split"), 42, 1700000100);
	ok(gfsp_mtree_stat(&t, s1, &e, NULL, &err) == GFSP_ESTALE,
	   "a new commit: the old node is stale");
	gfsp_error_clear(&err);
	rc = gfsp_mtree_lookup(&t, &t.top, "s.split", &s2, &e, &err);
	ok(rc == 0 && s2 != s1 && e.st.size == 42 && e.st.mtime == 1700000100,
	   "a new node for the new commit, its size and time");

	/* renamed through the mount: the node follows */
	rename(tpath("dir"), tpath("dir2"));
	gfsp_mtree_moved(&t, &t.top, "dir", &t.top, "dir2");
	p = gfsp_mtree_path(&t, f, NULL);
	ok(p != NULL && strcmp(p, tpath("dir2/f")) == 0,
	   "after a rename, a child's path follows: %s", p);
	free(p);
	ok(gfsp_mtree_stat(&t, f, &e, NULL, &err) == 0,
	   "and it still stats");
	gfsp_mtree_removed(&t, &t.top, "dir2");
	ok(!d->linked, "removed: unlinked");
	gfsp_mtree_forget(&t, f, 1);
	gfsp_mtree_forget(&t, d, 1);
	gfsp_mtree_forget(&t, a2, 1);
	gfsp_mtree_forget(&t, s1, 1);
	gfsp_mtree_forget(&t, s2, 1);
	ok(t.nnodes == 0, "every node forgotten: none left in the table");

	/* many names: the table grows, and every node is found again */
	{
		struct gfsp_mnode *many[3000], *again;
		char name[32];
		int i, bad = 0;

		mkdir(tpath("many"), 0755);
		rc = gfsp_mtree_lookup(&t, &t.top, "many", &d, NULL, &err);
		for (i = 0; rc == 0 && i < 3000; i++) {
			snprintf(name, sizeof(name), "many/f%d", i);
			fp = fopen(tpath(name), "w");
			if (fp != NULL)
				fclose(fp);
			rc = gfsp_mtree_lookup(&t, d, name + 5, &many[i],
			    NULL, &err);
		}
		for (i = 0; rc == 0 && i < 3000; i++) {
			snprintf(name, sizeof(name), "f%d", i);
			if (gfsp_mtree_lookup(&t, d, name, &again, NULL,
			    &err) != 0 || again != many[i])
				bad++;
			gfsp_mtree_forget(&t, many[i], 2);
		}
		ok(rc == 0 && bad == 0 && t.nbuckets > 1024,
		   "3000 names: %zu buckets, each node found again (%d "
		   "not)", t.nbuckets, bad);
		gfsp_mtree_forget(&t, d, 1);
		ok(t.nnodes == 0, "and all forgotten");
	}
	gfsp_mtree_destroy(&t);
}

int
main(void)
{
	char cmd[600];

	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(tdir, sizeof(tdir), "%s/test_mount.XXXXXX",
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_entries();
	test_access();
	test_tree();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tdir);
	return done_testing();
}
