"""Snippets: the book's quotes of its source code, the markdown side and the source side.

    <!-- snippet: ag/src/engine.cpp#record -->     in the markdown, before a fenced block
    // [record]                                    in the source, before and after the region
    # [record]                                     the same in a Python source (.py)
"""
import json
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import MarkerError
from .lines import ShownCode, closing_fence, fence_of, with_spans_replaced
from .tasks import task_marker

_QUOTE = re.compile(r"^\s*<!--\s*snippet:\s*(\S*)\s*-->\s*$", re.A)
# A line that is only a region's marker (of this region or another one), by the comment of
# its language: `#` in Python, `//` in C++.
_REGION_MARKER_LINE = {
    "//": re.compile(r"^\s*//\s*\[[A-Za-z0-9_.-]+\]\s*$", re.A),
    "#": re.compile(r"^\s*#\s*\[[A-Za-z0-9_.-]+\]\s*$", re.A),
}


def _line_comment(file):
    """How a comment starts in the source file's language: `#` in Python, `//` elsewhere."""
    return "#" if str(file).endswith(".py") else "//"

# A handout's record of the tasks it stubs (written by programs/coursework/handout at the
# handout's root): in a handout, the code of those tasks is the student's.
HANDOUT_RECORD = "programs/coursework/handout.json"


# --- the source side ------------------------------------------------------------------------

@dataclass
class Region:
    lines: list          # what a quote of the region holds
    parts: list          # lines cut at the code of the student's tasks (one part when none)
    student_task: str    # the first of the student's tasks in the region, or None


def source_region(source, file, name, student_tasks=()):
    """The region `name` of a source file's lines (file names it in errors). The code of the
    tasks in student_tasks is the student's: parts then says what a quote must hold around
    it. Raises MarkerError when the region is not enclosed by exactly two markers, or empty."""
    comment = _line_comment(file)
    marker = f"{comment} [{name}]"
    at = [i for i, line in enumerate(source) if marker in line]
    if len(at) != 2:
        raise MarkerError(f"marker '{marker}' occurs {len(at)} times in {file} "
                          "(expected 2: before and after the region)")
    kept, theirs = [], []  # the region's lines, and for each whether a student's task holds it
    student_task, in_student = None, False
    for line in source[at[0] + 1:at[1]]:
        task = task_marker(line)
        if task:
            in_student = task.task in student_tasks and task.kind == "begin"
            if in_student and student_task is None:
                student_task = task.task
            continue
        if _REGION_MARKER_LINE[comment].match(line):
            continue
        kept.append(line.rstrip(" \t"))
        theirs.append(in_student)
    if not kept:
        raise MarkerError(f"marker '{marker}' in {file} encloses no lines")
    indent = min((len(line) - len(line.lstrip(" \t")) for line in kept if line), default=0)
    lines = [line[indent:] for line in kept]
    parts = [[]]
    for i, line in enumerate(lines):
        if theirs[i]:
            if i == 0 or not theirs[i - 1]:
                parts.append([])
            continue
        parts[-1].append(line)
    if theirs[-1]:  # a task that ends the region: the quote may end with anything
        parts.append([])
    return Region(lines, parts, student_task)


def matches_around_tasks(block, parts):
    """Does block hold parts[0], anything, parts[1], anything, ..., parts[-1], in that order,
    with nothing before the first part and nothing after the last?"""
    if len(parts) == 1:
        return block == parts[0]
    first, last = parts[0], parts[-1]
    if len(block) < len(first) + len(last):
        return False
    if block[:len(first)] != first or block[len(block) - len(last):] != last:
        return False
    # each middle part at its earliest place (the leftmost is best when the gaps take anything)
    at, end = len(first), len(block) - len(last)
    for part in parts[1:-1]:
        found = next((i for i in range(at, end - len(part) + 1)
                      if block[i:i + len(part)] == part), None)
        if found is None:
            return False
        at = found + len(part)
    return True


def student_tasks(root):
    """The tasks whose code is the student's: those the handout's record names (none outside
    a handout, or when the record cannot be read)."""
    try:
        record = json.loads((Path(root) / HANDOUT_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    tasks = record.get("tasks") if isinstance(record, dict) else None
    return [str(task) for task in tasks] if isinstance(tasks, list) else []


# --- the markdown side ----------------------------------------------------------------------

@dataclass
class Quote:
    comment: int   # index of the <!-- snippet: --> line
    open: int      # index of the opening fence
    close: int     # index of the closing fence
    file: str
    name: str

    @property
    def target(self):
        return f"{self.file}#{self.name}"


def find_quotes(lines):
    """The quotes of a markdown file's lines, and its malformed quotes as (1-based line,
    reason) pairs."""
    quotes, problems = [], []
    shown = ShownCode()
    i = 0
    while i < len(lines):
        m = None if shown.skips(lines[i]) else _QUOTE.match(lines[i])
        if not m:
            i += 1
            continue
        target, hash_at = m.group(1), m.group(1).find("#")
        fence = fence_of(lines[i + 1]) if i + 1 < len(lines) else None
        close = closing_fence(lines, fence, i + 2) if fence else len(lines)
        if hash_at <= 0 or hash_at + 1 == len(target):
            problems.append((i + 1, "expected <!-- snippet: path/to/file#marker -->, "
                                    f"got '{target}'"))
        elif fence is None:
            problems.append((i + 1, "the snippet comment must be followed at once by a "
                                    "```cpp code block"))
        elif close >= len(lines):
            problems.append((i + 1, "the code block after the snippet comment is never closed"))
        else:
            quotes.append(Quote(i, i + 1, close, target[:hash_at], target[hash_at + 1:]))
            i = close
        i += 1
    return quotes, problems


def quoted_lines(lines, quote):
    """What the quote's block holds, right blanks dropped (as a region's lines are)."""
    return [line.rstrip(" \t") for line in lines[quote.open + 1:quote.close]]


def with_quotes_replaced(lines, replacements):
    """lines with the block of each (quote, new_lines) holding new_lines instead."""
    return with_spans_replaced(lines, [(q.open + 1, q.close, new) for q, new in replacements])
