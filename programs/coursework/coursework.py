"""Coursework: the tasks marked in the sources, shared by handout, grade and check_variants.

A task's solution sits between two comment lines in the real source:

    // TASK 5.3 begin: rotate the pairs
    ...the solution...
    // TASK 5.3 end

A task may have several regions (in one file or several); each region is the tail of a
function body, so that a stub throwing an error in its place still compiles. The markers'
grammar, and that of the book's quotes rewritten in a handout, is base/markers's.
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cc")
# The snippet checker's test data shows a task marker; it is not a task.
NOT_TASKS = ("programs/tools/testdata/",)
HERE = Path(__file__).resolve().parent
# The repository these tools belong to (the instructor's copy).
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "base"))
import markers  # noqa: E402  (the task markers and the book's quotes)

# A handout's record of what it stubs, written by programs/coursework/handout into the handout
# (the snippet checker reads it too: in a handout, the stubbed tasks' code is the student's).
RECORD = markers.HANDOUT_RECORD


def chapter_test_targets(repo):
    """chNN_tests for each numbered chapter folder of repo that CMake builds, in order."""
    numbers = sorted(p.name[:2] for p in (Path(repo) / "chapters").glob("[0-9][0-9]-*")
                     if (p / "CMakeLists.txt").is_file())
    return [f"ch{n}_tests" for n in numbers]


# The programs that hold the tests of the tasks, in the order they build on each other: the
# framework's, then one per numbered chapter folder present (chapters/NN-name, as CMake finds
# them: no list to update when a chapter arrives), then `pe`'s. The grader builds those of
# them that a build has (a build of chapters 0..N lacks later ones). pe_cli_tests runs `pe`,
# on which it depends, so building it builds `pe` too.
TEST_TARGETS = (["framework_tests", "kernel_tests"] + chapter_test_targets(REPO)
                + ["pe", "pe_cli_tests"])


class CourseworkError(Exception):
    pass


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error: 'tool: argument --x: what is wrong', exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message}\n")


# A task's region: task, title, file, begin and end (the marker lines' indices), indent, body
# (the solution's lines) and chapter.
Region = markers.TaskRegion


def task_key(task):
    major, minor = task.split(".")
    return int(major), int(minor)


def find_regions(rel_path, lines):
    """The task regions of one file; a malformed marker is an error naming the line."""
    try:
        return markers.find_task_regions(rel_path, lines)
    except markers.MarkerError as e:
        raise CourseworkError(str(e)) from None


def tracked_files(repo):
    """The repository's files as git knows them (no build folders, no scratch files)."""
    try:
        top = subprocess.run(["git", "-C", str(repo), "rev-parse", "--show-toplevel"],
                             check=True, capture_output=True, text=True).stdout.strip()
        if Path(top).resolve() != Path(repo).resolve():
            raise FileNotFoundError("not the top of a git work tree")
        out = subprocess.run(["git", "-C", str(repo), "ls-files", "-z"], check=True,
                             capture_output=True).stdout
        return [f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        # A copy without .git (a handout, a submission): every file but build output.
        root = Path(repo)
        return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                      if p.is_file() and not any(part.startswith("build") or part == ".git"
                                                 for part in p.relative_to(root).parts))


def read_lines(path):
    return Path(path).read_text(encoding="utf-8").split("\n")


def all_regions(repo, files=None):
    """Every task region of the repository, in file order; titles of one task must agree."""
    regions = []
    for rel in files or tracked_files(repo):
        if (rel.endswith(SOURCE_SUFFIXES) and not rel.startswith(NOT_TASKS)
                and (Path(repo) / rel).is_file()):
            regions += find_regions(rel, read_lines(Path(repo) / rel))
    titles = {}
    for r in regions:
        if titles.setdefault(r.task, r.title) != r.title:
            raise CourseworkError(f"{r.file}:{r.begin + 1}: TASK {r.task} is called "
                                  f"'{r.title}' here and '{titles[r.task]}' elsewhere")
    return regions


def tasks_of(regions):
    """task -> title, in task order."""
    out = {}
    for r in sorted(regions, key=lambda r: task_key(r.task)):
        out.setdefault(r.task, r.title)
    return out


def read_text_argument(path, arg):
    """The text of a file given on the command line; an error naming the argument if unreadable."""
    path = Path(path)
    if not path.is_file():
        raise CourseworkError(f"{arg} {path}: no such file")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CourseworkError(f"{arg} {path}: cannot be read ({e.__class__.__name__})") from None


# Which tests grade which task, written where each test is: comment lines right above its
# TEST line, "// grades: task 5.3" and "// chapter: 08" (base/markers/test_labels.py, whose
# grammar cmake/TestLabels.cmake uses too for the ctest labels task5.3 and ch05).
TEST_SUFFIXES = (".cpp", ".cc")
TestMarker = markers.TestMarker


def find_test_markers(rel_path, lines):
    """The test markers of one file; a marker that no test follows is an error naming it."""
    try:
        return markers.find_test_markers(rel_path, lines)
    except markers.MarkerError as e:
        raise CourseworkError(str(e)) from None


def test_markers(repo, files=None):
    """Every test marker of the repository's test sources, in file order."""
    markers = []
    for rel in files or tracked_files(repo):
        if (rel.endswith(TEST_SUFFIXES) and not rel.startswith(NOT_TASKS)
                and (Path(repo) / rel).is_file()):
            markers += find_test_markers(rel, read_lines(Path(repo) / rel))
    return markers


def read_task_tests(repo=REPO, arg="--markers"):
    """task -> [Suite.Name of each test that grades it], from the markers in repo's sources."""
    if not Path(repo).is_dir():
        raise CourseworkError(f"{arg} {repo}: no such folder")
    mapping = {}
    try:
        for m in test_markers(repo):
            for task in m.tasks:
                mapping.setdefault(task, []).append(m.test)
    except (CourseworkError, OSError, UnicodeDecodeError) as e:
        raise CourseworkError(f"{arg} {repo}: {e}") from None
    if not mapping:
        raise CourseworkError(f"{arg} {repo}: no test is marked '// grades: task N.M' in it")
    return mapping


# Suite.Name of a test's ctest name: a typed test's name ends in <its type>
# (Softmax.BackwardFastMatchesScalar<Softmax/float.  # TypeParam = float>), a parameterised
# one's starts with Prefix/ and ends in /its parameter. cmake/TestLabels.cmake does the same.
CTEST_NAME = re.compile(r"(?:[^.]*/)?([^./]+)\.(\w+)")


def test_key(name):
    m = CTEST_NAME.match(name)
    return f"{m.group(1)}.{m.group(2)}" if m else name


def ctest_names(mapping, names):
    """task -> the ctest names (of names, a build's) of its tests: every instance of a typed or
    parameterised test. A test that the build lacks keeps its Suite.Name, so that it is
    reported missing."""
    instances = {}
    for n in sorted(names):
        instances.setdefault(test_key(n), []).append(n)
    return {task: [n for key in tests for n in instances.get(key, [key])]
            for task, tests in mapping.items()}


def read_points(path=HERE / "points.json", arg="--points"):
    """task -> points, from points.json ({"points": {"5.1": 5, ...}}); errors name the file."""
    text = read_text_argument(path, arg)
    try:
        data = json.loads(text)
    except ValueError as e:
        raise CourseworkError(f"{arg} {path}: not valid JSON ({e})") from None
    points = data.get("points", data) if isinstance(data, dict) else None
    if not isinstance(points, dict):
        raise CourseworkError(f"{arg} {path}: expected an object of task -> points")
    out = {}
    for k, v in points.items():
        if k.startswith("_"):
            continue
        if not re.fullmatch(r"\d+\.\d+", k):
            raise CourseworkError(f"{arg} {path}: '{k}' is not a task number such as 5.2")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or v != v:
            raise CourseworkError(f"{arg} {path}: task {k} has {v!r} points, expected a "
                                  "number >= 0")
        out[k] = float(v)
    if not out:
        raise CourseworkError(f"{arg} {path}: gives no task any points")
    return out


def _chapter_items(spec, arg):
    """'0..7', '5', '2,5', '0..3,6' -> [(item, set of chapters)]; a malformed item is an error."""
    items = []
    for part in spec.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:\.\.\s*(\d+))?\s*", part)
        if not m:
            return None
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) else first
        if last < first:
            raise CourseworkError(f"{arg} {spec}: empty range {first}..{last}")
        items.append((part.strip(), set(range(first, last + 1))))
    return items


def _chapter_list(chapters):
    chapters = sorted(chapters)
    if chapters and chapters == list(range(chapters[0], chapters[-1] + 1)) and len(chapters) > 2:
        return f"{chapters[0]}..{chapters[-1]}"
    return ", ".join(str(c) for c in chapters) or "none"


def parse_chapters(spec, available, arg="--chapters"):
    """'0..7', '5', '2,5', '0..3,6' or 'all' -> set of chapter numbers; 'none' -> empty.

    Every chapter named must have tasks (be in available), and none may be named twice."""
    if spec in (None, "all"):
        return set(available)
    if spec == "none":
        return set()
    items = _chapter_items(spec, arg)
    if items is None:
        raise CourseworkError(f"{arg} {spec}: expected chapters such as 5, 2..4, 2,5, all or none")
    chosen = set()
    for item, chapters in items:
        missing = sorted(chapters - set(available))
        if missing:
            raise CourseworkError(f"{arg} {spec}: chapter {missing[0]} has no tasks (chapters "
                                  f"with tasks: {_chapter_list(available)})")
        if chapters & chosen:
            raise CourseworkError(f"{arg} {spec}: chapter {min(chapters & chosen)} is named twice")
        chosen |= chapters
    return chosen


def parse_tasks(spec, tasks, arg="--tasks"):
    """'5.1,5.2', '5', '5..6', '0..3,6.1' or 'all' -> the tasks (of tasks) selected, in order.

    Each item must select at least one task and no task twice: a typo is an error."""
    tasks = sorted(tasks, key=task_key)
    if spec == "all":
        return tasks
    chosen = []
    for part in spec.split(","):
        item = part.strip()
        if re.fullmatch(r"\d+\.\d+", item):
            task = f"{int(item.split('.')[0])}.{int(item.split('.')[1])}"
            if task not in tasks:
                raise CourseworkError(f"{arg} {spec}: there is no task {item} (tasks "
                                      f"{tasks[0]} .. {tasks[-1]}; programs/coursework/handout "
                                      "--list lists them)")
            found = [task]
        else:
            items = _chapter_items(item, arg) if item else None
            if not items:
                raise CourseworkError(f"{arg} {spec}: expected tasks such as 5.2, chapters such "
                                      "as 5 or 2..4, a comma list of those, or all")
            chapters = items[0][1]
            found = [t for t in tasks if task_key(t)[0] in chapters]
            missing = sorted(c for c in chapters if not any(task_key(t)[0] == c for t in tasks))
            if missing:
                have = {task_key(t)[0] for t in tasks}
                raise CourseworkError(f"{arg} {spec}: chapter {missing[0]} has no tasks "
                                      f"(chapters with tasks: {_chapter_list(have)})")
        twice = [t for t in found if t in chosen]
        if twice:
            raise CourseworkError(f"{arg} {spec}: '{item}' selects task {twice[0]} a second "
                                  "time (a typo?)")
        chosen += found
    return sorted(chosen, key=task_key)


# --- arguments that name files and folders ---------------------------------------------------

def inside(path, folder):
    path, folder = Path(path).resolve(), Path(folder).resolve()
    return path == folder or folder in path.parents


def check_output_folder(arg, path, source_trees=(), allowed=()):
    """Refuses an output folder that is a file, that cannot be created, or that lies inside one
    of source_trees (except in a top-level build* folder of it, or inside one of allowed)."""
    out = Path(path).resolve()
    if out.exists() and not out.is_dir():
        raise CourseworkError(f"{arg} {path}: is a file, not a folder")
    for tree in source_trees:
        tree = Path(tree).resolve()
        if inside(out, tree) and not any(inside(out, a) for a in allowed):
            rel = out.relative_to(tree).parts
            if not rel or not rel[0].startswith("build"):
                raise CourseworkError(f"{arg} {path}: is inside the source tree {tree}; write it "
                                      "outside, or under the tree's build folder")
    parent = out
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise CourseworkError(f"{arg} {path}: {parent} is a file, so the folder cannot be made")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CourseworkError(f"{arg} {path}: {parent} is not writable")
    return out


def check_scratch_tree(arg, path, how):
    """A copy whose files a tool rewrites: never a repository, nor the tree of these tools
    (except under its top-level build* folders, where CI keeps its copies)."""
    tree = Path(path).resolve()
    if not tree.is_dir():
        raise CourseworkError(f"{arg} {path}: no such folder")
    outside_build = inside(tree, REPO) and not (
        tree != REPO and tree.relative_to(REPO).parts[0].startswith("build"))
    if (tree / ".git").exists() or inside(REPO, tree) or outside_build:
        raise CourseworkError(f"{arg} {path}: is a repository or part of {REPO}, whose files "
                              f"would be rewritten; run it on a copy ({how})")
    return tree


def check_positive(arg, value):
    if value is None or value <= 0:
        raise CourseworkError(f"{arg} {value}: must be a positive number")
    return value


def read_record(tree):
    """The handout's record (programs/coursework/handout.json) of a copy, or None for a copy that
    is not a handout (the repository itself)."""
    path = Path(tree) / RECORD
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data["tasks"] = [str(t) for t in data["tasks"]]
        data["chapters"] = [int(c) for c in data["chapters"]]
        return data
    except (ValueError, KeyError, TypeError, OSError) as e:
        raise CourseworkError(f"{path}: not a handout record ({e.__class__.__name__}: {e}); "
                              "make the handout again") from None


def stub_lines(region):
    """What a handout has in place of a solution: an error naming the task."""
    message = f"Task {region.task} not implemented: {region.title}"
    message = message.replace("\\", "\\\\").replace('"', '\\"')
    # The kernels sit below the framework and do not see ag/error.hpp.
    error = "std::runtime_error" if region.file.startswith("ag/kernels/") else "ag::Error"
    return [f'{region.indent}throw {error}("{message}");']


def with_regions_replaced(lines, regions, replacement):
    """lines with each region's body replaced by replacement(region) (markers kept)."""
    out, at = [], 0
    for r in sorted(regions, key=lambda r: r.begin):
        out += lines[at:r.begin + 1]
        out += replacement(r)
        at = r.end
    return out + lines[at:]


def ensure_include(lines, header):
    """Adds #include <header> after the file's first #include when it has none."""
    if any(re.match(rf"\s*#include\s*<{re.escape(header)}>", l) for l in lines):
        return lines
    for i, l in enumerate(lines):
        if l.startswith("#include"):
            return lines[:i] + [f"#include <{header}>"] + lines[i:]
    return [f"#include <{header}>"] + lines


def write_if_changed(path, text):
    """Writes only when the content differs, so that a rebuild recompiles what changed."""
    path = Path(path)
    if path.is_file() and path.read_bytes() == text.encode("utf-8"):
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


# --- writing a handout -------------------------------------------------------------------

# Instructor-only files: the wrong variants give away the shape of each solution.
INSTRUCTOR_ONLY = ("programs/coursework/variants.json",)
# A stub leaves its function's parameters, and the variables the given code declares for the
# task, unused until the task is written: no warning wall (in every handout, --chapters none
# too, so that turning one into the other recompiles only the stubbed files).
FLAGS = "cmake/Flags.cmake"
HANDOUT_FLAGS = """# Handout (programs/coursework/handout): a task's stub leaves the parameters of its
# function, and the variables the given code declares for the task, unused until the task
# is written.
add_compile_options(-Wno-unused-parameter -Wno-unused-variable)
"""


def file_digest(data):
    """The SHA-256 of a file's bytes, as the handout's record keeps it."""
    return hashlib.sha256(data).hexdigest()


def previous_handout_files(out):
    """What an earlier run wrote into the handout folder out: {file: digest}, or {} for a new
    or empty folder. A handout whose record lists no files (written by an earlier version of
    this tool) is refused: the student's changes could not be told from the tool's."""
    record_path = Path(out) / RECORD
    if not record_path.is_file():
        return {}
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CourseworkError(f"{out}: its handout record {RECORD} does not read back ({e}); "
                              "write the handout into a new folder")
    files = record.get("files") if isinstance(record, dict) else None
    if not isinstance(files, dict):
        raise CourseworkError(f"{out}: this handout was written by an earlier version of the "
                              "tool, which kept no record of the files it wrote, so a student's "
                              "changes cannot be told apart; write the handout into a new folder")
    return files


def write_handout(repo, out, files, regions, stubbed_tasks):
    """Writes the copy of repo (its files) into out with the regions of stubbed_tasks replaced
    by stubs, the book's quotes of them rewritten from the stubs, and the record of what was
    stubbed and of every file written (its digest). Only files whose content changes are
    written. Over an earlier handout, a file whose content is no longer what the handout wrote
    (a student's work) is never replaced: it is kept as it is and listed. Returns (stubbed
    regions, files written, files kept)."""
    repo, out = Path(repo), Path(out)
    previous = previous_handout_files(out)
    stubbed = [r for r in regions if r.task in stubbed_tasks]
    by_file = {}
    for r in stubbed:
        by_file.setdefault(r.file, []).append(r)

    def handout_source(rel):
        path = repo / rel
        if not path.is_file():
            return None
        lines = read_lines(path)
        if rel in by_file:
            lines = with_regions_replaced(lines, by_file[rel], stub_lines)
            if rel.startswith("ag/kernels/"):
                lines = ensure_include(lines, "stdexcept")
        return lines

    changed, kept, digests = 0, [], {}
    for rel in files:
        if rel in INSTRUCTOR_ONLY or rel == RECORD:
            continue
        src = repo / rel
        if not src.is_file():
            continue
        dst = out / rel
        if rel in by_file:
            data = "\n".join(handout_source(rel)).encode("utf-8")
        elif rel == FLAGS:
            data = (src.read_text(encoding="utf-8").rstrip("\n") + "\n" + HANDOUT_FLAGS).encode()
        elif rel.endswith(".md") and by_file:
            data = "\n".join(requote(read_lines(src), handout_source)).encode("utf-8")
        else:
            data = src.read_bytes()
        there = dst.read_bytes() if dst.is_file() else None
        if there is not None and there != data and (
                rel not in previous or file_digest(there) != previous[rel]):
            # Not what the earlier run wrote (or a file it never wrote): the student's.
            kept.append(rel)
            digests[rel] = previous.get(rel, file_digest(there))
            continue
        digests[rel] = file_digest(data)
        if there == data:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(data)
        dst.chmod(src.stat().st_mode)
        changed += 1
    tasks = tasks_of(stubbed)
    record = {
        "_comment": "Written by programs/coursework/handout: the chapters and tasks this copy stubs "
                    "(programs/coursework/grade grades these tasks by default), and the digest of "
                    "each file as the handout wrote it (a later run over this folder never "
                    "replaces a file that differs from it).",
        "chapters": sorted({r.chapter for r in stubbed}),
        "tasks": list(tasks),
        "files": digests,
    }
    if write_if_changed(out / RECORD, json.dumps(record, indent=2) + "\n"):
        changed += 1
    return stubbed, changed, kept


# --- the book's quotes --------------------------------------------------------------------

def requote(markdown_lines, read_source):
    """Rewrites each quote of a markdown file from read_source(file) -> lines or None (a quote
    whose source or region cannot be found stays as it is)."""
    quotes, _ = markers.find_quotes(markdown_lines)
    replacements = []
    for quote in quotes:
        source = read_source(quote.file)
        try:
            if source is not None:
                region = markers.source_region(source, quote.file, quote.name)
                replacements.append((quote, region.lines))
        except markers.MarkerError:
            pass
    return markers.with_quotes_replaced(markdown_lines, replacements)


# --- wrong variants (programs/coursework/variants.json, instructor-only) ---------------------

def read_variants(path=HERE / "variants.json", arg="--variants"):
    text = read_text_argument(path, arg)
    try:
        variants = json.loads(text)["variants"]
        for v in variants:
            if not (isinstance(v["task"], str) and isinstance(v["file"], str)
                    and isinstance(v["why"], str) and isinstance(v["replace"], list)):
                raise TypeError("a variant needs task, file, why and replace")
        return variants
    except (ValueError, KeyError, TypeError) as e:
        raise CourseworkError(f"{arg} {path}: not a list of variants ({e.__class__.__name__}: "
                              f"{e})") from None


def variant_text(repo, variant):
    """The text of variant["file"] with the variant's replacements made in its task's region."""
    rel = variant["file"]
    lines = read_lines(Path(repo) / rel)
    regions = [r for r in find_regions(rel, lines) if r.task == variant["task"]]
    index = variant.get("region", 0)
    name = f"variant of task {variant['task']} ({variant['why']})"
    if index >= len(regions):
        raise CourseworkError(f"{name}: {rel} has {len(regions)} regions of the task, "
                              f"not a region {index}")
    region = regions[index]
    body = "\n".join(region.body)
    for old, new in variant["replace"]:
        if old not in body:
            raise CourseworkError(f"{name}: '{old}' is not in the task's region of {rel}; "
                                  "update the variant to the current solution")
        body = body.replace(old, new, 1)
    if body == "\n".join(region.body):
        raise CourseworkError(f"{name}: changes nothing")
    return "\n".join(lines[:region.begin + 1] + body.split("\n") + lines[region.end:])


def ctest_regex(names):
    """A ctest -R pattern matching exactly these test names (CMake's regex syntax)."""
    escape = lambda s: re.sub(r"([.^$*+?()\[\]{}|\\])", r"\\\1", s)
    return "^(" + "|".join(escape(n) for n in sorted(names)) + ")$"


# --- running tests --------------------------------------------------------------------------

def list_ctest(build):
    """ctest's list of the tests of a build: name -> program (file name of its command), or
    None when ctest cannot list them."""
    try:
        out = subprocess.run(["ctest", "--test-dir", str(build), "--show-only=json-v1"],
                             capture_output=True, text=True, timeout=300).stdout
        data = json.loads(out[out.index("{"):])
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    return {t["name"]: (Path(t["command"][0]).name if t.get("command") else "")
            for t in data.get("tests", [])}


FAILED_LINE = re.compile(r"^\s*\d+ - (.+?) \(([^()]*)\)\s*$")


def run_ctest(build, names, junit, timeout, jobs):
    """Runs exactly the tests names of build under ctest, each limited to timeout seconds.
    Returns (name -> {passed, kind, output}, ctest's output or None if ctest itself hung)."""
    if Path(junit).exists():
        Path(junit).unlink()
    cmd = ["ctest", "--test-dir", str(build), "-R", ctest_regex(names), "--timeout",
           str(timeout), "-j", str(jobs), "--output-junit", str(junit), "--no-tests=ignore"]
    try:
        # The whole run also has a limit: every test's limit, run one at a time, and a margin.
        text = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              errors="replace", timeout=timeout * max(1, len(names)) + 120).stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        text = None
        kinds_text = out
    else:
        kinds_text = text
    kinds = {}
    for line in (kinds_text or "").splitlines():
        m = FAILED_LINE.match(line)
        if m:
            kinds[m.group(1)] = m.group(2)
    results = {}
    if Path(junit).exists():
        try:
            for case in ET.parse(junit).getroot().iter("testcase"):
                name = case.get("name")
                out = case.findtext("system-out") or ""
                passed = case.get("status") == "run" and case.find("failure") is None
                results[name] = {"passed": passed, "kind": "Passed" if passed else
                                 kinds.get(name, case.get("status") or "Failed"), "output": out}
        except ET.ParseError:
            pass
    for name in names:  # a test that never reported (the run itself stopped)
        if name not in results:
            results[name] = {"passed": False, "kind": kinds.get(name, "did not run"),
                             "output": "" if text is not None else "the test run timed out"}
    return results, text


def first_message(result, timeout):
    """The first line that says why a test failed: a stub's message, an exception, a failed
    expectation with its values, a crash or the time limit."""
    kind, out = result["kind"], result["output"]
    lines = out.splitlines()
    if kind == "Timeout":
        return f"did not finish within {timeout} s (time limit)"
    for line in lines:
        m = re.search(r'C\+\+ exception with description "(.*)" thrown', line)
        if m:
            return m.group(1)
    for line in lines:
        if "what():" in line:
            return f"crashed ({kind}): {line.split('what():', 1)[1].strip()}"
    for i, line in enumerate(lines):
        if re.search(r": Failure$", line) or line.strip() == "Failure":
            detail = [l.strip() for l in lines[i + 1:i + 5] if l.strip()]
            return " / ".join(detail[:3]) or line.strip()
    tail = [l.strip() for l in lines if l.strip()][-2:]
    if kind not in ("Failed", "fail"):
        return f"{kind.lower()}" + (": " + " / ".join(tail) if tail else "")
    return " / ".join(tail) or kind
