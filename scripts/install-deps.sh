#!/usr/bin/env bash
# Installs what this book needs with the system's package manager, and only what is missing:
# apt (Debian, Ubuntu, WSL), dnf (Fedora), pacman (Arch) or brew (macOS). On any other system
# it prints what to install. Where a system has no package for xsimd, xtensor, xtl or
# stb_image, CMake fetches a pinned release instead (cmake/Dependencies.cmake), so nothing
# here is strictly required beyond a C++20 compiler and CMake 3.25.
#
# Usage: scripts/install-deps.sh            (build, tests and benchmarks)
#        scripts/install-deps.sh --docs     (also the book: Doxygen, Graphviz, MathJax, and for
#                                            its browser check Chromium, its driver, selenium)
#        scripts/install-deps.sh --fuzz     (also clang 14 and libFuzzer: the `fuzz` preset)
#        scripts/install-deps.sh --qemu     (also qemu-user: the kernel tests on a CPU without AVX)
#        scripts/install-deps.sh --corpus   (also fortunes: the English text of chapter 8)
#        scripts/install-deps.sh --portability
#                                           (also clang 16 with libc++, the arm64 cross compiler
#                                            and qemu-user: the macos-like and arm64-cross presets)
#        scripts/install-deps.sh --wasm     (also emscripten: the live pages' WebAssembly module)
#        scripts/install-deps.sh --format   (also clang-format: scripts/check-format.sh)
#        scripts/install-deps.sh --torch    (also PyTorch, python3-torch: appendix D's check)
#        scripts/install-deps.sh --ccache   (also ccache: CI's builds of the same files reuse
#                                            their objects; .ci/run says how)
#        Options combine; CI uses all of them. --fuzz, --qemu, --corpus, --portability, --wasm,
#        --format, --torch and --ccache are the CI's own and exist for apt only.
set -euo pipefail

docs=false fuzz=false qemu=false corpus=false portability=false wasm=false format=false
torch=false ccache=false
for arg in "$@"; do
  case "$arg" in
    --docs) docs=true ;;
    --fuzz) fuzz=true ;;
    --qemu) qemu=true ;;
    --corpus) corpus=true ;;
    --portability) portability=true ;;
    --wasm) wasm=true ;;
    --format) format=true ;;
    --torch) torch=true ;;
    --ccache) ccache=true ;;
    *) echo "install-deps.sh: unknown option '$arg' (expected --docs, --fuzz, --qemu, --corpus, --portability, --wasm, --format, --torch or --ccache)" >&2
       exit 2 ;;
  esac
done

sudo=""
if [ "$(id -u)" -ne 0 ] && [ "$(uname)" != Darwin ]; then sudo="sudo"; fi

only_apt() {  # the CI's extras on a system without apt: say so, and go on
  for option in fuzz qemu corpus portability wasm format torch ccache; do
    if ${!option}; then
      echo "install-deps: --$option is for Debian and Ubuntu (apt) only; skipped" >&2
    fi
  done
}

if command -v apt-get >/dev/null && command -v dpkg-query >/dev/null; then
  # Debian 12 and 13, Ubuntu 24.04 and 26.04, and WSL with either.
  packages=(cmake g++ make libxtensor-dev libxsimd-dev xtl-dev libgtest-dev googletest
            libbenchmark-dev libcli11-dev nlohmann-json3-dev libstb-dev gnuplot-nox graphviz
            libopenblas-dev)
  if $docs; then
    packages+=(doxygen libjs-mathjax python3-selenium chromium-driver)
    command -v chromium >/dev/null || packages+=(chromium)
  fi
  if $fuzz; then packages+=(clang-14 libfuzzer-14-dev libomp-14-dev); fi
  if $qemu || $portability; then packages+=(qemu-user); fi
  if $corpus; then packages+=(fortunes); fi
  if $portability; then
    packages+=(clang-16 libc++-16-dev libc++abi-16-dev g++-aarch64-linux-gnu)
  fi
  if $wasm; then packages+=(emscripten); fi
  # Debian 12's is clang-format 14, the version scripts/check-format.sh takes as the reference.
  if $format; then packages+=(clang-format); fi
  if $torch; then packages+=(python3-torch); fi  # programs/pytorch: the model in PyTorch
  if $ccache; then packages+=(ccache); fi  # CI: objects compiled once, reused (.ci/run)
  installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
  install() {
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@"
  }
elif command -v dnf >/dev/null; then
  # Fedora. OpenMP comes with gcc (libgomp).
  packages=(cmake gcc-c++ make xtensor-devel xsimd-devel xtl-devel gtest-devel
            google-benchmark-devel cli11-devel json-devel stb_image-devel gnuplot graphviz
            openblas-devel)
  if $docs; then packages+=(doxygen mathjax chromium chromedriver python3-selenium); fi
  only_apt
  installed() { rpm -q "$1" >/dev/null 2>&1; }
  install() { $sudo dnf install -y "$@"; }
elif command -v pacman >/dev/null; then
  # Arch Linux.
  packages=(cmake gcc make xtensor xsimd xtl gtest benchmark cli11 nlohmann-json stb gnuplot
            graphviz openblas)
  if $docs; then packages+=(doxygen mathjax chromium python-selenium); fi
  only_apt
  installed() { pacman -Q "$1" >/dev/null 2>&1; }
  install() { $sudo pacman -S --needed --noconfirm "$@"; }
elif command -v brew >/dev/null; then
  # macOS (Apple Silicon or Intel) with Homebrew and Apple's clang (xcode-select --install).
  # stb_image has no formula: CMake fetches it. libomp is optional: without it everything
  # runs on one thread with the same results (README.md says how to use it).
  packages=(cmake xtensor xsimd xtl googletest google-benchmark cli11 nlohmann-json gnuplot
            graphviz openblas libomp)
  if $docs; then packages+=(doxygen chromedriver); fi
  only_apt
  installed() { brew list --formula "$1" >/dev/null 2>&1; }
  install() { brew install "$@"; }
else
  cat >&2 <<'EOF'
install-deps: no apt, dnf, pacman or brew here. Install with your system's tools:
  a C++20 compiler (g++ >= 12 or clang >= 16) and CMake >= 3.25;
  CLI11 and nlohmann_json (headers), GoogleTest (for the tests);
  optional: xsimd, xtensor and xtl (fetched by CMake when missing), OpenMP (one thread
  without it), gnuplot (figures), Graphviz and Doxygen (the book), Google Benchmark and a
  BLAS (programs/bench/).
Then: cmake --preset default && cmake --build --preset default && ctest --preset default
EOF
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is already installed"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
install "${missing[@]}"
