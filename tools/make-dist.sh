#!/bin/sh
# tools/make-dist.sh - the release tarball gfsplit-VERSION.tar.gz of a
# commit; `make dist` runs it.
#
#   tools/make-dist.sh [REF [OUTDIR]]   REF [HEAD], into OUTDIR [build]
#
# The files are those git holds at REF (git archive: what is committed,
# not the work tree), under gfsplit-VERSION/, VERSION being REF's
# GFSPLIT_VERSION.  The tarball is reproducible: the same files give the
# same bytes, whichever commit holds them and whenever it is made.  Every
# entry has the date of VERSION's debian/changelog entry, owner root, mode
# 644 or 755, in name order; gzip stores no name or time.  The Spack recipe
# (packaging/spack/package.py) is left out (.gitattributes: export-ignore):
# it records this tarball's sha256, so it cannot be inside it, and Spack
# has its own copy.  Prints the tarball's path and sha256.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
ref=${1:-HEAD}
out=${2:-"$top/build"}
cd "$top"

commit=$(git rev-parse --verify -q "$ref^{commit}") ||
	{ echo "make-dist: '$ref' is not a commit" >&2; exit 1; }
version=$(git show "$commit:libcore/gfsplit.h" | sed -n 's/^#define GFSPLIT_VERSION "\(.*\)"/\1/p')
[ -n "$version" ] || { echo "make-dist: no GFSPLIT_VERSION in $ref:libcore/gfsplit.h" >&2; exit 1; }
# the date of the changelog entry of this version (its release date)
date=$(git show "$commit:debian/changelog" | awk -v v="($version)" '
	$1 == "gfsplit" && $2 == v { on = 1; next }
	on && /^ -- / { sub(/^ -- .*> +/, ""); print; exit }')
mtime=$(date -d "$date" +%s 2>/dev/null) ||
	{ echo "make-dist: no date for $version in $ref:debian/changelog" >&2; exit 1; }
if [ "$ref" = HEAD ] && [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	echo "make-dist: the work tree has changes that are not committed: the tarball has HEAD's files" >&2
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gfsplit-dist.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
name=gfsplit-$version
git archive --format=tar --prefix="$name/" "$commit" | tar -xf - -C "$tmp"
tar -C "$tmp" --sort=name --format=gnu --mtime="@$mtime" --owner=0 --group=0 --numeric-owner \
	--mode='u+w,go-w,a+rX' -cf - "$name" | gzip -n -9 >"$tmp/$name.tar.gz"
mv "$tmp/$name.tar.gz" "$out/$name.tar.gz"
echo "make-dist: $out/$name.tar.gz ($(git rev-parse --short "$commit"))"
echo "sha256 $(sha256sum "$out/$name.tar.gz" | cut -d' ' -f1)"
