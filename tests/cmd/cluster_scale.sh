#!/bin/bash
# cluster_scale.sh - 64 ranks on 8 emulated nodes (tests/cluster.sh, 8
# ranks a node on this machine's few cores: oversubscribed), MPI's bytes
# between nodes over the links.  Run by `make check-long` (GFSPLIT_LONG=1);
# `make check` says SKIP.
#   - pcp-split of a file into a split file on Gfarm: 64 parts, one
#     location file a node (8), each part on its writer's gfsd; stat-layout
#     --check passes; gfsplit-merge with 64 ranks gives the source back;
#   - stage-in of a tree (a large file and many small ones) to every node's
#     local directory: every node has the whole tree, byte for byte, and
#     the source was read once;
#   - a cache job: every rank reads the whole file through the cooperative
#     cache (tcp transport), every byte right, each block read from
#     storage at most once per group.
. "$(dirname "$0")/../lib.sh"

if [ -z "${GFSPLIT_LONG:-}" ]; then
	skip "64 ranks on 8 nodes" "a long run: make check-long"
	finish
	exit 0
fi
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
need_gfarm
need_cluster 8
J=$TMPD/j.json
P="-ppn 8"

# ---- split and merge
make_file "$CW/src" $((64 * 1048576 + 4321)) 7
cexec head gfmkdir /s || not_ok "gfmkdir /s"
# shellcheck disable=SC2086
crun_ok "pcp-split with 64 ranks on 8 nodes into Gfarm" $P "$BIN/pcp-split" --json -b 256k \
	"$CW/src" gfarm:///s/out
check "  stat-layout --check" cexec head "$BIN/stat-layout" --check gfarm:///s/out
names=$(cexec head gfls /s/out 2>&1)
nloc=$(grep -c '^loc\.[0-9]*$' <<<"$names")
npart=$(grep -c '^part\.[0-9]*$' <<<"$names")
[ "$nloc" -eq 8 ] && [ "$npart" -eq 64 ] && ok "  8 location files (one a node) and 64 parts" ||
	not_ok "  8 location files (one a node) and 64 parts" "$nloc location files, $npart parts: $names"
bad=""
for k in 1 2 3 4 5 6 7 8; do
	# hydra fills each node in turn: ranks 8(k-1) .. 8k-1 are on node k
	r=$((8 * (k - 1) + 3))
	w=$(cexec head gfwhere "/s/out/part.$r" 2>&1)
	[ "$w" = "$(node_host "$k")" ] || bad="$bad part.$r on '$w';"
done
[ -z "$bad" ] && ok "  each part on its writer's gfsd" || not_ok "  each part on its writer's gfsd" "$bad"
# shellcheck disable=SC2086
crun_ok "gfsplit-merge with 64 ranks on 8 nodes" $P "$BIN/gfsplit-merge" --json gfarm:///s/out "$CW/back"
same_bytes "  merged bytes equal the source" "$CW/src" "$CW/back"

# ---- stage-in
S=$CW/tree
mkdir -p "$S/sub"
make_file "$S/big" $((24 * 1048576 + 77)) 8
for i in $(seq 1 300); do printf 'small file %d\n' "$i" >"$S/sub/f$i"; done
# shellcheck disable=SC2086
crun_ok "stage-in with 64 ranks to 8 nodes' local dirs" $P "$BIN/stage-in" --json --chunk-size=1M \
	"$S" "$CLUSTER_LOCAL/in"
for k in 1 2 3 4 5 6 7 8; do
	same_tree "  node $k has the whole tree" "$S" "$CLUSTER_DIR/node$k/local/in/tree"
done
json_true "  the source read once, forwarded to the other nodes" \
	'j["bytes_read"] == j["planned_bytes"] and j["bytes_forwarded"] >= 7 * j["planned_bytes"]'

# ---- a cache job
# shellcheck disable=SC2086
if crun $P "$UNIT/mpi_cache" seq "$CW/src" --block 1M --cache 16M --groups 2 --ref "$CW/src" \
    >"$TMPD/c.out" 2>"$TMPD/c.err" && grep '^{' "$TMPD/c.out" | tail -n 1 >"$J"; then
	ok "a cache job of 64 ranks on 8 nodes reads every byte right"
	json_true "  tcp transport, at most 2 storage reads of a block (2 groups)" \
		'j["transport"] == "tcp" and j["total"]["max_storage_reads_per_block"] <= 2'
else
	not_ok "a cache job of 64 ranks on 8 nodes reads every byte right" "$(tail -n 10 "$TMPD/c.err")"
fi
finish
