#!/bin/bash
# build.sh - configure's dependency options and make install with DESTDIR.
. "$(dirname "$0")/../lib.sh"

# configure runs in a scratch copy so the tree's config.mk stays as it is
mkdir -p "$TMPD/src/libcore"
cp "$TOP/configure" "$TMPD/src/"
cp "$TOP/libcore/gfsplit.h" "$TMPD/src/libcore/"
cfg() { (cd "$TMPD/src" && ./configure "$@"); }

expect_exit "configure with defaults" 0 cfg
output_has "configure reports each optional library" 'checking gfarm\.\.\..*(found|not found)'
output_has "configure reports zstd" 'checking zstd\.\.\. +(found|not found)'
output_has "configure reports ibverbs" 'checking ibverbs\.\.\. +(found|not found)'
if grep -q '^DEFS' "$TMPD/src/config.mk" && grep -q '^MPICC = mpicc' "$TMPD/src/config.mk"; then
	ok "config.mk written"
else
	not_ok "config.mk written" "$(cat "$TMPD/src/config.mk" 2>&1)"
fi

expect_exit "--without-zstd --without-ibverbs --without-gfarm" 0 \
	cfg --without-zstd --without-ibverbs --without-gfarm
output_has "--without-zstd is reported as skipped" 'checking zstd\.\.\. +skipped'
if grep -q -- '-DHAVE_ZSTD' "$TMPD/src/config.mk"; then
	not_ok "--without-zstd leaves HAVE_ZSTD out"
else
	ok "--without-zstd leaves HAVE_ZSTD out"
fi

expect_exit "--with-gfarm=DIR with no libgfarm there is an error" 1 \
	cfg --with-gfarm="$TMPD/no-such-prefix"
output_has "the error names the library" 'with-gfarm.* given but gfarm was not found'

expect_exit "MPICC that does not exist is an error" 1 cfg MPICC=/nonexistent/mpicc
output_has "the error says MPI is required" 'MPI C compiler is required'

expect_exit "PREFIX and CFLAGS reach config.mk" 0 cfg --prefix=/opt/gfs CFLAGS=-O1
if grep -q '^PREFIX = /opt/gfs' "$TMPD/src/config.mk" && grep -q '^CFLAGS = -O1' "$TMPD/src/config.mk"; then
	ok "config.mk has the prefix and flags"
else
	not_ok "config.mk has the prefix and flags" "$(cat "$TMPD/src/config.mk")"
fi
expect_exit "unknown option is a usage error" 2 cfg --frobnicate

# make install into a staging root
root="$TMPD/root"
expect_exit "make install DESTDIR" 0 make -s -C "$TOP" install DESTDIR="$root" PREFIX=/usr
missing=""
for f in bin/pcp-split bin/gfsplit-merge bin/stat-layout lib/libgfsplit.a lib/libgfsplit.so.0 \
	lib/libgfsplit.so include/gfsplit.h lib/pkgconfig/gfsplit.pc share/man/man1/pcp-split.1 \
	share/man/man1/gfsplit-merge.1 share/man/man1/stat-layout.1 share/man/man5/gfsplit.5 \
	lib/libgfsplit-mpiio.so share/man/man7/gfsplit-mpiio.7 \
	share/bash-completion/completions/pcp-split share/zsh/site-functions/_pcp-split; do
	[ -e "$root/usr/$f" ] || missing="$missing $f"
done
if [ -z "$missing" ]; then ok "every installed file is there"; else not_ok "every installed file is there" "missing:$missing"; fi
if grep -q '^prefix=/usr$' "$root/usr/lib/pkgconfig/gfsplit.pc"; then ok "pkg-config file has the prefix"
else not_ok "pkg-config file has the prefix" "$(cat "$root/usr/lib/pkgconfig/gfsplit.pc")"; fi

# the installed header and library are usable by an application
cat >"$TMPD/app.c" <<'C'
#include <gfsplit.h>
#include <stdio.h>
int main(void)
{
	struct gfsp_view v;
	uint64_t loff, count;
	if (gfsp_view_cyclic(&v, 1, 4, 100, GFSP_VIEW_UNBOUNDED, NULL))
		return 1;
	/* offset 450 is in block 4 (rank 0's), 150 in block 1 (rank 1's) */
	int a = gfsp_view_lookup(&v, 450, &loff, &count);
	int b = gfsp_view_lookup(&v, 150, &loff, &count);
	printf("%d %d %llu\n", a, b, (unsigned long long)loff);
	gfsp_view_free(&v);
	return 0;
}
C
flags=$(PKG_CONFIG_PATH="$root/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root" \
	pkg-config --cflags --libs --static gfsplit 2>&1)
if mpicc "$TMPD/app.c" -o "$TMPD/app" $flags >"$OUT" 2>&1 && [ "$(LD_LIBRARY_PATH="$root/usr/lib" "$TMPD/app")" = "0 1 50" ]; then
	ok "an application builds against the installed header, library and gfsplit.pc"
else
	not_ok "an application builds against the installed header, library and gfsplit.pc" "$flags" "$(cat "$OUT")"
fi
finish
