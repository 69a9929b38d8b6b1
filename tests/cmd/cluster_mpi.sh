#!/bin/bash
# cluster_mpi.sh - the emulated cluster itself (tests/cluster.sh): 3 nodes,
# 2 ranks each, launched by MPICH's hydra through tests/cluster-exec.
#   - every rank's MPI_Get_processor_name and gethostname are its node's
#     host name; MPI_COMM_TYPE_SHARED groups the ranks by node; each node
#     has a /dev/shm of its own, shared by its ranks;
#   - point-to-point and one-sided (MPI_Get, passive target) bytes arrive
#     whole between nodes (tests/helpers/mpi_nodes);
#   - MPI takes the nodes for separate hosts: each has a boot_id and a
#     machine-id of its own, and PID and IPC namespaces its commands share
#     (a node sees its own processes, never another node's); so 64 MiB
#     sent or read (MPI_Get) between ranks on two nodes cross the links
#     (the veths' byte counters), 64 MiB between two ranks of one node do
#     not, and a shaped link carries 16 MiB through its shaper, no faster
#     than its rate;
#   - a file a node writes to its /tmp, /dev/shm or local directory is that
#     node's alone; the shared directory is everyone's;
#   - gfsplit's own node identity (stat-layout's placement of a split file
#     written on the cluster) follows the nodes, with no GFSPLIT_NODE;
#   - the head resolves the nodes' names, each node its peers', and the
#     host's /etc/hosts is untouched;
#   - addresses outside 198.18.0.0/15 are refused;
#   - `down` leaves no namespace, link, mount or directory behind.
. "$(dirname "$0")/../lib.sh"

hosts_sum=$(cksum </etc/hosts)
need_cluster 3 --no-gfarm

# ---- MPI across the nodes
if crun -ppn 2 "$UNIT/mpi_nodes" >"$TMPD/nodes.out" 2>"$TMPD/nodes.err"; then
	ok "mpi_nodes on 3 nodes x 2 ranks"
else
	not_ok "mpi_nodes on 3 nodes x 2 ranks" "$(tail -n 15 "$TMPD/nodes.err")"
fi
grep -qx "data ok" "$TMPD/nodes.out" && ok "MPI_Sendrecv and MPI_Get bytes right between nodes" ||
	not_ok "MPI_Sendrecv and MPI_Get bytes right between nodes" "$(cat "$TMPD/nodes.out" "$TMPD/nodes.err")"
if nodes_placed "$TMPD/nodes.out" >"$TMPD/py.out" 2>&1; then
	ok "processor and host names are the nodes'; MPI_COMM_TYPE_SHARED and /dev/shm per node"
else not_ok "processor and host names are the nodes'; MPI_COMM_TYPE_SHARED and /dev/shm per node" \
	"$(cat "$TMPD/py.out" "$TMPD/nodes.out")"; fi

# ---- separate hosts: identities, processes
ids=""
for k in 1 2 3; do
	ids="$ids $(cexec "$k" cat /proc/sys/kernel/random/boot_id /etc/machine-id | tr '\n' ' ')"
done
host_ids="$(cat /proc/sys/kernel/random/boot_id /etc/machine-id | tr '\n' ' ')"
if [ "$(echo "$ids" "$host_ids" | tr ' ' '\n' | sort -u | grep -c .)" -eq 8 ]; then
	ok "each node has a boot_id and a machine-id of its own, not the host's"
else
	not_ok "each node has a boot_id and a machine-id of its own, not the host's" "nodes: $ids host: $host_ids"
fi
cexec 2 sleep 61 </dev/null >/dev/null 2>&1 &
spid=$!
sleep 0.5
seen2=$(cexec 2 pgrep -x -f "sleep 61")
seen1=$(cexec 1 pgrep -x -f "sleep 61")
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
if [ -n "$seen2" ] && [ -z "$seen1" ] && cexec 1 sh -c '[ "$(ls -d /proc/[0-9]* | wc -l)" -lt 10 ]'; then
	ok "a node's commands see each other's processes (pid $seen2 on node 2); other nodes see none"
else
	not_ok "a node's commands see each other's processes; other nodes see none" \
		"node 2 sees '$seen2', node 1 sees '$seen1': $(cexec 1 ps -e 2>&1 | head -20)"
fi

# ---- MPI's bytes: between nodes over the links, within a node not
# link K PHASE MODE FROM TO [RUN-OPTS]: mpi_nodes MODE 64 FROM TO, 2 ranks
# a node on nodes 1 and 2; sets LOUT (its stdout) and S1 S2 (what nodes 1
# and 2 sent on their links meanwhile)
link() {
	local mode=$1 from=$2 to=$3 b1 b2
	shift 3
	b1=$("$CLUSTER" sent 1)
	b2=$("$CLUSTER" sent 2)
	LOUT=$(crun -ppn 2 -nodes 2 "$@" "$UNIT/mpi_nodes" "$mode" "${LINK_MB:-64}" "$from" "$to" 2>"$TMPD/link.err")
	LRC=$?
	S1=$(($("$CLUSTER" sent 1) - b1))
	S2=$(($("$CLUSTER" sent 2) - b2))
}
MB64=$((64 << 20))
for mode in send get; do
	# ranks 0 1 on node 1, 2 3 on node 2; a get's bytes flow from FROM
	link "$mode" 0 2
	if [ "$LRC" -eq 0 ] && grep -qx "data ok" <<<"$LOUT" && ((S1 >= MB64 && S2 < MB64 / 8)); then
		ok "$mode: 64 MiB from a rank on node 1 to one on node 2 cross node 1's link ($S1 bytes)"
	else
		not_ok "$mode: 64 MiB from a rank on node 1 to one on node 2 cross node 1's link" \
			"exit $LRC, node 1 sent $S1, node 2 sent $S2: $LOUT $(tail -n 5 "$TMPD/link.err")"
	fi
	link "$mode" 1 0
	if [ "$LRC" -eq 0 ] && grep -qx "data ok" <<<"$LOUT" && ((S1 < MB64 / 16 && S2 < MB64 / 16)); then
		ok "$mode: 64 MiB between two ranks of node 1 stay off the links ($S1 bytes sent)"
	else
		not_ok "$mode: 64 MiB between two ranks of node 1 stay off the links" \
			"exit $LRC, node 1 sent $S1, node 2 sent $S2: $LOUT $(tail -n 5 "$TMPD/link.err")"
	fi
done
# a shaped link: every byte through node 1's shaper (tbf on its eth0),
# which held some back, and no faster than its rate (100 Mbit/s); 16 MiB,
# 1.3 s at that rate, are 64 times the shaper's burst (256 KiB)
"$CLUSTER" shape 100mbit 2>"$TMPD/shape.err" || not_ok "shape 100mbit" "$(cat "$TMPD/shape.err")"
tbf_sent() { cexec 1 tc -s qdisc show dev eth0 | awk '/qdisc tbf/ {f=1} f && /Sent/ {print $2; exit}'; }
tbf_over() { cexec 1 tc -s qdisc show dev eth0 | awk '/qdisc tbf/ {f=1} f && /overlimits/ {for (i=1;i<NF;i++) if ($i=="overlimits") print $(i+1); exit}'; }
q0=$(tbf_sent)
o0=$(tbf_over)
LINK_MB=16 link send 0 2
q=$(($(tbf_sent) - q0))
o=$(($(tbf_over) - o0))
secs=$(sed -n 's/^moved [0-9]* seconds //p' <<<"$LOUT")
MB16=$((16 << 20))
if [ "$LRC" -eq 0 ] && grep -qx "data ok" <<<"$LOUT" && ((q >= MB16 && o > 0)) &&
    python3 -c "import sys; sys.exit(0 if $MB16 * 8 / float('$secs') <= 100e6 * 1.1 else 1)"; then
	ok "shaped: 16 MiB through node 1's shaper ($q bytes, $o times held back), $secs s (100 Mbit/s: >= 1.3 s)"
else
	not_ok "shaped: 16 MiB through node 1's shaper, no faster than 100 Mbit/s" \
		"exit $LRC, shaper sent $q, overlimits $o, $secs s: $LOUT $(tail -n 5 "$TMPD/link.err")"
fi
"$CLUSTER" unshape

# ---- node-local storage
bad=""
for k in 1 2 3; do
	cexec "$k" sh -c "echo n$k > /tmp/who && echo n$k > /dev/shm/who && echo n$k > $CLUSTER_LOCAL/who && echo n$k > $CW/who$k" ||
		bad="$bad write on node $k failed;"
done
for k in 1 2 3; do
	for f in /tmp/who /dev/shm/who "$CLUSTER_LOCAL/who"; do
		got=$(cexec "$k" cat "$f" 2>&1)
		[ "$got" = "n$k" ] || bad="$bad node $k reads '$got' from $f;"
	done
	[ "$(cat "$CW/who$k" 2>&1)" = "n$k" ] || bad="$bad $CW/who$k not shared;"
	[ "$(cat "$CLUSTER_DIR/node$k/local/who" 2>&1)" = "n$k" ] || bad="$bad node $k local dir not in its place;"
done
[ -e /tmp/who ] || [ -e /dev/shm/who ] && bad="$bad the host sees a node's file in /tmp or /dev/shm;"
[ -z "$bad" ] && ok "each node's /tmp, /dev/shm and local dir are its own; the shared dir is everyone's" ||
	not_ok "each node's /tmp, /dev/shm and local dir are its own; the shared dir is everyone's" "$bad"

# ---- names
h1=$(node_host 1)
h3=$(node_host 3)
check "node 1 resolves node 3's name" cexec 1 getent hosts "$h3"
check "the head resolves node 1's name" cexec head getent hosts "$h1"
[ "$(cksum </etc/hosts)" = "$hosts_sum" ] && ok "the host's /etc/hosts is untouched" ||
	not_ok "the host's /etc/hosts is untouched"

# ---- gfsplit's node identity: parts of a split file by writer's node
make_file "$CW/src" $((6 * 65536)) 3
if crun -ppn 2 "$BIN/pcp-split" -b 64k "$CW/src" "$CW/sp" >"$TMPD/split.out" 2>&1 &&
    "$BIN/stat-layout" --json "$CW/sp" >"$TMPD/st.json" 2>"$TMPD/st.err"; then
	ok "pcp-split on 3 nodes x 2 ranks; stat-layout reads it"
	if python3 - "$TMPD/st.json" "$GFSPLIT_CLUSTER" >"$TMPD/py.out" 2>&1 <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
name = sys.argv[2]
text = json.dumps(j)
for k in (1, 2, 3):
    assert "%s-n%d" % (name, k) in text, "node %d not in the layout" % k
assert "localhost" not in text
print("ok")
EOF
	then ok "the split file's layout names the 3 real nodes"
	else not_ok "the split file's layout names the 3 real nodes" "$(cat "$TMPD/py.out")" "$(head -c 1500 "$TMPD/st.json")"; fi
	check "gfsplit-merge on node 2 gives the source back" cexec 2 "$BIN/gfsplit-merge" "$CW/sp" "$CW/back"
	same_bytes "merged bytes equal the source" "$CW/src" "$CW/back"
else
	not_ok "pcp-split on 3 nodes x 2 ranks; stat-layout reads it" "$(tail -n 10 "$TMPD/split.out" "$TMPD/st.err")"
fi

# ---- addresses: the benchmarking range only
for net in 10.9.9 192.168.7 172.16.1 8.8.8 198.20.1 198.18.256; do
	expect_exit "GFSPLIT_CLUSTER_NET=$net is refused" 1 env GFSPLIT_CLUSTER=gfx GFSPLIT_CLUSTER_NET=$net "$CLUSTER" up 1
	output_has "  naming the rule" "must be a /24 in 198.18.0.0/15"
done
ip -4 -o addr show | grep -Eq " inet (10|192\.168|172\.(1[6-9]|2[0-9]|3[01]))\..* $GFSPLIT_CLUSTER" &&
	not_ok "no private address on the cluster's links" "$(ip -4 -o addr show | grep "$GFSPLIT_CLUSTER")" ||
	ok "no private address on the cluster's links"

# ---- down
"$CLUSTER" down 2>"$TMPD/down.err"
left=$(ip netns list 2>/dev/null | grep -c "^$GFSPLIT_CLUSTER-n")
links=$(ip -o link show 2>/dev/null | grep -c ": $GFSPLIT_CLUSTER")
mnts=$(grep -c "$CLUSTER_DIR" /proc/mounts)
if [ "$left" -eq 0 ] && [ "$links" -eq 0 ] && [ "$mnts" -eq 0 ] && [ ! -e "$CLUSTER_DIR" ] &&
    [ ! -e "/etc/netns/$GFSPLIT_CLUSTER-n1" ]; then
	ok "down removes namespaces, links, mounts and the state dir"
else
	not_ok "down removes namespaces, links, mounts and the state dir" \
		"netns $left links $links mounts $mnts dir $(ls -d "$CLUSTER_DIR" 2>&1)" "$(cat "$TMPD/down.err")"
fi
finish
