import assert from 'node:assert/strict';
import { compose, composeOverride, read, serviceNamed, specProblems } from '../support/compose';

const OVERRIDE = 'docker-compose.galera.yml';
const SETTINGS = 'deploy/galera/galera.cnf';
const MOUNTED = `./${SETTINGS}:/etc/mysql/conf.d/galera.cnf:ro`;

/** docker-compose.galera.yml: the IX-API data on a Galera cluster, as an override of docker-compose.yml. */
describe('deployment: docker-compose.galera.yml', () => {
  const file = composeOverride(OVERRIDE);
  const settings = read(SETTINGS);
  const setting = (name: string) => new RegExp(`^${name}=(.*)$`, 'm').exec(settings)?.[1];

  it('is a valid Compose file according to the compose-spec JSON schema', () => {
    const problems = specProblems(file);
    assert.deepEqual(problems, [], `${OVERRIDE} does not match the compose spec:\n${problems.join('\n')}`);
  });

  it('makes the db service of docker-compose.yml the first of the nodes its cluster address names', () => {
    const base = compose();
    const nodes = (setting('wsrep_cluster_address') ?? '').replace(/^gcomm:\/\//, '').split(',');
    assert.deepEqual(Object.keys(file.services).sort(), [...nodes].sort());
    assert.equal(nodes[0], 'db');
    for (const name of nodes) {
      const node = serviceNamed(file, name);
      // One image for all, the one docker-compose.yml runs.
      assert.equal(node.image, serviceNamed(base, 'db').image, name);
      assert.ok(JSON.stringify(node.command).includes(`--wsrep-node-name=${name}`), name);
      // The shared settings, and a data volume each: db keeps docker-compose.yml's.
      assert.ok(node.volumes?.includes(MOUNTED), name);
      if (name !== 'db') assert.ok(node.volumes?.includes(`ixapi-${name}:/var/lib/mysql`), name);
    }
  });

  it('sets what the service needs of a Galera cluster', () => {
    assert.equal(setting('wsrep_on'), 'ON');
    assert.equal(setting('binlog_format'), 'ROW');
    assert.equal(setting('innodb_autoinc_lock_mode'), '2');
    assert.equal(setting('log_bin_trust_function_creators'), '1');
    assert.equal(setting('wsrep_sst_method'), 'mariabackup');
    assert.equal(setting('wsrep_sync_wait'), '1');
  });
});
