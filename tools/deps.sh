#!/usr/bin/env bash
# deps.sh: the one list of what xpuify needs from Debian, in three sets, and their installation when missing.
#   build  what `make` needs: the compiler, the libraries' headers, node/npm for the tree-sitter grammar
#   demo   what `make demo` runs on top of it: PyTorch on the CPU
#   test   what `make test` runs on top of those: editors, a browser, pre-commit, clang, the Level Zero headers...
# Usage: tools/deps.sh SET...   (`build` when none is named). `tools/deps.sh --list SET` prints a set's packages.
# A set already present prints nothing; otherwise one line per set, the full apt log going to build/deps-apt.log.
# apt-get runs as root or through sudo; when neither is possible the missing packages are named and it exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."

build_pkgs=(gcc make pkg-config libtree-sitter-dev libpcre2-dev libcjson-dev libyaml-dev libgit2-dev libcmocka-dev
            libclang-14-dev nodejs npm)
# python3-torch only recommends python3-setuptools, which `import torch.utils.cpp_extension` needs
demo_pkgs=(python3 python3-torch)
# g++: the C++ compile tests and `cpp -P` (cc1plus); llvm: llvm-symbolizer, without which the fuzz replay's leak
# stacks are unsymbolized and tests/lsan.supp cannot match them; man-db: `man -l` on the generated man page;
# emacs-nox + elpa-eglot: the Emacs LSP client test; strace: the file-list test counts system calls per named file;
# zsh, fish: the completion tests complete in the real shells; gdb: the DDP fixtures' teardown test
# ocl-icd-opencl-dev + opencl-c-headers + pocl-opencl-icd: translated kernels built on the OpenCL backend and run on
# the CPU (tests/runtime/test_kernels_opencl.py); clinfo: what the OpenCL platforms offer; llvm-spirv-14 +
# spirv-tools: the same OpenCL C compiled to SPIR-V and validated
test_pkgs=(python3-setuptools python3-yaml g++ clang libclang-rt-14-dev llvm libze-dev git pre-commit neovim
           emacs-nox elpa-eglot chromium man-db strace zsh fish gdb ocl-icd-opencl-dev opencl-c-headers
           pocl-opencl-icd clinfo llvm-spirv-14 spirv-tools)

log=build/deps-apt.log

set_pkgs() { # set name -> its packages, one per line
  case $1 in
    build) printf '%s\n' "${build_pkgs[@]}" ;;
    demo) printf '%s\n' "${demo_pkgs[@]}" ;;
    test) printf '%s\n' "${demo_pkgs[@]}" "${test_pkgs[@]}" ;;
    *) echo "deps: unknown set \`$1\` (build, demo or test)" >&2; return 2 ;;
  esac
}

present() { # package -> 0 when installed (or, for a tool that may come from elsewhere, when it runs)
  case $1 in
    nodejs) command -v node >/dev/null 2>&1 && return 0 ;;
    npm|gcc|make|git|python3) command -v "$1" >/dev/null 2>&1 && return 0 ;;
  esac
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"
}

install_set() { # set name
  local name=$1 p missing=() pkgs
  pkgs=$(set_pkgs "$name") || exit 2
  for p in $pkgs; do present "$p" || missing+=("$p"); done
  ((${#missing[@]})) || return 0
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo=(sudo -n)
    elif command -v sudo >/dev/null 2>&1 && [ -t 0 ]; then sudo=(sudo)
    else
      echo "deps: the $name set needs ${missing[*]}, and installing them needs root or sudo." >&2
      echo "      Run as root: apt-get install --no-install-recommends ${missing[*]}" >&2
      exit 1
    fi
  fi
  mkdir -p build
  local n=${#missing[@]} noun=packages
  ((n == 1)) && noun=package
  printf 'deps: %s set: installing %d %s (%s; log in %s)\n' "$name" "$n" "$noun" "${missing[*]}" "$log" >&2
  { echo "== $(date -u '+%F %T') $name: ${missing[*]}"; } >>"$log"
  # the package lists are refreshed once per run, and only when a package is missing
  if [ -z "${DEPS_UPDATED:-}" ]; then
    "${sudo[@]}" apt-get update >>"$log" 2>&1 || echo "deps: apt-get update failed (see $log); trying the current lists" >&2
    DEPS_UPDATED=1
  fi
  if ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends \
       -o Dpkg::Use-Pty=0 "${missing[@]}" >>"$log" 2>&1; then
    echo "deps: installing the $name set failed; the last lines of $log:" >&2
    tail -n 15 "$log" | sed 's/^/      /' >&2
    exit 1
  fi
}

if [ "${1:-}" = --list ]; then set_pkgs "${2:-build}"; exit; fi
sets=("$@"); ((${#sets[@]})) || sets=(build)
for s in "${sets[@]}"; do set_pkgs "$s" >/dev/null || exit 2; done
for s in "${sets[@]}"; do install_set "$s"; done
# the tree-sitter grammar is compiled from node_modules (npm ci from the committed package-lock.json)
if [ ! -f node_modules/tree-sitter-python/src/parser.c ]; then
  echo "deps: fetching the tree-sitter-python grammar (npm ci)" >&2
  # node trusts only its own certificate list; a machine's added authorities (a proxy that re-signs TLS, installed
  # with update-ca-certificates) are in the system bundle: trust it too, unless the user chose a file already
  ca=${NODE_EXTRA_CA_CERTS:-}
  [ -z "$ca" ] && [ -r /etc/ssl/certs/ca-certificates.crt ] && ca=/etc/ssl/certs/ca-certificates.crt
  if ! env ${ca:+NODE_EXTRA_CA_CERTS="$ca"} npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2; then
    echo "deps: npm ci failed (above): the grammar comes from registry.npmjs.org. Behind a proxy that re-signs TLS," >&2
    echo "      give npm its certificate: npm config set cafile FILE (or NODE_EXTRA_CA_CERTS=FILE), then make again." >&2
    exit 1
  fi
fi
