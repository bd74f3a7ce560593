"""The results checker's own test (results.py selftest <testdata-dir> <scratch-dir>).

bad.md marks each quote that must fail with a line `<!-- expect-error: words -->` just before
it (for inline values: just before the line that holds them): check must report exactly those
lines, each with a reason containing the words. good.md must pass as it is; a copy of it with
one digit of a block and one digit of an inline value edited must fail twice; update must
repair the copy.
"""
import io
import os
import shutil

import results
from checker import Selftest, markers

# The two edits made by hand in the copy of good.md: one in a block, one inline.
EDITS = (("accuracy 1.0000", "accuracy 0.9999"), ("0.64<!--", "0.65<!--"))


def reported(path, update):
    """{line: reasons} of the problems that check (or update) finds in one file."""
    problems = []
    results.process(path, update, markers.Summaries(), problems, io.StringIO())
    found = {}
    for p in problems:
        found[p.line] = found.get(p.line, "") + p.reason + "; "
    return found


def selftest(data, scratch):
    test = Selftest("results")
    good = os.path.join(data, "good.md")
    out = io.StringIO()
    if results.run("check", [good], out, out) != 0:
        test.fail("good.md should pass:\n" + out.getvalue())

    bad = os.path.join(data, "bad.md")
    expected = test.expected_errors(bad)
    test.reported_exactly("bad.md", expected, reported(bad, False))

    # A number edited by hand in a copy of good.md: once in a block, once inline.
    os.makedirs(os.path.join(scratch, "results"), exist_ok=True)
    shutil.copyfile(os.path.join(data, "results", "summary.json"),
                    os.path.join(scratch, "results", "summary.json"))
    lines = markers.read_lines(good)
    if lines is None:
        test.fail("cannot read good.md")
        return 1
    edited = edit_once_each(lines)
    if edited is None:
        test.fail("good.md lacks the two numbers the selftest edits")
        edited = lines
    copy = os.path.join(scratch, "good.md")
    markers.write_lines(copy, edited)
    if len(reported(copy, False)) != 2:
        test.fail("the two hand-edited numbers must both be reported")
    reported(copy, True)
    if reported(copy, False):
        test.fail("update did not repair the hand-edited numbers")
    if markers.read_lines(copy) != lines:
        test.fail("update did not restore good.md exactly")
    return test.finish(len(expected))


def edit_once_each(lines):
    """lines with each of EDITS made once, in order (the second after the first), or None
    when one of them finds nothing to edit."""
    lines, edits = list(lines), list(EDITS)
    for i, line in enumerate(lines):
        if edits and edits[0][0] in line:
            old, new = edits.pop(0)
            lines[i] = line.replace(old, new, 1)
    return None if edits else lines
