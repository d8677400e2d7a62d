#!/bin/sh
# docs/spec.md §9: "nothing from an input can inject code into an emitted file".
# Each payload goes in through the IR JSON (a copy of what aotc parse
# writes, one field edited) or through a database (a copy of a committed
# one), and aotc either refuses it (exit 1, a message naming the field,
# nothing written) or emits files that hold no payload line, whose .c
# compiles as strict C99 and whose launcher compiles under g++ -Werror, and
# in which the payload's code survives only inside comments.
# Usage: emit-injection.sh AOTC REPO_ROOT
aotc=$1
root=$2
# Absolute paths: the script changes directory.
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hostdb=$(ls "$root"/tests/codegen/matmul_host.host_*.json | head -1)
host=$root/templates/matmul_host.cpp
base=_aot_matmul_host_host

. "$(dirname "$0")/../lib.sh"

cd "$tmp" || exit 1
"$aotc" parse "$host" >ir.json || { bad "aotc parse $host"; finish; }

# edit OUT PYTHON: OUT is a copy of ir.json after PYTHON ran on it as `ir`
# (the payload strings are Python literals).
edit() {
	python3 - "$1" "$2" <<'END'
import json, sys
ir = json.load(open("ir.json"))
exec(sys.argv[2])
json.dump(ir, open(sys.argv[1], "w"))
END
}

# dbedit DIR PYTHON: DIR holds a copy of the host database after PYTHON ran
# on it as `db`.
dbedit() {
	mkdir -p "$1"
	python3 - "$hostdb" "$1" "$2" <<'END'
import json, os, sys
db = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(db, open(os.path.join(sys.argv[2], os.path.basename(sys.argv[1])), "w"))
END
}

# harmless NAME DIR MARK: the files in DIR (just emitted) are safe: no line
# starts a directive or declaration the payload brought (MARK, a word only
# the payload has, appears nowhere once comments are stripped), the .c
# compiles as strict C99 and the launcher under g++ -Wall -Wextra -Werror.
harmless() {
	name=$1 dir=$2 mark=$3
	if grep -n '^#include </etc/shadow>' "$dir"/* >grep.log 2>&1; then
		bad "$name: a payload line in the emitted files" "$(head -3 grep.log)"
		return
	fi
	for f in "$dir/$base.c" "$dir/$base.h"; do
		if gcc -std=c99 -fpreprocessed -dD -E -P "$f" 2>/dev/null | grep -q "$mark"; then
			bad "$name: '$mark' outside comments in $(basename "$f")" \
				"$(grep -n "$mark" "$f" | head -3)"
			return
		fi
	done
	if ! gcc -std=c99 -Wall -Wextra -Werror -pedantic -c -o c.o "$dir/$base.c" >cc.log 2>&1; then
		bad "$name: the .c compiles as strict C99" "$(head -6 cc.log)"
	elif ! g++ -std=c++17 -Wall -Wextra -Werror -I "$root/templates" -I "$dir" -c -o cpp.o \
		"$dir/$base.cpp" >cc.log 2>&1; then
		bad "$name: the launcher compiles" "$(head -6 cc.log)"
	else
		ok "$name: emitted, harmless"
	fi
}

# through_ir NAME FIELD PYTHON [DBPYTHON]: the IR edited by PYTHON (and
# the database by DBPYTHON, where the payload must match there too) is
# refused naming FIELD, or emitted harmless.
n=0
through_ir() {
	name=$1 field=$2
	n=$((n + 1))
	edit "ir$n.json" "$3"
	dbedit "db$n" "${4:-}"
	mkdir -p "out$n"
	"$aotc" emit "ir$n.json" --arch host --db "db$n" -o "out$n" >log 2>&1
	st=$?
	if [ "$st" -eq 1 ] && grep -qF -- "$field" log && [ -z "$(ls -A "out$n")" ]; then
		ok "$name: refused ($(grep -m1 error log | cut -c1-150))"
	elif [ "$st" -eq 0 ]; then
		harmless "$name" "out$n" evil
	else
		bad "$name: exit 1 naming $field, or harmless files" "exit $st" "$(head -4 log)"
	fi
}

# --- 1. the IR ----------------------------------------------------------------
# The source hash was checked for its length only and printed raw into all
# three files' comments; this one is 32 characters.
shadow='"*/\n#include </etc/shadow>\n/*xxxx"'
through_ir "source_hash closing the comment" "source_hash" \
	"ir['source_hash'] = $shadow" "db['source_hash'] = $shadow"
through_ir "source_hash in upper case" "source_hash" \
	"ir['source_hash'] = ir['source_hash'].upper()" "db['source_hash'] = db['source_hash'].upper()"
# A parameter type went into the launcher's signature as it was.
through_ir "parameter type with a function pointer and a default" "params[3].type" \
	"ir['kernels'][0]['params'][3]['type'] = 'int (*evil)(int) = exit, const float *__restrict'"
through_ir "parameter type closing the signature" "params[3].type" \
	"ir['kernels'][0]['params'][3]['type'] = 'const float *A) { evil(); } void f(const float *'"
through_ir "parameter type opening a comment" "params[3].type" \
	"ir['kernels'][0]['params'][3]['type'] = 'const float /* evil */ *'"
through_ir "element type" "params[3].elem_type" \
	"ir['kernels'][0]['params'][3]['elem_type'] = 'float; int evil'"
through_ir "parameter name" "params[0].name" \
	"ir['kernels'][0]['params'][0]['name'] = 'M, evil'
for s in ir['kernels'][0]['shapes']:
    s['param'] = 'M, evil' if s['param'] == 'M' else s['param']" \
	"db['shape_args'][0] = 'M, evil'"
through_ir "kernel name" "name" \
	"ir['kernels'][0]['name'] = 'matmul_host */ int evil; /*'"
through_ir "tunable name" "tunables[0].name" \
	"ir['kernels'][0]['tunables'][0]['name'] = 'BM */ int evil; /*'" \
	"db['tunables'][0] = 'BM */ int evil; /*'"
# A default is written into every variant's template-id in the launcher.
through_ir "template default closing the argument list" "template_params[0].default" \
	"ir['kernels'][0]['template_params'][0]['default'] = '1>(M, N, K, A, B, C), evil(), matmul_host<1'"
through_ir "template type" "template_params[0].type" \
	"ir['kernels'][0]['template_params'][0]['type'] = 'int = (evil(), 1)'"
through_ir "reference name" "reference.name" \
	"ir['kernels'][0]['reference'] = {'name': 'ref); evil(', 'loc': ir['kernels'][0]['loc'], 'grid': None, 'block': None, 'smem': None}"
through_ir "constant name" "constants[0]" \
	"ir['constants'] = [{'name': 'X */ evil /*', 'kind': 'macro', 'value': 1, 'loc': ir['kernels'][0]['loc']}]"
through_ir "file with a newline" "'file'" \
	"ir['file'] = ir['file'].replace('matmul_host.cpp', 'x\n#include </etc/shadow>\n.cpp')"
through_ir "location with a newline" "location" \
	"ir['kernels'][0]['loc'] = 'a\n#include </etc/shadow>\n:1:1'"
# Expressions are re-parsed, so only their text (in comments) could carry
# anything: a REQUIRE whose text holds a comment closer does not parse (the
# message is at the expression's location).
through_ir "expression text" "error: expected expression" \
	"ir['kernels'][0]['require'] = [{'text': '1 */ int evil; /*', 'loc': ir['kernels'][0]['loc']}]"

# What a kernel legitimately has still goes through: qualified, restrict,
# vector and template types, a default over constants.
n=$((n + 1))
edit "ir$n.json" "
p = ir['kernels'][0]['params']
p[3]['type'] = 'const float *__restrict__'
p[4]['type'] = 'const float *const __restrict'
p[5]['type'] = 'float *__restrict'"
dbedit "db$n" ""
mkdir -p "out$n"
if "$aotc" emit "ir$n.json" --arch host --db "db$n" -o "out$n" >log 2>&1; then
	harmless "legitimate qualified pointer types" "out$n" evil
else
	bad "legitimate qualified pointer types are accepted" "$(head -3 log)"
fi

# --- 2. the database ------------------------------------------------------------
# Its hardware id and source reach the header comments of the emitted files
# (and, through the header, of aotc link's).
for payload in "'x */\n#include </etc/shadow>\n/* evil'" "'a/*b */ int evil; /* c'" \
	"'trailing backslash \\\\'" "'?""?/ evil'" "'\\x1b[31m evil \\x7f\\x01'"; do
	n=$((n + 1))
	dbedit "db$n" "db['hardware']['id'] = $payload; db['hardware']['name'] = $payload; db['source'] = $payload"
	mkdir -p "out$n"
	if "$aotc" emit "$host" --arch host --db "db$n" -o "out$n" >log 2>&1; then
		harmless "database hardware id and source $payload" "out$n" evil
	elif grep -q 'error' log && [ -z "$(ls -A "out$n")" ]; then
		ok "database hardware id and source $payload: refused ($(grep -m1 error log | cut -c1-120))"
	else
		bad "database hardware id and source $payload" "$(head -3 log)"
	fi
done

# --- 3. file paths in comments --------------------------------------------------
# Comments name the kernel source by its base name (source_name): a
# directory "*b*" under "a" would put "/*" and "*/" into its path, and the
# name "*b*matmul_host.cpp" keeps a "*" next to what a comment writes around it.
mkdir -p "repo/a/*b*"
cp "$host" "repo/a/*b*/*b*matmul_host.cpp"
mkdir -p outp
if "$aotc" emit "repo/a/*b*/*b*matmul_host.cpp" --arch host --db "$(dirname "$hostdb")" -o outp >log 2>&1; then
	if gcc -std=c99 -Wall -Wextra -Werror -pedantic -c -o c.o "outp/$base.c" >cc.log 2>&1; then
		ok "a source path with /* and */: the .c compiles as strict C99"
	else
		bad "a source path with /* and */: the .c compiles as strict C99" "$(head -4 cc.log)"
	fi
	if grep -q 'a/\*b\*/' "outp/$base.c"; then
		bad "a source path: comments name the base name only" "$(grep -m1 'b\*' "outp/$base.c")"
	else
		ok "a source path: comments name the base name only"
	fi
else
	bad "emit from a directory named *b*" "$(head -3 log)"
fi

# --- 4. through aotc link -------------------------------------------------------
# The linked files name each architecture's hardware id, read back from
# its header: a CUDA database whose id holds a payload, emitted (no GPU
# needed), then linked; the linked .c compiles as strict C99.
cudadb=$root/templates/sgemm.cuda_NVIDIA_H200_13.0.json
mkdir -p cdb lk
python3 - "$cudadb" cdb <<'END'
import json, os, sys
db = json.load(open(sys.argv[1]))
db["hardware"]["id"] = "H200 */\n#include </etc/shadow>\n/* evil */ int evil; /*"
json.dump(db, open(os.path.join(sys.argv[2], os.path.basename(sys.argv[1])), "w"))
END
if "$aotc" emit "$root/templates/sgemm.cu" --arch sm90 --db cdb -o lk/sm90 >log 2>&1 &&
	"$aotc" link lk/sm90 -o lk/aot_sgemm.c >>log 2>&1; then
	if grep -n '^#include </etc/shadow>' lk/aot_sgemm.* lk/sm90/* >grep.log; then
		bad "link: a payload line" "$(head -3 grep.log)"
	elif gcc -std=c99 -Wall -Wextra -Werror -pedantic -c -o l.o lk/aot_sgemm.c >cc.log 2>&1 &&
		gcc -std=c99 -Wall -Wextra -Werror -pedantic -c -o s.o lk/sm90/_aot_sgemm_cuda_sm90.c >>cc.log 2>&1; then
		ok "hardware id through emit and link: the .c files compile as strict C99"
	else
		bad "hardware id through emit and link: the .c files compile" "$(head -4 cc.log)"
	fi
else
	bad "emit and link sgemm from a database with a payload id" "$(head -4 log)"
fi

finish
