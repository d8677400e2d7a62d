#!/bin/sh
# One home for database names (tuner/dbset.h, issue 29): a sharded set that
# `aotc tune --shard I/N` writes is read alike by `aotc emit` and `aotc eval`
# (eval used to look for the training database under the held-out one's
# name and refused shards), the saved dispatch beside the databases is no
# database, and tune, emit and eval agree on every name.
# Usage: dbset.sh AOTC REPO_ROOT
# The suite sets AOTC_NO_SAVE=1 (tests/meson.build): saving is what this tests.
unset AOTC_NO_SAVE
aotc=$1
root=$2
here=$root/tests/tuner
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
export AOTC_HOST_FLUSH_BYTES=65536
. "$(dirname "$0")/../lib.sh"
check() {
	if [ "$2" -eq "$3" ]; then ok "$1"; else bad "$1" "exit $2, expected $3" "$(tail -8 "$tmp/log")"; fi
}
has() { if grep -qF -- "$2" "$tmp/log"; then ok "$1"; else bad "$1" "no '$2' in:" "$(tail -12 "$tmp/log")"; fi; }
rerun="(rerun: $0 $aotc_real $root)"

echo '[{"n": 96}, {"n": 320}]' >"$tmp/heldout.json"
for i in 1 2; do
	"$aotc" tune "$here/learn_host.cpp" --arch host --db "$tmp/db" --shard $i/2 >"$tmp/log" 2>&1
	check "tune --shard $i/2 exits 0" $? 0
done
n=$(ls "$tmp"/db/learn.*.shard?of2.json 2>/dev/null | wc -l)
if [ "$n" -eq 2 ]; then ok "two shard files, named .shardIof2.json"; else bad "two shard files" "$(ls "$tmp/db")"; fi

"$aotc" emit "$here/learn_host.cpp" --arch host --db "$tmp/db" -o "$tmp/out" >"$tmp/log" 2>&1
check "emit reads the shards" $? 0
has "emit merges both" "and 1 more database"
if [ -f "$tmp/db/dispatch/learn.host.json" ]; then ok "emit saves the dispatch as dispatch/<kernel>.<arch>.json"
else bad "the saved dispatch" "$(ls "$tmp/db")"; fi

"$aotc" eval "$here/learn_host.cpp" --arch host --db "$tmp/db" --shapes "$tmp/heldout.json" >"$tmp/log" 2>&1
check "eval reads the same sharded set $rerun" $? 0
has "eval learns from every shape of the set" "learnt from 4 shapes, on 2 new ones"
n=$(ls "$tmp"/db/eval/learn.*.json 2>/dev/null | wc -l)
if [ "$n" -eq 1 ]; then ok "eval writes one held-out database under eval/"; else bad "eval/" "$(ls -R "$tmp/db")"; fi

# The held-out database now counts in the emitted figures: the key changes.
"$aotc" emit "$here/learn_host.cpp" --arch host --db "$tmp/db" -o "$tmp/out" --verbose >"$tmp/log" 2>&1
check "emit after eval exits 0" $? 0
if grep -q "is up to date" "$tmp/log"; then bad "an eval database makes the saved dispatch stale" "$(cat "$tmp/log")"
else ok "an eval database makes the saved dispatch stale"; fi
"$aotc" emit "$here/learn_host.cpp" --arch host --db "$tmp/db" -o "$tmp/out" --verbose >"$tmp/log" 2>&1
has "and then it is reused" "is up to date"

# A missing shard: the warning is said whether learnt or reused.
rm "$tmp"/db/learn.*shard2of2.json
for run in learnt reused; do
	"$aotc" emit "$here/learn_host.cpp" --arch host --db "$tmp/db" -o "$tmp/out" >"$tmp/log" 2>&1
	check "emit with one shard missing exits 0 ($run)" $? 0
	has "a missing shard is named ($run)" "1 of 2 shards missing (shard 2 first)"
done
"$aotc" eval "$here/learn_host.cpp" --arch host --db "$tmp/db" --shapes "$tmp/heldout.json" >"$tmp/log" 2>&1
check "eval with one shard missing exits 0" $? 0
has "eval warns alike" "1 of 2 shards missing (shard 2 first)"

# Another source version: emit and eval refuse alike.
sed 's/y\[i\] = 2 \* x\[i\];/y[i] = 2.0f * x[i];/' "$here/learn_host.cpp" >"$tmp/learn_host.cpp"
"$aotc" emit "$tmp/learn_host.cpp" --arch host --db "$tmp/db" -o "$tmp/out" >"$tmp/log" 2>&1
check "emit refuses a database of another source" $? 3
has "emit says so" "was tuned from another version"

# Pipes where files are expected never block: a saved dispatch that is a
# FIFO is ignored (learnt again), a FIFO named like a database is an error.
rm -f "$tmp/db/dispatch/learn.host.json"
mkfifo "$tmp/db/dispatch/learn.host.json"
timeout 60 "$aotc" emit "$here/learn_host.cpp" --arch host --db "$tmp/db" -o "$tmp/out" >"$tmp/log" 2>&1
check "a FIFO as the saved dispatch is ignored, no hang" $? 0
rm -f "$tmp/db/dispatch/learn.host.json"
mkfifo "$tmp/db/learn.zz.json"
timeout 60 "$aotc" emit "$here/learn_host.cpp" --arch host --db "$tmp/db" -o "$tmp/out" >"$tmp/log" 2>&1
check "a FIFO named like a database is an error, no hang" $? 3
has "it is named" "learn.zz.json: not a regular file"
rm -f "$tmp/db/learn.zz.json"

finish
