#!/usr/bin/env python3
"""snippets: keeps the book's text in sync with its code.

A chapter quotes a region of a source file (`<!-- snippet: path#region -->` before a fenced
block; the region between two `// [region]` lines). The grammar, and how a handout's tasks
are the student's code, is in base/markers (its header is the reference); this program
checks the quotes of markdown files against their sources, or rewrites them.

    snippets.py check  <repo-root> <markdown files...>   report every quote that differs
    snippets.py update <repo-root> <markdown files...>   rewrite the quotes from the sources
    snippets.py selftest <testdata-dir> <scratch-dir>    the checker's own test
                                                         (snippets_selftest.py)

Exit status: 0 when every quote matches (or was updated), 1 when some quote is wrong or
cannot be resolved, 2 on a usage error.
"""
import os
import sys

from checker import Problem, markers, report

USAGE = ("usage: snippets check <repo-root> <markdown files...>\n"
         "       snippets update <repo-root> <markdown files...>\n"
         "       snippets selftest <testdata-dir> <scratch-dir>\n")


def process(root, md_name, update, problems, log):
    """Checks (and, with update, rewrites) the quotes of one markdown file; adds what is wrong
    to problems and returns the number of quotes."""
    md = markers.read_lines(md_name)
    if md is None:
        problems.append(Problem(md_name, 0, "cannot open the markdown file"))
        return 0
    student = markers.student_tasks(root)
    quotes, malformed = markers.find_quotes(md)
    problems += [Problem(md_name, line, reason) for line, reason in malformed]
    replacements = []
    for quote in quotes:
        line = quote.comment + 1
        try:
            region = read_region(root, quote, student)
        except markers.MarkerError as e:
            problems.append(Problem(md_name, line, str(e)))
            continue
        block = markers.quoted_lines(md, quote)
        if block == region.lines:
            continue
        if region.student_task:
            # The student's task: its lines are theirs; the code around it must be the book's.
            if not markers.matches_around_tasks(block, region.parts):
                problems.append(Problem(md_name, line, outside_task(quote, region)))
        elif update:
            replacements.append((quote, region.lines))
            print(f"{md_name}:{line}: updated {quote.target}", file=log)
        else:
            problems.append(Problem(md_name, line, differs(quote, block, region.lines)))
    if replacements:
        try:
            markers.write_lines(md_name, markers.with_quotes_replaced(md, replacements))
        except OSError:
            problems.append(Problem(md_name, 0, "could not write the updated file"))
    return len(quotes)


def read_region(root, quote, student):
    source = markers.read_lines(os.path.join(root, quote.file))
    if source is None:
        raise markers.MarkerError(f"cannot open source file {quote.file}")
    return markers.source_region(source, quote.file, quote.name, student)


def outside_task(quote, region):
    return (f"quote of {quote.target} differs from the source outside task "
            f"{region.student_task} (the code around the task is given and quoted by the book): "
            "undo the change there; `snippets update` leaves this quote alone, as it holds "
            "your code")


def differs(quote, block, lines):
    k = markers.first_difference(block, lines)
    sizes = (f" (block has {len(block)} lines, source region {len(lines)})"
             if len(block) != len(lines) else "")
    return (f"quote of {quote.target} differs from the source at line {k + 1} of the block"
            f"{sizes}; run `snippets update` or fix the text")


def run(mode, root, files, log=sys.stdout, errors=sys.stderr):
    problems = []
    count = sum(process(root, f, mode == "update", problems, log) for f in files)
    problems.sort(key=lambda p: (p.file, p.line))  # stable: a line's problems keep their order
    return report("snippets", mode, count, files, problems, log, errors)


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(USAGE)
        return 2
    mode, root, rest = argv[0], argv[1], argv[2:]
    try:
        if mode == "selftest":
            if len(rest) != 1:
                sys.stderr.write(USAGE)
                return 2
            import snippets_selftest
            return snippets_selftest.selftest(root, rest[0])
        if mode not in ("check", "update"):
            sys.stderr.write(f"snippets: unknown mode '{mode}'\n" + USAGE)
            return 2
        if not os.path.isdir(root):
            print(f"snippets: repo root '{root}' is not a directory", file=sys.stderr)
            return 2
        return run(mode, root, rest)
    except (OSError, ValueError) as e:
        print(f"snippets: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
