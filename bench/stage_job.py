#!/usr/bin/env python3
"""bench/stage_job.py - a synthetic time-stepping job, like the ocean
model in Uemura et al.'s file system design for exascale systems: STEPS
times a compute phase of fixed work followed by writing BYTES of output
to one new file in OUTDIR (node-local storage).

    stage_job.py OUTDIR STEPS BYTES ITERS

The compute phase is ITERS rounds of an integer recurrence on one core (no
I/O, no allocation): its duration is what a background transfer would
disturb.  Prints one JSON line: the wall time of every compute phase and
of every write, and the total.
"""
import json
import os
import sys
import time


def compute(iters):
    x = 1
    for i in range(iters):
        x = (x * 1103515245 + 12345 + i) & 0xFFFFFFFF
    return x


def main():
    outdir, steps, size, iters = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    block = bytearray(os.urandom(1 << 20))
    comp, write = [], []
    t0 = time.monotonic()
    for step in range(steps):
        t = time.monotonic()
        seed = compute(iters)
        comp.append(time.monotonic() - t)
        t = time.monotonic()
        path = os.path.join(outdir, "step%04d.dat" % step)
        with open(path, "wb") as f:
            left = size
            while left > 0:
                block[0:8] = (seed + left).to_bytes(8, "little")	# new data each step
                n = min(left, len(block))
                f.write(block[:n])
                left -= n
        write.append(time.monotonic() - t)
    print(json.dumps({"steps": steps, "bytes_per_step": size, "compute_s": comp,
                      "write_s": write, "total_s": time.monotonic() - t0}))


if __name__ == "__main__":
    main()
