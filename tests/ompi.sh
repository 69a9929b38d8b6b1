#!/bin/bash
# tests/ompi.sh - run a command test (tests/cmd/NAME.sh) on the Open MPI
# build, under Open MPI's own launcher, as a site with Debian's Open MPI
# runs it: mpirun with no MCA parameter but oversubscription (more ranks
# than this machine's 2 cores: where ranks run, not how they talk).
# tests/cmd/ompi_NAME.sh is one line:
#
#   exec "$(dirname "$0")/../ompi.sh" NAME
#
# BIN, UNIT and the preload libraries become the Open MPI build's
# (OMPI_BUILD, make check: build/ompi), and TEST_MPI=ompi tells tests/lib.sh
# and the script which launcher's options to use.  Where the script
# compares with "MPI alone", that is Open MPI's own MPI-IO (OMPIO) now.
# Without an Open MPI build the test SKIPs, saying why.
set -u
name=$1
if [ -z "${OMPI_BUILD:-}" ] || [ ! -x "$OMPI_BUILD/bin/pcp-split" ]; then
	echo "ok 1 # SKIP $name under Open MPI: no Open MPI build (OMPI_BUILD; make check builds build/ompi when configure finds mpicc.openmpi)"
	exit 0
fi
if ! command -v mpirun.openmpi >/dev/null 2>&1; then
	echo "ok 1 # SKIP $name under Open MPI: no mpirun.openmpi (sh tools/install-deps.sh)"
	exit 0
fi
export TEST_MPI=ompi
export BIN=$OMPI_BUILD/bin UNIT=$OMPI_BUILD/unit
export MPIIO_LIB=$OMPI_BUILD/lib/libgfsplit-mpiio.so CACHE_LIB=$OMPI_BUILD/lib/libgfsplit-cache.so
export MPIEXEC=mpirun.openmpi OMPI_MCA_rmaps_base_oversubscribe=1
# Open MPI refuses to start as root unless told this (no MCA parameter)
if [ "$(id -u)" -eq 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
exec bash "$(dirname "$0")/cmd/$name.sh"
