#!/bin/sh
# agree.sh - collective error agreement, rank-tagged error logging and the
# progress engine, across 3 ranks (tests/mpi/mpi_agree).
. "$(dirname "$0")/../lib.sh"

prog="$UNIT/mpi_agree"
if [ ! -x "$prog" ]; then
	skip "agree" "$prog not built"
	finish; exit
fi

# 1. the program's own checks, with the progress line forced on
GFSPLIT_PROGRESS=1 mpirun_n 3 "$prog" >"$TMPD/out" 2>"$TMPD/err"
rc=$?
if [ $rc -eq 0 ]; then ok "mpi_agree -n 3 exits 0"
else not_ok "mpi_agree -n 3 exits 0" "exit $rc" "$(tail -n 20 "$TMPD/out" "$TMPD/err")"; fi
nplan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$TMPD/out")
nok=$(grep -c '^ok [0-9]' "$TMPD/out")
if [ -n "$nplan" ] && [ "$nplan" -ge 15 ] && [ "$nok" -eq "$nplan" ] &&
   ! grep -q '^not ok' "$TMPD/out"; then
	ok "all $nplan collective checks pass"
else
	not_ok "all collective checks pass" "plan '$nplan', $nok ok" \
		"$(grep -v '^ok' "$TMPD/out" | head -n 20)"
fi

# 2. the one real failure is printed, tagged with its rank; the echoes
#    (GFSP_EPEER on ranks 0 and 2) are not, at the normal level
want="mpi_agree: rank 1: cannot write 'x.split/part.1': No space left on device"
n=$(grep -cxF "$want" "$TMPD/err")
if [ "$n" -eq 1 ]; then ok "rank 1's error printed once with its rank"
else not_ok "rank 1's error printed once with its rank" "found $n times in:" "$(head -n 20 "$TMPD/err")"; fi
if grep -q 'rank 1 failed' "$TMPD/err"; then
	not_ok "peer failures are not echoed without -v" "$(grep 'rank 1 failed' "$TMPD/err")"
else ok "peer failures are not echoed without -v"; fi

# 3. progress: rank 0 sums every rank's count (3 x 1 KiB) and ends at 100%
if grep -Eq '^mpi_agree progress: 3\.00 KiB / 3\.00 KiB +100% .* in [0-9]+:[0-9][0-9]$' "$TMPD/err"
then ok "final progress line sums all ranks: 3.00 KiB / 3.00 KiB 100%"
else not_ok "final progress line sums all ranks" "$(grep progress "$TMPD/err" | tail -n 5)"; fi
if grep -Eq '^mpi_agree progress: .* ETA [0-9]+:[0-9][0-9]$' "$TMPD/err"
then ok "intermediate progress lines with an ETA"
else not_ok "intermediate progress lines with an ETA" "$(grep progress "$TMPD/err" | head -n 5)"; fi
# a rank that only finishes still delivers its count
if grep -Eq '^idle: 50 B / 100 B +50% ' "$TMPD/err"
then ok "count of a rank that updated once reaches rank 0"
else not_ok "count of a rank that updated once reaches rank 0" "$(grep '^idle' "$TMPD/err")"; fi
n=$(grep -c '^mpi_agree progress: .* in [0-9]' "$TMPD/err")
if [ "$n" -eq 1 ]; then ok "only rank 0 prints the final line"
else not_ok "only rank 0 prints the final line" "found $n"; fi
if grep -Eq '^local: 4\.00 KiB / 4\.00 KiB +100% ' "$TMPD/err"
then ok "progress without a communicator"
else not_ok "progress without a communicator" "$(grep '^local' "$TMPD/err")"; fi

# 4. stderr is not a terminal and nothing forces it: no progress line
(unset GFSPLIT_PROGRESS; mpirun_n 3 "$prog") >"$TMPD/out2" 2>"$TMPD/err2"
rc=$?
if [ $rc -eq 0 ] && ! grep -q '%' "$TMPD/err2" && grep -q '^1\.\.' "$TMPD/out2"
then ok "no progress line when stderr is not a terminal"
else not_ok "no progress line when stderr is not a terminal" "exit $rc" "$(head -n 5 "$TMPD/err2")"; fi

# 5. with -v the peer failures are reported too
mpirun_n 3 "$prog" -v >"$TMPD/out3" 2>"$TMPD/err3"
n=$(grep -c '^mpi_agree: rank [02]: rank 1 failed: no space left on device$' "$TMPD/err3")
if [ "$n" -eq 2 ]; then ok "with -v, ranks 0 and 2 report that rank 1 failed"
else not_ok "with -v, ranks 0 and 2 report that rank 1 failed" "found $n" "$(head -n 10 "$TMPD/err3")"; fi

finish
