import fc from 'fast-check';

/**
 * Values no schema expects, and the way they travel: a `Raw` value is written into a JSON body as
 * it is (a number JSON.parse cannot hold, nesting JSON.stringify cannot write), a `Large` value is
 * made only when its request is sent, so that thousands of drafted requests stay small.
 */
export class Raw {
  constructor(
    readonly text: string,
    readonly label: string,
  ) {}
  toString(): string {
    return this.text;
  }
}

export class Large {
  constructor(
    readonly kind: 'string' | 'array' | 'object',
    readonly size: number,
    /** What it repeats: the text of a string, the item of an array, the key prefix of an object. */
    readonly unit: string | number = 'a',
  ) {}
  /** The value itself, once, when the request is sent. */
  make(): unknown {
    const text = String(this.unit);
    if (this.kind === 'string') return text.repeat(Math.ceil(this.size / text.length));
    if (this.kind === 'array') return Array.from({ length: this.size }, () => this.unit);
    return Object.fromEntries(Array.from({ length: this.size }, (_, i) => [`${text}${i}`, i]));
  }
  /** As text of a query string or path (an array as `a,a,…`), never longer than `limit` characters. */
  text(limit: number): string {
    const unit = this.kind === 'string' ? String(this.unit) : `${this.unit},`;
    const length = Math.min(this.size * unit.length, limit);
    return unit.repeat(Math.ceil(length / unit.length)).slice(0, limit);
  }
}

/** A 300-digit integer, and numbers beyond what a double holds. */
export const HUGE_NUMBERS = [
  new Raw(`1${'0'.repeat(299)}`, '300-digit integer'),
  new Raw(`-${'9'.repeat(300)}`, '300-digit negative integer'),
  new Raw('1e400', '1e400'),
  new Raw('-1e400', '-1e400'),
  new Raw('1e-400', '1e-400'),
  new Raw('9007199254740993', '2^53 + 1'),
  new Raw('18446744073709551616', '2^64'),
  new Raw('-0', 'negative zero'),
  new Raw('1.0', 'integer written as 1.0'),
  new Raw('4294967296', '2^32'),
  new Raw('2147483648', '2^31'),
];

export const nested = (depth: number, open = '[', close = ']', inner = '') =>
  new Raw(open.repeat(depth) + inner + close.repeat(depth), `nesting ${depth} deep`);

/** Nesting JSON.parse takes and JSON.stringify (and any recursive walk of the body) does not. */
export const DEEP_VALUES = [
  nested(64),
  nested(2_000, '{"a":', '}', '1'),
  nested(20_000),
  nested(20_000, '{"a":', '}', 'null'),
];

export const LARGE_VALUES = [
  new Large('string', 81),
  new Large('string', 129),
  new Large('string', 256),
  new Large('string', 4_096),
  new Large('string', 65_537),
  new Large('string', 600_000, '\u{1F600}'),
  new Large('string', 1_200_000),
  new Large('array', 10_000, 'x'),
  new Large('array', 120_000, ''),
  new Large('object', 20_000, 'k'),
];

/** Text that breaks assumptions about characters: astral, combining, right-to-left, controls. */
export const UNICODE_TEXT = [
  '\u{1F600}',
  '\u{1D54F}\u{1D54F}\u{1D54F}',
  'e\u0301\u0301\u0301',
  'Z\u0351\u0352\u0353\u0354\u0355',
  '\u05D0\u05D1\u05D2 \u0627\u0644\u0639',
  '\u202Egnp.exe',
  '\u200F\u200E\u2066\u2069',
  '\uFEFFbom',
  '\uFFFF\uFFFE',
  '\uD800',
  '\uDC00x',
  '\u0000',
  'a\u0000b',
  '\u0007\u0008\u001B[31m',
  '\u0085\u0080\u009F',
  '\r\n\t',
  '\u2028\u2029',
  'ﬁ\u00DF\u0130',
  '\u{10FFFF}',
];

/** Strings that mean something to some layer below: SQL, paths, templates, numbers in disguise. */
export const TRICKY_TEXT = [
  '',
  ' ',
  "' OR '1'='1",
  '"; DROP TABLE accounts; --',
  '\\',
  '%',
  '%00',
  '%zz',
  '../../etc/passwd',
  '${jndi:ldap://x}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e400',
  '9'.repeat(300),
  '-1',
  '0x10',
  'true',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  'toString',
];

/** Every JSON type, as values that match almost no schema. */
export const EVERY_TYPE: unknown[] = [null, true, false, 0, -1, 1.5, '', 'x', [], [null], {}, { a: {} }];

export const hostileText = (): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(...UNICODE_TEXT, ...TRICKY_TEXT),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.tuple(fc.constantFrom(...UNICODE_TEXT), fc.constantFrom(...TRICKY_TEXT)).map(([a, b]) => a + b),
  );

/** Anything at all, for a place that expects something in particular. */
export const hostileValue = (): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 3, arbitrary: hostileText() },
    { weight: 2, arbitrary: fc.constantFrom(...EVERY_TYPE) },
    { weight: 2, arbitrary: fc.constantFrom(...HUGE_NUMBERS) },
    { weight: 1, arbitrary: fc.constantFrom(...DEEP_VALUES) },
    { weight: 1, arbitrary: fc.constantFrom(...LARGE_VALUES) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    { weight: 1, arbitrary: fc.double() },
  );
