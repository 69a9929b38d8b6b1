#!/usr/bin/env python3
"""Round-trip benchmark: pcp-split and gfsplit-merge against dd bs=4M.

For each rank count, each repetition times, on the same file system and in the
same run:
  dd      dd if=SRC of=COPY bs=4M            (the baseline: one sequential copy)
  split   mpiexec -n N pcp-split SRC DST.split
  merge   mpiexec -n N gfsplit-merge DST.split OUT   (checksums verified)
and reports medians of the throughputs and the ratios split/dd and merge/dd.
Two clocks are reported for the tools: wall (the whole mpiexec, as a user
sees it, MPI start-up included) and internal (the command's own --json
"seconds": from after MPI start-up to the commit).  Peak resident memory per
rank and CPU time come from the commands' --json summaries.

Outputs are removed between runs, so every run writes fresh files, and
the page cache is flushed (sync, untimed) before each timed command.  With
--sync every writer (dd conv=fsync, pcp-split --sync, gfsplit-merge --sync)
flushes to the device before it reports.

  bench/roundtrip.py [--size 1G] [--ranks 2,4] [--reps 5] [--dir bench/out]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from benchlib import BIN, TOP, parse_size


def run(cmd, env=None):
    # Every contender starts from the same state: nothing dirty in the page
    # cache.  Otherwise whoever runs after another writer competes with the
    # kernel flushing that writer's data (merge, right after split, did).
    os.sync()
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, env=env)
    dt = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("bench: %s failed (exit %d):\n%s" % (" ".join(cmd), p.returncode, p.stderr))
    return dt, p.stdout


def rm(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.unlink(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="1G")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--dir", default=os.path.join(TOP, "bench", "out"))
    ap.add_argument("--sync", action="store_true")
    ap.add_argument("--json", help="write the results here too")
    a = ap.parse_args()

    size = parse_size(a.size)
    os.makedirs(a.dir, exist_ok=True)
    src = os.path.join(a.dir, "src")
    copy = os.path.join(a.dir, "dd.copy")
    split = os.path.join(a.dir, "dst.split")
    out = os.path.join(a.dir, "merged")
    env = dict(os.environ, HYDRA_LAUNCHER=os.environ.get("HYDRA_LAUNCHER", "fork"))

    if not os.path.exists(src) or os.path.getsize(src) != size:
        with open(src, "wb") as f:
            left = size
            while left:
                n = min(left, 64 << 20)
                f.write(os.urandom(n))
                left -= n
    with open(src, "rb") as f:  # warm the page cache for every contender alike
        while f.read(64 << 20):
            pass

    sync_dd = ["conv=fsync"] if a.sync else []
    sync_opt = ["--sync"] if a.sync else []
    results = {"size_bytes": size, "reps": a.reps, "sync": a.sync, "dir": a.dir,
               "ranks": {}}
    for n in [int(x) for x in a.ranks.split(",")]:
        rows = {k: [] for k in ("dd", "split_wall", "split_int", "merge_wall", "merge_int")}
        mem = {"split_max_rss_kib": 0, "merge_max_rss_kib": 0}
        cpu = {"split": [], "merge": []}
        for _ in range(a.reps):
            for p in (copy, split, out):
                rm(p)
            dt, _ = run(["dd", "if=" + src, "of=" + copy, "bs=4M", "status=none"] + sync_dd)
            rows["dd"].append(size / dt)
            rm(copy)

            dt, so = run(["mpiexec", "-n", str(n), os.path.join(BIN, "pcp-split"), "--json"]
                         + sync_opt + [src, split], env)
            j = json.loads(so)
            rows["split_wall"].append(size / dt)
            rows["split_int"].append(size / j["seconds"])
            mem["split_max_rss_kib"] = max(mem["split_max_rss_kib"], j["max_rss_kib"])
            cpu["split"].append(j["cpu_seconds"])

            dt, so = run(["mpiexec", "-n", str(n), os.path.join(BIN, "gfsplit-merge"), "--json"]
                         + sync_opt + [split, out], env)
            j = json.loads(so)
            rows["merge_wall"].append(size / dt)
            rows["merge_int"].append(size / j["seconds"])
            mem["merge_max_rss_kib"] = max(mem["merge_max_rss_kib"], j["max_rss_kib"])
            cpu["merge"].append(j["cpu_seconds"])
            if subprocess.run(["cmp", "-s", src, out]).returncode != 0:
                sys.exit("bench: merged output differs from the source")
        med = {k: statistics.median(v) for k, v in rows.items()}
        r = {
            "dd_MiBps": med["dd"] / 2**20,
            "split_wall_MiBps": med["split_wall"] / 2**20,
            "split_internal_MiBps": med["split_int"] / 2**20,
            "merge_wall_MiBps": med["merge_wall"] / 2**20,
            "merge_internal_MiBps": med["merge_int"] / 2**20,
            "split_vs_dd_wall": med["split_wall"] / med["dd"],
            "split_vs_dd_internal": med["split_int"] / med["dd"],
            "merge_vs_dd_wall": med["merge_wall"] / med["dd"],
            "merge_vs_dd_internal": med["merge_int"] / med["dd"],
            "split_cpu_seconds": statistics.median(cpu["split"]),
            "merge_cpu_seconds": statistics.median(cpu["merge"]),
        }
        r.update(mem)
        results["ranks"][str(n)] = r
        print("ranks %d: dd %.0f MiB/s | split %.0f MiB/s wall (%.2fx dd), %.0f internal (%.2fx)"
              " | merge %.0f MiB/s wall (%.2fx dd), %.0f internal (%.2fx)"
              " | max RSS split %d KiB, merge %d KiB" % (
                  n, r["dd_MiBps"], r["split_wall_MiBps"], r["split_vs_dd_wall"],
                  r["split_internal_MiBps"], r["split_vs_dd_internal"],
                  r["merge_wall_MiBps"], r["merge_vs_dd_wall"],
                  r["merge_internal_MiBps"], r["merge_vs_dd_internal"],
                  mem["split_max_rss_kib"], mem["merge_max_rss_kib"]), flush=True)
        for p in (copy, split, out):
            rm(p)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=2)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
