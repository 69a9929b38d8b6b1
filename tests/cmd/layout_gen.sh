#!/bin/bash
# layout_gen.sh - the split files bench/layout_gen writes without a job
# (what bench/layout_scale.py measures at 1 Ki to 16 Ki ranks), at 256
# ranks on 4 nodes: committed, one location file a node holding that
# node's ranks, stat-layout --check clean, and every reader (gfsplit-merge,
# the MPI-IO library) returns the bytes the generator's definition gives,
# computed here on their own, holes of short parts included; and 3 ranks
# opening it together make the part lookups and location-file opens of one
# (strace).
. "$(dirname "$0")/../lib.sh"

GEN=${BENCHBIN:-$TOP/build/release/bench}/layout_gen
CAT=$UNIT/mpi_catfile
PRELOAD=${MPIIO_LIB:-$TOP/lib/libgfsplit-mpiio.so}
preload_of "$PRELOAD"
if [ ! -x "$GEN" ]; then
	not_ok "layout_gen is built" "missing: $GEN (make)"
	finish
	exit 1
fi

# expected RANKS BLOCK COUNT SHORT CONTIG OUT: the logical file from the
# definition in bench/layout_gen.c, not from its code: byte g is bits
# 24..31 of g * 0x9E3779B1 where its rank's part holds it, else a hole
expected() {
	python3 - "$@" <<'EOF'
import sys
R, B, C, short, contig = map(int, sys.argv[1:6])
size = R * B * C
whole = B * C
buf = bytearray(size)
for r in range(R):
    held = whole // 2 if short and r % short == short - 1 else whole
    for local in range(held):
        if contig:
            g = r * whole + local
        else:
            g = (local // B) * R * B + r * B + local % B
        buf[g] = ((g * 0x9E3779B1) >> 24) & 0xFF
open(sys.argv[6], "wb").write(buf)
EOF
}

# gen_case NAME RANKS NODES BLOCK COUNT SHORT CONTIG(0/1) MERGERANKS
gen_case() {
	name=$1 R=$2 N=$3 B=$4 C=$5 S=$6 CONTIG=$7 M=$8
	sp=$TMPD/$name.split
	opts=(--ranks "$R" --nodes "$N" --block "$B" --count "$C" --short "$S")
	[ "$CONTIG" = 1 ] && opts+=(--contiguous)
	expect_exit "$name: layout_gen ${opts[*]}" 0 "$GEN" "${opts[@]}" "$sp"
	cp "$OUT" "$TMPD/$name.gen"
	no_leftovers "$name: committed, no temporary left" "$TMPD"
	check "$name: a marker" test -f "$sp/gfsplit.meta"
	check "$name: $N location files (one a node), $R parts" test \
		"$(find "$sp" -name 'loc.*' | wc -l) $(find "$sp" -name 'part.*' | wc -l)" = "$N $R"
	check "$name: the generator counts the same" python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ranks"] == int(sys.argv[2]) and j["loc_files"] == int(sys.argv[3]), j' \
		"$TMPD/$name.gen" "$R" "$N"

	expect_exit "$name: stat-layout --check" 0 "$BIN/stat-layout" --check --json "$sp"
	cp "$OUT" "$TMPD/$name.json"
	json_valid stat-layout "$TMPD/$name.json"
	expected "$R" "$B" "$C" "$S" "$CONTIG" "$TMPD/$name.want"
	check "$name: nodes, ranks, views and coverage as generated" python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); want = open(sys.argv[2], "rb").read()
R, N, B, C, contig = map(int, sys.argv[3:8])
assert j["check"]["ok"] and j["nprocs"] == R and j["nnodes"] == N, j["check"]
ppn = R // N
assert j["layout"] == ("contiguous" if contig else "cyclic:%d" % B), j["layout"]
assert sorted(n["ranks"] for n in j["nodes"]) == \
    [list(range(k * ppn, (k + 1) * ppn)) for k in range(N)], "nodes"
for p in j["parts"]:
    v = p["view"]
    assert v["extent"] == (B * C if contig else R * B), v
    assert v["disp"] == p["rank"] * (B * C if contig else B), v
assert j["logical_size"] == len(want)
held = sum(p["part_size"] for p in j["parts"])
assert j["coverage"]["data_bytes"] == held, (j["coverage"], held)
assert j["coverage"]["hole_bytes"] == len(want) - held, j["coverage"]' \
		"$TMPD/$name.json" "$TMPD/$name.want" "$R" "$N" "$B" "$C" "$CONTIG"

	check "$name: gfsplit-merge with $M ranks" mpirun_n "$M" "$BIN/gfsplit-merge" "$sp" "$TMPD/$name.out"
	same_bytes "$name: merged bytes are the expected ones" "$TMPD/$name.want" "$TMPD/$name.out"
	if [ -f "$PRELOAD" ] && [ -x "$CAT" ]; then
		check "$name: read through the MPI-IO library by $M ranks" mpirun_n "$M" \
			env LD_PRELOAD="$PRE" "$CAT" "$sp" "$TMPD/$name.cat"
		same_bytes "$name: MPI-IO read the expected bytes" "$TMPD/$name.want" "$TMPD/$name.cat"
	else
		skip "$name: read through the MPI-IO library" "no $PRELOAD or $CAT (make)"
	fi
}

# an N-1 strided write of 256 ranks, 64 a node, every 5th rank short
gen_case strided 256 4 512 4 5 0 2
# contiguous blocks, 12 ranks on 3 nodes, every 4th rank short
gen_case contig 12 3 1000 3 4 1 3

# the ranks of one open share it: rank 0 alone looks at the parts and reads
# the location files (gfsp_layout_open_comm), whatever the number of readers
TRACE=trace=newfstatat,statx,openat	# x86-64's names
calls_of() {	# TAG CMD..: its part lookups by name and location-file opens, "P L"
	_t=$TMPD/st.$1; shift
	strace -f -qq -e "$TRACE" -o "$_t" timeout -k 5 "$TEST_TIMEOUT" \
		"$@" >/dev/null 2>&1
	echo "$(grep -Ec '(newfstatat|statx)\(.*/part\.[0-9]+"' "$_t")" \
		"$(grep -Ec 'openat\(.*/loc\.[0-9]+"' "$_t")"
}
if ! command -v strace >/dev/null || ! strace -f -e "$TRACE" -o /dev/null true 2>/dev/null; then
	skip "3 readers make the metadata calls of one" "no strace here (or not x86-64's calls)"
else
	sp=$TMPD/strided.split
	one=$(calls_of one "$MPIEXEC" -n 1 "$BIN/gfsplit-merge" --dry-run "$sp" "$TMPD/never")
	three=$(calls_of three "$MPIEXEC" -n 3 "$BIN/gfsplit-merge" --dry-run "$sp" "$TMPD/never")
	check "gfsplit-merge: 3 ranks make the part lookups and location-file opens of 1 ($one, 256 parts, 4 files)" \
		test "$one" = "$three" -a "${one% *}" -ge 256 -a "${one#* }" -eq 4
	if [ -f "$PRELOAD" ] && [ -x "$CAT" ]; then
		one=$(calls_of rone "$MPIEXEC" -n 1 env LD_PRELOAD="$PRE" "$CAT" "$sp" "$TMPD/c1")
		three=$(calls_of rthree "$MPIEXEC" -n 3 env LD_PRELOAD="$PRE" "$CAT" "$sp" "$TMPD/c3")
		check "MPI-IO read: 3 ranks make the part lookups and location-file opens of 1 ($one)" \
			test "$one" = "$three" -a "${one% *}" -ge 256 -a "${one#* }" -eq 4
	fi
fi

check_fails "an existing directory is refused" "$GEN" --ranks 4 --nodes 1 "$TMPD/strided.split"
check_fails "ranks that do not fill the nodes are refused" "$GEN" --ranks 10 --nodes 4 "$TMPD/bad.split"
is_absent "nothing made of a refused run" "$TMPD/bad.split"
finish
