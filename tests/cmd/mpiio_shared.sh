#!/bin/bash
# mpiio_shared.sh - MPI-IO's shared file pointer on split files: the preload
# lib/libgfsplit-mpiio.so keeps it in a one-sided counter on rank 0 and
# moves the data like any explicit-offset access (tests/helpers/mpi_shared
# makes the calls: write_ordered in all its forms, write_shared and
# iwrite_shared in both count types, seek_shared with every whence,
# get_position_shared, a set_view in between).  With 1, 3 and 4 ranks:
# the file plain MPICH writes passes the helper's verify and reads back
# under MPICH (so the helper's idea of the file is MPICH's); the same
# program through the preload writes a split directory that stat-layout
# checks and gfsplit-merge turns into a file that verifies, whose ordered
# prefix is byte for byte MPICH's (after it, write_shared blocks lie in an
# order no one fixes; verify finds each once in its slot); the split file
# reads back through the preload with read_ordered and read_shared; wrong
# calls fail on every rank that should fail, without a hang, and leave the
# pointer alone.  Also: the one-time notice comes once, from rank 0, and
# a file that is not selected stays MPICH's.
. "$(dirname "$0")/../lib.sh"

. "$TOP/tests/mpiio_lib.sh"
mpiio_setup "$UNIT/mpi_shared" "MPI-IO shared file pointer tests"
SHARED=$PROG
NOTICE="shared file pointer kept by gfsplit"
# Open MPI's own MPI-IO moves the shared pointer elsewhere than the
# standard says, in one call the helper makes: so there the preload's
# file is held to the helper's model (verify) alone
OMPIO_SEEK_END="OMPIO's MPI_File_seek_shared(MPI_SEEK_END) counts from the start of the file, not of the view (its MPI_File_seek does; Open MPI 4.1.4), and the helper seeks so: the preload's file is held to the helper's model"

start=$(date +%s)
for n in 1 3 4; do
	a=$TMPD/s$n.plain b=$TMPD/s$n.split c=$TMPD/s$n.merged
	if [ "$TEST_MPI" = ompi ]; then
		skip "$n ranks: plain $MPI_NAME writes, verifies and reads it" "$OMPIO_SEEK_END"
		a=
	else
		check "$n ranks: plain $MPI_NAME writes it" plain "$n" write "$a"
		check "$n ranks: the plain $MPI_NAME file verifies" "$SHARED" verify "$a" "$n"
		check "$n ranks: plain $MPI_NAME reads it back with the same calls" plain "$n" read "$a"
	fi
	check "$n ranks: written through the preload" pre "$n" "$TMPD/*.split" write "$b"
	is_split "$n ranks: the selected file is a split directory" "$b" || continue
	check "$n ranks: stat-layout --check" "$BIN/stat-layout" --check "$b"
	check "$n ranks: gfsplit-merge with 3 ranks" mpirun_n 3 "$BIN/gfsplit-merge" "$b" "$c"
	check "$n ranks: the merged split file verifies" "$SHARED" verify "$c" "$n"
	p=$("$SHARED" prefix "$n")
	if [ -z "$a" ]; then
		:
	elif [ -n "$p" ] && [ "$p" -gt 0 ] && cmp -s -n "$p" -- "$a" "$c"; then
		ok "$n ranks: the ordered prefix ($p bytes) equals plain $MPI_NAME's"
	else
		not_ok "$n ranks: the ordered prefix equals plain $MPI_NAME's" \
			"prefix: '$p'" "$(cmp -n "${p:-0}" -- "$a" "$c" 2>&1 | head -n 3)"
	fi
	check "$n ranks: read back through the preload (read_ordered, read_shared, seek_shared)" \
		pre "$n" "" read "$b"
	check "$n ranks: wrong calls fail on every rank and leave the pointer" \
		pre "$n" "" errors "$b"
done

# ---- the notice: once, from rank 0 (MPI_TAG labels each line)
vsel="$TMPD/*.verb"
GFSPLIT_VERBOSE=1 expect_exit "GFSPLIT_VERBOSE=1 write through the preload, 4 ranks" 0 \
	mpirun_n 4 "$MPI_TAG" env LD_PRELOAD="$PRE" GFSPLIT_SPLIT_FILES="$vsel" "$SHARED" write "$TMPD/v.verb"
nl=$(grep -cF -- "$NOTICE" "$OUT")
n0=$(grep -F -- "$NOTICE" "$OUT" | grep -cE "$TAG0")
if [ "$nl" -eq 1 ] && [ "$n0" -eq 1 ] && grep -F -- "$NOTICE" "$OUT" | grep -qF "'$TMPD/v.verb'" &&
    grep -F -- "$NOTICE" "$OUT" | grep -qF "split-written"; then
	ok "the shared-pointer notice comes once, from rank 0, naming the file"
else
	not_ok "the shared-pointer notice comes once, from rank 0, naming the file" \
		"$nl notice lines, $n0 from rank 0, in:" "$(head -n 12 "$OUT")"
fi
expect_exit "read through the preload, 3 ranks" 0 \
	mpirun_n 3 "$MPI_TAG" env LD_PRELOAD="$PRE" "$SHARED" read "$TMPD/s3.split"
nl=$(grep -cF -- "$NOTICE" "$OUT")
n0=$(grep -F -- "$NOTICE" "$OUT" | grep -cE "$TAG0")
if [ "$nl" -eq 1 ] && [ "$n0" -eq 1 ] && grep -F -- "$NOTICE" "$OUT" | grep -qF "read from the split file"; then
	ok "reading, the notice comes once, from rank 0, and says so"
else
	not_ok "reading, the notice comes once, from rank 0, and says so" \
		"$nl notice lines, $n0 from rank 0, in:" "$(head -n 12 "$OUT")"
fi

# ---- a file that is not selected: MPICH's shared file pointer, no notice
if [ "$TEST_MPI" = ompi ]; then
	# the helper's own pointer checks fail on OMPIO: only the file counts
	OUT=$TMPD/ns.out
	pre 3 "$TMPD/*.split" write "$TMPD/ns.plain" >"$OUT" 2>&1
	skip "a file not selected, written under the preload, 3 ranks" "$OMPIO_SEEK_END"
else
	expect_exit "a file not selected, written under the preload, 3 ranks" 0 \
		pre 3 "$TMPD/*.split" write "$TMPD/ns.plain"
fi
if [ -f "$TMPD/ns.plain" ] && [ ! -d "$TMPD/ns.plain" ]; then ok "it is a plain file"
else not_ok "it is a plain file" "$(ls -ld "$TMPD/ns.plain" 2>&1)"; fi
if grep -qF -- "$NOTICE" "$OUT"; then not_ok "no notice for it" "$(grep -F -- "$NOTICE" "$OUT")"
else ok "no notice for it"; fi
if [ "$TEST_MPI" = ompi ]; then skip "it verifies" "$OMPIO_SEEK_END"
else check "it verifies" "$SHARED" verify "$TMPD/ns.plain" 3; fi
echo "# all: $(( $(date +%s) - start ))s"
finish
