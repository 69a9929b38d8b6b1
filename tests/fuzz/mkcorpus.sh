#!/bin/bash
# tests/fuzz/mkcorpus.sh OUT - make the seed corpora of the fuzz harnesses
# again with the real tools (a built tree: make), into OUT/NAME/ (compare
# with tests/fuzz/corpus/, where they are committed; not made here: the
# regression seeds of bugs found, regress-*, and two by hand: a journal
# with a torn last line and compressed chunks, an envelope with every
# metric and no optional member).
#
#   marker, locfile, layout   pcp-split (contiguous, cyclic, 2 nodes, an
#                             empty file) and the MPI-IO preload (runs)
#   journal                   stage-in's index, and the journal of a
#                             stage-in killed mid-file
#   zfile                     stage-in --compress
#   flist                     gfsp_flist_pack of walked trees
#   envelope                  envelope-bench --json (samples and the
#                             machine dropped to keep it small)
#   manifest                  written by hand below
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(mkdir -p "$1" && cd "$1" && pwd)
B=$TOP/bin U=$TOP/tests/unit L=$TOP/lib/libgfsplit-mpiio.so
export HYDRA_LAUNCHER=fork
W=$(mktemp -d "${TMPDIR:-/tmp}/gfsplit-mkcorpus.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W"
mkdir -p "$OUT"/{marker,locfile,layout,journal,zfile,flist,envelope,manifest}

# ---- split files
head -c 5000 /dev/urandom >small.dat
: >empty.dat
mpiexec -n 1 "$B/pcp-split" -q small.dat contig-1rank
mpiexec -n 3 "$B/pcp-split" -q -b 1K small.dat cyclic-3ranks
mpiexec -n 4 "$B/pcp-split" -q small.dat contig-4ranks
mpiexec -n 2 "$B/pcp-split" -q empty.dat empty-2ranks
mpiexec -n 2 -env GFSPLIT_NODE nA "$B/pcp-split" -q -b 700 small.dat cyclic-2nodes : \
	-n 2 -env GFSPLIT_NODE nB "$B/pcp-split" -q -b 700 small.dat cyclic-2nodes
for p in "hpio --regions=4 --region-size=64 --spacing=8" "overlap --block=256" \
    "ior-at --block=300 --segments=2 --transfer=100"; do
	set -- $p
	mpiexec -n 3 -env LD_PRELOAD "$L" -env GFSPLIT_SPLIT_FILES "$W/mpiio-*" \
		"$U/mpi_iopat" "$1" write "$W/mpiio-$1" "${@:2}" >/dev/null
done
for d in contig-1rank cyclic-3ranks contig-4ranks empty-2ranks cyclic-2nodes \
    mpiio-hpio mpiio-overlap mpiio-ior-at; do
	cp "$d/gfsplit.meta" "$OUT/marker/$d"
	cp "$d/loc.0" "$OUT/locfile/$d"
	# layout: the marker and every loc.K without their trailers, "\n==\n"
	# between them (fuzz_layout.c)
	python3 - "$d" "$OUT/layout/$d" <<'PY'
import sys
d, out = sys.argv[1], sys.argv[2]
m = open(d + "/gfsplit.meta", "rb").read()
n = int.from_bytes(m[16:20], "little")
parts = [m[:-8]] + [open("%s/loc.%d" % (d, k), "rb").read()[:-8] for k in range(n)]
open(out, "wb").write(b"\n==\n".join(parts))
PY
done
cp cyclic-2nodes/loc.1 "$OUT/locfile/cyclic-2nodes-loc1"

# ---- staging: the state index, a killed transfer's journal, gfsz files
mkdir -p src/sub zsrc ksrc
echo hello >src/a.txt
seq 1 300000 >src/sub/seq.txt
: >src/empty
ln -s a.txt src/link
ln src/a.txt src/hard
mpiexec -n 1 "$B/stage-in" -q src/ dst
cp dst/.gfsplit-stage/index "$OUT/journal/index-done"
head -c 4000000 /dev/urandom >ksrc/big
(timeout -s KILL 2.5 mpiexec -n 1 "$B/stage-in" -q -c 1M --bwlimit=1M ksrc/ dstk) 2>/dev/null || true
{ printf '\f'; cat dstk/.gfsplit-stage/journal.*; } >"$OUT/journal/journal-chunks"
yes 'gfsplit fuzz seed' | head -c 2500000 >zsrc/rep.txt
head -c 3000 /dev/zero >zsrc/zeros
mpiexec -n 1 "$B/stage-in" -q -z -c 1M zsrc/ dstz
cp dstz/rep.txt "$OUT/zfile/three-chunks"
cp dstz/zeros "$OUT/zfile/one-chunk"

# ---- packed file lists
cat >mkflist.c <<'C'
#include <stdio.h>
#include <string.h>
#include "core.h"
#include "stage.h"
int
main(int argc, char **argv)
{
	struct gfsp_flist l;
	struct gfsp_error err;
	unsigned char *b;
	size_t n;
	FILE *f;
	int i;

	memset(&l, 0, sizeof(l));
	gfsp_error_clear(&err);
	for (i = 2; i < argc; i++)
		if (gfsp_flist_add_tree(&l, argv[i], &err))
			goto fail;
	if (gfsp_flist_finish(&l, &err) || gfsp_flist_pack(&l, &b, &n, &err))
		goto fail;
	f = fopen(argv[1], "wb");
	return f == NULL || fwrite(b, 1, n, f) != n || fclose(f) != 0;
fail:
	fprintf(stderr, "%s\n", err.msg);
	return 1;
}
C
# shellcheck disable=SC2046
mpicc -I"$TOP/libcore" mkflist.c -o mkflist "$TOP/lib/libgfsplit.a" \
	$(sed -n 's/^LIBS = //p' "$TOP/config.mk")
./mkflist "$OUT/flist/tree" src/
./mkflist "$OUT/flist/two-trees" src zsrc
./mkflist "$OUT/flist/one-file" src/a.txt

# ---- envelopes
mkdir envt
mpiexec -n 1 "$B/envelope-bench" --json --sizes 1K --files 2 --reps 1 --warmup 0 \
	--min-time 0 envt >env1.json
mpiexec -n 2 "$B/envelope-bench" --json --sizes 1,1K,64K --files 2 --reps 2 --warmup 0 \
	--min-time 0 envt >env2.json
python3 - "$OUT/envelope" <<'PY'
import json, sys
out = sys.argv[1] + "/"
j = json.load(open("env1.json"))
open(out + "one-rank-1K", "w").write(json.dumps(j, separators=(",", ":")))
j = json.load(open("env2.json"))
for p in j["points"]:
    p.pop("samples", None)
j.pop("machine", None)
open(out + "two-ranks-3-sizes-no-samples", "w").write(json.dumps(j, separators=(",", ":")))
PY

# ---- manifests (fuzz_manifest.c's tree: a, d/, d/b c, d/e/f, d/l, d/h)
printf 'a inputs/a\nd inputs/d\n' >"$OUT/manifest/two-pairs"
printf '# stage these\n\nd/b\\ c  with\\ blank\n\td/e\tdeep//dir/\nd/l link\nd/h hard\n' \
	>"$OUT/manifest/escapes-links"
printf 'a x\\n\\ty\n' >"$OUT/manifest/escaped-newline"
printf 'a ../up\n' >"$OUT/manifest/refused-dotdot"
echo "mkcorpus: seeds in $OUT"
