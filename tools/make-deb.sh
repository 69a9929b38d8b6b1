#!/bin/sh
# tools/make-deb.sh - build gfsplit's Debian packages (debian/) and check
# them with lintian; `make deb` runs it.
#
#   tools/make-deb.sh [OUTDIR]      packages into OUTDIR [build/deb]
#
# dpkg-buildpackage runs on a copy of the tree's tracked files (what
# `git ls-files` lists, as they are in the work tree, committed or not) in
# a temporary directory, so neither the tree nor its own build is touched.
# OUTDIR gets the source package (.dsc, .tar.xz), the .debs (and their
# -dbgsym .ddebs), the .changes and .buildinfo, build.log and lintian.log.
# Exit status 1 if the build fails or lintian reports an error or warning
# that debian/*lintian-overrides does not explain.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-"$top/build/deb"}
mkdir -p "$out"
out=$(cd "$out" && pwd)

for c in dpkg-buildpackage dh lintian fakeroot git; do
	command -v "$c" >/dev/null 2>&1 ||
		{ echo "make-deb: no $c (sh tools/install-deps.sh)" >&2; exit 1; }
done

# one version: the library's (what --version prints) is the package's
version=$(sed -n 's/^#define GFSPLIT_VERSION "\(.*\)"/\1/p' "$top/libcore/gfsplit.h")
debver=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
if [ "$debver" != "$version" ]; then
	echo "make-deb: debian/changelog is at $debver but gfsplit.h at $version: add a changelog entry (dch -v $version)" >&2
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gfsplit-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
src="$tmp/gfsplit-$version"
mkdir "$src"
# tracked files that exist (a file deleted in the tree and not yet
# committed is left out, as it will be)
(cd "$top" && git ls-files -z --cached --others --exclude-standard) | (cd "$top" && xargs -0 sh -c '
	for f; do [ -e "$f" ] || [ -L "$f" ] && printf "%s\n" "$f"; done' _) |
	(cd "$top" && tar -cf - -T -) | tar -xf - -C "$src"

# earlier packages of this version would be mixed with the new ones
rm -f "$out"/gfsplit_* "$out"/gfsplit-*_* "$out"/libgfsplit*_* "$out"/build.log "$out"/lintian.log

echo "make-deb: building gfsplit $version in $src (log: $out/build.log)"
if ! (cd "$src" && dpkg-buildpackage -us -uc -j"$(nproc)") >"$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	echo "make-deb: dpkg-buildpackage failed (log: $out/build.log)" >&2
	exit 1
fi
for f in "$tmp"/*; do
	[ -f "$f" ] && mv "$f" "$out/"
done

changes=$(ls "$out"/gfsplit_"$version"_*.changes)
echo "make-deb: lintian $(basename "$changes")"
status=0
lintian --fail-on error,warning "$changes" >"$out/lintian.log" 2>&1 || status=1
cat "$out/lintian.log"
[ "$status" -eq 0 ] || { echo "make-deb: lintian found errors or warnings (see above)" >&2; exit 1; }
echo "make-deb: packages in $out"
ls "$out"/*.deb
