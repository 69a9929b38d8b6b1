#!/bin/bash
# badmeta.sh - crafted metadata (counts, sizes, overlapping views): every reader
# (stat-layout, gfsplit-merge, the MPI-IO library) refuses it with an error
# that names the file and the cause, promptly (each run under a timeout:
# 124 is a hang), without a huge allocation, and without disclosing what a
# planted link points to:
#   6  a part or location file that is a symbolic link
#   7  a marker or location file that is a FIFO
#   8  a logical size past the largest file offset (2^63, 2^64-1), and a
#      legal huge one (2^62) whose trailing hole must cost nothing
#   9  a marker claiming 2^24 ranks; a checksum segment of 1 byte
#   10 overlapping views of a file without runs, a flipped part byte
#      (GFSPLIT_VERIFY=1, the gfsplit_verify hint), a manifest DST of '.'
. "$(dirname "$0")/../lib.sh"

T=20	# seconds any one run may take here
CAT=$UNIT/mpi_catfile
PRELOAD=${MPIIO_LIB:-$TOP/lib/libgfsplit-mpiio.so}
preload_of "$PRELOAD"
unset GFSPLIT_SPLIT_FILES GFSPLIT_VERBOSE GFSPLIT_FAULT GFSPLIT_VERIFY

src=$TMPD/src
make_file "$src" 300000 7
# GFSPLIT_NODE fixes the node and host names, hence the records' offsets
check "make a good split file (2 ranks, contiguous)" \
	mpirun_n 2 env GFSPLIT_NODE=nd "$BIN/pcp-split" "$src" "$TMPD/good"

damaged() { rm -rf "$TMPD/bad"; cp -r "$TMPD/good" "$TMPD/bad"; }

# the readers, each under $T seconds
sl() { timeout $T "$BIN/stat-layout" "$@"; }
merge() { timeout -k 5 $T "$MPIEXEC" -n 2 "$BIN/gfsplit-merge" "$@"; }
mcat() {	# FILE OUT [--verify-hint]: the MPI-IO library reads FILE
	timeout -k 5 $T "$MPIEXEC" -n 2 env LD_PRELOAD="$PRE" "$CAT" "$@"
}
have_mpiio=1
[ -f "$PRELOAD" ] && [ -x "$CAT" ] || have_mpiio=0

# refuse DESC REGEX [stat-layout options]: stat-layout, merge and the
# MPI-IO library each exit 1 (not 124: no hang) naming file and cause
refuse() {
	_rd=$1 _rre=$2; shift 2
	expect_exit "$_rd: stat-layout exits 1" 1 sl "$@" "$TMPD/bad"
	output_has "$_rd: stat-layout names file and cause" "$_rre"
	expect_exit "$_rd: merge exits 1" 1 merge "$TMPD/bad" "$TMPD/out"
	output_has "$_rd: merge names file and cause" "$_rre"
	no_leftovers "$_rd: merge created nothing" "$TMPD" "$TMPD/out"
	rm -rf "$TMPD/out" "$TMPD"/.out.gfsplit-*
	if [ $have_mpiio = 1 ]; then
		expect_exit "$_rd: MPI-IO open fails" 1 mcat "$TMPD/bad" "$TMPD/cat"
		output_has "$_rd: MPI-IO names file and cause" "$_rre"
	else
		skip "$_rd: MPI-IO" "no $PRELOAD or $CAT (make)"
	fi
}

# ---- 6: symbolic links are not followed, and nothing of the target shows
printf '%012345d' 0 >"$TMPD/secret"		# 12345 bytes
damaged; rm "$TMPD/bad/part.0"; ln -s "$TMPD/secret" "$TMPD/bad/part.0"
refuse "part.0 a symlink" "bad/part\.0': a symbolic link \(not followed\)"
if grep -q 12345 "$OUT"; then not_ok "the link target's size is not told" "$(cat "$OUT")"
else ok "the link target's size is not told"; fi
damaged; mv "$TMPD/bad/loc.0" "$TMPD/loc.0.real"; ln -s "$TMPD/loc.0.real" "$TMPD/bad/loc.0"
refuse "loc.0 a symlink (to a valid location file)" "bad/loc\.0': a symbolic link \(not followed\)"
damaged; mv "$TMPD/bad/gfsplit.meta" "$TMPD/meta.real"; ln -s "$TMPD/meta.real" "$TMPD/bad/gfsplit.meta"
refuse "gfsplit.meta a symlink" "bad/gfsplit\.meta': a symbolic link \(not followed\)"

# ---- 7: FIFOs: no reader blocks in open()
damaged; rm "$TMPD/bad/loc.0"; mkfifo "$TMPD/bad/loc.0"
refuse "loc.0 a FIFO" "bad/loc\.0': not a regular file"
damaged; rm "$TMPD/bad/gfsplit.meta"; mkfifo "$TMPD/bad/gfsplit.meta"
refuse "gfsplit.meta a FIFO" "bad/gfsplit\.meta': not a regular file"
damaged; rm "$TMPD/bad/part.1"; mkfifo "$TMPD/bad/part.1"
refuse "part.1 a FIFO" "bad/part\.1': not a regular file"

# ---- 8: logical sizes past off_t / MPI_Offset (marker offset 20)
for big in 9223372036854775808 18446744073709551615; do
	damaged; "$UNIT/mpi_fmt_tool" set64 "$TMPD/bad/gfsplit.meta" 20 $big
	refuse "logical size $big" \
		"bad/gfsplit\.meta: logical size $big is past the largest file offset" --check
done
# 2^62 is a legal size: a 4 EiB trailing hole, which costs nothing to check
damaged; "$UNIT/mpi_fmt_tool" set64 "$TMPD/bad/gfsplit.meta" 20 4611686018427387904
expect_exit "logical size 2^62: stat-layout --check passes promptly" 0 sl --check --json "$TMPD/bad"
cp "$OUT" "$TMPD/j"
json_true "  the trailing hole is reported" \
	'j["coverage"]["hole_bytes"] == 2**62 - 300000 and j["coverage"]["first_hole"] == 300000 and j["check"]["ok"]' "$TMPD/j"
merge "$TMPD/bad" "$TMPD/huge" >"$OUT" 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(stat -c %s "$TMPD/huge")" = 4611686018427387904 ] &&
    cmp -s -n 300000 "$src" "$TMPD/huge"; then
	ok "logical size 2^62: merge writes the data and a sparse tail promptly"
elif [ $rc = 1 ] && grep -q "huge.*File too large" "$OUT"; then
	ok "logical size 2^62: merge stops promptly where the file system does (File too large)"
else
	not_ok "logical size 2^62: merge ends promptly" "exit $rc" "$(tail -n 5 "$OUT")"
fi
no_leftovers "  nothing left behind" "$TMPD"
rm -rf "$TMPD/huge" "$TMPD"/.huge.gfsplit-*

# ---- 9: counts checked against each other and the files before allocating
damaged; "$UNIT/mpi_fmt_tool" set32 "$TMPD/bad/gfsplit.meta" 12 16777216
refuse "a 66-byte marker claiming 2^24 ranks" \
	"bad/loc\.0 records 2 processes but .*bad/gfsplit\.meta records 16777216"
# and a location file that agrees with it (re-signed with nprocs 2^24)
"$UNIT/mpi_fmt_tool" set32 "$TMPD/bad/loc.0" 12 16777216
re="bad/gfsplit\.meta records 16777216 processes but its 1 location file \(230 bytes\) can hold at most 2 records"
refuse "marker and loc.0 claiming 2^24 ranks" "$re"
case $BIN in
*/asan/*) skip "2^24 ranks under a 1 GiB address space" "ASan needs terabytes of it" ;;
*)	expect_exit "2^24 ranks: stat-layout under a 1 GiB address space exits 1" 1 \
		sh -c 'ulimit -v 1048576; exec "$0" "$1"' "$BIN/stat-layout" "$TMPD/bad"
	output_has "  refused from the counts, not out of memory" "$re" ;;
esac
# segment size 1 (offset 28): the part checksums no longer match, and merge
# must say so without a table of 150000 segment hashes per part
damaged; "$UNIT/mpi_fmt_tool" set64 "$TMPD/bad/gfsplit.meta" 28 1
expect_exit "segment size 1: merge exits 1" 1 merge "$TMPD/bad" "$TMPD/m1"
output_has "  with the checksum mismatch" "bad/part\.[01]: checksum mismatch"
# peak memory (GNU time: the largest process of the tree) of one rank
peak() { /usr/bin/time -f %M -o "$TMPD/t" timeout -k 5 $T "$MPIEXEC" -n 1 \
	"$BIN/gfsplit-merge" "$@" >/dev/null 2>&1; tail -n 1 "$TMPD/t"; }
a=$(peak "$TMPD/good" "$TMPD/m2") b=$(peak "$TMPD/bad" "$TMPD/m3")
[ -n "$a" ] && [ -n "$b" ] && [ "$b" -lt $((a + 4096)) ] &&
	ok "  its peak memory is that of a good merge (${b} KiB vs ${a} KiB)" ||
	not_ok "  its peak memory is that of a good merge" "segment size 1: ${b} KiB, good: ${a} KiB"
rm -f "$TMPD"/m[1-4]

# ---- 10: readers refuse what --check refuses
# overlapping views in a file without runs: rank 1's disp (loc.0 offset
# 0x84 with node and host "nd") moved 1000 bytes down onto rank 0's
damaged; "$UNIT/mpi_fmt_tool" set64 "$TMPD/bad/loc.0" 0x84 150552
expect_exit "overlapping views: stat-layout --check exits 1" 1 sl --check "$TMPD/bad"
output_has "  and says why" "views of different ranks overlap in 1000 bytes"
expect_exit "overlapping views: merge exits 1" 1 merge "$TMPD/bad" "$TMPD/out"
output_has "  naming the ranks and the range" "bad': views of ranks 0 and 1 overlap at \[150552, 151552\)"
no_leftovers "  merge created nothing" "$TMPD" "$TMPD/out"
rm -rf "$TMPD/out" "$TMPD"/.out.gfsplit-*
if [ $have_mpiio = 1 ]; then
	expect_exit "overlapping views: the MPI-IO read fails" 1 mcat "$TMPD/bad" "$TMPD/cat"
	output_has "  naming the ranks and the range" "bad': views of ranks 0 and 1 overlap at \[150552, 151552\)"
else
	skip "overlapping views: MPI-IO" "no $PRELOAD or $CAT (make)"
fi
# a flipped byte in part.1 (logical 151552 + 5000)
damaged; printf '\377' | dd of="$TMPD/bad/part.1" bs=1 seek=5000 conv=notrunc 2>/dev/null
re="bad/part\.1: checksum mismatch \(recorded 0x[0-9a-f]+, computed 0x[0-9a-f]+\)"
expect_exit "flipped byte: stat-layout --check exits 1" 1 sl --check "$TMPD/bad"
output_has "  naming the part" "$re"
if [ $have_mpiio = 1 ]; then
	expect_exit "flipped byte: the MPI-IO library reads it unverified by default" 0 mcat "$TMPD/bad" "$TMPD/cat"
	check "  the byte as the part holds it" test "$(cmp -l "$src" "$TMPD/cat" | awk '{print $1}')" = $((151552 + 5000 + 1))
	expect_exit "flipped byte: GFSPLIT_VERIFY=1 fails the read" 1 \
		env GFSPLIT_VERIFY=1 timeout -k 5 $T "$MPIEXEC" -n 2 env LD_PRELOAD="$PRE" "$CAT" "$TMPD/bad" "$TMPD/cat"
	output_has "  naming the part and the mismatch" "$re"
	expect_exit "flipped byte: the hint gfsplit_verify=enable fails the read" 1 mcat "$TMPD/bad" "$TMPD/cat" --verify-hint
	output_has "  naming the part and the mismatch" "$re"
	expect_exit "a good file reads verified" 0 \
		env GFSPLIT_VERIFY=1 timeout -k 5 $T "$MPIEXEC" -n 2 env LD_PRELOAD="$PRE" "$CAT" "$TMPD/good" "$TMPD/cat"
	same_bytes "  every byte" "$src" "$TMPD/cat"
else
	skip "flipped byte: MPI-IO" "no $PRELOAD or $CAT (make)"
fi
# a manifest line whose DST is '.' is refused before anything is copied
# ('a/./b' is 'a/b')
E=$TMPD/stage
mkdir -p "$E/d"
make_file "$E/big" 1000000 3
for dst in . ./ .//.; do
	printf '%s %s\n' "$E/big" "$dst" >"$E/manifest"
	expect_exit "manifest DST '$dst': stage-in exits 1" 1 \
		timeout -k 5 $T "$MPIEXEC" -n 1 "$BIN/stage-in" -m "$E/manifest" "$E/d"
	output_has "  naming the line and why" "manifest:1: '$dst' names the destination itself, not a file under it: refused"
	if grep -q "read [1-9]" "$OUT"; then not_ok "  nothing was read" "$(cat "$OUT")"
	else ok "  nothing was read"; fi
	_left=$(find "$E/d" -type f -size +0)
	[ -z "$_left" ] && ok "  nothing left in the destination" ||
		not_ok "  nothing left in the destination" "$_left"
done
printf '%s a/./b\n' "$E/big" >"$E/manifest"
check "manifest DST 'a/./b' is staged" timeout -k 5 $T "$MPIEXEC" -n 1 "$BIN/stage-in" -m "$E/manifest" "$E/d"
same_bytes "  as a/b" "$E/big" "$E/d/a/b"

finish
