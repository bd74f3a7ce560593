"""Tests of base/markers/tasks.py: the coursework's task markers in the sources."""
import os
import sys
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from markers import MarkerError, find_task_regions, task_marker  # noqa: E402


class Markers(unittest.TestCase):
    def test_begin_with_its_title_and_indent(self):
        m = task_marker("    // TASK 05.3 begin:  rotate the pairs ")
        self.assertEqual((m.task, m.written, m.kind, m.title, m.indent),
                         ("5.3", "05.3", "begin", "rotate the pairs", "    "))

    def test_end_and_a_begin_without_title(self):
        self.assertEqual(task_marker("// TASK 5.3 end of it").kind, "end")
        self.assertIsNone(task_marker("//TASK 5.3 begin").title)

    def test_other_lines_hold_no_marker(self):
        for line in ("int x;  // TASK 5.3 end", "// TASK 5 end", "// TASK 5.3 ending",
                     "// [task]"):
            self.assertIsNone(task_marker(line), line)


SOURCE = ["int f(int x) {", "  // TASK 2.1 begin: double it", "  return 2 * x;",
          "  // TASK 2.1 end", "}", "int g() {", "  // TASK 2.2 begin: one", "  return 1;",
          "  // TASK 2.2 end", "}"]


class Regions(unittest.TestCase):
    def test_regions_in_order_with_their_bodies(self):
        first, second = find_task_regions("a.cpp", SOURCE)
        self.assertEqual((first.task, first.title, first.begin, first.end, first.indent),
                         ("2.1", "double it", 1, 3, "  "))
        self.assertEqual(first.body, ["  return 2 * x;"])
        self.assertEqual((second.task, second.chapter), ("2.2", 2))

    def error(self, lines):
        with self.assertRaises(MarkerError) as caught:
            find_task_regions("a.cpp", lines)
        return str(caught.exception)

    def test_a_region_inside_another(self):
        self.assertEqual(self.error(["// TASK 1.1 begin: a", "// TASK 1.2 begin: b"]),
                         "a.cpp:2: TASK 1.2 begins inside TASK 1.1 (regions cannot nest)")

    def test_an_end_without_its_begin(self):
        self.assertEqual(self.error(["// TASK 1.1 begin: a", "// TASK 1.2 end"]),
                         "a.cpp:2: TASK 1.2 end without its begin")

    def test_a_malformed_marker(self):
        self.assertIn("a.cpp:1: a TASK marker must read", self.error(["// TASK 1.1 begin"]))
        self.assertIn("got: // TASK one", self.error(["  // TASK one"]))

    def test_a_region_never_closed(self):
        self.assertEqual(self.error(["x", "// TASK 1.1 begin: a"]),
                         "a.cpp:2: TASK 1.1 is never closed")


if __name__ == "__main__":
    unittest.main()
