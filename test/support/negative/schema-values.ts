import fc from 'fast-check';
import type { OpenApiDocument } from '../../../spec';
import { EVERY_TYPE, HUGE_NUMBERS, Large, Raw, UNICODE_TEXT, hostileValue } from './hostile-values';

/** A schema of the document, as parsed. */
export type Schema = Record<string, unknown>;

/** Where the document says what a value must be: its schemas, followed through `$ref` and `allOf`. */
export class SchemaReader {
  private readonly resolved = new WeakMap<Schema, Schema>();
  private readonly negative = new WeakMap<Schema, fc.Arbitrary<unknown>>();
  private readonly plausible = new WeakMap<Schema, fc.Arbitrary<unknown>>();

  constructor(private readonly document: OpenApiDocument) {}

  /** The schema with its `$ref` followed and its `allOf` merged; the same object for the same schema. */
  resolve(schema: Schema | undefined): Schema {
    if (!schema) return {};
    let resolved = this.resolved.get(schema);
    if (!resolved) {
      resolved = this.resolveAnew(schema);
      this.resolved.set(schema, resolved);
    }
    return resolved;
  }

  /** `negativeValue` of a schema, made once. */
  negativeValueOf(schema: Schema): fc.Arbitrary<unknown> {
    const resolved = this.resolve(schema);
    let arbitrary = this.negative.get(resolved);
    if (!arbitrary) {
      arbitrary = negativeValue(this, resolved);
      this.negative.set(resolved, arbitrary);
    }
    return arbitrary;
  }

  /** `plausibleValue` of a schema, made once. */
  plausibleValueOf(schema: Schema): fc.Arbitrary<unknown> {
    const resolved = this.resolve(schema);
    let arbitrary = this.plausible.get(resolved);
    if (!arbitrary) {
      arbitrary = plausibleValue(this, resolved);
      this.plausible.set(resolved, arbitrary);
    }
    return arbitrary;
  }

  private resolveAnew(schema: Schema): Schema {
    let current: Schema = schema ?? {};
    for (let hops = 0; typeof current.$ref === 'string' && hops < 20; hops += 1) {
      const segments = current.$ref.replace(/^#\//, '').split('/');
      let target: unknown = this.document;
      for (const segment of segments) target = (target as Record<string, unknown>)[segment];
      current = {
        ...(target as Schema),
        ...Object.fromEntries(Object.entries(current).filter(([k]) => k !== '$ref')),
      };
    }
    if (Array.isArray(current.allOf)) {
      const { allOf, ...rest } = current;
      return (allOf as Schema[]).reduce<Schema>((merged, part) => {
        const resolved = this.resolve(part);
        return {
          ...resolved,
          ...merged,
          properties: { ...(resolved.properties as object), ...(merged.properties as object) },
          required: [...((resolved.required as string[]) ?? []), ...((merged.required as string[]) ?? [])],
        };
      }, rest);
    }
    return current;
  }

  /** The variants of a `oneOf` (each resolved), or the schema itself. */
  variants(schema: Schema | undefined): Schema[] {
    const resolved = this.resolve(schema);
    return Array.isArray(resolved.oneOf)
      ? (resolved.oneOf as Schema[]).map((v) => this.resolve(v))
      : [resolved];
  }

  /** Properties of an object schema, resolved, with whether each is required. */
  properties(schema: Schema): Array<{ name: string; schema: Schema; required: boolean }> {
    const resolved = this.resolve(schema);
    const required = new Set((resolved.required as string[] | undefined) ?? []);
    return Object.entries((resolved.properties as Record<string, Schema> | undefined) ?? {})
      .filter(([, property]) => !this.resolve(property).readOnly)
      .map(([name, property]) => ({ name, schema: this.resolve(property), required: required.has(name) }));
  }
}

const typeOf = (schema: Schema) => (typeof schema.type === 'string' ? schema.type : undefined);

/** Integers at the edges of what formats and storage hold. */
const INTEGER_EDGES = [
  0,
  -1,
  1,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 32,
  Number.MAX_SAFE_INTEGER,
  -Number.MAX_SAFE_INTEGER,
];

/** Values just below, at and above each bound the schema sets, and the edges of its format. */
export function boundaryValues(schema: Schema, item: string | number = 'x'): unknown[] {
  const values: unknown[] = [];
  const type = typeOf(schema);
  if (Array.isArray(schema.enum)) {
    for (const option of schema.enum as unknown[]) {
      values.push(option);
      if (typeof option === 'string')
        values.push(option.toUpperCase(), ` ${option}`, `${option}\u0000`, option.slice(0, -1));
    }
  }
  if (type === 'integer' || type === 'number') {
    for (const bound of [schema.minimum, schema.maximum]) {
      if (typeof bound === 'number') values.push(bound - 1, bound, bound + 1);
    }
    values.push(...INTEGER_EDGES, 0.5, -0.5, ...HUGE_NUMBERS);
  }
  if (type === 'string') {
    const unit = 'a';
    for (const bound of [schema.minLength, schema.maxLength]) {
      if (typeof bound === 'number')
        for (const length of [bound - 1, bound, bound + 1])
          if (length >= 0)
            values.push(unit.repeat(length), '\u{1F600}'.repeat(length), 'e\u0301'.repeat(length));
    }
    values.push(...formatEdges(schema.format as string | undefined));
    if (typeof schema.pattern === 'string') values.push(...patternEdges(schema.pattern));
  }
  if (type === 'array') {
    for (const bound of [schema.minItems, schema.maxItems]) {
      if (typeof bound === 'number')
        for (const length of [bound - 1, bound, bound + 1])
          if (length >= 0) values.push(Array.from({ length }, () => item));
    }
    values.push([], [null], [[]], new Large('array', 5_000, item));
  }
  if (schema.nullable) values.push(null);
  return values;
}

/** Values of every type the schema does not take. */
export function wrongTypeValues(schema: Schema): unknown[] {
  const type = typeOf(schema);
  return EVERY_TYPE.filter((value) => {
    if (value === null) return !schema.nullable;
    if (Array.isArray(value)) return type !== 'array';
    if (typeof value === 'object') return type !== 'object';
    if (typeof value === 'number')
      return type !== 'number' && !(type === 'integer' && Number.isInteger(value));
    return typeof value !== type;
  });
}

function formatEdges(format: string | undefined): string[] {
  switch (format) {
    case 'date':
      return [
        '2025-02-30',
        '2025-13-01',
        '0000-00-00',
        '9999-12-31',
        '2025-1-1',
        '1970-01-01',
        '2025-06-01T00:00:00Z',
      ];
    case 'date-time':
      return [
        '2025-06-01T00:00:00',
        '2025-06-01T24:00:00Z',
        '2025-06-01 00:00:00Z',
        '0001-01-01T00:00:00Z',
        '9999-12-31T23:59:59.999999999+14:00',
        '2025-06-01T00:00:00+25:00',
        '1969-12-31T23:59:60Z',
      ];
    case 'email':
      return [
        'a@b',
        '@',
        'a@',
        `${'a'.repeat(65)}@example.com`,
        'a@b..c',
        '"x y"@example.com',
        'ü@example.com',
      ];
    case 'uri':
      return ['http://', 'not a uri', 'javascript:alert(1)', `https://example.com/${'a'.repeat(2048)}`];
    default:
      return [];
  }
}

function patternEdges(pattern: string): string[] {
  let matching: string[] = [];
  try {
    matching = fc.sample(fc.stringMatching(new RegExp(pattern)), { numRuns: 2, seed: pattern.length });
  } catch {
    matching = [];
  }
  return [
    ...matching,
    ...matching.map((text) => `${text} `),
    ...matching.map((text) => `${text}\u202E`),
    '-',
    ' ',
  ];
}

/** A value the schema accepts, as far as that is easy to make: the base a mutation starts from. */
export function plausibleValue(reader: SchemaReader, schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  const resolved = reader.resolve(schema);
  if (Array.isArray(resolved.enum)) return fc.constantFrom(...(resolved.enum as unknown[]));
  switch (typeOf(resolved)) {
    case 'integer':
      return fc.integer({
        min: typeof resolved.minimum === 'number' ? resolved.minimum : 0,
        max: typeof resolved.maximum === 'number' ? resolved.maximum : 100_000,
      });
    case 'number':
      return fc.double({ min: 0, max: 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return depth > 2
        ? fc.constant([])
        : fc.array(plausibleValue(reader, resolved.items as Schema, depth + 1), { maxLength: 2 });
    case 'object': {
      if (depth > 2) return fc.constant({});
      const entries = reader
        .properties(resolved)
        .map(({ name, schema: property }) => [name, plausibleValue(reader, property, depth + 1)]);
      return fc.record(Object.fromEntries(entries) as Record<string, fc.Arbitrary<unknown>>, {
        requiredKeys: [],
      });
    }
    default:
      if (typeof resolved.pattern === 'string') return fc.stringMatching(new RegExp(resolved.pattern));
      if (resolved.format === 'date') return fc.constant('2030-01-01');
      if (resolved.format === 'date-time') return fc.constant('2030-01-01T00:00:00Z');
      if (resolved.format === 'email') return fc.constant('noc@example.net');
      return fc.string({ maxLength: Math.min(Number(resolved.maxLength ?? 20), 20) });
  }
}

/**
 * What a negative campaign puts where the schema expects something: mostly values at and beyond its
 * bounds and of the wrong type, with the rest of the hostile world mixed in.
 */
export function negativeValue(reader: SchemaReader, schema: Schema): fc.Arbitrary<unknown> {
  const resolved = reader.resolve(schema);
  const items = reader.resolve(resolved.items as Schema | undefined);
  const item = Array.isArray(items.enum)
    ? (items.enum[0] as string | number)
    : items.type === 'integer' || items.type === 'number'
      ? Number(items.minimum ?? 1)
      : 'x';
  const edges = boundaryValues(resolved, item);
  const wrong = wrongTypeValues(resolved);
  const options: Array<fc.WeightedArbitrary<unknown>> = [{ weight: 2, arbitrary: hostileValue() }];
  if (edges.length) options.push({ weight: 4, arbitrary: fc.constantFrom(...edges) });
  if (wrong.length) options.push({ weight: 3, arbitrary: fc.constantFrom(...wrong) });
  if (typeOf(resolved) === 'string')
    options.push({ weight: 1, arbitrary: fc.constantFrom(...UNICODE_TEXT).map((text) => `x${text}`) });
  return fc.oneof(...options);
}

/** A value as text for a query string or path: raw numbers as they are, large values cut short. */
export function asText(value: unknown, limit = 4_096): string {
  if (value instanceof Raw) return value.text.length > limit ? value.text.slice(0, limit) : value.text;
  if (value instanceof Large) return value.text(limit);
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map((item) => asText(item, limit)).join(',');
  return JSON.stringify(value) ?? '';
}
