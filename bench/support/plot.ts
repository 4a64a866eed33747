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
 * above its largest y, five ticks each, a legend under the title.
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
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const sx = (x: number) => M.left + (x / xMax) * pw;
  const sy = (y: number, axis: 'left' | 'right') => M.top + ph - (y / max[axis]) * ph;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="18" text-anchor="middle" font-size="14">${esc(options.title)}</text>`,
  ];
  for (let i = 0; i <= 5; i++) {
    const f = i / 5;
    const y = M.top + ph - f * ph;
    const x = M.left + f * pw;
    out.push(
      `<line x1="${M.left}" y1="${y}" x2="${M.left + pw}" y2="${y}" stroke="#e5e5e5"/>`,
      `<text x="${M.left - 6}" y="${y + 4}" text-anchor="end">${fmt(f * max.left)}</text>`,
      `<text x="${M.left + pw + 6}" y="${y + 4}">${fmt(f * max.right)}</text>`,
      `<text x="${x}" y="${M.top + ph + 18}" text-anchor="middle">${fmt(f * xMax)}</text>`,
    );
  }
  out.push(
    `<rect x="${M.left}" y="${M.top}" width="${pw}" height="${ph}" fill="none" stroke="#999"/>`,
    `<text x="${M.left + pw / 2}" y="${H - 16}" text-anchor="middle">${esc(options.xLabel)}</text>`,
    `<text transform="translate(20 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle">${esc(options.leftLabel)}</text>`,
    `<text transform="translate(${W - 16} ${M.top + ph / 2}) rotate(90)" text-anchor="middle">${esc(options.rightLabel)}</text>`,
  );
  let legendX = M.left;
  for (const s of options.series) {
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
    const label = `${s.label} (${s.axis} axis)`;
    out.push(
      `<line x1="${legendX}" y1="38" x2="${legendX + 20}" y2="38" stroke="${s.color}" stroke-width="2"${dash}/>`,
      `<text x="${legendX + 24}" y="42">${esc(label)}</text>`,
    );
    legendX += 34 + label.length * 6.2;
  }
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
