import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { ApiService } from '../../api/server';
import { DOCS_CONTENT_SECURITY_POLICY } from '../../api/app';
import { login, request } from '../support/http';
import { stack, startSecondApi } from '../support/stack';
import { eventually } from '../support/wait';

/** Whether `text` holds a whole HTTP response (headers, and a body as long as Content-Length says). */
function complete(text: string): boolean {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
  return Buffer.byteLength(text.slice(end + 4)) >= length;
}

/**
 * Talks raw TCP to the API: `write` sends what it likes; resolves with what came back once a whole
 * response arrived (unless `untilClosed`), the server closed the connection, or `waitMs` passed
 * (`closed` says which).
 */
function rawExchange(
  url: string,
  write: (send: (chunk: string) => void) => Promise<void> | void,
  { waitMs = 15_000, untilClosed = false }: { waitMs?: number; untilClosed?: boolean } = {},
): Promise<{ text: string; closed: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk) => {
      text += chunk.toString('utf8');
      // A whole response: wait a moment to learn whether the server closes the connection after it.
      if (complete(text) && !untilClosed) setTimeout(() => finish(false), 300);
    });
    socket.on('close', () => finish(true));
    socket.on('error', (error) => (done ? undefined : reject(error)));
    socket.on('connect', () => {
      void Promise.resolve(
        write((chunk) => {
          if (!socket.destroyed) socket.write(chunk);
        }),
      ).catch(reject);
    });
  });
}

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
const bodyOf = (text: string) =>
  JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('bounded requests', () => {
  it('reads no body before the caller is known: a body without a token is never parsed', async () => {
    // Malformed JSON would be a 400 from the parser; unauthenticated, it is a 401 and stays unread.
    const response = await request('POST', '/contacts', {
      rawBody: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.status, 401);
  });

  it('answers without waiting for a body the operation does not take or the caller may not send', async () => {
    const { baseUrl } = stack();
    const path = new URL(baseUrl).pathname;
    // Headers announcing 8 MiB that never come: an operation that reads no body answers at once.
    const cases = [
      { method: 'GET', target: `${path}/health`, type: 'application/json', status: 200 },
      { method: 'POST', target: `${path}/auth/token`, type: 'application/pdf', status: 415 },
      { method: 'POST', target: `${path}/connections/x/loa`, type: 'application/pdf', status: 401 },
    ];
    for (const { method, target, type, status } of cases) {
      const { text } = await rawExchange(baseUrl, (send) =>
        send(
          `${method} ${target} HTTP/1.1\r\nHost: test\r\nContent-Type: ${type}\r\nContent-Length: 8388608\r\n\r\n`,
        ),
      );
      assert.equal(statusOf(text), status, `${method} ${target}: ${text.slice(0, 200)}`);
    }
  });

  it('refuses a body for the auth operations beyond 16 KiB', async () => {
    const response = await request('POST', '/auth/token', {
      body: { api_key: 'k'.repeat(16), api_secret: 's'.repeat(86), padding: 'x'.repeat(20_000) },
    });
    assert.equal(response.status, 413);
  });

  it('answers headers beyond 64 KiB with a JSON problem', async () => {
    const { baseUrl } = stack();
    const { accessToken } = await login();
    const ids = Array.from({ length: 10_000 }, (_, i) => `fac-${i}`).join(',');
    const { text, closed } = await rawExchange(baseUrl, (send) =>
      send(
        `GET ${new URL(baseUrl).pathname}/facilities?id=${ids} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${accessToken}\r\n\r\n`,
      ),
    );
    assert.equal(statusOf(text), 431);
    assert.match(text, /Content-Type: application\/json/i);
    const problem = bodyOf(text);
    assert.equal(problem.status, 431);
    assert.equal(problem.type, 'https://errors.ix-api.net/v2/request-header-fields-too-large.html');
    assert.ok(closed);
  });

  it('counts every repetition of a parameter: 1001 ids are refused, not cut short to 1000', async () => {
    const { accessToken } = await login();
    const ids = (count: number) => Array.from({ length: count }, (_, i) => `id=fac-${i}`).join('&');
    const within = await request('GET', `/facilities?${ids(1000)}`, { token: accessToken });
    assert.equal(within.status, 200);
    const beyond = await request('GET', `/facilities?${ids(1001)}`, { token: accessToken });
    assert.equal(beyond.status, 400);
    assert.deepEqual(
      (beyond.body.properties as Array<{ name: string }>).map((p) => p.name),
      ['id'],
    );
  });

  it('answers what Express parses before any operation as problems the operations document', async () => {
    const { accessToken } = await login();
    // A path segment that is not percent-encoding names nothing.
    for (const path of ['/facilities/%zz', '/facilities/%', '/no-such/%C0%AE']) {
      const response = await request('GET', path, { token: accessToken });
      assert.equal(response.status, 404, path);
    }
    // A body that is not in the content coding it claims is the client's fault.
    const coded = await request('POST', '/auth/token', {
      headers: { 'content-encoding': 'gzip' },
      body: { api_key: 'k'.repeat(16), api_secret: 's'.repeat(86) },
    });
    assert.equal(coded.status, 400);
    assert.deepEqual(
      (coded.body.properties as Array<{ name: string }>).map((p) => p.name),
      ['body'],
    );
    // Answers carry no validators, so a conditional request is answered in full, never 304.
    const { text } = await rawExchange(stack().baseUrl, (send) =>
      send(
        `GET ${new URL(stack().baseUrl).pathname}/implementation HTTP/1.1\r\nHost: test\r\nIf-None-Match: *\r\n\r\n`,
      ),
    );
    assert.equal(statusOf(text), 200);
  });

  it('refuses a body nesting deeper than the document allows before any handler or key sees it', async () => {
    const { accessToken } = await login();
    const deep = `{"name": ${'['.repeat(5_000)}${']'.repeat(5_000)}}`;
    for (const [method, path] of [
      ['PATCH', '/contacts/con-spree-networks-legal'],
      ['PATCH', '/network-service-configs/nsc-unknown'],
    ]) {
      const response = await request(method, path, {
        token: accessToken,
        headers: { 'idempotency-key': `deep-${method}-${path}`, 'content-type': 'application/json' },
        rawBody: deep,
      });
      assert.equal(response.status, 400, `${method} ${path}: ${response.text.slice(0, 200)}`);
      assert.match(response.body.properties[0].reason, /nest/);
    }
  });

  it('answers a request that is not HTTP with a JSON problem naming what is wrong', async () => {
    const { text } = await rawExchange(stack().baseUrl, (send) => send('HELLO\r\n\r\n'));
    assert.equal(statusOf(text), 400);
    const problem = bodyOf(text);
    assert.equal(problem.type, 'https://errors.ix-api.net/v2/validation-error.html');
    assert.deepEqual(
      (problem.properties as Array<{ name: string }>).map((p) => p.name),
      ['request'],
    );
  });

  describe('a server with a short request time and few connections', function () {
    this.timeout(60_000);
    let api: ApiService;
    before(async () => {
      api = await startSecondApi({ REQUEST_TIMEOUT: '3s', MAX_CONNECTIONS: '3' });
    });
    after(() => api.stop(1_000));

    it('cuts off a client that trickles its headers, with 408 and a JSON problem', async () => {
      const { text, closed } = await rawExchange(api.url, async (send) => {
        send(`GET ${new URL(api.url).pathname}/health HTTP/1.1\r\nHost: test\r\n`);
        for (let i = 0; i < 40; i += 1) {
          await pause(500);
          send('X-Slow: 1\r\n');
        }
      });
      assert.ok(closed, 'the server kept the trickling connection open');
      if (text) {
        assert.equal(statusOf(text), 408);
        assert.equal(bodyOf(text).type, 'https://errors.ix-api.net/v2/request-timeout.html');
      }
    });

    it('cuts off a client that trickles its body', async () => {
      const { accessToken } = await login();
      const { text, closed } = await rawExchange(api.url, async (send) => {
        send(
          `POST ${new URL(api.url).pathname}/contacts HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${accessToken}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`,
        );
        for (let i = 0; i < 40; i += 1) {
          await pause(500);
          send(' ');
        }
      });
      assert.ok(closed, 'the server kept the trickling connection open');
      assert.ok([0, 408].includes(text ? statusOf(text) : 0), text.slice(0, 200));
    });

    it('holds no more connections than it may', async () => {
      const sockets = await Promise.all(
        [1, 2, 3, 4].map(
          () =>
            new Promise<{ closedEarly: Promise<boolean> }>((resolve) => {
              const { hostname, port } = new URL(api.url);
              const socket = connect(Number(port), hostname, () => {
                const closedEarly = new Promise<boolean>((settle) => {
                  socket.once('close', () => settle(true));
                  setTimeout(() => {
                    settle(false);
                    socket.destroy();
                  }, 1_500);
                });
                resolve({ closedEarly });
              });
              socket.on('error', () => undefined);
            }),
        ),
      );
      const closed = await Promise.all(sockets.map((s) => s.closedEarly));
      assert.equal(closed.filter(Boolean).length, 1, `closed early: ${JSON.stringify(closed)}`);
    });
  });
});

describe('slow clients', function () {
  this.timeout(60_000);
  const target = (api: ApiService, path: string) => `${new URL(api.url).pathname}${path}`;
  const get = (api: ApiService) => `GET ${target(api, '/implementation')} HTTP/1.1\r\nHost: test\r\n\r\n`;

  /**
   * `count` connections to `api` that stay open, sending nothing until `go` settles, then a GET each;
   * answers once all are connected, with what each came to.
   */
  async function heldConnections(api: ApiService, count: number, go: Promise<void>) {
    const connected: Array<Promise<void>> = [];
    const outcomes = Array.from({ length: count }, () => {
      let opened!: () => void;
      connected.push(new Promise<void>((resolve) => (opened = resolve)));
      return rawExchange(api.url, async (send) => {
        opened();
        await go;
        send(get(api));
      });
    });
    await Promise.all(connected);
    return outcomes;
  }

  describe('with short request times', () => {
    let api: ApiService;
    before(async () => {
      api = await startSecondApi({
        REQUEST_TIMEOUT: '2s',
        REQUEST_HEADERS_TIMEOUT: '1s',
        KEEP_ALIVE_TIMEOUT: '1s',
      });
    });
    after(() => api.stop(1_000));

    it('cuts off a client that trickles its body, answering 408 with a JSON problem and closing', async () => {
      const { accessToken } = await login();
      const { text, closed } = await rawExchange(api.url, async (send) => {
        send(
          `POST ${target(api, '/contacts')} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${accessToken}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`,
        );
        // Never the whole body: 40 more bytes of the 99 still due, one at a time.
        for (let i = 0; i < 40; i += 1) {
          await pause(250);
          send(' ');
        }
      });
      assert.ok(closed, 'the server kept the trickling connection open');
      assert.equal(statusOf(text), 408, text.slice(0, 200));
      assert.match(text, /Content-Type: application\/json/i);
      const problem = bodyOf(text);
      assert.equal(problem.status, 408);
      assert.equal(problem.type, 'https://errors.ix-api.net/v2/request-timeout.html');
    });

    it('closes a connection left idle after its answer', async () => {
      const { text, closed } = await rawExchange(api.url, (send) => send(get(api)), { untilClosed: true });
      assert.equal(statusOf(text), 200, text.slice(0, 200));
      assert.ok(closed, 'the server kept the idle connection open');
    });
  });

  describe('from one address', () => {
    let api: ApiService;
    let behindProxy: ApiService;
    before(async () => {
      const limits = {
        MAX_CONNECTIONS_PER_ADDRESS: '3',
        REQUEST_TIMEOUT: '30s',
        REQUEST_HEADERS_TIMEOUT: '30s',
      };
      api = await startSecondApi({ ...limits, TRUST_PROXY: '' });
      behindProxy = await startSecondApi({ ...limits, TRUST_PROXY: 'loopback' });
    });
    after(async () => {
      await api.stop(1_000);
      await behindProxy.stop(1_000);
    });

    it('refuses connections beyond the limit of an address at once, while those it holds still answer', async () => {
      let go!: () => void;
      const held = await heldConnections(api, 3, new Promise<void>((resolve) => (go = resolve)));
      // The fourth is answered without asking, and closed.
      const refused = await rawExchange(api.url, () => undefined);
      go();
      assert.ok(refused.closed, 'the connection beyond the limit was kept open');
      assert.equal(statusOf(refused.text), 429, refused.text.slice(0, 200));
      assert.match(refused.text, /Retry-After: 1/i);
      assert.equal(bodyOf(refused.text).type, 'https://errors.ix-api.net/v2/too-many-requests.html');
      for (const { text } of await Promise.all(held)) assert.equal(statusOf(text), 200, text.slice(0, 200));
      // Connections that closed make room for new ones.
      await eventually('a new connection to be taken', async () => {
        const { text } = await rawExchange(api.url, (send) => send(get(api)));
        return statusOf(text) === 200 ? true : undefined;
      });
    });

    it('does not count the connections of a peer TRUST_PROXY trusts, which carry many clients', async () => {
      let go!: () => void;
      const held = await heldConnections(behindProxy, 5, new Promise<void>((resolve) => (go = resolve)));
      go();
      for (const { text } of await Promise.all(held)) assert.equal(statusOf(text), 200, text.slice(0, 200));
    });
  });
});

describe('response headers', () => {
  it('keeps tokens and every authenticated answer out of caches', async () => {
    const { credential, accessToken } = await login();
    const token = await request('POST', '/auth/token', {
      body: { api_key: credential.apiKey, api_secret: credential.apiSecret },
    });
    assert.equal(token.headers.get('cache-control'), 'no-store');
    for (const path of ['/account', '/facilities', '/connections?page_limit=1', '/events?page_limit=1']) {
      const response = await request('GET', path, { token: accessToken });
      assert.ok(response.status < 300, `${path}: ${response.status}`);
      assert.equal(response.headers.get('cache-control'), 'no-store', path);
    }
    const refused = await request('GET', '/account');
    assert.equal(refused.headers.get('cache-control'), 'no-store');
  });

  it('sends nosniff with every answer, documents, problems and letters of authorisation alike', async () => {
    const { accessToken } = await login();
    const paths = ['/health', '/spec', '/docs', '/no/such/path', '/account'];
    for (const path of paths) {
      const response = await fetch(`${stack().baseUrl}${path}`, {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      await response.arrayBuffer();
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff', path);
    }
    const connections = await request('GET', '/connections', { token: accessToken });
    const withLoa = (connections.body as Array<{ id: string }>)[0];
    if (withLoa) {
      const loa = await fetch(`${stack().baseUrl}/connections/${withLoa.id}/loa`, {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      await loa.arrayBuffer();
      assert.equal(loa.status, 200);
      assert.equal(loa.headers.get('x-content-type-options'), 'nosniff');
    }
  });

  it('serves the docs page under a Content-Security-Policy that loads nothing from elsewhere', async () => {
    const response = await fetch(`${stack().baseUrl}/docs`);
    const html = await response.text();
    assert.equal(response.headers.get('content-security-policy'), DOCS_CONTENT_SECURITY_POLICY);
    assert.match(DOCS_CONTENT_SECURITY_POLICY, /script-src 'self'(;|$)/);
    // Every script the page runs comes from this server: there is no inline script to allow.
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/);
    for (const [, src] of html.matchAll(/<script[^>]+src="([^"]+)"/g)) {
      const script = await fetch(new URL(src, `${stack().baseUrl}/docs`));
      await script.arrayBuffer();
      assert.equal(script.status, 200, src);
    }
  });
});
