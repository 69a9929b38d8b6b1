#!/usr/bin/env python3
"""bench/layout_scale.py - the metadata of split files of 1 Ki to 16 Ki
writer ranks: how long the readers take to open and
check them, and how many metadata files they are.

For each rank count R, bench/layout_gen writes a committed split file of R
ranks on R / --ppn nodes directly (no R-rank job): rank r's view is C
blocks of B bytes, R*B apart, from r*B (an N-1 strided write; --contiguous:
one block of B*C bytes), its part real bytes, so the location files, the
marker and the part checksums are the library's own.  Then, timed:

  check    stat-layout --check --json F (one process, no MPI): every
           location file decoded and cross-checked, every part's size and
           checksum, every overlap looked for
  plan M   mpiexec -n M gfsplit-merge --dry-run --json F OUT: merge
           planning, i.e. F opened on every rank, OUT checked, the
           stripes dealt
  open M   mpiexec -n M bench/mpiio_bench ior F --read (4 KiB per rank)
           with LD_PRELOAD=lib/libgfsplit-mpiio.so: the MPI_File_open of
           the split file for reading (open_s: the longest any rank took),
           a read of a few bytes, the close
  plain M  the same program on the merged ordinary file with MPICH alone:
           the baseline of open M

for M = 1 and 2.  The figures are the commands' own clocks (the JSON's
seconds, mpiio_bench's open_s: MPI start-up excluded); the wall time of
the whole command (MPI start-up included), peak RSS (the largest process,
GNU time's %M) and CPU time (all processes) are reported beside them.
Medians of --reps, the order of the contenders rotating each repetition.
The split files stay in the page cache (the machine is shared: nothing is
dropped) unless --cold, which evicts the pages of F's own files
(posix_fadvise DONTNEED after a sync) before every timed run; the kernel's
inode and directory caches stay warm either way.

Target: a 16 Ki-rank layout opens in under 1 s, and its metadata is one
location file a node (plus the marker), not one a rank.

  python3 bench/layout_scale.py [--ranks 1024,2048,4096,8192,16384]
          [--ppn 64] [--block 1K] [--count 4] [--contiguous] [--reps 5]
          [--cold] [--dir DIR] [--json OUT]
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import BIN, ENV, TOP, parse_size

BENCHBIN = os.environ.get("BENCHBIN",
                          os.path.join(TOP, "build", "release", "bench"))
LIB = os.environ.get("MPIIO_LIB",
                     os.path.join(TOP, "lib", "libgfsplit-mpiio.so"))
# plain must be plain: nothing of gfsplit's inherited from the caller
CLEAN = {k: v for k, v in ENV.items()
         if not k.startswith("GFSPLIT_") and k != "LD_PRELOAD"}


def run(cmd, what):
    """cmd with stdout to a file: (stdout text, wall s, peak RSS KiB of
    the largest process, CPU s of all), exit on failure.  GNU time
    measures it: a process forked from this one would start with this
    one's resident memory as its peak."""
    with tempfile.TemporaryFile("w+") as out, \
            tempfile.TemporaryFile("w+") as err, \
            tempfile.NamedTemporaryFile("r") as use:
        t0 = time.monotonic()
        p = subprocess.run(["/usr/bin/time", "-o", use.name, "-f",
                            "%M %U %S"] + cmd, env=CLEAN, stdout=out,
                           stderr=err)
        wall = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            sys.exit("layout_scale.py: %s failed (exit %d): %s\n%s" %
                     (what, p.returncode, " ".join(cmd), err.read()[-2000:]))
        rss, user, sys_s = use.read().split()[-3:]
        return out.read(), wall, int(rss), float(user) + float(sys_s)


def evict(path):
    """Drop the page-cache pages of path's files (ours only)."""
    os.sync()
    for f in glob.glob(os.path.join(glob.escape(path), "*")) or [path]:
        fd = os.open(f, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def contenders(split, plain, out):
    """name -> (command, function of its stdout giving its own seconds)"""
    def seconds(text):
        j = json.loads(text)
        if j.get("check") is not None and not j["check"]["ok"]:
            sys.exit("layout_scale.py: stat-layout --check found problems "
                     "in %s: %s" % (split, j["check"]["problems"][:3]))
        return j["seconds"]

    def open_s(text):
        return json.loads(text)["open_s"]

    ior = [os.path.join(BENCHBIN, "mpiio_bench"), "ior", None,
           "--segments", "1", "--block", "4K", "--transfer", "4K", "--read"]
    c = {"check": ([os.path.join(BIN, "stat-layout"), "--check", "--json",
                    split], seconds)}
    for m in (1, 2):
        mpi = ["mpiexec", "-n", str(m)]
        c["plan %d" % m] = (mpi + [os.path.join(BIN, "gfsplit-merge"),
                                   "--dry-run", "--json", split, out],
                            seconds)
        c["open %d" % m] = (mpi + ["env", "LD_PRELOAD=" + LIB] +
                            [split if a is None else a for a in ior], open_s)
        c["plain %d" % m] = (mpi + [plain if a is None else a for a in ior],
                             open_s)
    return c


def one_size(args, work, R):
    nodes = R // args.ppn
    split = os.path.join(work, "r%d.split" % R)
    plain = os.path.join(work, "r%d.plain" % R)
    gen = [os.path.join(BENCHBIN, "layout_gen"), "--ranks", str(R),
           "--nodes", str(nodes), "--block", str(args.block),
           "--count", str(args.count)]
    if args.contiguous:
        gen.append("--contiguous")
    text, _, _, _ = run(gen + [split], "layout_gen")
    made = json.loads(text)
    # the ordinary file of the baseline (and a check that the split file
    # reads whole: gfsplit-merge verifies every part's checksum)
    run(["mpiexec", "-n", "2", os.path.join(BIN, "gfsplit-merge"), split,
         plain], "gfsplit-merge")
    if os.path.getsize(plain) != made["logical_size"]:
        sys.exit("layout_scale.py: %s merged into %d bytes, not %d" %
                 (split, os.path.getsize(plain), made["logical_size"]))
    names = os.listdir(split)
    res = {"ranks": R, "nodes": nodes,
           "loc_files": sum(n.startswith("loc.") for n in names),
           "part_files": sum(n.startswith("part.") for n in names),
           "metadata_bytes": sum(os.path.getsize(os.path.join(split, n))
                                 for n in names if not
                                 n.startswith("part.")),
           "logical_size": made["logical_size"],
           "generate_s": made["seconds"], "runs": {}}
    cs = contenders(split, plain, os.path.join(work, "never-written"))
    order = list(cs)
    for rep in range(args.reps):
        k = rep % len(order)
        for name in order[k:] + order[:k]:
            cmd, own = cs[name]
            if args.cold:
                evict(split)
                evict(plain)
            text, wall, rss, cpu = run(cmd, name)
            r = res["runs"].setdefault(name, {"own_s": [], "wall_s": [],
                                              "max_rss_kib": [],
                                              "cpu_s": []})
            r["own_s"].append(own(text))
            r["wall_s"].append(wall)
            r["max_rss_kib"].append(rss)
            r["cpu_s"].append(cpu)
    for r in res["runs"].values():
        for key in list(r):
            r[key + "_median"] = statistics.median(r[key])
    shutil.rmtree(split)
    os.unlink(plain)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", default="1024,2048,4096,8192,16384")
    ap.add_argument("--ppn", type=int, default=64)
    ap.add_argument("--block", default="1K")
    ap.add_argument("--count", type=int, default=4)
    ap.add_argument("--contiguous", action="store_true")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--dir")
    ap.add_argument("--json")
    args = ap.parse_args()
    args.block = parse_size(args.block)
    for prog in (os.path.join(BENCHBIN, "layout_gen"),
                 os.path.join(BENCHBIN, "mpiio_bench"),
                 os.path.join(BIN, "stat-layout"), LIB):
        if not os.path.exists(prog):
            sys.exit("layout_scale.py: missing %s (make)" % prog)
    sizes = [int(x) for x in args.ranks.split(",")]
    work = tempfile.mkdtemp(prefix="gfsplit-layout-scale.", dir=args.dir)
    results = []
    try:
        for R in sizes:
            results.append(one_size(args, work, R))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print("split files of R ranks, %d a node, %s views of %d x %d bytes a "
          "rank; median of %d, %s page cache" %
          (args.ppn, "contiguous" if args.contiguous else "strided",
           args.count, args.block, args.reps,
           "cold (F's pages evicted)" if args.cold else "warm"))
    print("%6s %5s %5s %8s | %7s %6s | %6s %6s | %6s %6s %6s %6s | %5s "
          "%5s %6s" % ("R", "nodes", "loc", "meta KiB", "check s", "RSS M",
                       "plan1", "plan2", "open1", "open2", "plain1",
                       "plain2", "RSS M", "plain", "us/rk"))
    for res in results:
        m = {n: r["own_s_median"] for n, r in res["runs"].items()}
        rss = {n: r["max_rss_kib_median"] / 1024
               for n, r in res["runs"].items()}
        print("%6d %5d %5d %8.0f | %7.3f %6.0f | %6.3f %6.3f | %6.3f %6.3f "
              "%6.3f %6.3f | %5.0f %5.0f %6.1f" %
              (res["ranks"], res["nodes"], res["loc_files"],
               res["metadata_bytes"] / 1024, m["check"], rss["check"],
               m["plan 1"], m["plan 2"], m["open 1"], m["open 2"],
               m["plain 1"], m["plain 2"], rss["open 2"], rss["plain 2"],
               m["open 1"] / res["ranks"] * 1e6))
    big = results[-1]
    opened = max(big["runs"]["open 1"]["own_s_median"],
                 big["runs"]["open 2"]["own_s_median"])
    files_ok = all(r["loc_files"] == r["nodes"] for r in results)
    print("target: %d-rank layout opens in %.3f s (< 1 s: %s); location "
          "files = nodes at every R: %s" %
          (big["ranks"], opened, "met" if opened < 1 else "NOT met",
           "yes" if files_ok else "NO"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"ppn": args.ppn, "block": args.block,
                       "count": args.count, "contiguous": args.contiguous,
                       "reps": args.reps, "cold": args.cold,
                       "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
