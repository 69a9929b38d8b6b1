#!/bin/bash
# cli.sh - the command-line contract of pcp-split, gfsplit-merge,
# stat-layout, cache-warm, stage-in, stage-out and envelope-bench: --help and
# --version exit 0 with the right text, usage errors (unknown option, wrong
# operand count, bad size) exit 2 with a hint.
. "$(dirname "$0")/../lib.sh"

for cmd in pcp-split gfsplit-merge stat-layout cache-warm stage-in stage-out envelope-bench; do
	expect_exit "$cmd --help exits 0" 0 "$BIN/$cmd" --help
	output_has "$cmd --help shows the usage line" "^Usage: $cmd \[OPTIONS\] "
	output_has "$cmd --help lists --version" "^ +-V, --version"
	expect_exit "$cmd --version exits 0" 0 "$BIN/$cmd" --version
	output_has "$cmd --version names the program and version" \
		"^$cmd \(gfsplit\) [0-9]+\.[0-9]+\.[0-9]+$"
	output_has "$cmd --version lists the backends" "^backends: .*posix"
	output_has "$cmd --version lists the cache transports" "^cache transports: mpi"

	expect_exit "$cmd: unknown option exits 2" 2 "$BIN/$cmd" --no-such-option x y
	output_has "$cmd: unknown option is named" "unrecognized option '--no-such-option'"
	output_has "$cmd: unknown option hints at --help" "Try '$cmd --help'"
	expect_exit "$cmd: no operand exits 2" 2 "$BIN/$cmd"
	output_has "$cmd: missing operand said" "missing operand"
	case $cmd in cache-warm|stage-in) continue ;; esac	# FILE..., SRC... DEST
	expect_exit "$cmd: too many operands exits 2" 2 "$BIN/$cmd" a b c
	output_has "$cmd: extra operand named" "extra operand '(b|c)'"
done

expect_exit "pcp-split: one operand exits 2" 2 "$BIN/pcp-split" onlysrc
output_has "pcp-split: missing DST said" "missing operand after 'onlysrc'"

expect_exit "bad size --block-size 12Q exits 2" 2 "$BIN/pcp-split" --block-size 12Q a b
output_has "bad size names the option and the value" "block-size.*12Q"
output_has "bad size hints at --help" "Try 'pcp-split --help'"
expect_exit "bad size -b 1Z exits 2" 2 "$BIN/pcp-split" -b 1Z a b
expect_exit "--block-size 0 exits 2" 2 "$BIN/pcp-split" --block-size 0 a b
output_has "--block-size 0 says why" "block-size.*must be positive"
expect_exit "--buffer-size with no value exits 2" 2 "$BIN/pcp-split" a b --buffer-size
output_has "missing value is said" "requires an argument"
expect_exit "gfsplit-merge --stripe-size 0 exits 2" 2 "$BIN/gfsplit-merge" --stripe-size 0 a b
output_has "--stripe-size 0 says why" "stripe-size.*must be positive"
expect_exit "gfsplit-merge --stripe-size junk exits 2" 2 "$BIN/gfsplit-merge" --stripe-size 4X a b
expect_exit "stat-layout --map junk exits 2" 2 "$BIN/stat-layout" --map 1.2.3 x
output_has "--map junk names the option" "map"
expect_exit "flag with a value exits 2" 2 "$BIN/stat-layout" --json=yes x
output_has "flag with a value is said" "doesn't allow an argument"

# --json and a failure: standard output still holds one document, the
# error document (schemas/error.schema.json), valid against the command's
# own schema too, naming the file and the cause; stderr has the message
errdoc() {	# KIND DESC CMD...: CMD fails; its stdout is an error document
	_k=$1 _d=$2; shift 2
	"$@" >"$TMPD/ed.json" 2>"$TMPD/ed.err"; _rc=$?
	if [ "$_rc" -ne 0 ] && python3 "$TOP/tests/json_valid.py" error "$TMPD/ed.json" >"$TMPD/.jv" 2>&1 &&
	    python3 "$TOP/tests/json_valid.py" "$_k" "$TMPD/ed.json" >>"$TMPD/.jv" 2>&1 &&
	    [ "$(json_get "$TMPD/ed.json" 'j["error"]["exit_status"]')" = "$_rc" ]; then
		ok "$_d: exit $_rc, an error document on stdout"
	else
		not_ok "$_d: an error document on stdout" "exit $_rc" "$(cat "$TMPD/.jv")" "$(head -c 600 "$TMPD/ed.json")" "$(tail -n 3 "$TMPD/ed.err")"
	fi
}
errdoc pcp-split "pcp-split --json, a missing source" mpirun_n 2 "$BIN/pcp-split" --json "$TMPD/none.dat" "$TMPD/none.sp"
json_true "  its message names the file and the cause" '"none.dat" in j["error"]["message"] and "No such file" in j["error"]["message"]' "$TMPD/ed.json"
json_true "  and it lists the operands" 'j["error"]["operands"][0].endswith("none.dat") and len(j["error"]["operands"]) == 2' "$TMPD/ed.json"
errdoc gfsplit-merge "gfsplit-merge --json, not a split file" "$BIN/gfsplit-merge" --json "$TMPD" "$TMPD/m.out"
errdoc stat-layout "stat-layout --json, a missing file" "$BIN/stat-layout" --json "$TMPD/none.sp"
json_true "  naming it" '"none.sp" in j["error"]["message"]' "$TMPD/ed.json"
errdoc stage-in "stage-in --json, a usage error" "$BIN/stage-in" --json --chunk-size 0 a b
json_true "  the usage error's message, status 2" 'j["error"]["exit_status"] == 2 and "chunk-size" in j["error"]["message"]' "$TMPD/ed.json"
errdoc cache-warm "cache-warm --json, a missing file" mpirun_n 1 "$BIN/cache-warm" --json -d "$TMPD/tier" "$TMPD/none.dat"
errdoc envelope-bench "envelope-bench --json, predict without an envelope file" "$BIN/envelope-bench" predict --json --envelope "$TMPD/none.json"
# a command that got far enough prints its own document, not this one
mkdir -p "$TMPD/es"
printf x >"$TMPD/es/f"
mkfifo "$TMPD/es/fifo"
mpirun_n 1 "$BIN/stage-in" --json "$TMPD/es" "$TMPD/ed" >"$TMPD/ed.json" 2>/dev/null
json_true "a partial stage-in (a FIFO not staged) prints its own document, not the error document" 'j["not_staged"] == 1 and "error" not in j' "$TMPD/ed.json"

# under mpiexec only rank 0 speaks
expect_exit "--help under 3 ranks exits 0" 0 mpirun_n 3 "$BIN/pcp-split" --help
n=$(grep -c '^Usage: pcp-split' "$OUT")
[ "$n" -eq 1 ] && ok "--help printed once by 3 ranks" ||
	not_ok "--help printed once by 3 ranks" "printed $n times"
expect_exit "usage error under 2 ranks exits 2 on all" 2 mpirun_n 2 "$BIN/gfsplit-merge" --bogus a b
n=$(grep -c "Try 'gfsplit-merge --help'" "$OUT")
[ "$n" -eq 1 ] && ok "usage error printed once by 2 ranks" ||
	not_ok "usage error printed once by 2 ranks" "printed $n times"

# one vocabulary: -n is --dry-run, -q silent on success, --progress[=S]
make_file "$TMPD/v.dat" 3000000
expect_exit "pcp-split -n exits 0" 0 "$BIN/pcp-split" -n "$TMPD/v.dat" "$TMPD/v.sp"
is_absent "  and writes nothing" "$TMPD/v.sp"
expect_exit "pcp-split -q prints nothing" 0 "$BIN/pcp-split" -q "$TMPD/v.dat" "$TMPD/v.sp"
[ ! -s "$OUT" ] && ok "  (nothing on stdout or stderr)" || not_ok "  (nothing on stdout or stderr)" "$(cat "$OUT")"
expect_exit "gfsplit-merge -n exits 0" 0 "$BIN/gfsplit-merge" -n "$TMPD/v.sp" "$TMPD/v.m"
is_absent "  and writes nothing" "$TMPD/v.m"
expect_exit "stat-layout -q --check of a good file exits 0" 0 "$BIN/stat-layout" -q --check "$TMPD/v.sp"
[ ! -s "$OUT" ] && ok "  and prints nothing" || not_ok "  and prints nothing" "$(head -n 5 "$OUT")"
cp -r "$TMPD/v.sp" "$TMPD/bad.sp"
printf x | dd of="$TMPD/bad.sp/part.0" bs=1 seek=100 conv=notrunc 2>/dev/null
expect_exit "stat-layout -q --check of a damaged part exits 1" 1 "$BIN/stat-layout" -q --check "$TMPD/bad.sp"
output_has "  naming the part on stderr, nothing else" "^stat-layout: .*bad.sp/part.0: checksum mismatch"
[ "$(wc -l <"$OUT")" -eq 1 ] && ok "  (one line)" || not_ok "  (one line)" "$(cat "$OUT")"
"$BIN/stat-layout" --check "$TMPD/v.sp" >/dev/null 2>"$TMPD/p0"
GFSPLIT_PROGRESS=0 "$BIN/stat-layout" --check --progress=1 "$TMPD/v.sp" >/dev/null 2>"$TMPD/p1"
[ ! -s "$TMPD/p0" ] && grep -Eq '^stat-layout: .* 100%' "$TMPD/p1" &&
	ok "--progress draws progress lines on a non-terminal, not without it" ||
	not_ok "--progress draws progress lines on a non-terminal" "without: $(cat "$TMPD/p0")" "with: $(cat "$TMPD/p1")"
expect_exit "--progress=junk exits 2" 2 "$BIN/stat-layout" --progress=x "$TMPD/v.sp"
# on a terminal (a pty of script(1)), under mpiexec, the line is redrawn in
# place every 0.25 s, with --progress as without it: stage-in held to
# 8 MiB/s (1 s of work: some 7 redraws) and pcp-split with rank 0's writes made slow
# (0.1 s each); a redraw ends with erase-to-end-of-line
if command -v script >/dev/null 2>&1; then
	make_file "$TMPD/t.dat" $((8 * 1048576))
	# on_tty DESC CMD: ok if CMD, run on a pty, redrew its line 3 times or more
	on_tty() {
		timeout 60 script -qec "$2" /dev/null >"$TMPD/tty.out" 2>&1
		n=$(grep -o $'\033\\[K' "$TMPD/tty.out" | wc -l)
		[ "$n" -ge 3 ] && grep -q "100%" "$TMPD/tty.out" && ok "$1 ($n redraws)" ||
			not_ok "$1" "$n redraws" "$(tr '\r' '\n' <"$TMPD/tty.out" | tail -n 5)"
	}
	for how in "" --progress; do
		rm -rf "$TMPD/tin"
		on_tty "stage-in ${how:-without --progress} on a terminal under mpiexec: the line redrawn" \
			"$MPIEXEC -n 2 $BIN/stage-in $how --chunk-size=1M --bwlimit 8M $TMPD/t.dat $TMPD/tin"
	done
	make_file "$TMPD/t2.dat" $((160 * 1048576))
	GFSPLIT_FAULT=slow:0:0 on_tty "pcp-split --progress on a terminal under mpiexec: the line redrawn" \
		"$MPIEXEC -n 2 $BIN/pcp-split --progress $TMPD/t2.dat $TMPD/t2.sp"
	rm -rf "$TMPD/t2.dat" "$TMPD/t2.sp"
else
	skip "progress on a terminal" "no script(1) to make one"
fi
expect_exit "gfsplit-mount has no --progress" 2 "$BIN/gfsplit-mount" --progress a b
mkdir -m 700 "$TMPD/tier"
expect_exit "cache-warm -q exits 0" 0 "$BIN/cache-warm" -q -d "$TMPD/tier" "$TMPD/v.dat"
[ ! -s "$OUT" ] && [ -n "$(ls -A "$TMPD/tier")" ] && ok "  prints nothing, and warms the tier" ||
	not_ok "  prints nothing, and warms the tier" "$(cat "$OUT")" "$(ls -A "$TMPD/tier")"
# the old spellings of renamed options still work, with a note
expect_exit "stage-in -c (now --chunk-size) 1500K exits 2" 2 "$BIN/stage-in" -c 1500K "$TMPD/v.dat" "$TMPD/st"
output_has "  with a note that -c is deprecated" "note: -c is deprecated here .*--chunk-size"
output_has "  and the value checked as --chunk-size's" "chunk-size: a multiple of 1M"
expect_exit "envelope-bench -b 0 exits 2" 2 "$BIN/envelope-bench" -b 0 "$TMPD"
output_has "  with a note that -b is deprecated" "note: -b is deprecated here .*--buffer-size"
output_has "  and the value checked as --buffer-size's" "buffer-size.*must be positive"
expect_exit "stage-out --no-sync still works" 0 "$BIN/stage-out" --no-sync --help
output_has "  with a note" "note: --no-sync is deprecated"

# stat-layout is a plain program: no MPI needed, works as a failing command too
expect_exit "stat-layout on a missing path exits 1" 1 "$BIN/stat-layout" "$TMPD/nothing"
output_has "stat-layout names the missing path" "nothing.*(No such file|not a)"

finish
