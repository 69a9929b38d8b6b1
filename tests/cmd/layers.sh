#!/bin/bash
# layers.sh - libcore's wings only point down (tools/layers.py): no
# #include and no call (the objects' symbol tables) from a wing into one
# above it or beside it, no preload header inside
# libcore.  The check itself is shown to fail on a copy of the tree with
# an include, and an object with a call, that point up.
. "$(dirname "$0")/../lib.sh"

case $BIN in
*/build/asan/bin) OBJDIR=$TOP/build/asan/obj/libcore ;;
*) OBJDIR=$TOP/build/release/obj/libcore ;;
esac
if [ ! -d "$OBJDIR" ]; then
	skip "the wings' calls" "no objects in $OBJDIR (build first)"
	finish
	exit 0
fi
check "libcore's wings only point down (includes and calls)" \
	python3 "$TOP/tools/layers.py" "$TOP/libcore" "$OBJDIR"

cp -r "$TOP/libcore" "$TMPD/lc"
echo '#include "stage.h"' >>"$TMPD/lc/base/err.c"
if python3 "$TOP/tools/layers.py" "$TMPD/lc" >"$TMPD/out" 2>&1; then
	not_ok "an include from base into stage is caught" "$(cat "$TMPD/out")"
else
	grep -q "base/err.c:.*base includes stage.h of stage" "$TMPD/out" &&
		ok "an include from base into stage is caught, naming the file and line" ||
		not_ok "an include from base into stage is caught, naming it" "$(cat "$TMPD/out")"
fi

cp -r "$TOP/libcore" "$TMPD/lc2"
cp -r "$OBJDIR" "$TMPD/obj"
printf 'int gfsp_cmd_main(const void *, int, char **);\nint up(void) { return gfsp_cmd_main(0, 0, 0); }\n' \
	>"$TMPD/lc2/store/up.c"
if gcc -c -o "$TMPD/obj/store/up.o" "$TMPD/lc2/store/up.c" 2>"$TMPD/out"; then
	if python3 "$TOP/tools/layers.py" "$TMPD/lc2" "$TMPD/obj" >"$TMPD/out" 2>&1; then
		not_ok "a call from store into a higher wing is caught" "$(cat "$TMPD/out")"
	else
		grep -q "store/up.o: calls gfsp_cmd_main of driver" "$TMPD/out" &&
			ok "a call from store into a higher wing is caught (no include needed)" ||
			not_ok "a call from store into a higher wing is caught" "$(cat "$TMPD/out")"
	fi
else
	skip "a call from store into a higher wing" "gcc: $(cat "$TMPD/out")"
fi
finish
