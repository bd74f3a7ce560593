"""Tests of base/markers/results.py: results blocks and inline values, and what they name."""
import json
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from markers import (MarkerError, ResultsBlock, Summaries, block_lines, format_number,  # noqa: E402
                     scan_results, value_of, value_shown_as)

PAGE = """<!-- results: results/summary.json#output -->
```text
a 0.5<!-- value: x -->
```
ShiftK 99.8%<!-- value: runs.a -->, or -3<!-- value: s.json#b -->.
```md
1.0<!-- value: shown -->
```
<!-- results: t.json#table?rows=a -->
| a |
<!-- /results -->
<!-- results: output -->
```text
never closed
<!-- results: after -->""".split("\n")


class Scan(unittest.TestCase):
    def test_blocks_and_values_in_order(self):
        items = list(scan_results(PAGE))
        kinds = ["block" if isinstance(i, ResultsBlock) else "value" for i in items]
        self.assertEqual(kinds, ["block", "value", "value", "block", "block"])
        first, a, b, table, last = items
        self.assertEqual((first.first, first.end, first.fenced, first.closed), (2, 3, True, True))
        self.assertEqual((a.line, a.start, a.written, a.percent, a.target),
                         (4, 7, "99.8", True, "runs.a"))
        self.assertEqual((b.written, b.percent, b.target), ("-3", False, "s.json#b"))
        self.assertEqual((table.target, table.first, table.end, table.fenced),
                         ("t.json#table?rows=a", 9, 10, False))
        self.assertEqual((last.marker, last.closed), (11, False))  # and nothing after it

    def test_a_target_with_a_bracketed_key(self):
        value, = scan_results(["at 64: 0.25<!-- value: means.[none (1 layer)].[acc. at 64] -->."])
        self.assertEqual((value.written, value.target),
                         ("0.25", "means.[none (1 layer)].[acc. at 64]"))

    def test_a_table_block_without_its_end_marker(self):
        block, = scan_results(["<!-- results: t#x -->", "| a |"])
        self.assertEqual((block.fenced, block.closed, block.end), (False, False, 2))


SUMMARY = {
    "output": ["line 1", "line 2", "line 3"],
    "text": "one\ntwo\n",
    "table": ["| name | n |", "|---|---|", "| a | 1 |", "| b | 2 |", "| c | 3 |"],
    "runs": {"a": {"accuracy": 0.9976, "by": [[0.25, 0.641]]}, "0": {"n": 7}},
    "flag": True, "mixed": ["a", 1],
    "speeds": ["  softmax      64x1x32x32        0.049         1.225    24.8x",
               "R^2 (-3.5e-07),"],
    "means": {"none (1 layer)": {"acc. at 64": 0.25}, "a?b#c": {"x": 3},
              "text lines": ["one", "two"]},
}


class Targets(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        os.makedirs(os.path.join(self.folder.name, "results"))
        with open(os.path.join(self.folder.name, "results", "summary.json"), "w") as f:
            json.dump(SUMMARY, f)
        with open(os.path.join(self.folder.name, "broken.json"), "w") as f:
            f.write("{")
        for name, commit in (("dirty.json", "ad98539-dirty"), ("clean.json", "ad98539")):
            with open(os.path.join(self.folder.name, name), "w") as f:
                json.dump({"versions": {"git_commit": commit}, "x": 1}, f)
        self.summaries = Summaries()

    def tearDown(self):
        self.folder.cleanup()

    def lines(self, target):
        return block_lines(target, self.folder.name, self.summaries)

    def value(self, target):
        return value_of(target, self.folder.name, self.summaries)

    def error(self, read, target):
        with self.assertRaises(MarkerError) as caught:
            read(target)
        return str(caught.exception)

    def test_lines_from_a_list_or_a_text(self):
        self.assertEqual(self.lines("results/summary.json#output"), SUMMARY["output"])
        self.assertEqual(self.lines("text"), ["one", "two"])

    def test_options(self):
        self.assertEqual(self.lines("output?lines=2-3"), ["line 2", "line 3"])
        self.assertEqual(self.lines("table?rows=c,a"), SUMMARY["table"][:3] + ["| c | 3 |"])
        # in the order of their names: lines (of the whole table), then rows
        self.assertEqual(self.lines("table?rows=b,c&lines=1-4"),
                         SUMMARY["table"][:2] + ["| b | 2 |"])

    def test_a_summary_from_uncommitted_sources_is_not_quoted(self):
        self.assertEqual(self.value("clean.json#x"), 1)
        self.assertIn("comes from sources with uncommitted changes (versions.git_commit "
                      "ad98539-dirty)", self.error(self.value, "dirty.json#x"))

    def test_keys_walk_objects_then_arrays(self):
        self.assertEqual(self.value("runs.a.by.0.1"), 0.641)
        self.assertEqual(self.value("runs.0.n"), 7.0)

    def test_a_key_with_blanks_or_dots_in_brackets(self):
        self.assertEqual(self.value("means.[none (1 layer)].[acc. at 64]"), 0.25)
        self.assertEqual(self.value("results/summary.json#means.[a?b#c].x"), 3.0)
        self.assertEqual(self.lines("means.[text lines]?lines=2-2"), ["two"])
        self.assertIn("a bracketed key part is a whole part",
                      self.error(self.value, "means.x[none (1 layer)]"))

    def test_what_a_target_cannot_name(self):
        self.assertEqual(self.error(self.lines, "outputs"), "the summary has no 'outputs'")
        self.assertEqual(self.error(self.value, "runs.a.by.0.2"),
                         "the summary has no '2' in 'runs.a.by.0'")
        self.assertIn("cannot open the summary", self.error(self.lines, "missing.json#x"))
        self.assertIn("is not valid JSON", self.error(self.lines, "broken.json#x"))
        self.assertEqual(self.error(self.lines, "x.json#"),
                         "expected path/to/summary.json#key, got 'x.json#'")
        self.assertEqual(self.error(self.lines, "output?lines"), "option 'lines' is not name=value")
        self.assertEqual(self.error(self.lines, "output?columns=2"),
                         "unknown option 'columns' (known: rows, lines)")
        self.assertEqual(self.error(self.lines, "output?lines=2-4"),
                         "lines=2-4 is not a range within the 3 lines of 'output'")
        self.assertEqual(self.error(self.lines, "table?rows=z"), "no row of 'table' starts with z")
        self.assertEqual(self.error(self.lines, "mixed"), "'mixed' is not a list of lines")
        self.assertEqual(self.error(self.lines, "runs"),
                         "'runs' is neither text nor a list of lines")
        self.assertEqual(self.error(self.value, "flag"), "'flag' is not a number")
        self.assertEqual(self.error(self.value, "runs.a.accuracy?x=1"),
                         "unknown option 'x' for a value (known: word)")
        self.assertEqual(self.error(self.value, "output.1"),
                         "'output.1' is a line of text: name the word that holds the number "
                         "(?word=N)")
        self.assertEqual(self.error(self.value, "output.1?word=3"),
                         "word=3 is not a word of 'output.1' (it has 2 words)")
        self.assertEqual(self.error(self.value, "output.1?word=1"),
                         "word 1 of 'output.1' holds no number ('line')")
        self.assertEqual(self.error(self.value, "runs.a.accuracy?word=1"),
                         "'runs.a.accuracy' is not a line of text: word= takes a word of a line")

    def test_a_number_in_a_printed_line(self):
        self.assertEqual(self.value("output.1?word=2"), 2.0)
        self.assertEqual(self.value("speeds.0?word=5"), 24.8)
        self.assertEqual(self.value("speeds.0?word=3"), 0.049)
        self.assertEqual(self.value("speeds.1?word=2"), -3.5e-07)


class Numbers(unittest.TestCase):
    def test_rounded_to_the_decimals_written(self):
        self.assertEqual(value_shown_as(0.9976, "99.8", True), (True, "99.8"))
        self.assertEqual(value_shown_as(0.9976, "99.76", True), (True, "99.76"))
        self.assertEqual(value_shown_as(0.9976, "100", True), (True, "100"))
        self.assertEqual(value_shown_as(0.641, "0.65", False), (False, "0.64"))

    def test_half_way_goes_either_way(self):
        self.assertTrue(value_shown_as(0.205, "0.21", False)[0])
        self.assertTrue(value_shown_as(0.205, "0.20", False)[0])

    def test_with_an_exponent(self):
        self.assertEqual(value_shown_as(3.576e-7, "3.58e-7", False), (True, "3.58e-7"))
        self.assertEqual(value_shown_as(3.576e-7, "3.6e-7", False), (True, "3.6e-7"))
        self.assertEqual(value_shown_as(3.576e-7, "3.57e-7", False), (False, "3.58e-7"))
        self.assertEqual(value_shown_as(3.576e-7, "3.58e-6", False), (False, "3.58e-7"))
        self.assertEqual(value_shown_as(9.4e-10, "9e-10", False), (True, "9e-10"))
        self.assertEqual(value_shown_as(0.0125, "1.25e0", True), (True, "1.25e0"))
        value, = scan_results(["about 5e-11<!-- value: d.x -->, then"])
        self.assertEqual(value.written, "5e-11")

    def test_thousands_grouped_by_commas(self):
        self.assertEqual(value_shown_as(2294273, "2,294,273", False), (True, "2,294,273"))
        self.assertEqual(value_shown_as(2294274, "2,294,273", False), (False, "2,294,274"))
        self.assertEqual(value_shown_as(15134.4, "15,134.4", False), (True, "15,134.4"))
        value, = scan_results(["(2,294,273<!-- value: c.n --> characters)"])
        self.assertEqual(value.written, "2,294,273")
        value, = scan_results(["lengths 32,64,128<!-- value: c.n -->"])  # a list, not 32,064
        self.assertEqual(value.written, "128")

    def test_no_negative_zero(self):
        self.assertEqual(format_number(-0.004, 2), "0.00")
        self.assertEqual(format_number(-0.006, 2), "-0.01")


if __name__ == "__main__":
    unittest.main()
