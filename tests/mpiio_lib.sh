# tests/mpiio_lib.sh - what the scripts of the MPI-IO preload library
# (tests/cmd/mpiio*.sh) share.  Sourced after tests/lib.sh, never run.
#
#   mpiio_setup PROG WHAT  PROG (a tests/unit program) must be built, else
#                          not_ok and exit; without the library (MPIIO_LIB,
#                          default lib/libgfsplit-mpiio.so) SKIP WHAT, exit 0
#   plain N ARGS..         PROG on MPICH alone, N ranks
#   pre N SELECT ARGS..    PROG under the preload, GFSPLIT_SPLIT_FILES=SELECT
#   is_split DESC PATH     ok if PATH is a split directory, not a plain file
#   crun_iopat_pair PLAIN GFPATH WHERE OPTS..
#                          on the emulated cluster (crun -ppn 2): PROG's
#                          ior-view pattern on MPICH alone to PLAIN, then
#                          through the preload to gfarm://GFPATH (its
#                          directory selected), --api=large --sync; WHERE
#                          says where ("4 nodes x 2 ranks")
#
# $PRE is the LD_PRELOAD value: a sanitized library needs the sanitizer
# runtime first in the process.

PRELOAD=${MPIIO_LIB:-$TOP/lib/libgfsplit-mpiio.so}
unset GFSPLIT_SPLIT_FILES GFSPLIT_VERBOSE GFSPLIT_FAULT GFSPLIT_GFARM_HOSTS
preload_of "$PRELOAD"

mpiio_setup() {
	PROG=$1
	if [ ! -x "$PROG" ]; then
		not_ok "$(basename "$PROG") is built" "missing: $PROG (make)"
		finish
		exit 1
	fi
	if [ ! -f "$PRELOAD" ]; then
		skip "$2" "no $PRELOAD (make builds it)"
		finish
		exit 0
	fi
}

# ROMIO's collective buffer reaches a file's holes uninitialised: zeros
# from fresh pages, but under ASan malloc fills it with 0xbe, so make that
# fill zero too
plain() {
	_n=$1; shift
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}malloc_fill_byte=0" \
		mpirun_n "$_n" "$PROG" "$@"
}

pre() {
	_n=$1 _sel=$2; shift 2
	mpirun_n "$_n" env LD_PRELOAD="$PRE" GFSPLIT_SPLIT_FILES="$_sel" "$PROG" "$@"
}

is_split() {
	if [ -d "$2" ] && [ -f "$2/gfsplit.meta" ]; then ok "$1"
	else not_ok "$1" "$(ls -ld "$2" 2>&1; [ -d "$2" ] && ls -a "$2")"; return 1; fi
}

crun_iopat_pair() {
	_plain=$1 _gf=$2 _where=$3; shift 3
	check "$(basename "$PROG") ior-view on plain MPICH, $_where, to shared storage" \
		crun -ppn 2 env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}malloc_fill_byte=0" \
		"$PROG" ior-view write "$_plain" "$@"
	check "  the same through the preload to gfarm://$_gf" \
		crun -ppn 2 env LD_PRELOAD="$PRE" GFSPLIT_SPLIT_FILES="gfarm://${_gf%/*}/*" \
		"$PROG" ior-view write "gfarm://$_gf" "$@" --api=large --sync
}
