#!/usr/bin/env python3
"""Collects the book's pages and figures before Doxygen runs (the `docs` target calls it).

Writes into OUT:
- book.json: the pages in reading order (the top README, chapters/NN-*/README.md by number,
  the appendices chapters/A-*/README.md, lab/README.md, then the coursework pages
  docs/coursework/*.md) for md_filter.py;
- pages.doxy: Doxygen's INPUT for those pages, included by the Doxyfile;
- images/: every figure a page shows (![...](figures/x.png)), under the name md_filter.py
  gives it. A figure that a page names and that does not exist stops the build with its name.

The chapters are found by glob each time the target runs, so a chapter merged later, or one
that is missing, needs no change here.
"""
import argparse
import glob
import json
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from md_filter import LINK, figure_name, protect_code  # noqa: E402


def chapter_pages(root):
    numbered = sorted(glob.glob(os.path.join(root, "chapters", "[0-9][0-9]-*", "README.md")))
    appendices = sorted(glob.glob(os.path.join(root, "chapters", "[A-Z]-*", "README.md")))
    return numbered + appendices


def title_of(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("# "):
                return re.sub(r"\s*\{#[^}]*\}\s*$", "", line[2:].strip())
    return os.path.basename(os.path.dirname(path))


def book_pages(root):
    pages = [{"path": "README.md", "label": "index", "title": title_of(os.path.join(root, "README.md")),
              "chapter": False}]
    for path in chapter_pages(root):
        folder = os.path.basename(os.path.dirname(path))
        label = "ch" + folder.split("-")[0]
        pages.append({"path": os.path.relpath(path, root).replace(os.sep, "/"), "label": label,
                      "title": title_of(path), "chapter": True})
    experiments = os.path.join(root, "lab", "README.md")
    if os.path.exists(experiments):
        pages.append({"path": "lab/README.md", "label": "experiments_bench",
                      "title": title_of(experiments), "chapter": False})
    for path in coursework_pages(root):
        name = os.path.splitext(os.path.basename(path))[0]
        pages.append({"path": os.path.relpath(path, root).replace(os.sep, "/"),
                      "label": "coursework_" + re.sub(r"\W", "_", name),
                      "title": title_of(path), "chapter": False})
    return pages


def coursework_pages(root):
    """docs/coursework/*.md by name: instructors.md (which introduces the course) before
    students.md."""
    return sorted(glob.glob(os.path.join(root, "docs", "coursework", "*.md")))


def header_folders(root):
    folders = [os.path.join(root, "docs", "namespaces.dox"), os.path.join(root, "ag")]
    folders += [os.path.dirname(p) for p in sorted(glob.glob(os.path.join(root, "chapters", "*", "*.hpp")))]
    folders.append(os.path.join(root, "lab"))
    return list(dict.fromkeys(folders))


def figures_of(root, page):
    """The repository paths of the images that a page shows (outside code)."""
    with open(os.path.join(root, page), encoding="utf-8") as f:
        text, _ = protect_code(f.read())
    here = os.path.dirname(page)
    for m in LINK.finditer(text):
        bang, _, url = m.groups()
        if bang and not re.match(r"^[a-z][a-z0-9+.-]*:", url, re.I):
            yield os.path.normpath(os.path.join(here, url)).replace(os.sep, "/")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True, help="the repository")
    parser.add_argument("--out", required=True, help="the docs build folder")
    args = parser.parse_args()
    root, out = os.path.abspath(args.root), os.path.abspath(args.out)
    pages = book_pages(root)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "book.json"), "w", encoding="utf-8") as f:
        json.dump({"root": root, "pages": pages}, f, indent=1)
    with open(os.path.join(out, "pages.doxy"), "w", encoding="utf-8") as f:
        f.write("# written by docs/prepare_book.py: the book's pages in reading order\n")
        for p in pages:
            f.write('INPUT += "%s"\n' % os.path.join(root, p["path"]))
        # The public headers, after the pages: the framework's, each chapter's, the bench's.
        for folder in header_folders(root):
            f.write('INPUT += "%s"\n' % folder)
            if os.path.isdir(folder):  # a class page shows #include "rope.hpp", not a full path
                f.write('STRIP_FROM_INC_PATH += "%s"\n' % folder)

    images = os.path.join(out, "images")
    shutil.rmtree(images, ignore_errors=True)
    os.makedirs(images)
    missing = []
    for p in pages:
        for figure in figures_of(root, p["path"]):
            source = os.path.join(root, figure)
            if not os.path.isfile(source):
                missing.append("%s shows %s, which does not exist" % (p["path"], figure))
                continue
            shutil.copyfile(source, os.path.join(images, figure_name(figure)))
    for m in missing:
        print("docs: error: " + m, file=sys.stderr)
    if missing:
        return 1
    print("docs: %d pages, %d figures" % (len(pages), len(os.listdir(images))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
