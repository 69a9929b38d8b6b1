#!/usr/bin/env python3
"""gfsplit-mount benchmark: reading a split file as one file, against the
ordinary file on the same disk.

In one run, on one file system: a SIZE file (default 1 GiB) is split by
pcp-split with RANKS ranks (default 4) and merged back by gfsplit-merge (the
ordinary file, the baseline); the split file's directory is mounted with
gfsplit-mount.  Each repetition then times, with the page cache dropped
(sync; echo 3 >/proc/sys/vm/drop_caches) before every cold case:

  plain cold / view cold   dd if=FILE of=/dev/null bs=1M
  plain warm / view warm   the same right after a read of the whole file
  merge + read             what a user does today: gfsplit-merge -n RANKS
                           to a new file, then dd of it, from a cold cache
  4 KiB random reads       COUNT (default 2000) preads of 4 KiB at random
                           offsets, cold: reads per second
  view path                the view read with its parts in the page cache
                           and the mount's own cache empty: what the FUSE
                           path moves when no disk is in the way (its
                           ceiling, for the cold ratio's sake)

each for the default view, which checks every part's checksum as the part
is read through, and for a second mount with -o noverify (no check), and
reports the medians and the ratios view/plain (targets: >= 0.8 cold,
>= 0.9 warm).  Needs root (drop_caches, the mount) and /dev/fuse.

  bench/mount.py [--size 1G] [--ranks 4] [--reps 5] [--count 2000] [--dir bench/out]
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

from benchlib import BIN, ENV, TOP, drop_caches as drop, parse_size, random_file


def sh(cmd, timeout=1800):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=ENV, timeout=timeout)
    if p.returncode != 0:
        sys.exit("bench: %s failed (exit %d):\n%s" % (" ".join(cmd), p.returncode, p.stdout))
    return p.stdout


def dd(path):
    t0 = time.monotonic()
    sh(["dd", "if=" + path, "of=/dev/null", "bs=1M", "status=none"])
    return time.monotonic() - t0


def random_reads(path, size, count, seed):
    r = random.Random(seed)
    offs = [r.randrange(0, size // 4096) * 4096 for _ in range(count)]
    fd = os.open(path, os.O_RDONLY)
    t0 = time.monotonic()
    for o in offs:
        if len(os.pread(fd, 4096, o)) != 4096:
            sys.exit("bench: short read of %s at %d" % (path, o))
    dt = time.monotonic() - t0
    os.close(fd)
    return count / dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default=os.environ.get("BENCH_MOUNT_SIZE", "1G"))
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--reps", type=int, default=int(os.environ.get("BENCH_REPS", "5")))
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--dir", default=os.path.join(TOP, "bench", "out"))
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    if os.geteuid() != 0 or not os.path.exists("/dev/fuse") or \
            not os.path.exists(os.path.join(BIN, "gfsplit-mount")):
        print("bench/mount.py: SKIP: needs root, /dev/fuse and bin/gfsplit-mount")
        return
    size = parse_size(a.size)
    work = os.path.join(os.path.abspath(a.dir), "mount")
    shutil.rmtree(work, ignore_errors=True)
    src, mnt = os.path.join(work, "src"), os.path.join(work, "mnt")
    mnt_nv = os.path.join(work, "mnt-noverify")
    os.makedirs(src)
    os.makedirs(mnt)
    os.makedirs(mnt_nv)
    data = os.path.join(work, "data")
    random_file(data, size)
    split = os.path.join(src, "data.split")
    plain = os.path.join(work, "plain")
    mpi = ["mpiexec", "-n", str(a.ranks)]
    sh(mpi + [os.path.join(BIN, "pcp-split"), "-q", data, split])
    sh(mpi + [os.path.join(BIN, "gfsplit-merge"), "-q", split, plain])
    os.unlink(data)
    # the default view checks each part's checksum as it is read through;
    # the second one, -o noverify, does not (what the view did before)
    sh([os.path.join(BIN, "gfsplit-mount"), "--log", os.path.join(work, "mount.log"), src, mnt])
    sh([os.path.join(BIN, "gfsplit-mount"), "-o", "noverify", "--log",
        os.path.join(work, "mount-nv.log"), src, mnt_nv])
    view = os.path.join(mnt, "data.split")
    view_nv = os.path.join(mnt_nv, "data.split")
    res = {k: [] for k in ("plain_cold", "view_cold", "nover_cold", "plain_warm", "view_warm",
                           "nover_warm", "merge_read", "plain_rand", "view_rand", "nover_rand",
                           "view_path", "nover_path")}
    parts = [os.path.join(split, p) for p in sorted(os.listdir(split)) if p.startswith("part.")]
    mib = size / (1 << 20)
    try:
        if subprocess.run(["cmp", plain, view]).returncode != 0:
            sys.exit("bench: the view differs from the merged file")
        for rep in range(a.reps):
            # rotate who goes first, so none always meets a colder disk
            order = [plain, view, view_nv]
            order = order[rep % 3:] + order[:rep % 3]
            for path in order:
                k = "plain" if path == plain else "view" if path == view else "nover"
                drop()
                res[k + "_cold"].append(mib / dd(path))
                dd(path)
                res[k + "_warm"].append(mib / dd(path))
                drop()
                res[k + "_rand"].append(random_reads(path, size, a.count, rep))
            out = os.path.join(work, "merged.%d" % rep)
            drop()
            for p in parts:
                dd(p)
            res["view_path"].append(mib / dd(view))
            drop()
            for p in parts:
                dd(p)
            res["nover_path"].append(mib / dd(view_nv))
            # as a user would: merge from cold, then read the new copy
            # (much of it still in the page cache the merge wrote)
            drop()
            t0 = time.monotonic()
            sh(mpi + [os.path.join(BIN, "gfsplit-merge"), "-q", split, out])
            dd(out)
            res["merge_read"].append(mib / (time.monotonic() - t0))
            os.unlink(out)
            print("rep %d: %s" % (rep + 1, " ".join("%s %.1f" % (k, v[-1]) for k, v in res.items())),
                  flush=True)
    finally:
        subprocess.run(["fusermount3", "-u", mnt])
        subprocess.run(["fusermount3", "-u", mnt_nv])
    med = {k: statistics.median(v) for k, v in res.items()}
    out = {
        "size": size, "ranks": a.ranks, "reps": a.reps, "count": a.count,
        "median": med, "runs": res,
        "ratio_cold": med["view_cold"] / med["plain_cold"],
        "ratio_warm": med["view_warm"] / med["plain_warm"],
        "ratio_merge_read": med["merge_read"] / med["plain_cold"],
        "ratio_rand": med["view_rand"] / med["plain_rand"],
        "ratio_cold_noverify": med["nover_cold"] / med["plain_cold"],
        "ratio_warm_noverify": med["nover_warm"] / med["plain_warm"],
        "verify_cost_cold": med["view_cold"] / med["nover_cold"],
        "verify_cost_path": med["view_path"] / med["nover_path"],
    }
    print("sequential dd bs=1M, MiB/s (median of %d):" % a.reps)
    print("  cold: view %.1f  plain %.1f  ratio %.2f (target >= 0.8)" %
          (med["view_cold"], med["plain_cold"], out["ratio_cold"]))
    print("  warm: view %.1f  plain %.1f  ratio %.2f (target >= 0.9)" %
          (med["view_warm"], med["plain_warm"], out["ratio_warm"]))
    print("  gfsplit-merge + dd of the copy: %.1f MiB/s (%.2f of reading the plain file)" %
          (med["merge_read"], out["ratio_merge_read"]))
    print("random 4 KiB reads per second, cold: view %.0f  plain %.0f  ratio %.2f" %
          (med["view_rand"], med["plain_rand"], out["ratio_rand"]))
    print("the FUSE path with the parts in memory: %.1f MiB/s" % med["view_path"])
    print("-o noverify (no checksum as parts are read): cold %.1f (%.2f of plain), warm %.1f,"
          " random %.0f/s, the FUSE path %.1f MiB/s" %
          (med["nover_cold"], out["ratio_cold_noverify"], med["nover_warm"], med["nover_rand"],
           med["nover_path"]))
    print("the default check costs: cold view/noverify %.2f, FUSE path %.2f" %
          (out["verify_cost_cold"], out["verify_cost_path"]))
    path = a.json or os.path.join(os.path.abspath(a.dir), "mount.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
