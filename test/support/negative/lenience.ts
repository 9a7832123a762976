import type { CampaignOperation } from './operations';
import type { Schema, SchemaReader } from './schema-values';

/**
 * Values the document lets through although nothing sensible is that big or holds such characters:
 * strings without a bound, arrays without a bound, integers beyond what a double holds exactly,
 * control and bidirectional-override characters. Each is a finding where the server took one: in
 * a request it answered with a 2xx (the document's bounds and the server's rules for text must have
 * held it back).
 */

/** Longer than any string the document bounds may be (its longest bound is 4096). */
const LONG_TEXT = 4_097;
/** More items than any list of the document needs. */
const MANY_ITEMS = 1_000;
/** C0 controls but tab and newlines, DEL and C1, and the bidirectional overrides and isolates. */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/;

function textLenience(where: string, text: string, controls = true): string[] {
  const found: string[] = [];
  if ([...text].length >= LONG_TEXT)
    found.push(`a string without a bound: ${where} took ${text.length} characters`);
  if (controls && CONTROL.test(text))
    found.push(`control characters in a string: ${where} took ${JSON.stringify(text.slice(0, 40))}`);
  return found;
}

function numberLenience(where: string, value: number): string[] {
  return Number.isSafeInteger(value) || (!Number.isInteger(value) && Number.isFinite(value))
    ? []
    : [`an integer beyond the safe range: ${where} took ${value}`];
}

/** What a body the document accepts holds that it should not, property by declared property. */
export function bodyLenience(
  reader: SchemaReader,
  schema: Schema,
  value: unknown,
  where = 'body',
  depth = 0,
): string[] {
  if (depth > 4) return [];
  const resolved = reader.resolve(schema);
  if (typeof value === 'string') return textLenience(where, value);
  if (typeof value === 'number') return numberLenience(where, value);
  if (Array.isArray(value)) {
    const found =
      value.length > MANY_ITEMS ? [`an array without a bound: ${where} took ${value.length} items`] : [];
    const items = resolved.items as Schema | undefined;
    if (items)
      for (const item of value.slice(0, 20))
        found.push(...bodyLenience(reader, items, item, `${where}[]`, depth + 1));
    return found;
  }
  if (typeof value !== 'object' || value === null) return [];
  const given = value as Record<string, unknown>;
  const variants = reader.variants(resolved);
  const variant =
    variants.find((candidate) =>
      ((candidate.properties as Record<string, { enum?: unknown[] }> | undefined)?.type?.enum ?? []).includes(
        given.type,
      ),
    ) ?? variants[0];
  return reader
    .properties(variant)
    .filter(({ name }) => Object.prototype.hasOwnProperty.call(given, name))
    .flatMap(({ name, schema: property }) =>
      bodyLenience(reader, property, given[name], where === 'body' ? name : `${where}.${name}`, depth + 1),
    );
}

/** What a query string the server answered with a 2xx held that the document should not take. */
export function queryLenience(op: CampaignOperation, path: string): string[] {
  const query = path.split('?')[1];
  if (!query || !op.queryParameters.length) return [];
  const declared = new Map(op.queryParameters.map((parameter) => [parameter.name, parameter.schema]));
  const found: string[] = [];
  for (const [rawName, raw] of new URLSearchParams(query)) {
    const name = rawName.replace(/__(lt|lte|gt|gte)$/, '_$1');
    const schema = declared.get(name);
    if (!schema) continue;
    const where = `query ${name}`;
    const array = schema.type === 'array';
    const values = array ? raw.split(',').filter(Boolean) : [raw];
    if (values.length > MANY_ITEMS)
      found.push(`an array without a bound: ${where} took ${values.length} items`);
    const scalar = array
      ? ((schema.items as Schema | undefined)?.type as string | undefined)
      : (schema.type as string | undefined);
    for (const text of values.slice(0, 20)) {
      if (scalar === 'integer' && /^-?\d+$/.test(text.trim()))
        found.push(...numberLenience(where, Number(text)));
      // A filter holding control characters merely matches nothing; only its length is judged.
      else found.push(...textLenience(where, text, false));
    }
  }
  return found;
}
