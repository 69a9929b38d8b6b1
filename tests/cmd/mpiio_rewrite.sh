#!/bin/bash
# mpiio_rewrite.sh - a file rewritten in place through the preload
# lib/libgfsplit-mpiio.so takes the space of one copy: a rank's rewrite of
# its own bytes goes over them in its part (tests/helpers/mpi_rewrite writes
# every rank's blocks round after round, in collective and independent
# calls, through a file view, in pieces, partly new, and over bytes a
# neighbour wrote in between, and checks what it reads back).  Each
# pattern runs on MPICH alone and through the preload; the split file
# passes stat-layout --check (its part checksums too, hashed again where
# rewrites changed them), merges to MPICH's bytes exactly, and its parts
# hold no more than the distinct bytes the ranks wrote.
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpiio_lib.sh"
mpiio_setup "$UNIT/mpi_rewrite" "MPI-IO in-place rewrite tests"

# parts_total SPLIT: the bytes of all its parts, from stat-layout --json
parts_total() {
	"$BIN/stat-layout" --json "$1" >"$TMPD/sl.json" &&
		json_get "$TMPD/sl.json" 'sum(r["part_size"] for r in j["parts"])'
}

# rewrite N PATTERN ROUNDS BLOCK SEGMENTS
rewrite() {
	rn=$1 rp=$2
	shift 2
	ra=$TMPD/$rp.$rn rb=$TMPD/$rp.$rn.split
	expect_exit "$rn ranks, $rp: $MPI_NAME rewrites its file $1 times" 0 plain "$rn" "$rp" "$ra" "$@"
	rdistinct=$(sed -n 's/^distinct //p' "$OUT")
	check "$rn ranks, $rp: the preload, the same" pre "$rn" "$TMPD/*.split" "$rp" "$rb" "$@"
	is_split "$rn ranks, $rp: a split file" "$rb" || return
	check "$rn ranks, $rp: stat-layout --check (checksums of rewritten parts)" \
		"$BIN/stat-layout" --check "$rb"
	check "$rn ranks, $rp: gfsplit-merge" mpirun_n 2 "$BIN/gfsplit-merge" -q "$rb" "$rb.merged"
	same_bytes "$rn ranks, $rp: merged, the bytes plain $MPI_NAME wrote" "$ra" "$rb.merged"
	rtotal=$(parts_total "$rb")
	if [ -n "$rdistinct" ] && [ -n "$rtotal" ] && [ "$rtotal" -le "$rdistinct" ]; then
		ok "$rn ranks, $rp: the parts hold $rtotal bytes, each written byte once ($rdistinct)"
	else
		not_ok "$rn ranks, $rp: the parts hold each written byte once" \
			"parts: ${rtotal:-?} bytes, distinct bytes written: ${rdistinct:-?}"
	fi
	rm -rf "$ra" "$rb" "$rb.merged"
}

for n in 1 3; do
	for p in coll indep view halves neighbour grow; do
		rewrite "$n" "$p" 3 4096 8
	done
done
# larger blocks (several checksum segments of a part rewritten)
rewrite 3 indep 4 $((320 * 1024)) 6
rewrite 2 view 3 $((1024 * 1024 + 7)) 3
finish
