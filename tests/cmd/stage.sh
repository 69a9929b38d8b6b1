#!/bin/bash
# stage.sh - stage-in and stage-out (libcore/stage/stage.c, xfer.c, walk.c,
# journal.c) under real mpiexec, on POSIX storage; two emulated nodes
# where it matters (MPMD with GFSPLIT_NODE, DEST/%h):
#   - a tree arrives whole: bytes, modes, times, symbolic links, hard
#     links, empty and sparse files, names with spaces and newlines
#   - a file every node needs is read from shared storage once and
#     forwarded; --scatter gives each file to one node
#   - a re-run skips what is there; a changed file is copied again
#   - zstd: the stored copy is smaller for smooth data, never larger for
#     random data, readable by the zstd CLI, decompressed by stage-in;
#     a corrupted one is detected
#   - a rank killed mid-file: nothing under the final name, and the next
#     run resumes without recopying the chunks it had written
#   - a missing or unreadable source, a source that changes while it is
#     copied, a full destination, a manifest that leaves DEST: each a
#     clear error naming the file, exit 1, the other files in place
#   - a DST or DEST that names or enters the state directory, or is named
#     as a temporary: refused before anything is copied, naming the line
#     (so that no one can plant it); such entries inside a source tree: a
#     warning each, the
#     rest staged
#   - FIFOs and sockets: a warning each, the rest staged, exit 3
#   - a sparse file stays sparse (--no-sparse: its holes written)
#   - stage-out: per-node directories, --merge, and clashing names
. "$(dirname "$0")/../lib.sh"

IN=$BIN/stage-in
OUT_=$BIN/stage-out
for p in "$IN" "$OUT_"; do
	if [ ! -x "$p" ]; then
		not_ok "$(basename "$p") is built" "missing: $p (make)"
		finish
		exit 1
	fi
done

# run DESC N PROG ARGS..: exits 0 with valid JSON (--json is added) in $J
J=$TMPD/last.json
run() {
	_d=$1 _n=$2; shift 2
	if mpirun_n "$_n" "$@" --json >"$J" 2>"$TMPD/err" &&
	    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$J" 2>/dev/null; then
		ok "$_d"
	else
		not_ok "$_d" "$*" "$(tail -n 8 "$TMPD/err" "$J")"
	fi
}
# ---- a source tree with everything a tree can hold
S=$TMPD/src/tree
mkdir -p "$S/sub/deep" "$S/with space" "$S/ro"
make_file "$S/big" $((20 * 1048576 + 4321)) 1	# split over ranks (8 x 1M chunks)
make_file "$S/sub/small" 70000 2
make_file "$S/sub/deep/x" 5 3
: >"$S/empty"
truncate -s 5M "$S/sparse"; printf 'tail' >>"$S/sparse"
printf 'odd' >"$S/with space/a b"
printf 'nl' >"$S/with space/new
line"
ln -s sub/small "$S/link"
ln -s /nonexistent/target "$S/dangling"
ln "$S/sub/small" "$S/hard"
printf 'r' >"$S/ro/f"; chmod 0440 "$S/ro/f"; chmod 0555 "$S/ro"
chmod 0751 "$S/sub"
touch -h -d '2021-03-04 05:06:07.123456789' "$S/sub/small" "$S/big"
touch -d '2019-01-01' "$S/sub/deep"

# ---- stage-in, one node
D=$TMPD/local
run "stage-in of a tree (2 ranks)" 2 "$IN" -v --chunk-size=1M "$S" "$D"
# -v lists each entry once: copied, linked or hard-linked
n=$(grep -cE "^stage-in: rank [01]: (copied|linked|hard-linked) '" "$TMPD/err")
grep -qE "hard-linked 'tree/(hard|sub/small)' on .* to 'tree/(sub/small|hard)'" "$TMPD/err" &&
	grep -q "copied 'tree/big' on .* (20.00 MiB)" "$TMPD/err" && [ "$n" -eq 11 ] &&
	ok "  -v lists each of the 11 entries once, what was done to it" ||
	not_ok "  -v lists each of the 11 entries once" "$n lines:" "$(cat "$TMPD/err")"
same_tree "the tree arrives whole: bytes, modes, times, links" "$S" "$D/tree"
[ "$(stat -c %i "$D/tree/hard")" = "$(stat -c %i "$D/tree/sub/small")" ] &&
	ok "hard links stay one file" || not_ok "hard links stay one file"
json_true "JSON: 6 regular files (1 hard link), nothing failed" \
	'j["files"] == 8 and j["failed"] == 0 and j["links"] == 3'
json_true "the big file was cut into pieces (bytes read once)" \
	'j["bytes_read"] == j["raw_bytes"] == j["planned_bytes"]'
json_valid stage-in "$J"
t=$(ls -a "$D/tree" "$D/tree/sub" | grep -c 'gfsplit-stage\.' || true)
[ "$t" -eq 0 ] && ok "no temporary file is left" || not_ok "no temporary file is left" "$t"
# holes stay holes (5 MiB, of which 4 bytes are data), unless --no-sparse
used() { echo $(( $(stat -c '%b * %B' "$1") )); }
[ "$(used "$D/tree/sparse")" -lt 1048576 ] && ok "a sparse file stays sparse ($(used "$D/tree/sparse") bytes on disk)" ||
	not_ok "a sparse file stays sparse" "$(used "$D/tree/sparse") bytes on disk"
json_true "  JSON: its holes counted" 'j["bytes_holes"] >= 4 * 1048576'
run "stage-in --no-sparse" 1 "$IN" --no-sparse "$S/sparse" "$TMPD/nosparse"
same_bytes "  the same bytes" "$S/sparse" "$TMPD/nosparse/sparse"
[ "$(used "$TMPD/nosparse/sparse")" -ge $((5 * 1048576)) ] && ok "  with its holes written as zeros" ||
	not_ok "  with its holes written as zeros" "$(used "$TMPD/nosparse/sparse") bytes on disk"

run "a re-run copies nothing" 2 "$IN" -v --chunk-size=1M "$S" "$D"
[ "$(grep -c "^stage-in: rank 0: skipped '" "$TMPD/err")" -eq 8 ] &&
	ok "  -v lists the 8 files skipped" || not_ok "  -v lists the 8 files skipped" "$(cat "$TMPD/err")"
json_true "  every file was already there" 'j["files"] == 0 and j["skipped"] == 8 and j["bytes_read"] == 0'
# a dry run sees the same: nothing to copy (it reads no file: size and time)
run "-n on an up-to-date destination" 2 "$IN" -n --chunk-size=1M "$S" "$D"
json_true "  plans 0 bytes and counts the 8 files already there" 'j["planned_bytes"] == 0 and j["skipped"] == 8 and j["dry_run"]'
if mpirun_n 2 "$IN" -n "$S" "$D" >"$TMPD/dry" 2>&1 &&
    grep -q "would copy 0 B of .* entries to 1 node, 8 already there" "$TMPD/dry"; then
	ok "  and says so"
else
	not_ok "  and says so" "$(cat "$TMPD/dry")"
fi
printf 'changed' >>"$S/sub/deep/x"
run "a re-run after a change" 2 "$IN" --chunk-size=1M "$S" "$D"
json_true "  only the changed file is copied" 'j["files"] == 1 and j["bytes_read"] == 12'
same_bytes "  and it is the new one" "$S/sub/deep/x" "$D/tree/sub/deep/x"
# a file made by another tool, same size and time, other bytes: --checksum
cp -p "$S/sub/small" "$TMPD/keep"
printf 'X' | dd of="$D/tree/sub/small" bs=1 seek=10 conv=notrunc 2>/dev/null
touch -d '2021-03-04 05:06:07.123456789' "$D/tree/sub/small"
run "a destination changed behind the journal's back" 2 "$IN" --chunk-size=1M "$S" "$D"
same_bytes "  is copied again" "$S/sub/small" "$D/tree/sub/small"

# ---- --delete: what the sources no longer hold goes, in the trees staged
mkdir -p "$D/tree/old/deep"
printf x >"$D/tree/old/deep/f"; printf y >"$D/tree/sub/gone"; printf k >"$D/kept"
ln -s / "$D/tree/sub/rootlink"
run "stage-in -n --delete" 2 "$IN" -n --delete "$S" "$D"
json_true "  counts the 3 entries it would delete" 'j["deleted"] == 3'
[ -e "$D/tree/old/deep/f" ] && [ -e "$D/tree/sub/gone" ] && [ -L "$D/tree/sub/rootlink" ] &&
	ok "  and deletes nothing" || not_ok "  and deletes nothing" "$(ls -R "$D/tree")"
run "stage-in --delete" 2 "$IN" -v --delete --chunk-size=1M "$S" "$D"
json_true "  deletes the 3, copies nothing" 'j["deleted"] == 3 and j["files"] == 0'
json_valid stage-in "$J"
[ "$(grep -c "^stage-in: rank 0: deleted '" "$TMPD/err")" -eq 3 ] && ok "  -v lists them" ||
	not_ok "  -v lists them" "$(cat "$TMPD/err")"
is_absent "  the stale tree, file and link are gone" "$D/tree/old" "$D/tree/sub/gone" "$D/tree/sub/rootlink"
same_tree "  the tree is the source's" "$S" "$D/tree"
[ -e "$D/kept" ] && [ -d /usr/bin ] && ok "  what lies beside the staged tree stays (and no link was followed)" ||
	not_ok "  what lies beside the staged tree stays" "$(ls -a "$D")"

# ---- two nodes: read once, forwarded
D2=$TMPD/nodes
if two_nodes 2 "$IN" --json --chunk-size=1M "$S" "$D2/%h" >"$J" 2>"$TMPD/err"; then
	ok "stage-in to 2 nodes x 2 ranks"
else
	not_ok "stage-in to 2 nodes x 2 ranks" "$(tail -n 8 "$TMPD/err")"
fi
same_tree "  node nA has the tree" "$S" "$D2/nA/tree"
same_tree "  node nB has the tree" "$S" "$D2/nB/tree"
json_true "  shared storage read once, the rest forwarded" \
	'j["bytes_read"] == j["planned_bytes"] and j["bytes_forwarded"] == j["planned_bytes"] and j["raw_bytes"] == 2 * j["planned_bytes"]'
D3=$TMPD/scatter
if two_nodes 1 "$IN" --json --scatter --chunk-size=1M "$S/" "$D3/%h" >"$J" 2>"$TMPD/err"; then
	ok "stage-in --scatter to 2 nodes"
else
	not_ok "stage-in --scatter to 2 nodes" "$(tail -n 8 "$TMPD/err")"
fi
python3 - "$S" "$D3" >"$TMPD/sc" 2>&1 <<'EOF'
import os, sys
src, d = sys.argv[1], sys.argv[2]
for top, dirs, files in os.walk(src):
    for n in files:
        r = os.path.relpath(os.path.join(top, n), src)
        if os.path.islink(os.path.join(src, r)):
            continue	# links and directories are made on every node
        have = [x for x in ("nA", "nB") if os.path.lexists(os.path.join(d, x, r))]
        if len(have) != 1:
            print(r, have); sys.exit(1)
        if open(os.path.join(src, r), "rb").read() != open(os.path.join(d, have[0], r), "rb").read():
            print("bytes", r); sys.exit(1)
EOF
[ $? -eq 0 ] && ok "  each file is on exactly one node, whole" ||
	not_ok "  each file is on exactly one node, whole" "$(cat "$TMPD/sc")"

# ---- zstd
Z=$TMPD/z
mkdir -p "$Z/in"
python3 -c '
import math, struct, sys
with open(sys.argv[1], "wb") as f:
    f.write(b"".join(struct.pack("<f", 1000.0 * math.sin(i * 1e-3)) for i in range(3000000)))
' "$Z/in/smooth"
make_file "$Z/in/random" $((3 * 1048576 + 17)) 9
run "stage-out --compress" 2 "$OUT_" -z --chunk-size=1M "$Z/in" "$Z/out"
ZN=$(ls "$Z/out")
python3 - "$Z/in" "$Z/out/$ZN" >"$TMPD/zr" <<'EOF'
import os, sys
a, b = sys.argv[1], sys.argv[2]
s = os.path.getsize
print(s(os.path.join(b, "smooth")) < 0.95 * s(os.path.join(a, "smooth")),
      s(os.path.join(b, "random")) <= s(os.path.join(a, "random")))
EOF
[ "$(cat "$TMPD/zr")" = "True True" ] && ok "  smooth data shrinks, random data does not grow" ||
	not_ok "  smooth data shrinks, random data does not grow" "$(cat "$TMPD/zr")" "$(ls -l "$Z/in" "$Z/out/$ZN")"
if command -v zstd >/dev/null 2>&1; then
	zstd -q -d -c "$Z/out/$ZN/smooth" >"$TMPD/unz" 2>&1
	same_bytes "  the zstd CLI reads the stored copy" "$Z/in/smooth" "$TMPD/unz"
else
	skip "  the zstd CLI reads the stored copy" "zstd not installed"
fi
run "stage-in decompresses it" 2 "$IN" "$Z/out/$ZN/" "$Z/back"
same_bytes "  smooth: the original bytes" "$Z/in/smooth" "$Z/back/smooth"
same_bytes "  random: the original bytes" "$Z/in/random" "$Z/back/random"
run "stage-in --raw copies it as it is" 1 "$IN" --raw "$Z/out/$ZN/smooth" "$Z/raw"
same_bytes "  byte for byte" "$Z/out/$ZN/smooth" "$Z/raw/smooth"
cp "$Z/out/$ZN/smooth" "$Z/bad"
python3 -c '
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 0x55
open(p, "wb").write(b)' "$Z/bad"
expect_exit "a corrupted compressed file fails" 1 mpirun_n 1 "$IN" "$Z/bad" "$Z/badout"
output_has "  naming it" "bad.*(checksum|corrupt)"
is_absent "  and nothing takes its name" "$Z/badout/bad"
# --compress=auto: level 1 at first, then higher while writing is the
# slower side (storage limited to 4 MiB/s here), so text shrinks further
# than at level 1
python3 -c '
import random, sys
r = random.Random(5)
w = ["alpha", "beta", "gamma", "delta", "node", "rank", "file", "chunk"]
with open(sys.argv[1], "w") as f:
    for i in range(200000):
        f.write("%08d %s %s %.3f %d\n" % (i, r.choice(w), r.choice(w),
                r.random() * 1000, r.randrange(1 << 20)))' "$Z/text"
run "stage-out --compress=1" 1 "$OUT_" -z1 --chunk-size=1M "$Z/text" "$Z/l1"
run "stage-out --compress=auto to storage at 4 MiB/s" 1 "$OUT_" --compress=auto \
	--bwlimit=4M --chunk-size=1M "$Z/text" "$Z/auto"
python3 - "$Z/text" "$Z/l1/$ZN/text" "$Z/auto/$ZN/text" >"$TMPD/za" <<'EOF'
import os, sys
raw, l1, auto = (os.path.getsize(p) for p in sys.argv[1:])
print(auto < l1 < raw, raw, l1, auto)
EOF
grep -q '^True' "$TMPD/za" && ok "  smaller than at level 1: the level went up" ||
	not_ok "  smaller than at level 1: the level went up" "raw, level 1, auto: $(cat "$TMPD/za")"
run "stage-in decompresses it" 1 "$IN" "$Z/auto/$ZN/text" "$Z/autoback"
same_bytes "  the original bytes" "$Z/text" "$Z/autoback/text"
expect_exit "--compress=fast is refused" 2 mpirun_n 1 "$OUT_" --compress=fast "$Z/text" "$Z/nope"
output_has "  saying so" "compress.*fast"

# ---- a rank killed mid-file, then resumed
R=$TMPD/resume
make_file "$TMPD/rsrc" $((24 * 1048576)) 4
GFSPLIT_FAULT=crash:0:$((10 * 1048576)) mpirun_n 1 "$IN" --chunk-size=1M "$TMPD/rsrc" "$R" >/dev/null 2>&1
is_absent "killed mid-file: nothing under the final name" "$R/rsrc"
ls -a "$R" | grep -q '^\.rsrc\.gfsplit-stage\.' && ok "  the temporary file stays for the resume" ||
	not_ok "  the temporary file stays for the resume" "$(ls -a "$R")"
run "the next run resumes" 1 "$IN" -v --chunk-size=1M "$TMPD/rsrc" "$R"
grep -q "^stage-in: resumed 'rsrc' on .* (24.00 MiB, .* of it found done)" "$TMPD/err" &&
	ok "  -v says it resumed" || not_ok "  -v says it resumed" "$(cat "$TMPD/err")"
json_true "  without recopying the chunks written before" \
	'j["bytes_resumed"] >= 9 * 1048576 and j["bytes_read"] + j["bytes_resumed"] == 24 * 1048576'
same_bytes "  and the file is whole" "$TMPD/rsrc" "$R/rsrc"
# two ranks write the file in pieces: each resumes its own; the -v line
# and the summary count both
GFSPLIT_FAULT=crash:1:$((4 * 1048576)) mpirun_n 2 "$IN" --chunk-size=1M "$TMPD/rsrc" "$R/p" >/dev/null 2>&1
run "a resume by two ranks" 2 "$IN" -v --chunk-size=1M "$TMPD/rsrc" "$R/p"
done_mib=$(sed -En "s/^stage-in: rank 0: resumed 'rsrc' on .* \(24.00 MiB, ([0-9.]+) MiB of it found done\)/\1/p" "$TMPD/err")
if [ -n "$done_mib" ] && python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); \
    sys.exit(not (abs(j["bytes_resumed"] / 1048576 - float(sys.argv[2])) < 0.01 and j["raw_bytes"] + j["bytes_resumed"] == 24 * 1048576))' "$J" "$done_mib"; then
	ok "  -v's found done ($done_mib MiB) is the sum of both ranks', and with what was copied makes the file"
else
	not_ok "  -v's found done is the sum of both ranks'" "$(grep -E 'resumed|installed' "$TMPD/err")" "$(cat "$J")"
fi
same_bytes "  and the file is whole" "$TMPD/rsrc" "$R/p/rsrc"

# a temporary whose bytes were damaged is not trusted
GFSPLIT_FAULT=crash:0:$((10 * 1048576)) mpirun_n 1 "$IN" --chunk-size=1M "$TMPD/rsrc" "$R/2" >/dev/null 2>&1
tmpf=$(ls -a "$R/2" | grep '^\.rsrc\.gfsplit-stage\.' | head -n 1)
printf 'XXXX' | dd of="$R/2/$tmpf" bs=1 seek=100 conv=notrunc 2>/dev/null
run "a resume over a damaged temporary" 1 "$IN" --chunk-size=1M "$TMPD/rsrc" "$R/2"
same_bytes "  recopies what does not match" "$TMPD/rsrc" "$R/2/rsrc"
json_true "  (the damaged chunk and what follows it in its piece)" 'j["bytes_resumed"] < 8 * 1048576'

# ---- bad input and faults
E=$TMPD/bad
# a full file system: the copy fails, and its partial temporary does not
# keep the file system full
if [ "$(id -u)" -ne 0 ]; then
	skip "a full file system" "mounting a small tmpfs needs root"
else
	mkdir -p "$E/full"
	mount -t tmpfs -o size=6M,mode=0755 gfsplit-test "$E/full"
	make_file "$E/ten" $((10 * 1048576)) 7
	expect_exit "stage-in onto a full file system fails" 1 mpirun_n 2 "$IN" --chunk-size=1M "$E/ten" "$E/full/d"
	output_has "  naming the file and the cause" "ten.*No space left on device"
	output_has "  and saying the partial copy was removed" "partial copy, .*, was removed to give the space back"
	left=$(find "$E/full" -name '*gfsplit-stage.*' -type f)
	[ -z "$left" ] && ok "  no partial temporary is left" || not_ok "  no partial temporary is left" "$left"
	used_k=$(df -k --output=used "$E/full" | tail -n 1 | tr -d ' ')
	[ "$used_k" -lt 1024 ] && ok "  the space is free again (${used_k} KiB used)" ||
		not_ok "  the space is free again" "${used_k} KiB used"
	umount "$E/full"
fi
mkdir -p "$E/src"
printf 'a' >"$E/src/good"
expect_exit "a missing source: exit 1" 1 mpirun_n 2 "$IN" "$E/src/good" "$E/nothere" "$E/d1"
output_has "  naming it" "nothere.*(No such file|no such)"
if can_run_as_nobody; then
	mkdir -p "$E/nb" && chmod 0777 "$E/nb" && chmod 0755 "$E" "$TMPD"
	printf 'secret' >"$E/src/secret"; chmod 0600 "$E/src/secret"
	chmod 0755 "$E/src"
	expect_exit "an unreadable source: exit 1" 1 as_nobody \
		timeout 60 "$MPIEXEC" -n 2 "$IN" "$E/src/" "$E/nb/d"
	output_has "  naming it" "secret.*(Permission denied|permission)"
	[ -f "$E/nb/d/good" ] && ok "  the readable file is staged all the same" ||
		not_ok "  the readable file is staged all the same" "$(ls -la "$E/nb/d" 2>&1)"
else
	skip "an unreadable source" "needs root and setpriv"
fi
# a manifest that would leave DEST
M=$E/manifest
printf '%s ok/good\n%s ../escape\n' "$E/src/good" "$E/src/good" >"$M"
expect_exit "a manifest with '..' is refused" 1 mpirun_n 1 "$IN" -m "$M" "$E/m1"
output_has "  naming the line" "manifest:2: .*leaves the destination"
is_absent "  and nothing escaped" "$E/escape" "$E/m1/ok/good"
printf '%s /abs/path\n' "$E/src/good" >"$M"
expect_exit "an absolute manifest destination is refused" 1 mpirun_n 1 "$IN" -m "$M" "$E/m2"
printf '%s dir\\ with\\ space/f\\nx\n# comment\n\n' "$E/src/good" >"$M"
run "a manifest with escaped names" 1 "$IN" -m "$M" "$E/m3"
same_bytes "  lands where it says" "$E/src/good" "$E/m3/dir with space/f
x"
# nothing is staged over or into the tools' own state, nor under a
# temporary's name (which another user could plant): refused before
# anything is copied
mkdir -p "$E/bigsrc"	# not in src/, which a full destination gets below
make_file "$E/bigsrc/big" $((20 * 1048576)) 7
IDX=$E/m3/.gfsplit-stage/index
idx_sum=$(sha256sum <"$IDX")
printf '%s ok2\n%s .gfsplit-stage/index\n' "$E/src/good" "$E/src/good" >"$M"
expect_exit "a manifest DST '.gfsplit-stage/index' is refused" 1 mpirun_n 2 "$IN" -m "$M" "$E/m3"
output_has "  naming the line and the state" "manifest:2: '.gfsplit-stage/index' names or enters stage's own state directory"
[ "$(sha256sum <"$IDX")" = "$idx_sum" ] && [ ! -e "$E/m3/ok2" ] &&
	ok "  the index unchanged, nothing copied" ||
	not_ok "  the index unchanged, nothing copied" "$(ls -la "$E/m3" "$E/m3/.gfsplit-stage")"
printf '%s .gfsplit-stage\n' "$E/bigsrc/big" >"$M"
expect_exit "a manifest DST '.gfsplit-stage' is refused" 1 mpirun_n 2 "$IN" -m "$M" "$E/m3"
output_has "  naming the line" "manifest:1: '.gfsplit-stage' names or enters"
_t=$(ls -a "$E/m3" | grep -F '.gfsplit-stage.')
[ -z "$_t" ] && [ "$(sha256sum <"$IDX")" = "$idx_sum" ] && ok "  no temporary left, the index unchanged" ||
	not_ok "  no temporary left, the index unchanged" "$(ls -la "$E/m3")"
printf '%s sub/.x.gfsplit-stage.0123.4567\n' "$E/src/good" >"$M"
expect_exit "a manifest DST named as a temporary is refused" 1 mpirun_n 1 "$IN" -m "$M" "$E/m4"
output_has "  naming the line and the name" "manifest:1: .*'.x.gfsplit-stage.0123.4567' is named as stage's temporary files are"
is_absent "  nothing made" "$E/m4"
mkdir -p "$E/own/.gfsplit-stage"; printf 's' >"$E/own/.gfsplit-stage/index"
expect_exit "a source tree named '.gfsplit-stage' is refused" 1 mpirun_n 1 "$IN" "$E/own/.gfsplit-stage" "$E/m5"
output_has "  naming it" "own/.gfsplit-stage' would be staged as '.gfsplit-stage'"
expect_exit "a DEST inside a state directory is refused" 1 mpirun_n 1 "$IN" "$E/src/good" "$E/m3/.gfsplit-stage/in"
output_has "  naming it" "DEST '.*m3/.gfsplit-stage/in' names or enters"
is_absent "  nothing made there" "$E/m3/.gfsplit-stage/in"
expect_exit "stage-out to a DEST inside a state directory is refused" 1 mpirun_n 1 env GFSPLIT_NODE=nA "$OUT_" "$E/own" "$E/m3/.gfsplit-stage/out"
output_has "  naming it" "DEST '.*m3/.gfsplit-stage/out/nA' names or enters"
is_absent "  nothing made there" "$E/m3/.gfsplit-stage/out"
# in a source tree: the tree's own state at its top goes unsaid; a state
# deeper down and a temporary's name are left out with a warning each
mkdir -p "$E/own/sub/.gfsplit-stage"; printf 'd' >"$E/own/sub/data"
printf 't' >"$E/own/sub/.data.gfsplit-stage.0123.4567"
printf 'i' >"$E/own/sub/.gfsplit-stage/index"
expect_exit "a tree holding state and temporaries of ours: exit 0" 0 mpirun_n 2 "$IN" "$E/own/" "$E/m6"
output_has "  a warning for the temporary" "own/sub/.data.gfsplit-stage.0123.4567': named as stage's own files are"
output_has "  and for the state deeper down" "own/sub/.gfsplit-stage': named as stage's own files are"
output_lacks "  none for the tree's own state" "own/.gfsplit-stage': named"
[ -f "$E/m6/sub/data" ] && [ ! -e "$E/m6/sub/.data.gfsplit-stage.0123.4567" ] &&
	[ ! -e "$E/m6/sub/.gfsplit-stage" ] && [ "$(cat "$E/m6/.gfsplit-stage/index" 2>/dev/null)" != s ] &&
	ok "  the data staged, none of those" ||
	not_ok "  the data staged, none of those" "$(ls -laR "$E/m6")"
# "DIR/" copies what DIR holds into DEST, and DEST gets DIR's times too
mkdir -p "$E/top/d/sub"; printf 'x' >"$E/top/d/sub/f"
touch -d '2020-02-03 04:05:06' "$E/top/d/sub" "$E/top/d"
run "stage-in DIR/ DEST" 2 "$IN" "$E/top/d/" "$E/top/dest"
[ "$(stat -c %Y "$E/top/dest")" = "$(stat -c %Y "$E/top/d")" ] &&
	ok "  DEST gets DIR's modification time" ||
	not_ok "  DEST gets DIR's modification time" "$(stat -c '%n %y' "$E/top/d" "$E/top/dest")"
# FIFOs and sockets in a tree: one warning each, the rest staged, exit 3
mkdir -p "$E/sp/tree/sub"
printf 'one' >"$E/sp/tree/a"; printf 'two' >"$E/sp/tree/sub/b"
mkfifo "$E/sp/tree/fifo"
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$E/sp/tree/sub/sock"
expect_exit "stage-in of a tree with a FIFO and a socket: exit 3" 3 mpirun_n 2 "$IN" "$E/sp/tree" "$E/sp/in"
output_has "  a warning naming the FIFO" "tree/fifo': a FIFO, not staged"
output_has "  and one naming the socket" "tree/sub/sock': a socket, not staged"
output_has "  the summary counts them" "2 not staged"
same_bytes "  the rest is staged" "$E/sp/tree/sub/b" "$E/sp/in/tree/sub/b"
is_absent "  and they are not" "$E/sp/in/tree/fifo" "$E/sp/in/tree/sub/sock"
expect_exit "stage-out of it: exit 3 too" 3 mpirun_n 1 env GFSPLIT_NODE=nA "$OUT_" "$E/sp/tree" "$E/sp/out"
same_bytes "  the rest written back" "$E/sp/tree/a" "$E/sp/out/nA/a"
# a source that changes while it is copied
make_file "$E/grow" $((16 * 1048576)) 5
( sleep 0.6; printf 'more' >>"$E/grow" ) &
expect_exit "a source changing while staged fails" 1 mpirun_n 1 "$IN" --bwlimit 8M --chunk-size=1M "$E/grow" "$E/g"
wait
output_has "  naming it" "grow.*changed"
is_absent "  nothing torn under its name" "$E/g/grow"
# one cut short while it is copied: its chunks are mapped (1M and more),
# which must end in an error naming it, not in a rank dead of SIGBUS
make_file "$E/shrink" $((16 * 1048576)) 5
( sleep 0.6; truncate -s 1M "$E/shrink" ) &
expect_exit "a source cut short while staged fails" 1 mpirun_n 1 "$IN" --bwlimit 8M --chunk-size=1M "$E/shrink" "$E/s"
wait
output_has "  naming it" "shrink.*(changed|shrank)"
output_lacks "  no rank died of a signal" "signal|Bus error|BAD TERMINATION"
is_absent "  nothing torn under its name" "$E/s/shrink"
# a full destination (a small tmpfs; root only)
if [ "$(id -u)" -eq 0 ] && mkdir -p "$E/full" && mount -t tmpfs -o size=2m tmpfs "$E/full" 2>/dev/null; then
	at_exit "umount '$E/full'"
	make_file "$E/src/huge" $((3 * 1048576)) 6
	# one rank: with two, the small file may be written while the big
	# one's partial copy still holds the space, and fail for want of it
	expect_exit "a full destination: exit 1" 1 mpirun_n 1 "$IN" "$E/src/" "$E/full/d"
	output_has "  naming the file and the cause" "huge.*No space left"
	is_absent "  nothing torn under its name" "$E/full/d/huge"
	same_bytes "  the small file is staged" "$E/src/good" "$E/full/d/good"
	umount "$E/full"
else
	skip "a full destination" "cannot mount a tmpfs here"
fi

# ---- stage-out
O=$TMPD/out
L=$TMPD/loc
for n in nA nB; do
	mkdir -p "$L/$n/res"
	make_file "$L/$n/res/own-$n" 300000 7
	printf '%s' "$n" >"$L/$n/res/same"
done
if two_nodes 2 "$OUT_" --json "$L/%h/res" "$O" >"$J" 2>"$TMPD/err"; then
	ok "stage-out of two nodes into DEST/NODE/"
else
	not_ok "stage-out of two nodes into DEST/NODE/" "$(tail -n 8 "$TMPD/err")"
fi
json_valid stage-out "$J"
same_bytes "  node nA's file" "$L/nA/res/own-nA" "$O/nA/own-nA"
same_bytes "  node nB's file" "$L/nB/res/same" "$O/nB/same"
if two_nodes 1 "$OUT_" --json --merge "$L/%h/res" "$O/m" >"$J" 2>"$TMPD/err"; then
	not_ok "stage-out --merge with a name on both nodes fails"
else
	ok "stage-out --merge with a name on both nodes fails"
fi
json_true "  naming the clash on both nodes" \
	'len(j["failures"]) == 2 and all("another node" in f["error"] for f in j["failures"])'
same_bytes "  the other files are merged" "$L/nB/res/own-nB" "$O/m/own-nB"
is_absent "  and the clashing name is not" "$O/m/same"
finish
