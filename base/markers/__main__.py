"""python3 -m markers test-command FILE: prints the command after FILE's test-command marker
(.ci/run runs it), or fails with status 1 when FILE has none. Run with base/ on PYTHONPATH."""
import sys

from . import read_lines, test_command


def main(argv):
    if len(argv) != 2 or argv[0] != "test-command":
        print("usage: python3 -m markers test-command FILE", file=sys.stderr)
        return 2
    lines = read_lines(argv[1])
    command = test_command(lines) if lines is not None else None
    if command is None:
        print(f"markers: {argv[1]} has no line after a '<!-- test-command' marker",
              file=sys.stderr)
        return 1
    print(command)
    return 0


sys.exit(main(sys.argv[1:]))
