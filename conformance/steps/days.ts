/**
 * Calendar days as IX-API writes them.
 */
/** A calendar day as IX-API writes dates (YYYY-MM-DD, UTC). */
export const dayOf = (date: Date): string => date.toISOString().slice(0, 10);
export const today = (): string => dayOf(new Date());

/** Whether `value` is a real calendar day written YYYY-MM-DD. */
export function isDay(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && dayOf(date) === value;
}

export function addDays(day: string, days: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return dayOf(date);
}
