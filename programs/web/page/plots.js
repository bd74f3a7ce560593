// Drawing for the live figures, on canvases: heatmaps, lines and bars with their axes. Plain
// canvas code, no library (the pages load nothing from another host). Every function takes
// a canvas and a description and returns nothing; a canvas keeps its CSS size and is drawn at
// the screen's pixel density.
"use strict";
(function () {
  if (window.PePlots) return;

  const FONT = "12px sans-serif";
  const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
                  "#e377c2"];

  // A canvas sized for its CSS box at this screen's density; returns its 2-D context and size.
  function prepare(canvas) {
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth || Number(canvas.getAttribute("width")) || 400;
    const height = canvas.clientHeight || Number(canvas.getAttribute("height")) || 300;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    const g = canvas.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    g.font = FONT;
    g.fillStyle = "#222";
    return {g, width, height};
  }

  function lerp(a, b, t) {
    return a + (b - a) * t;
  }

  // Colour scales: sequential (dark blue to yellow, as the book's gnuplot figures) and
  // diverging (blue, white, red) for signed values.
  const SEQUENTIAL = [[13, 8, 135], [126, 3, 168], [204, 71, 120], [248, 149, 64], [240, 249, 33]];
  const DIVERGING = [[33, 102, 172], [247, 247, 247], [178, 24, 43]];

  // [r, g, b] at t in [0, 1] along the stops.
  function rgb(stops, t) {
    t = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0));
    const x = t * (stops.length - 1), k = Math.min(stops.length - 2, Math.floor(x));
    const a = stops[k], b = stops[k + 1], f = x - k;
    return [0, 1, 2].map(i => Math.round(lerp(a[i], b[i], f)));
  }

  function colour(stops, t) {
    return "rgb(" + rgb(stops, t).join(",") + ")";
  }

  function format(v) {
    if (!Number.isFinite(v)) return String(v);
    if (v === 0) return "0";
    const a = Math.abs(v);
    if (a >= 1000 || a < 0.01) return v.toExponential(1);
    if (Number.isInteger(v)) return String(v);
    return String(Number(v.toPrecision(3)));  // three digits, no trailing zeros: 0.5, 2.75, 124
  }

  // Round steps for an axis from lo to hi: about `count` ticks.
  function ticks(lo, hi, count) {
    if (!(hi > lo)) return [lo];
    const raw = (hi - lo) / count, p = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map(m => m * p).find(s => s >= raw);
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
    return out;
  }

  /// A matrix as coloured cells. d: {rows, cols, values (row-major), min, max, diverging,
  /// title, xLabel, yLabel, numbers (write each value in its cell when there is room),
  /// rowLabels, colLabels}. A value that is not a finite number (NaN for a masked cell) is
  /// drawn grey, without a number.
  function heatmap(canvas, d) {
    const {g, width, height} = prepare(canvas);
    const left = 44, top = d.title ? 22 : 8, right = 64, bottom = 34;
    const w = width - left - right, h = height - top - bottom;
    const cw = w / d.cols, ch = h / d.rows;
    let min = d.min, max = d.max;
    if (min === undefined || max === undefined) {
      min = Infinity;
      max = -Infinity;
      for (const v of d.values) if (Number.isFinite(v)) { min = Math.min(min, v); max = Math.max(max, v); }
      if (d.diverging) { const m = Math.max(Math.abs(min), Math.abs(max)) || 1; min = -m; max = m; }
      if (!(max > min)) max = min + 1;
    }
    const stops = d.diverging ? DIVERGING : SEQUENTIAL;
    // One pixel per cell in an image of its own, stretched without smoothing: sharp cells with
    // no seams between them, however many there are.
    const cells = document.createElement("canvas");
    cells.width = d.cols;
    cells.height = d.rows;
    const cg = cells.getContext("2d"), image = cg.createImageData(d.cols, d.rows);
    for (let k = 0; k < d.rows * d.cols; k++) {
      const v = d.values[k];
      image.data.set(Number.isFinite(v) ? rgb(stops, (v - min) / (max - min)) : [221, 221, 221], 4 * k);
      image.data[4 * k + 3] = 255;
    }
    cg.putImageData(image, 0, 0);
    g.imageSmoothingEnabled = false;
    g.drawImage(cells, left, top, w, h);
    if (d.numbers && cw >= 22 && ch >= 14) {
      g.textAlign = "center";
      g.textBaseline = "middle";
      g.font = (ch >= 18 ? 11 : 9) + "px sans-serif";
      for (let i = 0; i < d.rows; i++)
        for (let j = 0; j < d.cols; j++) {
          const v = d.values[i * d.cols + j], t = (v - min) / (max - min);
          if (!Number.isFinite(v)) continue;  // a grey cell (masked, say) has no number
          g.fillStyle = d.diverging ? (Math.abs(t - 0.5) > 0.3 ? "#fff" : "#111") : (t > 0.6 ? "#111" : "#fff");
          g.fillText(format(v), left + (j + 0.5) * cw, top + (i + 0.5) * ch);
        }
      g.font = FONT;
    }
    g.fillStyle = "#222";
    // Axis labels: every k-th row and column.
    g.textAlign = "right";
    g.textBaseline = "middle";
    const rowEvery = Math.max(1, Math.ceil(14 / ch)), colEvery = Math.max(1, Math.ceil(28 / cw));
    for (let i = 0; i < d.rows; i += rowEvery)
      g.fillText(d.rowLabels ? d.rowLabels[i] : String(i), left - 4, top + (i + 0.5) * ch);
    g.textAlign = "center";
    g.textBaseline = "top";
    for (let j = 0; j < d.cols; j += colEvery)
      g.fillText(d.colLabels ? d.colLabels[j] : String(j), left + (j + 0.5) * cw, top + h + 3);
    if (d.xLabel) g.fillText(d.xLabel, left + w / 2, top + h + 18);
    if (d.yLabel) {
      g.save();
      g.translate(10, top + h / 2);
      g.rotate(-Math.PI / 2);
      g.fillText(d.yLabel, 0, -4);
      g.restore();
    }
    if (d.title) {
      g.textAlign = "left";
      g.fillText(d.title, left, 4);
    }
    // The colour bar.
    const bx = left + w + 12;
    for (let k = 0; k < h; k++) {
      g.fillStyle = colour(stops, 1 - k / h);
      g.fillRect(bx, top + k, 12, 1.5);
    }
    g.fillStyle = "#222";
    g.textAlign = "left";
    g.textBaseline = "middle";
    g.fillText(format(max), bx + 16, top + 5);
    g.fillText(format(min), bx + 16, top + h - 5);
  }

  // The frame of a line or bar plot: axes, ticks, labels; returns the mapping to pixels.
  function frame(g, width, height, d, xr, yr) {
    const left = 54, right = d.rightLabel ? 50 : 14, top = d.title ? 24 : 10, bottom = 38;
    const w = width - left - right, h = height - top - bottom;
    const X = x => left + (d.logX ? Math.log(x / xr[0]) / Math.log(xr[1] / xr[0]) : (x - xr[0]) / (xr[1] - xr[0])) * w;
    const Y = y => top + h - (y - yr[0]) / (yr[1] - yr[0]) * h;
    g.strokeStyle = "#999";
    g.lineWidth = 1;
    g.strokeRect(left, top, w, h);
    g.fillStyle = "#222";
    g.textAlign = "right";
    g.textBaseline = "middle";
    for (const t of d.yTicks || ticks(yr[0], yr[1], 5)) {
      g.fillText((d.yFormat || format)(t), left - 4, Y(t));
      g.strokeStyle = "#eee";
      g.beginPath(); g.moveTo(left + 1, Y(t)); g.lineTo(left + w - 1, Y(t)); g.stroke();
    }
    g.textAlign = "center";
    g.textBaseline = "top";
    const xt = d.xTicks || (d.logX ? [] : ticks(xr[0], xr[1], 6));
    for (const t of xt) g.fillText(format(t), X(t), top + h + 4);
    if (d.xLabel) g.fillText(d.xLabel, left + w / 2, top + h + 20);
    if (d.yLabel) {
      g.save(); g.translate(12, top + h / 2); g.rotate(-Math.PI / 2); g.fillText(d.yLabel, 0, -4); g.restore();
    }
    if (d.title) { g.textAlign = "left"; g.fillText(d.title, left, 5); }
    return {X, Y, left, top, w, h};
  }

  function range(values, given) {
    if (given) return given;
    let lo = Infinity, hi = -Infinity;
    for (const v of values) if (Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    if (!Number.isFinite(lo)) return [0, 1];
    if (hi === lo) { lo -= 0.5; hi += 0.5; }
    const pad = (hi - lo) * 0.05;
    return [lo - pad, hi + pad];
  }

  /// Lines. d: {series: [{name, x, y, colour, dashed, dots, axis: "right"}], xLabel, yLabel,
  /// title, xRange, yRange, logX (with xTicks), logY (the left axis in powers of ten), right:
  /// {range, label} (a second y axis on the right), legend ("top", "middle" or "bottom")}.
  function lines(canvas, d) {
    if (d.logY) {
      // Plot log10 of the left axis' values, labelled as the powers of ten they are.
      const log = y => (y > 0 ? Math.log10(y) : NaN);
      d = Object.assign({}, d, {logY: false, yFormat: t => "1e" + t, series: d.series.map(
        s => (s.axis === "right" ? s : Object.assign({}, s, {y: s.y.map(log)})))});
      const r = range(d.series.filter(s => s.axis !== "right").flatMap(s => s.y), null);
      d.yRange = [Math.floor(r[0]), Math.ceil(r[1])];
      d.yTicks = [];
      const step = Math.max(1, Math.ceil((d.yRange[1] - d.yRange[0]) / 6));
      for (let t = d.yRange[0]; t <= d.yRange[1]; t += step) d.yTicks.push(t);
    }
    const {g, width, height} = prepare(canvas);
    const left = d.series.filter(s => s.axis !== "right");
    const xs = d.series.flatMap(s => s.x);
    const xr = d.xRange || [Math.min(...xs), Math.max(...xs)];
    const yr = range(left.flatMap(s => s.y), d.yRange);
    const f = frame(g, width, height, Object.assign({rightLabel: d.right && d.right.label}, d), xr, yr);
    let Yright = null;
    if (d.right) {
      const rr = d.right.range;
      Yright = y => f.top + f.h - (y - rr[0]) / (rr[1] - rr[0]) * f.h;
      g.fillStyle = "#222";
      g.textAlign = "left";
      g.textBaseline = "middle";
      for (const t of ticks(rr[0], rr[1], 5)) g.fillText(format(t), f.left + f.w + 4, Yright(t));
      g.save(); g.translate(width - 8, f.top + f.h / 2); g.rotate(Math.PI / 2); g.textAlign = "center";
      g.fillText(d.right.label, 0, 0); g.restore();
    }
    g.save();
    g.beginPath(); g.rect(f.left, f.top, f.w, f.h); g.clip();
    d.series.forEach((s, k) => {
      const Y = s.axis === "right" ? Yright : f.Y, c = s.colour || COLORS[k % COLORS.length];
      g.strokeStyle = c;
      g.fillStyle = c;
      g.lineWidth = s.width || 1.6;
      g.setLineDash(s.dashed ? [5, 4] : []);
      if (!s.dotsOnly) {
        g.beginPath();
        let drawing = false;
        s.x.forEach((x, i) => {
          if (!Number.isFinite(s.y[i])) { drawing = false; return; }
          if (drawing) g.lineTo(f.X(x), Y(s.y[i]));
          else g.moveTo(f.X(x), Y(s.y[i]));
          drawing = true;
        });
        g.stroke();
      }
      if (s.dots || s.dotsOnly)
        s.x.forEach((x, i) => {
          if (Number.isFinite(s.y[i])) { g.beginPath(); g.arc(f.X(x), Y(s.y[i]), 3, 0, 2 * Math.PI); g.fill(); }
        });
    });
    g.restore();
    g.setLineDash([]);
    // The legend, inside the frame on the right (d.legend: "top", the default, "middle" or
    // "bottom").
    g.textAlign = "left";
    g.textBaseline = "middle";
    const named = d.series.map((s, k) => [s, k]).filter(([s]) => s.name);
    const lw = Math.max(0, ...named.map(([s]) => g.measureText(s.name).width)) + 34;
    const top = d.legend === "middle" ? f.top + (f.h - named.length * 15) / 2
              : d.legend === "bottom" ? f.top + f.h - named.length * 15 - 7 : f.top + 3;
    let y = top + 7;
    if (named.length) {
      g.fillStyle = "rgba(255,255,255,0.85)";
      g.fillRect(f.left + f.w - lw - 6, top, lw + 2, named.length * 15 + 4);
    }
    for (const [s, k] of named) {
      const c = s.colour || COLORS[k % COLORS.length], x = f.left + f.w - lw;
      g.strokeStyle = c; g.fillStyle = c; g.lineWidth = 2;
      g.setLineDash(s.dashed ? [5, 4] : []);
      g.beginPath(); g.moveTo(x, y); g.lineTo(x + 22, y); g.stroke();
      g.setLineDash([]);
      g.fillStyle = "#222";
      g.fillText(s.name, x + 27, y);
      y += 15;
    }
  }

  /// Bars. d: {values, labels, colours (one per bar, or one), xLabel, yLabel, title, yRange,
  /// line: {y, label} (a horizontal reference line)}.
  function bars(canvas, d) {
    const {g, width, height} = prepare(canvas);
    const yr = d.yRange || range(d.values.concat(d.line ? [d.line.y] : [], [0]));
    const n = d.values.length;
    const f = frame(g, width, height, Object.assign({xTicks: []}, d), [0, n], yr);
    const bw = f.w / n;
    d.values.forEach((v, i) => {
      g.fillStyle = Array.isArray(d.colours) ? d.colours[i] : d.colours || COLORS[0];
      const y0 = f.Y(Math.max(yr[0], 0)), y1 = f.Y(Math.min(v, yr[1]));
      g.fillRect(f.left + i * bw + bw * 0.1, Math.min(y0, y1), bw * 0.8, Math.abs(y1 - y0));
    });
    g.fillStyle = "#222";
    g.textAlign = "center";
    g.textBaseline = "top";
    const every = Math.max(1, Math.ceil(24 / bw));
    for (let i = 0; i < n; i += every) g.fillText(d.labels ? d.labels[i] : String(i), f.left + (i + 0.5) * bw, f.top + f.h + 4);
    if (d.line) {
      g.strokeStyle = "#444";
      g.setLineDash([5, 4]);
      g.beginPath(); g.moveTo(f.left, f.Y(d.line.y)); g.lineTo(f.left + f.w, f.Y(d.line.y)); g.stroke();
      g.setLineDash([]);
      g.textAlign = "right";
      g.textBaseline = "bottom";
      g.fillText(d.line.label, f.left + f.w - 4, f.Y(d.line.y) - 2);
    }
  }

  /// A row of cells, one per item (a model's layers, say), numbered from 0 under the row. d:
  /// {colours (one per cell), labels (a short text in each cell, written when it fits), title,
  /// legend: [[colour, text], ...] (under the numbers, wrapped to the width)}.
  function strip(canvas, d) {
    const {g, width} = prepare(canvas);
    const left = 10, top = d.title ? 22 : 6, h = 24, n = d.colours.length;
    const w = (width - 2 * left) / Math.max(1, n);
    if (d.title) { g.textAlign = "left"; g.textBaseline = "top"; g.fillText(d.title, left, 4); }
    g.textAlign = "center";
    g.textBaseline = "middle";
    d.colours.forEach((c, i) => {
      g.fillStyle = c;
      g.fillRect(left + i * w, top, Math.max(1, w - (w >= 4 ? 1 : 0)), h);
      if (d.labels && w >= 12) {
        g.fillStyle = "#fff";
        g.fillText(d.labels[i], left + (i + 0.5) * w, top + h / 2);
      }
    });
    g.fillStyle = "#222";
    g.textBaseline = "top";
    const every = [1, 2, 4, 5, 8, 10, 20, 50, 100].find(k => k * w >= 22) || 200;
    for (let i = 0; i < n; i += every) g.fillText(String(i), left + (i + 0.5) * w, top + h + 3);
    let x = left, y = top + h + 26;
    g.textAlign = "left";
    g.textBaseline = "middle";
    for (const [c, text] of d.legend || []) {
      const size = 18 + g.measureText(text).width + 16;
      if (x > left && x + size > width - left) { x = left; y += 18; }
      g.fillStyle = c;
      g.fillRect(x, y - 6, 12, 12);
      g.fillStyle = "#222";
      g.fillText(text, x + 18, y);
      x += size;
    }
  }

  window.PePlots = {heatmap, lines, bars, strip, format, COLORS};
})();
