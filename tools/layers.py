#!/usr/bin/env python3
"""tools/layers.py - check that libcore's wings only point down.

    tools/layers.py LIBCORE [OBJDIR]

LIBCORE is the libcore/ folder; OBJDIR, if given, the build's objects of it
(build/release/obj/libcore), whose symbol tables (nm) show the calls that
an #include does not.  A wing may use the wings of lower levels only (no
wing of its own level); the public header gfsplit.h is everyone's.
Nothing in libcore includes a header of preload/.  Prints one line per
violation and exits 1 if there is any.
"""
import os
import re
import subprocess
import sys

LEVEL = {"base": 0, "store": 1, "split": 2,
         "copy": 3, "cache": 3, "stage": 3, "envelope": 3, "mount": 3,
         "driver": 4}
ALSO = set()		# (user, used) pairs of one level allowed, if ever


def may_use(user, used):
    if user == used:
        return True
    if (user, used) in ALSO:
        return True
    return LEVEL[used] < LEVEL[user]


def main():
    top = sys.argv[1]
    objdir = sys.argv[2] if len(sys.argv) > 2 else None
    bad = []
    wing_of = {}                # header name -> wing
    files = []                  # (wing, path)
    for name in sorted(os.listdir(top)):
        path = os.path.join(top, name)
        if os.path.isdir(path):
            if name not in LEVEL:
                bad.append("%s: a folder that is no wing of the map" % path)
                continue
            for f in sorted(os.listdir(path)):
                if f.endswith((".c", ".h")):
                    files.append((name, os.path.join(path, f)))
                    if f.endswith(".h"):
                        wing_of[f] = name
        elif name.endswith(".c"):
            bad.append("%s: a source outside the wings" % path)
    preload = set()
    pre = os.path.join(os.path.dirname(os.path.abspath(top)), "preload")
    for root, _, fs in os.walk(pre):
        preload.update(f for f in fs if f.endswith(".h"))
    inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    for wing, path in files:
        for n, line in enumerate(open(path, encoding="utf-8"), 1):
            m = inc.match(line)
            if not m:
                continue
            h = os.path.basename(m.group(1))
            if h == "gfsplit.h":
                continue
            if h in preload and h not in wing_of:
                bad.append("%s:%d: includes %s of preload/" % (path, n, h))
            elif h not in wing_of:
                bad.append("%s:%d: includes %s, in no wing" % (path, n, h))
            elif not may_use(wing, wing_of[h]):
                bad.append("%s:%d: %s includes %s of %s (a wing above it, "
                           "or beside it)" % (path, n, wing, h, wing_of[h]))
    if objdir:
        defined, wants = {}, []
        for wing in LEVEL:
            d = os.path.join(objdir, wing)
            if not os.path.isdir(d):
                continue
            for f in sorted(os.listdir(d)):
                # (an object whose source moved away is stale)
                if not f.endswith(".o") or not os.path.exists(
                        os.path.join(top, wing, f[:-2] + ".c")):
                    continue
                out = subprocess.run(["nm", os.path.join(d, f)],
                                     capture_output=True, text=True,
                                     check=True).stdout
                for line in out.splitlines():
                    parts = line.split()
                    if len(parts) >= 2 and parts[-2] in "TDBRC" and \
                            parts[-1].startswith("gfsp_"):
                        defined[parts[-1]] = wing
                    elif len(parts) == 2 and parts[0] == "U" and \
                            parts[1].startswith("gfsp_"):
                        wants.append((wing, f, parts[1]))
        if not defined:
            bad.append("%s: no objects of the wings (build first)" % objdir)
        for wing, f, sym in wants:
            w = defined.get(sym)
            if w is not None and not may_use(wing, w):
                bad.append("%s/%s: calls %s of %s (a wing above it, or "
                           "beside it)" % (wing, f, sym, w))
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
