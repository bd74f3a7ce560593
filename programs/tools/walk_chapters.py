#!/usr/bin/env python3
"""walk_chapters: reads the book in order and runs every command of its shell blocks as a
reader runs them, from the top of the repository: the chapters in the order of their numbers,
the appendices, then README.md. A command runs as written unless a walk marker above its block gives a fast variant
or skips it (the grammar: base/markers/walk.py, listed in base/markers/__init__.py).

    walk_chapters.py check [ROOT]    the markers only: each one well formed and in its place,
                                     every long training covered (ctest: ChapterWalkIsMarked)
    walk_chapters.py plan [ROOT]     every command and what the walk does with it
    walk_chapters.py run [--reuse-build] [--from PATH] [--verbose] [--limit SECONDS] [ROOT]
                                     the walk (CI's walk stage), from the file PATH on if given

The walk fails on a command that exits with another status than 0, on a ctest whose selection
holds no test, on a command other than a build or a test run that takes more than --limit
seconds (default 300), and, at its end, on a tracked file that a command changed. It prints
each command before it runs it, with its time, and on a failure the file, the line and the
command with the last lines of its output (all of it in build/walk/logs/). A reader's build
starts from nothing, and so does the walk: it refuses a tree whose build/default is configured
already, unless --reuse-build (for trying a marker locally; CI walks its fresh clone).

Exit status: 0 when every command worked, 1 when one did not (or a marker is wrong), 2 on a
usage error or a tree that is not fresh.
"""
import argparse
import hashlib
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

from checker import markers

from markers import walk  # noqa: E402  (checker put base/ on the path)

TAIL_LINES = 25
UNLIMITED = {"cmake", "ctest", "emcmake", "install-deps.sh"}  # builds and test runs


def documents(root):
    """The markdown files in reading order: the chapters, the appendices, README.md."""
    chapters = sorted(p for p in (root / "chapters").glob("*/README.md"))
    return chapters + [root / "README.md"]


def read_plan(root):
    """[(path, blocks)] and the problems [(path, line, reason)] of every document."""
    plan, problems = [], []
    for path in documents(root):
        lines = markers.read_lines(str(path))
        if lines is None:
            problems.append((path, 0, "cannot read the file"))
            continue
        blocks, found = walk.walk_blocks(lines)
        plan.append((path, blocks))
        problems += [(path, line, reason) for line, reason in found]
    return plan, problems


def shown(root, path):
    return str(path.relative_to(root))


def one_line(text):
    """A command of several lines on one line, as bash reads it: a line end is a `;` unless
    the line ends in a backslash or in a word after which the command goes on."""
    out = ""
    for line in text.split("\n"):
        line = line.strip()
        if out:
            goes_on = out.endswith(("\\", "|", "&&", "||", "do", "then", "else"))
            out = (out.rstrip("\\").rstrip() + " ") if goes_on else out + "; "
        out += line
    return out


def check(root):
    plan, problems = read_plan(root)
    for path, line, reason in problems:
        print(f"{shown(root, path)}:{line}: {reason}", file=sys.stderr)
    steps = [step for _, blocks in plan for block in blocks for step in block.steps]
    counts = {a: sum(step.action == a for step in steps) for a in ("run", "fast", "skip")}
    print(f"walk check: {len(steps)} commands in {len(plan)} files: {counts['run']} run as "
          f"written, {counts['fast']} fast variants, {counts['skip']} skipped; "
          f"{len(problems)} problems")
    return (plan, steps, counts) if not problems else None


def print_plan(root, plan):
    for path, blocks in plan:
        for block in blocks:
            for step in block.steps:
                where = f"{shown(root, path)}:{step.command.line}"
                if step.action == "run":
                    print(f"{where}: run: {one_line(step.text)}")
                elif step.action == "fast":
                    print(f"{where}: fast: {one_line(step.text)}  ({step.reason}; instead of: "
                          f"{one_line(step.command.text)})")
                else:
                    print(f"{where}: skip: {one_line(step.command.text)}  ({step.reason})")


def tracked_state(root):
    """What git says of the tracked files: the changed ones and a digest of their changes."""
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                            capture_output=True, text=True)
    if status.returncode != 0:
        return None
    diff = subprocess.run(["git", "diff", "HEAD", "--binary"], cwd=root, capture_output=True)
    return status.stdout, hashlib.sha256(diff.stdout).hexdigest()


def limited(text):
    """Whether the time limit applies: no part of the command builds or runs tests."""
    return not any(name.split()[0].rsplit("/", 1)[-1] in UNLIMITED for name in walk.programs(text))


def run_step(root, step, log_path, limit, verbose):
    """Runs one command as bash runs it (-e, and -o pipefail so that a pipe's failing program
    is not hidden by the one after it); returns (status, seconds, output, timed_out)."""
    start = time.monotonic()
    with open(log_path, "wb") as log:
        process = subprocess.Popen(["bash", "-e", "-o", "pipefail", "-c", step.text], cwd=root,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        timed_out = False
        deadline = start + limit if limit and limited(step.text) else None
        os.set_blocking(process.stdout.fileno(), False)
        while True:
            chunk = process.stdout.read()
            if chunk:
                log.write(chunk)
                if verbose:
                    sys.stdout.buffer.write(chunk)
                    sys.stdout.flush()
            if process.poll() is not None and not chunk:
                break
            if deadline and time.monotonic() > deadline and not timed_out:
                timed_out = True
                os.killpg(process.pid, signal.SIGKILL)
            if not chunk:
                time.sleep(0.05)
        status = process.wait()
    output = log_path.read_text(errors="replace")
    return status, time.monotonic() - start, output, timed_out


def failure(root, path, step, why, output, log_path):
    chapter = path.parent.name if path.parent != root else "README.md"
    print(f"\nwalk: FAILED in {chapter}, {shown(root, path)} line {step.command.line}: {why}",
          file=sys.stderr)
    print(f"walk: the command: {step.text}", file=sys.stderr)
    if step.action == "fast":
        print(f"walk: (the fast variant of: {step.command.text})", file=sys.stderr)
    tail = output.rstrip("\n").split("\n")[-TAIL_LINES:]
    print(f"walk: the last {len(tail)} lines of its output ({shown(root, log_path)}):",
          file=sys.stderr)
    for line in tail:
        print("  | " + line, file=sys.stderr)
    return 1


def run(root, args):
    if (root / "build" / "default" / "CMakeCache.txt").exists() and not args.reuse_build:
        print("walk: build/default is configured already; a reader starts from nothing, so the "
              "walk does too: walk a fresh clone (git clone . /tmp/walk && /tmp/walk/programs/"
              "tools/walk_chapters.py run), or add --reuse-build to walk this tree anyway",
              file=sys.stderr)
        return 2
    found = check(root)
    if found is None:
        return 1
    plan = found[0]
    before = tracked_state(root)
    logs = root / "build" / "walk" / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    walk_start = time.monotonic()
    number = 0
    started = not args.start
    done = {"run": 0, "fast": 0, "skip": 0}
    last_skip = None  # the marker of the command skipped just before, if any
    for path, blocks in plan:
        started = started or shown(root, path).startswith(args.start)
        if not started:
            continue
        for block in blocks:
            for step in block.steps:
                number += 1
                done[step.action] += 1
                where = f"{shown(root, path)}:{step.command.line}"
                clock = time.strftime("%H:%M:%S")
                if step.action == "skip":
                    why = "as above" if step.marker == last_skip else step.reason
                    print(f"walk: [{clock}] {where}: skipped ({why}): "
                          f"{one_line(step.command.text)}", flush=True)
                    last_skip = step.marker
                    continue
                last_skip = None
                kind = "fast variant" if step.action == "fast" else "run"
                print(f"walk: [{clock}] {where}: {kind}: {one_line(step.text)}", flush=True)
                log_path = logs / f"{number:03d}.log"
                status, seconds, output, timed_out = run_step(root, step, log_path, args.limit,
                                                              args.verbose)
                if timed_out:
                    return failure(root, path, step, f"still running after {args.limit} s: a "
                                   "command this long needs a fast variant (a walk marker)",
                                   output, log_path)
                if status != 0:
                    return failure(root, path, step, f"exit status {status} after "
                                   f"{seconds:.1f} s", output, log_path)
                if "ctest" in [p.split()[0].rsplit("/", 1)[-1] for p in walk.programs(step.text)] \
                        and walk.selects_no_tests(output):
                    return failure(root, path, step, "the test selection holds no test",
                                   output, log_path)
                print(f"walk:   ok in {seconds:.1f} s", flush=True)
    after = tracked_state(root)
    if before is not None and after != before:
        print("walk: FAILED: the commands changed tracked files (a reader's commands must leave "
              "the committed results alone):", file=sys.stderr)
        print(after[0] if after else "(git status failed)", file=sys.stderr)
        return 1
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"walk: every command worked, in {time.monotonic() - walk_start:.0f} s (their CPU "
          f"time: {used.ru_utime + used.ru_stime:.0f} s): "
          f"{done['run']} run as written, {done['fast']} fast variants, {done['skip']} skipped")
    return 0


def main(argv):
    parser = argparse.ArgumentParser(prog="walk_chapters.py", description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="mode", required=True)
    for mode in ("check", "plan", "run"):
        p = sub.add_parser(mode)
        p.add_argument("root", nargs="?", default=str(Path(__file__).resolve().parents[2]))
        if mode == "run":
            p.add_argument("--reuse-build", action="store_true",
                           help="walk even though build/default is configured already")
            p.add_argument("--verbose", action="store_true", help="show every command's output")
            p.add_argument("--from", dest="start", default="", metavar="PATH",
                           help="start at the first file whose path starts with PATH "
                                "(chapters/05; with --reuse-build, for trying a marker)")
            p.add_argument("--limit", type=int, default=300,
                           help="seconds a command other than a build or a test run may take")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    if args.mode == "check":
        return 0 if check(root) else 1
    if args.mode == "plan":
        found = check(root)
        if found:
            print_plan(root, found[0])
        return 0 if found else 1
    return run(root, args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
