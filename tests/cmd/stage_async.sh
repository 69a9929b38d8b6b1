#!/bin/bash
# stage_async.sh - asynchronous stage-out (libcore/stage/mover.c) on two emulated
# nodes: one mover per node, started by `stage-out --async` and outliving
# it; a file is written back when it is closed; a file held open for
# writing is pre-copied (nothing under its final name) and, once closed,
# written back with only what changed; --flush, --status and --wait; the
# mover's priority and cores; a mover killed mid-file loses nothing and the
# next one resumes from the journal; one killed or stopped with files left
# makes --wait and --status fail, naming them and how to finish; with
# --attach the command stays until its node's mover ends.
. "$(dirname "$0")/../lib.sh"

OUT_=$BIN/stage-out
export GFSPLIT_MOVER_DIR=$TMPD/reg
L=$TMPD/loc D=$TMPD/shared J=$TMPD/last.json
mkdir -p "$L/nA" "$L/nB"
# the movers must not outlive the test, whatever happens
at_exit 'for p in $(cat "$TMPD"/pids 2>/dev/null); do kill -9 $p; done'

status() { two_nodes 1 "$OUT_" --status --json >"$J" 2>"$TMPD/err"; }
remember_pids() { status && json_get "$J" '" ".join(str(m["pid"]) for m in j["movers"])' >>"$TMPD/pids"; }
# (a mover whose parent is gone may stay a zombie until it is reaped)
gone() { [ ! -e "/proc/$1" ] || [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
# until SECONDS CMD..: poll CMD every 0.2 s for at most SECONDS
until_ok() {
	_t=$(( $1 * 5 )); shift
	while [ "$_t" -gt 0 ]; do "$@" && return 0; sleep 0.2; _t=$((_t - 1)); done
	return 1
}

make_file "$L/nA/early" 100000 1	# there before the movers start
if two_nodes 1 "$OUT_" --async --interval 2 --chunk-size=1M --cpus 0 "$L/%h" "$D" 2>"$TMPD/err"; then
	ok "stage-out --async starts a mover on each node and returns"
else
	not_ok "stage-out --async starts a mover on each node and returns" "$(cat "$TMPD/err")"
fi
remember_pids
json_true "  both movers answer --status" 'len(j["movers"]) == 2 and all(m["running"] for m in j["movers"])'
json_valid stage-out-status "$J"
json_invalid_without stage-out-status "$J" movers
pid=$(json_get "$J" '[m["pid"] for m in j["movers"] if m["node"] == "nA"][0]')
nice=$(awk '{print $19}' "/proc/$pid/stat" 2>/dev/null)
[ "$nice" = 19 ] && ok "  the mover runs at nice 19" || not_ok "  the mover runs at nice 19" "nice $nice"
if command -v ionice >/dev/null; then
	io=$(ionice -p "$pid" 2>&1)
	case $io in idle*) ok "  in the idle I/O class" ;; *) not_ok "  in the idle I/O class" "$io" ;; esac
else
	skip "  in the idle I/O class" "no ionice"
fi
mask=$(awk '/Cpus_allowed_list/ {print $2}' "/proc/$pid/status")
[ "$mask" = 0 ] && ok "  on the cores of --cpus" || not_ok "  on the cores of --cpus" "$mask"
expect_exit "a second --async for the same SRC fails" 1 two_nodes 1 "$OUT_" --async "$L/%h" "$D"
output_has "  saying a mover runs" "already runs"

until_ok 10 cmp -s "$L/nA/early" "$D/nA/early" &&
	ok "a file there at the start is written back" ||
	not_ok "a file there at the start is written back" "$(ls -la "$D"/* 2>&1)"
make_file "$L/nB/closed" 300000 2
until_ok 10 cmp -s "$L/nB/closed" "$D/nB/closed" &&
	ok "a file written and closed is written back within seconds" ||
	not_ok "a file written and closed is written back" "$(ls -la "$D"/* 2>&1)"

# a file held open for writing: pre-copied, not installed; after its
# close, written back with only what changed
python3 - "$L/nA/open" "$TMPD/open.go" "$TMPD/open.done" <<'EOF' &
import os, sys, time
path, go, done = sys.argv[1:]
with open(path, "wb") as f:
    f.write(bytes(range(256)) * (4 * 4096))	# 4 MiB
    f.flush()
    while not os.path.exists(go):
        time.sleep(0.1)
    f.write(b"the end")
open(done, "w").close()
EOF
writer=$!
sleep 5	# more than two periods (--interval 2): it is older than --interval by now
is_absent "a file open for writing is not installed (after 2 periods)" "$D/nA/open"
ls -a "$D/nA" | grep -q '^\.open\.gfsplit-stage\.' && ok "  but pre-copied into its temporary file" ||
	not_ok "  but pre-copied into its temporary file" "$(ls -la "$D/nA")"
status
json_true "  and --status lists it as pending" '"open" in [m for m in j["movers"] if m["node"] == "nA"][0]["pending"]'
touch "$TMPD/open.go"
wait "$writer"
until_ok 10 cmp -s "$L/nA/open" "$D/nA/open" &&
	ok "  once closed, it is written back whole" ||
	not_ok "  once closed, it is written back whole" "$(ls -la "$D/nA")"
status
json_true "  reusing the pre-copied chunks (bytes_resumed)" \
	'[m for m in j["movers"] if m["node"] == "nA"][0]["bytes_resumed"] >= 3 * 1048576'

# --flush: written back when it returns
make_file "$L/nB/flushed" 5000 3
touch -d '1 hour ago' "$L/nB/flushed"	# no close event needed
if two_nodes 1 "$OUT_" --flush --json >"$J" 2>"$TMPD/err"; then ok "--flush returns 0"
else not_ok "--flush returns 0" "$(cat "$TMPD/err" "$J")"; fi
same_bytes "  and the file is written back" "$L/nB/flushed" "$D/nB/flushed"

# a mover killed mid-file; the next one resumes from the journal
pidB=$(json_get "$J" '[m["pid"] for m in j["movers"] if m["node"] == "nB"][0]')
kill -9 "$pidB"
two_nodes 1 "$OUT_" --wait >/dev/null 2>&1	# ends nA's mover
if two_nodes 1 "$OUT_" --async --interval 3 --chunk-size=1M --bwlimit 2M "$L/%h" "$D" 2>"$TMPD/err"; then
	ok "movers start again (a killed one's state is taken over)"
else
	not_ok "movers start again" "$(cat "$TMPD/err")"
fi
remember_pids
make_file "$L/nB/big" $((16 * 1048576)) 4
# closed at once: the copy runs at 2 MiB/s, about 8 s; killed once a
# chunk of it is in the temporary file (and its journal)
a_chunk_in() { [ -n "$(find "$D/nB" -name ".$1.*" -size +1023k 2>/dev/null)" ]; }
until_ok 10 a_chunk_in big
sleep 0.3
status
pidB=$(json_get "$J" '[m["pid"] for m in j["movers"] if m["node"] == "nB"][0]')
kill -9 "$pidB"
is_absent "  killed mid-file: nothing under the final name" "$D/nB/big"
if two_nodes 1 "$OUT_" --async --interval 3 --chunk-size=1M "$L/%h" "$D" >"$TMPD/out" 2>"$TMPD/err"; then
	ok "  --async again for that node"
else
	# nA's mover still runs: that node refuses, the other starts
	grep -q "already runs" "$TMPD/err" && ok "  --async again for that node (nA's mover still runs)" ||
		not_ok "  --async again for that node" "$(cat "$TMPD/err")"
fi
remember_pids
if two_nodes 1 "$OUT_" --wait --json >"$J" 2>"$TMPD/err"; then ok "--wait returns 0"
else not_ok "--wait returns 0" "$(cat "$TMPD/err" "$J")"; fi
json_true "  the new mover resumed the killed one's chunks" \
	'[m for m in j["movers"] if m["node"] == "nB"][0]["bytes_resumed"] > 0'
same_bytes "  and the file is whole" "$L/nB/big" "$D/nB/big"
for n in nA nB; do
	for f in "$L/$n"/*; do
		cmp -s "$f" "$D/$n/$(basename "$f")" || not_ok "after --wait: $n/$(basename "$f") written back"
	done
done
ok "after --wait every file of both nodes is on shared storage"
two_nodes 1 "$OUT_" --status --json >"$J" 2>/dev/null
json_true "  and no mover runs any more" 'j["movers"] == []'

# a mover killed, or stopped, with files not written back: --wait and
# --status (without SRC, the end of a job script) fail, name the node and
# what it left, and say how to finish; that stage-out finishes it
for sig in KILL TERM; do
	rm -rf "$L/g" "$D/g"; mkdir -p "$L/g/nA" "$L/g/nB"
	make_file "$L/g/nA/done" 3000 7
	two_nodes 1 "$OUT_" --async --interval 60 --chunk-size=1M --bwlimit 1M "$L/g/%h" "$D/g" 2>"$TMPD/err"
	remember_pids
	two_nodes 1 "$OUT_" --flush >/dev/null 2>&1	# nA/done is out
	make_file "$L/g/nB/late" $((6 * 1048576)) 8	# 6 s at 1M/s
	make_file "$L/g/nB/later" 5000 9
	status
	pidB=$(json_get "$J" '[m["pid"] for m in j["movers"] if m["node"] == "nB"][0]')
	kill -s "$sig" "$pidB"
	until_ok 5 gone "$pidB" || true
	expect_exit "SIG$sig of a mover with files left: --wait fails" 1 two_nodes 1 "$OUT_" --wait
	output_has "  naming the node, what is left and how to finish" \
		"nB: the mover \(process $pidB\) is gone with 2 files not written back; finish with: stage-out '.*/g/nB' '.*/shared/g'"
	output_has "  listing the files" "not written back: late"
	output_lacks "  and nothing of nA's mover, whose files are out" "nA:.*gone"
	if two_nodes 1 "$OUT_" --status --json >"$J" 2>/dev/null; then
		not_ok "  --status --json fails too" "exit 0: $(cat "$J")"
	else
		json_true "  --status --json fails too, the mover not running, its files listed" \
			'[(m["running"], sorted(m["unsaved"])) for m in j["movers"]] == [(False, ["late", "later"])]'
		[ "$sig" = KILL ] && json_valid stage-out-status "$J"
	fi
	mpirun_n 1 env GFSPLIT_NODE=nB "$OUT_" "$L/g/nB" "$D/g" >/dev/null 2>&1
	if two_nodes 1 "$OUT_" --wait >"$TMPD/out" 2>&1; then ok "  after that stage-out, --wait returns 0"
	else not_ok "  after that stage-out, --wait returns 0" "$(cat "$TMPD/out")"; fi
	same_bytes "  and the file is out" "$L/g/nB/late" "$D/g/nB/late"
	two_nodes 1 "$OUT_" --status --json >"$J" 2>/dev/null
	json_true "  and no mover is listed any more" 'j["movers"] == []'
done

# relative, ./-prefixed and symlinked SRC and DEST (the mover works from
# its state directory: every path is resolved before it starts), with a
# relative registry too
cd "$TMPD" || exit 1
# --attach: each node's first rank stays until its mover ends (a job
# step that lives as long): 0 after --wait; 1, naming the signal, when the
# mover was killed; --attach without --async is a usage error
expect_exit "--attach without --async is a usage error" 2 two_nodes 1 "$OUT_" --attach "$L/%h" "$D"
output_has "  saying it goes with --async" "--attach goes with --async"
two_movers() { status && [ "$(json_get "$J" 'len(j["movers"])')" = 2 ]; }
for how in wait kill; do
	rm -rf "$L/t" "$D/t" "$TMPD/att.rc"; mkdir -p "$L/t/nA" "$L/t/nB"
	(two_nodes 1 "$OUT_" --async --attach --interval 2 "$L/t/%h" "$D/t" >"$TMPD/att.out" 2>&1
		echo $? >"$TMPD/att.rc") &
	ap=$!
	until_ok 10 two_movers || true
	json_get "$J" '" ".join(str(m["pid"]) for m in j["movers"])' >>"$TMPD/pids"
	make_file "$L/t/nB/r" 5000 4
	sleep 1
	if [ ! -e "$TMPD/att.rc" ]; then ok "--async --attach ($how): still there while the movers run"
	else not_ok "--async --attach ($how): still there while the movers run" "$(cat "$TMPD/att.out")"; fi
	if [ $how = wait ]; then
		two_nodes 1 "$OUT_" --wait >/dev/null 2>&1
		until_ok 10 [ -e "$TMPD/att.rc" ] || true
		[ "$(cat "$TMPD/att.rc" 2>&1)" = 0 ] && cmp -s "$L/t/nB/r" "$D/t/nB/r" &&
			ok "  ends with 0 once --wait has written back and ended them" ||
			not_ok "  ends with 0 once --wait has written back and ended them" \
				"$(cat "$TMPD/att.rc" "$TMPD/att.out" 2>&1)"
	else
		pidA=$(json_get "$J" '[m["pid"] for m in j["movers"] if m["node"] == "nA"][0]')
		kill -KILL "$pidA"
		until_ok 10 grep -q "the mover (process $pidA) was killed by signal 9 before stage-out --wait" \
			"$TMPD/att.out" || true
		two_nodes 1 "$OUT_" --wait >/dev/null 2>&1	# nB's
		until_ok 10 [ -e "$TMPD/att.rc" ] || true
		[ "$(cat "$TMPD/att.rc" 2>&1)" = 1 ] &&
			grep -q "the mover (process $pidA) was killed by signal 9 before stage-out --wait" "$TMPD/att.out" &&
			ok "  a mover killed: its node's rank says so, and the command ends with 1" ||
			not_ok "  a mover killed: its node's rank says so, and the command ends with 1" \
				"$(cat "$TMPD/att.rc" "$TMPD/att.out" 2>&1)"
		kill "$ap" 2>/dev/null
	fi
	wait "$ap" 2>/dev/null
done

GFSPLIT_MOVER_DIR=relreg
ln -s rdest rlink
for form in "rsrc rdest" "./rsrc ./rdest" "rsrc rlink"; do
	set -- $form
	rm -rf rsrc rdest/*; mkdir -p rsrc/nA rsrc/nB rdest
	make_file rsrc/nA/f 70000 5; make_file rsrc/nB/f 80000 6
	if two_nodes 1 "$OUT_" --async --interval 60 "$1/%h" "$2" 2>"$TMPD/err" &&
		two_nodes 1 "$OUT_" --status --json >"$TMPD/rel.json" 2>>"$TMPD/err" &&
		json_get "$TMPD/rel.json" '" ".join(str(m["pid"]) for m in j["movers"])' >>"$TMPD/pids" &&
		two_nodes 1 "$OUT_" --wait "$1/%h" >"$TMPD/out" 2>>"$TMPD/err" &&
		cmp -s rsrc/nA/f rdest/nA/f && cmp -s rsrc/nB/f rdest/nB/f; then
		ok "--async '$1/%h' '$2' from the working directory writes back to '$2/NODE'"
	else
		not_ok "--async '$1/%h' '$2' writes back to '$2/NODE'" \
			"$(cat "$TMPD/err" "$TMPD/out"; ls -laR rdest rsrc/nA/.gfsplit-stage 2>&1)"
	fi
	[ -z "$(find rsrc -path '*/.gfsplit-stage/*' -name 'rdest*')" ] &&
		ok "  and nothing below its state directory" ||
		not_ok "  and nothing below its state directory" "$(find rsrc)"
done
cd - >/dev/null
GFSPLIT_MOVER_DIR=$TMPD/reg

left=""
for p in $(sort -u "$TMPD/pids"); do
	until_ok 5 gone "$p" || left="$left $p"
done
[ -z "$left" ] && ok "  every mover process has ended" ||
	not_ok "  every mover process has ended" "still running:$left"
finish
