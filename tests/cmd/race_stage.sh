#!/bin/bash
# race_stage.sh - stage-in --delete as root, in a directory another user
# can write: she swaps DEST for a link to a directory of
# root's (the victim) or for another directory, and --delete must never
# remove anything but what the directory it copied to holds:
#   - DEST swapped exactly between the copy and the delete phase
#     (GFSPLIT_TEST_HOOK): refused, exit 1, an error naming DEST, nothing
#     deleted anywhere; the same for a DEST renamed and replaced by a
#     directory of hers
#   - DEST swapped before the destination is opened (the copy would go
#     into the victim, and the delete empty it): refused, nothing staged
#   - a DEST that is a symbolic link: refused with --delete, staged without
#   - a DEST below her link to a directory of root's: refused, nothing made
#     there (stage-in and stage-out)
#   - root's runs, RACE_ITERS of them, while she swaps DEST with a link to
#     the victim in a loop: after every run the victim holds what it held
#     (names, types, modes, checksums); without --delete, nothing is copied
#     into it (her link is not followed)
. "$(dirname "$0")/../lib.sh"

IN=$BIN/stage-in
if [ ! -x "$IN" ]; then
	not_ok "stage-in is built" "missing: $IN (make)"
	finish
	exit 1
fi

chmod 755 "$TMPD"
S=$TMPD/src		# the source: what DEST keeps
mkdir -p "$S/sub"
make_file "$S/a" 70000 1
make_file "$S/sub/b" 5000 2
V=$TMPD/victim		# root's: what a redirected --delete would empty
mkdir -m 700 "$V"
mkdir "$V/vdir"
printf 'the victim, root only\n' >"$V/precious"
printf 'stale, in the victim too\n' >"$V/stale"
make_file "$V/vdir/f" 3000 3
victim_sum() {
	(cd "$V" && find . -printf '%y %m %U %p\n' | LC_ALL=C sort &&
		find . -type f -exec sha256sum {} + | LC_ALL=C sort)
}
VSUM=$(victim_sum)
victim_intact() {
	if [ "$(victim_sum)" = "$VSUM" ]; then
		ok "$1"
	else
		not_ok "$1" "$(diff <(echo "$VSUM") <(victim_sum) | head -n 10)"
	fi
}

# ---- deterministic: root swaps DEST where the hook says (no second user
# needed: what matters is when, not who)
# hooked PHASE:CMD PROG...: PROG with CMD run as stage-in's PHASE begins
hooked() {
	_h=$1; shift
	GFSPLIT_TEST_HOOK=$_h "$@"
}
P=$TMPD/p
mkdir "$P"
D=$P/dest
fresh_dest() {
	rm -rf "$D" "$P/away" "$P/other"
	mkdir "$D"
	printf 'stale\n' >"$D/stale"	# the source does not hold it
}

fresh_dest
fails "DEST swapped for a link to the victim between copy and --delete" 1 \
	hooked "deleting:mv '$D' '$P/away' && ln -s '$V' '$D'" \
	mpirun_n 2 "$IN" --delete "$S/" "$D"
err_has "  refused, naming DEST and the link" "--delete refused, nothing deleted" "'$D' is a symbolic link"
victim_intact "  the victim is intact"
if [ -e "$P/away/stale" ]; then
	same_bytes "  the directory staged to keeps what it held, and has the copies" "$S/sub/b" "$P/away/sub/b"
else
	not_ok "  the directory staged to keeps what it held" "$(ls -la "$P/away")"
fi

fresh_dest
fails "DEST renamed and replaced by another directory between copy and --delete" 1 \
	hooked "deleting:mv '$D' '$P/away' && mkdir '$D' && echo hers >'$D/hers'" \
	mpirun_n 2 "$IN" --delete "$S/" "$D"
err_has "  refused, naming DEST" "--delete refused, nothing deleted" "'$D' is another directory"
[ -e "$D/hers" ] && [ -e "$P/away/stale" ] && ok "  nothing deleted in either" ||
	not_ok "  nothing deleted in either" "$(ls -la "$D" "$P/away")"

fresh_dest
fails "DEST swapped for a link to the victim before the copy" 1 \
	hooked "preparing:mv '$D' '$P/away' && ln -s '$V' '$D'" \
	mpirun_n 2 "$IN" --delete "$S/" "$D"
err_has "  refused before copying, naming DEST" "--delete refused, nothing staged" "'$D' is a symbolic link"
victim_intact "  the victim is intact (nothing copied into it, nothing deleted)"

rm -rf "$D" "$P/away"
mkdir "$P/real"
ln -s real "$D"
fails "--delete to a DEST that is a symbolic link" 1 mpirun_n 2 "$IN" --delete "$S/" "$D"
err_has "  refused, naming it" "'$D' is a symbolic link"
if mpirun_n 2 "$IN" "$S/" "$D" >"$TMPD/out" 2>"$TMPD/err"; then
	same_bytes "  without --delete it is staged through the link" "$S/a" "$P/real/a"
else
	not_ok "  without --delete it is staged through the link" "$(cat "$TMPD/err")"
fi
rm -f "$D"

fresh_dest
if mpirun_n 2 "$IN" --delete "$S/" "$D" >"$TMPD/out" 2>"$TMPD/err" && [ ! -e "$D/stale" ]; then
	same_tree "a DEST left alone: --delete works as before" "$S" "$D"
else
	not_ok "a DEST left alone: --delete works as before" "$(cat "$TMPD/err"; ls -la "$D")"
fi

# ---- the race: she swaps, root runs
if ! second_user gfsplit-mallory; then
	skip "DEST swapped by a second user during stage-in --delete" "$SECOND_USER_WHY"
	finish
	exit 0
fi
MD=$TMPD/m		# hers; root's DEST inside it
mkdir -m 755 "$MD"
chown "$M:$M" "$MD"
D=$MD/dest
mkdir "$D"
printf 'stale\n' >"$D/stale"
STOP=$TMPD/stop
# her_swaps HOLD: her loop, in the background (HER): DEST away, a link to
# the victim in its place for up to HOLD seconds, DEST back; she stops
# when told ($STOP) or after a bounded number of swaps
her_swaps() {
	as_m /usr/bin/python3 - "$D" "$MD/away" "$V" "$STOP" $((RACE_ITERS * 500)) "$1" <<'EOF' &
import os, random, sys, time
d, away, v, stop, n, hold = sys.argv[1:7]
for i in range(int(n)):
    if os.path.exists(stop):
        break
    try:
        os.rename(d, away)
    except OSError:
        time.sleep(0.001)
        continue
    try:
        os.symlink(v, d)
        time.sleep(random.uniform(0, float(hold)))
        os.unlink(d)
    except OSError:
        pass
    try:
        os.rename(away, d)
    except OSError:
        pass
    time.sleep(random.uniform(0, 0.03))
EOF
	HER=$!
}
her_swaps 0.001
runs=0 refused=0 done_=0 broken=0 why=""
while [ "$runs" -lt "$RACE_ITERS" ] && kill -0 "$HER" 2>/dev/null; do
	runs=$((runs + 1))
	if mpirun_n 2 "$IN" --delete "$S/" "$D" >"$TMPD/out" 2>"$TMPD/err"; then
		done_=$((done_ + 1))
	elif grep -q -- "--delete refused" "$TMPD/err"; then
		refused=$((refused + 1))
	fi
	if [ "$(victim_sum)" != "$VSUM" ]; then
		broken=$((broken + 1))
		[ -n "$why" ] || why="run $runs: $(diff <(echo "$VSUM") <(victim_sum) | head -n 5); $(tail -n 3 "$TMPD/err")"
		VSUM=$(victim_sum)	# count each damage once
	fi
done
touch "$STOP"
wait "$HER"
if [ "$runs" -gt 0 ] && [ "$broken" -eq 0 ]; then
	ok "$runs runs of stage-in --delete while she swaps DEST with a link: the victim intact after each ($done_ completed, $refused refused)"
else
	not_ok "runs of stage-in --delete while she swaps DEST with a link: the victim intact after each" "$runs runs, $broken damaged it: $why"
fi

# the same without --delete: her link in DEST's place is never followed
# (another user's), so nothing is copied into the victim either
rm -f "$STOP"
her_swaps 0.02
runs=0 done_=0 broken=0 why=""
while [ "$runs" -lt "$RACE_ITERS" ] && kill -0 "$HER" 2>/dev/null; do
	runs=$((runs + 1))
	mpirun_n 2 "$IN" "$S/" "$D" >"$TMPD/out" 2>"$TMPD/err" && done_=$((done_ + 1))
	if [ "$(victim_sum)" != "$VSUM" ]; then
		broken=$((broken + 1))
		[ -n "$why" ] || why="run $runs: $(diff <(echo "$VSUM") <(victim_sum) | head -n 5); $(tail -n 3 "$TMPD/err")"
		VSUM=$(victim_sum)
	fi
done
touch "$STOP"
wait "$HER"
if [ "$runs" -gt 0 ] && [ "$broken" -eq 0 ]; then
	ok "$runs runs of stage-in while she swaps DEST with a link: nothing copied into the victim ($done_ completed)"
else
	not_ok "runs of stage-in while she swaps DEST with a link: nothing copied into the victim" "$runs runs, $broken changed it: $why"
fi
[ -d "$MD/away" ] && { rm -f "$D"; mv -fT "$MD/away" "$D"; }
rm -rf "$D"
ln -s "$V" "$D"
chown -h "$M:$M" "$D"
fails "a DEST that is her link to root's directory: refused" 1 mpirun_n 2 "$IN" "$S/" "$D"
err_has "  naming it, not followed" "symbolic link of another user's" "not followed"
victim_intact "  the victim is intact"

# DEST below her link to root's directory: the missing directories are not
# made there (they were made by path, before DEST was refused)
rm -f "$D"
ln -s "$V" "$MD/to"
chown -h "$M:$M" "$MD/to"
fails "a DEST below her link to root's directory: refused" 1 mpirun_n 2 "$IN" "$S/" "$MD/to/in/deeper"
err_has "  naming it, not followed" "'$MD/to/in/deeper'" "symbolic link of another user's"
victim_intact "  nothing made in the victim"
fails "stage-out to a DEST below her link to root's directory: refused" 1 \
	mpirun_n 2 "$BIN/stage-out" "$S" "$MD/to/out"
err_has "  naming it, not followed" "'$MD/to/out'" "symbolic link of another user's"
victim_intact "  nothing made in the victim"
finish
