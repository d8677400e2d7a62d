#!/bin/sh
# Terminal manners (docs/cli.md, "Environment"): tune's progress redraws its
# line ("\r\033[K") only on a terminal that can (stderr a tty, $TERM set and
# not "dumb"); TERM=dumb, no TERM, or a pipe get plain lines.
# Usage: terminal.sh AOTC REPO_ROOT
aotc=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export AOTC_CACHE_DIR="$tmp/cache" AOTC_HOST_FLUSH_BYTES=65536
. "$(dirname "$0")/../lib.sh"
src=$root/tests/tuner/truth_host.cpp
"$aotc" tune "$src" --arch host --db "$tmp/warm" --compile-only --quiet >/dev/null 2>&1

# redraws TERM|- DB: whether a tune under a pseudo-terminal ("-": no TERM)
# wrote the redraw sequence; exits 2 where the tune failed.
redraws() {
	python3 - "$aotc" "$src" "$tmp/$2" "$1" <<'PY'
import os, pty, subprocess, sys
aotc, src, db, term = sys.argv[1:]
env = dict(os.environ)
env.pop("TERM", None)
if term != "-":
    env["TERM"] = term
master, slave = pty.openpty()
p = subprocess.Popen([aotc, "tune", src, "--arch", "host", "--db", db], stdin=slave, stdout=slave,
                     stderr=slave, env=env, close_fds=True)
os.close(slave)
out = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
p.wait()
sys.exit(2 if p.returncode else 0 if b"\r\x1b[K" in out else 1)
PY
}
redraws xterm t1
st=$?
[ $st = 0 ] && ok "TERM=xterm on a terminal: the progress line redrawn" || bad "TERM=xterm: $st (0: redrawn, 1: plain, 2: failed)"
for t in dumb -; do
	redraws "$t" "t-$t"
	st=$?
	name=$t
	[ "$t" = - ] && name="unset"
	[ $st = 1 ] && ok "TERM $name on a terminal: plain lines, no escape codes" ||
		bad "TERM '$t': $st (0: redrawn, 1: plain, 2: failed)"
done
"$aotc" tune "$src" --arch host --db "$tmp/pipe" 2>"$tmp/err" | cat >/dev/null
if grep -q "$(printf '\033')" "$tmp/err"; then bad "a pipe: escape codes written" "$tmp/err"; else ok "stderr a pipe: plain lines"; fi
finish
