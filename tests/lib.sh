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
# The system python starts fast; a pyenv shim on PATH may take a second a call.
if [ -x /usr/bin/python3 ]; then python3() { /usr/bin/python3 "$@"; }; fi
# Hydra on one machine: fork the ranks locally, never ssh.
export HYDRA_LAUNCHER=${HYDRA_LAUNCHER:-fork}
# A hung test must fail, not stall CI: each MPI run gets this many seconds.
TEST_TIMEOUT=${TEST_TIMEOUT:-120}

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

# mpirun_n N PROG ARGS...: run under mpiexec with a timeout.
mpirun_n() {
	_n=$1; shift
	timeout -k 5 "$TEST_TIMEOUT" "$MPIEXEC" -n "$_n" "$@"
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

# json_get FILE EXPR: evaluate a python expression on the parsed JSON `j`.
json_get() {
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# can_run_as_nobody: true if an unprivileged user is available (for EACCES cases).
can_run_as_nobody() {
	[ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null 2>&1 &&
		setpriv --reuid=nobody --regid=nogroup --clear-groups true 2>/dev/null
}
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }

finish() {
	echo "1..$_tn"
	[ "$_tfailed" -eq 0 ]
}
