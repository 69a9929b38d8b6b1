#!/bin/bash
# cache_warm.sh - cache-warm and the node-local tier (libcore/cache/warm.c,
# libcore/cache/tier.c) under real mpiexec, on two emulated nodes (GFSPLIT_NODE,
# MPMD; --local-dir DIR/%h gives each its own tier directory):
#   - the tiers hold exactly the blocks each node keeps (every block, or
#     the file partitioned over the nodes), byte for byte, and every block
#     was read from shared storage at most once per group;
#   - a job started after the warm (tests/mpi/mpi_cache, which compares
#     every byte it reads with the file) reads nothing from shared
#     storage: the local tier first, then peers; the same for an
#     unmodified program under the read hook (lib/libgfsplit-cache.so);
#   - a file that changed after the warm is never served from the tier;
#     warming it again replaces the old entry; a damaged tier is not used;
#   - errors name the file and the cause, on every rank, without a hang;
#   - the same with Gfarm as the shared storage.
. "$(dirname "$0")/../lib.sh"

PROG=$UNIT/mpi_cache
WARM=$BIN/cache-warm
for p in "$PROG" "$WARM"; do
	if [ ! -x "$p" ]; then
		not_ok "$(basename "$p") is built" "missing: $p (make)"
		finish
		exit 1
	fi
done
F=$TMPD/data
make_file "$F" $((40 * 65536 + 1234)) 5	# 41 blocks of 64 KiB, a short last one
NB=41
TIER=$TMPD/tier

# warm DESC K ARGS..: cache-warm --json on 2 x K ranks exits 0; JSON in w.json
warm() {
	_d=$1 _k=$2; shift 2
	if two_nodes "$_k" "$WARM" --json -b 64K -d "$TIER/%h" "$@" >"$TMPD/w.json" 2>"$TMPD/w.err" &&
	    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMPD/w.json" 2>/dev/null; then
		ok "$_d"
	else
		not_ok "$_d" "cache-warm $*" "$(tail -n 8 "$TMPD/w.err" "$TMPD/w.json")"
		return 1
	fi
}
# job DESC K FILE ARGS..: mpi_cache seq (every byte checked) on 2 x K ranks
# with the tiers; its JSON in j.json
job() {
	_d=$1 _k=$2 _f=$3; shift 3
	if two_nodes "$_k" "$PROG" seq "$_f" --block 64K --cache 4M --local-dir "$TIER/%h" "$@" \
		>"$TMPD/j.out" 2>"$TMPD/j.err" &&
	    grep '^{' "$TMPD/j.out" | tail -n 1 >"$TMPD/j.json"; then
		ok "$_d"
	else
		not_ok "$_d" "mpi_cache seq $_f $*" "$(tail -n 8 "$TMPD/j.err" "$TMPD/j.out")"
		return 1
	fi
}
# expect DESC FILE PYEXPR: PYEXPR over the JSON j of FILE (c: its cache
# statistics, t: its totals) is true
expect() {
	if python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); c = j.get("cache", {}); t = j.get("total", {})
sys.exit(0 if eval(sys.argv[2]) else 1)' "$2" "$3" 2>"$TMPD/.py"; then ok "$1"
	else not_ok "$1" "$3" "$(cat "$2" 2>&1)" "$(tail -n 3 "$TMPD/.py")"; fi
}
# ---- partitioned: the nodes hold the file once
warm "warm, 2 nodes x 2 ranks, --keep part" 2 --keep part "$F" &&
	expect "part: the tiers got the file once, each block read from storage once" "$TMPD/w.json" \
		"j['nodes'] == 2 and j['bytes_written'] == $(stat -c %s "$F") and c['storage_reads'] == $NB and c['max_storage_reads_per_block'] == 1"
json_valid cache-warm "$TMPD/w.json"
tiers_hold "part: each block on one node, byte for byte" "$F" part "$TIER/nA" "$TIER/nB"
job "a job after the warm (2 nodes x 2 ranks) reads every byte right" 2 "$F" &&
	expect "the job read nothing from shared storage: tier, then peers" "$TMPD/j.json" \
		"t['storage_reads'] == 0 and t['published'] == $NB and (t['tier_reads'] > 0 or t['peer_pieces'] > 0) and t['peer_copies'] + t['peer_pieces'] > 0 and t['bytes'] == 4 * j['file_size']"
job "a job on 3 ranks a node over the same tiers" 3 "$F" &&
	expect "3 ranks a node: still no shared-storage reads" "$TMPD/j.json" \
		"t['storage_reads'] == 0 and t['published'] == $NB"

# ---- every block on every node, 2 groups
warm "warm, --keep all, --groups 2" 2 --keep all --groups 2 "$F" &&
	expect "all: each node's tier got the whole file, at most 2 storage reads a block" "$TMPD/w.json" \
		"j['bytes_written'] == 2 * $(stat -c %s "$F") and c['max_storage_reads_per_block'] <= 2 and c['storage_bytes_read'] <= 2 * $(stat -c %s "$F") and c['peer_copies'] + c['peer_pieces'] > 0"
tiers_hold "all: every block on both nodes, byte for byte; the part entry replaced" "$F" all "$TIER/nA" "$TIER/nB"
n=$(ls "$TIER/nA" | wc -l)
[ "$n" -eq 2 ] && ok "the replaced entry's data file is gone (1 map + 1 data)" ||
	not_ok "the replaced entry's data file is gone" "$(ls -la "$TIER/nA")"
job "a job over whole-file tiers" 2 "$F" &&
	expect "whole-file tiers: no shared-storage reads" "$TMPD/j.json" \
		"t['storage_reads'] == 0 and t['published'] == 2 * $NB"
warm "warm again without --force" 2 --keep all "$F" &&
	expect "already warm: nothing written, both nodes said so" "$TMPD/w.json" \
		"j['bytes_written'] == 0 and j['files'][0]['nodes_already_warm'] == 2 and c['storage_reads'] == 0"

# ---- a file changed after the warm
cp "$F" "$TMPD/changing"
# by a relative path: the tier names the file by its absolute one
cd "$TMPD" && warm "warm a second file, by a relative path" 2 --keep part changing
cd "$TOP" || exit 1
tiers_hold "the second file's entry names its absolute path" "$TMPD/changing" part "$TIER/nA" "$TIER/nB"

# ---- an unmodified program under the read hook
READAPP=$UNIT/mpi_readapp
if [ -n "${CACHE_LIB:-}" ] && [ -f "$CACHE_LIB" ] && [ -x "$READAPP" ]; then
	rm -f "$TMPD/hook.json"
	preload_of "$CACHE_LIB"
	if two_nodes 2 env LD_PRELOAD="$PRE" GFSPLIT_CACHE_FILES="$F" GFSPLIT_CACHE_SIZE=4M \
		GFSPLIT_CACHE_BLOCK=64K GFSPLIT_CACHE_STATS="$TMPD/hook.json" \
		GFSPLIT_CACHE_LOCAL_DIR="$TIER/%h" "$READAPP" read "$F" >"$TMPD/h.out" 2>"$TMPD/h.err"; then
		ok "the read hook with GFSPLIT_CACHE_LOCAL_DIR: the program ran"
	else
		not_ok "the read hook with GFSPLIT_CACHE_LOCAL_DIR: the program ran" "$(tail -n 8 "$TMPD/h.err")"
	fi
	two_nodes 2 "$READAPP" read "$F" >"$TMPD/p.out" 2>"$TMPD/p.err"
	if [ -s "$TMPD/p.out" ] && cmp -s "$TMPD/p.out" "$TMPD/h.out"; then
		ok "the read hook: the program read exactly what it reads without it"
	else
		not_ok "the read hook: the same bytes as without it" "$(head -c 600 "$TMPD/p.out")" \
			"$(head -c 600 "$TMPD/h.out")"
	fi
	expect "the read hook: the program's reads came from the tiers and peers" "$TMPD/hook.json" \
		"t['storage_reads'] == 0 and t['published'] > 0 and t['bytes'] >= 4 * $(stat -c %s "$F")"
	expect "the read hook published only the selected file (not the second one)" "$TMPD/hook.json" \
		"t['published'] == 2 * $NB"
else
	skip "the read hook over warmed tiers" "CACHE_LIB (lib/libgfsplit-cache.so) or mpi_readapp not built"
fi

python3 - "$TMPD/changing" <<'EOF'
import os, sys
p = sys.argv[1]
st = os.stat(p)
with open(p, "r+b") as f:	# same size, new bytes in block 3
    f.seek(3 * 65536 + 10)
    f.write(b"changed after the warm")
os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))	# even the same mtime
EOF
job "a file changed after the warm (same size and mtime): every byte right" 2 "$TMPD/changing" &&
	expect "changed: nothing from the tier, each block once from storage" "$TMPD/j.json" \
		"t['tier_reads'] == 0 and t['storage_reads'] == $NB"
touch "$TMPD/changing"
job "changed, mtime now new: every byte right" 2 "$TMPD/changing" &&
	expect "changed (mtime): nothing from the tier" "$TMPD/j.json" \
		"t['tier_reads'] == 0 and t['storage_reads'] == $NB"
warm "warm the changed file again" 2 --keep part "$TMPD/changing" &&
	tiers_hold "re-warmed: one entry for the file, the new bytes" "$TMPD/changing" part "$TIER/nA" "$TIER/nB"

# ---- a damaged tier is not used: warned of, the data comes from storage
for d in "$TIER"/nA "$TIER"/nB; do
	for x in "$d"/*.data; do truncate -s 100000 "$x"; done
done
job "damaged tiers (data files cut short): every byte right" 2 "$F" &&
	expect "damaged tiers: read from storage instead" "$TMPD/j.json" "t['storage_reads'] >= $NB - 4"
grep -q "local tier not used for '$F'" "$TMPD/j.err" && ok "damaged tier: a warning names the file" ||
	not_ok "damaged tier: a warning names the file" "$(tail -n 5 "$TMPD/j.err")"
echo "not json" >"$TIER/nA/0123456789abcdef.map"
job "a tier with a broken map: the job runs, every byte right" 1 "$F"
grep -q "0123456789abcdef.map' is not a tier map" "$TMPD/j.err" &&
	ok "broken map: a warning names it" || not_ok "broken map: a warning names it" "$(tail -n 5 "$TMPD/j.err")"
rm -f "$TIER/nA/0123456789abcdef.map"

# ---- errors
expect_exit "a missing file: exit 1 on every rank, no hang" 1 two_nodes 1 "$WARM" -b 64K -d "$TIER/%h" "$TMPD/nope"
output_has "it names the file" "nope.*No such file"
expect_exit "a tier directory that cannot be made: exit 1" 1 two_nodes 1 "$WARM" -b 64K -d /proc/nope/%h "$F"
output_has "it names the directory and the cause" "/proc/nope"
expect_exit "--keep sometimes: exit 2" 2 mpirun_n 1 "$WARM" --keep sometimes "$F"
output_has "it lists the choices" "keep.*(all|part)"
expect_exit "--singlet-ratio 2: exit 2" 2 mpirun_n 2 "$WARM" --singlet-ratio 2 "$F"
output_has "it says why" "singlet-ratio '2'"
expect_exit "more groups than ranks: exit 1" 1 mpirun_n 2 "$WARM" --groups 3 -d "$TIER/%h" "$F"
output_has "it says why" "3 groups on 2 ranks"

# ---- Gfarm as the shared storage (last: need_gfarm ends the script without one)
need_gfarm
gfarm_up 2 || { finish; exit 1; }
rm -rf "$TIER"
gfmkdir /warm && gfreg "$F" /warm/data || not_ok "gfreg the data file" "$(gfls -l /warm 2>&1)"
warm "Gfarm: warm gfarm:///warm/data, --keep part" 2 --keep part gfarm:///warm/data &&
	expect "Gfarm: each block read from Gfarm once" "$TMPD/w.json" \
		"c['storage_reads'] == $NB and c['max_storage_reads_per_block'] == 1"
job "Gfarm: a job after the warm reads every byte right" 2 gfarm:///warm/data &&
	expect "Gfarm: the job read nothing from Gfarm" "$TMPD/j.json" \
		"t['storage_reads'] == 0 and t['published'] == $NB"
gfreg -f "$TMPD/changing" /warm/data 2>/dev/null || { gfrm /warm/data; gfreg "$TMPD/changing" /warm/data; }
job "Gfarm: the file replaced after the warm: every byte right" 2 gfarm:///warm/data &&
	expect "Gfarm: replaced (new generation): nothing from the tier" "$TMPD/j.json" \
		"t['tier_reads'] == 0 and t['storage_reads'] == $NB"
finish
