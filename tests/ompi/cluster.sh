#!/bin/bash
# tests/ompi/cluster.sh - the Open MPI build on the emulated cluster
# (tests/cluster.sh), run by tests/cmd/ompi_cluster.sh through
# tests/ompi.sh: 3 nodes, 2 ranks each, started by Open MPI's mpirun, whose
# rsh agent enters each node (tests/cluster.sh orun) as hydra's launcher
# does for MPICH, with no MCA parameter but the cluster network's name.
#   - every rank is on its node (processor and host names, the groups of
#     MPI_COMM_TYPE_SHARED, a /dev/shm per node) and MPI's bytes arrive
#     whole between nodes; 64 MiB sent from a rank of node 1 to one of
#     node 2 cross node 1's link, 64 MiB within node 1 do not.  An Open
#     MPI that makes no one-sided window across the nodes (Debian's: its
#     components want an RDMA network there) is reported, with MPI's
#     reason, not failed: the library must work without one;
#   - the commands under Open MPI: pcp-split on 3 nodes x 2 ranks (the
#     split file's layout names the 3 nodes) and gfsplit-merge (the source
#     back); stage-in (every node gets the tree, shared storage read
#     once) and stage-out (DEST/NODE/); cache-warm --keep part (3 tiers);
#   - the MPI-IO preload: N-1 writes (mpi_iopat ior-view) through it equal
#     what Open MPI alone writes; the shared file pointer across the
#     nodes (mpi_shared: write_ordered, write_shared, seek_shared) on a
#     file of the shared storage: the merged file verifies, and it reads
#     back through the preload;
#   - the cooperative cache across the nodes (mpi_cache, the default
#     transport): every byte read right, blocks copied between nodes.
. "$(dirname "$0")/../lib.sh"
need_cluster 3 --no-gfarm
. "$TOP/tests/mpiio_lib.sh"

# ---- MPI across the nodes
if crun -ppn 2 "$UNIT/mpi_nodes" >"$TMPD/nodes.out" 2>"$TMPD/nodes.err"; then
	ok "mpi_nodes on 3 nodes x 2 ranks (Open MPI's mpirun)"
else
	not_ok "mpi_nodes on 3 nodes x 2 ranks (Open MPI's mpirun)" "$(tail -n 15 "$TMPD/nodes.err")"
fi
grep -qx "data ok" "$TMPD/nodes.out" && ok "MPI_Sendrecv bytes right between nodes" ||
	not_ok "MPI_Sendrecv bytes right between nodes" "$(cat "$TMPD/nodes.out" "$TMPD/nodes.err")"
if grep -q "^rma unavailable: " "$TMPD/nodes.out"; then
	skip "MPI_Get bytes right between nodes" "$(sed -n 's/^rma unavailable: //p' "$TMPD/nodes.out")"
else
	ok "MPI_Get bytes right between nodes"
fi
if nodes_placed "$TMPD/nodes.out" >"$TMPD/py.out" 2>&1; then
	ok "processor and host names are the nodes'; MPI_COMM_TYPE_SHARED and /dev/shm per node"
else not_ok "processor and host names are the nodes'; MPI_COMM_TYPE_SHARED and /dev/shm per node" \
	"$(cat "$TMPD/py.out" "$TMPD/nodes.out")"; fi

# link FROM TO: 64 MiB sent from rank FROM to rank TO, 2 ranks a node on
# nodes 1 and 2; LRC, LOUT and S1 S2 (what nodes 1 and 2 sent meanwhile)
link() {
	local b1 b2
	b1=$("$CLUSTER" sent 1)
	b2=$("$CLUSTER" sent 2)
	LOUT=$(crun -ppn 2 -nodes 2 "$UNIT/mpi_nodes" send 64 "$1" "$2" 2>"$TMPD/link.err")
	LRC=$?
	S1=$(($("$CLUSTER" sent 1) - b1))
	S2=$(($("$CLUSTER" sent 2) - b2))
}
MB64=$((64 << 20))
link 0 2
if [ "$LRC" -eq 0 ] && grep -qx "data ok" <<<"$LOUT" && ((S1 >= MB64 && S2 < MB64 / 8)); then
	ok "64 MiB from a rank on node 1 to one on node 2 cross node 1's link ($S1 bytes)"
else
	not_ok "64 MiB from a rank on node 1 to one on node 2 cross node 1's link" \
		"exit $LRC, node 1 sent $S1, node 2 sent $S2: $LOUT $(tail -n 5 "$TMPD/link.err")"
fi
link 1 0
if [ "$LRC" -eq 0 ] && grep -qx "data ok" <<<"$LOUT" && ((S1 < MB64 / 16 && S2 < MB64 / 16)); then
	ok "64 MiB between two ranks of node 1 stay off the links ($S1 bytes sent)"
else
	not_ok "64 MiB between two ranks of node 1 stay off the links" \
		"exit $LRC, node 1 sent $S1, node 2 sent $S2: $LOUT $(tail -n 5 "$TMPD/link.err")"
fi

# ---- the commands
make_file "$CW/src" $((6 * 65536 + 777)) 3
if crun -ppn 2 "$BIN/pcp-split" -b 64k "$CW/src" "$CW/sp" >"$TMPD/split.out" 2>&1 &&
    "$BIN/stat-layout" --json "$CW/sp" >"$TMPD/st.json" 2>"$TMPD/st.err"; then
	ok "pcp-split on 3 nodes x 2 ranks; stat-layout reads it"
	text=$(cat "$TMPD/st.json")
	miss=""
	for k in 1 2 3; do case $text in *"$(node_host "$k")"*) ;; *) miss="$miss $k" ;; esac; done
	[ -z "$miss" ] && ok "the split file's layout names the 3 nodes" ||
		not_ok "the split file's layout names the 3 nodes" "missing:$miss" "$(head -c 1500 "$TMPD/st.json")"
else
	not_ok "pcp-split on 3 nodes x 2 ranks; stat-layout reads it" "$(tail -n 10 "$TMPD/split.out" "$TMPD/st.err")"
fi
check "gfsplit-merge on 3 nodes x 1 rank" crun "$BIN/gfsplit-merge" "$CW/sp" "$CW/back"
same_bytes "  gives the source back" "$CW/src" "$CW/back"

J=$TMPD/last.json
# stage-in: a tree to every node's local directory, read once
S=$CW/stage
mkdir -p "$S/sub"
make_file "$S/big" $((3 * 1048576 + 4321)) 4
make_file "$S/sub/small" 4000 5
crun_ok "stage-in to 3 nodes x 2 ranks" -ppn 2 "$BIN/stage-in" --json --chunk-size=1M "$S" "$CLUSTER_LOCAL/in"
for k in 1 2 3; do
	same_tree "  node $k has the whole tree" "$S" "$CLUSTER_DIR/node$k/local/in/stage"
done
json_true "  shared storage read once, forwarded to the other nodes" \
	'j["bytes_read"] == j["planned_bytes"] and j["bytes_forwarded"] >= 2 * j["planned_bytes"]'
# stage-out: each node's results into DEST/NODE/
bad=""
for k in 1 2 3; do
	cexec "$k" sh -c "mkdir -p $CLUSTER_LOCAL/res && head -c $((70000 * k)) $S/big > $CLUSTER_LOCAL/res/r" ||
		bad="$bad node $k;"
done
crun_ok "stage-out of 3 nodes into DEST/NODE/" -ppn 2 "$BIN/stage-out" --json "$CLUSTER_LOCAL/res" "$CW/out"
for k in 1 2 3; do
	cmp -s "$CLUSTER_DIR/node$k/local/res/r" "$CW/out/$(node_host "$k")/r" || bad="$bad $(node_host "$k")/r;"
done
[ -z "$bad" ] && ok "  each node's own bytes under its host name" ||
	not_ok "  each node's own bytes under its host name" "$bad" "$(ls -R "$CW/out" 2>&1 | head)"
# cache-warm: one tier per node, the file's blocks shared out
make_file "$CW/warm" $((6 * 1048576 - 99)) 6
crun_ok "cache-warm --keep part on 3 nodes x 2 ranks (the default transport)" -ppn 2 \
	"$BIN/cache-warm" --json -b 1M --keep part "$CW/warm"
json_true "  3 nodes, the file written to the tiers once" \
	'j["nodes"] == 3 and j["bytes_written"] == '"$((6 * 1048576 - 99))"

# ---- the MPI-IO preload
PROG=$UNIT/mpi_iopat
IOPAT="--segments=3 --block=200000 --transfer=50000"
# shellcheck disable=SC2086
check "mpi_iopat ior-view on Open MPI alone, 3 nodes x 2 ranks" \
	crun -ppn 2 "$PROG" ior-view write "$CW/io.plain" $IOPAT
# shellcheck disable=SC2086
check "  the same through the preload" crun -ppn 2 -x LD_PRELOAD="$PRE" \
	-x GFSPLIT_SPLIT_FILES="$CW/*.split" "$PROG" ior-view write "$CW/io.split" $IOPAT
is_split "  a split file" "$CW/io.split" &&
	check "  merged" crun "$BIN/gfsplit-merge" "$CW/io.split" "$CW/io.merged" &&
	same_bytes "  the bytes Open MPI alone wrote" "$CW/io.plain" "$CW/io.merged"

SHARED=$UNIT/mpi_shared
check "mpi_shared through the preload, 3 nodes x 2 ranks (the shared file pointer across nodes)" \
	crun -ppn 2 -x LD_PRELOAD="$PRE" -x GFSPLIT_SPLIT_FILES="$CW/*.split" "$SHARED" write "$CW/sh.split"
is_split "  a split file" "$CW/sh.split" &&
	check "  merged" crun "$BIN/gfsplit-merge" "$CW/sh.split" "$CW/sh.merged" &&
	check "  it verifies" "$SHARED" verify "$CW/sh.merged" 6
check "  it reads back through the preload (read_ordered, read_shared, seek_shared)" \
	crun -ppn 2 -x LD_PRELOAD="$PRE" "$SHARED" read "$CW/sh.split"

# ---- the cooperative cache
make_file "$CW/data" $((12 * 1048576 - 333)) 7
if crun -ppn 2 "$UNIT/mpi_cache" seq "$CW/data" --block 1M --cache 16M --ref "$CW/data" \
    >"$TMPD/c.json" 2>"$TMPD/c.err"; then
	ok "mpi_cache across 3 nodes x 2 ranks, the default transport: every byte right"
	json_true "  blocks copied between ranks, each read from storage about once" \
		'j["total"]["peer_copies"] > 0 and j["total"]["storage_reads"] <= 2 * 12' "$TMPD/c.json"
else
	not_ok "mpi_cache across 3 nodes x 2 ranks, the default transport: every byte right" \
		"$(tail -n 8 "$TMPD/c.err")"
fi
finish
