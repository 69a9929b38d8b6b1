#!/bin/bash
# mpiio_mpich.sh - where MPI leaves the answer to the implementation, the
# preload lib/libgfsplit-mpiio.so answers as MPICH (ROMIO) does on a local
# file system (issue 33, items 4-7).  tests/unit/mpi_conform makes the
# same calls on MPICH alone and under the preload, and every check here
# compares the two: what the program prints (rank 0) and, for the files
# it writes, MPICH's bytes with the split file's after gfsplit-merge.
#
#   errors   a table of invalid calls (set_view with bad types,
#            displacements and datareps, seeks, negative offsets and
#            counts, null and uncommitted datatypes, reads and writes the
#            access mode forbids, MPI_MODE_SEQUENTIAL's refusals, bad
#            amodes at open) on a file selected for split-write, on that
#            split file opened read-only and on a sequential one: the same
#            MPI error class for every row
#   info     MPI_File_get_info after an open with hints, set_info and a
#            set_view with hints: the same key=value list
#   seq      MPI_MODE_SEQUENTIAL: write_ordered, write_shared, set_view
#            with MPI_DISPLACEMENT_CURRENT (three times, one view strided),
#            more writes: the same views, the same bytes
#   ext32    "external32" (and "EXTERNAL32", "internal") views: ints
#            through a strided view, doubles, shorts from a strided memory
#            type, read back in external32 and native: the same values,
#            the same bytes
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpiio_lib.sh"
mpiio_setup "$UNIT/mpi_conform" "MPI-IO answers as MPICH's"

# to OUT CMD..: CMD's stdout in OUT, its stderr shown if it fails
to() {
	_o=$1; shift
	"$@" >"$_o" 2>"$_o.err" || { cat "$_o.err"; return 1; }
}
# same_output DESC A B: A and B (program outputs) are equal and not empty
same_output() {
	if [ -s "$2" ] && cmp -s -- "$2" "$3"; then ok "$1"
	else not_ok "$1" "$(diff -- "$2" "$3" 2>&1 | head -n 20)"; fi
}
merged() {
	check "$1: gfsplit-merge of the split file" mpirun_n 2 "$BIN/gfsplit-merge" "$2" "$2.merged"
	same_bytes "$1: merged, it holds MPICH's bytes" "$3" "$2.merged"
}

# ---- item 6: invalid calls, every class MPICH's
for n in 1 2; do
	p=$TMPD/p$n s=$TMPD/s$n
	mkdir -p "$p" "$s"
	check "$n ranks: MPICH answers the table of invalid calls" to "$p.out" plain "$n" errors "$p"
	rows=$(grep -c 'MPI_' "$p.out")
	if [ "$rows" -ge 100 ] && grep -q 'view decreasing  *MPI_ERR_IO' "$p.out"; then
		ok "$n ranks: MPICH's table has $rows rows"
	else
		not_ok "$n ranks: MPICH's table has its rows" "$(head -n 5 "$p.out")"
	fi
	check "$n ranks: the preload answers the table, its files selected" \
		to "$s.out" pre "$n" "$s/e.*" errors "$s"
	is_split "$n ranks: the write-only file became a split file" "$s/e.w"
	is_split "$n ranks: so did the sequential one" "$s/e.q"
	same_output "$n ranks: every error class is MPICH's" "$p.out" "$s.out"
done

# ---- item 5: hints
check "MPICH: get_info after open, set_info, set_view, 2 ranks" to "$TMPD/i.out" plain 2 info "$TMPD/i"
if grep -q '^romio_ds_write=disable$' "$TMPD/i.out" && grep -q '^cb_buffer_size=2097152$' "$TMPD/i.out"; then
	ok "MPICH returns the hints given"
else
	not_ok "MPICH returns the hints given" "$(head -n 20 "$TMPD/i.out")"
fi
check "the preload: the same calls on a split file, 2 ranks" to "$TMPD/i.split.out" \
	pre 2 "$TMPD/*.split" info "$TMPD/i.split"
is_split "it is a split file" "$TMPD/i.split"
same_output "get_info returns MPICH's keys and values" "$TMPD/i.out" "$TMPD/i.split.out"

# ---- items 4 and 7: MPI_MODE_SEQUENTIAL with MPI_DISPLACEMENT_CURRENT,
# and external32
for mode in seq ext32; do
	for n in 1 3; do
		a=$TMPD/$mode$n b=$TMPD/$mode$n.split
		check "$mode, $n ranks: MPICH" to "$a.out" plain "$n" "$mode" "$a"
		check "$mode, $n ranks: the preload" to "$b.out" pre "$n" "$TMPD/*.split" "$mode" "$b"
		is_split "$mode, $n ranks: a split file" "$b" || continue
		same_output "$mode, $n ranks: the same views, positions and values" "$a.out" "$b.out"
		merged "$mode, $n ranks" "$b" "$a"
	done
done
finish
