import assert from 'node:assert/strict';
import fc from 'fast-check';
import { loadSpec, operationParameters, specOperations } from '../../spec';
import { assertContract, login, request } from '../support/http';
import { stack } from '../support/stack';

const document = loadSpec();
const operations = specOperations(document);
const parameterNames = [
  ...new Set(
    operations.flatMap((op) =>
      operationParameters(document, op.path, op.method, op.operation, 'query').map(([p]) => p.name),
    ),
  ),
];

const value = fc.oneof(
  fc.string(),
  fc.integer().map(String),
  fc.constantFrom('', 'true', 'false', 'null', '-1', '1e400', '%', '%%', '\u0000', 'a,b,,c', '9'.repeat(40)),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
);

const requestArbitrary = fc.record({
  operation: fc.constantFrom(...operations),
  method: fc.option(fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'), { nil: undefined }),
  id: fc.oneof(fc.constant('fac-fra-kleyer'), fc.string({ maxLength: 90 }), fc.constant('../x')),
  query: fc.array(
    fc.tuple(fc.oneof(fc.constantFrom(...parameterNames), fc.string({ maxLength: 12 })), value),
    {
      maxLength: 6,
    },
  ),
  body: fc.oneof(
    fc.constant(undefined),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.string({ maxLength: 200 }),
    fc.constantFrom('{', 'null', '[]', '{"type": 1}', '{"__proto__": {"x": 1}}'),
  ),
  contentType: fc.constantFrom(
    'application/json',
    'application/json;',
    'text/plain',
    'application/merge-patch+json',
    '',
  ),
  authenticated: fc.boolean(),
});

describe('robustness: nothing a client sends produces a server error', function () {
  this.timeout(300_000);

  it('answers arbitrary requests with a documented status and never a 5xx', async () => {
    const { accessToken } = await login('customer');
    await fc.assert(
      fc.asyncProperty(requestArbitrary, async (input) => {
        const method = input.method ?? input.operation.method.toUpperCase();
        const route = input.operation.path.replace(/\{[^}]+\}/g, encodeURIComponent(input.id));
        const search = new URLSearchParams(input.query).toString();
        const path = search ? `${route}?${search}` : route;
        const headers: Record<string, string> = {};
        if (input.authenticated) headers.authorization = `Bearer ${accessToken}`;
        if (input.body !== undefined && input.contentType) headers['content-type'] = input.contentType;
        const hasBody = input.body !== undefined && !['GET', 'OPTIONS'].includes(method);
        const response = await fetch(`${stack().baseUrl}${path}`, {
          method,
          headers,
          body: hasBody ? input.body : undefined,
        });
        const text = await response.text();
        // What was sent: a URL client drops the path segments "." and ".." (an id of "." asks for
        // the collection), so the answer is judged by the request as it went out.
        const sent = new URL(response.url);
        const sentPath = `${sent.pathname.slice(new URL(stack().baseUrl).pathname.length)}${sent.search}`;
        assert.ok(
          response.status < 500,
          `${method} ${sentPath} answered ${response.status}: ${text.slice(0, 300)}`,
        );
        if (response.status >= 400 || response.headers.get('content-type')?.includes('json')) {
          const body: unknown = text ? JSON.parse(text) : undefined;
          // Only requests the document describes are held to it; others must still be problems.
          assertContract(method, sentPath, {
            status: response.status,
            headers: response.headers,
            text,
            body,
          });
        }
      }),
      { numRuns: 400, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31) },
    );
  });
});

describe('robustness: query parameters at and beyond their bounds', function () {
  this.timeout(300_000);
  const lists = operations.filter((op) => op.method === 'get' && op.operationId.endsWith('_list'));
  let token: string;
  before(async () => {
    token = (await login('customer')).accessToken;
  });

  it('answers an integer beyond the safe range with a 400 naming the parameter, on every integer parameter', async () => {
    let tried = 0;
    for (const op of lists) {
      for (const [parameter] of operationParameters(document, op.path, op.method, op.operation, 'query')) {
        if (parameter.schema?.type !== 'integer') continue;
        for (const value of ['9'.repeat(309), '9223372036854775808', String(Number.MAX_SAFE_INTEGER + 2)]) {
          const response = await request('GET', `${op.path}?${parameter.name}=${value}`, { token });
          assert.equal(
            response.status,
            400,
            `${op.operationId} ${parameter.name}: ${response.text.slice(0, 200)}`,
          );
          assert.deepEqual(
            response.body.properties.map((p: { name: string }) => p.name),
            [parameter.name],
          );
          tried++;
        }
      }
    }
    assert.ok(tried >= 60, `${tried} values tried`);
    for (const path of [
      '/events?serial_gt=',
      '/devices?capability_speed=',
      '/facilities?capability_speed__gte=',
    ]) {
      const response = await request('GET', `${path}${'9'.repeat(309)}`, { token });
      assert.equal(response.status, 400, path);
      assert.match(response.body.properties[0].reason, /^Must be an integer from 0 to \d+\.$/);
    }
  });

  it('answers control characters in any declared query parameter with a 400 naming it', async () => {
    let tried = 0;
    for (const op of lists) {
      for (const [parameter] of operationParameters(document, op.path, op.method, op.operation, 'query')) {
        for (const value of ['\u0000', 'a\u001b[31m', '\u202e', '\u0085']) {
          const response = await request('GET', `${op.path}?${parameter.name}=${encodeURIComponent(value)}`, {
            token,
          });
          assert.equal(response.status, 400, `${op.operationId} ${parameter.name}=${JSON.stringify(value)}`);
          assert.equal(response.body.properties[0].name, parameter.name);
          tried++;
        }
      }
    }
    assert.ok(tried > 400, `${tried} values tried`);
  });

  it('never answers a 5xx to control characters or huge numbers in the parameters of reads', async () => {
    const operator = (await login('operator')).accessToken;
    const ports = await request('GET', '/ports?page_limit=1', { token: operator });
    const port = (ports.body as Array<{ id: string }>)[0].id;
    const reads = [
      '/connections/no-such/cancellation-policy?decommission_at=',
      `/ports/${port}/statistics?start=2025-01-01T00:00:00Z&end=`,
      `/ports/${port}/statistics?end=2025-01-01T00:00:00Z&start=`,
      '/accounts?page_limit=1&page_token=',
    ];
    for (const path of reads) {
      // As they appear in the URL: NUL, U+202E, 309 digits, a stray %, an encoded lone surrogate.
      for (const encoded of ['%00', '%E2%80%AE', '9'.repeat(309), '%', '%ED%A0%80', '%C2%85']) {
        const response = await request('GET', `${path}${encoded}`, { token: operator });
        assert.ok(response.status < 500, `${path}${encoded} answered ${response.status}`);
      }
    }
  });

  it('takes 500 ids in the id filter and refuses more than 1000 by their number', async () => {
    const ids = Array.from({ length: 500 }, (_, i) => `acc-${i}`);
    const some = await request('GET', `/accounts?id=${['acc-spree-networks', ...ids].join(',')}`, { token });
    assert.equal(some.status, 200, some.text.slice(0, 200));
    assert.deepEqual(
      some.body.map((a: { id: string }) => a.id),
      ['acc-spree-networks'],
    );
    const many = Array.from({ length: 1001 }, (_, i) => `a${i}`);
    const refused = await request('GET', `/accounts?id=${many.join(',')}`, { token });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body.properties, [
      { name: 'id', reason: 'Must NOT have more than 1000 items.' },
    ]);
  });
});
