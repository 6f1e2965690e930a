#!/usr/bin/env bash
# deb.sh: builds build/xpuify_VERSION_ARCH.deb with dpkg-deb from `install.sh install` into a staging root
# (PREFIX=/usr). Depends: the Debian package of every library the binary links (its ELF NEEDED entries, found
# with dpkg -S), at least the version installed here; Recommends: libclang1-14, which xpuify dlopens for C, C++
# and CUDA files (without it they are skipped with a message naming the package). Usage: packaging/deb.sh XPUIFY OUTDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
xp=${1:-build/xpuify} out=${2:-build}
command -v dpkg-deb >/dev/null || { echo "deb: dpkg-deb is missing (Debian's dpkg)" >&2; exit 1; }
stage=$out/deb
rm -rf "$stage" && mkdir -p "$stage/root/DEBIAN"
QUIET=1 "$here/install.sh" install "$stage/root" /usr "$xp"
strip --strip-unneeded "$stage/root/usr/bin/xpuify"  # the debug information stays in build/xpuify

# 0.1.0 from the binary; ~gitCOMMIT when it names one (~ sorts before the release itself)
read -r _ upstream rest < <("$xp" --version)
commit=$(sed -n 's/.*(commit \([^)]*\)).*/\1/p' <<<"$rest" | tr -c 'A-Za-z0-9.+~\n' '.')
version=$upstream${commit:+~git$commit}
arch=$(dpkg --print-architecture)

# the package owning each NEEDED library (usrmerge: dpkg may know it under /lib or /usr/lib)
deps=()
while read -r lib; do
  path=$(ldd "$xp" | awk -v l="$lib" '$1 == l {print $3}')
  [ -n "$path" ] || { echo "deb: $lib (needed by $xp) is not found by ldd" >&2; exit 1; }
  pkg=
  for p in "$path" "$(readlink -f "$path")" "${path#/usr}" "/usr$path"; do
    pkg=$(dpkg -S "$p" 2>/dev/null | awk -F: 'NR == 1 {print $1}') && [ -n "$pkg" ] && break
  done
  [ -n "$pkg" ] || { echo "deb: no Debian package owns $path ($lib)" >&2; exit 1; }
  ver=$(dpkg-query -W -f='${Version}' "$pkg" | sed 's/-[^-]*$//')
  deps+=("$pkg (>= $ver)")
done < <(objdump -p "$xp" | awk '$1 == "NEEDED" {print $2}')
depends=$(printf '%s\n' "${deps[@]}" | sort -u | paste -sd, | sed 's/,/, /g')
size=$(du -sk --exclude=DEBIAN "$stage/root" | cut -f1)

cat >"$stage/root/DEBIAN/control" <<CONTROL
Package: xpuify
Version: $version
Architecture: $arch
Maintainer: xpuify developers <xpuify@localhost>
Installed-Size: $size
Depends: $depends
Recommends: libclang1-14
Suggests: pre-commit
Section: devel
Priority: optional
Homepage: https://github.com/xpuify/xpuify
Description: find CUDA-only code and make it device-agnostic
 xpuify checks Python and C/C++/CUDA projects for code that only runs on NVIDIA
 GPUs and rewrites it into device-agnostic code: CUDA keeps working identically,
 Intel XPU, Apple MPS and the CPU work too. It runs as a CI gate (check), a
 codemod (fix), an editor language server (lsp) and a run-time check (verify).
 .
 C, C++ and CUDA files are parsed with libclang, loaded at run time
 (libclang1-14, recommended); without it they are skipped with a message.
CONTROL
(cd "$stage/root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | sort -z | xargs -0 md5sum) \
  >"$stage/root/DEBIAN/md5sums"
deb=$out/xpuify_${version}_$arch.deb
rm -f "$out"/xpuify_*.deb
dpkg-deb --root-owner-group -Zxz --build "$stage/root" "$deb" >/dev/null
rm -rf "$stage"
echo "built $deb (Depends: $depends; Recommends: libclang1-14)"
