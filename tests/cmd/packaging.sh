#!/bin/bash
# packaging.sh - what gfsplit installs and how it is packaged: configure's
# directory options and make install/uninstall with DESTDIR (no file and
# no directory of install's left), the section 7 pages naming the
# configured preload directory, the man pages' lint, .TH lines and width
# (80 columns), the Spack recipe and its sha256 against `make dist`, the
# module files, the shared library's exports against gfsplit.h, a build
# with Open MPI, and `make deb` (the Debian packages, their contents and
# dependencies, lintian clean).
. "$(dirname "$0")/../lib.sh"

version=$(sed -n 's/^#define GFSPLIT_VERSION "\(.*\)"/\1/p' "$TOP/libcore/gfsplit.h")
# the commands: one per cmd/NAME/, gfsplit-mount only when built (libfuse3);
# cmd/NAME-common/ is code commands share, no command
CMDS=""
for d in "$TOP"/cmd/*/; do
	c=$(basename "$d")
	case $c in *-common) continue ;; esac
	[ "$c" != gfsplit-mount ] || [ -x "$TOP/bin/gfsplit-mount" ] && CMDS="$CMDS $c"
done
# the sanitizer build (make check-asan) installs and packages nothing of
# its own: make check runs those parts, once
case $BIN in */asan/*) asan=1 ;; *) asan= ;; esac

# ---- man pages: mandoc's lint at warning level, one .TH date and version
if command -v mandoc >/dev/null 2>&1; then
	w=$(mandoc -T lint -W warning "$TOP"/man/* 2>&1)
	[ -z "$w" ] && ok "mandoc -T lint -W warning: man/* clean" ||
		not_ok "mandoc -T lint -W warning: man/* clean" "$w"
else
	skip "mandoc -T lint of man/*" "no mandoc (sh tools/install-deps.sh)"
fi
# .TH TITLE SECTION DATE SOURCE MANUAL: DATE a real YYYY-MM-DD, the same on
# every page, SOURCE "gfsplit VERSION"
th=$(for m in "$TOP"/man/*; do sed -n 's/^\.TH [^ ]* [0-9] //p' "$m" | head -n 1; done | sort -u)
date=${th%% *}
if [ "$(printf '%s\n' "$th" | wc -l)" -eq 1 ] &&
    [ "$th" = "$date \"gfsplit $version\" \"gfsplit manual\"" ] &&
    [[ $date =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}$ ]] && [ "$(date -d "$date" +%F 2>/dev/null)" = "$date" ]; then
	ok "every .TH has one date ($date) and gfsplit $version"
else
	not_ok "every .TH has one date and gfsplit $version" "$th"
fi

# ---- every page fits a terminal of 80 columns, as man(1) lays it out
# there (man-db and groff, MANWIDTH=80; the C locale, so that awk's
# length, in bytes, counts columns).  wide PAGE...: each line over 80
# columns as "PAGE: WIDTH: LINE"; a page that renders to nothing is one too
wide() {
	for _m in "$@"; do
		LC_ALL=C MANWIDTH=80 man -l "$_m" 2>/dev/null | awk -v m="${_m##*/}" '
			length > 80 { print m ": " length ": " $0 } END { if (NR == 0) print m ": renders empty" }'
	done
}
if command -v man >/dev/null 2>&1 && command -v groff >/dev/null 2>&1; then
	w=$(wide "$TOP"/man/*)
	[ -z "$w" ] && ok "man -l at MANWIDTH=80: no line of man/* wider than 80 columns" ||
		not_ok "man -l at MANWIDTH=80: no line of man/* wider than 80 columns" "$w"
else
	skip "man/* at MANWIDTH=80" "no man or groff (apt-get install man-db groff-base)"
fi

# ---- the Spack recipe: valid Python (py_compile), then run against a
# stand-in for spack.package, which records the directives: homepage, url
# and git, a develop version and this version with a sha256 (checked
# against make dist below), the site's MPI (not MPICH), +gfarm off (Spack
# has no gfarm package), its variants, dependencies and configure options
# (each one configure --help knows)
"$TOP/configure" --help >"$TMPD/help"
check "the Spack recipe compiles (python3 -m py_compile)" \
	python3 -c 'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)' \
	"$TOP/packaging/spack/package.py" "$TMPD/package.pyc"
if python3 - "$TOP/packaging/spack/package.py" "$TMPD/help" "$version" >"$TMPD/spack.out" 2>&1 <<'PY'
import sys, types
recipe, helpf, version = sys.argv[1:4]
rec = {"version": [], "variant": {}, "depends_on": []}
api = types.ModuleType("spack.package")
class MakefilePackage:
    pass
api.MakefilePackage = MakefilePackage
api.version = lambda v, **kw: rec["version"].append((v, kw))
api.variant = lambda name, default=None, description="", **kw: rec["variant"].__setitem__(name, default)
api.depends_on = lambda spec, when=None, type=None: rec["depends_on"].append((spec, when))
calls = []
class Executable:
    def __init__(self, path): self.path = path
    def __call__(self, *args): calls.append((self.path, args))
api.Executable = Executable
api.__all__ = [n for n in vars(api) if not n.startswith("_")]
sys.modules["spack"] = types.ModuleType("spack")
sys.modules["spack.package"] = api
ns = {"__name__": "gfsplit_recipe"}
exec(compile(open(recipe).read(), recipe, "exec"), ns)
cls = ns["Gfsplit"]
assert issubclass(cls, MakefilePackage), "Gfsplit is not a MakefilePackage"
assert {"gfarm", "verbs", "zstd"} <= set(rec["variant"]), "variants: %s" % rec["variant"]
assert rec["variant"]["gfarm"] is False, "+gfarm is on by default, and Spack has no gfarm package"
when = {w for _, w in rec["depends_on"]}
assert {"+gfarm", "+verbs", "+zstd"} <= when, "conditional dependencies: %s" % rec["depends_on"]
names = {d.split("@")[0]: d for d, w in rec["depends_on"] if w is None}
assert "mpi" in names and "mpich" not in names and "openmpi" not in names, \
    "depends on %s, not on the virtual mpi" % sorted(names)
for attr in ("homepage", "url", "git"):
    assert getattr(cls, attr, "").startswith("https://"), "no %s: %r" % (attr, getattr(cls, attr, None))
assert cls.url.endswith("/gfsplit-%s.tar.gz" % version), "url %s is not of gfsplit-%s.tar.gz" % (cls.url, version)
vs = dict(rec["version"])
assert version in vs, "versions %s, not %s" % (sorted(vs), version)
sha = vs[version].get("sha256", "")
assert len(sha) == 64 and all(c in "0123456789abcdef" for c in sha), "version %s: sha256 %r" % (version, sha)
assert vs.get("develop", {}).get("branch"), "no develop version of a branch: %s" % rec["version"]

# edit() with a spec of the given variants: the configure options it gives
class Dep:
    def __init__(self, name):
        self.prefix = "/spack/" + name
        self.mpicc = "/spack/%s/bin/mpicc" % name
class Spec:
    def __init__(self, on): self.on = on
    def satisfies(self, s): return s[1:] in self.on if s[0] == "+" else False
    def __getitem__(self, name):
        assert name in names or name in when_names, "spec[%r]: not a dependency" % name
        return Dep(name)
when_names = {d.split("@")[0] for d, w in rec["depends_on"] if w is not None}
known = open(helpf).read()
for on in (set(rec["variant"]), set()):
    pkg = cls.__new__(cls)
    pkg.spec, pkg.prefix = Spec(on), "/spack/gfsplit"
    calls.clear()
    pkg.edit(pkg.spec, pkg.prefix)
    assert len(calls) == 1 and calls[0][0] == "./configure", calls
    args = calls[0][1]
    for a in args:
        opt = a.split("=")[0]
        if opt.startswith("--"):
            assert opt in known, "configure --help does not know %s" % opt
    want = ["--prefix=/spack/gfsplit", "MPICC=/spack/mpi/bin/mpicc"] + \
        ["--with%s-%s" % ("" if v in on else "out", n) for v, n in (("zstd", "zstd"), ("verbs", "ibverbs"))]
    assert all(w in args for w in want), "%s: %s" % (sorted(on), args)
    assert ("--with-gfarm=/spack/gfarm" in args) == ("gfarm" in on), args
    print(sorted(on), " ".join(args))
print("sha256", sha)
PY
then
	ok "the Spack recipe: homepage, url, git, $version with a sha256, develop, the virtual mpi, +gfarm off; it configures by its variants"
else
	not_ok "the Spack recipe: homepage, url, git, $version with a sha256, develop, the virtual mpi, +gfarm off; it configures by its variants" \
		"$(tail -n 12 "$TMPD/spack.out")"
fi
recipe_sha=$(sed -n 's/^sha256 //p' "$TMPD/spack.out")

# ---- the shared library's ABI: libgfsplit.so.0 exports the functions
# gfsplit.h declares and nothing else (libcore/libgfsplit.map); the rest of
# libcore is internal.  declared HEADER: every gfsp_NAME( outside comments
# and preprocessor lines (the header has no function bodies and no
# function pointers); exported LIB: every global symbol LIB defines, but
# its version node (type A); abi_diff HEADER LIB: "extra NAME" for a
# symbol exported and not declared, "missing NAME" for one declared and
# not exported, nothing when they agree
declared() {
	gcc -fpreprocessed -dD -E -P "$1" | grep -v '^#' | tr '\n' ' ' |
		grep -o '\bgfsp_[A-Za-z0-9_]*[[:space:]]*(' | sed 's/[[:space:]]*($//' | sort -u
}
exported() {
	nm -D --defined-only "$1" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u
}
abi_diff() {
	comm -3 <(declared "$1") <(exported "$2") | sed -e 's/^\t/extra /' -e '/^extra /!s/^/missing /'
}
so=$(dirname "$BIN")/lib/libgfsplit.so.0
h=$TOP/libcore/gfsplit.h
if [ ! -f "$so" ]; then
	not_ok "libgfsplit.so.0 exports what gfsplit.h declares" "no $so (build first)"
else
	d=$(abi_diff "$h" "$so")
	n=$(declared "$h" | wc -l)
	[ -z "$d" ] && [ "$n" -gt 0 ] && ok "libgfsplit.so.0 exports the $n functions gfsplit.h declares, no other symbol" ||
		not_ok "libgfsplit.so.0 exports the functions gfsplit.h declares, no other symbol" \
			"$n declared;" "$d"
	# the check fails on a header with a declaration less, or one more
	grep -vx 'void gfsp_view_free(struct gfsp_view \*v);' "$h" >"$TMPD/less.h"
	d=$(abi_diff "$TMPD/less.h" "$so")
	[ "$d" = "extra gfsp_view_free" ] && ok "  and names an export gfsplit.h does not declare" ||
		not_ok "  and names an export gfsplit.h does not declare" "$d"
	sed 's/^#endif \/\* GFSPLIT_H \*\//int gfsp_not_exported(void);\n&/' "$h" >"$TMPD/more.h"
	d=$(abi_diff "$TMPD/more.h" "$so")
	[ "$d" = "missing gfsp_not_exported" ] && ok "  and a declared function it does not export" ||
		not_ok "  and a declared function it does not export" "$d"
fi

if [ -n "$asan" ]; then
	skip "make install, uninstall and deb" "the sanitizer build: make check runs them"
	finish
	exit 0
fi

# ---- configure's directory options (both spellings) into config.mk, made
# in a scratch copy so the tree's config.mk stays as it is; then the tree's
# make install and uninstall with those directories under DESTDIR
mkdir -p "$TMPD/src/libcore"
cp "$TOP/configure" "$TMPD/src/"
cp "$TOP/libcore/gfsplit.h" "$TMPD/src/libcore/"
expect_exit "configure with every directory option" 0 sh -c 'cd "$1" && ./configure \
	--prefix=/opt/gfs --exec-prefix /opt/gfs/x86 --libdir=/opt/gfs/x86/lib64 \
	--preloaddir /opt/gfs/x86/lib64/gfsplit --includedir=/opt/gfs/inc \
	--datarootdir=/opt/gfs/share --datadir /opt/gfs/data --mandir=/opt/gfs/doc/man --sysconfdir /etc/gfs' _ "$TMPD/src"
grep -E '^(PREFIX|prefix|exec_prefix|bindir|libdir|preloaddir|includedir|datarootdir|datadir|mandir|sysconfdir) = ' \
	"$TMPD/src/config.mk" | sed 's/ = /=/' >"$TMPD/dirs"
mapfile -t dirs <"$TMPD/dirs"
grep -qx 'sysconfdir=/etc/gfs' "$TMPD/dirs" && grep -qx 'libdir=/opt/gfs/x86/lib64' "$TMPD/dirs" &&
	grep -qx 'datadir=/opt/gfs/data' "$TMPD/dirs" && grep -qx 'bindir=$(exec_prefix)/bin' "$TMPD/dirs" &&
	ok "config.mk has the directories" || not_ok "config.mk has the directories" "$(cat "$TMPD/dirs")"
expect_exit "configure --libdir without a directory is a usage error" 2 sh -c 'cd "$1" && ./configure --libdir' _ "$TMPD/src"

root=$TMPD/root
# there before: an empty bindir and a datadir holding a file of the site's;
# uninstall must leave both, and remove every directory install made
mkdir -p "$root/opt/gfs/x86/bin" "$root/opt/gfs/data"
echo site >"$root/opt/gfs/data/site.conf"
(cd "$root" && find . -type d | sort) >"$TMPD/dirs.before"
expect_exit "make install DESTDIR= with those directories" 0 make -s -C "$TOP" install DESTDIR="$root" "${dirs[@]}"
want=""
for c in $CMDS; do
	want="$want x86/bin/$c doc/man/man1/$c.1 data/bash-completion/completions/$c data/zsh/site-functions/_$c"
done
want="$want x86/lib64/libgfsplit.so.0 x86/lib64/libgfsplit.so x86/lib64/libgfsplit.a
	x86/lib64/gfsplit/libgfsplit-mpiio.so x86/lib64/gfsplit/libgfsplit-cache.so
	x86/lib64/pkgconfig/gfsplit.pc inc/gfsplit.h doc/man/man5/gfsplit.5
	doc/man/man7/gfsplit-mpiio.7 doc/man/man7/gfsplit-cache.7 doc/man/man7/gfsplit-slurm.7
	data/gfsplit/slurm/burst_buffer.lua data/gfsplit/slurm/gfsplit-bb
	data/bash-completion/completions/mpiexec data/bash-completion/completions/mpirun
	data/bash-completion/completions/mpiexec.hydra"
for k in "$TOP"/schemas/*.schema.json; do
	want="$want data/gfsplit/schemas/$(basename "$k")"
done
missing=""
for f in $want; do [ -e "$root/opt/gfs/$f" ] || missing="$missing $f"; done
[ -z "$missing" ] && ok "every file in its directory" || not_ok "every file in its directory" "missing:$missing" \
	"$(cd "$root" && find . -type f | head -n 20)"
n=$(find "$root" ! -type d ! -name site.conf | wc -l)
[ "$n" -eq "$(echo "$want" | wc -w)" ] && ok "and nothing else ($n files)" ||
	not_ok "and nothing else" "$n files: $(cd "$root" && find . ! -type d | sort | tr '\n' ' ')"
readlink "$root/opt/gfs/x86/lib64/libgfsplit.so" | grep -qx libgfsplit.so.0 &&
	ok "libgfsplit.so links to libgfsplit.so.0" || not_ok "libgfsplit.so links to libgfsplit.so.0"
bb=$root/opt/gfs/data/gfsplit/slurm
grep -qx 'BIN=/opt/gfs/x86/bin' "$bb/gfsplit-bb" && grep -qx 'SPOOL=/var/spool/gfsplit-bb' "$bb/gfsplit-bb" &&
	grep -qx 'local helper = "/opt/gfs/data/gfsplit/slurm/gfsplit-bb"' "$bb/burst_buffer.lua" &&
	[ -x "$bb/gfsplit-bb" ] && sh -n "$bb/gfsplit-bb" &&
	ok "the Slurm burst buffer's script and helper name the installed commands and each other" ||
	not_ok "the Slurm burst buffer's script and helper name the installed commands and each other" \
		"$(grep -n 'BIN=\|SPOOL=' "$bb/gfsplit-bb"; grep -n 'local helper' "$bb/burst_buffer.lua")"

pc=$root/opt/gfs/x86/lib64/pkgconfig/gfsplit.pc
grep -qx 'libdir=/opt/gfs/x86/lib64' "$pc" && grep -qx 'includedir=/opt/gfs/inc' "$pc" &&
	grep -qx "Version: $version" "$pc" && grep -qx "Requires: mpich" "$pc" &&
	ok "gfsplit.pc has the libdir, includedir, version and requires mpich" ||
	not_ok "gfsplit.pc has the libdir, includedir, version and requires mpich" "$(cat "$pc")"

# the section 7 pages (and cache-warm(1)'s example) name the preload
# directory, not the tree's /usr/local/lib
m7=$root/opt/gfs/doc/man/man7
if grep -q 'LD_PRELOAD=/opt/gfs/x86/lib64/gfsplit/libgfsplit-mpiio\.so' "$m7/gfsplit-mpiio.7" &&
    grep -q 'LD_PRELOAD=/opt/gfs/x86/lib64/gfsplit/libgfsplit-cache\.so' "$m7/gfsplit-cache.7" &&
    ! grep -rq /usr/local "$root/opt/gfs/doc/man"; then
	ok "the installed man pages name the configured preload directory"
else
	not_ok "the installed man pages name the configured preload directory" \
		"$(grep -rn 'LD_PRELOAD\|/usr/local' "$root/opt/gfs/doc/man" | head -n 8)"
fi
if command -v mandoc >/dev/null 2>&1; then
	w=$(mandoc -T lint -W warning "$root"/opt/gfs/doc/man/man*/* 2>&1)
	[ -z "$w" ] && ok "the installed man pages are lint clean" || not_ok "the installed man pages are lint clean" "$w"
fi

expect_exit "make uninstall with the same directories" 0 make -s -C "$TOP" uninstall DESTDIR="$root" "${dirs[@]}"
left=$(cd "$root" && find . ! -type d | sort)
[ "$left" = ./opt/gfs/data/site.conf ] && ok "make uninstall removes every file install put, and no other" ||
	not_ok "make uninstall removes every file install put, and no other" "left: $left"
(cd "$root" && find . -type d | sort) >"$TMPD/dirs.after"
cmp -s "$TMPD/dirs.before" "$TMPD/dirs.after" &&
	ok "and every directory install made ($(grep -c . "$TMPD/dirs.before") were there before, kept)" ||
	not_ok "and every directory install made, and no other" "$(diff "$TMPD/dirs.before" "$TMPD/dirs.after")"
expect_exit "make uninstall again (nothing there) succeeds" 0 make -s -C "$TOP" uninstall DESTDIR="$root" "${dirs[@]}"
# after make clean (no record of the directories install made) only
# gfsplit's own go: DATADIR/gfsplit, a preload directory of its own
rm -rf "$root"
mkdir -p "$root"
make -s -C "$TOP" install DESTDIR="$root" "${dirs[@]}" DIRS_RECORD="$TMPD/record" >"$OUT" 2>&1
expect_exit "make uninstall without the record of install" 0 \
	make -s -C "$TOP" uninstall DESTDIR="$root" "${dirs[@]}" DIRS_RECORD="$TMPD/no-record"
left=$(cd "$root" && find . ! -type d | sort)
if [ -z "$left" ] && [ ! -e "$root/opt/gfs/x86/lib64/gfsplit" ] && [ ! -e "$root/opt/gfs/data/gfsplit" ] &&
    [ -d "$root/opt/gfs/x86/lib64" ] && [ -d "$root/opt/gfs/x86/bin" ]; then
	ok "removes the files and gfsplit's own directories, no other"
else
	not_ok "removes the files and gfsplit's own directories, no other" "left: $left" \
		"$(cd "$root" && find . -type d | sort | tr '\n' ' ')"
fi

# LAUNCHER_COMPLETIONS=no: no completion files for the launchers, and a
# launcher's completion that is there already (another package's) is
# neither overwritten nor removed
nl=$TMPD/nolaunch
bc=$nl/usr/share/bash-completion/completions
mkdir -p "$bc"
echo theirs >"$bc/mpiexec"
make -s -C "$TOP" install DESTDIR="$nl" PREFIX=/usr LAUNCHER_COMPLETIONS=no DIRS_RECORD="$TMPD/nl.rec" >"$OUT" 2>&1
c=" $(cd "$bc" && ls | tr '\n' ' ')"
bad=""
case $c in *" pcp-split "*) ;; *) bad="$bad no completion of pcp-split;" ;; esac
case $c in *" mpirun "* | *" mpiexec.hydra "*) bad="$bad a launcher's:$c;" ;; esac
[ "$(cat "$bc/mpiexec")" = theirs ] || bad="$bad install overwrote mpiexec's;"
make -s -C "$TOP" uninstall DESTDIR="$nl" PREFIX=/usr LAUNCHER_COMPLETIONS=no DIRS_RECORD="$TMPD/nl.rec" >>"$OUT" 2>&1
[ "$(cat "$bc/mpiexec" 2>&1)" = theirs ] || bad="$bad uninstall removed or changed mpiexec's;"
[ ! -e "$bc/pcp-split" ] || bad="$bad uninstall left pcp-split's;"
[ -z "$bad" ] && ok "LAUNCHER_COMPLETIONS=no: no completion of a launcher; another's mpiexec kept as it was" ||
	not_ok "LAUNCHER_COMPLETIONS=no: no completion of a launcher; another's mpiexec kept as it was" "$bad" "$(tail -n 5 "$OUT")"

# ---- the module files, run by lua and tclsh with stand-ins for Lmod's and
# Environment Modules' commands that print what the module does to the
# environment: both do the same, every directory they add to a path is one
# that make install --prefix=THEIR-ROOT fills, the preload libraries their
# help names are there, and their version is gfsplit's
MOD=$TOP/packaging/modules
lua_env() {
	lua5.4 - "$MOD/gfsplit.lua" <<'LUA'
function help(s) io.stderr:write(s) end
function whatis(s) if s:match("^Version: ") then print("version " .. s:sub(10)) end end
function depends_on(m) print("needs " .. m) end
function setenv(k, v) print("setenv " .. k .. " " .. v) end
function prepend_path(k, v) print("prepend " .. k .. " " .. v) end
function pathJoin(...) return (table.concat({...}, "/"):gsub("//+", "/")) end
dofile(arg[1])
LUA
}
tcl_env() {
	tclsh <<TCL
proc module-whatis {s} { if {[regexp {^gfsplit ([^:]*):} \$s -> v]} { puts "version \$v" } }
proc prereq {m} { puts "needs \$m" }
proc setenv {k v} { puts "setenv \$k \$v" }
proc prepend-path {k v} { puts "prepend \$k \$v" }
source {$MOD/gfsplit.tcl}
ModulesHelp
TCL
}
mdest=$TMPD/mroot
for kind in lua tcl; do
	case $kind in lua) need=lua5.4 ;; tcl) need=tclsh ;; esac
	if ! command -v "$need" >/dev/null 2>&1; then
		skip "the $kind module file" "no $need (sh tools/install-deps.sh)"
		continue
	fi
	if ! "${kind}_env" 2>"$TMPD/$kind.help" | sort >"$TMPD/$kind.env" || [ ! -s "$TMPD/$kind.env" ]; then
		not_ok "the $kind module file runs" "$(cat "$TMPD/$kind.help" "$TMPD/$kind.env")"
		continue
	fi
	mroot=$(sed -n 's/^setenv GFSPLIT_ROOT //p' "$TMPD/$kind.env")
	rm -rf "$mdest"
	make -s -C "$TOP" install DESTDIR="$mdest" PREFIX="$mroot" >"$TMPD/m.out" 2>&1
	bad=""
	grep -qx "version $version" "$TMPD/$kind.env" || bad="$bad not version $version;"
	grep -qx "needs mpich" "$TMPD/$kind.env" || bad="$bad does not load mpich;"
	n=0
	while read -r _ var dir; do
		n=$((n + 1))
		case $dir in "$mroot"/*) ;; *) bad="$bad $var $dir is not under $mroot;" ;; esac
		[ -n "$(ls -A "$mdest$dir" 2>/dev/null)" ] || bad="$bad $var $dir is empty or missing;"
	done < <(grep '^prepend ' "$TMPD/$kind.env")
	for v in PATH MANPATH LD_LIBRARY_PATH PKG_CONFIG_PATH; do
		grep -q "^prepend $v " "$TMPD/$kind.env" || bad="$bad no $v;"
	done
	for l in $(grep -o 'GFSPLIT_ROOT/[^ ]*\.so' "$TMPD/$kind.help"); do
		[ -f "$mdest$mroot/${l#GFSPLIT_ROOT/}" ] || bad="$bad its help names \$$l, not installed;"
	done
	[ -z "$bad" ] && ok "the $kind module file sets up an installation under $mroot ($n paths)" ||
		not_ok "the $kind module file sets up an installation" "$bad" "$(cat "$TMPD/$kind.env" "$TMPD/m.out")"
	make -s -C "$TOP" uninstall DESTDIR="$mdest" PREFIX="$mroot" >/dev/null 2>&1
done
if [ -s "$TMPD/lua.env" ] && [ -s "$TMPD/tcl.env" ]; then
	same_bytes "the Lmod and Tcl module files do the same" "$TMPD/lua.env" "$TMPD/tcl.env"
fi

# ---- another MPI: a preload library must be built with the site's own
# MPI, so the tree builds with Debian's Open MPI as well (mpicc.openmpi;
# tools/install-deps.sh installs it and keeps MPICH the default).  In a
# copy of the sources: configure with MPICC=mpicc.openmpi, the two preload
# libraries and pcp-split, which must need Open MPI's libmpi.so.40 and no
# MPICH; pcp-split under Open MPI's mpirun splits a file that the tree's
# gfsplit-merge (MPICH) gives back byte for byte.  (The test programs
# are MPICH's: they use MPI-4.0 calls Open MPI 4 does not have.)
if ! command -v mpicc.openmpi >/dev/null 2>&1; then
	skip "the build with Open MPI" "no mpicc.openmpi (sh tools/install-deps.sh)"
else
	o=$TMPD/ompi
	mkdir -p "$o"
	cp -r "$TOP"/configure "$TOP"/Makefile.in "$TOP"/GNUmakefile "$TOP"/gfsplit.pc.in \
		"$TOP"/libcore "$TOP"/preload "$TOP"/cmd "$o/"
	expect_exit "configure MPICC=mpicc.openmpi finds Open MPI" 0 sh -c \
		'cd "$1" && ./configure MPICC=mpicc.openmpi --without-fuzz && grep -qx "MPI_PC = ompi-c" config.mk' _ "$o"
	output_has "and says so" '^checking MPI \(mpicc.openmpi\)\.\.\. *found \(Open MPI, MPI [0-9]'
	expect_exit "the preload libraries and pcp-split build with Open MPI" 0 \
		make -s -C "$o" -j"$(nproc)" lib/libgfsplit-mpiio.so lib/libgfsplit-cache.so bin/pcp-split
	bad=""
	for f in lib/libgfsplit-mpiio.so lib/libgfsplit-cache.so bin/pcp-split; do
		n=$(readelf -d "$o/$f" 2>&1 | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
		case " $n" in *" libmpi.so.40 "*) ;; *) bad="$bad $f needs no libmpi.so.40 ($n);" ;; esac
		case " $n" in *mpich*) bad="$bad $f needs MPICH ($n);" ;; esac
	done
	[ -z "$bad" ] && ok "they need Open MPI's libmpi.so.40 and no MPICH (readelf -d)" ||
		not_ok "they need Open MPI's libmpi.so.40 and no MPICH (readelf -d)" "$bad"
	head -c 3000000 /dev/urandom >"$TMPD/o.src"
	# Open MPI refuses root without these; one machine, shared memory
	if OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader \
	    OMPI_MCA_rmaps_base_oversubscribe=1 timeout -k 5 "$TEST_TIMEOUT" \
	    mpirun.openmpi -n 2 "$o/bin/pcp-split" "$TMPD/o.src" "$TMPD/o.split" >"$TMPD/o.out" 2>&1 &&
	    mpirun_n 1 "$BIN/gfsplit-merge" "$TMPD/o.split" "$TMPD/o.back" >>"$TMPD/o.out" 2>&1 &&
	    [ -f "$TMPD/o.split/part.1" ] && cmp -s "$TMPD/o.src" "$TMPD/o.back"; then
		ok "pcp-split of Open MPI on 2 ranks writes what gfsplit-merge of MPICH reads back"
	else
		not_ok "pcp-split of Open MPI on 2 ranks writes what gfsplit-merge of MPICH reads back" \
			"$(tail -n 12 "$TMPD/o.out")" "$(ls -l "$TMPD/o.split" 2>&1)"
	fi
fi

# ---- make dist: the release tarball gfsplit-VERSION.tar.gz, the same
# bytes each time, holding the files git has at HEAD (but the Spack
# recipe) under gfsplit-VERSION/; and the recipe's sha256 is that of make
# dist of the tag vVERSION once there is one, until then of the commit that
# last changed the recipe (where the checksum was recorded: the tarball
# depends on the files alone, and the recipe is not among them)
if ! git -C "$TOP" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	skip "make dist" "the tree is not a git work tree (make dist is git archive)"
else
	tgz=gfsplit-$version.tar.gz
	expect_exit "make dist makes $tgz" 0 make -s -C "$TOP" dist DISTDIR="$TMPD/d1"
	sleep 1	# a date taken from the clock would differ
	make -s -C "$TOP" dist DISTDIR="$TMPD/d2" >"$TMPD/d2.out" 2>&1
	same_bytes "make dist again: the same bytes" "$TMPD/d1/$tgz" "$TMPD/d2/$tgz"
	tar -tzf "$TMPD/d1/$tgz" 2>&1 | grep -v '/$' | sort >"$TMPD/dist.list"
	git -C "$TOP" ls-tree -r --name-only HEAD | grep -vx packaging/spack/package.py |
		sed "s|^|gfsplit-$version/|" | sort >"$TMPD/git.list"
	cmp -s "$TMPD/dist.list" "$TMPD/git.list" &&
		ok "it holds HEAD's $(grep -c . "$TMPD/git.list") files under gfsplit-$version/, all but the Spack recipe" ||
		not_ok "it holds HEAD's files under gfsplit-$version/, all but the Spack recipe" \
			"$(diff "$TMPD/git.list" "$TMPD/dist.list" | head -n 10)"
	if git -C "$TOP" rev-parse -q --verify "refs/tags/v$version" >/dev/null; then
		ref=v$version what="the tag v$version"
	else
		ref=$(git -C "$TOP" log -1 --format=%h -- packaging/spack/package.py)
		what="$ref, which last changed the recipe (no tag v$version yet)"
	fi
	make -s -C "$TOP" dist DISTDIR="$TMPD/d3" DIST_REF="$ref" >"$TMPD/d3.out" 2>&1
	sum=$(sha256sum "$TMPD/d3/$tgz" 2>&1 | cut -d' ' -f1)
	[ -n "$recipe_sha" ] && [ "$sum" = "$recipe_sha" ] &&
		ok "the Spack recipe's sha256 of $version is that of make dist of $what" ||
		not_ok "the Spack recipe's sha256 of $version is that of make dist of $what" \
			"recipe: $recipe_sha" "make dist: $sum (set it in packaging/spack/package.py)" "$(cat "$TMPD/d3.out")"
fi

# ---- make deb: the Debian packages from a copy of the tree, lintian clean
miss=""
for c in dpkg-buildpackage dh lintian fakeroot git; do
	command -v "$c" >/dev/null 2>&1 || miss="$miss $c"
done
if [ -n "$miss" ]; then
	skip "make deb" "no$miss (sh tools/install-deps.sh)"
	finish
	exit $?
fi
if ! git -C "$TOP" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	skip "make deb" "the tree is not a git work tree (make deb copies the files git lists)"
	finish
	exit $?
fi
if ! unmet=$(cd "$TOP" && dpkg-checkbuilddeps 2>&1); then
	skip "make deb" "${unmet#dpkg-checkbuilddeps: error: } (sh tools/install-deps.sh)"
	finish
	exit $?
fi
# The README's Debian block (readme_block deb), as written, in a copy of
# the tree that is a git work tree of its own (make deb copies the files
# git lists): it builds the packages and installs gfsplit and
# gfsplit-preload on this machine, which are purged again at the end
# (unless they were installed before: then the block is not run).
version_of() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null; }
deb=$TMPD/debtree/build/deb
block=$(readme_block deb)
if [ -z "$block" ]; then
	not_ok "README.md has the Debian block (<!-- test: packaging name=deb -->)"
	finish
	exit $?
fi
if [ -n "$(version_of gfsplit)$(version_of gfsplit-preload)" ]; then
	skip "the README's Debian block" "gfsplit $(version_of gfsplit) is installed here already: not replaced by a test"
	finish
	exit $?
fi
copy_tree "$TMPD/debtree" &&
	git -C "$TMPD/debtree" init -q && git -C "$TMPD/debtree" add -A &&
	git -C "$TMPD/debtree" -c user.name=t -c user.email=t@localhost commit -qm copy ||
	not_ok "a git copy of the tree for make deb"
at_exit "apt-get purge -y -q gfsplit gfsplit-preload >/dev/null 2>&1"
git -C "$TMPD/debtree" status --porcelain >"$TMPD/st.before"
# no -dbgsym packages: they take time and nothing here checks them
cd "$TMPD/debtree" || not_ok "cd to the copy"
# (apt-get asks before it installs what gfsplit recommends: the reader
# says yes)
DEB_BUILD_OPTIONS="noautodbgsym ${DEB_BUILD_OPTIONS:-}" \
	expect_exit "the README's Debian block builds and installs the packages" 0 \
	bash -ec "yes | { $block; }"
cd "$TOP" || not_ok "cd back"
git -C "$TMPD/debtree" status --porcelain >"$TMPD/st.after"
cmp -s "$TMPD/st.before" "$TMPD/st.after" && ok "make deb leaves the tree as it was (build/ aside)" ||
	not_ok "make deb leaves the tree as it was" "$(diff "$TMPD/st.before" "$TMPD/st.after" | head -n 10)"
[ "$(version_of gfsplit)" = "$version" ] && [ "$(version_of gfsplit-preload)" = "$version" ] &&
	ok "gfsplit and gfsplit-preload $version are installed" ||
	not_ok "gfsplit and gfsplit-preload $version are installed" "$(dpkg -l 'gfsplit*' 2>&1 | tail -n 4)"
v=$(/usr/bin/pcp-split --version 2>&1 | head -n 1)
case $v in *" $version"*) ok "  /usr/bin/pcp-split runs: $v" ;;
*) not_ok "  /usr/bin/pcp-split runs" "$v" ;; esac
check "  and the preload library is where gfsplit-mpiio(7) says" \
	test -f "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/gfsplit/libgfsplit-mpiio.so"
tags=$(grep -E '^[EW]: ' "$deb/lintian.log" 2>/dev/null)
[ -f "$deb/lintian.log" ] && [ -z "$tags" ] && ok "lintian: no error or warning" ||
	not_ok "lintian: no error or warning" "$tags"

arch=$(dpkg --print-architecture)
tri=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
# has PKG DESC PATH...: PKG's .deb holds every PATH (dpkg-deb -c)
has() {
	_p=$1 _d=$2; shift 2
	_f=$deb/${_p}_${version}_$arch.deb
	if ! dpkg-deb -c "$_f" >"$TMPD/c" 2>&1; then
		not_ok "$_p: $_d" "$(cat "$TMPD/c")"
		return
	fi
	_m=""
	for _x in "$@"; do grep -Eq " \./$_x( |$)" "$TMPD/c" || _m="$_m $_x"; done
	[ -z "$_m" ] && ok "$_p: $_d" || not_ok "$_p: $_d" "missing:$_m"
}
# depends PKG REGEX...: PKG's Depends (dpkg-deb -I) matches every REGEX
depends() {
	_p=$1; shift
	_dep=$(dpkg-deb -I "$deb/${_p}_${version}_$arch.deb" 2>&1 | sed -n 's/^ Depends: //p')
	_m=""
	for _x in "$@"; do printf '%s\n' "$_dep" | grep -Eq -- "$_x" || _m="$_m /$_x/"; done
	[ -z "$_m" ] && ok "$_p depends on $*" || not_ok "$_p depends on $*" "Depends: $_dep" "no match for$_m"
}
bins="" men=""
for c in $CMDS; do bins="$bins usr/bin/$c"; men="$men usr/share/man/man1/$c.1.gz"; done
# shellcheck disable=SC2086
has gfsplit "the commands, their man pages and completions" $bins $men usr/share/man/man5/gfsplit.5.gz \
	usr/share/bash-completion/completions/pcp-split usr/share/zsh/vendor-completions/_pcp-split \
	usr/share/gfsplit/schemas/pcp-split.schema.json
# the MPI packages' files: no package of gfsplit's holds a completion of a
# launcher (it would conflict with theirs)
l=$(for p in gfsplit libgfsplit0 libgfsplit-dev gfsplit-preload; do
	dpkg-deb -c "$deb/${p}_${version}_$arch.deb" 2>&1 | grep -E '/(mpiexec|mpirun|mpiexec\.hydra|srun)( |$)|^dpkg-deb'
done)
[ -z "$l" ] && ok "no package holds a completion of mpiexec, mpirun, mpiexec.hydra or srun" ||
	not_ok "no package holds a completion of mpiexec, mpirun, mpiexec.hydra or srun" "$l"
r=$(dpkg-deb -f "$deb/gfsplit_${version}_$arch.deb" Recommends 2>&1)
printf '%s\n' "$r" | grep -Eq '(^|, )bash-completion(,|$)' && ok "gfsplit recommends bash-completion" ||
	not_ok "gfsplit recommends bash-completion" "Recommends: $r"
has libgfsplit0 "the shared library" "usr/lib/$tri/libgfsplit.so.0"
has libgfsplit-dev "header, pkg-config file, static library and .so link" usr/include/gfsplit.h \
	"usr/lib/$tri/pkgconfig/gfsplit.pc" "usr/lib/$tri/libgfsplit.a" "usr/lib/$tri/libgfsplit.so -> libgfsplit.so.0"
has gfsplit-preload "the preload libraries and their man pages" "usr/lib/$tri/gfsplit/libgfsplit-mpiio.so" \
	"usr/lib/$tri/gfsplit/libgfsplit-cache.so" usr/share/man/man7/gfsplit-mpiio.7.gz usr/share/man/man7/gfsplit-cache.7.gz
depends gfsplit 'libmpich12' 'libjson-c5' 'libc6'
depends libgfsplit0 'libmpich12' 'libc6'
depends libgfsplit-dev "libgfsplit0 \(= $version\)" 'libmpich-dev'
depends gfsplit-preload 'libmpich12' 'libc6'

# the shared library's SONAME, the packaged man page's preload path
x=$TMPD/x
mkdir -p "$x"
for p in gfsplit libgfsplit0 gfsplit-preload libgfsplit-dev; do dpkg-deb -x "$deb/${p}_${version}_$arch.deb" "$x"; done
v=$("$x/usr/bin/pcp-split" --version 2>&1 | head -n 1)
case $v in *" $version"*) ok "the packaged pcp-split runs: $v" ;;
*) not_ok "the packaged pcp-split runs and says $version" "$v" ;; esac
so=$(objdump -p "$x/usr/lib/$tri/libgfsplit.so.0" 2>&1 | awk '$1 == "SONAME" { print $2 }')
[ "$so" = libgfsplit.so.0 ] && ok "libgfsplit.so.0 has SONAME libgfsplit.so.0" || not_ok "libgfsplit.so.0 has its SONAME" "$so"
zgrep -q "LD_PRELOAD=/usr/lib/$tri/gfsplit/libgfsplit-mpiio\.so" "$x/usr/share/man/man7/gfsplit-mpiio.7.gz" &&
	ok "the packaged gfsplit-mpiio(7) names /usr/lib/$tri/gfsplit" ||
	not_ok "the packaged gfsplit-mpiio(7) names /usr/lib/$tri/gfsplit" "$(zgrep LD_PRELOAD "$x/usr/share/man/man7/gfsplit-mpiio.7.gz")"
grep -qx "libdir=/usr/lib/$tri" "$x/usr/lib/$tri/pkgconfig/gfsplit.pc" && ok "the packaged gfsplit.pc has the multiarch libdir" ||
	not_ok "the packaged gfsplit.pc has the multiarch libdir" "$(cat "$x/usr/lib/$tri/pkgconfig/gfsplit.pc")"
# the packaged pages name the longer /usr/lib/TRIPLET/gfsplit: still 80
if command -v man >/dev/null 2>&1 && command -v groff >/dev/null 2>&1; then
	w=$(wide "$x"/usr/share/man/man*/*)
	[ -z "$w" ] && ok "man -l at MANWIDTH=80: no line of a packaged page wider than 80 columns" ||
		not_ok "man -l at MANWIDTH=80: no line of a packaged page wider than 80 columns" "$w"
fi
finish
