"""Tests of base/markers/snippets.py: the book's quotes of its sources, on both sides."""
import json
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from markers import (HANDOUT_RECORD, MarkerError, find_quotes, matches_around_tasks,  # noqa: E402
                     quoted_lines, source_region, student_tasks, with_quotes_replaced)

SOURCE = """struct Counter {
  // [outer]
  int count = 0;   
  // [inner]
  void bump() { ++count; }
  // [inner]

  // [outer]
};
// [task]
int twice(int x) {
  // TASK 9.1 begin: double the number
  return 2 * x;
  // TASK 9.1 end
}
// [task]
// [tail]
int thrice(int x) {
  // TASK 9.2 begin: triple it
  return 3 * x;
  // TASK 9.2 end
// [tail]
// [once]""".split("\n")


class SourceRegions(unittest.TestCase):
    def test_other_markers_go_and_the_common_indent_too(self):
        self.assertEqual(source_region(SOURCE, "c.cpp", "outer").lines,
                         ["int count = 0;", "void bump() { ++count; }", ""])

    def test_task_markers_are_left_out(self):
        region = source_region(SOURCE, "c.cpp", "task")
        self.assertEqual(region.lines, ["int twice(int x) {", "  return 2 * x;", "}"])
        self.assertEqual((region.parts, region.student_task), ([region.lines], None))

    def test_a_students_task_cuts_the_region_into_parts(self):
        region = source_region(SOURCE, "c.cpp", "task", ["9.1"])
        self.assertEqual(region.student_task, "9.1")
        self.assertEqual(region.parts, [["int twice(int x) {"], ["}"]])
        tail = source_region(SOURCE, "c.cpp", "tail", ["9.2"])  # a task that ends the region
        self.assertTrue(matches_around_tasks(["int thrice(int x) {", "  ok;", "}"], tail.parts))
        self.assertFalse(matches_around_tasks(["int twice(int x) {", "  ok;"], tail.parts))

    def error(self, name):
        with self.assertRaises(MarkerError) as caught:
            source_region(SOURCE + ["// [empty]", "// [empty]"], "c.cpp", name)
        return str(caught.exception)

    def test_a_region_needs_exactly_two_markers_and_a_line(self):
        self.assertEqual(self.error("once"), "marker '// [once]' occurs 1 times in c.cpp "
                                             "(expected 2: before and after the region)")
        self.assertIn("occurs 0 times", self.error("none"))
        self.assertEqual(self.error("empty"), "marker '// [empty]' in c.cpp encloses no lines")


PYTHON_SOURCE = """def twice(x):
    # [twice]
    y = 2 * x  # [not a marker: text follows it]
    # [inner]
    return y
    # [inner]
    # [twice]
x = {"key": 1}  // [twice]""".split("\n")


class PythonRegions(unittest.TestCase):
    def test_a_python_source_marks_regions_with_its_own_comment(self):
        self.assertEqual(source_region(PYTHON_SOURCE, "model.py", "twice").lines,
                         ["y = 2 * x  # [not a marker: text follows it]", "return y"])

    def test_the_other_languages_comment_is_no_marker(self):
        with self.assertRaises(MarkerError) as caught:
            source_region(PYTHON_SOURCE, "model.cpp", "twice")
        self.assertEqual(str(caught.exception), "marker '// [twice]' occurs 1 times in model.cpp "
                                                "(expected 2: before and after the region)")
        with self.assertRaises(MarkerError) as caught:
            source_region(SOURCE, "c.py", "outer")
        self.assertIn("marker '# [outer]' occurs 0 times in c.py", str(caught.exception))


class AroundTasks(unittest.TestCase):
    PARTS = [["a"], ["m"], ["z"]]

    def test_anything_between_the_parts(self):
        self.assertTrue(matches_around_tasks(["a", "x", "m", "y", "y", "z"], self.PARTS))
        self.assertTrue(matches_around_tasks(["a", "m", "z"], self.PARTS))

    def test_parts_in_order_and_nothing_outside(self):
        self.assertFalse(matches_around_tasks(["a", "n", "m", "z"], [["a"], ["m"], ["n"], ["z"]]))
        self.assertFalse(matches_around_tasks(["b", "a", "m", "z"], self.PARTS))
        self.assertFalse(matches_around_tasks(["a", "m", "z", "end"], self.PARTS))
        self.assertFalse(matches_around_tasks(["a"], [["a"], ["a"]]))

    def test_one_part_is_exact(self):
        self.assertTrue(matches_around_tasks(["a"], [["a"]]))
        self.assertFalse(matches_around_tasks(["a", "b"], [["a"]]))


PAGE = """# A page
<!-- snippet: c.cpp#task -->
```cpp
int twice(int x) {  
```
````md
<!-- snippet: c.cpp#shown -->
```cpp
````
<!-- snippet: c.cpp -->
<!-- snippet: #task -->
<!-- snippet: c.cpp# -->
<!-- snippet: c.cpp#late -->

```cpp
```
<!-- snippet: c.cpp#open -->
```cpp
x""".split("\n")


class Quotes(unittest.TestCase):
    def test_quotes_and_malformed_ones(self):
        quotes, problems = find_quotes(PAGE)
        self.assertEqual([(q.comment, q.open, q.close, q.target) for q in quotes],
                         [(1, 2, 4, "c.cpp#task")])
        self.assertEqual(quoted_lines(PAGE, quotes[0]), ["int twice(int x) {"])
        self.assertEqual([line for line, _ in problems], [10, 11, 12, 13, 17])
        self.assertEqual(problems[0][1],
                         "expected <!-- snippet: path/to/file#marker -->, got 'c.cpp'")
        self.assertIn("followed at once by a ```cpp code block", problems[3][1])
        self.assertIn("is never closed", problems[4][1])

    def test_a_quote_rewritten(self):
        quotes, _ = find_quotes(PAGE)
        out = with_quotes_replaced(PAGE, [(quotes[0], ["a", "b"])])
        self.assertEqual(out[:6], ["# A page", "<!-- snippet: c.cpp#task -->", "```cpp", "a",
                                   "b", "```"])
        self.assertEqual(out[6:], PAGE[5:])


class HandoutRecord(unittest.TestCase):
    def test_the_record_names_the_students_tasks(self):
        with tempfile.TemporaryDirectory() as root:
            self.assertEqual(student_tasks(root), [])
            record = os.path.join(root, HANDOUT_RECORD)
            os.makedirs(os.path.dirname(record))
            with open(record, "w") as f:
                json.dump({"chapters": [5], "tasks": ["5.1", "5.2"]}, f)
            self.assertEqual(student_tasks(root), ["5.1", "5.2"])
            with open(record, "w") as f:
                f.write("{not json")
            self.assertEqual(student_tasks(root), [])


if __name__ == "__main__":
    unittest.main()
