#!/bin/sh
# How each cell is timed, as set (docs/cli.md: --samples, --warmup,
# --cell-time, --screen, --quick) and as recorded in the database's method;
# the host's cold cache by eviction (method "cold_cache": "evict") or, with
# AOTC_COLD_CACHE=flush, by the full flush; bad values are usage errors.
# Usage: sampling.sh AOTC REPO_ROOT
aotc=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
src=$root/tests/scale/devices_host.cpp

. "$(dirname "$0")/../lib.sh"

tune() { "$aotc" tune "$src" --arch host -DDEVICES_SPIN=1000 "$@" >"$tmp/log" 2>&1; }
db() { ls "$tmp"/$1/twice.*.json; }
# most NAME: the most samples an ok cell of database NAME has (of those not
# alternated: alternation keeps its rounds' samples)
most() { json "$(db "$1")" 'max(len(m["samples"]) for m in d["measurements"] if m["status"] == "ok" and not m.get("alternated"))'; }
method() { json "$(db "$1")" "[d['method'][k] for k in ('warmup', 'min_samples', 'max_samples', 'screen_samples', 'screen_factor', 'budget_ms', 'cold_cache', 'min_checks')] + [d['method']['alternation']['rounds']]"; }

tune --db "$tmp/default"
st=$?
[ $st = 0 ] && [ "$(method default)" = '[1, 5, 25, 3, 3.0, 100.0, "evict", 20, 15]' ] &&
	ok "default: 1 warm-up, 5 to 25 samples, screened at 3x after 3, 100 ms a cell, the buffers evicted, 20 checks, 15 rounds of alternation" ||
	bad "default: exit $st, method $(method default)" "$tmp/log"

tune --db "$tmp/set" --samples 7 --warmup 2 --cell-time 50ms --screen 0 --checks 1
st=$?
screened=$(json "$(db set)" 'sum(1 for m in d["measurements"] if m.get("screened"))')
[ $st = 0 ] && [ "$(method set)" = '[2, 5, 7, 3, 0.0, 50.0, "evict", 1, 15]' ] && [ "$(most set)" -le 7 ] && [ "$screened" = 0 ] &&
	ok "--samples 7 --warmup 2 --cell-time 50ms --screen 0 --checks 1: recorded, at most 7 samples a cell, none screened" ||
	bad "set: exit $st, method $(method set), most $(most set), screened $screened" "$tmp/log"

tune --db "$tmp/quick" --quick
st=$?
[ $st = 0 ] && [ "$(method quick)" = '[1, 3, 5, 3, 2.0, 20.0, "evict", 20, 0]' ] && [ "$(most quick)" -le 5 ] &&
	grep -q "alternated (none this run: --alternate 0)" "$tmp/log" &&
	ok "--quick: 3 to 5 samples, 20 ms a cell, screened at 2x, no alternation" ||
	bad "--quick: exit $st, method $(method quick), most $(most quick)" "$tmp/log"

tune --db "$tmp/quick2" --quick --samples 2 --alternate 3
st=$?
[ $st = 0 ] && [ "$(method quick2)" = '[1, 2, 2, 3, 2.0, 20.0, "evict", 20, 3]' ] && [ "$(most quick2)" -le 2 ] &&
	ok "--quick --samples 2 --alternate 3: the options given win over the preset" ||
	bad "--quick with options: exit $st, method $(method quick2)" "$tmp/log"

AOTC_COLD_CACHE=flush AOTC_HOST_FLUSH_BYTES=65536 tune --db "$tmp/flush"
st=$?
[ $st = 0 ] && [ "$(json "$(db flush)" 'd["method"]["cold_cache"]')" = flush ] &&
	ok "AOTC_COLD_CACHE=flush: the full flush, recorded" || bad "flush: exit $st" "$tmp/log"

# --checks 1 checks the first launch only: a variant right on its first
# call alone is wrong with the default checks (exit 4: no variant right),
# ok with one.
cat >"$tmp/once.cpp" <<'END'
#include <aotc.h>
template <int U>
AOTC_TUNE(U, 1, 2)
AOTC_BUFFER(x, n, in)
AOTC_BUFFER(y, n, out)
AOTC_SHAPES(n = {4096})
AOTC_REFERENCE(once_ref)
void once(int n, const float *x, float *y)
{
	static int calls; // each variant's own
	bool right = calls++ == 0;
	for (int i = 0; i < n; i++)
		y[i] = right ? 2 * x[i] : 0;
}
void once_ref(int n, const float *x, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = 2 * x[i];
}
END
statuses() { json "$(ls "$tmp"/$1/once.*.json)" '" ".join(sorted(set(m["status"] for m in d["measurements"])))'; }
"$aotc" tune "$tmp/once.cpp" --arch host --db "$tmp/once20" >"$tmp/log" 2>&1
st1=$?
"$aotc" tune "$tmp/once.cpp" --arch host --db "$tmp/once1" --checks 1 >"$tmp/log1" 2>&1
st2=$?
[ $st1 = 4 ] && [ $st2 = 0 ] && [ "$(statuses once20)" = wrong ] && [ "$(statuses once1)" = ok ] &&
	ok "--checks 1: the first launch alone checked (right once: wrong by default, ok with it)" ||
	bad "--checks: exits $st1 $st2, statuses '$(statuses once20)' and '$(statuses once1)'" "$tmp/log" "$tmp/log1"

for a in "--samples 0" "--samples 1001" "--warmup -1" "--warmup 101" "--cell-time 5" "--cell-time 61s" \
	"--cell-time 0ms" "--screen 0.5" "--screen x" "--checks 0" "--checks 101"; do
	# shellcheck disable=SC2086
	"$aotc" tune "$src" --arch host --db "$tmp/u" $a >"$tmp/log" 2>&1
	st=$?
	[ $st = 2 ] && grep -q "^aotc tune: --[a-z-]* needs" "$tmp/log" && ok "$a: usage error" || bad "$a: exit $st" "$tmp/log"
done
"$aotc" emit "$src" --arch host --db "$tmp/default" --quick >"$tmp/log" 2>&1
st=$?
[ $st = 2 ] && grep -q -- "--quick is not an option of 'aotc emit'" "$tmp/log" && ok "emit --quick: usage error" ||
	bad "emit --quick: exit $st" "$tmp/log"
[ ! -e "$tmp/u" ] && ok "usage errors write nothing" || bad "usage errors wrote $tmp/u"

finish
