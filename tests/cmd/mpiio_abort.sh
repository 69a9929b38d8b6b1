#!/bin/bash
# mpiio_abort.sh - a program that ends the job with MPI_Abort while a
# split-write is open (PnetCDF and HDF5 do on errors) leaves no temporary
# of it under the preload lib/libgfsplit-mpiio.so: the aborting rank
# removes its open writers' temporaries before MPICH ends the job, and
# the destination keeps what it held before the open (nothing, an old
# split file, an old plain file).  tests/helpers/mpi_rdwr abort writes, then
# its last rank calls MPI_Abort(MPI_COMM_WORLD, 3).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpiio_lib.sh"
mpiio_setup "$UNIT/mpi_rdwr" "MPI-IO MPI_Abort tests"

for n in 1 3; do
	d=$TMPD/new$n
	mkdir -p "$d"
	expect_exit "$n ranks: MPI_Abort while a new split file is written: exit 3" 3 \
		pre "$n" "$d/*.split" abort "$d/a.split"
	no_leftovers "$n ranks: no split file and no temporary is left" "$d" "$d/a.split"

	# over an old split file: it stays as it was
	d=$TMPD/old$n
	mkdir -p "$d"
	check "$n ranks: MPICH writes the reference file" plain "$n" create "$d/ref"
	check "$n ranks: the preload writes the old split file" pre "$n" "$d/*.split" create "$d/a.split"
	expect_exit "$n ranks: MPI_Abort while it is rewritten: exit 3" 3 \
		pre "$n" "$d/*.split" abort "$d/a.split"
	no_leftovers "$n ranks: no temporary is left" "$d"
	check "$n ranks: stat-layout --check of the old split file" "$BIN/stat-layout" --check "$d/a.split"
	check "$n ranks: merge it" mpirun_n 2 "$BIN/gfsplit-merge" -q "$d/a.split" "$d/a.merged"
	same_bytes "$n ranks: it holds its bytes from before the open" "$d/ref" "$d/a.merged"

	# over an old plain file selected for split-write: it stays as it was
	cp "$d/ref" "$d/p.split"
	expect_exit "$n ranks: MPI_Abort while an old plain file is rewritten: exit 3" 3 \
		pre "$n" "$d/*.split" abort "$d/p.split"
	no_leftovers "$n ranks: no temporary is left" "$d"
	same_bytes "$n ranks: the plain file holds its bytes from before the open" "$d/ref" "$d/p.split"
done
finish
