/*
 * mountinfo.c - what is mounted where, from /proc/self/mountinfo (core.h):
 * read rather than asked of the mount with a stat, which waits for a FUSE
 * daemon that hangs and fails on one that died.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "core.h"

/* A field with its octal escapes (\040 for a space, \134 for a
 * backslash, ...) undone, in place. */
static void
unescape(char *s)
{
	char *d = s;

	for (; *s != '\0'; s++, d++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*d = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 |
			    (s[3] - '0'));
			s += 3;
		} else {
			*d = *s;
		}
	}
	*d = '\0';
}

int
gfsp_mount_find(const char *point, unsigned maj, unsigned min,
		struct gfsp_mount *out)
{
	char line[3 * GFSP_MOUNT_PATH + 256], *dash;
	struct gfsp_mount m;
	FILE *fp = fopen("/proc/self/mountinfo", "re");
	int found = 0;

	if (fp == NULL)
		return -1;
	/* "36 25 0:39 / /mnt rw,... shared:1 - fuse.gfsplit /data rw,..." */
	while (fgets(line, sizeof(line), fp) != NULL) {
		dash = strstr(line, " - ");
		if (dash == NULL || sscanf(line, "%*u %*u %u:%u %*s %4095s",
		    &m.maj, &m.min, m.point) != 3 ||
		    sscanf(dash, " - %255s %4095s", m.type, m.source) != 2)
			continue;
		unescape(m.point);
		unescape(m.source);
		if (point != NULL ? strcmp(m.point, point) != 0 :
		    m.maj != maj || m.min != min)
			continue;
		*out = m;	/* the last one of a point is on top */
		found = 1;
	}
	fclose(fp);
	return found;
}
