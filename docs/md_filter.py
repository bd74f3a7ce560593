#!/usr/bin/env python3
"""Doxygen input filter for the book's markdown pages (INPUT_FILTER / FILTER_PATTERNS).

The chapters are written for a git forge: GitHub's $...$ and $$...$$ math, links between
README files, figures next to each chapter, footnotes. Doxygen 1.9.4 understands none of
these, so this filter rewrites a page on its way into Doxygen and leaves the file alone:

- $$...$$ becomes \\f[...\\f] and $...$ becomes \\f$...\\f$; code spans and fenced code blocks
  stay untouched, \\$ stays a dollar, and a $ that opens nothing (a price) stays a dollar.
  Straight quotes around a formula become &quot; (Doxygen reads no commands inside quotes).
- A link to another page of the book (../05-rope/README.md) becomes @ref to that page; a link
  to any other file of the repository keeps its text only (the site does not hold the file).
- ![alt](figures/x.png) becomes \\image with the figure's name in the site (prepare_book.py
  copies it there under the same name, so two chapters' attention_shiftk.png do not clash).
- Footnotes ([^name] and their "[^name]: text" lines) become numbered notes at the page's end.
- Every heading gets a label made from the anchor a forge gives it, so that links to
  sections (README.md#4-the-code, #results) work in the site too.
- The page gets its label on its first heading and, when it is a chapter, links to the
  previous and the next chapter.
- A live figure's marker, <!-- live-figure: NAME --> on a line of its own (invisible on a
  forge), becomes the figure's place in the page and loads the live pages' scripts (programs/web/page,
  copied into the site's live/ folder by programs/web/install_live.py): the first marker of a page
  loads the shared ones, each marker its own figures/NAME.js. Its grammar, like every marker's,
  is in base/markers (read through it).

Usage: md_filter.py [--book BOOK.json] FILE   (writes the filtered page to stdout)
BOOK.json: {"root": repo, "pages": [{"path": "chapters/00-autograd/README.md", "label": "ch00",
"title": "...", "chapter": true}, ...]} in reading order.
"""
import argparse
import html
import json
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the repository
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "base"))
from markers import live_figure_name  # noqa: E402

FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})")
PLACEHOLDER = "\x00{}\x00"


# --- code: protect fenced blocks and code spans ------------------------------------------------

def protect_code(text):
    """Returns (text with every code block and code span replaced by a placeholder, the list of
    originals). Inline HTML comments are protected too (the test-command marker)."""
    saved = []

    def keep(s):
        saved.append(s)
        return PLACEHOLDER.format(len(saved) - 1)

    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m:
            fence = m.group(2)
            j = i + 1
            while j < len(lines) and not re.match(r"^ {0,3}" + re.escape(fence[0]) + "{%d,}\\s*$" % len(fence), lines[j]):
                j += 1
            block = "\n".join(lines[i:j + 1])
            out.append(keep(block))
            i = j + 1
            continue
        out.append(lines[i])
        i += 1
    text = "\n".join(out)

    # Code spans: a run of n backticks up to the next run of exactly n backticks.
    result, pos = [], 0
    for m in re.finditer(r"(?<!`)(`+)(?!`)", text):
        if m.start() < pos:
            continue
        n = len(m.group(1))
        close = re.compile(r"(?<!`)`{%d}(?!`)" % n).search(text, m.end())
        if not close or "\n\n" in text[m.end():close.start()]:
            continue
        result.append(text[pos:m.start()])
        result.append(keep(text[m.start():close.end()]))
        pos = close.end()
    result.append(text[pos:])
    text = "".join(result)
    # An inline value's marker is for the results check alone: left in, Doxygen would take the
    # `%` before it for its no-link mark and drop the blank after it ("100on").
    text = re.sub(r"<!--\s*value:.*?-->", "", text, flags=re.S)
    text = re.sub(r"<!--.*?-->", lambda m: keep(m.group(0)), text, flags=re.S)
    return text, saved


def restore_code(text, saved):
    # Placeholders may nest (a comment that holds a code span), so restore until none is left.
    pattern = re.compile("\x00(\\d+)\x00")
    while pattern.search(text):
        text = pattern.sub(lambda m: saved[int(m.group(1))], text)
    return text


# --- math ---------------------------------------------------------------------------------------

def convert_math(text):
    """$$...$$ -> \\f[...\\f], $...$ -> \\f$...\\f$, \\$ and unpaired $ -> \\$ (Doxygen's dollar).
    The text must already have its code protected."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n and text[i + 1] == "$":
            out.append("\\$")
            i += 2
            continue
        if c != "$":
            out.append(c)
            i += 1
            continue
        if text.startswith("$$", i):
            end = find_display_end(text, i + 2)
            if end is not None:
                out.append("\\f[" + text[i + 2:end] + "\\f]")
                i = end + 2
                continue
            out.append("\\$\\$")
            i += 2
            continue
        end = find_inline_end(text, i + 1)
        if end is not None:
            out.append("\\f$" + text[i + 1:end] + "\\f$")
            i = end + 1
            continue
        out.append("\\$")
        i += 1
    return quote_around_math("".join(out))


def quote_around_math(text):
    """Doxygen reads no commands between straight double quotes, so "depends on $q - p$" would
    keep its \\f$ as text: such quotes become &quot;, which Doxygen prints as a quote. Quotes
    pair up in order within a paragraph."""
    paragraphs = text.split("\n\n")
    for k, para in enumerate(paragraphs):
        marks = [m.start() for m in re.finditer('"', para)]
        pieces, last = [], 0
        for a, b in zip(marks[0::2], marks[1::2]):
            if "\\f$" in para[a:b] or "\\f[" in para[a:b]:
                pieces += [para[last:a], "&quot;", para[a + 1:b], "&quot;"]
                last = b + 1
        paragraphs[k] = "".join(pieces) + para[last:]
    return "\n\n".join(paragraphs)


def find_display_end(text, start):
    j = start
    while True:
        j = text.find("$$", j)
        if j < 0:
            return None
        if text[j - 1] == "\\":
            j += 2
            continue
        body = text[start:j]
        if body.strip() and "\n\n" not in body.strip("\n"):
            return j
        return None


def find_inline_end(text, start):
    """GitHub's rule: the opening $ is not followed by a space, the closing $ is not preceded
    by one and not followed by a digit; no blank line inside; $$ never closes an inline span."""
    if start >= len(text) or text[start] in " \t\n$":
        return None
    j = start
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == "\n" and text.startswith("\n", j + 1):
            return None
        if c == "$":
            if text[j - 1] in " \t\n" or text.startswith("$$", j):
                return None
            if j + 1 < len(text) and text[j + 1].isdigit():
                return None
            return j
        j += 1
    return None


# --- links, figures, footnotes ------------------------------------------------------------------

LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")


def figure_name(rel_path):
    """The name a repository figure has in the site: its path with '/' as '_'."""
    return rel_path.replace("/", "_")


def rewrite_links(text, page_rel, book):
    root = book.get("root", "")
    labels = {p["path"]: p["label"] for p in book.get("pages", [])}
    here = os.path.dirname(page_rel)

    def target_of(url):
        path = os.path.normpath(os.path.join(here, url.split("#")[0]))
        return path.replace(os.sep, "/")

    def replace(m):
        bang, label, url = m.groups()
        # Doxygen turns [words](@ref x) into \ref x "words": a line break inside the words would
        # end that quoted string and print the rest of the page as raw text.
        label = re.sub(r"\s*\n\s*", " ", label)
        if url.startswith("#") and page_rel in labels and not bang:
            return "[%s](@ref %s)" % (label, section_label(labels[page_rel], url[1:]))
        if re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I) or url.startswith(("#", "@", "\\")):
            return m.group(0)
        path = target_of(url)
        if bang:
            return '\n\\image html %s "%s"\n' % (figure_name(path), label.replace('"', "'"))
        fragment = url.split("#", 1)[1] if "#" in url else ""
        for candidate in (path, path + "/README.md", path.rstrip("/") + "/README.md"):
            if candidate in labels:
                target = labels[candidate]
                if fragment:
                    target = section_label(target, fragment)
                # Doxygen prints the words of a \ref as they are: *a title* would keep its stars.
                words = re.sub(r"(?<![\w*])(\*{1,2}|_{1,2})(\S(?:.*?\S)?)\1(?![\w*])", r"\2", label)
                return "[%s](@ref %s)" % (words, target)
        return label  # a file the site does not hold: keep the words, drop the link

    del root
    return LINK.sub(replace, text)


def github_slug(heading):
    """The anchor a git forge gives a heading: lower case, punctuation dropped, spaces as '-'."""
    heading = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return heading.replace(" ", "-")


def section_label(page_label, slug):
    """Doxygen's label for a heading of a page, from the heading's forge anchor."""
    return "%s_%s" % (page_label, re.sub(r"[^A-Za-z0-9_]", "_", slug))


def label_sections(text, page_label, saved):
    """Gives every heading below the title the label that a forge link's #anchor maps to
    (section_label of its github_slug), so that ../05-rope/README.md#4-the-code works."""
    lines, seen = text.split("\n"), {}
    for k, line in enumerate(lines):
        m = re.match(r"^(#{2,6})\s+(.*?)\s*$", line)
        if not m or "{#" in line:
            continue
        slug = github_slug(restore_code(m.group(2), saved).replace("`", ""))
        if not slug:
            continue
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        if count:
            slug = "%s-%d" % (slug, count)
        lines[k] = "%s {#%s}" % (line.rstrip(), section_label(page_label, slug))
    return "\n".join(lines)


def convert_footnotes(text, page_label):
    """[^name] -> a numbered superscript; "[^name]: text" (and its indented lines) -> a note at
    the end of the page."""
    lines, body, notes, i = text.split("\n"), [], {}, 0
    while i < len(lines):
        m = re.match(r"^\[\^([^\]]+)\]:\s?(.*)$", lines[i])
        if m:
            name, first = m.groups()
            part = [first]
            i += 1
            while i < len(lines) and (lines[i].startswith("    ") or lines[i].startswith("\t")):
                part.append(lines[i].strip())
                i += 1
            notes[name] = " ".join(p for p in part if p)
            continue
        body.append(lines[i])
        i += 1
    text = "\n".join(body)
    order = []

    def ref(m):
        name = m.group(1)
        if name not in notes:
            return m.group(0)
        if name not in order:
            order.append(name)
        number = order.index(name) + 1
        return '<sup>\\ref %s "%d"</sup>' % (note_anchor(page_label, name), number)

    # The definitions are gone by now, so every [^name] left is a reference (even one that a
    # colon follows, at the end of a sentence that introduces a table).
    text = re.sub(r"\[\^([^\]]+)\]", ref, text)
    if order:
        text = text.rstrip("\n") + "\n\n<hr>\n**Notes**\n\n"
        for number, name in enumerate(order, 1):
            text += "\\anchor %s\n%d. %s\n" % (note_anchor(page_label, name), number, notes[name])
    return text


def note_anchor(page_label, name):
    return "note_%s_%s" % (page_label, re.sub(r"\W", "_", name))


# --- live figures ------------------------------------------------------------------------------

# What every page with a live figure loads once, in order (programs/web/page/README.md says what each
# one does); `defer` runs them after the page is parsed, before its figures start.
LIVE_SHARED = ('<link rel="stylesheet" href="live/live.css"/>\n'
               '<script defer src="live/module.js"></script>\n'
               '<script defer src="live/plots.js"></script>\n'
               '<script defer src="live/live.js"></script>\n'
               '<script defer src="live/training.js"></script>\n')


def live_figures(text, saved):
    """Turns each protected <!-- live-figure: NAME --> that stands on its own line into the
    figure's element and scripts (the shared scripts with the page's first figure)."""
    first = True
    for line in text.split("\n"):
        m = re.match("^\x00(\\d+)\x00$", line.strip())
        if not m:
            continue
        k = int(m.group(1))
        name = live_figure_name(saved[k])
        if not name:
            continue
        saved[k] = ("\\htmlonly\n" + (LIVE_SHARED if first else "") +
                    '<div class="pe-live" id="live-%s" data-figure="%s"></div>\n'
                    '<script defer src="live/figures/%s.js"></script>\n\\endhtmlonly' % (name, name, name))
        first = False


# --- the page as a whole ------------------------------------------------------------------------

def label_title(text, label):
    """Gives the page's first heading the label {#label} (Doxygen's page name)."""
    lines = text.split("\n")
    for k, line in enumerate(lines):
        if line.startswith("# "):
            if "{#" not in line:
                lines[k] = line.rstrip() + " {#%s}" % label
            break
    return "\n".join(lines)


def chapter_navigation(page_rel, book):
    chapters = [p for p in book.get("pages", []) if p.get("chapter")]
    paths = [p["path"] for p in chapters]
    if page_rel not in paths:
        return ""
    k = paths.index(page_rel)
    parts = []
    if k > 0:
        parts.append('\\ref %s "&larr; %s"' % (chapters[k - 1]["label"], chapters[k - 1]["title"]))
    parts.append('\\ref index "Contents"')
    if k + 1 < len(chapters):
        parts.append('\\ref %s "%s &rarr;"' % (chapters[k + 1]["label"], chapters[k + 1]["title"]))
    return "\n\n<div class=\"pe-nav\">" + " | ".join(parts) + "</div>\n"


def table_code_pipes(text, saved):
    """In a table row, a forge writes a pipe inside code as `a\\|b`; Doxygen would print the
    backslash. Such a code span becomes <tt> with \\|, which no cell boundary can take."""
    for line in text.split("\n"):
        if not line.lstrip().startswith("|"):
            continue
        for k in re.findall("\x00(\\d+)\x00", line):
            span = saved[int(k)]
            m = re.match(r"^(`+)\s?(.*?)\s?\1$", span, re.S)
            if m and "\\|" in m.group(2):
                saved[int(k)] = as_tt(m.group(2).replace("\\|", "|"))
    return text


def code_in_headings(text, saved):
    """Doxygen 1.9.4 prints a heading's title as text, so a code span in it would show as
    <tt>...</tt>: there the span keeps its words and loses its backticks."""
    for line in text.split("\n"):
        if re.match(r"^#{1,6}\s", line):
            for k in re.findall("\x00(\\d+)\x00", line):
                m = re.match(r"^(`+)\s?(.*?)\s?\1$", saved[int(k)], re.S)
                if m:
                    saved[int(k)] = m.group(2)


def quoted_code_spans(saved):
    """Doxygen 1.9.4 reads `some words' as a LaTeX-style quote, not as code: a code span of one
    backtick that holds a ' which no letter, digit or _ follows (`'b'`, `-L 'task5\\.'`,
    `σ' = σ (1 - σ)`) would lose its code font and print its backticks. Such a span becomes
    <tt> (as_tt)."""
    for k, span in enumerate(saved):
        m = re.match(r"^`([^`].*?)`$", span, re.S)
        if not m or not re.search(r"'(?!\w)", m.group(1)):
            continue
        saved[k] = as_tt(m.group(1))


def as_tt(code):
    """Code as <tt>, printed by Doxygen 1.9.4 exactly as written: & < > " ~ as the named
    entities Doxygen knows (it knows no numeric ones), and a backslash before every character
    that it would read as a command, an emphasis, a dash or a link (checked by hand)."""
    named = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "~": "&tilde;"}
    return "<tt>%s</tt>" % "".join(named.get(c) or ("\\" + c if c in "\\@*_%#|-$`" else c)
                                    for c in code)


def filter_page(text, page_rel="", book=None):
    book = book or {}
    page = next((p for p in book.get("pages", []) if p["path"] == page_rel), None)
    text, saved = protect_code(text)
    table_code_pipes(text, saved)
    code_in_headings(text, saved)
    quoted_code_spans(saved)
    live_figures(text, saved)
    if page:
        text = label_sections(text, page["label"], saved)
    text = convert_math(text)
    text = rewrite_links(text, page_rel, book)
    if page:
        text = convert_footnotes(text, page["label"])
        if page["label"] != "index":
            text = label_title(text, page["label"])
        nav = chapter_navigation(page_rel, book)
        if nav:
            lines = text.split("\n")
            title_line = next((k for k, l in enumerate(lines) if l.startswith("# ")), -1)
            lines.insert(title_line + 1, nav)
            text = "\n".join(lines).rstrip("\n") + "\n" + nav
    return restore_code(text, saved)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--book", help="the book's page list (JSON)")
    parser.add_argument("file")
    args = parser.parse_args()
    book = {}
    if args.book:
        with open(args.book, encoding="utf-8") as f:
            book = json.load(f)
    with open(args.file, encoding="utf-8") as f:
        text = f.read()
    root = book.get("root")
    page_rel = os.path.relpath(os.path.realpath(args.file), os.path.realpath(root)) if root else ""
    sys.stdout.buffer.write(filter_page(text, page_rel.replace(os.sep, "/"), book).encode("utf-8"))


if __name__ == "__main__":
    main()
