import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { RunSummary } from '../../conformance/index';
import { conformanceCli } from '../support/conformance-cli';
import { scratchFolder } from '../support/shared-stack';
import { stack } from '../support/stack';

const ROOT = path.resolve(__dirname, '../..');

const cli = conformanceCli;

describe('the conformance CLI', function () {
  this.timeout(150_000);
  const dir = scratchFolder('conformance-cli');
  const credentialsFile = path.join(dir, 'credentials.json');

  before(() => {
    const of = (accountId: string) => {
      const c = stack().credentials.find((credential) => credential.accountId === accountId)!;
      return { api_key: c.apiKey, api_secret: c.apiSecret };
    };
    writeFileSync(
      credentialsFile,
      JSON.stringify({ primary: of('acc-transit-partners'), secondary: of('acc-thames-cloud') }),
    );
  });

  it('runs the selected checks, shows progress and writes every report', async () => {
    const files = { json: 'r.json', junit: 'r.xml', html: 'r.html' };
    const result = await cli([
      '--base-url',
      stack().baseUrl,
      '--credentials',
      credentialsFile,
      '--only',
      'DISC-,AUTH-,PAG-facilities_list',
      '--max-retries',
      '2',
      '--max-retry-wait',
      '30',
      ...Object.entries(files).flatMap(([kind, file]) => [`--${kind}`, path.join(dir, file)]),
    ]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /PASS.*DISC-001/);
    assert.match(result.stdout, /PASSED: no FAIL and no TIMEOUT/);
    assert.match(result.stdout, /Judged: +schema revision 2\.6\.0/);
    const summary = JSON.parse(readFileSync(path.join(dir, files.json), 'utf8')) as RunSummary;
    assert.ok(summary.results.length >= 12);
    assert.ok(summary.results.every((r) => /^(DISC|AUTH|PAG)-/.test(r.id)));
    assert.equal(summary.counts.FAIL, 0);
    assert.match(
      readFileSync(path.join(dir, files.junit), 'utf8'),
      /^<\?xml[^]*<testsuites [^]*<testsuite [^]*<\/testsuite>\s*<\/testsuites>\s*$/,
    );
    const html = readFileSync(path.join(dir, files.html), 'utf8');
    assert.match(html, /^<!DOCTYPE html>/i);
    assert.ok(html.includes('PAG-facilities_list'));
    // Evidence never carries the secrets it was run with.
    const secret = (JSON.parse(readFileSync(credentialsFile, 'utf8')) as { primary: { api_secret: string } })
      .primary.api_secret;
    for (const file of Object.values(files))
      assert.ok(!readFileSync(path.join(dir, file), 'utf8').includes(secret), `${file} shows the secret`);
  });

  it('exits 1 when checks fail, with the reasons', async () => {
    const wrong = path.join(dir, 'wrong.json');
    writeFileSync(wrong, JSON.stringify({ primary: { api_key: 'nobody', api_secret: 'nothing' } }));
    const result = await cli(['--base-url', stack().baseUrl, '--credentials', wrong, '--only', 'AUTH-001']);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.match(result.stdout, /FAIL/);
  });

  it('passes with a listed expected failure, and fails once a listed check stops failing', async () => {
    const wrong = path.join(dir, 'wrong-again.json');
    writeFileSync(wrong, JSON.stringify({ primary: { api_key: 'nobody', api_secret: 'nothing' } }));
    const expected = path.join(dir, 'expected.txt');
    writeFileSync(expected, '# known\nAUTH-001\n');
    const excused = await cli([
      '--base-url',
      stack().baseUrl,
      '--credentials',
      wrong,
      '--only',
      'AUTH-001',
      '--expected-failures',
      expected,
    ]);
    assert.equal(excused.code, 0, excused.stdout + excused.stderr);
    assert.match(excused.stdout, /Expected failures: 1 of 1 listed still fail/);
    const fixed = await cli([
      '--base-url',
      stack().baseUrl,
      '--credentials',
      credentialsFile,
      '--only',
      'AUTH-001',
      '--expected-failures',
      expected,
    ]);
    assert.equal(fixed.code, 1, fixed.stdout + fixed.stderr);
    assert.match(fixed.stdout, /no longer failing, remove from the list: AUTH-001/);
  });

  it("keeps a full run's ledger in the user's state folder, one per exchange, where cleanup finds it", async () => {
    const state = path.join(dir, 'state');
    const base = ['--base-url', stack().baseUrl, '--credentials', credentialsFile];
    const run = await cli([...base, '--profile', 'full', '--only', 'IDEM-002'], { XDG_STATE_HOME: state });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const ledger = path.join(
      state,
      'ixapi-conformance',
      `ledger-127.0.0.1_${new URL(stack().baseUrl).port}.jsonl`,
    );
    const entries = readFileSync(ledger, 'utf8').trim().split('\n');
    assert.ok(entries.length >= 2, `the ledger names what the run created: ${entries.join(' | ')}`);
    assert.ok(
      !existsSync(path.join(ROOT, 'ixapi-conformance-ledger.jsonl')),
      'a ledger in the working directory',
    );
    const cleanup = await cli(['cleanup', ...base], { XDG_STATE_HOME: state });
    assert.equal(cleanup.code, 0, cleanup.stdout + cleanup.stderr);
    assert.match(cleanup.stdout, /nothing left behind/);
  });

  it('takes the credentials from the environment without --credentials', async () => {
    const { primary } = JSON.parse(readFileSync(credentialsFile, 'utf8')) as {
      primary: { api_key: string; api_secret: string };
    };
    const result = await cli(['--base-url', stack().baseUrl, '--only', 'AUTH-001'], {
      IXAPI_PRIMARY_KEY: primary.api_key,
      IXAPI_PRIMARY_SECRET: primary.api_secret,
    });
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /PASS.*AUTH-001/);
    const none = await cli(['--base-url', stack().baseUrl, '--only', 'AUTH-001'], {
      IXAPI_PRIMARY_KEY: '',
      IXAPI_PRIMARY_SECRET: '',
    });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /IXAPI_PRIMARY_KEY and IXAPI_PRIMARY_SECRET/);
  });

  it('takes the demo credentials npm start writes, the roles chosen by flags', async () => {
    const demo = path.join(dir, 'demo-credentials.json');
    writeFileSync(demo, JSON.stringify({ baseUrl: stack().baseUrl, accounts: stack().credentials }));
    const base = ['--base-url', stack().baseUrl, '--credentials', demo, '--only', 'AUTH-001'];
    const result = await cli([...base, '--primary', 'Transit Partners', '--secondary', 'acc-thames-cloud']);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /PASS.*AUTH-001/);
    const unnamed = await cli(base);
    assert.equal(unnamed.code, 2);
    assert.match(unnamed.stderr, /--primary/);
  });

  it('exits 2 with a clear message for a usage error', async () => {
    const missing = await cli(['--credentials', credentialsFile]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--base-url/);
    const profile = await cli([
      '--base-url',
      stack().baseUrl,
      '--credentials',
      credentialsFile,
      '--profile',
      'x',
    ]);
    assert.equal(profile.code, 2);
    assert.match(profile.stderr, /--profile is read or full/);
    const unreadable = await cli([
      '--base-url',
      stack().baseUrl,
      '--credentials',
      path.join(dir, 'none.json'),
    ]);
    assert.equal(unreadable.code, 2);
    assert.match(unreadable.stderr, /cannot read credentials/);
    const retries = await cli([
      '--base-url',
      stack().baseUrl,
      '--credentials',
      credentialsFile,
      '--max-retries',
      'many',
    ]);
    assert.equal(retries.code, 2);
    assert.match(retries.stderr, /--max-retries takes a whole number, got many/);
    const wait = await cli([
      '--base-url',
      stack().baseUrl,
      '--credentials',
      credentialsFile,
      '--max-retry-wait',
      '1.5',
    ]);
    assert.equal(wait.code, 2);
    assert.match(wait.stderr, /--max-retry-wait takes a whole number of seconds, got 1\.5/);
    const unknown = await cli(['--base-url', stack().baseUrl, '--credentials', credentialsFile, '--colour']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--colour/);
    assert.match(unknown.stderr, /Exit code: 0 when/);
  });
});
