import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import path from 'node:path';
import {
  credentialsFromEnvironment,
  credentialsOfDemo,
  defaultLedgerFile,
  waitsOf,
} from '../../conformance/cli';
import type { CheckDefinition } from '../../conformance/runner';
import { runCheck } from '../../conformance/runner';
import type { Waits } from '../../conformance/suite';
import { DEFAULT_WAITS, Suite } from '../../conformance/suite';
import { loadSpec } from '../../spec';

describe('the conformance CLI', () => {
  it("keeps its ledgers in the user's state folder, one per exchange", () => {
    assert.equal(
      defaultLedgerFile('https://ixapi.example.net/api/v2', { XDG_STATE_HOME: '/var/lib/ci' }),
      '/var/lib/ci/ixapi-conformance/ledger-ixapi.example.net.jsonl',
    );
    assert.equal(
      defaultLedgerFile('http://127.0.0.1:8000/api/v2', {}),
      path.join(homedir(), '.local', 'state', 'ixapi-conformance', 'ledger-127.0.0.1_8000.jsonl'),
    );
    assert.equal(
      defaultLedgerFile('http://[::1]:8000/api/v2', { XDG_STATE_HOME: ' ' }),
      path.join(homedir(), '.local', 'state', 'ixapi-conformance', 'ledger-___1__8000.jsonl'),
    );
  });

  it('takes credentials from the environment, as CI secrets, by role', () => {
    assert.deepEqual(
      credentialsFromEnvironment({
        IXAPI_PRIMARY_KEY: 'pk',
        IXAPI_PRIMARY_SECRET: 'ps',
        IXAPI_SUBACCOUNT_KEY: 'sk',
        IXAPI_SUBACCOUNT_SECRET: 'ss',
      }),
      { primary: { api_key: 'pk', api_secret: 'ps' }, subaccount: { api_key: 'sk', api_secret: 'ss' } },
    );
    const refused = (env: NodeJS.ProcessEnv, message: RegExp) =>
      assert.throws(
        () => credentialsFromEnvironment(env),
        (error: Error) => message.test(error.message) && !/very-secret/.test(error.message),
      );
    refused({}, /IXAPI_PRIMARY_KEY and IXAPI_PRIMARY_SECRET/);
    refused({ IXAPI_PRIMARY_KEY: 'pk', IXAPI_PRIMARY_SECRET: ' ' }, /IXAPI_PRIMARY_SECRET is missing/);
    refused(
      { IXAPI_PRIMARY_KEY: 'pk', IXAPI_PRIMARY_SECRET: 'ps', IXAPI_SECONDARY_SECRET: 'very-secret' },
      /IXAPI_SECONDARY_KEY is missing/,
    );
  });

  it('takes the accounts of demo credentials by id or name for the roles the flags name', () => {
    const accounts = [
      {
        role: 'reseller',
        name: 'Transit Partners',
        accountId: 'acc-transit-partners',
        apiKey: 'tk',
        apiSecret: 'ts',
      },
      {
        role: 'customer',
        name: 'Thames Cloud',
        accountId: 'acc-thames-cloud',
        apiKey: 'ck',
        apiSecret: 'cs',
      },
    ];
    assert.deepEqual(
      credentialsOfDemo('demo.json', accounts, {
        primary: 'acc-transit-partners',
        secondary: 'thames cloud',
      }),
      { primary: { api_key: 'tk', api_secret: 'ts' }, secondary: { api_key: 'ck', api_secret: 'cs' } },
    );
    assert.throws(
      () => credentialsOfDemo('demo.json', accounts, {}),
      /--primary \(one of acc-transit-partners, acc-thames-cloud\)/,
    );
    assert.throws(
      () => credentialsOfDemo('demo.json', accounts, { primary: 'acc-nobody' }),
      /no account acc-nobody for --primary/,
    );
  });
});

describe('the waits of the full profile', () => {
  it('takes --provisioning-wait and --settling-wait in seconds, from 1 to 3600', () => {
    assert.deepEqual(waitsOf({}), {});
    assert.deepEqual(waitsOf({ 'provisioning-wait': '90', 'settling-wait': '30' }), {
      provisioning: 90_000,
      settling: 30_000,
    });
    assert.throws(() => waitsOf({ 'provisioning-wait': '0' }), /--provisioning-wait takes 1 to 3600 seconds/);
    assert.throws(
      () => waitsOf({ 'settling-wait': '1.5' }),
      /--settling-wait takes a whole number of seconds/,
    );
    assert.throws(() => waitsOf({ 'settling-wait': '3601' }), /1 to 3600/);
  });

  it('gives checks longer deadlines in proportion to longer waits', async () => {
    const suite = (waits?: Partial<Waits>) =>
      new Suite({
        baseUrl: 'http://127.0.0.1:9/api/v2',
        credentials: { primary: { api_key: 'k', api_secret: 's' } },
        profile: 'full',
        document: loadSpec(),
        waits,
      });
    const slow: CheckDefinition = {
      id: 'SLOW-001',
      title: 'waits 300 ms',
      clause: 'a clause',
      operations: [],
      safety: 'mutate',
      deadlineMs: 200,
      run: () => new Promise((resolve) => setTimeout(resolve, 300)),
    };
    assert.deepEqual(suite().waits, DEFAULT_WAITS);
    assert.equal((await runCheck(suite(), slow, 'full')).outcome, 'TIMEOUT');
    const doubled = suite({ provisioning: DEFAULT_WAITS.provisioning * 2 });
    assert.equal((await runCheck(doubled, slow, 'full')).outcome, 'PASS');
  });
});
