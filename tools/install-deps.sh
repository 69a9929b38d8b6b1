#!/bin/sh
# tools/install-deps.sh - install the Debian 12 packages gfsplit needs (as root).
# Idempotent: does nothing when everything is already installed and built.
set -eu
# gfmd gfsd gfarm-client: the real Gfarm the tests start (tests/gfarm/);
# libgfarm-dev: the Gfarm backend (configure --with-gfarm);
# zstd: the CLI that tests/unit/test_zfile.c decompresses a gfsz file with;
# libhdf5-mpich-dev hdf5-tools: parallel HDF5 as a real MPI-IO client of the
# preload library, checked with h5diff and h5dump (tests/cmd/mpiio_hdf5.sh);
# clang libclang-rt-14-dev: clang 14 and its libFuzzer and sanitizer
# runtimes (only recommended by clang, so named here) for the fuzz
# harnesses (make fuzz, tests/cmd/fuzz.sh);
# iproute2 iputils-ping: the emulated cluster's namespaces, bridge, links
# and their shaping (ip, tc), and its reachability check (tests/cluster.sh);
# libfuse3-dev fuse3: gfsplit-mount (configure finds libfuse3; fusermount3
# unmounts); attr: getfattr, which the mount's tests read its xattrs with;
# mandoc: the man pages' lint, man-db: their layout at 80 columns
# (tests/cmd/packaging.sh); dpkg-dev debhelper fakeroot lintian: the Debian
# packages of make deb, and their check;
# lua5.4 tcl: the interpreters that tests/cmd/packaging.sh runs the Lmod and
# Tcl module files with (not Lmod or Environment Modules themselves);
# python3-jsonschema: the validator the tests check every --json output
# against schemas/ with (tests/json_valid.py); autoconf automake libtool:
# PnetCDF's build from Debian's source package (tools/build-pnetcdf.sh);
# libopenmpi-dev: a second MPI, Open MPI, that the tree is built with as
# well (make MODE=ompi, under build/ompi/) and its tests run under
# (tests/cmd/ompi_*.sh), since a preload library must match the site's
# MPI; MPICH stays the default (pin_mpich below); libhdf5-openmpi-dev
# libpnetcdf-dev pnetcdf-bin: Debian's parallel HDF5 and PnetCDF (and its
# ncmpidiff), built on Open MPI, as real clients of the Open MPI build's
# preload; lmod: the README's
# module block runs with the real Lmod (tests/cmd/readme.sh);
# munge slurmctld slurmd slurm-client: Slurm on the emulated cluster
# (tests/cluster.sh up --slurm, tests/cmd/cluster_slurm.sh); the suite
# starts its own daemons with a key and configuration of its own;
# gfarm2fs: Gfarm mounted on a node, for sbcast's side of bench/stage.sh
# slurm (sbcast reads a path)
PKGS="build-essential pkg-config python3 mpich libmpich-dev libjson-c-dev libxxhash-dev
libzstd-dev zstd libibverbs-dev util-linux gfmd gfsd gfarm-client libgfarm-dev
libhdf5-mpich-dev hdf5-tools clang libclang-rt-14-dev iproute2 iputils-ping
libfuse3-dev fuse3 attr mandoc man-db dpkg-dev debhelper fakeroot lintian
lua5.4 tcl python3-jsonschema autoconf automake libtool libopenmpi-dev libhdf5-openmpi-dev libpnetcdf-dev pnetcdf-bin lmod
munge slurmctld slurmd slurm-client gfarm2fs"

# Debian's MPI alternatives (mpicc, mpirun and mpiexec, the mpi.h and
# libmpi.so of /usr/include/TRIPLET/mpi) go by priority, and OpenMPI's is
# higher than MPICH's: once both are installed they would switch to
# OpenMPI.  Everything here is built and run with MPICH, so each is set to
# MPICH's choice in manual mode, which later installs and upgrades keep.
# Before apt-get too, so that no build running meanwhile sees OpenMPI.
pin_mpich() {
	tri=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
	for alt in mpi=/usr/bin/mpicc.mpich mpirun=/usr/bin/mpirun.mpich \
	    "mpi-$tri=/usr/include/$tri/mpich"; do
		name=${alt%%=*} path=${alt#*=}
		q=$(update-alternatives --query "$name" 2>/dev/null) || continue
		printf '%s\n' "$q" | grep -qx "Alternative: $path" || continue
		if printf '%s\n' "$q" | grep -qx "Value: $path"; then
			printf '%s\n' "$q" | grep -qx "Status: manual" && continue
			[ "$(id -u)" -eq 0 ] || continue
		elif [ "$(id -u)" -ne 0 ]; then
			echo "install-deps: the $name alternative is not MPICH's $path (run as root)" >&2
			continue
		fi
		update-alternatives --quiet --set "$name" "$path"
		echo "install-deps: $name -> $path (pinned)"
	done
}
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "install-deps: all packages present"
elif [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages:$missing (run as root, or install them)" >&2
	exit 1
else
	echo "install-deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	pin_mpich
	apt-get update -qq
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
pin_mpich

# PnetCDF on MPICH, outside the tree, for the tests (kept once built; a
# user who is not root builds it in GFSPLIT_CACHE, if set, or skips it)
if [ "$(id -u)" -eq 0 ] || [ -n "${GFSPLIT_CACHE:-}" ]; then
	sh "$(dirname "$0")/build-pnetcdf.sh"
else
	echo "install-deps: not root: PnetCDF is not built (its tests will SKIP)"
fi
