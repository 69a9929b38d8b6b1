#!/bin/bash
# mpiio_diff.sh - randomized differential test of the MPI-IO preload
# lib/libgfsplit-mpiio.so: tests/helpers/mpi_fuzzio makes seeded random jobs
# (views from every datatype constructor, every access path in every
# form, memory types of every kind, phases with sync-barrier-sync between
# them, later phases over other ranks' bytes, second handles on the path
# on MPI_COMM_SELF or a dup'ed communicator, collective reads of other
# ranks' bytes after a barrier without MPI_File_sync, the file closed and
# opened again or removed (MPI_File_delete, unlink, remove) and created
# again with MPI_MODE_EXCL, MPI_MODE_SEQUENTIAL jobs whose views start at
# MPI_DISPLACEMENT_CURRENT) and knows the file MPI defines for each (its
# model; the file after the last close is what is compared).  Seed s runs with N ranks (1-4, from the
# seed), in batches of jobs per mpiexec, and is checked in three groups:
#
#   reference  jobs kept to what MPICH 4.0.2's ROMIO does right, so plain
#              MPICH is a valid reference: it writes file A, which must be
#              the model's bytes; the preload writes split file B, a split
#              directory that stat-layout --check passes; gfsplit-merge
#              with 1-4 ranks makes C; cmp A C.  Then M != N ranks read A
#              with plain MPICH and B through the preload, through other
#              random views and memory types: each read is checked against
#              the model, and the two dumps of what was read (and from
#              where) must be the same (cmp)
#   full       --full: everything MPI allows, also what ROMIO gets wrong
#              (mpi_fuzzio.c lists it); the preload alone, against the model
#   no overlap --no-overlap-epochs: no phase rewrites another rank's bytes
#              (if only the reference jobs fail, the epochs broke)
#
# One TAP line per check over all jobs; a failure lists up to 10 seeds
# with what differs (the byte, the values, which access wrote it, or the
# error) and the commands that reproduce it.  The end says how many jobs
# ran, what they covered (constructors, memory kinds, access paths) and
# how long it took.  A failed preload write is reported once: the later
# checks of that seed are not made.
#
#   FUZZ_CASES=64            reference jobs (full: a quarter, no overlap: a fifth;
#                            32 with the sanitized library, which is slower)
#   FUZZ_FULL_CASES, FUZZ_OVERLAP_CASES
#   FUZZ_SEED=1000000        first seed (FUZZ_SEED=random: from the clock)
#   FUZZ_BATCH=10            jobs per mpiexec (MPI start-up is not free)
#   FUZZ_SHARE=K/M           only the batches whose number (from 0, in each
#                            group) is K modulo M: make check runs 0/2 and
#                            make check-asan 1/2 with FUZZ_CASES=64, so the two
#                            passes share the 64 jobs, each job run once
#   FUZZ_OPTS=               more mpi_fuzzio options (e.g. --no-bottom; --no-alias,
#                            --no-unsync-read, --no-recreate, --no-dispcur turn
#                            off one of the features above each)
#   make check-long          the same with FUZZ_CASES=5000
. "$(dirname "$0")/../lib.sh"

. "$TOP/tests/mpiio_lib.sh"
mpiio_setup "$UNIT/mpi_fuzzio" "MPI-IO differential fuzz tests"
FUZZ=$PROG

case $PRELOAD in
*/asan/*) CASES=${FUZZ_CASES:-32} ;;
*) CASES=${FUZZ_CASES:-64} ;;
esac
FULL=${FUZZ_FULL_CASES:-$((CASES / 4))}
OVER=${FUZZ_OVERLAP_CASES:-$((CASES / 5))}
BATCH=${FUZZ_BATCH:-10}
SHARE=${FUZZ_SHARE:-0/1}
SHARE_K=${SHARE%/*} SHARE_M=${SHARE#*/}
case $SHARE_K/$SHARE_M in
*[!0-9/]*|/*|*/) echo "mpiio_diff.sh: FUZZ_SHARE: K/M, two numbers, please" >&2; exit 2 ;;
esac
[ "$SHARE_K" -lt "$SHARE_M" ] || { echo "mpiio_diff.sh: FUZZ_SHARE: K must be less than M" >&2; exit 2; }
# mine I: the batch starting at job I is this run's share
mine() { [ $(( $1 / BATCH % SHARE_M )) -eq "$SHARE_K" ]; }
BASE=${FUZZ_SEED:-1000000}
[ "$BASE" = random ] && BASE=$(( $(date +%s) % 1000000 * 1000 ))
OPTS=${FUZZ_OPTS:-}
MAXLIST=10
start=$(date +%s)
share=""
[ "$SHARE" = 0/1 ] || share="; batches $SHARE_K modulo $SHARE_M of $CASES, $FULL and $OVER jobs (FUZZ_SHARE=$SHARE)"
echo "# seeds from $BASE (FUZZ_SEED=$BASE repeats this run), $BATCH jobs per mpiexec${OPTS:+, options $OPTS}$share"

# ranks of a seed's writers (1-4), readers (1-4, not N when N > 1) and merge
nranks() { echo $(( ($1 * 2654435761 >> 7) % 4 + 1 )); }
rranks() {
	_m=$(( ($1 * 40503 >> 5) % 3 + 1 ))
	[ "$_m" -ge "$2" ] && _m=$((_m + 1))
	[ "$2" -eq 1 ] && _m=$(( ($1 >> 3) % 4 + 1 ))
	echo "$_m"
}
mranks() { echo $(( ($1 * 97 >> 4) % 4 + 1 )); }

# ---- bookkeeping: per check, the failed seeds and a line each
# fail_add CHECK SEED TEXT...
fail_add() {
	_c=$1 _s=$2
	shift 2
	echo "$_s $*" >>"$TMPD/fail.$_c"
}
# failed CHECK SEED: the seed failed that check (so later checks of it,
# which would only say the same again, are not made)
failed() { [ -f "$TMPD/fail.$1" ] && grep -q "^$2 " "$TMPD/fail.$1"; }
fail_count() {
	if [ -f "$TMPD/fail.$1" ]; then cut -d' ' -f1 "$TMPD/fail.$1" | sort -u | wc -l
	else echo 0; fi
}
# report CHECK JOBS DESC: one TAP line for a check over JOBS jobs, with
# up to MAXLIST failed seeds
report() {
	_c=$1 _j=$2 _d=$3
	_f=$(fail_count "$_c")
	if [ "$_f" -eq 0 ]; then
		ok "$_j jobs: $_d"
		return
	fi
	_l=$(sort -t' ' -k1,1n -u "$TMPD/fail.$_c" | head -n "$MAXLIST" | cut -d' ' -f2-)
	_IFS=$IFS
	IFS=$'\n'
	# shellcheck disable=SC2086
	not_ok "$_j jobs: $_d ($_f failed)" $_l
	IFS=$_IFS
}

# why OUT S: the program's first error line about seed S in OUT, after
# the library's own message if one came just before it
why() {
	grep -m1 -B1 -E "^mpi_fuzzio: rank [0-9]+: seed $2: " "$1" |
		grep -E '^(gfsplit-mpiio: |mpi_fuzzio: rank )' | tr '\n' ' ' | cut -c1-360
}

# the preload's part of a command line that reproduces
UNDER="env LD_PRELOAD=$PRELOAD GFSPLIT_SPLIT_FILES='/tmp/fz/*'"

# fuzz TAG CHECK N FIRST K MODE PAT ARGS...: mpi_fuzzio MODE over K seeds
# from FIRST, plain MPICH (TAG plain) or through the preload (TAG pre),
# files PAT ('@': the seed).  A seed the program failed goes to CHECK.  A
# crash or a timeout (any exit but 0 and 1) runs every seed alone, so the
# one that crashes is found.  Coverage lines are kept.
fuzz() {
	_tag=$1 _chk=$2 _n=$3 _first=$4 _k=$5 _mode=$6 _pat=$7
	shift 7
	_out=$TMPD/out.$_tag
	if [ "$_tag" = pre ]; then
		pre "$_n" "$W/*.split" "$_mode" "$_first" "$_pat" --cases="$_k" "$@" >"$_out" 2>&1
	else
		plain "$_n" "$_mode" "$_first" "$_pat" --cases="$_k" "$@" >"$_out" 2>&1
	fi
	_rc=$?
	grep '^mpi_fuzzio: coverage:' "$_out" >>"$TMPD/coverage.$_mode"
	if [ "$_rc" -le 1 ]; then
		for _s in $(sed -n 's/^mpi_fuzzio: seed \([0-9]*\): FAILED.*/\1/p' "$_out"); do
			fail_add "$_chk" "$_s" "seed $_s ($_n-rank $_tag $_mode): $(why "$_out" "$_s");" \
				"reproduce:" "$(repro "$_tag" "$_n" "$_mode" "$_s" "$@")"
		done
		return
	fi
	# a crash or a hang: each seed alone
	for _s in $(seq "$_first" $((_first + _k - 1))); do
		_one=${_pat//@/$_s}
		if [ "$_tag" = pre ]; then
			pre "$_n" "$W/*.split" "$_mode" "$_s" "$_one" "$@" >"$_out.1" 2>&1
		else
			plain "$_n" "$_mode" "$_s" "$_one" "$@" >"$_out.1" 2>&1
		fi
		_rc=$?
		grep '^mpi_fuzzio: coverage:' "$_out.1" >>"$TMPD/coverage.$_mode"
		[ "$_rc" -eq 0 ] && continue
		_what="exit $_rc"
		[ "$_rc" -eq 124 ] && _what="hangs (killed after ${TEST_TIMEOUT}s)"
		[ "$_rc" -eq 1 ] && _what=$(why "$_out.1" "$_s")
		fail_add "$_chk" "$_s" "seed $_s ($_n-rank $_tag $_mode): $_what;" \
			"$(grep -m1 -E 'signal|Abort|Segmentation|rror|^mpi_fuzzio: [a-z]' "$_out.1" | cut -c1-160);" \
			"reproduce:" "$(repro "$_tag" "$_n" "$_mode" "$_s" "$@")"
	done
}

# repro TAG N MODE SEED ARGS...: the command line of one seed
repro() {
	_rt=$1 _rn=$2 _rm=$3 _rs=$4
	shift 4
	_ra=""
	for _x in "$@"; do
		case $_x in --dump=*|--model=*) ;; *) _ra="$_ra $_x" ;; esac
	done
	_rf=/tmp/fz/f
	[ "$_rt" = pre ] && _rf=/tmp/fz/f.split
	echo "mpiexec -n $_rn$( [ "$_rt" = pre ] && echo " $UNDER") $FUZZ $_rm $_rs $_rf$_ra"
}

# explain CHECK SEED N G A B OPTS: byte G differs between files A and B;
# with the model's value and the accesses that wrote it
explain() {
	_c=$1 _s=$2 _n=$3 _g=$4 _a=$5 _b=$6
	shift 6
	_va=$(od -An -tx1 -j "$_g" -N1 "$_a" 2>/dev/null | tr -d ' ')
	_vb=$(od -An -tx1 -j "$_g" -N1 "$_b" 2>/dev/null | tr -d ' ')
	_who=$("$FUZZ" describe "$_s" --nprocs="$_n" --at="$_g" "$@" 2>&1 | sed -n '1p;2p' |
		tr '\n' ' ' | cut -c1-420)
	_nd=$(cmp -l "$_a" "$_b" 2>/dev/null | wc -l)
	_sz="sizes $(stat -c %s "$_a" 2>/dev/null) and $(stat -c %s "$_b" 2>/dev/null)"
	fail_add "$_c" "$_s" "seed $_s ($_n ranks): $_nd bytes differ ($_sz), first at $_g:" \
		"$(basename "$_a") 0x${_va:-EOF}, $(basename "$_b") 0x${_vb:-EOF}; $_who;" \
		"reproduce: mpiexec -n $_n $UNDER $FUZZ write $_s /tmp/fz/b.split $* &&" \
		"mpiexec -n 2 $BIN/gfsplit-merge /tmp/fz/b.split /tmp/fz/c &&" \
		"$FUZZ describe $_s --nprocs=$_n --model=/tmp/fz/m $* && cmp /tmp/fz/m /tmp/fz/c"
}

# first_diff A B: nothing, or the first offset (0-based) where A and B
# differ; nothing either if one is missing (the run that made it failed)
first_diff() {
	[ -f "$1" ] && [ -f "$2" ] || return 0
	cmp -- "$1" "$2" >/dev/null 2>&1 && return 0
	_o=$(cmp -- "$1" "$2" 2>&1 | sed -n 's/.*differ: byte \([0-9]*\),.*/\1/p')
	# one is a prefix of the other: the shorter one's size
	[ -z "$_o" ] && _o=$(( $(stat -c %s "$1") < $(stat -c %s "$2") ? $(stat -c %s "$1") + 1
		: $(stat -c %s "$2") + 1 ))
	echo $((_o - 1))
}

# check_split CHECKPFX SEED N B C: B is a split file that passes stat-layout
# and merges (1-4 ranks) into C
check_split() {
	_p=$1 _s=$2 _n=$3 _b=$4 _c=$5
	if [ ! -f "$_b/gfsplit.meta" ]; then
		fail_add "${_p}split" "$_s" "seed $_s ($_n ranks): $(basename "$_b") is not a split directory:" \
			"$(ls -ld "$_b" 2>&1 | cut -c1-100)"
		return 1
	fi
	if ! "$BIN/stat-layout" --check "$_b" >"$TMPD/.sl" 2>&1; then
		fail_add "${_p}split" "$_s" "seed $_s ($_n ranks): stat-layout --check: $(tail -n 2 "$TMPD/.sl" | tr '\n' ' ' | cut -c1-200)"
	fi
	_r=$(mranks "$_s")
	if ! mpirun_n "$_r" "$BIN/gfsplit-merge" -q "$_b" "$_c" >"$TMPD/.mg" 2>&1; then
		fail_add "${_p}merge" "$_s" "seed $_s ($_n ranks): gfsplit-merge with $_r ranks:" \
			"$(tail -n 2 "$TMPD/.mg" | tr '\n' ' ' | cut -c1-200)"
		return 1
	fi
	return 0
}

W=$TMPD/w
mkdir -p "$W"

# ---- reference: plain MPICH, the preload, the model
ref=0
for ((i = 0; i < CASES; i += BATCH)); do
	mine "$i" || continue
	s0=$((BASE + i))
	k=$(( CASES - i < BATCH ? CASES - i : BATCH ))
	n=$(nranks "$s0")
	m=$(rranks "$s0" "$n")
	# shellcheck disable=SC2086
	fuzz plain pwrite "$n" "$s0" "$k" write "$W/@.plain" --model="$W/@.model" $OPTS
	# shellcheck disable=SC2086
	fuzz pre bwrite "$n" "$s0" "$k" write "$W/@.split" $OPTS
	for ((s = s0; s < s0 + k; s++)); do
		a=$W/$s.plain b=$W/$s.split c=$W/$s.merged mo=$W/$s.model
		g=$(first_diff "$a" "$mo")
		# shellcheck disable=SC2086
		[ -n "$g" ] && explain model "$s" "$n" "$g" "$mo" "$a" $OPTS
		failed bwrite "$s" && continue
		if check_split "" "$s" "$n" "$b" "$c"; then
			g=$(first_diff "$a" "$c")
			# shellcheck disable=SC2086
			[ -n "$g" ] && explain merged "$s" "$n" "$g" "$a" "$c" $OPTS
		fi
	done
	# shellcheck disable=SC2086
	fuzz plain pread "$m" "$s0" "$k" read "$W/@.plain" --writers="$n" --dump="$W/@.dplain" $OPTS
	# shellcheck disable=SC2086
	fuzz pre bread "$m" "$s0" "$k" read "$W/@.split" --writers="$n" --dump="$W/@.dsplit" $OPTS
	for ((s = s0; s < s0 + k; s++)); do
		failed bwrite "$s" || failed bread "$s" || failed pread "$s" && continue
		for ((r = 0; r < m; r++)); do
			x=$W/$s.dplain.$r y=$W/$s.dsplit.$r
			cmp -s "$x" "$y" && continue
			fail_add dump "$s" "seed $s ($n writers, $m readers): rank $r read other bytes:" \
				"$(diff "$x" "$y" 2>&1 | grep -m2 '^[<>]' | cut -c1-140 | tr '\n' ' ');" \
				"reproduce: mpiexec -n $m $FUZZ read $s FILE --writers=$n --dump=D $OPTS on both files"
			break
		done
	done
	rm -rf "${W:?}"/*
	ref=$((ref + k))
done
if [ "$ref" -eq 0 ]; then
	not_ok "reference jobs: none ran (FUZZ_SHARE=$SHARE of $CASES)"
else
	report pwrite "$ref" "plain MPICH runs the write jobs without error (statuses, read-backs)"
	report model "$ref" "plain MPICH writes exactly the model's file (else: an MPICH or tester bug)"
	report bwrite "$ref" "the write jobs run through the preload without error (statuses, pointers, read-backs)"
	report split "$ref" "each file written through the preload is a split directory that passes stat-layout --check"
	report merge "$ref" "gfsplit-merge (1-4 ranks) reassembles each split file"
	report merged "$ref" "each merged split file equals plain MPICH's file byte for byte"
	report pread "$ref" "plain MPICH reads the plain files back right, other rank counts, views and memory types"
	report bread "$ref" "the split files read back right through the preload (every byte against the model)"
	report dump "$ref" "what the preload reads from the split file == what MPICH reads from the plain file (dumps, cmp)"
fi

# ---- full: everything MPI allows, the preload against the model
full=0
for ((i = 0; i < FULL; i += BATCH)); do
	mine "$i" || continue
	s0=$((BASE + 500000 + i))
	k=$(( FULL - i < BATCH ? FULL - i : BATCH ))
	n=$(nranks "$s0")
	m=$(rranks "$s0" "$n")
	# shellcheck disable=SC2086
	fuzz pre fwrite "$n" "$s0" "$k" write "$W/@.split" --model="$W/@.model" --full $OPTS
	for ((s = s0; s < s0 + k; s++)); do
		b=$W/$s.split c=$W/$s.merged mo=$W/$s.model
		failed fwrite "$s" && continue
		if check_split f "$s" "$n" "$b" "$c"; then
			g=$(first_diff "$mo" "$c")
			# shellcheck disable=SC2086
			[ -n "$g" ] && explain fmerged "$s" "$n" "$g" "$mo" "$c" --full $OPTS
		fi
	done
	# shellcheck disable=SC2086
	fuzz pre fread "$m" "$s0" "$k" read "$W/@.split" --writers="$n" --full $OPTS
	rm -rf "${W:?}"/*
	full=$((full + k))
done
if [ "$full" -gt 0 ]; then
	report fwrite "$full" "--full: the write jobs run through the preload without error"
	report fsplit "$full" "--full: split directories that pass stat-layout --check"
	report fmerge "$full" "--full: gfsplit-merge reassembles each split file"
	report fmerged "$full" "--full: each merged split file is the model's file (what MPI defines)"
	report fread "$full" "--full: the split files read back right through the preload"
fi

# ---- no overlap: no phase rewrites another rank's bytes.  The reference
# jobs do (MPI: the later write wins, and the library keeps the later
# epoch); if they fail and these pass, the epochs are what broke.
over=0
for ((i = 0; i < OVER; i += BATCH)); do
	mine "$i" || continue
	s0=$((BASE + 800000 + i))
	k=$(( OVER - i < BATCH ? OVER - i : BATCH ))
	n=$(nranks "$s0")
	# shellcheck disable=SC2086
	fuzz plain opwrite "$n" "$s0" "$k" write "$W/@.plain" --model="$W/@.model" \
		--no-overlap-epochs $OPTS
	# shellcheck disable=SC2086
	fuzz pre owrite "$n" "$s0" "$k" write "$W/@.split" --no-overlap-epochs $OPTS
	for ((s = s0; s < s0 + k; s++)); do
		a=$W/$s.plain b=$W/$s.split c=$W/$s.merged mo=$W/$s.model
		g=$(first_diff "$a" "$mo")
		# shellcheck disable=SC2086
		[ -n "$g" ] && explain omodel "$s" "$n" "$g" "$mo" "$a" --no-overlap-epochs $OPTS
		failed owrite "$s" && continue
		if check_split o "$s" "$n" "$b" "$c"; then
			g=$(first_diff "$a" "$c")
			# shellcheck disable=SC2086
			[ -n "$g" ] && explain omerged "$s" "$n" "$g" "$a" "$c" --no-overlap-epochs $OPTS
		fi
	done
	# shellcheck disable=SC2086
	fuzz pre oread "$(rranks "$s0" "$n")" "$s0" "$k" read "$W/@.split" --writers="$n" \
		--no-overlap-epochs $OPTS
	rm -rf "${W:?}"/*
	over=$((over + k))
done
if [ "$over" -gt 0 ]; then
	report opwrite "$over" "--no-overlap-epochs: plain MPICH runs the jobs without error"
	report omodel "$over" "--no-overlap-epochs: plain MPICH writes the model's file"
	report owrite "$over" "--no-overlap-epochs: the jobs run through the preload without error"
	report osplit "$over" "--no-overlap-epochs: split directories that pass stat-layout --check"
	report omerge "$over" "--no-overlap-epochs: gfsplit-merge reassembles each split file"
	report omerged "$over" "--no-overlap-epochs: merged split file == plain MPICH's file"
	report oread "$over" "--no-overlap-epochs: the split files read back right through the preload"
fi

# ---- what ran
cat "$TMPD"/coverage.* 2>/dev/null | awk -v ref="$ref" -v full="$full" -v over="$over" '
{
	for (i = 3; i <= NF; i++) {
		split($i, kv, "=")
		sum[kv[1]] += kv[2]
		if (!(kv[1] in seen)) { seen[kv[1]] = 1; order[++n] = kv[1] }
	}
}
function line(title, prefix,   i, s, k, w) {
	s = "# " title ":"
	for (i = 1; i <= n; i++) {
		k = order[i]
		if (index(k, prefix) != 1)
			continue
		w = " " substr(k, length(prefix) + 1) "=" sum[k]
		if (length(s) + length(w) > 110) {
			print s
			s = "#  "
		}
		s = s w
	}
	print s
}
END {
	printf "# %d jobs ran: %d reference, %d --full, %d --no-overlap-epochs; %d phases (%d rewrite bytes another rank wrote in an earlier phase), %d accesses, %d bytes moved\n", \
		ref + full + over, ref, full, over, sum["phases"], sum["overlap_phases"], sum["accesses"], sum["bytes"]
	line("filetype constructors (views set)", "file.")
	line("memory type constructors", "mem.")
	line("memory kinds", "memkind.")
	line("phase kinds", "kind.")
	line("etypes", "etype.")
	line("access paths", "MPI_File_")
	line("features (phases; rm_*: how a recreated file was removed)", "feat.")
}'
echo "# $(( $(date +%s) - start ))s"
finish
