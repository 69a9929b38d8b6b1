#!/bin/bash
# tests/run.sh - run the whole test suite and print one summary line:
#   N passed, N failed, N skipped
#
# Runs every unit test binary $UNIT/test_* (library tests; those that use
# MPI initialise it in one process, no mpiexec), then every command test
# tests/cmd/*.sh (real mpiexec, real file systems).  The programs of
# tests/mpi and tests/helpers, built into $UNIT too, are what the command
# tests run under mpiexec.
#
# Every test prints TAP lines ("ok", "not ok", "ok # SKIP"); a test that
# exits nonzero without saying "not ok", or that runs past its time limit,
# counts as one more failure.
#
#   tests/run.sh                 everything
#   tests/run.sh split_merge     only tests whose name contains a word given
#
# SKIP_TESTS="cmd/NAME ..." with SKIP_WHY="reason": those tests are not
# run; each counts as one skip, with the reason (make check-asan)

set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
export BIN=${BIN:-"$TOP/bin"}
export UNIT=${UNIT:-"$TOP/tests/unit"}
LIMIT=${TEST_SCRIPT_TIMEOUT:-900}
LOGDIR=${TEST_LOGDIR:-"$TOP/tests/log"}
mkdir -p "$LOGDIR"

passed=0 failed=0 skipped=0
failed_names=""

WORDS="$*"
selected() {
	[ -z "$WORDS" ] && return 0
	for w in $WORDS; do case $1 in *"$w"*) return 0 ;; esac; done
	return 1
}

run_one() {
	name=$1; shift
	log="$LOGDIR/$name.log"
	mkdir -p "$(dirname "$log")"
	case " ${SKIP_TESTS:-} " in *" $name "*)
		skipped=$((skipped + 1))
		printf '%-28s %s\n    ok # SKIP %s: %s\n' "$name" SKIP "$name" "${SKIP_WHY:-SKIP_TESTS}"
		return ;;
	esac
	start=$(date +%s)
	timeout -k 10 "$LIMIT" "$@" >"$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	p=$(grep -Ec '^ok [0-9]+( -|$)' "$log")
	s=$(grep -Ec '^ok [0-9]+ # SKIP' "$log")
	f=$(grep -Ec '^not ok [0-9]+' "$log")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1
		[ "$rc" -eq 124 ] && echo "not ok - $name timed out after ${LIMIT}s" >>"$log" ||
			echo "not ok - $name exited $rc" >>"$log"
	elif [ $((p + s + f)) -eq 0 ]; then
		f=1
		echo "not ok - $name ran no test" >>"$log"
	fi
	passed=$((passed + p)) skipped=$((skipped + s)) failed=$((failed + f))
	status=PASS
	[ "$f" -gt 0 ] && { status=FAIL; failed_names="$failed_names $name"; }
	printf '%-28s %s  %3d ok %3d skip %3d fail  %4ds\n' "$name" "$status" "$p" "$s" "$f" "$secs"
	if [ "$f" -gt 0 ]; then
		grep -E -A8 '^not ok' "$log" | head -n 60 | sed 's/^/    /'
	fi
	grep -E '^ok [0-9]+ # SKIP' "$log" | sed 's/^/    /'
}

for t in "$UNIT"/test_*; do
	[ -x "$t" ] && [ ! -d "$t" ] || continue
	case $t in *.c|*.o|*.d) continue ;; esac
	n=unit/$(basename "$t")
	selected "$n" || continue
	run_one "$n" "$t"
done

for t in "$TOP"/tests/cmd/*.sh; do
	[ -f "$t" ] || continue
	n=cmd/$(basename "$t" .sh)
	selected "$n" || continue
	run_one "$n" bash "$t"
done

echo
[ -n "$failed_names" ] && echo "failed:$failed_names (logs in $LOGDIR)"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
