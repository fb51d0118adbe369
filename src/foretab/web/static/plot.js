/* foretab chart: history (solid), forecast (dashed) and the forecast interval (shaded band)
 * of every project in an answer, drawn as inline SVG so it is part of the page's DOM:
 * screen readers get a title and description, every point has a tooltip, and the browser
 * test can see the band. No library, no network. */
(function () {
  "use strict";

  const NS = "http://www.w3.org/2000/svg";
  const MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august",
    "september", "october", "november", "december"];
  const SHORT = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  // Ten distinguishable hues (a scope question can chart a whole district); they repeat after.
  const COLORS = ["#1f5fbf", "#c2362f", "#1d8049", "#8e44ad", "#b86e00", "#00838f",
    "#d6458f", "#6b7a00", "#5a4fcf", "#7f5539"];
  const number = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });
  const tick = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });

  /** Months since year 0 for "January 2022", "2022-01" or "2022年1月"; null if none. */
  function monthIndex(label) {
    const text = String(label).trim();
    let m = /^([A-Za-z]+)\s+(\d{4})$/.exec(text);
    if (m) {
      const month = MONTHS.indexOf(m[1].toLowerCase());
      return month < 0 ? null : Number(m[2]) * 12 + month;
    }
    m = /^(\d{4})-(\d{1,2})/.exec(text) || /^(\d{4})年(\d{1,2})月/.exec(text);
    return m ? Number(m[1]) * 12 + Number(m[2]) - 1 : null;
  }

  function monthName(index) {
    return SHORT[((index % 12) + 12) % 12] + " " + Math.floor(index / 12);
  }

  function el(name, attrs, parent) {
    const node = document.createElementNS(NS, name);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
    if (parent) parent.appendChild(node);
    return node;
  }

  function key(entity) {
    return entity.city + "\u0000" + entity.district + "\u0000" + entity.project;
  }

  /** One entry per project: its history points and forecast points, in month order. */
  function seriesOf(doc) {
    const byKey = new Map();
    const entry = (entity) => {
      const k = key(entity);
      if (!byKey.has(k)) {
        byKey.set(k, { name: entity.project, place: entity.district + ", " + entity.city,
          history: [], forecast: [], color: COLORS[byKey.size % COLORS.length] });
      }
      return byKey.get(k);
    };
    for (const p of doc.plan.projects) entry(p);
    for (const s of doc.history) {
      const e = entry(s);
      for (const [label, value] of s.values) {
        const i = monthIndex(label);
        if (i !== null) e.history.push({ i, label, value });
      }
    }
    for (const s of doc.forecast) {
      const e = entry(s);
      for (const v of s.values) {
        const i = monthIndex(v.month);
        if (i !== null) e.forecast.push({ i, label: v.month, value: v.value, lo: v.lo, hi: v.hi });
      }
    }
    const all = [...byKey.values()];
    for (const e of all) {
      e.history.sort((a, b) => a.i - b.i);
      e.forecast.sort((a, b) => a.i - b.i);
    }
    return all.filter((e) => e.history.length || e.forecast.length);
  }

  function niceStep(span, count) {
    const raw = span / Math.max(1, count);
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const f of [1, 2, 2.5, 5, 10]) if (f * power >= raw) return f * power;
    return 10 * power;
  }

  /** A path through points, broken where a month is missing (a gap is not a straight line). */
  function linePath(points, x, y) {
    let d = "";
    let previous = null;
    for (const p of points) {
      d += (previous !== null && p.i - previous === 1 ? "L" : "M") + x(p.i).toFixed(1) + "," + y(p.value).toFixed(1);
      previous = p.i;
    }
    return d;
  }

  /** Draw the chart of ``doc`` (an AnswerDoc) into ``container``; returns what was drawn. */
  function draw(container, doc) {
    container.textContent = "";
    const series = seriesOf(doc);
    const drawn = { series: series.length, bands: 0, forecasts: 0 };
    if (!series.length) return drawn;

    const width = Math.max(280, Math.round(container.clientWidth || 640));
    const height = Math.round(Math.min(420, Math.max(230, width * 0.5)));
    const m = { left: width < 420 ? 52 : 66, right: 14, top: 14, bottom: 34 };
    const reference = monthIndex(doc.plan.reference_month);
    const months = [];
    const values = [];
    for (const s of series) {
      for (const p of s.history) { months.push(p.i); values.push(p.value); }
      for (const p of s.forecast) {
        months.push(p.i); values.push(p.value);
        if (p.lo !== null && p.hi !== null) values.push(p.lo, p.hi);
      }
    }
    let x0 = Math.min(...months);
    let x1 = Math.max(...months);
    if (x0 === x1) { x0 -= 1; x1 += 1; }
    let y0 = Math.min(...values);
    let y1 = Math.max(...values);
    const pad = (y1 - y0) * 0.08 || Math.abs(y1) * 0.05 || 1;
    y0 -= pad; y1 += pad;
    const step = niceStep(y1 - y0, height < 300 ? 4 : 6);
    y0 = Math.floor(y0 / step) * step;
    y1 = Math.ceil(y1 / step) * step;
    const x = (i) => m.left + ((i - x0) / (x1 - x0)) * (width - m.left - m.right);
    const y = (v) => height - m.bottom - ((v - y0) / (y1 - y0)) * (height - m.top - m.bottom);

    const id = "chart-" + Math.random().toString(36).slice(2, 8);
    const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, role: "img",
      "aria-labelledby": id + "-title " + id + "-desc", "data-series": series.length }, container);
    const names = series.map((s) => s.name).join(", ");
    el("title", { id: id + "-title" }, svg).textContent = "History and forecast of " + names;
    el("desc", { id: id + "-desc" }, svg).textContent = series.map((s) => {
      const last = s.history[s.history.length - 1];
      const end = s.forecast[s.forecast.length - 1];
      return s.name + ": " + (last ? "last observed " + number.format(last.value) + " in " + last.label : "no history")
        + (end ? ", forecast " + number.format(end.value) + " in " + end.label : "");
    }).join("; ") + ".";

    // The months the question asks about, shaded behind everything.
    const w0 = monthIndex(doc.plan.window.first);
    const w1 = monthIndex(doc.plan.window.last);
    if (w0 !== null && w1 !== null) {
      const a = x(Math.max(x0, w0 - 0.5));
      const b = x(Math.min(x1, w1 + 0.5));
      if (b > a) el("rect", { class: "window", x: a, y: m.top, width: b - a, height: height - m.top - m.bottom, fill: "#eef3fb" }, svg);
    }
    const grid = el("g", { class: "grid" }, svg);
    for (let v = y0; v <= y1 + step / 2; v += step) {
      el("line", { x1: m.left, x2: width - m.right, y1: y(v), y2: y(v), stroke: "#e3e6eb" }, grid);
      el("text", { x: m.left - 6, y: y(v) + 4, "text-anchor": "end" }, grid).textContent = tick.format(v);
    }
    const span = x1 - x0;
    const every = [1, 2, 3, 6, 12, 24].find((k) => span / k <= Math.max(2, Math.floor(width / 80))) || 24;
    for (let i = Math.ceil(x0 / every) * every; i <= x1; i += every) {
      el("line", { x1: x(i), x2: x(i), y1: height - m.bottom, y2: height - m.bottom + 4, stroke: "#9aa3ad" }, grid);
      // Labels at the edges are anchored inwards so they are not cut off.
      const anchor = x(i) > width - m.right - 30 ? "end" : x(i) < m.left + 30 ? "start" : "middle";
      el("text", { x: x(i), y: height - m.bottom + 18, "text-anchor": anchor }, grid).textContent = monthName(i);
    }
    el("line", { x1: m.left, x2: width - m.right, y1: height - m.bottom, y2: height - m.bottom, stroke: "#9aa3ad" }, grid);
    if (reference !== null && reference >= x0 && reference <= x1) {
      el("line", { class: "now", x1: x(reference), x2: x(reference), y1: m.top, y2: height - m.bottom,
        stroke: "#5b6470", "stroke-dasharray": "2 3" }, svg);
      el("text", { x: x(reference) + 4, y: m.top + 12 }, svg).textContent = "now";
    }

    for (const s of series) {
      const g = el("g", { class: "series", "data-project": s.name }, svg);
      const banded = s.forecast.filter((p) => p.lo !== null && p.hi !== null);
      if (banded.length) {
        const top = banded.map((p) => x(p.i).toFixed(1) + "," + y(p.hi).toFixed(1));
        const bottom = banded.slice().reverse().map((p) => x(p.i).toFixed(1) + "," + y(p.lo).toFixed(1));
        // A one-month forecast still gets a visible band: widen it a little around the point.
        if (banded.length === 1) {
          const p = banded[0];
          top.unshift((x(p.i) - 4).toFixed(1) + "," + y(p.hi).toFixed(1));
          bottom.push((x(p.i) - 4).toFixed(1) + "," + y(p.lo).toFixed(1));
          top.push((x(p.i) + 4).toFixed(1) + "," + y(p.hi).toFixed(1));
          bottom.unshift((x(p.i) + 4).toFixed(1) + "," + y(p.lo).toFixed(1));
        }
        el("path", { class: "band", d: "M" + top.join("L") + "L" + bottom.join("L") + "Z",
          fill: s.color, "fill-opacity": 0.18, stroke: "none" }, g);
        drawn.bands += 1;
      }
      if (s.history.length) {
        el("path", { class: "history", d: linePath(s.history, x, y), fill: "none", stroke: s.color,
          "stroke-width": 2, "stroke-linejoin": "round" }, g);
      }
      if (s.forecast.length) {
        const last = s.history[s.history.length - 1];
        const joined = last && last.i < s.forecast[0].i ? [last, ...s.forecast] : s.forecast;
        const d = joined.map((p, k) => (k ? "L" : "M") + x(p.i).toFixed(1) + "," + y(p.value).toFixed(1)).join("");
        el("path", { class: "forecast", d, fill: "none", stroke: s.color, "stroke-width": 2,
          "stroke-dasharray": "6 4" }, g);
        drawn.forecasts += 1;
      }
      for (const p of s.history) {
        el("circle", { cx: x(p.i), cy: y(p.value), r: 2.2, fill: s.color }, g).appendChild(
          tip(s.name + ", " + p.label + ": " + number.format(p.value)));
      }
      for (const p of s.forecast) {
        const interval = p.lo !== null && p.hi !== null ? " (interval " + number.format(p.lo) + " – " + number.format(p.hi) + ")" : "";
        el("circle", { class: "forecast-point", cx: x(p.i), cy: y(p.value), r: 3.2, fill: "#fff",
          stroke: s.color, "stroke-width": 2 }, g).appendChild(
          tip(s.name + ", " + p.label + " (forecast): " + number.format(p.value) + interval));
      }
    }
    return drawn;
  }

  function tip(text) {
    const t = document.createElementNS(NS, "title");
    t.textContent = text;
    return t;
  }

  window.ForetabPlot = { draw, monthIndex, seriesOf };
})();
