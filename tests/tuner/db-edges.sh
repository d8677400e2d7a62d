#!/bin/sh
# Database edges of issue 28 (docs/database.md): a tune killed before its
# first save leaves a document that report and emit read (the journal is
# never all there is); a journal alone (an older aotc's) is named, not
# ignored; an ok measurement with a time that is not positive, or a negative
# sample, is refused with the file named.
# Usage: db-edges.sh AOTC REPO_ROOT   (~10 s)
aotc=$1
root=$2
tmp=$(mktemp -d)
bg=
trap '[ -n "$bg" ] && kill -KILL "-$bg" 2>/dev/null; rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
. "$(dirname "$0")/../lib.sh"
check() { # check NAME GOT WANT [PATTERN]: exit status, and the log matches
	if [ "$2" -ne "$3" ]; then bad "$1" "exit $2, expected $3" "$(tail -5 "$tmp/log")"
	elif [ -n "$4" ] && ! grep -Eq -- "$4" "$tmp/log"; then bad "$1" "no /$4/ in:" "$(tail -5 "$tmp/log")"
	else ok "$1"; fi
}

k=$tmp/k.cpp
cp "$root/tests/tuner/truth_host.cpp" "$k"
python3 -c 'import json; print(json.dumps([{"n": 1048576 + 16 * i} for i in range(60)]))' >"$tmp/s.json"
setsid "$aotc" tune "$k" --arch host --db "$tmp/db" --shapes "$tmp/s.json" >"$tmp/tune.log" 2>&1 &
bg=$!
for _ in $(seq 1 600); do
	j=$(ls "$tmp"/db/*.journal 2>/dev/null | head -1)
	[ -n "$j" ] && [ "$(wc -l <"$j")" -ge 2 ] && break
	sleep 0.05
done
kill -KILL "-$bg"
wait "$bg" 2>/dev/null
bg=
doc=$(ls "$tmp"/db/*.json 2>/dev/null | head -1)
if [ -n "$doc" ]; then ok "a tune killed before its first save leaves a document"
else bad "killed tune: document" "$(ls -la "$tmp/db")" "$(tail -3 "$tmp/tune.log")"; exit 1; fi
"$aotc" report "$doc" >"$tmp/log" 2>&1
check "report reads it, the journal's measurements with it" $? 0 "measurements"
n=$(sed -n 's/.*: \([0-9]*\) measurements$/\1/p' "$tmp/log" | head -1)
if [ "${n:-0}" -ge 2 ]; then ok "report counts the journalled measurements ($n)"; else bad "journalled measurements counted" "$(head -2 "$tmp/log")"; fi

# The journal alone, as an older aotc left it: named by report and emit.
mkdir "$tmp/old"
cp "$doc.journal" "$tmp/old/"
"$aotc" report "$tmp/old/$(basename "$doc")" >"$tmp/log" 2>&1
check "report of a journal alone: exit 3, says what it is" $? 3 "only the journal of a tune killed before its first save"
"$aotc" emit "$k" --arch host --db "$tmp/old" -o "$tmp/out" >"$tmp/log" 2>&1
check "emit beside a journal alone: exit 3, names it" $? 3 "$(basename "$doc").journal: only the journal"

# Times that cannot be: refused with the file named.
"$aotc" tune "$k" --arch host --db "$tmp/db" --shapes "$tmp/s.json" --budget 2s >/dev/null 2>&1
for what in "time_ms=-1" "time_ms=0" "samples=-0.5"; do
	mkdir -p "$tmp/neg"
	python3 - "$doc" "$tmp/neg/$(basename "$doc")" "$what" <<'END'
import json, sys
d = json.load(open(sys.argv[1]))
key, val = sys.argv[3].split("=")
m = next(m for m in d["measurements"] if m["status"] == "ok")
if key == "samples":
    m["samples"][0] = float(val)
else:
    m["time_ms"] = float(val)
json.dump(d, open(sys.argv[2], "w"))
END
	"$aotc" report "$tmp/neg/$(basename "$doc")" >"$tmp/log" 2>&1
	check "an ok measurement with $what: refused (exit 3, file named)" $? 3 "$(basename "$doc").*(time_ms|samples)"
	rm -rf "$tmp/neg"
done

# A database of a newer schema: named as a newer aotc's, not as "not a
# database"; one of no schema number stays "not an aotc database".
for v in 2 '"x"'; do
	mkdir -p "$tmp/ver"
	python3 - "$doc" "$tmp/ver/$(basename "$doc")" "$v" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["aotc_db"] = json.loads(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
	"$aotc" report "$tmp/ver/$(basename "$doc")" >"$tmp/log" 2>&1
	st=$?
	if [ "$v" = 2 ]; then
		check "schema 2: written by a newer aotc (exit 3)" $st 3 "written by a newer aotc \(database schema 2; aotc [0-9.]+ reads schema 1\)"
	else
		check "schema \"x\": not an aotc database (exit 3)" $st 3 "not an aotc database of schema version 1"
	fi
	rm -rf "$tmp/ver"
done
# The IR and the record file likewise (docs/database.md, "Versions").
echo '{"aotc_ir": 9}' >"$tmp/new.ir.json"
"$aotc" tune "$tmp/new.ir.json" --arch host --db "$tmp/v" >"$tmp/log" 2>&1
check "IR version 9: written by a newer aotc (exit 1, an input error)" $? 1 "written by a newer aotc \(IR version 9; aotc [0-9.]+ reads version 1\)"
echo '{"aotc_record": 3, "kernels": {}}' >"$tmp/rec.json"
"$aotc" tune "$k" --arch host --shapes "$tmp/rec.json" --db "$tmp/v" >"$tmp/log" 2>&1
check "record file version 3: written by a newer aotc (exit 1, an input error)" $? 1 "record file: written by a newer aotc"
finish
