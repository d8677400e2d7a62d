#!/bin/sh
# aotc tune --devices N on the host backend, where N workers stand in for
# devices (docs/cli.md): the scheduling of a multi-GPU tune, on a CPU.
#   - the work is split (both workers measure) and the database has a
#     single worker's cells, each with the same status, each measured once;
#   - a round with fewer shapes than workers cuts a shape's cells in pieces;
#   - a worker killed mid-run is restarted: nothing lost, nothing twice;
#   - a tuner killed mid-run resumes: no cell it recorded is measured again;
#   - --budget stops both workers, and a rerun goes on from there;
#   - bad --devices values are usage errors.
# tests/devices_host.cpp's statuses (ok, wrong, invalid) do not depend on
# timing, so the comparisons are exact.
# Usage: devices.sh AOTC REPO_ROOT
aotc=$1
root=$2
here=$root/tests/scale
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
export AOTC_HOST_FLUSH_BYTES=4096 # times matter little here
src=$here/devices_host.cpp

. "$(dirname "$0")/../lib.sh"

cells() { python3 "$here/cells.py" "$@"; }
tune() { "$aotc" tune "$src" --arch host "$@"; }
# measured LOG: how many cells a --verbose log measured, and how many twice
measured() { cells measured "$1" | wc -l; }
twice() { cells measured "$1" | sort | uniq -d | head -3; }
# wait_measured LOG N: until LOG says N cells were measured (at most 60 s)
wait_measured() {
	i=0
	while [ "$(measured "$1")" -lt "$2" ] && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# --- one worker, then two ---------------------------------------------------
tune --db "$tmp/one" --verbose >"$tmp/one.log" 2>&1
st=$?
one=$(ls "$tmp"/one/twice.*.json)
[ $st = 0 ] && [ -f "$one" ] && ok "one worker: tune exits 0" || bad "one worker: exit $st" "$tmp/one.log"
taken=$(sed -n 's/^\([0-9]*\) measurements taken.*/\1/p' "$tmp/one.log")

tune --db "$tmp/two" --devices 2 --verbose >"$tmp/two.log" 2>&1
st=$?
two=$(ls "$tmp"/two/twice.*.json)
[ $st = 0 ] && grep -q "^$taken measurements taken, 0 reused, .* on 2 devices" "$tmp/two.log" &&
	ok "two workers: exit 0, the same $taken measurements, on 2 devices" ||
	bad "two workers: exit $st, not $taken measurements on 2 devices" "$tmp/two.log"
d0=$(grep -c "^aotc: device 0: n=" "$tmp/two.log")
d1=$(grep -c "^aotc: device 1: n=" "$tmp/two.log")
[ "$d0" -gt 0 ] && [ "$d1" -gt 0 ] && ok "two workers: both measured ($d0 and $d1 cells)" ||
	bad "two workers: device 0 measured $d0 cells, device 1 $d1" "$tmp/two.log"
diff=$(cells same "$one" "$two")
[ -z "$diff" ] && ok "two workers: the cells and statuses of one" || bad "two workers: cells differ" "$diff"
[ -z "$(twice "$tmp/two.log")" ] && [ "$(measured "$tmp/two.log")" = "$taken" ] &&
	ok "two workers: each cell measured once" || bad "two workers: measured twice" "$(twice "$tmp/two.log")"
[ "$(json "$two" 'd["search"]["devices"]')" = "[0, 1]" ] && ok "two workers: search.devices is [0, 1]" ||
	bad "two workers: search.devices" "$(json "$two" 'd["search"]')"

# --- one shape, two workers: its cells cut in two ---------------------------
echo '[{"n": 384}]' >"$tmp/shape.json"
tune --db "$tmp/one1" --shapes "$tmp/shape.json" >"$tmp/log" 2>&1
tune --db "$tmp/two1" --shapes "$tmp/shape.json" --devices 2 --verbose >"$tmp/two1.log" 2>&1
st=$?
d0=$(grep -c "^aotc: device 0: n=384 " "$tmp/two1.log")
d1=$(grep -c "^aotc: device 1: n=384 " "$tmp/two1.log")
diff=$(cells same "$tmp"/one1/twice.*.json "$tmp"/two1/twice.*.json)
[ $st = 0 ] && [ "$d0" -gt 0 ] && [ "$d1" -gt 0 ] && [ -z "$diff" ] && [ -z "$(twice "$tmp/two1.log")" ] &&
	ok "one shape: both workers measure part of it ($d0 and $d1 cells), the same cells" ||
	bad "one shape: exit $st, $d0 and $d1 cells" "$diff" "$tmp/two1.log"

# --- a worker killed mid-run -------------------------------------------------
# (aotc itself in the background, not a function's subshell: $! is aotc's)
"$aotc" tune "$src" --arch host --db "$tmp/kw" --devices 2 --verbose >"$tmp/kw.log" 2>&1 &
pid=$!
wait_measured "$tmp/kw.log" 15
victim=$(pgrep -P $pid | head -1)
[ -n "$victim" ] && kill -9 "$victim"
wait $pid
st=$?
restarts=$(sed -n 's/.*; \([0-9]*\) worker restarts*$/\1/p' "$tmp/kw.log")
diff=$(cells same "$one" "$tmp"/kw/twice.*.json)
[ $st = 0 ] && [ -n "$victim" ] && [ "${restarts:-0}" -ge 1 ] && [ -z "$diff" ] &&
	ok "a worker killed: restarted ($restarts), the cells and statuses of one worker's tune" ||
	bad "a worker killed (pid ${victim:-none}): exit $st, ${restarts:-no} restarts" "$diff" "$tmp/kw.log"
[ -z "$(twice "$tmp/kw.log")" ] && ok "a worker killed: no cell measured twice" ||
	bad "a worker killed: measured twice" "$(twice "$tmp/kw.log")"

# --- the tuner killed mid-run, then resumed ----------------------------------
"$aotc" tune "$src" --arch host --db "$tmp/kt" --devices 2 --verbose >"$tmp/kt1.log" 2>&1 &
pid=$!
wait_measured "$tmp/kt1.log" 25
kill -9 $pid
wait $pid 2>/dev/null
cells known "$tmp"/kt/twice.*.json | sort >"$tmp/known"
tune --db "$tmp/kt" --devices 2 --verbose >"$tmp/kt2.log" 2>&1
st=$?
again=$(cells measured "$tmp/kt2.log" | sort | comm -12 - "$tmp/known" | head -3)
diff=$(cells same "$one" "$tmp"/kt/twice.*.json)
reused=$(sed -n 's/^[0-9]* measurements taken, \([0-9]*\) reused.*/\1/p' "$tmp/kt2.log")
[ $st = 0 ] && [ "${reused:-0}" -gt 0 ] && [ -z "$again" ] && [ -z "$diff" ] &&
	ok "a tuner killed: the rerun reuses $reused cells, measures none of them again, ends with one worker's cells" ||
	bad "a tuner killed: exit $st, ${reused:-no} reused" "measured again: $again" "$diff" "$tmp/kt2.log"

# --- the budget ---------------------------------------------------------------
# Ten times slower calls (another source hash: its own database): a full
# tune would take several seconds on two workers; the budget stops it at 1.
slow() { "$aotc" tune "$src" --arch host -DDEVICES_SPIN=30000000 --devices 2 "$@"; }
slow --db "$tmp/b" --compile-only >"$tmp/log" 2>&1
slow --db "$tmp/b" --budget 1s --verbose >"$tmp/b1.log" 2>&1
st=$?
secs=$(sed -n 's/^[0-9]* measurements taken, .* in \([0-9.]*\) s on 2 devices.*/\1/p' "$tmp/b1.log")
first=$(measured "$tmp/b1.log")
# 1 s, and the cells in flight then (one each, at most about 0.3 s here)
[ $st = 0 ] && grep -q "stopped at the --budget" "$tmp/b1.log" &&
	python3 -c "import sys; sys.exit(not float('${secs:-99}') <= 2.5)" &&
	ok "--budget 1s: both stopped after $secs s ($first cells)" || bad "--budget 1s: exit $st, ${secs:-?} s" "$tmp/b1.log"
cells known "$tmp"/b/twice.*.json | sort >"$tmp/known"
slow --db "$tmp/b" --verbose >"$tmp/b2.log" 2>&1
st=$?
again=$(cells measured "$tmp/b2.log" | sort | comm -12 - "$tmp/known" | head -3)
[ $st = 0 ] && [ -z "$again" ] && ! grep -q "stopped at the --budget" "$tmp/b2.log" &&
	[ "$(json "$(ls "$tmp"/b/twice.*.json)" 'd["search"]["finished"]')" = true ] &&
	ok "--budget: the rerun finishes, measuring none of the first run's cells again" ||
	bad "--budget: rerun exit $st" "measured again: $again" "$tmp/b2.log"

# --- usage errors ---------------------------------------------------------------
for v in 0 65 1,1 0,x x 1, ,1 ''; do
	tune --db "$tmp/u" --devices "$v" >"$tmp/log" 2>&1
	st=$?
	[ $st = 2 ] && grep -q -- "--devices needs a number of devices from 1 to 64 or a list of distinct device indices" "$tmp/log" &&
		ok "--devices '$v': usage error" || bad "--devices '$v': exit $st" "$tmp/log"
done
"$aotc" emit "$src" --arch host --db "$tmp/one" --devices 2 >"$tmp/log" 2>&1
st=$?
[ $st = 2 ] && grep -q -- "--devices is not an option of 'aotc emit'" "$tmp/log" && ok "emit --devices: usage error" ||
	bad "emit --devices: exit $st" "$tmp/log"
[ ! -e "$tmp/u" ] && ok "usage errors write nothing" || bad "usage errors wrote $tmp/u"

finish
