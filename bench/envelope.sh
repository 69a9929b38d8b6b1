#!/bin/bash
# bench/envelope.sh - envelope-bench's prediction error, and its envelope
# against independent measurements of the same operations (issue 7):
#
#   bash bench/envelope.sh [posix] [gfarm]        (default: posix)
#
# For each target: the envelope is measured once (mpiexec -n RANKS, the
# default sweep of sizes and process counts, ENV_REPS repetitions), then
# each preset stage (mprojectpp, bandwidth-bound, metadata-bound) is
# replayed RUNS times, free running and --lockstep, each replay the median
# of its REPLAY_REPS runs; the error of each is (predicted - measured) /
# measured, and the figure is the median over the RUNS.
#   posix  a directory on /dev/shm (node-local RAM storage); the
#          metadata-bound preset with 10x the tasks (4000 tasks of 1 KiB
#          last ~0.05 s there: too short to time)
#   gfarm  the test fixture's Gfarm (tests/gfarm/start.sh): one gfmd, 4
#          gfsd on loopback addresses, rank r on gfsd r mod 4 (--hosts)
# Cross-check, on the same target in the same run, one process:
#   create     posix: a bash loop of `exec {fd}>file` (an open(O_CREAT)
#              kept open, as envelope-bench's create step), gfarm: the same
#              loop in python calling libgfarm (gfs_pio_create and pinning
#              to the node), against the envelope's create at 1 process,
#              1 KiB
#   write      posix: dd bs=1M of XFER bytes; gfarm: gfreg -h NODE; against
#              the envelope's write bandwidth at 1 process, 16 MiB
#   read       posix: dd to /dev/null; gfarm: gfexport; against read-local
#              at 1 process, 16 MiB
# JSON in $BENCH_OUT/envelope_MODE.json, the heat map of write bandwidth in
# $BENCH_OUT/envelope_MODE.svg.  Tunables: RANKS (8), RUNS (3), ENV_REPS
# (5), REPLAY_REPS (3), XFER (256M), BENCH_ENVELOPE_QUICK=1 (a smoke test:
# small sizes, few tasks, one run).
set -u
MODES=${*:-posix}
for _m in $MODES; do
	case $_m in posix | gfarm) ;; *) echo "usage: bench/envelope.sh [posix] [gfarm]" >&2; exit 2 ;; esac
done
HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
BIN=${BIN:-$TOP/bin}
EB=$BIN/envelope-bench
export HYDRA_LAUNCHER=${HYDRA_LAUNCHER:-fork}
unset GFSPLIT_FAULT GFSPLIT_PROGRESS GFSPLIT_GFARM_HOSTS
PATH="$PATH:/usr/sbin:/sbin"
BENCH_OUT=${BENCH_OUT:-$HERE/out}
mkdir -p "$BENCH_OUT"
RANKS=${RANKS:-8} RUNS=${RUNS:-3} ENV_REPS=${ENV_REPS:-5} REPLAY_REPS=${REPLAY_REPS:-3}
XFER=${XFER:-256M}
ENV_OPTS="" TASKS_SCALE=1
if [ "${BENCH_ENVELOPE_QUICK:-0}" = 1 ]; then
	RUNS=1 ENV_REPS=1 REPLAY_REPS=1 XFER=16M
	ENV_OPTS="--sizes 1K,1M,16M --procs $RANKS --files 16 --work 32M"
fi
say() { echo "envelope: $*" >&2; }
W=$(mktemp -d /tmp/gfsplit-bench-envelope.XXXXXX)
cleanup() {
	[ -n "${GFARM_BASE_B:-}" ] && GFARM_BASE=$GFARM_BASE_B "$TOP/tests/gfarm/stop.sh" >/dev/null 2>&1
	rm -rf "$W" "${SHM:-}"
}
trap cleanup EXIT

now() { date +%s.%N; }

# replays MODE TARGET HOSTOPT...: RUNS x 3 presets x (free, lockstep)
replays() {
	local mode=$1 target=$2 run p lock tasks; shift 2
	for run in $(seq 1 "$RUNS"); do
		for p in mprojectpp bandwidth-bound metadata-bound; do
			tasks=""
			[ "$p" = metadata-bound ] && [ "$mode" = posix ] && tasks="--tasks 40000"
			[ "${BENCH_ENVELOPE_QUICK:-0}" = 1 ] && tasks="--tasks $((RANKS * 4))"
			for lock in "" --lockstep; do
				say "$mode: replay $p ${lock:-free} (run $run)"
				mpiexec -n "$RANKS" "$EB" replay --json --reps "$REPLAY_REPS" "$@" \
					-e "$W/env_$mode.json" --preset $p $tasks $lock "$target" \
					>"$W/r_${mode}_${p}_${lock:+lock}_$run.json" ||
					{ say "replay failed"; exit 1; }
			done
		done
	done
}

# summary MODE: the JSON and the table
summary() {
	python3 - "$1" "$W" "$BENCH_OUT" "$RUNS" <<'EOF'
import glob, json, os, statistics, sys
mode, w, out, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
env = json.load(open(f"{w}/env_{mode}.json"))
def point(metric, procs, size):
    for p in env["points"]:
        if (p["metric"], p["procs"], p["size"]) == (metric, procs, size):
            return p
res = {"mode": mode, "target": env["target"], "machine": env["machine"],
       "envelope_seconds": env["seconds"], "replays": {}, "cross_check": {}}
print(f"\n== {mode}: {env['target']['path']}  (envelope: {env['seconds']:.0f} s)")
print(f"{'preset':16} {'run':10} {'measured s':>11} {'predicted s':>12} {'error':>8}   errors of the {runs} runs")
for p in ("mprojectpp", "bandwidth-bound", "metadata-bound"):
    for lock in ("", "lock"):
        rs = [json.load(open(f)) for f in sorted(glob.glob(f"{w}/r_{mode}_{p}_{lock}_*.json"))]
        if not rs:
            continue
        errs = [r["error"] for r in rs]
        med = statistics.median(errs)
        key = p + (" lockstep" if lock else "")
        res["replays"][key] = {"errors": errs, "median_error": med,
            "measured_s": [r["measured"]["median"] for r in rs],
            "predicted_s": [r["predicted_s"] for r in rs],
            "tasks": rs[0]["prediction"]["shape"]["tasks"]}
        print(f"{p:16} {'lockstep' if lock else 'free':10} {statistics.median(res['replays'][key]['measured_s']):11.3f} "
              f"{statistics.median(res['replays'][key]['predicted_s']):12.3f} {100*med:+7.1f}%   "
              + " ".join(f"{100*e:+.1f}%" for e in errs))
cc = json.load(open(f"{w}/cross_{mode}.json"))
for name, metric, size, unit in (("create", "create", 1024, "ops"), ("write", "write", 16 << 20, "bytes"),
                                 ("read", "read-local", 16 << 20, "bytes")):
    p = point(metric, 1, size)
    if p is None or name not in cc:
        continue
    e = p["ops_per_s"]["median"] if unit == "ops" else p["bytes_per_s"]["median"]
    ratio = e / cc[name]["rate"]
    res["cross_check"][name] = {"envelope": e, "independent": cc[name]["rate"], "how": cc[name]["how"],
                                "unit": unit + "/s", "ratio": ratio}
    print(f"cross-check {name:7} envelope {e:14.4g} {unit}/s   {cc[name]['how']:28} {cc[name]['rate']:14.4g}   ratio {ratio:.3f}")
json.dump(res, open(f"{out}/envelope_{mode}.json", "w"), indent=1)
EOF
}

# -------------------------------------------------------------- posix
if case " $MODES " in *" posix "*) true ;; *) false ;; esac; then
	SHM=$(mktemp -d /dev/shm/gfsplit-bench-envelope.XXXXXX)
	say "posix: measuring the envelope of $SHM"
	mpiexec -n "$RANKS" "$EB" --json --reps "$ENV_REPS" $ENV_OPTS \
		--heatmap "$BENCH_OUT/envelope_posix.svg" "$SHM" >"$W/env_posix.json" || exit 1
	replays posix "$SHM"
	say "posix: cross-check"
	python3 - "$SHM" "$XFER" >"$W/cross_posix.json" <<'EOF'
import json, os, re, subprocess, sys, time
d, xfer = sys.argv[1], sys.argv[2]
n = 2000
# the envelope's create: open(O_CREAT) of a new file, kept open
script = f'cd {d}; t0=$EPOCHREALTIME; for i in $(seq {n}); do exec {{fd}}>c.$i; done; t1=$EPOCHREALTIME; echo $t0 $t1'
t0, t1 = map(float, subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout.split())
subprocess.run(f"rm -f {d}/c.*", shell=True, check=True)
def dd(args):
    err = subprocess.run(["dd"] + args, capture_output=True, text=True, check=True).stderr
    m = re.search(r"(\d+) bytes .* copied, ([\d.]+) s", err)
    return int(m.group(1)) / float(m.group(2))
count = int(re.match(r"(\d+)", xfer).group(1))
w = dd(["if=/dev/zero", f"of={d}/dd", "bs=1M", f"count={count}"])
r = dd([f"if={d}/dd", "of=/dev/null", "bs=1M"])
os.unlink(f"{d}/dd")
json.dump({"create": {"rate": n / (t1 - t0), "how": f"bash exec {{fd}}> x{n}"},
           "write": {"rate": w, "how": f"dd bs=1M {xfer}"},
           "read": {"rate": r, "how": f"dd to /dev/null {xfer}"}}, sys.stdout)
EOF
	summary posix
fi

# -------------------------------------------------------------- gfarm
if case " $MODES " in *" gfarm "*) true ;; *) false ;; esac; then
	GFARM_BASE_B=$W/gfarm
	eval "$(GFARM_BASE=$GFARM_BASE_B GFARM_NODES=4 GFARM_GFMD_PORT=24601 \
		GFARM_GFSD_PORT=24600 GFARM_IP_PREFIX=127.0.88 "$TOP/tests/gfarm/start.sh" 2>"$W/gfarm.log")" ||
		{ say "cannot start Gfarm: $(tail -n 5 "$W/gfarm.log")"; exit 1; }
	export GFARM_CONFIG_FILE
	HOSTS=$(echo $GFARM_TEST_HOSTS | tr ' ' ,)
	gfmkdir /eb
	say "gfarm: measuring the envelope of gfarm:///eb (nodes $HOSTS)"
	mpiexec -n "$RANKS" "$EB" --json --reps "$ENV_REPS" --hosts "$HOSTS" $ENV_OPTS \
		--heatmap "$BENCH_OUT/envelope_gfarm.svg" gfarm:///eb >"$W/env_gfarm.json" || exit 1
	replays gfarm gfarm:///eb --hosts "$HOSTS"
	say "gfarm: cross-check"
	python3 - "${HOSTS%%,*}" "$XFER" "$W" >"$W/cross_gfarm.json" <<'EOF'
import ctypes, json, os, re, subprocess, sys, time
host, xfer, w = sys.argv[1], sys.argv[2], sys.argv[3]
g = ctypes.CDLL("libgfarm.so.1")
assert g.gfarm_initialize(None, None) == 0
n = 500
files = []
t0 = time.monotonic()
for i in range(n):
    f = ctypes.c_void_p()
    # GFARM_FILE_WRONLY (1) | GFARM_FILE_EXCLUSIVE (0x1000)
    e = g.gfs_pio_create(f"/eb/c.{i}".encode(), 1 | 0x1000, 0o644, ctypes.byref(f))
    e = e or g.gfs_pio_internal_set_view_section(f, host.encode())
    assert e == 0, e
    files.append(f)
t1 = time.monotonic()
for f in files:
    g.gfs_pio_close(f)
for i in range(n):
    g.gfs_unlink(f"/eb/c.{i}".encode())
count = int(re.match(r"(\d+)", xfer).group(1)) << 20
src = f"/dev/shm/gfsplit-bench-envelope.{os.getpid()}"
with open(src, "wb") as f:
    f.write(os.urandom(1 << 20) * (count >> 20))
t = time.monotonic()
subprocess.run(["gfreg", "-h", host, src, "/eb/x"], check=True)
wr = count / (time.monotonic() - t)
t = time.monotonic()
subprocess.run(["gfexport", "/eb/x"], check=True, stdout=subprocess.DEVNULL)
rd = count / (time.monotonic() - t)
subprocess.run(["gfrm", "/eb/x"], check=True)
os.unlink(src)
json.dump({"create": {"rate": n / (t1 - t0), "how": f"libgfarm create+pin x{n}"},
           "write": {"rate": wr, "how": f"gfreg -h node {xfer}"},
           "read": {"rate": rd, "how": f"gfexport {xfer}"}}, sys.stdout)
EOF
	summary gfarm
fi
