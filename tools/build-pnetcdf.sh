#!/bin/sh
# tools/build-pnetcdf.sh - PnetCDF built against MPICH, for the tests only.
#
# Debian's libpnetcdf-dev is built for OpenMPI; the MPI-IO preload
# library's tests need PnetCDF on MPICH (a real client no one here wrote).
# This fetches Debian's source package through a private apt
# configuration (a deb-src entry of its own: the system's sources are not
# touched), builds it static with mpicc, and installs it outside the tree:
#
#   $GFSPLIT_CACHE/pnetcdf-<Debian version>-mpich-<MPICH version>/
#       bin/ncmpidiff ...   lib/libpnetcdf.a   include/pnetcdf.h
#       src/                the examples and test programs with their
#                           config.h and testutils, which the Makefile
#                           builds against it (tests/clients/)
#       .complete           written last
#
# GFSPLIT_CACHE defaults to /var/cache/gfsplit.  A build that is there is
# kept; a new Debian version or MPICH gets its own.  Run by
# tools/install-deps.sh; configure finds the newest complete one.
set -eu
CACHE=${GFSPLIT_CACHE:-/var/cache/gfsplit}
say() { echo "build-pnetcdf: $*"; }

mpich=$(mpichversion 2>/dev/null | sed -n 's/^MPICH Version:[[:space:]]*//p')
[ -n "$mpich" ] || { say "no MPICH (mpichversion): install mpich first" >&2; exit 1; }

work=$(mktemp -d /tmp/gfsplit-pnetcdf.XXXXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/apt/lists/partial" "$work/apt/parts"
cat >"$work/apt/parts/debian-src.sources" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
apt() {
	apt-get -q -o Dir::Etc::SourceList=/dev/null \
		-o Dir::Etc::SourceParts="$work/apt/parts" \
		-o Dir::State::Lists="$work/apt/lists" "$@"
}

# the version decides the cache entry; without the archive, a complete
# build already there will do
ver=
if apt update >"$work/update.log" 2>&1; then
	ver=$(apt-cache -o Dir::Etc::SourceList=/dev/null \
		-o Dir::Etc::SourceParts="$work/apt/parts" \
		-o Dir::State::Lists="$work/apt/lists" showsrc pnetcdf 2>/dev/null |
		sed -n 's/^Version: //p' | head -n 1)
fi
if [ -z "$ver" ]; then
	for d in "$CACHE"/pnetcdf-*-mpich-"$mpich"; do
		[ -f "$d/.complete" ] && { say "archive unreachable; using $d"; exit 0; }
	done
	say "cannot reach Debian's source archive, and no PnetCDF build in $CACHE" >&2
	cat "$work/update.log" >&2
	exit 1
fi
dest=$CACHE/pnetcdf-$ver-mpich-$mpich
if [ -f "$dest/.complete" ]; then
	say "PnetCDF $ver on MPICH $mpich: already built ($dest)"
	exit 0
fi

say "PnetCDF $ver from Debian's source package, on MPICH $mpich -> $dest"
(cd "$work" && apt source --download-only "pnetcdf=$ver" >"$work/source.log" 2>&1) ||
	{ cat "$work/source.log" >&2; exit 1; }
dpkg-source -x "$work"/pnetcdf_*.dsc "$work/src" >"$work/unpack.log" 2>&1 ||
	{ cat "$work/unpack.log" >&2; exit 1; }

mkdir -p "$CACHE"
stage=$(mktemp -d "$CACHE/.pnetcdf-build.XXXXXXXX")
trap 'rm -rf "$work" "$stage"' EXIT
log=$work/build.log
(
	cd "$work/src"
	autoreconf -fi
	# static: the programs built against it are moved with the directory
	./configure CC=mpicc MPICC=mpicc --disable-fortran --disable-cxx \
		--disable-shared --prefix="$dest"
	make -j"$(nproc)"
	make install DESTDIR="$stage"
) >"$log" 2>&1 || { tail -n 40 "$log" >&2; say "build failed (log above)" >&2; exit 1; }

# install put it under $stage$dest; the sources the tests build from next
mv "$stage$dest" "$stage/pnetcdf"
mkdir -p "$stage/pnetcdf/src/test"
cp "$work/src/src/include/config.h" "$stage/pnetcdf/src/"
cp -r "$work/src/examples" "$stage/pnetcdf/src/"
for t in common nonblocking testcases header; do
	cp -r "$work/src/test/$t" "$stage/pnetcdf/src/test/"
done
rm -rf "$dest"
mv "$stage/pnetcdf" "$dest"
touch "$dest/.complete"
say "done: $dest"
