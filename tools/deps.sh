#!/usr/bin/env bash
# Installs what Stet needs on a fresh Debian machine (as root): QEMU and the
# Rust target for the kernel. Quiet and quick when everything is there.
set -euo pipefail
need=()
command -v qemu-system-x86_64 >/dev/null 2>&1 || need+=(qemu-system-x86)
# qemu-io and qemu-img: the harness's write-log replayer is tested against them.
command -v qemu-io >/dev/null 2>&1 || need+=(qemu-utils)
# GRUB, to test the Multiboot2 boot path the way a real machine boots.
[ -d /usr/lib/grub/i386-pc ] || need+=(grub-pc-bin)
command -v grub-mkrescue >/dev/null 2>&1 || need+=(grub-common)
command -v xorriso >/dev/null 2>&1 || need+=(xorriso)
command -v mformat >/dev/null 2>&1 || need+=(mtools)
# musl-gcc: the UNIX personality's C test programs are static musl binaries.
command -v musl-gcc >/dev/null 2>&1 || need+=(musl-tools)
# cpio: the UNIX file system's first contents are a newc archive.
command -v cpio >/dev/null 2>&1 || need+=(cpio)
# busybox-static: the UNIX personality's shell and utilities (static glibc).
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || need+=(busybox-static)
if [ ${#need[@]} -gt 0 ]; then
    echo "deps: installing ${need[*]}"
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
    echo "deps: Rust is missing; install it with rustup (https://rustup.rs) and retry" >&2
    exit 1
fi
# rust-toolchain.toml pins the toolchain; make sure it has the kernel target
# and the lint components (rustup skips them if the toolchain pre-existed).
if ! rustup target list --installed 2>/dev/null | grep -qx x86_64-unknown-none; then
    rustup target add x86_64-unknown-none
fi
if ! rustup component list --installed 2>/dev/null | grep -q '^clippy'; then
    rustup component add clippy rustfmt
fi
