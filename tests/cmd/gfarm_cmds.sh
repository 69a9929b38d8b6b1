#!/bin/bash
# gfarm_cmds.sh - the commands on a real Gfarm (gfmd + 3 gfsd): split to
# Gfarm with each part on its rank's node (checked with gfwhere, not from
# our own records), merge back, the reverse direction, and the Gfarm faults:
# a down gfsd under both placement policies, permission denied, a missing
# parent directory.
. "$(dirname "$0")/../lib.sh"
need_gfarm
gfarm_up 3 || { finish; exit 1; }
read -r -a H <<<"$GFARM_TEST_HOSTS"
hosts=$(IFS=,; echo "${H[*]}")
gfmkdir /t || not_ok "gfmkdir /t"

make_file "$TMPD/src" 5000000 11
# 1. POSIX -> Gfarm, parts pinned rank r -> node r
check "split 3 ranks to gfarm:///t/a.split with --hosts" \
	mpirun_n 3 "$BIN/pcp-split" --hosts "$hosts" "$TMPD/src" gfarm:///t/a.split
on_node_k "every part is on its rank's node (gfwhere)" /t/a.split part 3
on_node_k "every location file is on its node (gfwhere)" /t/a.split loc 3
if gfxattr -g /t/a.split user.gfsplit 2>/dev/null | grep -q 1; then ok "the split directory carries the user.gfsplit xattr"
else not_ok "the split directory carries the user.gfsplit xattr" "$(gfxattr -l /t/a.split 2>&1)"; fi

"$BIN/stat-layout" --json gfarm:///t/a.split >"$TMPD/a.json" 2>"$TMPD/a.err"
rep=$(json_get "$TMPD/a.json" '" ".join(r["replicas"][0] + ":" + str(r["on_writer_node"]) for r in j["parts"])')
want="${H[0]}:True ${H[1]}:True ${H[2]}:True"
[ "$rep" = "$want" ] && ok "stat-layout shows each part's replica on its writer's node" ||
	not_ok "stat-layout shows each part's replica on its writer's node" "got: $rep" "want: $want"
json_valid stat-layout "$TMPD/a.json"
check "stat-layout --check on Gfarm" "$BIN/stat-layout" --check gfarm:///t/a.split
# a symbolic link planted in the split directory is not followed, even to
# the very location file it replaces (then put back)
gfmv /t/a.split/loc.2 /t/loc2.real && gfln -s /t/loc2.real /t/a.split/loc.2
expect_exit "a location file that is a Gfarm symlink is refused" 1 "$BIN/stat-layout" gfarm:///t/a.split
output_has "  naming it" "'gfarm:///t/a.split/loc\.2': a symbolic link \(not followed\)"
gfrm /t/a.split/loc.2 && gfmv /t/loc2.real /t/a.split/loc.2
gfmv /t/a.split/part.1 /t/part1.real && gfln -s /t/part1.real /t/a.split/part.1
expect_exit "a part that is a Gfarm symlink is refused" 1 "$BIN/stat-layout" gfarm:///t/a.split
output_has "  naming it, not its target's size" "'gfarm:///t/a.split/part\.1': a symbolic link \(not followed\)"
gfrm /t/a.split/part.1 && gfmv /t/part1.real /t/a.split/part.1
check "  put back, it checks again" "$BIN/stat-layout" --check gfarm:///t/a.split

# 2. Gfarm -> POSIX, with another rank count
check "merge with 2 ranks to POSIX" mpirun_n 2 "$BIN/gfsplit-merge" gfarm:///t/a.split "$TMPD/a.out"
same_bytes "Gfarm split merged to POSIX is byte-identical" "$TMPD/src" "$TMPD/a.out"
check "merge with 4 ranks to Gfarm" mpirun_n 4 "$BIN/gfsplit-merge" gfarm:///t/a.split gfarm:///t/a.merged
gfexport /t/a.merged >"$TMPD/a.merged" 2>&1
same_bytes "Gfarm split merged to Gfarm is byte-identical (gfexport)" "$TMPD/src" "$TMPD/a.merged"

# the default placement: no --hosts; this host is no gfsd here, so Gfarm
# chooses, and every part must still be somewhere and read back whole
check "split to Gfarm without --hosts" \
	mpirun_n 2 "$BIN/pcp-split" "$TMPD/src" gfarm:///t/d.split
w=$(gfwhere /t/d.split/part.0 /t/d.split/part.1 2>&1 | grep -c "127\.")
[ "$w" -ge 2 ] && ok "both parts have a replica on a gfsd" || not_ok "both parts have a replica on a gfsd" "$(gfwhere /t/d.split/part.0 /t/d.split/part.1 2>&1)"
check "merge it back" mpirun_n 2 "$BIN/gfsplit-merge" gfarm:///t/d.split "$TMPD/d.out"
same_bytes "default placement round trip is byte-identical" "$TMPD/src" "$TMPD/d.out"

# 3. the reverse: source on Gfarm, split file on POSIX, merged onto Gfarm
gfreg "$TMPD/src" /t/in || not_ok "gfreg the source"
check "split gfarm:///t/in (cyclic 64k) to POSIX with 3 ranks" \
	mpirun_n 3 "$BIN/pcp-split" -b 64k gfarm:///t/in "$TMPD/b.split"
check "merge the POSIX split file onto Gfarm with 2 ranks" \
	mpirun_n 2 "$BIN/gfsplit-merge" "$TMPD/b.split" gfarm:///t/b.out
gfexport /t/b.out >"$TMPD/b.out" 2>&1
same_bytes "Gfarm -> POSIX split -> Gfarm is byte-identical" "$TMPD/src" "$TMPD/b.out"

# 4. bad input on Gfarm
expect_exit "a split under a missing Gfarm directory fails" 1 \
	mpirun_n 2 "$BIN/pcp-split" "$TMPD/src" gfarm:///nodir/x.split
output_has "the error names the path and the cause" "gfarm:///nodir.*(no such file|No such file)"

gfmkdir /ro && gfchmod 0555 /ro
expect_exit "a split into a read-only Gfarm directory" 1 \
	mpirun_n 2 "$BIN/pcp-split" "$TMPD/src" gfarm:///ro/x.split
if grep -qi "permission denied" "$OUT"; then
	ok "the error says permission denied and names the path"
elif grep -qi "operation not permitted" "$OUT"; then
	ok "the error says operation not permitted and names the path"
else
	not_ok "the error says permission denied and names the path" "$(tail -n 5 "$OUT")"
fi
if [ -z "$(gfls /ro 2>/dev/null)" ]; then ok "nothing left in the read-only directory"
else not_ok "nothing left in the read-only directory" "$(gfls -a /ro)"; fi

# 5. a down gfsd (node 1): strict fails, fallback lands elsewhere and says so
pid=$(cat "$GFARM_BASE/run/gfsd1.pid")
kill -TERM "$pid" 2>/dev/null
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
start=$(date +%s)
expect_exit "--placement strict with rank 1's gfsd down fails" 1 \
	mpirun_n 3 "$BIN/pcp-split" --placement strict --hosts "$hosts" "$TMPD/src" gfarm:///t/s.split
output_has "the error names the node" "${H[1]}"
[ $(( $(date +%s) - start )) -lt 60 ] && ok "the failure comes within a minute" || not_ok "the failure comes within a minute"
if gfls -d /t/s.split >/dev/null 2>&1; then not_ok "no split file left by the strict failure"
else ok "no split file left by the strict failure"; fi

expect_exit "--placement fallback with rank 1's gfsd down succeeds" 0 \
	mpirun_n 3 "$BIN/pcp-split" --hosts "$hosts" "$TMPD/src" gfarm:///t/f.split
output_has "the fallback is reported" "did not land on its rank's node"
w1=$(gfwhere /t/f.split/part.1 2>&1 | tr -s ' \n' ' ')
case " $w1 " in *" ${H[1]} "*) not_ok "part.1 is elsewhere (gfwhere)" "$w1" ;; *) ok "part.1 is elsewhere (gfwhere: $w1)" ;; esac
"$BIN/stat-layout" gfarm:///t/f.split >"$TMPD/f.txt" 2>&1
if grep -q "NOT on its writer's node" "$TMPD/f.txt"; then ok "stat-layout flags the misplaced part"
else not_ok "stat-layout flags the misplaced part" "$(grep -A1 'rank 1' "$TMPD/f.txt")"; fi
check "the fallback split merges back" mpirun_n 2 "$BIN/gfsplit-merge" gfarm:///t/f.split "$TMPD/f.out"
same_bytes "fallback split is byte-identical after merge" "$TMPD/src" "$TMPD/f.out"
finish
