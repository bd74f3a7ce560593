"""Tests of base/markers/walk.py: the shell blocks' commands and the walk markers above them."""
import glob
import os
import sys
import unittest

sys.dont_write_bytecode = True
BASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, BASE)
from markers import MarkerError, read_lines  # noqa: E402
from markers.walk import (programs, selects_no_tests, simple_commands, training,  # noqa: E402
                          walk_blocks, words)

ROOT = os.path.join(BASE, "..")


def block(*commands, markers=()):
    return list(markers) + ["```sh"] + list(commands) + ["```"]


def steps(lines):
    blocks, problems = walk_blocks(lines)
    return [(s.command.line, s.action, s.text, s.reason) for b in blocks for s in b.steps], problems


class Words(unittest.TestCase):
    def test_quotes_comments_and_operators(self):
        self.assertEqual(words('a "b c" \'d#e\' f#g # h && i'), ["a", "b c", "d#e", "f#g"])
        self.assertEqual(words("a&&b||c;d|e"), ["a", "&&", "b", "||", "c", ";", "d", "|", "e"])
        self.assertEqual(words("a \\\n  b"), ["a", "b"])
        self.assertEqual(words('grep -E "^SIMD|q/k"'), ["grep", "-E", "^SIMD|q/k"])
        with self.assertRaises(MarkerError):
            words('echo "open')

    def test_redirections_are_no_commands(self):
        self.assertEqual(simple_commands("make 2>&1 > log.txt && ls"), [["make"], ["ls"]])

    def test_programs_of_chains_loops_and_pipes(self):
        self.assertEqual(programs("cmake --preset default && cmake --build --preset default"),
                         ["cmake", "cmake"])
        self.assertEqual(programs("for p in a b; do PE_SIMD=$p build/x --out /tmp/$p | "
                                  'grep -E "y"; done'), ["build/x", "grep"])
        self.assertEqual(programs("build/default/pe train --steps 2"), ["build/default/pe train"])
        self.assertEqual(programs("build/default/pe inspect rope --dim 4"),
                         ["build/default/pe inspect rope"])
        self.assertEqual(programs("build/default/pe eval results/x/checkpoint.agt"),
                         ["build/default/pe eval"])
        self.assertEqual(programs("emcmake cmake --preset wasm"), ["emcmake cmake"])


class Training(unittest.TestCase):
    def test_long_trainings_are_named(self):
        self.assertIn("pe train", training("build/default/pe train -e t5 -t shiftk"))
        self.assertIn("pe train", training("build/default/pe train --steps 3000"))
        self.assertIn("pe table", training("cmake --build x && build/default/pe table --reuse"))
        self.assertIn("ch05_experiment", training("./build/default/chapters/05-rope/"
                                                  "ch05_experiment   # --steps N"))
        self.assertIn("ch09_experiment", training("build/default/ch09_experiment --summary x"))

    def test_short_ones_pass(self):
        for command in ("build/default/pe train --steps 20", "build/default/pe train --steps=200",
                        "build/default/pe table --fast", "build/default/pe table --steps 10",
                        "ch08_experiment --fast", "ch02_experiment --steps 20 --out x",
                        "ch03_experiment --help", "ch00_experiment", "ch01_experiment",
                        "build/default/pe eval x --lengths 32"):
            self.assertIsNone(training(command), command)


class Commands(unittest.TestCase):
    def test_lines_comments_continuations_and_loops(self):
        lines = ["text", "```sh", "# a comment", "a --x   # why", "", "b \\", "  --y",
                 "for p in 1 2; do", "  c $p", "done", "```"]
        found, problems = steps(lines)
        self.assertEqual(problems, [])
        self.assertEqual([(line, text) for line, _, text, _ in found],
                         [(4, "a --x   # why"), (6, "b \\\n  --y"),
                          (8, "for p in 1 2; do\n  c $p\ndone")])

    def test_only_shell_blocks(self):
        found, problems = steps(["```text", "pe train", "```", "```cpp", "x();", "```",
                                 "```bash", "ls", "```"])
        self.assertEqual([text for _, _, text, _ in found], ["ls"])
        self.assertEqual(problems, [])

    def test_a_command_must_end_in_its_block(self):
        for lines in (["```sh", "a \\", "```"], ["```sh", "for x in 1; do", "a", "```"],
                      ["```sh", 'echo "a', "```"]):
            _, problems = steps(lines)
            self.assertEqual(len(problems), 1, lines)
            self.assertIn("does not end", problems[0][1])

    def test_a_quote_over_two_lines_and_a_condition(self):
        found, _ = steps(["```sh", 'echo "a', 'b"', "if true; then", "  a", "fi", "```"])
        self.assertEqual([text for _, _, text, _ in found],
                         ['echo "a\nb"', "if true; then\n  a\nfi"])


class Markers(unittest.TestCase):
    def test_fast_and_skip(self):
        lines = block("cmake --build x", "build/default/pe train -e t5", "ctest -L a",
                      markers=["<!-- walk 2: fast: build/default/pe train -e t5 --steps 20 "
                               "--out build/walk/t5 # 1,500 steps -->",
                               "<!--walk 3:skip: CI runs it-->"])
        found, problems = steps(lines)
        self.assertEqual(problems, [])
        self.assertEqual(found, [
            (4, "run", "cmake --build x", ""),
            (5, "fast", "build/default/pe train -e t5 --steps 20 --out build/walk/t5",
             "1,500 steps"),
            (6, "skip", "", "CI runs it")])

    def test_ranges_all_and_other_markers_between(self):
        lines = block("a", "b", "c", markers=["<!-- walk 1-2: skip: elsewhere -->",
                                              "<!-- walk 3: skip: too -->",
                                              "<!-- test-command: x -->"])
        found, problems = steps(lines)
        self.assertEqual(problems, [])
        self.assertEqual([a for _, a, _, _ in found], ["skip", "skip", "skip"])
        found, problems = steps(block("a", "b", markers=["<!-- walk all: skip: why -->"]))
        self.assertEqual((problems, [a for _, a, _, _ in found]), ([], ["skip", "skip"]))

    def problem(self, lines):
        _, problems = steps(lines)
        self.assertEqual(len(problems), 1, problems)
        return problems[0]

    def test_wrong_markers(self):
        cases = [
            (["<!-- walk 1: run: x -->"], "expected"),
            (["<!-- walk 3: skip: x -->"], "has 2 commands"),
            (["<!-- walk 1-2: fast: a --steps 2 # x -->"], "one command"),
            (["<!-- walk 1: fast: a --steps 2 -->"], "both given"),
            (["<!-- walk 1: fast: a --steps 2 # -->"], "both given"),
            (["<!-- walk 1: skip: -->"], "reason"),
            (["<!-- walk 1: skip: x -->", "<!-- walk 1: skip: y -->"], "already covered"),
            (["<!-- walk 1: fast: b --steps 2 # x -->"], "same programs"),
            (["<!-- walk 1: fast: a && b # x -->"], "same programs"),
            (["<!-- walk 1: fast: a # x -->"], "the command itself"),
        ]
        for markers, words_ in cases:
            line, reason = self.problem(block("a", "b", markers=markers))
            self.assertIn(words_, reason, markers)
            self.assertEqual(line, len(markers), markers)

    def test_a_variant_must_be_fast(self):
        line, reason = self.problem(block("pe train -e x", markers=[
            "<!-- walk 1: fast: pe train -e x --steps 500 # x -->"]))
        self.assertIn("not fast", reason)

    def test_a_marker_stands_above_a_shell_block(self):
        for lines in (["<!-- walk 1: skip: x -->", "text", "```sh", "a", "```"],
                      ["<!-- walk 1: skip: x -->", "```text", "a", "```"],
                      ["<!-- walk 1: skip: x -->"],
                      ["see <!-- walk 1: skip: x -->", "```sh", "a", "```"]):
            self.assertEqual(self.problem(lines)[0], 1, lines)

    def test_an_unmarked_long_training_is_a_problem(self):
        line, reason = self.problem(block("a", "build/default/pe train -e rope"))
        self.assertEqual(line, 3)
        self.assertIn("fast variant or skip it", reason)


class NoTests(unittest.TestCase):
    def test_ctest_selecting_nothing(self):
        self.assertTrue(selects_no_tests("Test project /r\nNo tests were found!!!\n"))
        self.assertTrue(selects_no_tests("Test project /r\n\nTotal Tests: 0\n"))
        self.assertFalse(selects_no_tests("Total Tests: 10\n100% tests passed"))


class TheBook(unittest.TestCase):
    def test_every_shell_block_of_the_book_is_walked(self):
        """Every command of the chapters and README.md runs, or its marker says what instead."""
        files = sorted(glob.glob(os.path.join(ROOT, "chapters", "*", "README.md")))
        files.append(os.path.join(ROOT, "README.md"))
        total = 0
        for path in files:
            blocks, problems = walk_blocks(read_lines(path))
            self.assertEqual(problems, [], path)
            total += sum(len(b.steps) for b in blocks)
        self.assertGreater(total, 50)


if __name__ == "__main__":
    unittest.main()
