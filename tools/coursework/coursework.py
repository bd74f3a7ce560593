"""Coursework: the tasks marked in the sources, shared by handout, grade and check_variants.

A task's solution sits between two comment lines in the real source:

    // TASK 5.3 begin: rotate the pairs
    ...the solution...
    // TASK 5.3 end

A task may have several regions (in one file or several); each region is the tail of a
function body, so that a stub throwing an error in its place still compiles.
"""
import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

BEGIN = re.compile(r"^(\s*)//\s*TASK\s+(\d+)\.(\d+)\s+begin:\s*(.+?)\s*$")
END = re.compile(r"^\s*//\s*TASK\s+(\d+)\.(\d+)\s+end\b")
ANY_TASK = re.compile(r"^\s*//\s*TASK\b")
SOURCE_SUFFIXES = (".cpp", ".hpp", ".h", ".cc")
# The snippet checker's test data shows a task marker; it is not a task.
NOT_TASKS = ("tools/testdata/",)
HERE = Path(__file__).resolve().parent


class CourseworkError(Exception):
    pass


@dataclass
class Region:
    task: str          # "5.2"
    title: str
    file: str          # path relative to the repository
    begin: int         # 0-based index of the begin marker line
    end: int           # 0-based index of the end marker line
    indent: str
    body: list = field(default_factory=list)  # the solution's lines

    @property
    def chapter(self):
        return int(self.task.split(".")[0])


def task_key(task):
    major, minor = task.split(".")
    return int(major), int(minor)


def find_regions(rel_path, lines):
    """The task regions of one file; a malformed marker is an error naming the line."""
    regions, open_region = [], None
    for i, line in enumerate(lines):
        b, e = BEGIN.match(line), END.match(line)
        where = f"{rel_path}:{i + 1}"
        if b:
            if open_region:
                raise CourseworkError(f"{where}: TASK {b.group(2)}.{b.group(3)} begins inside "
                                      f"TASK {open_region.task} (regions cannot nest)")
            open_region = Region(f"{int(b.group(2))}.{int(b.group(3))}", b.group(4), rel_path,
                                 i, -1, b.group(1))
        elif e:
            task = f"{int(e.group(1))}.{int(e.group(2))}"
            if not open_region or open_region.task != task:
                raise CourseworkError(f"{where}: TASK {task} end without its begin")
            open_region.end = i
            open_region.body = lines[open_region.begin + 1:i]
            regions.append(open_region)
            open_region = None
        elif ANY_TASK.match(line):
            raise CourseworkError(f"{where}: a TASK marker must read '// TASK N.M begin: title' "
                                  f"or '// TASK N.M end', got: {line.strip()}")
    if open_region:
        raise CourseworkError(f"{rel_path}:{open_region.begin + 1}: TASK {open_region.task} "
                              "is never closed")
    return regions


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


def read_task_tests(path=HERE / "task_tests.txt"):
    """task -> [test names], from the mapping file."""
    mapping = {}
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"(\d+\.\d+)\s+(.+)", line)
        if not m:
            raise CourseworkError(f"{path}:{n}: expected 'task test', got '{line}'")
        mapping.setdefault(m.group(1), []).append(m.group(2))
    return mapping


def read_points(path=HERE / "points.json"):
    data = json.loads(Path(path).read_text())
    points = data.get("points", data)
    return {k: float(v) for k, v in points.items() if not k.startswith("_")}


def parse_chapters(spec, available):
    """'0..7', '5', '2,5', '0..3,6' or 'all' -> set of chapter numbers; 'none' -> empty."""
    if spec in (None, "all"):
        return set(available)
    if spec == "none":
        return set()
    chosen = set()
    for part in spec.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:\.\.\s*(\d+))?\s*", part)
        if not m:
            raise CourseworkError(f"--chapters: expected N, A..B or a comma list, got '{spec}'")
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) else first
        if last < first:
            raise CourseworkError(f"--chapters: empty range {first}..{last}")
        chosen |= set(range(first, last + 1))
    return chosen


def stub_lines(region):
    """What a handout has in place of a solution: an error naming the task."""
    message = f"Task {region.task} not implemented: {region.title}"
    message = message.replace("\\", "\\\\").replace('"', '\\"')
    # The kernels sit below the framework and do not see ag/error.hpp.
    error = "std::runtime_error" if region.file.startswith("framework/kernels/") else "ag::Error"
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


# --- the book's quotes (the same rules as tools/snippets.cpp) ---------------------------

SNIPPET_COMMENT = re.compile(r"^\s*<!--\s*snippet:\s*(\S*)\s*-->\s*$")
SNIPPET_MARKER = re.compile(r"^\s*//\s*\[[A-Za-z0-9_.-]+\]\s*$")


def snippet_region(lines, name):
    marker = f"// [{name}]"
    at = [i for i, l in enumerate(lines) if marker in l]
    if len(at) != 2:
        return None
    body = [l.rstrip() for l in lines[at[0] + 1:at[1]]
            if not SNIPPET_MARKER.match(l) and not BEGIN.match(l) and not END.match(l)]
    indent = min((len(l) - len(l.lstrip(" \t")) for l in body if l), default=0)
    return [l[indent:] if l else l for l in body]


def requote(markdown_lines, read_source):
    """Rewrites each quote of a markdown file from read_source(file) -> lines or None."""
    out, i, fence_outside = [], 0, None
    n = len(markdown_lines)
    while i < n:
        line = markdown_lines[i]
        text = line.strip()
        if fence_outside:
            out.append(line)
            if text == fence_outside:
                fence_outside = None
            i += 1
            continue
        if text.startswith("```"):
            fence_outside = text[:len(text) - len(text.lstrip("`"))]
            out.append(line)
            i += 1
            continue
        m = SNIPPET_COMMENT.match(line)
        if m and "#" in m.group(1) and i + 1 < n and markdown_lines[i + 1].strip().startswith("```"):
            file, name = m.group(1).split("#", 1)
            fence_line = markdown_lines[i + 1].strip()
            fence = fence_line[:len(fence_line) - len(fence_line.lstrip("`"))]
            close = i + 2
            while close < n and markdown_lines[close].strip() != fence:
                close += 1
            source = read_source(file)
            region = snippet_region(source, name) if source is not None else None
            out += markdown_lines[i:i + 2]
            out += region if region is not None and close < n else markdown_lines[i + 2:close]
            out += markdown_lines[close:close + 1]
            i = close + 1
            continue
        out.append(line)
        i += 1
    return out


# --- wrong variants (tools/coursework/variants.json, instructor-only) ---------------------

def read_variants(path=HERE / "variants.json"):
    return json.loads(Path(path).read_text())["variants"]


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
