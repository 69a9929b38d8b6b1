#!/usr/bin/env python3
# lint.py - what HACKING.md asks that a program can check, run by
# tests/cmd/lint.sh in make check:
#
#   included-by HEADER     a libcore header's "Included by" sentence names
#                          exactly the places that include it
#   reference FILE:LINE    no document outside the tree cited by a number
#                          or a name only this team knew (a paper's seed
#                          number, a paper called "the seed", an issue
#                          number): name the paper, or say what is meant
#   long-file FILE         a libcore .c file over MAX_FILE lines
#   long-function FILE F   a function over MAX_FUNC lines, unless the comment
#                          right above it says why with WHOLE_MARK
#   raw-rename FILE F      rename(2), renameat(2), renameat2 called outside
#                          the files that own putting a file in place
#   tmp-rename FILE F      a temporary renamed into place by hand
#                          (gfsp_rename of a name holding "tmp" or "temp")
#
# usage: lint.py TOP [DEBT]
# DEBT lists known violations, one a line ("KIND FILE [FUNCTION]", # for
# comments): they are not reported, but an entry that no longer violates
# is, so that the list only shrinks.  Exit 1 on anything reported.
import os
import re
import subprocess
import sys

MAX_FILE = 1300
MAX_FUNC = 100
WHOLE_MARK = "reads better whole:"

# the owners of "put a file in place": the store backends (the only raw
# renames under the store's interface) and install.c (temporary, aside,
# rename, roll back; whole-file writing)
RENAME_OWNERS = {
    "libcore/store/store_posix.c",
    "libcore/store/store_gfarm.c",
    "libcore/store/install.c",
}
# renames that are a caller's own request, not a file put in place: the
# MPI-IO preload does an application's rename(2) of a split file as asked
RENAME_ASKED = {
    "preload/mpiio/names.c",
}

PLACES = ("libcore", "cmd", "preload", "tests", "bench")
REF_DIRS = ("libcore", "cmd", "preload", "tests", "bench", "tools", "man",
            "completions", "schemas", "examples", "packaging", "debian")
REF_FILES = ("Makefile.in", "configure", "README.md", "HACKING.md",
             "GNUmakefile")
REF_EXT = (".c", ".h", ".sh", ".py", ".md", ".in", ".mk", ".txt", ".json",
           ".1", ".5", ".7", ".bash", ".zsh")
REF_RE = re.compile(r"\bseeds?\s+\d{3}\b|\bseed\s+\d+(\.\d+)+"
                    r"|\b[Tt]he seed(?:'s|\s+paper)|\b[Ss]eed\s+(?:paper|figure"
                    r"|section|[Tt]able)\b"
                    r"|\bissues?\s*#\s*\d|\bissues?\s+\d")


def tree_files(top):
    """The tree's files: git's (tracked and new, not ignored) in a work
    tree, else every file (a copy of the tree)."""
    try:
        out = subprocess.run(
            ["git", "-C", top, "ls-files", "--cached", "--others",
             "--exclude-standard"], capture_output=True, text=True,
            check=True).stdout
        if os.path.exists(os.path.join(top, ".git")):
            return sorted(f for f in set(out.split("\n"))
                          if f and os.path.isfile(os.path.join(top, f)))
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(top):
        dirs[:] = [x for x in dirs if x != ".git"]
        for n in names:
            files.append(os.path.relpath(os.path.join(d, n), top))
    return sorted(files)


def read(top, f):
    with open(os.path.join(top, f), encoding="utf-8",
              errors="replace") as fh:
        return fh.read()


def strip_c(text):
    """Comments and string and character literals blanked, newlines kept."""
    def blank(m):
        s = m.group(0)
        if s[0] in "\"'":
            return s[0] + re.sub(r"[^\n]", " ", s[1:-1]) + s[-1]
        return re.sub(r"[^\n]", " ", s)
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(\\.|[^"\\\n])*"|\'(\\.|[^\'\\\n])*\'',
                  blank, text, flags=re.S)


def functions(lines):
    """(name, first, body, last) of each function, lines 0-based: BSD
    style, the name at column 0 (its return type on the line before), the
    body from a '{' alone at column 0 (line body) to the next '}' at column
    0 (line last).  first is the line of the name.  A function's length is
    its body's lines, both braces included."""
    out = []
    i = 0
    while i < len(lines):
        if lines[i].rstrip() == "{":
            j = i - 1
            while j >= 0 and lines[j][:1] in (" ", "\t") and \
                    not lines[j].strip().endswith(";"):
                j -= 1
            m = re.match(r"([A-Za-z_]\w*)\s*\(", lines[j]) if j >= 0 else None
            k = i + 1
            while k < len(lines) and not lines[k].startswith("}"):
                k += 1
            if m and k < len(lines):
                out.append((m.group(1), j, i, k))
            i = k
        i += 1
    return out


def comment_above(lines, first):
    """The comment block right above a function (above its return type)."""
    j = first - 1
    if j >= 0 and not lines[j].rstrip().endswith("*/") and lines[j].strip():
        j -= 1
    text = []
    while j >= 0 and lines[j].strip() and not lines[j].startswith("}"):
        text.append(lines[j])
        if lines[j].lstrip().startswith("/*"):
            break
        j -= 1
    return "\n".join(reversed(text))


def place(f):
    parts = f.split("/")
    if parts[0] == "libcore" and len(parts) > 2:
        return "libcore/" + parts[1] + "/"
    return parts[0] + "/"


def check_included_by(top, files, found):
    headers = [f for f in files if f.startswith("libcore/") and
               f.endswith(".h")]
    sources = [f for f in files if f.split("/")[0] in PLACES and
               f.endswith((".c", ".h"))]
    inc = re.compile(r'^\s*#\s*include\s*[<"](?:[\w./]*/)?([\w.]+)[>"]', re.M)
    includers = {}
    for f in sources:
        for name in inc.findall(read(top, f)):
            includers.setdefault(name, set()).add(f)
    for h in headers:
        head = re.match(r"\s*/\*(.*?)\*/", read(top, h), re.S)
        text = " ".join(l.strip().lstrip("*").strip()
                        for l in (head.group(1) if head else "").split("\n"))
        m = re.search(r"\b[Ii]ncluded by (.*?)(?:[.;]\s|[.;]?$)", text)
        if not m:
            found.append(("included-by", h, None,
                          "no \"Included by\" sentence in its head comment"))
            continue
        claim = m.group(1)
        words = re.sub(r"\b(and|only)\b|,", " ", claim).split()
        bad = [w for w in words if not re.fullmatch(
            r"(libcore/(\w+/)?|cmd/|preload/|tests/|bench/)", w)]
        real = {place(f) for f in includers.get(os.path.basename(h), ())
                if f != h}
        if bad:
            found.append(("included-by", h, None,
                          "\"Included by %s\": not a list of places "
                          "(libcore/, libcore/WING/, cmd/, preload/, tests/, "
                          "bench/)" % claim))
            continue
        said = set(words)
        covered = lambda p, w: p == w or (w == "libcore/" and
                                          p.startswith("libcore/"))
        why = []
        for p in sorted(real):
            if not any(covered(p, w) for w in said):
                why.append("%s includes it" % p)
        for w in sorted(said):
            n = {p for p in real if covered(p, w)}
            if not n:
                why.append("nothing in %s includes it" % w)
            elif w == "libcore/" and len(n) == 1:
                why.append("only %s of libcore includes it" % min(n))
        if why:
            found.append(("included-by", h, None,
                          "\"Included by %s\" is not true: %s (real: %s)" %
                          (claim, "; ".join(why), ", ".join(sorted(real)))))


def check_references(top, files, found):
    for f in files:
        if not (f.split("/")[0] in REF_DIRS and f.endswith(REF_EXT) or
                f in REF_FILES or f.split("/")[0] == "completions"):
            continue
        for n, line in enumerate(read(top, f).split("\n"), 1):
            m = REF_RE.search(line)
            if m:
                found.append(("reference", "%s:%d" % (f, n), None,
                              "'%s': name the paper (authors and title) or "
                              "say what is meant" % m.group(0)))


def check_code(top, files, found):
    for f in files:
        if not (f.split("/")[0] in ("libcore", "cmd", "preload") and
                f.endswith(".c")):
            continue
        text = read(top, f)
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        if f.startswith("libcore/") and len(lines) > MAX_FILE:
            found.append(("long-file", f, None, "%d lines (limit %d)" %
                          (len(lines), MAX_FILE)))
        funcs = functions(lines)
        for name, first, body, last in funcs:
            n = last - body + 1
            if n > MAX_FUNC and WHOLE_MARK not in comment_above(lines, first):
                found.append(("long-function", f, name,
                              "%d lines (limit %d, or a comment above it "
                              "saying \"%s\" why)" % (n, MAX_FUNC,
                                                      WHOLE_MARK)))
        if f in RENAME_OWNERS or f in RENAME_ASKED:
            continue
        code = strip_c(text).split("\n")

        def owner(i):
            for name, first, body, last in funcs:
                if first <= i <= last:
                    return name
            return "(file scope)"
        for i, line in enumerate(code):
            if line[:1] not in (" ", "\t"):
                continue            # a definition (a hook), not a call
            m = re.search(r"(?<![\w.>])(rename|renameat2?)\s*\(|"
                          r"\bSYS_renameat2?\b", line)
            if m:
                found.append(("raw-rename", f, owner(i), "line %d: %s" %
                              (i + 1, lines[i].strip())))
            m = re.search(r"\b(gfsp_rename|->rename)\s*\(([^,]*),", line)
            if m and re.search(r"tmp|temp", m.group(2)):
                found.append(("tmp-rename", f, owner(i), "line %d: %s" %
                              (i + 1, lines[i].strip())))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: lint.py TOP [DEBT]")
    top = sys.argv[1]
    debt = {}
    if len(sys.argv) == 3:
        for n, line in enumerate(open(sys.argv[2]), 1):
            line = line.split("#")[0].split()
            if line:
                debt[tuple(line)] = n
    files = tree_files(top)
    found = []
    check_included_by(top, files, found)
    check_references(top, files, found)
    check_code(top, files, found)
    bad = 0
    seen = {}
    for kind, where, name, why in found:
        key = (kind, where) + ((name,) if name else ())
        seen[key] = kind
        if key in debt:
            continue
        print("%s: %s%s: %s" % (kind, where, " " + name if name else "",
                                why))
        bad += 1
    for key, n in sorted(debt.items(), key=lambda kv: kv[1]):
        if key not in seen:
            print("%s:%d: '%s' no longer violates: remove it from the list"
                  % (sys.argv[2], n, " ".join(key)))
            bad += 1
    counts = {}
    for kind in seen.values():
        counts[kind] = counts.get(kind, 0) + 1
    print("lint: %s; %d in the debt list, %d reported" % (
        ", ".join("%d %s" % (counts.get(k, 0), k) for k in (
            "included-by", "reference", "long-file", "long-function",
            "raw-rename", "tmp-rename")), len(debt), bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
