#!/bin/sh
# Timed launches on rotated copies of the buffers (method "cold_cache":
# "rotate", docs/database.md), run on the host with AOTC_COLD_CACHE=rotate: recorded; most timed launches on copies; every
# status as with the full flush (an in-place kernel right although each
# copy's values grow, one writing past its buffer out_of_bounds); buffers
# as large as the flush not rotated; a bad AOTC_COLD_CACHE a usage error.
# Usage: rotate.sh AOTC REPO_ROOT
aotc=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
src=$root/tests/tuner/rotate_host.cpp
. "$(dirname "$0")/../lib.sh"

tune() { "$aotc" tune "$src" --arch host --alternate 3 "$@" >"$tmp/log" 2>&1; }
db() { ls "$tmp"/$1/axpy.*.json; }
# statuses NAME: every cell's status, by configuration name and shape
statuses() {
	json "$(db "$1")" '" ".join("%s@%d:%s" % (d["configs"][m["config"]]["name"], m["shape"], m["status"])
	                          for m in sorted(d["measurements"], key=lambda m: (m["config"], m["shape"])))'
}
# rotated: the summary's share of timed launches on rotated copies (none: 0)
rotated() { sed -n 's/.* with \([0-9]*\)% of the timed launches on rotated copies.*/\1/p' "$tmp/log" | head -1; }

# 1 MiB stands for the last-level cache: the buffers (8 KiB to 512 KiB) rotate.
AOTC_COLD_CACHE=rotate AOTC_HOST_FLUSH_BYTES=1048576 tune --db "$tmp/rot"
st=$?
share=$(rotated)
[ $st = 0 ] && [ "$(json "$(db rot)" 'd["method"]["cold_cache"]')" = rotate ] && [ "${share:-0}" -ge 50 ] &&
	ok "rotate: recorded, ${share}% of the timed launches on copies" ||
	bad "rotate: exit $st, share '$share'" "$tmp/log"

AOTC_COLD_CACHE=flush AOTC_HOST_FLUSH_BYTES=1048576 tune --db "$tmp/flush"
st=$?
[ $st = 0 ] && [ -z "$(rotated)" ] && ok "flush: no launch on a copy" || bad "flush: exit $st" "$tmp/log"

want=$(statuses flush)
case $want in
*:ok*:out_of_bounds* | *:out_of_bounds*:ok*) ;;
*) bad "flush: not both ok and out_of_bounds cells to compare with" "$want" ;;
esac
[ "$(statuses rot)" = "$want" ] && ok "rotate: every status as with the flush" ||
	bad "statuses differ" "flush:  $want" "rotate: $(statuses rot)"
oob=$(json "$(db rot)" 'sum(1 for m in d["measurements"] if d["configs"][m["config"]]["values"][1] == 1 and m["status"] != "out_of_bounds")')
ok0=$(json "$(db rot)" 'sum(1 for m in d["measurements"] if d["configs"][m["config"]]["values"][1] == 0 and m["status"] != "ok")')
[ "$oob" = 0 ] && [ "$ok0" = 0 ] && ok "rotate: the in-place kernel right, the one writing past y out of bounds" ||
	bad "rotate: $oob writing past y not out_of_bounds, $ok0 right ones not ok" "$(statuses rot)"

# 64 KiB: the largest shape's buffers (512 KiB) do not rotate; the others do.
AOTC_COLD_CACHE=rotate AOTC_HOST_FLUSH_BYTES=65536 tune --db "$tmp/part"
st=$?
share=$(rotated)
[ $st = 0 ] && [ "${share:-0}" -gt 0 ] && [ "${share:-0}" -lt 90 ] && [ "$(statuses part)" = "$want" ] &&
	ok "rotate: the shape larger than the flush flushed (${share}% rotated), statuses the same" ||
	bad "part: exit $st, share '$share'" "$tmp/log"

AOTC_COLD_CACHE=copy "$aotc" tune "$src" --arch host --db "$tmp/u" >"$tmp/log" 2>&1
st=$?
[ $st = 2 ] && grep -q "AOTC_COLD_CACHE is flush, evict or rotate, not 'copy'" "$tmp/log" &&
	ok "AOTC_COLD_CACHE=copy: usage error" || bad "AOTC_COLD_CACHE=copy: exit $st" "$tmp/log"
finish
