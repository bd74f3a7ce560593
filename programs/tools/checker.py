"""What the book's two checkers share (snippets.py and results.py): the problems they report,
their report, and the selftest's comparison of what a fixture expects with what was found.
The grammars of the markers they check live in base/markers, which this file puts on the
import path for them."""
import sys
from dataclasses import dataclass
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the repository
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "base"))
import markers  # noqa: E402,F401  (the checkers take it from here)


@dataclass
class Problem:
    file: str
    line: int      # 1-based line of the marker; 0 for the file as a whole
    reason: str


def report(tool, mode, count, files, problems, log, errors):
    """Prints each problem to errors and the summary line to log; the exit status: 0 without
    problems, 1 with some."""
    for p in problems:
        print(f"{p.file}:{p.line}: {p.reason}", file=errors)
    print(f"{tool} {mode}: {count} quotes in {len(files)} files, {len(problems)} problems",
          file=log)
    return 1 if problems else 0


class Selftest:
    """Counts a selftest's failures, each printed as it is found."""

    def __init__(self, tool):
        self.tool = tool
        self.failures = 0

    def fail(self, what):
        print(f"selftest: {what}", file=sys.stderr)
        self.failures += 1

    def expected_errors(self, path):
        """The fixture's expect-error markers: {line: words}."""
        lines = markers.read_lines(path)
        if lines is None:
            self.fail(f"cannot read {path}")
            return {}
        return markers.expected_errors(lines)

    def reported_exactly(self, name, expected, found):
        """found ({line: reason}) must hold each expected line ({line: words}), with a reason
        containing its words, and no other line."""
        if not expected:
            self.fail(f"{name} has no expect-error lines")
        for line, words in sorted(expected.items()):
            if line not in found:
                self.fail(f"{name}:{line} should be reported ({words})")
            elif words not in found[line]:
                self.fail(f"{name}:{line} reason '{found[line]}' lacks '{words}'")
        for line, reason in sorted(found.items()):
            if line not in expected:
                self.fail(f"{name}:{line} reported but should pass: {reason}")

    def finish(self, expected_failures):
        print(f"{self.tool} selftest: {expected_failures} expected failures, {self.failures} "
              "selftest failures")
        return 0 if self.failures == 0 else 1
