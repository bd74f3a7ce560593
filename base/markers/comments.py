"""The one-line markers: the README's test command, a live figure's place, and the checkers'
expected errors.

    <!-- test-command: .ci/run reads the next line and runs it -->
    <!-- live-figure: rope_planes -->
    <!-- expect-error: occurs 0 times -->
"""
import re

_TEST_COMMAND = "<!-- test-command"
_LIVE_FIGURE = re.compile(r"^<!--\s*live-figure:\s*([a-z0-9_-]+)\s*-->$", re.A)
_EXPECT_ERROR = re.compile(r"^\s*<!--\s*expect-error:\s*(.*?)\s*-->\s*$", re.A)


def test_command(lines):
    """The command after the first test-command marker: the first line after it that does not
    open (or close) a code fence; None without a marker or a line after it."""
    for i, line in enumerate(lines):
        if _TEST_COMMAND in line:
            return next((after for after in lines[i + 1:] if not after.startswith("```")), None)
    return None


def live_figure_name(comment):
    """The figure's name when the comment (the whole of it, <!-- to -->) is a live figure's
    marker, else None."""
    m = _LIVE_FIGURE.match(comment)
    return m.group(1) if m else None


def expected_errors(lines):
    """{1-based line: words} for each expect-error marker: the line after the marker must be
    reported with a reason that contains the words."""
    return {i + 2: m.group(1) for i, line in enumerate(lines[:-1])
            if (m := _EXPECT_ERROR.match(line))}
