// Charts as SVG drawn on the server: readable without JavaScript, with nothing loaded from
// anywhere. One kind is enough for the dashboard: bars over months, stacked above and below zero
// (MRR's movements: what was won above, what was lost below), with an optional line (MRR itself).
// The numbers here only place shapes; every figure a person reads is in the table beside the
// chart, as the API gave it. Each chart is an image with a title and a description for screen
// readers, and its legend is HTML beneath it, so it wraps on a narrow screen; on a phone the
// chart keeps a readable size and scrolls sideways in its own region.
import { escapeHtml } from '../html.ts';

export type ChartSeries = { name: string; color: string; values: (number | null)[] };

export type BarChart = {
  /** Unique on the page: the ids of the chart's title and description derive from it. */
  id: string;
  title: string;
  description: string;
  /** One per bar, oldest first (months, "YYYY-MM"). */
  labels: string[];
  /** Stacked bars: positive values stack upwards from zero, negative ones downwards. */
  stacks: ChartSeries[];
  /** Drawn over the bars. */
  line?: ChartSeries | undefined;
};

const WIDTH = 720;
const HEIGHT = 300;
const MARGIN = { top: 14, right: 12, bottom: 30, left: 76 };
const MAX_X_LABELS = 8;
const axisNumber = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

/** A step of 1, 2, 2.5 or 5 × 10^k that cuts `span` into about `parts` intervals. */
function niceStep(span: number, parts: number): number {
  if (!(span > 0)) return 1;
  const raw = span / parts;
  const power = 10 ** Math.floor(Math.log10(raw));
  const [step] = [1, 2, 2.5, 5, 10].map((m) => m * power).filter((s) => s >= raw);
  return step ?? 10 * power;
}

const fixed = (n: number) => (Math.round(n * 10) / 10).toString();

/** The chart, as an <figure> with the SVG and its legend. */
export function barChart(chart: BarChart): string {
  const n = chart.labels.length;
  if (n === 0) return '';
  let low = 0;
  let high = 0;
  for (let i = 0; i < n; i++) {
    let up = 0;
    let down = 0;
    for (const s of chart.stacks) {
      const v = s.values[i] ?? 0;
      if (v > 0) up += v;
      else down += v;
    }
    const l = chart.line?.values[i];
    high = Math.max(high, up, l ?? 0);
    low = Math.min(low, down, l ?? 0);
  }
  const step = niceStep(high - low, 5);
  const top = Math.max(step, Math.ceil(high / step) * step);
  const bottom = Math.floor(low / step) * step;
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const y = (v: number) => MARGIN.top + ((top - v) / (top - bottom)) * plotH;
  const band = plotW / n;
  const barW = Math.max(1, band * 0.72);
  const x = (i: number) => MARGIN.left + i * band + (band - barW) / 2;
  const centre = (i: number) => MARGIN.left + i * band + band / 2;

  const grid: string[] = [];
  for (let v = bottom; v <= top + step / 1e6; v += step) {
    const at = fixed(y(v));
    grid.push(
      `<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${at}" y2="${at}" stroke="${Math.abs(v) < step / 1e6 ? '#374151' : '#e5e7eb'}" stroke-width="1"/>` +
        `<text x="${MARGIN.left - 8}" y="${at}" dy="4" text-anchor="end">${escapeHtml(axisNumber.format(v))}</text>`,
    );
  }
  const every = Math.ceil(n / MAX_X_LABELS);
  const xLabels = chart.labels
    .map((label, i) => (i % every === 0 ? `<text x="${fixed(centre(i))}" y="${HEIGHT - MARGIN.bottom + 18}" text-anchor="middle">${escapeHtml(label)}</text>` : ''))
    .join('');

  const bars: string[] = [];
  for (let i = 0; i < n; i++) {
    let up = 0;
    let down = 0;
    for (const s of chart.stacks) {
      const v = s.values[i] ?? 0;
      if (v === 0) continue;
      const from = v > 0 ? up : down;
      const to = from + v;
      if (v > 0) up = to;
      else down = to;
      const y1 = y(Math.max(from, to));
      const h = Math.max(0.5, Math.abs(y(from) - y(to)));
      bars.push(`<rect x="${fixed(x(i))}" y="${fixed(y1)}" width="${fixed(barW)}" height="${fixed(h)}" fill="${s.color}"/>`);
    }
  }

  let line = '';
  if (chart.line) {
    const segments: string[][] = [[]];
    chart.line.values.forEach((v, i) => {
      if (v === null) segments.push([]);
      else segments.at(-1)!.push(`${fixed(centre(i))},${fixed(y(v))}`);
    });
    line = segments
      .filter((s) => s.length > 0)
      .map((points) =>
        points.length === 1
          ? `<circle cx="${points[0]!.split(',')[0]}" cy="${points[0]!.split(',')[1]}" r="2.5" fill="${chart.line!.color}"/>`
          : `<polyline points="${points.join(' ')}" fill="none" stroke="${chart.line!.color}" stroke-width="2" stroke-linejoin="round"/>`,
      )
      .join('');
  }

  const legend = [...chart.stacks, ...(chart.line ? [chart.line] : [])]
    .map((s) => `<li><span class="swatch${s === chart.line ? ' line' : ''}" style="background:${s.color}"></span>${escapeHtml(s.name)}</li>`)
    .join('');
  const titleId = `${chart.id}-title`;
  const descId = `${chart.id}-desc`;
  return `<figure class="chart"><div class="plot" role="region" tabindex="0" aria-label="${escapeHtml(chart.title)} (chart)">
<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${titleId} ${descId}" preserveAspectRatio="xMidYMid meet">
<title id="${titleId}">${escapeHtml(chart.title)}</title><desc id="${descId}">${escapeHtml(chart.description)}</desc>
<g class="axis" font-size="13" fill="#374151">${grid.join('')}${xLabels}</g>
<g>${bars.join('')}</g>${line}
</svg></div>
<ul class="legend">${legend}</ul>
</figure>`;
}
