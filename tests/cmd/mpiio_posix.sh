#!/bin/bash
# mpiio_posix.sh - under lib/libgfsplit-mpiio.so a split file is one
# regular file to POSIX and stdio calls too, as real I/O libraries probe a
# file before MPI_File_open (tests/helpers/mpi_probe: stat, lstat, open, read,
# fstat, lseek, pread, openat, fopen/fread, before MPI_Init and during,
# then MPI-IO), and as serial tools run in the job read it: md5sum, cat,
# python's open() and os.stat, h5dump and h5diff straight on the split
# file.  Without the library (or with GFSPLIT_POSIX=0) the same probe fails
# on the directory, so the test can fail.  A damaged split file stays a
# directory (reads fail loudly, with a line naming the file), never wrong
# bytes; a directory that is not a split file stays a directory.
. "$(dirname "$0")/../lib.sh"

. "$TOP/tests/mpiio_lib.sh"
mpiio_setup "$UNIT/mpi_probe" "split files through POSIX calls"
[ -x "$UNIT/mpi_iopat" ] || { not_ok "mpi_iopat is built"; finish; exit 1; }

a=$TMPD/f.plain b=$TMPD/f.split c=$TMPD/f.merged
PROG=$UNIT/mpi_iopat
check "plain $MPI_NAME writes an IOR-like file, 3 ranks" plain 3 ior-at write "$a" --segments=5 --block=100000 --transfer=30000
check "the preload writes it as a split file, 3 ranks" pre 3 "$TMPD/*.split" ior-at write "$b" --segments=5 --block=100000 --transfer=30000
is_split "it is a split directory" "$b"
check "gfsplit-merge it" mpirun_n 2 "$BIN/gfsplit-merge" "$b" "$c"
same_bytes "merged, it equals the plain file" "$a" "$c"

PROG=$UNIT/mpi_probe
check "the probe passes on the plain file, plain $MPI_NAME, 2 ranks" plain 2 "$a" "$a"
check "under the preload, the split file probes and reads as the plain file, 2 ranks" pre 2 "" "$b" "$a"
cd "$TMPD" && check "the same with a relative path, 1 rank" pre 1 "" f.split "$a"
cd "$TOP" || exit 1
check_fails "without the preload the probe fails on the split directory" plain 1 "$b" "$a"
check_fails "with GFSPLIT_POSIX=0 it fails too" mpirun_n 1 env GFSPLIT_POSIX=0 LD_PRELOAD="$PRE" "$PROG" "$b" "$a"

# serial tools in the job: preloaded, they read the split file as a file
sum() { env LD_PRELOAD="$PRE" "$@"; }
if [ "$(sum md5sum "$b" | cut -d' ' -f1)" = "$(md5sum <"$a" | cut -d' ' -f1)" ] &&
    sum cat "$b" | cmp -s - "$a"; then
	ok "md5sum (fopen, fread) and cat (open, read) read the split file's bytes"
else
	not_ok "md5sum (fopen, fread) and cat (open, read) read the split file's bytes" \
		"$(sum md5sum "$b" 2>&1)" "$(md5sum "$a")"
fi
if sum /usr/bin/python3 - "$b" "$a" <<'EOF' >"$TMPD/py" 2>&1; then
import os, stat, sys
s = os.stat(sys.argv[1])
assert stat.S_ISREG(s.st_mode) and s.st_size == os.path.getsize(sys.argv[2]), s
assert open(sys.argv[1], "rb").read() == open(sys.argv[2], "rb").read()
assert (s.st_mode & 0o111) == 0, oct(s.st_mode)
EOF
	ok "python: os.stat says a regular file of the logical size, open().read() its bytes"
else
	not_ok "python: os.stat says a regular file of the logical size, open().read() its bytes" "$(cat "$TMPD/py")"
fi
mkdir "$TMPD/plain.dir"
if sum /usr/bin/python3 -c 'import os,sys; sys.exit(not os.path.isdir(sys.argv[1]))' "$TMPD/plain.dir"; then
	ok "a directory that is not a split file stays a directory"
else
	not_ok "a directory that is not a split file stays a directory"
fi

# HDF5's own tools straight on a split file (not with the sanitized
# library: h5dump and h5diff, uninstrumented, with the sanitizer runtime
# preloaded deadlock on glibc's locale lock in libp11-kit's destructor at
# exit, library or not; the release run covers them)
case $PRELOAD in
*/asan/*) h5tools=no ;;
*) h5tools=yes ;;
esac
if [ $h5tools = no ]; then
	skip "HDF5 tools on a split file" "not under the sanitizer build (uninstrumented h5dump deadlocks with libasan preloaded)"
elif [ -x "$UNIT/h5_rw" ] && command -v h5dump >/dev/null; then
	PROG=$UNIT/h5_rw
	check "plain $MPI_NAME writes an HDF5 file, 2 ranks" plain 2 write "$TMPD/h.h5" --coll-md
	check "the preload writes it as a split file, 2 ranks" pre 2 "$TMPD/*.split.h5" write "$TMPD/h.split.h5" --coll-md
	check "h5diff of the split file (preloaded) and the plain one finds no difference" \
		sum h5diff "$TMPD/h.split.h5" "$TMPD/h.h5"
	if sum h5dump "$TMPD/h.split.h5" 2>&1 | sed 1d >"$TMPD/d1" && h5dump "$TMPD/h.h5" | sed 1d | cmp -s - "$TMPD/d1"; then
		ok "h5dump (preloaded) of the split file prints what it prints of the plain one"
	else
		not_ok "h5dump (preloaded) of the split file prints what it prints of the plain one" "$(head -n 3 "$TMPD/d1")"
	fi
else
	skip "HDF5 tools on a split file" "no h5_rw or h5dump (libhdf5-mpich-dev, hdf5-tools)"
fi

# damage: a part gone; the file stays a directory and says why
cp -r "$b" "$TMPD/bad.split"
rm "$TMPD/bad.split/part.1"
if sum cat "$TMPD/bad.split" >"$TMPD/bad.out" 2>"$TMPD/bad.err"; then
	not_ok "a split file with a part missing does not read" "$(head -c 200 "$TMPD/bad.out")"
else
	ok "a split file with a part missing does not read"
fi
if grep -q "bad.split' is not read as a file: .*part.1" "$TMPD/bad.err"; then
	ok "the line names the file and the missing part"
else
	not_ok "the line names the file and the missing part" "$(cat "$TMPD/bad.err")"
fi
finish
