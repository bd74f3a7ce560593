#!/usr/bin/env bash
# Installs the Debian packages this book needs, and only those that are missing.
# Usage: scripts/install-deps.sh            (build + tests)
#        scripts/install-deps.sh --bench    (also OpenBLAS, for the benchmark's reference)
#        scripts/install-deps.sh --docs     (also Doxygen and Graphviz, for the book)
#        scripts/install-deps.sh --qemu     (also qemu-user: the kernel tests on a CPU without AVX)
set -euo pipefail

packages=(cmake g++ make libxtensor-dev libxsimd-dev xtl-dev libgtest-dev googletest
          libbenchmark-dev libcli11-dev nlohmann-json3-dev libstb-dev gnuplot-nox graphviz
          libopenblas-dev)
for arg in "$@"; do
  case "$arg" in
    --bench) ;;  # OpenBLAS is already in the default list: the bench target is built by default
    --docs) packages+=(doxygen) ;;
    --qemu) packages+=(qemu-user) ;;
    *) echo "install-deps.sh: unknown option '$arg' (expected --bench, --docs or --qemu)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is already installed"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
