#!/usr/bin/env bash
# Checks that every tracked C++ file is formatted as .clang-format says, so that the style is
# kept by a check (CI's first stage after the install) rather than by hand.
#
# Usage: scripts/check-format.sh         lists the files clang-format would change; exit 1 if any
#        scripts/check-format.sh --fix   rewrites those files in place
#
# The reference is clang-format 14 (Debian 12's): other versions break some lines differently.
# Set CLANG_FORMAT to use another binary.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fix=false
case "${1:-}" in
  "") ;;
  --fix) fix=true ;;
  *) echo "check-format.sh: unknown argument '$1' (expected nothing or --fix)" >&2; exit 2 ;;
esac

clang_format=${CLANG_FORMAT:-}
if [ -z "$clang_format" ]; then
  for candidate in clang-format-14 clang-format; do
    if command -v "$candidate" >/dev/null; then clang_format=$candidate; break; fi
  done
fi
if [ -z "$clang_format" ] || ! command -v "$clang_format" >/dev/null; then
  echo "check-format.sh: no clang-format found: install it (scripts/install-deps.sh --format," \
       "or your system's package clang-format), or set CLANG_FORMAT to its path" >&2
  exit 2
fi
version=$("$clang_format" --version)
if [[ ! "$version" =~ version\ 14\. ]]; then
  echo "check-format.sh: note: $version is not clang-format 14, the reference;" \
       "a few lines may differ from CI's verdict" >&2
fi

# The tracked files; a copy without .git (a handout) has every file but build output.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.h' '*.cc')
else
  mapfile -t files < <(find . -type d \( -name 'build*' -o -name .git \) -prune -o -type f \
                         \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' -o -name '*.cc' \) \
                         -print | sed 's|^\./||' | sort)
fi

differ=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue  # tracked but deleted in the work tree
  # --style=file: each file's nearest .clang-format (programs/tools/testdata has its own).
  if ! "$clang_format" --style=file "$f" | cmp -s - "$f"; then differ+=("$f"); fi
done

if [ ${#differ[@]} -eq 0 ]; then
  echo "check-format: all ${#files[@]} C++ files are formatted"
  exit 0
fi
if $fix; then
  "$clang_format" --style=file -i "${differ[@]}"
  echo "check-format: reformatted ${#differ[@]} of ${#files[@]} C++ files:"
  printf '  %s\n' "${differ[@]}"
  exit 0
fi
echo "check-format: ${#differ[@]} of ${#files[@]} C++ files differ from .clang-format:" >&2
printf '  %s\n' "${differ[@]}" >&2
echo "Fix them with: scripts/check-format.sh --fix" >&2
echo "(then a chapter that quotes a changed region needs" \
     "build/default/programs/tools/snippets update . chapters/*/README.md)" >&2
exit 1
