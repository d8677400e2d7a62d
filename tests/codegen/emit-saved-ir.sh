#!/bin/sh
# Emit without parsing (issue 29): the IR saved beside the saved dispatch
# (dispatch/<source file name>.ir.json) is reused while every input of the
# parse matches, and emits the same bytes as parsing (and as emitting from
# `aotc parse`'s IR); an edited kernel, an edited local header, other -D
# options, or a corrupt, truncated, stale or hostile saved IR is parsed again
# (same bytes as a fresh parse) and saved again; a folder where it cannot be
# saved changes nothing; and the saved IRs committed under templates/dispatch/
# are up to date (regenerate: see docs/database.md).
# Usage: emit-saved-ir.sh AOTC REPO_ROOT
# The suite sets AOTC_NO_SAVE=1 (tests/meson.build): saving is what this tests.
unset AOTC_NO_SAVE
aotc=$1
root=$2
case $aotc in /*) ;; *) aotc=$PWD/$aotc ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"
rerun="(rerun: $0 $aotc_real $root)"

# A copy of templates/ with the kernel, run from its parent with relative
# names as a user would (the saved IR is keyed on the source as named). Its
# databases are cut to every ninth variant (9 of 81): each edit below
# re-signs them, so emit learns the dispatch again, and the IR, not what
# 81 variants learn, is what is checked (the first emit learns and saves
# the dispatch the others reuse).
w=$tmp/w
mkdir -p "$w/templates/eval" "$w/templates/dispatch"
cp "$root"/templates/softmax.* "$w/templates/"
cp "$root"/templates/eval/softmax.* "$w/templates/eval/"
for f in "$w"/templates/softmax.cuda_*.json "$w"/templates/eval/softmax.cuda_*.json; do
	python3 "$root/tests/cut-db.py" "$f" "$f" --configs 9 || exit 1
done
cd "$w" || exit 1
src=templates/softmax.cu
saved=templates/dispatch/softmax.cu.ir.json

# emit NAME OUT [OPTIONS]: emit into $tmp/OUT ($tmp/OUT.log says what it did).
emit() {
	name=$1 out=$2
	shift 2
	timeout 120 "$aotc" emit "$src" --arch sm90 --db templates -o "$tmp/$out" --verbose "$@" >"$tmp/$out.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then bad "$name: exit $rc $rerun" "$(tail -5 "$tmp/$out.log")"; return 1; fi
	if grep -q "error:\|warning:" "$tmp/$out.log"; then bad "$name: says nothing" "$(cat "$tmp/$out.log")"; fi
	return 0
}
reused() { grep -q "reused the saved IR" "$tmp/$1.log"; }
parsed() { grep -q "^aotc: parsed " "$tmp/$1.log"; }
same() {
	if diff -r "$tmp/$2" "$tmp/$3" >/dev/null; then ok "$1"
	else bad "$1" "$(diff -r "$tmp/$2" "$tmp/$3" | head -5)"; fi
}
# fresh NAME OUT: the emitted files of a parse without the saved IR, which
# is then saved again (and reused: checked by the caller's next emit).
fresh() {
	mv "$saved" "$tmp/aside.json" 2>/dev/null
	emit "$1: fresh parse" "$2"
	parsed "$2" && [ -f "$saved" ] && ok "$1: fresh parse, saved" || bad "$1: fresh parse, saved" "$(cat "$tmp/$2.log")"
}
# The database's source hash follows an edited kernel (what a new tune
# would record), so that emit has a database to emit from.
# resign [-D...]: so do the configurations' codes (docs/database.md, "The key").
resign() {
	"$aotc" parse "$src" "$@" >"$tmp/resign.json"
	for f in templates/softmax.cuda_*.json templates/eval/softmax.cuda_*.json; do
		python3 - "$f" "$tmp/resign.json" <<'PY'
import json, sys
f, ir = sys.argv[1:]
ir = json.load(open(ir))
d = json.load(open(f)); d["source_hash"] = ir["source_hash"]
for c in d["configs"]:
    c["code"] = ir["kernels"][0]["code"]
json.dump(d, open(f, "w"))
PY
	done
}

emit "no saved IR: parses" parsed
parsed parsed && [ -f "$saved" ] && ok "parsed, then saved" || bad "parsed, then saved" "$(cat "$tmp/parsed.log")"
cp "$saved" "$tmp/good.json"
emit "saved: reused" reused
reused reused && ! parsed reused && ok "the saved IR is reused" || bad "reused" "$(cat "$tmp/reused.log")"
same "reused: the same bytes as parsing" parsed reused
"$aotc" parse "$src" >"$tmp/softmax.ir.json" 2>/dev/null
"$aotc" emit "$tmp/softmax.ir.json" --arch sm90 --db templates -o "$tmp/fromir" >/dev/null 2>&1
same "emitted from aotc parse's IR: the same bytes" parsed fromir
cmp -s "$saved" "$tmp/good.json" && ok "reused: not rewritten" || bad "reused: not rewritten"
cp templates/softmax.cuda_NVIDIA_H200_13.0.json "$tmp/db-before-D.json"
resign -DAOTC_TEST_UNUSED=1
emit "other -D" defined -DAOTC_TEST_UNUSED=1
parsed defined && ok "other -D: parsed" || bad "other -D: parsed" "$(cat "$tmp/defined.log")"
emit "the -D saved" defined2 -DAOTC_TEST_UNUSED=1
reused defined2 && ok "the same -D again: reused" || bad "the same -D again: reused"
same "-D: the same bytes" defined defined2
cp "$tmp/good.json" "$saved"
cp "$tmp/db-before-D.json" templates/softmax.cuda_NVIDIA_H200_13.0.json

# An edited kernel: parsed again, the same bytes as a fresh parse.
echo "// edited" >>"$src"
resign
emit "edited kernel" edited
parsed edited && ! reused edited && ok "edited kernel: parsed" || bad "edited kernel: parsed" "$(cat "$tmp/edited.log")"
fresh "edited kernel" edited-fresh
same "edited kernel: the same bytes as a fresh parse" edited edited-fresh
emit "edited kernel, saved" edited-again && reused edited-again && ok "edited kernel: saved again and reused" ||
	bad "edited kernel: saved again and reused" "$(cat "$tmp/edited-again.log")"
same "edited kernel: reused, the same bytes" edited edited-again

# A local header the annotations use: listed, and an edit to it is seen.
python3 - "$src" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
s = s.replace("AOTC_REQUIRE(BLOCK % 32 == 0", '#include "local.h"\nAOTC_REQUIRE(BLOCK % AOTC_TEST_WARP == 0', 1)
open(p, "w").write(s)
PY
echo "#define AOTC_TEST_WARP 32" >templates/local.h
resign
emit "local header" local
python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["files"] != ["templates/local.h"])' "$saved" &&
	ok "local header: listed in the saved IR" || bad "local header: listed" "$(grep -A3 '"files"' "$saved")"
emit "local header, saved" local-again
reused local-again && ok "local header: reused" || bad "local header: reused" "$(cat "$tmp/local-again.log")"
same "local header: the same bytes" local local-again
echo "#define AOTC_TEST_WARP 64" >templates/local.h
resign
emit "edited header" header
parsed header && ! reused header && ok "edited header: parsed" || bad "edited header: parsed" "$(cat "$tmp/header.log")"
fresh "edited header" header-fresh
same "edited header: the same bytes as a fresh parse" header header-fresh
grep -q '"value": 64' "$saved" && ok "edited header: the saved IR has the new value" ||
	bad "edited header: the saved IR has the new value"
rm templates/local.h
"$aotc" emit "$src" --arch sm90 --db templates -o "$tmp/gone" --verbose >"$tmp/gone.log" 2>&1
[ $? -ne 0 ] && grep -q "local.h" "$tmp/gone.log" && ! reused gone && ok "header gone: parsed (and fails as the parse does)" ||
	bad "header gone: not reused" "$(cat "$tmp/gone.log")"
echo "#define AOTC_TEST_WARP 64" >templates/local.h

# Corrupt, truncated, stale and hostile saved IRs: never used; the same
# bytes as a fresh parse; saved again.
emit "baseline" base
cp "$saved" "$tmp/good.json"
mkfifo "$tmp/fifo"
for how in truncate garbage empty hash source libclang version aotc cuda frontend files-missing files-extra \
           files-fifo said-error said-file ir-file ir-hash ir-broken include-dirs directory; do
	python3 - "$tmp/good.json" "$saved" "$how" "$tmp/fifo" <<'PY'
import json, os, sys
good, out, how, fifo = sys.argv[1:]
text = open(good).read()
d = json.loads(text)
if how == "truncate":
    open(out, "w").write(text[:len(text) // 2]); sys.exit()
if how == "garbage":
    open(out, "wb").write(b"\x00\xff{[" * 100); sys.exit()
if how == "empty":
    open(out, "w").write(""); sys.exit()
if how == "directory":
    os.remove(out); os.mkdir(out); sys.exit()
if how == "hash":
    d["source_hash"] = "0" * 32; d["ir"]["source_hash"] = "0" * 32
elif how == "source":
    d["source"] = "templates/other.cu"
elif how == "libclang":
    d["libclang"] = "clang version 1.0.0"
elif how == "version":
    d["aotc_saved_ir"] = 2
elif how == "aotc":
    d["aotc"] = "0.0.1"
elif how == "cuda":
    d["cuda"] = "/nonexistent/cuda"
elif how == "frontend":
    d["frontend"] = "shim"
elif how == "files-missing":
    d["files"] = []
elif how == "files-extra":
    d["files"].append("templates/softmax.cu")
elif how == "files-fifo":
    d["files"] = [fifo]
elif how == "said-error":
    d["said"] = [{"kind": "error", "file": None, "line": 0, "col": 0, "message": "x"}]
elif how == "said-file":
    d["said"] = [{"kind": "warning", "file": "/etc/passwd", "line": 1, "col": 1, "message": "x"}]
elif how == "ir-file":
    d["ir"]["file"] = "templates/other.cu"
elif how == "ir-hash":
    d["ir"]["source_hash"] = "1" * 32
elif how == "ir-broken":
    d["ir"]["kernels"][0]["tunables"] = 7
elif how == "include-dirs":
    d["include_dirs"] = ["templates"]
json.dump(d, open(out, "w"))
PY
	emit "$how" "h-$how" || continue
	if [ "$how" = directory ]; then
		parsed "h-$how" && ok "$how: parsed" || bad "$how: parsed"
		same "$how: the same bytes" base "h-$how"
		rmdir "$saved"
		continue
	fi
	parsed "h-$how" && ! reused "h-$how" && ok "$how: not used, parsed" || bad "$how: not used $rerun" "$(cat "$tmp/h-$how.log")"
	same "$how: the same bytes" base "h-$how"
	cmp -s "$saved" "$tmp/good.json" && ok "$how: saved again" || bad "$how: saved again"
done

# Where it cannot be saved (its folder a file), emit still works and says
# nothing without --verbose.
rm -rf "$tmp/ro" && mkdir -p "$tmp/ro" && cp templates/softmax.cuda_*.json "$tmp/ro/" && touch "$tmp/ro/dispatch"
"$aotc" emit "$src" --arch sm90 --db "$tmp/ro" -o "$tmp/nosave" >"$tmp/log" 2>&1
rc=$?
if [ $rc -eq 0 ] && ! grep -q "warning\|error\|note" "$tmp/log"; then ok "cannot save: emits, says nothing"
else bad "cannot save: emits, says nothing" "exit $rc" "$(cat "$tmp/log")"; fi

# The committed saved IRs are up to date: their IR is what a parse gives
# now, over the same bytes; and where this machine's libclang and CUDA root
# are the ones they name, emit reuses them (run from the repository's root,
# as docs/database.md regenerates them).
for k in softmax sgemm; do
	c=$root/templates/dispatch/$k.cu.ir.json
	if [ ! -f "$c" ]; then bad "templates/dispatch/$k.cu.ir.json is committed"; continue; fi
	(cd "$root" && "$aotc" parse "templates/$k.cu") >"$tmp/$k.now.json" 2>/dev/null
	if python3 - "$c" "$tmp/$k.now.json" <<'PY'
import json, sys
saved, now = (json.load(open(p)) for p in sys.argv[1:])
sys.exit(saved["ir"] != now or saved["source_hash"] != now["source_hash"])
PY
	then ok "templates/dispatch/$k.cu.ir.json is up to date"
	else bad "templates/dispatch/$k.cu.ir.json is up to date" \
	         "regenerate: build/aotc emit templates/$k.cu --arch sm90 --db templates -o /tmp/aotc-regen"; fi
	rm -rf "$tmp/c" && mkdir -p "$tmp/c/templates/dispatch"
	cp "$root/templates/$k.cu" "$tmp/c/templates/" && cp "$c" "$tmp/c/templates/dispatch/"
	(cd "$tmp/c" && "$aotc" emit "templates/$k.cu" --arch sm90 --db templates -o out --verbose) >"$tmp/log" 2>&1
	if python3 - "$c" "$("$aotc" --version | sed -n 's/^libclang: //p')" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
roots = [r for r in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda")
         if r and os.path.exists(r + "/include/cuda_runtime.h")]
sys.exit(d["libclang"] != sys.argv[2] or d["cuda"] != (roots[0] if roots else None))
PY
	then grep -q "reused the saved IR" "$tmp/log" && ok "templates/dispatch/$k.cu.ir.json: reused" ||
		bad "templates/dispatch/$k.cu.ir.json: reused" "$(head -3 "$tmp/log")"
	else echo "SKIP templates/dispatch/$k.cu.ir.json: reused (another libclang or CUDA root here)"; fi
done

finish
