#!/bin/bash
# bench/stage.sh - stage-in against `cp -r` per node, and zstd on the way
# out, on POSIX storage of this machine:
#
#   bash bench/stage.sh [posix] [gfarm] [slurm]   (default: posix)
#
# Shared storage is a directory on this machine's disk, node-local storage
# a node's own; before every run the page cache is dropped (root), so the
# shared side is read from the disk.  Two data sets: one file of BIG bytes,
# and SMALL_N files of SMALL_SIZE bytes.  Contenders, for N ranks on M
# nodes x PPN ranks (the rows "M x PPN"):
#   stage-in   stage-in SRC DEST (every node gets every file, shared
#              storage read once, the rest forwarded rank to rank)
#   cp         `cp -r SRC DEST` once per node, the M copies at the same time
# The rows of one node (1x2, 1x4) run on this machine, DEST in /dev/shm (a
# RAM disk, as a node's local tier often is).  The rows of M > 1 nodes
# (2x2) run on the emulated cluster of tests/cluster.sh without Gfarm
# (root; gfbp: nodes with their own network, host name, /dev/shm and /tmp),
# the ranks launched into the nodes (tests/cluster.sh run), the copies run
# on them (tests/cluster.sh exec), DEST each node's own node-local
# directory ($CLUSTER_LOCAL, on this machine's disk).  While the cluster is
# up the data of every row is in its shared directory ($CLUSTER_SHARED,
# under /var/tmp); without root there is no cluster, the 2x2 rows are left
# out and the data is in $BENCH_STAGE_DIR.  After every run each node's
# DEST is checked: every file there, whole (files and bytes).
# Ratio = cp seconds / stage-in seconds (>= 1.0: stage-in at least as
# fast).  Also read from shared storage (stage-in's bytes_read / data size:
# 1.0 = once), peak RSS per rank and CPU seconds (stage-in's own JSON).
# Hidden transfer: bench/stage_job.py, a job of HJ_STEPS compute phases
# (HJ_COMPUTE seconds each, one core: taskset -c 0) each followed by
# writing HJ_BYTES to node-local storage, (a) alone, (b) followed by a
# synchronous stage-out, (c) with stage-out --async (the mover on the
# other core, --cpus 1) and stage-out --wait at the end.  Shared storage
# here is a local disk, far faster than a real one per node, so its rate is
# set with --bwlimit HJ_RATE in (b) and (c) alike.  Targets: (c) total <=
# 1.1 x (a); hidden = 1 - ((c) - (a)) / ((b) - (a)) >= 0.9; the compute
# phases of (c) slower than (a)'s by under 5% (medians).
# zstd: stage-out of a smooth float array (float32, a sum of a few waves
# over a 3-D grid) and of random bytes, without --compress, with -z (level
# 3) and with --compress=auto, and stage-in of what -z stored:
# stored/raw ratio and throughput.  Medians of REPS runs, contenders in an
# order that rotates with each repetition.  JSON in $BENCH_OUT/stage.json.
#
# gfarm (root): the emulated cluster of tests/cluster.sh with Gfarm
# (through bench/lib.sh; gfbt): compute nodes 1 and 2, the data on the
# gfsd of storage node 3, that gfsd limited to DISK for its reads and
# writes together (the storage's own bandwidth; every link RATE each
# way).  stage-in gfarm:///... to 1 and 2 compute nodes x 2 ranks, into
# each node's $CLUSTER_LOCAL, against `gfpcopy` of the same directory run
# on each compute node, the copies at the same time (Gfarm's own parallel
# copy tool).  read/sz: stage-in's bytes read from Gfarm (its JSON) / data
# size; link/sz: the bytes storage node 3 sent on its link / data size,
# for both contenders.  Sizes BENCH_STAGE_GFARM_BIG (128M),
# _GFARM_SMALL_N (200) files of 128K [8M, 20]; BENCH_STAGE_GFARM_DISK
# (200mbit), _GFARM_RATE (1gbit), _GFARM_NET, _GFARM_GFMD_PORT (198.19.34,
# 20663).  JSON in $BENCH_OUT/stage_gfarm.json.
# Tunables (environment): BENCH_STAGE_HJ_STEPS (8), _HJ_BYTES (64M),
# _HJ_COMPUTE (1.5), _HJ_RATE (100M); BENCH_STAGE_BIG (1G), BENCH_STAGE_SMALL_N (2000),
# BENCH_STAGE_SMALL_SIZE (128K), BENCH_STAGE_REPS (3), BENCH_STAGE_ZSIZE
# (256M), BENCH_STAGE_CLUSTER_NET, _CLUSTER_PORT (the posix cluster's /24
# and port: 198.19.35, 20673), BENCH_STAGE_QUICK=1 (tiny sizes, one
# repetition: a smoke test).  Exit status 1 when a run failed.
set -u
MODES=${*:-posix}
for _m in $MODES; do
	case $_m in posix | gfarm | slurm) ;; *) echo "usage: bench/stage.sh [posix] [gfarm] [slurm]" >&2; exit 2 ;; esac
done
want() { case " $MODES " in *" $1 "*) return 0 ;; esac; return 1; }
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
BIN=${BIN:-$TOP/bin}
export HYDRA_LAUNCHER=${HYDRA_LAUNCHER:-fork}
unset GFSPLIT_NODE GFSPLIT_FAULT GFSPLIT_PROGRESS
BENCH_OUT=${BENCH_OUT:-$HERE/out}
mkdir -p "$BENCH_OUT"

if [ "${BENCH_STAGE_QUICK:-0}" = 1 ]; then
	BIG=${BENCH_STAGE_BIG:-32M} SMALL_N=${BENCH_STAGE_SMALL_N:-50}
	SMALL_SIZE=${BENCH_STAGE_SMALL_SIZE:-128K} REPS=${BENCH_STAGE_REPS:-1}
	ZSIZE=${BENCH_STAGE_ZSIZE:-16M}
	HJ_STEPS=${BENCH_STAGE_HJ_STEPS:-3} HJ_BYTES=${BENCH_STAGE_HJ_BYTES:-8M}
	HJ_COMPUTE=${BENCH_STAGE_HJ_COMPUTE:-0.5} HJ_RATE=${BENCH_STAGE_HJ_RATE:-100M}
else
	BIG=${BENCH_STAGE_BIG:-1G} SMALL_N=${BENCH_STAGE_SMALL_N:-2000}
	SMALL_SIZE=${BENCH_STAGE_SMALL_SIZE:-128K} REPS=${BENCH_STAGE_REPS:-3}
	ZSIZE=${BENCH_STAGE_ZSIZE:-256M}
	HJ_STEPS=${BENCH_STAGE_HJ_STEPS:-8} HJ_BYTES=${BENCH_STAGE_HJ_BYTES:-64M}
	HJ_COMPUTE=${BENCH_STAGE_HJ_COMPUTE:-1.5} HJ_RATE=${BENCH_STAGE_HJ_RATE:-100M}
fi
bytes() { numfmt --from=iec "${1%B}"; }
say() { echo "stage: $*"; }

# shellcheck source=bench/lib.sh
. "$TOP/bench/lib.sh"	# the cluster (cluster_up, cluster_teardown, ...)
CNAME=			# the cluster that is up, if any
W=$(mktemp -d "${BENCH_STAGE_DIR:-/var/tmp}/gfsplit-bench-stage.XXXXXX")
L=$(mktemp -d /dev/shm/gfsplit-bench-stage.XXXXXX)
trap 'cluster_teardown; rm -rf "$W" "$L"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
REC=$W/records.jsonl
: >"$REC"

drop() {
	sync
	[ "$(id -u)" = 0 ] && echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
}
[ "$(id -u)" = 0 ] || say "not root: the page cache is not dropped between runs"

# run NAME CONFIG CMD...: one timed run (page cache dropped first); a
# record line with the wall seconds, the command's JSON if it printed one
# and, with SNODE set, the bytes node SNODE sent on its link.  CHECK, if
# set, is run after a run that succeeded: its failure (its output joining
# the run's stderr) fails the run.
SNODE=
CHECK=()
run() {
	local name=$1 cfg=$2 t0 t1 rc out b0=0 link=
	shift 2
	drop
	out=$W/out.json
	[ -n "$SNODE" ] && b0=$("$CL" sent "$SNODE")
	t0=$(date +%s.%N)
	"$@" >"$out" 2>"$W/err"
	rc=$?
	t1=$(date +%s.%N)
	[ -n "$SNODE" ] && link=$(($("$CL" sent "$SNODE") - b0))
	if [ "$rc" -eq 0 ] && [ ${#CHECK[@]} -gt 0 ] && ! "${CHECK[@]}" >>"$W/err" 2>&1; then
		rc=1
	fi
	CHECK=()
	python3 - "$name" "$cfg" "$t0" "$t1" "$rc" "$out" "$W/err" "$link" >>"$REC" <<'EOF'
import json, sys
name, cfg, t0, t1, rc, out, err, link = sys.argv[1:]
rec = {"name": name, "config": cfg, "seconds": float(t1) - float(t0), "rc": int(rc)}
try:
    rec["json"] = json.loads(open(out).read().strip().splitlines()[-1])
except Exception:
    pass
if link:
    rec["storage_link_bytes"] = int(link)
if int(rc) != 0:
    rec["stderr"] = open(err).read()[-2000:]
print(json.dumps(rec))
EOF
	[ "$rc" -eq 0 ] || say "FAILED: $name $cfg: $(tail -n 3 "$W/err")"
}

# ---- where the copies go: this host's $L/d, or each node's $CLUSTER_LOCAL/d
declare -A WANT		# data set -> "files bytes"
# files_of DIR [NODE]: the sizes of the files under DIR (here, or on NODE),
# one a line, stage-in's state dir left out
files_of() {
	local ex=()
	[ -n "${2:-}" ] && ex=("$CL" exec "$2")
	"${ex[@]}" find "$1" -name .gfsplit-stage -prune -o -type f -printf '%s\n'
}
sizes() { awk '{ n++; s += $1 } END { print n + 0, s + 0 }'; }	# -> "files bytes"
# got_all SET host|M: this host's $L/d, or every one of nodes 1..M's
# $CLUSTER_LOCAL/d, holds all of SET (WANT), whole
got_all() {
	local want=${WANT[$1]} k got
	if [ "$2" = host ]; then
		got=$(files_of "$L/d" | sizes)
		[ "$got" = "$want" ] || { echo "$L/d holds $got (files bytes), not $want"; return 1; }
		return 0
	fi
	for ((k = 1; k <= $2; k++)); do
		got=$(files_of "$CLUSTER_LOCAL/d" "$k" | sizes)
		[ "$got" = "$want" ] ||
			{ echo "node $k's $CLUSTER_LOCAL/d holds $got (files bytes), not $want"; return 1; }
	done
}
nodes_clear() {	# M: nodes 1..M's $CLUSTER_LOCAL/d gone
	local k
	for ((k = 1; k <= $1; k++)); do "$CL" exec "$k" rm -rf "$CLUSTER_LOCAL/d"; done
}
# on_nodes M CMD..: CMD on each of nodes 1..M, all at the same time
on_nodes() {
	local m=$1 k rc=0 pids=()
	shift
	for ((k = 1; k <= m; k++)); do
		"$CL" exec "$k" "$@" &
		pids+=($!)
	done
	for k in "${pids[@]}"; do wait "$k" || rc=1; done
	return $rc
}

# ---- posix ------------------------------------------------------------------
# The cluster of the rows of PM nodes: tests/cluster.sh without Gfarm
# (bench/lib.sh's cluster_up is Gfarm's).  Fails, saying why, where the
# machine cannot build one (not root, no namespaces).
PM=2
pcluster_up() {
	local err rc
	CNAME=gfbp NET=${BENCH_STAGE_CLUSTER_NET:-198.19.35}
	GFMD_PORT=${BENCH_STAGE_CLUSTER_PORT:-20673}
	cluster_env
	err=$(CLUSTER_QUIET=1 "$CL" up "$PM" --no-gfarm 2>&1 >/dev/null)
	rc=$?
	case $rc in
	0) ;;
	77) say "SKIP the rows of $PM nodes: ${err#SKIP: cluster: }"; CNAME=; return 1 ;;
	*) say "ERROR: tests/cluster.sh up $PM --no-gfarm: ${err#cluster: ERROR: }"; exit 1 ;;
	esac
	eval "$("$CL" env)"
	say "cluster up: $PM nodes $(node_host 1)..$(node_host "$PM") without Gfarm, the data in $CLUSTER_SHARED"
}

posix_bench() {
# the data of stage-in and cp: in the cluster's shared directory if it is up
local DATA=$W
pcluster_up && DATA=$CLUSTER_SHARED/stage
# ---- the data (untimed)
say "making the data: one file of $BIG, $SMALL_N files of $SMALL_SIZE, $ZSIZE of floats and of random bytes"
mkdir -p "$DATA/big" "$DATA/small" "$W/z/smooth" "$W/z/random"
head -c "$(bytes "$BIG")" /dev/urandom >"$DATA/big/data"
python3 - "$DATA/small" "$SMALL_N" "$(bytes "$SMALL_SIZE")" <<'EOF'
import os, sys
d, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    with open(os.path.join(d, "f%05d" % i), "wb") as f:
        f.write(os.urandom(size))
EOF
python3 - "$W/z/smooth/field" "$(bytes "$ZSIZE")" <<'EOF'
import math, sys
from array import array
path, size = sys.argv[1], int(sys.argv[2])
n = size // 4
nx = ny = 256
with open(path, "wb") as f:
    k = 0
    while k < n:
        z = k // (nx * ny)
        plane = array("f")
        for y in range(ny):
            cy = math.cos(0.05 * y + 0.01 * z)
            plane.extend(300.0 + 10.0 * math.sin(0.031 * x + 0.02 * z) * cy
                         + 0.5 * math.sin(0.3 * x * 0.1 + y * 0.07) for x in range(nx))
        m = min(len(plane), n - k)
        plane[:m].tofile(f)
        k += m
EOF
head -c "$(bytes "$ZSIZE")" /dev/urandom >"$W/z/random/data"

WANT[big]=$(files_of "$DATA/big" | sizes) WANT[small]=$(files_of "$DATA/small" | sizes)

# stage_in SET M PPN: stage-in of $DATA/SET/ to M nodes x PPN ranks: on
# this host into $L/d, or on the cluster into each node's $CLUSTER_LOCAL/d
stage_in() {
	local set=$1 m=$2 ppn=$3
	if ((m == 1)); then
		rm -rf "$L/d"
		CHECK=(got_all "$set" host)
		run stage-in "$set 1x$ppn" mpiexec -n "$ppn" "$BIN/stage-in" --json "$DATA/$set/" "$L/d"
	else
		nodes_clear "$m"
		CHECK=(got_all "$set" "$m")
		run stage-in "$set ${m}x$ppn" "${CRUN[@]}" -n $((m * ppn)) -ppn "$ppn" -nodes "$m" \
			"$BIN/stage-in" --json "$DATA/$set/" "$CLUSTER_LOCAL/d"
	fi
}
# cp_nodes SET M: cp -r of $DATA/SET to each node's directory, at once
cp_nodes() {
	local set=$1 m=$2
	if ((m == 1)); then
		rm -rf "$L/d"
		CHECK=(got_all "$set" host)
		run cp "$set 1x1" cp -r "$DATA/$set" "$L/d"
	else
		nodes_clear "$m"
		CHECK=(got_all "$set" "$m")
		run cp "$set ${m}x1" on_nodes "$m" cp -r "$DATA/$set" "$CLUSTER_LOCAL/d"
	fi
}

# ---- the hidden-transfer job: compute iterations for HJ_COMPUTE seconds
ITERS=$(python3 -c '
import sys, time
sys.path.insert(0, sys.argv[1])
from stage_job import compute
t = time.monotonic(); compute(2000000); t = time.monotonic() - t
print(int(2000000 * float(sys.argv[2]) / t))' "$HERE" "$HJ_COMPUTE")
export GFSPLIT_MOVER_DIR=$W/movers
hj() {	# hj MODE: one run of the job in MODE alone|sync|async
	local mode=$1 t0 t1 rc=0
	rm -rf "$L/job" "$W/shared"
	mkdir -p "$L/job" "$W/shared"
	sync
	t0=$(date +%s.%N)
	if [ "$mode" = async ]; then
		mpiexec -n 1 "$BIN/stage-out" --async --cpus 1 --interval 5 \
			--bwlimit "$HJ_RATE" "$L/job" "$W/shared" 2>>"$W/err" || rc=1
	fi
	taskset -c 0 python3 "$HERE/stage_job.py" "$L/job" "$HJ_STEPS" \
		"$(bytes "$HJ_BYTES")" "$ITERS" >"$W/job.json" || rc=1
	case $mode in
	sync) mpiexec -n 1 "$BIN/stage-out" --bwlimit "$HJ_RATE" "$L/job" "$W/shared" \
		2>>"$W/err" || rc=1 ;;
	async) mpiexec -n 1 "$BIN/stage-out" --wait "$L/job" >/dev/null 2>>"$W/err" || rc=1 ;;
	esac
	t1=$(date +%s.%N)
	# every step on shared storage, whole
	if [ "$mode" != alone ]; then
		for f in "$L/job"/step*; do
			cmp -s "$f" "$W/shared/$(hostname)/$(basename "$f")" ||
				{ rc=1; say "FAILED: $mode: $(basename "$f") not on shared storage"; break; }
		done
	fi
	python3 - "$mode" "$t0" "$t1" "$rc" "$W/job.json" >>"$REC" <<'EOF2'
import json, sys
mode, t0, t1, rc, job = sys.argv[1:]
print(json.dumps({"name": "job " + mode, "config": "hidden", "seconds": float(t1) - float(t0),
                  "rc": int(rc), "json": json.load(open(job))}))
EOF2
}

for ((rep = 0; rep < REPS; rep++)); do
	case $((rep % 3)) in
	0) hj alone; hj sync; hj async ;;
	1) hj sync; hj async; hj alone ;;
	2) hj async; hj alone; hj sync ;;
	esac
	for set in big small; do
		for cfg in "1 2" "2 2" "1 4"; do
			read -r m ppn <<<"$cfg"
			((m == 1)) || [ -n "$CNAME" ] || continue	# no cluster
			if [ $((rep % 2)) -eq 0 ]; then
				stage_in "$set" "$m" "$ppn"; cp_nodes "$set" "$m"
			else
				cp_nodes "$set" "$m"; stage_in "$set" "$m" "$ppn"
			fi
		done
	done
	for set in smooth random; do
		for z in "" "-z" "--compress=auto"; do
			rm -rf "$W/zo"
			run "stage-out${z:+ $z}" "$set 1x2" mpiexec -n 2 "$BIN/stage-out" --json $z \
				--state-dir "$W/zstate" "$W/z/$set" "$W/zo"
			rm -rf "$W/zstate"
			[ "$z" = -z ] || continue
			# decompressing: stage-in of what -z stored
			rm -rf "$W/zi"
			run "stage-in of -z" "$set 1x2" mpiexec -n 2 "$BIN/stage-in" --json \
				"$W/zo/$(ls "$W/zo")/" "$W/zi"
			rm -rf "$W/zi"
		done
	done
	say "repetition $((rep + 1)) of $REPS done"
done
cluster_teardown
CNAME=

python3 - "$REC" "$BENCH_OUT/stage.json" "$(bytes "$BIG")" "$SMALL_N" "$(bytes "$SMALL_SIZE")" "$(bytes "$ZSIZE")" <<'EOF'
import json, statistics, sys
rec, out, big, sn, ss, zs = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
rs = [json.loads(l) for l in open(rec)]
failed = [r for r in rs if r["rc"] != 0]
def med(xs):
    return statistics.median(xs) if xs else float("nan")
size = {"big": big, "small": sn * ss, "smooth": zs, "random": zs}
summary = {"runs": rs, "failed": len(failed), "stage_in": [], "zstd": []}
print("stage-in vs cp -r per node (medians of %d; ratio = cp / stage-in)" %
      len([r for r in rs if r["name"] == "cp" and r["config"] == "big 1x1"]))
print("%-6s %-6s %8s %8s %6s %8s %9s %8s" % ("data", "N", "stage s", "cp s", "ratio",
      "read/sz", "rss MiB", "cpu s"))
for data in ("big", "small"):
    for m, ppn in ((1, 2), (2, 2), (1, 4)):
        cfg = "%s %dx%d" % (data, m, ppn)
        st = [r for r in rs if r["name"] == "stage-in" and r["config"] == cfg and r["rc"] == 0]
        cp = [r for r in rs if r["name"] == "cp" and r["config"] == "%s %dx1" % (data, m) and r["rc"] == 0]
        s, c = med([r["seconds"] for r in st]), med([r["seconds"] for r in cp])
        readx = med([r["json"]["bytes_read"] / size[data] for r in st if "json" in r])
        rss = med([r["json"]["max_rss_kib"] / 1024 for r in st if "json" in r])
        cpu = med([r["json"]["cpu_seconds"] for r in st if "json" in r])
        row = {"data": data, "nodes": m, "ranks_per_node": ppn, "stage_in_s": s,
               "cp_s": c, "ratio": c / s, "read_once_factor": readx,
               "max_rss_mib": rss, "cpu_s": cpu, "bytes_per_node": size[data]}
        summary["stage_in"].append(row)
        print("%-6s %dx%-4d %8.2f %8.2f %6.2f %8.2f %9.1f %8.2f" %
              (data, m, ppn, s, c, c / s, readx, rss, cpu))
print("\nstage-out, zstd (1 node x 2 ranks; medians)")
print("%-7s %-26s %8s %10s %8s" % ("data", "mode", "s", "MiB/s", "stored/raw"))
for data in ("smooth", "random"):
    for name in ("stage-out", "stage-out -z", "stage-out --compress=auto", "stage-in of -z"):
        r = [x for x in rs if x["name"] == name and x["config"] == data + " 1x2" and x["rc"] == 0]
        s = med([x["seconds"] for x in r])
        ratio = med([x["json"]["bytes_written"] / x["json"]["raw_bytes"] for x in r if "json" in x])
        summary["zstd"].append({"data": data, "mode": name, "seconds": s,
                                "mib_per_s": size[data] / s / 2**20, "stored_over_raw": ratio})
        print("%-7s %-26s %8.2f %10.1f %8.3f" % (data, name, s, size[data] / s / 2**20, ratio))
print("\nhidden transfer: %s, the job alone / + stage-out after / with --async (medians)" % "job")
hj = {}
for mode in ("alone", "sync", "async"):
    r = [x for x in rs if x["name"] == "job " + mode and x["rc"] == 0]
    hj[mode] = {"total_s": med([x["seconds"] for x in r]),
                "compute_phase_s": med([statistics.median(x["json"]["compute_s"]) for x in r])}
if all(hj[m]["total_s"] == hj[m]["total_s"] for m in hj):
    a, b, c = hj["alone"]["total_s"], hj["sync"]["total_s"], hj["async"]["total_s"]
    hidden = 1 - (c - a) / (b - a) if b > a else float("nan")
    slow = hj["async"]["compute_phase_s"] / hj["alone"]["compute_phase_s"] - 1
    summary["hidden"] = dict(hj, async_over_alone=c / a, sync_over_alone=b / a,
                             hidden_fraction=hidden, compute_slowdown=slow)
    print("%-7s %8s %12s" % ("mode", "total s", "compute s"))
    for m in ("alone", "sync", "async"):
        print("%-7s %8.2f %12.3f" % (m, hj[m]["total_s"], hj[m]["compute_phase_s"]))
    print("async / alone %.3f (target <= 1.1), sync / alone %.3f, hidden %.1f%% (target >= 90%%), "
          "compute phases %+.1f%% (target < 5%%)" % (c / a, b / a, 100 * hidden, 100 * slow))
json.dump(summary, open(out, "w"), indent=1)
if failed:
    print("\n%d runs FAILED (see %s)" % (len(failed), out))
    sys.exit(1)
EOF
}

# ---- gfarm ----------------------------------------------------------------
gfarm_bench() {
	local GBIG=${BENCH_STAGE_GFARM_BIG:-128M} GN=${BENCH_STAGE_GFARM_SMALL_N:-200}
	local why set m rep
	if [ "${BENCH_STAGE_QUICK:-0}" = 1 ]; then
		GBIG=${BENCH_STAGE_GFARM_BIG:-8M} GN=${BENCH_STAGE_GFARM_SMALL_N:-20}
	fi
	# compute nodes 1 and 2, storage node S = 3 (bench/lib.sh's cluster_up)
	CNAME=gfbt K=3 S=3
	RATE=${BENCH_STAGE_GFARM_RATE:-1gbit} DISK=${BENCH_STAGE_GFARM_DISK:-200mbit}
	NET=${BENCH_STAGE_GFARM_NET:-198.19.34} GFMD_PORT=${BENCH_STAGE_GFARM_GFMD_PORT:-20663}
	CTAG="stage: gfarm" CERR="$W/err"
	cluster_skip() { cluster_die "$@"; }
	PATH="$PATH:/usr/sbin:/sbin"
	[ "$(id -u)" = 0 ] || { say "SKIP gfarm: needs root (tests/cluster.sh)"; CNAME=; return 0; }
	why=$(cluster_check gfreg gfpcopy gfwhere) || { say "SKIP gfarm: $why"; CNAME=; return 0; }
	cluster_up
	say "gfarm: cluster up: compute nodes $(node_host 1), $(node_host 2), storage node $(node_host "$S") (its gfsd at $DISK), $RATE per link and way"
	g_upload "$GBIG" "$GN" 128K
	cluster_shape || cluster_die "cannot limit the links and the disk again"
	g_sets gfarm "$GBIG" "$GN" 128K
	for ((rep = 0; rep < REPS; rep++)); do
		for set in big small; do
			for m in 1 2; do
				if [ $((rep % 2)) -eq 0 ]; then g_stage "$set" "$m"; g_pcopy "$set" "$m"
				else g_pcopy "$set" "$m"; g_stage "$set" "$m"; fi
			done
		done
		say "gfarm: repetition $((rep + 1)) of $REPS done"
	done
	SNODE=
	cluster_teardown
	CNAME=
	python3 - "$REC" "$BENCH_OUT/stage_gfarm.json" "$(bytes "$GBIG")" "$((GN * 131072))" "$RATE" "$DISK" <<'EOF'
import json, statistics, sys
rec, out, big, small, rate, disk = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
rs = [json.loads(l) for l in open(rec)]
size = {"big": big, "small": small}
def med(xs):
    return statistics.median(xs) if xs else float("nan")
rows = []
print("stage-in from Gfarm (the data on storage node 3, its gfsd at %s, links %s) vs gfpcopy "
      "on each node" % (disk, rate))
print("(medians; ratio = gfpcopy / stage-in; read/sz = stage-in's Gfarm bytes read / data size;")
print(" link/sz = bytes the storage node sent on its link / data size, stage-in / gfpcopy)")
print("%-6s %-5s %9s %10s %6s %8s %11s" % ("data", "nodes", "stage s", "gfpcopy s", "ratio", "read/sz",
                                          "link/sz"))
for data in ("big", "small"):
    for m in (1, 2):
        st = [r for r in rs if r["name"] == "stage-in" and r["config"] == "%s %dx2" % (data, m) and r["rc"] == 0]
        gp = [r for r in rs if r["name"] == "gfpcopy" and r["config"] == "%s %dx1" % (data, m) and r["rc"] == 0]
        s, g = med([r["seconds"] for r in st]), med([r["seconds"] for r in gp])
        rd = med([r["json"]["bytes_read"] / size[data] for r in st if "json" in r])
        ls = med([r["storage_link_bytes"] / size[data] for r in st if "storage_link_bytes" in r])
        lg = med([r["storage_link_bytes"] / size[data] for r in gp if "storage_link_bytes" in r])
        rows.append({"data": data, "nodes": m, "stage_in_s": s, "gfpcopy_s": g, "ratio": g / s,
                     "read_once_factor": rd, "storage_link_per_size_stage": ls,
                     "storage_link_per_size_gfpcopy": lg, "bytes_per_node": size[data]})
        print("%-6s %-5d %9.2f %10.2f %6.2f %8.2f %5.2f/%.2f" % (data, m, s, g, g / s, rd, ls, lg))
failed = [r for r in rs if r["rc"] != 0]
json.dump({"rate": rate, "disk": disk, "rows": rows, "runs": rs, "failed": len(failed)},
          open(out, "w"), indent=1)
if failed:
    print("\n%d runs FAILED (see %s)" % (len(failed), out))
sys.exit(1 if failed else 0)
EOF
}
# g_upload BIG N SIZE: the data sets on storage node S's gfsd alone, without
# the limits (untimed): gfarm:///bench/stage/big/data of BIG bytes and N
# files of SIZE in gfarm:///bench/stage/small/
g_upload() {
	local G=$SHARED/stage k why
	cluster_unshape || cluster_die "cannot lift the rate limits"
	mkdir -p "$G/small" || cluster_die "cannot make $G"
	timeout 20 "$CL" exec head gfmkdir -p /bench/stage/big || cluster_die "gfmkdir failed"
	head -c "$(bytes "$1")" /dev/urandom >"$G/data"
	timeout 600 "$CL" exec "$S" gfreg -h "$(node_host "$S")" "$G/data" \
		gfarm:///bench/stage/big/data </dev/null 9<&- || cluster_die "gfreg failed"
	for ((k = 0; k < $2; k++)); do
		head -c "$(bytes "$3")" /dev/urandom >"$G/small/f$k"
	done
	node_host "$S" >"$G/hostfile"
	timeout 600 "$CL" exec "$S" gfpcopy -q -H "$G/hostfile" "file://$G/small" \
		gfarm:///bench/stage/ </dev/null 9<&- || cluster_die "gfpcopy of the small files failed"
	why=$(timeout 60 "$CL" exec head gfwhere -r /bench/stage | awk 'NF && !/:$/' | sort -u)
	[ "$why" = "$(node_host "$S")" ] ||
		cluster_die "the data is not on $(node_host "$S") alone: $(echo "$why" | tr '\n' ' ')"
	rm -rf "$G"
}
# g_sets MODE BIG N SIZE: what the runs to come must leave on each node
# (got_all: g_upload's data sets), the storage node whose link is counted,
# and MODE's record file REC, empty
g_sets() {
	WANT[big]="1 $(bytes "$2")" WANT[small]="$3 $(($3 * $(bytes "$4")))"
	SNODE=$S
	say "$1: $2 and $3 x $4 on $(node_host "$S"); $REPS reps"
	REC=$W/$1.jsonl
	: >"$REC"
}
# g_stage SET M: stage-in of gfarm:///bench/stage/SET/ to M nodes x 2 ranks
g_stage() {
	local set=$1 m=$2
	nodes_clear "$m"
	CHECK=(got_all "$set" "$m")
	run stage-in "$set ${m}x2" timeout 900 "${CRUN[@]}" -n $((2 * m)) -ppn 2 -nodes "$m" \
		"$BIN/stage-in" --json "gfarm:///bench/stage/$set/" "$CLUSTER_LOCAL/d"
}
# g_pcopy SET M: gfpcopy of the same directory on each of M nodes, at once
g_pcopy() {
	local set=$1 m=$2
	nodes_clear "$m"
	CHECK=(got_all "$set" "$m")
	# shellcheck disable=SC2016 # the node's shell expands them
	run gfpcopy "$set ${m}x1" on_nodes "$m" timeout 900 sh -c \
		'mkdir -p "$1" && exec gfpcopy -q "$2" "file://$1/"' _ \
		"$CLUSTER_LOCAL/d" "gfarm:///bench/stage/$set"
}

# ---- slurm ----------------------------------------------------------------
# stage-in against Slurm's own sbcast: the emulated cluster of
# tests/cluster.sh with Gfarm and Slurm (gfbs), compute nodes 1..4, the data
# on the gfsd of storage node 5, every link at RATE each way.  stage-in
# gfarm:///... by srun onto the 4 nodes (one rank each, --mpi=pmi2) into
# each node's $CLUSTER_LOCAL/d, against an allocation of the same 4 nodes
# (salloc) in which node 1 runs sbcast of the same files (each file once,
# as sbcast takes one file), read from Gfarm through gfarm2fs mounted on
# node 1, and the same with sbcast -C (compressed on the way).  Both
# include their allocation (srun makes one, salloc makes one).  Columns:
# medians, ratio = sbcast / stage-in, link/sz = bytes storage node 5 sent
# on its link / data size.  Sizes BENCH_STAGE_SLURM_BIG (1G),
# _SLURM_SMALL_N (2000) files of _SLURM_SMALL_SIZE (64K); _SLURM_RATE
# (200mbit), _SLURM_NET, _SLURM_GFMD_PORT (198.19.36, 20693).  JSON in
# $BENCH_OUT/stage_slurm.json.
# shellcheck disable=SC2034 # K, SLURM, NET, ...: bench/lib.sh's cluster_up reads them
slurm_bench() {
	local SBIG=${BENCH_STAGE_SLURM_BIG:-1G} SN=${BENCH_STAGE_SLURM_SMALL_N:-2000}
	local SS=${BENCH_STAGE_SLURM_SMALL_SIZE:-64K} why set rep c nodes
	if [ "${BENCH_STAGE_QUICK:-0}" = 1 ]; then
		SBIG=${BENCH_STAGE_SLURM_BIG:-32M} SN=${BENCH_STAGE_SLURM_SMALL_N:-50}
	fi
	CNAME=gfbs K=5 S=5 SLURM=1
	RATE=${BENCH_STAGE_SLURM_RATE:-200mbit} DISK=
	NET=${BENCH_STAGE_SLURM_NET:-198.19.36} GFMD_PORT=${BENCH_STAGE_SLURM_GFMD_PORT:-20693}
	CTAG="stage: slurm" CERR="$W/err"
	cluster_skip() { cluster_die "$@"; }
	PATH="$PATH:/usr/sbin:/sbin"
	[ "$(id -u)" = 0 ] || { say "SKIP slurm: needs root (tests/cluster.sh)"; CNAME=; return 0; }
	why=$(cluster_check gfreg gfpcopy gfarm2fs srun salloc sbcast) || { say "SKIP slurm: $why"; CNAME=; return 0; }
	cluster_up
	nodes="$(node_host 1),$(node_host 2),$(node_host 3),$(node_host 4)"
	say "slurm: cluster up: compute nodes $nodes, storage node $(node_host "$S"), $RATE per link and way"
	g_upload "$SBIG" "$SN" "$SS"
	# sbcast's source: Gfarm through gfarm2fs on node 1, in its /tmp
	"$CL" exec 1 sh -c 'mkdir -p /tmp/gfarm && exec gfarm2fs /tmp/gfarm' </dev/null >"$W/err" 2>&1 9<&- ||
		cluster_die "gfarm2fs on node 1 failed"
	"$CL" exec 1 ls /tmp/gfarm/bench/stage/big/data >/dev/null 2>&1 ||
		cluster_die "node 1 does not see the data through gfarm2fs"
	cluster_shape || cluster_die "cannot limit the links again"
	g_sets slurm "$SBIG" "$SN" "$SS"
	for ((rep = 0; rep < REPS; rep++)); do
		for set in big small; do
			# the contenders in an order that rotates with each repetition
			for c in 0 1 2; do
				case $(((c + rep) % 3)) in
				0) s_stage "$set" ;;
				1) s_sbcast "$set" sbcast ;;
				2) s_sbcast "$set" "sbcast -C" ;;
				esac
			done
		done
		say "slurm: repetition $((rep + 1)) of $REPS done"
	done
	SNODE=
	"$CL" exec 1 fusermount -u /tmp/gfarm 2>/dev/null
	cluster_teardown
	CNAME=
	python3 - "$REC" "$BENCH_OUT/stage_slurm.json" "$(bytes "$SBIG")" "$((SN * $(bytes "$SS")))" "$RATE" <<'EOF'
import json, statistics, sys
rec, out, big, small, rate = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rs = [json.loads(l) for l in open(rec)]
size = {"big": big, "small": small}
def med(xs):
    return statistics.median(xs) if xs else float("nan")
rows = []
print("stage-in (srun) vs sbcast onto 4 nodes from Gfarm (the data on storage node 5; links %s)" % rate)
print("(medians; ratio = sbcast / stage-in; link/sz = bytes the storage node sent / data size)")
print("%-6s %-11s %9s %6s %8s" % ("data", "contender", "seconds", "ratio", "link/sz"))
for data in ("big", "small"):
    st = med([r["seconds"] for r in rs if r["name"] == "stage-in" and r["config"] == data and r["rc"] == 0])
    for name in ("stage-in", "sbcast", "sbcast -C"):
        sel = [r for r in rs if r["name"] == name and r["config"] == data and r["rc"] == 0]
        s = med([r["seconds"] for r in sel])
        ln = med([r["storage_link_bytes"] / size[data] for r in sel if "storage_link_bytes" in r])
        rows.append({"data": data, "contender": name, "seconds": s, "ratio": s / st,
                     "storage_link_per_size": ln, "bytes_per_node": size[data], "runs": len(sel)})
        print("%-6s %-11s %9.2f %6.2f %8.2f" % (data, name, s, s / st, ln))
failed = [r for r in rs if r["rc"] != 0]
json.dump({"rate": rate, "rows": rows, "runs": rs, "failed": len(failed)}, open(out, "w"), indent=1)
if failed:
    print("\n%d runs FAILED (see %s)" % (len(failed), out))
sys.exit(1 if failed else 0)
EOF
}
# s_stage SET: stage-in of gfarm:///bench/stage/SET/ by srun onto nodes 1..4
s_stage() {
	nodes_clear 4
	CHECK=(got_all "$1" 4)
	run stage-in "$1" timeout 1800 "$CL" exec head srun -N 4 -w "$nodes" --ntasks-per-node=1 --mpi=pmi2 \
		"$BIN/stage-in" --json "gfarm:///bench/stage/$1/" "$CLUSTER_LOCAL/d"
}
# s_sbcast SET "sbcast [-C]": the same files by sbcast, run on node 1 in an
# allocation of nodes 1..4, one sbcast a file
s_sbcast() {
	local k
	nodes_clear 4
	for ((k = 1; k <= 4; k++)); do "$CL" exec "$k" mkdir -p "$CLUSTER_LOCAL/d"; done
	CHECK=(got_all "$1" 4)
	# shellcheck disable=SC2016 # node 1's shell expands them
	run "$2" "$1" timeout 1800 "$CL" exec head salloc -Q -N 4 -w "$nodes" \
		srun -N 1 -n 1 -w "$(node_host 1)" sh -c \
		'for f in "$1"/*; do $2 -f "$f" "$3/${f##*/}" || exit 1; done' _ \
		"/tmp/gfarm/bench/stage/$1" "$2" "$CLUSTER_LOCAL/d"
}

rc=0
if want posix; then posix_bench || rc=1; fi
if want gfarm; then gfarm_bench || rc=1; fi
if want slurm; then slurm_bench || rc=1; fi
exit $rc
