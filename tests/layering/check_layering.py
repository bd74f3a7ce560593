#!/usr/bin/env python3
"""The layering test: every include line and every link goes down the layers, never up.

The layers, from the ground up (README.md, "The house"):

  1 framework   ag/              the autograd library and its kernels
  2 base        base/            what every program shares
  3 chapter N   chapters/NN-*/   a chapter's library: the framework, base, chapters <= N
  4 lab         lab/             the experiment bench: chapters 0 and 1 only
  5 program N   chapters/NN-*/experiment.cpp and what only it uses (ch08_training): the lab
                                 and chapters <= N
  6 programs    programs/        pe, the live pages, benchmarks, fuzz targets, checkers
  7 tests       */tests/         anything but a later chapter

A target or file may use its own layer and the layers below, and a chapter only chapters up to
its own number. ag/src and ag/kernels are private to the framework. Test-only code
(ch01_testing, GoogleTest) is never linked into a shipped program.

    check_layering.py check --source DIR --build DIR   a configured build, with CMake's
                                                       file API codemodel reply
    check_layering.py configure --source DIR --build DIR [--last N] [--settings FILE]
        [--generator G] [--cxx CXX]                    configures chapters 0..N (without
                                                       --last, every chapter), then checks
    check_layering.py selftest --source DIR --build DIR   copies the sources, adds an upward
                                                       include and an upward link, and expects
                                                       both to be caught

Exit status 0 when every edge goes down, 1 with one line per violation, naming both ends.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

FRAMEWORK, BASE, CHAPTER, LAB, CHAPTER_PROGRAM, PROGRAMS, TESTS = 1, 2, 3, 4, 5, 6, 7
LAYER_NAMES = {FRAMEWORK: "the framework", BASE: "base", CHAPTER: "chapter {}'s library",
               LAB: "the lab", CHAPTER_PROGRAM: "chapter {}'s program", PROGRAMS: "the programs",
               TESTS: "tests"}
# Appendix C's worked example is a chapter 99 (chapters/99-yours), a number no chapter of the
# book will take.
EXAMPLE_CHAPTER = 99
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
CPP = (".cpp", ".hpp", ".h", ".cc")


class Place:
    """Where a target or file sits: its layer, and its chapter when it has one."""

    def __init__(self, layer, chapter=None):
        self.layer, self.chapter = layer, chapter

    def __str__(self):
        text = LAYER_NAMES[self.layer]
        if self.layer == CHAPTER_PROGRAM and self.chapter is None:
            return "an appendix's program"
        if "{}" in text:
            return text.format(self.chapter)
        if self.layer == TESTS and self.chapter is not None:
            return f"chapter {self.chapter}'s tests"
        return text


def may_use(user, used):
    """None when `user` may depend on `used`, else why not."""
    if used.layer > user.layer:
        return f"{user} may not use {used} (a higher layer)"
    if used.chapter is not None and user.chapter is not None and used.chapter > user.chapter:
        return f"{user} may not use a later chapter"
    return None


def place_of_target(name):
    """The place of a CMake target, by the naming rules of the build (README.md, "The house").
    A target that fits no rule is an error: a new kind of target must be given a layer here."""
    if m := re.fullmatch(r"ch(\d\d)_(tests|testing)", name):
        return Place(TESTS, int(m.group(1)))
    if name.endswith("_tests") or name.startswith("test_"):
        return Place(TESTS, EXAMPLE_CHAPTER if name.startswith("appendixC") else None)
    if name in ("ag", "ag_kernels") or name.startswith("ag_kernels_"):
        return Place(FRAMEWORK)
    if name.startswith("base_"):
        return Place(BASE)
    if m := re.fullmatch(r"ch(\d\d)", name):
        return Place(CHAPTER, int(m.group(1)))
    if name.startswith("lab_"):
        return Place(LAB, 1)
    if m := re.fullmatch(r"ch(\d\d)_(experiment|training)", name):
        return Place(CHAPTER_PROGRAM, int(m.group(1)))
    if name == "appendixC_yours":  # appendix C's worked example
        return Place(CHAPTER, EXAMPLE_CHAPTER)
    if name == "appendixC_yours_experiment":
        return Place(CHAPTER_PROGRAM, EXAMPLE_CHAPTER)
    if name == "chA_experiment":
        return Place(CHAPTER_PROGRAM)
    # live_stream_native: the native twin of pe_live's chapter 12 figure (programs/web)
    if name in ("pe", "pe_live", "live_stream_native") or name.startswith(("bench_", "fuzz_")):
        return Place(PROGRAMS)
    if name in ("gtest", "gtest_main", "gmock", "gmock_main"):  # GoogleTest built from source
        return Place(TESTS)
    return None


def place_by_folder(path):
    """The place of a file that no target of this build compiles, by its folder."""
    parts = path.split("/")
    if "tests" in parts[:-1]:
        m = re.match(r"(\d\d)-", parts[1]) if parts[0] == "chapters" else None
        return Place(TESTS, int(m.group(1)) if m else None)
    if parts[0] == "ag":
        return Place(FRAMEWORK)
    if parts[0] == "base":
        return Place(BASE)
    if parts[0] == "lab":
        return Place(LAB, 1)
    if parts[0] == "programs":
        return Place(PROGRAMS)
    if parts[0] == "chapters":
        m = re.match(r"(\d\d)-", parts[1])
        if not m:
            return Place(CHAPTER_PROGRAM)  # the appendices' programs
        number = int(m.group(1))
        if parts[-1] == "experiment.cpp":
            return Place(CHAPTER_PROGRAM, number)
        return Place(CHAPTER, number)
    return Place(TESTS)


def read_codemodel(build):
    """{target name: (sources relative to the source tree, dependency names, link text)}."""
    reply = os.path.join(build, ".cmake", "api", "v1", "reply")
    indexes = sorted(glob.glob(os.path.join(reply, "index-*.json")))
    if not indexes:
        sys.exit(f"check_layering: no CMake file API reply in {build} (configure with a "
                 "codemodel-v2 query first: the 'configure' command does)")
    index = json.load(open(indexes[-1]))
    model = next(o for o in index["objects"] if o["kind"] == "codemodel")
    codemodel = json.load(open(os.path.join(reply, model["jsonFile"])))
    listed = codemodel["configurations"][0]["targets"]
    names = {t["id"]: t["name"] for t in listed}
    targets = {}
    for entry in listed:
        target = json.load(open(os.path.join(reply, entry["jsonFile"])))
        sources = [s["path"] for s in target.get("sources", []) if not os.path.isabs(s["path"])]
        depends = [names[d["id"]] for d in target.get("dependencies", []) if d["id"] in names]
        link = " ".join(f["fragment"] for f in target.get("link", {}).get("commandFragments", []))
        if target.get("type") == "UTILITY":
            continue  # a custom command (the book, the fuzz run): it compiles and links nothing
        targets[target["name"]] = (sources, depends, link)
    return targets


def is_ours(path):
    """A source of this repository, not of a dependency fetched into the build folder."""
    return not os.path.isabs(path) and not path.startswith(("build/", "_deps/"))


def check_links(targets):
    problems = []
    for name, (sources, depends, link) in sorted(targets.items()):
        user = place_of_target(name)
        if user is None and not any(is_ours(path) for path in sources):
            continue  # a dependency built from its release (CMake's FetchContent)
        if user is None:
            problems.append(f"target {name}: no layer for it (tests/layering/check_layering.py, "
                            "place_of_target)")
            continue
        for other in depends:
            used = place_of_target(other)
            if used is None:
                continue  # reported as a target of its own
            why = may_use(user, used)
            if why:
                problems.append(f"target {name} links {other}: {why}")
        if user.layer < TESTS and re.search(r"\bgtest|libgtest|gmock", link):
            problems.append(f"target {name} links GoogleTest: test-only code in {user}")
    return problems


def tracked_cpp_files(source):
    listed = subprocess.run(["git", "ls-files"], cwd=source, capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout:
        files = listed.stdout.split()
    else:  # a copy without .git (the selftest's): every file
        files = [os.path.relpath(os.path.join(d, f), source).replace(os.sep, "/")
                 for d, _, names in os.walk(source) for f in names]
    return [f for f in files if f.endswith(CPP) and not f.startswith("build/")
            and os.path.isfile(os.path.join(source, f))]


def chapter_of_file(path):
    m = re.match(r"chapters/(\d\d)-", path)
    return int(m.group(1)) if m else None


def file_places(files, targets):
    """Each file's place: a source takes the lowest target that compiles it; a header the place
    of the source beside it with its stem (lengths.hpp: lengths.cpp's target); else its folder."""
    compiled = {}
    for name, (sources, _, _) in targets.items():
        place = place_of_target(name)
        for path in sources:
            if place and (path not in compiled or place.layer < compiled[path].layer):
                compiled[path] = place
    places = {}
    for path in files:
        if path in compiled:
            places[path] = compiled[path]
            continue
        stem = os.path.splitext(path)[0]
        twin = next((stem + ext for ext in (".cpp", ".cc") if stem + ext in compiled), None)
        places[path] = compiled[twin] if twin else place_by_folder(path)
    return places


# The framework's insides: ag/src is the framework's alone; the kernels' entry points
# (ag/kernels) are also called directly by what measures them, appendix A and the benchmarks.
KERNEL_MEASURERS = ("ag/", "chapters/A-performance/", "programs/bench/")


def is_private(header):
    return header.startswith(("ag/src/", "ag/kernels/"))


def may_include_private(path, header):
    return path.startswith("ag/") or (header.startswith("ag/kernels/") and
                                      path.startswith(KERNEL_MEASURERS))


def check_includes(source, files, places):
    problems = []
    for path in sorted(files):
        user = places[path]
        with open(os.path.join(source, path), encoding="utf-8", errors="replace") as text:
            for number, line in enumerate(text, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                header = m.group(1)
                where = f"{path}:{number}"
                if header not in places:
                    if not os.path.isfile(os.path.join(source, header)):
                        problems.append(f"{where}: #include \"{header}\" is not a path from the "
                                        "repository's root (write the header's folder: "
                                        "\"lab/run.hpp\")")
                    continue
                if is_private(header) and not may_include_private(path, header):
                    problems.append(f"{where} ({user}) includes {header}: private to the "
                                    "framework" + ("" if header.startswith("ag/src/") else
                                                   " and the programs that measure its kernels"))
                    continue
                why = may_use(user, places[header])
                if why:
                    problems.append(f"{where} ({user}) includes {header} ({places[header]}): {why}")
    return problems


def check(source, build):
    targets = read_codemodel(build)
    # The files of the chapters this configuration builds (-DPE_LAST_CHAPTER, resolved by
    # cmake/Chapters.cmake); a later chapter's files are checked by the configuration that
    # builds them.
    cache = open(os.path.join(build, "CMakeCache.txt")).read()
    last = int(re.search(r"^PE_LAST_BUILT_CHAPTER:\w+=(\d+)$", cache, re.M).group(1))
    files = [f for f in tracked_cpp_files(source) if (chapter_of_file(f) or 0) <= last]
    problems = check_links(targets) + check_includes(source, files, file_places(files, targets))
    for problem in problems:
        print(f"layering: {problem}")
    print(f"layering: {len(targets)} targets and {len(files)} files checked, "
          f"{len(problems)} violations")
    return 1 if problems else 0


def configure(source, build, last, settings=None, generator=None, cxx=None):
    query = os.path.join(build, ".cmake", "api", "v1", "query")
    os.makedirs(query, exist_ok=True)
    open(os.path.join(query, "codemodel-v2"), "w").close()
    command = ["cmake", "-S", source, "-B", build, f"-DPE_LAST_CHAPTER={last}"]
    if generator:
        command += ["-G", generator]
    if cxx:
        command.append(f"-DCMAKE_CXX_COMPILER={cxx}")
    if settings:
        command += ["-C", settings]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        print(f"layering: configuring chapters 0..{last or 'the last'} failed:\n{done.stdout}{done.stderr}")
        return 1
    return check(source, build)


def selftest(source, build, **how):
    """An upward include (chapter 5's library includes the lab) and an upward link (chapter 5's
    library links the lab) in a copy of the sources: both must be reported."""
    copy = os.path.join(build, "source")
    shutil.rmtree(copy, ignore_errors=True)
    listed = subprocess.run(["git", "ls-files"], cwd=source, capture_output=True, text=True)
    for path in listed.stdout.split():
        if os.path.isfile(os.path.join(source, path)):
            os.makedirs(os.path.dirname(os.path.join(copy, path)) or copy, exist_ok=True)
            shutil.copy2(os.path.join(source, path), os.path.join(copy, path))
    rope = os.path.join(copy, "chapters", "05-rope", "rope.cpp")
    text = open(rope).read()
    open(rope, "w").write(text.replace('#include "chapters/05-rope/rope.hpp"\n',
                                       '#include "chapters/05-rope/rope.hpp"\n#include "lab/run.hpp"\n', 1))
    with open(os.path.join(copy, "chapters", "05-rope", "CMakeLists.txt"), "a") as cmake:
        cmake.write("target_link_libraries(ch05 PUBLIC lab_run)\n")
    out = subprocess.run([sys.executable, __file__, "configure", "--source", copy, "--build",
                          os.path.join(build, "configured"), "--last", ""]
                         + [a for k, v in how.items() if v for a in (f"--{k}", v)],
                         capture_output=True, text=True)
    print(out.stdout + out.stderr)
    expected = ["chapters/05-rope/rope.cpp:2 (chapter 5's library) includes lab/run.hpp (the lab)",
                "target ch05 links lab_run: chapter 5's library may not use the lab"]
    missing = [e for e in expected if e not in out.stdout]
    if out.returncode != 1 or missing:
        print("layering selftest: not caught: " + "; ".join(missing or ["exit status"]))
        return 1
    print("layering selftest: both violations caught")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["check", "configure", "selftest"])
    parser.add_argument("--source", required=True)
    parser.add_argument("--build", required=True)
    parser.add_argument("--last", default="", help="the last chapter (empty: every chapter)")
    parser.add_argument("--settings")
    parser.add_argument("--generator")
    parser.add_argument("--cxx")
    args = parser.parse_args()
    source = os.path.abspath(args.source)
    if args.command == "check":
        return check(source, args.build)
    how = {"settings": args.settings, "generator": args.generator, "cxx": args.cxx}
    if args.command == "configure":
        return configure(source, os.path.abspath(args.build), args.last, **how)
    return selftest(source, os.path.abspath(args.build), **how)


if __name__ == "__main__":
    sys.exit(main())
