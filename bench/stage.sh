#!/bin/bash
# bench/stage.sh - stage-in against `cp -r` per node, and zstd on the way
# out (issue 6), on POSIX storage of this machine:
#
#   bash bench/stage.sh [posix] [gfarm]        (default: posix)
#
# Shared storage is a directory on the disk ($BENCH_STAGE_DIR, default
# /var/tmp), node-local storage is /dev/shm (a RAM disk, as a node's local
# tier often is); before every run the page cache is dropped (root), so the
# shared side is read from the disk.  Two data sets: one file of BIG bytes,
# and SMALL_N files of SMALL_SIZE bytes.  Contenders, for N ranks on M
# emulated nodes (GFSPLIT_NODE, MPMD; DEST/%h):
#   stage-in   mpiexec stage-in SRC DEST/%h (every node gets every file,
#              shared storage read once, the rest forwarded rank to rank)
#   cp         `cp -r SRC DEST/nodeK` once per node, the M copies at the
#              same time (as M nodes would run them)
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
# over a 3-D grid) and of random bytes, with and without --compress:
# stored/raw ratio and throughput.  Medians of REPS runs, contenders in an
# order that rotates with each repetition.  JSON in $BENCH_OUT/stage.json.
#
# gfarm (root): the emulated cluster of bench/lib.sh (K gfsd, each in a
# network namespace behind a link of RATE each way); the data on gfsd node
# 1; stage-in gfarm:///... to 1 and 2 emulated compute nodes x 2 ranks,
# against `gfpcopy` of the same directory once per compute node, the
# copies at the same time (Gfarm's own parallel copy tool).  Sizes
# BENCH_STAGE_GFARM_BIG (128M), _GFARM_SMALL_N (200) files of 128K, RATE
# BENCH_STAGE_GFARM_RATE (200mbit).  JSON in $BENCH_OUT/stage_gfarm.json.
# Tunables (environment): BENCH_STAGE_HJ_STEPS (8), _HJ_BYTES (64M),
# _HJ_COMPUTE (1.5), _HJ_RATE (100M); BENCH_STAGE_BIG (1G), BENCH_STAGE_SMALL_N (2000),
# BENCH_STAGE_SMALL_SIZE (128K), BENCH_STAGE_REPS (3), BENCH_STAGE_ZSIZE
# (256M), BENCH_STAGE_QUICK=1 (tiny sizes, one repetition: a smoke test).
set -u
MODES=${*:-posix}
for _m in $MODES; do
	case $_m in posix | gfarm) ;; *) echo "usage: bench/stage.sh [posix] [gfarm]" >&2; exit 2 ;; esac
done
want() { case " $MODES " in *" $1 "*) return 0 ;; esac; return 1; }
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
BIN=${BIN:-$TOP/bin}
export HYDRA_LAUNCHER=${HYDRA_LAUNCHER:-fork}
unset GFSPLIT_FAULT GFSPLIT_PROGRESS
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

W=$(mktemp -d "${BENCH_STAGE_DIR:-/var/tmp}/gfsplit-bench-stage.XXXXXX")
L=$(mktemp -d /dev/shm/gfsplit-bench-stage.XXXXXX)
trap 'rm -rf "$W" "$L"' EXIT
REC=$W/records.jsonl
: >"$REC"

drop() {
	sync
	[ "$(id -u)" = 0 ] && echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
}
[ "$(id -u)" = 0 ] || say "not root: the page cache is not dropped between runs"

# run NAME CONFIG CMD...: one timed run (page cache dropped first); a
# record line with the wall seconds and the command's JSON if it printed one
run() {
	local name=$1 cfg=$2 t0 t1 rc out
	shift 2
	drop
	out=$W/out.json
	t0=$(date +%s.%N)
	"$@" >"$out" 2>"$W/err"
	rc=$?
	t1=$(date +%s.%N)
	python3 - "$name" "$cfg" "$t0" "$t1" "$rc" "$out" "$W/err" >>"$REC" <<'EOF'
import json, sys
name, cfg, t0, t1, rc, out, err = sys.argv[1:]
rec = {"name": name, "config": cfg, "seconds": float(t1) - float(t0), "rc": int(rc)}
try:
    rec["json"] = json.loads(open(out).read().strip().splitlines()[-1])
except Exception:
    pass
if int(rc) != 0:
    rec["stderr"] = open(err).read()[-2000:]
print(json.dumps(rec))
EOF
	[ "$rc" -eq 0 ] || say "FAILED: $name $cfg: $(tail -n 3 "$W/err")"
}

posix_bench() {
# ---- the data (untimed)
say "making the data: one file of $BIG, $SMALL_N files of $SMALL_SIZE, $ZSIZE of floats and of random bytes"
mkdir -p "$W/big" "$W/small" "$W/z/smooth" "$W/z/random"
head -c "$(bytes "$BIG")" /dev/urandom >"$W/big/data"
python3 - "$W/small" "$SMALL_N" "$(bytes "$SMALL_SIZE")" <<'EOF'
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

# stage_in SET NODES PPN: stage-in of $W/SET/ to M nodes x PPN ranks
stage_in() {
	local set=$1 m=$2 ppn=$3 args=() k
	rm -rf "$L/d"
	for ((k = 0; k < m; k++)); do
		[ $k -gt 0 ] && args+=(:)
		args+=(-n "$ppn" -env GFSPLIT_NODE "node$k" "$BIN/stage-in" --json "$W/$set/" "$L/d/%h")
	done
	run stage-in "$set ${m}x$ppn" mpiexec "${args[@]}"
}
# cp_nodes SET NODES: cp -r of $W/SET to each node's directory, at once
cp_nodes() {
	local set=$1 m=$2 k
	rm -rf "$L/d"
	mkdir -p "$L/d"
	run cp "$set ${m}x1" bash -c '
		for ((k = 0; k < '"$m"'; k++)); do cp -r "$1" "$2/node$k" & done
		wait' _ "$W/$set" "$L/d"
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
			if [ $((rep % 2)) -eq 0 ]; then
				stage_in "$set" "$m" "$ppn"; cp_nodes "$set" "$m"
			else
				cp_nodes "$set" "$m"; stage_in "$set" "$m" "$ppn"
			fi
		done
	done
	for set in smooth random; do
		for z in "" "-z"; do
			rm -rf "$W/zo"
			run "stage-out${z:+ -z}" "$set 1x2" mpiexec -n 2 "$BIN/stage-out" --json $z \
				--state-dir "$W/zstate" "$W/z/$set" "$W/zo"
			rm -rf "$W/zstate"
		done
	done
	say "repetition $((rep + 1)) of $REPS done"
done

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
print("%-7s %-13s %8s %10s %8s" % ("data", "mode", "s", "MiB/s", "stored/raw"))
for data in ("smooth", "random"):
    for name in ("stage-out", "stage-out -z"):
        r = [x for x in rs if x["name"] == name and x["config"] == data + " 1x2" and x["rc"] == 0]
        s = med([x["seconds"] for x in r])
        ratio = med([x["json"]["bytes_written"] / x["json"]["raw_bytes"] for x in r if "json" in x])
        summary["zstd"].append({"data": data, "mode": name, "seconds": s,
                                "mib_per_s": size[data] / s / 2**20, "stored_over_raw": ratio})
        print("%-7s %-13s %8.2f %10.1f %8.3f" % (data, name, s, size[data] / s / 2**20, ratio))
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
	local why set m k rep
	if [ "${BENCH_STAGE_QUICK:-0}" = 1 ]; then
		GBIG=${BENCH_STAGE_GFARM_BIG:-8M} GN=${BENCH_STAGE_GFARM_SMALL_N:-20}
	fi
	K=${BENCH_STAGE_GFARM_NODES:-2} RATE=${BENCH_STAGE_GFARM_RATE:-200mbit}
	NET=${BENCH_STAGE_GFARM_NET:-198.19.34} GFMD_PORT=${BENCH_STAGE_GFARM_GFMD_PORT:-20663}
	CB=${BENCH_STAGE_GFARM_BASE:-/tmp/gfsplit-bench-stage-gfarm} CPFX=gfsb
	CTAG="stage: gfarm" CERR="$W/err"
	# shellcheck source=bench/lib.sh
	. "$TOP/bench/lib.sh"
	cluster_skip() { cluster_die "$@"; }
	PATH="$PATH:/usr/sbin:/sbin"
	why=$(cluster_check gfreg gfpcopy) || { say "SKIP gfarm: $why"; return 0; }
	cluster_teardown	# ours, left by a run that was killed
	why=$(cluster_free) || { say "SKIP gfarm: $why"; return 0; }
	trap 'cluster_teardown; rm -rf "$W" "$L"' EXIT
	cluster_up
	say "gfarm: cluster up: gfmd + $K gfsd ($HOSTS), $RATE per link and way"
	cluster_unshape
	timeout 20 gfmkdir -p /bench/stage/big /bench/stage/small || cluster_die "gfmkdir failed"
	head -c "$(bytes "$GBIG")" /dev/urandom >"$W/f"
	timeout 300 gfreg -h "$(node_ip 1)" "$W/f" gfarm:///bench/stage/big/data 9<&- ||
		cluster_die "gfreg failed"
	mkdir -p "$W/s"
	for ((k = 0; k < GN; k++)); do
		head -c 131072 /dev/urandom >"$W/s/f$k"
	done
	for ((k = 0; k < GN; k++)); do
		timeout 60 gfreg -h "$(node_ip 1)" "$W/s/f$k" "gfarm:///bench/stage/small/f$k" 9<&- ||
			cluster_die "gfreg of small file $k failed"
	done
	rm -rf "$W/f" "$W/s"
	cluster_shape || cluster_die "cannot limit the links again"
	say "gfarm: $GBIG and $GN x 128K on node 1 ($(node_ip 1)); $REPS reps"
	REC=$W/gfarm.jsonl
	: >"$REC"
	for ((rep = 0; rep < REPS; rep++)); do
		for set in big small; do
			for m in 1 2; do
				if [ $((rep % 2)) -eq 0 ]; then g_stage "$set" "$m"; g_pcopy "$set" "$m"
				else g_pcopy "$set" "$m"; g_stage "$set" "$m"; fi
			done
		done
		say "gfarm: repetition $((rep + 1)) of $REPS done"
	done
	python3 - "$REC" "$BENCH_OUT/stage_gfarm.json" "$(bytes "$GBIG")" "$((GN * 131072))" "$RATE" <<'EOF'
import json, statistics, sys
rec, out, big, small, rate = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rs = [json.loads(l) for l in open(rec)]
size = {"big": big, "small": small}
def med(xs):
    return statistics.median(xs) if xs else float("nan")
rows = []
print("stage-in from Gfarm (data on one gfsd behind %s) vs gfpcopy per node" % rate)
print("(medians; ratio = gfpcopy / stage-in; read/sz = Gfarm bytes read / data size)")
print("%-6s %-5s %9s %10s %6s %8s" % ("data", "nodes", "stage s", "gfpcopy s", "ratio", "read/sz"))
for data in ("big", "small"):
    for m in (1, 2):
        st = [r for r in rs if r["name"] == "stage-in" and r["config"] == "%s %dx2" % (data, m) and r["rc"] == 0]
        gp = [r for r in rs if r["name"] == "gfpcopy" and r["config"] == "%s %dx1" % (data, m) and r["rc"] == 0]
        s, g = med([r["seconds"] for r in st]), med([r["seconds"] for r in gp])
        rd = med([r["json"]["bytes_read"] / size[data] for r in st if "json" in r])
        rows.append({"data": data, "nodes": m, "stage_in_s": s, "gfpcopy_s": g, "ratio": g / s,
                     "read_once_factor": rd, "bytes_per_node": size[data]})
        print("%-6s %-5d %9.2f %10.2f %6.2f %8.2f" % (data, m, s, g, g / s, rd))
failed = [r for r in rs if r["rc"] != 0]
json.dump({"rate": rate, "rows": rows, "runs": rs, "failed": len(failed)}, open(out, "w"), indent=1)
sys.exit(1 if failed else 0)
EOF
}
# g_stage SET NODES: stage-in of gfarm:///bench/stage/SET/ to NODES x 2 ranks
g_stage() {
	local set=$1 m=$2 args=() k
	rm -rf "$L/d"
	for ((k = 0; k < m; k++)); do
		[ $k -gt 0 ] && args+=(:)
		args+=(-n 2 -env GFSPLIT_NODE "node$k" "$BIN/stage-in" --json
		       "gfarm:///bench/stage/$set/" "$L/d/%h")
	done
	run stage-in "$set ${m}x2" timeout 900 mpiexec "${args[@]}"
}
# g_pcopy SET NODES: gfpcopy of the same directory once per node, at once
g_pcopy() {
	local set=$1 m=$2
	rm -rf "$L/d"
	mkdir -p "$L/d"
	run gfpcopy "$set ${m}x1" bash -c '
		for ((k = 0; k < $1; k++)); do
			timeout 900 gfpcopy -q "gfarm:///bench/stage/$2" "$3/node$k" &
		done
		wait' _ "$m" "$set" "$L/d"
}

want posix && posix_bench
want gfarm && gfarm_bench
