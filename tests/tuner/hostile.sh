#!/bin/sh
# Variants that attack the measurement itself (docs/spec.md §5, issue 28), on
# the CPU: tests/tuner/hostile_host.cpp's planted variants fork (and answer
# for the worker), leave a thread, an alarm, a signal handler or another
# working directory behind, copy a guard into a guard, write into their
# input, or are wrong on 30% of their calls. Each must fail with its own
# note, every correct variant must be ok on every shape, and no cell may be
# lost; the --seed is chosen so that an innocent runs right after each
# hostile variant, where leftovers would be blamed on it. Then scratch
# directories a killed aotc left are removed by the next run, and buffers
# over AOTC_HOST_MEMORY_LIMIT are refused as `resources`.
# Usage: hostile.sh AOTC REPO_ROOT
# Absolute: the test runs from its own directory.
case $1 in /*) aotc=$1 ;; *) aotc=$PWD/$1 ;; esac
case $2 in /*) root=$2 ;; *) root=$PWD/$2 ;; esac
src=$root/tests/tuner/hostile_host.cpp
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Relative: a variant that changes the working directory then breaks the
# worker's later loads, unless the worker is restarted after it.
cd "$tmp" || exit 1
export AOTC_CACHE_DIR=cache
# An 8 MiB flush before each timed launch (AOTC_COLD_CACHE=flush: not the
# eviction of the buffers' few lines, nor the suite's 64 KiB): checking
# may cost a quarter of the timing (tuner/worker.c), and with tiny timed
# launches that leaves too few checks to catch MODE 8 (wrong on 30% of its
# calls) every time; with it, all 20 are made.
export AOTC_HOST_FLUSH_BYTES=8388608 AOTC_COLD_CACHE=flush
export TMPDIR="$tmp/scratch"
mkdir "$TMPDIR"
. "$(dirname "$0")/../lib.sh"

# --- a seed that puts an innocent right after each hostile variant ------------
"$aotc" parse "$src" >hostile.ir.json 2>log || { bad "parse" "$(tail -5 log)"; exit 1; }
seed=
for s in $(seq 1 400); do
	"$aotc" tune hostile.ir.json --kernel hostile --arch host --dump=configs --seed "$s" 2>/dev/null |
		python3 -c '
import json, sys
order = [json.loads(l)["values"] for l in sys.stdin]
hostile = [m > 0 and g == 0 for m, g in order]
sys.exit(0 if order and not any(hostile[i] and hostile[i + 1] for i in range(len(order) - 1)) else 1)
' && { seed=$s; break; }
done
if [ -z "$seed" ]; then
	bad "no --seed in 1..400 puts an innocent after each hostile variant (has the search order changed?)"
	exit 1
fi

# --- scratch a killed aotc left: the pid of a process that has ended ---------
dead=$(sh -c 'echo $$')
mkdir "$TMPDIR/aotc-host-$dead-Ab12Cd" "$TMPDIR/aotc-host-$$-Ab12Cd" "$TMPDIR/aotc-host-notapid"
echo x >"$TMPDIR/aotc-host-$dead-Ab12Cd/gen.cpp"
echo x >"$TMPDIR/aotc-host-$dead-Zz34Yy.so"

# --- the hostile variants ----------------------------------------------------
AOTC_MEASURE_TIMEOUT=20 "$aotc" tune "$src" --kernel hostile --arch host --db db --seed "$seed" \
	--dump=schedule >schedule.jsonl 2>log
rc=$?
if [ $rc -ne 0 ]; then
	bad "hostile: tune exits $rc" "$(tail -5 log)"
else
	why=$(python3 - db/hostile.*.json schedule.jsonl <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
names = [c["name"] for c in db["configs"]]
values = lambda name: [int(v) for v in name[name.index("<") + 1:-1].split(",")]
# status, and words of which the note must hold one (a thread or an alarm
# that strikes while its own variant is still measured, on a machine loaded
# enough to leave a second between two calls, faults that variant by signal)
want = {0: ("ok", None), 1: ("fault", ["forked"]), 2: ("fault", ["thread", "signal 11"]),
        3: ("fault", ["timer", "signal 14"]), 4: ("fault", ["working directory"]),
        5: ("fault", ["signal 11"]), 6: ("out_of_bounds", ["y: written past its end"]),
        7: ("wrong", ["wrote into input x"]), 8: ("wrong", None), 9: ("fault", ["forked"])}
errors = []
seen = set()
caught8 = 0
for m in db["measurements"]:
    mode, good = values(names[m["config"]])
    n = db["shapes"][m["shape"]][0]
    seen.add((m["config"], m["shape"]))
    status, word = want[mode] if not good else ("ok", None)
    what = "%s n=%d" % (names[m["config"]], n)
    caught8 += mode == 8 and not good and m["status"] == "wrong"
    # Wrong on 30% of its calls, the variant is caught by the 20 checks of a
    # full measurement; screened (3x slower than the best so far, stopped
    # after 3 timed launches: docs/database.md, "How a measurement is taken")
    # it may pass the few checks it had. It must be caught somewhere.
    if mode == 8 and not good and m["status"] == "ok" and m.get("screened"):
        continue
    if m["status"] != status:
        errors.append("%s: %s (%s), expected %s" % (what, m["status"], m.get("note", ""), status))
    elif word and not any(w in m.get("note", "") for w in word):
        errors.append("%s: note %r lacks %s" % (what, m.get("note", ""), " or ".join(map(repr, word))))
    elif status == "ok" and not (m["time_ms"] > 0 and len(m["samples"]) >= 3):
        errors.append("%s: ok without samples" % what)
if not caught8:
    errors.append("the variant wrong on 30% of its calls was caught nowhere")
cells = len(names) * len(db["shapes"])
if len(seen) != cells:
    errors.append("%d cells of %d measured" % (len(seen), cells))
# Blame was tested: in the order measured, an innocent follows each hostile one.
for line in open(sys.argv[2]):
    o = json.loads(line)
    order = [values(c) for c in o["configs"]]
    for i in range(len(order) - 1):
        if order[i][0] > 0 and order[i][1] == 0 and order[i + 1][0] > 0 and order[i + 1][1] == 0:
            errors.append("%s: %s ran right after %s" % (o["shape"], order[i + 1], order[i]))
print("\n".join(errors))
PY
)
	if [ -z "$why" ]; then
		ok "hostile: each planted variant fails with its note, every innocent is ok on every shape (seed $seed)"
	else
		bad "hostile: statuses (seed $seed; rerun: cd $tmp && $aotc_real tune $src --kernel hostile --arch host --seed $seed --verbose)" "$why"
	fi
fi

# --- scratch ----------------------------------------------------------------
if [ ! -e "$TMPDIR/aotc-host-$dead-Ab12Cd" ] && [ ! -e "$TMPDIR/aotc-host-$dead-Zz34Yy.so" ]; then
	ok "scratch: what a dead process left is removed"
else
	bad "scratch: what a dead process left is removed" "$(ls "$TMPDIR")"
fi
if [ -d "$TMPDIR/aotc-host-$$-Ab12Cd" ] && [ -d "$TMPDIR/aotc-host-notapid" ]; then
	ok "scratch: a live process's and a stranger's are kept"
else
	bad "scratch: a live process's and a stranger's are kept" "$(ls "$TMPDIR")"
fi
rmdir "$TMPDIR/aotc-host-$$-Ab12Cd" "$TMPDIR/aotc-host-notapid"
left=$(ls "$TMPDIR")
[ -z "$left" ] && ok "scratch: nothing left after a tune" || bad "scratch: nothing left after a tune" "$left"

# kill -9 while compiling, then a rerun: nothing of the killed one stays.
AOTC_CACHE_DIR=cache2 "$aotc" tune "$src" --kernel big --arch host --db db4 >log4 2>&1 &
tuner=$!
for i in $(seq 1 2000); do
	ls "$TMPDIR" | grep -q "^aotc-host-$tuner-" && break
	sleep 0.01
done
kill -9 $tuner
wait $tuner 2>/dev/null
# The compilers it ran finish on their own; wait for them to let go.
for i in $(seq 1 600); do
	pgrep -f "$TMPDIR/aotc-host-$tuner-" >/dev/null || break
	sleep 0.1
done
if ls "$TMPDIR" | grep -q "^aotc-host-$tuner-"; then
	AOTC_CACHE_DIR=cache2 "$aotc" tune "$src" --kernel big --arch host --db db4 >log4 2>&1
	left=$(ls "$TMPDIR")
	[ -z "$left" ] && ok "scratch: a tune killed with -9 leaves nothing after the next run" ||
		bad "scratch: a tune killed with -9 leaves nothing after the next run" "$left"
else
	echo "SKIP scratch: kill -9 came before or after the compiles"
fi

# --- buffers over the memory limit ---------------------------------------------
# Every shape of hostile (1.5 MiB and more with the copies) over 1 MiB: refused
# at the shape, before anything runs.
AOTC_HOST_MEMORY_LIMIT=1M "$aotc" tune "$src" --kernel hostile --arch host --db db2 >log2 2>&1
rc=$?
why=$(python3 - db2/hostile.*.json <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
bad = [m for m in db["measurements"] if m["status"] != "resources" or
       "more than the limit of 1.0 MiB" not in m.get("note", "")]
n = len(db["configs"]) * len(db["shapes"])
print("%d of %d cells not refused (%s)" % (len(bad) + n - len(db["measurements"]), n,
                                            bad[0] if bad else "") if bad or len(db["measurements"]) != n else "")
PY
)
[ $rc -eq 4 ] && [ -z "$why" ] && ok "memory: shapes over AOTC_HOST_MEMORY_LIMIT are resources, nothing runs (exit 4)" ||
	bad "memory: shapes over the limit" "exit $rc" "$why" "$(tail -3 log2)"

# big has no reference: its n=4000000 (16 MB a copy) is refused per variant,
# which must not spread to n=1000 as a launch's resources would.
# (cache2: big's variants as the rerun above compiled them.)
AOTC_CACHE_DIR=cache2 AOTC_HOST_MEMORY_LIMIT=8M "$aotc" tune "$src" --kernel big --arch host --db db3 >log3 2>&1
rc=$?
why=$(python3 - db3/big.*.json <<'PY'
import json, sys
db = json.load(open(sys.argv[1]))
want = {4000000: "resources", 1000: "ok"}
errors = ["%s n=%d: %s (%s)" % (db["configs"][m["config"]]["name"], db["shapes"][m["shape"]][0],
                                m["status"], m.get("note", ""))
          for m in db["measurements"] if m["status"] != want[db["shapes"][m["shape"]][0]]]
if len(db["measurements"]) != 4:
    errors.append("%d measurements, expected 4" % len(db["measurements"]))
print("; ".join(errors))
PY
)
[ $rc -eq 0 ] && [ -z "$why" ] && ok "memory: a variant refused on one shape is measured on the others" ||
	bad "memory: per variant" "exit $rc" "$why" "$(tail -3 log3)"

finish
