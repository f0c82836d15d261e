#!/usr/bin/env bash
# Where a UNIX benchmark row's instructions go, by program and function:
#
#   tools/insnprof/profile.sh ROW [COUNT]     e.g. null_syscall 20000
#
# Boots tests/bench/unix.toml's system twice under QEMU with the insnprof
# plugin, running `/bin/linuxbench ROW COUNT` and `/bin/linuxbench ROW 1`
# (bench.c's profile mode), and prints the difference per operation: boot
# and setup cancel out. Same -icount flags as make bench.
set -euo pipefail
cd "$(dirname "$0")/../.."
row=${1:?usage: profile.sh ROW [COUNT]}
count=${2:-2000}
out=build/insnprof
mkdir -p "$out"
make -s all
gcc -O2 -shared -fPIC -fvisibility=hidden -Wall -Werror \
    -o build/insnprof.so tools/insnprof/insnprof.c
run() { # N: one boot doing the row N times -> $out/N.counts
    local n=$1 spec="$out/prof_${row}_$1.toml"
    sed -e "s|text:/bin/linuxbench|text:/bin/linuxbench $row $n|" \
        -e "s|^qemu_args = \[|qemu_args = [\"-plugin\", \"$PWD/build/insnprof.so,out=$PWD/$out/$n.counts\", |" \
        -e '/^rename_rows/d' tests/bench/unix.toml |
        awk -v row="$row" -v n="$n" '
            /^expect = \[/ { print "expect = [\"linuxbench: ran " row " " n " times\"]"; skip = 1; next }
            skip && /^\]/ { skip = 0; next }
            !skip' >"$spec"
    target/release/stet-harness test --spec "$spec" >"$out/$n.log" 2>&1 ||
        { tail -20 "$out/$n.log"; exit 1; }
}
run "$count" &
run 1
wait
bins=(target/kernel/x86_64-unknown-none/release/stet-kernel
      target/user/x86_64-unknown-none/release/{unixkeeper,unixd,spacebank,unixtick}
      build/user/linuxbench-bench build/user/linuxbench-true)
python3 tools/insnprof/report.py --base "$out/1.counts" "$out/$count.counts" \
    $((count - 1)) "${bins[@]}"
