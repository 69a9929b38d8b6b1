#!/bin/bash
# lint.sh - what HACKING.md asks that a program can check (tools/lint.py):
# every libcore header's "Included by" sentence names its real includers,
# no document is cited by a number only the team knew, no libcore .c file
# over 1,300 lines, no function over 100 (unless the comment above says it
# "reads better whole:"), no raw rename outside the files that own putting
# a file in place; known violations in tools/lint-debt.txt, which may only
# shrink.  The check is shown to fail on a doctored copy of the tree.
. "$(dirname "$0")/../lib.sh"

check "the tree passes tools/lint.py (with tools/lint-debt.txt)" \
	python3 "$TOP/tools/lint.py" "$TOP" "$TOP/tools/lint-debt.txt"

# doctor DIR WHAT PATTERN: the lint fails on DIR, saying PATTERN
doctor() {
	if python3 "$TOP/tools/lint.py" "$1" "$TOP/tools/lint-debt.txt" >"$TMPD/out" 2>&1; then
		not_ok "$2 is caught" "$(cat "$TMPD/out")"
	else
		grep -q "$3" "$TMPD/out" && ok "$2 is caught, named" ||
			not_ok "$2 is caught, named" "$(cat "$TMPD/out")"
	fi
}
fresh() {
	rm -rf "$TMPD/t" && mkdir -p "$TMPD/t" && copy_tree "$TMPD/t"
}

fresh
{ printf 'int\nlong_one(void)\n{\n'; for i in $(seq 99); do echo '	;'; done; echo '}'; } \
	>>"$TMPD/t/libcore/base/err.c"
doctor "$TMPD/t" "a function of 101 lines" "long-function: libcore/base/err.c long_one: 101 lines"

fresh
{ printf '/* reads better whole: a test of the marker */\nint\nlong_ok(void)\n{\n'
  for i in $(seq 99); do echo '	;'; done; echo '}'; } >>"$TMPD/t/libcore/base/err.c"
check "a long function with the marker above it passes" \
	python3 "$TOP/tools/lint.py" "$TMPD/t" "$TOP/tools/lint-debt.txt"

fresh
sed -i 's/Included by libcore\/copy\/ only/Included by libcore\/ only/' "$TMPD/t/libcore/copy/mplan.h"
doctor "$TMPD/t" "a false Included-by line" "included-by: libcore/copy/mplan.h"

fresh
printf 'void mv(void);\nvoid\nmv(void)\n{\n\trename("a", "b");\n}\n' >>"$TMPD/t/libcore/copy/mplan.c"
doctor "$TMPD/t" "a raw rename" "raw-rename: libcore/copy/mplan.c mv"

fresh
printf '/* see the paper of seed %s */\n' 001 >>"$TMPD/t/libcore/base/err.c"
doctor "$TMPD/t" "a paper cited by number" "reference: libcore/base/err.c:"

fresh
printf '/* as in the %s figure 2 */\n' "seed's" >>"$TMPD/t/libcore/base/err.c"
doctor "$TMPD/t" "a paper called by the team's name for it" \
	"reference: libcore/base/err.c:"

fresh
echo "long-function libcore/base/err.c gone" >>"$TMPD/debt"
cat "$TOP/tools/lint-debt.txt" "$TMPD/debt" >"$TMPD/debt2"
if python3 "$TOP/tools/lint.py" "$TMPD/t" "$TMPD/debt2" >"$TMPD/out" 2>&1; then
	not_ok "a debt entry that no longer violates is caught" "$(cat "$TMPD/out")"
else
	grep -q "no longer violates" "$TMPD/out" && ok "a debt entry that no longer violates is caught" ||
		not_ok "a debt entry that no longer violates is caught, named" "$(cat "$TMPD/out")"
fi
finish
