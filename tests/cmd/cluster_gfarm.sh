#!/bin/bash
# cluster_gfarm.sh - split-write on a Gfarm whose gfsd really are on the
# ranks' nodes: the emulated cluster (tests/cluster.sh), 3 nodes of 2 ranks,
# a gfsd per node under the node's host name, no GFSPLIT_NODE and no
# --hosts or GFSPLIT_GFARM_HOSTS (the node is found from MPI and the part
# placed on the gfsd of the writer's own host name):
#   - pcp-split: every part on its writer's node, one location file per
#     node on that node, all read back from Gfarm (stat-layout, gfwhere);
#   - gfsplit-merge from another node and from every node returns the
#     source byte for byte;
#   - an unmodified MPI-IO program (tests/helpers/mpi_iopat, IOR's segmented
#     pattern through a view) under the preload writes the same bytes as on
#     plain MPICH, each part on its writer's node; read back with other
#     ranks on other nodes through a cyclic view;
#   - a node's emulated disk (tests/cluster.sh disk): every byte written to
#     or read from a node's gfsd, by its own ranks or another node's,
#     passes it (its counters), and "disk off" removes it.
. "$(dirname "$0")/../lib.sh"
need_gfarm
need_cluster 3
. "$TOP/tests/mpiio_lib.sh"
PROG=$UNIT/mpi_iopat
cexec head gfmkdir /t || not_ok "gfmkdir /t"
J=$TMPD/st.json

# placed DESC GFPATH NPROCS PPN: stat-layout --json says every rank's part
# is on the node of the rank (hydra fills each node in turn), and gfwhere
# puts loc.k on node k+1
placed() {
	if ! cexec head "$BIN/stat-layout" --json "gfarm://$2" >"$J" 2>"$TMPD/st.err"; then
		not_ok "$1" "stat-layout: $(tail -n 3 "$TMPD/st.err")"
		return
	fi
	got=$(json_get "$J" '" ".join("%s:%s" % (r["replicas"][0], r["on_writer_node"]) for r in j["parts"])' 2>&1)
	want=""
	for ((r = 0; r < $3; r++)); do want="$want${want:+ }$(node_host $((r / $4 + 1))):True"; done
	bad=""
	[ "$got" = "$want" ] || bad="parts: got [$got], want [$want];"
	for ((k = 0; k < $3 / $4; k++)); do
		w=$(cexec head gfwhere "$2/loc.$k" 2>&1 | tr -s ' \n' ' ')
		case " $w " in *" $(node_host $((k + 1))) "*) ;; *) bad="$bad loc.$k on [$w];" ;; esac
	done
	[ -z "$bad" ] && ok "$1" || not_ok "$1" "$bad"
}

make_file "$CW/src" $((3 * 1048576 + 4321)) 11
check "pcp-split on 3 nodes x 2 ranks to gfarm:///t/a.split, no --hosts" \
	crun -ppn 2 "$BIN/pcp-split" -b 256k "$CW/src" gfarm:///t/a.split
placed "  each part on its writer's node, loc.k on node k (read from Gfarm)" /t/a.split 6 2
check "  stat-layout --check" cexec head "$BIN/stat-layout" --check gfarm:///t/a.split
check "gfsplit-merge on node 3 alone" cexec 3 "$BIN/gfsplit-merge" gfarm:///t/a.split "$CW/back1"
same_bytes "  gives the source back" "$CW/src" "$CW/back1"
check "gfsplit-merge with a rank on every node" crun "$BIN/gfsplit-merge" gfarm:///t/a.split "$CW/back3"
same_bytes "  gives the source back" "$CW/src" "$CW/back3"

# ---- an unmodified MPI-IO program under the preload
if [ -f "$PRELOAD" ]; then
	opts="--block=65536 --transfer=16384 --segments=5"
	# shellcheck disable=SC2086 # options split on purpose
	crun_iopat_pair "$CW/plain" /t/f "3 nodes x 2 ranks" $opts
	placed "  each part on its writer's node, loc.k on node k" /t/f 6 2
	check "  merged on node 2" cexec 2 "$BIN/gfsplit-merge" gfarm:///t/f "$CW/merged"
	same_bytes "  the same bytes as plain MPICH wrote" "$CW/plain" "$CW/merged"
	# shellcheck disable=SC2086
	check "  read back through the preload by 3 ranks on 3 nodes (cyclic view)" \
		crun env LD_PRELOAD="$PRE" "$PROG" cyclic read gfarm:///t/f $opts
else
	skip "MPI-IO through the preload on the cluster" "no $PRELOAD (make builds it)"
fi

# ---- a node's disk: bytes through node K's ifb (tc's counter)
disk_sent() { cexec "$1" tc -s qdisc show dev disk0 2>/dev/null | awk '/Sent/ {print $2; exit}'; }
# grew DESC MIN: every node's disk counter grew by MIN bytes or more since d0
grew() {
	local k d bad=""
	for k in 1 2 3; do
		d=$(disk_sent $k)
		[ -n "$d" ] && ((d - d0[k] >= $2)) || bad="$bad node $k: ${d:-no disk} - ${d0[k]};"
	done
	[ -z "$bad" ] && ok "$1" || not_ok "$1" "$bad"
}
mark() { local k; for k in 1 2 3; do d0[k]=$(disk_sent $k); done; }
declare -a d0
if "$CLUSTER" disk 2gbit >"$TMPD/disk.out" 2>&1; then
	ok "cluster.sh disk 2gbit: a disk of each node's own"
	mark
	# 6 MiB in 256 KiB blocks: 4 blocks a rank, 2 MiB a node
	make_file "$CW/dsrc" $((6 * 1048576)) 12
	check "pcp-split on 3 nodes x 2 ranks through the disks" \
		crun -ppn 2 "$BIN/pcp-split" -b 256k "$CW/dsrc" gfarm:///t/d.split
	grew "  each node's own 2 MiB went through its disk" $((2 * 1048576))
	mark
	check "gfsplit-merge on node 3 alone" cexec 3 "$BIN/gfsplit-merge" gfarm:///t/d.split "$CW/dback"
	same_bytes "  gives the source back" "$CW/dsrc" "$CW/dback"
	grew "  every node's part was read through its disk (node 3's too)" $((2 * 1048576))
	check "cluster.sh disk off" "$CLUSTER" disk off
	check_fails "  node 1 has no disk device any more" cexec 1 ip link show disk0
	check_fails "  clients open local spools directly again" \
		grep -q direct_local_access "$GFARM_CONFIG_FILE"
else
	not_ok "cluster.sh disk 2gbit: a disk of each node's own" "$(tail -n 5 "$TMPD/disk.out")"
fi
finish
