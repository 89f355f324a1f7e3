// The MRR of one currency (or of the reporting currency) as a terminal chart: its month-end MRR as a line (asciichart), and under
// it, on the same columns, each month's movements as bars: gains above the line (new business,
// expansion, reactivation), losses below (contraction, churn). It fits the terminal's width: a
// month takes up to four columns, and a series longer than the width shows its latest months.
import asciichart from 'asciichart';
import type { MonthFigures } from '../types.ts';

/** What a chart draws of a month: its MRR and its movements' MRR. */
export type ChartMonth = { month: string; mrr: string; movements: Record<'newBusiness' | 'expansion' | 'reactivation' | 'contraction' | 'churn', { mrr: string }> } | MonthFigures;

/** How to draw: the columns available, and whether to colour (a terminal, NO_COLOR unset). */
export type ChartSettings = { columns: number; color: boolean };

const LINE_HEIGHT = 8;
const BAR_HEIGHT = 3;
const MAX_COLUMNS_PER_MONTH = 4;

type Part = { name: string; glyph: string; color: string; of: (m: ChartMonth) => number };
const GAINS: Part[] = [
  { name: 'new business', glyph: '█', color: asciichart.green, of: (m) => Number(m.movements.newBusiness.mrr) },
  { name: 'expansion', glyph: '▓', color: asciichart.cyan, of: (m) => Number(m.movements.expansion.mrr) },
  { name: 'reactivation', glyph: '▒', color: asciichart.blue, of: (m) => Number(m.movements.reactivation.mrr) },
];
const LOSSES: Part[] = [
  { name: 'contraction', glyph: '░', color: asciichart.yellow, of: (m) => Number(m.movements.contraction.mrr) },
  { name: 'churn', glyph: '█', color: asciichart.red, of: (m) => Number(m.movements.churn.mrr) },
];

export const money = (x: number) => x.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/**
 * The chart of one currency's months (in order). Every line is at most `columns` wide; a title
 * says which months it shows.
 */
export function mrrChart(currency: string, months: ChartMonth[], { columns, color }: ChartSettings): string {
  if (months.length === 0) return `${currency}: no month end finds a contract active, so there is no monthly figure to draw.\n`;
  const paint = (text: string, c: string) => (color ? `${c}${text}${asciichart.reset}` : text);
  const mrr = months.map((m) => Number(m.mrr));
  const gains = months.map((m) => GAINS.reduce((s, p) => s + p.of(m), 0));
  const losses = months.map((m) => LOSSES.reduce((s, p) => s + p.of(m), 0));
  const barTop = Math.max(...gains, ...losses);
  const labels = [Math.max(...mrr), 0, barTop, -barTop].map(money);
  const labelWidth = Math.max(...labels.map((l) => l.length)) + 1;
  // asciichart puts the label, a space and the axis before the first column.
  const prefix = labelWidth + 2;
  const fits = Math.max(1, columns - prefix - 1);
  const shown = months.length > fits ? months.slice(-fits) : months;
  const from = months.length - shown.length;
  const width = Math.max(1, Math.min(MAX_COLUMNS_PER_MONTH, Math.floor(fits / shown.length)));
  const stretch = (values: number[]) => values.slice(from).flatMap((v) => Array<number>(width).fill(v));

  const first = shown[0]!.month;
  const last = shown.at(-1)!.month;
  const title =
    `${currency}: MRR at each month end, ${first} to ${last}` +
    (from > 0 ? `\n(the latest ${shown.length} of its ${months.length} months; --from and --to choose others)` : '');
  // asciichart draws the first value on the axis and, in column x, the step to value x + 1: the
  // first value twice puts each month under its own columns, as the bars and labels are.
  const columnsOfMrr = stretch(mrr);
  const line = asciichart.plot([columnsOfMrr[0]!, ...columnsOfMrr], {
    height: LINE_HEIGHT,
    min: 0,
    format: (x: number) => money(x).padStart(labelWidth),
    ...(color && { colors: [asciichart.lightgreen] }),
  });

  // The bars: BAR_HEIGHT rows of gains, the zero axis, BAR_HEIGHT rows of losses; each month's
  // stack cut into its parts by where their running sums fall.
  const unit = barTop > 0 ? barTop / BAR_HEIGHT : 1;
  const cellOf = (m: ChartMonth, parts: Part[], row: number): string => {
    const total = parts.reduce((s, p) => s + p.of(m), 0);
    if (total <= 0 || row > Math.max(1, Math.round(total / unit))) return ' ';
    const at = (row - 0.5) * unit;
    let sum = 0;
    const part = parts.find((p) => (sum += p.of(m)) >= at) ?? parts.findLast((p) => p.of(m) > 0)!;
    return paint(part.glyph, part.color);
  };
  const barRow = (label: string, axis: string, cells: string[]) => `${label.padStart(labelWidth)} ${axis}${cells.join('')}`;
  const cells = (parts: Part[], row: number) => shown.flatMap((m) => Array<string>(width).fill(cellOf(m, parts, row)));
  const bars: string[] = [];
  for (let row = BAR_HEIGHT; row >= 1; row--) bars.push(barRow(row === BAR_HEIGHT ? `+${money(barTop)}` : '', '┤', cells(GAINS, row)));
  bars.push(barRow(money(0), '┼', Array<string>(shown.length * width).fill('─')));
  for (let row = 1; row <= BAR_HEIGHT; row++) bars.push(barRow(row === BAR_HEIGHT ? `-${money(barTop)}` : '', '┤', cells(LOSSES, row)));

  const legend = [
    `${' '.repeat(prefix)}gains:  ${GAINS.map((p) => `${paint(p.glyph, p.color)} ${p.name}`).join('  ')}`,
    `${' '.repeat(prefix)}losses: ${LOSSES.map((p) => `${paint(p.glyph, p.color)} ${p.name}`).join('  ')}`,
  ].join('\n');
  const monthsLine = `${' '.repeat(prefix)}${monthLabels(shown.map((m) => m.month), width, columns - prefix)}`;
  return `${title}\n${line}\n${monthsLine}\n\n${bars.join('\n')}\n${legend}\n`;
}

/**
 * Month labels (YYYY-MM) under their columns, `width` columns a month, within `room` columns: the
 * first and the last always, and between them as many as fit two spaces apart.
 */
function monthLabels(months: string[], width: number, room: number): string {
  const LABEL = 7;
  const lastAt = Math.max(0, Math.min((months.length - 1) * width, room - LABEL));
  const placed: Array<[number, string]> = [[0, months[0]!]];
  months.forEach((month, i) => {
    const at = i * width;
    if (i > 0 && i < months.length - 1 && at >= placed.at(-1)![0] + LABEL + 2 && at + LABEL + 2 <= lastAt) placed.push([at, month]);
  });
  if (months.length > 1 && lastAt >= placed.at(-1)![0] + LABEL + 2) placed.push([lastAt, months.at(-1)!]);
  const line = Array<string>(room).fill(' ');
  for (const [at, month] of placed) line.splice(at, LABEL, ...month);
  return line.join('').slice(0, room).trimEnd();
}
