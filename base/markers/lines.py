"""Text files as lines, as every marker reader sees them, and the small rules they share."""

# Bytes that are not UTF-8 survive a read and a write unchanged: a checker that rewrites one
# quote must leave the rest of the file as it was.
_ENCODING = dict(encoding="utf-8", errors="surrogateescape", newline="")


def read_lines(path):
    """The lines of a text file without their line ends (\\n or \\r\\n), or None when the file
    cannot be read. A final line end starts no extra empty line."""
    try:
        with open(path, **_ENCODING) as f:
            text = f.read()
    except OSError:
        return None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def write_lines(path, lines):
    """Writes lines, each ended by \\n; raises OSError when the file cannot be written."""
    with open(path, "w", **_ENCODING) as f:
        f.write("".join(line + "\n" for line in lines))


def trim(text):
    """text without blanks (spaces and tabs) at either end; other characters count as text."""
    return text.strip(" \t")


def split_fields(text, separator):
    """text cut at each separator. An empty last field is dropped ("a,b," is two fields, "" is
    none), so a trailing separator changes nothing."""
    fields = text.split(separator)
    if fields[-1] == "":
        fields.pop()
    return fields


def first_difference(a, b):
    """The index of the first line where a and b differ (the shorter one's length when one
    is the start of the other)."""
    k = 0
    while k < len(a) and k < len(b) and a[k] == b[k]:
        k += 1
    return k


def fence_of(line):
    """The run of backticks that opens a fenced code block on this line, or None. The block
    closes at a line that is exactly that run (blanks around it allowed)."""
    text = trim(line)
    if not text.startswith("```"):
        return None
    return text[:len(text) - len(text.lstrip("`"))]


def closing_fence(lines, fence, start):
    """The index of the first line from start that closes fence, or len(lines) if none does."""
    end = start
    while end < len(lines) and trim(lines[end]) != fence:
        end += 1
    return end


class ShownCode:
    """Follows the fenced code blocks of a markdown file that are not quotes. Such a block may
    show a marker's syntax (a chapter that explains snippets), so what it holds is text: a
    reader asks skips(line) of each line it would otherwise read as a marker, in order."""

    def __init__(self):
        self.fence = None

    def skips(self, line):
        if self.fence is not None:
            if trim(line) == self.fence:
                self.fence = None
            return True
        self.fence = fence_of(line)
        return self.fence is not None


def with_spans_replaced(lines, spans):
    """lines with each span (start, stop, new_lines) put in place of lines[start:stop]; the
    spans must not overlap."""
    out, at = [], 0
    for start, stop, new_lines in sorted(spans, key=lambda span: span[0]):
        out += lines[at:start]
        out += new_lines
        at = stop
    return out + lines[at:]
