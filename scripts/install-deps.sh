#!/usr/bin/env bash
# Installs the Debian packages this book needs, and only those that are missing.
# Usage: scripts/install-deps.sh            (build, tests and benchmarks: the default build
#                                            makes all three, so OpenBLAS is always in)
#        scripts/install-deps.sh --docs     (also what the book needs: Doxygen, Debian's MathJax,
#                                            and for its browser check python3-selenium, the
#                                            Chromium driver, and Chromium itself if no
#                                            chromium is installed yet; Graphviz is always in)
#        scripts/install-deps.sh --fuzz     (also clang 14 and libFuzzer: the `fuzz` preset)
#        scripts/install-deps.sh --qemu     (also qemu-user: the kernel tests on a CPU without AVX)
#        scripts/install-deps.sh --corpus   (also fortunes: the English text of chapter 8)
#        Options combine; CI uses all of them.
set -euo pipefail

packages=(cmake g++ make libxtensor-dev libxsimd-dev xtl-dev libgtest-dev googletest
          libbenchmark-dev libcli11-dev nlohmann-json3-dev libstb-dev gnuplot-nox graphviz
          libopenblas-dev)
for arg in "$@"; do
  case "$arg" in
    --docs)
      packages+=(doxygen libjs-mathjax python3-selenium chromium-driver)
      command -v chromium >/dev/null || packages+=(chromium) ;;
    --fuzz) packages+=(clang-14 libfuzzer-14-dev libomp-14-dev) ;;
    --qemu) packages+=(qemu-user) ;;
    --corpus) packages+=(fortunes) ;;
    *) echo "install-deps.sh: unknown option '$arg' (expected --docs, --fuzz, --qemu or --corpus)" >&2; exit 2 ;;
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
