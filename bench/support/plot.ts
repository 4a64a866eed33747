/**
 * A dependency-free SVG line chart with two y axes, for the scale benchmark's plot of
 * initial-sync time and forwarder RSS against object count (docs/performance-scale.svg).
 */

/** One line of the chart, drawn against the left or the right axis. */
export interface Series {
  label: string;
  axis: 'left' | 'right';
  color: string;
  /** Dashed, for a baseline beside the measurement. */
  dashed?: boolean;
  points: { x: number; y: number }[];
}

const W = 720;
const H = 400;
const M = { top: 56, right: 80, bottom: 60, left: 80 };
/** Height of a legend row; the chart grows by one per row past the first. */
const LEGEND_ROW = 16;
/** Width of a legend entry: the line, its gap, and the label at about 6.2 px a character. */
const legendWidth = (label: string) => 34 + label.length * 6.2;

function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function fmt(n: number): string {
  if (n >= 1000 && n % 1000 === 0) return `${n / 1000}k`;
  return Number(n.toPrecision(3)).toString();
}

/**
 * The chart as SVG text: x linear from 0 to the largest x, each axis from 0 to a round number
 * above its largest y, five ticks each, a legend under the title (in as many rows as it needs
 * to stay inside the chart's width).
 */
export function lineChart(options: {
  title: string;
  xLabel: string;
  leftLabel: string;
  rightLabel: string;
  series: Series[];
}): string {
  const all = options.series.flatMap((s) => s.points);
  const xMax = niceMax(Math.max(...all.map((p) => p.x)));
  const yMax = (axis: 'left' | 'right') =>
    niceMax(
      Math.max(
        0,
        ...options.series.filter((s) => s.axis === axis).flatMap((s) => s.points.map((p) => p.y)),
      ),
    );
  const max = { left: yMax('left'), right: yMax('right') };
  const legend: { series: Series; label: string; x: number; row: number }[] = [];
  let legendX = M.left;
  let row = 0;
  for (const series of options.series) {
    const label = `${series.label} (${series.axis} axis)`;
    if (legendX > M.left && legendX + legendWidth(label) > W) {
      row++;
      legendX = M.left;
    }
    legend.push({ series, label, x: legendX, row });
    legendX += legendWidth(label);
  }
  const top = M.top + row * LEGEND_ROW;
  const height = H + row * LEGEND_ROW;
  const pw = W - M.left - M.right;
  const ph = height - top - M.bottom;
  const sx = (x: number) => M.left + (x / xMax) * pw;
  const sy = (y: number, axis: 'left' | 'right') => top + ph - (y / max[axis]) * ph;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${height}" fill="white"/>`,
    `<text x="${W / 2}" y="18" text-anchor="middle" font-size="14">${esc(options.title)}</text>`,
  ];
  for (let i = 0; i <= 5; i++) {
    const f = i / 5;
    const y = top + ph - f * ph;
    const x = M.left + f * pw;
    out.push(
      `<line x1="${M.left}" y1="${y}" x2="${M.left + pw}" y2="${y}" stroke="#e5e5e5"/>`,
      `<text x="${M.left - 6}" y="${y + 4}" text-anchor="end">${fmt(f * max.left)}</text>`,
      `<text x="${M.left + pw + 6}" y="${y + 4}">${fmt(f * max.right)}</text>`,
      `<text x="${x}" y="${M.top + ph + 18}" text-anchor="middle">${fmt(f * xMax)}</text>`,
    );
  }
  out.push(
    `<rect x="${M.left}" y="${top}" width="${pw}" height="${ph}" fill="none" stroke="#999"/>`,
    `<text x="${M.left + pw / 2}" y="${height - 16}" text-anchor="middle">${esc(options.xLabel)}</text>`,
    `<text transform="translate(20 ${top + ph / 2}) rotate(-90)" text-anchor="middle">${esc(options.leftLabel)}</text>`,
    `<text transform="translate(${W - 16} ${top + ph / 2}) rotate(90)" text-anchor="middle">${esc(options.rightLabel)}</text>`,
  );
  for (const { series: s, label, x, row } of legend) {
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    const path = s.points
      .map((p, i) => `${i === 0 ? 'M' : 'L'}${sx(p.x).toFixed(1)} ${sy(p.y, s.axis).toFixed(1)}`)
      .join(' ');
    out.push(`<path d="${path}" fill="none" stroke="${s.color}" stroke-width="2"${dash}/>`);
    for (const p of s.points) {
      out.push(
        `<circle cx="${sx(p.x).toFixed(1)}" cy="${sy(p.y, s.axis).toFixed(1)}" r="3" fill="${s.color}"/>`,
      );
    }
    const y = 38 + row * LEGEND_ROW;
    out.push(
      `<line x1="${x}" y1="${y}" x2="${x + 20}" y2="${y}" stroke="${s.color}" stroke-width="2"${dash}/>`,
      `<text x="${x + 24}" y="${y + 4}">${esc(label)}</text>`,
    );
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
