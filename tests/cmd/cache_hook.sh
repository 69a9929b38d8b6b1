#!/bin/bash
# cache_hook.sh - the read hook lib/libgfsplit-cache.so under an unmodified
# MPI program (tests/helpers/mpi_readapp: open/read, pread, lseek+read, stdio,
# a second thread, a fork child, reads across MPI_Finalize; fortified
# calls included).
# With 1 and 4 ranks, with 1 and 2 groups and with MPI_THREAD_MULTIPLE,
# the program must print the same checksums through the cache as without
# it (and the checksum of the whole file must be the file's), and the
# statistics of GFSPLIT_CACHE_STATS must show the reads in the cache: each
# block from storage at most once per group, the rest from peers.  Also: a
# file the patterns do not select is not cached, write-opens of a
# selected file pass through and write the right bytes, the text and
# verbose reports, and a bad setting or a cache that cannot be created
# costs one line and nothing else.
. "$(dirname "$0")/../lib.sh"

PROG=$UNIT/mpi_readapp
LIB=${CACHE_LIB:-$TOP/lib/libgfsplit-cache.so}
unset GFSPLIT_CACHE_FILES GFSPLIT_CACHE_SIZE GFSPLIT_CACHE_BLOCK GFSPLIT_CACHE_GROUPS \
	GFSPLIT_CACHE_RATIO GFSPLIT_CACHE_TRANSPORT GFSPLIT_CACHE_STATS GFSPLIT_VERBOSE
if [ ! -x "$PROG" ]; then
	not_ok "mpi_readapp is built" "missing: $PROG (make)"
	finish
	exit 1
fi
if [ ! -f "$LIB" ]; then
	skip "read hook tests" "no $LIB (make builds it)"
	finish
	exit 0
fi
preload_of "$LIB"

F=$TMPD/data.bin			# selected by "$TMPD/*.bin"
OTHER=$TMPD/other.dat			# not selected
make_file "$F" $((40 * 65536 + 1234)) 5	# 41 blocks of 64 KiB, a short last one
make_file "$OTHER" 300000 7
NBLOCKS=41
SEL="$TMPD/*.bin"

# plain N OUT ARGS..: mpi_readapp on MPICH alone; stdout to OUT
plain() {
	_n=$1 _o=$2; shift 2
	mpirun_n "$_n" "$PROG" "$@" >"$_o" 2>"$_o.err"
}
# hooked N OUT STATS SELECT ARGS..: the same under the preload, with a
# 4 MiB cache of 64 KiB blocks a rank (the whole file fits), statistics
# as JSON to STATS; more GFSPLIT_* settings may come first in $HOOK_ENV
hooked() {
	_n=$1 _o=$2 _s=$3 _sel=$4; shift 4
	rm -f "$_s"
	mpirun_n "$_n" env LD_PRELOAD="$PRE" GFSPLIT_CACHE_FILES="$_sel" \
		GFSPLIT_CACHE_SIZE=4M GFSPLIT_CACHE_BLOCK=64K GFSPLIT_CACHE_STATS="$_s" \
		${HOOK_ENV:-} "$PROG" "$@" >"$_o" 2>"$_o.err"
}
# ran DESC OUT CMD..: ok if CMD exits 0 (its stderr shown otherwise)
ran() {
	_d=$1 _o=$2; shift 2
	if "$@"; then ok "$_d"
	else not_ok "$_d" "exit $?" "$(tail -n 15 "$_o.err" "$_o" 2>/dev/null)"; return 1; fi
}
# expect DESC FILE PYEXPR: PYEXPR over the JSON j of FILE is true
expect() {
	if python3 -c '
import json, sys
j = json.load(open(sys.argv[1])); t = j.get("total", {})
sys.exit(0 if eval(sys.argv[2]) else 1)' "$2" "$3" 2>"$TMPD/.py"; then ok "$1"
	else not_ok "$1" "$3" "$(cat "$2" 2>&1)" "$(tail -n 3 "$TMPD/.py")"; fi
}
# one_line DESC ERRFILE REGEX: the hook said exactly one line, matching
one_line() {
	_l=$(grep -c '^gfsplit-cache:' "$2")
	if [ "$_l" -eq 1 ] && grep -Eq -- "$3" "$2"; then ok "$1"
	else not_ok "$1" "wanted one line matching /$3/, got $_l:" "$(cat "$2")"; fi
}

# in_dir DIR CMD..: CMD run in DIR
in_dir() { (cd "$1" && shift && "$@"); }

WHOLE=$(fnv "$F")
plain 2 "$TMPD/plain.2.json" read "$F"

# ---- the same bytes through the cache; the reads really were cached
for spec in "1 1" "4 1" "4 2"; do
	read -r n g <<<"$spec"
	P=$TMPD/plain.$n.json H=$TMPD/hook.$n.$g.json S=$TMPD/stats.$n.$g.json
	if [ ! -f "$P" ]; then
		ran "$n ranks read the file on MPICH alone" "$P" plain "$n" "$P" read "$F" &&
			expect "$n ranks: the whole-file checksum (a, e) is the file's" "$P" \
				"all(r['a'] == r['e'] == '$WHOLE' for r in j['ranks']) and len(j['ranks']) == $n"
	fi
	HOOK_ENV="GFSPLIT_CACHE_GROUPS=$g" ran "$n ranks, G=$g: the same program under the preload" \
		"$H" hooked "$n" "$H" "$S" "$SEL" read "$F" || continue
	same_bytes "$n ranks, G=$g: the same checksums with the cache as without" "$P" "$H"
	expect "$n ranks, G=$g: the statistics are JSON and every read-only open went through the cache" "$S" \
		"j['nprocs'] == $n and j['groups'] == $g and j['files_opened'] == 9 * $n and t['reads'] > 0 and t['bytes'] > 0"
	expect "$n ranks, G=$g: every block from storage at most once per group" "$S" \
		"t['storage_reads'] <= $NBLOCKS * $g and 1 <= t['max_storage_reads_per_block'] <= $g"
	if [ "$n" -gt 1 ]; then
		expect "$n ranks, G=$g: the other ranks copied blocks from their peers" "$S" \
			"t['peer_copies'] + t['peer_pieces'] > 0 and t['peer_copies'] + t['peer_pieces'] + t['storage_reads'] >= $n * $NBLOCKS"
	fi
done

P=$TMPD/plain.4.json H=$TMPD/hook.multi.json S=$TMPD/stats.multi.json
ran "MPI_THREAD_MULTIPLE: 4 ranks under the preload" "$H" hooked 4 "$H" "$S" "$SEL" read "$F" --multiple &&
	same_bytes "MPI_THREAD_MULTIPLE: the same checksums" "$P" "$H" &&
	expect "MPI_THREAD_MULTIPLE: the second thread's open was cached too" "$S" \
		"j['files_opened'] == 10 * 4 and t['storage_reads'] <= $NBLOCKS"

# ---- selection
P=$TMPD/plain.other.json H=$TMPD/hook.other.json S=$TMPD/stats.other.json
ran "a file not selected: 2 ranks on MPICH alone" "$P" plain 2 "$P" read "$OTHER"
ran "a file not selected: under the preload" "$H" hooked 2 "$H" "$S" "$SEL" read "$OTHER" &&
	same_bytes "a file not selected: the same checksums" "$P" "$H" &&
	expect "a file not selected: nothing went through the cache" "$S" \
		"j['files_opened'] == 0 and t['reads'] == 0 and t['storage_reads'] == 0"

H=$TMPD/hook.rel.json S=$TMPD/stats.rel.json
ran "a relative path, 2 ranks, pattern '*.bin'" "$H" in_dir "$TMPD" hooked 2 "$H" "$S" '*.bin' read data.bin &&
	same_bytes "a relative path: the same checksums" "$TMPD/plain.2.json" "$H" &&
	expect "a relative path: cached" "$S" "j['files_opened'] == 9 * 2 and t['reads'] > 0"

# write-opens of a selected file: O_WRONLY|O_CREAT|O_TRUNC, "w", O_RDWR
# and "r+" pass through; only the final read-only open is cached
H=$TMPD/hook.write.json S=$TMPD/stats.write.json
ran "write-opens of a selected file under the preload, 2 ranks" "$H" \
	hooked 2 "$H" "$S" "$SEL" write "$OTHER" "$TMPD/out.bin" &&
	expect "the copy read back O_RDWR, r+ and O_RDONLY gives the source's checksum" "$H" \
		"j['src'] == j['rdwr'] == j['rplus'] == j['rdonly'] == '$(fnv "$OTHER")'"
same_bytes "write() to a selected file wrote the right bytes" "$OTHER" "$TMPD/out.bin"
same_bytes "fwrite() to a selected file wrote the right bytes" "$OTHER" "$TMPD/out.bin.stdio"
expect "only the read-only open of the written file went through the cache" "$S" \
	"j['files_opened'] == 1 and t['reads'] > 0"

# ---- reports and failures
H=$TMPD/hook.text.json
HOOK_ENV="GFSPLIT_VERBOSE=1" ran "GFSPLIT_CACHE_STATS=text and GFSPLIT_VERBOSE=1, 2 ranks" "$H" \
	hooked 2 "$H" text "$SEL" read "$F"
same_bytes "text statistics: the same checksums" "$TMPD/plain.2.json" "$H"
if grep -Eq '^gfsplit-cache: 2 ranks, 18 opens: [0-9]+ reads' "$H.err"; then ok "the text statistics line"
else not_ok "the text statistics line" "$(cat "$H.err")"; fi
if [ "$(grep -c 'go through a cooperative cache of 4.00 MiB a rank on 2 ranks' "$H.err")" -eq 1 ] &&
    grep -q "'$F': read through the cache" "$H.err"; then ok "verbose: the settings once, and the files"
else not_ok "verbose: the settings once, and the files" "$(cat "$H.err")"; fi

P=$TMPD/plain.2.json
H=$TMPD/hook.bad.json
HOOK_ENV="GFSPLIT_CACHE_SIZE=4x" ran "a bad GFSPLIT_CACHE_SIZE: the program still runs" "$H" \
	hooked 2 "$H" "$TMPD/none.json" "$SEL" read "$F" &&
	same_bytes "a bad setting: the same checksums, from libc" "$P" "$H"
one_line "a bad setting: one line naming it" "$H.err" "GFSPLIT_CACHE_SIZE: invalid size '4x'.*the cache is off"
is_absent "a bad setting: no statistics" "$TMPD/none.json"

H=$TMPD/hook.nocache.json
HOOK_ENV="GFSPLIT_CACHE_GROUPS=3" ran "a cache that cannot be created (3 groups on 2 ranks): the program still runs" \
	"$H" hooked 2 "$H" "$TMPD/none.json" "$SEL" read "$F" &&
	same_bytes "no cache: the same checksums, from libc" "$P" "$H"
one_line "no cache: one line saying why" "$H.err" "the cache is off: 3 groups on 2 ranks"

# the statistics file never follows a link planted in its place (a job
# run as root, GFSPLIT_CACHE_STATS in /tmp): the file it leads to keeps
# its bytes, and the hook says why it wrote nothing
printf 'precious\n' >"$TMPD/precious"
ln -s "$TMPD/precious" "$TMPD/stats.link"
H=$TMPD/hook.link
if mpirun_n 2 env LD_PRELOAD="$PRE" GFSPLIT_CACHE_FILES="$SEL" GFSPLIT_CACHE_STATS="$TMPD/stats.link" \
	"$PROG" read "$F" >"$H" 2>"$H.err" && [ "$(cat "$TMPD/precious")" = precious ] &&
	grep -q "cannot write the statistics to '$TMPD/stats.link'" "$H.err"; then
	ok "a link in the statistics file's place is not followed"
else
	not_ok "a link in the statistics file's place is not followed" "$(cat "$TMPD/precious" "$H.err")"
fi

# a program that never calls MPI_Init reads through libc
if env LD_PRELOAD="$PRE" GFSPLIT_CACHE_FILES="$SEL" cat "$F" >"$TMPD/cat.out" 2>"$TMPD/cat.err"; then
	same_bytes "a program without MPI (cat) reads a selected file unchanged" "$F" "$TMPD/cat.out"
else
	not_ok "a program without MPI (cat) reads a selected file unchanged" "$(cat "$TMPD/cat.err")"
fi
finish
