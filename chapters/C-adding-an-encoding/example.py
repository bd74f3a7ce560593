#!/usr/bin/env python3
"""Appendix C's worked example, taken from the appendix's own text, so that it cannot rot.

Section 5 of README.md prints each file of chapters/99-yours under a heading that names it
("### 5.2 The source: `chapters/99-yours/yours.cpp`") and gives the commands to build, test
and train it (section 5.6). A new chapter needs no edit anywhere else (the build finds its
folder: cmake/Chapters.cmake), so the files are the whole example. This script reads them
from there:

  example.py extract --tree DIR
      writes the files, exactly as printed, to DIR/chapters/99-yours/...
  example.py walk --scratch DIR [--steps N] [--no-table] [--configure-args ARGS]
      the whole walk-through in a fresh copy of this repository's tracked files: extract,
      then run the commands of section 5.6 in DIR, in order (--steps N: every training
      command trains N steps; --no-table: without `pe table`; ARGS are added to the configure
      command). Builds a whole tree: minutes even with ccache.

ctest runs the cheap half on every build (AppendixC.*, label appendixC): the files are
extracted at build time and compiled against the book's libraries, and their tests run
(chapters/C-adding-an-encoding/CMakeLists.txt). The walk is for when the build or the
command line change: see the appendix's section 5.6.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
README = os.path.join(HERE, "README.md")
# Chapter 99: a number no chapter of the book will take (the appendix says why).
CHAPTER = "chapters/99-yours/"


def fenced_blocks(lines, start):
    """Yields (line index, info string, body) of every fenced block from line `start` on."""
    i = start
    while i < len(lines):
        m = re.match(r"^(```+)(\S*)\s*$", lines[i])
        if m:
            j = i + 1
            while j < len(lines) and lines[j].rstrip() != m.group(1):
                j += 1
            yield i, m.group(2), "".join(lines[i + 1:j])
            i = j
        i += 1


def example_files(text):
    """{path: content} of the files that section 5's headings name, each the first code block
    after its heading."""
    lines = text.splitlines(keepends=True)
    files = {}
    for k, line in enumerate(lines):
        m = re.match(r"^#{3,}\s.*`(%s[^`]+)`\s*$" % re.escape(CHAPTER), line)
        if m:
            _, _, body = next(fenced_blocks(lines, k + 1))
            files[m.group(1)] = body
    if not files:
        raise SystemExit("example: no heading in %s names a file of %s" % (README, CHAPTER))
    return files


def section(text, number):
    """The text of section `number` ("5.6") up to the next heading of its level or above
    (a line in a code block that starts with # is no heading)."""
    lines = text.splitlines(keepends=True)
    start = next((k for k, l in enumerate(lines) if re.match(r"^#+ %s[ .]" % re.escape(number), l)), None)
    if start is None:
        raise SystemExit("example: the appendix has no section %s" % number)
    level = len(lines[start]) - len(lines[start].lstrip("#"))
    fence, k = None, start + 1
    while k < len(lines):
        m = re.match(r"^(```+)", lines[k])
        if m and (fence is None or lines[k].rstrip() == fence):
            fence = None if fence else m.group(1)
        elif fence is None and re.match(r"^#{1,%d} " % level, lines[k]):
            break
        k += 1
    return "".join(lines[start + 1:k])


def commands(text):
    """The command lines of section 5.6's first sh block."""
    part = section(text, "5.6").splitlines(keepends=True)
    for _, info, body in fenced_blocks(part, 0):
        if info == "sh":
            return [l.strip() for l in body.splitlines() if l.strip() and not l.startswith("#")]
    raise SystemExit("example: section 5.6 has no sh block")


def extract(text, tree):
    for path, body in example_files(text).items():
        full = os.path.join(tree, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(body)
        print("example: wrote " + path)


def copy_repository(scratch):
    """The files git tracks or would track (not ignored), as they are in the work tree."""
    root = subprocess.run(["git", "-C", HERE, "rev-parse", "--show-toplevel"], check=True,
                          capture_output=True, text=True).stdout.strip()
    listed = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"],
                            check=True, capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        source = os.path.join(root, rel)
        if not os.path.isfile(source):
            continue  # deleted in the work tree
        target = os.path.join(scratch, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(source, target)


def trains(argv):
    """Whether a command trains: `pe train`, `pe table` or a chapter's experiment."""
    program = os.path.basename(argv[0])
    return (program == "pe" and argv[1:2] in (["train"], ["table"])) or program.endswith("_experiment")


def walk(text, args):
    scratch = os.path.abspath(args.scratch)
    if os.path.exists(scratch) and os.listdir(scratch):
        if not os.path.isfile(os.path.join(scratch, "CMakeLists.txt")):
            raise SystemExit("example: %s is not empty and not an earlier scratch copy" % scratch)
        # An earlier walk: keep its build folder (a rebuild is then small), refresh the sources.
        for entry in os.listdir(scratch):
            if entry != "build":
                path = os.path.join(scratch, entry)
                shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)
    copy_repository(scratch)
    extract(text, scratch)
    for line in commands(text):
        argv = shlex.split(line)
        if args.no_table and argv[1:2] == ["table"]:
            print("example: skipped (--no-table): " + line)
            continue
        if args.steps is not None and trains(argv):
            if "--steps" in argv:
                argv[argv.index("--steps") + 1] = str(args.steps)
            else:
                argv += ["--steps", str(args.steps)]
        if argv[:2] == ["cmake", "--preset"] and args.configure_args:
            argv += shlex.split(args.configure_args)
        print("example: $ " + shlex.join(argv), flush=True)
        status = subprocess.run(argv, cwd=scratch).returncode
        if status != 0:
            print("example: failed (exit status %d): %s" % (status, line), file=sys.stderr)
            return 1
    print("example: the walk-through of section 5.6 ran to the end in " + scratch)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--readme", default=README, help="the appendix (default: beside this script)")
    sub = parser.add_subparsers(dest="command", required=True)
    e = sub.add_parser("extract", help="write the example's files into a tree")
    e.add_argument("--tree", required=True)
    w = sub.add_parser("walk", help="the whole walk-through in a scratch copy")
    w.add_argument("--scratch", required=True)
    w.add_argument("--steps", type=int, help="train this many steps instead of the printed number")
    w.add_argument("--no-table", action="store_true", help="skip `pe table`")
    w.add_argument("--configure-args", default="",
                   help="added to the configure command, e.g. -DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    args = parser.parse_args()
    with open(args.readme, encoding="utf-8") as f:
        text = f.read()
    if args.command == "extract":
        extract(text, args.tree)
        return 0
    return walk(text, args)


if __name__ == "__main__":
    sys.exit(main())
