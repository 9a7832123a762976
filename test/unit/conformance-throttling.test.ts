import assert from 'node:assert/strict';
import http from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LIMIT_CHECKS } from '../../conformance/checks/limits';
import { HttpClient } from '../../conformance/http';
import type { RecordedExchange, RunSummary } from '../../conformance/model';
import { formatSummary } from '../../conformance/reports/console';
import { toHtml } from '../../conformance/reports/html';
import { toJUnitXml } from '../../conformance/reports/junit';
import type { CheckDefinition } from '../../conformance/runner';
import { runChecks } from '../../conformance/runner';
import { Suite } from '../../conformance/suite';
import { nextStep, retryAfterMs, Throttled, throttlingWarning } from '../../conformance/throttling';
import { loadSpec } from '../../spec';

/** One scripted answer of the fake server. */
interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

const problem429 = JSON.stringify({
  type: 'https://errors.ix-api.net/v2/too-many-requests.html',
  title: 'Too Many Requests',
  status: 429,
  detail: 'Slow down.',
});
const PROBLEM = { 'content-type': 'application/problem+json' };
const throttled = (retryAfter?: string, body = problem429, headers = PROBLEM): Answer => ({
  status: 429,
  headers: retryAfter === undefined ? headers : { ...headers, 'retry-after': retryAfter },
  body,
});
const OK: Answer = {
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ status: 'pass', version: '2' }),
};

/**
 * A fake server: GET /api/v2/implementation declares the health operation; every other request
 * takes the next scripted answer (the last one repeats). It keeps what it was sent.
 */
function fakeServer() {
  let script: Answer[] = [];
  const received: Array<{ method: string; url: string; body: string; key?: string }> = [];
  const server: Server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.url === '/api/v2/implementation') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ schema_version: '2.6.0', supported_operations: ['api_health_read'] }));
        return;
      }
      received.push({
        method: req.method ?? '',
        url: req.url ?? '',
        body: Buffer.concat(chunks).toString(),
        key: req.headers['idempotency-key'] as string | undefined,
      });
      const answer = script.length > 1 ? script.shift()! : script[0];
      res.writeHead(answer.status, answer.headers ?? {});
      res.end(answer.body);
    });
  });
  return {
    received,
    play(answers: Answer[]) {
      script = [...answers];
      received.length = 0;
    },
    async start(): Promise<string> {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2`;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('the conformance suite under rate limits', () => {
  const fake = fakeServer();
  let baseUrl: string;
  before(async () => {
    baseUrl = await fake.start();
  });
  after(() => fake.stop());

  describe('Retry-After', () => {
    it('reads delay-seconds and HTTP dates, and nothing else', () => {
      assert.equal(retryAfterMs('0'), 0);
      assert.equal(retryAfterMs(' 5 '), 5000);
      assert.equal(retryAfterMs(undefined), undefined);
      for (const bad of ['soon', '-1', '1.5', '', 'in 5 s']) assert.equal(retryAfterMs(bad), undefined, bad);
      const now = Date.parse('2031-05-14T12:00:00Z');
      assert.equal(retryAfterMs('Wed, 14 May 2031 12:00:30 GMT', now), 30_000);
      assert.equal(retryAfterMs('Wed, 14 May 2031 11:00:00 GMT', now), 0, 'a date gone by asks for no wait');
    });

    it('is waited within the policy: a few retries, no wait over the ceiling, a doubling fallback', () => {
      const policy = { maxRetries: 3, maxWaitMs: 60_000, fallbackWaitMs: 1000 };
      assert.deepEqual(nextStep(policy, 0, '7'), { waitMs: 7000 });
      assert.deepEqual(nextStep(policy, 0, undefined), { waitMs: 1000 });
      assert.deepEqual(nextStep(policy, 2, 'garbage'), { waitMs: 4000 });
      assert.match((nextStep(policy, 0, '61') as { giveUp: string }).giveUp, /longer than the 60 s/);
      assert.match((nextStep(policy, 3, '1') as { giveUp: string }).giveUp, /still 429 after 3 retries/);
      assert.match(
        (nextStep({ ...policy, maxRetries: 0 }, 0, '1') as { giveUp: string }).giveUp,
        /does not retry/,
      );
    });
  });

  describe('the HTTP client', () => {
    const waits: number[] = [];
    const client = (retry = {}) =>
      new HttpClient(baseUrl, new Set(), {
        retry,
        sleep: (ms) => {
          waits.push(ms);
          return Promise.resolve();
        },
      });
    beforeEach(() => {
      waits.length = 0;
    });

    it('waits out each 429 as Retry-After asks and sends the same request again', async () => {
      fake.play([throttled('2'), throttled('3'), OK]);
      const recorded: RecordedExchange[] = [];
      const http = client();
      const response = await http.send(
        { method: 'POST', path: '/health', body: { a: 1 }, headers: { 'idempotency-key': 'k1' } },
        (exchange) => recorded.push(exchange),
      );
      assert.equal(response.status, 200, 'the caller sees the answer to the retry');
      assert.deepEqual(waits, [2000, 3000]);
      assert.equal(fake.received.length, 3);
      for (const request of fake.received)
        assert.deepEqual(request, { method: 'POST', url: '/api/v2/health', body: '{"a":1}', key: 'k1' });
      assert.deepEqual(
        recorded.map((exchange) => [exchange.response?.status, exchange.throttled]),
        [
          [429, { retryAfter: '2', waitMs: 2000, retried: true }],
          [429, { retryAfter: '3', waitMs: 3000, retried: true }],
          [200, undefined],
        ],
      );
      assert.equal(http.throttles.length, 2);
      assert.match(throttlingWarning(http.throttles)!, /2 answer\(s\) 429 .*2 waited out \(5 s in all\)/);
    });

    it('waits until an HTTP date, and falls back to doubling waits without a Retry-After', async () => {
      fake.play([throttled(new Date(Date.now() + 10_000).toUTCString()), OK]);
      assert.equal((await client().send({ method: 'GET', path: '/health' })).status, 200);
      assert.ok(waits[0] > 8000 && waits[0] <= 10_000, `waited ${waits[0]} ms`);
      waits.length = 0;
      fake.play([throttled(), throttled(), OK]);
      assert.equal((await client().send({ method: 'GET', path: '/health' })).status, 200);
      assert.deepEqual(waits, [1000, 2000]);
    });

    it('gives up on a Retry-After beyond the ceiling without waiting, and says so', async () => {
      fake.play([throttled('3600'), OK]);
      const recorded: RecordedExchange[] = [];
      const http = client();
      await assert.rejects(
        http.send({ method: 'GET', path: '/health' }, (exchange) => recorded.push(exchange)),
        (error: unknown) =>
          error instanceof Throttled &&
          error.response.status === 429 &&
          /longer than the 60 s/.test(error.message),
      );
      assert.deepEqual(waits, []);
      assert.equal(fake.received.length, 1);
      assert.equal(recorded[0].throttled?.retried, false);
      assert.match(recorded[0].throttled?.reason ?? '', /Retry-After 3600/);
      assert.match(throttlingWarning(http.throttles)!, /1 still throttled/);
    });

    it('gives up after the last retry, and never retries with --max-retries 0', async () => {
      fake.play([throttled('1')]);
      await assert.rejects(
        client({ maxRetries: 2 }).send({ method: 'GET', path: '/health' }),
        /after 2 retries/,
      );
      assert.deepEqual(waits, [1000, 1000]);
      assert.equal(fake.received.length, 3);
      waits.length = 0;
      fake.play([throttled('1')]);
      await assert.rejects(client({ maxRetries: 0 }).send({ method: 'GET', path: '/health' }), Throttled);
      assert.deepEqual(waits, []);
    });

    it('raises the ceiling when asked to', async () => {
      fake.play([throttled('90'), OK]);
      const response = await client({ maxWaitMs: 120_000 }).send({ method: 'GET', path: '/health' });
      assert.equal(response.status, 200);
      assert.deepEqual(waits, [90_000]);
    });
  });

  describe('checks and reports', () => {
    const HEALTH: CheckDefinition = {
      id: 'TEST-001',
      title: 'health answers 200',
      clause: 'a check that only reads the health resource',
      operations: ['api_health_read'],
      safety: 'read',
      async run(t) {
        const response = await t.call('api_health_read', { role: null });
        t.must(response.status === 200, `answered ${response.status}`);
      },
    };
    const run = (answers: Answer[], checks: CheckDefinition[] = [HEALTH, ...LIMIT_CHECKS]) => {
      fake.play(answers);
      const suite = new Suite({
        baseUrl,
        credentials: { primary: { api_key: 'k', api_secret: 's' } },
        profile: 'read',
        document: loadSpec(),
        retry: { fallbackWaitMs: 5 },
      });
      return runChecks(suite, checks, { profile: 'read' });
    };
    const outcomes = (summary: RunSummary) =>
      Object.fromEntries(summary.results.map((result) => [result.id, result.outcome]));

    it('judges the retry, not the 429 it recovered from, and says the run was throttled', async () => {
      const summary = await run([throttled('0'), OK]);
      assert.deepEqual(outcomes(summary), { 'TEST-001': 'PASS', 'RATE-001': 'PASS', 'RATE-002': 'PASS' });
      const evidence = summary.results[0].evidence;
      assert.deepEqual(
        evidence.map((exchange) => exchange.response?.status),
        [429, 200],
      );
      assert.equal(evidence[0].throttled?.retried, true);
      assert.ok(
        summary.warnings.some((warning) => /throttled the suite/.test(warning)),
        summary.warnings.join(),
      );
      const note = 'Throttled (Retry-After: 0): waited 0 s, then sent the same request again.';
      assert.ok(toHtml(summary).includes(note), 'the HTML report shows the wait');
      assert.match(formatSummary(summary), /Run warnings\n {2}- the server throttled the suite/);
    });

    it('fails a 429 that is not a problem, and warns of one without Retry-After', async () => {
      const summary = await run([
        throttled(undefined, '<html>slow down</html>', { 'content-type': 'text/html' }),
        OK,
      ]);
      assert.deepEqual(outcomes(summary), { 'TEST-001': 'PASS', 'RATE-001': 'FAIL', 'RATE-002': 'WARN' });
      const [, rate1, rate2] = summary.results;
      assert.match(
        rate1.findings[0].message,
        /1 of 1 429 answers: an error answered with content type text\/html/,
      );
      assert.match(rate2.findings[0].message, /carry no Retry-After/);
      assert.equal(rate1.evidence[0].response?.status, 429);
      assert.ok(
        toJUnitXml(summary).includes(
          'Throttled (no Retry-After): waited 5 ms, then sent the same request again.',
        ),
        'the JUnit report shows the wait in the evidence of a failure',
      );
    });

    it('warns of a Retry-After that is neither seconds nor a date', async () => {
      const summary = await run([throttled('soon'), OK]);
      assert.deepEqual(outcomes(summary), { 'TEST-001': 'PASS', 'RATE-001': 'PASS', 'RATE-002': 'WARN' });
      assert.match(summary.results[2].findings[0].message, /neither seconds nor an HTTP date \("soon"\)/);
    });

    it('makes a check the server kept throttling INCONCLUSIVE, not failed', async () => {
      const summary = await run([throttled('0')]);
      assert.equal(outcomes(summary)['TEST-001'], 'INCONCLUSIVE');
      assert.match(summary.results[0].reason ?? '', /throttled the check: .*still 429 after 3 retries/);
      assert.ok(summary.warnings.some((warning) => /1 still throttled/.test(warning)));
    });

    it('leaves RATE- checks INCONCLUSIVE when the server never throttled', async () => {
      const summary = await run([OK]);
      assert.deepEqual(outcomes(summary), {
        'TEST-001': 'PASS',
        'RATE-001': 'INCONCLUSIVE',
        'RATE-002': 'INCONCLUSIVE',
      });
      assert.ok(!summary.warnings.some((warning) => /throttled/.test(warning)));
    });

    it("does not count the time spent waiting out 429s against a check's deadline", async function () {
      this.timeout(10_000);
      const summary = await run([throttled('1'), OK], [{ ...HEALTH, deadlineMs: 300 }]);
      assert.equal(summary.results[0].outcome, 'PASS', summary.results[0].reason);
    });
  });
});
