# tests/lib.sh - helpers for the command tests (sourced, POSIX sh + bash).
#
# A test script prints TAP-style lines, one per assertion:
#   ok N - description
#   not ok N - description
#   ok N # SKIP description: reason
# and calls `finish` last; its exit status is 1 if anything failed.
# tests/run.sh counts the lines of every script and unit test.
#
#   . "$(dirname "$0")/../lib.sh"
#   check "split 4 ranks" mpirun_n 4 "$BIN/pcp-split" "$src" "$dst"
#   same_bytes "merge equals source" "$src" "$out"
#   finish

TOP=$(cd "$(dirname "$0")/../.." && pwd)
# The sanitizer build (make check-asan) points these at its own outputs.
BIN=${BIN:-"$TOP/bin"}
UNIT=${UNIT:-"$TOP/tests/unit"}
export PATH="$BIN:$PATH"
MPIEXEC=${MPIEXEC:-mpiexec}
# the MPI the script runs under: mpich (mpiexec, Hydra) or ompi (Open
# MPI's mpirun: tests/ompi.sh); mpi_env NAME=VALUE prints the launcher's
# option that sets NAME in one program's environment
TEST_MPI=${TEST_MPI:-mpich}
# MPI_TAG: the launcher's option that puts each output line's rank before
# it; TAG0: a grep -E expression of rank 0's prefix
if [ "$TEST_MPI" = ompi ]; then
	MPI_NAME="Open MPI" MPI_TAG=--tag-output TAG0='^\[[0-9]+,0\]<std(out|err)>:'
else
	MPI_NAME=MPICH MPI_TAG=-l TAG0='^\[0\] '
fi
# config_var NAME: configure's NAME (config.mk) for the build under test:
# OMPI_NAME, the Open MPI build's, under TEST_MPI=ompi
config_var() {
	_k=$1
	[ "$TEST_MPI" = ompi ] && _k=OMPI_$1
	sed -n "s|^$_k = ||p" "$TOP/config.mk"
}
mpi_env() {
	if [ "$TEST_MPI" = ompi ]; then echo "-x $1"; else echo "-env ${1%%=*} ${1#*=}"; fi
}
# The system python starts fast; a pyenv shim on PATH may take a second a call.
if [ -x /usr/bin/python3 ]; then python3() { /usr/bin/python3 "$@"; }; fi
# Hydra on one machine: fork the ranks locally, never ssh.
export HYDRA_LAUNCHER=${HYDRA_LAUNCHER:-fork}
# A hung test must fail, not stall CI: each MPI run gets this many seconds.
TEST_TIMEOUT=${TEST_TIMEOUT:-120}
# scaled SECONDS: a wall-clock bound of a check, times TIME_SCALE (make
# check-asan: 3), so that what holds on a quiet machine holds under the
# sanitizers on a loaded one too
scaled() { echo $(($1 * ${TIME_SCALE:-1})); }

_tname=$(basename "$0" .sh)
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/gfsplit-test.$_tname.XXXXXX")
_tn=0
_tfailed=0
_cleanups=""

# Run CMD at exit (after the temp dir is removed in reverse order).
at_exit() { _cleanups="$1; $_cleanups"; }
_lib_exit() {
	eval "$_cleanups" >/dev/null 2>&1
	rm -rf "$TMPD"
}
trap _lib_exit EXIT

ok() { _tn=$((_tn + 1)); echo "ok $_tn - $1"; }
not_ok() {
	_tn=$((_tn + 1)); _tfailed=$((_tfailed + 1))
	echo "not ok $_tn - $1"
	shift
	for _l in "$@"; do printf '#   %s\n' "$_l"; done
}
skip() { _tn=$((_tn + 1)); echo "ok $_tn # SKIP $1: $2"; }
# long_wait DESC: true if the case DESC, which spends its time waiting out
# a timer (a --timeout, a grace period, a frozen node, libgfarm's retries),
# is to run; LONG_WAITS=no (make check-asan: another case of the same kind
# goes through its code paths) skips it, saying so
long_wait() {
	[ "${LONG_WAITS:-yes}" != no ] && return 0
	skip "$1" "LONG_WAITS=no (make check-asan; make check runs it)"
	return 1
}

# check DESC CMD...: ok if CMD exits 0; its output is shown on failure.
check() {
	_d=$1; shift
	if "$@" >"$TMPD/.out" 2>&1; then ok "$_d"
	else not_ok "$_d" "command: $*" "exit: $?" "$(tail -n 20 "$TMPD/.out")"; fi
}
# check_fails DESC CMD...: ok if CMD exits nonzero.
check_fails() {
	_d=$1; shift
	if "$@" >"$TMPD/.out" 2>&1; then not_ok "$_d" "command unexpectedly succeeded: $*"
	else ok "$_d"; fi
}
# expect_exit DESC CODE CMD...: ok if CMD exits with CODE; output kept in $OUT.
OUT="$TMPD/.last"
expect_exit() {
	_d=$1; _want=$2; shift 2
	"$@" >"$OUT" 2>&1; _got=$?
	if [ "$_got" -eq "$_want" ]; then ok "$_d"
	else not_ok "$_d" "command: $*" "exit $_got, wanted $_want" "$(tail -n 20 "$OUT")"; fi
}
# output_has DESC REGEX: ok if the last expect_exit output matches (grep -E).
output_has() {
	if grep -Eq -- "$2" "$OUT"; then ok "$1"
	else not_ok "$1" "no match for /$2/ in:" "$(tail -n 20 "$OUT")"; fi
}
# output_lacks DESC REGEX: ok if the last expect_exit output does not match.
output_lacks() {
	if grep -Eq -- "$2" "$OUT"; then not_ok "$1" "/$2/ matches:" "$(grep -E -- "$2" "$OUT" | head -n 5)"
	else ok "$1"; fi
}
# same_bytes DESC A B: byte-for-byte comparison.
same_bytes() {
	if cmp -s -- "$2" "$3"; then ok "$1"
	else not_ok "$1" "$(cmp -- "$2" "$3" 2>&1 | head -n 3)"; fi
}
# is_absent DESC PATH...: none of the paths exists.
is_absent() {
	_d=$1; shift
	for _p in "$@"; do
		if [ -e "$_p" ] || [ -L "$_p" ]; then not_ok "$_d" "exists: $_p"; return; fi
	done
	ok "$_d"
}
# no_leftovers DESC DIR [PATH...]: the PATHs are absent and DIR holds no
# temporary of a writer (".NAME.gfsplit-tmp.*" or ".NAME.gfsplit-old.*").
no_leftovers() {
	_d=$1 _dir=$2; shift 2
	for _p in "$@"; do
		if [ -e "$_p" ]; then not_ok "$_d" "exists: $_p"; return; fi
	done
	_t=$(ls -a "$_dir" | grep -E 'gfsplit-(tmp|old)')
	[ -z "$_t" ] && ok "$_d" || not_ok "$_d" "left behind in $_dir: $_t"
}

# ranks_of PATTERN: the MPI ranks among this test's processes whose command
# line matches PATTERN (pgrep -f, with $TMPD after it): "PID RANK" lines
ranks_of() {
	for _p in $(pgrep -f "$1.*$TMPD"); do
		_r=$(tr '\0' '\n' <"/proc/$_p/environ" 2>/dev/null |
			sed -n 's/^PMI_RANK=//p; s/^OMPI_COMM_WORLD_RANK=//p')
		[ -n "$_r" ] && echo "$_p $_r"
	done
}
# mpirun_n N PROG ARGS...: run under mpiexec with a timeout.
mpirun_n() {
	_n=$1; shift
	timeout -k 5 "$TEST_TIMEOUT" "$MPIEXEC" -n "$_n" "$@"
}

# preload_of LIB: sets PRE to the LD_PRELOAD list for the preload library
# LIB; a sanitized library (build/asan) needs the sanitizer runtime first
# in the process, which ASan is told to accept
preload_of() {
	PRE=$1
	case $1 in
	*/asan/*)
		PRE="$(gcc -print-file-name=libasan.so) $1"
		export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
		;;
	esac
}

# make_file PATH SIZE [SEED]: deterministic pseudo-random content.
make_file() {
	python3 - "$1" "$2" "${3:-1}" <<'EOF'
import random, sys
path, size, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = random.Random(seed)
with open(path, "wb") as f:
    left = size
    while left > 0:
        n = min(left, 1 << 20)
        f.write(r.randbytes(n))
        left -= n
EOF
}

# fnv FILE: the FNV-1a 64 of FILE, as mpi_readapp prints it
fnv() {
	python3 -c '
import sys
h = 0xcbf29ce484222325
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
print("%016x" % h)' "$1"
}
# json_get FILE EXPR: evaluate a python expression on the parsed JSON `j`.
json_get() {
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# json_valid KIND FILE: ok if FILE holds one JSON document valid against
# schemas/KIND.schema.json (tests/json_valid.py with Debian's
# python3-jsonschema).  A missing validator is a failure, not a skip: the
# README's test command installs it (tools/install-deps.sh).
json_valid() {
	if python3 "$TOP/tests/json_valid.py" "$1" "$2" >"$TMPD/.jv" 2>&1; then
		ok "JSON valid against schemas/$1.schema.json"
	else
		not_ok "JSON valid against schemas/$1.schema.json" "$(cat "$TMPD/.jv")" \
			"$(head -c 1500 "$2")"
	fi
}
# json_invalid_without KIND FILE MEMBER: ok if FILE's document with its
# top-level MEMBER removed fails schemas/KIND.schema.json (exit 1), so that
# json_valid cannot pass vacuously.
json_invalid_without() {
	python3 "$TOP/tests/json_valid.py" --drop "$3" "$1" "$2" >"$TMPD/.jv" 2>&1
	_rc=$?
	if [ "$_rc" -eq 1 ]; then ok "JSON without \"$3\" fails schemas/$1.schema.json"
	else not_ok "JSON without \"$3\" fails schemas/$1.schema.json" "exit $_rc, wanted 1" \
		"$(cat "$TMPD/.jv")"; fi
}

# json_true DESC EXPR [FILE]: ok if the python expression on FILE's JSON
# (j; FILE defaults to $J) is True; the JSON is shown otherwise.
json_true() {
	if [ "$(json_get "${3:-$J}" "$2" 2>&1)" = True ]; then ok "$1"
	else not_ok "$1" "$2" "$(cat "${3:-$J}")"; fi
}

# two_nodes K CMD...: CMD on K ranks of emulated node nA and K of node nB
# (mpiexec MPMD, GFSPLIT_NODE), with the timeout.
two_nodes() {
	_k=$1; shift
	# shellcheck disable=SC2046
	timeout -k 5 "$TEST_TIMEOUT" "$MPIEXEC" -n "$_k" $(mpi_env GFSPLIT_NODE=nA) "$@" : \
		-n "$_k" $(mpi_env GFSPLIT_NODE=nB) "$@"
}

# can_run_as_nobody: true if an unprivileged user is available (for EACCES cases).
can_run_as_nobody() {
	[ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
		setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null
}
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }

# second_user NAME: make the local user NAME for this test (removed at
# exit) and define as_m CMD... to run CMD as her; 1 (and nothing made)
# when this cannot be done here: not root, no useradd or setpriv.  The
# reason is in $SECOND_USER_WHY.
second_user() {
	M=$1 SECOND_USER_WHY=""
	if [ "$(id -u)" -ne 0 ] || ! command -v useradd >/dev/null || ! command -v setpriv >/dev/null; then
		SECOND_USER_WHY="needs root, useradd and setpriv to make a second user"
		return 1
	fi
	if ! id "$M" >/dev/null 2>&1; then
		if ! useradd --system --no-create-home --shell /usr/sbin/nologin "$M" 2>"$TMPD/.useradd"; then
			SECOND_USER_WHY="useradd $M failed: $(cat "$TMPD/.useradd")"
			return 1
		fi
		at_exit "userdel $M"
	fi
	as_m() { setpriv --reuid="$M" --regid="$M" --clear-groups "$@"; }
	return 0
}

# her_dir WHAT: the race tests' start: a second user (second_user
# gfsplit-mallory), or SKIP WHAT with the reason and end the test; then
# $TMPD open to her and MD=$TMPD/m, a directory of hers.
her_dir() {
	if ! second_user gfsplit-mallory; then
		skip "$1" "$SECOND_USER_WHY"
		finish
		exit 0
	fi
	chmod 755 "$TMPD"
	MD=$TMPD/m
	mkdir -m 755 "$MD"
	chown "$M:$M" "$MD"
}

# fails DESC CODE CMD...: CMD exits with CODE; its stderr in $TMPD/err
fails() {
	_d=$1 _c=$2; shift 2
	"$@" >"$TMPD/out" 2>"$TMPD/err"
	_rc=$?
	[ "$_rc" -eq "$_c" ] && ok "$_d" || not_ok "$_d" "exit $_rc, wanted $_c" "$(tail -n 5 "$TMPD/err")"
}
# err_has DESC WORDS...: the last fails command's stderr ($TMPD/err) holds each
err_has() {
	_d=$1; shift
	for _w in "$@"; do
		grep -qF -- "$_w" "$TMPD/err" || { not_ok "$_d" "no '$_w' in: $(cat "$TMPD/err")"; return; }
	done
	ok "$_d"
}

# The swap loops of the race tests run this many iterations in make check
# (make check-asan: RACE_ITERS=20; make check-long: RACE_ITERS=2000).
RACE_ITERS=${RACE_ITERS:-30}

finish() {
	echo "1..$_tn"
	[ "$_tfailed" -eq 0 ]
}

# same_tree DESC A B: same names, types, bytes, modes, mtimes and links
same_tree() {
	if python3 - "$2" "$3" >"$TMPD/tree" 2>&1 <<'EOF'
import os, stat, sys
a, b = sys.argv[1], sys.argv[2]
def walk(top):
    out = {}
    for d, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(d, n)
            r = os.path.relpath(p, top)
            if r.startswith(".gfsplit-stage"):
                continue
            st = os.lstat(p)
            e = [stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode)]
            if stat.S_ISLNK(st.st_mode):
                e.append(os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                e += [st.st_mtime_ns, open(p, "rb").read(), st.st_nlink]
            elif stat.S_ISDIR(st.st_mode):
                e.append(st.st_mtime_ns)
            out[r] = e
    return out
x, y = walk(a), walk(b)
bad = sorted(set(x) ^ set(y)) + [k for k in x if k in y and x[k] != y[k]]
for k in bad[:5]:
    print("differs:", repr(k), x.get(k, "absent")[:2], y.get(k, "absent")[:2])
sys.exit(1 if bad else 0)
EOF
	then ok "$1"; else not_ok "$1" "$(cat "$TMPD/tree")"; fi
}

# tiers_hold DESC SRC KEEP DIR..: each DIR (a node's tier directory) holds
# one entry for SRC, whose blocks are byte for byte SRC's (or, if
# TIER_BYTES names a file, that file's: SRC a URL); KEEP all: every block
# in each DIR; part: each block in exactly one DIR, none empty
tiers_hold() {
	_d=$1; shift
	if python3 - "${TIER_BYTES:-$1}" "$@" >"$TMPD/t.out" 2>&1 <<'EOF'
import json, os, sys
data = open(sys.argv[1], "rb").read()
src, keep, dirs = sys.argv[2], sys.argv[3], sys.argv[4:]
held = []
for d in dirs:
    maps = [json.load(open(os.path.join(d, m))) for m in os.listdir(d) if m.endswith(".map")]
    mine = [m for m in maps if m["path"] == src]
    assert len(mine) == 1, "%s: %d entries for %s" % (d, len(mine), src)
    m = mine[0]
    bs = m["block_size"]
    nb = (len(data) + bs - 1) // bs
    bits = bytes.fromhex(m["have"])
    have = {j for j in range(nb) if bits[j // 8] >> (j % 8) & 1}
    blob = open(os.path.join(d, m["data"]), "rb").read()
    for j in have:
        assert blob[j * bs:(j + 1) * bs] == data[j * bs:(j + 1) * bs], "%s: block %d differs" % (d, j)
    held.append(have)
allb = set(range(nb))
if keep == "all":
    assert all(h == allb for h in held), "not every block in each tier"
else:
    assert set().union(*held) == allb and sum(map(len, held)) == nb and all(held), \
        "not a partition: %s blocks of %d" % ([len(h) for h in held], nb)
print("ok", [len(h) for h in held])
EOF
	then ok "$_d"; else not_ok "$_d" "$(cat "$TMPD/t.out")"; fi
}

# ---- a real Gfarm for the tests that need one ------------------------------
#   need_gfarm            SKIP the whole script (exit 0) unless Gfarm can run
#   gfarm_up 3            a private gfmd + 3 gfsd for this script, stopped by
#                         PID at exit, even when a test fails or the script
#                         is interrupted
#   gfreg -h "${GFARM_TEST_HOSTS%% *}" "$f" /f   # node names, node 0 first
#   gfarm_down            stop it earlier (gfarm_up starts it again)
#   on_node_k D DIR KIND N  ok D if DIR/KIND.k is on node k, k < N (gfwhere)
# The instance lives in $GFARM_BASE ($TMPD/gfarm): pid files in run/
# (gfmd.pid, gfsdI.pid), logs in log/, node I's own client configuration in
# $GFARM_CONFIG_FILE_NODEI.  See tests/gfarm/start.sh.
GFARM_FIXTURE="$TOP/tests/gfarm"

_gfarm_have() {
	command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ]
}
# on_node_k DESC GFDIR KIND N: GFDIR/KIND.k (part, loc) has a replica on
# node k of $GFARM_TEST_HOSTS, for k < N (asked of Gfarm with gfwhere)
on_node_k() {
	read -r -a _oh <<<"$GFARM_TEST_HOSTS"
	_obad=""
	for _ok in $(seq 0 $(($4 - 1))); do
		_ow=$(gfwhere "$2/$3.$_ok" 2>&1 | tr -s ' \n' ' ')
		case " $_ow " in *" ${_oh[$_ok]} "*) ;;
		*) _obad="$_obad $3.$_ok on [$_ow], wanted ${_oh[$_ok]};" ;; esac
	done
	[ -z "$_obad" ] && ok "$1" || not_ok "$1" "$_obad"
}

# need_gfarm [--no-build]: unless the Gfarm daemons and clients are installed
# and (without --no-build) the suite was built with the Gfarm backend, print
# a SKIP line with the reason and end the script successfully.
need_gfarm() {
	_gmiss=""
	for _gc in gfmd gfsd gfkey gfhost gfls gfreg gfexport gfwhere; do
		_gfarm_have "$_gc" || _gmiss="$_gmiss $_gc"
	done
	if [ -n "$_gmiss" ]; then
		skip "Gfarm tests" "no${_gmiss} (sh tools/install-deps.sh, or apt-get install gfmd gfsd gfarm-client libgfarm-dev)"
	elif [ "${1:-}" != --no-build ] &&
	    ! "$BIN/pcp-split" --version 2>/dev/null | grep -Eq '^backends:.* gfarm( |$)'; then
		skip "Gfarm tests" "gfsplit was built without Gfarm (./configure --with-gfarm; needs libgfarm-dev)"
	else
		return 0
	fi
	finish
	exit 0
}

# _gfarm_pick TRY: ports and addresses for attempt TRY of this script run.
# A hash of the script's name, its pid and TRY picks one of 4500 port pairs
# in 21000-29999 (gfmd, gfsd = gfmd + 1) and x in 127.0.x.2... (1-254), so
# concurrent scripts, and a developer's own Gfarm on the usual ports or on
# 127.0.0.x, do not meet; start.sh checks, and on a clash the next TRY is used.
_gfarm_pick() {
	_gh=$(printf '%s.%s.%s' "$_tname" "$$" "$1" | cksum | cut -d' ' -f1)
	GFARM_GFMD_PORT=$((21000 + 2 * (_gh % 4500)))
	GFARM_GFSD_PORT=$((GFARM_GFMD_PORT + 1))
	GFARM_IP_PREFIX=127.0.$((_gh / 4500 % 254 + 1))
}

# gfarm_up [NODES]: start (or keep, if it is up with as many nodes) this
# script's Gfarm with NODES gfsd (default 2) and export GFARM_CONFIG_FILE,
# GFARM_TEST_HOSTS (space-separated), GFARM_BASE and GFARM_CONFIG_FILE_NODEi.
# On failure: a "not ok" line with the fixture's log, and status 1.
gfarm_up() {
	_gfarm_base=$TMPD/gfarm
	if [ -z "${_gfarm_registered:-}" ]; then
		_gfarm_registered=1
		at_exit gfarm_down
		# a signal ends the script through its EXIT trap (not every
		# shell runs it on a fatal signal by itself)
		trap 'exit 129' HUP
		trap 'exit 130' INT
		trap 'exit 143' TERM
	fi
	_gtry=${_gfarm_try:-0}
	_glast=$((_gtry + 8))
	while :; do
		_gfarm_pick "$_gtry"
		GFARM_BASE=$_gfarm_base GFARM_NODES=${1:-2} \
		GFARM_GFMD_PORT=$GFARM_GFMD_PORT GFARM_GFSD_PORT=$GFARM_GFSD_PORT \
		GFARM_IP_PREFIX=$GFARM_IP_PREFIX GFARM_IP_BASE=2 \
			"$GFARM_FIXTURE/start.sh" >"$TMPD/.gfarm-env" 2>"$TMPD/.gfarm-start"
		_grc=$?
		# 3: a port or socket was taken by someone else, nothing started
		[ "$_grc" -eq 3 ] || break
		_gtry=$((_gtry + 1))
		[ "$_gtry" -lt "$_glast" ] || break
	done
	if [ "$_grc" -ne 0 ]; then
		not_ok "start a private Gfarm with ${1:-2} gfsd (tests/gfarm/start.sh exit $_grc)" \
			"$(tail -n 40 "$TMPD/.gfarm-start")"
		return 1
	fi
	_gfarm_try=$_gtry
	. "$TMPD/.gfarm-env"
	echo "# $(tail -n 1 "$TMPD/.gfarm-start")"
}

# gfarm_down: stop this script's Gfarm (by PID); its files stay in $GFARM_BASE
# until the script ends.
gfarm_down() {
	[ -n "${_gfarm_base:-}" ] || return 0
	GFARM_BASE=$_gfarm_base "$GFARM_FIXTURE/stop.sh"
}

# ---- the emulated cluster (tests/cluster.sh) ---------------------------------
#   need_cluster K [UP-OPTS]   up a cluster of K nodes for this script (its own
#                              name, addresses and port), down at exit; SKIP
#                              the whole script (exit 0) where it cannot be
#                              built, with the reason
#   crun [-n N] [-ppn P] [-nodes K] CMD..   mpiexec across the nodes, with the
#                              timeout (no GFSPLIT_NODE: nodes are real);
#                              Open MPI's mpirun under TEST_MPI=ompi
#   cexec NODE CMD..           one command on node NODE (1..K) or "head"
# need_cluster sets CW (a work dir every node sees, at the same path, under
# the cluster's shared storage), CLUSTER_K, CLUSTER_LOCAL (the node-local
# directory, the same path on every node), CLUSTER_DIR (the state dir:
# nodeK/local, nodeK/shm and nodeK/tmp are node K's, seen from the host),
# node_host K (node K's host name) and GFARM_CONFIG_FILE.
CLUSTER=$TOP/tests/cluster.sh
need_cluster() {
	_ck=$1; shift
	export GFSPLIT_CLUSTER=${GFSPLIT_CLUSTER:-gft}
	export GFSPLIT_CLUSTER_NET=${GFSPLIT_CLUSTER_NET:-198.18.2}
	export GFSPLIT_CLUSTER_PORT=${GFSPLIT_CLUSTER_PORT:-20681}
	export GFSPLIT_CLUSTER_KEEP="$BIN $UNIT ${GFSPLIT_CLUSTER_KEEP:-}"
	at_exit '"$CLUSTER" down'
	trap 'exit 129' HUP
	trap 'exit 130' INT
	trap 'exit 143' TERM
	CLUSTER_QUIET=1 timeout -k 5 120 "$CLUSTER" up "$_ck" "$@" 2>"$TMPD/.cluster-up"
	_crc=$?
	if [ "$_crc" -eq 77 ]; then
		skip "emulated cluster" "$(sed -n 's/^SKIP: cluster: //p' "$TMPD/.cluster-up" | head -n 1)"
		finish
		exit 0
	elif [ "$_crc" -ne 0 ]; then
		not_ok "up an emulated cluster of $_ck nodes (tests/cluster.sh exit $_crc)" \
			"$(tail -n 20 "$TMPD/.cluster-up")"
		finish
		exit 1
	fi
	eval "$("$CLUSTER" env)"
	CLUSTER_DIR=$GFSPLIT_CLUSTER_DIR
	CW=$(mktemp -d "$CLUSTER_SHARED/$_tname.XXXXXX")
	chmod 755 "$CW"
	unset GFSPLIT_NODE
}
node_host() { echo "$GFSPLIT_CLUSTER-n$1"; }
crun() {
	if [ "$TEST_MPI" = ompi ]; then timeout -k 5 "$TEST_TIMEOUT" "$CLUSTER" orun "$@"
	else timeout -k 5 "$TEST_TIMEOUT" "$CLUSTER" run "$@"; fi
}
# nodes_placed FILE: true if FILE, mpi_nodes' report of 3 nodes x 2
# ranks filled node by node (both launchers do), has each rank's processor
# and host names its node's, MPI_COMM_TYPE_SHARED grouping the ranks by
# node, and a /dev/shm per node shared by its ranks; else says why
nodes_placed() {
	python3 - "$1" "$GFSPLIT_CLUSTER" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l[0].isdigit()]
name = sys.argv[2]
assert len(rows) == 6, "%d ranks reported" % len(rows)
shm = {}
for r, proc, host, nsize, root, dev in rows:
    r, nsize, root = int(r), int(nsize), int(root)
    want = "%s-n%d" % (name, r // 2 + 1)
    assert proc == want, "rank %d: processor name %s, wanted %s" % (r, proc, want)
    assert host == want, "rank %d: host name %s, wanted %s" % (r, host, want)
    assert nsize == 2 and root == r - r % 2, "rank %d: node comm of %d, root %d" % (r, nsize, root)
    shm.setdefault(host, set()).add(dev)
assert all(len(v) == 1 for v in shm.values()), "ranks of one node see different /dev/shm: %s" % shm
assert len(set(next(iter(v)) for v in shm.values())) == 3, "nodes share a /dev/shm: %s" % shm
EOF
}
# crun_ok DESC CRUN-ARGS..: ok if the cluster run exits 0; its stdout in $J
crun_ok() {
	_d=$1; shift
	if crun "$@" >"$J" 2>"$TMPD/err"; then ok "$_d"
	else not_ok "$_d" "$(tail -n 8 "$TMPD/err")"; fi
}
cexec() { timeout -k 5 "$TEST_TIMEOUT" "$CLUSTER" exec "$@"; }

# copy_tree DEST: the tree's files as git lists them into DEST, their
# times kept (so that the build outputs copied beside them stay newer)
copy_tree() {
	mkdir -p "$1" && (cd "$TOP" && git ls-files -z | xargs -0 cp -p --parents -t "$1")
}

# readme_block NAME: the shell block of README.md tagged
# "<!-- test: packaging name=NAME -->" or "<!-- test: cluster name=NAME -->"
# (tests/cmd/readme.sh: the blocks another test runs)
readme_block() {
	awk -v n="$1" '
		$0 == "<!-- test: packaging name=" n " -->" || $0 == "<!-- test: cluster name=" n " -->" { f = 1; next }
		f == 1 && $0 == "```sh" { f = 2; next }
		f == 2 && $0 == "```" { exit }
		f == 2 { print }
		f == 1 { f = 0 }' "$TOP/README.md"
}

# ---- gfsplit-mount (tests/cmd/mount*.sh)
#   need_fuse                  SKIP and exit unless the command was built
#                              and /dev/fuse and fusermount3 are here
#   mount_up SRC MNT [OPTS..]  mount SRC on MNT in the background (log in
#                              $TMPD/mount.log), unmounted at exit; status 1
#                              if it did not come up
#   mount_down MNT             unmount and wait for the daemon to end
#   is_fuse MNT                MNT is a gfsplit-mount now (/proc/mounts)
#   mount_log_clean            the daemons' log (their standard error too)
#                              holds no sanitizer report
need_fuse() {
	if [ ! -x "$BIN/gfsplit-mount" ]; then
		skip "gfsplit-mount" "not built (configure found no libfuse3: apt-get install libfuse3-dev, or sh tools/install-deps.sh)"
	elif [ ! -c /dev/fuse ]; then
		skip "gfsplit-mount" "no /dev/fuse here (a container without the fuse device)"
	elif ! command -v fusermount3 >/dev/null 2>&1; then
		skip "gfsplit-mount" "no fusermount3 (apt-get install fuse3)"
	else
		return 0
	fi
	finish
	exit 0
}
is_fuse() {
	_m=$(cd "$1" 2>/dev/null && pwd -P) || _m=$1
	awk -v m="$_m" '$2 == m && $3 ~ /^fuse\.gfsplit/ { f = 1 } END { exit !f }' /proc/mounts
}
mount_up() {
	_src=$1 _mnt=$2; shift 2
	mkdir -p "$_mnt"
	at_exit "mount_down '$_mnt'"
	timeout -k 5 "$TEST_TIMEOUT" "$BIN/gfsplit-mount" --log "$TMPD/mount.log" "$@" "$_src" "$_mnt" \
		>"$TMPD/.mount.out" 2>&1 && is_fuse "$_mnt"
}
mount_log_clean() {
	if grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:' "$TMPD/mount.log" 2>/dev/null; then
		not_ok "the daemon's log holds no sanitizer report" "$(grep -E -A12 'Sanitizer|runtime error:' "$TMPD/mount.log" | head -n 30)"
	else ok "the daemon's log holds no sanitizer report"; fi
}
mount_down() {
	is_fuse "$1" || return 0
	_pid=$(pgrep -f "gfsplit-mount.* $(cd "$1" && pwd -P)\$" | head -n 1)
	fusermount3 -u "$1" 2>/dev/null || umount -l "$1" 2>/dev/null
	for _i in $(seq 50); do
		[ -z "$_pid" ] || ! kill -0 "$_pid" 2>/dev/null && break
		sleep 0.1
	done
	! is_fuse "$1"
}
