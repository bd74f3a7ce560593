"""Task markers: the coursework's tasks in the C++ sources.

    // TASK 5.3 begin: rotate the pairs
    ...the solution...
    // TASK 5.3 end
"""
import re
from dataclasses import dataclass, field

from .errors import MarkerError

# A begin or an end marker, whatever follows the word (a begin's title is checked apart, so
# that a quote leaves out even a malformed marker, which find_task_regions reports).
_MARKER = re.compile(r"^(\s*)//\s*TASK\s+([0-9]+)\.([0-9]+)\s+(begin|end)\b(.*)$", re.A)
_TITLE = re.compile(r"^:\s*(.+?)\s*$", re.A)
# Any comment that means to be a task marker.
_ANY_TASK = re.compile(r"^\s*//\s*TASK\b", re.A)


@dataclass
class TaskMarker:
    task: str      # "5.3" (leading zeros dropped)
    written: str   # the number as written ("05.3")
    kind: str      # "begin" or "end"
    title: str     # a begin's title after the colon; None for an end or a begin without one
    indent: str    # the blanks before //


def task_marker(line):
    """The task marker on this line, or None when it holds none."""
    m = _MARKER.match(line)
    if not m:
        return None
    indent, major, minor, kind, rest = m.groups()
    title = _TITLE.match(rest) if kind == "begin" else None
    return TaskMarker(f"{int(major)}.{int(minor)}", f"{major}.{minor}", kind,
                      title.group(1) if title else None, indent)


@dataclass
class TaskRegion:
    task: str          # "5.2"
    title: str
    file: str          # path relative to the repository
    begin: int         # 0-based index of the begin marker line
    end: int           # 0-based index of the end marker line
    indent: str        # the begin marker's (a stub in its place is indented alike)
    body: list = field(default_factory=list)  # the solution's lines

    @property
    def chapter(self):
        return int(self.task.split(".")[0])


def find_task_regions(rel_path, lines):
    """The task regions of one file, in order. A malformed marker, a region inside another,
    an end without its begin and a begin never closed are MarkerErrors naming the line."""
    regions, open_region = [], None
    for i, line in enumerate(lines):
        marker = task_marker(line)
        where = f"{rel_path}:{i + 1}"
        if marker and marker.kind == "begin" and marker.title is not None:
            if open_region:
                raise MarkerError(f"{where}: TASK {marker.written} begins inside "
                                  f"TASK {open_region.task} (regions cannot nest)")
            open_region = TaskRegion(marker.task, marker.title, rel_path, i, -1, marker.indent)
        elif marker and marker.kind == "end":
            if not open_region or open_region.task != marker.task:
                raise MarkerError(f"{where}: TASK {marker.task} end without its begin")
            open_region.end = i
            open_region.body = lines[open_region.begin + 1:i]
            regions.append(open_region)
            open_region = None
        elif _ANY_TASK.match(line):
            raise MarkerError(f"{where}: a TASK marker must read '// TASK N.M begin: title' "
                              f"or '// TASK N.M end', got: {line.strip()}")
    if open_region:
        raise MarkerError(f"{rel_path}:{open_region.begin + 1}: TASK {open_region.task} "
                          "is never closed")
    return regions
