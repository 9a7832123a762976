import { randomBytes } from 'node:crypto';
import type { CheckContext } from '../runner';
import type { Readable } from './subjects';

/**
 * Resources as plain JSON objects: ids, markers, reading one back, showing a value in a finding.
 */

export type Item = Record<string, unknown>;

export const isItem = (value: unknown): value is Item =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The id a resource carries, as text; undefined when it carries none. */
export const idOf = (resource: unknown): string | undefined => {
  const id = isItem(resource) ? resource.id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
};

export const newMarker = (): string => `conformance-${randomBytes(6).toString('hex')}`;

/** The read of a resource, or a finding and undefined. */
export async function current(t: CheckContext, subject: Readable, id: string): Promise<Item | undefined> {
  const response = await t.call(subject.read, { id });
  if (!t.must(response.status === 200, `reading ${subject.noun} ${id} answered ${response.status}`))
    return undefined;
  return response.body as Item;
}

export const show = (value: unknown): string => JSON.stringify(value) ?? 'nothing';
