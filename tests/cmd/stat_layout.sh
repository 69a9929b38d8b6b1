#!/bin/bash
# stat_layout.sh - stat-layout's report checked against known values: a
# cyclic split written by 4 ranks on two named nodes (GFSPLIT_NODE), a
# contiguous one, and one with holes; --map cross-checked byte for byte
# against the source and the part files; --check on good and corrupt files.
. "$(dirname "$0")/../lib.sh"

SIZE=3000017
src=$TMPD/src
make_file "$src" $SIZE 7

# ranks 0 and 2 on node "alpha", 1 and 3 on node "beta" (MPMD)
sp=$TMPD/cyc.split
check "split on two nodes (MPMD, GFSPLIT_NODE)" timeout 60 "$MPIEXEC" \
	-n 1 $(mpi_env GFSPLIT_NODE=alpha) "$BIN/pcp-split" -b 64k "$src" "$sp" : \
	-n 1 $(mpi_env GFSPLIT_NODE=beta) "$BIN/pcp-split" -b 64k "$src" "$sp" : \
	-n 1 $(mpi_env GFSPLIT_NODE=alpha) "$BIN/pcp-split" -b 64k "$src" "$sp" : \
	-n 1 $(mpi_env GFSPLIT_NODE=beta) "$BIN/pcp-split" -b 64k "$src" "$sp"
check "two location files" test -f "$sp/loc.0" -a -f "$sp/loc.1" -a ! -e "$sp/loc.2"

# part sizes of a cyclic 64 KiB layout over 4 ranks, from the definition
psize() {
	python3 -c 'import sys; s, n, b, r = map(int, sys.argv[1:])
print(sum(min(b, s - k) for k in range(r * b, s, n * b)))' $SIZE 4 65536 "$1"
}

# ---- human output
expect_exit "stat-layout (text)" 0 "$BIN/stat-layout" "$sp"
output_has "format version" "^format: +version 3, layout cyclic:65536"
output_has "logical size" "^logical size: 3000017 bytes"
output_has "writers" "^writers: +4 ranks"
output_has "nodes" "^nodes: +2$"
output_has "node alpha holds ranks 0 and 2" "^  node [01]: alpha \(loc\.[01]\), ranks 0 2$"
output_has "node beta holds ranks 1 and 3" "^  node [01]: beta \(loc\.[01]\), ranks 1 3$"
output_has "rank 3 is on beta" "^  rank 3: node [01] \(beta\)"
output_has "view summary of rank 1" "view: disp 0, extent 262144, size 65536 per tile, 1 blocks, end 3000017"
for r in 0 1 2 3; do
	want=$(psize $r)
	output_has "part.$r size $want" "part: part\.$r, $want bytes .*checksum 0x[0-9a-f]{16}$"
	check "part.$r file has $want bytes" test "$(stat -c %s "$sp/part.$r")" -eq "$want"
done
output_has "coverage: all data, no holes" "^coverage: +3000017 data bytes, 0 holes \(0 bytes\), 0 bytes overlapping"

# ---- JSON output
expect_exit "stat-layout --json" 0 "$BIN/stat-layout" --json "$sp"
cp "$OUT" "$TMPD/st.json"
json_valid stat-layout "$TMPD/st.json"
check "JSON values" python3 -c '
import json, os, sys
j = json.load(open(sys.argv[1])); d = sys.argv[2]
assert j["format_version"] == 3 and j["logical_size"] == 3000017, j
assert j["nprocs"] == 4 and j["nnodes"] == 2 and j["layout"] == "cyclic:65536", j
names = {n["name"]: n["ranks"] for n in j["nodes"]}
assert names == {"alpha": [0, 2], "beta": [1, 3]}, names
assert [r["rank"] for r in j["parts"]] == [0, 1, 2, 3]
for r in j["parts"]:
    assert r["node_name"] == ("alpha", "beta")[r["rank"] % 2], r
    assert r["part_size"] == os.path.getsize(os.path.join(d, r["part"])), r
    assert r["view"]["extent"] == 262144 and r["view"]["size"] == 65536, r
    assert r["part_hash"].startswith("0x") and len(r["part_hash"]) == 18, r
assert sum(r["part_size"] for r in j["parts"]) == 3000017
c = j["coverage"]
assert c["data_bytes"] == 3000017 and c["holes"] == 0 and c["first_hole"] is None, c
assert "map" not in j and "check" not in j
' "$TMPD/st.json" "$sp"

# ---- --map: the byte at OFFSET of SRC is the byte at the local offset of
# the named part, and "contiguous" runs to the end of the 64 KiB block
map_check() {	# DIR OFFSET WANT_PART WANT_CONTIG
	expect_exit "--map $2 --json" 0 "$BIN/stat-layout" --json --map "$2" "$1"
	if python3 - "$OUT" "$src" "$1" "$2" "$3" "$4" >"$TMPD/.py" 2>&1 <<'PY'
import json, os, sys
j = json.load(open(sys.argv[1])); src, d = sys.argv[2], sys.argv[3]
off, part, contig = int(sys.argv[4]), sys.argv[5], int(sys.argv[6])
m = j["map"]
assert m["offset"] == off and m["hole"] is False, m
assert m["file"] == part and m["contiguous"] == contig, m
a = open(src, "rb").read()[off:off + contig]
with open(os.path.join(d, m["file"]), "rb") as f:
    f.seek(m["local_offset"]); b = f.read(contig)
assert a == b, "bytes differ"
PY
	then ok "--map $2: $3, $4 bytes, same bytes as the source"
	else not_ok "--map $2 cross-check" "$(tail -n 3 "$TMPD/.py")"; fi
}
map_check "$sp" 0 part.0 65536
# --map --json answers that alone: the common members, path, logical_size
# and map; the layout (parts, nodes, coverage) only with -v
json_true "--map --json prints the map alone" 'set(j) == {"command", "version", "src", "dest", "ranks", "seconds", "bytes", "bytes_per_sec", "path", "logical_size", "map"} and j["logical_size"] == 3000017' "$OUT"
json_valid stat-layout "$OUT"
json_invalid_without stat-layout "$OUT" map
expect_exit "--map --json -v" 0 "$BIN/stat-layout" --json -v --map 0 "$sp"
json_true "  with -v the layout too" '"parts" in j and "map" in j' "$OUT"
map_check "$sp" 65535 part.0 1
map_check "$sp" 65536 part.1 65536
map_check "$sp" 1000000 part.3 48576
map_check "$sp" 2999999 part.1 18
map_check "$sp" 2097152 part.0 65536
expect_exit "--map takes a size suffix" 0 "$BIN/stat-layout" --map 2m "$sp"
output_has "--map 2m is offset 2097152" "offset 2097152 is in part\.0 at local offset 524288, 65536 bytes"
expect_exit "--map in text" 0 "$BIN/stat-layout" --map 300000 "$sp"
output_has "--map text names part, local offset and count" \
	"offset 300000 is in part\.0 at local offset 103392, 27680 bytes contiguous"
[ "$(wc -l <"$OUT")" -eq 1 ] && ok "  and is just that one line" ||
	not_ok "  and is just that one line" "$(cat "$OUT")"
expect_exit "--map -v" 0 "$BIN/stat-layout" -v --map 300000 "$sp"
output_has "  shows the layout too" "^split file: "
expect_exit "--map past the end fails" 1 "$BIN/stat-layout" --map 3000017 "$sp"
output_has "--map past the end says why" "offset 3000017 is not inside .*cyc.split.*logical size 3000017"

# contiguous, 3 ranks: chunk ceil(3000017/3) = 1000006 rounded up to 4 KiB
# (below 1 MiB per rank) = 1003520
check "contiguous split, 3 ranks" mpirun_n 3 "$BIN/pcp-split" "$src" "$TMPD/con.split"
map_check "$TMPD/con.split" 999999 part.0 3521
map_check "$TMPD/con.split" 1003520 part.1 1003520
map_check "$TMPD/con.split" 2999999 part.2 18

# ---- holes
HS=$((5 * 1048576 / 2))
check "split file with holes" mpirun_n 2 "$UNIT/mpi_fmt_tool" holes "$TMPD/holes" $HS
expect_exit "stat-layout -v on holes --map 70000" 0 "$BIN/stat-layout" -v --map 70000 "$TMPD/holes"
output_has "coverage counts the holes" \
	"^coverage: +1048576 data bytes, 16 holes \(1572864 bytes\), first hole at 65536"
output_has "--map in a hole says so" "offset 70000 is in a hole \(61072 bytes of zeros"
expect_exit "--map in the trailing hole (JSON)" 0 "$BIN/stat-layout" --json --map 2200000 "$TMPD/holes"
check "trailing hole runs to the end" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["map"]
assert m["hole"] is True and m["contiguous"] == 2621440 - 2200000 and "part" not in m, m
' "$OUT"
map_check_holes() {
	expect_exit "--map $1 on holes" 0 "$BIN/stat-layout" --json --map "$1" "$TMPD/holes"
	check "--map $1 on holes: $2 at local $3" python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))["map"]
assert m["file"] == sys.argv[2] and m["local_offset"] == int(sys.argv[3]), m
' "$OUT" "$2" "$3"
}
map_check_holes 131072 part.1 0
map_check_holes 400000 part.1 72320
map_check_holes 262145 part.0 65537

# ---- --check
expect_exit "--check on a good file" 0 env GFSPLIT_PROGRESS=1 "$BIN/stat-layout" --check "$sp"
output_has "check: ok" "^check: ok$"
output_has "progress while hashing" "stat-layout: .*100%"
expect_exit "--check on holes" 0 "$BIN/stat-layout" --check "$TMPD/holes"
output_has "holes check ok" "^check: ok$"
cp -r "$sp" "$TMPD/bad.split"
printf '\377' | dd of="$TMPD/bad.split/part.2" bs=1 seek=70000 conv=notrunc 2>/dev/null
expect_exit "--check on a corrupt part exits 1" 1 "$BIN/stat-layout" --check "$TMPD/bad.split"
output_has "--check names the part and the cause" "^check: .*bad.split/part\.2: checksum mismatch"
output_has "--check says it failed" "^check: FAILED"
expect_exit "--check --json on a corrupt part exits 1" 1 "$BIN/stat-layout" --check --json "$TMPD/bad.split"
sed -n '/^{/,/^}/p' "$OUT" >"$TMPD/bad.json"
check "JSON check result lists the problem" python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["check"]
assert c["ok"] is False and any("part.2" in p and "checksum" in p for p in c["problems"]), c
' "$TMPD/bad.json"
json_valid stat-layout "$TMPD/bad.json"
json_invalid_without stat-layout "$TMPD/bad.json" dest
expect_exit "stat-layout without --check does not read parts" 0 "$BIN/stat-layout" "$TMPD/bad.split"

finish
