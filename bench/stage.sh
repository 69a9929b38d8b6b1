#!/bin/bash
# bench/stage.sh - stage-in against `cp -r` per node, and zstd on the way
# out (issue 6), on POSIX storage of this machine:
#
#   bash bench/stage.sh
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
# zstd: stage-out of a smooth float array (float32, a sum of a few waves
# over a 3-D grid) and of random bytes, with and without --compress:
# stored/raw ratio and throughput.  Medians of REPS runs, contenders in an
# order that rotates with each repetition.  JSON in $BENCH_OUT/stage.json.
#
# Tunables (environment): BENCH_STAGE_BIG (1G), BENCH_STAGE_SMALL_N (2000),
# BENCH_STAGE_SMALL_SIZE (128K), BENCH_STAGE_REPS (3), BENCH_STAGE_ZSIZE
# (256M), BENCH_STAGE_QUICK=1 (tiny sizes, one repetition: a smoke test).
set -u
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
else
	BIG=${BENCH_STAGE_BIG:-1G} SMALL_N=${BENCH_STAGE_SMALL_N:-2000}
	SMALL_SIZE=${BENCH_STAGE_SMALL_SIZE:-128K} REPS=${BENCH_STAGE_REPS:-3}
	ZSIZE=${BENCH_STAGE_ZSIZE:-256M}
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

for ((rep = 0; rep < REPS; rep++)); do
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
json.dump(summary, open(out, "w"), indent=1)
if failed:
    print("\n%d runs FAILED (see %s)" % (len(failed), out))
    sys.exit(1)
EOF
