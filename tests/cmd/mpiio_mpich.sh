#!/bin/bash
# mpiio_mpich.sh - where MPI leaves the answer to the implementation, the
# preload lib/libgfsplit-mpiio.so answers as MPICH (ROMIO) does on a local
# file system (error classes, info, sequential mode, external32).
# tests/helpers/mpi_conform makes the
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
#   info     MPI_File_get_info after an open with hints (some of which
#            depend on the communicator: cb_nodes, cb_config_list),
#            set_info and a set_view with hints: the same key=value list
#   seq      MPI_MODE_SEQUENTIAL: write_ordered, write_shared, set_view
#            with MPI_DISPLACEMENT_CURRENT (three times, one view strided),
#            more writes: the same views, the same bytes
#   ext32    "external32" (and "EXTERNAL32", "internal") views: ints
#            through a strided view, doubles, shorts from a strided memory
#            type, read back in external32 and native: the same values,
#            the same bytes; and each read and write call once through
#            an external32 view (some convert in MPICH, some do not)
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpiio_lib.sh"
mpiio_setup "$UNIT/mpi_conform" "MPI-IO answers as MPICH's"

# same_as_mpich DESC GUARD N SEL MODE A B [SPLIT..]: one check.  mpi_conform
# MODE runs on MPICH alone (argument A) and under the preload (argument B,
# paths matching SEL selected); ok if both succeed, MPICH's output matches
# the regex GUARD (so that the comparison is not vacuous), every SPLIT is a
# split file, and the outputs are equal.  The outputs stay in A.out, B.out.
same_as_mpich() {
	_d=$1 _g=$2 _n=$3 _sel=$4 _m=$5 _a=$6 _b=$7
	shift 7
	if ! plain "$_n" "$_m" "$_a" >"$_a.out" 2>"$_a.err"; then
		not_ok "$_d" "MPICH alone failed:" "$(tail -n 8 "$_a.err")"; return 1
	fi
	if ! grep -Eq -- "$_g" "$_a.out"; then
		not_ok "$_d" "MPICH's output lacks /$_g/:" "$(head -n 8 "$_a.out")"; return 1
	fi
	if ! pre "$_n" "$_sel" "$_m" "$_b" >"$_b.out" 2>"$_b.err"; then
		not_ok "$_d" "under the preload it failed:" "$(tail -n 8 "$_b.err")"; return 1
	fi
	for _s; do
		if [ ! -f "$_s/gfsplit.meta" ]; then
			not_ok "$_d" "not a split file: $_s" "$(ls -ld "$_s" 2>&1)"; return 1
		fi
	done
	if cmp -s -- "$_a.out" "$_b.out"; then ok "$_d"
	else not_ok "$_d" "MPICH alone < > under the preload:" "$(diff -- "$_a.out" "$_b.out" | head -n 20)"; return 1; fi
}
# same_merged DESC SPLIT FILE: gfsplit-merge of SPLIT is FILE, byte for byte
same_merged() {
	if ! mpirun_n 2 "$BIN/gfsplit-merge" "$2" "$2.merged" >"$TMPD/.merge" 2>&1; then
		not_ok "$1" "gfsplit-merge failed:" "$(tail -n 5 "$TMPD/.merge")"
	else
		same_bytes "$1" "$3" "$2.merged"
	fi
}

# ---- item 6: invalid calls, every class MPICH's (rows of every kind
# of handle; the guard: MPICH refuses a decreasing filetype)
for n in 1 2; do
	p=$TMPD/p$n s=$TMPD/s$n
	mkdir -p "$p" "$s"
	same_as_mpich "$n ranks: each invalid call fails with MPICH's class, on a file split-written, read and sequential" \
		'^sequential write +MPI_ERR_UNSUPPORTED_OPERATION' "$n" "$s/e.*" errors "$p" "$s" "$s/e.w" "$s/e.q"
done

# ---- item 5: hints (the guard: MPICH makes an aggregator of each of the
# 2 ranks, as the hints given at the open ask)
same_as_mpich "get_info returns MPICH's keys and values after open, set_info and set_view, 2 ranks" \
	'^romio_aggregator_list=0 1' 2 "$TMPD/*.split" info "$TMPD/i" "$TMPD/i.split" "$TMPD/i.split"

# ---- items 4 and 7: MPI_MODE_SEQUENTIAL with MPI_DISPLACEMENT_CURRENT,
# and external32
for n in 1 3; do
	a=$TMPD/seq$n b=$TMPD/seq$n.split
	same_as_mpich "MPI_MODE_SEQUENTIAL, $n ranks: MPI_DISPLACEMENT_CURRENT gives MPICH's views" \
		'^strided: disp [1-9][0-9]* ' "$n" "$TMPD/*.split" seq "$a" "$b" "$b"
	same_merged "MPI_MODE_SEQUENTIAL, $n ranks: merged, the split file holds MPICH's bytes" "$b" "$a"
	a=$TMPD/ext$n b=$TMPD/ext$n.split
	same_as_mpich "external32, $n ranks: MPICH's views, extents and values read back" \
		'datarep external32' "$n" "$TMPD/*.split" ext32 "$a" "$b" "$b"
	same_merged "external32, $n ranks: merged, the split file holds MPICH's bytes" "$b" "$a"
done
# which calls convert (MPICH's nonblocking independent calls and
# read_ordered do not)
a=$TMPD/calls b=$TMPD/calls.split
same_as_mpich "external32: each read and write call converts where MPICH's does" \
	'^slot  5: 05 03 02 01' 1 "$TMPD/*.split" ext32-calls "$a" "$b" "$b"
same_merged "external32, each call: merged, the split file holds MPICH's bytes" "$b" "$a"
finish
