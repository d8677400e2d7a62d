#!/bin/sh
# emit and link write their files as one set (docs/cli.md, "How the files are
# written"): aotc emit killed 50 times, alternating two databases whose
# dispatches differ, each kill leaves the old complete set or the new one
# (every file equal to one reference emit's, and the set hashes parsed from
# the four files agree); the next emit leaves no temporary behind; aotc link
# likewise. Also: temporaries of gone runs are removed and a live aotc's kept;
# an emit that changes nothing touches nothing; two emits at once leave one
# set; files of two sets refuse to build together (a launcher of one emit with
# a dispatch of another fails to link, naming the set; a header of another
# fails to compile). aotc before set hashes (5a9c740) failed this: with seeds
# 20160 and 4242, 7 and 5 of 50 emit kills and 5 and 8 of 10 link kills left
# a mixture, and temporaries stayed.
#
# Kills come two ways: kill_shim.c (preloaded) kills aotc's process group just
# before its Nth fsync(2) or rename(2), N random: while it writes its files or
# between two moves, where a mixture could be made; and timeout -s KILL after a
# random delay around the last emit's run time.
# Usage: emit-kill.sh AOTC REPO_ROOT [KILLS]   (KILLS default 50; env AOTC_KILL_SEED)
aotc=$1
root=$2
kills=${3:-50}
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/../lib.sh"

# An ASan aotc refuses a preloaded library ahead of its runtime unless told.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
cc=${CC:-cc}
if ! $cc -shared -fPIC -O2 -o "$tmp/kill_shim.so" "$root/tests/codegen/kill_shim.c" -ldl >"$tmp/cc.log" 2>&1; then
	bad "kill_shim.c builds" "$(cat "$tmp/cc.log")"
	finish
fi
seed=${AOTC_KILL_SEED:-$$}
echo "seed $seed (AOTC_KILL_SEED=$seed reruns these kills)"
# rand KEY LO HI: an integer in [LO, HI] that the seed and KEY fix (called
# as $(...), a subshell: a counter would not advance).
rand() {
	awk -v s="$seed" -v k="$1" -v lo="$2" -v hi="$3" \
		'BEGIN { srand(s * 1000 + k); printf "%d\n", lo + int(rand() * (hi - lo + 1)) }'
}
now_ms() { date +%s%3N; }

# skew SRC DST: a copy of database SRC whose every third configuration runs 4
# times slower, so that the dispatch picks other variants.
skew() {
	mkdir -p "$(dirname "$2")"
	python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for m in d["measurements"]:
    if m["config"] % 3 == 0 and "time_ms" in m:
        m["time_ms"] *= 4
        if "samples" in m:
            m["samples"] = [s * 4 for s in m["samples"]]
json.dump(d, open(sys.argv[2], "w"))
PY
}

# ---- The two sets -----------------------------------------------------------
src=$root/templates/matmul_host.cpp
base=_aot_matmul_host_host
files="c h cpp json"
mkdir -p "$tmp/dbA" "$tmp/dbB"
cp "$root"/tests/codegen/matmul_host.host_*.json "$tmp/dbA/"
for f in "$tmp"/dbA/*.json; do skew "$f" "$tmp/dbB/$(basename "$f")"; done
# The reference emits save the dispatch and the IR beside each database
# (AOTC_NO_SAVE=0), so every emit below loads them: no libclang, no learning,
# only the writing of the files that the kills interrupt. The second pair
# times such an emit.
for s in A B; do
	if ! AOTC_NO_SAVE=0 "$aotc" emit "$src" --arch host --db "$tmp/db$s" -o "$tmp/ref$s" >"$tmp/log" 2>&1; then
		bad "emit set $s" "$(cat "$tmp/log")"
		finish
	fi
done
t0=$(now_ms)
for s in A B; do
	if ! "$aotc" emit "$src" --arch host --db "$tmp/db$s" -o "$tmp/ref$s" >"$tmp/log" 2>&1 ||
		! grep -q "(the saved dispatch)" "$tmp/log"; then
		bad "emit set $s again, from the saved dispatch" "$(cat "$tmp/log")"
		finish
	fi
done
run_ms=$((($(now_ms) - t0) / 2))

# sethashes DIR: the set hash as each of the four files states it.
sethashes() {
	sed -n 's/^const int aot_matmul_host_host_set_\([0-9a-f]\{16\}\) = 1;$/\1/p' "$1/$base.c"
	sed -n 's/^#define AOT_MATMUL_HOST_HOST_SET UINT64_C(0x\([0-9a-f]\{16\}\))$/\1/p' "$1/$base.h"
	sed -n 's/^\tif (aot_matmul_host_host_set_\([0-9a-f]\{16\}\) != 1).*/\1/p' "$1/$base.cpp"
	sed -n 's/^  "set": "\([0-9a-f]\{16\}\)",$/\1/p' "$1/$base.json"
}
hA=$(sethashes "$tmp/refA" | sort -u)
hB=$(sethashes "$tmp/refB" | sort -u)
if [ "$(printf '%s\n' "$hA" | wc -l)" -eq 1 ] && [ "$(printf '%s\n' "$hB" | wc -l)" -eq 1 ] &&
	[ "$(sethashes "$tmp/refA" | wc -l)" -eq 4 ] && [ -n "$hA" ] && [ -n "$hB" ] && [ "$hA" != "$hB" ]; then
	ok "two sets, A $hA and B $hB: one hash in each set's four files"
else
	bad "the set hashes of A and B" "A: $(sethashes "$tmp/refA" | tr '\n' ' ')" "B: $(sethashes "$tmp/refB" | tr '\n' ' ')"
fi
if cmp -s "$tmp/refA/$base.c" "$tmp/refB/$base.c" || cmp -s "$tmp/refA/$base.cpp" "$tmp/refB/$base.cpp"; then
	bad "the two databases give different dispatches" "the test would prove nothing"
fi

# state DIR PREFIX REFPREFIX FILES...: A or B when every file equals that
# reference's (refA, refB), else what each is.
state() {
	d=$1 pre=$2 rp=$3
	shift 3
	for s in A B; do
		same=1
		for f in "$@"; do cmp -s "$d/$pre.$f" "$tmp/$rp$s/$pre.$f" || same=0; done
		[ $same = 1 ] && { echo $s; return; }
	done
	printf "mixed:"
	for f in "$@"; do
		w="?"
		for s in A B; do cmp -s "$d/$pre.$f" "$tmp/$rp$s/$pre.$f" && w=$s; done
		[ -e "$d/$pre.$f" ] || w=none
		printf " .%s=%s" "$f" "$w"
	done
	echo
}
strays() { find "$1" -mindepth 1 -maxdepth 1 \( -name '.aotc-*' -o -name '*.tmp' -o -name '*.tmp??????' \) | sed 's|.*/||'; }
# settle DIR: waits (5 s at most) until no process of a killed aotc still
# works on DIR: the moves of an emit go on in a child after a kill.
settle() {
	waited=0
	while pgrep -f -- "$1" >/dev/null 2>&1 && [ $waited -lt 100 ]; do
		sleep 0.05
		waited=$((waited + 1))
	done
}

out=$tmp/out
mkdir -p "$out"
"$aotc" emit "$src" --arch host --db "$tmp/dbA" -o "$out" >/dev/null 2>&1
cur=A
mixed=0 leftover=0 bystate=0 moved=0
# ---- 1. emit killed, alternating A and B ---------------------------------------
for i in $(seq 1 "$kills"); do
	if [ $cur = A ]; then want=B; else want=A; fi
	if [ $((i % 2)) = 1 ]; then
		n=$(rand "$i" 1 12)
		how="before fsync or rename $n"
		env LD_PRELOAD="$tmp/kill_shim.so" AOTC_KILL_AT=$n \
			setsid -w "$aotc" emit "$src" --arch host --db "$tmp/db$want" -o "$out" >"$tmp/log" 2>&1
	else
		ms=$(rand "$i" $((run_ms / 2)) $((run_ms * 3 / 2)))
		how="after $ms ms"
		timeout -s KILL "$(awk -v m="$ms" 'BEGIN { printf "%.3f", m / 1000 }')" \
			setsid -w "$aotc" emit "$src" --arch host --db "$tmp/db$want" -o "$out" >"$tmp/log" 2>&1
	fi
	settle "$out"
	st=$(state "$out" $base ref $files)
	hs=$(sethashes "$out" | sort -u)
	if [ "$st" != "$cur" ] && [ "$st" != "$want" ]; then
		bad "kill $i ($cur -> $want, $how): the old or the new set" "$st"
		mixed=$((mixed + 1))
	elif [ "$(sethashes "$out" | wc -l)" -ne 4 ] || [ "$(printf '%s\n' "$hs" | wc -l)" -ne 1 ]; then
		bad "kill $i ($cur -> $want, $how): one set hash in the four files" "$(sethashes "$out" | tr '\n' ' ')"
		mixed=$((mixed + 1))
	fi
	[ "$st" = "$want" ] && moved=$((moved + 1))
	[ "$st" = "$cur" ] && bystate=$((bystate + 1))
	[ -n "$(strays "$out")" ] && leftover=$((leftover + 1))
	# The next emit completes the new set and leaves nothing behind.
	t0=$(now_ms)
	if ! setsid -w "$aotc" emit "$src" --arch host --db "$tmp/db$want" -o "$out" >"$tmp/log" 2>&1; then
		bad "emit after kill $i" "$(cat "$tmp/log")"
	fi
	run_ms=$(($(now_ms) - t0)) # the machine's load now, for the next timed kill
	st=$(state "$out" $base ref $files)
	if [ "$st" != "$want" ] || [ -n "$(strays "$out")" ]; then
		bad "emit after kill $i: set $want complete, no temporaries" "$st" "$(strays "$out")" \
			"$(for p in $(strays "$out" | sed -n 's/^\.aotc-[a-z]*-\([0-9]*\)-.*/\1/p'); do ps -o pid,stat,comm,args -p "$p"; done)"
	fi
	cur=$want
done
[ $mixed = 0 ] && ok "$kills kills of emit: the old set or the new one each time ($bystate old, $moved new; $leftover left temporaries, each removed by the next emit)"

# ---- 2. strays of other runs ---------------------------------------------------
# A temporary directory whose process is gone, or is another program, or that
# is older than any emit keeps one goes; a live aotc's stays (a copy of sleep
# named aotc stands in for one); an older aotc's *.tmp go; the user's own
# files stay.
cp "$(command -v sleep)" "$tmp/aotc"
"$tmp/aotc" 60 &
live=$!
sleep 60 &
other=$!
dead=$(sh -c 'echo $$')
# A killed aotc nobody has reaped yet: a zombie named aotc, whose parent
# (this sh, then sleep) never waits for it.
set -- $(sh -c '"$1" 0 >/dev/null & echo $! $$; exec sleep 60 >/dev/null' sh "$tmp/aotc" &)
zombie=$1 reaper=$2
sleep 0.2
for d in ".aotc-emit-$dead-aaaaaa" ".aotc-link-$other-bbbbbb" ".aotc-emit-$live-cccccc" ".aotc-emit-$live-dddddd" \
	".aotc-emit-$zombie-eeeeee"; do
	mkdir -p "$out/$d"
	echo x >"$out/$d/$base.c"
done
touch -d '1 hour ago' "$out/.aotc-emit-$live-dddddd"
for f in "$base.c.tmp" "$base.h.tmp.tmpAb12Cd" "aotc.h.tmp" "aotc.h.tmpXy34Zw" "_aot_other_host.cpp.tmp" notes.tmp; do
	echo x >"$out/$f"
done
"$aotc" emit "$src" --arch host --db "$tmp/db$cur" -o "$out" >/dev/null 2>&1
left=$(strays "$out" | sort | tr '\n' ' ')
if [ "$left" = ".aotc-emit-$live-cccccc notes.tmp " ]; then
	ok "strays: a gone process's, a zombie's, another program's and an hour-old directory removed, a live aotc's kept; an older aotc's *.tmp removed, notes.tmp kept"
else
	bad "strays removed, the user's kept" "left: $left" "expected: .aotc-emit-$live-cccccc notes.tmp"
fi
kill "$live" "$other" "$reaper" 2>/dev/null
rm -rf "$out/.aotc-emit-$live-cccccc" "$out/notes.tmp"

# ---- 3. nothing changed, nothing touched -----------------------------------------
inodes() { for f in $files; do stat -c '%i %Y' "$out/$base.$f"; done; }
before=$(inodes)
sleep 1
"$aotc" emit "$src" --arch host --db "$tmp/db$cur" -o "$out" >/dev/null 2>&1
if [ "$(inodes)" = "$before" ] && [ -z "$(strays "$out")" ]; then
	ok "the same database again: every file untouched (inode and mtime), nothing left"
else
	bad "an emit that changes nothing touches nothing" "$before" "$(inodes)"
fi

# ---- 3b. two emits at once ------------------------------------------------------
# They take turns: the directory ends with one of the two sets whole. (A check,
# not a proof: without the lock the window is so short that a mixture is rare.)
racemixed=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	"$aotc" emit "$src" --arch host --db "$tmp/dbA" -o "$out" >/dev/null 2>&1 &
	a=$!
	"$aotc" emit "$src" --arch host --db "$tmp/dbB" -o "$out" >/dev/null 2>&1 &
	b=$!
	wait "$a" "$b"
	st=$(state "$out" $base ref $files)
	case $st in A | B) ;; *) racemixed=$((racemixed + 1)); bad "two emits at once, round $i: one set whole" "$st" ;; esac
done
[ $racemixed = 0 ] && ok "two emits at once (A and B, 10 rounds): one set whole each time"
"$aotc" emit "$src" --arch host --db "$tmp/db$cur" -o "$out" >/dev/null 2>&1

# ---- 4. files of two sets do not build together -----------------------------------
mkdir -p "$tmp/build"
cat >"$tmp/build/main.c" <<'C'
#include <stdio.h>
#include "_aot_matmul_host_host.h"
int main(void)
{
	float a[64], b[64], c[64];
	for (int i = 0; i < 64; i++)
		a[i] = b[i] = 1;
	return aot_matmul_host_host_launch(8, 8, 8, a, b, c) == 0 && c[0] == 8 ? 0 : 1;
}
C
CFLAGS="-std=c99 -Wall -Wextra -Werror -pedantic"
built=1
for s in A B; do
	gcc $CFLAGS -c "$tmp/ref$s/$base.c" -o "$tmp/build/c$s.o" >"$tmp/log" 2>&1 &&
		g++ -std=c++17 -Wall -Wextra -Werror -I "$root/templates" -I "$tmp/ref$s" -c "$tmp/ref$s/$base.cpp" \
			-o "$tmp/build/cpp$s.o" >>"$tmp/log" 2>&1 &&
		gcc $CFLAGS -I "$tmp/ref$s" -c "$tmp/build/main.c" -o "$tmp/build/main$s.o" >>"$tmp/log" 2>&1 || built=0
done
if [ $built = 1 ] && g++ -o "$tmp/build/AA" "$tmp/build/mainA.o" "$tmp/build/cA.o" "$tmp/build/cppA.o" >"$tmp/log" 2>&1 &&
	"$tmp/build/AA"; then
	ok "set A's .c and .cpp build, link and run together"
else
	bad "set A builds" "$(cat "$tmp/log")"
fi
if g++ -o "$tmp/build/AB" "$tmp/build/mainA.o" "$tmp/build/cA.o" "$tmp/build/cppB.o" >"$tmp/log" 2>&1; then
	bad "A's dispatch with B's launcher: refused at link"
elif grep -q "undefined reference to .aot_matmul_host_host_set_$hB" "$tmp/log"; then
	ok "A's dispatch with B's launcher: the link fails naming aot_matmul_host_host_set_$hB"
else
	bad "A's dispatch with B's launcher: the link error names the set" "$(cat "$tmp/log")"
fi
mkdir -p "$tmp/mix"
cp "$tmp/refA/$base.c" "$tmp/refB/$base.h" "$tmp/refA/$base.cpp" "$tmp/mix/"
for cmd in "gcc $CFLAGS -c $tmp/mix/$base.c" "g++ -std=c++17 -I $root/templates -I $tmp/mix -c $tmp/mix/$base.cpp"; do
	if $cmd -o "$tmp/mix/x.o" >"$tmp/log" 2>&1; then
		bad "${cmd%% *}: A's file with B's header refused"
	elif grep -Eq "error.*$base.h and $base.(c|cpp) are of different aotc emits: emit again" "$tmp/log"; then
		ok "${cmd%% *}: A's file with B's header stops at #error, saying so"
	else
		bad "${cmd%% *}: the #error" "$(cat "$tmp/log")"
	fi
done

# ---- 5. aotc link killed --------------------------------------------------------
# Two directories emitted from two ROCm databases; the link of one, then of the
# other, into one output, killed before an fsync or a rename.
rocm=$root/tests/codegen/rocm
rdb=$rocm/axpy.rocm_made_up_gfx90a.json
mkdir -p "$tmp/rdbA" "$tmp/rdbB"
cp "$rdb" "$tmp/rdbA/"
skew "$rdb" "$tmp/rdbB/$(basename "$rdb")"
for s in A B; do
	"$aotc" emit "$rocm/axpy.cu" --arch gfx90a --db "$tmp/rdb$s" -o "$tmp/in$s" >"$tmp/log" 2>&1 &&
		mkdir -p "$tmp/lref$s" &&
		"$aotc" link "$tmp/in$s" -o "$tmp/lref$s/l.c" >>"$tmp/log" 2>&1 ||
		bad "emit and link set $s" "$(cat "$tmp/log")"
done
# The references were linked from another directory: the same relative paths.
lout=$tmp/lout
mkdir -p "$lout"
"$aotc" link "$tmp/inA" -o "$lout/l.c" >/dev/null 2>&1
lcur=A lmixed=0 lkills=$((kills / 5))
for i in $(seq 1 "$lkills"); do
	if [ $lcur = A ]; then lwant=B; else lwant=A; fi
	n=$(rand $((100 + i)) 1 8)
	env LD_PRELOAD="$tmp/kill_shim.so" AOTC_KILL_AT=$n \
		setsid -w "$aotc" link "$tmp/in$lwant" -o "$lout/l.c" >"$tmp/log" 2>&1
	settle "$lout"
	st=$(state "$lout" l lref c h hip)
	if [ "$st" != "$lcur" ] && [ "$st" != "$lwant" ]; then
		bad "link kill $i ($lcur -> $lwant, before fsync or rename $n): the old or the new set" "$st"
		lmixed=$((lmixed + 1))
	fi
	"$aotc" link "$tmp/in$lwant" -o "$lout/l.c" >"$tmp/log" 2>&1
	if [ "$(state "$lout" l lref c h hip)" != "$lwant" ] || [ -n "$(strays "$lout")" ]; then
		bad "link after kill $i: set $lwant complete, no temporaries" "$(state "$lout" l lref c h hip)" "$(strays "$lout")"
	fi
	lcur=$lwant
done
[ $lmixed = 0 ] && ok "$lkills kills of link: the old set or the new one each time"
# The linked C checks the per-architecture header it was linked with.
cp -R "$tmp/inA" "$tmp/inX" && mkdir -p "$tmp/lx"
"$aotc" link "$tmp/inX" -o "$tmp/lx/l.c" >/dev/null 2>&1
"$aotc" emit "$rocm/axpy.cu" --arch gfx90a --db "$tmp/rdbB" -o "$tmp/inX" >/dev/null 2>&1
if gcc $CFLAGS -c "$tmp/lx/l.c" -o "$tmp/lx/l.o" >"$tmp/log" 2>&1; then
	bad "a linked C file over a directory emitted anew: refused"
elif grep -q '_aot_axpy_rocm_gfx90a.h is not of the emit l.c was linked with' "$tmp/log"; then
	ok "a linked C file over a directory emitted anew stops at #error, saying so"
else
	bad "the linked C file's #error" "$(cat "$tmp/log")"
fi

finish
