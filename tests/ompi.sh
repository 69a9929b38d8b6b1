#!/bin/bash
# tests/ompi.sh - run a command test (tests/cmd/NAME.sh) on the Open MPI
# build, under Open MPI's own launcher, as a site with Debian's Open MPI
# runs it: mpirun with no MCA parameter but oversubscription (more ranks
# than this machine's 2 cores: where ranks run, not how they talk).
# tests/cmd/ompi_NAME.sh is one line:
#
#   exec "$(dirname "$0")/../ompi.sh" NAME
#
# NAME may also be a test of Open MPI's own, tests/ompi/NAME.sh (the
# emulated cluster under Open MPI's mpirun), or "unit": the unit tests,
# tests/unit/test_*, of that build.
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
# "unit": the library's unit tests (tests/unit/test_*) of the Open MPI
# build, one after another, their TAP lines as they print them
if [ "$name" = unit ]; then
	rc=0
	for t in "$UNIT"/test_*; do
		[ -x "$t" ] || continue
		echo "# $(basename "$t")"
		timeout -k 5 "${TEST_TIMEOUT:-300}" "$t"
		trc=$?
		[ "$trc" -eq 0 ] || { rc=1; echo "# $(basename "$t") exited $trc"; }
	done
	exit $rc
fi
# a test of Open MPI's own (tests/ompi/NAME.sh), else a command test
script=$(dirname "$0")/ompi/$name.sh
[ -f "$script" ] || script=$(dirname "$0")/cmd/$name.sh
exec bash "$script"
