// The figures' definitions (../shared/spec/contract.md, "Metrics and catalog"), in one place: a
// contract's monthly value and the month ends it is active at, the movements, the series' bounds,
// and the words that the OpenAPI document and docs/metrics.md show for each figure. The build
// (book.ts) and the reads follow these; nothing else defines a figure.
import { civilCode, dayOfCode, daysInMonthOfCode, monthOfCode } from './calendar.ts';
import { fastOverQ, Q, type Term, term } from './exact.ts';

/** A currency's series holds at most this many months. */
export const MAX_MONTHS = 600;

/** The five movements of MRR between two month ends, in the order the API shows them. */
export const MOVEMENTS = ['newBusiness', 'expansion', 'contraction', 'churn', 'reactivation'] as const;
export type Movement = (typeof MOVEMENTS)[number];
/** Each movement's index in MOVEMENTS (its number in a change's code, and in the build's arrays). */
export const MOVEMENT_INDEX = Object.fromEntries(MOVEMENTS.map((m, i) => [m, i])) as Record<Movement, number>;
/** A customer's movement in a month: one of the five, or `retained` (the same MRR at both ends). */
export const CUSTOMER_MOVEMENTS = [...MOVEMENTS, 'retained'] as const;
export type CustomerMovement = (typeof CUSTOMER_MOVEMENTS)[number];

/** Days in a month on average, 365.25 ÷ 12 = 487 ÷ 16. */
const DAYS_PER_MONTH = { num: 487n, den: 16n };
const DAYS_PER_MONTH_NUM = 487;
const DAYS_PER_MONTH_DEN = 16;

/**
 * A contributing contract as the figures see it: the month ends it is active at (`firstMonth` to
 * `lastMonth`, month numbers; none when lastMonth < firstMonth) and its monthly value in cents.
 */
export type ContractTerm = { firstMonth: number; lastMonth: number; value: Term };

/**
 * The term in whole months of startDay..endDay (day numbers): m ≥ 1 when endDay is the day before
 * startDay plus m calendar months (the m months added at once, the day then clamped to that
 * month's length); undefined otherwise.
 */
export function wholeMonths(startDay: number, endDay: number): number | undefined {
  return termMonths(civilCode(startDay), civilCode(endDay + 1)) || undefined;
}

/** m when the day after the term's end (a civilCode) is its start's plus m ≥ 1 calendar months (the day clamped), else 0. */
function termMonths(start: number, after: number): number {
  const m = monthOfCode(after) - monthOfCode(start);
  if (m < 1) return 0;
  return dayOfCode(after) === Math.min(dayOfCode(start), daysInMonthOfCode(after)) ? m : 0;
}

/** A contributing contract's month ends and monthly value (amount in cents, > 0). */
export function contractTerm(startDay: number, endDay: number, cents: bigint | number): ContractTerm {
  const made = blankTerm();
  contractTermInto(made, startDay, endDay, cents);
  return made;
}

/** A ContractTerm to fill with contractTermInto. */
export const blankTerm = (): ContractTerm => ({ firstMonth: 0, lastMonth: -1, value: { num: 0n, den: Q, fast: 0 } });

/**
 * contractTerm into a term kept from one contract to the next (blankTerm; its value object with
 * it), with no object made for the common case: a walk of a million contracts made three each.
 */
export function contractTermInto(out: ContractTerm, startDay: number, endDay: number, cents: bigint | number): void {
  const start = civilCode(startDay);
  const after = civilCode(endDay + 1);
  // Active at a month's end when startDate ≤ that day ≤ endDate: from the start's month to the
  // month before the one that holds the day after the end.
  out.firstMonth = monthOfCode(start);
  out.lastMonth = monthOfCode(after) - 1;
  const months = termMonths(start, after);
  // amount ÷ m, or amount ÷ (days ÷ (365.25 / 12)) = amount × 487 ÷ (16 × days).
  const days = endDay - startDay + 1;
  const value = out.value;
  if (typeof cents === 'number' && Number.isSafeInteger(cents * DAYS_PER_MONTH_NUM)) {
    const fast = months !== 0 ? fastOverQ(cents, months) : fastOverQ(cents * DAYS_PER_MONTH_NUM, DAYS_PER_MONTH_DEN * days);
    if (fast === fast) {
      value.num = 0n;
      value.den = Q;
      value.fast = fast;
      return;
    }
  }
  const c = BigInt(cents);
  const made = months !== 0 ? term(c, BigInt(months)) : term(c * DAYS_PER_MONTH.num, DAYS_PER_MONTH.den * BigInt(days));
  value.num = made.num;
  value.den = made.den;
  value.fast = made.fast;
}

/**
 * What each figure means, as the OpenAPI document and docs/metrics.md say it: one sentence or two,
 * with the worked example where one helps.
 */
export const FIGURE_WORDS = {
  monthlyValue:
    "A contract's monthly value is its amount ÷ its term in months. The term is m whole months when endDate is the day before startDate plus m calendar months (2024-01-15..2025-01-14 is 12; from 2024-01-31 one month on is 2024-02-29); otherwise its days ÷ (365.25 / 12). 12,000.00 for 2024-01-01..2024-12-31 is 1,000.00 a month.",
  monthEnd:
    "Every monthly figure is taken at the month's last day: a contract counts in a month when startDate ≤ that day ≤ endDate. A renewal that starts mid-month counts once; a gap inside a month is not churn; a contract that holds no month end is in no monthly figure.",
  mrr: "Monthly recurring revenue at the month's end: the sum of the monthly values of the contracts active that day. A decimal string, rounded half away from zero to two decimals.",
  arr: 'Annual run rate: 12 × the exact MRR, then rounded (2,337.005 gives 28044.06).',
  arpa: 'Average revenue per account: the exact MRR ÷ activeCustomers, rounded; null when there are none.',
  activeContracts: "Contracts active at the month's end.",
  activeCustomers: "Customers with MRR at the month's end, in this currency.",
  newBusiness: 'Customers with no MRR at the end of the month before and some at this one, who never had MRR in this currency at an earlier month end; mrr is their MRR now.',
  expansion: "Customers whose MRR grew between the two month ends; mrr is the growth.",
  contraction: 'Customers whose MRR shrank but stayed above zero; mrr is the decrease.',
  churn: 'Customers with MRR at the end of the month before and none at this one; mrr is what they had.',
  reactivation: 'Customers with no MRR at the end of the month before, some now, and some at an earlier month end; mrr is their MRR now.',
  netNewMrr: 'newBusiness + expansion + reactivation − contraction − churn: this month\'s MRR minus last month\'s, exact before rounding.',
  customerChurn: 'Churned customers ÷ active customers at the end of the month before; null when there were none. Four decimals.',
  grossMrrChurn: '(churn + contraction) ÷ MRR at the end of the month before; null when it was 0. Four decimals.',
  netRevenueRetention:
    'Of the customers with MRR twelve month ends ago: their MRR now ÷ their MRR then (new business and reactivations of others are left out); null when there were none. Four decimals.',
  grossRevenueRetention: 'Of the customers with MRR twelve month ends ago: the sum of min(now, then) ÷ their MRR then; at most 1. Four decimals.',
  reporting:
    "The whole business in one currency, converted with your own rates (the set in force): a value in currency X at month M is worth value × rate(X, M) ÷ rate(reporting currency, M), the base's rate being 1. The customer is the unit across all their currencies: their MRR at a month end is the sum of their converted MRRs.",
  reportingMrr: "The converted MRR at the month's end: every customer's MRR in each currency at this month's rates, added up.",
  reportingMovements:
    "Each customer's change between the end of the month before and this one, both converted at this month's rates, so that a change of rate is never a business movement; fxImpact holds it: netNewMrr + fxImpact is this month's converted MRR minus last month's.",
  fxImpact: "Last month's MRR converted at this month's rates minus converted at last month's: what the change of rates alone moved.",
  cohort: "A customer's cohort is the month of their newBusiness movement in the currency; a customer who returns after churning stays in it.",
} as const;
