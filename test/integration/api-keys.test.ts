import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { runAdmin } from '../support/admin';
import { importFreshAccount } from '../support/fresh-account';
import { request } from '../support/http';
import { stack } from '../support/stack';

/** The key and secret `create-api-key` printed. */
function issuedBy(stdout: string): { apiKey: string; apiSecret: string } {
  const [, apiKey] = /^api_key\s+(\S+)$/m.exec(stdout) ?? [];
  const [, apiSecret] = /^api_secret\s+(\S+)$/m.exec(stdout) ?? [];
  assert.ok(apiKey && apiSecret, stdout);
  return { apiKey, apiSecret };
}

const logIn = (key: { apiKey: string; apiSecret: string }) =>
  request('POST', '/auth/token', { body: { api_key: key.apiKey, api_secret: key.apiSecret } });

describe('API keys: their last use, and their list in the admin command', function () {
  this.timeout(120_000);

  it("records a key's use when a pair is issued through it, a login or a refresh, at most once a minute", async () => {
    const { db } = stack();
    const account = await importFreshAccount('acc-keys', 'Keys in use');
    const key = await db.credentials.createApiKey(account, 'used');
    const lastUse = async () =>
      (await db.credentials.listApiKeys(account)).find((listed) => listed.apiKey === key.apiKey)!.lastUsedAt;
    assert.equal(await lastUse(), null);
    const refused = await logIn({ ...key, apiSecret: randomBytes(64).toString('base64url') });
    assert.equal(refused.status, 401);
    assert.equal(await lastUse(), null, 'a refused login is no use');

    const login = await logIn(key);
    assert.equal(login.status, 201, login.text);
    const first = await lastUse();
    assert.ok(first instanceof Date);
    // Another login within the minute writes nothing.
    assert.equal((await logIn(key)).status, 201);
    assert.deepEqual(await lastUse(), first);

    // Once the recorded use is a minute old, a refresh records the key's use again.
    await db.sequelize.query(
      'UPDATE api_keys SET last_used_at = last_used_at - INTERVAL 61 SECOND WHERE api_key = :key',
      { replacements: { key: key.apiKey } },
    );
    const earlier = (await lastUse())!;
    const refreshed = await request('POST', '/auth/refresh', {
      body: { refresh_token: login.body.refresh_token },
    });
    assert.equal(refreshed.status, 201, refreshed.text);
    assert.ok((await lastUse())!.getTime() > earlier.getTime());
  });

  it("lists an account's keys with the admin command, as a table or JSON: key, label, made, last used, revoked, never a secret", async () => {
    const account = await importFreshAccount('acc-keys', 'Keys listed');
    const robot = await runAdmin(['create-api-key', '--account', account, '--label', 'billing robot']);
    assert.equal(robot.code, 0, robot.stderr);
    const used = issuedBy(robot.stdout);
    const spare = issuedBy((await runAdmin(['create-api-key', '--account', account])).stdout);
    assert.equal((await logIn(used)).status, 201);
    assert.equal((await runAdmin(['revoke-api-key', '--key', spare.apiKey])).code, 0);

    const table = await runAdmin(['list-api-keys', '--account', account]);
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trimEnd().split('\n');
    assert.equal(lines[0], `Account ${account}: 2 API keys, 1 active (times in UTC)`);
    assert.deepEqual(lines[1].split(/\s+/), ['api_key', 'label', 'created_at', 'last_used_at', 'revoked_at']);
    const moment = '\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}';
    assert.match(lines[2], new RegExp(`^${used.apiKey}  billing robot  ${moment}  ${moment}  -$`));
    assert.match(lines[3], new RegExp(`^${spare.apiKey}  -\\s+${moment}  never\\s+${moment}$`));
    // Every column starts where its heading does.
    for (const heading of ['label', 'created_at', 'last_used_at', 'revoked_at']) {
      const at = lines[1].indexOf(heading);
      for (const row of lines.slice(2))
        assert.match(row.slice(at - 2, at + 1), /^ {2}\S$/, `${heading}: ${row}`);
    }

    const hashes = await stack().db.sequelize.query<{ secret_hash: string }>(
      'SELECT secret_hash FROM api_keys WHERE account_id = :account',
      { replacements: { account }, type: QueryTypes.SELECT },
    );
    const json = await runAdmin(['list-api-keys', '--account', account, '--json']);
    assert.equal(json.code, 0, json.stderr);
    for (const output of [table.stdout, json.stdout])
      for (const secret of [used.apiSecret, spare.apiSecret, ...hashes.map((row) => row.secret_hash)])
        assert.ok(!output.includes(secret), 'a secret or its hash is printed');

    const listed = JSON.parse(json.stdout) as Array<Record<string, string | null>>;
    assert.deepEqual(
      listed.map((key) => Object.keys(key)),
      [0, 1].map(() => ['api_key', 'label', 'created_at', 'last_used_at', 'revoked_at']),
    );
    const [first, second] = listed;
    assert.deepEqual([first.api_key, first.label, first.revoked_at], [used.apiKey, 'billing robot', null]);
    assert.equal(
      first.last_used_at,
      (await stack().db.credentials.listApiKeys(account))[0].lastUsedAt!.toISOString(),
    );
    assert.deepEqual([second.api_key, second.label, second.last_used_at], [spare.apiKey, '', null]);
    assert.ok(!Number.isNaN(Date.parse(second.revoked_at!)));
  });

  it('says so for an account with no key, and refuses an unknown or missing account as create-api-key does', async () => {
    const empty = await importFreshAccount('acc-keys', 'No keys');
    const none = await runAdmin(['list-api-keys', '--account', empty]);
    assert.deepEqual([none.code, none.stdout], [0, `Account ${empty} has no API keys.\n`]);
    const noneAsJson = await runAdmin(['list-api-keys', '--account', empty, '--json']);
    assert.deepEqual(JSON.parse(noneAsJson.stdout), []);
    for (const [args, reason] of [
      [['--account', 'acc-no-such-account'], /^no account acc-no-such-account$/m],
      [[], /^missing --account$/m],
    ] as const) {
      const listed = await runAdmin(['list-api-keys', ...args]);
      assert.equal(listed.code, 2, listed.stderr);
      assert.match(listed.stderr, reason);
      assert.equal(listed.stdout, '');
      const created = await runAdmin(['create-api-key', ...args]);
      assert.deepEqual([created.code, created.stderr], [listed.code, listed.stderr]);
    }
  });
});
