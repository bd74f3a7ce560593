"""Tests of docs/prepare_book.py: pages found by glob in reading order, figures copied under
their site names, and a missing figure stops the build with its name (ctest: Docs.FilterAndPages)."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import prepare_book  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"  # only copied, never decoded


def write(root, path, data):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


class PrepareBook(unittest.TestCase):
    def run_in(self, root):
        out = os.path.join(root, "build")
        sys.argv = ["prepare_book.py", "--root", root, "--out", out]
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = prepare_book.main()
        return status, err.getvalue(), out

    def test_pages_in_order_and_figures_under_their_site_names(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, "README.md", "# Front\n")
            write(root, "chapters/10-later/README.md", "# Chapter 10\n")
            write(root, "chapters/02-two/README.md", "# Chapter 2\n\n![a](figures/a.png)\n")
            write(root, "chapters/02-two/figures/a.png", PNG)
            write(root, "chapters/A-appendix/README.md", "# Appendix A\n")
            write(root, "chapters/03-no-readme/code.hpp", "")
            write(root, "lab/README.md", "# Experiments\n")
            write(root, "docs/coursework/students.md", "# Students\n")
            write(root, "docs/coursework/instructors.md", "# Instructors\n")
            status, err, out = self.run_in(root)
            self.assertEqual(status, 0, err)
            with open(os.path.join(out, "book.json")) as f:
                pages = json.load(f)["pages"]
            self.assertEqual([p["label"] for p in pages],
                             ["index", "ch02", "ch10", "chA", "experiments_bench",
                              "coursework_instructors", "coursework_students"])
            self.assertEqual(pages[-1]["path"], "docs/coursework/students.md")
            self.assertFalse(pages[-1]["chapter"])
            self.assertEqual(pages[1]["title"], "Chapter 2")
            self.assertTrue(os.path.isfile(os.path.join(out, "images", "chapters_02-two_figures_a.png")))

    def test_a_missing_figure_fails_with_its_name(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, "README.md", "# Front\n")
            write(root, "chapters/05-x/README.md", "# Five\n\n![gone](figures/gone.png)\n")
            status, err, _ = self.run_in(root)
            self.assertEqual(status, 1)
            self.assertIn("chapters/05-x/README.md shows chapters/05-x/figures/gone.png", err)

    def test_a_figure_inside_code_is_not_required(self):
        with tempfile.TemporaryDirectory() as root:
            write(root, "README.md", "# Front\n\n```md\n![x](figures/none.png)\n```\n")
            status, err, _ = self.run_in(root)
            self.assertEqual(status, 0, err)


if __name__ == "__main__":
    unittest.main()
