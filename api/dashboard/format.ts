// How the dashboard writes the API's figures for people: thousands separators, ratios as
// percentages, dates. Each works on the decimal strings the API gives (never through a float),
// so what a person reads is exactly the API's figure.
import { escapeHtml } from '../html.ts';

const group = (digits: string) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** A decimal string ("1234567.50", "-50.01") with thousands separators ("1,234,567.50"); an em dash for null. */
export function decimal(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  const text = String(value);
  const match = /^(-?)(\d+)(\.\d+)?$/.exec(text);
  if (!match) return text;
  const [, sign, whole, fraction = ''] = match;
  return `${sign === '-' ? '−' : ''}${group(whole!)}${fraction}`;
}

/** An amount of money in a currency: "1,234.50 EUR". */
export const money = (value: string | null | undefined, currency: string) => (value === null || value === undefined ? '—' : `${decimal(value)} ${currency}`);

/**
 * A ratio as the API gives it (four decimals, "1.0667") as a percentage with two decimals
 * ("106.67 %"): the decimal point moved two places, no rounding.
 */
export function percent(ratio: string | null | undefined): string {
  if (ratio === null || ratio === undefined) return '—';
  const match = /^(-?)(\d+)(?:\.(\d*))?$/.exec(ratio);
  if (!match) return ratio;
  const [, sign, whole, fraction = ''] = match;
  const digits = fraction.padEnd(4, '0');
  const hundreds = (whole! + digits.slice(0, 2)).replace(/^0+(?=\d)/, '');
  const rest = digits.slice(2);
  return `${sign === '-' ? '−' : ''}${group(hundreds)}.${rest} %`;
}

/** A month "2024-03" as "Mar 2024". */
export function monthName(month: string): string {
  const [year, m] = month.split('-');
  const names = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  return `${names[Number(m) - 1] ?? m} ${year}`;
}

/** A moment as UTC "2026-11-27 09:41", in a <time> element. */
export function when(date: Date | string | null | undefined): string {
  if (!date) return '—';
  const iso = typeof date === 'string' ? date : date.toISOString();
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(iso.slice(0, 16).replace('T', ' '))}</time>`;
}
