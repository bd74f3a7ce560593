#!/usr/bin/env python3
"""Drives every live figure of the built book in headless Chromium (selenium) and compares what
it drew with the native build on the same inputs:

- ALiBi's slopes and biases, T5's buckets, Shaw's index, the sinusoid table (in float32, as the
  model adds it; its doubles to one unit in the last place, see check_sinusoid) and RoPE's
  frequencies: exactly the numbers `pe inspect` prints for the same request (each figure set
  through the page's address, ALiBi's also with the keyboard);
- RoPE's score against the offset: the same from every starting position, and linear
  interpolation by 4 stretching it exactly four times;
- chapter 1's sentence: the numbers chapter 1's experiment prints, with and without the mask;
- the fast model trained on ShiftK with RoPE, seed 1 (chapter 7's panel): the same accuracy and,
  to 1e-5, the same loss as `pe train` under PE_SIMD=scalar, in at most 90 s; and bit for bit
  the run of the native SSE2 kernels, which do in the same order what the browser's SIMD128
  kernels do (x86-64 only);
- the Stop button (pressed with the keyboard) ends a run early; chapter 3's panel trains;
- chapter 9's learned distance functions: KERPLE's, FIRE's (with its linear f) and ALiBi's
  curves against their closed forms, the controls changing them, neither canvas blank;
- chapter 10's content positions: CoPE's p_ij and the forgetting gate's D_ij for a typed text
  against their closed forms, CoPE with every gate open and the gate with one f everywhere
  (ALiBi's line) exactly as `pe inspect cope` and `pe inspect fox` give them, the controls
  (address, slider, typed characters) changing them, a text over 32 characters refused;
- chapter 11's config.json explained: Llama 3.1's bands, frequencies and attention factor
  against the llama3 formulas, every example config (and Phi-3's long factors) exactly as
  `pe inspect rope --hf-config --json` explains it, the layer pattern, a broken config refused
  in one line with the native build's message;
- chapter 8's lengths from 32 to 256, plain and with NTK-aware scaling: exactly what `pe eval`
  gives for the native SSE2 run's checkpoint;
- chapter 12's stream: the character model trained in the page (RoPE, 2 layers, 4 heads, seed
  1) streams 1024 characters through the window cache with S = 0 and S = 4 (W = 28), and the
  loss of every prediction is exactly what live_stream_native gives for the checkpoint of the
  same run of `pe train` under PE_SIMD=sse2 (x86-64 only); both canvases drawn. The page is
  ch12.html, or, until chapter 12's README embeds the figure, a stand-in page written into the
  site (live_check_stream.html).

Also fails on a console error. Saves a screenshot of every figure (SCREENSHOTS/live_NAME.png).

Usage: live_check.py --site build/default/docs/html --bin build/default --work DIR
                     --screenshots DIR [--only NAME ...] [--chromium ...] [--chromedriver ...]

--only runs only the named checks (a figure's: alibi, t5_and_shaw, sinusoid, rope, permutation,
distance_bias, content_positions, rope_config; training: chapters 3, 7 and 8's panels; stream:
chapter 12's figure, which trains too).
"""
import argparse
import json
import math
import os
import platform
import shutil
import struct
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

# The configuration of chapter 7's panel for the comparison: `pe table --fast`'s, as
# programs/web/page/training.js builds it, on ShiftK with RoPE and seed 1.
FAST_RUN = ["--task", "shiftk", "--encoding", "rope", "--seed", "1", "--steps", "400", "--width", "64",
            "--ffn", "256", "--warmup", "50", "--lr", "5e-3", "--eval-every", "50", "--eval-sequences", "64",
            "--length", "32", "--batch", "64", "--layers", "1", "--heads", "1"]
TRAINING_LIMIT_SECONDS = 90
# Chapter 12's stream figure (programs/web/page/figures/stream.js): its panel's defaults on the
# character model, and the streams the check asks for.
STREAM_RUN = ["--task", "charlm", "--encoding", "rope", "--seed", "1", "--steps", "400", "--width", "64",
              "--ffn", "256", "--warmup", "50", "--lr", "5e-3", "--eval-every", "50", "--eval-sequences", "64",
              "--length", "32", "--batch", "64", "--layers", "2", "--heads", "4"]
STREAM_ADDRESS = ("stream.encoding=rope&stream.task=charlm&stream.seed=1&stream.steps=400&stream.layers=2"
                  "&stream.heads=4&stream.sinks=4&stream.window=28&stream.positions=cache&stream.length=1024")
LENGTHS = [32, 48, 64, 96, 128, 192, 256]  # programs/web/page/figures/lengths.js
EVAL_TOKENS = 4096


class Check:
    def __init__(self, args):
        self.args = args
        self.failures = []
        self.notes = []
        self.pe = os.path.join(args.bin, "pe")

    def fail(self, text):
        self.failures.append(text)
        print("live-check: FAIL: " + text, flush=True)

    def note(self, text):
        self.notes.append(text)
        print("live-check: " + text, flush=True)

    def native(self, *arguments, simd=None):
        env = dict(os.environ, OMP_NUM_THREADS="1")
        if simd:
            env["PE_SIMD"] = simd
        out = subprocess.run([self.pe, *arguments], env=env, check=True, capture_output=True, text=True)
        return out.stdout

    def inspect(self, encoding, *arguments):
        return json.loads(self.native("inspect", encoding, *arguments))


# ---- the browser ----------------------------------------------------------------------------------

def start_browser(args):
    options = webdriver.ChromeOptions()
    options.binary_location = args.chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,1600", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync",
                 "--user-data-dir=" + tempfile.mkdtemp(prefix="live-check-")):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(args.chromedriver), options=options)
    driver.set_page_load_timeout(60)
    return driver


def open_figure(check, driver, page, name, address=""):
    """Loads the page with the figure's controls in its address; returns the figure element."""
    driver.get("about:blank")
    driver.get("file://" + os.path.join(check.site, page) + ("#" + address if address else ""))
    return driver.find_element(By.ID, "live-" + name)


def wait_state(driver, figure, states, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        state = figure.get_attribute("data-state")
        if state in states:
            return state
        time.sleep(0.1)
    return figure.get_attribute("data-state")


def result_of(check, driver, figure, name, states=("drawn",), seconds=30):
    state = wait_state(driver, figure, states + ("error", "no-module"), seconds)
    if state not in states:
        status = figure.find_element(By.CLASS_NAME, "pe-live-status").text
        check.fail("%s: the figure is '%s', not %s: %s" % (name, state, "/".join(states), status))
        return None
    return json.loads(figure.get_attribute("data-result"))


def screenshot(check, driver, figure, name):
    driver.execute_script("arguments[0].scrollIntoView()", figure)
    figure.screenshot(os.path.join(check.args.screenshots, "live_%s.png" % name))


def console_errors(check, driver, where):
    for entry in driver.get_log("browser"):
        if entry["level"] == "SEVERE":
            check.fail("%s: console: %s" % (where, entry["message"]))


def same(check, what, page_values, native_values):
    if page_values != native_values:
        diffs = [k for k, (a, b) in enumerate(zip(page_values, native_values)) if a != b]
        check.fail("%s: the page and the native build differ (%d of %d values differ, first at %s; lengths %d and %d)"
                   % (what, len(diffs), len(native_values), diffs[:1], len(page_values), len(native_values)))
    else:
        check.note("%s: %d values, the same as the native build's" % (what, len(native_values)))


def as_float32(value):
    return struct.unpack("<f", struct.pack("<f", value))[0]


def ulps(a, b):
    """How many doubles apart a and b are (for finite values of the same sign)."""
    return abs(struct.unpack("<q", struct.pack("<d", a))[0] - struct.unpack("<q", struct.pack("<d", b))[0])


# ---- the figures drawn on demand ------------------------------------------------------------------

def check_alibi(check, driver):
    figure = open_figure(check, driver, "ch06.html", "alibi", "alibi.heads=6&alibi.length=10")
    page = result_of(check, driver, figure, "alibi")
    if page:
        native = check.inspect("alibi", "--heads", "6", "--length", "10", "--dim", str(64 * 6))
        same(check, "ALiBi, 6 heads, 10 positions: slopes", page["slopes"], native["slopes"]["values"])
        same(check, "ALiBi, 6 heads, 10 positions: bias", page["bias"], native["bias"]["values"])
    # The keyboard: the heads slider, one step right; the address records it.
    slider = driver.find_element(By.ID, "pe-alibi-heads")
    slider.send_keys(Keys.ARROW_RIGHT)
    deadline = time.time() + 20
    page = None
    while time.time() < deadline:
        page = json.loads(figure.get_attribute("data-result"))
        if page["heads"] == 7:
            break
        time.sleep(0.1)
    if not page or page["heads"] != 7:
        check.fail("alibi: the right arrow on the heads slider did not redraw with 7 heads")
    else:
        native = check.inspect("alibi", "--heads", "7", "--length", "10", "--dim", str(64 * 7))
        same(check, "ALiBi, 7 heads (set with the keyboard): bias", page["bias"], native["bias"]["values"])
        if "alibi.heads=7" not in driver.execute_script("return location.hash"):
            check.fail("alibi: the address does not record heads=7")
    screenshot(check, driver, figure, "alibi")


def check_t5_and_shaw(check, driver):
    figure = open_figure(check, driver, "ch04.html", "t5",
                         "t5.buckets=10&t5.max_distance=30&t5.bidirectional=true&t5.positions=20")
    page = result_of(check, driver, figure, "t5")
    if page:
        native = check.inspect("t5", "--length", "20", "-o", "buckets=10", "-o", "max_distance=30",
                               "-o", "bidirectional=true")
        same(check, "T5, 10 buckets, max distance 30, bidirectional: buckets", page["buckets"],
             native["buckets"]["values"])
    screenshot(check, driver, figure, "t5")
    figure = open_figure(check, driver, "ch04.html", "shaw", "shaw.max_distance=3&shaw.positions=9")
    page = result_of(check, driver, figure, "shaw")
    if page:
        native = check.inspect("shaw", "--length", "9", "-o", "max_distance=3")
        same(check, "Shaw, k = 3: clipped index", page["index"], native["index"]["values"])
    screenshot(check, driver, figure, "shaw")


def check_sinusoid(check, driver):
    figure = open_figure(check, driver, "ch02.html", "sinusoid",
                         "sinusoid.log10base=3.5&sinusoid.width=48&sinusoid.offsets=64")
    page = result_of(check, driver, figure, "sinusoid")
    if page:
        native = check.inspect("sinusoidal", "--dim", "48", "--length", str(page["length"]),
                               "-o", "base=" + page["base"])["pe"]["values"]
        # The table is computed in double and added to the embeddings in float32. Emscripten's C
        # library (musl) and glibc round sin and cos differently in the last bit of a few
        # entries, so the doubles may differ by one unit in the last place; the float32 table
        # the model uses is the same.
        what = "sinusoid, base %s, width 48: table" % page["base"]
        same(check, what + " in float32", [as_float32(v) for v in page["pe"]], [as_float32(v) for v in native])
        off = [ulps(a, b) for a, b in zip(page["pe"], native)]
        if len(off) != len(native) or max(off) > 1:
            check.fail(what + ": the doubles differ by more than one unit in the last place")
        else:
            check.note(what + " in double: %d of %d the same, the others one unit in the last place apart"
                       % (off.count(0), len(off)))
    screenshot(check, driver, figure, "sinusoid")


def check_rope(check, driver):
    figure = open_figure(check, driver, "ch05.html", "rope_planes", "rope_planes.log10base=2.7&rope_planes.dim=24")
    page = result_of(check, driver, figure, "rope_planes")
    if page:
        native = check.inspect("rope", "--dim", "24", "--length", "1", "-o", "base=" + page["base"])
        same(check, "RoPE, base %s, d = 24: frequencies" % page["base"], page["frequencies"],
             native["frequencies"]["values"])
    screenshot(check, driver, figure, "rope_planes")
    plain = result_of(check, driver, driver.find_element(By.ID, "live-rope_scores"), "rope_scores")
    figure = open_figure(check, driver, "ch05.html", "rope_scores", "rope_scores.scaling=linear&rope_scores.scale=4")
    linear = result_of(check, driver, figure, "rope_scores (linear)")
    if plain and linear:
        scale = max(abs(s) for s in plain["scores"][0])
        if plain["spread"] > 1e-9 * scale:
            check.fail("RoPE: the score depends on the starting position by %g" % plain["spread"])
        # Linear interpolation by 4 turns by theta / 4: its score at offset 4r is the plain one at r.
        worst = max(abs(linear["scores"][0][4 * r] - plain["scores"][0][r]) for r in range(len(plain["offsets"]) // 4))
        if worst > 1e-9 * scale:
            check.fail("RoPE: linear scaling by 4 is not the plain curve stretched 4 times (off by %g)" % worst)
        else:
            check.note("RoPE: the score is the same from every start (spread %.1e), and linear scaling by 4 "
                       "stretches it 4 times (off by %.1e)" % (plain["spread"], worst))
    screenshot(check, driver, figure, "rope_scores")


def drawn_pixels(driver, figure, index):
    """How many pixels of the figure's index-th canvas are not the background's colour."""
    return driver.execute_script("""
        const c = arguments[0].querySelectorAll("canvas")[arguments[1]];
        const data = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let k = 0; k < data.length; k += 4)
          if (data[k] !== data[0] || data[k + 1] !== data[1] || data[k + 2] !== data[2]) n++;
        return n;""", figure, index)


def canvases_drawn(check, driver, figure, figure_name, canvases, least):
    """Fails unless each of the figure's canvases (index, what it shows) has at least `least`
    pixels drawn."""
    for index, name in canvases:
        pixels = drawn_pixels(driver, figure, index)
        if pixels < least:
            check.fail("%s: the canvas of %s is blank (%d pixels drawn)" % (figure_name, name, pixels))
        else:
            check.note("%s: the canvas of %s has %d pixels drawn" % (figure_name, name, pixels))


def check_distance_bias(check, driver):
    """Chapter 9's learned distance functions: each curve against its closed form (KERPLE's
    kernel, FIRE's normalised distance through the linear f(u) = -4u, ALiBi's line), the
    controls changing what is drawn (the form, FIRE's query past L, the seed, the keyboard),
    and neither canvas blank."""
    def closeness(what, page_values, expected, tolerance=1e-12):
        if len(page_values) != len(expected) or not expected:
            check.fail("%s: %d values drawn, %d expected" % (what, len(page_values), len(expected)))
            return
        worst = max(abs(a - b) for a, b in zip(page_values, expected))
        scale = max(1.0, max(abs(b) for b in expected))
        if worst > tolerance * scale:
            check.fail("%s: off its closed form by %g" % (what, worst))
        else:
            check.note("%s: %d values, its closed form to %.1e" % (what, len(expected), worst))

    def fire_expected(page):
        c, L, i = page["c"], page["values"]["threshold"], page["values"]["query"]
        u = [math.log1p(c * d) / (math.log1p(c * max(L, i)) + 1e-6) for d in page["fire"]["distance"]]
        return u, [-4 * x for x in u]

    figure = open_figure(check, driver, "ch09.html", "distance_bias",
                         "distance_bias.distances=96&distance_bias.r1=1.5&distance_bias.r2=0.5"
                         "&distance_bias.query=40&distance_bias.threshold=64")
    page = result_of(check, driver, figure, "distance_bias")
    if not page:
        return
    d = page["distance"]
    if d != list(range(96)):
        check.fail("distance_bias: the distances are not 0 .. 95 as the address asked")
    closeness("KERPLE log form, r1 1.5, r2 0.5", page["kerple"], [-1.5 * math.log1p(0.5 * x) for x in d])
    closeness("ALiBi head 3 of 8", page["alibi"], [-x / 8 for x in d])
    u, fire = fire_expected(page)
    if page["fire"]["distance"] != list(range(41)):
        check.fail("distance_bias: FIRE at query 40 has distances %s, not 0 .. 40" % page["fire"]["distance"][-1:])
    closeness("FIRE's input at query 40 < L = 64", page["fire"]["input"], u)
    closeness("FIRE with f(u) = -4u", page["fire"]["bias"], fire)
    if max(page["fire"]["input"]) > 0.9:
        check.fail("distance_bias: FIRE's input reaches %g at i < L, where psi(L) normalises it"
                   % max(page["fire"]["input"]))
    dpb = page["dpb"]
    if len(dpb) != 96 or max(dpb) - min(dpb) < 1e-6:
        check.fail("distance_bias: the dynamic position bias is flat or missing (%d values)" % len(dpb))
    canvases_drawn(check, driver, figure, "distance_bias", ((0, "the bias"), (1, "FIRE's input")), 2000)
    screenshot(check, driver, figure, "distance_bias")

    # The controls: the power form with r2 = 1 is ALiBi's line; FIRE's query past L reads psi(i)
    # (its first key at u = 1 - eps); another seed, another initial MLP; the log distance.
    figure = open_figure(check, driver, "ch09.html", "distance_bias",
                         "distance_bias.distances=96&distance_bias.form=power&distance_bias.r1=0.25"
                         "&distance_bias.r2=1&distance_bias.query=300&distance_bias.threshold=64"
                         "&distance_bias.seed=2&distance_bias.log_distance=true&distance_bias.f=initial")
    other = result_of(check, driver, figure, "distance_bias (power form, query past L, seed 2)")
    if not other:
        return
    closeness("KERPLE power form, r1 1/4, r2 1 (ALiBi's line)", other["kerple"], [-x / 4 for x in d])
    if other["fire"]["distance"] != list(range(96)):
        check.fail("distance_bias: FIRE at query 300 is not drawn over the 96 distances")
    closeness("FIRE's input at query 300 > L = 64", other["fire"]["input"], fire_expected(other)[0])
    if other["fire"]["bias"] == [-4 * x for x in other["fire"]["input"]]:
        check.fail("distance_bias: FIRE's f = the initial MLP still draws the linear f")
    if other["dpb"] == dpb:
        check.fail("distance_bias: the seed and the log distance left the dynamic position bias unchanged")
    # The keyboard: r1 one step right redraws KERPLE with r1 = 0.3.
    driver.find_element(By.ID, "pe-distance_bias-r1").send_keys(Keys.ARROW_RIGHT)
    deadline, now = time.time() + 20, other
    while time.time() < deadline:
        now = json.loads(figure.get_attribute("data-result"))
        if now["values"]["r1"] != 0.25:
            break
        time.sleep(0.1)
    if now["values"]["r1"] != 0.3:
        check.fail("distance_bias: the right arrow on r1 did not redraw with r1 = 0.3 (%s)" % now["values"]["r1"])
    else:
        closeness("KERPLE power form, r1 0.3 (set with the keyboard)", now["kerple"], [-0.3 * x for x in d])
    screenshot(check, driver, figure, "distance_bias_power")


def check_content_positions(check, driver):
    """Chapter 10's content positions: CoPE's p_ij and the forgetting gate's D_ij for the typed
    text against their closed forms (sums of sigmoid(+-s) and of log f, to 1e-12), the
    references (every gate open; one f everywhere) exactly as `pe inspect cope` and `pe inspect
    fox` give them, the controls (the address, a slider and the chosen characters typed with the
    keyboard) changing what is drawn, a text too long refused, and no canvas blank."""
    def closeness(what, page_values, expected, tolerance=1e-12):
        if len(page_values) != len(expected) or not expected:
            check.fail("%s: %d values drawn, %d expected" % (what, len(page_values), len(expected)))
            return
        worst = max(abs(a - b) for a, b in zip(page_values, expected))
        scale = max(1.0, max(abs(b) for b in expected))
        if worst > tolerance * scale:
            check.fail("%s: off its closed form by %g" % (what, worst))
        else:
            check.note("%s: %d values, its closed form to %.1e" % (what, len(expected), worst))

    def expected(text, chosen, s, f_chosen, f_other):
        """p_ij = sum over t = j .. i of sigmoid(+-s_t) (0 after the query) and D_ij = c_i - c_j,
        c_i = the sum of log f up to i, in plain Python."""
        T = len(text)
        hit = [c.lower() in chosen.lower() for c in text]
        gate = [1 / (1 + math.exp(-s if h else s)) for h in hit]
        log_f = [math.log(f_chosen if h else f_other) for h in hit]
        c = [sum(log_f[:i + 1]) for i in range(T)]
        p = [sum(gate[j:i + 1]) if j <= i else 0.0 for i in range(T) for j in range(T)]
        D = [c[i] - c[j] for i in range(T) for j in range(T)]
        return hit, gate, log_f, p, D

    def compare(page, text, chosen, s, f_chosen, f_other, label):
        T = len(text)
        if page["tokens"] != list(text) or page["length"] != T:
            check.fail("content_positions: the tokens %s are not the characters of %r" % (page["tokens"], text))
            return
        hit, gate, log_f, p, D = expected(text, chosen, s, f_chosen, f_other)
        if page["chosen"] != hit:
            check.fail("content_positions: chosen %s, expected %s for %r" % (page["chosen"], hit, chosen))
        closeness("CoPE's gates, %s" % label, page["cope"]["gates"], gate)
        closeness("CoPE's positions p_ij, %s" % label, page["cope"]["positions"], p)
        closeness("the forgetting gate's log f, %s" % label, page["fox"]["log_f"], log_f)
        closeness("the forgetting gate's bias D_ij, %s" % label, page["fox"]["bias"], D)
        native = check.inspect("cope", "--length", str(T))
        same(check, "CoPE with every gate open, %d tokens: count" % T, page["cope"]["count"], native["count"]["values"])
        b = page["alibi"]["bias_init"]
        closeness("the gate's b = logit(f_other), %s" % label, [b], [math.log(f_other / (1 - f_other))])
        native = check.inspect("fox", "--heads", "1", "--length", str(T), "-o", "bias_init=" + repr(b))
        same(check, "the forgetting gate with f = %g everywhere (ALiBi), %d tokens: bias" % (f_other, T),
             page["alibi"]["bias"], native["bias"]["values"])
        same(check, "the forgetting gate with f = %g everywhere: slope" % f_other, [page["alibi"]["slope"]],
             native["slope"]["values"])
        closeness("ALiBi's line, slope -log %g, %s" % (f_other, label), page["alibi"]["bias"],
                  [(i - j) * math.log(f_other) for i in range(T) for j in range(T)])

    text, chosen = "Ab.cd.Efg.h a", ".a"
    figure = open_figure(check, driver, "ch10.html", "content_positions",
                         "content_positions.text=Ab.cd.Efg.h+a&content_positions.chosen=.a"
                         "&content_positions.sharpness=3&content_positions.f_chosen=0.2"
                         "&content_positions.f_other=0.9")
    page = result_of(check, driver, figure, "content_positions")
    if not page:
        return
    compare(page, text, chosen, 3, 0.2, 0.9, "'.a' chosen in %r, s 3" % text)
    canvases_drawn(check, driver, figure, "content_positions",
                   ((0, "CoPE's matrix"), (1, "the gate's matrix"), (2, "CoPE's row"), (3, "the gate's row")), 2000)
    screenshot(check, driver, figure, "content_positions")

    def redrawn(previous):
        deadline, now = time.time() + 20, previous
        while time.time() < deadline:
            now = json.loads(figure.get_attribute("data-result"))
            if now["values"] != previous["values"]:
                break
            time.sleep(0.1)
        return now

    # The keyboard: f on a chosen character one step right, then the vowels typed as the chosen
    # characters (a text field redraws on Enter).
    driver.find_element(By.ID, "pe-content_positions-f_chosen").send_keys(Keys.ARROW_RIGHT)
    now = redrawn(page)
    if now["values"]["f_chosen"] != 0.201:
        check.fail("content_positions: the right arrow on f_chosen did not redraw with f = 0.201 (%s)"
                   % now["values"]["f_chosen"])
    else:
        compare(now, text, chosen, 3, 0.201, 0.9, "f on a chosen character 0.201 (set with the keyboard)")
    field = driver.find_element(By.ID, "pe-content_positions-chosen")
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("aeiou", Keys.ENTER)
    vowels = redrawn(now)
    if vowels["values"]["chosen"] != "aeiou":
        check.fail("content_positions: typing aeiou into the chosen characters did not redraw (%r)"
                   % vowels["values"]["chosen"])
    else:
        compare(vowels, text, "aeiou", 3, 0.201, 0.9, "the vowels chosen (typed)")
        if "content_positions.chosen=aeiou" not in driver.execute_script("return location.hash"):
            check.fail("content_positions: the address does not record chosen=aeiou")

    # A text over 32 characters is refused, with the C++'s message in place of the figure.
    figure = open_figure(check, driver, "ch10.html", "content_positions",
                         "content_positions.text=" + "x" * 33)
    state = wait_state(driver, figure, ("error", "drawn"), 30)
    status = figure.find_element(By.CLASS_NAME, "pe-live-status").text
    if state != "error" or "1 to 32" not in status:
        check.fail("content_positions: 33 characters were not refused (%s: %s)" % (state, status))
    else:
        check.note("content_positions: 33 characters refused: %s" % status)


# The chapter's example configs, which the page offers (compiled into the module).
CONFIGS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "chapters", "11-todays-models", "configs")
LLAMA_31 = "llama-3.1-8b.json"


def llama3_expected(config):
    """Llama 3.1's planes from the formulas of chapter 11 (transformers'
    _compute_llama3_parameters), in double: theta_i = base^(-2i/d); with wavelength
    lambda_i = 2 pi / theta_i and L0 the original context, lambda_i < L0 / high_freq_factor is
    kept, lambda_i > L0 / low_freq_factor divided by the factor, and between them blended,
    (1 - g) theta_i / factor + g theta_i with g = (L0 / lambda_i - low) / (high - low)."""
    scaling = config["rope_scaling"]
    d = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    base, factor = config["rope_theta"], scaling["factor"]
    low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
    L0 = scaling["original_max_position_embeddings"]
    planes = []
    for i in range(d // 2):
        theta = 1.0 / base ** (2 * i / d)
        wavelength = 2 * math.pi / theta
        if wavelength < L0 / high:
            planes.append(("kept", theta, theta))
        elif wavelength > L0 / low:
            planes.append(("interpolated", theta, theta / factor))
        else:
            g = (L0 / wavelength - low) / (high - low)
            planes.append(("blended", theta, (1 - g) * theta / factor + g * theta))
    return planes


def check_rope_config(check, driver):
    """Chapter 11's config.json explained: Llama 3.1's planes (their bands, frequencies,
    wavelengths against the original context) against the llama3 formulas, every example and
    a pass longer than Phi-3's original context exactly as `pe inspect rope --hf-config --json`
    gives them, the layer pattern, a pasted config refused in one line with the message the
    native build prints for the same file, and the canvases drawn."""
    def closeness(what, page_values, expected, tolerance=1e-12):
        worst = max((abs(a - b) / abs(b) if b else abs(a) for a, b in zip(page_values, expected)), default=0)
        if len(page_values) != len(expected) or worst > tolerance:
            check.fail("rope_config: %s: off the formula by %g (relative; %d values, %d expected)"
                       % (what, worst, len(page_values), len(expected)))
        else:
            check.note("rope_config: %s: %d values, the formula's to %.1e" % (what, len(expected), worst))

    def compare_native(page, name, length=0, path=None):
        """The page's explanation against pe inspect rope --hf-config's for the example `name`
        (or the file at `path`)."""
        extra = ["--length", str(length)] if length else []
        expected = check.inspect("rope", "--hf-config", path or os.path.join(CONFIGS, name), "--json", *extra)
        what = "%s%s" % (name, ", a pass of %d" % length if length else "")
        for key in ("model_type", "layers", "layer_types"):
            if page.get(key) != expected.get(key):
                check.fail("rope_config: %s: the page's %s is not pe inspect rope --hf-config's" % (what, key))
                return
        pattern = [next((t for t, kind in enumerate(expected["layer_types"]) if layer in kind["layers"]), -1)
                   for layer in range(expected["layers"])]
        if page["pattern"] != pattern:
            check.fail("rope_config: %s: the layer pattern %s is not the layer types' %s" % (what, page["pattern"], pattern))
            return
        planes = sum(len(kind.get("planes", [])) for kind in expected["layer_types"])
        check.note("rope_config: %s: %d kind(s) of layer, %d planes, pattern of %d layers, the same as pe inspect rope "
                   "--hf-config" % (what, len(expected["layer_types"]), planes, expected["layers"]))

    def redrawn(figure, previous, condition):
        deadline, now = time.time() + 20, previous
        while time.time() < deadline:
            if figure.get_attribute("data-state") in ("drawn", "error"):
                now = figure.get_attribute("data-result")
                now = json.loads(now) if now else None
                if condition(now):
                    return now
            time.sleep(0.1)
        return now

    figure = open_figure(check, driver, "ch11.html", "rope_config",
                         "rope_config.example=%s&rope_config.seq_len=0" % LLAMA_31)
    page = result_of(check, driver, figure, "rope_config")
    if not page:
        return
    with open(os.path.join(CONFIGS, LLAMA_31), encoding="utf-8") as f:
        config = json.load(f)
    expected = llama3_expected(config)
    kinds = page["layer_types"]
    if len(kinds) != 1 or kinds[0]["layers"] != list(range(32)) or page["pattern"] != [0] * 32:
        check.fail("rope_config: Llama 3.1 is not one kind of layer over 32 layers: %s"
                   % [(k["name"], k["layers"]) for k in kinds])
        return
    kind = kinds[0]
    counts = {band: sum(1 for b, _, _ in expected if b == band) for band in ("kept", "blended", "interpolated")}
    drawn = {band: kind["bands"].get(band, 0) for band in counts}
    if drawn != counts or sum(kind["bands"].values()) != len(expected):
        check.fail("rope_config: Llama 3.1's bands %s, the formula's %s" % (kind["bands"], counts))
    else:
        check.note("rope_config: Llama 3.1's %d planes: %s, as the llama3 formula bands them"
                   % (len(expected), ", ".join("%d %s" % (n, b) for b, n in counts.items())))
    if [p["band"] for p in kind["planes"]] != [b for b, _, _ in expected]:
        check.fail("rope_config: Llama 3.1's planes are not banded plane by plane as the formula bands them")
    if kind["attention_factor"] != 1:
        check.fail("rope_config: Llama 3.1's attention factor is %r, not 1" % kind["attention_factor"])
    else:
        check.note("rope_config: Llama 3.1's attention factor 1, as llama3 leaves it")
    closeness("Llama 3.1's unscaled theta_i", [p["default_inv_freq"] for p in kind["planes"]], [t for _, t, _ in expected])
    closeness("Llama 3.1's scaled theta_i", [p["inv_freq"] for p in kind["planes"]], [t for _, _, t in expected])
    L0 = config["rope_scaling"]["original_max_position_embeddings"]
    closeness("Llama 3.1's wavelength / L0", [p["wavelength_over_context"] for p in kind["planes"]],
              [2 * math.pi / t / L0 for _, _, t in expected])
    compare_native(page, LLAMA_31)
    canvases_drawn(check, driver, figure, "rope_config",
                   ((0, "the layer pattern"), (1, "the wavelengths"), (2, "the divisors")), 2000)
    screenshot(check, driver, figure, "rope_config")

    # Every other example, chosen in the menu (with the keyboard's choice: a change event), the
    # same as the native build's explanation.
    names = driver.execute_script("return Array.from(document.getElementById('pe-rope_config-example').options)"
                                  ".map(o => o.value).filter(v => v !== 'pasted')")
    shipped = sorted(n for n in os.listdir(CONFIGS) if n.endswith(".json"))
    if names != shipped:
        check.fail("rope_config: the menu offers %s, the chapter ships %s" % (names, shipped))
    for name in names:
        if name == LLAMA_31:
            continue
        driver.execute_script("const s = document.getElementById('pe-rope_config-example');"
                              "s.value = arguments[0]; s.dispatchEvent(new Event('change'));", name)
        now = redrawn(figure, page, lambda r: r and r["values"]["example"] == name)
        if not now or now["values"]["example"] != name or figure.get_attribute("data-state") != "drawn":
            check.fail("rope_config: choosing %s did not draw it (%s)" % (
                name, figure.find_element(By.CLASS_NAME, "pe-live-status").text))
            continue
        compare_native(now, name)
        screenshot(check, driver, figure, "rope_config_" + name[:-len(".json")])

    # A pass longer than the original context: Phi-3's longrope switches to its long factors.
    phi = next((n for n in names if n.startswith("phi-3")), None)
    if phi:
        figure = open_figure(check, driver, "ch11.html", "rope_config",
                             "rope_config.example=%s&rope_config.seq_len=5000" % phi)
        page = result_of(check, driver, figure, "rope_config (%s, a pass of 5000)" % phi)
        if page:
            compare_native(page, phi, 5000)

    # A config pasted into the text area: the menu says so and the address keeps it; a field
    # missing is the chapter's one-line error, the one the native build prints for that file.
    broken = dict(config, rope_scaling={k: v for k, v in config["rope_scaling"].items() if k != "low_freq_factor"})
    path = os.path.join(check.args.work, "llama-3.1-without-low_freq_factor.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(broken, f, indent=2)
    refused = subprocess.run([check.pe, "inspect", "rope", "--hf-config", path], capture_output=True, text=True)
    native_message = refused.stderr.strip()
    figure = open_figure(check, driver, "ch11.html", "rope_config", "rope_config.example=" + LLAMA_31)
    result_of(check, driver, figure, "rope_config")
    area = driver.find_element(By.ID, "pe-rope_config-textarea")
    driver.execute_script("arguments[0].value = arguments[1];"
                          "arguments[0].dispatchEvent(new Event('input'));", area, json.dumps(broken, indent=2))
    state = wait_state(driver, figure, ("error",), 20)
    status = figure.find_element(By.CLASS_NAME, "pe-live-status").text
    shown = status.split("Cannot draw this: ", 1)[-1]
    # The native message begins with the file's path, the page's with "pasted config".
    if refused.returncode == 0 or path not in native_message:
        check.fail("rope_config: pe inspect rope --hf-config did not refuse %s (%s)" % (path, native_message))
    elif state != "error" or "\n" in status or not shown.startswith("pasted config: ") or \
            shown[len("pasted config"):] != native_message.split(path, 1)[1]:
        check.fail("rope_config: without low_freq_factor the page shows (%s) %r; pe inspect rope says %r"
                   % (state, status, native_message))
    else:
        check.note("rope_config: a pasted config without low_freq_factor refused in one line, as pe inspect "
                   "rope says it: %s" % shown)
    choice = driver.find_element(By.ID, "pe-rope_config-example").get_attribute("value")
    if choice != "pasted" or "rope_config.example=pasted" not in driver.execute_script("return location.hash"):
        check.fail("rope_config: editing the config left the menu at %r (the address: %s)"
                   % (choice, driver.execute_script("return location.hash")))
    # A config of the reader's with dynamic scaling, and a pass longer than its context typed
    # into the length field: the scale in force, as the native build computes it for that file.
    dynamic = {"model_type": "llama", "hidden_size": 2048, "num_attention_heads": 32, "num_hidden_layers": 4,
               "max_position_embeddings": 2048, "rope_theta": 10000.0,
               "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}
    path = os.path.join(check.args.work, "dynamic.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(dynamic, f, indent=2)
    driver.execute_script("arguments[0].value = arguments[1];"
                          "arguments[0].dispatchEvent(new Event('input'));", area, json.dumps(dynamic, indent=2))
    field = driver.find_element(By.ID, "pe-rope_config-seq_len")
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys("4096", Keys.ENTER)
    page = redrawn(figure, None, lambda r: r and r["values"]["seq_len"] == 4096 and r["model_type"] == "llama"
                   and r["layers"] == 4)
    if not page or page["values"]["seq_len"] != 4096:
        check.fail("rope_config: a pasted dynamic config with the length 4096 typed was not drawn (%s)"
                   % figure.find_element(By.CLASS_NAME, "pe-live-status").text)
    else:
        compare_native(page, "a pasted dynamic config (length typed)", 4096, path)
        screenshot(check, driver, figure, "rope_config_dynamic")
        check.note("rope_config: dynamic at 4096 over a context of 2048: scale in force %s, bands %s"
                   % (page["layer_types"][0].get("scale"), page["layer_types"][0]["bands"]))
    status = figure.find_element(By.CLASS_NAME, "pe-live-status").text

    # Not JSON at all: the parser's message, in one line, naming the source.
    before = status
    driver.execute_script("arguments[0].value = arguments[1];"
                          "arguments[0].dispatchEvent(new Event('input'));", area, '{"rope_theta": 10000,')
    deadline = time.time() + 20
    while time.time() < deadline:
        status = figure.find_element(By.CLASS_NAME, "pe-live-status").text
        if status != before:
            break
        time.sleep(0.1)
    if figure.get_attribute("data-state") != "error" or "\n" in status or "pasted config" not in status:
        check.fail("rope_config: a config cut short is not refused in one line naming it: %r" % status)
    else:
        check.note("rope_config: a config cut short refused in one line: %s" % status)


def check_permutation(check, driver):
    # Chapter 1's experiment prints both differences to 3 digits; the native SSE2 kernels add
    # in the order of the browser's SIMD128 ones, so even the round-off is the same there.
    simd = "sse2" if platform.machine() in ("x86_64", "AMD64") else None
    env = dict(os.environ, **({"PE_SIMD": simd} if simd else {}))
    printed = subprocess.run([os.path.join(check.args.bin, "chapters", "01-attention", "ch01_experiment"),
                              "--trials", "1"], env=env, check=True, capture_output=True, text=True).stdout
    native = [float(line.split("= ")[1].split()[0]) for line in printed.splitlines() if "max |h(man" in line]
    for causal, expected in zip(("false", "true"), native):
        figure = open_figure(check, driver, "ch01.html", "permutation", "permutation.causal=" + causal)
        page = result_of(check, driver, figure, "permutation")
        if not page:
            continue
        shown = float("%.2e" % page["max_difference"])
        mask = "with" if causal == "true" else "without"
        if shown != expected and (simd or causal == "true"):
            check.fail("chapter 1, dog bites man %s the mask: the page shows %.2e, ch01_experiment %.2e"
                       % (mask, shown, expected))
        else:
            check.note("chapter 1, dog bites man %s the mask: %.2e, as ch01_experiment prints" % (mask, shown))
        screenshot(check, driver, figure, "permutation_" + ("mask" if causal == "true" else "no_mask"))


# ---- training ---------------------------------------------------------------------------------------

def press(driver, figure, label):
    """Presses a figure's button with the keyboard (it takes the focus, then Enter)."""
    button = next(b for b in figure.find_elements(By.TAG_NAME, "button") if b.text == label)
    driver.execute_script("arguments[0].focus()", button)
    button.send_keys(Keys.ENTER)


def check_training(check, driver, scalar_run, sse2_run):
    address = "training.encoding=rope&training.task=shiftk&training.seed=1&training.steps=400"
    figure = open_figure(check, driver, "ch07.html", "training", address)
    press(driver, figure, "Train")
    page = result_of(check, driver, figure, "training", ("trained",), seconds=300)
    screenshot(check, driver, figure, "training")
    if not page:
        return None
    seconds = page["seconds"]
    last = page["history"][-1]
    check.note("training in the browser: RoPE on ShiftK, seed 1, 400 steps in %.1f s (%s kernels): accuracy %r, "
               "loss %r" % (seconds, page["simd"], last["eval_accuracy"], last["eval_loss"]))
    if seconds > TRAINING_LIMIT_SECONDS:
        check.fail("training took %.1f s in the browser, more than %d s" % (seconds, TRAINING_LIMIT_SECONDS))
    scalar = wait_for_run(scalar_run)
    final = scalar["final"]["32"]
    check.note("pe train under PE_SIMD=scalar: accuracy %r, loss %r" % (final["accuracy"], final["loss"]))
    if last["eval_accuracy"] != final["accuracy"] or abs(last["eval_loss"] - final["loss"]) > 1e-5:
        check.fail("the browser's run (accuracy %r, loss %r) is not the native scalar run's (accuracy %r, "
                   "loss %r) to 1e-5" % (last["eval_accuracy"], last["eval_loss"], final["accuracy"], final["loss"]))
    else:
        check.note("the same accuracy, and the loss within %.1e of the native scalar run's"
                   % abs(last["eval_loss"] - final["loss"]))
    if sse2_run:
        sse2 = wait_for_run(sse2_run)
        keys = ("step", "train_loss", "eval_accuracy", "eval_loss")
        ours = [[h[k] for k in keys] for h in page["history"]]
        theirs = [[h[k] for k in keys] for h in sse2["history"]]
        if ours != theirs:
            check.fail("the browser's run is not bit for bit the native SSE2 run")
        else:
            check.note("all %d evaluations bit for bit those of pe train under PE_SIMD=sse2" % len(ours))
    return page


def check_stop(check, driver):
    figure = open_figure(check, driver, "ch07.html", "training", "training.encoding=none&training.steps=400")
    press(driver, figure, "Train")
    progress = figure.find_element(By.TAG_NAME, "progress")
    deadline = time.time() + 60
    while time.time() < deadline and float(progress.get_attribute("value") or 0) < 30:
        time.sleep(0.1)
    press(driver, figure, "Stop")
    page = result_of(check, driver, figure, "training (stopped)", ("stopped",), seconds=60)
    if page:
        if page["steps"] >= 400:
            check.fail("Stop did not stop the run")
        else:
            check.note("Stop (pressed with the keyboard) ended the run at step %d of 400" % page["steps"])


def check_learned(check, driver):
    figure = open_figure(check, driver, "ch03.html", "learned", "learned.steps=100")
    press(driver, figure, "Train")
    page = result_of(check, driver, figure, "learned", ("trained",), seconds=120)
    if page:
        check.note("chapter 3: a learned table trained 100 steps in %.1f s" % page["seconds"])
    screenshot(check, driver, figure, "learned")


def check_lengths(check, driver, sse2_run):
    figure = open_figure(check, driver, "ch08.html", "lengths",
                         "lengths.encoding=rope&lengths.task=shiftk&lengths.seed=1&lengths.steps=400")
    press(driver, figure, "Train")
    if not result_of(check, driver, figure, "lengths (training)", ("trained",), seconds=300):
        return
    for rule, options in (("none", []), ("ntk", ["-o", "scaling=ntk", "-o", "scale=4"])):
        driver.execute_script("const s = document.getElementById('pe-lengths-scaling');"
                              "s.value = arguments[0]; s.dispatchEvent(new Event('change'));", rule)
        driver.execute_script("arguments[0].dataset.state = 'evaluating'", figure)
        press(driver, figure, "Evaluate at 32 to 256")
        page = result_of(check, driver, figure, "lengths (%s)" % rule, ("evaluated",), seconds=120)
        if not page or not sse2_run:
            continue
        wait_for_run(sse2_run)
        checkpoint = os.path.join(sse2_run["dir"], "checkpoint.agt")
        native = []
        for length in LENGTHS:
            out = json.loads(check.native("eval", checkpoint, "--lengths", str(length), "--sequences",
                                          str(max(2, EVAL_TOKENS // length)), "--json", *options, simd="sse2"))
            native += [out[str(length)]["accuracy"], out[str(length)]["loss"]]
        same(check, "chapter 8, RoPE %s at %s tokens: accuracy and loss" % (rule, ", ".join(map(str, LENGTHS))),
             [v for r in page["lengths"] for v in (r["accuracy"], r["loss"])], native)
    screenshot(check, driver, figure, "lengths")


def stream_page(check):
    """The page that holds chapter 12's stream figure: ch12.html once the chapter embeds it, else a
    stand-in written into the site with the same scripts the marker loads (docs/md_filter.py)."""
    chapter = os.path.join(check.site, "ch12.html")
    if os.path.isfile(chapter):
        with open(chapter, encoding="utf-8") as f:
            if 'id="live-stream"' in f.read():
                return "ch12.html"
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs"))
    from md_filter import LIVE_SHARED  # noqa: E402 (the docs' own list of the shared scripts)
    with open(os.path.join(check.site, "live_check_stream.html"), "w", encoding="utf-8") as f:
        f.write("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>chapter 12: stream</title>\n%s"
                "</head><body><h1>Chapter 12 (stand-in page of live_check.py)</h1>\n"
                "<div class=\"pe-live\" id=\"live-stream\" data-figure=\"stream\"></div>\n"
                "<script defer src=\"live/figures/stream.js\"></script>\n</body></html>\n" % LIVE_SHARED)
    check.note("stream: ch12.html does not embed the figure yet; checked on live_check_stream.html")
    return "live_check_stream.html"


def check_stream(check, driver, stream_run):
    figure = open_figure(check, driver, stream_page(check), "stream", STREAM_ADDRESS)
    started = time.time()
    press(driver, figure, "Train")
    if not result_of(check, driver, figure, "stream (training)", ("trained",), seconds=400):
        return
    check.note("stream: the character model trained in the page in %.0f s" % (time.time() - started))
    press(driver, figure, "S = 0, then S")
    page = result_of(check, driver, figure, "stream", ("streamed",), seconds=300)
    if not page:
        return
    runs = page["runs"]
    for r in runs:
        check.note("stream: S = %d, W = %d, %s: %.3f bits/char within the first %d, %.3f past them"
                   % (r["sinks"], r["window"], r["positions"], r["mean_within"], r["train_length"], r["mean_past"]))
    count = len(figure.find_elements(By.TAG_NAME, "canvas"))  # the training panel's first, then the two
    canvases_drawn(check, driver, figure, "stream",
                   [(count - 2, "the loss per position"), (count - 1, "the running mean")], 500)
    screenshot(check, driver, figure, "stream")
    if not stream_run:
        return
    wait_for_run(stream_run)
    checkpoint = os.path.join(stream_run["dir"], "checkpoint.agt")
    native_tool = os.path.join(check.args.bin, "programs", "web", "live_stream_native")
    for r in runs:
        request = {k: r[k] for k in ("sinks", "window", "positions", "length", "seed")}
        env = dict(os.environ, OMP_NUM_THREADS="1", PE_SIMD="sse2")
        out = subprocess.run([native_tool, checkpoint, json.dumps(request)], env=env, check=True,
                             capture_output=True, text=True)
        native = json.loads(out.stdout)
        same(check, "chapter 12, stream S = %d, W = %d, %s: the loss of every prediction"
             % (r["sinks"], r["window"], r["positions"]), r["bits"], native["bits"])


# ---- the native runs, in the background ---------------------------------------------------------------

def start_run(check, simd, run=FAST_RUN, name=""):
    folder = os.path.join(check.args.work, "native-" + name + simd)
    shutil.rmtree(folder, ignore_errors=True)  # `pe train` never replaces a finished run
    env = dict(os.environ, PE_SIMD=simd, OMP_NUM_THREADS="1")
    process = subprocess.Popen([check.pe, "train", *run, "--out", folder, "--no-figures", "--quiet",
                                "--save-every", "0"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    return {"process": process, "dir": folder, "simd": simd, "started": time.time()}


def wait_for_run(run):
    if "result" not in run:
        _, errors = run["process"].communicate()
        if run["process"].returncode != 0:
            raise RuntimeError("pe train under PE_SIMD=%s failed: %s" % (run["simd"], errors))
        with open(os.path.join(run["dir"], "run.json"), encoding="utf-8") as f:
            run["result"] = json.load(f)
        print("live-check: pe train under PE_SIMD=%s: %.0f s of training, finished %.0f s after the check began"
              % (run["simd"], run["result"]["train_seconds"], time.time() - run["started"]))
    return run["result"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--site", required=True, help="the built book (docs/html), with its live/ folder")
    parser.add_argument("--bin", required=True, help="the native build (build/default): pe, ch01_experiment")
    parser.add_argument("--work", required=True, help="a folder for the native runs")
    parser.add_argument("--screenshots", required=True)
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these checks (see above)")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    args = parser.parse_args()
    quick = (check_alibi, check_t5_and_shaw, check_sinusoid, check_rope, check_permutation,
             check_distance_bias, check_content_positions, check_rope_config)
    names = [step.__name__[len("check_"):] for step in quick] + ["training", "stream"]
    for name in args.only or []:
        if name not in names:
            parser.error("--only: no check '%s' (the checks: %s)" % (name, ", ".join(names)))
    if args.only:
        quick = [step for step in quick if step.__name__[len("check_"):] in args.only]
    training = not args.only or "training" in args.only
    streaming = not args.only or "stream" in args.only
    check = Check(args)
    check.site = os.path.realpath(args.site)
    with open(os.path.join(check.site, "live", "module.js"), encoding="utf-8") as f:
        if "peLiveModuleSource = null" in f.read():
            print("live-check: the book was built without the module (build the wasm preset, then the docs "
                  "target)", file=sys.stderr)
            return 1
    os.makedirs(args.screenshots, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    start = time.time()
    # The native references train while the browser draws the quick figures.
    scalar_run = start_run(check, "scalar") if training else None
    x86 = platform.machine() in ("x86_64", "AMD64")
    sse2_run = start_run(check, "sse2") if training and x86 else None
    stream_run = start_run(check, "sse2", STREAM_RUN, "stream-") if streaming and x86 else None
    driver = start_browser(args)
    try:
        for step in quick:
            step(check, driver)
            console_errors(check, driver, step.__name__)
        if training:
            check_training(check, driver, scalar_run, sse2_run)
            check_stop(check, driver)
            check_learned(check, driver)
            check_lengths(check, driver, sse2_run)
            console_errors(check, driver, "training")
        if streaming:
            check_stream(check, driver, stream_run)
            console_errors(check, driver, "stream")
    finally:
        driver.quit()
        for run in (scalar_run, sse2_run, stream_run):
            if run and run["process"].poll() is None:
                run["process"].kill()
    print("live-check: %d checks passed, %d failed, %.0f s; screenshots in %s"
          % (len(check.notes), len(check.failures), time.time() - start, args.screenshots))
    return 1 if check.failures else 0


if __name__ == "__main__":
    sys.exit(main())
