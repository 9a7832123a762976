import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { request } from '../support/http';
import type { MatrixFixture, World } from '../support/matrix';
import { MATRIX_FIXTURES, createWorld } from '../support/matrix';
import { stack } from '../support/stack';

/**
 * Changes of resources whose schema depends on their `type` (services, their configs and sessions)
 * take the type from the stored resource when the body leaves it out. That must not make a body
 * that is no JSON object, or none at all, into an empty change: each is refused as the document's
 * required object body, and nothing is written.
 */

const FAMILIES = ['network-services', 'network-service-configs', 'network-feature-configs'];

/**
 * Bodies that are not a JSON object, as sent: none at all (without a media type; an empty body said
 * to be JSON reads as `{}`), JSON null, a string, a number, an array.
 */
const NOT_OBJECTS: Array<{ label: string; rawBody?: string }> = [
  { label: 'no body' },
  { label: 'null', rawBody: 'null' },
  { label: 'a string', rawBody: '"[]"' },
  { label: 'a number', rawBody: '42' },
  { label: 'an array', rawBody: '[]' },
];

const newestEvent = async () => {
  const [row] = await stack().db.sequelize.query<{ serial: number | null }>(
    'SELECT MAX(serial) AS serial FROM events',
    { type: QueryTypes.SELECT },
  );
  return Number(row.serial ?? 0);
};

/** Changes recorded for a resource since an event (its workflow moves it by itself meanwhile). */
const changesSince = async (serial: number, id: string) => {
  const rows = await stack().db.sequelize.query<{ type: string }>(
    `SELECT type FROM events WHERE serial > :serial AND type LIKE '%.changed' AND payload LIKE :id`,
    { replacements: { serial, id: `%"${id}"%` }, type: QueryTypes.SELECT },
  );
  return rows.map((row) => row.type);
};

const subjectFixture = (family: string): MatrixFixture => {
  const entry = MATRIX_FIXTURES[family];
  return (Array.isArray(entry) ? entry : [entry]).find((fixture) => fixture.kind === 'subject')!;
};

describe('changes of typed resources refuse bodies that are not JSON objects', function () {
  this.timeout(120_000);
  let world: World;

  before(async () => {
    world = await createWorld();
  });

  for (const family of FAMILIES) {
    it(`refuses PUT and PATCH of ${family} without a JSON object, changing nothing`, async () => {
      const subject = await subjectFixture(family).setup!(world);
      const before = await newestEvent();
      for (const method of ['PATCH', 'PUT']) {
        for (const { label, rawBody } of NOT_OBJECTS) {
          const response = await request(method, `/${family}/${subject.id}`, {
            token: world.tokens.owner,
            ...(rawBody === undefined ? {} : { rawBody, headers: { 'content-type': 'application/json' } }),
          });
          assert.equal(response.status, 400, `${method} with ${label}: ${response.text}`);
          assert.equal(response.body.properties[0].name, 'body', `${method} with ${label}`);
        }
      }
      assert.deepEqual(await changesSince(before, subject.id), [], 'no change was recorded');
    });
  }
});
