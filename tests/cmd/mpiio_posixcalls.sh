#!/bin/bash
# mpiio_posixcalls.sh - under lib/libgfsplit-mpiio.so a split file is
# removed, renamed and truncated by name as a plain file is:
#  - a program that clears its output (unlink, remove, unlinkat, or
#    truncate to 0 as PnetCDF's NC_CLOBBER does) and writes it again with
#    MPI_MODE_CREATE|MPI_MODE_EXCL (tests/helpers/mpi_posixcalls) ends with
#    the bytes plain MPICH ends with on a plain file;
#  - rename, renameat and renameat2 of a split file to a free name, over a
#    plain file and over another split file, and of a plain file over a
#    split file: the source's bytes at the new name, the old name gone,
#    nothing left behind; onto a directory: EISDIR, nothing changed;
#  - truncate to a middle size, past the end and to 0: the bytes of
#    `head -c N` (zeros past the end), the mode kept; ftruncate of the
#    read-only descriptor fails (EINVAL) as for a read-only file;
#  - a symbolic link (this user's) as the MPI-IO output path: the split file
#    lands where it points, the link stays, the bytes are plain MPICH's;
#  - rm and mv (coreutils) on a split file.
# Each of these failed on the library before it served these calls
# (EISDIR, ENOTDIR,
# ENOTEMPTY, or the link refused), except the rename to a free name and
# ftruncate, which the kernel did right and which are kept right.
. "$(dirname "$0")/../lib.sh"

. "$TOP/tests/mpiio_lib.sh"
mpiio_setup "$UNIT/mpi_posixcalls" "split files removed, renamed and truncated by name"
[ -x "$UNIT/mpi_iopat" ] || { not_ok "mpi_iopat is built"; finish; exit 1; }

sum() { env LD_PRELOAD="$PRE" "$@"; }
# reads_as DESC PATH EXPECT: PATH, read under the preload, holds EXPECT's bytes
reads_as() {
	if sum cat "$2" 2>"$TMPD/.err" | cmp -s - "$3"; then ok "$1"
	else not_ok "$1" "$(ls -ld "$2" 2>&1)" "$(head -n 3 "$TMPD/.err")"; fi
}
# plain_as DESC PATH EXPECT: PATH is a plain regular file with EXPECT's bytes
plain_as() {
	if [ -f "$2" ] && [ ! -L "$2" ] && cmp -s "$2" "$3"; then ok "$1"
	else not_ok "$1" "$(ls -ld "$2" 2>&1)" "$(cmp "$2" "$3" 2>&1 | head -n 2)"; fi
}
# py OP ARGS..: one call under the preload (tests below); on failure it
# prints the errno's name
py() {
	sum /usr/bin/python3 - "$@" <<'EOF'
import ctypes, errno, os, sys
op, args = sys.argv[1], sys.argv[2:]
libc = ctypes.CDLL(None, use_errno=True)
def c(rc):
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
try:
    if op == "rename":
        os.rename(args[0], args[1])
    elif op == "renameat":
        a = os.open(os.path.dirname(args[0]), os.O_RDONLY | os.O_DIRECTORY)
        b = os.open(os.path.dirname(args[1]), os.O_RDONLY | os.O_DIRECTORY)
        os.rename(os.path.basename(args[0]), os.path.basename(args[1]),
                  src_dir_fd=a, dst_dir_fd=b)
    elif op == "renameat2":
        c(libc.renameat2(-100, args[0].encode(), -100, args[1].encode(), 0))
    elif op == "truncate":
        os.truncate(args[0], int(args[1]))
    elif op == "ftruncate-ro":
        fd = os.open(args[0], os.O_RDONLY)
        os.ftruncate(fd, 0)
    else:
        sys.exit("unknown op " + op)
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
    sys.exit(1)
EOF
}
# fails_with DESC ERRNO OP ARGS..: the call fails with ERRNO
fails_with() {
	_d=$1 _e=$2; shift 2
	_got=$(py "$@" 2>&1) && { not_ok "$_d" "it succeeded"; return; }
	[ "$_got" = "$_e" ] && ok "$_d" || not_ok "$_d" "failed with: $_got"
}

IOR="--segments=3 --block=100000 --transfer=30000"
a=$TMPD/ior.plain a2=$TMPD/small.plain
PROG=$UNIT/mpi_iopat
check "plain MPICH writes an IOR-like file, 3 ranks" plain 3 ior-at write "$a" $IOR
check "the preload writes it as a split file, 3 ranks" pre 3 "$TMPD/*.split" ior-at write "$TMPD/ior.split" $IOR
is_split "it is a split directory" "$TMPD/ior.split"
check "plain MPICH writes a smaller one, 2 ranks" plain 2 ior-at write "$a2" --segments=2 --block=50000 --transfer=20000
check "the preload writes that as a split file too" pre 2 "$TMPD/*.split" ior-at write "$TMPD/small.split" --segments=2 --block=50000 --transfer=20000
is_split "it is a split directory" "$TMPD/small.split"
# fresh NAME: a fresh copy of the first split file, as TMPD/NAME
fresh() { rm -rf "${TMPD:?}/$1"; cp -a "$TMPD/ior.split" "$TMPD/$1"; }

# --- cleared, then written again through MPI-IO
PROG=$UNIT/mpi_posixcalls
for call in unlink remove unlinkat truncate0; do
	p=$TMPD/$call.plain s=$TMPD/$call.split
	cp "$a" "$p"
	fresh "$call.split"
	if [ $call = truncate0 ]; then how="MPI_MODE_CREATE"; else how="MPI_MODE_CREATE|MPI_MODE_EXCL"; fi
	check "$call: plain MPICH, rank 0 clears a plain file, then $how writes it, 3 ranks" plain 3 $call "$p"
	check "$call: under the preload, rank 0 clears a split file, then $how writes it, 3 ranks" pre 3 "$TMPD/*.split" $call "$s"
	is_split "$call: the new file is a split file" "$s"
	check "$call: gfsplit-merge it" mpirun_n 2 "$BIN/gfsplit-merge" "$s" "$TMPD/$call.merged"
	same_bytes "$call: merged, it equals what plain MPICH wrote" "$p" "$TMPD/$call.merged"
done
no_leftovers "unlink, remove, unlinkat and truncate left nothing behind" "$TMPD"

# --- rename
fresh r1.split
check "rename of a split file to a free name" py rename "$TMPD/r1.split" "$TMPD/r1.new"
reads_as "the new name holds its bytes" "$TMPD/r1.new" "$a"
is_absent "the old name is gone" "$TMPD/r1.split"

fresh r2.split
head -c 4096 /dev/urandom >"$TMPD/r2.plain"
check "rename of a split file over a plain file" py rename "$TMPD/r2.split" "$TMPD/r2.plain"
is_split "the plain file's name is the split file now" "$TMPD/r2.plain"
reads_as "and holds the split file's bytes" "$TMPD/r2.plain" "$a"
is_absent "the old name is gone" "$TMPD/r2.split"

fresh r3.split
cp -a "$TMPD/small.split" "$TMPD/r3.other.split"
check "renameat of a split file over another split file" py renameat "$TMPD/r3.split" "$TMPD/r3.other.split"
reads_as "the other's name holds the first one's bytes" "$TMPD/r3.other.split" "$a"
is_absent "the old name is gone" "$TMPD/r3.split"

fresh r4.split
cp "$a2" "$TMPD/r4.plain"
check "renameat2 (flags 0) of a plain file over a split file" py renameat2 "$TMPD/r4.plain" "$TMPD/r4.split"
plain_as "the split file's name is the plain file now, with its bytes" "$TMPD/r4.split" "$a2"
is_absent "the old name is gone" "$TMPD/r4.plain"
no_leftovers "the renames left nothing behind" "$TMPD"

fresh r5.split
mkdir "$TMPD/r5.dir"
fails_with "rename of a split file onto a directory fails with EISDIR" EISDIR rename "$TMPD/r5.split" "$TMPD/r5.dir"
reads_as "and the split file is untouched" "$TMPD/r5.split" "$a"

# --- truncate
n=123457 size=$(stat -c %s "$a")
fresh t1.split
check "truncate of a split file to $n bytes" py truncate "$TMPD/t1.split" $n
head -c $n "$a" >"$TMPD/t1.want"
plain_as "it is a regular file of the first $n bytes (head -c $n)" "$TMPD/t1.split" "$TMPD/t1.want"

fresh t2.split
check "truncate of a split file past its end, to $((size + 5000)) bytes" py truncate "$TMPD/t2.split" $((size + 5000))
{ cat "$a"; head -c 5000 /dev/zero; } >"$TMPD/t2.want"
plain_as "it is a regular file of its bytes and 5000 zeros" "$TMPD/t2.split" "$TMPD/t2.want"

fresh t3.split
chmod 750 "$TMPD/t3.split"
check "truncate of a split file (mode 750 as a directory, 640 as a file) to 0" py truncate "$TMPD/t3.split" 0
if [ -f "$TMPD/t3.split" ] && [ "$(stat -c %s.%a "$TMPD/t3.split")" = 0.640 ]; then
	ok "it is an empty regular file of mode 640"
else
	not_ok "it is an empty regular file of mode 640" "$(ls -ld "$TMPD/t3.split")"
fi

fresh t4.split
ln -s t4.split "$TMPD/t4.link"
check "truncate through a symbolic link to a split file" py truncate "$TMPD/t4.link" $n
if [ -L "$TMPD/t4.link" ]; then ok "the link stays"; else not_ok "the link stays" "$(ls -ld "$TMPD/t4.link")"; fi
plain_as "the file it points to is the first $n bytes" "$TMPD/t4.split" "$TMPD/t1.want"

fresh t5.split
fails_with "ftruncate of a split file opened read-only fails with EINVAL, as a read-only file's" EINVAL ftruncate-ro "$TMPD/t5.split"
reads_as "and the split file is untouched" "$TMPD/t5.split" "$a"
no_leftovers "the truncations left nothing behind" "$TMPD"

# --- a symbolic link as the MPI-IO output path
PROG=$UNIT/mpi_iopat
mkdir "$TMPD/out"
ln -s out/l1.target "$TMPD/l1.split"
cp -a "$TMPD/small.split" "$TMPD/out/l2.target"
ln -s "$TMPD/out/l2.target" "$TMPD/l2.split"
cp "$a2" "$TMPD/out/l3.target"
ln -s "$TMPD/out/l3.target" "$TMPD/l3.split"
for l in l1 l2 l3; do
	case $l in
	l1) what="to a free name (relative)" ;;
	l2) what="to a split file" ;;
	l3) what="to a plain file" ;;
	esac
	check "$l: the preload writes through a symbolic link $what, 3 ranks" pre 3 "$TMPD/*.split" ior-at write "$TMPD/$l.split" $IOR
	if [ -L "$TMPD/$l.split" ]; then ok "$l: the link stays"
	else not_ok "$l: the link stays" "$(ls -ld "$TMPD/$l.split")"; fi
	is_split "$l: the split file is where it points" "$TMPD/out/$l.target"
	check "$l: gfsplit-merge it" mpirun_n 2 "$BIN/gfsplit-merge" "$TMPD/out/$l.target" "$TMPD/$l.merged"
	same_bytes "$l: merged, it equals what plain MPICH wrote" "$a" "$TMPD/$l.merged"
done
check "the preload reads the split file back through the link, 2 ranks" pre 2 "" ior-at read "$TMPD/l1.split" $IOR
PROG=$UNIT/mpi_posixcalls
ln -s out/l4.target "$TMPD/l4.split"
check_fails "plain MPICH: MPI_MODE_EXCL through a symbolic link to a free name fails (O_EXCL)" plain 2 none "$TMPD/l4.split"
check_fails "the preload: so does a split-write's" pre 2 "$TMPD/*.split" none "$TMPD/l4.split"
is_absent "nothing was made where it points" "$TMPD/out/l4.target"
no_leftovers "the writes through links left nothing behind" "$TMPD/out"

# --- coreutils
fresh c1.split
fresh c2.split
cp "$a2" "$TMPD/c2.plain"
check "rm (preloaded) removes a split file" sum rm "$TMPD/c1.split"
is_absent "it is gone" "$TMPD/c1.split"
check "mv (preloaded) moves a split file over a plain file" sum mv "$TMPD/c2.split" "$TMPD/c2.plain"
reads_as "the plain file's name holds the split file's bytes" "$TMPD/c2.plain" "$a"
is_absent "the old name is gone" "$TMPD/c2.split"
no_leftovers "rm and mv left nothing behind" "$TMPD"
finish
