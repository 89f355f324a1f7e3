// Dates as integers, both ways, on the proleptic Gregorian calendar of PostgreSQL's date type:
// day numbers (days since 1970-01-01: what binary COPY writes and the tally counts) and month
// numbers (year × 12 + month − 1: the tally's months). Used by the row validator to read dates
// and by the tally to write its figures; no Date objects, no time zones.

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Whether year, month (1–12) and day make a real calendar date PostgreSQL can store. */
export function isCalendarDate(year: number, month: number, day: number): boolean {
  // Year 0000 is ISO 8601's 1 BC, which PostgreSQL's date type does not take.
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= DAYS_IN_MONTH[month - 1]! + (leap ? 1 : 0);
}

/** Day number (days since 1970-01-01) of a calendar date. */
export function dayNumber(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** Month number (year × 12 + month − 1) of a month 1–12. */
export const monthNumber = (year: number, month: number) => year * 12 + month - 1;

/** YYYY-MM-DD of a day number (days since 1970-01-01). */
export function formatDay(day: number): string {
  const c = civil(day);
  return `${pad(c.year, 4)}-${pad(c.month, 2)}-${pad(c.day, 2)}`;
}

/** The calendar date of a day number (days since 1970-01-01). */
export function civil(day: number): { year: number; month: number; day: number } {
  const code = civilCode(day);
  return { year: yearOfCode(code), month: monthInYearOfCode(code), day: dayOfCode(code) };
}

/** civil as one integer, year × 512 + month × 32 + day (no object made: for the walk of every contract). */
export function civilCode(day: number): number {
  // Civil from days (H. Hinnant), as formatDay.
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return (yoe + era * 400 + (m <= 2 ? 1 : 0)) * 512 + m * 32 + d;
}

// A civilCode's parts (month × 32 + day is below 512, whatever the year's sign).
const yearOfCode = (code: number) => Math.floor(code / 512);
const monthInYearOfCode = (code: number) => (code - yearOfCode(code) * 512) >> 5;
/** The day of the month (1–31) of a civilCode. */
export const dayOfCode = (code: number) => code & 31;
/** The month number (monthNumber) of a civilCode. */
export const monthOfCode = (code: number) => monthNumber(yearOfCode(code), monthInYearOfCode(code));
/** Days in the month of a civilCode. */
export const daysInMonthOfCode = (code: number) => daysInMonth(yearOfCode(code), monthInYearOfCode(code));

/** Days in a month (1–12) of a year. */
export function daysInMonth(year: number, month: number): number {
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return DAYS_IN_MONTH[month - 1]! + (leap ? 1 : 0);
}

/** The month number of a day number. */
export function monthOfDay(day: number): number {
  return monthOfCode(civilCode(day));
}

/** YYYY-MM of a month number. */
export function formatMonth(month: number): string {
  return `${pad(Math.floor(month / 12), 4)}-${pad((month % 12) + 1, 2)}`;
}

/** The month number of YYYY-MM (already checked). */
export function parseMonth(text: string): number {
  return monthNumber(Number(text.slice(0, 4)), Number(text.slice(5, 7)));
}
