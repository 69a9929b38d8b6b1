#!/bin/bash
# cluster_stage.sh - stage-in and stage-out on the emulated cluster (3 nodes
# of their own, tests/cluster.sh; no GFSPLIT_NODE):
#   - stage-in: every node's local directory gets the whole tree, byte for
#     byte; shared storage is read once, the rest forwarded node to node
#     over the network;
#   - stage-out: each node's results into DEST/NODE/ under the nodes' real
#     host names, and into one merged tree with --merge;
#   - stage-out --async: one mover per node, inside that node, outliving
#     the job; a file closed later is written back; --wait ends them.
. "$(dirname "$0")/../lib.sh"

IN=$BIN/stage-in
OUT_=$BIN/stage-out
need_cluster 3
# shellcheck disable=SC2034 # crun_ok and json_true (tests/lib.sh) use it
J=$TMPD/last.json
LOC=$CLUSTER_LOCAL

# ---- stage-in: the tree on every node, read once
S=$CW/src
mkdir -p "$S/sub/deeper"
make_file "$S/big" $((5 * 1048576 + 12345)) 1
make_file "$S/sub/small" 4000 2
make_file "$S/sub/deeper/mid" 700000 3
for i in $(seq 1 20); do printf 'file %d\n' "$i" >"$S/sub/many$i"; done
chmod 640 "$S/sub/small"
crun_ok "stage-in to 3 nodes x 2 ranks, into each node's local dir" -ppn 2 "$IN" --json --chunk-size=1M "$S" "$LOC/in"
for k in 1 2 3; do
	same_tree "  node $k has the whole tree" "$S" "$CLUSTER_DIR/node$k/local/in/src"
done
json_true "  shared storage read once, forwarded to the other 2 nodes" \
	'j["bytes_read"] == j["planned_bytes"] and j["bytes_forwarded"] >= 2 * j["planned_bytes"] and j["raw_bytes"] == 3 * j["planned_bytes"]'
[ ! -e "$LOC/in" ] && ok "  nothing landed in the head's copy of the local path" ||
	not_ok "  nothing landed in the head's copy of the local path" "$(ls -la "$LOC")"

# ---- stage-out: DEST/NODE/ with the real names, and merged
bad=""
for k in 1 2 3; do
	cexec "$k" sh -c "mkdir -p $LOC/res && head -c $((100000 * k)) $S/big > $LOC/res/own-n$k && hostname > $LOC/res/same" ||
		bad="$bad node $k;"
done
[ -z "$bad" ] && ok "results written on each node" || not_ok "results written on each node" "$bad"
O=$CW/out
crun_ok "stage-out of 3 nodes into DEST/NODE/" -ppn 2 "$OUT_" --json "$LOC/res" "$O"
bad=""
for k in 1 2 3; do
	h=$(node_host "$k")
	cmp -s "$CLUSTER_DIR/node$k/local/res/own-n$k" "$O/$h/own-n$k" || bad="$bad $h/own-n$k;"
	[ "$(cat "$O/$h/same" 2>&1)" = "$h" ] || bad="$bad $h/same;"
done
[ "$(ls "$O" | wc -l)" = 3 ] || bad="$bad $(ls "$O");"
[ -z "$bad" ] && ok "  DEST/NODE/ named by the nodes' host names, each node's own bytes" ||
	not_ok "  DEST/NODE/ named by the nodes' host names, each node's own bytes" "$bad"
for k in 1 2 3; do cexec "$k" rm -f "$LOC/res/same"; done
crun_ok "stage-out --merge of 3 nodes" "$OUT_" --json --merge "$LOC/res" "$CW/merged"
bad=""
for k in 1 2 3; do
	cmp -s "$CLUSTER_DIR/node$k/local/res/own-n$k" "$CW/merged/own-n$k" || bad="$bad own-n$k;"
done
[ -z "$bad" ] && ok "  one tree with every node's files" || not_ok "  one tree with every node's files" "$bad"

# ---- stage-out --async: a mover per node, in the node, outliving the job
A=$CW/async
for k in 1 2 3; do cexec "$k" sh -c "mkdir -p $LOC/run && echo early-n$k > $LOC/run/early"; done
if crun "$OUT_" --async --interval 2 --chunk-size=1M "$LOC/run" "$A" 2>"$TMPD/err"; then
	ok "stage-out --async on 3 nodes returns"
else
	not_ok "stage-out --async on 3 nodes returns" "$(cat "$TMPD/err")"
fi
bad=""
for k in 1 2 3; do
	pids=$(ip netns pids "$GFSPLIT_CLUSTER-n$k" 2>/dev/null)
	found=""
	for p in $pids; do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = stage-out ] && found=$p
	done
	[ -n "$found" ] || bad="$bad no mover in node $k;"
done
[ -z "$bad" ] && ok "  a mover runs inside each node after the job ended" ||
	not_ok "  a mover runs inside each node after the job ended" "$bad"
for k in 1 2 3; do
	cexec "$k" sh -c "head -c 200000 $S/big > $LOC/run/.t && mv $LOC/run/.t $LOC/run/late-n$k"
done
t=0
while [ $t -lt 50 ]; do
	n=0
	for k in 1 2 3; do
		cmp -s "$CLUSTER_DIR/node$k/local/run/late-n$k" "$A/$(node_host $k)/late-n$k" 2>/dev/null && n=$((n + 1))
	done
	[ $n = 3 ] && break
	sleep 0.2
	t=$((t + 1))
done
[ "$n" = 3 ] && ok "  files closed later are written back from every node" ||
	not_ok "  files closed later are written back from every node" "$(ls -R "$A" 2>&1 | head)"
crun_ok "  stage-out --wait on every node" "$OUT_" --wait --json "$LOC/run"
# --wait returns once each mover has answered that all is written back and
# it is ending; the process itself may take a moment more to exit
movers_left() {
	local k p
	for k in 1 2 3; do
		for p in $(ip netns pids "$GFSPLIT_CLUSTER-n$k" 2>/dev/null); do
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = stage-out ] && echo "mover of node $k still runs;"
		done
	done
}
t=0
while [ -n "$(movers_left)" ] && [ $t -lt 50 ]; do
	sleep 0.1
	t=$((t + 1))
done
bad=$(movers_left)
for k in 1 2 3; do
	h=$(node_host "$k")
	[ "$(cat "$A/$h/early" 2>&1)" = "early-n$k" ] || bad="$bad $h/early;"
done
[ -z "$bad" ] && ok "  everything written back, the movers ended" ||
	not_ok "  everything written back, the movers ended" "$bad"
finish
