#!/bin/bash
# badinput.sh - bad input gets a clear error and loses nothing: each case
# asserts the exit status, that the message names the file and the cause,
# and that nothing was lost (sources and existing destinations unchanged)
# or created (no DST, no temporary left behind); a DST that is SRC is
# refused, --force or not.
. "$(dirname "$0")/../lib.sh"

T=60	# seconds a failing run may take: the other ranks must not hang

src=$TMPD/src
make_file "$src" 3000017 11
sum_src=$(sha256sum <"$src")

tree_sum() { (cd "$1" && find . -type f | sort | xargs cat | sha256sum); }

check "make a good split file (3 ranks, cyclic 64k)" mpirun_n 3 "$BIN/pcp-split" -b 64k "$src" "$TMPD/good"

# fresh copy of the good split file to damage
damaged() { rm -rf "$TMPD/bad"; cp -r "$TMPD/good" "$TMPD/bad"; }

# both readers must refuse: stat-layout (OPTS) and gfsplit-merge
refuse() {	# DESC REGEX [stat-layout options]
	_d=$1 _re=$2; shift 2
	_before=$(tree_sum "$TMPD/bad")
	expect_exit "$_d: stat-layout exits 1" 1 "$BIN/stat-layout" "$@" "$TMPD/bad"
	output_has "$_d: stat-layout names file and cause" "$_re"
	expect_exit "$_d: merge exits 1" 1 mpirun_n 2 "$BIN/gfsplit-merge" "$TMPD/bad" "$TMPD/out"
	output_has "$_d: merge names file and cause" "$_re"
	no_leftovers "$_d: merge created nothing" "$TMPD" "$TMPD/out"
	check "$_d: split file left as it was" test "$(tree_sum "$TMPD/bad")" = "$_before"
}

# ---- SRC missing
expect_exit "split: missing SRC exits 1" 1 mpirun_n 2 "$BIN/pcp-split" "$TMPD/nosuch" "$TMPD/d1"
output_has "split: missing SRC named with the cause" "'.*/nosuch': No such file or directory"
n=$(grep -c nosuch "$OUT")
[ "$n" -eq 1 ] && ok "missing SRC reported once, not by every rank" ||
	not_ok "missing SRC reported once" "$n lines"
no_leftovers "split: missing SRC created nothing" "$TMPD" "$TMPD/d1"
expect_exit "merge: missing SRC exits 1" 1 mpirun_n 2 "$BIN/gfsplit-merge" "$TMPD/nosuch" "$TMPD/o1"
output_has "merge: missing SRC named with the cause" "nosuch.*No such file or directory"
no_leftovers "merge: missing SRC created nothing" "$TMPD" "$TMPD/o1"
mkdir -p "$TMPD/plain"
expect_exit "split: SRC is a directory exits 1" 1 mpirun_n 2 "$BIN/pcp-split" "$TMPD/plain" "$TMPD/d1"
output_has "split: directory SRC said" "plain' is a directory"
expect_exit "split: SRC is a split file exits 1" 1 mpirun_n 2 "$BIN/pcp-split" "$TMPD/good" "$TMPD/d1"
output_has "  pointing to gfsplit-merge" "good' is a split file already \(gfsplit-merge makes an ordinary file of it\)"
expect_exit "merge: SRC an ordinary directory exits 1" 1 mpirun_n 2 "$BIN/gfsplit-merge" "$TMPD/plain" "$TMPD/o1"
output_has "  said plainly, no talk of a writer" "plain' is not a split file \(no gfsplit.meta, no parts"
rmdir "$TMPD/plain"
for p in pcp-split gfsplit-merge; do
	expect_exit "$p: '-' as DST is a usage error" 2 "$BIN/$p" "$TMPD/good" -
	output_has "  saying so" "'-': standard input and output are not files here"
	is_absent "  and no file named '-'" "./-" "$TMPD/-"
done
expect_exit "merge: SRC not a split file exits 1" 1 mpirun_n 2 "$BIN/gfsplit-merge" "$src" "$TMPD/o1"
output_has "merge: plain SRC said" "src.*not a"
no_leftovers "merge: plain SRC created nothing" "$TMPD" "$TMPD/o1"

# ---- DST is SRC (by its path, another spelling of it, a hard link, a
# symbolic link): refused even with --force, the source untouched
cp "$src" "$TMPD/self"; ln "$TMPD/self" "$TMPD/self.hard"; ln -s self "$TMPD/self.sym"
for d in "$TMPD/self" "$TMPD/./self" "$TMPD/self.hard" "$TMPD/self.sym"; do
	expect_exit "split --force SRC ${d#"$TMPD"/}: exits 1" 1 mpirun_n 2 "$BIN/pcp-split" --force "$TMPD/self" "$d"
	output_has "  says they are the same file" "self.*same file"
	check "  the source is still the file" cmp -s "$src" "$TMPD/self"
done
for d in "$TMPD/good" "$TMPD/good/" "$TMPD/./good"; do
	_before=$(tree_sum "$TMPD/good")
	expect_exit "merge --force SRC ${d#"$TMPD"/}: exits 1" 1 mpirun_n 2 "$BIN/gfsplit-merge" --force "$TMPD/good" "$d"
	output_has "  says they are the same file" "good.*same file"
	check "  the split file is still the split file" test "$(tree_sum "$TMPD/good")" = "$_before"
done
rm -f "$TMPD/self" "$TMPD/self.hard" "$TMPD/self.sym"

# ---- SRC unreadable, destination unwritable (permission checks need a
# user other than root)
if can_run_as_nobody; then
	NB=$TMPD/nb
	mkdir "$NB" "$NB/ro"
	chmod 755 "$TMPD"; chmod 777 "$NB"
	cp "$src" "$NB/src"; chmod 000 "$NB/src"
	expect_exit "split: unreadable SRC exits 1" 1 as_nobody timeout $T "$MPIEXEC" -n 2 \
		"$BIN/pcp-split" "$NB/src" "$NB/d"
	output_has "split: unreadable SRC named with the cause" "nb/src': Permission denied"
	no_leftovers "split: unreadable SRC created nothing" "$NB" "$NB/d"
	chmod 644 "$NB/src"
	cp -r "$TMPD/good" "$NB/sp"; chmod -R a+rX "$NB/sp"; chmod 000 "$NB/sp/part.1"
	expect_exit "merge: unreadable part exits 1" 1 as_nobody timeout $T "$MPIEXEC" -n 2 \
		"$BIN/gfsplit-merge" "$NB/sp" "$NB/o"
	output_has "merge: unreadable part named with the cause" "sp/part\.1.*Permission denied"
	no_leftovers "merge: unreadable part created nothing" "$NB" "$NB/o"
	chmod 644 "$NB/sp/part.1"
	chmod 555 "$NB/ro"
	expect_exit "split: unwritable destination exits 1" 1 as_nobody timeout $T "$MPIEXEC" -n 2 \
		"$BIN/pcp-split" "$NB/src" "$NB/ro/d"
	output_has "split: unwritable destination named with the cause" "nb/ro/.*Permission denied"
	expect_exit "merge: unwritable destination exits 1" 1 as_nobody timeout $T "$MPIEXEC" -n 2 \
		"$BIN/gfsplit-merge" "$NB/sp" "$NB/ro/o"
	output_has "merge: unwritable destination named with the cause" "nb/ro/.*Permission denied"
	check "unwritable destination: nothing created" test -z "$(ls -A "$NB/ro")"
else
	for c in "unreadable SRC" "unreadable part" "unwritable destination (split)" \
		 "unwritable destination (merge)"; do
		skip "$c" "needs root to switch to user nobody (setpriv), permission checks do not apply to root"
	done
fi

# ---- DST exists
echo "keep me" >"$TMPD/exists"
sum_ex=$(sha256sum <"$TMPD/exists")
expect_exit "split: DST exists exits 1" 1 mpirun_n 2 "$BIN/pcp-split" "$src" "$TMPD/exists"
output_has "split: DST exists said" "exists' exists \(use --force to replace it\)"
check "split: existing DST unchanged" test "$(sha256sum <"$TMPD/exists")" = "$sum_ex"
expect_exit "merge: DST exists exits 1" 1 mpirun_n 2 "$BIN/gfsplit-merge" "$TMPD/good" "$TMPD/exists"
output_has "merge: DST exists said" "exists' exists \(use --force to replace it\)"
check "merge: existing DST unchanged" test "$(sha256sum <"$TMPD/exists")" = "$sum_ex"
no_leftovers "DST exists: no temporary" "$TMPD"

# ---- location files: truncated, corrupted, wrong version
damaged; truncate -s 40 "$TMPD/bad/loc.0"
refuse "truncated loc.0" "bad/loc\.0.*(truncated|short|corrupt)"
damaged; printf '\001' | dd of="$TMPD/bad/loc.0" bs=1 seek=50 conv=notrunc 2>/dev/null
refuse "corrupted loc.0" "bad/loc\.0.*(checksum|corrupt)"
damaged; "$UNIT/mpi_fmt_tool" set32 "$TMPD/bad/loc.0" 8 5
refuse "loc.0 of format version 5" "bad/loc\.0.*version 5"
damaged; "$UNIT/mpi_fmt_tool" set32 "$TMPD/bad/gfsplit.meta" 8 7
refuse "marker of format version 7" "bad/gfsplit\.meta.*version 7"
damaged; rm "$TMPD/bad/gfsplit.meta"
refuse "marker missing (not a complete split file)" "bad.*(not a complete split file|gfsplit\.meta)"

# ---- parts: missing, short, checksum mismatch
damaged; rm "$TMPD/bad/part.1"
refuse "missing part.1" "bad/part\.1.*(missing|No such file)"
damaged; truncate -s -1 "$TMPD/bad/part.2"
refuse "short part.2" "bad/part\.2.*(short|truncated)"
damaged; printf '\377' | dd of="$TMPD/bad/part.0" bs=1 seek=100000 conv=notrunc 2>/dev/null
refuse "checksum mismatch in part.0" "bad/part\.0: checksum mismatch \(recorded 0x[0-9a-f]+, computed 0x[0-9a-f]+\)" --check
expect_exit "checksum mismatch: --no-verify merges what is there" 0 mpirun_n 2 \
	"$BIN/gfsplit-merge" --no-verify "$TMPD/bad" "$TMPD/nv"
# part.0 local 100000 = its second 64k block (global block 3) + 34464
check "--no-verify output differs from the source only at that byte" \
	test "$(cmp -l "$src" "$TMPD/nv" | awk '{print $1}')" = $((3 * 65536 + 34464 + 1))
rm -f "$TMPD/nv"

# ---- mismatched process counts between location files: two nodes
mpmd() {	# N SRC DST BLOCK: N ranks alternating between nodes a and b
	_args=""
	for _r in $(seq 0 $(($1 - 1))); do
		[ "$_r" -gt 0 ] && _args="$_args :"
		_args="$_args -n 1 -env GFSPLIT_NODE node$((_r % 2)) $BIN/pcp-split -b $4 $2 $3"
	done
	timeout $T "$MPIEXEC" $_args
}
check "split with 2 ranks on 2 nodes" mpmd 2 "$src" "$TMPD/two" 64k
check "split with 4 ranks on 2 nodes" mpmd 4 "$src" "$TMPD/four" 64k
check "each has two location files" test -f "$TMPD/two/loc.1" -a -f "$TMPD/four/loc.1"
rm -rf "$TMPD/bad"; cp -r "$TMPD/two" "$TMPD/bad"; cp "$TMPD/four/loc.1" "$TMPD/bad/loc.1"
refuse "loc.1 from a 4-rank job in a 2-rank split" "bad/loc\.1.*(nprocs|process|ranks).*(4|2)"
rm -rf "$TMPD/bad"; cp -r "$TMPD/two" "$TMPD/bad"; "$UNIT/mpi_fmt_tool" set32 "$TMPD/bad/loc.0" 12 3
refuse "loc.0 re-signed with nprocs 3" "bad/loc\.0.*(nprocs|process|ranks).*(3|2)"

# ---- full file system
FULL=$TMPD/full
mkdir "$FULL"
if mount -t tmpfs -o size=2m tmpfs "$FULL" 2>/dev/null; then
	at_exit "umount '$FULL'"
	expect_exit "split onto a full file system exits 1" 1 mpirun_n 2 "$BIN/pcp-split" "$src" "$FULL/d"
	output_has "split: full file system named with the cause" "full/.*No space left on device"
	no_leftovers "split: full file system, nothing left" "$FULL" "$FULL/d"
	expect_exit "merge onto a full file system exits 1" 1 mpirun_n 3 "$BIN/gfsplit-merge" \
		--stripe-size 512k "$TMPD/good" "$FULL/o"
	output_has "merge: full file system named with the cause" "full/.*No space left on device"
	no_leftovers "merge: full file system, nothing left" "$FULL" "$FULL/o"
	check "full file system is empty again" test -z "$(ls -A "$FULL")"
else
	for c in "split onto a full file system" "merge onto a full file system"; do
		skip "$c" "cannot mount a small tmpfs here (needs root and mount rights)"
	done
fi

# ---- a rank failing mid-write: every rank exits 1, promptly (each rank
# writes about 1 MB of this 3 MB file, so the fault hits halfway)
# each rank's own exit status is recorded through a shell wrapper
each_rank() {	# N ENVVAR=VALUE PROG ARGS...
	_n=$1 _env=$2; shift 2
	rm -f "$TMPD"/rc.*
	timeout $T "$MPIEXEC" -n "$_n" env "$_env" sh -c \
		'"$@"; rc=$?; echo $rc >"'"$TMPD"'/rc.$PMI_RANK"; exit $rc' _ "$@"
}
all_ranks_exit_1() {	# DESC N
	_got=$(cat "$TMPD"/rc.* 2>/dev/null | sort | uniq -c | tr -s ' ')
	[ "$(cat "$TMPD"/rc.* 2>/dev/null | grep -cx 1)" -eq "$2" ] && ok "$1" ||
		not_ok "$1" "exit statuses: $_got"
}
start=$(date +%s)
expect_exit "split: rank 1 fails mid-write" 1 each_rank 3 GFSPLIT_FAULT=pwrite:1:500000 \
	"$BIN/pcp-split" "$src" "$TMPD/f1"
output_has "split: failing rank names its part and the cause" "part\.1.*Input/output error"
all_ranks_exit_1 "split: every rank exits 1" 3
no_leftovers "split: no half split file" "$TMPD" "$TMPD/f1"
expect_exit "merge: rank 1 fails mid-write" 1 each_rank 3 GFSPLIT_FAULT=pwrite:1:500000 \
	"$BIN/gfsplit-merge" --stripe-size 256k "$TMPD/good" "$TMPD/f2"
output_has "merge: failing rank names the file and the cause" "f2.*Input/output error"
all_ranks_exit_1 "merge: every rank exits 1" 3
no_leftovers "merge: no half file" "$TMPD" "$TMPD/f2"
secs=$(( $(date +%s) - start ))
[ "$secs" -lt $((T / 2)) ] && ok "failures end promptly (${secs}s)" ||
	not_ok "failures end promptly" "${secs}s"

# ---- a rank killed mid-write: the job ends, nothing looks complete
expect_exit "split: rank 1 killed, the job ends" 0 sh -c \
	'timeout '$T' "$0" -n 3 env GFSPLIT_FAULT=crash:1:500000 "$1" "$2" "$3"; rc=$?;
	 echo "job exit $rc"; [ $rc -ne 0 ] && [ $rc -ne 124 ]' \
	"$MPIEXEC" "$BIN/pcp-split" "$src" "$TMPD/k1"
is_absent "split: killed rank, no DST" "$TMPD/k1"
tmpdir=$(ls -d "$TMPD"/.k1.gfsplit-tmp.* 2>/dev/null | head -n 1)
if [ -n "$tmpdir" ]; then
	expect_exit "stat-layout on the leftover temporary fails" 1 "$BIN/stat-layout" "$tmpdir"
	output_has "leftover is not a complete split file" "not a complete split file"
	rm -rf "$tmpdir"
else
	ok "split: killed rank left no temporary either"
	ok "split: (nothing to inspect)"
fi
expect_exit "merge: rank 1 killed, the job ends" 0 sh -c \
	'timeout '$T' "$0" -n 3 env GFSPLIT_FAULT=crash:1:262144 "$1" --stripe-size 256k "$2" "$3"; rc=$?;
	 echo "job exit $rc"; [ $rc -ne 0 ] && [ $rc -ne 124 ]' \
	"$MPIEXEC" "$BIN/gfsplit-merge" "$TMPD/good" "$TMPD/k2"
is_absent "merge: killed rank, no DST" "$TMPD/k2"

check "SRC never changed" test "$(sha256sum <"$src")" = "$sum_src"
finish
