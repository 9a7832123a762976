import type { CheckDefinition } from '../runner';

/** What a server says about itself, and whether what it says holds. */
export const DISCOVERY_CHECKS: CheckDefinition[] = [
  {
    id: 'DISC-001',
    title: 'GET /implementation describes the implementation',
    clause:
      'Implementation: the server names the schema version it implements and the operations it supports.',
    operations: ['api_implementation_read'],
    requires: [],
    safety: 'read',
    async run(t) {
      const response = await t.call('api_implementation_read', { role: null });
      t.must(response.status === 200, `GET /implementation answered ${response.status}, not 200`);
      const body = response.body as { schema_version?: unknown; supported_operations?: unknown } | undefined;
      t.must(typeof body?.schema_version === 'string', 'schema_version is missing');
      t.should(
        typeof body?.schema_version === 'string' && body.schema_version.startsWith('2.6'),
        `schema_version ${JSON.stringify(body?.schema_version)} is not 2.6.x; this suite checks IX-API 2.6`,
      );
      t.must(Array.isArray(body?.supported_operations), 'supported_operations is not a list');
    },
  },
  {
    id: 'DISC-002',
    title: 'Every declared operation is an IX-API operation',
    clause: 'Implementation: supported_operations names operations of the IX-API document by operationId.',
    operations: ['api_implementation_read'],
    requires: ['api_implementation_read'],
    safety: 'read',
    run(t) {
      const unknown = [...t.suite.declared].filter((id) => !t.suite.operations.has(id));
      t.must(unknown.length === 0, `declared operations that IX-API does not define: ${unknown.join(', ')}`);
      return Promise.resolve();
    },
  },
  {
    id: 'DISC-003',
    title: 'GET /health reports the API major version',
    clause:
      'Health: the health resource answers with a status and version "2" so that clients pick the API major version.',
    operations: ['api_health_read'],
    requires: [],
    safety: 'read',
    async run(t) {
      const response = await t.call('api_health_read', { role: null });
      const body = response.body as { status?: unknown; version?: unknown } | undefined;
      t.must([200, 503].includes(response.status), `GET /health answered ${response.status}`);
      t.must(
        ['pass', 'warn', 'fail'].includes(String(body?.status)),
        `status ${JSON.stringify(body?.status)}`,
      );
      t.should(
        body?.version === '2',
        `version ${JSON.stringify(body?.version)}: clients read the API major version here`,
      );
    },
  },
  {
    id: 'DISC-004',
    title: 'Every declared operation is routed',
    clause:
      'Implementation: an operation listed in supported_operations is implemented (it does not answer 404 or 501 as a route).',
    operations: ['api_implementation_read'],
    requires: ['api_implementation_read'],
    safety: 'read',
    async run(t) {
      const token = await t.token();
      for (const id of t.suite.declared) {
        const op = t.suite.operations.get(id);
        if (!op || op.method !== 'GET' || op.path.includes('{')) continue;
        const response = await t.send({ method: 'GET', path: op.path, token });
        t.must(
          ![404, 501].includes(response.status),
          `${id} (GET ${op.path}) is declared but answered ${response.status}`,
        );
      }
    },
  },
];
