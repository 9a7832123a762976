import assert from 'node:assert/strict';
import type { ApiService } from '../../api/server';
import type { GaleraStack } from './stack';
import { galeraStack, loginAt, startNodeApis, stopApis } from './stack';

const LOGINS = 12;

/**
 * A client logs in through whichever API replica the balancer picks, and replicas sit on different
 * nodes: logins with one key at once on two nodes each record the key's use on the same row, and
 * every one of them gets its tokens.
 */
describe('logins with one key through two nodes at once', function () {
  let stack: GaleraStack;
  let apis: ApiService[] = [];

  before(async function () {
    stack = galeraStack(this);
    apis = await startNodeApis(stack, [0, 1]);
  });
  after(() => stopApis(apis));

  it(`answers each of ${LOGINS} logins with tokens`, async () => {
    // The key's last use is recorded at most once a minute: make it due, so that the first logins on
    // both nodes write it at once.
    await stack.dbs[0].sequelize.query(
      "UPDATE api_keys SET last_used_at = NULL WHERE account_id = 'acc-thames-cloud'",
    );
    const answers = await Promise.all(
      Array.from({ length: LOGINS }, (_, i) => loginAt(stack, apis[i % 2], 'acc-thames-cloud')),
    );
    assert.deepEqual(
      answers.map((answer) => answer.status),
      Array.from({ length: LOGINS }, () => 201),
      answers.map((answer) => answer.text).join('\n'),
    );
  });
});
