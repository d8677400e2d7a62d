#!/bin/sh
# The launcher's environment against what it may be handed (docs/cli.md,
# "The launcher's environment"), on a program built from emitted host files
# (launcher-env-hostile.cpp), with -fsanitize=address,undefined where the
# compiler has it. Each case ran into a defect of an earlier launcher
# (issue 28):
#  - AOTC_RECORD naming /dev/null, a FIFO, a symbolic link to a FIFO or to
#    /dev/stdout on a pipe, a directory, a socket, /dev/stdout on a file:
#    one message naming it and why, the program runs and exits 0 at once
#    (a FIFO hung it at exit), the file is left as it is (/dev/null was
#    replaced, as root; the output on a file was lost);
#  - a symbolic link to a record file (or to none yet): the target gets the
#    counts and keeps its permissions, the link stays a link (it was
#    replaced by a plain file);
#  - the record's lock held by another process: the exit waits about 2 s,
#    then gives up with one message (it waited for ever);
#  - 20,000 distinct shapes, twice: every row, every count, in bounded time
#    (the merge was quadratic); 60,000 with a merge due half way: no launch
#    stalls for seconds (one held the launches' mutex for the whole merge);
#  - malformed AOTC_VARIANT values: one message each, and every launch of
#    the kernel they may name is refused (most were silently ignored); an
#    item naming no kernel of the process is said once and harms no other.
# Usage: launcher-env-hostile.sh AOTC REPO_ROOT
aotc=$1
root=$2
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
holder=
trap '[ -n "$holder" ] && kill "$holder" 2>/dev/null; rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
unset AOTC_RECORD AOTC_VARIANT AOTC_LOG

. "$(dirname "$0")/../lib.sh"
now() { date +%s.%N; }

cd "$tmp" || exit 1
# Two kernels: matmul_host, and mm_two, the same source renamed, with its
# database made from matmul_host's (the source hash is mm_two.cpp's).
cp "$root/templates/matmul_host.cpp" matmul_host.cpp
sed 's/matmul_host/mm_two/g' matmul_host.cpp >mm_two.cpp
mkdir db2
if ! "$aotc" parse mm_two.cpp >mm_two.ir.json 2>parse.log ||
	! python3 - "$root/tests/codegen/matmul_host.host_AMD_EPYC_12.2.0.json" mm_two.ir.json \
		db2/mm_two.host_AMD_EPYC_12.2.0.json >db2.log 2>&1 <<'END'
import json, sys
text = open(sys.argv[1]).read().replace("matmul_host", "mm_two")
ir = json.load(open(sys.argv[2]))
h = ir.get("source_hash") or ir["kernels"][0]["source_hash"]
db = json.loads(text)
db["source_hash"] = h
open(sys.argv[3], "w").write(json.dumps(db))
END
then
	bad "a database for mm_two" "$(cat parse.log db2.log | tail -10)"
	finish
fi
if ! "$aotc" emit matmul_host.cpp --arch host --db "$root/tests/codegen" -o out >emit.log 2>&1 ||
	! "$aotc" emit mm_two.cpp --arch host --db db2 -o out >>emit.log 2>&1; then
	bad "aotc emit" "$(tail -10 emit.log)"
	finish
fi
cp "$root/tests/codegen/launcher-env-hostile.cpp" prog.cpp
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
echo 'int main() { return 0; }' >san.cpp
g++ $san san.cpp -o san >/dev/null 2>&1 || san=
# -Wall -Wextra -Werror -Wshadow -pedantic, C++11: what the launcher text promises.
if ! g++ -std=c++11 -Wall -Wextra -Werror -Wshadow -pedantic -O1 -g $san -I . -I out -pthread -o prog \
	prog.cpp out/_aot_matmul_host_host.cpp out/_aot_mm_two_host.cpp \
	out/_aot_matmul_host_host.c out/_aot_mm_two_host.c >build.log 2>&1; then
	bad "the program builds (C++11, -Wall -Wextra -Werror -Wshadow -pedantic${san:+, sanitizers})" "$(head -30 build.log)"
	finish
fi
ok "the program builds (C++11, -Wall -Wextra -Werror -Wshadow -pedantic${san:+, sanitizers})"

# run NAME [VAR=VALUE...] -- ARGS: runs ./prog ARGS under timeout 10 with
# those variables; NAME.out, NAME.err, and $st, $secs.
run() {
	name=$1
	shift
	for a; do
		shift
		if [ "$a" = -- ]; then set -- "$@" ./prog; else set -- "$@" "$a"; fi
	done
	t0=$(now)
	timeout 10 env "$@" >"$name.out" 2>"$name.err"
	st=$?
	secs=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
}
# says NAME PATTERN: stderr is exactly one line, matching PATTERN (grep -E).
says() {
	if [ "$(wc -l <"$1.err")" -eq 1 ] && grep -Eq -- "$2" "$1.err"; then return 0; fi
	return 1
}
normal="matmul_host 32: 0
matmul_host 64: 0"
refused="matmul_host 32: -1
matmul_host 64: -1"

# ---- AOTC_RECORD: what is not a regular file ----
# refused NAME PATH WHY: the program runs normally, one message naming PATH and WHY.
refused_record() {
	run "$1" AOTC_RECORD="$2" --
	if [ "$st" -eq 0 ] && [ "$(cat "$1.out")" = "$normal" ] && says "$1" "AOTC_RECORD: $2 .*$3.*nothing is recorded"; then
		ok "AOTC_RECORD=$2 ($3): one message, the program runs and exits 0 (${secs} s)"
	else
		bad "AOTC_RECORD=$2 ($3)" "exit $st after $secs s" "$(cat "$1.out" "$1.err")"
	fi
}
# As root, a launcher that replaces the file would break the machine's
# /dev/null (one did): root gets a null device of its own.
null=/dev/null
if [ "$(id -u)" = 0 ] && mknod "$tmp/null" c 1 3 2>/dev/null; then null=$tmp/null; fi
refused_record devnull "$null" "a character device"
if [ -c "$null" ]; then ok "$null stays a character device"; else bad "$null stays a character device" "$(ls -l "$null")"; fi
mkfifo fifo
refused_record fifo fifo "a FIFO"
if [ -p fifo ]; then ok "the FIFO stays a FIFO"; else bad "the FIFO stays a FIFO" "$(ls -l fifo)"; fi
ln -s fifo to-fifo
refused_record to-fifo to-fifo "a FIFO"
mkdir dir
refused_record dir dir "a directory"
if python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' sock 2>/dev/null; then
	refused_record sock sock "a socket"
fi
# /dev/stdout on a pipe: reading it waited for the program's own output.
# The links are the test's own, never /dev/stdout itself: as root, a
# launcher that replaces the file would replace the machine's (one did).
ln -s /proc/self/fd/1 to-stdout
{
	timeout 10 env AOTC_RECORD=to-stdout ./prog 2>stdout.err
	echo "exit $?" >stdout.st
} | cat >stdout.out
if [ "$(cat stdout.st)" = "exit 0" ] && says stdout "AOTC_RECORD: to-stdout is a FIFO" &&
	[ "$(grep -c '^matmul_host' stdout.out)" -eq 2 ]; then
	ok "AOTC_RECORD=a link to /dev/stdout on a pipe: one message, the program exits 0"
else
	bad "AOTC_RECORD=a link to /dev/stdout on a pipe" "$(cat stdout.st stdout.out stdout.err)"
fi
# /dev/stdout on a file: replacing the file lost the program's output.
timeout 10 env AOTC_RECORD=to-stdout ./prog >stdout-file.out 2>stdout-file.err
st=$?
if [ "$st" -eq 0 ] && [ "$(cat stdout-file.out)" = "$normal" ] &&
	says stdout-file "AOTC_RECORD: to-stdout is this program's standard output; nothing is recorded"; then
	ok "AOTC_RECORD=a link to /dev/stdout on a file: one message, the output is kept"
else
	bad "AOTC_RECORD=a link to /dev/stdout on a file" "exit $st" "$(cat stdout-file.out stdout-file.err)"
fi

# ---- AOTC_RECORD through a symbolic link ----
rows() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k, rows in sorted(d["kernels"].items()):
    for r in rows:
        print(k, " ".join(str(v) for v in r["shape"].values()), r["calls"])
' "$1" 2>&1 | sort
}
mkdir data links
ln -s ../data/rec.json links/rec.json # the target does not exist yet: created
run link1 AOTC_RECORD=links/rec.json -- two
run link2 AOTC_RECORD=links/rec.json -- two
if [ -L links/rec.json ] && [ "$(readlink links/rec.json)" = ../data/rec.json ]; then
	ok "a symbolic link stays a symbolic link"
else
	bad "a symbolic link stays a symbolic link" "$(ls -l links)"
fi
got=$(rows data/rec.json)
if [ "$got" = "matmul_host 32 32 32 2
matmul_host 64 64 64 2
mm_two 32 32 32 2" ] && [ ! -s link1.err ] && [ ! -s link2.err ]; then
	ok "its target gets the records (created, then added to; both kernels, one process)"
else
	bad "its target gets the records" "$got" "$(cat link1.err link2.err)"
fi
chmod 600 data/rec.json
run link3 AOTC_RECORD=links/rec.json --
mode=$(stat -c %a data/rec.json 2>&1)
if [ "$mode" = 600 ] && [ "$(rows data/rec.json | head -1)" = "matmul_host 32 32 32 3" ]; then
	ok "the record file keeps its permissions"
else
	bad "the record file keeps its permissions" "mode $mode" "$(rows data/rec.json)"
fi
check_left() {
	left=$(ls -A data links/ | grep -v -e '^rec.json$' -e '^rec.json.lock$' -e '^data:$' -e '^links/:$' -e '^$')
	if [ -z "$left" ]; then ok "$1"; else bad "$1" "$left"; fi
}
check_left "no temporary file left, the lock beside the target"

# ---- AOTC_RECORD: the lock held by another process ----
python3 -c '
import fcntl, sys, time
f = open(sys.argv[1], "a")
fcntl.flock(f, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(60)' data/rec.json.lock >holder.out 2>&1 &
holder=$!
i=0
while ! grep -q locked holder.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
before=$(rows data/rec.json)
run locked AOTC_RECORD=links/rec.json --
kill "$holder"
wait "$holder" 2>/dev/null
holder=
if [ "$st" -eq 0 ] && says locked "rec.json.lock stayed locked by another process for 2000 ms" &&
	awk -v s="$secs" 'BEGIN { exit !(s < 8) }' && [ "$(rows data/rec.json)" = "$before" ]; then
	ok "the lock held by another process: the exit gives up after 2 s with one message (${secs} s)"
else
	bad "the lock held by another process" "exit $st after $secs s" "$(cat locked.err)"
fi

# ---- AOTC_RECORD: many distinct shapes ----
run many1 AOTC_RECORD=many.json -- shapes 20000
secs1=$secs st1=$st
run many2 AOTC_RECORD=many.json -- shapes 20000
counts=$(python3 -c '
import json, collections
rows = json.load(open("many.json"))["kernels"]["matmul_host"]
print(len(rows), len({tuple(r["shape"].values()) for r in rows}), dict(collections.Counter(r["calls"] for r in rows)))' 2>&1)
if [ "$st1" -eq 0 ] && [ "$st" -eq 0 ] && [ "$counts" = "20000 20000 {2: 20000}" ] &&
	awk -v a="$secs1" -v b="$secs" 'BEGIN { exit !(a < 8 && b < 8) }'; then
	ok "20,000 distinct shapes, two runs: 20,000 rows of 2 calls (${secs1} s, ${secs} s)"
else
	bad "20,000 distinct shapes, two runs" "exit $st1, $st after $secs1 s, $secs s" "rows, distinct, calls: $counts" \
		"$(cat many1.err many2.err | head -5)"
fi
run stall1 AOTC_RECORD=stall.json -- shapes 60000
run stall2 AOTC_RECORD=stall.json -- shapes 60000 --pause
ms=$(sed -n 's/^longest launch \([0-9]*\) ms$/\1/p' stall2.out)
if [ "$st" -eq 0 ] && [ -n "$ms" ] && [ "$ms" -lt 2000 ]; then
	ok "60,000 shapes, a merge into 60,000 rows due half way: the longest launch ${ms} ms"
else
	bad "60,000 shapes, a merge due half way: no launch stalls for seconds" "exit $st after $secs s" \
		"$(cat stall2.out stall2.err)"
fi

# ---- AOTC_VARIANT ----
# variant NAME VALUE STATUS PATTERN [ARGS]: prints STATUS (normal, refused
# or the text), and one message matching PATTERN ("" for none).
variant() {
	run "$1" AOTC_VARIANT="$2" -- $5
	if [ "$st" -eq 0 ] && [ "$(cat "$1.out")" = "$3" ] &&
		{ { [ -z "$4" ] && [ ! -s "$1.err" ]; } || { [ -n "$4" ] && says "$1" "$4"; }; }; then
		ok "AOTC_VARIANT='$2': $(printf %s "$3" | tr '\n' ' ')${4:+, one message}"
	else
		bad "AOTC_VARIANT='$2'" "exit $st" "$(cat "$1.out" "$1.err")"
	fi
}
variant v-gt 'matmul_host=matmul_host<16, 128, 128, 1' "$refused" "'<' without its '>'; every launch of a kernel named in it is refused"
variant v-swallow 'other=other<4, matmul_host=1' "$refused" "'<' without its '>'"
variant v-space 'matmul_host=1 2' "$refused" "'1 2' is not an index"
variant v-neg 'matmul_host=-1' "$refused" "'-1' is not an index"
variant v-case 'Matmul_host=1' "$refused" "names kernel 'Matmul_host', not matmul_host \\(kernel names are case-sensitive\\)"
variant v-namecase 'matmul_host=Matmul_host<16, 128, 128, 1>' "$refused" "has no variant 'Matmul_host<16, 128, 128, 1>'"
variant v-noeq 'matmul_host' "$refused" "'matmul_host': no '='"
variant v-empty 'matmul_host=' "$refused" "no variant after '='"
variant v-paren 'matmul_host=1)' "$refused" "'\\)' without its '\\('"
variant v-two 'matmul_host=0, matmul_host=1' "$refused" "force different variants of matmul_host"
variant v-same 'matmul_host=1,matmul_host= 1' "$normal" ""
variant v-nonsense 'nonsense' "$normal" "'nonsense': no '='"
variant v-comma 'matmul_host=1,,' "$normal" "an empty item .*; it names no kernel$"
variant v-badname '1k=3' "$normal" "'1k=3': '1k' is not a kernel name"
variant v-other 'other=3' "$normal" "'other=3' was not used: this process launched no kernel 'other'"
variant v-two-ok 'mm_two=1' "$normal
mm_two 32: 0" "" two
variant v-two-bad 'mm_two=1 2' "$normal
mm_two 32: -1" "'1 2' is not an index" two
variant v-two-case 'MM_TWO=0,matmul_host=0' "$normal
mm_two 32: -1" "names kernel 'MM_TWO', not mm_two" two
run v-log AOTC_VARIANT='matmul_host=1 2' AOTC_LOG=1 --
if [ "$(grep -c -- '-> refused (AOTC_VARIANT is malformed)$' v-log.err)" -eq 2 ]; then
	ok "AOTC_LOG: a launch refused for a malformed AOTC_VARIANT says so"
else
	bad "AOTC_LOG for a malformed AOTC_VARIANT" "$(cat v-log.err)"
fi

finish
