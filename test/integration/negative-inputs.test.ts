import assert from 'node:assert/strict';
import fc from 'fast-check';
import { QueryTypes } from 'sequelize';
import { ajvOf } from '../../api/request-validation';
import { loadSpec } from '../../spec';
import {
  databaseState,
  eventsSince,
  settledDatabaseState,
  stateDifferences,
  SELF_CHANGING_TABLES,
} from '../support/database-state';
import { assertContract } from '../support/http';
import { runCampaign, summarise } from '../support/negative/campaign';
import { createJudge } from '../support/negative/certainty';
import { chunkedDrafts, draftsFor } from '../support/negative/drafts';
import { campaignOperations } from '../support/negative/operations';
import { SchemaReader } from '../support/negative/schema-values';
import type { CampaignWorld } from '../support/negative/targets';
import { createCampaignWorld } from '../support/negative/targets';
import { createTransport } from '../support/negative/transport';
import { request } from '../support/http';
import { asCurl, toWire } from '../support/negative/wire';
import type { AccountIdentity } from '../support/matrix';
import { ACCOUNT_IDENTITIES, REJECTED_IDENTITIES } from '../support/matrix';
import { stack } from '../support/stack';

/**
 * The negative campaign: thousands of requests drafted from the OpenAPI document (bounds and just
 * past them, wrong types, huge and deep values, hostile text, broken JSON and media types, stray and
 * repeated parameters) from every identity of the authorisation matrix, at real resources and at
 * ids that name none. No answer may be a server error or off the contract, no write may be taken,
 * and the database must be as it was. The seed is fixed and printed; NEGATIVE_SEED replays another,
 * NEGATIVE_ONLY=i,j sends only those requests, NEGATIVE_COUNT changes how many. The same world then
 * tries the exchange's business rules as each identity: well-formed requests the rules refuse.
 */

const SEED = Number(process.env.NEGATIVE_SEED ?? 20_260_601);
const COUNT = Number(process.env.NEGATIVE_COUNT ?? 10_500);
const ONLY = process.env.NEGATIVE_ONLY?.split(',').map(Number);
/** Requests under way at once: enough to keep the server busy, few enough for two shared cores. */
const CONCURRENCY = 6;

describe('negative inputs: nothing a client sends makes the server fail or change anything', function () {
  this.timeout(600_000);
  const document = loadSpec();
  let campaign: CampaignWorld;

  before(async () => {
    campaign = await createCampaignWorld();
  });

  it(`answers ${COUNT} generated requests below 500, on the contract, refusing every write, with the database unchanged`, async () => {
    const started = Date.now();
    const transport = createTransport(stack().baseUrl, CONCURRENCY);
    const implementation = await transport.send({
      index: -1,
      identity: 'anonymous',
      drafted: undefined as never,
      method: 'GET',
      path: '/implementation',
      headers: [],
    });
    assertContract('GET', '/implementation', implementation);
    const declared = implementation.body.supported_operations as string[];
    const operations = campaignOperations(document, declared);
    assert.deepEqual(
      declared.filter((id) => !operations.some((op) => op.operationId === id)),
      [],
      'every declared operation is in the document',
    );
    const reader = new SchemaReader(document);
    const arbitrary = fc.oneof(...operations.map((op) => draftsFor(op, reader, campaign)));
    const draftAt = chunkedDrafts(arbitrary, SEED);
    const chosen = ONLY ?? Array.from({ length: COUNT }, (_, index) => index);
    const byId = new Map(operations.map((op) => [op.operationId, op]));
    console.log(
      `      seed ${SEED} (replay: NEGATIVE_SEED=${SEED}), ${chosen.length} requests, ${CONCURRENCY} at a time`,
    );

    const ready = Date.now();
    const before = await settledDatabaseState();
    const settled = Date.now();
    const { tally, findings, freshKeys } = await runCampaign({
      count: chosen.length,
      concurrency: CONCURRENCY,
      judge: createJudge(ajvOf(document), reader, operations, campaign),
      send: (request) => transport.send(request),
      trace: ONLY
        ? (request, response, reasons) =>
            console.log(
              `      #${request.index} (${request.identity}; ${reasons.join('; ') || 'a read'}):\n${asCurl(request, stack().baseUrl).replace(/^/gm, '        ')}\n        → ${response.status} ${response.text.slice(0, 300)}`,
            )
        : undefined,
      draft: (i) => {
        const index = chosen[i];
        const draft = draftAt(index);
        const op = byId.get(draft.operationId)!;
        return {
          request: toWire(index, draft, op, campaign, campaign.world.tokens, SEED),
          fallback: draft.fallback,
        };
      },
    });
    transport.close();
    const sent = Date.now();
    const after = await databaseState();
    const [kept] = await stack().db.sequelize.query<{ n: number }>(
      'SELECT COUNT(*) AS n FROM idempotency_keys WHERE idempotency_key LIKE :prefix',
      { replacements: { prefix: `negative-${SEED}-%` }, type: QueryTypes.SELECT },
    );

    console.log(tally.report().replace(/^/gm, '      '));
    console.log(`      idempotency keys sent with writes: ${freshKeys.length}, rows left: ${kept.n}`);
    console.log(`      tables left out of the comparison: ${Object.keys(SELF_CHANGING_TABLES).join(', ')}`);
    const seconds = (from: number, to: number) => `${((to - from) / 1000).toFixed(1)} s`;
    console.log(
      `      wall time: preparing ${seconds(started, ready)}, waiting for rest ${seconds(ready, settled)}, drafting and sending ${seconds(settled, sent)}`,
    );

    assert.equal(tally.total, chosen.length, 'every request was sent');
    if (!ONLY) {
      const unsent = operations.filter((op) => !tally.byOperation.has(op.operationId));
      assert.deepEqual(
        unsent.map((op) => op.operationId),
        [],
        'every declared operation was drafted',
      );
      const silent = [...ACCOUNT_IDENTITIES, ...REJECTED_IDENTITIES].filter(
        (who) => !tally.byIdentity.has(who),
      );
      assert.deepEqual(silent, [], 'every identity sent requests');
    }
    assert.equal(findings.length, 0, `findings:\n${summarise(findings, stack().baseUrl, SEED)}`);
    const events = await eventsSince(before.newestEventSerial);
    assert.deepEqual(
      stateDifferences(before, after),
      [],
      `the database changed; events:\n${events.join('\n')}`,
    );
    assert.equal(Number(kept.n), 0, 'an Idempotency-Key of a refused write left a row');
  });

  /**
   * A member trying its luck with what the exchange's rules forbid rather than with malformed
   * input: each identity of the world, each abuse refused on the contract, nothing stored.
   */
  it('refuses the business-flow abuses of a member trying its luck, as each identity, with the database unchanged', async () => {
    const { world } = campaign;
    const { db } = stack();
    const address = {
      country: 'NL',
      locality: 'Amsterdam',
      postal_code: '1012 AB',
      street_address: 'Damrak 2',
    };
    // Each identity's own account has a sub-account not yet on-boarded (no legal contact).
    const pending = {} as Record<AccountIdentity, string>;
    for (const identity of ACCOUNT_IDENTITIES) {
      pending[identity] = `acc-abuse-${identity}-${SEED}-${Date.now().toString(36)}`;
      await db.accounts.importAccount(
        {
          id: pending[identity],
          name: `Abuse ${identity} ${Date.now().toString(36)}`,
          address,
          billing_information: { name: 'Abuse B.V.', address },
          managing_account: world.accounts[identity],
        },
        'requested',
      );
    }
    // What each identity is told: the rule that refuses it, naming the property; a resource it may
    // see but not delete is forbidden; one it may not see is not found.
    const refusedFor = (deleting: 'consumer' | 'payer'): Record<AccountIdentity, string> => ({
      owner: deleting === 'consumer' ? '400 unable-to-fulfill' : '403 permission-denied',
      reseller: '400 unable-to-fulfill',
      'sub-account': deleting === 'consumer' ? '403 permission-denied' : '404 not-found',
      unrelated: '404 not-found',
    });
    const before = await settledDatabaseState();
    for (const identity of ACCOUNT_IDENTITIES) {
      const token = world.tokens[identity];
      const own = world.accounts[identity];
      const tries: Array<{
        what: string;
        method: string;
        path: string;
        body?: object;
        expected: string;
        names?: string;
      }> = [
        {
          what: 'a discoverable account passing for the exchange (a Cyrillic о)',
          method: 'POST',
          path: '/accounts',
          body: { name: 'Demо-IX', discoverable: true, address, managing_account: own },
          expected: '400 validation-error',
          names: 'name',
        },
        {
          what: 'an order billed to an account not on-boarded',
          method: 'POST',
          path: '/connections',
          body: {
            managing_account: own,
            consuming_account: own,
            billing_account: pending[identity],
            role_assignments: [],
            product_offering: 'po-connection-ham-10g',
            mode: 'standalone',
            port_quantity: 1,
            subscriber_side_demarcs: ['abuse'],
          },
          expected: '400 validation-error',
          names: 'billing_account',
        },
        {
          what: 'deleting the account consuming a live connection',
          method: 'DELETE',
          path: `/accounts/${world.accounts['sub-account']}`,
          expected: refusedFor('consumer')[identity],
        },
        {
          what: 'deleting the account paying for a live connection',
          method: 'DELETE',
          path: `/accounts/${world.accounts.owner}`,
          expected: refusedFor('payer')[identity],
        },
      ];
      for (const attempt of tries) {
        const label = `${identity}: ${attempt.what}`;
        const response = await request(attempt.method, attempt.path, { token, body: attempt.body });
        assertContract(attempt.method, attempt.path, response);
        const type = String(response.body?.type ?? '').replace(/^.*\/([a-z-]+)\.html$/, '$1');
        assert.equal(`${response.status} ${type}`, attempt.expected, `${label}: ${response.text}`);
        if (attempt.names) {
          const named = (response.body.properties as Array<{ name: string }>).map((p) => p.name);
          assert.ok(named.includes(attempt.names), `${label} names ${attempt.names}: ${response.text}`);
        }
        if (attempt.expected.startsWith('400 unable-to-fulfill'))
          assert.ok(
            (response.body.conflicts as unknown[]).length > 0,
            `${label} names conflicts: ${response.text}`,
          );
      }
    }
    const after = await databaseState();
    assert.deepEqual(stateDifferences(before, after), [], 'a refused abuse changed the database');
  });
});
