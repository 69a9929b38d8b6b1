#!/bin/bash
# mpiio_rdwr.sh - a file opened again for writing through the preload
# lib/libgfsplit-mpiio.so keeps what MPI keeps (tests/helpers/mpi_rdwr makes
# the calls and checks every read against its model of the file): the old
# bytes stay where nothing new lands, a rank reads its own writes at once
# and the other ranks' after sync + barrier + sync, MPI_File_set_size cuts
# the old bytes too, and the file grows past its old end.  With 1 and 3
# ranks the program first passes on MPICH alone (so its model is MPICH's);
# through the preload, the old file is a split file or a plain one, and the
# result is a split file that stat-layout checks and gfsplit-merge turns
# into MPICH's bytes exactly (the program's model depends on the rank
# count, so a file is checked with as many ranks as wrote it).  Also:
# MPI_MODE_DELETE_ON_CLOSE on an old file removes it, as MPICH does; and
# overlapping writes that MPI orders in time (sync-barrier-sync, later
# collective calls, a nonblocking collective over a collective's zeros)
# keep the later write, as under MPICH (format v3 epochs).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpiio_lib.sh"
mpiio_setup "$UNIT/mpi_rdwr" "MPI-IO read-write tests"

for n in 1 3; do
	a=$TMPD/p$n b=$TMPD/p$n.split
	# MPICH alone: the program's model is MPICH's
	check "$n ranks: $MPI_NAME creates the file" plain "$n" create "$a"
	cp "$a" "$a.cut"
	check "$n ranks: $MPI_NAME reopens it RDWR: old bytes, own writes, others' after sync" \
		plain "$n" update "$a"
	check "$n ranks: $MPI_NAME: the updated file is the model's" plain "$n" check "$a" updated
	check "$n ranks: $MPI_NAME cuts a copy with set_size and writes past the cut" plain "$n" cut "$a.cut"
	check "$n ranks: $MPI_NAME: the cut file is the model's" plain "$n" check "$a.cut" cut

	# the same through the preload, the old file a split file
	check "$n ranks: the preload creates a split file" pre "$n" "$TMPD/*.split" create "$b"
	is_split "$n ranks: it is a split directory" "$b" || continue
	cp -r "$b" "$b.cut.split"
	check "$n ranks: the preload reopens it RDWR: old bytes, own writes, others' after sync" \
		pre "$n" "$TMPD/*.split" update "$b"
	check "$n ranks: stat-layout --check of the updated split file" "$BIN/stat-layout" --check "$b"
	check "$n ranks: the updated split file reads back as the model's" pre "$n" "" check "$b" updated
	check "$n ranks: gfsplit-merge of the updated split file" mpirun_n 2 "$BIN/gfsplit-merge" "$b" "$b.merged"
	same_bytes "$n ranks: merged, it equals $MPI_NAME's updated file" "$a" "$b.merged"
	check "$n ranks: the preload cuts a copy with set_size and writes past the cut" \
		pre "$n" "$TMPD/*.split" cut "$b.cut.split"
	check "$n ranks: gfsplit-merge of the cut split file" mpirun_n 2 "$BIN/gfsplit-merge" "$b.cut.split" "$b.cut.merged"
	same_bytes "$n ranks: merged, it equals $MPI_NAME's cut file" "$a.cut" "$b.cut.merged"
done

# the old file a plain one: selected, it becomes a split file with its bytes
check "$MPI_NAME creates a plain file, 3 ranks" plain 3 create "$TMPD/q.sel"
check "the preload reopens the plain file RDWR, selected, 3 ranks" pre 3 "$TMPD/*.sel" update "$TMPD/q.sel"
is_split "the plain file became a split directory" "$TMPD/q.sel" &&
	check "it reads back as the model's updated file" pre 3 "" check "$TMPD/q.sel" updated
check "merge it" mpirun_n 2 "$BIN/gfsplit-merge" "$TMPD/q.sel" "$TMPD/q.merged"
same_bytes "merged, it equals $MPI_NAME's updated file" "$TMPD/p3" "$TMPD/q.merged"

# what MPI orders, the later write wins: ordered MODE WHAT runs mpi_rdwr
# MODE (order: sync-barrier-sync and later collective calls; atomic: the
# same in atomic mode, ordered by barriers alone) on MPI alone and through
# the preload, with 1 to 3 ranks.  Overlapping writes of different ranks
# in two collective calls are ordered by MPI only with sync-barrier-sync
# between them; ROMIO keeps the later one anyway, and so does the preload,
# but Open MPI's OMPIO need not (with 2 ranks it keeps the earlier): there
# the preload's file is held to the model alone, saying so.
ordered() {
	mode=$1 what=$2
	for n in 1 2 3; do
		a=$TMPD/$mode$n b=$TMPD/$mode$n.split
		if plain "$n" "$mode" "$a" >"$TMPD/plain.out" 2>&1 &&
		    plain "$n" check "$a" ordered >>"$TMPD/plain.out" 2>&1; then
			ok "$n ranks: $MPI_NAME, $what: the file is the model's"
		elif [ "$TEST_MPI" = ompi ] && [ "$mode" = order ]; then
			skip "$n ranks: $MPI_NAME, $what" "OMPIO does not order two collective calls' overlapping writes without sync-barrier-sync (MPI leaves it open): the preload's file is held to the model alone"
			a=
		else
			not_ok "$n ranks: $MPI_NAME, $what: the file is the model's" "$(tail -n 8 "$TMPD/plain.out")"
		fi
		check "$n ranks: the preload, $what, read back after sync" \
			pre "$n" "$TMPD/*.split" "$mode" "$b"
		is_split "$n ranks: it is a split directory" "$b" || continue
		check "$n ranks: stat-layout --check of it" "$BIN/stat-layout" --check "$b"
		check "$n ranks: it reads back through the preload as the model's" \
			pre "$n" "" check "$b" ordered
		check "$n ranks: gfsplit-merge of it" mpirun_n 2 "$BIN/gfsplit-merge" "$b" "$b.merged"
		[ -n "$a" ] && same_bytes "$n ranks: merged, it equals what $MPI_NAME wrote" "$a" "$b.merged"
	done
}
ordered order "ordered overlapping writes keep the later one"
ordered atomic "atomic mode: writes ordered by a barrier keep the later one"

# stat-layout --check finds what no MPI program can rely on: two ranks'
# different bytes over the same range in one epoch (the ordered files
# above, whose later epochs overwrite, pass it)
check "the preload writes a file where 3 ranks race at 0 and at B" pre 3 "$TMPD/*.split" race "$TMPD/race.split"
expect_exit "stat-layout --check fails on it" 1 "$BIN/stat-layout" --check "$TMPD/race.split"
output_has "it names the ranks and the range at 0" "ranks 0 and 1 wrote different bytes to \[0, 50\) in one epoch"
output_has "and the range at B" "ranks 0 and 2 wrote different bytes to \[8192, 8242\) in one epoch"

# reads in atomic mode would not show the other ranks' writes at once:
# refused, loudly (the writes themselves are kept)
check "$MPI_NAME: in atomic mode a rank reads its neighbour's write at once, 2 ranks" \
	plain 2 atomic-read "$TMPD/ar"
expect_exit "the preload refuses that read, 2 ranks" 1 pre 2 "$TMPD/*.split" atomic-read "$TMPD/ar.split"
output_has "it says why, naming the file" "ar.split': reads in atomic mode of a split file open for writing are not supported"
output_has "through the file's error handler, as MPI_ERR_UNSUPPORTED_OPERATION" "read_at in atomic mode: (Unsupported file operation|MPI_ERR_UNSUPPORTED_OPERATION)"

# other ranks' bytes without MPI_File_sync, where ROMIO shows them: after
# a collective call, after MPI_Barrier, and through a second handle on
# MPI_COMM_SELF (PnetCDF's independent data mode) whose bytes must be in
# the one file the first handle commits
for n in 2 3; do
	check "$n ranks: $MPI_NAME reads other ranks' bytes with no sync (mpi_rdwr unsynced)" \
		plain "$n" unsynced "$TMPD/u$n"
	check "$n ranks: $MPI_NAME: the file is the model's" plain "$n" check "$TMPD/u$n" updated
	check "$n ranks: the preload, the same" pre "$n" "$TMPD/*.split" unsynced "$TMPD/u$n.split"
	check "$n ranks: stat-layout --check of it" "$BIN/stat-layout" --check "$TMPD/u$n.split"
	check "$n ranks: it reads back as the model's (both handles' bytes)" \
		pre "$n" "" check "$TMPD/u$n.split" updated
	check "$n ranks: gfsplit-merge of it" mpirun_n 2 "$BIN/gfsplit-merge" -q "$TMPD/u$n.split" "$TMPD/u$n.merged"
	same_bytes "$n ranks: merged, the bytes plain $MPI_NAME wrote" "$TMPD/u$n" "$TMPD/u$n.merged"
done

# a handle per process on one path (every rank opens it on MPI_COMM_SELF):
# MPICH gives the union of their writes; the library cannot join writers
# of different processes, and must not let the last commit silently win
check "$MPI_NAME: 3 ranks open one file on MPI_COMM_SELF each and write" plain 3 self "$TMPD/self"
expect_exit "the preload: every handle but the first to commit fails, 3 ranks" 1 \
	pre 3 "$TMPD/*.split" self "$TMPD/self.split"
output_has "it says why, naming the file" "self.split' was created by someone else while this copy was being written"
is_split "one copy is committed whole" "$TMPD/self.split" &&
	check "stat-layout --check of it" "$BIN/stat-layout" --check "$TMPD/self.split"
if ls -a "$TMPD" | grep -q 'self\.split\.gfsplit'; then not_ok "no temporary is left" "$(ls -a "$TMPD")"
else ok "no temporary is left"; fi

# delete on close: the old file goes too
check "the preload creates d.split, 2 ranks" pre 2 "$TMPD/*.split" create "$TMPD/d.split"
check "open it with MPI_MODE_DELETE_ON_CLOSE and write (mpi_rdwr delete)" \
	pre 2 "$TMPD/*.split" delete "$TMPD/d.split"
if [ ! -e "$TMPD/d.split" ] && ! ls -a "$TMPD" | grep -q 'd\.split'; then ok "d.split is gone, and no temporary of it is left"
else not_ok "d.split is gone, and no temporary of it is left" "$(ls -a "$TMPD")"; fi
finish
