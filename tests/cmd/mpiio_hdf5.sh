#!/bin/bash
# mpiio_hdf5.sh - parallel HDF5 (Debian's libhdf5-mpich), a client no one
# here wrote, through the preload lib/libgfsplit-mpiio.so.  For each of
# collective and independent metadata, contiguous and chunked datasets,
# collective and independent raw data (tests/clients/h5_rw.c: a group,
# attributes, block, strided and checkerboard hyperslabs, 4 ranks): the
# same program writes the file on plain MPICH and through the preload; the
# split file passes stat-layout --check, merges into the very bytes plain
# MPICH wrote, h5diff finds no difference and h5dump reads the merged file,
# and HDF5 reads the split file back through the preload with 3 ranks.
# Collective metadata writes set views whose filetype does not start at
# byte 0 (the library once dropped that lower bound).
. "$(dirname "$0")/../lib.sh"

. "$TOP/tests/mpiio_lib.sh"
if [ ! -x "$UNIT/h5_rw" ]; then
	skip "parallel HDF5 through the preload" "no $UNIT/h5_rw (configure did not find libhdf5-mpich-dev; tools/install-deps.sh installs it)"
	finish
	exit 0
fi
mpiio_setup "$UNIT/h5_rw" "parallel HDF5 through the preload"
for t in h5diff h5dump; do
	command -v $t >/dev/null || { skip "parallel HDF5 through the preload" "no $t (hdf5-tools)"; finish; exit 0; }
done

# case NAME OPTIONS...: one configuration end to end
case_() {
	name=$1; shift
	a=$TMPD/$name.plain.h5 b=$TMPD/$name.split.h5 c=$TMPD/$name.merged.h5
	check "$name: plain $MPI_NAME writes it, 4 ranks" plain 4 write "$a" "$@"
	check "$name: written through the preload, 4 ranks" pre 4 "$TMPD/*.split.h5" write "$b" "$@"
	is_split "$name: the file is a split directory" "$b" || return
	check "$name: stat-layout --check" "$BIN/stat-layout" --check "$b"
	check "$name: gfsplit-merge with 2 ranks" mpirun_n 2 "$BIN/gfsplit-merge" "$b" "$c"
	same_bytes "$name: merged file equals what plain $MPI_NAME wrote" "$a" "$c"
	check "$name: h5diff plain merged finds no difference" h5diff "$a" "$c"
	# the first line names the file
	if h5dump "$c" >"$TMPD/dump" 2>&1 && grep -q 'DATASET "tiles"' "$TMPD/dump" &&
	    h5dump "$a" | sed 1d | cmp -s - <(sed 1d "$TMPD/dump"); then
		ok "$name: h5dump reads the merged file, as it reads the plain one"
	else
		not_ok "$name: h5dump reads the merged file, as it reads the plain one" "$(head -n 5 "$TMPD/dump")"
	fi
	check "$name: HDF5 reads the split file through the preload, 3 ranks" pre 3 "" read "$b" "$@"
}

case_ indep-md                     # HDF5's default: rank 0 writes metadata
case_ coll-md --coll-md            # the case where the lower bound was dropped
case_ coll-md-chunked --coll-md --chunked
case_ coll-md-indep-raw --coll-md --indep --chunked
case_ indep-md-indep-raw --indep
finish
