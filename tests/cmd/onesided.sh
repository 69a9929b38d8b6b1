#!/bin/sh
# onesided.sh - the one-sided transports (tests/mpi/mpi_onesided) with 1,
# 2, 4 and 8 ranks; 8 oversubscribe a small machine, which is the point:
# the CAS contention and the puts must hold when ranks are descheduled
# mid-operation.  Every check of every run is one line here, "N ranks:"
# in front.
#
# ONESIDED_RANKS: the rank counts to run (default "1 2 4 8"); make
# check-asan takes "1 2 4" (4 ranks oversubscribe its 2 cores already, and
# the 8 take 10 s of its time; make check runs them)
. "$(dirname "$0")/../lib.sh"

prog="$UNIT/mpi_onesided"
if [ ! -x "$prog" ]; then
	skip "onesided" "$prog not built"
	finish; exit
fi

# relay N OUT ERR RC: the program's TAP lines as this script's own (one
# numbering); a failure carries the ranks' reasons from stderr.  A run
# that exits nonzero without a "not ok", or whose checks do not add up
# to its plan (a crash, a hang cut by the timeout), is one more failure.
relay() {
	_n=$1 _out=$2 _err=$3 _rc=$4 _nf=0 _seen=0
	while IFS= read -r _l; do
		case $_l in
		"not ok "*)
			_nf=$((_nf + 1)) _seen=$((_seen + 1)) _d=${_l#not ok }
			not_ok "$_n ranks: ${_d#* - }" "$(grep '^# rank' "$_err" | tail -n 8)" ;;
		"ok "*" # SKIP "*)
			_seen=$((_seen + 1))
			skip "$_n ranks" "${_l#* # SKIP }" ;;
		"ok "*)
			_seen=$((_seen + 1)) _d=${_l#ok }
			ok "$_n ranks: ${_d#* - }" ;;
		esac
	done <"$_out"
	_plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$_out" | tail -n 1)
	if [ "$_rc" -ne 0 ] && [ "$_nf" -eq 0 ]; then
		not_ok "$_n ranks: mpi_onesided exited $_rc without a failed check" \
			"$(tail -n 10 "$_err")"
	elif [ -z "$_plan" ] || [ "$_plan" -ne "$_seen" ]; then
		not_ok "$_n ranks: $_seen checks ran, plan says '${_plan:-none}'" \
			"$(tail -n 10 "$_err")"
	fi
}

for n in ${ONESIDED_RANKS:-1 2 4 8}; do
	mpirun_n "$n" "$prog" >"$TMPD/out.$n" 2>"$TMPD/err.$n"
	relay "$n" "$TMPD/out.$n" "$TMPD/err.$n" $?
	# the run's timings, for whoever reads the log
	grep '^# .* increments in' "$TMPD/out.$n" | sed "s/^# /# $n ranks: /"
done

finish
