#!/bin/bash
# bench/cluster.sh - the multi-node figures on the emulated cluster
# (tests/cluster.sh): ranks on nodes of their own, every link shaped to
# RATE each way, the shared data on Gfarm on a storage node of its own
# (node S = max K + 1), so every byte read from shared storage crosses the
# storage node's link, where it is counted.
#
#   bash bench/cluster.sh [stage] [cache] [split]   (default: all)
#
# stage   stage-in of one BIG file and of SMALL_N files of SMALL_SIZE from
#         gfarm:///data/ to the node-local directory of K nodes (1 rank a
#         node): read from Gfarm once, forwarded node to node; against
#         every node reading the data itself at the same time (gfexport of
#         the file / gfpcopy of the directory, Gfarm's own tools).  Target:
#         stage-in's time grows no faster than log K.
# cache   the cooperative cache paper's concentrated read: every rank (1 a node) reads
#         the whole BIG file in order; the cooperative cache
#         (bench/cache_bench seq: its "auto" transport, which is tcp across
#         these nodes, and --transport mpi) against plain Gfarm reads
#         (--plain).
#         Targets: storage bytes <= groups x file size; aggregate rate
#         >= 0.8 x K x one node's.
# split   MPI-IO/Gfarm's headline (Kimura and Tatebe, figures 3 and 8): K ranks, 1 a node,
#         write SPLIT_SIZE each: N-1 into one Gfarm file on node 1
#         (bench/gfarm_n1 --mode=n1, the Gfarm C API) against split-write
#         (pcp-split, each part on its writer's own gfsd) and the raw N-N
#         line (gfarm_n1 --mode=nn, file r on rank r's node).  Target:
#         split-write >= 0.8 x K x its one-node rate while N-1 stays flat.
#         Every node's gfsd spools to this machine's one disk, so each
#         node gets a disk of its own for this mode: its gfsd serves at
#         most DISK, reads and writes together (tests/cluster.sh disk).
# For K in NODES, medians of REPS runs, contenders in an order that
# rotates with each repetition; the page cache is dropped before every run
# (the spool is on this machine's disk).  Bytes on the storage node's link
# are read from its veth.  Human lines on stdout, JSON in
# $BENCH_OUT/cluster.json.  Needs root (SKIP otherwise).
#
# Tunables: BENCH_CL_NODES ("1 2 4"), BENCH_CL_RATE (1gbit), BENCH_CL_DISK
# (400mbit, split only), BENCH_CL_SPLIT_SIZE (256M a rank), BENCH_CL_REPS
# (3), BENCH_CL_BIG (1G), BENCH_CL_SMALL_N (2000), BENCH_CL_SMALL_SIZE
# (128K), BENCH_CL_QUICK=1 (tiny sizes, one repetition: a smoke test).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
BIN=${BIN:-$TOP/bin}
BENCHBIN=${BENCHBIN:-$TOP/build/release/bench}
OUT=${BENCH_OUT:-$HERE/out}
CL=$TOP/tests/cluster.sh
MODES=${*:-stage cache split}
NODES=${BENCH_CL_NODES:-1 2 4}
RATE=${BENCH_CL_RATE:-1gbit}
DISK=${BENCH_CL_DISK:-400mbit}
REPS=${BENCH_CL_REPS:-3}
BIG=${BENCH_CL_BIG:-1G}
SMALL_N=${BENCH_CL_SMALL_N:-2000}
SMALL_SIZE=${BENCH_CL_SMALL_SIZE:-128K}
SPLIT_SIZE=${BENCH_CL_SPLIT_SIZE:-256M}
if [ "${BENCH_CL_QUICK:-0}" = 1 ]; then
	BIG=${BENCH_CL_BIG:-16M} SMALL_N=${BENCH_CL_SMALL_N:-40} REPS=1 NODES=${BENCH_CL_NODES:-1 2}
	SPLIT_SIZE=${BENCH_CL_SPLIT_SIZE:-8M}
fi
LIMIT=600
export GFSPLIT_CLUSTER=gfb GFSPLIT_CLUSTER_NET=198.18.3 GFSPLIT_CLUSTER_PORT=20691
unset GFSPLIT_NODE GFSPLIT_FAULT GFSPLIT_PROGRESS
say() { echo "cluster: $*"; }
for m in $MODES; do
	case $m in stage | cache | split) ;; *) echo "usage: bench/cluster.sh [stage] [cache] [split]" >&2; exit 2 ;; esac
done
want() { case " $MODES " in *" $1 "*) return 0 ;; esac; return 1; }
# shellcheck source=bench/lib.sh
. "$HERE/lib.sh"		# size_bytes, order

MAXK=0
for k in $NODES; do ((k > MAXK)) && MAXK=$k; done
S=$((MAXK + 1))
"$CL" up "$S" --rate "$RATE" --disk "$DISK" 2>"$OUT.up.err" || {
	rc=$?
	[ $rc = 77 ] && { echo "SKIP: cluster: $(sed -n 's/^SKIP: cluster: //p' "$OUT.up.err")"; rm -f "$OUT.up.err"; exit 0; }
	cat "$OUT.up.err" >&2; exit 1
}
rm -f "$OUT.up.err"
trap '"$CL" down' EXIT
"$CL" disk off || exit 1	# the split mode's alone
eval "$("$CL" env)"
mkdir -p "$OUT"
W=$CLUSTER_SHARED/bench
mkdir -p "$W"
REC=$W/records.jsonl
: >"$REC"
H() { "$CL" exec head "$@"; }
SNODE=$GFSPLIT_CLUSTER-n$S
sent_s() { "$CL" sent "$S"; }	# bytes the storage node sent over its link
drop() { sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; }

# ---- the data, on the storage node's gfsd
say "up: $S nodes ($MAXK compute + storage node $SNODE), $RATE per link and way"
H gfmkdir -p /data || exit 1
head -c "$(size_bytes "$BIG")" /dev/urandom >"$W/big"
"$CL" exec "$S" gfreg -h "$SNODE" "$W/big" /data/big || { say "gfreg failed"; exit 1; }
mkdir -p "$W/small"
for ((i = 0; i < SMALL_N; i++)); do head -c "$(size_bytes "$SMALL_SIZE")" /dev/urandom >"$W/small/f$i"; done
echo "$SNODE" >"$W/hostfile"
"$CL" exec "$S" gfpcopy -q -H "$W/hostfile" "file://$W/small" gfarm:///data/ ||
	{ say "gfpcopy of the small files failed"; exit 1; }
say "data: $BIG and $SMALL_N x $SMALL_SIZE on $SNODE"
if want split; then
	H gfmkdir -p /w || exit 1
	for k in $NODES; do
		head -c $((k * $(size_bytes "$SPLIT_SIZE"))) /dev/urandom >"$W/src$k"
	done
fi

# rec NAME DATA K REP CMD..: a timed run, bounded, after dropping caches;
# one JSON record (seconds, storage-link bytes, the command's last JSON line)
rec() {
	local name=$1 data=$2 k=$3 rep=$4 t0 t1 b0 b1 rc js
	shift 4
	drop
	b0=$(sent_s)
	t0=$(date +%s.%N)
	timeout -k 5 $LIMIT "$@" >"$W/cmd.out" 2>"$W/cmd.err"
	rc=$?
	t1=$(date +%s.%N)
	b1=$(sent_s)
	js=$(grep '^{' "$W/cmd.out" | tail -n 1)
	((rc == 0)) || { say "FAILED ($name $data K=$k rep $rep, exit $rc)"; tail -n 5 "$W/cmd.err" | sed 's/^/    /'; }
	printf '{"name":"%s","data":"%s","nodes":%d,"rep":%d,"rc":%d,"seconds":%s,"storage_link_bytes":%d,"json":%s}\n' \
		"$name" "$data" "$k" "$rep" "$rc" "$(awk "BEGIN{print $t1 - $t0}")" $((b1 - b0)) "${js:-null}" >>"$REC"
}
clear_local() { local i; for ((i = 1; i <= MAXK; i++)); do "$CL" exec "$i" rm -rf "$CLUSTER_LOCAL/in" "$CLUSTER_LOCAL/each"; done; }
# every one of the first K nodes reads the data itself, all at the same time
each_node() {	# K DATA
	local k=$1 i rc=0 pids=()
	for ((i = 1; i <= k; i++)); do
		if [ "$2" = big ]; then
			"$CL" exec "$i" sh -c "mkdir -p $CLUSTER_LOCAL/each && gfexport /data/big > $CLUSTER_LOCAL/each/big" &
		else
			"$CL" exec "$i" sh -c "mkdir -p $CLUSTER_LOCAL/each && gfpcopy -q gfarm:///data/small file://$CLUSTER_LOCAL/each/" &
		fi
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	return $rc
}
export -f each_node
export CL CLUSTER_LOCAL
stage_one() {	# NAME DATA K REP
	clear_local
	if [ "$1" = stage-in ]; then
		rec "$@" "$CL" run -nodes "$3" -ppn 1 "$BIN/stage-in" --json -q --chunk-size=4M "gfarm:///data/$2" "$CLUSTER_LOCAL/in"
	else
		rec "$@" bash -c 'each_node "$@"' each_node "$3" "$2"
	fi
}
cache_one() {	# NAME DATA K REP
	local how=()
	case $1 in
	plain) how=(--plain) ;;
	cache-mpi) how=(--transport mpi) ;;
	esac
	rec "$@" "$CL" run -nodes "$3" -ppn 1 "$BENCHBIN/cache_bench" seq gfarm:///data/big "${how[@]}" \
		--block 4M --cache 1G
}

split_one() {	# NAME DATA K REP
	local k=$3 hosts='' i total
	total=$((k * $(size_bytes "$SPLIT_SIZE")))
	for ((i = 1; i <= k; i++)); do hosts="$hosts${hosts:+,}$GFSPLIT_CLUSTER-n$i"; done
	H gfrm -rf /w/out >/dev/null 2>&1
	case $1 in
	n1) rec "$@" "$CL" run -nodes "$k" -ppn 1 "$BENCHBIN/gfarm_n1" --mode=n1 \
		--hosts="$GFSPLIT_CLUSTER-n1" "$total" /w/out ;;
	nn) rec "$@" "$CL" run -nodes "$k" -ppn 1 "$BENCHBIN/gfarm_n1" --mode=nn \
		--hosts="$hosts" "$total" /w/out ;;
	pcp-split) rec "$@" "$CL" run -nodes "$k" -ppn 1 "$BIN/pcp-split" --json -q \
		"$W/src$k" gfarm:///w/out ;;
	esac
	H gfrm -rf "/w/out" /w/out.0 /w/out.1 /w/out.2 /w/out.3 >/dev/null 2>&1
}

for ((rep = 1; rep <= REPS; rep++)); do
	for k in $NODES; do
		if want stage; then
			for data in big small; do
				for n in $(order "$rep" stage-in each-node); do stage_one "$n" "$data" "$k" "$rep"; done
			done
		fi
		if want cache; then
			for n in $(order "$rep" cache cache-mpi plain); do cache_one "$n" big "$k" "$rep"; done
		fi
		if want split; then
			"$CL" disk "$DISK" || exit 1
			for n in $(order "$rep" n1 pcp-split nn); do split_one "$n" write "$k" "$rep"; done
			"$CL" disk off || exit 1
		fi
	done
	say "repetition $rep of $REPS done"
done
clear_local

python3 - "$REC" "$OUT/cluster.json" "$(size_bytes "$BIG")" "$((SMALL_N * $(size_bytes "$SMALL_SIZE")))" "$RATE" "$NODES" "$(size_bytes "$SPLIT_SIZE")" "$DISK" <<'EOF'
import json, math, statistics, sys
rec, out, big, small, rate, nodes, per, disk = sys.argv[1:9]
per = int(per)
size = {"big": int(big), "small": int(small)}
nodes = [int(k) for k in nodes.split()]
rs = [json.loads(l) for l in open(rec)]
def med(xs):
    return statistics.median(xs) if xs else float("nan")
def runs(name, data, k):
    return [r for r in rs if r["name"] == name and r["data"] == data and r["nodes"] == k and r["rc"] == 0]
res = {"rate": rate, "nodes": nodes, "stage": [], "cache": []}
if any(r["name"] in ("stage-in", "each-node") for r in rs):
    print("stage-in vs every node reading Gfarm itself (gfexport / gfpcopy), %s links; medians" % rate)
    print("%-6s %3s %9s %11s %6s %10s %12s %8s" % ("data", "K", "stage s", "each-node s", "ratio", "stage/K=1", "log2(K)+1", "link/sz"))
    for data in ("big", "small"):
        base = None
        for k in nodes:
            st, ea = runs("stage-in", data, k), runs("each-node", data, k)
            s, e = med([r["seconds"] for r in st]), med([r["seconds"] for r in ea])
            lk = med([r["storage_link_bytes"] / size[data] for r in st])
            le = med([r["storage_link_bytes"] / size[data] for r in ea])
            if base is None:
                base = s
            row = {"data": data, "nodes": k, "stage_in_s": s, "each_node_s": e, "ratio": e / s,
                   "stage_vs_k1": s / base, "log_bound": math.log2(k) + 1,
                   "storage_link_per_size_stage": lk, "storage_link_per_size_each": le}
            res["stage"].append(row)
            print("%-6s %3d %9.2f %11.2f %6.2f %10.2f %12.2f %4.2f/%.2f" % (data, k, s, e, e / s, s / base, math.log2(k) + 1, lk, le))
if any(r["name"] in ("cache", "plain") for r in rs):
    print("concentrated read of one file, 1 rank a node: cache (tcp; mpi) vs plain Gfarm reads; medians")
    print("%3s %12s %9s %12s %9s %12s %8s %10s" % ("K", "cache MiB/s", "cache/K1", "c-mpi MiB/s", "mpi/K1", "plain MiB/s", "0.8*K", "link/sz"))
    base = {}
    for k in nodes:
        row = {"nodes": k, "target": 0.8 * k}
        for name, key in (("cache", "cache"), ("cache-mpi", "cache_mpi"), ("plain", "plain")):
            rr = runs(name, "big", k)
            row[key + "_mib_s"] = med([r["json"]["mib_s"] for r in rr if r["json"]])
            row["storage_link_per_size_" + key] = med([r["storage_link_bytes"] / size["big"] for r in rr])
            row["transport_" + key] = sorted({r["json"].get("transport", "") for r in rr if r["json"]})
            base.setdefault(key, row[key + "_mib_s"])
            row[key + "_vs_k1"] = row[key + "_mib_s"] / base[key]
        res["cache"].append(row)
        print("%3d %12.1f %9.2f %12.1f %9.2f %12.1f %8.2f %4.2f/%.2f/%.2f" % (k, row["cache_mib_s"], row["cache_vs_k1"],
              row["cache_mpi_mib_s"], row["cache_mpi_vs_k1"], row["plain_mib_s"], 0.8 * k,
              row["storage_link_per_size_cache"], row["storage_link_per_size_cache_mpi"],
              row["storage_link_per_size_plain"]))
if any(r["name"] in ("n1", "nn", "pcp-split") for r in rs):
    print("writes of %d MiB a rank, 1 rank a node, a %s disk a node: N-1 into one file on node 1 vs split-write; medians" % (per >> 20, disk))
    res["disk"] = disk
    print("%3s %10s %10s %14s %10s %10s %8s" % ("K", "N-1 MiB/s", "vs K=1", "pcp-split MiB/s", "vs K=1", "N-N MiB/s", "0.8*K"))
    res["split"] = []
    base = {}
    for k in nodes:
        row = {"nodes": k, "target": 0.8 * k}
        for name in ("n1", "pcp-split", "nn"):
            xs = [k * per / 2**20 / r["json"]["seconds"] for r in runs(name, "write", k) if r["json"]]
            row[name] = med(xs)
            base.setdefault(name, row[name])
            row[name + "_vs_k1"] = row[name] / base[name]
        res["split"].append(row)
        print("%3d %10.1f %10.2f %14.1f %10.2f %10.1f %8.2f" % (k, row["n1"], row["n1_vs_k1"], row["pcp-split"],
              row["pcp-split_vs_k1"], row["nn"], 0.8 * k))
res["runs"] = rs
res["failed"] = sum(r["rc"] != 0 for r in rs)
json.dump(res, open(out, "w"), indent=1)
print("wrote", out)
sys.exit(1 if res["failed"] else 0)
EOF
