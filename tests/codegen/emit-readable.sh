#!/bin/sh
# The emitted dispatch reads like hand-written C (docs/spec.md §8), checked
# mechanically on the committed softmax database: the dispatch part (all
# but the header comment and the public table accessors) within 120 lines
# and 4 a leaf (the tree is as large as cross-validation chose: issue 30),
# no SSA temporaries (v12 = ...), features named in the tree (cols <= ...),
# one table of leaf orders, and no function left unused.
# Usage: emit-readable.sh AOTC REPO_ROOT
aotc=$1
root=$2
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../lib.sh"

cd "$root" || exit 1
if ! "$aotc" emit templates/softmax.cu --arch sm90 --db templates -o "$tmp" --quiet >"$tmp/log" 2>&1; then
	bad "aotc emit softmax" "$(tail -5 "$tmp/log")"
	finish
fi
c=$tmp/_aot_softmax_cuda_sm90.c

# The dispatch part: from the end of the header comment to the first public
# accessor (num_variants, variant_name, variant_params follow select()).
n=$(awk 'started && /^int aot_softmax_cuda_sm90_num_variants/ { exit } started { n++ } /^ \*\/$/ && !started { started = 1 } END { print n + 0 }' "$c")
leaves=$(sed -n 's/^static const signed char aot_orders\[\([0-9]*\)\].*/\1/p' "$c")
if [ "$n" -gt 0 ] && [ -n "$leaves" ] && [ "$n" -le $((120 + 4 * leaves)) ]; then
	ok "dispatch part is $n lines for $leaves leaves (<= 120 + 4 a leaf)"
else
	bad "dispatch part within 120 lines and 4 a leaf" "$n lines, ${leaves:-?} leaves"
fi
if grep -Eq '(^|[^A-Za-z_0-9])v[0-9]+ =' "$c"; then
	bad "no SSA temporaries" "$(grep -En '(^|[^A-Za-z_0-9])v[0-9]+ =' "$c" | head -3)"
else
	ok "no SSA temporaries"
fi
if grep -q 'if (cols <= ' "$c" && ! grep -q 'aot_f\[' "$c"; then
	ok "the tree tests named features (cols <= ...)"
else
	bad "the tree tests named features" "$(grep -n 'if (' "$c" | head -3)"
fi
norders=$(grep -c 'aot_orders\[[0-9]*\]\[[0-9]*\] = {' "$c")
if [ "$norders" -eq 1 ]; then
	ok "one table of leaf orders"
else
	bad "one table of leaf orders" "$norders tables"
fi
for cc in gcc clang; do
	command -v "$cc" >/dev/null 2>&1 || continue
	if "$cc" -std=c99 -Wall -Wextra -Werror -pedantic -Wunused-function -Wunused-variable -c "$c" -o "$tmp/o.o" >"$tmp/cc.log" 2>&1; then
		ok "$cc: no unused function or variable"
	else
		bad "$cc: no unused function or variable" "$(head -10 "$tmp/cc.log")"
	fi
done

finish
