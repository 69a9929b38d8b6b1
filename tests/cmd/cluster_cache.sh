#!/bin/bash
# cluster_cache.sh - the cooperative cache and cache-warm on the emulated
# cluster (tests/cluster.sh): ranks on nodes 1-3 (2 each), the data file
# on Gfarm stored on node 4's gfsd alone, so every byte read from shared
# storage crosses node 4's link, where it is counted (the storage side,
# not our own statistics):
#   - the transport is "tcp" across nodes ("auto"), and "mpi" works too;
#     "shm" is refused, naming why;
#   - tcp's read-ahead threads (GFSPLIT_CACHE_READAHEAD): every byte
#     right, a block read from storage once, node 4's link sending the
#     file once; with 0, none;
#   - cache-warm --keep part: one tier per node, in that node's own
#     /dev/shm (the default directory), the blocks partitioned over the
#     nodes byte for byte; node 4's link sent the file once;
#   - a job after the warm reads every byte right and nothing from shared
#     storage: its tier, then blocks from the other nodes' tiers over the
#     network; node 4's link sent nothing;
#   - with 2 groups and no tiers: at most 2 reads of a block from storage
#     (and at most 2 x the file over node 4's link);
#   - a rank computing for 2 s with no MPI call while the others read the
#     blocks it holds does not stall them: they finish while it computes
#     (tcp's server threads; and mpi's progress thread, without which
#     they waited for it).
. "$(dirname "$0")/../lib.sh"
need_gfarm
need_cluster 4
PROG=$UNIT/mpi_cache
WARM=$BIN/cache-warm
J=$TMPD/j.json
TIER=/dev/shm/gfsplit-cache-$(id -u)

F=$CW/data
NB=24
make_file "$F" $((NB * 1048576 - 1000)) 5	# 24 blocks of 1 MiB, a short last one
SIZE=$(stat -c %s "$F")
cexec head gfmkdir /c || not_ok "gfmkdir /c"
check "the data file on node 4's gfsd alone" cexec 4 gfreg -h "$(node_host 4)" "$F" /c/data
where=$(cexec head gfwhere /c/data 2>&1)
[ "$where" = "$(node_host 4)" ] || not_ok "  gfwhere says node 4" "$where"
D=gfarm:///c/data

sent4() { "$CLUSTER" sent 4; }	# bytes node 4 sent over its link
# json_ok DESC EXPR: EXPR over the JSON j of $J (c: j["cache"], t: j["total"])
json_ok() {
	if python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); c = j.get("cache", {}); t = j.get("total", {})
sys.exit(0 if eval(sys.argv[2]) else 1)' "$J" "$2" 2>"$TMPD/py"; then ok "$1"
	else not_ok "$1" "$2" "$(cat "$J")" "$(tail -n 3 "$TMPD/py")"; fi
}
# job DESC ARGS..: mpi_cache on nodes 1-3, 2 ranks each; its JSON in $J
job() {
	_d=$1; shift
	if crun -nodes 3 -ppn 2 "$PROG" "$@" --ref "$F" >"$TMPD/j.out" 2>"$TMPD/j.err" &&
	    grep '^{' "$TMPD/j.out" | tail -n 1 >"$J"; then ok "$_d"
	else not_ok "$_d" "mpi_cache $*" "$(tail -n 8 "$TMPD/j.err" "$TMPD/j.out")"; return 1; fi
}

# ---- transports across nodes
job "a cache over 3 nodes, 2 groups, no tier: every byte right" seq "$D" --block 1M --cache 16M --groups 2 &&
	json_ok "  the transport is tcp, at most 2 storage reads a block, blocks read ahead" \
		"j['transport'] == 'tcp' and t['max_storage_reads_per_block'] <= 2 and t['peer_copies'] > 0 and t['readahead'] > 0"
b0=$(sent4)
job "1 group, 16 blocks read ahead by 8 threads a rank: every byte right" seq "$D" --block 1M --cache 64M &&
	json_ok "  a block read from storage once, the threads' blocks found by the readers" \
		"t['max_storage_reads_per_block'] == 1 and t['readahead'] > 0 and t['hits'] >= t['readahead']"
b1=$(sent4)
[ $((b1 - b0)) -ge "$SIZE" ] && [ $((b1 - b0)) -le $((SIZE + SIZE / 10)) ] &&
	ok "  node 4's link sent the file once ($((b1 - b0)) bytes for $SIZE)" ||
	not_ok "  node 4's link sent the file once" "$((b1 - b0)) bytes for $SIZE"
GFSPLIT_CACHE_READAHEAD=0 job "GFSPLIT_CACHE_READAHEAD=0: every byte right" seq "$D" --block 1M --cache 64M &&
	json_ok "  nothing read ahead" "t['readahead'] == 0 and t['max_storage_reads_per_block'] == 1"
GFSPLIT_CACHE_READAHEAD=x job "GFSPLIT_CACHE_READAHEAD=x: every byte right" seq "$D" --block 1M --cache 64M &&
	json_ok "  the default read ahead" "t['readahead'] > 0"
grep -q "GFSPLIT_CACHE_READAHEAD: 'x' is not a number" "$TMPD/j.err" &&
	ok "  with a warning naming the variable" ||
	not_ok "  with a warning naming the variable" "$(tail -n 5 "$TMPD/j.err")"
job "the same with --transport mpi: every byte right" seq "$D" --block 1M --cache 16M --groups 2 --transport mpi &&
	json_ok "  the transport is mpi, at most 2 storage reads a block" \
		"j['transport'] == 'mpi' and t['max_storage_reads_per_block'] <= 2 and t['peer_copies'] > 0"
expect_exit "the shm transport across nodes is refused" 1 \
	crun -nodes 3 -ppn 2 "$PROG" seq "$D" --block 1M --transport shm
output_has "  saying the ranks are on more than one node" "more than one node"

# ---- cache-warm: a tier per node in its own /dev/shm
b0=$(sent4)
if crun -nodes 3 -ppn 2 "$WARM" --json -b 1M --keep part "$D" >"$J" 2>"$TMPD/w.err"; then
	ok "cache-warm --keep part on 3 nodes x 2 ranks"
else
	not_ok "cache-warm --keep part on 3 nodes x 2 ranks" "$(tail -n 8 "$TMPD/w.err")"
fi
b1=$(sent4)
json_ok "  3 nodes, the file written to the tiers once, a block read once" \
	"j['nodes'] == 3 and j['bytes_written'] == $SIZE and c['max_storage_reads_per_block'] == 1"
[ $((b1 - b0)) -ge "$SIZE" ] && [ $((b1 - b0)) -le $((SIZE + SIZE / 10)) ] &&
	ok "  node 4's link sent the file once ($((b1 - b0)) bytes for $SIZE)" ||
	not_ok "  node 4's link sent the file once" "$((b1 - b0)) bytes for $SIZE"
tb=$(basename "$TIER")
TIER_BYTES=$F tiers_hold "  each node's tier in its own /dev/shm, the blocks partitioned, byte for byte" "$D" part \
	"$CLUSTER_DIR/node1/shm/$tb" "$CLUSTER_DIR/node2/shm/$tb" "$CLUSTER_DIR/node3/shm/$tb"
is_absent "  none on the storage node" "$CLUSTER_DIR/node4/shm/$tb"
if grep -lF "$F" "$TIER"/*.map >/dev/null 2>&1; then
	not_ok "  nothing in the host's /dev/shm" "$(grep -lF "$F" "$TIER"/*.map)"
else
	ok "  nothing in the host's /dev/shm"
fi

b0=$(sent4)
job "a job after the warm (3 nodes x 2 ranks) reads every byte right" seq "$D" --block 1M --cache 16M --local-dir "$TIER" &&
	json_ok "  nothing from shared storage: the tiers, and blocks from the other nodes" \
		"t['storage_reads'] == 0 and t['tier_reads'] > 0 and t['peer_copies'] > 0 and t['published'] == $NB"
b1=$(sent4)
[ $((b1 - b0)) -lt $((SIZE / 10)) ] && ok "  node 4's link sent no file data ($((b1 - b0)) bytes)" ||
	not_ok "  node 4's link sent no file data" "$((b1 - b0)) bytes"

# ---- a busy rank does not stall the others
job "rank 0 computes 2 s without MPI while the others read its blocks" busy "$D" --block 1M --cache 16M --busy 2 &&
	json_ok "  they finished before it made an MPI call again" "j['busy']['done_during'] and j['busy']['computed_s'] >= 2"
job "the same with --transport mpi (its progress thread)" busy "$D" --block 1M --cache 16M --busy 2 \
	--transport mpi &&
	json_ok "  they finished before it made an MPI call again" "j['busy']['done_during'] and j['busy']['computed_s'] >= 2"
echo "# busy, mpi with the progress thread: $(json_get "$J" 'j["busy"]' 2>&1)"
# (the same without the progress thread, for the log only: no check, so
# only when asked: GFSPLIT_LONG=1 tests/run.sh cluster_cache)
if [ -n "${GFSPLIT_LONG:-}" ] &&
    GFSPLIT_CACHE_PROGRESS_US=0 crun -nodes 3 -ppn 2 "$PROG" busy "$D" --block 1M --cache 16M --busy 2 --transport mpi \
    >"$TMPD/j.out" 2>&1; then
	echo "# busy, without it (GFSPLIT_CACHE_PROGRESS_US=0): $(grep -o '"busy".*' "$TMPD/j.out")"
fi
finish
