"""bench/benchlib.py - what the Python benchmarks share: where the build is,
the environment mpiexec runs in, sizes ("1G", "512MiB"), dropping the page
cache, and random input files."""
import os

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("BIN", os.path.join(TOP, "bin"))
# Hydra on one machine: fork the ranks locally, never ssh
ENV = dict(os.environ, HYDRA_LAUNCHER=os.environ.get("HYDRA_LAUNCHER", "fork"))


def parse_size(s):
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    s = s.strip().upper().rstrip("IB").rstrip("B") if s[-1:].isalpha() else s
    num = s.rstrip("KMGT")
    return int(float(num) * units[s[len(num):]])


def drop_caches():
    """Write back what is dirty, then drop the page cache (root)."""
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def random_file(path, size):
    with open(path, "wb") as f:
        left = size
        while left > 0:
            n = min(left, 1 << 24)
            f.write(os.urandom(n))
            left -= n
