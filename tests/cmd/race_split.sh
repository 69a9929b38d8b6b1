#!/bin/bash
# race_split.sh - root splits into a directory a second user can write
# while she swaps names and links there, RACE_ITERS runs each:
#   - the sweep of a killed run's temporaries: she plants one
#     (.NAME.gfsplit-tmp.NODE.PID.NONCE/ of a process gone) and swaps a
#     directory in it with a link to root's victim directory;
#   - the temporary directory of the run itself: she renames it away and
#     puts a link to the victim directory in its place;
#   - pcp-split --force over her split file, whose old copy is removed;
#   - DST's parent: her link to the victim, planted and swapped in and out
#     while root splits and merges;
#   - the MPI-IO library's split-write (the same writer) into her directory.
# Every time, root's victim directory (300 files she cannot read) must be
# untouched: nothing removed, nothing added, nothing changed.
. "$(dirname "$0")/../lib.sh"

her_dir "split races with a second user"
V=$TMPD/victim		# root's
mkdir -m 700 "$V"
for i in $(seq 1 300); do echo "victim $i" >"$V/f$i"; done
chmod 600 "$V"/f*
VSUM=$(cd "$V" && ls -lA --time-style=+ | sha256sum; cat f* | sha256sum)
victim_intact() {
	if [ "$(cd "$V" && ls -lA --time-style=+ | sha256sum; cat f* | sha256sum)" = "$VSUM" ]; then
		ok "  root's victim directory is untouched ($1)"
	else
		not_ok "  root's victim directory is untouched ($1)" \
			"$(ls "$V" | wc -l) of 300 files left" "$(ls -la "$V" | grep -v ' f[0-9]*$' | head -n 5)"
	fi
}
export GFSPLIT_NODE=nA
make_file "$TMPD/src" 2000000 3
chmod 644 "$TMPD/src"
# loop NAME SCRIPT: run SCRIPT as her in $MD until the file stop appears
# (at most 300 s); loop_end waits for it
loop() {
	as_m bash -c "cd '$MD' || exit 1; end=\$((SECONDS + 300))
		while [ ! -e stop ] && [ \$SECONDS -lt \$end ]; do $1; done 2>/dev/null" &
	LOOP=$!
}
loop_end() { touch "$MD/stop"; wait "$LOOP" 2>/dev/null; rm -f "$MD/stop"; }
# swap_loop GLOB: her loop puts each directory GLOB matches away and a
# link to the victim directory in its place
swap_loop() {
	loop "for d in $1; do [ -d \"\$d\" ] && [ ! -L \"\$d\" ] &&
		mv -fT \"\$d\" \"x\$RANDOM\" && ln -sfn '$V' \"\$d\"; done"
}
# untouched WHAT: nothing removed from the victim directory, nothing
# changed or written into it
untouched() {
	victim_intact "$1"
	[ "$(find "$V" -newer "$TMPD/src" | wc -l)" -eq 0 ] && ok "  nothing written into it" ||
		not_ok "  nothing written into it" "$(find "$V" -newer "$TMPD/src" | head -n 5)"
	rm -rf "$MD"/x* "$MD"/.[a-z]*
}

# ---- the sweep: a planted temporary of a process that is gone
# (her directory holds the victim's names: a listing of it, then a swap,
# and a remover that goes by paths unlinks the victim's files)
as_m /usr/bin/python3 - "$MD" "$V" <<'PY' &
import os, sys, time
os.chdir(sys.argv[1])
T, V = ".out.sp.gfsplit-tmp.nA.999999.0123456789abcdef", sys.argv[2]
end = time.time() + 300
while not os.path.exists("stop") and time.time() < end:
    try:
        os.makedirs(T + "/sub", exist_ok=True)
        for i in range(1, 301):
            open("%s/sub/f%d" % (T, i), "a").close()
        os.rename(T + "/sub", T + "/sub.d")
        os.symlink(V, T + "/sub")
        time.sleep(0.001)
        os.unlink(T + "/sub")
        os.rename(T + "/sub.d", T + "/sub")
    except OSError:
        pass
    time.sleep(0.05)	# (a sweep may finish, now and then)
PY
LOOP=$!
# (a sweep that meets her files mid-creation fails and is tried by the next
# run: runs go on past RACE_ITERS, up to 4 times as many, until one swept)
swept=0 i=0
while [ "$i" -lt "$RACE_ITERS" ] || { [ "$swept" -eq 0 ] && [ "$i" -lt $((4 * RACE_ITERS)) ]; }; do
	i=$((i + 1))
	rm -rf "$MD/out.sp"
	mpirun_n 2 "$BIN/pcp-split" "$TMPD/src" "$MD/out.sp" >/dev/null 2>"$TMPD/err"
	grep -q "removed .*left by process [0-9]* of this node, which ended without its clean-up" "$TMPD/err" && swept=$((swept + 1))
done
loop_end
[ "$swept" -gt 0 ] && ok "the sweep ran $swept times in $i runs while she swapped" ||
	not_ok "the sweep ran while she swapped" "not once in $i runs" "$(tail -n 3 "$TMPD/err")"
victim_intact "the sweep"

# ---- the run's own temporary directory, renamed and replaced by a link
swap_loop '.out2.sp.gfsplit-tmp.*'
good=0 failed=0
for i in $(seq 1 "$RACE_ITERS"); do
	rm -rf "$MD/out2.sp"
	if mpirun_n 2 "$BIN/pcp-split" "$TMPD/src" "$MD/out2.sp" >/dev/null 2>"$TMPD/err"; then
		if "$BIN/stat-layout" -q --check "$MD/out2.sp" 2>/dev/null; then
			good=$((good + 1))
		else
			not_ok "  a run that exits 0 leaves a good split file ($i)" "$(stat-layout --check "$MD/out2.sp" 2>&1 | tail -n 3)"
		fi
	else
		failed=$((failed + 1))
	fi
done
loop_end
ok "the temporary directory swapped: $good runs completed, $failed refused"
untouched "the temporary directory"

# ---- --force over her split file: the old one is moved aside and removed
mpirun_n 2 "$BIN/pcp-split" "$TMPD/src" "$MD/f.sp" >/dev/null 2>&1
chown -R "$M:$M" "$MD/f.sp"
swap_loop '.f.sp.gfsplit-old.*'
for i in $(seq 1 "$RACE_ITERS"); do
	mpirun_n 2 "$BIN/pcp-split" --force "$TMPD/src" "$MD/f.sp" >/dev/null 2>&1
	chown -R "$M:$M" "$MD/f.sp" 2>/dev/null
done
loop_end
untouched "--force's old copy"

# ---- DST's parent: her link to the victim directory, planted, then swapped
# in and out while root splits and merges into it (the parent is held from
# the start, opened following no link of hers)
mpirun_n 2 "$BIN/pcp-split" -q "$TMPD/src" "$TMPD/m.sp" || not_ok "a split file to merge"
as_m ln -s "$V" "$MD/out"
expect_exit "pcp-split into a parent that is her link to root's directory: refused" 1 \
	mpirun_n 2 "$BIN/pcp-split" "$TMPD/src" "$MD/out/x.sp"
output_has "  naming it: her link is not followed" "'$MD/out'.*symbolic link of another user's"
expect_exit "gfsplit-merge into it: refused" 1 mpirun_n 2 "$BIN/gfsplit-merge" "$TMPD/m.sp" "$MD/out/y"
output_has "  naming it" "'$MD/out'.*symbolic link of another user's"
untouched "her link as DST's parent"
as_m rm -f "$MD/out"
as_m mkdir "$MD/out"
loop 'mv -fT out out.d && ln -s '"$V"' out && sleep 0.0$RANDOM; rm -f out; mv -fT out.d out'
for i in $(seq 1 "$RACE_ITERS"); do
	rm -rf "$MD/out.d/x.sp" "$MD/out.d/y" "$MD/out/x.sp" "$MD/out/y" 2>/dev/null
	mpirun_n 2 "$BIN/pcp-split" -q "$TMPD/src" "$MD/out/x.sp" >/dev/null 2>&1
	mpirun_n 2 "$BIN/gfsplit-merge" -q "$TMPD/m.sp" "$MD/out/y" >/dev/null 2>&1
done
loop_end
untouched "DST's parent swapped with her link"

# ---- the MPI-IO library's split-write: its temporary directory swapped
. "$TOP/tests/mpiio_lib.sh"
PROG=$UNIT/mpi_iopat
if [ ! -x "$PROG" ] || [ ! -f "$PRELOAD" ]; then
	skip "the MPI-IO library's temporary directory swapped" "no $PROG or $PRELOAD (make builds them)"
else
	swap_loop '.o.mp.gfsplit-tmp.*'
	good=0 failed=0
	for i in $(seq 1 "$((RACE_ITERS / 2))"); do
		rm -rf "$MD/o.mp"
		if pre 2 "$MD/*.mp" ior-at write "$MD/o.mp" --api=classic >/dev/null 2>&1; then
			good=$((good + 1))
		else
			failed=$((failed + 1))
		fi
	done
	loop_end
	ok "the MPI-IO library's temporary directory swapped: $good runs completed, $failed refused"
	untouched "the MPI-IO library's temporary directory"
	# her link as the file an MPI program of root's rewrites: root's
	# file it leads to is not read into parts she could read
	as_m ln -s "$V/f1" "$MD/l.mp"
	pre 2 "$MD/*.mp" ior-at write "$MD/l.mp" --api=classic >"$TMPD/out" 2>&1
	[ -L "$MD/l.mp" ] && ! grep -rqs "victim 1" "$MD" &&
		ok "the MPI-IO library does not read root's file through her link" ||
		not_ok "the MPI-IO library does not read root's file through her link" "$(ls -la "$MD"; cat "$TMPD/out")"
	untouched "the MPI-IO library and her link"
	# a 0600 file of root's rewritten through the library: parts no more
	# readable than it
	head -c 3000000 /dev/urandom >"$MD/b.mp"
	chmod 600 "$MD/b.mp"
	check "an MPI program rewrites a 0600 file through the library" \
		pre 2 "$MD/*.mp" ior-at write "$MD/b.mp" --api=classic
	[ -z "$(find "$MD/b.mp" -type f -perm /077)" ] && ok "  its parts are 0600 too" ||
		not_ok "  its parts are 0600 too" "$(ls -la "$MD/b.mp")"
fi

finish
