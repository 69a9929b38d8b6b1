#!/bin/bash
# split_merge.sh - pcp-split then gfsplit-merge round trips under mpiexec:
# files of several sizes, 1..4 split ranks, contiguous and cyclic layouts
# (aligned and odd block sizes), merged with 1..4 ranks (M != N too);
# every round trip is compared byte for byte, and every part is checked
# against the layout's definition (which source bytes it must hold).
# Also: holes stay holes, --dry-run writes nothing, --force replaces only
# after success, --json is valid and right; no part, metadata file or
# merged file is more readable than the source.
. "$(dirname "$0")/../lib.sh"

MiB=1048576

# check_parts DESC SRC DST N BLOCK: part r holds exactly the bytes the
# layout gives rank r (BLOCK 0: contiguous, chunk per pcp-split(1))
check_parts() {
	if python3 - "$2" "$3" "$4" "$5" >"$TMPD/.py" 2>&1 <<'PY'
import os, sys
src, dst, n, block = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
data = open(src, "rb").read()
size = len(data)
parts = sorted(p for p in os.listdir(dst) if p.startswith("part."))
assert parts == sorted("part.%d" % r for r in range(n)), parts
total = 0
for r in range(n):
    got = open(os.path.join(dst, "part.%d" % r), "rb").read()
    total += len(got)
    if block == 0:
        chunk = -(-size // n)
        align = 1 << 20 if size // n >= 1 << 20 else 4096
        chunk = max(-(-chunk // align) * align, 4096)
        want = data[r * chunk:(r + 1) * chunk]
    else:
        want = b"".join(data[k:k + block] for k in range(r * block, size, n * block))
    assert got == want, "part.%d: %d bytes, wanted %d (first difference at %s)" % (
        r, len(got), len(want),
        next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), "end"))
assert total == size, "parts add up to %d, not %d" % (total, size)
PY
	then ok "$1"; else not_ok "$1" "$(tail -n 3 "$TMPD/.py")"; fi
}

# round_trip SIZE N BLOCK M [merge options]: split SRC.SIZE with N ranks
# (BLOCK 0: contiguous), check the parts, merge with M ranks, compare
i=0
round_trip() {
	size=$1 n=$2 block=$3 m=$4
	shift 4
	i=$((i + 1))
	src=$TMPD/src.$size dst=$TMPD/split.$i out=$TMPD/out.$i
	lay=contiguous opt=""
	[ "$block" != 0 ] && { lay="cyclic:$block"; opt="--block-size $block"; }
	check "split $size bytes, N=$n, $lay" mpirun_n "$n" "$BIN/pcp-split" $opt "$src" "$dst"
	check_parts "parts of $size bytes, N=$n, $lay hold the right bytes" "$src" "$dst" "$n" "$block"
	check "merge $size bytes, N=$n $lay, M=$m $*" mpirun_n "$m" "$BIN/gfsplit-merge" "$@" "$dst" "$out"
	same_bytes "round trip $size bytes, N=$n $lay, M=$m: same bytes" "$src" "$out"
	rm -f "$out"
}

for s in 0 1 4097 3000017 25165829; do
	make_file "$TMPD/src.$s" "$s" "$s"
done

round_trip 0 1 0 1
round_trip 0 3 65536 2
round_trip 1 2 0 1
round_trip 1 4 4097 3
round_trip 4097 1 1048576 2
round_trip 4097 3 0 4
round_trip 4097 2 4097 2
round_trip 3000017 4 0 1
round_trip 3000017 2 1048576 3 --stripe-size 1M --buffer-size 256k
round_trip 3000017 1 4097 4 --stripe-size 1000000
round_trip 3000017 4 4097 2 --stripe-size 777777 --buffer-size 100000
round_trip 25165829 4 0 3 --stripe-size 5M
round_trip 25165829 3 1048576 2
round_trip 25165829 2 65536 4 --stripe-size 3M --buffer-size 1M

# one split, merged by every M from 1 to 4 (small stripes: every rank works)
check "split 3000017 bytes N=3 cyclic:65536" mpirun_n 3 "$BIN/pcp-split" -b 64k \
	"$TMPD/src.3000017" "$TMPD/c3"
for m in 1 2 3 4; do
	check "merge N=3 with M=$m" mpirun_n "$m" "$BIN/gfsplit-merge" --stripe-size 300k \
		--buffer-size 128k "$TMPD/c3" "$TMPD/c3.out$m"
	same_bytes "merge N=3 with M=$m: same bytes" "$TMPD/src.3000017" "$TMPD/c3.out$m"
	rm -f "$TMPD/c3.out$m"
done
check "merge --no-verify --sync" mpirun_n 2 "$BIN/gfsplit-merge" --no-verify --sync \
	"$TMPD/c3" "$TMPD/c3.nv"
same_bytes "merge --no-verify --sync: same bytes" "$TMPD/src.3000017" "$TMPD/c3.nv"
check "split --sync" mpirun_n 2 "$BIN/pcp-split" --sync "$TMPD/src.4097" "$TMPD/sync.split"
check_parts "split --sync: parts right" "$TMPD/src.4097" "$TMPD/sync.split" 2 0
no_leftovers "nothing temporary left behind" "$TMPD"

# ---- holes stay holes: views that leave gaps, and a trailing hole
HS=$((2 * MiB + MiB / 2))
check "write a split file with holes (2 ranks)" mpirun_n 2 "$UNIT/mpi_fmt_tool" holes \
	"$TMPD/holes" "$HS"
python3 - "$TMPD/holes.expect" "$HS" <<'PY'
import sys
size = int(sys.argv[2]); exp = bytearray(size)
for g in range(2 << 20):            # views end at 2 MiB; tile 256K, blocks at 0 and 128K
    if (g % 262144) % 131072 < 65536:
        exp[g] = ((g % 251) ^ (g >> 16)) & 0xff
open(sys.argv[1], "wb").write(exp)
PY
expect_exit "merge the holes with M=3 --json" 0 mpirun_n 3 "$BIN/gfsplit-merge" --json \
	--stripe-size 300k "$TMPD/holes" "$TMPD/holes.out"
same_bytes "holes read back as zeros, data in place" "$TMPD/holes.expect" "$TMPD/holes.out"
alloc=$(( $(stat -c %b "$TMPD/holes.out") * $(stat -c %B "$TMPD/holes.out") ))
if [ "$(stat -c %s "$TMPD/holes.out")" -eq "$HS" ] && [ "$alloc" -le $((MiB + 64 * 1024)) ]; then
	ok "merged file is sparse: $alloc bytes allocated for 1 MiB of data in $HS"
else
	not_ok "merged file is sparse" "size $(stat -c %s "$TMPD/holes.out"), allocated $alloc"
fi
grep '^{' "$OUT" >"$TMPD/holes.json"
check "merge --json counts only data bytes" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["bytes"] == int(sys.argv[2]) and j["data_bytes"] == 1 << 20, j
assert j["verified"] is True and j["writers"] == 2 and j["layout"] == "view", j
' "$TMPD/holes.json" "$HS"

# ---- -v: each rank lists the part it wrote; the merge, those it checked
expect_exit "pcp-split -v (3 ranks)" 0 mpirun_n 3 "$BIN/pcp-split" -v "$TMPD/src.3000017" "$TMPD/v.sp"
[ "$(grep -cE "^pcp-split: rank ([0-2]): wrote part\.\1 of '$TMPD/v.sp' \(" "$OUT")" -eq 3 ] &&
	ok "  lists each part once, by the rank that wrote it" ||
	not_ok "  lists each part once, by the rank that wrote it" "$(cat "$OUT")"
expect_exit "gfsplit-merge -v (2 ranks)" 0 mpirun_n 2 "$BIN/gfsplit-merge" -v "$TMPD/v.sp" "$TMPD/v.out"
[ "$(grep -cE "^gfsplit-merge: rank [01]: checked part\.[0-2] of '$TMPD/v.sp' \(" "$OUT")" -eq 3 ] &&
	grep -q "^gfsplit-merge: rank 0: wrote '$TMPD/v.out' (2.86 MiB)" "$OUT" &&
	ok "  lists the 3 parts checked and the file written" ||
	not_ok "  lists the 3 parts checked and the file written" "$(cat "$OUT")"
same_bytes "  the same bytes" "$TMPD/src.3000017" "$TMPD/v.out"

# ---- -p: mode, owner and times recorded by the split, given back by the merge
make_file "$TMPD/p.dat" 3000000 5
chmod 0640 "$TMPD/p.dat"
chown nobody:nogroup "$TMPD/p.dat" 2>/dev/null || true
touch -d '2021-03-04 05:06:07.123456789' "$TMPD/p.dat"
want=$(stat -c '%a %u:%g %y' "$TMPD/p.dat")
expect_exit "pcp-split -p" 0 mpirun_n 2 "$BIN/pcp-split" -p "$TMPD/p.dat" "$TMPD/p.sp"
expect_exit "  stat-layout shows what it kept" 0 "$BIN/stat-layout" "$TMPD/p.sp"
output_has "  (format 4, mode, owner, time)" "^format: +version 4"
output_has "  (the source line)" "^source: +mode 0640, owner $(stat -c '%u:%g' "$TMPD/p.dat"), modified 2021-03-04T05:06:07.123456789Z"
"$BIN/stat-layout" --json "$TMPD/p.sp" >"$TMPD/p.json"
json_valid stat-layout "$TMPD/p.json"
json_true "  and in JSON" 'j["format_version"] == 4 and j["source"]["mode"] == "0640" and j["source"]["mtime"] == "2021-03-04T05:06:07.123456789Z"' "$TMPD/p.json"
expect_exit "gfsplit-merge -p" 0 mpirun_n 3 "$BIN/gfsplit-merge" -p "$TMPD/p.sp" "$TMPD/p.out"
same_bytes "  the same bytes" "$TMPD/p.dat" "$TMPD/p.out"
got=$(stat -c '%a %u:%g %y' "$TMPD/p.out")
[ "$got" = "$want" ] && ok "  and the same mode, owner and times ($got)" ||
	not_ok "  and the same mode, owner and times" "got  $got" "want $want"
expect_exit "gfsplit-merge without -p" 0 mpirun_n 1 "$BIN/gfsplit-merge" "$TMPD/p.sp" "$TMPD/p2.out"
[ "$(stat -c %u "$TMPD/p2.out")" = "$(id -u)" ] && [ "$(stat -c %Y "$TMPD/p2.out")" -gt 1700000000 ] &&
	ok "  keeps neither owner nor times" || not_ok "  keeps neither owner nor times" "$(stat "$TMPD/p2.out")"
expect_exit "gfsplit-merge -p of a split file made without -p" 0 mpirun_n 1 "$BIN/gfsplit-merge" -p "$TMPD/v.sp" "$TMPD/v.p"
output_has "  says it has nothing to keep" "warning: -p: '.*v.sp' records no attributes"
rm -rf "$TMPD/p.sp" "$TMPD/p.out" "$TMPD/p2.out" "$TMPD/p.dat" "$TMPD/v.sp" "$TMPD/v.out" "$TMPD/v.p"

# ---- --dry-run writes nothing
src=$TMPD/src.3000017
expect_exit "pcp-split --dry-run" 0 mpirun_n 4 "$BIN/pcp-split" --dry-run -b 512k "$src" "$TMPD/dry"
output_has "dry run: rank 1 gets blocks 1 and 5" "rank 1: .*\(902865 bytes\) in 2 blocks, offsets \[524288, 3000017\)"
output_has "dry run: rank 3 gets block 3" "rank 3: .*\(524288 bytes\) in 1 blocks"
is_absent "pcp-split --dry-run created nothing" "$TMPD/dry"
no_leftovers "pcp-split --dry-run left no temporary" "$TMPD"
expect_exit "pcp-split --dry-run --json" 0 mpirun_n 3 "$BIN/pcp-split" --dry-run --json "$src" "$TMPD/dry"
grep '^{' "$OUT" >"$TMPD/dry.json"
check "dry-run JSON: plan covers the file" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["dry_run"] is True and j["ranks"] == 3 and len(j["plan"]) == 3, j
assert sum(p["bytes"] for p in j["plan"]) == j["bytes"] == 3000017, j
assert j["plan"][0]["first"] == 0 and j["plan"][2]["last"] == 3000017, j
' "$TMPD/dry.json"
json_valid pcp-split "$TMPD/dry.json"
is_absent "pcp-split --dry-run --json created nothing" "$TMPD/dry"
expect_exit "gfsplit-merge --dry-run" 0 mpirun_n 2 "$BIN/gfsplit-merge" --dry-run \
	--stripe-size 1M "$TMPD/c3" "$TMPD/dry.out"
output_has "merge dry run: rank 1 gets stripes 1 and 2" "rank 1: .* in 1 stripes, offsets \[1048576, 2097152\)"
is_absent "gfsplit-merge --dry-run created nothing" "$TMPD/dry.out"
no_leftovers "gfsplit-merge --dry-run left no temporary" "$TMPD"

# the merge reads the parts where they are (POSIX: the node their writer
# recorded): split by ranks 0-1 on node nA and 2-3 on nB, merged by rank
# 0 on nB and rank 1 on nA, each gets its own node's half, even of the
# stripe the halves share
check "pcp-split on 2 nodes x 2 ranks (GFSPLIT_NODE nA, nB)" \
	two_nodes 2 "$BIN/pcp-split" "$TMPD/src.3000017" "$TMPD/c3n"
m_args=(--dry-run --json --stripe-size 256k "$TMPD/c3n" "$TMPD/dry.out")
expect_exit "gfsplit-merge --dry-run --json, rank 0 on nB, rank 1 on nA" 0 \
	timeout -k 5 "$TEST_TIMEOUT" "$MPIEXEC" -n 1 $(mpi_env GFSPLIT_NODE=nB) "$BIN/gfsplit-merge" \
	"${m_args[@]}" : -n 1 $(mpi_env GFSPLIT_NODE=nA) "$BIN/gfsplit-merge" "${m_args[@]}"
grep '^{' "$OUT" >"$TMPD/dryn.json"
check "  each rank gets the bytes of its node's parts" python3 -c '
import json, sys
b = [p["bytes"] for p in json.load(open(sys.argv[1]))["plan"]]
assert b == [3000017 - 1507328, 1507328], b
' "$TMPD/dryn.json"
check "  and merges them right" \
	timeout -k 5 "$TEST_TIMEOUT" "$MPIEXEC" -n 1 $(mpi_env GFSPLIT_NODE=nB) "$BIN/gfsplit-merge" \
	--stripe-size 256k "$TMPD/c3n" "$TMPD/c3n.out" : -n 1 $(mpi_env GFSPLIT_NODE=nA) \
	"$BIN/gfsplit-merge" --stripe-size 256k "$TMPD/c3n" "$TMPD/c3n.out"
same_bytes "  the same bytes" "$TMPD/src.3000017" "$TMPD/c3n.out"
rm -rf "$TMPD/c3n" "$TMPD/c3n.out"

# parts on no node of the merge's (3 ranks on node nC): a part stays with
# the rank that started one of its checksum segments until it is read to
# the segment's end (stripes of 256 KiB hold 64 KiB of each part's 1 MiB
# segments), and every segment is still checked once
check "pcp-split -b 64k on 2 nodes x 2 ranks (GFSPLIT_NODE nA, nB)" \
	two_nodes 2 "$BIN/pcp-split" -b 64k "$TMPD/src.3000017" "$TMPD/c3r"
check "merge it with 3 ranks on node nC, 256 KiB stripes" \
	mpirun_n 3 env GFSPLIT_NODE=nC "$BIN/gfsplit-merge" --stripe-size 256k \
	"$TMPD/c3r" "$TMPD/c3r.out"
same_bytes "  the same bytes" "$TMPD/src.3000017" "$TMPD/c3r.out"
printf 'Z' | dd of="$TMPD/c3r/part.2" bs=1 seek=300000 conv=notrunc 2>/dev/null
expect_exit "  a byte changed in part.2: the merge fails" 1 \
	mpirun_n 3 env GFSPLIT_NODE=nC "$BIN/gfsplit-merge" --stripe-size 256k \
	"$TMPD/c3r" "$TMPD/c3r.bad"
output_has "  naming part.2's checksum" "c3r/part\.2: checksum mismatch"
is_absent "  and leaves no DST" "$TMPD/c3r.bad"
rm -rf "$TMPD/c3r" "$TMPD/c3r.out"

# ---- --force replaces only after success
echo "precious" >"$TMPD/keep"
sum_keep=$(sha256sum <"$TMPD/keep")
expect_exit "merge onto an existing DST fails" 1 mpirun_n 2 "$BIN/gfsplit-merge" "$TMPD/c3" "$TMPD/keep"
output_has "merge says DST exists" "keep' exists \(use --force"
check "existing DST unchanged" test "$(sha256sum <"$TMPD/keep")" = "$sum_keep"
cp -r "$TMPD/c3" "$TMPD/c3bad"
printf 'Z' | dd of="$TMPD/c3bad/part.1" bs=1 seek=1000 conv=notrunc 2>/dev/null
expect_exit "merge --force of a corrupt split fails" 1 mpirun_n 2 "$BIN/gfsplit-merge" --force \
	"$TMPD/c3bad" "$TMPD/keep"
check "failed merge --force left DST unchanged" test "$(sha256sum <"$TMPD/keep")" = "$sum_keep"
no_leftovers "failed merge --force left no temporary" "$TMPD"
check "merge --force replaces DST" mpirun_n 3 "$BIN/gfsplit-merge" --force "$TMPD/c3" "$TMPD/keep"
same_bytes "replaced DST has the new bytes" "$src" "$TMPD/keep"
no_leftovers "merge --force left no old copy" "$TMPD"

check "make an old split file" mpirun_n 1 "$BIN/pcp-split" "$TMPD/src.4097" "$TMPD/oldsplit"
sum_old=$(cat "$TMPD"/oldsplit/* | sha256sum)
expect_exit "split onto an existing DST fails" 1 mpirun_n 2 "$BIN/pcp-split" "$src" "$TMPD/oldsplit"
output_has "split says DST exists" "oldsplit.*exists"
expect_exit "split --force that fails midway" 1 env GFSPLIT_FAULT=pwrite:1:100000 \
	timeout 60 "$MPIEXEC" -n 2 "$BIN/pcp-split" --force "$src" "$TMPD/oldsplit"
check "failed split --force left DST unchanged" test "$(cat "$TMPD"/oldsplit/* | sha256sum)" = "$sum_old"
check "split --force replaces DST" mpirun_n 2 "$BIN/pcp-split" --force -b 64k "$src" "$TMPD/oldsplit"
check_parts "replaced split file is right" "$src" "$TMPD/oldsplit" 2 65536
# (a plain directory DST means DST/NAME: here that is a plain directory too)
mkdir -p "$TMPD/notsplit/${src##*/}"; echo "mine" >"$TMPD/notsplit/${src##*/}/file"
expect_exit "split --force onto a plain directory is refused" 1 mpirun_n 2 "$BIN/pcp-split" \
	--force "$src" "$TMPD/notsplit"
output_has "  saying why" "is a directory but not a split file \(refusing"
check "the plain directory is untouched" test "$(cat "$TMPD/notsplit/${src##*/}/file")" = mine
no_leftovers "split --force left nothing temporary" "$TMPD"

# ---- --json summaries
big=$TMPD/src.25165829
expect_exit "pcp-split --json" 0 mpirun_n 2 "$BIN/pcp-split" --json -b 64k "$big" "$TMPD/j.split"
grep '^{' "$OUT" >"$TMPD/split.json"
check "pcp-split JSON fields and values" python3 -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, "one object from rank 0 only: %d lines" % len(lines)
j = json.loads(lines[0])
assert j["command"] == "pcp-split" and j["bytes"] == 25165829 and j["ranks"] == 2, j
assert j["layout"] == "cyclic:65536" and j["dest"].endswith("j.split"), j
assert j["seconds"] > 0 and j["bytes_per_sec"] > 0 and j["cpu_seconds"] > 0, j
assert 0 < j["max_rss_kib"] < 64 * 1024, "rss %d KiB" % j["max_rss_kib"]
' "$TMPD/split.json"
json_valid pcp-split "$TMPD/split.json"
json_invalid_without pcp-split "$TMPD/split.json" bytes_per_sec
expect_exit "gfsplit-merge --json" 0 mpirun_n 3 "$BIN/gfsplit-merge" --json "$TMPD/j.split" "$TMPD/j.out"
grep '^{' "$OUT" >"$TMPD/merge.json"
check "gfsplit-merge JSON fields and values" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["command"] == "gfsplit-merge" and j["bytes"] == j["data_bytes"] == 25165829, j
assert j["ranks"] == 3 and j["writers"] == 2 and j["verified"] is True, j
assert j["layout"] == "cyclic:65536" and j["stripe_size"] == 64 << 20, j
assert j["seconds"] > 0 and 0 < j["max_rss_kib"] < 64 * 1024, j
' "$TMPD/merge.json"
json_valid gfsplit-merge "$TMPD/merge.json"
same_bytes "JSON run: same bytes" "$big" "$TMPD/j.out"

# permissions: nothing is more readable than the source, whatever the
# umask allows (0600 stays private through split and merge)
modes() { stat -c '%a' "$@" | sort -u | tr '\n' ' '; }
for m in 600 640 644; do
	make_file "$TMPD/perm$m" 300000 9
	chmod "$m" "$TMPD/perm$m"
	( umask 022; mpirun_n 2 "$BIN/pcp-split" -q "$TMPD/perm$m" "$TMPD/perm$m.split" &&
		mpirun_n 2 "$BIN/gfsplit-merge" -q "$TMPD/perm$m.split" "$TMPD/perm$m.out" ) ||
		not_ok "split and merge of a $m file"
	d=$(( 0$m | (0$m & 0444) >> 2 ))
	got="$(modes "$TMPD/perm$m.split"/*)/$(modes "$TMPD/perm$m.split")/$(modes "$TMPD/perm$m.out")"
	want="$m /$(printf '%o' "$d") /$m "
	[ "$got" = "$want" ] && ok "a $m source: parts and metadata $m, directory $(printf '%o' "$d"), merged file $m" ||
		not_ok "a $m source: modes of what split and merge make" "got $got, wanted $want"
done

# ---- destinations as with cp: an existing directory DEST means DEST/NAME
D5=$TMPD/dest5
mkdir -p "$D5/dir" "$D5/out"
make_file "$D5/small.dat" $((3 * 1048576 + 77)) 9
check "pcp-split into an existing directory (DIR/)" mpirun_n 2 "$BIN/pcp-split" "$D5/small.dat" "$D5/dir/"
check "  makes DIR/NAME, a split file" test -f "$D5/dir/small.dat/gfsplit.meta"
expect_exit "  again, without the slash: DIR/NAME exists" 1 mpirun_n 2 "$BIN/pcp-split" "$D5/small.dat" "$D5/dir"
output_has "  said of DIR/NAME" "dir/small\.dat' exists \(use --force"
check "  --force replaces DIR/NAME" mpirun_n 2 "$BIN/pcp-split" --force "$D5/small.dat" "$D5/dir"
check "gfsplit-merge into an existing directory" mpirun_n 2 "$BIN/gfsplit-merge" "$D5/dir/small.dat" "$D5/out"
same_bytes "  makes DIR/NAME with the source's bytes" "$D5/small.dat" "$D5/out/small.dat"
mpirun_n 2 "$BIN/pcp-split" "$D5/small.dat" "$D5/s.split" >/dev/null 2>&1
check "  of NAME.split, DIR/NAME" mpirun_n 1 "$BIN/gfsplit-merge" "$D5/s.split" "$D5/out/"
same_bytes "  (the .split left off)" "$D5/small.dat" "$D5/out/s"
# --force over a symbolic link replaces the link, never what it leads to
echo "the link's target" >"$D5/target"
sum_t=$(sha256sum <"$D5/target")
ln -s target "$D5/lnk"
check "pcp-split --force over a symbolic link" mpirun_n 2 "$BIN/pcp-split" -v --force "$D5/small.dat" "$D5/lnk"
grep -q "lnk' is a symbolic link to 'target': --force replaces the link" "$TMPD/.out" &&
	ok "  -v says so" || not_ok "  -v says so" "$(cat "$TMPD/.out")"
check "  the link became the split file" test -d "$D5/lnk" -a ! -L "$D5/lnk"
check "  and the file it led to is untouched" test "$(sha256sum <"$D5/target")" = "$sum_t"
ln -s target "$D5/lnk2"
expect_exit "  without --force, a link is not replaced" 1 mpirun_n 1 "$BIN/pcp-split" "$D5/small.dat" "$D5/lnk2"
output_has "  saying it is a link" "lnk2' exists, a symbolic link \(use --force to replace the link\)"
# never a device, /dev/stdout, or a link in /dev
expect_exit "pcp-split --force onto /dev/null fails" 1 "$BIN/pcp-split" --force "$D5/small.dat" /dev/null
output_has "  saying why" "/dev/null' exists and leads into /dev"
check "  /dev/null is still the device" test -c /dev/null
"$BIN/pcp-split" --force "$D5/small.dat" /dev/stdout >"$D5/so" 2>"$D5/so.err"; rc=$?
[ "$rc" -eq 1 ] && grep -q "/dev/stdout' is a symbolic link in /dev" "$D5/so.err" && [ -L /dev/stdout ] &&
	ok "pcp-split --force onto /dev/stdout (a file) fails, /dev/stdout still a link" ||
	not_ok "pcp-split --force onto /dev/stdout fails" "exit $rc" "$(cat "$D5/so.err")" "$(ls -l /dev/stdout)"
expect_exit "gfsplit-merge --force onto a FIFO fails" 1 sh -c "mkfifo '$D5/fifo' && '$BIN/gfsplit-merge' --force '$D5/s.split' '$D5/fifo'"
output_has "  saying why" "fifo' exists and is not a regular file"

# ---- a sparse source keeps its holes: in the parts, in the merged file,
# and through gfsplit-mount (st_blocks, SEEK_DATA/SEEK_HOLE, cp)
SP=$TMPD/sparse
mkdir -p "$SP/src"
truncate -s 64M "$SP/src/sp"
dd if=/dev/urandom of="$SP/src/sp" bs=1M count=2 seek=20 conv=notrunc 2>/dev/null
printf 'tail' | dd of="$SP/src/sp" bs=1 seek=$((64 * 1048576 - 4)) conv=notrunc 2>/dev/null
alloc() { du -k -s "$1" | cut -f1; }
if mpirun_n 3 "$BIN/pcp-split" --json "$SP/src/sp" "$SP/src/sp.split" >"$SP/j" 2>"$SP/err"; then
	ok "pcp-split of a sparse source (64 MiB, 2 MiB of data)"
else
	not_ok "pcp-split of a sparse source" "$(cat "$SP/err")"
fi
[ "$(alloc "$SP/src/sp.split")" -lt 8192 ] && ok "  the parts keep the holes ($(alloc "$SP/src/sp.split") KiB on disk)" ||
	not_ok "  the parts keep the holes" "$(alloc "$SP/src/sp.split") KiB on disk"
json_true "  JSON: the holes counted" 'j["hole_bytes"] >= 60 * 1048576' "$SP/j"
"$BIN/stat-layout" --json "$SP/src/sp.split" >"$SP/st" 2>&1
json_true "  stat-layout: allocated_bytes below data_bytes" 'j["coverage"]["allocated_bytes"] < 8 << 20 and j["coverage"]["data_bytes"] == 64 << 20' "$SP/st"
check "gfsplit-merge of it" mpirun_n 2 "$BIN/gfsplit-merge" "$SP/src/sp.split" "$SP/back"
same_bytes "  the same bytes" "$SP/src/sp" "$SP/back"
[ "$(alloc "$SP/back")" -lt 8192 ] && ok "  and a sparse file again ($(alloc "$SP/back") KiB on disk)" ||
	not_ok "  and a sparse file again" "$(alloc "$SP/back") KiB on disk"
check "pcp-split --no-sparse" mpirun_n 3 "$BIN/pcp-split" --no-sparse "$SP/src/sp" "$SP/dense.split"
[ "$(alloc "$SP/dense.split")" -ge 65536 ] && ok "  writes the zeros ($(alloc "$SP/dense.split") KiB on disk)" ||
	not_ok "  writes the zeros" "$(alloc "$SP/dense.split") KiB on disk"
check "gfsplit-merge --no-sparse" mpirun_n 2 "$BIN/gfsplit-merge" --no-sparse "$SP/src/sp.split" "$SP/dense"
same_bytes "  the same bytes" "$SP/src/sp" "$SP/dense"
[ "$(alloc "$SP/dense")" -ge 65536 ] && ok "  dense ($(alloc "$SP/dense") KiB on disk)" ||
	not_ok "  dense" "$(alloc "$SP/dense") KiB on disk"
need_fuse
if mount_up "$SP/src" "$SP/view"; then
	[ "$(alloc "$SP/view/sp.split")" -lt 8192 ] && ok "through gfsplit-mount, du sees the holes ($(alloc "$SP/view/sp.split") KiB)" ||
		not_ok "through gfsplit-mount, du sees the holes" "$(stat -c '%s %b %B' "$SP/view/sp.split")"
	if python3 - "$SP/view/sp.split" >"$SP/seek" 2>&1 <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
M = 1 << 20
assert os.lseek(fd, 0, os.SEEK_HOLE) == 0
assert os.lseek(fd, 0, os.SEEK_DATA) == 20 * M, os.lseek(fd, 0, os.SEEK_DATA)
assert os.lseek(fd, 20 * M, os.SEEK_HOLE) == 22 * M, os.lseek(fd, 20 * M, os.SEEK_HOLE)
d = os.lseek(fd, 22 * M, os.SEEK_DATA)
assert 63 * M <= d < 64 * M, d
assert os.lseek(fd, d, os.SEEK_HOLE) == 64 * M
PY
	then ok "  SEEK_DATA and SEEK_HOLE find the data at 20 MiB and the tail"
	else not_ok "  SEEK_DATA and SEEK_HOLE" "$(cat "$SP/seek")"; fi
	cp "$SP/view/sp.split" "$SP/cp"
	same_bytes "  plain cp of it has the same bytes" "$SP/src/sp" "$SP/cp"
	[ "$(alloc "$SP/cp")" -lt 8192 ] && ok "  and is sparse ($(alloc "$SP/cp") KiB on disk)" ||
		not_ok "  and is sparse" "$(alloc "$SP/cp") KiB on disk"
	mount_down "$SP/view"
else
	not_ok "gfsplit-mount of the sparse split file comes up" "$(cat "$TMPD/.mount.out")"
fi

finish
