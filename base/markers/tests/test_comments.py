"""Tests of base/markers/comments.py: test-command, live-figure and expect-error markers."""
import os
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True
BASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, BASE)
from markers import expected_errors, live_figure_name, read_lines, test_command  # noqa: E402

README = os.path.join(BASE, "..", "README.md")


class TestCommand(unittest.TestCase):
    def test_the_line_after_the_marker_and_its_fence(self):
        lines = ["a", "<!-- test-command: CI runs it -->", "```sh", "make test", "```"]
        self.assertEqual(test_command(lines), "make test")
        self.assertIsNone(test_command(["<!-- test-command -->", "```"]))
        self.assertIsNone(test_command(["make test"]))

    def test_the_readme_gives_ci_its_command(self):
        """.ci/run runs what `python3 -m markers test-command README.md` prints."""
        out = subprocess.run([sys.executable, "-B", "-m", "markers", "test-command", README],
                             capture_output=True, text=True, cwd=BASE,
                             env=dict(os.environ, PYTHONPATH=BASE))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(out.stdout.strip(), test_command(read_lines(README)))
        self.assertIn("ctest", out.stdout)


class LiveFigure(unittest.TestCase):
    def test_only_a_whole_comment_is_a_marker(self):
        self.assertEqual(live_figure_name("<!-- live-figure: rope_planes -->"), "rope_planes")
        self.assertEqual(live_figure_name("<!--live-figure:t5-->"), "t5")
        self.assertIsNone(live_figure_name("<!-- live-figure: Big -->"))
        self.assertIsNone(live_figure_name("see <!-- live-figure: t5 -->"))


class ExpectError(unittest.TestCase):
    def test_the_words_for_the_next_line(self):
        lines = ["<!-- expect-error: occurs 0 times -->", "<!-- snippet: a#b -->",
                 " <!-- expect-error: no <!-- /results --> after the marker --> ", "x",
                 "<!-- expect-error: at the end -->"]
        self.assertEqual(expected_errors(lines),
                         {2: "occurs 0 times", 4: "no <!-- /results --> after the marker"})


if __name__ == "__main__":
    unittest.main()
