#!/bin/bash
# mpiio_pnetcdf.sh - PnetCDF (built from Debian's source package on MPICH,
# tools/build-pnetcdf.sh; Debian's own on Open MPI, tests/ompi.sh) as a
# client of the MPI-IO preload library that no one here wrote.  Each of PnetCDF's own example and test programs runs
# twice, on plain MPICH and with its files selected for split-write; it
# must pass its own checks (most read back what they wrote, in
# collective and independent data mode, nonblocking, varn, vard), and
# every file it leaves must hold, after gfsplit-merge, the bytes MPICH
# wrote.  nc_ior (IOR's NCMPI pattern) writes in independent and
# collective mode, is read back through the library, compared with
# ncmpidiff, and rerun over its own output.
#
# nc_ior and the programs that check what they read only on 4 processes
# (NEED4 below: with fewer they skip their own checks) run on 4 ranks, the
# others on 2: any count does for them, and on a machine of 2 cores 4 ranks
# that spin in MPI's progress wait for each other's time slices (a program
# takes about ten times as long).
#
# PNETCDF_ONLY: a regular expression of the programs to run (all: every
# one the build made); the ASan run takes a subset (Makefile check-asan).
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/mpiio_lib.sh"

NCIOR=$UNIT/nc_ior
PNDIR=$UNIT/pnetcdf
if [ "$(config_var HAVE_PNETCDF)" != yes ]; then
	skip "PnetCDF through the library" \
		"configure found no PnetCDF on $MPI_NAME (tools/install-deps.sh, then ./configure)"
	finish
	exit 0
fi
mpiio_setup "$NCIOR" "PnetCDF through the library"
NCMPIDIFF=$(config_var PNETCDF_BIN)/ncmpidiff
N=4
NEED4='^(examples/C/(bput_varn_uint|i_varn_int64|mput|put_varn_int)|test/nonblocking/(i_varn_indef|i_varn_int64)|test/testcases/(ivarn|mix_collectives))$'
P=$TMPD/plain S=$TMPD/split
mkdir -p "$P" "$S"
# the files PnetCDF makes under $S are split-written
SEL="$S/*"

# merged(DESC, PLAIN, OURS): OURS (a split file, or plain where the
# program made it through MPICH) holds PLAIN's bytes
merged() {
	if [ -d "$3" ]; then
		if ! mpirun_n 2 "$BIN/gfsplit-merge" -q --force "$3" "$3.merged" \
		    >"$TMPD/merge.out" 2>&1; then
			not_ok "$1" "$(cat "$TMPD/merge.out")"
			return 1
		fi
		same_bytes "$1" "$2" "$3.merged"
	else
		same_bytes "$1 (not split: $(stat -c %F "$3" 2>&1))" "$2" "$3"
	fi
}

# ---- nc_ior: IOR's NCMPI pattern
PROG=$NCIOR
for mode in indep coll; do
	o=; [ $mode = coll ] && o=-c
	check "nc_ior $mode on plain $MPI_NAME" plain $N $o -s 3 -b 65536 -t 8192 "$P/ior.$mode.nc"
	check "nc_ior $mode through the library" pre $N "$SEL" $o -s 3 -b 65536 -t 8192 "$S/ior.$mode.nc"
	is_split "its file is a split file" "$S/ior.$mode.nc"
	check "nc_ior $mode reads it back through the library (each rank its neighbour's rows)" \
		pre $N "$SEL" $o -R -x -s 3 -b 65536 -t 8192 "$S/ior.$mode.nc"
	merged "nc_ior $mode: merged, the bytes plain $MPI_NAME wrote" "$P/ior.$mode.nc" "$S/ior.$mode.nc"
	check "ncmpidiff finds the split file equal to $MPI_NAME's (through the library)" \
		mpirun_n 2 env LD_PRELOAD="$PRE" "$NCMPIDIFF" -q "$P/ior.$mode.nc" "$S/ior.$mode.nc"
done
check "nc_ior rerun over its own split output (NC_CLOBBER), other sizes" \
	pre $N "$SEL" -s 2 -b 32768 -t 4096 "$S/ior.indep.nc"
check "plain $MPI_NAME rerun over its own output the same way" \
	plain $N -s 2 -b 32768 -t 4096 "$P/ior.indep.nc"
check "the rerun reads back" pre $N "$SEL" -R -s 2 -b 32768 -t 4096 "$S/ior.indep.nc"
merged "the rerun: merged, the bytes plain $MPI_NAME wrote" "$P/ior.indep.nc" "$S/ior.indep.nc"
check_fails "ncmpidiff tells a different file apart (the check can fail)" \
	mpirun_n 2 env LD_PRELOAD="$PRE" "$NCMPIDIFF" -q "$P/ior.indep.nc" "$S/ior.coll.nc"

# ---- PnetCDF's own programs
# get_vara reads what put_vara wrote: after it
progs=$(cd "$PNDIR" && find . -type f -perm -u+x | sed 's|^\./||' |
	sort -t/ -k3 | sed 's|^\(.*\)/get_vara$|~&|' | sort | sed 's|^~||')
[ -n "${PNETCDF_ONLY:-}" ] && progs=$(echo "$progs" | grep -E "$PNETCDF_ONLY")
for p in $progs; do
	n=$(echo "$p" | tr / _)
	# shellcheck disable=SC2034 # plain and pre (mpiio_lib.sh) run it
	PROG=$PNDIR/$p
	case $n in
	examples_C_get_vara) # reads what put_vara wrote
		args_p=$P/examples_C_put_vara.nc args_s=$S/examples_C_put_vara.nc ;;
	*)	args_p=$P/$n.nc args_s=$S/$n.nc ;;
	esac
	np=2
	echo "$p" | grep -Eq "$NEED4" && np=$N
	plain $np "$args_p" >"$TMPD/$n.plain.out" 2>&1
	prc=$?
	pre $np "$SEL" "$args_s" >"$TMPD/$n.split.out" 2>&1
	src=$?
	if [ $prc -ne 0 ]; then
		skip "PnetCDF $p" "fails on plain $MPI_NAME too (exit $prc): $(tail -n 2 "$TMPD/$n.plain.out")"
		continue
	fi
	if [ $src -eq 0 ] && ! grep -q -- "fail with" "$TMPD/$n.split.out" &&
	    { ! grep -q -- "------ pass" "$TMPD/$n.plain.out" ||
	      grep -q -- "------ pass" "$TMPD/$n.split.out"; }; then
		ok "PnetCDF $p passes its own checks through the library ($np ranks)"
	else
		not_ok "PnetCDF $p passes its own checks through the library" \
			"exit $src" "$(grep -v '^ *$' "$TMPD/$n.split.out" | head -n 8)"
		continue
	fi
	[ "$n" = examples_C_get_vara ] && continue
	# every file it made (some make several: NAME.nc.2.4.0.nc ...)
	for f in "$P/$n.nc"*; do
		[ -e "$f" ] || continue
		case $f in *.merged) continue ;; esac
		merged "PnetCDF $p: $(basename "$f") holds $MPI_NAME's bytes" "$f" "$S/${f#"$P/"}"
	done
done
finish
