#!/bin/bash
# bench/envelope.sh - envelope-bench's prediction error, and its envelope
# against independent measurements of the same operations:
#
#   bash bench/envelope.sh [posix] [gfarm]        (default: posix)
#
# For each target: the envelope is measured once (mpiexec -n RANKS, the
# default sweep of sizes and process counts, ENV_REPS repetitions; its
# peak RSS and CPU time recorded), then each preset stage (mprojectpp,
# bandwidth-bound, metadata-bound) is replayed RUNS times free running
# (and bandwidth-bound, whose rounds are few, also --lockstep), each
# replay the median of its REPLAY_REPS runs; the error of each is
# (predicted - measured) / measured, and the figure is the median over
# the RUNS.  This machine's speed drifts by up to 2x over minutes (other
# tenants), so each run also measures an envelope of its own just before
# its replays (RANKS processes only, the presets' C) and the error is
# given for the prediction from it too: the model's error with less of
# the drift in it.
#   posix  a directory on /dev/shm (node-local RAM storage); the
#          metadata-bound preset with 10x the tasks (4000 tasks of 1 KiB
#          last ~0.05 s there: too short to time)
#   gfarm  the test fixture's Gfarm (tests/gfarm/start.sh): one gfmd, 4
#          gfsd on loopback addresses, rank r on gfsd r mod 4 (--hosts);
#          its spools on /dev/shm too (on the disk, the gigabytes of the
#          sweep leave dirty pages whose writeback throttles later phases)
# Cross-check, on the same target in the same run, one process, each a
# loop written apart from envelope-bench that does what its phase does:
#   create     a new file (timed), 1 KiB written into it and closed
#              (untimed), one after the other; posix: python os.open
#              (O_CREAT|O_EXCL); gfarm: python calling libgfarm
#              (gfs_pio_create and pinning to the node); against the
#              envelope's create at 1 process, 1 KiB
#   write      XFER / 16 MiB new files of 16 MiB in calls of the
#              envelope's buffer size, an untimed pass then the median of
#              three; posix: python os.write; gfarm: python + libgfarm;
#              against the envelope's write at 1 process, 16 MiB
#   read       those files, the same way (readinto; gfs_pio_read);
#              against read-local at 1 process, 16 MiB
#   and for reference the stock tools, a process each (its start-up
#   timed): posix dd writing and reading one XFER file; gfarm gfreg -h
#   NODE and gfexport of one
# JSON in $BENCH_OUT/envelope_MODE.json, the envelope measured in
# envelope_MODE_envelope.json, the heat map of write bandwidth in
# envelope_MODE.svg.  Tunables: RANKS (8), RUNS (3), ENV_REPS
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
ENV_OPTS=""
if [ "${BENCH_ENVELOPE_QUICK:-0}" = 1 ]; then
	RUNS=1 ENV_REPS=1 REPLAY_REPS=1 XFER=16M
	ENV_OPTS="--sizes 1K,1M,16M --procs $RANKS --files 16 --work 32M"
fi
say() { echo "envelope: $*" >&2; }
W=$(mktemp -d /tmp/gfsplit-bench-envelope.XXXXXX)
cleanup() {
	[ -n "${GFARM_BASE_B:-}" ] && GFARM_BASE=$GFARM_BASE_B "$TOP/tests/gfarm/stop.sh" >/dev/null 2>&1
	rm -rf "$W" "${SHM:-}" "${GFARM_BASE_B:-}"
}
trap cleanup EXIT

# usage FILE CMD...: CMD, then its process tree's peak RSS (KiB, the
# largest process) and CPU seconds into FILE as JSON
usage() {
	local f=$1; shift
	python3 - "$f" "$@" <<'EOF'
import json, resource, subprocess, sys
rc = subprocess.run(sys.argv[2:]).returncode
u = resource.getrusage(resource.RUSAGE_CHILDREN)
json.dump({"max_rss_kib": u.ru_maxrss, "cpu_s": u.ru_utime + u.ru_stime}, open(sys.argv[1], "w"))
sys.exit(rc)
EOF
}

# replays MODE TARGET HOSTOPT...: RUNS x 3 presets x (free, lockstep)
replays() {
	local mode=$1 target=$2 run p lock locks tasks; shift 2
	for run in $(seq 1 "$RUNS"); do
		# this run's own envelope: RANKS processes only (the presets'
		# C), measured just before its replays
		say "$mode: envelope of run $run (--procs $RANKS)"
		mpiexec -n "$RANKS" "$EB" --json --reps "$ENV_REPS" --procs "$RANKS" "$@" $ENV_OPTS \
			"$target" >"$W/env_${mode}_$run.json" || { say "envelope failed"; exit 1; }
		for p in mprojectpp bandwidth-bound metadata-bound; do
			tasks=""
			[ "$p" = metadata-bound ] && [ "$mode" = posix ] && tasks="--tasks 40000"
			[ "${BENCH_ENVELOPE_QUICK:-0}" = 1 ] && tasks="--tasks $((RANKS * 4))"
			# lockstep: the stage as the formulas count it; only
			# where rounds are few (its barriers and stragglers
			# cost a round each, which the formulas do not count)
			locks=""
			[ "$p" = bandwidth-bound ] && locks=--lockstep
			for lock in "" $locks; do
				say "$mode: replay $p ${lock:-free} (run $run)"
				mpiexec -n "$RANKS" "$EB" replay --json --reps "$REPLAY_REPS" "$@" \
					-e "$W/env_$mode.json" --preset $p $tasks $lock "$target" \
					>"$W/r_${mode}_${p}_${lock:+lock}_$run.json" ||
					{ say "replay failed"; exit 1; }
			done
			"$EB" predict --json -e "$W/env_${mode}_$run.json" --preset $p $tasks \
				>"$W/p_${mode}_${p}_$run.json" || { say "predict failed"; exit 1; }
		done
	done
}

# summary MODE: the JSON and the table
summary() {
	python3 - "$1" "$W" "$BENCH_OUT" "$RUNS" <<'EOF'
import json, os, statistics, sys
mode, w, out, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
env = json.load(open(f"{w}/env_{mode}.json"))
def point(metric, procs, size):
    for p in env["points"]:
        if (p["metric"], p["procs"], p["size"]) == (metric, procs, size):
            return p
use = json.load(open(f"{w}/usage_{mode}.json"))
res = {"mode": mode, "target": env["target"], "machine": env["machine"],
       "envelope_seconds": env["seconds"], "envelope_usage": use, "replays": {}, "cross_check": {}}
print(f"\n== {mode}: {env['target']['path']}  (envelope: {env['seconds']:.0f} s, "
      f"peak RSS of a process {use['max_rss_kib'] / 1024:.0f} MiB, CPU {use['cpu_s']:.0f} s)")
print("error = (predicted - measured) / measured, medians of the runs; predicted from the sweep's\n"
      "envelope, and (run's envelope) from the envelope measured just before the run's replays")
print(f"{'preset':16} {'run':9} {'measured s':>10} {'predicted s':>11} {'error':>7}  {'the runs':23}"
      f" {'run envelope':>12} {'error':>7}  the runs")
pct = lambda v: f"{100 * v:+.1f}%"
for p in ("mprojectpp", "bandwidth-bound", "metadata-bound"):
    for lock in ("", "lock"):
        if not os.path.exists(f"{w}/r_{mode}_{p}_{lock}_1.json"):
            continue
        rs = [json.load(open(f"{w}/r_{mode}_{p}_{lock}_{i}.json")) for i in range(1, runs + 1)]
        ps = [json.load(open(f"{w}/p_{mode}_{p}_{i}.json"))["total_s"] for i in range(1, runs + 1)]
        meas = [r["measured"]["median"] for r in rs]
        errs = [r["error"] for r in rs]
        perrs = [(q - m) / m for q, m in zip(ps, meas)]
        key = p + (" lockstep" if lock else "")
        res["replays"][key] = {"errors": errs, "median_error": statistics.median(errs),
            "measured_s": meas, "predicted_s": [r["predicted_s"] for r in rs],
            "run_envelope_predicted_s": ps, "run_envelope_errors": perrs,
            "run_envelope_median_error": statistics.median(perrs),
            "tasks": rs[0]["prediction"]["shape"]["tasks"]}
        print(f"{p:16} {'lockstep' if lock else 'free':9} {statistics.median(meas):10.3f} "
              f"{statistics.median(res['replays'][key]['predicted_s']):11.3f} {pct(statistics.median(errs)):>7}  "
              f"{' '.join(pct(e) for e in errs):23} {statistics.median(ps):12.3f} "
              f"{pct(statistics.median(perrs)):>7}  " + " ".join(pct(e) for e in perrs))
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
    if "tool" in cc[name]:
        res["cross_check"][name].update(tool=cc[name]["tool"], tool_how=cc[name]["tool_how"])
    print(f"cross-check {name:7} envelope {e:14.4g} {unit}/s   {cc[name]['how']:36} {cc[name]['rate']:14.4g}   ratio {ratio:.3f}"
          + (f"\n{'':44}({cc[name]['tool_how']}: {cc[name]['tool']:.4g}, ratio {e / cc[name]['tool']:.3f})"
             if "tool" in cc[name] else ""))
json.dump(res, open(f"{out}/envelope_{mode}.json", "w"), indent=1)
json.dump(env, open(f"{out}/envelope_{mode}_envelope.json", "w"))
EOF
}

# -------------------------------------------------------------- posix
if case " $MODES " in *" posix "*) true ;; *) false ;; esac; then
	SHM=$(mktemp -d /dev/shm/gfsplit-bench-envelope.XXXXXX)
	say "posix: measuring the envelope of $SHM"
	usage "$W/usage_posix.json" mpiexec -n "$RANKS" "$EB" --json --reps "$ENV_REPS" $ENV_OPTS \
		--heatmap "$BENCH_OUT/envelope_posix.svg" "$SHM" >"$W/env_posix.json" || exit 1
	replays posix "$SHM"
	say "posix: cross-check"
	python3 - "$SHM" "$XFER" "$W/env_posix.json" >"$W/cross_posix.json" <<'EOF'
import json, os, re, statistics, subprocess, sys, time
d, xfer, envf = sys.argv[1], sys.argv[2], sys.argv[3]
# create as the envelope does: open(O_CREAT|O_EXCL) of a new file (timed),
# 1 KiB written into it and closed (untimed), one file after the other
n, tc, kib = 10000, 0.0, os.urandom(1024)
for i in range(n):
    t = time.monotonic()
    fd = os.open(f"{d}/c.{i}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    tc += time.monotonic() - t
    os.write(fd, kib)
    os.close(fd)
for i in range(n):
    os.unlink(f"{d}/c.{i}")
# write and read as the envelope does (16 MiB files, its call size), XFER
# bytes a pass, one untimed pass then the median of three
env = json.load(open(envf))
bs, fsz = env["method"]["buffer"], 16 << 20
nfiles = max(1, (int(re.match(r"(\d+)", xfer).group(1)) << 20) // fsz)
buf, rbuf = os.urandom(bs), bytearray(bs)
def write_pass():
    for i in range(nfiles):     # new files every pass, as the envelope's
        if os.path.exists(f"{d}/x.{i}"):
            os.unlink(f"{d}/x.{i}")
    t = time.monotonic()
    for i in range(nfiles):
        fd = os.open(f"{d}/x.{i}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        for _ in range(fsz // bs):
            os.write(fd, buf)
        os.close(fd)
    return nfiles * fsz / (time.monotonic() - t)
def read_pass():
    t = time.monotonic()
    for i in range(nfiles):
        with open(f"{d}/x.{i}", "rb", buffering=0) as f:
            while f.readinto(rbuf):
                pass
    return nfiles * fsz / (time.monotonic() - t)
def med3(fn):
    fn()
    return statistics.median(fn() for _ in range(3))
wr, rd = med3(write_pass), med3(read_pass)
def dd(args):
    err = subprocess.run(["dd"] + args, capture_output=True, text=True, check=True).stderr
    m = re.search(r"(\d+) bytes .* copied, ([\d.]+) s", err)
    return int(m.group(1)) / float(m.group(2))
for i in range(nfiles):
    os.unlink(f"{d}/x.{i}")
ddw = dd(["if=/dev/zero", f"of={d}/x", f"bs={bs}", f"count={nfiles * fsz // bs}"])
ddr = dd([f"if={d}/x", "of=/dev/null", f"bs={bs}"])
os.unlink(f"{d}/x")
how = f"python {nfiles} x 16M files, {bs >> 20}M calls"
json.dump({"create": {"rate": n / tc, "how": f"python os.open x{n}"},
           "write": {"rate": wr, "how": how + " os.write", "tool": ddw,
                     "tool_how": f"dd if=/dev/zero bs={bs >> 20}M, {xfer}"},
           "read": {"rate": rd, "how": how + " readinto", "tool": ddr,
                    "tool_how": f"dd of=/dev/null bs={bs >> 20}M, {xfer}"}}, sys.stdout)
EOF
	summary posix
fi

# -------------------------------------------------------------- gfarm
if case " $MODES " in *" gfarm "*) true ;; *) false ;; esac; then
	# the spools in memory too: on this machine's disk, gigabytes written
	# in the sweep leave dirty pages whose writeback throttles later
	# phases by the hidden state of the page cache
	GFARM_BASE_B=$(mktemp -d /dev/shm/gfsplit-bench-gfarm.XXXXXX)
	eval "$(GFARM_BASE=$GFARM_BASE_B GFARM_NODES=4 GFARM_GFMD_PORT=24601 \
		GFARM_GFSD_PORT=24600 GFARM_IP_PREFIX=127.0.88 "$TOP/tests/gfarm/start.sh" 2>"$W/gfarm.log")" ||
		{ say "cannot start Gfarm: $(tail -n 5 "$W/gfarm.log")"; exit 1; }
	export GFARM_CONFIG_FILE
	HOSTS=$(echo $GFARM_TEST_HOSTS | tr ' ' ,)
	gfmkdir /eb
	say "gfarm: measuring the envelope of gfarm:///eb (nodes $HOSTS)"
	usage "$W/usage_gfarm.json" mpiexec -n "$RANKS" "$EB" --json --reps "$ENV_REPS" --hosts "$HOSTS" $ENV_OPTS \
		--heatmap "$BENCH_OUT/envelope_gfarm.svg" gfarm:///eb >"$W/env_gfarm.json" || exit 1
	replays gfarm gfarm:///eb --hosts "$HOSTS"
	say "gfarm: cross-check"
	python3 - "${HOSTS%%,*}" "$XFER" "$W" >"$W/cross_gfarm.json" <<'EOF'
import ctypes, json, os, re, statistics, subprocess, sys, time
host, xfer, w = sys.argv[1], sys.argv[2], sys.argv[3]
g = ctypes.CDLL("libgfarm.so.1")
assert g.gfarm_initialize(None, None) == 0
env = json.load(open(f"{w}/env_gfarm.json"))
bs, fsz = env["method"]["buffer"], 16 << 20
buf = ctypes.create_string_buffer(os.urandom(bs), bs)
got = ctypes.c_int()
def create(path):	# GFARM_FILE_WRONLY (1) | GFARM_FILE_EXCLUSIVE (0x1000)
    f = ctypes.c_void_p()
    e = g.gfs_pio_create(path.encode(), 1 | 0x1000, 0o644, ctypes.byref(f))
    e = e or g.gfs_pio_internal_set_view_section(f, host.encode())
    assert e == 0, e
    return f
def write(f, n):
    while n > 0:
        assert g.gfs_pio_write(f, buf, min(n, bs), ctypes.byref(got)) == 0
        n -= got.value
    assert g.gfs_pio_close(f) == 0
# create as the envelope does: a new file pinned to the node (timed), 1 KiB
# written into it and closed (untimed), one file after the other
n, tc = 500, 0.0
for i in range(n):
    t = time.monotonic()
    f = create(f"/eb/c.{i}")
    tc += time.monotonic() - t
    write(f, 1024)
for i in range(n):
    g.gfs_unlink(f"/eb/c.{i}".encode())
# write and read as the envelope does (16 MiB files, its call size), XFER
# bytes a pass, one untimed pass then the median of three
nfiles = max(1, (int(re.match(r"(\d+)", xfer).group(1)) << 20) // fsz)
def write_pass():
    for i in range(nfiles):
        g.gfs_unlink(f"/eb/x.{i}".encode())
    t = time.monotonic()
    for i in range(nfiles):
        write(create(f"/eb/x.{i}"), fsz)
    return nfiles * fsz / (time.monotonic() - t)
def read_pass():
    t = time.monotonic()
    for i in range(nfiles):
        f = ctypes.c_void_p()
        assert g.gfs_pio_open(f"/eb/x.{i}".encode(), 0, ctypes.byref(f)) == 0
        left = fsz
        while True:
            assert g.gfs_pio_read(f, buf, bs, ctypes.byref(got)) == 0
            if got.value == 0:
                break
            left -= got.value
        assert left == 0 and g.gfs_pio_close(f) == 0
    return nfiles * fsz / (time.monotonic() - t)
def med3(fn):
    fn()
    return statistics.median(fn() for _ in range(3))
wr, rd = med3(write_pass), med3(read_pass)
for i in range(nfiles):
    g.gfs_unlink(f"/eb/x.{i}".encode())
# for reference, the Gfarm tools (a process each: its start-up is timed)
count = int(re.match(r"(\d+)", xfer).group(1)) << 20
src = f"/dev/shm/gfsplit-bench-envelope.{os.getpid()}"
with open(src, "wb") as f:
    f.write(os.urandom(1 << 20) * (count >> 20))
t = time.monotonic()
subprocess.run(["gfreg", "-h", host, src, "/eb/x"], check=True)
gfreg = count / (time.monotonic() - t)
t = time.monotonic()
subprocess.run(["gfexport", "/eb/x"], check=True, stdout=subprocess.DEVNULL)
gfexport = count / (time.monotonic() - t)
subprocess.run(["gfrm", "/eb/x"], check=True)
os.unlink(src)
how = f"libgfarm {nfiles} x 16M files, {bs >> 20}M calls"
json.dump({"create": {"rate": n / tc, "how": f"libgfarm create+pin x{n}"},
           "write": {"rate": wr, "how": how + " write", "tool": gfreg, "tool_how": f"gfreg -h node {xfer}"},
           "read": {"rate": rd, "how": how + " read", "tool": gfexport, "tool_how": f"gfexport {xfer}"}}, sys.stdout)
EOF
	summary gfarm
fi
