#!/usr/bin/env bash
# tools/debs.sh PACKAGE... — Debian programs for the UNIX file system.
#
# Resolves the run-time dependency closure of the named Debian packages
# from their own Depends and Pre-Depends fields (read from the downloaded
# .debs with dpkg-deb -f), downloads every package of it with
# `apt-get download` into build/debs/cache/ (kept: the next run downloads
# only what is missing), unpacks each with `dpkg-deb -x` into
# build/debs/root/ (made anew each run), puts it in merged-/usr form (as
# Debian 12 installs it), strips what no program loads, and prints the
# sizes. `make rootfs` runs it with $(DEBS) and lays build/debs/root/ under
# the UNIX file system of build/user/rootfs-debs.cpio (docs/UNIX.md, "The
# file system").
#
# Rules of the closure:
#  * `a | b` takes the first alternative; when that is a package skipped
#    below (`dpkg | install-info`), the whole dependency is dropped. Version
#    constraints and `:any` are ignored: the candidate version
#    (`apt-cache policy`) is what is fetched.
#  * A virtual name (no candidate of its own) takes its providers' first
#    name in sort order.
#  * Packages are visited in sort order, so the same lists give the same
#    closure, the same downloads and the same tree.
#  * Skipped, with why: no maintainer script runs here (files are unpacked,
#    never installed), so the packages that only those scripts use are left
#    out — dpkg (python3-minimal's postinst byte-compiles with it; a Depends
#    on dpkg asks for a dpkg version, not for a file a program opens),
#    install-info (registers info manuals, which are stripped anyway),
#    debconf and debconf-2.0 (configuration questions at install time) and
#    perl-base (what those tools run on). Nothing any program loads at run
#    time comes from them. Debian's Essential packages (coreutils, dash, …)
#    are never named in Depends and so are not pulled in; busybox stands in
#    for them. libc6 is not skipped: its ld-linux-x86-64.so.2 and libc.so.6
#    are what every dynamic program needs.
#
# Stripped from the tree (never loaded by the programs): usr/share/doc,
# man, info, lintian, bug, doc-base and all of usr/share/locale (message
# catalogs; the C locale is built into glibc and needs no file); glibc's
# gconv modules (8 MiB; only iconv(3) loads them, for charsets other than
# the built-in UTF-8, ASCII and Latin-1 — Python, SQLite and Lua do not
# call it: put them back for a program that does); Python's regression
# tests (usr/lib/python3.11/test and lib-dynload's _test*, _xxtest*,
# xxlimited* modules, which only that suite imports).
#
# Fails (exit 1, a line saying which package and why) if a package or a
# dependency has no candidate in apt's lists or cannot be downloaded.
# `apt-get update` runs only when apt has no package lists at all.
#
# Environment: DEBS_OUT (default build/debs) is where cache/ and root/ go.
set -euo pipefail

die() {
	echo "debs.sh: $*" >&2
	exit 1
}

[ $# -gt 0 ] || die "usage: tools/debs.sh PACKAGE... (e.g. python3.11-minimal sqlite3 lua5.4)"
for c in apt-get apt-cache dpkg-deb; do
	command -v "$c" >/dev/null || die "needs $c (a Debian host)"
done

OUT=${DEBS_OUT:-build/debs}
CACHE=$OUT/cache
ROOT=$OUT/root
SKIP=" dpkg install-info debconf debconf-2.0 perl-base "
mkdir -p "$CACHE"

# apt's lists: fetched once, when there are none (a fresh machine).
if ! compgen -G "/var/lib/apt/lists/*_Packages*" >/dev/null; then
	echo "debs.sh: apt has no package lists; running apt-get update"
	apt-get update -qq || die "apt-get update failed"
fi

# candidates NAME...: "NAME VERSION" for each name apt has a candidate of
# (one apt-cache call for a whole round: each call costs half a second).
candidates() {
	apt-cache policy "$@" 2>/dev/null |
		awk '/^[^ ]/ { n = $1; sub(/:$/, "", n) } $1 == "Candidate:" && $2 != "(none)" { print n, $2 }'
}

# provider NAME: the first (sorted) package that provides virtual NAME.
provider() {
	apt-cache showpkg "$1" 2>/dev/null |
		awk '/^Reverse Provides:/ { on = 1; next } on && NF { print $1 }' | LC_ALL=C sort -u | head -n 1
}

# fetch NAME VERSION: makes sure that .deb is in the cache and prints its
# path. apt-get download names it NAME_VERSION_ARCH.deb, ':' as %3a.
fetch() {
	local name=$1 ver=$2 file
	file=$(compgen -G "$CACHE/${name}_${ver//:/%3a}_*.deb" | head -n 1 || true)
	if [ -z "$file" ]; then
		(cd "$CACHE" && apt-get download -q -o APT::Sandbox::User=root "$name=$ver" >/dev/null 2>"$name.err") ||
			die "cannot download $name $ver: $(tail -n 3 "$CACHE/$name.err" | tr '\n' ' ')"
		rm -f "$CACHE/$name.err"
		file=$(compgen -G "$CACHE/${name}_${ver//:/%3a}_*.deb" | head -n 1 || true)
		[ -n "$file" ] || die "apt-get download $name=$ver left no .deb in $CACHE"
	fi
	echo "$file"
}

# The closure, breadth first, each round in sort order; `why` remembers
# who asked for a name (for the error message).
declare -A seen=() why=() deb=() ver=()
queue=$(printf '%s\n' "$@" | LC_ALL=C sort -u)
for p in $queue; do why[$p]="asked for"; done
while [ -n "$queue" ]; do
	# shellcheck disable=SC2086 # the queue is a list of package names
	while read -r n v; do ver[$n]=$v; done < <(candidates $queue)
	next=""
	for p in $queue; do
		[ -z "${seen[$p]:-}" ] || continue
		seen[$p]=1
		name=$p
		if [ -z "${ver[$p]:-}" ]; then
			name=$(provider "$p")
			[ -n "$name" ] || die "no package $p (${why[$p]}) in apt's lists (apt-get update?)"
			[ -z "${seen[$name]:-}" ] || continue
			seen[$name]=1
			[ -n "${ver[$name]:-}" ] || ver[$name]=$(candidates "$name" | cut -d' ' -f2)
			[ -n "${ver[$name]}" ] || die "no candidate version of $name (provides $p, ${why[$p]})"
		fi
		f=$(fetch "$name" "${ver[$name]}") || exit 1
		deb[$name]=$f
		# Depends and Pre-Depends, one dependency a line.
		while IFS= read -r dep; do
			# The first alternative, without its version or architecture.
			first=${dep%%|*}
			first=${first%%(*}
			first=${first//[[:space:]]/}
			first=${first%%:*}
			[ -n "$first" ] || continue
			case $SKIP in *" $first "*) continue ;; esac
			if [ -z "${seen[$first]:-}" ] && [ -z "${why[$first]:-}" ]; then
				why[$first]="needed by $name"
				next+="$first"$'\n'
			fi
		done < <(dpkg-deb -f "$f" Pre-Depends Depends | sed -e 's/^[A-Za-z-]*: //' | tr ',' '\n')
	done
	queue=$(printf '%s' "$next" | LC_ALL=C sort -u)
done

# Unpack in sort order into a fresh tree, then swap it in.
tmp=$OUT/root.new
rm -rf "$tmp" && mkdir -p "$tmp"
mapfile -t names < <(printf '%s\n' "${!deb[@]}" | LC_ALL=C sort)
for n in "${names[@]}"; do
	dpkg-deb -x "${deb[$n]}" "$tmp" || die "cannot unpack ${deb[$n]}"
done
unpacked=$(du -sb "$tmp" | cut -f1)

# Merged /usr, as Debian 12 installs it: /lib, /lib64, /bin, /sbin of a
# package go under usr/; /lib and /lib64 become the links Debian has
# (lib -> usr/lib, lib64 -> usr/lib64), so /lib64/ld-linux-x86-64.so.2 and
# /lib/x86_64-linux-gnu resolve. /bin and /sbin stay directories (busybox's
# applets live in /bin of the UNIX file system).
for d in lib lib64 bin sbin; do
	if [ -d "$tmp/$d" ] && [ ! -L "$tmp/$d" ]; then
		mkdir -p "$tmp/usr/$d"
		cp -a "$tmp/$d/." "$tmp/usr/$d/"
		rm -rf "${tmp:?}/$d"
	fi
done
mkdir -p "$tmp/usr/lib" "$tmp/usr/lib64"
ln -s usr/lib "$tmp/lib"
ln -s usr/lib64 "$tmp/lib64"
[ -e "$tmp/lib64/ld-linux-x86-64.so.2" ] || ! printf '%s\n' "${names[@]}" | grep -qx libc6 ||
	die "libc6 unpacked but /lib64/ld-linux-x86-64.so.2 does not resolve"

for d in usr/share/{doc,man,info,lintian,bug,doc-base,locale} usr/lib/x86_64-linux-gnu/gconv \
	usr/lib/python3.11/test; do
	rm -rf "${tmp:?}/$d"
done
rm -f "$tmp"/usr/lib/python3.11/lib-dynload/{_test,_xxtest,xxlimited}*.so
# Directories and the two links get one fixed time (some are made here),
# so the tree is the same each run.
find "$tmp" -type d -exec touch -d @1704067200 {} +
touch -h -d @1704067200 "$tmp/lib" "$tmp/lib64"

rm -rf "$ROOT" && mv "$tmp" "$ROOT"
printf '%s\n' "${names[@]}" >"$OUT/packages.txt"
kept=$(du -sb "$ROOT" | cut -f1)
debsize=$(for n in "${names[@]}"; do stat -c %s "${deb[$n]}"; done | awk '{ s += $1 } END { print s }')
echo "debs.sh: ${#names[@]} packages ($(tr '\n' ' ' <"$OUT/packages.txt"| sed 's/ $//'))"
echo "debs.sh: .debs $((debsize / 1024)) KiB; unpacked $((unpacked / 1024)) KiB; $ROOT $((kept / 1024)) KiB after stripping"
