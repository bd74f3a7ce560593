#!/usr/bin/env python3
"""Puts the live pages' files into the built book (the docs target runs it after Doxygen).

Copies programs/web/page/ (the runtime, the drawing code, the training panel, one script per figure,
the style sheet) into SITE/live/, and writes SITE/live/module.js: the module of the wasm
build (pe_live.js) and the worker's script, each as a JavaScript string, from which a page
starts its Web Worker (a page opened from file:// may not load a worker's script from a
file). Without the module, module.js says so and each figure shows how to build it.

Usage: install_live.py --site build/default/docs/html [--module build/wasm/programs/web/pe_live.js]
"""
import argparse
import json
import os
import shutil
import sys

PAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "page")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", required=True, help="the built book (docs/html)")
    parser.add_argument("--module", help="pe_live.js of the wasm build (may be missing)")
    args = parser.parse_args()
    live = os.path.join(args.site, "live")
    shutil.rmtree(live, ignore_errors=True)
    shutil.copytree(PAGE, live, ignore=shutil.ignore_patterns("worker.js"))
    with open(os.path.join(PAGE, "worker.js"), encoding="utf-8") as f:
        worker = f.read()
    module = None
    if args.module and os.path.isfile(args.module):
        with open(args.module, encoding="utf-8") as f:
            module = f.read()
    with open(os.path.join(live, "module.js"), "w", encoding="utf-8") as f:
        f.write("// Written by programs/web/install_live.py: the book's WebAssembly module (%s) and the\n"
                "// live pages' worker script, as strings for page/live.js.\n"
                % ("%d bytes" % len(module) if module else "not built"))
        f.write("window.peLiveModuleSource = %s;\n" % (json.dumps(module) if module else "null"))
        f.write("window.peLiveWorkerSource = %s;\n" % json.dumps(worker))
    print("docs: live pages in %s (%s)" % (live, "module %.2f MB" % (len(module) / 1e6) if module
                                           else "no module: build the wasm preset for live figures"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
