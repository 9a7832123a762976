/**
 * Cancellation policy: when a resource can be decommissioned and until when it is charged. Days
 * are calendar days in UTC, written YYYY-MM-DD as IX-API dates are.
 */

export interface CancellationTerms {
  /** ISO 8601 notice period of the offering (`P1M`, `P14D`, `P0D`); null means none. */
  noticePeriod: string | null;
  /** ISO 8601 minimum term from the billing start (`P12M`); null means none. */
  initialPeriod: string | null;
  /** First day billed, once the resource went into production; null when it never did. */
  billingStart: string | null;
  /**
   * The latest decommission day of the resources that rely on this one and are going already
   * (the configs on a connection): it cannot go before they do. Null or absent: none.
   */
  notBefore?: string | null;
}

export interface CancellationPolicy {
  decommission_at: string;
  charged_until: string;
}

const DURATION = /^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A day as YYYY-MM-DD. */
export const dayOf = (date: Date): string => date.toISOString().slice(0, 10);

/** Whether `text` is a real calendar day written YYYY-MM-DD. */
export function isDay(text: string): boolean {
  if (!DAY.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && dayOf(date) === text;
}

/** `day` moved on by an ISO 8601 period of years, months, weeks and days (months clamp to the month's end). */
export function addPeriod(day: string, period: string | null): string {
  const match = period ? DURATION.exec(period) : null;
  if (!match) return day;
  const [years, months, weeks, days] = match.slice(1).map((part) => Number(part ?? 0));
  const date = new Date(`${day}T00:00:00Z`);
  const targetMonth = date.getUTCMonth() + months + years * 12;
  const target = new Date(Date.UTC(date.getUTCFullYear(), targetMonth, 1));
  const lastOfMonth = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(date.getUTCDate(), lastOfMonth));
  target.setUTCDate(target.getUTCDate() + weeks * 7 + days);
  return dayOf(target);
}

const lastDayOfMonth = (day: string): string => {
  const date = new Date(`${day}T00:00:00Z`);
  return dayOf(new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)));
};

const later = (a: string, b: string): string => (a >= b ? a : b);

/**
 * The policy for cancelling on `requested` (or as early as possible): never before the notice
 * period has run from `today`, nor before what relies on the resource goes. A resource never
 * billed goes at once and costs nothing; one in billing is charged to the end of the month it goes
 * in, and at least for its minimum term. `tooEarly` says that the requested day is before the
 * first possible one.
 */
export function cancellationPolicy(
  terms: CancellationTerms,
  today: string,
  requested?: string,
): CancellationPolicy & { tooEarly: boolean } {
  const notBefore = terms.notBefore ?? today;
  if (terms.billingStart === null) {
    const first = later(today, notBefore);
    return {
      decommission_at: requested !== undefined ? later(requested, first) : first,
      charged_until: today,
      tooEarly: requested !== undefined && requested < first,
    };
  }
  const earliest = later(addPeriod(today, terms.noticePeriod), notBefore);
  const decommissionAt = requested ?? earliest;
  // The minimum term runs from the billing start; its last day is charged in any case.
  const minimumCharged = terms.initialPeriod
    ? dayBefore(addPeriod(terms.billingStart, terms.initialPeriod))
    : terms.billingStart;
  return {
    decommission_at: decommissionAt,
    charged_until: later(lastDayOfMonth(decommissionAt), minimumCharged),
    tooEarly: decommissionAt < earliest,
  };
}

function dayBefore(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() - 1);
  return dayOf(date);
}
