#!/usr/bin/env python3
"""Opens every page of the built book in headless Chromium and fails on what a reader would
see go wrong: a JavaScript error, a formula that did not render, an image that did not load,
a local link to nothing, or a request to any host outside the site. Saves a screenshot of
every page (SCREENSHOTS/<page>.png) to look at.

Usage: browser_check.py --site build/default/docs/html --screenshots DIR [--browsers 2]
                        [--chromium /usr/bin/chromium] [--chromedriver /usr/bin/chromedriver]
A chapter's screenshot holds the whole page; an API page's its first screen.
"""
import argparse
import concurrent.futures
import functools
import glob
import os
import re
import sys
import time
import urllib.parse

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service

# Runs in the page once MathJax has finished: every problem as one line of text.
PAGE_PROBLEMS = r"""
const problems = [];
const text = document.body.innerText;
for (const marker of ["$$", "\\f[", "\\f]", "\\f$", "\\[", "\\]"]) {
  if (text.includes(marker)) {
    const at = text.indexOf(marker);
    problems.push("unrendered math '" + marker + "' near: " +
                  JSON.stringify(text.slice(Math.max(0, at - 40), at + 40)));
  }
}
for (const e of (window.peMathErrors || [])) problems.push("MathJax error: " + e);
for (const node of document.querySelectorAll(".MathJax_Error, merror, [data-mml-node=merror]"))
  problems.push("MathJax error node: " + node.textContent.slice(0, 80));
for (const img of document.images)
  if (!img.complete || img.naturalWidth === 0) problems.push("image does not load: " + img.src);
for (const entry of performance.getEntriesByType("resource"))
  if (!entry.name.startsWith("file:") && !entry.name.startsWith("data:"))
    problems.push("request outside the site: " + entry.name);
for (const el of document.querySelectorAll("script[src], link[href], img[src], iframe[src]")) {
  const url = el.src || el.href;
  if (el.tagName === "LINK" && el.rel !== "stylesheet" && el.rel !== "icon") continue;
  if (url && !/^(file|data|javascript|about):/.test(url))
    problems.push("outside resource: " + el.tagName.toLowerCase() + " " + url);
}
return problems;
"""

LINKS = "return Array.from(document.querySelectorAll('a[href]'), a => a.href);"


def local_target(href, site):
    """The file a link points at inside the site, or None for a link that is not local."""
    parsed = urllib.parse.urlparse(href)
    if parsed.scheme != "file":
        return None
    return urllib.parse.unquote(parsed.path), parsed.fragment


ANCHOR = re.compile(r'''\b(?:id|name)=["']([^"']+)["']''')


@functools.lru_cache(maxsize=None)
def anchors_of(path):
    """The ids and names a page defines: what a link's #fragment may point at."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return frozenset(ANCHOR.findall(f.read()))


def start_browser(args):
    options = webdriver.ChromeOptions()
    options.binary_location = args.chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,1600", "--allow-file-access-from-files",
                 "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(args.chromedriver), options=options)
    driver.set_page_load_timeout(60)
    return driver


def check_page(driver, page, site, screenshots, whole):
    """Opens one page; returns (its problems, the number of local links checked)."""
    driver.get("file://" + page)
    problems = []
    # MathJax typesets after load; its queue sets peMathDone when it has finished.
    deadline = time.time() + 30
    while not driver.execute_script("return !window.MathJax || window.peMathDone === true"):
        if time.time() > deadline:
            problems.append("MathJax did not finish in 30 s")
            break
        time.sleep(0.05)
    problems += driver.execute_script(PAGE_PROBLEMS)
    for entry in driver.get_log("browser"):
        if entry["level"] == "SEVERE":
            problems.append("console: " + entry["message"])
    links = 0
    for href in driver.execute_script(LINKS):
        target = local_target(href, site)
        if target is None:
            continue
        path, fragment = target
        links += 1
        if not os.path.realpath(path).startswith(site + os.sep):
            problems.append("link out of the site: " + href)
        elif not os.path.isfile(path):
            problems.append("broken link: " + href)
        elif fragment and path.endswith(".html") and fragment not in anchors_of(path):
            problems.append("link to a missing anchor: " + href)
    shot = os.path.join(screenshots, os.path.basename(page)[:-5] + ".png")
    if whole:
        # With the tree view the text scrolls inside #doc-content: make the window as tall as
        # the text so that the screenshot holds the whole chapter.
        height = driver.execute_script(
            "const d = document.getElementById('doc-content');"
            "return Math.max(document.documentElement.scrollHeight,"
            "                d ? d.scrollHeight + d.getBoundingClientRect().top + 40 : 0);")
        driver.set_window_size(1280, max(800, min(int(height), 16000)))
        try:
            driver.save_screenshot(shot)
        except TimeoutException:
            # A busy machine can take longer than the driver's 10 s to paint a page this tall:
            # take the first screen instead (below) rather than fail the page.
            print("browser-check: %s: whole-page screenshot timed out, taking the first screen"
                  % os.path.basename(page))
            whole = False
        driver.set_window_size(1280, 1600)
    if not whole:
        driver.save_screenshot(shot)  # an API page: its first screen
    return problems, links


def check_pages(args, pages, site, book_pages):
    """One browser over a share of the pages; returns (failures, links checked)."""
    failures, links = [], 0
    driver = start_browser(args)
    try:
        for page in pages:
            name = os.path.basename(page)
            problems, n = check_page(driver, page, site, args.screenshots, name in book_pages)
            links += n
            failures.extend("%s: %s" % (name, p) for p in problems)
    finally:
        driver.quit()
    return failures, links


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", required=True)
    parser.add_argument("--screenshots", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    parser.add_argument("--pages", nargs="*", help="only these pages (file names in the site)")
    parser.add_argument("--browsers", type=int, default=2, help="browsers that share the pages")
    args = parser.parse_args()

    site = os.path.realpath(args.site)
    pages = sorted(glob.glob(os.path.join(site, "*.html")))
    if args.pages:
        pages = [os.path.join(site, p) for p in args.pages]
    if not pages:
        print("browser-check: no pages in %s (build the docs target first)" % site, file=sys.stderr)
        return 1
    os.makedirs(args.screenshots, exist_ok=True)
    book_pages = {os.path.basename(p) for p in pages
                  if re.match(r"^(index|ch\w+|experiments_bench|coursework_\w+)\.html$", os.path.basename(p))}

    start = time.time()
    shares = [pages[k::args.browsers] for k in range(max(1, args.browsers))]
    with concurrent.futures.ThreadPoolExecutor(len(shares)) as pool:
        results = list(pool.map(lambda share: check_pages(args, share, site, book_pages), shares))
    failures = sorted(f for r in results for f in r[0])
    links = sum(r[1] for r in results)

    print("browser-check: %d pages, %d local links, %.0f s; screenshots in %s"
          % (len(pages), links, time.time() - start, args.screenshots))
    for f in failures:
        print("browser-check: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
