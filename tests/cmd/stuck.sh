#!/bin/bash
# stuck.sh - stuck and dying ranks (libcore/base/watch.c).  One rank of a
# running command is stopped (SIGSTOP) or hangs in a write (GFSPLIT_FAULT
# hang: a file system that never answers); with --timeout every command
# ends by itself, exit status 1, and the others say which rank and phase
# they waited for, every rank exits.  SIGTERM to one rank ends the whole job even while
# another is stopped.  Without --timeout nothing changes (the suite's
# other tests).
. "$(dirname "$0")/../lib.sh"

T=3	# --timeout
LIMIT=60	# seconds a case may take at most before it counts as a hang
F=$TMPD/src
make_file "$F" $((24 * 1048576)) 1
mkdir -p "$TMPD/s" "$TMPD/loc/nA" "$TMPD/loc/nB"
make_file "$TMPD/s/big" $((24 * 1048576)) 2
# (nA's rank 0 copies 8 MiB, 1 s at --bwlimit 8M, and then waits for nB's
# rank 1, stopped a second into its 3 s: rank 0's wait starts sooner)
make_file "$TMPD/loc/nA/big" $((8 * 1048576)) 3
make_file "$TMPD/loc/nB/big" $((24 * 1048576)) 4
mpirun_n 3 "$BIN/pcp-split" "$F" "$TMPD/split" >/dev/null 2>&1 ||
	not_ok "pcp-split makes the split file the merge cases read"


# run_case DESC ACTION RANK NAME CMD...: start CMD (tool NAME on MPI),
# apply ACTION (stop | term | none) to rank RANK a second after its ranks
# are up, and expect it to fail (MPI_Abort's 1, or the signal mpiexec
# saw) within LIMIT seconds; stderr in $TMPD/err
# stderr's lines, each with the time it came, in $TMPD/err.ts; the time
# the job ended in $TMPD/end.ts
run_case() {
	_d=$1 _act=$2 _who=$3 _name=$4; shift 4
	rm -f "$TMPD/err.ts"
	( exec timeout -k 5 "$LIMIT" "$@" >"$TMPD/out" 2> >(tee "$TMPD/err" |
		while IFS= read -r _l; do printf '%s %s\n' "$(date +%s.%N)" "$_l"; done >"$TMPD/err.ts") ) &
	_job=$!
	_t0=$(date +%s)
	for _ in $(seq 50); do [ -n "$(ranks_of "$_name")" ] && break; sleep 0.1; done
	sleep 1
	_pid=$(ranks_of "$_name" | awk -v r="$_who" '$2 == r {print $1; exit}')
	case $_act in
	stop) [ -n "$_pid" ] && kill -STOP "$_pid" ;;
	term) [ -n "$_pid" ] && kill -TERM "$_pid" ;;
	esac
	wait "$_job"
	_rc=$?
	date +%s.%N >"$TMPD/end.ts"
	_secs=$(( $(date +%s) - _t0 ))
	for _ in $(seq 50); do [ -s "$TMPD/err.ts" ] && break; sleep 0.1; done
	# whatever is left of the job (a stopped rank) must not outlive it
	for _p in $(pgrep -f "$_name.*$TMPD"); do kill -KILL "$_p" 2>/dev/null; done
	if [ "$_rc" -ne 0 ] && [ "$_rc" -ne 124 ] && [ "$_secs" -lt "$LIMIT" ]; then
		ok "$_d: exit $_rc after ${_secs} s"
	else
		not_ok "$_d" "exit $_rc after ${_secs} s (124: hung until the limit)" "$(tail -n 5 "$TMPD/err")"
	fi
}
# names DESC REGEX: stderr of the last case matches
names() {
	grep -Eq -- "$2" "$TMPD/err" && ok "$1" || not_ok "$1" "no /$2/ in:" "$(tail -n 8 "$TMPD/err")"
}
# in_time DESC REGEX [LATER]: the first line of the last case matching
# REGEX says it gave up after the timeout (plus LATER s: a rank blocked
# outside a wait), not more than half a second later (its "after S s"),
# and the job ended within 2 s of that line plus 1 s for mpiexec (the
# bound the man pages give; both slacks times TIME_SCALE, tests/lib.sh)
in_time() {
	_T=$((T + ${3:-0})) _k=${TIME_SCALE:-1}
	_l=$(grep -E -m1 -- "$2" "$TMPD/err.ts")
	_s=$(printf '%s\n' "$_l" | sed -En 's/.* (gave up after|no progress for) ([0-9.]+) s.*/\2/p')
	_at=${_l%% *}
	_end=$(cat "$TMPD/end.ts")
	if [ -n "$_s" ] && awk -v s="$_s" -v t="$_T" -v a="$_at" -v e="$_end" \
		-v k="$_k" 'BEGIN { exit !(s >= t && s <= t + 0.5 * k && e - a <= 3 * k) }'; then
		ok "$1 (after $_s s; the job ended $(awk -v a="$_at" -v e="$_end" 'BEGIN { printf "%.1f", e - a }') s later)"
	else
		not_ok "$1" "line: ${_l:-none}" "job ended at $_end"
	fi
}

# (the fault "stop" is a SIGSTOP at a set point of the copy)
run_case "pcp-split, rank 2 stopped mid-copy, --timeout $T" none 2 pcp-split \
	"$MPIEXEC" -n 3 env GFSPLIT_FAULT=stop:2:1M "$BIN/pcp-split" --timeout $T "$F" "$TMPD/split2"
names "  the others name rank 2 and the phase" "rank [01]: gave up after [0-9.]+ s waiting in '[a-z ]+' for rank 2 "
in_time "  they gave up at --timeout $T s, and the job ended within 2 s" "gave up after [0-9.]+ s .*--timeout"
is_absent "  and no split file was left" "$TMPD/split2"
# (the ranks that gave up removed the temporaries: not left for the next run)
left=$(ls -A "$TMPD" | grep 'split2.gfsplit-')
[ -z "$left" ] && ok "  nor its temporary directory (the surviving ranks removed it)" ||
	not_ok "  nor its temporary directory (the surviving ranks removed it)" "$left"

if long_wait "gfsplit-merge, rank 1 hangs in a write"; then
	run_case "gfsplit-merge, rank 1 hangs in a write" none 1 gfsplit-merge \
		"$MPIEXEC" -n 3 env GFSPLIT_FAULT=hang:1:1M "$BIN/gfsplit-merge" --timeout $T \
		--stripe-size 256K "$TMPD/split" "$TMPD/merged"
	names "  the others name rank 1 and the phase" "rank [02]: gave up after [0-9.]+ s waiting in '[a-z ]+' for rank 1 "
	in_time "  at --timeout $T s, and the job ended within 2 s" "gave up after [0-9.]+ s .*--timeout"
	is_absent "  and no merged file was left" "$TMPD/merged"
fi
# with no one to wait for it, the hung rank's watchdog: 2 s later than a
# wait would give up (so that the waits, and a transport's own give-up,
# go first)
run_case "gfsplit-merge on 1 rank, hung in a write" none 0 gfsplit-merge \
	"$MPIEXEC" -n 1 env GFSPLIT_FAULT=hang:0:1M "$BIN/gfsplit-merge" --timeout $T \
	--stripe-size 256K "$TMPD/split" "$TMPD/merged1"
names "  it says it made no progress, and where" \
	"rank 0: no progress for [0-9.]+ s in '[a-z ]+' \(blocked in the file system"
in_time "  after --timeout $T s plus 2 s, and the job ended within 2 s" "no progress for" 2
is_absent "  and no merged file was left" "$TMPD/merged1"

# (LONG_WAITS=no: the first case and the hung single rank above, and the
# SIGTERM below, are the sanitized pass's)
if long_wait "stage-in, stage-out and cache-warm with a rank stopped"; then
	run_case "stage-in, rank 0 stopped (SIGSTOP)" stop 0 stage-in \
		"$MPIEXEC" -n 3 "$BIN/stage-in" --timeout $T --chunk-size=1M --bwlimit 8M "$TMPD/s/" "$TMPD/in"
	names "  the others name rank 0" "rank [12]: gave up after [0-9.]+ s waiting in '[a-z ]+' for rank 0 "
	in_time "  at --timeout $T s, and the job ended within 2 s" "gave up after [0-9.]+ s .*--timeout"
	[ ! -e "$TMPD/in/big" ] && ok "  and nothing under the final name" ||
		not_ok "  and nothing under the final name" "$(ls -la "$TMPD/in")"

	run_case "stage-out, rank 1 stopped (SIGSTOP)" stop 1 stage-out \
		"$MPIEXEC" -n 1 -env GFSPLIT_NODE nA "$BIN/stage-out" --timeout $T --chunk-size=1M --bwlimit 8M \
		"$TMPD/loc/%h" "$TMPD/back" : -n 1 -env GFSPLIT_NODE nB "$BIN/stage-out" --timeout $T --chunk-size=1M \
		--bwlimit 8M "$TMPD/loc/%h" "$TMPD/back"
	names "  rank 0 names rank 1" "rank 0: gave up after [0-9.]+ s waiting in '[a-z ]+' for rank 1 "

	# (GFSPLIT_TIMEOUT instead of the option: the same watch)
	GFSPLIT_TIMEOUT=$T run_case "cache-warm, rank 1 stopped mid-warm, GFSPLIT_TIMEOUT=$T" none 1 cache-warm \
		"$MPIEXEC" -n 2 env GFSPLIT_FAULT=stop:1:1M "$BIN/cache-warm" -b 64K \
		-d "$TMPD/tier" "$F"
	names "  rank 0 names rank 1" "rank 0: gave up after [0-9.]+ s waiting in '[a-z ]+' for rank 1 "
fi

# SIGTERM to one rank, while another is stopped and there is no timeout
LIMIT=30
( exec timeout -k 5 "$LIMIT" "$MPIEXEC" -n 3 "$BIN/stage-in" --chunk-size=1M --bwlimit 8M "$TMPD/s/" "$TMPD/in2" \
	>"$TMPD/out" 2>"$TMPD/err" ) &
job=$!
t0=$(date +%s)
for _ in $(seq 50); do [ "$(ranks_of stage-in | wc -l)" -eq 3 ] && break; sleep 0.1; done
sleep 1
p1=$(ranks_of stage-in | awk '$2 == 1 {print $1}')
p2=$(ranks_of stage-in | awk '$2 == 2 {print $1}')
kill -STOP "$p1"
kill -TERM "$p2"
wait "$job"
rc=$?
secs=$(( $(date +%s) - t0 ))
for p in $(pgrep -f "stage-in.*$TMPD"); do kill -KILL "$p" 2>/dev/null; done
if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$secs" -lt 20 ]; then
	ok "SIGTERM to rank 2 while rank 1 is stopped ends the job (exit $rc after ${secs} s)"
else
	not_ok "SIGTERM to rank 2 while rank 1 is stopped ends the job" "exit $rc after ${secs} s" "$(tail -n 5 "$TMPD/err")"
fi
names "  and rank 2 says so, with its phase" "rank 2: Terminated in '[a-z ]+'"

finish
