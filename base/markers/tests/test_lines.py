"""Tests of base/markers/lines.py: text files as lines, and the code blocks that show syntax."""
import os
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from markers.lines import (ShownCode, first_difference, read_lines, split_fields,  # noqa: E402
                           with_spans_replaced, write_lines)


class ReadAndWrite(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.folder.name, "page.md")

    def tearDown(self):
        self.folder.cleanup()

    def read_bytes(self, data):
        with open(self.path, "wb") as f:
            f.write(data)
        return read_lines(self.path)

    def test_line_ends_go_and_a_final_one_starts_no_line(self):
        self.assertEqual(self.read_bytes(b"a\r\nb\n\n"), ["a", "b", ""])
        self.assertEqual(self.read_bytes(b"a\nb"), ["a", "b"])
        self.assertEqual(self.read_bytes(b""), [])

    def test_a_missing_file_reads_as_none(self):
        self.assertIsNone(read_lines(os.path.join(self.folder.name, "missing.md")))

    def test_bytes_that_are_not_utf8_survive_a_rewrite(self):
        lines = self.read_bytes(b"caf\xe9 \xc3\xa9\n")
        write_lines(self.path, lines)
        with open(self.path, "rb") as f:
            self.assertEqual(f.read(), b"caf\xe9 \xc3\xa9\n")


class SmallRules(unittest.TestCase):
    def test_split_fields_drops_one_empty_last_field(self):
        self.assertEqual(split_fields("a.b", "."), ["a", "b"])
        self.assertEqual(split_fields("a..b.", "."), ["a", "", "b"])
        self.assertEqual(split_fields("", "."), [])

    def test_first_difference(self):
        self.assertEqual(first_difference(["a", "b"], ["a", "c"]), 1)
        self.assertEqual(first_difference(["a"], ["a", "b"]), 1)
        self.assertEqual(first_difference([], []), 0)

    def test_spans_replaced_in_order_of_their_start(self):
        lines = ["0", "1", "2", "3", "4"]
        self.assertEqual(with_spans_replaced(lines, [(3, 4, ["x", "y"]), (0, 2, [])]),
                         ["2", "x", "y", "4"])


class ShownCodeBlocks(unittest.TestCase):
    def skipped(self, lines):
        shown = ShownCode()
        return [shown.skips(line) for line in lines]

    def test_a_block_closes_only_at_its_own_run_of_backticks(self):
        lines = ["a", "  ````md", "```", "<!-- x -->", " ```` ", "b"]
        self.assertEqual(self.skipped(lines), [False, True, True, True, True, False])

    def test_a_fence_with_a_language_does_not_close_a_block(self):
        self.assertEqual(self.skipped(["```", "```cpp", "```", "c"]), [True, True, True, False])


if __name__ == "__main__":
    unittest.main()
