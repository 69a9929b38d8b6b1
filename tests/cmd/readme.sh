#!/bin/bash
# readme.sh - every shell block of README.md runs as written.  Each block
# carries a tag on the line before it, and a block without one fails:
#
#   <!-- test: run [at=top] [gfarm] [needs=CMD] -->
#       run here, in order, as one reader at one shell: what a block
#       exports and where it cd's carry over to the next.  at=top: from the
#       top of the tree first.  gfarm: with this script's own Gfarm as the
#       client configuration.  needs=CMD: SKIP, saying so, where CMD is not
#       installed (spack: not packaged for Debian, and no internet here).
#   <!-- test: ci -->
#       the test command itself, which CI runs (.ci/run): checked to be the
#       line .ci/run takes, not run here.
#   <!-- test: packaging name=NAME -->
#       run by tests/cmd/packaging.sh (readme_block NAME), which checks
#       what it makes: checked to be called there.
#   <!-- test: cluster name=NAME -->
#       the same, run by tests/cmd/cluster_slurm.sh (a batch script,
#       submitted with sbatch on the emulated cluster with Slurm).
#
# The "tree" is a copy of this built tree (its files with their times, so
# nothing is rebuilt), so that configure and make install in a block leave
# the real one alone; HOME is a directory of the test's, and what blocks
# make outside it (/opt/gfsplit, /opt/modulefiles, /tmp/$USER-*, /dev/shm)
# goes at the end.  The ASan pass skips it: the blocks run the release
# build's bin/.
. "$(dirname "$0")/../lib.sh"

if [ "$BIN" != "$TOP/bin" ]; then
	skip "the README's blocks" "they run the release build (bin/), in the release pass"
	finish
	exit 0
fi

R=$TMPD/readme
mkdir -p "$R/blocks" "$TMPD/home"
# the blocks, and their tags: blocks/N.sh and blocks/N.tag
python3 - "$TOP/README.md" "$R/blocks" <<'PY' || not_ok "README.md's blocks can be read"
import re, sys
lines = open(sys.argv[1]).read().split("\n")
n, i = 0, 0
while i < len(lines):
    if lines[i] == "```sh":
        tag = lines[i - 1] if i > 0 else ""
        m = re.fullmatch(r"<!-- test: (.*) -->", tag)
        j = i + 1
        while j < len(lines) and lines[j] != "```":
            j += 1
        n += 1
        open(f"{sys.argv[2]}/{n}.sh", "w").write("\n".join(lines[i + 1:j]) + "\n")
        open(f"{sys.argv[2]}/{n}.tag", "w").write(
            f"{i + 1} {m.group(1) if m else '-'}\n")
        i = j
    i += 1
PY
nblocks=$(ls "$R/blocks" | grep -c '\.sh$')
[ "$nblocks" -ge 10 ] && ok "README.md has $nblocks shell blocks" || not_ok "README.md has its shell blocks" "$nblocks"

# what blocks make outside HOME: removed at the end if this test made it
export USER=${USER:-$(id -un)}
OUTSIDE="/opt/gfsplit /opt/modulefiles /tmp/stage /tmp/$USER-job /tmp/$USER-job2 /tmp/$USER-env /dev/shm/$USER-warm"
for d in $OUTSIDE; do
	[ -e "$d" ] && echo "$d" >>"$R/there-before"
done
cleanup_readme() {
	fusermount3 -u "$TMPD/home/view" 2>/dev/null
	for _d in $OUTSIDE; do
		grep -qxF "$_d" "$R/there-before" 2>/dev/null || rm -rf "$_d"
	done
}
at_exit cleanup_readme

# the tree: git's files and the release build's outputs, times kept
T=$TMPD/tree
mkdir -p "$T/build"
if copy_tree "$T" && (cd "$TOP" &&
    cp -pR bin lib config.mk "$T/" && cp -pR build/release "$T/build/" &&
    cp -pR tests/unit/. "$T/tests/unit/"); then
	ok "a copy of the built tree"
else
	not_ok "a copy of the built tree" "$(ls "$T")"
fi

# the reader's shell: a login shell (Lmod's module), a plain PATH, the
# test's MPI settings; state/env and state/cwd carry it from block to block
mkdir -p "$R/state"
env -i HOME="$TMPD/home" USER="$USER" LOGNAME="$USER" SHELL=/bin/bash TERM=dumb \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	HYDRA_LAUNCHER="${HYDRA_LAUNCHER:-fork}" bash -c 'export -p' |
	grep -Ev '^declare -x (OLDPWD|PWD|SHLVL|_)=' >"$R/state/env"
echo "$T" >"$R/state/cwd"

# run_block N: block N in the reader's shell; its output in $R/out.N
run_block() {
	timeout -k 5 300 env -i HOME="$TMPD/home" bash -l -c '
		S=$1 B=$2
		. "$S/env"
		cd "$(cat "$S/cwd")" || exit 1
		set -e
		. "$B"
		set +e
		pwd >"$S/cwd"
		export -p | grep -Ev "^declare -x (OLDPWD|PWD|SHLVL|_)=" >"$S/env"
	' _ "$R/state" "$R/blocks/$1.sh" >"$R/out.$1" 2>&1
}

ci_cmd=$(awk '/^Run the full test suite/{f=1} f && /^```sh$/{getline; print; exit}' "$TOP/README.md")
for n in $(seq "$nblocks"); do
	read -r line tag <"$R/blocks/$n.tag"
	first=$(head -n 1 "$R/blocks/$n.sh")
	d="README.md:$line ($(printf '%.50s' "$first"))"
	case " $tag " in
	" - ")
		not_ok "$d: has a test tag" "the line before the block must say how it is tested (<!-- test: ... -->)"
		continue ;;
	*" ci "*)
		[ "$(cat "$R/blocks/$n.sh")" = "$ci_cmd" ] && grep -q 'README.md' "$TOP/.ci/run" &&
			ok "$d: the test command, which .ci/run runs" ||
			not_ok "$d: the test command .ci/run runs" "README: $(cat "$R/blocks/$n.sh")" ".ci/run takes: $ci_cmd"
		continue ;;
	*" packaging "* | *" cluster "*)
		name=$(printf '%s\n' "$tag" | sed -n 's/.*name=\([a-z0-9-]*\).*/\1/p')
		by=packaging
		case " $tag " in *" cluster "*) by=cluster_slurm ;; esac
		grep -q "readme_block $name\b" "$TOP/tests/cmd/$by.sh" &&
			ok "$d: run by $by.sh (readme_block $name)" ||
			not_ok "$d: run by $by.sh" "no 'readme_block $name' in tests/cmd/$by.sh"
		continue ;;
	esac
	need=$(printf '%s\n' "$tag" | sed -n 's/.*needs=\([^ ]*\).*/\1/p')
	if [ -n "$need" ] && ! command -v "$need" >/dev/null 2>&1; then
		skip "$d" "$need is not installed here (not packaged for Debian; packaging.sh checks the recipe against a stand-in)"
		continue
	fi
	case " $tag " in *" at=top "*) echo "$T" >"$R/state/cwd" ;; esac
	case " $tag " in
	*" gfarm "*)
		need_gfarm
		gfarm_up 2 || continue
		printf 'declare -x GFARM_CONFIG_FILE="%s"\n' "$GFARM_CONFIG_FILE" >>"$R/state/env" ;;
	esac
	if run_block "$n"; then
		ok "$d: runs as written"
	else
		not_ok "$d: runs as written" "exit $?" "$(tail -n 15 "$R/out.$n")"
	fi
done

# what the blocks say they do, checked on what they made
# out_of PATTERN: the output of the block whose text matches PATTERN
out_of() {
	_f=$(grep -l -- "$1" "$R"/blocks/*.sh | head -n 1)
	cat "$R/out.$(basename "${_f:-none}" .sh)" 2>/dev/null
}
H=$TMPD/home/gfsplit-try
out_of "pcp-split big.dat big.split" | grep -q "the same bytes" && cmp -s "$H/big.dat" "$H/big.copy" &&
	ok "Use: the merged copy has the source's bytes" || not_ok "Use: the merged copy has the source's bytes"
sum=$(md5sum <"$H/big.dat" | cut -d' ' -f1)
[ "$(out_of "md5sum big.dat" | grep -c "^$sum ")" -eq 2 ] &&
	ok "Use: md5sum reads the same through gfsplit-mount" || not_ok "Use: md5sum through gfsplit-mount" "$(out_of "md5sum big.dat")"
check "MPI-IO: the preloaded N-1 write made a split file" test -f "$H/out.dat/gfsplit.meta"
check "MPI-IO: and it merges to what MPICH alone writes" cmp "$H/out.plain" "$H/plain.dat"
[ "$(out_of "readall.c" | grep -c "every rank alike")" -eq 2 ] && ok "cache: every rank read the same bytes" ||
	not_ok "cache: every rank read the same bytes" "$(out_of "readall.c")"
check "stage-out wrote the node's results back" test -f "$H/results/$(hostname)/result"
[ -n "$(ls "$H"/results-async/*/rank0.dat 2>/dev/null)" ] && ok "stage-out --async wrote back what the job wrote after it started" ||
	not_ok "stage-out --async wrote back the job's files" "$(find "$H"/results-async 2>&1 | head)"
finish
