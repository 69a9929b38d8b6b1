#!/bin/bash
# mount_gfarm.sh - gfsplit-mount of a real Gfarm directory (gfmd + 2 gfsd):
# split files written to Gfarm by pcp-split (contiguous, cyclic) read as
# the files they came from; random reads; getfattr; a split file committed
# again while open; a missing part (EIO, logged, the rest served on);
# ordinary files read and written through (checked with gfexport and gfls,
# Gfarm's own tools); unmount.
. "$(dirname "$0")/../lib.sh"
need_fuse
need_gfarm
gfarm_up 2 || { finish; exit 1; }
read -r -a H <<<"$GFARM_TEST_HOSTS"
hosts=$(IFS=,; echo "${H[*]}")
gfmkdir /m /m/sub || not_ok "gfmkdir /m /m/sub"
M=$TMPD/mnt LOG=$TMPD/mount.log

make_file "$TMPD/a" 6000007 21
make_file "$TMPD/b" 4000037 22
check "pcp-split to gfarm:///m/a.split, 2 ranks, a part on each gfsd" \
	mpirun_n 2 "$BIN/pcp-split" --hosts "$hosts" "$TMPD/a" gfarm:///m/a.split
check "pcp-split -b 100k to gfarm:///m/sub/c.split, 3 ranks" \
	mpirun_n 3 "$BIN/pcp-split" -b 100k --hosts "$hosts" "$TMPD/b" gfarm:///m/sub/c.split
gfreg "$TMPD/b" /m/plain.bin || not_ok "gfreg /m/plain.bin"

if mount_up gfarm:///m "$M" -o rw; then ok "gfsplit-mount -o rw gfarm:///m"
else not_ok "gfsplit-mount -o rw gfarm:///m" "$(cat "$TMPD/.mount.out" "$LOG" 2>&1)"; finish; exit 1; fi

same_bytes "a.split on Gfarm reads as the file it came from" "$TMPD/a" "$M/a.split"
same_bytes "sub/c.split (cyclic) too" "$TMPD/b" "$M/sub/c.split"
same_bytes "an ordinary Gfarm file passes through" "$TMPD/b" "$M/plain.bin"
[ "$(stat -c '%F %s' "$M/a.split")" = "regular file 6000007" ] && ok "stat: a regular file of its logical size" ||
	not_ok "stat: a regular file of its logical size" "$(stat -c '%F %s' "$M/a.split")"
got=$(cd "$M" && ls -A | tr '\n' ' ')
[ "$got" = "a.split plain.bin sub " ] && ok "readdir of the Gfarm directory" || not_ok "readdir of the Gfarm directory" "got: $got"

python3 - "$M/sub/c.split" "$TMPD/b" <<'PY' >"$TMPD/rand.out" 2>&1
import os, random, sys
want = open(sys.argv[2], "rb").read()
fd = os.open(sys.argv[1], os.O_RDONLY)
r = random.Random(5)
bad = []
for _ in range(300):
    off = r.randrange(0, len(want) + 100)
    n = r.choice([1, 4096, 100 * 1024 + 3, r.randrange(1, 2 << 20)])
    if os.pread(fd, n, off) != want[off:off + n]:
        bad.append("%d at %d" % (n, off))
print("\n".join(bad[:5]) if bad else "ok")
PY
[ "$(cat "$TMPD/rand.out")" = ok ] && ok "300 random reads match" || not_ok "300 random reads match" "$(cat "$TMPD/rand.out")"

[ "$(getfattr --absolute-names --only-values -n user.gfsplit.parts "$M/sub/c.split" 2>&1)" = 3 ] &&
	ok "getfattr user.gfsplit.parts" || not_ok "getfattr user.gfsplit.parts"
getfattr --absolute-names --only-values -n user.gfsplit.layout "$M/a.split" >"$TMPD/l.json" 2>&1
json_true "user.gfsplit.layout shows each part on its writer's gfsd" \
	'[r["replicas"] for r in j["parts"]] == [[h] for h in "'"${H[*]}"'".split()] and j["misplaced_parts"] == 0' "$TMPD/l.json"

# ls -l asks every file for system.posix_acl_access, which Gfarm keeps no
# attribute of (gfmd refuses the name on its root directory: "Operation
# not permitted"): "no such attribute", and ls prints nothing else; on a
# mount of gfarm:/// too
G=$TMPD/groot
if mount_up gfarm:/// "$G"; then ok "gfsplit-mount gfarm:/// (the Gfarm root)"
else not_ok "gfsplit-mount gfarm:/// (the Gfarm root)" "$(cat "$TMPD/.mount.out")"; fi
ls -l "$G" "$G/m" "$M" "$M/sub" >/dev/null 2>"$TMPD/ls.err"
[ ! -s "$TMPD/ls.err" ] && ok "ls -l of the Gfarm root, a directory and a subdirectory through the mount: nothing on stderr" ||
	not_ok "ls -l of the Gfarm root, a directory and a subdirectory through the mount: nothing on stderr" "$(head -n 5 "$TMPD/ls.err")"
for f in "$G" "$M" "$M/plain.bin" "$M/sub" "$M/a.split"; do
	for a in system.posix_acl_access system.posix_acl_default security.selinux; do
		getfattr --absolute-names -n $a "$f" >"$TMPD/acl.out" 2>&1
		grep -q "$a: No such attribute" "$TMPD/acl.out" || break
	done
	grep -q "$a: No such attribute" "$TMPD/acl.out" &&
		ok "Gfarm: getfattr -n system.posix_acl_access, system.posix_acl_default, security.selinux of ${f#$TMPD/}: No such attribute" ||
		not_ok "Gfarm: getfattr -n $a of ${f#$TMPD/}: No such attribute" "$(cat "$TMPD/acl.out")"
done
mount_down "$G" || not_ok "unmount $G"
setfattr -n user.note -v hello "$M/plain.bin" 2>"$TMPD/sx.err"
[ "$(getfattr --absolute-names --only-values -n user.note "$M/plain.bin" 2>&1)" = hello ] &&
	ok "Gfarm: a user.* attribute of an ordinary file is still set and read through" ||
	not_ok "Gfarm: a user.* attribute of an ordinary file is still set and read through" "$(cat "$TMPD/sx.err")"

# a split file committed again while a reader has it open
python3 - "$M/a.split" "$TMPD/a" "$TMPD/b" "$BIN/pcp-split" "$hosts" <<'PY' >"$TMPD/re.out" 2>&1
import os, subprocess, sys
view, old, new, pcp, hosts = sys.argv[1:]
old_b, new_b = open(old, "rb").read(), open(new, "rb").read()
fd = os.open(view, os.O_RDONLY)
head = os.pread(fd, 1 << 20, 0)
subprocess.run(["mpiexec", "-n", "2", pcp, "--force", "--hosts", hosts, new,
                "gfarm:///m/a.split"], check=True, stdout=subprocess.DEVNULL,
               stderr=subprocess.STDOUT, timeout=120)
try:
    rest, off = b"", len(head)
    while True:
        b = os.pread(fd, 1 << 20, off)
        if not b: break
        rest += b; off += len(b)
    whole = head + rest
    print("old" if whole == old_b else "MIX")
except OSError as e:
    print("ESTALE" if e.errno == 116 else "errno %d" % e.errno)
os.close(fd)
print("new" if open(view, "rb").read() == new_b else "not-new")
PY
re=$(tr '\n' ' ' <"$TMPD/re.out")
case $re in
"old new "|"ESTALE new ") ok "Gfarm: an open handle keeps its version (or ESTALE), the next open sees the new: $re" ;;
*) not_ok "Gfarm: an open handle keeps its version (or ESTALE), the next open sees the new" "$re" ;;
esac

# a missing part: EIO and a log line; the rest is served on
gfrm /m/sub/c.split/part.1 || not_ok "gfrm part.1"
sleep 1.2	# past the attribute time of the names
o=$(python3 -c '
import sys
try:
    open(sys.argv[1], "rb").read(); print("read it")
except OSError as e:
    print(e.strerror)' "$M/sub/c.split" 2>&1)
if [ "$o" = "Input/output error" ] && grep -q "c\.split/part\.1" "$LOG"; then ok "a missing part on Gfarm: EIO, the log names it"
else not_ok "a missing part on Gfarm: EIO, the log names it" "$o" "$(tail -n 3 "$LOG")"; fi
same_bytes "the other files are served on" "$TMPD/b" "$M/plain.bin"

# a part of the right size with bytes changed (replaced with gfrm and
# gfreg): read through, EIO and the log names the part; -o noverify
# serves its bytes as they are
check "pcp-split to gfarm:///m/v.split, 2 ranks" \
	mpirun_n 2 "$BIN/pcp-split" --hosts "$hosts" "$TMPD/b" gfarm:///m/v.split
gfexport /m/v.split/part.1 >"$TMPD/p1" 2>&1 &&
	printf 'ZZZZ' | dd of="$TMPD/p1" bs=1 seek=1000 conv=notrunc status=none &&
	gfrm /m/v.split/part.1 && gfreg "$TMPD/p1" /m/v.split/part.1 ||
	not_ok "corrupt gfarm:///m/v.split/part.1"
o=$(python3 -c '
import sys
try:
    open(sys.argv[1], "rb").read(); print("read it")
except OSError as e:
    print(e.strerror)' "$M/v.split" 2>&1)
if [ "$o" = "Input/output error" ] && grep -q "v\.split/part\.1: checksum mismatch" "$LOG"; then
	ok "a corrupt part on Gfarm read through: EIO, the log names it and the checksum"
else not_ok "a corrupt part on Gfarm read through: EIO, the log names it and the checksum" "$o" "$(tail -n 3 "$LOG")"; fi
N=$TMPD/nov
if mount_up gfarm:///m "$N" -o noverify; then
	cp "$TMPD/b" "$TMPD/b.bad"
	off=$(gfls -l /m/v.split/part.0 | awk '{ print $5 }')
	printf 'ZZZZ' | dd of="$TMPD/b.bad" bs=1 seek=$((off + 1000)) conv=notrunc status=none
	same_bytes "-o noverify on Gfarm: the corrupt bytes as the part holds them" "$TMPD/b.bad" "$N/v.split"
	mount_down "$N" || not_ok "unmount $N"
else not_ok "mount -o noverify gfarm:///m" "$(cat "$TMPD/.mount.out")"; fi

# ordinary files written through to Gfarm
cp "$TMPD/a" "$M/sub/w.bin" && gfexport /m/sub/w.bin >"$TMPD/w.out" 2>&1
same_bytes "an ordinary file written through the mount (gfexport)" "$TMPD/a" "$TMPD/w.out"
mkdir "$M/newdir" && gfls -d /m/newdir >/dev/null 2>&1 && ok "mkdir through the mount (gfls)" ||
	not_ok "mkdir through the mount (gfls)"
if sh -c 'echo x >>"$1"' sh "$M/sub/c.split" 2>/dev/null; then not_ok "a Gfarm split file is read-only"
else ok "a Gfarm split file is read-only"; fi

mount_down "$M" && ok "unmounted, the daemon ended" || not_ok "unmounted, the daemon ended"
mount_log_clean
finish
