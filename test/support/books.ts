// Generated books of contracts for the property tests of the figures: customers whose contracts
// renew on the same day, the next day, mid-month and after gaps; upsells beside a contract;
// downgrades at renewal; returns after churn; terms of whole months and of odd day counts; small
// amounts (so that sums land on half cents) and large ones; several currencies.
import fc from 'fast-check';
import type { ReferenceRow } from './metricsReference.ts';

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const plusMonthsMinusDay = (ms: number, m: number) => {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const mo = d.getUTCMonth() + m;
  const last = new Date(Date.UTC(y, mo + 1, 0)).getUTCDate();
  return Date.UTC(y, mo, Math.min(d.getUTCDate(), last)) - DAY;
};

const term = fc.oneof(
  { weight: 3, arbitrary: fc.record({ months: fc.constantFrom(1, 1, 3, 6, 12, 12, 12, 24, 36, 7, 17) }) },
  { weight: 2, arbitrary: fc.record({ days: fc.integer({ min: 1, max: 800 }) }) },
);
const amount = fc.oneof(
  fc.integer({ min: 1, max: 40 }).map((c) => `0.${String(c).padStart(2, '0')}`),
  fc.integer({ min: 1, max: 5_000_000 }).map((c) => `${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`),
  fc.constantFrom('6000.00', '4800.00', '12000.00', '0.03', '100.01', '29.20'),
);
/**
 * How the next contract of a chain starts, in days after the previous one ends (negative: overlap);
 * now and then decades later, so that a customer's months far outnumber its contracts (the walk
 * orders such a customer's events by sorting, not by counting them into their months).
 */
const next = fc.oneof(
  { weight: 8, arbitrary: fc.constant(1) },
  { weight: 4, arbitrary: fc.constant(0) },
  { weight: 4, arbitrary: fc.integer({ min: -20, max: 20 }) },
  { weight: 4, arbitrary: fc.integer({ min: 30, max: 400 }) },
  { weight: 1, arbitrary: fc.integer({ min: 9_000, max: 12_000 }) },
);

const contract = fc.record({ next, term, amount, upsell: fc.option(fc.record({ after: fc.integer({ min: 0, max: 200 }), term, amount }), { freq: 4 }) });

const customer = fc.record({
  currency: fc.constantFrom('EUR', 'EUR', 'USD', 'GBP'),
  second: fc.option(fc.constantFrom('EUR', 'USD', 'JPY'), { freq: 5 }),
  start: fc.integer({ min: Date.UTC(2022, 0, 1) / DAY, max: Date.UTC(2024, 11, 31) / DAY }),
  contracts: fc.array(contract, { minLength: 1, maxLength: 5 }),
});

/** A book: rows as a CSV would hold them (names that sort differently as bytes than as UTF-16 among them, and names with a tab, a backslash, a line break). */
export const books = (maxCustomers = 8) =>
  fc.array(customer, { minLength: 1, maxLength: maxCustomers }).map((customers) => {
    const rows: ReferenceRow[] = [];
    const names = ['Acme', 'Tab\tCo', 'Ünal', '\uFF5Eshop', '\u{1F600} Co', 'Back\\slash', 'acme', 'Two\nlines', 'Beta', 'Zed', 'Ω', 'Ann', 'Bob', 'Cy', 'Dee'];
    customers.forEach((c, i) => {
      const name = names[i % names.length]! + (i >= names.length ? ` ${i}` : '');
      let startMs = c.start * DAY;
      c.contracts.forEach((k, j) => {
        const endMs = 'months' in k.term ? plusMonthsMinusDay(startMs, k.term.months) : startMs + (k.term.days - 1) * DAY;
        const currency = c.second && j % 2 === 1 ? c.second : c.currency;
        rows.push({ customer: name, startDate: iso(startMs), endDate: iso(endMs), amount: k.amount, currency });
        if (k.upsell) {
          const us = Math.min(startMs + k.upsell.after * DAY, endMs);
          const ue = 'months' in k.upsell.term ? plusMonthsMinusDay(us, k.upsell.term.months) : us + (k.upsell.term.days - 1) * DAY;
          rows.push({ customer: name, startDate: iso(us), endDate: iso(ue), amount: k.upsell.amount, currency });
        }
        startMs = Math.max(endMs + k.next * DAY, startMs);
      });
    });
    return rows;
  });

/** The rows as a CSV file with the contract's header. */
export function bookCsv(rows: ReferenceRow[]): string {
  const quote = (s: string | undefined) => (s === undefined ? '' : /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
  return ['customer,startDate,endDate,amount,currency', ...rows.map((r) => [r.customer, r.startDate, r.endDate, r.amount, r.currency].map(quote).join(','))].join('\n') + '\n';
}
