"""Tests of base/markers/test_labels.py: the markers that label tests by task and chapter."""
import os
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
BASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, BASE)
from markers import MarkerError, find_test_markers  # noqa: E402

SOURCE = """#include <gtest/gtest.h>
// grades: task 5.3
TEST(Ch05Rope, RotationPreservesNorm) {}

// grades: task 0.2, task 05.4
// chapter: 08
TYPED_TEST(Softmax,
           BackwardMatches) {}

TEST(Unmarked, Test) {}
// chapter: 08
TEST_F(DISABLED_Fixture, DISABLED_Slow) {}
""".split("\n")


class Markers(unittest.TestCase):
    def test_tasks_chapters_and_names(self):
        found = find_test_markers("t.cpp", SOURCE)
        self.assertEqual([m.test for m in found], ["Ch05Rope.RotationPreservesNorm",
                                                   "Softmax.BackwardMatches", "Fixture.Slow"])
        self.assertEqual([m.line for m in found], [2, 5, 11])
        self.assertEqual(found[0].labels(), ["task5.3", "ch05"])
        self.assertEqual(found[1].tasks, ["0.2", "5.4"])
        self.assertEqual(found[1].labels(), ["task0.2", "ch00", "task5.4", "ch05", "ch08"])
        self.assertEqual(found[2].labels(), ["ch08"])

    def error(self, lines):
        with self.assertRaises(MarkerError) as caught:
            find_test_markers("t.cpp", lines)
        return str(caught.exception)

    def test_what_is_refused(self):
        self.assertEqual(self.error(["// grades: 5.3", "TEST(A, B) {}"]),
                         "t.cpp:1: a grades marker reads '// grades: task 5.3' or "
                         "'// grades: task 0.2, task 0.4'")
        self.assertEqual(self.error(["// chapter: 8", "TEST(A, B) {}"]),
                         "t.cpp:1: a chapter marker reads '// chapter: 08'")
        self.assertIn("t.cpp:1: this test marker is not followed by a test: TEST",
                      self.error(["// grades: task 1.1", "", "TEST(A, B) {}"]))
        self.assertEqual(self.error(["x", "// grades: task 1.1"]),
                         "t.cpp:2: this test marker is not followed by a test")
        self.assertEqual(self.error(["// grades: task 1.1", "TEST(A) {}"]),
                         "t.cpp:1: the test below this marker is not written TEST(Suite, Name)")

    def test_the_command_cmake_runs(self):
        with tempfile.TemporaryDirectory() as folder:
            good, bad = os.path.join(folder, "good.cpp"), os.path.join(folder, "bad.cpp")
            with open(good, "w") as f:
                f.write("\n".join(SOURCE))
            with open(bad, "w") as f:
                f.write("// grades: task 1\nTEST(A, B) {}\n")
            run = lambda *paths: subprocess.run(  # noqa: E731
                [sys.executable, "-B", "-m", "markers", "test-labels", *paths], cwd=BASE,
                capture_output=True, text=True)
            done = run(good)
            self.assertEqual((done.returncode, done.stdout.split("\n")[:2]),
                             (0, ["Ch05Rope.RotationPreservesNorm task5.3,ch05",
                                  "Softmax.BackwardMatches task0.2,ch00,task5.4,ch05,ch08"]))
            failed = run(good, bad)
            self.assertEqual(failed.returncode, 1)
            self.assertIn(f"{bad}:1: a grades marker reads", failed.stderr)


if __name__ == "__main__":
    unittest.main()
