#!/bin/bash
# mpiio.sh - the PMPI preload lib/libgfsplit-mpiio.so under the MPI-IO
# patterns of real applications (tests/helpers/mpi_iopat: IOR with and without
# a view, HPIO nc-nc, BT-IO subarray and darray, overlapping views).  Each
# file written through the preload must be a split directory that
# stat-layout checks, that gfsplit-merge turns into the bytes plain MPICH
# writes for the same pattern, and that reads back through the preload with
# the same pattern, with 3 ranks in contiguous chunks and with 2 ranks
# through an unaligned cyclic view.  The four call families (classic, _c,
# split collective, nonblocking) are spread over the patterns.  Also: a
# file that is not selected stays a plain file, the gfsplit_split hint
# selects and deselects, GFSPLIT_VERBOSE says the selection once, a write
# fault fails every rank without a hang or leftovers, rewriting a split file
# keeps its old bytes where nothing new lands (as MPICH does), and on Gfarm
# each part and each location file lands on its node.
. "$(dirname "$0")/../lib.sh"

. "$TOP/tests/mpiio_lib.sh"
mpiio_setup "$UNIT/mpi_iopat" "MPI-IO preload tests"
# json_nprocs DESC SPLIT N: stat-layout --json is valid JSON and says N writers
json_nprocs() {
	if "$BIN/stat-layout" --json "$2" >"$TMPD/.json" 2>"$TMPD/.jerr" &&
	    python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["nprocs"] == int(sys.argv[2]) and len(j["parts"]) == j["nprocs"], j["nprocs"]
' "$TMPD/.json" "$3" >"$TMPD/.py" 2>&1; then
		ok "$1"
	else
		not_ok "$1" "$(tail -n 3 "$TMPD/.jerr" "$TMPD/.py" 2>/dev/null)"
	fi
}

# pattern PAT A_API B_API READ_API CONTIG_API CYCLIC_API [options]: PAT
# written by plain MPICH (A) and through the preload (B), both 4 ranks; B is
# checked, merged with 3 ranks (C == A) and read back through the preload
pattern() {
	pat=$1 aa=$2 ba=$3 ra=$4 ca=$5 ya=$6
	shift 6
	a=$TMPD/$pat.plain b=$TMPD/$pat.split c=$TMPD/$pat.merged
	from=--from=$pat
	check "$pat: plain $MPI_NAME writes it, 4 ranks, --api=$aa" plain 4 "$pat" write "$a" --api="$aa" "$@"
	check "$pat: written through the preload, 4 ranks, --api=$ba${*:+ $*}" \
		pre 4 "$TMPD/*.split" "$pat" write "$b" --api="$ba" "$@"
	is_split "$pat: the selected file is a split directory" "$b" || return
	check "$pat: stat-layout --check" "$BIN/stat-layout" --check "$b"
	json_nprocs "$pat: stat-layout --json says 4 writers" "$b" 4
	check "$pat: gfsplit-merge with 3 ranks" mpirun_n 3 "$BIN/gfsplit-merge" "$b" "$c"
	same_bytes "$pat: merged split file equals the plain $MPI_NAME file" "$a" "$c"
	check "$pat: read back through the preload, same pattern, 4 ranks, --api=$ra" \
		pre 4 "" "$pat" read "$b" --api="$ra" "$@"
	check "$pat: read through the preload in contiguous chunks, 3 ranks, --api=$ca" \
		pre 3 "" contig read "$b" --api="$ca" "$from" "$@"
	check "$pat: read through the preload with a cyclic 100000-byte view, 2 ranks, --api=$ya" \
		pre 2 "" cyclic read "$b" --api="$ya" "$from" "$@"
}

start=$(date +%s)
# every family writes through the preload once, and every pattern meets
# the large-count calls there, writing or reading
pattern ior-at classic nonblocking large split classic --sync
pattern ior-view nonblocking split large classic nonblocking
pattern hpio split large nonblocking large split --sync
pattern btio-subarray large classic large nonblocking large
pattern btio-darray classic large split classic large --sync
pattern overlap classic split large classic nonblocking

# ---- selection
check "a file not selected, written under the preload" \
	pre 4 "$TMPD/*.split" ior-at write "$TMPD/ns.plain"
if [ -f "$TMPD/ns.plain" ] && [ ! -d "$TMPD/ns.plain" ]; then ok "it is a plain file"
else not_ok "it is a plain file" "$(ls -ld "$TMPD/ns.plain" 2>&1)"; fi
same_bytes "it holds what plain $MPI_NAME writes" "$TMPD/ior-at.plain" "$TMPD/ns.plain"
check "a plain file reads through the preload (contig, 2 ranks)" \
	pre 2 "" contig read "$TMPD/ns.plain"

check "the hint gfsplit_split=enable selects without GFSPLIT_SPLIT_FILES" \
	pre 4 "" ior-at write "$TMPD/hint.out" --hint
is_split "the hinted file is a split directory" "$TMPD/hint.out" &&
	check "the hinted split file passes stat-layout --check" "$BIN/stat-layout" --check "$TMPD/hint.out"
check "the hint gfsplit_split=disable overrides a matching pattern" \
	pre 2 "$TMPD/*.dis" overlap write "$TMPD/x.dis" --hint=disable
if [ -f "$TMPD/x.dis" ] && [ ! -d "$TMPD/x.dis" ]; then ok "the disabled file is a plain file"
else not_ok "the disabled file is a plain file" "$(ls -ld "$TMPD/x.dis" 2>&1)"; fi

vpat="$TMPD/verb*.out"
GFSPLIT_VERBOSE=1 expect_exit "GFSPLIT_VERBOSE=1 run" 0 pre 4 "$vpat" hpio write "$TMPD/verb.out"
nl=$(grep -cF -- "$vpat" "$OUT")
if [ "$nl" -eq 1 ] && ! grep -F -- "$vpat" "$OUT" | grep -Eq 'rank [1-9]'; then
	ok "GFSPLIT_VERBOSE prints the selection once, from rank 0"
else
	not_ok "GFSPLIT_VERBOSE prints the selection once, from rank 0" \
		"$nl lines name '$vpat' in:" "$(head -n 12 "$OUT")"
fi

# ---- rewriting: as MPI, the old bytes stay where the new writes do not land
cp "$TMPD/ior-at.plain" "$TMPD/rewrite.plain"
check "plain $MPI_NAME writes btio-subarray over a copy of its ior-at file" \
	plain 4 btio-subarray write "$TMPD/rewrite.plain"
check "rewrite ior-at.split with the (smaller) btio-subarray file" \
	pre 4 "$TMPD/*.split" btio-subarray write "$TMPD/ior-at.split"
check "the rewritten split file passes stat-layout --check" "$BIN/stat-layout" --check "$TMPD/ior-at.split"
check "the rewritten split file merges" \
	mpirun_n 2 "$BIN/gfsplit-merge" "$TMPD/ior-at.split" "$TMPD/rewrite.merged"
same_bytes "the rewritten file equals $MPI_NAME's: new bytes over the old" "$TMPD/rewrite.plain" "$TMPD/rewrite.merged"

# ---- a write fault: an MPI error on the calls, never an abort or a hang
mkdir -p "$TMPD/fault"
t0=$(date +%s)
TEST_TIMEOUT=60 GFSPLIT_FAULT=pwrite:1:100000 expect_exit \
	"independent writes, rank 1's part fails after 100000 bytes: exit 1" 1 \
	pre 4 "$TMPD/fault/*" ior-at write "$TMPD/fault/f.split"
dt=$(( $(date +%s) - t0 ))
output_has "the library names the part file" "gfsplit-mpiio: rank 1: .*part\.1"
output_has "the library names the cause" "gfsplit-mpiio: rank 1: .*(Input/output error|EIO)"
output_has "the program got an MPI error back" "mpi_iopat: rank 1: MPI_File_"
if grep -q 'Abort(' "$OUT"; then not_ok "nothing called MPI_Abort" "$(grep 'Abort(' "$OUT" | head -n 3)"
else ok "nothing called MPI_Abort"; fi
[ "$dt" -lt 60 ] && ok "the failure came in ${dt}s" || not_ok "the failure came in time" "${dt}s"
no_leftovers "no split file and no temporary left by the fault" "$TMPD/fault" "$TMPD/fault/f.split"

TEST_TIMEOUT=60 GFSPLIT_FAULT=pwrite:1:1000 expect_exit "write_all, rank 1's part fails: exit 1" 1 \
	pre 4 "$TMPD/fault/*" btio-subarray write "$TMPD/fault/g.split"
bad=""
for r in 0 1 2 3; do grep -q "mpi_iopat: rank $r: MPI_File_write_all:" "$OUT" || bad="$bad $r"; done
[ -z "$bad" ] && ok "MPI_File_write_all returns the fault on every rank" ||
	not_ok "MPI_File_write_all returns the fault on every rank" "not on rank(s)$bad:" "$(tail -n 12 "$OUT")"
no_leftovers "no split file and no temporary left by the collective fault" "$TMPD/fault" "$TMPD/fault/g.split"
echo "# local part: $(( $(date +%s) - start ))s"

# ---- Gfarm (last: need_gfarm ends the script when there is none)
need_gfarm
gfarm_up 2 || { finish; exit 1; }
read -r -a H <<<"$GFARM_TEST_HOSTS"
gfmkdir /mpiio || not_ok "gfmkdir /mpiio"
GFSPLIT_GFARM_HOSTS="${H[0]},${H[1]}" check \
	"ior-view written to gfarm:///mpiio/f through the preload, 2 ranks" \
	pre 2 "gfarm:///mpiio/*" ior-view write gfarm:///mpiio/f --api=large --sync
"$BIN/stat-layout" --json gfarm:///mpiio/f >"$TMPD/g.json" 2>"$TMPD/g.err"
got=$(json_get "$TMPD/g.json" '" ".join("%s:%s:%s" % (r["host"], r["host"] in r["replicas"], r["on_writer_node"]) for r in j["parts"])' 2>/dev/null)
want="${H[0]}:True:True ${H[1]}:True:True"
[ "$got" = "$want" ] && ok "stat-layout: each part on its rank's node" ||
	not_ok "stat-layout: each part on its rank's node" "got: $got" "want: $want" "$(tail -n 3 "$TMPD/g.err")"
check "stat-layout --check on Gfarm" "$BIN/stat-layout" --check gfarm:///mpiio/f
on_node_k "loc.K is on node K (gfwhere)" /mpiio/f loc 2
check "plain $MPI_NAME writes ior-view locally, 2 ranks" plain 2 ior-view write "$TMPD/g.plain"
check "merge the Gfarm split file to a local file, 2 ranks" \
	mpirun_n 2 "$BIN/gfsplit-merge" gfarm:///mpiio/f "$TMPD/g.merged"
same_bytes "Gfarm split file equals the plain $MPI_NAME file" "$TMPD/g.plain" "$TMPD/g.merged"
check "read back from Gfarm through the preload, cyclic view, 3 ranks" \
	pre 3 "" cyclic read gfarm:///mpiio/f
echo "# all: $(( $(date +%s) - start ))s"
finish
