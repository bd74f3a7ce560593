#!/usr/bin/env python3
"""Doxygen input filter for the public headers (FILTER_PATTERNS *.hpp): Doxygen ends a brief
description at the first '.' followed by a space, so the book's ranges and dot products,
"positions offset .. offset+T-1" and "q . k", would cut a brief in the middle. In doc comments
(///), the space after a '..' that stands alone becomes a no-break space (U+00A0), which looks
the same and ends no brief (a '..' at the end of a line gets one before the line break), and a
lone '.' between spaces, the book's dot product, becomes the middle dot '·' (Doxygen would
also take it for the end of a list).
The file keeps its lines, so Doxygen's line numbers stay right; the code is not touched.

Usage: header_filter.py FILE   (writes the filtered header to stdout)
"""
import re
import sys

DOC = re.compile(r"^(\s*///|.*?;\s*///<)(.*)$")
RANGE = re.compile(r"(?<=\s)\.\.(?: |$)")
DOT_PRODUCT = re.compile(r"(?<=\s)\.(?= )")


def filter_header(text):
    out = []
    for line in text.split("\n"):
        m = DOC.match(line)
        if m:
            doc = RANGE.sub("..\u00a0", m.group(2))
            line = m.group(1) + DOT_PRODUCT.sub("\u00b7", doc)
        out.append(line)
    return "\n".join(out)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        sys.stdout.buffer.write(filter_header(f.read()).encode("utf-8"))
