#!/usr/bin/env python3
"""bench/rewrite.py - space and time of a file rewritten in place through the
MPI-IO preload library, against plain MPICH in the same
run, and against an older build of the library if one is given.

The program is tests/helpers/mpi_rewrite (plain MPI-IO): N ranks write their
blocks of a segmented N-1 file ROUNDS times over (pattern indep: write_at of
every block, one epoch; coll: write_at_all, a new epoch each call; view: one
write_all through a vector view each round), then read the whole file back
and check it.  Contenders, in an order that rotates each repetition:

  plain  mpiexec -n N mpi_rewrite PATTERN F                (MPICH alone)
  lib    the same with LD_PRELOAD=lib/libgfsplit-mpiio.so, F selected
  old    the same with --old-lib LIB (e.g. a build of the code before
         in-place rewrites), if given

For each: the wall time of the mpiexec (median of --reps), and the bytes the
output takes (plain: the file's size; lib/old: the parts' total from
stat-layout --json), against the logical size.  Between runs the output is
removed and the page cache dropped (root), so each run starts cold.

  python3 bench/rewrite.py [--ranks 3] [--block 1M] [--segments 32]
          [--rounds 4] [--patterns indep,coll,view] [--reps 3]
          [--old-lib PATH] [--dir DIR] [--json OUT]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import BIN, ENV, TOP, drop_caches, parse_size

PROG = os.path.join(TOP, "tests", "unit", "mpi_rewrite")


def parts_total(path):
    out = subprocess.run([os.path.join(BIN, "stat-layout"), "--json", path],
                         check=True, capture_output=True, text=True).stdout
    return sum(p["part_size"] for p in json.loads(out)["parts"])


def run(args, name, lib, pattern, path):
    cmd = ["mpiexec", "-n", str(args.ranks)]
    if lib:
        cmd += ["env", "LD_PRELOAD=" + lib, "GFSPLIT_SPLIT_FILES=" + path]
    cmd += [PROG, pattern, path, str(args.rounds), str(args.block),
            str(args.segments)]
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=ENV, capture_output=True, text=True,
                       timeout=600)
    secs = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("rewrite.py: %s %s failed (exit %d):\n%s" %
                 (name, pattern, p.returncode, p.stderr[-2000:]))
    used = parts_total(path) if lib else os.path.getsize(path)
    return secs, used


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, default=3)
    ap.add_argument("--block", default="1M")
    ap.add_argument("--segments", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--patterns", default="indep,coll,view")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--old-lib")
    ap.add_argument("--dir")
    ap.add_argument("--json")
    args = ap.parse_args()
    args.block = parse_size(args.block)
    lib = os.path.join(TOP, "lib", "libgfsplit-mpiio.so")
    contenders = [("plain", None), ("lib", lib)]
    if args.old_lib:
        contenders.append(("old", os.path.abspath(args.old_lib)))
    logical = args.ranks * args.segments * args.block
    work = tempfile.mkdtemp(prefix="gfsplit-rewrite.", dir=args.dir)
    res = {}
    try:
        for pattern in args.patterns.split(","):
            for rep in range(args.reps):
                k = rep % len(contenders)
                for name, l in contenders[k:] + contenders[:k]:
                    path = os.path.join(work, "f.split")
                    if os.getuid() == 0:
                        drop_caches()
                    secs, used = run(args, name, l, pattern, path)
                    r = res.setdefault(pattern, {}).setdefault(
                        name, {"secs": [], "bytes": []})
                    r["secs"].append(secs)
                    r["bytes"].append(used)
                    shutil.rmtree(path, ignore_errors=True)
                    if os.path.exists(path):
                        os.unlink(path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("rewrite in place: %d ranks, %d segments of %d bytes (%.1f MiB), "
          "%d rounds, median of %d" % (args.ranks, args.segments, args.block,
                                       logical / 2**20, args.rounds,
                                       args.reps))
    print("%-8s %-6s %10s %12s %9s %9s" % ("pattern", "who", "wall s",
                                           "bytes", "x logical", "x plain t"))
    out = {"ranks": args.ranks, "segments": args.segments,
           "block": args.block, "rounds": args.rounds, "reps": args.reps,
           "logical": logical, "results": {}}
    for pattern, byname in res.items():
        base = statistics.median(byname["plain"]["secs"])
        for name, r in byname.items():
            t = statistics.median(r["secs"])
            b = statistics.median(r["bytes"])
            print("%-8s %-6s %10.2f %12d %9.2f %9.2f" %
                  (pattern, name, t, b, b / logical, t / base))
            out["results"].setdefault(pattern, {})[name] = {
                "secs_median": t, "bytes_median": b,
                "bytes_x_logical": b / logical, "secs_x_plain": t / base,
                "secs": r["secs"], "bytes": r["bytes"]}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
