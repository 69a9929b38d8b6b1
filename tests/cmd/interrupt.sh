#!/bin/bash
# interrupt.sh - Ctrl-C and SIGTERM during pcp-split and gfsplit-merge
# (libcore/base/watch.c, pipe.c): the copy stops at its next chunk, every
# rank agrees, what the run made is removed, rank 0 says so, and the ranks
# exit 130 (SIGINT) or 143 (SIGTERM).  A rank that cannot finish stopping
# (a peer is stopped) removes what the run made and ends by itself 10 s
# later; only a kill -9 leaves a temporary, which stat-layout lists and
# the next run removes.  A slow disk
# (GFSPLIT_FAULT slow: 0.1 s a write) keeps the copy running while the
# signal comes.
#
# MPICH's mpiexec (hydra) passes the ranks' status on when the ranks get
# the signal; when mpiexec gets it itself (Ctrl-C at a terminal reaches it
# and the ranks; a kill of mpiexec) it sometimes exits 0 all the same
# (measured here with a program that only exits 130 at SIGINT: 3 of 10
# runs), so those cases check the clean-up and accept its 0.
. "$(dirname "$0")/../lib.sh"

LIMIT=40	# seconds a case may take before it counts as a hang
F=$TMPD/src
make_file "$F" $((64 * 1048576)) 1
mpirun_n 2 "$BIN/pcp-split" -q "$F" "$TMPD/s.split" ||
	not_ok "pcp-split makes the split file the merge cases read"


# stop_case DESC WANT HOW PROG ARGS..: run PROG on 2 ranks (rank 0 on a
# slow disk), send the signal HOW says once both ranks copy, and expect an
# exit status matching WANT (a grep -E pattern) within LIMIT seconds;
# stderr in $OUT
#   HOW: INT-ranks | TERM-ranks | KILL-ranks | INT-mpiexec | TERM-mpiexec |
#        TERM-1-stop-0 | INT-group (the job's process group: a terminal's
#        Ctrl-C)
stop_case() {
	_d=$1 _want=$2 _how=$3 _prog=$4; shift 4
	# (a terminal's Ctrl-C goes to its foreground process group: mpiexec,
	# its proxies and the ranks at once; setsid makes the job one)
	_pre=
	[ "$_how" = INT-group ] && _pre="setsid -w"
	( exec timeout -k 5 "$LIMIT" $_pre "$MPIEXEC" -n 2 env GFSPLIT_FAULT=slow:0:1M \
		"$BIN/$_prog" --buffer-size 1M "$@" >/dev/null 2>"$OUT" ) &
	_job=$!
	_t0=$(date +%s)
	for _ in $(seq 100); do [ "$(ranks_of "bin/$_prog " | wc -l)" -eq 2 ] && break; sleep 0.1; done
	sleep 0.5
	case $_how in
	INT-mpiexec) pkill -INT -f "^$MPIEXEC -n 2 env GFSPLIT_FAULT=slow.*$TMPD" ;;
	INT-group) kill -INT -- "-$(pgrep -f "^$MPIEXEC -n 2 env GFSPLIT_FAULT=slow.*$TMPD")" ;;
	TERM-mpiexec) pkill -TERM -f "^$MPIEXEC -n 2 env GFSPLIT_FAULT=slow.*$TMPD" ;;
	INT-ranks|TERM-ranks|KILL-ranks)
		for _p in $(ranks_of "bin/$_prog " | awk '{print $1}'); do kill -"${_how%-ranks}" "$_p"; done ;;
	TERM-1-stop-0)
		kill -STOP "$(ranks_of "bin/$_prog " | awk '$2 == 0 {print $1}')"
		kill -TERM "$(ranks_of "bin/$_prog " | awk '$2 == 1 {print $1}')" ;;
	esac
	wait "$_job"
	_rc=$?
	_secs=$(( $(date +%s) - _t0 ))
	for _p in $(ranks_of "bin/$_prog " | awk '{print $1}'); do kill -KILL "$_p" 2>/dev/null; done
	if [ "$_rc" -ne 124 ] && echo "$_rc" | grep -Eqx -- "$_want"; then
		ok "$_d: exit $_rc after ${_secs} s"
	else
		not_ok "$_d" "exit $_rc after ${_secs} s, wanted $_want (124: hung)" "$(tail -n 8 "$OUT")"
	fi
}

stop_case "pcp-split, SIGINT to the ranks" 130 INT-ranks pcp-split "$F" "$TMPD/d1"
output_has "  rank 0 says it stops and cleans up" "pcp-split: SIGINT: stopping; removing what this run made"
output_has "  and why the copy failed" "interrupted by SIGINT"
no_leftovers "  no split file, no temporary directory" "$TMPD" "$TMPD/d1"

stop_case "pcp-split, SIGTERM to the ranks (a batch system's end)" 143 TERM-ranks pcp-split "$F" "$TMPD/d2"
output_has "  stopping, not killed" "SIGTERM: stopping"
no_leftovers "  no split file, no temporary directory" "$TMPD" "$TMPD/d2"

stop_case "pcp-split, Ctrl-C to mpiexec (status 130, or hydra's 0)" "130|0" INT-mpiexec pcp-split "$F" "$TMPD/d3"
output_has "  the ranks stop" "interrupted by SIGINT"
no_leftovers "  no split file, no temporary directory" "$TMPD" "$TMPD/d3"

stop_case "pcp-split, Ctrl-C at a terminal (SIGINT to mpiexec and the ranks at once)" "130|0" INT-group pcp-split "$F" "$TMPD/d5"
output_has "  the ranks stop" "interrupted by SIGINT"
no_leftovers "  no split file, no temporary directory" "$TMPD" "$TMPD/d5"

stop_case "pcp-split --force over an existing DST, SIGINT" 130 INT-ranks pcp-split --force "$F" "$TMPD/s.split"
check "  the old split file is untouched" mpirun_n 2 "$BIN/gfsplit-merge" -q "$TMPD/s.split" "$TMPD/back"
same_bytes "  and still merges to the source" "$F" "$TMPD/back"
rm -f "$TMPD/back"

stop_case "gfsplit-merge, SIGINT to the ranks" 130 INT-ranks gfsplit-merge "$TMPD/s.split" "$TMPD/m1"
output_has "  and says so" "gfsplit-merge: SIGINT: stopping"
no_leftovers "  no output file, no temporary" "$TMPD" "$TMPD/m1"

stop_case "gfsplit-merge, SIGTERM to the ranks" 143 TERM-ranks gfsplit-merge "$TMPD/s.split" "$TMPD/m2"
no_leftovers "  no output file, no temporary" "$TMPD" "$TMPD/m2"

stop_case "gfsplit-merge, SIGTERM to mpiexec (status 143, or hydra's 0)" "143|0" TERM-mpiexec gfsplit-merge "$TMPD/s.split" "$TMPD/m3"
output_has "  the ranks stop" "interrupted by SIGTERM"
no_leftovers "  no output file, no temporary" "$TMPD" "$TMPD/m3"

# rank 1 stops, but rank 0 is stopped (SIGSTOP) and cannot agree: rank 1
# ends by itself after 10 s, and the job with it
if long_wait "SIGTERM to rank 1 while rank 0 is stopped: no hang"; then
	stop_case "SIGTERM to rank 1 while rank 0 is stopped: no hang" "[1-9][0-9]*" TERM-1-stop-0 pcp-split "$F" "$TMPD/d4"
	output_has "  rank 1 gives up stopping cleanly" "rank 1: not stopped within 10 s"
	no_leftovers "  and removes the temporary directory before it ends" "$TMPD" "$TMPD/d4"
fi

# kill -9: nothing can clean up.  What the killed run left, stat-layout
# lists, and the next run into DST removes (its process is gone)
stop_case "pcp-split, kill -9 to the ranks" "[1-9][0-9]*" KILL-ranks pcp-split "$F" "$TMPD/d4"
expect_exit "  stat-layout of the DST it never made: exit 1" 1 "$BIN/stat-layout" "$TMPD/d4"
output_has "  listing what was left, and that its process is gone" \
	"left over: +.*/\.d4\.gfsplit-tmp\.[^ ]+ \([0-9.]+ [KM]iB; process [0-9]+ on [^ ]+: gone\)"
"$BIN/stat-layout" --json "$TMPD/d4" >"$TMPD/left.json" 2>/dev/null
json_true "  and in its JSON, with the space it holds" 'len(j["temporaries"]) == 1 and j["temporaries"][0]["process"] == "gone" and j["temporaries"][0]["bytes"] > 0' "$TMPD/left.json"
json_valid stat-layout "$TMPD/left.json"
check "  the next run succeeds" mpirun_n 2 "$BIN/pcp-split" -q "$F" "$TMPD/d4"
grep -Eq "removed '.*/\.d4\.gfsplit-tmp\.[^']+' \([0-9.]+ [KM]iB\), left by process [0-9]+ of this node, which ended without its clean-up" "$TMPD/.out" &&
	ok "  saying what it removed, the space, and why it was there" || not_ok "  saying what it removed" "$(cat "$TMPD/.out")"
no_leftovers "  and leaves no temporary directory" "$TMPD"

# a split file is not written through a gfsplit-mount view (it would be a
# file of the view before it is whole): refused before anything is made
need_fuse
mkdir -p "$TMPD/vsrc"
if mount_up "$TMPD/vsrc" "$TMPD/view"; then
	expect_exit "pcp-split into a gfsplit-mount view fails" 1 mpirun_n 2 "$BIN/pcp-split" "$F" "$TMPD/view/v.split"
	output_has "  saying where to write instead" "view' is in a gfsplit-mount view \(of '.*vsrc'\); write the split file into the source directory"
	left=$(ls -A "$TMPD/vsrc")
	[ -z "$left" ] && ok "  and leaves nothing in the source" || not_ok "  and leaves nothing in the source" "$left"
	mount_down "$TMPD/view"
else
	not_ok "gfsplit-mount of a directory comes up" "$(cat "$TMPD/.mount.out")"
fi
finish
