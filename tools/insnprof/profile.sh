#!/usr/bin/env bash
# Where a UNIX benchmark row's instructions go, by program and function:
#
#   tools/insnprof/profile.sh ROW [COUNT]     e.g. null_syscall 20000
#
# Boots tests/bench/unix.toml's system (unix_python.toml's for
# python_startup) twice under QEMU with the insnprof plugin, running
# `/bin/linuxbench ROW COUNT` and `/bin/linuxbench ROW 1` (bench.c's profile
# mode), and prints the difference per operation: boot and setup cancel
# out. Same -icount flags as make bench. The two boots run at once;
# SERIAL=1 runs them one after the other (one QEMU at a time).
set -euo pipefail
cd "$(dirname "$0")/../.."
row=${1:?usage: profile.sh ROW [COUNT]}
count=${2:-2000}
out=build/insnprof
mkdir -p "$out"
spec_in=tests/bench/unix.toml
if [ "$row" = python_startup ]; then spec_in=tests/bench/unix_python.toml; fi
make -s all
gcc -O2 -shared -fPIC -fvisibility=hidden -Wall -Werror \
    -o build/insnprof.so tools/insnprof/insnprof.c
run() { # N: one boot doing the row N times -> $out/N.counts
    local n=$1 spec="$out/prof_${row}_$1.toml"
    sed -e "s|text:/bin/linuxbench[^\"]*|text:/bin/linuxbench $row $n|" \
        -e "s|^qemu_args = \[|qemu_args = [\"-plugin\", \"$PWD/build/insnprof.so,out=$PWD/$out/$n.counts\", |" \
        -e '/^rename_rows/d' "$spec_in" |
        awk -v row="$row" -v n="$n" '
            /^expect = \[/ { print "expect = [\"linuxbench: ran " row " " n " times\"]"; skip = 1; next }
            skip && /^\]/ { skip = 0; next }
            !skip' >"$spec"
    target/release/stet-harness test --spec "$spec" >"$out/$n.log" 2>&1 ||
        { tail -20 "$out/$n.log"; exit 1; }
}
if [ "${SERIAL:-0}" = 1 ]; then
    run "$count"
    run 1
else
    run "$count" &
    run 1
    wait
fi
bins=(target/kernel/x86_64-unknown-none/release/stet-kernel
      target/user/x86_64-unknown-none/release/{unixkeeper,unixd,spacebank,unixtick}
      build/user/linuxbench-bench build/user/linuxbench-true build/user/linuxbench-true-dyn
      build/rootfs/lib/ld-musl-x86_64.so.1)
python3 tools/insnprof/report.py --base "$out/1.counts" "$out/$count.counts" \
    $((count - 1)) "${bins[@]}"
