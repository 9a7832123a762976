import assert from 'node:assert/strict';
import { Kept, copyOf, versionedTablesOf } from '../../db/collection-versions';
import { VERSIONED_TABLES, versionTriggers } from '../../db/migrations/0022-collection-versions';

describe('the versions of the tables a list reads', () => {
  it('names every versioned table a query reads, in order, with those whose rows cascade into them', () => {
    assert.deepEqual(
      versionedTablesOf(
        `FROM macs t WHERE (t.managing_account IN (:p0)) AND (t.id IN (SELECT mac FROM network_service_config_macs WHERE network_service_config = :p1))`,
      ),
      ['macs', 'network_service_config_macs'],
    );
    assert.deepEqual(
      versionedTablesOf(
        'FROM role_assignments t WHERE t.contact IN (SELECT c.id FROM contacts c JOIN `accounts` a ON a.id = c.managing_account)',
      ),
      ['accounts', 'contacts', 'role_assignments'],
    );
    assert.deepEqual(versionedTablesOf('FROM contacts t'), ['accounts', 'contacts']);
  });

  it('answers nothing for a query that reads a table without a version, so that nothing of it is kept', () => {
    assert.equal(versionedTablesOf('FROM ports t WHERE EXISTS (SELECT 1 FROM api_keys k)'), undefined);
    assert.equal(versionedTablesOf('FROM events t'), undefined);
  });

  it('has a trigger for each change of each versioned table, moving the row of the writing connection', () => {
    const triggers = versionTriggers();
    assert.equal(triggers.length, VERSIONED_TABLES.length * 3);
    for (const table of VERSIONED_TABLES)
      for (const event of ['INSERT', 'UPDATE', 'DELETE'])
        assert.ok(
          triggers.some(
            (sql) =>
              sql.includes(`AFTER ${event} ON \`${table}\``) &&
              sql.includes(`table_name = '${table}'`) &&
              sql.includes('CONNECTION_ID()'),
          ),
          `${table} ${event}`,
        );
  });
});

describe('what a database kept', () => {
  it('hands out deep copies: rows, their JSON columns and dates, nothing shared with what is kept', () => {
    const kept = {
      items: [
        {
          id: 'port-1',
          speed: 10000,
          billing_account: null,
          role_assignments: ['ra-1'],
          status: [{ tag: 'up', attrs: { ports: ['et-0/0/1'] }, timestamp: new Date(1_795_000_000_000) }],
          document: Buffer.from('LOA'),
        },
      ],
      total: 1,
    };
    const copy = copyOf(kept);
    assert.deepStrictEqual(copy, kept);
    const [item] = copy.items;
    assert.ok(item.status[0].timestamp instanceof Date);
    assert.ok(Buffer.isBuffer(kept.items[0].document));
    // Whatever a caller changes in its copy, at any depth, leaves what is kept as it was.
    item.role_assignments.push('ra-2');
    item.status[0].attrs.ports.push('et-0/0/2');
    item.status[0].timestamp.setTime(0);
    item.document[0] = 0;
    copy.items.push({ ...item });
    assert.deepEqual(kept.items[0].role_assignments, ['ra-1']);
    assert.deepEqual(kept.items[0].status[0].attrs.ports, ['et-0/0/1']);
    assert.equal(kept.items[0].status[0].timestamp.getTime(), 1_795_000_000_000);
    assert.equal(kept.items[0].document.toString(), 'LOA');
    assert.equal(kept.items.length, 1);
  });

  it('forgets the entry least recently used beyond its limit', () => {
    const kept = new Kept<number>(3);
    for (const [key, value] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const)
      kept.set(key, value);
    assert.equal(kept.get('a'), 1);
    kept.set('d', 4);
    assert.equal(kept.size, 3);
    assert.equal(kept.get('b'), undefined);
    assert.deepEqual(
      ['a', 'c', 'd'].map((key) => kept.get(key)),
      [1, 3, 4],
    );
  });

  it('keys what a query computed by its collection, SQL and every bound value', () => {
    const key = Kept.keyOf('macs', 'FROM macs t WHERE t.external_ref = :p0', { p0: 'a' });
    assert.equal(key, Kept.keyOf('macs', 'FROM macs t WHERE t.external_ref = :p0', { p0: 'a' }));
    assert.notEqual(key, Kept.keyOf('macs', 'FROM macs t WHERE t.external_ref = :p0', { p0: 'b' }));
    assert.notEqual(key, Kept.keyOf('ports', 'FROM macs t WHERE t.external_ref = :p0', { p0: 'a' }));
    assert.notEqual(key, Kept.keyOf('macs', 'FROM macs t WHERE t.external_ref = :p0', { p0: 'a' }, 100));
  });
});
