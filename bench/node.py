#!/usr/bin/env python3
"""Speed at the limit of one node: each command against the tool a
user would run instead, on the same disk, in the same run.

Case `copy` (target 1): pcp-split and gfsplit-merge of a SIZE file with N
ranks against N `dd bs=8M` processes run at once, each copying its 1/N of
the same file (the same parallelism), wall clock including mpiexec:

  split     mpiexec -n N pcp-split SRC DST.split        vs  N dd of SRC,
                                                            each to a file
  merge     mpiexec -n N gfsplit-merge DST.split OUT    vs  the same, and vs
            N dd of SRC all into one file at their offsets (conv=notrunc):
            what a merge writes, one file, whose writers share its inode
            lock (ext4 takes it for each buffered write)

cold (page cache dropped before every timed run: sync; echo 3 >
/proc/sys/vm/drop_caches) and warm (the input read once, untimed, just
before); with --sync every writer flushes to the device before it ends
(dd conv=fsync, --sync).  Each repetition alternates which contender goes
first; outputs are removed (untimed, after a sync) between runs.  Medians
of --reps, ratios tool/dd (target >= 0.9).  Needs root for drop_caches.

  bench/node.py copy [--size 1G] [--ranks 1,2,4] [--reps 3] [--sync] [--dir bench/out]
                    [--before OTHER/bin]

--before times a second build's pcp-split and gfsplit-merge in the same
run, in the same alternating order (a "before" for a change).

Case `mpiio` (target 2): IOR-like segmented N-1 (16 MiB blocks, 1 MiB
transfers, --per-rank bytes a rank), write with MPI_File_sync then read
after a cache drop, through plain MPICH (one shared file; and one file a
process, the N-N limit) and through the PMPI library (the N-1 program;
and one file a process, each its own split file), open, data and close
times apart (bench/mpiio_bench; each contender first in turn):

  bench/node.py mpiio [--per-rank 1G] [--ranks 1,2,4] [--reps 3]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from benchlib import BIN, ENV, TOP, drop_caches as drop, parse_size, random_file

def warm(path):
    paths = [os.path.join(path, p) for p in sorted(os.listdir(path))] \
        if os.path.isdir(path) else [path]
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass


def timed(cmds):
    """Start every command at once; seconds until the last one ends."""
    t0 = time.monotonic()
    ps = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           env=ENV, text=True) for c in cmds]
    for p, c in zip(ps, cmds):
        _, err = p.communicate()
        if p.returncode != 0:
            sys.exit("bench: %s failed (exit %d):\n%s" % (" ".join(c), p.returncode, err))
    return time.monotonic() - t0


def rm(*paths):
    os.sync()
    for p in paths:
        if os.path.isdir(p):
            shutil.rmtree(p)
        elif os.path.exists(p):
            os.unlink(p)


def dd_cmds(src, outs, size, n, sync, one=None):
    """N dd's, each copying its 1/N of src: into outs[r], or with `one`
    all into that one file at their own offsets (what a merge writes)."""
    bs = 8 << 20
    per = size // n
    cmds = []
    for r in range(n):
        # the last process takes the remainder
        start, count = r * per, per if r < n - 1 else size - r * per
        c = ["dd", "if=" + src, "bs=%d" % bs, "status=none",
             "iflag=skip_bytes,count_bytes", "skip=%d" % start, "count=%d" % count]
        if one:
            c += ["of=" + one, "oflag=seek_bytes", "seek=%d" % start]
        else:
            c += ["of=" + outs[r]]
        conv = (["notrunc"] if one else []) + (["fsync"] if sync else [])
        if conv:
            c.append("conv=" + ",".join(conv))
        cmds.append(c)
    return cmds


def case_copy(a, work):
    size = parse_size(a.size)
    src = os.path.join(work, "src")
    random_file(src, size)
    split, out = os.path.join(work, "s.split"), os.path.join(work, "out")
    rows = []
    for n in [int(x) for x in a.ranks.split(",")]:
        mpi = ["mpiexec", "-n", str(n)]
        sync = ["--sync"] if a.sync else []
        outs = [os.path.join(work, "dd.%d" % r) for r in range(n)]
        for state in ("cold", "warm"):
            # contenders: dd, dd into one file, and each build's split
            # and merge ("split@before": --before's build)
            bins = {"": BIN}
            if a.before:
                bins["@before"] = a.before
            t = {"dd": [], "dd1": []}
            for tag in bins:
                t["split" + tag], t["merge" + tag] = [], []
            # a split file to merge from, made untimed
            rm(split)
            timed([mpi + [os.path.join(BIN, "pcp-split"), "-q", src, split]])
            for rep in range(a.reps):
                order = ["dd", "split", "dd1", "merge"] + \
                    [w + tag for tag in bins if tag for w in ("split", "merge")]
                if rep % 2:
                    order.reverse()
                for who in order:
                    tool, at, tag = who.partition("@")
                    bindir = bins.get(at + tag, BIN)
                    inp = split if tool == "merge" else src
                    if state == "cold":
                        drop()
                    else:
                        warm(inp)
                    if who == "dd":
                        t["dd"].append(timed(dd_cmds(src, outs, size, n, a.sync)))
                        rm(*outs)
                    elif who == "dd1":
                        t["dd1"].append(timed(dd_cmds(src, outs, size, n, a.sync, out)))
                        rm(out)
                    elif tool == "split":
                        dst = os.path.join(work, "t.split")
                        t[who].append(timed([mpi + [os.path.join(bindir, "pcp-split"), "-q"] +
                                             sync + [src, dst]]))
                        rm(dst)
                    else:
                        t[who].append(timed([mpi + [os.path.join(bindir, "gfsplit-merge"), "-q"] +
                                             sync + [split, out]]))
                        rm(out)
            med = {k: statistics.median(v) for k, v in t.items()}
            mib = size / (1 << 20)
            row = {"ranks": n, "state": state, "sync": a.sync, "size": size,
                   "seconds": t, "median_s": med,
                   "MiB_s": {k: mib / v for k, v in med.items()},
                   "ratio_split": med["dd"] / med["split"],
                   "ratio_merge": med["dd"] / med["merge"],
                   "ratio_merge_one": med["dd1"] / med["merge"]}
            if a.before:
                row["ratio_split_before"] = med["dd"] / med["split@before"]
                row["ratio_merge_before"] = med["dd"] / med["merge@before"]
                row["ratio_merge_one_before"] = med["dd1"] / med["merge@before"]
            rows.append(row)
            print("N=%d %s%s: dd %.0f MiB/s, pcp-split %.0f (%.2fx); dd into one file %.0f, "
                  "gfsplit-merge %.0f (%.2fx of dd, %.2fx of dd into one file)" %
                  (n, state, " sync" if a.sync else "", row["MiB_s"]["dd"],
                   row["MiB_s"]["split"], row["ratio_split"], row["MiB_s"]["dd1"],
                   row["MiB_s"]["merge"], row["ratio_merge"], row["ratio_merge_one"]),
                  flush=True)
            if a.before:
                print("  before (%s): pcp-split %.2fx, gfsplit-merge %.2fx (%.2fx of dd into "
                      "one file)" % (a.before, row["ratio_split_before"],
                                     row["ratio_merge_before"], row["ratio_merge_one_before"]),
                      flush=True)
    return rows


def mpiio_run(cmd):
    """One mpiio_bench pass: its JSON line, or exit naming the command."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=ENV, text=True)
    if p.returncode != 0:
        sys.exit("bench: %s failed (exit %d):\n%s" % (" ".join(cmd), p.returncode, p.stderr))
    return json.loads(p.stdout.strip().splitlines()[-1])


def case_mpiio(a, work):
    """IOR-like segmented N-1 through MPI-IO: plain MPICH on one shared file
    (plain), one file per process (nn, the N-N limit), the same N-1 program
    under the PMPI library (lib), and one file per process under it, each
    its own split file (lib-nn).  Each contender writes (MPI_File_sync
    before the close) and, after a page-cache drop, reads what it wrote;
    open, data and close apart, the longest rank of each."""
    mb = os.path.join(os.environ.get("BENCHBIN", os.path.join(TOP, "build", "release", "bench")),
                      "mpiio_bench")
    lib = os.environ.get("BENCH_MPIIO_LIB", os.path.join(TOP, "lib", "libgfsplit-mpiio.so"))
    per = parse_size(a.per_rank)
    block, transfer = 16 << 20, 1 << 20
    segs = max(1, per // block)
    f = os.path.join(work, "ior")
    ior = ["--segments", str(segs), "--block", str(block), "--transfer", str(transfer)]
    rows = []
    for n in [int(x) for x in a.ranks.split(",")]:
        res = {}
        for rep in range(a.reps):
            order = ["plain", "nn", "lib", "lib-nn"]
            order = order[rep % 4:] + order[:rep % 4]
            for who in order:
                mode = "ior-nn" if who.endswith("nn") else "ior"
                pre = []
                if who.startswith("lib"):
                    pre = ["-genv", "LD_PRELOAD", lib, "-genv", "GFSPLIT_SPLIT_FILES",
                           f + ".*" if mode == "ior-nn" else f]
                base = ["mpiexec"] + pre + ["-n", str(n), mb, mode, f] + ior
                drop()
                w = mpiio_run(base + ["--sync"])
                drop()
                r = mpiio_run(base + ["--read"] + (["--verify"] if rep == 0 else []))
                rm(f, *[f + ".%d" % k for k in range(n)])
                for ph, j in (("write", w), ("read", r)):
                    res.setdefault(who, {}).setdefault(ph, []).append(j)
        row = {"ranks": n, "bytes_per_rank": segs * block, "transfer": transfer, "runs": res}
        med = {}
        for who, phases in res.items():
            for ph, js in phases.items():
                med[who + " " + ph] = {k: statistics.median(j[k] for j in js)
                                       for k in ("mib_s", "open_s", "data_s", "close_s")}
        row["median"] = med
        for ph in ("write", "read"):
            row["lib/nn " + ph] = med["lib " + ph]["mib_s"] / med["nn " + ph]["mib_s"]
            row["lib-nn/nn " + ph] = med["lib-nn " + ph]["mib_s"] / med["nn " + ph]["mib_s"]
        rows.append(row)
        for ph in ("write", "read"):
            print("N=%d %s: MiB/s plain %.0f, nn %.0f, lib %.0f (%.2fx nn), lib-nn %.0f (%.2fx nn); "
                  "open s plain %.3f nn %.3f lib %.3f lib-nn %.3f; close s plain %.3f lib %.3f" %
                  (n, ph, med["plain " + ph]["mib_s"], med["nn " + ph]["mib_s"],
                   med["lib " + ph]["mib_s"], row["lib/nn " + ph], med["lib-nn " + ph]["mib_s"],
                   row["lib-nn/nn " + ph], med["plain " + ph]["open_s"], med["nn " + ph]["open_s"],
                   med["lib " + ph]["open_s"], med["lib-nn " + ph]["open_s"],
                   med["plain " + ph]["close_s"], med["lib " + ph]["close_s"]), flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("case", choices=["copy", "mpiio"])
    ap.add_argument("--per-rank", default="1G", help="mpiio: bytes each rank writes")
    ap.add_argument("--size", default="1G")
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sync", action="store_true")
    ap.add_argument("--before", help="copy: also time this build's bin/ in the same run")
    ap.add_argument("--dir", default=os.path.join(TOP, "bench", "out"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("bench/node.py: SKIP: needs root (drop_caches)")
        return
    work = os.path.join(os.path.abspath(a.dir), "node")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    try:
        rows = case_copy(a, work) if a.case == "copy" else case_mpiio(a, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    path = os.path.join(os.path.abspath(a.dir), "node_%s%s.json" % (a.case, "_sync" if a.sync else ""))
    with open(path, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
