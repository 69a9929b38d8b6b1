#!/bin/bash
# bench/run.sh - every benchmark of the suite, in one run (make bench).
# Not tests: they print figures and ratios against baselines measured here.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
BENCHBIN=${BENCHBIN:-"$TOP/build/release/bench"}
OUTDIR=${BENCH_OUT:-"$TOP/bench/out"}
mkdir -p "$OUTDIR"

echo "== mapping: lookups per second by arr_len, and against MPI-IO/Gfarm's linear scan"
"$BENCHBIN/map_bench" | tee "$OUTDIR/map_bench.json"

echo "== round trip: pcp-split and gfsplit-merge against dd bs=4M"
python3 "$TOP/bench/roundtrip.py" --size "${BENCH_SIZE:-1G}" --ranks "${BENCH_RANKS:-2,4}" \
	--reps "${BENCH_REPS:-5}" --dir "$OUTDIR" --json "$OUTDIR/roundtrip.json"

echo "== Gfarm: N-N split-write vs N-1 on an emulated cluster (root, network namespaces)"
bash "$TOP/bench/gfarm_scale.sh"

echo "== the emulated cluster: stage-in and the cache's concentrated read on 1, 2, 4 nodes (root)"
bash "$TOP/bench/cluster.sh"

echo "== gfsplit-mount: a split file read as one file (dd cold and warm, 4 KiB random) against the ordinary file (root, /dev/fuse)"
python3 "$TOP/bench/mount.py" --size "${BENCH_MOUNT_SIZE:-1G}" --reps "${BENCH_REPS:-5}" --dir "$OUTDIR"
