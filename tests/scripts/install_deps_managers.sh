#!/usr/bin/env bash
# scripts/install-deps.sh on each package manager it knows, with stand-ins for apt, dnf,
# pacman and brew that record what they were asked to install (nothing is installed): each
# system gets its own package names, an installed package is not asked for again, the CI's
# extras are refused politely off apt, and a system with none of them gets the list to install.
#
#   install_deps_managers.sh <repo>
set -euo pipefail
script=$1/scripts/install-deps.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A folder of commands for one system: the tools the script uses, and that system's manager.
system() {
  local dir=$work/$1
  mkdir -p "$dir"
  for tool in bash grep id uname cat; do ln -sf "$(command -v $tool)" "$dir/$tool"; done
  echo "$dir"
}
# stand_in DIR NAME EXIT: a command that logs its arguments and exits with EXIT.
stand_in() {
  printf '#!/bin/bash\necho "%s $*" >> %s/log\nexit %s\n' "$2" "$1" "$3" > "$1/$2"
  chmod +x "$1/$2"
}
run() { PATH=$1 bash "$script" "${@:2}" > "$1/out" 2>&1; }

# apt: dpkg-query says that cmake is installed and nothing else is.
dir=$(system apt)
stand_in "$dir" apt-get 0
printf '#!/bin/bash\n[ "${@: -1}" = cmake ] && echo "install ok installed"\nexit 0\n' > "$dir/dpkg-query"
chmod +x "$dir/dpkg-query"
printf '#!/bin/bash\necho chromium\n' > "$dir/chromium"; chmod +x "$dir/chromium"
run "$dir" --docs --portability --format --torch --ccache || fail "apt: exit $?"
grep -q "apt-get install .* libxtensor-dev .*libstb-dev" "$dir/log" || fail "apt: $(cat "$dir/log")"
grep -q "clang-16 libc++-16-dev" "$dir/log" || fail "apt: --portability not installed"
grep -q " clang-format" "$dir/log" || fail "apt: --format not installed"
grep -q " python3-torch" "$dir/log" || fail "apt: --torch not installed"
grep -q " ccache" "$dir/log" || fail "apt: --ccache not installed"
if grep -q "install.* cmake " "$dir/log"; then fail "apt: asked for cmake, which is installed"; fi

# dnf (Fedora), rpm says nothing is installed.
dir=$(system dnf)
stand_in "$dir" dnf 0
stand_in "$dir" rpm 1
run "$dir" --fuzz || fail "dnf: exit $?"
grep -q "dnf install -y cmake gcc-c++ make xtensor-devel xsimd-devel xtl-devel" "$dir/log" ||
  fail "dnf: $(cat "$dir/log")"
grep -q "\-\-fuzz is for Debian and Ubuntu (apt) only" "$dir/out" || fail "dnf: --fuzz not refused"

# pacman (Arch).
dir=$(system pacman)
stand_in "$dir" pacman 1
run "$dir" || true
grep -q "pacman -S --needed --noconfirm cmake gcc make xtensor xsimd xtl gtest" "$dir/log" ||
  fail "pacman: $(cat "$dir/log")"

# brew (macOS): everything installed already.
dir=$(system brew)
stand_in "$dir" brew 0
run "$dir" || fail "brew: exit $?"
grep -q "everything is already installed" "$dir/out" || fail "brew: $(cat "$dir/out")"
if grep -q "brew install" "$dir/log"; then fail "brew: installed although everything was there"; fi

# None of them: a list to install, and a non-zero exit.
dir=$(system none)
if run "$dir"; then fail "none: exit 0"; fi
grep -q "no apt, dnf, pacman or brew here" "$dir/out" || fail "none: $(cat "$dir/out")"

# A mistake in the options.
if run "$(system apt)" --doc; then fail "--doc accepted"; fi
grep -q "unknown option '--doc'" "$work/apt/out" || fail "--doc: $(cat "$work/apt/out")"

[ $failures -eq 0 ] && echo "install-deps: apt, dnf, pacman, brew and none behave"
exit $failures
