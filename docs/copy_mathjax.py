#!/usr/bin/env python3
"""Copies the part of Debian's MathJax 2 (libjs-mathjax) that the book's pages use into the
site: the loader, the tex2jax finder, TeX input with its AMS extensions, and SVG output with
the TeX font (about 2 MB of the package's 60). docs/header.html configures exactly these;
the browser check fails on any of them that does not load.

Usage: copy_mathjax.py SOURCE DESTINATION  (SOURCE is usually /usr/share/javascript/mathjax)
"""
import os
import shutil
import sys

NEEDED = [
    "MathJax.js",
    "extensions/tex2jax.js",
    "extensions/MathEvents.js",
    "extensions/MathMenu.js",
    "extensions/MathZoom.js",
    "extensions/TeX",
    "jax/input/TeX",
    "jax/element/mml",
    "jax/output/SVG/config.js",
    "jax/output/SVG/jax.js",
    "jax/output/SVG/autoload",
    "jax/output/SVG/fonts/TeX",
]


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    source, destination = sys.argv[1:]
    shutil.rmtree(destination, ignore_errors=True)
    for part in NEEDED:
        src, dst = os.path.join(source, part), os.path.join(destination, part)
        if not os.path.exists(src):
            print("docs: error: MathJax has no %s (is libjs-mathjax installed? "
                  "scripts/install-deps.sh --docs)" % src, file=sys.stderr)
            return 1
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        # Debian's tree holds symbolic links into /usr/share; the site gets real files.
        if os.path.isdir(src):
            shutil.copytree(src, dst, symlinks=False)
        else:
            shutil.copyfile(src, dst)
    return 0


if __name__ == "__main__":
    sys.exit(main())
