#!/bin/bash
# mount.sh - gfsplit-mount over a POSIX directory: split files of every
# layout the suite makes (contiguous, cyclic, views with holes, runs that
# overlap written through the MPI-IO library, parallel HDF5 through it)
# and ordinary files.  Each view is compared byte for byte with what
# gfsplit-merge makes of it (and, for the MPI-IO ones, with what plain
# MPICH writes); random reads of random sizes; SEEK_HOLE/SEEK_DATA against
# the holes the layout has; cp, md5sum, stat, getfattr and h5dump of the
# views; a split file committed again while open; corrupt split files
# (EIO, a log line naming the file and the cause, the daemon serving on);
# read-only by default: every change fails with EROFS, the source as it
# was; writes with -o rw; a second mount on a point in use refused;
# unmount with files open and on SIGTERM.
. "$(dirname "$0")/../lib.sh"
need_fuse
. "$TOP/tests/mpiio_lib.sh"

S=$TMPD/src M=$TMPD/mnt R=$TMPD/ref
mkdir -p "$S/sub/deeper" "$R"
LOG=$TMPD/mount.log

# ---- the split files, and what each must read as
make_file "$TMPD/a" 9000001 3
check "contiguous: pcp-split, 4 ranks" mpirun_n 4 "$BIN/pcp-split" "$TMPD/a" "$S/contig.split"
check "cyclic: pcp-split -b 64k, 3 ranks" mpirun_n 3 "$BIN/pcp-split" -b 64k "$TMPD/a" "$S/sub/cyclic.split"
HS=$((3 * 1024 * 1024 + 4321))
check "views with holes and a trailing hole (2 ranks)" \
	mpirun_n 2 "$UNIT/mpi_fmt_tool" holes "$S/holes.split" "$HS"
PROG=$UNIT/mpi_iopat
check "runs that overlap, through the MPI-IO library" \
	pre 2 "$S/*.split" overlap write "$S/overlap.split"
check "  the same, plain MPICH" plain 2 overlap write "$R/overlap.plain"
check "HPIO pattern through the MPI-IO library (4 ranks)" \
	pre 4 "$S/*.split" hpio write "$S/hpio.split"
check "  the same, plain MPICH" plain 4 hpio write "$R/hpio.plain"
H5=no
if [ -x "$UNIT/h5_rw" ]; then
	H5=yes PROG=$UNIT/h5_rw
	check "parallel HDF5 through the MPI-IO library (4 ranks)" \
		pre 4 "$S/*.split" write "$S/h5.split"
	check "  the same, plain MPICH" plain 4 write "$R/h5.plain"
fi
make_file "$S/plain.bin" 300000 5
echo "an ordinary file" >"$S/sub/deeper/note.txt"
ln -s plain.bin "$S/link"
SPLITS="contig.split sub/cyclic.split holes.split overlap.split hpio.split"
[ $H5 = yes ] && SPLITS="$SPLITS h5.split"
for f in $SPLITS; do
	mpirun_n 2 "$BIN/gfsplit-merge" "$S/$f" "$R/$(basename "$f").merged" >/dev/null 2>&1 ||
		not_ok "merge $f for the reference"
done

# ---- up (-o rw: the writes below go through)
if mount_up "$S" "$M" -o rw; then ok "gfsplit-mount -o rw returns once the mount is there"
else not_ok "gfsplit-mount -o rw returns once the mount is there" "$(cat "$TMPD/.mount.out" "$LOG" 2>&1)"; finish; exit 1; fi

# every view is the merged file, and cp and md5sum read it as a file
for f in $SPLITS; do
	b=$(basename "$f")
	if [ -f "$M/$f" ] && [ ! -d "$M/$f" ]; then ok "$f is a regular file in the mount"
	else not_ok "$f is a regular file in the mount" "$(ls -ld "$M/$f" 2>&1)"; fi
	same_bytes "cmp $f with gfsplit-merge's output" "$R/$b.merged" "$M/$f"
	[ "$(stat -c %s "$M/$f")" = "$(stat -c %s "$R/$b.merged")" ] && ok "  stat: its logical size" ||
		not_ok "  stat: its logical size" "$(stat -c %s "$M/$f") vs $(stat -c %s "$R/$b.merged")"
done
same_bytes "contig.split is the file pcp-split read" "$TMPD/a" "$M/contig.split"
same_bytes "overlap.split reads as plain MPICH wrote it" "$R/overlap.plain" "$M/overlap.split"
same_bytes "hpio.split reads as plain MPICH wrote it" "$R/hpio.plain" "$M/hpio.split"
if [ $H5 = yes ]; then
	same_bytes "h5.split reads as plain MPICH wrote it" "$R/h5.plain" "$M/h5.split"
	if command -v h5dump >/dev/null; then
		h5dump "$R/h5.plain" 2>&1 | sed 1d >"$TMPD/h5.want"
		h5dump "$M/h5.split" 2>&1 | sed 1d >"$TMPD/h5.got"
		same_bytes "serial h5dump of the view prints what it does of the plain file" "$TMPD/h5.want" "$TMPD/h5.got"
	else
		skip "h5dump of the view" "no h5dump (apt-get install hdf5-tools)"
	fi
else
	skip "parallel HDF5 views" "no $UNIT/h5_rw (configure found no libhdf5-mpich-dev)"
fi
cp "$M/sub/cyclic.split" "$TMPD/cp.out" && same_bytes "cp of a view" "$TMPD/a" "$TMPD/cp.out"
[ "$(md5sum <"$M/contig.split")" = "$(md5sum <"$TMPD/a")" ] && ok "md5sum of a view" ||
	not_ok "md5sum of a view"
dd if="$M/contig.split" of="$TMPD/dd.out" bs=1M status=none && same_bytes "dd bs=1M of a view" "$TMPD/a" "$TMPD/dd.out"

# ordinary things pass through
same_bytes "an ordinary file reads as it is" "$S/plain.bin" "$M/plain.bin"
same_bytes "a nested ordinary file" "$S/sub/deeper/note.txt" "$M/sub/deeper/note.txt"
[ "$(readlink "$M/link")" = plain.bin ] && ok "a symbolic link is shown as one" ||
	not_ok "a symbolic link is shown as one" "$(ls -l "$M/link" 2>&1)"
[ -d "$M/sub/deeper" ] && ok "directories pass through" || not_ok "directories pass through"
got=$(cd "$M" && ls -A | tr '\n' ' ')
want=$(cd "$S" && ls -A | tr '\n' ' ')
[ "$got" = "$want" ] && ok "readdir lists what the source has" || not_ok "readdir lists what the source has" "got: $got" "want: $want"
m=$(stat -c '%a %u %g' "$S/contig.split"); v=$(stat -c '%a %u %g' "$M/contig.split")
want_mode=$(printf '%o' $((0$(stat -c %a "$S/contig.split") & 0666)))
[ "$v" = "$want_mode ${m#* }" ] && ok "a view's mode is its directory's less x, its owner and group" ||
	not_ok "a view's mode is its directory's less x, its owner and group" "dir: $m" "view: $v"
ct=$(json_get <("$BIN/stat-layout" --json "$S/contig.split") \
	'__import__("calendar").timegm(__import__("time").strptime(j["ctime"], "%Y-%m-%dT%H:%M:%SZ"))')
[ "$(stat -c %Y "$M/contig.split")" = "$ct" ] && ok "a view's mtime is its commit time" ||
	not_ok "a view's mtime is its commit time" "$(stat -c %Y "$M/contig.split") vs $ct"

# ls -l asks every file for system.posix_acl_access and security.selinux:
# the answer is "no such attribute", and ls prints nothing else
ls -l "$M" "$M/sub" >/dev/null 2>"$TMPD/ls.err"
[ ! -s "$TMPD/ls.err" ] && ok "ls -l of the mount root and a subdirectory: nothing on stderr" ||
	not_ok "ls -l of the mount root and a subdirectory: nothing on stderr" "$(head -n 5 "$TMPD/ls.err")"
for f in "" /plain.bin /contig.split; do
	getfattr -n system.posix_acl_access "$M$f" >"$TMPD/acl.out" 2>&1
	grep -q "system.posix_acl_access: No such attribute" "$TMPD/acl.out" &&
		ok "getfattr -n system.posix_acl_access of ${f:-the mount root}: No such attribute" ||
		not_ok "getfattr -n system.posix_acl_access of ${f:-the mount root}: No such attribute" "$(cat "$TMPD/acl.out")"
done

# ---- a second mount on the same point: refused, the first serves on
expect_exit "a second gfsplit-mount on a mount point in use: exit 1" 1 \
	"$BIN/gfsplit-mount" --log "$TMPD/mount.log" "$S/sub" "$M"
output_has "  naming the point and the mount already there" \
	"cannot mount on '$M': it is a mount point already \(fuse\.gfsplit of '$S'\)"
[ "$(awk -v m="$M" '$2 == m' /proc/mounts | wc -l)" = 1 ] && ok "  nothing stacked: one mount on the point" ||
	not_ok "  nothing stacked: one mount on the point" "$(grep " $M " /proc/mounts)"
same_bytes "  and the first mount serves on" "$TMPD/a" "$M/contig.split"
expect_exit "  the same point written with a trailing slash: exit 1" 1 \
	"$BIN/gfsplit-mount" --log "$TMPD/mount.log" "$S" "$M/"
output_has "  refused likewise" "it is a mount point already"
ln -s "$M" "$TMPD/mlink"
expect_exit "  the same point through a symbolic link: exit 1" 1 \
	"$BIN/gfsplit-mount" --log "$TMPD/mount.log" "$S" "$TMPD/mlink"
output_has "  refused likewise" "it is a mount point already"
# two at once on a free point: exactly one mounts (the check and the
# mount are one step under a lock of the point)
mkdir -p "$TMPD/twice"
at_exit "mount_down '$TMPD/twice'"
"$BIN/gfsplit-mount" --log "$TMPD/mount.log" "$S" "$TMPD/twice" >"$TMPD/t1.out" 2>&1 & t1=$!
"$BIN/gfsplit-mount" --log "$TMPD/mount.log" "$S" "$TMPD/twice" >"$TMPD/t2.out" 2>&1 & t2=$!
wait "$t1"; r1=$?; wait "$t2"; r2=$?
n=$(awk -v m="$TMPD/twice" '$2 == m' /proc/mounts | wc -l)
if [ "$n" = 1 ] && [ $((r1 + r2)) = 1 ] && grep -q "mount point already" "$TMPD/t1.out" "$TMPD/t2.out"; then
	ok "two gfsplit-mounts at once on one point: one mounts, the other is refused"
else not_ok "two gfsplit-mounts at once on one point: one mounts, the other is refused" \
	"exits $r1 $r2, $n mounts" "$(cat "$TMPD/t1.out" "$TMPD/t2.out")"; fi
mount_down "$TMPD/twice" || not_ok "unmount $TMPD/twice"

# ---- random reads of random sizes, several readers at once
python3 - "$M" "$R" "$SPLITS" <<'PY' >"$TMPD/rand.out" 2>&1
import os, random, sys, threading
mnt, ref, names = sys.argv[1], sys.argv[2], sys.argv[3].split()
bad = []
def worker(seed):
    r = random.Random(seed)
    for name in names:
        want = open(os.path.join(ref, os.path.basename(name) + ".merged"), "rb").read()
        fd = os.open(os.path.join(mnt, name), os.O_RDONLY)
        for _ in range(150):
            off = r.randrange(0, len(want) + 4096)
            n = r.choice([1, 7, 4096, 65537, r.randrange(1, 3 << 20)])
            got = os.pread(fd, n, off)
            if got != want[off:off + n]:
                bad.append("%s: %d bytes at %d" % (name, n, off))
        os.close(fd)
ts = [threading.Thread(target=worker, args=(s,)) for s in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
print("\n".join(bad[:5]) if bad else "ok")
PY
[ "$(cat "$TMPD/rand.out")" = ok ] && ok "3600 random reads (4 threads) match the merged files" ||
	not_ok "3600 random reads (4 threads) match the merged files" "$(head -n 5 "$TMPD/rand.out")"

# mmap, as some readers of HDF5 and image files do
python3 - "$M/sub/cyclic.split" "$TMPD/a" <<'PY' >"$TMPD/mmap.out" 2>&1
import mmap, sys
with open(sys.argv[1], "rb") as f, open(sys.argv[2], "rb") as g:
    m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    want = g.read()
    print("ok" if len(m) == len(want) and m[:] == want and
          m[123457:654321] == want[123457:654321] else "differ")
PY
[ "$(cat "$TMPD/mmap.out")" = ok ] && ok "mmap of a view reads the file" ||
	not_ok "mmap of a view reads the file" "$(cat "$TMPD/mmap.out")"

# ---- SEEK_DATA / SEEK_HOLE: the holes layout, 2 ranks: data where
# (g mod 256K) < 64K or in [128K, 192K), below 2 MiB; holes elsewhere
python3 - "$M/holes.split" "$HS" <<'PY' >"$TMPD/seek.out" 2>&1
import errno, os, sys
path, size = sys.argv[1], int(sys.argv[2])
K = 1024
def is_data(g):
    return g < (2 << 20) and (g % (256 * K)) // (64 * K) in (0, 2)
def want(off, data):
    g = off
    while g < size:
        if is_data(g) == data:
            return g
        g = (g // (64 * K) + 1) * (64 * K)
    return None if data else size
fd = os.open(path, os.O_RDONLY)
bad = []
for off in [0, 1, 64 * K - 1, 64 * K, 100 * K, 128 * K, 200 * K, 2 << 20,
            (2 << 20) - 1, size - 1, size, size + 10] + list(range(3, size, 77777)):
    for data, how in ((True, os.SEEK_DATA), (False, os.SEEK_HOLE)):
        try:
            got = os.lseek(fd, off, how)
        except OSError as e:
            got = None if e.errno == errno.ENXIO else "errno %d" % e.errno
        w = want(off, data) if off < size else None
        if got != w:
            bad.append("%s at %d: got %s, want %s" % ("DATA" if data else "HOLE", off, got, w))
print("\n".join(bad[:6]) if bad else "ok")
PY
[ "$(cat "$TMPD/seek.out")" = ok ] && ok "SEEK_DATA and SEEK_HOLE report the layout's holes" ||
	not_ok "SEEK_DATA and SEEK_HOLE report the layout's holes" "$(head -n 6 "$TMPD/seek.out")"
python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
print(os.lseek(fd, 0, os.SEEK_HOLE), os.lseek(fd, 5, os.SEEK_DATA))' "$M/contig.split" >"$TMPD/seek2.out" 2>&1
[ "$(cat "$TMPD/seek2.out")" = "9000001 5" ] && ok "a split file with no hole: SEEK_HOLE is its end" ||
	not_ok "a split file with no hole: SEEK_HOLE is its end" "$(cat "$TMPD/seek2.out")"

# ---- extended attributes
getfattr -d --absolute-names "$M/contig.split" >"$TMPD/xa.out" 2>&1
for a in parts source; do
	grep -q "^user.gfsplit.$a=" "$TMPD/xa.out" && ok "getfattr -d shows user.gfsplit.$a" ||
		not_ok "getfattr -d shows user.gfsplit.$a" "$(head -c 600 "$TMPD/xa.out")"
done
# the big ones (they grow with the parts) only by name
for a in layout checksums; do
	! grep -q "^user.gfsplit.$a=" "$TMPD/xa.out" && ok "getfattr -d leaves out user.gfsplit.$a (read by name)" ||
		not_ok "getfattr -d leaves out user.gfsplit.$a" "$(head -c 600 "$TMPD/xa.out")"
done
[ "$(wc -c <"$TMPD/xa.out")" -lt 1024 ] && ok "getfattr -d prints $(wc -c <"$TMPD/xa.out") bytes" ||
	not_ok "getfattr -d prints little" "$(wc -c <"$TMPD/xa.out") bytes"
[ "$(getfattr --absolute-names --only-values -n user.gfsplit.parts "$M/contig.split" 2>&1)" = 4 ] &&
	ok "user.gfsplit.parts is the number of parts" || not_ok "user.gfsplit.parts is the number of parts"
getfattr --absolute-names --only-values -n user.gfsplit.layout "$M/sub/cyclic.split" >"$TMPD/xl.json" 2>&1
"$BIN/stat-layout" --json "$S/sub/cyclic.split" >"$TMPD/sl.json"
python3 - "$TMPD/xl.json" "$TMPD/sl.json" <<'PY' >"$TMPD/xl.out" 2>&1
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
# stat-layout --json: the same object inside the members every document has
common = ("command", "version", "src", "dest", "ranks", "seconds", "bytes", "bytes_per_sec")
b = {k: v for k, v in b.items() if k not in common}
print("ok" if a == b else "differ: %s" % sorted(k for k in a if a.get(k) != b.get(k)))
PY
[ "$(cat "$TMPD/xl.out")" = ok ] && ok "user.gfsplit.layout is stat-layout --json" ||
	not_ok "user.gfsplit.layout is stat-layout --json" "$(cat "$TMPD/xl.out")"
sums=$(json_get "$TMPD/sl.json" '"".join("part.%d %d %s\n" % (r["rank"], r["part_size"], r["part_hash"]) for r in j["parts"])')
[ "$(getfattr --absolute-names --only-values -n user.gfsplit.checksums "$M/sub/cyclic.split")" = "$sums" ] &&
	ok "user.gfsplit.checksums: each part's size and checksum" ||
	not_ok "user.gfsplit.checksums: each part's size and checksum"

# ---- a split file committed again while it is open
make_file "$TMPD/b" 7000003 8
python3 - "$M/contig.split" "$TMPD/a" "$TMPD/b" "$BIN/pcp-split" "$S/contig.split" <<'PY' >"$TMPD/re.out" 2>&1
import os, subprocess, sys
view, old, new, pcp, src = sys.argv[1:]
old_b, new_b = open(old, "rb").read(), open(new, "rb").read()
fd = os.open(view, os.O_RDONLY)
head = os.pread(fd, 1 << 20, 0)
subprocess.run(["mpiexec", "-n", "3", pcp, "--force", new, src], check=True,
               stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, timeout=120)
try:
    rest = b""
    while True:
        b = os.pread(fd, 1 << 20, len(head) + len(rest))
        if not b: break
        rest += b
    whole = head + rest
    print("old" if whole == old_b else "MIX" if whole != new_b else "new-through-old-handle")
except OSError as e:
    print("ESTALE" if e.errno == 116 else "errno %d" % e.errno)
os.close(fd)
print("new" if open(view, "rb").read() == new_b else "not-new")
print(os.stat(view).st_size)
PY
re=$(tr '\n' ' ' <"$TMPD/re.out")
case $re in
"old new 7000003 "|"ESTALE new 7000003 ") ok "an open handle reads the version it opened (or ESTALE), never a mix: $re" ;;
*) not_ok "an open handle reads the version it opened (or ESTALE), never a mix" "$re" ;;
esac
same_bytes "the next open sees the new commit" "$TMPD/b" "$M/contig.split"

# ---- corrupt split files: EIO, a log line naming the file and the cause
cp -a "$S/contig.split" "$S/nopart.split" && rm "$S/nopart.split/part.1"
cp -a "$S/contig.split" "$S/short.split" && truncate -s -1 "$S/short.split/part.2"
cp -a "$S/contig.split" "$S/badloc.split" && printf 'XXXX' | dd of="$S/badloc.split/loc.0" bs=1 seek=20 conv=notrunc status=none
cp -a "$S/contig.split" "$S/badsum.split" && printf 'ZZZZ' | dd of="$S/badsum.split/part.0" bs=1 seek=5000 conv=notrunc status=none
mkdir "$S/badmark.split" && echo "not a marker" >"$S/badmark.split/gfsplit.meta"
ls -l "$M" >/dev/null 2>"$TMPD/ls.err"
[ ! -s "$TMPD/ls.err" ] && ok "ls -l of a directory of corrupt split files: nothing on stderr (no layout loaded for its ACL)" ||
	not_ok "ls -l of a directory of corrupt split files: nothing on stderr" "$(head -n 5 "$TMPD/ls.err")"
eio() {
	# eio DESC FILE REGEX: reading FILE fails with EIO; the log names it
	_o=$(python3 -c '
import os, sys
try:
    fd = os.open(sys.argv[1], os.O_RDONLY)
    while os.read(fd, 1 << 20): pass
    print("read it all")
except OSError as e:
    print(e.strerror)' "$2" 2>&1)
	if [ "$_o" = "Input/output error" ] && grep -Eq -- "$3" "$LOG"; then ok "$1"
	else not_ok "$1" "read: $_o" "log: $(tail -n 3 "$LOG")"; fi
}
eio "a missing part: EIO, logged" "$M/nopart.split" "nopart\.split/part\.1: missing part file"
eio "a short part: EIO, logged" "$M/short.split" "short\.split/part\.2: .*short or truncated part"
eio "a corrupt location file: EIO, logged" "$M/badloc.split" "badloc\.split/loc\.0"
eio "a marker that is none: EIO, logged" "$M/badmark.split" "badmark\.split.*gfsplit\.meta"
[ "$(stat -c '%F %s' "$M/badmark.split")" = "regular empty file 0" ] &&
	ok "  and it shows as an empty file" || not_ok "  and it shows as an empty file" "$(stat -c '%F %s' "$M/badmark.split")"
# a part of the right size with bytes changed: by default its checksum is
# checked as it is read through; a read of its first bytes only is served
head -c 4096 "$M/badsum.split" >"$TMPD/head.out" 2>"$TMPD/head.err" &&
	[ "$(wc -c <"$TMPD/head.out")" = 4096 ] && ok "a corrupt part: a read of its first 4 KiB is served (not checked: the part is not read through)" ||
	not_ok "a corrupt part: a read of its first 4 KiB is served" "$(cat "$TMPD/head.err")"
eio "a corrupt part read through (cat): EIO, the log names the part and the checksum" \
	"$M/badsum.split" "badsum\.split/part\.0: checksum mismatch .*as the part was read through"
o=$(md5sum "$M/badsum.split" 2>&1) && not_ok "md5sum of it fails, not a wrong sum" "$o" ||
	{ case $o in *"Input/output error"*) ok "md5sum of it fails with EIO, not a wrong sum" ;;
	  *) not_ok "md5sum of it fails with EIO, not a wrong sum" "$o" ;; esac; }
# read backwards, 256 KiB at a time, by 4 threads (a copy never read, so
# nothing of it is in the page cache): the check reads the gap before a
# read itself, so the order does not hide the corruption
cp -a "$S/contig.split" "$S/badrev.split"
printf 'ZZZZ' | dd of="$S/badrev.split/part.1" bs=1 seek=300000 conv=notrunc status=none
o=$(python3 - "$M/badrev.split" <<'PY' 2>&1
import os, sys, threading
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
offs = list(range(0, size, 256 << 10))[::-1]
errs = []
def full(off, n):	# as a read loop does: a short read is read on
    got = 0
    while got < n:
        b = os.pread(fd, n - got, off + got)
        if not b: break
        got += len(b)
def work(k):
    for off in offs[k::4]:
        try:
            full(off, 256 << 10)
        except OSError as e:
            errs.append(e.strerror)
ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
print(errs[0] if errs else "no error")
PY
)
[ "$o" = "Input/output error" ] && grep -q "badrev\.split/part\.1: checksum mismatch" "$LOG" &&
	ok "  another read backwards by 4 threads: EIO too, the log names its part" ||
	not_ok "  another read backwards by 4 threads: EIO too, the log names its part" "$o" "$(tail -n 2 "$LOG")"
python3 - "$M/sub/cyclic.split" "$TMPD/a" <<'PY' >"$TMPD/rev.out" 2>&1
import os, sys, threading
fd = os.open(sys.argv[1], os.O_RDONLY)
want = open(sys.argv[2], "rb").read()
offs = list(range(0, len(want), 300000))[::-1]
bad = []
def work(k):
    for off in offs[k::3]:
        if os.pread(fd, 300000, off) != want[off:off + 300000]:
            bad.append(off)
ts = [threading.Thread(target=work, args=(k,)) for k in range(3)]
[t.start() for t in ts]; [t.join() for t in ts]
print("bad at %s" % bad[:3] if bad else "ok")
PY
[ "$(cat "$TMPD/rev.out")" = ok ] && ok "  a good split file read backwards by 3 threads: every byte, no false alarm" ||
	not_ok "  a good split file read backwards by 3 threads: every byte, no false alarm" "$(cat "$TMPD/rev.out")"
same_bytes "the daemon serves the good files on" "$TMPD/b" "$M/contig.split"
# a part cut short while a reader holds it: the read ends in EIO, never
# in what looks like a shorter file
cp -a "$S/contig.split" "$S/cut.split"
o=$(python3 - "$M/cut.split" "$S/cut.split/part.1" <<'PY' 2>&1
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.pread(fd, 4096, 0)
os.truncate(sys.argv[2], 1000)
n = 0
try:
    while True:
        b = os.read(fd, 1 << 20)
        if not b: break
        n += len(b)
    print("EOF after %d bytes" % n)
except OSError as e:
    print(e.strerror)
PY
)
if [ "$o" = "Input/output error" ] && grep -q "cut\.split/part\.1: short read" "$LOG"; then
	ok "a part cut short under an open reader: EIO, logged"
else not_ok "a part cut short under an open reader: EIO, logged" "$o" "$(tail -n 2 "$LOG")"; fi

# -o verify: the part's checksum before its first byte is used; without
# -o rw the mount is read-only
M2=$TMPD/mnt2
if mount_up "$S" "$M2" -o verify; then ok "mount -o verify"
else not_ok "mount -o verify" "$(cat "$TMPD/.mount.out")"; fi
eio "-o verify: a part failing its checksum: EIO, logged" "$M2/badsum.split" "badsum\.split/part\.0: checksum mismatch"
same_bytes "-o verify: a good file reads" "$TMPD/b" "$M2/contig.split"
# -o noverify: the parts' bytes as they are, unchecked
M4=$TMPD/mnt4
if mount_up "$S" "$M4" -o noverify; then
	cp "$TMPD/b" "$TMPD/b.bad"
	printf 'ZZZZ' | dd of="$TMPD/b.bad" bs=1 seek=5000 conv=notrunc status=none
	same_bytes "-o noverify: a corrupt part reads as the part holds it, no check" "$TMPD/b.bad" "$M4/badsum.split"
	eio "-o noverify: a short part is still EIO (its size is checked at open)" "$M4/short.split" "short\.split/part\.2: .*short or truncated part"
	mount_down "$M4" || not_ok "unmount $M4"
else not_ok "mount -o noverify" "$(cat "$TMPD/.mount.out")"; fi

# ---- read-only unless -o rw: every change fails with EROFS, in the
# kernel (the mount is flagged ro) and in the daemon; the source is as it was
awk -v m="$M2" '$2 == m { split($4, o, ","); print o[1] }' /proc/mounts >"$TMPD/ro.flag"
[ "$(cat "$TMPD/ro.flag")" = ro ] && ok "without -o rw the kernel has the mount read-only (ro in /proc/mounts)" ||
	not_ok "without -o rw the kernel has the mount read-only (ro in /proc/mounts)" "$(grep " $M2 " /proc/mounts)"
tree_sum() { (cd "$1" && find . -printf '%p %y %m %s\n' | sort && find . -type f -exec md5sum {} + | sort); }
tree_sum "$S" >"$TMPD/src.before"
python3 - "$M2" <<'PY' >"$TMPD/ro.out" 2>&1
import errno, os, sys
m = sys.argv[1]
p = lambda *a: os.path.join(m, *a)
tries = [
    ("open O_WRONLY of an ordinary file", lambda: os.open(p("plain.bin"), os.O_WRONLY)),
    ("open O_RDWR", lambda: os.open(p("plain.bin"), os.O_RDWR)),
    ("open O_TRUNC", lambda: os.open(p("sub/deeper/note.txt"), os.O_RDONLY | os.O_TRUNC)),
    ("append", lambda: os.open(p("plain.bin"), os.O_WRONLY | os.O_APPEND)),
    ("create", lambda: os.open(p("new.txt"), os.O_WRONLY | os.O_CREAT, 0o644)),
    ("create in a subdirectory", lambda: os.open(p("sub/new.txt"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)),
    ("truncate", lambda: os.truncate(p("plain.bin"), 10)),
    ("unlink", lambda: os.unlink(p("plain.bin"))),
    ("rename", lambda: os.rename(p("plain.bin"), p("renamed.bin"))),
    ("rename of a split file", lambda: os.rename(p("holes.split"), p("h2.split"))),
    ("mkdir", lambda: os.mkdir(p("newdir"))),
    ("rmdir", lambda: os.rmdir(p("sub/deeper"))),
    ("symlink", lambda: os.symlink("plain.bin", p("l2"))),
    ("link", lambda: os.link(p("plain.bin"), p("hard.bin"))),
    ("chmod", lambda: os.chmod(p("plain.bin"), 0o600)),
    ("utime", lambda: os.utime(p("plain.bin"), (1, 1))),
    ("setxattr", lambda: os.setxattr(p("plain.bin"), "user.x", b"1")),
    ("open O_WRONLY of a split file", lambda: os.open(p("holes.split"), os.O_WRONLY)),
]
for what, f in tries:
    try:
        f()
        print("%s: done" % what)
    except OSError as e:
        if e.errno != errno.EROFS:
            print("%s: %s" % (what, e.strerror))
print("end")
PY
[ "$(cat "$TMPD/ro.out")" = end ] &&
	ok "read-only by default: 18 kinds of change (open for writing, create, truncate, unlink, rename, mkdir, rmdir, links, chmod, utime, setxattr) all fail with EROFS" ||
	not_ok "read-only by default: every kind of change fails with EROFS" "$(cat "$TMPD/ro.out")"
tree_sum "$S" >"$TMPD/src.after"
same_bytes "  and the source is as it was (names, types, modes, sizes, md5sum of every file)" "$TMPD/src.before" "$TMPD/src.after"
if sh -c 'echo x >>"$1"' sh "$M2/plain.bin" 2>"$TMPD/ro.err"; then not_ok "  echo >> an ordinary file: refused"
elif grep -q "Read-only file system" "$TMPD/ro.err"; then ok "  echo >> an ordinary file: Read-only file system"
else not_ok "  echo >> an ordinary file: Read-only file system" "$(cat "$TMPD/ro.err")"; fi
mount_down "$M2" && ok "fusermount3 -u ends the daemon" || not_ok "fusermount3 -u ends the daemon"

# ---- other users: kept out without allow_other; with it, the permission
# bits shown decide (default_permissions), and nothing is written
if can_run_as_nobody; then
	chmod 0711 "$TMPD"
	mkdir -p "$TMPD/o/src" && chmod -R 0755 "$TMPD/o"
	cp -a "$S/holes.split" "$TMPD/o/src/open.split" && chmod 0755 "$TMPD/o/src/open.split"
	cp -a "$S/holes.split" "$TMPD/o/src/closed.split" && chmod 0700 "$TMPD/o/src/closed.split"
	if mount_up "$TMPD/o/src" "$TMPD/o/m1"; then
		as_nobody cat "$TMPD/o/m1/open.split" >/dev/null 2>&1 &&
			not_ok "without allow_other, another user is kept out" ||
			ok "without allow_other, another user is kept out"
		mount_down "$TMPD/o/m1"
	else not_ok "mount for the other-user checks" "$(cat "$TMPD/.mount.out")"; fi
	if mount_up "$TMPD/o/src" "$TMPD/o/m2" -o allow_other; then
		as_nobody cat "$TMPD/o/m2/open.split" >"$TMPD/o.out" 2>&1 &&
			cmp -s "$TMPD/o.out" "$R/holes.split.merged" &&
			ok "allow_other: another user reads a split file its bits let in" ||
			not_ok "allow_other: another user reads a split file its bits let in" "$(head -c 300 "$TMPD/o.out")"
		[ "$(stat -c %a "$TMPD/o/m2/closed.split")" = 600 ] && ok "  a 0700 split directory shows as 0600" ||
			not_ok "  a 0700 split directory shows as 0600" "$(stat -c %a "$TMPD/o/m2/closed.split")"
		as_nobody cat "$TMPD/o/m2/closed.split" >/dev/null 2>&1 &&
			not_ok "  and another user may not read it" || ok "  and another user may not read it"
		if sh -c 'echo x >"$1"' sh "$TMPD/o/m2/new.txt" 2>/dev/null; then not_ok "  allow_other mounts read-only"
		else ok "  allow_other mounts read-only"; fi
		mount_down "$TMPD/o/m2"
	else not_ok "mount -o allow_other" "$(cat "$TMPD/.mount.out")"; fi
else
	skip "other users through the mount" "no unprivileged user to run as (not root, or no setpriv)"
fi

# ---- with allow_other no one reads through the mount what she could not
# read directly: a split file shows the strictest permissions
# and owners of its directory and files, every open is checked against
# each of its files for the caller, and no set-id bit is shown
if second_user gfspmnt; then
	U=$M M=$TMPD/mnt		# second_user names her M, as attack.sh does
	as_u() { setpriv --reuid="$U" --regid="$U" --clear-groups "$@"; }
	P=$TMPD/perm
	chmod 0711 "$TMPD"
	mkdir -p "$P/src" "$P/sync" && chmod 0755 "$P" "$P/src" && chmod 0777 "$P/sync"
	make_file "$P/in" 300001 7
	for f in secret hers open; do
		check "a split file for the permission checks: $f (2 ranks)" \
			mpirun_n 2 "$BIN/pcp-split" "$P/in" "$P/src/$f.split"
	done
	# root's, parts 0600 in a 0755 directory
	chmod 0755 "$P/src/secret.split" && chmod 0600 "$P/src/secret.split"/part.*
	# hers, but for one part of root's, 0600
	chown -R "$U:$U" "$P/src/hers.split"
	chown root:root "$P/src/hers.split/part.1" && chmod 0600 "$P/src/hers.split/part.1"
	# set-user-ID root in the source: the marker (-p) says 04755 and uid 0,
	# but the split file is hers (as one she wrote such a marker into)
	cp "$P/in" "$P/suid.in" && chmod 04755 "$P/suid.in"
	check "pcp-split -p of a set-user-ID root file" mpirun_n 2 "$BIN/pcp-split" -p "$P/suid.in" "$P/src/suid.split"
	chown -R "$U:$U" "$P/src/suid.split"
	check "  its marker records 04755, owner 0" sh -c '"$1" --json "$2" | grep -q "\"mode\": *\"\\?0\\?4755" &&
		"$1" --json "$2" | grep -q "\"uid\": *0\b"' sh "$BIN/stat-layout" "$P/src/suid.split"
	as_u cat "$P/src/secret.split/part.0" >/dev/null 2>&1 &&
		not_ok "baseline: $U cannot read a 0600 part of root's directly" ||
		ok "baseline: $U cannot read a 0600 part of root's directly"
	as_u cat "$P/src/hers.split/part.1" >/dev/null 2>&1 &&
		not_ok "  nor the part of root's in her own split file" ||
		ok "  nor the part of root's in her own split file"
	if mount_up "$P/src" "$P/m" -o allow_other -v; then
		if as_u cat "$P/m/secret.split" >"$P/u.out" 2>"$P/u.err"; then
			not_ok "allow_other: $U cannot read root's split file of 0600 parts through the mount" "read $(wc -c <"$P/u.out") bytes"
		elif grep -q "Permission denied" "$P/u.err"; then
			ok "allow_other: $U cannot read root's split file of 0600 parts through the mount"
		else not_ok "allow_other: $U cannot read root's split file of 0600 parts through the mount" "$(cat "$P/u.err")"; fi
		same_bytes "  root reads it, byte for byte" "$P/in" "$P/m/secret.split"
		[ "$(stat -c '%a %U' "$P/m/secret.split")" = "600 root" ] && ok "  it shows 0600 root, its parts' bits" ||
			not_ok "  it shows 0600 root, its parts' bits" "$(stat -c '%a %U' "$P/m/secret.split")"
		as_u cat "$P/m/hers.split" >/dev/null 2>&1 &&
			not_ok "  nor her split file with a part of root's (0600)" ||
			ok "  nor her split file with a part of root's (0600)"
		[ "$(stat -c '%a %U' "$P/m/hers.split")" = "0 $U" ] && ok "  which shows no permission bit, owner $U" ||
			not_ok "  which shows no permission bit, owner $U" "$(stat -c '%a %U' "$P/m/hers.split")"
		same_bytes "  root reads that one too" "$P/in" "$P/m/hers.split"
		# The kernel keeps a split file's attributes for an hour; an open
		# of an open file's /proc/self/fd link looks nothing up, so the
		# kernel lets her in by the bits it holds (0644) and only the
		# daemon's own check of every part for her can keep her out.
		as_u sh -c 'exec 3<"$1" || exit 3
			: >"$2/ready"
			for _ in $(seq 200); do [ -e "$2/go" ] && break; sleep 0.05; done
			cat /proc/self/fd/3' sh "$P/m/open.split" "$P/sync" >"$P/o.out" 2>"$P/o.err" &
		opid=$!
		for _ in $(seq 200); do [ -e "$P/sync/ready" ] && break; sleep 0.05; done
		chmod 0600 "$P/src/open.split/part.0"
		: >"$P/sync/go"
		if wait "$opid"; then
			not_ok "an open checks every part for the caller: one made 0600 since she looked the file up keeps her out" "read $(wc -c <"$P/o.out") bytes"
		elif grep -q "Permission denied" "$P/o.err" && grep -q "open.split/part.0" "$LOG"; then
			ok "an open checks every part for the caller: one made 0600 since she looked the file up keeps her out"
		else not_ok "an open checks every part for the caller: one made 0600 since she looked the file up keeps her out" \
			"$(cat "$P/o.err")" "$(tail -n 3 "$LOG")"; fi
		mode=$(stat -c %a "$P/m/suid.split")
		[ $((0$mode & 07000)) -eq 0 ] && ok "a marker claiming 04755 owner 0 on her split file: no set-id bit shown ($mode)" ||
			not_ok "a marker claiming 04755 owner 0 on her split file: no set-id bit shown" "$mode"
		rm -f "$P/suid.copy"
		cp -p "$P/m/suid.split" "$P/suid.copy"
		mode=$(stat -c '%a %U' "$P/suid.copy")
		[ $((0${mode% *} & 07000)) -eq 0 ] && cmp -s "$P/in" "$P/suid.copy" &&
			ok "  cp -p by root from the mount makes no set-id copy ($mode)" ||
			not_ok "  cp -p by root from the mount makes no set-id copy" "$mode"
		mount_down "$P/m"
	else not_ok "mount -o allow_other for the permission checks" "$(cat "$TMPD/.mount.out")"; fi
else
	M=$TMPD/mnt
	skip "permissions through an allow_other mount" "$SECOND_USER_WHY"
fi

# ---- writes
if echo "written through" >"$M/sub/new.txt" && [ "$(cat "$S/sub/new.txt")" = "written through" ]; then
	ok "an ordinary file is written through to the source"
else not_ok "an ordinary file is written through to the source" "$(ls -l "$S/sub" 2>&1)"; fi
if sh -c 'echo more >>"$1"' sh "$M/contig.split" 2>"$TMPD/w.err"; then not_ok "writing a split file is refused"
elif grep -q "Read-only file system" "$TMPD/w.err" && grep -q "contig\.split': a split file is read-only" "$LOG"; then
	ok "writing a split file: EROFS, logged"
else not_ok "writing a split file: EROFS, logged" "$(cat "$TMPD/w.err")" "$(tail -n 2 "$LOG")"; fi
same_bytes "  and it is as it was" "$TMPD/b" "$M/contig.split"
mv "$M/sub/cyclic.split" "$M/sub/moved.split" && same_bytes "a split file renamed through the mount" "$TMPD/a" "$M/sub/moved.split"
[ -f "$S/sub/moved.split/gfsplit.meta" ] && ok "  its directory moved whole in the source" || not_ok "  its directory moved whole in the source"
rm "$M/sub/new.txt" && is_absent "an ordinary file removed through the mount" "$S/sub/new.txt"
if rm "$M/holes.split" 2>/dev/null; then not_ok "removing a split file through the mount is refused"
else ok "removing a split file through the mount is refused"; fi

# ---- bad invocations
expect_exit "a SOURCE that does not exist: exit 1" 1 "$BIN/gfsplit-mount" "$TMPD/none" "$TMPD/m3"
output_has "  naming it" "none"
mkdir -p "$TMPD/m3"
expect_exit "a SOURCE that is a split file: exit 1" 1 "$BIN/gfsplit-mount" "$S/holes.split" "$TMPD/m3"
output_has "  saying so" "a split file"
expect_exit "an unknown -o option: exit 2" 2 "$BIN/gfsplit-mount" -o bogus "$S" "$TMPD/m3"
output_has "  naming it" "unknown mount option 'bogus'"
expect_exit "-o rw,allow_other: exit 2" 2 "$BIN/gfsplit-mount" -o rw,allow_other "$S" "$TMPD/m3"
output_has "  saying an allow_other mount is read-only" "rw cannot go with allow_other"
expect_exit "a mount point that is not there: exit 1" 1 "$BIN/gfsplit-mount" "$S" "$TMPD/nomnt"
if [ "$(id -u)" -eq 0 ]; then
	: >"$TMPD/their.log" && chown nobody "$TMPD/their.log"
	expect_exit "a --log file of another user's: exit 1, nothing mounted" 1 \
		"$BIN/gfsplit-mount" --log "$TMPD/their.log" "$S" "$TMPD/m3"
	output_has "  saying so" "their\.log' is not a regular file of this user's"
	[ ! -s "$TMPD/their.log" ] && ok "  and nothing was written to it" || not_ok "  and nothing was written to it"
else
	skip "a --log file of another user's" "not root (cannot make one)"
fi
is_fuse "$TMPD/m3" && not_ok "no mount left by the failures" || ok "no mount left by the failures"

# ---- the daemon ends promptly once unmounted, even with a request stuck
# in the source (a file server that stops answering)
daemon_of() { pgrep -f "gfsplit-mount.* $1\$" | head -n 1; }
thread_in() {	# thread_in PID WCHAN: a thread of PID sleeps in WCHAN
	grep -qsx "$2" /proc/"$1"/task/*/wchan
}
wait_for() {	# wait_for SECONDS CMD...: poll CMD up to that bound
	_n=$(($1 * 10)); shift
	while [ "$_n" -gt 0 ] && ! "$@"; do sleep 0.1; _n=$((_n - 1)); done
	"$@"
}
alive() { kill -0 "$1" 2>/dev/null; }
all_stopped() {	# all_stopped PID: every thread of PID stopped (state T)
	awk '{ sub(/^.*\) /, ""); if ($1 != "T") bad = 1 } END { exit bad }' \
		/proc/"$1"/task/*/stat 2>/dev/null
}
gone_within() { wait_for "$1" eval "! alive $2"; }
# (LONG_WAITS=no: the daemon's 5 s of grace and the stopped server are
# waited out; make check runs them)
if long_wait "a release, then a lookup, stuck in the source"; then
	# the close of a file written through (-o rw) never returns
	# (GFSPLIT_FAULT=hangclose): it is the release the kernel sends after the
	# writer's close(2), which the writer does not wait for.  The daemon's 5 s
	# of grace pass while the next case runs: a poller in the background notes
	# whether it ended within 15 s of the unmount, and the checks come after
	# that case.
	HC=$TMPD/hc
	mkdir -p "$HC/src" "$HC/m"
	hc_up="" hc_poller=""
	if GFSPLIT_FAULT=hangclose:0:0 mount_up "$HC/src" "$HC/m" -o rw; then
		hc_up=1 hc_d=$(daemon_of "$HC/m")
		echo "written through" >"$HC/m/new.txt"
		if ! wait_for 10 thread_in "$hc_d" __do_sys_pause; then
			not_ok "a release stuck in the source (setup: the daemon's close never hung)" "$(cat /proc/"$hc_d"/task/*/wchan | tr '\0' ' ')"
		elif ! fusermount3 -u "$HC/m" 2>"$TMPD/hu.err"; then
			not_ok "fusermount3 -u with a release stuck in the source, nothing open" "$(cat "$TMPD/hu.err")"
		else
			( gone_within "$(scaled 15)" "$hc_d" && echo gone >"$TMPD/hc.gone" ) &
			hc_poller=$!
		fi
	else not_ok "mount -o rw with a close that hangs" "$(cat "$TMPD/.mount.out")"; fi
	# SIGTERM with a lookup stuck in the source: a directory of the source is
	# served by a second daemon, stopped (SIGSTOP) as a server that does not
	# answer; the mount goes (lazily) and the daemon ends
	HG=$TMPD/hang
	mkdir -p "$HG/inner" "$HG/src/stuck" "$HG/m"
	echo "behind a hung server" >"$HG/inner/f"
	if mount_up "$HG/inner" "$HG/src/stuck" && mount_up "$HG/src" "$HG/m"; then
		d1=$(daemon_of "$HG/m") d2=$(daemon_of "$HG/src/stuck")
		kill -STOP "$d2"
		at_exit "kill -CONT $d2"
		# every thread of it stopped before the request is made: one still
		# running could take it, and the daemon's wait for its answer could
		# not be called off (not even by the daemon's exit)
		wait_for 10 all_stopped "$d2" || not_ok "the second daemon stops (setup)"
		cat "$HG/m/stuck/f" >/dev/null 2>&1 & rd=$!
		if ! wait_for 10 thread_in "$d1" request_wait_answer; then
			not_ok "a lookup stuck in the source (setup: the daemon never waited on the stopped one)"
		else
			kill -TERM "$d1"
			if gone_within "$(scaled 15)" "$d1" && ! is_fuse "$HG/m"; then
				ok "SIGTERM with a lookup stuck in the source: unmounted, the daemon ends within 15 s"
			else not_ok "SIGTERM with a lookup stuck in the source: unmounted, the daemon ends within 15 s" \
				"$(grep " $HG/m " /proc/mounts)" "pid $d1: $(cat /proc/"$d1"/task/*/wchan 2>&1 | tr '\0' ' ')"; fi
			gone_within 10 "$rd" && ok "  and the reader it left gets an error, not a hang" ||
				not_ok "  and the reader it left gets an error, not a hang"
		fi
		kill -CONT "$d2"
		wait "$rd" 2>/dev/null
		mount_down "$HG/src/stuck" || not_ok "unmount the inner mount"
	else not_ok "mounts for the stuck-request checks" "$(cat "$TMPD/.mount.out")"; fi
	# the release stuck in the source, above: how its daemon ended
	if [ -n "$hc_poller" ]; then
		wait "$hc_poller"
		if [ -f "$TMPD/hc.gone" ]; then
			ok "fusermount3 -u with a release stuck in the source: the daemon ends within 15 s (it waited for the source forever)"
			grep -q "'$HC/m': the session ended, but a request to the source has not returned in 5 s" "$LOG" &&
				ok "  saying why in its log" || not_ok "  saying why in its log" "$(tail -n 3 "$LOG")"
		else
			not_ok "fusermount3 -u with a release stuck in the source: the daemon ends within 15 s" \
				"pid $hc_d alive: $(cat /proc/"$hc_d"/task/*/wchan | tr '\0' ' ')"
			kill -KILL "$hc_d"
		fi
	fi
	if [ -n "$hc_up" ]; then
		[ "$(cat "$HC/src/new.txt")" = "written through" ] && ok "  what was written before is in the source" ||
			not_ok "  what was written before is in the source"
	fi
fi

# ---- unmount with files open; SIGTERM
exec 7<"$M/contig.split"
fusermount3 -u "$M" 2>/dev/null && not_ok "fusermount3 -u with a file open is refused (busy)" ||
	ok "fusermount3 -u with a file open is refused (busy)"
pid=$(pgrep -f "gfsplit-mount.* $M\$" | head -n 1)
kill -TERM "$pid"
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if ! kill -0 "$pid" 2>/dev/null && ! is_fuse "$M"; then ok "SIGTERM with a file open: the daemon unmounts and ends"
else not_ok "SIGTERM with a file open: the daemon unmounts and ends" "$(grep fuse /proc/mounts)"; fi
if head -c 10 <&7 >/dev/null 2>&1; then not_ok "the open file then fails (not hangs)"
else ok "the open file then fails (not hangs)"; fi
exec 7<&-
[ -f "$S/contig.split/gfsplit.meta" ] && [ -f "$S/plain.bin" ] && ok "the source is untouched" ||
	not_ok "the source is untouched"
mount_log_clean
finish
