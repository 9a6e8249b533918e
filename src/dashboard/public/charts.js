// A queue's last hour as plain SVG: completions, failed attempts (per minute, bars) and the
// worst latency of each minute (a line). The hour is kept by the dashboard's process, so a page
// opened again draws the same hour.
import { $, age, api, enc } from "./lib.js";

const NS = "http://www.w3.org/2000/svg";
const W = 360;
const H = 60;

function svgEl(name, attrs) {
  const el = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

/** One chart of `values` (one per minute of the hour, oldest first). */
function chart(id, title, values, line, describe) {
  const total = values.reduce((s, v) => s + v, 0);
  const max = Math.max(1, ...values);
  const summary = describe(total, Math.max(0, ...values));
  const figure = document.createElement("figure");
  figure.id = id;
  figure.dataset.total = String(total);
  figure.dataset.max = String(Math.max(0, ...values));
  const caption = document.createElement("figcaption");
  caption.textContent = `${title}: ${summary}`;
  const svg = svgEl("svg", {
    width: W,
    height: H,
    viewBox: `0 0 ${W} ${H}`,
    role: "img",
    "aria-label": `${title}: ${summary}`,
  });
  svg.append(svgEl("line", { x1: 0, y1: H - 0.5, x2: W, y2: H - 0.5, stroke: "#d0d7de" }));
  const step = W / values.length;
  if (line) {
    const points = values.map((v, i) => `${(i + 0.5) * step},${H - 1 - (v / max) * (H - 4)}`);
    svg.append(svgEl("polyline", { points: points.join(" "), fill: "none", stroke: "#9a6700" }));
  } else {
    values.forEach((v, i) => {
      if (v === 0) return;
      const h = (v / max) * (H - 4);
      svg.append(
        svgEl("rect", {
          x: i * step + 0.5,
          y: H - 1 - h,
          width: Math.max(1, step - 1),
          height: h,
          fill: id.includes("failed") ? "#cf222e" : "#0969da",
        }),
      );
    });
  }
  figure.append(caption, svg);
  return figure;
}

/** Draws queue `queue`'s hour into `#hour`. */
export async function drawHour(queue) {
  const { bucketMs, buckets } = await api(`/api/queues/${enc(queue)}/series`);
  const now = Date.now();
  const start = now - (now % bucketMs) - 59 * bucketMs;
  const minutes = Array.from({ length: 60 }, (_, i) => start + i * bucketMs);
  const at = new Map(buckets.map((b) => [b.at, b]));
  const pick = (f) => minutes.map((m) => at.get(m)?.[f] ?? 0);
  $("hour").replaceChildren(
    chart(
      "hour-completed",
      "completed per minute, last hour",
      pick("completed"),
      false,
      (t, m) => `${t} in all, at most ${m} a minute`,
    ),
    chart(
      "hour-failed",
      "failed attempts per minute, last hour",
      pick("failed"),
      false,
      (t, m) => `${t} in all, at most ${m} a minute`,
    ),
    chart(
      "hour-latency",
      "worst latency each minute, last hour",
      pick("latencyMs"),
      true,
      (_t, m) => `at most ${age(m)}`,
    ),
  );
}
