#!/bin/bash
# race_setid.sh - set-id bits never handed to another owner.
# Root copies and merges a second user's files in her directories:
#   - stage-in and stage-out of her -rwsr-sr-x file make a root-owned copy
#     without the set-id bits (as cp does without -p), and keep them on a
#     file of root's own;
#   - pcp-split -p of a name she swaps between her file and a set-user-ID
#     root file of the same size (RACE_ITERS times) records the attributes
#     of the bytes it read: a merge -p gives a set-user-ID root file only
#     with the root file's bytes;
#   - gfsplit-merge -p of a split file of hers whose marker claims 04755
#     root (a copy of root's split file): no set-id bits, not root's claim
#     but the file system's word decides.
. "$(dirname "$0")/../lib.sh"

her_dir "set-id races with a second user"
R=$TMPD/root		# root's
mkdir -m 755 "$R"
# mode_of FILE: "MODE OWNER"
mode_of() { stat -c '%a %U' "$1"; }

# ---- stage-in / stage-out of her set-id file
mkdir -p "$MD/src"
printf '#!/bin/sh\nid -u\n' >"$MD/src/tool"
chown "$M:$M" "$MD/src" "$MD/src/tool"
chmod 6755 "$MD/src/tool"
printf 'root tool\n' >"$MD/src/roots"
chmod 4755 "$MD/src/roots"	# root's own set-user-ID file: stays so
check "stage-in of her tree" mpirun_n 2 "$BIN/stage-in" "$MD/src/" "$R/in"
got=$(mode_of "$R/in/tool")
[ "$got" = "755 root" ] && ok "  her 6755 file is 755 root's: no set-id bits" ||
	not_ok "  her 6755 file is 755 root's: no set-id bits" "got $got"
got=$(mode_of "$R/in/roots")
[ "$got" = "4755 root" ] && ok "  root's own 4755 file keeps its bit" ||
	not_ok "  root's own 4755 file keeps its bit" "got $got"
same_bytes "  the same bytes" "$MD/src/tool" "$R/in/tool"
check "stage-out of her tree" mpirun_n 1 env GFSPLIT_NODE=nA "$BIN/stage-out" "$MD/src" "$R/out"
got=$(mode_of "$R/out/nA/tool")
[ "$got" = "755 root" ] && ok "  stage-out: 755 root's too" ||
	not_ok "  stage-out: 755 root's too" "got $got" "$(ls -lR "$R/out")"

# ---- pcp-split -p of a name she swaps
# two files of one size: hers, and a set-user-ID root one she can read
printf 'her script, 32 bytes of it .....' >"$MD/mine"
chown "$M:$M" "$MD/mine"
chmod 755 "$MD/mine"
printf 'root program, 32 bytes of it ...' >"$R/suid"
chmod 4755 "$R/suid"
cp "$MD/mine" "$MD/prog"
chown "$M:$M" "$MD/prog"
# her loop: the name prog is a link to the root program, then her file...
as_m bash -c '
	cd "$1" || exit 1
	end=$((SECONDS + 300))
	while [ ! -e stop ] && [ $SECONDS -lt $end ]; do
		ln -sfn "$2" prog.l && mv -fT prog.l prog
		cp mine prog.t && mv -fT prog.t prog
	done 2>/dev/null' swap "$MD" "$R/suid" &
LOOP=$!
bad=0 runs=0
for i in $(seq 1 "$RACE_ITERS"); do
	rm -rf "$R/p.sp" "$R/p.out"
	mpirun_n $((i % 2 * 2 + 2)) "$BIN/pcp-split" -q -p "$MD/prog" "$R/p.sp" >/dev/null 2>"$TMPD/perr" || { [ "$i" -le 2 ] && sed "s/^/# /" "$TMPD/perr"; continue; }
	mpirun_n 1 "$BIN/gfsplit-merge" -q -p "$R/p.sp" "$R/p.out" >/dev/null 2>&1 || continue
	runs=$((runs + 1))
	if [ -u "$R/p.out" ] && ! cmp -s "$R/p.out" "$R/suid"; then
		bad=$((bad + 1))
		echo "# iteration $i: $(mode_of "$R/p.out") with her bytes: $(head -c 20 "$R/p.out")"
	fi
done
touch "$MD/stop"
wait "$LOOP" 2>/dev/null
[ "$runs" -gt 0 ] && [ "$bad" -eq 0 ] &&
	ok "pcp-split -p while she swaps the source ($runs of $RACE_ITERS runs): no set-user-ID file of her bytes" ||
	not_ok "pcp-split -p while she swaps the source" "$bad of $runs runs made a set-user-ID root file of her bytes"
rm -f "$MD/stop"

# ---- gfsplit-merge -p of her copy of a split file that claims root
check "root splits his set-user-ID program with -p" mpirun_n 2 "$BIN/pcp-split" -p "$R/suid" "$R/s.sp"
as_m cp -r "$R/s.sp" "$MD/hers.sp"
check "  she copies it into her directory" test -d "$MD/hers.sp"
"$BIN/stat-layout" "$MD/hers.sp" >"$TMPD/sl" 2>&1
grep -q "^source: *mode 4755, owner 0:0" "$TMPD/sl" &&
	ok "  her copy's marker claims 4755 root" ||
	not_ok "  her copy's marker claims 4755 root" "$(cat "$TMPD/sl")"
expect_exit "root merges her copy with -p" 0 mpirun_n 2 "$BIN/gfsplit-merge" -p "$MD/hers.sp" "$R/hers.out"
got=$(mode_of "$R/hers.out")
[ "$got" = "755 root" ] && ok "  no set-id bits: the files are hers, the claim is not backed ($got)" ||
	not_ok "  no set-id bits: the files are hers, the claim is not backed" "got $got"
output_has "  a warning says why" "warning: -p: .*hers.sp' records owner 0, but its own files do not all belong to it"
same_bytes "  the same bytes" "$R/suid" "$R/hers.out"
expect_exit "root merges his own with -p" 0 mpirun_n 2 "$BIN/gfsplit-merge" -p "$R/s.sp" "$R/s.out"
got=$(mode_of "$R/s.out")
[ "$got" = "4755 root" ] && ok "  his own keeps 4755 root (backed by its files)" ||
	not_ok "  his own keeps 4755 root (backed by its files)" "got $got"

finish
