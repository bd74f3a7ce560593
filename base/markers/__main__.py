"""python3 -m markers COMMAND ...   (run with base/ on PYTHONPATH)

    test-command FILE      prints the command after FILE's test-command marker (.ci/run runs
                           it), or fails with status 1 when FILE has none
    test-labels FILE...    prints "Suite.Name label,label" for each marked test of the C++
                           files (cmake/TestLabels.cmake), or fails with status 1 naming a
                           malformed marker's file and line
"""
import sys

from . import MarkerError, find_test_markers, read_lines, test_command

USAGE = "usage: python3 -m markers test-command FILE | test-labels FILE..."


def print_test_command(path):
    lines = read_lines(path)
    command = test_command(lines) if lines is not None else None
    if command is None:
        print(f"markers: {path} has no line after a '<!-- test-command' marker", file=sys.stderr)
        return 1
    print(command)
    return 0


def print_test_labels(paths):
    for path in paths:
        lines = read_lines(path)
        if lines is None:
            print(f"markers: cannot read {path}", file=sys.stderr)
            return 1
        try:
            for marker in find_test_markers(path, lines):
                print(marker.test, ",".join(marker.labels()))
        except MarkerError as e:
            print(f"markers: {e}", file=sys.stderr)
            return 1
    return 0


def main(argv):
    if len(argv) == 2 and argv[0] == "test-command":
        return print_test_command(argv[1])
    if len(argv) >= 2 and argv[0] == "test-labels":
        return print_test_labels(argv[1:])
    print(USAGE, file=sys.stderr)
    return 2


sys.exit(main(sys.argv[1:]))
