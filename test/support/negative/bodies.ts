import fc from 'fast-check';
import { hostileText, hostileValue, nested } from './hostile-values';
import type { CampaignOperation } from './operations';
import type { Schema, SchemaReader } from './schema-values';
import type { CampaignWorld } from './targets';

/**
 * Bodies of a negative campaign: valid ones (the authorisation matrix's, or made from the schema)
 * broken in one to three places, JSON broken in its syntax, bodies that are wholly something else,
 * and bytes of other kinds where an operation takes a document.
 */

/** A body as a JSON value (possibly holding raw and large values), or as text sent verbatim. */
export type BodyDraft = { value: unknown; from: string } | { text: string; from: string };

/** Not JSON, though close to it, in the ways hand-written or truncated bodies go wrong. */
const MALFORMED_JSON = [
  '{',
  '}',
  '{"a":}',
  "{'a': 1}",
  '{"a": 1,}',
  '[1, 2,]',
  'NaN',
  'undefined',
  '{"a": NaN}',
  '{"a": 0x10}',
  '{"a": 01}',
  '{"a": .5}',
  '{"a": "\u0000"}',
  '"unterminated',
  '{"a": "\\x41"}',
  '{"a" 1}',
  '\u0000',
  '{}{}',
  '{"a":1} trailing',
  '// comment\n{}',
  '/* */{}',
];

/** The edits of a body of one variant: a property set to a negative value or left out, or one added. */
const editsOf = new WeakMap<Schema, fc.Arbitrary<Edit[]>>();
function editsFor(reader: SchemaReader, variant: Schema): fc.Arbitrary<Edit[]> {
  let edits = editsOf.get(variant);
  if (edits) return edits;
  const properties = reader.properties(variant);
  const nestedProperties = properties.flatMap(({ name, schema }) =>
    reader.properties(schema).map((inner) => ({ path: [name, inner.name], schema: inner.schema })),
  );
  const places = [...properties.map(({ name, schema }) => ({ path: [name], schema })), ...nestedProperties];
  const added: fc.Arbitrary<Edit> = fc
    .tuple(
      fc.oneof(hostileText(), fc.constantFrom('__proto__', 'constructor', 'id', 'state', 'x'.repeat(300))),
      hostileValue(),
    )
    .map(([name, value]) => ({ path: [name], value }));
  const options: Array<fc.WeightedArbitrary<Edit>> = [{ weight: 1, arbitrary: added }];
  if (places.length) {
    const place = fc.constantFrom(...places);
    options.push(
      {
        weight: 5,
        arbitrary: place.chain(({ path, schema }) =>
          reader.negativeValueOf(schema).map((value) => ({ path, value })),
        ),
      },
      { weight: 1, arbitrary: place.map(({ path }) => ({ path, remove: true })) },
    );
  }
  edits = fc.array(fc.oneof(...options), { minLength: 1, maxLength: 3 });
  editsOf.set(variant, edits);
  return edits;
}

/** Drafts the JSON value of a body: a valid one (from the matrix, or from the schema) broken on purpose, or anything. */
function bodyValue(
  reader: SchemaReader,
  op: CampaignOperation,
  valid: ReadonlyArray<Record<string, unknown>>,
) {
  const variants = reader.variants(op.bodySchema);
  const bases: Array<fc.Arbitrary<[Record<string, unknown>, Schema]>> = variants.map((variant) =>
    reader
      .plausibleValueOf(variant)
      .map((body): [Record<string, unknown>, Schema] => [body as Record<string, unknown>, variant]),
  );
  if (valid.length)
    bases.push(
      fc
        .constantFrom(...valid)
        .map((body): [Record<string, unknown>, Schema] => [body, variantOf(variants, body)]),
    );
  return fc
    .oneof(...bases)
    .chain(([body, variant]) => editsFor(reader, variant).map((edits) => applyEdits(body, edits)));
}

function variantOf(variants: Schema[], body: Record<string, unknown>): Schema {
  const named = variants.find((variant) => {
    const type = (variant.properties as Record<string, { enum?: unknown[] }> | undefined)?.type;
    return type?.enum?.includes(body.type);
  });
  return named ?? variants[0];
}

type Edit = { path: string[]; value?: unknown; remove?: boolean };

/** A copy of the body with each edit made (own properties only: `__proto__` stays a key). */
function applyEdits(body: Record<string, unknown>, edits: readonly Edit[]): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
  for (const edit of edits) {
    let holder: Record<string, unknown> = copy;
    for (const segment of edit.path.slice(0, -1)) {
      const inner = Object.prototype.hasOwnProperty.call(holder, segment) ? holder[segment] : undefined;
      if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) {
        Object.defineProperty(holder, segment, {
          value: {},
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      holder = holder[segment] as Record<string, unknown>;
    }
    const last = edit.path[edit.path.length - 1];
    if (edit.remove) delete holder[last];
    else
      Object.defineProperty(holder, last, {
        value: edit.value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return copy;
}

/** The body of an operation: JSON broken in its values, its syntax or its whole, or another kind of bytes. */
export function bodyDraft(
  reader: SchemaReader,
  op: CampaignOperation,
  campaign: CampaignWorld,
): fc.Arbitrary<BodyDraft | undefined> {
  const valid = campaign.validBodies.get(`${op.method} ${op.path}`) ?? [];
  const options: Array<fc.WeightedArbitrary<BodyDraft | undefined>> = [
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: hostileValue().map((value) => ({ value, from: 'hostile value' })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...MALFORMED_JSON).map((text) => ({ text, from: 'malformed JSON' })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(nested(50_000, '{"a":', '}', '1'), nested(100_000))
        .map((value) => ({ value, from: 'deep nesting' })),
    },
  ];
  if (op.bodySchema) {
    options.push({
      weight: 8,
      arbitrary: bodyValue(reader, op, valid).map((value) => ({ value, from: 'edited body' })),
    });
    if (valid.length) {
      options.push({
        weight: 2,
        arbitrary: fc.constantFrom(...valid).map((value) => ({ value, from: 'valid body' })),
      });
      options.push({
        weight: 1,
        arbitrary: fc
          .constantFrom(...valid)
          .map((value) => ({ text: duplicateKeys(value), from: 'duplicate keys' })),
      });
      options.push({
        weight: 1,
        arbitrary: fc
          .constantFrom(...valid)
          .map((value) => ({ text: `\uFEFF${JSON.stringify(value)}`, from: 'byte order mark' })),
      });
    }
  }
  if (op.mediaTypes.some((type) => !type.includes('json')))
    options.push({
      weight: 3,
      arbitrary: fc
        .constantFrom('%PDF-1.4\n', '%PDF-', 'PDF', '\u0000\u0001', '%PDF-1.4\n%%EOF\n')
        .map((text) => ({ text, from: 'document bytes' })),
    });
  return fc.oneof(...options);
}

/** The body's first property written twice, the second time with a value of the wrong type. */
function duplicateKeys(body: Record<string, unknown>): string {
  const [first] = Object.keys(body);
  const text = JSON.stringify(body);
  return first ? `{${JSON.stringify(first)}: {"wrong": true}, ${text.slice(1)}` : text;
}
