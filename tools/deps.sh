#!/usr/bin/env bash
# deps.sh: installs what the build and the tests need and is missing: Debian packages (apt-get, with sudo when
# not root) and the tree-sitter grammar (npm ci from the committed package-lock.json). Idempotent and quiet
# when everything is present. Usage: tools/deps.sh [build|test]
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-build}
build_pkgs=(gcc make pkg-config libtree-sitter-dev libpcre2-dev libcjson-dev libyaml-dev libgit2-dev libcmocka-dev
            libclang-14-dev nodejs npm)
test_pkgs=(python3 python3-torch python3-yaml neovim libze-dev chromium git pre-commit clang libclang-rt-14-dev)
pkgs=("${build_pkgs[@]}")
[ "$what" = test ] && pkgs+=("${test_pkgs[@]}")
missing=()
for p in "${pkgs[@]}"; do
  # a tool may come from elsewhere than Debian (node from nodesource, say): accept it when it runs
  case $p in
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
    gcc|make|git|python3) command -v "$p" >/dev/null 2>&1 && continue ;;
  esac
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}" >&2
  SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq >&2 || true
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
if [ ! -f node_modules/tree-sitter-python/src/parser.c ]; then
  echo "deps: fetching the tree-sitter-python grammar (npm ci)" >&2
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2
fi
