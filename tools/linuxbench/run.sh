#!/usr/bin/env bash
# Boots Debian's kernel with the benchmark initramfs under deterministic
# TCG (-icount: the guest's TSC advances once per guest instruction) and
# prints the console, BENCH lines included. Run build.sh first.
# Never -accel kvm: here /dev/kvm is emulated and far slower, and icount
# needs TCG anyway.
# -seed 1: -cpu max has RDRAND, whose values QEMU otherwise takes from the
# host; Linux seeds its RNG from it, and the random state (slab freelist
# order, ...) then moves the fork rows by a few instructions and the 1 MiB
# echo by ~50 from run to run. With a fixed seed the whole run repeats
# exactly. Stet's benchmark specs pass the same -cpu, -seed, -icount and
# -rtc flags (tests/bench/*.toml; the harness's bench test checks them).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$ROOT/build/linux
for f in vmlinuz initramfs.gz; do
    [ -s "$OUT/$f" ] || { echo "run.sh: $OUT/$f missing; run build.sh" >&2; exit 1; }
done
exec timeout 600 qemu-system-x86_64 -accel tcg -cpu max -seed 1 -m 256M -smp 1 \
    -icount shift=0,align=off,sleep=off \
    -rtc base=2024-01-01T00:00:00,clock=vm \
    -display none -monitor none -serial stdio -no-reboot \
    -kernel "$OUT/vmlinuz" -initrd "$OUT/initramfs.gz" \
    -append "console=ttyS0 quiet norandmaps nokaslr panic=-1 oops=panic" </dev/null
