import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PROPERTIES_CHECKS } from '../../conformance/checks/errors';
import type { RunSummary } from '../../conformance/model';
import type { CheckDefinition } from '../../conformance/runner';
import { runChecks } from '../../conformance/runner';
import { Suite } from '../../conformance/suite';
import { loadSpec } from '../../spec';

/** One scripted answer of the fake server: a status and a JSON body. */
type Answer = [number, unknown];

const problem = (name: string, extra: Record<string, unknown> = {}) => ({
  type: `https://errors.ix-api.net/v2/${name}.html`,
  title: 'Bad Request',
  status: 400,
  detail: `a ${name}`,
  ...extra,
});
const VALID = problem('validation-error', { properties: [{ name: 'mode', reason: 'not a mode' }] });
const UNNAMED = problem('unable-to-fulfill', { conflicts: [] });
const NAMED = problem('unable-to-fulfill', { conflicts: [], properties: [{ name: 'id', reason: 'in use' }] });
const POLICY = problem('cancellation-policy-error', {
  decommission_at: '2031-06-30',
  charged_until: '2031-06-30',
  properties: [{ name: 'id', reason: 'too early' }],
});

/** A fake server: every request but GET /implementation takes the next scripted answer. */
function fakeServer() {
  let script: Answer[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const [status, body] =
        req.url === '/api/v2/implementation'
          ? [200, { schema_version: '2.6.0', supported_operations: [] }]
          : (script.shift() ?? [200, {}]);
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  return {
    play(answers: Answer[]) {
      script = [...answers];
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

describe('the properties of every 400 a run met', () => {
  const fake = fakeServer();
  let baseUrl: string;
  before(async () => {
    baseUrl = await fake.start();
  });
  after(() => fake.stop());

  /** A check that sends `count` requests and notes that it left something unjudged. */
  const sender = (count: number): CheckDefinition => ({
    id: 'TEST-001',
    title: 'sends requests',
    clause: 'a check that only sends requests',
    operations: [],
    safety: 'read',
    async run(t) {
      for (let i = 0; i < count; i += 1) await t.send({ method: 'DELETE', path: `/things/t${i}` });
      t.note('a day ahead could not be waited for');
    },
  });
  const run = async (answers: Answer[]): Promise<RunSummary> => {
    fake.play(answers);
    const suite = new Suite({
      baseUrl,
      credentials: { primary: { api_key: 'k', api_secret: 's' } },
      profile: 'read',
      document: loadSpec(),
    });
    return runChecks(suite, [sender(answers.length), ...PROPERTIES_CHECKS], { profile: 'read' });
  };
  const result = (summary: RunSummary, id: string) => summary.results.find((r) => r.id === id)!;

  it('passes when every 400 names a property and why, whatever its problem type', async () => {
    const summary = await run([
      [400, VALID],
      [400, NAMED],
      [202, {}],
      [400, { ...POLICY, properties: [{ name: 'decommission_at', reason: 'too early' }] }],
    ]);
    const err = result(summary, 'ERR-005');
    assert.equal(err.outcome, 'PASS', JSON.stringify(err.findings));
    assert.equal(err.evidence.length, 3);
  });

  it('fails 400s without properties, by problem type, and warns of a policy error not naming the day', async () => {
    const summary = await run([
      [400, VALID],
      [400, UNNAMED],
      [400, UNNAMED],
      [400, POLICY],
      [400, problem('validation-error', { properties: [] })],
      [400, '<html>bad</html>'],
    ]);
    const err = result(summary, 'ERR-005');
    assert.equal(err.outcome, 'FAIL');
    const messages = err.findings.map((finding) => `[${finding.severity}] ${finding.message}`);
    assert.deepEqual(
      messages.filter((message) => message.startsWith('[must]')).map((message) => message.split(':')[0]),
      [
        '[must] 2 of 6 400 answers (unable-to-fulfill',
        '[must] 1 of 6 400 answers (validation-error',
        '[must] 1 of 6 400 answers (no problem type',
      ],
    );
    assert.match(
      messages[0],
      /it carries no properties\): DELETE \/api\/v2\/things\/t1; DELETE \/api\/v2\/things\/t2$/,
    );
    assert.ok(
      messages.some((message) =>
        /\[should\] 1 cancellation-policy-error answers do not name decommission_at/.test(message),
      ),
    );
    assert.equal(err.evidence.length, 5);
    assert.equal(err.evidence[0].request.url.endsWith('/things/t1'), true);
  });

  it('cannot judge a run that met no 400', async () => {
    const summary = await run([[200, {}]]);
    assert.equal(result(summary, 'ERR-005').outcome, 'INCONCLUSIVE');
  });

  it('gives what a check could not judge as the reason of its result, whatever its outcome', async () => {
    const summary = await run([[400, VALID]]);
    const sent = result(summary, 'TEST-001');
    assert.equal(sent.outcome, 'PASS');
    assert.equal(sent.reason, 'a day ahead could not be waited for');
    assert.equal(result(summary, 'ERR-005').reason, undefined);
  });
});
