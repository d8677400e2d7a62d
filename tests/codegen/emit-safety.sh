#!/bin/sh
# What reaches the emitted code from the inputs (docs/spec.md §9: "nothing from an
# input can inject code into an emitted file"), and names the emitter uses
# itself: the emitted files stay correct C/C++ whatever the kernel's
# parameters are called and wherever its source lies.
# Usage: emit-safety.sh AOTC REPO_ROOT   (env NVCC overrides the compiler)
aotc=$1
root=$2
# Absolute paths: the script changes directory.
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hostdb=$(ls "$root"/tests/codegen/matmul_host.host_*.json | head -1)
if [ -z "${NVCC:-}" ]; then
	if command -v nvcc >/dev/null 2>&1; then NVCC=nvcc
	elif [ -x /usr/local/cuda/bin/nvcc ]; then NVCC=/usr/local/cuda/bin/nvcc
	fi
fi

. "$(dirname "$0")/../lib.sh"

cd "$tmp" || exit 1

# retarget SRC_DB SOURCE DIR [SED]: a copy of database SRC_DB in DIR for the
# edited SOURCE: its source hash, and its shape argument names passed
# through the sed expression SED (the parameters were renamed).
retarget() {
	mkdir -p "$3"
	"$aotc" parse "$2" >ir.json &&
	python3 - "$1" "$3" "${4:-}" <<'END'
import json, os, subprocess, sys
src, d, sed = sys.argv[1:]
db = json.load(open(src))
ir = json.load(open("ir.json"))
db["source_hash"] = ir["source_hash"]
k = next(k for k in ir["kernels"] if k["name"] == db["kernel"])
codes = {a["name"]: a.get("code") for a in k.get("alternatives", []) + k.get("externs", [])}
for c in db["configs"]:  # measured from this code, as a tune of it would record
    c["code"] = codes[c.get("function", c["name"])] if c.get("function") or c.get("extern") else k.get("code")
    if c["code"] is None:
        del c["code"]
if sed:
    db["shape_args"] = [subprocess.run(["sed", sed], input=a, capture_output=True, text=True).stdout
                        for a in db["shape_args"]]
json.dump(db, open(os.path.join(d, os.path.basename(src)), "w"))
END
}

# --- 1. a configuration's name in the database ------------------------------
# A database is an input (committed, merged from other machines). The
# launcher calls each variant by a template-id: it must come from the IR
# and the configuration's values, not from the database's "name" text.
mkdir -p injdb out1
python3 - "$hostdb" <<'END'
import json, os, sys
db = json.load(open(sys.argv[1]))
for c in db["configs"]:
    c["name"] = c["name"] + '(M, N, K, A, B, C); system("echo injected"); ' + c["name"]
json.dump(db, open(os.path.join("injdb", os.path.basename(sys.argv[1])), "w"))
END
"$aotc" emit "$root/templates/matmul_host.cpp" --arch host --db injdb -o out1 >log 2>&1
st=$?
if [ "$st" -ne 0 ] && [ -z "$(ls -A out1)" ]; then
	ok "configuration names not from this kernel: refused ($(head -1 log))"
elif [ "$st" -eq 0 ] && ! grep -q 'system(' out1/*.cpp out1/*.h; then
	ok "configuration names: the launcher's calls do not come from the database's text"
else
	bad "configuration names from the database reach the launcher as code" \
		"$(grep -n 'system(' out1/*.cpp out1/*.h | head -3)"
fi

# --- 2. parameters named like the emitter's locals ---------------------------
# select() and launch_dims() keep p, f, t, x, v, grid, block, smem; the
# launchers v, g, b, smem, grid, block, e, stream. A kernel may well call
# its parameters that (a host kernel with a shape argument p and an output
# v; sgemm with its matrices a, b, c): either the emitted files compile or
# aotc says why not.
sed -e 's/\bN\b/p/g' -e 's/\bC\b/v/g' "$root/templates/matmul_host.cpp" >clash.cpp
mkdir -p out2
if retarget "$hostdb" clash.cpp clashdb 's/^N$/p/'; then
	"$aotc" emit clash.cpp --arch host --db clashdb -o out2 >log 2>&1
	st=$?
	if [ "$st" -ne 0 ]; then
		if grep -q "parameter name '[pv]'" log && [ -z "$(ls -A out2)" ]; then
			ok "host parameters p, v: refused with a message"
		else
			bad "host parameters p, v: a clear refusal" "$(head -3 log)"
		fi
	elif gcc -std=c99 -Wall -Wextra -Werror -pedantic -c -o c.o out2/_aot_matmul_host_host.c >cc.log 2>&1 &&
		g++ -std=c++17 -Wall -Wextra -Werror -I . -I out2 -c -o cpp.o \
			out2/_aot_matmul_host_host.cpp >>cc.log 2>&1; then
		ok "host parameters p, v: the emitted files compile"
	else
		bad "host parameters p, v: the emitted files compile" "$(grep error cc.log | head -4)"
	fi
else
	bad "database for clash.cpp made"
fi

if [ -n "${NVCC:-}" ]; then
	sed -e 's/\bA\b/a/g' -e 's/\bB\b/b/g' -e 's/\bC\b/c/g' "$root/templates/sgemm.cu" >sgemm.cu
	mkdir -p out3
	if retarget "$root/templates/sgemm.cuda_NVIDIA_H200_13.0.json" sgemm.cu clashcuda; then
		"$aotc" emit sgemm.cu --arch sm90 --db clashcuda -o out3 >log 2>&1
		st=$?
		if [ "$st" -ne 0 ]; then
			if grep -q "parameter name 'b'" log && [ -z "$(ls -A out3)" ]; then
				ok "sgemm with parameters a, b, c: refused with a message"
			else
				bad "sgemm with parameters a, b, c: a clear refusal" "$(head -3 log)"
			fi
		elif "$NVCC" -arch=sm_90 -std=c++17 -I . -I out3 -c -o cu.o \
			out3/_aot_sgemm_cuda_sm90.cu >cc.log 2>&1; then
			ok "sgemm with parameters a, b, c: the launcher compiles"
		else
			bad "sgemm with parameters a, b, c: the launcher compiles" "$(grep error cc.log | head -4)"
		fi
	else
		bad "database for sgemm.cu made"
	fi
else
	echo "SKIP nvcc not found: CUDA launcher with parameter b not compiled"
fi

# --- 3. the kernel source's path in the launcher's #include -----------------
# A header name is not a string literal: escapes are not processed in it,
# so a non-ASCII file name must be written as its bytes (and a name that
# cannot be spelt in #include "..." diagnosed). The launcher names the file
# only; its non-ASCII directory is on the include path, as in a user's build.
dir="Jos$(printf '\303\251')"
mkdir -p "$dir" out4
src="$dir/mm$(printf '\303\251').cpp"
cp "$root/templates/matmul_host.cpp" "$src"
if "$aotc" emit "$src" --arch host --db "$root/tests/codegen" -o out4 >log 2>&1; then
	if g++ -std=c++17 -I "$dir" -I out4 -c -o inc.o out4/_aot_matmul_host_host.cpp >cc.log 2>&1; then
		ok "kernel source under a non-ASCII directory: the launcher finds it"
	else
		bad "kernel source under a non-ASCII directory: the launcher finds it" \
			"$(grep '^#include' out4/_aot_matmul_host_host.cpp)" "$(grep error cc.log | head -2)"
	fi
else
	bad "emit from a non-ASCII directory" "$(head -3 log)"
fi

finish
