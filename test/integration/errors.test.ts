import assert from 'node:assert/strict';
import { request } from '../support/http';
import { stack } from '../support/stack';

const problemType = (name: string) => `https://errors.ix-api.net/v2/${name}.html`;

describe('problem responses', () => {
  it('answers an unknown path with a JSON 404 not-found problem', async () => {
    for (const path of ['/no-such-collection', '/../../etc/passwd']) {
      const response = await request('GET', path);
      assert.equal(response.status, 404);
      assert.equal(response.body.type, problemType('not-found'));
    }
    const outside = await fetch(stack().baseUrl.replace('/api/v2', '/elsewhere'));
    assert.equal(outside.status, 404);
    assert.equal(((await outside.json()) as { type: string }).type, problemType('not-found'));
  });

  it('answers a wrong method with 405 and the allowed methods', async () => {
    const response = await request('DELETE', '/auth/token');
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'POST');
  });

  it('answers malformed JSON with a 400 validation problem', async () => {
    const response = await request('POST', '/auth/token', {
      rawBody: '{"api_key": ',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.status, 400);
    assert.equal(response.body.type, problemType('validation-error'));
    assert.equal(response.body.properties[0].name, 'body');
  });

  it('answers a body that is not JSON with 415', async () => {
    const response = await request('POST', '/auth/token', {
      rawBody: 'api_key=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(response.status, 415);
  });

  it('answers an oversized body with 413', async () => {
    const response = await request('POST', '/auth/token', {
      rawBody: JSON.stringify({ api_key: 'x'.repeat(2 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.status, 413);
  });

  it('accepts JSON null as a body and validates it as a missing body', async () => {
    const response = await request('POST', '/auth/token', {
      rawBody: 'null',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.status, 400);
    assert.equal(response.body.properties[0].name, 'body');
  });

  it('validates the type of every property', async () => {
    const response = await request('POST', '/auth/token', {
      body: { api_key: 1234567890123456, api_secret: ['x'] },
    });
    assert.equal(response.status, 400);
    assert.deepEqual(response.body.properties.map((p: { name: string }) => p.name).sort(), [
      'api_key',
      'api_secret',
    ]);
  });

  it('returns a request id, echoing a sane incoming one', async () => {
    const generated = await request('GET', '/health');
    assert.match(generated.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const echoed = await request('GET', '/health', { headers: { 'x-request-id': 'trace-123' } });
    assert.equal(echoed.headers.get('x-request-id'), 'trace-123');
    const replaced = await request('GET', '/health', { headers: { 'x-request-id': 'bad id\twith junk' } });
    assert.notEqual(replaced.headers.get('x-request-id'), 'bad id\twith junk');
  });
});
