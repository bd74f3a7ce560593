#!/usr/bin/env python3
"""results: keeps the numbers the book quotes equal to the runs that produced them.

Every chapter's experiment writes a summary (lab/summary.hpp), committed beside the chapter as
results/summary.json. The text quotes it in results blocks (`<!-- results: file.json#key -->`
before a fenced block, or before table lines up to `<!-- /results -->`) and inline values (a
number followed at once by `<!-- value: file.json#a.b.c -->`). The grammar of both, their
options and the rounding rule of a value are in base/markers (its header is the reference);
this program checks the quotes of markdown files against the summaries, or rewrites them.

    results.py check  <markdown files...>        report every quote that differs
    results.py update <markdown files...>        rewrite the quotes from the summaries
    results.py import-table <table.md> <table.json> <out.json>
                                                 the summary of a `pe table` run, for the text
    results.py selftest <testdata-dir> <scratch-dir>   the checker's own test (results_selftest.py)

Exit status: 0 when every quote matches (or was updated), 1 when some quote is wrong or
cannot be resolved, 2 on a usage error.
"""
import json
import os
import sys

from checker import Problem, markers, report

USAGE = ("usage: results check <markdown files...>\n"
         "       results update <markdown files...>\n"
         "       results import-table <table.md> <table.json> <out.json>\n"
         "       results selftest <testdata-dir> <scratch-dir>\n")


def process(md_name, update, summaries, problems, log):
    """Checks (and, with update, rewrites) the quotes of one markdown file; adds what is wrong
    to problems and returns the number of quotes."""
    md = markers.read_lines(md_name)
    if md is None:
        problems.append(Problem(md_name, 0, "cannot open the markdown file"))
        return 0
    folder = os.path.dirname(md_name)
    count, blocks, values = 0, [], {}  # values: line index -> [(value, number as it should read)]
    for item in markers.scan_results(md):
        count += 1
        at = (item.marker if isinstance(item, markers.ResultsBlock) else item.line) + 1
        try:
            if isinstance(item, markers.ResultsBlock):
                new_lines = check_block(md, item, folder, summaries, update)
                if new_lines is not None:
                    blocks.append((item.first, item.end, new_lines))
                    print(f"{md_name}:{at}: updated {item.target}", file=log)
            else:
                expected = check_value(item, folder, summaries, update)
                if expected is not None:
                    values.setdefault(item.line, []).append((item, expected))
                    print(f"{md_name}:{at}: updated {item.written} to {expected} "
                          f"({item.target})", file=log)
        except markers.MarkerError as e:
            problems.append(Problem(md_name, at, str(e)))
    if blocks or values:
        edits = blocks + [(i, i + 1, [with_numbers(md[i], vs)]) for i, vs in values.items()]
        try:
            markers.write_lines(md_name, markers.with_spans_replaced(md, edits))
        except OSError:
            problems.append(Problem(md_name, 0, "could not write the updated file"))
    return count


def check_block(md, block, folder, summaries, update):
    """The block's new lines when update should rewrite it, else None; raises MarkerError for
    a block that differs (in a check) or cannot be resolved."""
    if not block.closed:
        raise markers.MarkerError("the code block after the marker is never closed" if block.fenced
                                  else "no <!-- /results --> after the marker")
    quoted = md[block.first:block.end]
    expected = markers.block_lines(block.target, folder, summaries)
    if quoted == expected:
        return None
    if update:
        return expected
    k = markers.first_difference(quoted, expected)
    text = f": text '{quoted[k]}'" if k < len(quoted) else ""
    summary = f", summary '{expected[k]}'" if k < len(expected) else ""
    raise markers.MarkerError(f"block {block.target} differs from its summary at line {k + 1} "
                              f"of the block{text}{summary}; run `results update` or fix the "
                              "summary")


def check_value(value, folder, summaries, update):
    """The number as it should read when update should rewrite it, else None; raises
    MarkerError for a number that differs (in a check) or cannot be resolved."""
    shown, expected = markers.value_shown_as(markers.value_of(value.target, folder, summaries),
                                             value.written, value.percent)
    if shown:
        return None
    if update:
        return expected
    percent = "%" if value.percent else ""
    raise markers.MarkerError(f"the text says {value.written}{percent}, the summary "
                              f"{expected}{percent} ({value.target}); run `results update` or "
                              "fix the summary")


def with_numbers(line, values):
    """line with each value's number replaced (from the right, so that positions hold)."""
    for value, number in sorted(values, key=lambda v: -v[0].start):
        line = line[:value.start] + number + line[value.start + len(value.written):]
    return line


def run(mode, files, log=sys.stdout, errors=sys.stderr):
    problems, summaries = [], markers.Summaries()
    count = sum(process(f, mode == "update", summaries, problems, log) for f in files)
    return report("results", mode, count, files, problems, log, errors)


def import_table(md_path, json_path, out_path):
    """The summary of a `pe table` run: its markdown table as lines, and its rows and versions
    (keys sorted, one space of indent)."""
    table = markers.read_lines(md_path)
    if table is None:
        print(f"results: cannot read {md_path}", file=sys.stderr)
        return 1
    try:
        with open(json_path, encoding="utf-8") as f:
            rows = json.load(f)
    except OSError:
        print(f"results: cannot read {json_path}", file=sys.stderr)
        return 1
    summary = {"experiment": "pe table", "table": table}
    if isinstance(rows, dict):
        summary.update({field: rows[field] for field in ("versions", "rows") if field in rows})
    try:
        with open(out_path, "w", encoding="utf-8") as f:
            f.write(json.dumps(summary, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    except OSError:
        print(f"results: cannot write {out_path}", file=sys.stderr)
        return 1
    print(f"wrote {out_path}")
    return 0


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(USAGE)
        return 2
    mode, rest = argv[0], argv[1:]
    try:
        if mode == "selftest":
            if len(rest) != 2:
                sys.stderr.write(USAGE)
                return 2
            import results_selftest
            return results_selftest.selftest(*rest)
        if mode == "import-table":
            if len(rest) != 3:
                sys.stderr.write(USAGE)
                return 2
            return import_table(*rest)
        if mode not in ("check", "update"):
            sys.stderr.write(f"results: unknown mode '{mode}'\n" + USAGE)
            return 2
        return run(mode, rest)
    except (OSError, ValueError) as e:
        print(f"results: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
