"""Test markers: which tests grade which coursework task, and which chapter a test belongs to,
written right above the test in its C++ source.

    // grades: task 5.3              labels task5.3 and ch05: the test grades task 5.3
    // grades: task 0.2, task 0.4    several tasks
    // chapter: 08                   label ch08: a test of chapter 8 that lives elsewhere
    TEST(Ch05Rope, RotationPreservesNorm) {

cmake/TestLabels.cmake turns them into ctest labels (python3 -m markers test-labels) and
programs/coursework reads them to grade (read_task_tests): both through find_test_markers.
"""
import re
from dataclasses import dataclass, field

from .errors import MarkerError

_GRADES = re.compile(r"^\s*//\s*grades:(.*)$", re.A)
_CHAPTER = re.compile(r"^\s*//\s*chapter:(.*)$", re.A)
_TASK_LIST = re.compile(r"\s*task\s+\d+\.\d+(\s*,\s*task\s+\d+\.\d+)*\s*", re.A)
_TEST_START = re.compile(r"^\s*(TEST|TEST_F|TYPED_TEST|TEST_P)\s*\(", re.A)
_TEST_DEFINITION = re.compile(r"^\s*[A-Z_]+\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)", re.A)


@dataclass
class TestMarker:
    test: str          # "Ch05Rope.RotationPreservesNorm" (gtest_discover_tests's Suite.Name)
    file: str          # path as given to find_test_markers
    line: int          # 1-based line of the first marker
    tasks: list = field(default_factory=list)     # ["5.3"]
    chapters: list = field(default_factory=list)  # [8] from "// chapter: 08"

    def labels(self):
        """The ctest labels: task5.3 and ch05 for each task, ch08 for each chapter, once each."""
        found = []
        for task in self.tasks:
            found += [f"task{task}", f"ch{int(task.split('.')[0]):02d}"]
        found += [f"ch{chapter:02d}" for chapter in self.chapters]
        return list(dict.fromkeys(found))


def find_test_markers(path, lines):
    """The test markers of one source file's lines, in order. A malformed marker, or one that
    no test definition follows, is a MarkerError naming the file and line."""
    markers, pending, definition = [], None, None
    for i, line in enumerate(lines):
        where = f"{path}:{i + 1}"
        g, c = _GRADES.match(line), _CHAPTER.match(line)
        if definition is not None:
            definition += " " + line
        elif g or c:
            pending = pending or TestMarker("", path, i + 1)
            if g and not _TASK_LIST.fullmatch(g.group(1)):
                raise MarkerError(f"{where}: a grades marker reads '// grades: task 5.3' or "
                                  "'// grades: task 0.2, task 0.4'")
            if c and not re.fullmatch(r"\s*\d\d\s*", c.group(1), re.A):
                raise MarkerError(f"{where}: a chapter marker reads '// chapter: 08'")
            if g:
                pending.tasks += [f"{int(a)}.{int(b)}"
                                  for a, b in re.findall(r"(\d+)\.(\d+)", g.group(1), re.A)]
            else:
                pending.chapters.append(int(c.group(1)))
            continue
        elif pending is None:
            continue
        elif _TEST_START.match(line):
            definition = line
        else:
            raise MarkerError(f"{path}:{pending.line}: this test marker is not followed by a "
                              "test: TEST, TEST_F, TYPED_TEST or TEST_P must come on the next "
                              "line")
        if ")" in definition:
            m = _TEST_DEFINITION.match(definition)
            if not m:
                raise MarkerError(f"{path}:{pending.line}: the test below this marker is not "
                                  "written TEST(Suite, Name)")
            # gtest_discover_tests leaves DISABLED_ out of a test's name
            suite, name = (re.sub(r"^DISABLED_", "", n) for n in m.groups())
            pending.test = f"{suite}.{name}"
            markers.append(pending)
            pending, definition = None, None
    if pending:
        raise MarkerError(f"{path}:{pending.line}: this test marker is not followed by a test")
    return markers
