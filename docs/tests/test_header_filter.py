"""Tests of docs/header_filter.py (ctest: Docs.FilterAndPages)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from header_filter import filter_header  # noqa: E402


class HeaderFilter(unittest.TestCase):
    def test_ranges_and_dot_products_do_not_end_a_brief(self):
        self.assertEqual(filter_header("/// x at positions offset .. offset+T-1 -> [B, T, C]."),
                         "/// x at positions offset ..\u00a0offset+T-1 -> [B, T, C].")
        self.assertEqual(filter_header("  /// scores = q . k / sqrt(D)"), "  /// scores = q \u00b7 k / sqrt(D)")
        self.assertEqual(filter_header("/// for r = 0 ..\n/// length-1"), "/// for r = 0 ..\u00a0\n/// length-1")

    def test_trailing_doc_comments_too(self):
        self.assertEqual(filter_header("  int a;  ///< rows 0 .. n-1"), "  int a;  ///< rows 0 ..\u00a0n-1")

    def test_sentence_ends_code_and_plain_comments_stay(self):
        for line in ("/// First sentence. Second one.", "x = a .. b;  // not a doc comment",
                     "// rows 0 .. n-1", "/// 1.5 and e.g. this", "/// 0..n-1"):
            self.assertEqual(filter_header(line), line)

    def test_line_count_is_kept(self):
        text = "a\n/// b .. c\n\nd\n"
        self.assertEqual(filter_header(text).count("\n"), text.count("\n"))


if __name__ == "__main__":
    unittest.main()
