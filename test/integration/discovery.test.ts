import assert from 'node:assert/strict';
import { specOperations } from '../../spec';
import { isUnroutedAnswer, login, request } from '../support/http';
import { stack } from '../support/stack';

describe('discovery', () => {
  it('reports health `pass` with version "2", the release and a check per dependency', async () => {
    const response = await request('GET', '/health');
    assert.equal(response.status, 200);
    assert.equal(response.body.status, 'pass');
    assert.equal(response.body.version, '2');
    assert.match(response.body.releaseId, /^\d+\.\d+\.\d+/);
    assert.deepEqual(Object.keys(response.body.checks).sort(), [
      'database:responseTime',
      'temporal:responseTime',
    ]);
    for (const [check] of Object.values<Array<Record<string, string>>>(response.body.checks)) {
      assert.equal(check.status, 'pass');
    }
  });

  it('declares schema 2.6.0 and exactly the operations that are routed', async () => {
    const { accessToken } = await login();
    const response = await request('GET', '/implementation', { token: accessToken });
    assert.equal(response.status, 200);
    assert.equal(response.body.schema_version, '2.6.0');
    const declared: string[] = response.body.supported_operations;
    assert.deepEqual([...declared].sort(), declared, 'operations are listed in a stable order');
    assert.ok(declared.includes('auth_token_create') && declared.includes('api_health_read'));
    // Every declared operation exists in the document and is routed by the server.
    const byId = new Map(specOperations().map((op) => [op.operationId, op]));
    for (const operationId of declared) {
      const op = byId.get(operationId);
      assert.ok(op, `${operationId} is declared but not in the OpenAPI document`);
      const answer = await request(op.method.toUpperCase(), op.path, {
        token: accessToken,
        body: op.method === 'get' ? undefined : {},
      });
      // A read of a placeholder id may be 404, but never the catch-all answer for unrouted paths.
      assert.ok(
        answer.status !== 501 && !isUnroutedAnswer(answer),
        `${operationId} answered ${answer.status}`,
      );
    }
  });

  it('does not declare operations that are not routed', async () => {
    const response = await request('GET', '/implementation');
    const declared = new Set<string>(response.body.supported_operations);
    for (const op of specOperations()) {
      if (declared.has(op.operationId)) continue;
      const path = op.path.replace(/\{[^}]+\}/g, 'x');
      const answer = await fetch(`${stack().baseUrl}${path}`, { method: op.method.toUpperCase() });
      assert.ok([404, 405].includes(answer.status), `${op.operationId} is routed but not declared`);
    }
  });

  it('serves the OpenAPI document and a docs page', async () => {
    const spec = await request('GET', '/spec');
    assert.equal(spec.status, 200);
    assert.match(spec.text, /^openapi: 3\./);
    const docs = await request('GET', '/docs');
    assert.equal(docs.status, 200);
    assert.match(docs.headers.get('content-type') ?? '', /text\/html/);
    assert.match(docs.text, /auth_token_create/);
    // Everything the page loads comes from this server.
    assert.doesNotMatch(docs.text, /<script[^>]+src="https?:/);
    const script = docs.text.match(/<script[^>]+src="([^"]+)"/)?.[1];
    assert.ok(script, 'the page loads its script from beside it');
    const bundle = await fetch(`${stack().baseUrl}/${script}`);
    assert.equal(bundle.status, 200);
  });
});
