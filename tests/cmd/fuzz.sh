#!/bin/bash
# fuzz.sh - the libFuzzer harnesses of every parser (tests/fuzz/fuzz_*.c):
# each runs for FUZZ_SECONDS from its seed corpus (tests/fuzz/corpus/NAME,
# with tests/fuzz/NAME.dict if there is one) under ASan and UBSan.  A
# crash, a leak, a sanitizer report, an input that takes over 10 s or
# 2 GiB, or a broken round-trip promise is "not ok", and libFuzzer's input
# is kept in FUZZ_CRASH.  Every seed is run first, so the regression seeds
# of bugs found before run on every check.
#
#   FUZZBIN       the harnesses (make check gives build/fuzz/bin; unset,
#                 this script runs `make fuzz` if configure found libFuzzer)
#   FUZZ_SKIP     a reason to skip them all (make check-asan: the harnesses
#                 are ASan builds already, make check runs them)
#   FUZZ_SECONDS  seconds per harness (default 2; make fuzz-long: 300)
#   FUZZ_RUNS     executions per harness instead (libFuzzer's -runs=N, no
#                 time limit): `make fuzz-long FUZZ_ONLY=envelope
#                 FUZZ_RUNS=10000000` is the envelope's 10^7 runs
#   FUZZ_JOBS     harnesses run at a time (default: the cores, nproc)
#   FUZZ_ONLY     the harnesses to run, by name ("envelope" or
#                 "envelope,layout"; default every one)
#   FUZZ_WORK     where the inputs found are kept, in corpus/NAME (default:
#                 this test's temporary directory; make fuzz-long: build/fuzz)
#   FUZZ_CRASH    where crashing inputs go (default build/fuzz/crash)
. "$(dirname "$0")/../lib.sh"

secs=${FUZZ_SECONDS:-2}
runs_max=${FUZZ_RUNS:-}
names=$(cd "$TOP/tests/fuzz" && ls fuzz_*.c | sed 's/^fuzz_//; s/\.c$//')
if [ -n "${FUZZ_ONLY:-}" ]; then
	for _n in ${FUZZ_ONLY//,/ }; do
		[ -f "$TOP/tests/fuzz/fuzz_$_n.c" ] || {
			echo "fuzz.sh: FUZZ_ONLY: no harness tests/fuzz/fuzz_$_n.c" >&2
			exit 2
		}
	done
	names=${FUZZ_ONLY//,/ }
fi
case $runs_max in
''|*[!0-9]*) [ -z "$runs_max" ] || { echo "fuzz.sh: FUZZ_RUNS: a number of executions, please" >&2; exit 2; } ;;
esac
# a number of executions: as long as they take (no time limit, and no
# timeout around the harness); else FUZZ_SECONDS, with two minutes' grace
if [ -n "$runs_max" ]; then
	limit=(-runs="$runs_max" -max_total_time=0)
	wrap=()
	what="$runs_max runs"
else
	limit=(-max_total_time="$secs")
	wrap=(timeout -k 10 $((secs + 120)))
	what="${secs} s"
fi

skip_all() {
	for _n in $names; do skip "fuzz_$_n" "$1"; done
	finish
	exit 0
}

[ -n "${FUZZ_SKIP:-}" ] && skip_all "$FUZZ_SKIP"
if [ -z "${FUZZBIN:-}" ]; then
	grep -q '^HAVE_FUZZ = yes' "$TOP/config.mk" 2>/dev/null ||
		skip_all "clang with libFuzzer not found (apt-get install clang, then ./configure)"
	FUZZBIN=$TOP/build/fuzz/bin
	if ! nice make -s -C "$TOP" fuzz >"$TMPD/make.log" 2>&1; then
		not_ok "make fuzz" "$(tail -n 20 "$TMPD/make.log")"
		finish
		exit 1
	fi
fi

work=${FUZZ_WORK:-$TMPD}
crash=${FUZZ_CRASH:-$TOP/build/fuzz/crash}
mkdir -p "$crash"
# the harnesses' own files (journal.c fsyncs) are best on a tmpfs
scratch=$TMPD
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	scratch=$(mktemp -d /dev/shm/gfsplit-fuzz.XXXXXX) && at_exit "rm -rf '$scratch'" ||
		scratch=$TMPD
fi

# fuzz_one NAME: run the harness, its exit status and seconds in
# $TMPD/NAME.rc (the log in $TMPD/NAME.log)
fuzz_one() {
	local n=$1 bin=$FUZZBIN/fuzz_$1 dict=() t0=$SECONDS rc
	mkdir -p "$work/corpus/$n"
	[ -f "$TOP/tests/fuzz/$n.dict" ] && dict=(-dict="$TOP/tests/fuzz/$n.dict")
	TMPDIR=$scratch nice -n 10 "${wrap[@]}" "$bin" "${dict[@]}" \
		"${limit[@]}" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$crash/$n-" \
		"$work/corpus/$n" "$TOP/tests/fuzz/corpus/$n" >"$TMPD/$n.log" 2>&1
	rc=$?
	echo "$rc $((SECONDS - t0))" >"$TMPD/$n.rc"
}

# FUZZ_JOBS harnesses at a time (default: one a core), reported in order
jobs=${FUZZ_JOBS:-$(nproc)}
for n in $names; do
	[ -x "$FUZZBIN/fuzz_$n" ] || continue
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	fuzz_one "$n" &
done
wait
for n in $names; do
	if [ ! -x "$FUZZBIN/fuzz_$n" ]; then
		not_ok "fuzz_$n: harness built" "no $FUZZBIN/fuzz_$n (make fuzz)"
		continue
	fi
	read -r rc secs_taken <"$TMPD/$n.rc"
	log=$TMPD/$n.log
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
		ok "fuzz_$n: $what, $runs inputs in $secs_taken s ($rate/s), no finding"
	else
		not_ok "fuzz_$n: exit $rc (input kept in $crash/$n-*)" \
			"$(grep -E 'ERROR|SUMMARY|runtime error|^fuzz: |written to|Test unit' "$log" | head -n 12)"
	fi
done
finish
