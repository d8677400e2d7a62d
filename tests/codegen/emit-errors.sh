#!/bin/sh
# `aotc emit` on bad input (docs/spec.md §3, §9): a clear error, the documented exit
# status, and nothing written into the -o directory.
# Usage: emit-errors.sh AOTC REPO_ROOT
aotc=$1
root=$2
# Absolute paths: the script changes directory.
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hostdb=$(ls "$root"/tests/codegen/matmul_host.host_*.json | head -1)

. "$(dirname "$0")/../lib.sh"

# expect NAME STATUS PATTERN ARGS...: `aotc emit ARGS -o (a fresh dir)`
# exits STATUS (any non-zero for "fail"), its output matches the extended
# regexp PATTERN, and the output directory stays empty (not even a
# temporary file).
n=0
expect() {
	name=$1 want=$2 pattern=$3
	shift 3
	n=$((n + 1))
	out=$tmp/out$n
	mkdir -p "$out"
	"$aotc" emit "$@" -o "$out" >"$tmp/log" 2>&1 </dev/null
	got=$?
	left=$(ls -A "$out")
	case $want in
	fail) status_ok=$([ "$got" -ne 0 ] && echo y) ;;
	*) status_ok=$([ "$got" -eq "$want" ] && echo y) ;;
	esac
	if [ -z "$status_ok" ]; then
		bad "$name: exit $want" "exit $got" "$(head -5 "$tmp/log")"
	elif ! grep -Eq -- "$pattern" "$tmp/log"; then
		bad "$name: message matches /$pattern/" "$(head -5 "$tmp/log")"
	elif [ -n "$left" ]; then
		bad "$name: nothing written" "$left"
	else
		ok "$name: exit $got, clear message, nothing written"
	fi
}

cd "$tmp" || exit 1

# --- no database: says how to get one --------------------------------------
mkdir empty
expect "no database (empty --db)" 3 "no tuning database for 'sgemm' on sm90.*aotc tune" \
	"$root/templates/sgemm.cu" --arch sm90 --db empty
expect "no database (missing --db)" 3 "no tuning database for 'sgemm' on sm90.*aotc tune" \
	"$root/templates/sgemm.cu" --arch sm90 --db missing
# The H200 databases are sm90: none for another architecture.
expect "no database for the architecture" 3 "no tuning database for 'sgemm' on sm80" \
	"$root/templates/sgemm.cu" --arch sm80 --db "$root/templates"

# --- a database tuned from another version of the source -------------------
# An edit to the reference changes every variant's code: the measurements
# may not describe this kernel any more (a comment keeps them:
# tests/tuner/db-key.sh).
cp "$root/templates/sgemm.cu" sgemm.cu
sed -i 's/for (int k = 0; k < K; ++k) acc += A\[/for (int k = 0; k < K; k++) acc += A[/' sgemm.cu
expect "database from another version of the source" 3 \
	"tuned from another version of sgemm.cu \(source hash [0-9a-f]+, now [0-9a-f]+; the code of sgemm.*changed\).*tune it again" \
	sgemm.cu --arch sm90 --db "$root/templates"

# --- names that are not C identifiers never reach the emitted code ----------
# db_for NAME SOURCE DIR: a copy of the committed host database made to
# belong to kernel NAME of SOURCE (its hash and its configurations' names),
# as `aotc tune SOURCE --db DIR` would have written it, without tuning.
db_for() {
	"$aotc" parse "$2" >ir.json &&
	python3 - "$1" "$3" "$hostdb" <<'END'
import json, os, sys
name, d, src = sys.argv[1:]
ir = json.load(open("ir.json"))
db = json.load(open(src))
db["kernel"] = name
db["source_hash"] = ir["source_hash"]
for c in db["configs"]:
    c["name"] = c["name"].replace("matmul_host", name, 1)
# the database is found as DIR/NAME.*.json, a '/' in NAME included
path = os.path.join(d, name + "." + os.path.basename(src).split(".", 1)[1])
os.makedirs(os.path.dirname(path), exist_ok=True)
json.dump(db, open(path, "w"), ensure_ascii=False)
END
}

# The realistic route: C++ allows a non-ASCII identifier, C99 code emitted
# from it (and every C toolchain) may not; aotc parses and tunes such a
# kernel but refuses to emit it.
sed 's/\bmatmul_host\b/mätmul/g' "$root/templates/matmul_host.cpp" >uni.cpp
if db_for mätmul uni.cpp unidb; then
	expect "kernel name with a non-ASCII letter" fail "kernel name 'mätmul' is not a C identifier" \
		uni.cpp --arch host --db unidb
else
	bad "database for uni.cpp made"
fi

# The hostile route: aotc also reads its IR as JSON (`aotc parse` output),
# where a kernel "name" can be anything. With a database to match (found
# through the '/' in the name), the emitter itself must refuse it.
evil='evil"); system("rm -rf /'
"$aotc" parse "$root/templates/matmul_host.cpp" >mm.json
python3 - "$evil" <<'END'
import json, sys
ir = json.load(open("mm.json"))
ir["kernels"][0]["name"] = sys.argv[1]
json.dump(ir, open("evil.json", "w"))
END
if db_for "$evil" "$root/templates/matmul_host.cpp" evildb; then
	expect "kernel name with quotes and parentheses (IR JSON)" fail "is not a C(\+\+)? identifier" \
		evil.json --arch host --db evildb
else
	bad "database for evil.json made"
fi

# A parameter named like the emitted code's own identifiers (aot_*): could
# collide with a helper; refused at the parameter.
sed 's/\bK\b/aot_k/g' "$root/templates/matmul_host.cpp" >aotk.cpp
if db_for matmul_host aotk.cpp aotkdb && python3 - <<'END'
import glob, json
p = glob.glob("aotkdb/matmul_host.*.json")[0]
db = json.load(open(p))
db["shape_args"] = ["aot_k" if a == "K" else a for a in db["shape_args"]]
json.dump(db, open(p, "w"))
END
then
	expect "parameter named aot_*" fail "parameter name 'aot_k' cannot be used in emitted code" \
		aotk.cpp --arch host --db aotkdb
else
	bad "database for aotk.cpp made"
fi

finish
