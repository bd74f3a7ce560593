#!/usr/bin/env python3
"""Opens every page of the built book in headless Chromium and fails on what a reader would
see go wrong: a JavaScript error, a formula that did not render, an image that did not load,
a local link to nothing, or a request to any host outside the site. Saves a screenshot of
every page (SCREENSHOTS/<page>.png) to look at.

Usage: browser_check.py --site build/default/docs/html --screenshots DIR
                        [--chromium /usr/bin/chromium] [--chromedriver /usr/bin/chromedriver]
"""
import argparse
import functools
import glob
import os
import re
import sys
import time
import urllib.parse

from selenium import webdriver
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", required=True)
    parser.add_argument("--screenshots", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    parser.add_argument("--pages", nargs="*", help="only these pages (file names in the site)")
    args = parser.parse_args()

    site = os.path.abspath(args.site)
    pages = sorted(glob.glob(os.path.join(site, "*.html")))
    if args.pages:
        pages = [os.path.join(site, p) for p in args.pages]
    if not pages:
        print("browser-check: no pages in %s (build the docs target first)" % site, file=sys.stderr)
        return 1
    os.makedirs(args.screenshots, exist_ok=True)

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

    book_pages = {os.path.basename(p) for p in pages
                  if re.match(r"^(index|ch\w+|experiments_bench)\.html$", os.path.basename(p))}
    failures, checked_links, start = [], 0, time.time()
    try:
        for page in pages:
            name = os.path.basename(page)
            driver.get("file://" + page)
            # MathJax typesets after load; its queue sets peMathDone when it has finished.
            deadline = time.time() + 30
            while time.time() < deadline:
                if driver.execute_script("return !window.MathJax || window.peMathDone === true"):
                    break
                time.sleep(0.1)
            else:
                failures.append("%s: MathJax did not finish in 30 s" % name)
            problems = driver.execute_script(PAGE_PROBLEMS)
            for entry in driver.get_log("browser"):
                if entry["level"] == "SEVERE":
                    problems.append("console: " + entry["message"])
            for href in driver.execute_script(LINKS):
                target = local_target(href, site)
                if target is None or href.startswith("javascript:"):
                    continue
                path, fragment = target
                checked_links += 1
                if not os.path.isfile(path):
                    problems.append("broken link: " + href)
                elif fragment and path.endswith(".html") and fragment not in anchors_of(path):
                    problems.append("link to a missing anchor: " + href)
            # With the tree view, the text scrolls inside #doc-content: make the window as tall
            # as the text so that the screenshot holds the whole page.
            height = driver.execute_script(
                "const d = document.getElementById('doc-content');"
                "return Math.max(document.documentElement.scrollHeight,"
                "                d ? d.scrollHeight + d.getBoundingClientRect().top + 40 : 0);")
            # The book's pages whole; an API page's first screens (long ones cost seconds each).
            limit = 16000 if name in book_pages else 4000
            driver.set_window_size(1280, max(800, min(int(height), limit)))
            driver.save_screenshot(os.path.join(args.screenshots, name[:-5] + ".png"))
            driver.set_window_size(1280, 1600)
            failures.extend("%s: %s" % (name, p) for p in problems)
    finally:
        driver.quit()

    print("browser-check: %d pages, %d local links, %.0f s; screenshots in %s"
          % (len(pages), checked_links, time.time() - start, args.screenshots))
    for f in failures:
        print("browser-check: " + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
