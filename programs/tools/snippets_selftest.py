"""The snippet checker's own test (snippets.py selftest <testdata-dir> <scratch-dir>).

bad.md in the test data marks each quote that must fail with a line `<!-- expect-error: words
-->` just before it: check must report exactly those quotes, each with a reason containing
the words. Then update, run on a copy, must repair the quotes whose source exists and leave
the rest reported; good.md must pass as it is. Last, a handout's quote of a task that the
student solved must pass, and a change to the code around the task must not.
"""
import io
import json
import os
import shutil

import snippets
from checker import Selftest, markers


def reported(data, path, update):
    """{line: reason} of the problems that check (or update) finds in one file."""
    problems = []
    snippets.process(data, path, update, problems, io.StringIO())
    return {p.line: p.reason for p in problems}


def quiet_run(mode, root, files):
    """(exit status, everything printed) of a run."""
    out = io.StringIO()
    return snippets.run(mode, root, files, out, out), out.getvalue()


def selftest(data, scratch):
    test = Selftest("snippets")
    status, out = quiet_run("check", data, [os.path.join(data, "good.md")])
    if status != 0:
        test.fail("good.md should pass:\n" + out)

    bad = os.path.join(data, "bad.md")
    expected = test.expected_errors(bad)
    test.reported_exactly("bad.md", expected, reported(data, bad, False))

    # Update a copy; afterwards only the quotes that update cannot fix may be reported.
    os.makedirs(scratch, exist_ok=True)
    copy = os.path.join(scratch, "bad.md")
    shutil.copyfile(bad, copy)
    reported(data, copy, True)
    after = reported(data, copy, False)
    for line, words in sorted(test.expected_errors(copy).items()):
        fixable = "differs" in words
        if fixable and line in after:
            test.fail(f"update did not repair the quote at line {line} of the copy")
        if not fixable and line not in after:
            test.fail(f"update hid the unresolvable quote at line {line} of the copy")

    handout_quotes(test, os.path.join(scratch, "handout"))
    return test.finish(len(expected))


def handout_quotes(test, handout):
    """A handout whose record names task 9.1: its code is the student's. The quote shows the
    stub; the source holds the student's solution. That matches; a change to the code around
    the task does not, and update leaves the quote alone (it would copy the solution)."""
    record = os.path.join(handout, markers.HANDOUT_RECORD)
    os.makedirs(os.path.dirname(record), exist_ok=True)
    write(record, json.dumps({"chapters": [9], "tasks": ["9.1"]}) + "\n")

    def write_source(before_task):
        write(os.path.join(handout, "source.cpp"),
              f"// [task]\n{before_task}\n  // TASK 9.1 begin: double the number\n"
              "  const int y = x + x;\n  return y;\n  // TASK 9.1 end\n}\n// [task]\n")

    book = os.path.join(handout, "book.md")
    write(book, "<!-- snippet: source.cpp#task -->\n```cpp\nint twice(int x) {\n"
                "  throw ag::Error(\"Task 9.1 not implemented: double the number\");\n}\n```\n")
    write_source("int twice(int x) {")
    status, out = quiet_run("check", handout, [book])
    if status != 0:
        test.fail("a handout's quote of a solved task should pass:\n" + out)
    write_source("long twice(int x) {")  # the given code changed
    status, out = quiet_run("check", handout, [book])
    if status == 0 or "outside task 9.1" not in out or "run `snippets update`" in out:
        test.fail("a change outside the student's task should fail, without advising update:\n"
                  + out)
    quiet_run("update", handout, [book])
    if "  return y;" in (markers.read_lines(book) or ["  return y;"]):
        test.fail("update copied the student's code into the handout's book")
    os.remove(record)  # the repository: exact
    write_source("int twice(int x) {")
    if quiet_run("check", handout, [book])[0] == 0:
        test.fail("outside a handout, a quote must equal the task's code")


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
