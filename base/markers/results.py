"""Results: the book's quotes of its runs' summaries (JSON), as blocks and as inline values.

    <!-- results: results/summary.json#output?lines=1-2 -->    before a fenced block
    <!-- results: ../../lab/results/table.json#table?rows=rope -->   before table lines, then
    <!-- /results -->
    99.8%<!-- value: runs.shiftk.accuracy -->                    right after a number
"""
import json
import math
import os
import re
from dataclasses import dataclass

from .errors import MarkerError
from .lines import ShownCode, closing_fence, fence_of, split_fields, trim

# A target has no blanks, except inside a bracketed key part ("[none (1 layer)]").
_TARGET = r"((?:[^\s\[\]]|\[[^\]\n]*\])+)"
_BLOCK = re.compile(r"^\s*<!--\s*results:\s*" + _TARGET + r"\s*-->\s*$", re.A)
_BLOCK_END = re.compile(r"^\s*<!--\s*/results\s*-->\s*$", re.A)
_VALUE = re.compile(r"(-?(?:(?<![0-9,])[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?)(%?)<!--\s*value:\s*" + _TARGET + r"\s*-->", re.A)

# The summary a target without a path names: the one beside the markdown file.
DEFAULT_SUMMARY = "results/summary.json"


# --- finding the markers --------------------------------------------------------------------

@dataclass
class ResultsBlock:
    marker: int    # index of the <!-- results: --> line
    target: str
    first: int     # the quoted lines are lines[first:end]
    end: int       # index of the closing fence or the end marker (len(lines) when missing)
    fenced: bool   # a fenced code block, or lines up to <!-- /results -->
    closed: bool


@dataclass
class Value:
    line: int      # index of the line that holds it
    start: int     # where the number starts in the line
    written: str   # the number as the text writes it, without its %
    percent: bool
    target: str


def scan_results(lines):
    """The results blocks and inline values of a markdown file's lines, in order. A block
    that is never closed is the last item: what follows it is taken to be its lines."""
    shown = ShownCode()
    i = 0
    while i < len(lines):
        line = lines[i]
        if shown.skips(line):
            i += 1
            continue
        m = _BLOCK.match(line)
        if m:
            block = _block_after(lines, i, m.group(1))
            yield block
            if not block.closed:
                return
            i = block.end + 1
            continue
        for v in _VALUE.finditer(line):
            yield Value(i, v.start(), v.group(1), v.group(2) == "%", v.group(3))
        i += 1


def _block_after(lines, marker, target):
    fence = fence_of(lines[marker + 1]) if marker + 1 < len(lines) else None
    if fence:
        first = marker + 2
        end = closing_fence(lines, fence, first)
    else:
        first = end = marker + 1
        while end < len(lines) and not _BLOCK_END.match(lines[end]):
            end += 1
    return ResultsBlock(marker, target, first, end, fence is not None, end < len(lines))


# --- what a target names --------------------------------------------------------------------

class Summaries:
    """The summaries read so far, by path; one that cannot be read keeps its reason."""

    def __init__(self):
        self._read = {}

    def get(self, path):
        path = os.path.normpath(path)
        if path not in self._read:
            self._read[path] = _read_summary(path)
        summary = self._read[path]
        if isinstance(summary, MarkerError):
            raise summary
        return summary


def _read_summary(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return MarkerError(f"cannot open the summary {path}")
    try:
        summary = json.loads(text)
    except ValueError as e:
        return MarkerError(f"the summary {path} is not valid JSON ({e})")
    # A run records the commit of its sources as it starts, "-dirty" when they had uncommitted
    # changes: such numbers cannot be traced to any commit, so the book does not quote them.
    versions = summary.get("versions") if isinstance(summary, dict) else None
    commit = versions.get("git_commit", "") if isinstance(versions, dict) else ""
    if isinstance(commit, str) and commit.endswith("-dirty"):
        return MarkerError(f"the summary {path} comes from sources with uncommitted changes "
                           f"(versions.git_commit {commit}): rerun it from a committed tree")
    return summary


@dataclass
class _Target:
    file: str      # the summary's path, joined to the markdown file's folder
    key: str
    options: dict


def _outside_brackets(text, char):
    """Where char first stands outside a [bracketed] part of text, or -1."""
    depth = 0
    for i, c in enumerate(text):
        if c == "[":
            depth += 1
        elif c == "]":
            depth = max(0, depth - 1)
        elif c == char and depth == 0:
            return i
    return -1


def _key_parts(key):
    """A key's parts: split at the dots outside brackets; a bracketed part loses its brackets
    ("means.[none (1 layer)].accuracy" is means, none (1 layer), accuracy)."""
    parts, at = [], 0
    while True:
        dot = _outside_brackets(key[at:], ".")
        part = key[at:] if dot < 0 else key[at:at + dot]
        if part.startswith("[") and part.endswith("]") and len(part) >= 2:
            part = part[1:-1]
        elif "[" in part or "]" in part:
            raise MarkerError(f"'{part}' in '{key}': a bracketed key part is a whole part, "
                              f"between dots")
        parts.append(part)
        if dot < 0:
            return parts
        at += dot + 1


def _parse_target(text, folder):
    rest, options = text, {}
    question = _outside_brackets(rest, "?")
    if question >= 0:
        rest, listed = rest[:question], rest[question + 1:]
        for option in split_fields(listed, "&"):
            if "=" not in option:
                raise MarkerError(f"option '{option}' is not name=value")
            name, value = option.split("=", 1)
            options[name] = value
    hash_at = _outside_brackets(rest, "#")
    file, key = (rest[:hash_at], rest[hash_at + 1:]) if hash_at >= 0 else (DEFAULT_SUMMARY, rest)
    if not file or not key:
        raise MarkerError(f"expected path/to/summary.json#key, got '{text}'")
    return _Target(os.path.join(folder, file), key, options)


def _walk(summary, key):
    """summary[key] for a dotted key ("runs.shiftk.by_offset.0.0.4"); a part in brackets may
    hold blanks and dots ("means.shiftk.[none (1 layer)].accuracy")."""
    at, done = summary, []
    for part in _key_parts(key):
        if isinstance(at, dict) and part in at:
            at = at[part]
        elif isinstance(at, list) and re.fullmatch("[0-9]+", part) and int(part) < len(at):
            at = at[int(part)]
        else:
            within = f" in '{'.'.join(done)}'" if done else ""
            raise MarkerError(f"the summary has no '{part}'{within}")
        done.append(part)
    return at


def block_lines(target, folder, summaries):
    """The lines a block's target names (folder: the markdown file's), its options applied.
    Raises MarkerError with the reason when there are none."""
    t = _parse_target(target, folder)
    value = _walk(summaries.get(t.file), t.key)
    if isinstance(value, str):
        lines = split_fields(value, "\n")
    elif isinstance(value, list):
        if not all(isinstance(line, str) for line in value):
            raise MarkerError(f"'{t.key}' is not a list of lines")
        lines = list(value)
    else:
        raise MarkerError(f"'{t.key}' is neither text nor a list of lines")
    for name in sorted(t.options):
        if name not in _OPTIONS:
            raise MarkerError(f"unknown option '{name}' (known: rows, lines)")
        lines = _OPTIONS[name](lines, t.options[name], t.key)
    return lines


def _rows(lines, option, key):
    """A markdown table's header and rule, and the rows whose first cell is named."""
    names = set(split_fields(option, ","))
    kept = [line for i, line in enumerate(lines)
            if i < 2 or _first_cell(line) in names]
    if len(kept) <= 2:
        raise MarkerError(f"no row of '{key}' starts with {option}")
    return kept


def _first_cell(row):
    cells = split_fields(row, "|")
    return trim(cells[1]) if len(cells) > 1 else None


def _line_range(lines, option, key):
    """Lines first to last, counted from 1, both kept."""
    bounds = [re.match(r"\s*\+?([0-9]+)", part) for part in split_fields(option, "-")]
    first, last = (int(b.group(1)) for b in bounds) if len(bounds) == 2 and all(bounds) else (0, 0)
    if first < 1 or last < first or last > len(lines):
        raise MarkerError(f"lines={option} is not a range within the {len(lines)} lines "
                          f"of '{key}'")
    return lines[first - 1:last]


_OPTIONS = {"rows": _rows, "lines": _line_range}


def value_of(target, folder, summaries):
    """The number an inline value's target names; raises MarkerError with the reason. A target
    that leads to a line of text (a printed line) takes the option word=N: the number in its
    N-th blank-separated word (1-based), so that a number the run printed but did not record
    by name can still be tied."""
    t = _parse_target(target, folder)
    unknown = sorted(set(t.options) - {"word"})
    if unknown:
        raise MarkerError(f"unknown option '{unknown[0]}' for a value (known: word)")
    value = _walk(summaries.get(t.file), t.key)
    if isinstance(value, str):
        if "word" not in t.options:
            raise MarkerError(f"'{t.key}' is a line of text: name the word that holds the "
                              f"number (?word=N)")
        return _number_in_word(value, t.options["word"], t.key)
    if "word" in t.options:
        raise MarkerError(f"'{t.key}' is not a line of text: word= takes a word of a line")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MarkerError(f"'{target}' is not a number")
    return float(value)


_NUMBER = re.compile(r"[-+]?[0-9]*\.?[0-9]+(?:e[-+]?[0-9]+)?", re.A)


def _number_in_word(line, option, key):
    """The number in the option-th word of line (its first number: "24.8x" is 24.8)."""
    words = line.split()
    if not re.fullmatch("[0-9]+", option) or not 1 <= int(option) <= len(words):
        raise MarkerError(f"word={option} is not a word of '{key}' (it has {len(words)} words)")
    word = words[int(option) - 1]
    m = _NUMBER.search(word)
    if not m:
        raise MarkerError(f"word {option} of '{key}' holds no number ('{word}')")
    return float(m.group(0))


# --- comparing a number with its value --------------------------------------------------------

def format_number(value, decimals):
    """value with that many decimals, rounded to nearest; never "-0.00"."""
    text = f"{value:.{decimals}f}"
    if text.startswith("-") and not text.strip("-0."):
        text = text[1:]
    return text


def format_scientific(value, decimals):
    """value as 3.58e-7: that many decimals in the mantissa, the exponent without zeros."""
    mantissa, exponent = f"{value:.{decimals}e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def value_shown_as(value, written, percent):
    """(whether the text's number `written` shows value, the number as it should read). It
    does when the value rounds to it, or lies within half a unit of its last digit: a value
    half-way between two roundings (0.205, quoted as 0.21) may go either way. A number written
    with an exponent (3.58e-7) is compared in the same way, digit for digit of its mantissa."""
    if "e" in written:
        mantissa, exponent = written.split("e")
        decimals = len(mantissa) - mantissa.index(".") - 1 if "." in mantissa else 0
        shown = value * (100.0 if percent else 1.0)
        expected = format_scientific(shown, decimals)
        unit = math.pow(10.0, int(exponent) - decimals)
        close = math.fabs(shown - float(written)) <= 0.5 * unit * (1 + 1e-9)
        return expected == written or close, expected
    grouped = "," in written  # 2,294,273: thousands grouped by commas
    written = written.replace(",", "")
    decimals = len(written) - written.index(".") - 1 if "." in written else 0
    shown = value * (100.0 if percent else 1.0)
    expected = format_number(shown, decimals)
    close = math.fabs(shown - float(written)) <= 0.5 * math.pow(10.0, -decimals) + 1e-9
    if grouped:
        whole, dot, fraction = expected.partition(".")
        sign = "-" if whole.startswith("-") else ""
        expected = f"{sign}{int(whole.lstrip('-')):,}{dot}{fraction}"
    return expected == written or close, expected
