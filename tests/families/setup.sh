# The start of every tests/families script, sourced; it reads the script's
# arguments AOTC REPO_ROOT, both made absolute (the scripts cd into $tmp);
# a scratch directory $tmp (kept with KEEP=1) with its own compile cache,
# tests/lib.sh, and $src (this folder) and $inc (aotc.h's folder).
aotc=$1
root=$2
case $aotc in /*) ;; *) aotc=$(pwd)/$aotc ;; esac
case $root in /*) ;; *) root=$(pwd)/$root ;; esac
tmp=$(mktemp -d)
trap '[ -n "$KEEP" ] || rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache"
. "$root/tests/lib.sh"
src=$root/tests/families
inc=$root/runtime/include
