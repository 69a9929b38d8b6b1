#!/bin/bash
# cluster_merge.sh - gfsplit-merge reads the parts where they are, on the
# emulated cluster (tests/cluster.sh): 4 nodes with a gfsd each; split
# files of 8 parts written by 2 ranks a node, so nodes 1-4 hold parts
# 0-1, 2-3, 4-5 and 6-7.  Every merge writes DST to the cluster's shared
# storage (a parallel file system's place, which no node's link carries),
# so what crosses the nodes' links is part data a rank read from another
# node's gfsd, plus a little metadata and MPI control traffic.  The links'
# own counters (cluster.sh sent), summed over the 4 nodes, must stay
# within what has to move, the bytes of parts on a node where no merging
# rank runs, plus 5% and 1 MiB:
#   - 3 ranks on nodes 1-3: node 4's parts (8 MiB of 32) move, no other
#     (contiguous layout at the default and at small stripes; a cyclic
#     layout, every stripe interleaving all 8 parts, also with stripes
#     smaller than a part's checksum segment: no part of node 4 is read
#     twice to hash a segment);
#   - 4 nodes x 1 rank, and 3 nodes x 2 ranks: nothing else moves, and
#     --dry-run shares a node's bytes among its ranks;
#   - a file written through the MPI-IO library (runs): the copy moves
#     node 4's parts once; checked whole after the copy, each part is read
#     again by a rank on its node, so only node 4's parts cross twice;
# and every merged file is the source (or plain MPICH's file) byte for
# byte.  Before the merge read where the parts are, it dealt stripes
# round-robin: 3 ranks moved 24 MiB (6 of 8 parts) where 8 had to.
. "$(dirname "$0")/../lib.sh"
need_gfarm
need_cluster 4
. "$TOP/tests/mpiio_lib.sh"
# shellcheck disable=SC2034 # crun_iopat_pair (mpiio_lib.sh) runs it
PROG=$UNIT/mpi_iopat
MiB=1048576
SLACK_PCT=5
cexec head gfmkdir /m || not_ok "gfmkdir /m"

# sent_all: bytes the 4 nodes sent over their links, summed
sent_all() { "$CLUSTER" sent 1 2 3 4; }

# away GFPATH NODES..: bytes of the parts of GFPATH on no node of NODES
# (their replicas, as stat-layout --json reads them from Gfarm)
away() {
	local p=$1 hosts="" k
	shift
	for k in "$@"; do hosts="$hosts $(node_host "$k")"; done
	cexec head "$BIN/stat-layout" --json "gfarm://$p" >"$TMPD/st.json" 2>"$TMPD/st.err" ||
		{ echo "stat-layout: $(tail -n 3 "$TMPD/st.err")"; return 1; }
	json_get "$TMPD/st.json" 'sum(r["part_size"] for r in j["parts"] if not set(r["replicas"]) & set("'"$hosts"'".split()))'
}

# merged DESC SRC-CMP GFPATH "NODES" CRUN-ARGS.. -- MERGE-ARGS..: merge
# GFPATH into the shared dir with the given cluster run, compare with
# SRC-CMP, and check the bytes the links carried against those of the
# parts on no node of NODES (read $TIMES times: 1 unless set)
TIMES=1
merged() {
	local d=$1 want=$2 p=$3 nodes=$4 must b0 b1 moved max out=$CW/out.$RANDOM
	local run=()
	shift 4
	while [ $# -gt 0 ] && [ "$1" != -- ]; do run+=("$1"); shift; done
	shift
	# shellcheck disable=SC2086 # a list of node numbers
	if ! must=$(away "$p" $nodes); then
		not_ok "$d" "$must"
		return
	fi
	must=$((must * TIMES))
	b0=$(sent_all)
	if ! crun "${run[@]}" "$BIN/gfsplit-merge" "$@" "gfarm://$p" "$out" >"$TMPD/m.out" 2>&1; then
		not_ok "$d" "$(tail -n 5 "$TMPD/m.out")"
		return
	fi
	b1=$(sent_all)
	ok "$d"
	same_bytes "  the merged file is the source" "$want" "$out"
	rm -f "$out"
	moved=$((b1 - b0))
	max=$((must + must * SLACK_PCT / 100 + MiB))
	if ((moved <= max)); then
		ok "  links carried $moved bytes: parts away from the ranks $must (at most $max)"
	else
		not_ok "  links carried $moved bytes: parts away from the ranks $must (at most $max)" \
			"$((moved - must)) bytes more than had to move"
	fi
	# the parts away from the ranks did cross (the counters see them)
	((moved >= must)) && ok "  at least those $must bytes crossed" ||
		not_ok "  at least those $must bytes crossed" "$moved"
}

make_file "$CW/src" $((32 * MiB)) 34
check "pcp-split on 4 nodes x 2 ranks to gfarm:///m/a.split (contiguous, 4 MiB a part)" \
	crun -ppn 2 "$BIN/pcp-split" "$CW/src" gfarm:///m/a.split
got=$(away /m/a.split 1 2 3)
[ "$got" = $((8 * MiB)) ] && ok "  node 4 holds 8 MiB of it (parts 6 and 7)" ||
	not_ok "  node 4 holds 8 MiB of it (parts 6 and 7)" "$got"

merged "merge with 3 ranks on nodes 1-3" "$CW/src" /m/a.split "1 2 3" -n 3 -nodes 3 --
merged "merge with 3 ranks on nodes 1-3, 1 MiB stripes" "$CW/src" /m/a.split "1 2 3" \
	-n 3 -nodes 3 -- --stripe-size 1M
merged "merge with 4 nodes x 1 rank" "$CW/src" /m/a.split "1 2 3 4" -n 4 -- -v
n=$(grep -c "^gfsplit-merge: rank [0-3]: read 8.00 MiB from parts on this node, 0 B from other nodes'$" "$TMPD/m.out")
[ "$n" = 4 ] && ok "  -v: each rank read 8 MiB on its node, none from others" ||
	not_ok "  -v: each rank read 8 MiB on its node, none from others" "$(grep ': read ' "$TMPD/m.out")"
merged "merge with 3 nodes x 2 ranks, 2 MiB stripes" "$CW/src" /m/a.split "1 2 3" \
	-n 6 -ppn 2 -nodes 3 -- --stripe-size 2M

# --dry-run: node k's two ranks (2k-2, 2k-1) share its 8 MiB; node 4's
# 8 MiB go to whoever has least, 2 MiB stripes at a time
if crun -n 6 -ppn 2 -nodes 3 "$BIN/gfsplit-merge" --dry-run --json --stripe-size 2M \
	gfarm:///m/a.split "$CW/dry" >"$TMPD/dry.json" 2>"$TMPD/dry.err" &&
	python3 - "$TMPD/dry.json" >"$TMPD/py.out" 2>&1 <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
b = [p["bytes"] for p in j["plan"]]
M = 1 << 20
assert sum(b) == 32 * M, b
for r in range(6):
    assert 4 * M <= b[r] <= 8 * M, ("rank %d: %d bytes" % (r, b[r]), b)
print("ok")
EOF
then ok "  --dry-run: every rank gets 4 to 8 MiB of the 32"
else not_ok "  --dry-run: every rank gets 4 to 8 MiB of the 32" "$(cat "$TMPD/dry.err" "$TMPD/py.out" "$TMPD/dry.json" 2>/dev/null | tail -n 12)"; fi

check "pcp-split on 4 nodes x 2 ranks to gfarm:///m/c.split (cyclic, 256 KiB blocks)" \
	crun -ppn 2 "$BIN/pcp-split" -b 256k "$CW/src" gfarm:///m/c.split
merged "merge the cyclic file with 3 ranks on nodes 1-3" "$CW/src" /m/c.split "1 2 3" -n 3 -nodes 3 --
# stripes of 1 MiB hold 128 KiB of each part, an eighth of a checksum
# segment: a part of node 4 stays with the rank that started a segment
merged "  the same with 1 MiB stripes (a segment over 8 stripes)" "$CW/src" /m/c.split "1 2 3" \
	-n 3 -nodes 3 -- --stripe-size 1M
merged "  the same with 3 nodes x 2 ranks" "$CW/src" /m/c.split "1 2 3" \
	-n 6 -ppn 2 -nodes 3 -- --stripe-size 1M

# ---- a file the MPI-IO library wrote (runs): checked whole after the copy
if [ -f "$PRELOAD" ]; then
	crun_iopat_pair "$CW/plain" /m/f "4 nodes x 2 ranks" --block=1m --transfer=256k --segments=4
	merged "merge it with 3 ranks on nodes 1-3, --no-verify" "$CW/plain" /m/f "1 2 3" \
		-n 3 -nodes 3 -- --no-verify
	# the copy reads node 4's parts once, their check once more
	TIMES=2 merged "merge it with 3 ranks on nodes 1-3, parts checked whole" "$CW/plain" /m/f \
		"1 2 3" -n 3 -nodes 3 --
else
	skip "a file the MPI-IO library wrote" "no $PRELOAD (make builds it)"
fi
finish
