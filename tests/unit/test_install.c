/*
 * test_install.c - putting a file in place (libcore/store/install.c):
 * each flag of gfsp_install, the roll-back when the new file cannot go
 * in, and the whole-file writers' temporaries, on the POSIX store.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "store.h"
#include "tap.h"
#include "tpath.h"

/* path's bytes are text (a file of at most 255 bytes) */
static int
holds(const char *path, const char *text)
{
	char buf[256];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return n >= 0 && strcmp(buf, text) == 0;
}

static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
}

/* the names in tdir, as one string "a b c" */
static const char *
listing(void)
{
	static char s[1024];
	struct dirent *de;
	DIR *d = opendir(tdir);

	s[0] = '\0';
	while (d != NULL && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' && (de->d_name[1] == '\0' ||
		    strcmp(de->d_name, "..") == 0))
			continue;
		if (s[0] != '\0')
			strncat(s, " ", sizeof(s) - strlen(s) - 1);
		strncat(s, de->d_name, sizeof(s) - strlen(s) - 1);
	}
	if (d != NULL)
		closedir(d);
	return s;
}

static void
test_flags(void)
{
	struct gfsp_error err;
	int rc;

	put(tpath("new"), "one");
	put(tpath("dst"), "old");
	gfsp_error_clear(&err);
	rc = gfsp_install(tpath("new"), tpath("dst"), NULL, 0, &err);
	ok(rc == GFSP_EEXIST && holds(tpath("dst"), "old") &&
	   holds(tpath("new"), "one"), "no flags: an existing name is "
	   "EEXIST, both files as they were (%s)", err.msg);
	rc = gfsp_install(tpath("new"), tpath("dst"), NULL, GFSP_PUT_REPLACE,
			  &err);
	ok(rc == 0 && holds(tpath("dst"), "one") &&
	   access(tpath("new"), F_OK) != 0, "REPLACE: the new file has the "
	   "name, the old one is gone");
	put(tpath("new"), "two");
	rc = gfsp_install(tpath("new"), tpath("dst"), NULL, GFSP_PUT_ASIDE,
			  &err);
	ok(rc == 0 && holds(tpath("dst"), "two") &&
	   strcmp(listing(), "dst") == 0, "ASIDE: the new file in, the old "
	   "one moved aside and removed (left: %s)", listing());
	mkdir(tpath("dir"), 0700);
	put(tpath("new"), "three");
	gfsp_error_clear(&err);
	rc = gfsp_install(tpath("new"), tpath("dir"), NULL,
			  GFSP_PUT_ASIDE | GFSP_PUT_NODIR, &err);
	ok(rc == GFSP_EEXIST && strstr(err.msg, "is a directory") != NULL,
	   "NODIR: a directory at the name is refused, named (%s)", err.msg);
	rc = gfsp_install(tpath("new"), tpath("absent"), NULL,
			  GFSP_PUT_ASIDE | GFSP_PUT_NODIR, &err);
	ok(rc == 0 && holds(tpath("absent"), "three"), "ASIDE: a name that "
	   "is free is taken as it is");
	unlink(tpath("absent"));
	rmdir(tpath("dir"));
}

/* the new file cannot go in: the old one is back at its name */
static void
test_rollback(void)
{
	struct gfsp_error err;
	int rc;

	put(tpath("dst"), "kept");
	gfsp_error_clear(&err);
	/* a temporary that does not exist: the rename in fails after the
	 * old one was moved aside */
	rc = gfsp_install(tpath("missing"), tpath("dst"), tpath("aside"),
			  GFSP_PUT_ASIDE, &err);
	ok(rc == GFSP_ENOENT && holds(tpath("dst"), "kept") &&
	   access(tpath("aside"), F_OK) != 0, "ASIDE: a failed rename puts "
	   "the old file back (rc %d: %s)", rc, err.msg);
	/* a tree at the name, replaced with ASIDE: removed whole */
	unlink(tpath("dst"));
	mkdir(tpath("dst"), 0700);
	put(tpath("dst/inner"), "x");
	put(tpath("new"), "file");
	rc = gfsp_install(tpath("new"), tpath("dst"), tpath("aside"),
			  GFSP_PUT_ASIDE, &err);
	ok(rc == 0 && holds(tpath("dst"), "file") &&
	   access(tpath("aside"), F_OK) != 0, "ASIDE: a tree at the name is "
	   "replaced and removed whole");
	unlink(tpath("dst"));
}

static int
fill_text(FILE *fp, void *arg)
{
	fputs(arg, fp);
	return 0;
}

static int
fill_fails(FILE *fp, void *arg)
{
	fputs("half", fp);
	return GFSP_ENOMEM;
}

static void
test_whole(void)
{
	struct gfsp_error err;
	struct stat st;
	int rc, dfd;

	put(tpath("w"), "before");
	gfsp_error_clear(&err);
	rc = gfsp_write_whole(tpath("w"), NULL, "after", 5, 0640,
			      GFSP_PUT_REPLACE | GFSP_PUT_SYNC, &err);
	ok(rc == 0 && holds(tpath("w"), "after") &&
	   strcmp(listing(), "w") == 0, "write_whole: replaced, no "
	   "temporary left (%s)", listing());
	rc = gfsp_write_whole(tpath("w"), NULL, "again", 5, 0640, 0, &err);
	ok(rc == GFSP_EEXIST && holds(tpath("w"), "after") &&
	   strcmp(listing(), "w") == 0, "write_whole without REPLACE: the "
	   "file stays, the temporary is removed (%s)", listing());
	put(tpath("mine.tmp"), "leftover");
	rc = gfsp_write_whole(tpath("m"), tpath("mine.tmp"), "m", 1, 0600,
			      GFSP_PUT_REPLACE, &err);
	ok(rc == 0 && holds(tpath("m"), "m") && stat(tpath("m"), &st) == 0 &&
	   (st.st_mode & 0777) == 0600 && access(tpath("mine.tmp"), F_OK) != 0,
	   "write_whole with the caller's temporary: a leftover there is "
	   "replaced, the mode is the one asked");
	unlink(tpath("m"));

	dfd = open(tdir, O_RDONLY | O_DIRECTORY);
	rc = gfsp_write_whole_at(dfd, tdir, "w", NULL, fill_text, "held",
				 GFSP_PUT_SYNC, &err);
	ok(rc == 0 && holds(tpath("w"), "held") &&
	   strcmp(listing(), "w") == 0, "write_whole_at: replaced in the "
	   "held directory, no temporary left (%s)", listing());
	gfsp_error_clear(&err);
	rc = gfsp_write_whole_at(dfd, tdir, "w", "w.new", fill_fails, NULL,
				 0, &err);
	ok(rc == GFSP_ENOMEM && holds(tpath("w"), "held") &&
	   strcmp(listing(), "w") == 0, "write_whole_at: a fill that fails "
	   "leaves the file as it was and no temporary (%s; %s)", listing(),
	   err.msg);
	symlink("/etc/passwd", tpath("w.new"));
	gfsp_error_clear(&err);
	rc = gfsp_write_whole_at(dfd, tdir, "w", "w.new", fill_text, "x", 0,
				 &err);
	ok(rc != 0 && holds(tpath("w"), "held") && holds("/etc/passwd",
	   "x") == 0, "write_whole_at: a link planted at the temporary's "
	   "name is not followed (%s)", err.msg);
	unlink(tpath("w.new"));
	close(dfd);
	unlink(tpath("w"));
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(tdir, sizeof(tdir), "%s/gfsp-install.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_flags();
	test_rollback();
	test_whole();
	rmdir(tdir);
	return done_testing();
}
