import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { sensitivePropertiesOf } from '../../api/redaction-plans';
import { accountsActingFor } from '../../db/visibility';
import { WRITTEN_EVENT_TYPES } from '../../domain/events';
import { loadSpec } from '../../spec';
import { settleConnections } from '../support/connections';
import { playScenario } from '../support/event-scenario';
import { request } from '../support/http';
import type { AccountIdentity, World } from '../support/matrix';
import { ACCOUNT_IDENTITIES, createWorld } from '../support/matrix';
import { readEvents } from '../support/pages';
import { ReadLog, lastSerial } from '../support/read-log';
import { stack } from '../support/stack';

/**
 * Every kind of event the service writes, replayed to every identity of the authorisation matrix:
 * each event an identity lists holds its resources exactly as that identity read them right after
 * the write (or right before a deletion): the same properties, sensitive ones hidden or zeroed as
 * the read shows them. An identity that read 404 lists no event about the resource, and facts
 * beside the resources are never sensitive.
 */

/** The collection each kind of resource in an event's type lives in. */
const COLLECTION_OF_KIND: Record<string, string> = {
  account: 'accounts',
  contact: 'contacts',
  role_assignment: 'role-assignments',
  connection: 'connections',
  port_reservation: 'port-reservations',
  ip: 'ips',
  mac: 'macs',
  member_joining_rule: 'member-joining-rules',
  network_service: 'network-services',
  network_service_config: 'network-service-configs',
  network_feature_config: 'network-feature-configs',
};

/** Payload properties that hold a resource (or a list of them), by the collection it is read from. */
const RESOURCE_PROPERTIES: Record<string, string> = {
  ...COLLECTION_OF_KIND,
  contacts: 'contacts',
  role_assignments: 'role-assignments',
  reservation: 'port-reservations',
};

/** What moves by itself between a write and the read right after it: the lifecycle. */
const MOVING = new Set(['state', 'status']);

const document = loadSpec();
/** Every property the document marks sensitive in a resource it shows. */
const SENSITIVE = new Set(
  Object.keys(document.components.schemas)
    .filter((name) => !/(Request|Update|Patch)$/.test(name))
    .flatMap((name) => sensitivePropertiesOf(document, name)),
);

interface Listed {
  serial: number;
  type: string;
  account: string;
  payload: Record<string, unknown>;
}

interface Stored {
  serial: number;
  type: string;
  payload: Record<string, unknown>;
}

/** The resource as shown holds what the read showed: the same properties and values. */
function assertShownAsRead(shown: Record<string, unknown>, read: Record<string, unknown>, what: string) {
  assert.deepEqual(Object.keys(shown).sort(), Object.keys(read).sort(), `${what}: its properties`);
  for (const key of Object.keys(read))
    if (!MOVING.has(key)) assert.deepEqual(shown[key], read[key], `${what}: ${key}`);
}

describe('the event log, replayed to every identity of the matrix', function () {
  this.timeout(600_000);
  after(() => settleConnections());
  let world: World;
  let log: ReadLog;
  let start = 0;
  let last = 0;
  let stored: Map<number, Stored>;
  const listedTypes = new Map<AccountIdentity, Set<string>>(
    ACCOUNT_IDENTITIES.map((identity) => [identity, new Set<string>()]),
  );

  before(async () => {
    start = await lastSerial();
    world = await createWorld();
    log = new ReadLog(world);
    for (const identity of ACCOUNT_IDENTITIES) await log.observe(`accounts/${world.accounts[identity]}`);
    await playScenario(world, log);
    const rows = await stack().db.sequelize.query<{ serial: number; type: string; payload: unknown }>(
      'SELECT serial, type, payload FROM events WHERE serial > :start ORDER BY serial',
      { replacements: { start }, type: QueryTypes.SELECT },
    );
    stored = new Map(
      rows.map((row) => [
        Number(row.serial),
        {
          serial: Number(row.serial),
          type: row.type,
          payload: (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as Record<
            string,
            unknown
          >,
        },
      ]),
    );
    last = Math.max(...stored.keys());
  });

  it('writes every kind of event there is (but those only older versions wrote), and no other', () => {
    const written = new Set([...stored.values()].map((event) => event.type));
    assert.deepEqual([...written].sort(), [...WRITTEN_EVENT_TYPES].sort());
  });

  for (const identity of ACCOUNT_IDENTITIES)
    it(`shows the ${identity} each event's resources as its reads showed them, and nothing it could not read`, async () => {
      const token = world.tokens[identity];
      // The log from the scenario's start, page by page (it pages by default).
      const listing = await readEvents<Listed>(token, `?serial_gt=${start}`);
      const paged = await request('GET', `/events?serial_gt=${start}&page_limit=1000`, { token });
      // Whatever is left out is left out in SQL: the count is what the page holds.
      assert.equal(Number(paged.headers.get('x-pagination-items')), (paged.body as Listed[]).length);
      const acting = new Set(await accountsActingFor(stack().db.sequelize, world.accounts[identity]));
      for (const event of listing.filter((e) => e.serial <= last)) {
        const what = `${identity}, event ${event.serial} (${event.type})`;
        listedTypes.get(identity)!.add(event.type);
        assert.ok(acting.has(event.account), `${what}: shown as ${event.account}'s`);
        const row = stored.get(event.serial)!;
        assert.deepEqual(
          Object.keys(event.payload).sort(),
          Object.keys(row.payload).sort(),
          `${what}: the payload holds what was written`,
        );
        const deletion = event.type.endsWith('.deleted');
        let resources = 0;
        for (const [property, value] of Object.entries(event.payload)) {
          const collection = RESOURCE_PROPERTIES[property];
          if (property === 'change_request') {
            // What the B side asks, as the circuit's sides read it while it is open.
            const path = `network-services/${String(event.payload.id)}/change-request`;
            const snapshot = log.at(path, event.serial, event.type !== 'network_service.change_requested');
            assert.ok(snapshot, `${what}: the scenario never read ${path}`);
            assert.deepEqual(value, snapshot.seen[identity], `${what}: the change request`);
            continue;
          }
          if (!collection) {
            assert.ok(!SENSITIVE.has(property), `${what}: ${property} is sensitive, yet shown as a fact`);
            continue;
          }
          for (const item of (Array.isArray(value) ? value : [value]) as Array<Record<string, unknown>>) {
            const path = `${collection}/${String(item.id)}`;
            const snapshot = log.at(path, event.serial, deletion);
            assert.ok(snapshot, `${what}: the scenario never read ${path}`);
            const seen = snapshot.seen[identity];
            assert.ok(seen, `${what}: ${path} read 404, yet its event is listed`);
            assertShownAsRead(item, seen, `${what}, ${path}`);
            resources += 1;
          }
        }
        if (resources) continue;
        // Facts alone: the event is about the resource its id names, which the reader read.
        const path = `${COLLECTION_OF_KIND[event.type.split('.')[0]]}/${String(event.payload.id)}`;
        const snapshots = log.of(path);
        assert.ok(snapshots.length, `${what}: the scenario never read ${path}`);
        assert.ok(
          snapshots.some((snapshot) => snapshot.seen[identity] !== null),
          `${what}: ${path} always read 404, yet its event is listed`,
        );
      }
    });

  it('lets some identity list every kind of event, but the deletion of an account nobody acts for any more', () => {
    // An account's events are recorded for it; once it is gone, nobody acts for it.
    const expected = WRITTEN_EVENT_TYPES.filter((type) => type !== 'account.deleted');
    const listed = new Set([...listedTypes.values()].flatMap((types) => [...types]));
    assert.deepEqual([...listed].sort(), [...expected].sort());
    // The B side of the circuit reads its story, in the circuit's reduced form.
    for (const type of [
      'network_service.created',
      'network_service.changed',
      'network_service.change_requested',
    ])
      assert.ok(listedTypes.get('unrelated')!.has(type), `the B side lists no ${type}`);
  });
});
