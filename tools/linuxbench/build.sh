#!/usr/bin/env bash
# Builds what run.sh boots, under build/linux/: Debian's stock kernel
# (vmlinuz) and an initramfs holding static busybox, /init, /bench,
# /bin/true, /bin/true-dyn with musl's loader, and Debian's python3 with
# its libraries (build/debs/root, which make rootfs unpacks). Idempotent: installs only what is missing, downloads the kernel
# only once, and rebuilds the initramfs byte for byte the same.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OUT=$ROOT/build/linux
mkdir -p "$OUT"

if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
updated=
apt_update() {
    [ -n "$updated" ] && return
    $SUDO apt-get update -qq
    updated=1
}

# --- host tools -------------------------------------------------------------
need=()
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
# busybox-static, not busybox: the initramfs has no shared libraries.
for p in musl-tools busybox-static cpio; do installed $p || need+=($p); done
command -v qemu-system-x86_64 >/dev/null 2>&1 || need+=(qemu-system-x86)
if [ ${#need[@]} -gt 0 ]; then
    echo "linuxbench: installing ${need[*]}"
    apt_update
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
        --no-install-recommends "${need[@]}" >/dev/null
fi

# --- kernel -------------------------------------------------------------------
# Fetched once; later builds reuse it so that numbers stay comparable.
if [ ! -s "$OUT/vmlinuz" ] || [ ! -s "$OUT/kernel.txt" ]; then
    pkg_of() { apt-cache depends linux-image-amd64 2>/dev/null |
        awk '/Depends: linux-image-.*-amd64/ { print $2; exit }'; }
    pkg=$(pkg_of)
    if [ -z "$pkg" ]; then apt_update; pkg=$(pkg_of); fi
    [ -n "$pkg" ] || { echo "linuxbench: no linux-image-*-amd64 package" >&2; exit 1; }
    echo "linuxbench: fetching $pkg"
    dl=$(mktemp -d "$OUT/dl.XXXXXX")
    chmod 755 "$dl"
    # As root, apt would download as user _apt, who cannot write here.
    (cd "$dl" && apt-get download -qq -o APT::Sandbox::User="$(id -un)" "$pkg")
    deb=$(ls "$dl"/*.deb)
    # Only /boot/vmlinuz-* is needed, not the ~400 MB of modules.
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dl" --wildcards './boot/vmlinuz-*'
    cp "$dl"/boot/vmlinuz-* "$OUT/vmlinuz"
    echo "$pkg $(dpkg-deb -f "$deb" Version)" >"$OUT/kernel.txt"
    rm -rf "$dl"
fi
echo "linuxbench: kernel $(cat "$OUT/kernel.txt")"

# --- programs -----------------------------------------------------------------
CFLAGS="-static -O2 -Wall -Wextra"
musl-gcc $CFLAGS -o "$OUT/bench" "$HERE/bench.c"
musl-gcc $CFLAGS -s -o "$OUT/true" "$HERE/true.c"
# Dynamic: musl's loader (/lib/ld-musl-x86_64.so.1) maps and relocates it.
musl-gcc -O2 -Wall -Wextra -s -o "$OUT/true-dyn" "$HERE/true.c"
# The UNIX personality's benchmark (tests/bench/unix.toml) runs the very
# same binaries: the Makefile builds them with this command into the
# rootfs; a difference would make the two sides' rows incomparable.
for b in bench true true-dyn; do
    if [ -f "$ROOT/build/user/linuxbench-$b" ] &&
        ! cmp -s "$OUT/$b" "$ROOT/build/user/linuxbench-$b"; then
        echo "linuxbench: build/user/linuxbench-$b differs from $OUT/$b" >&2
        exit 1
    fi
done

# --- initramfs ------------------------------------------------------------------
# linux_python_startup runs Debian's python3 from the very tree that Stet's
# rootfs-debs.cpio holds: tools/debs.sh's build/debs/root (make rootfs,
# with python3-minimal in DEBS, as by default).
DEBS_ROOT=$ROOT/build/debs/root
if [ ! -e "$DEBS_ROOT/usr/bin/python3" ]; then
    echo "linuxbench: $DEBS_ROOT has no usr/bin/python3: run make rootfs (DEBS with python3-minimal)" >&2
    exit 1
fi
R=$OUT/rootfs
rm -rf "$R"
mkdir -p "$R"/{bin,dev,etc,lib,proc,sys,tmp}
cp /bin/busybox "$R/bin/busybox"
for a in sh mount poweroff; do ln -s busybox "$R/bin/$a"; done
cp "$OUT/bench" "$R/bench"
cp "$OUT/true" "$R/bin/true"
cp "$OUT/true-dyn" "$R/bin/true-dyn"
cp /usr/lib/x86_64-linux-musl/libc.so "$R/lib/ld-musl-x86_64.so.1"
cp "$HERE/init" "$R/init"
chmod 755 "$R/init" "$R/bench" "$R/bin/true" "$R/bin/true-dyn"
echo 'root:x:0:0:root:/:/bin/sh' >"$R/etc/passwd" # opened by linux_open_close
# Debian's tree under it as make rootfs lays it under rootfs-debs.cpio:
# merged /usr (/lib is a link to usr/lib, so musl's loader moves there and
# still resolves as /lib/ld-musl-x86_64.so.1), nothing of ours replaced.
if [ -L "$DEBS_ROOT/lib" ]; then
    mkdir -p "$R/usr/lib"
    cp -a "$R/lib/." "$R/usr/lib/"
    rm -rf "$R/lib"
fi
tar -C "$DEBS_ROOT" -c . | tar -C "$R" -x --skip-old-files
# The kernel gives /init this console as its stdin/stdout/stderr.
mknod -m 600 "$R/dev/console" c 5 1
# Fixed owners, times and order, so the image is the same every build.
find "$R" -exec touch -h -d @0 {} +
(cd "$R" && find . -mindepth 1 | LC_ALL=C sort |
    cpio -o -H newc -R 0:0 --reproducible --quiet) | gzip -n -9 >"$OUT/initramfs.gz"
echo "linuxbench: built $OUT/initramfs.gz"
