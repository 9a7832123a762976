import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { collectionChecks } from '../../conformance/checks/collections';
import { Ledger } from '../../conformance/ledger';
import { formatSummary } from '../../conformance/reports/console';
import type { CheckDefinition } from '../../conformance/runner';
import { runCheck, runChecks } from '../../conformance/runner';
import { Suite } from '../../conformance/suite';
import { loadSpec } from '../../spec';

/**
 * What the full profile provisions for its checks is shared: the checks' own cleaning leaves it,
 * the end of the run gives it back. Checks that cannot judge say what they lacked, and the
 * summary groups them by it. A collection whose items share no filtered value is still judged on
 * filters combined with paging, through the id filter.
 */

const NETWORKS = ['fra', 'ams', 'ham'].map((city) => ({
  id: `man-${city}`,
  name: city.toUpperCase(),
  metro_area: `ma-${city}`,
  service_provider: `Provider ${city}`,
  pops: [],
}));

/** Serves three metro area networks; `ignoreId` makes it ignore the id filter. */
function fakeServer(ignoreId: () => boolean) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url ?? '/', 'http://fake.invalid');
    const route = url.pathname.replace(/^\/api\/v2/, '');
    if (req.method === 'POST' && route === '/auth/token')
      return send(201, { access_token: 'access', refresh_token: 'refresh' });
    if (route === '/implementation')
      return send(200, { schema_version: '2.6.0', supported_operations: ['metro_area_networks_list'] });
    if (route !== '/metro-area-networks')
      return send(404, { type: 'https://errors.ix-api.net/v2/not-found.html', status: 404 });
    const ids = url.searchParams.get('id');
    const items =
      ids === null || ignoreId() ? NETWORKS : NETWORKS.filter((item) => ids.split(',').includes(item.id));
    const asked = url.searchParams.get('page_limit');
    if (asked === null) return send(200, items);
    const limit = Number(asked);
    const offset = Number(url.searchParams.get('page_offset') ?? 0);
    const query = (at: number) => {
      const next = new URLSearchParams(url.searchParams);
      next.set('page_offset', String(at));
      return `${route}?${next.toString()}`;
    };
    return send(206, items.slice(offset, offset + limit), {
      'x-pagination-limit': String(limit),
      'x-pagination-offset': String(offset),
      'x-pagination-items': String(items.length),
      'x-pagination-pages': String(Math.max(1, Math.ceil(items.length / limit))),
      'x-pagination-page': String(Math.floor(offset / limit) + 1),
      'x-pagination-token': 'tok',
      'x-pagination-next': offset + limit < items.length ? query(offset + limit) : '',
    });
  };
}

describe('conformance: what the full profile provisions, and what checks lacked', () => {
  let server: Server;
  let ignoreId = false;
  let suite: () => Suite;
  let folder: string;

  before(async () => {
    folder = mkdtempSync(path.join(os.tmpdir(), 'conformance-ledger-'));
    server = http.createServer(fakeServer(() => ignoreId));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2`;
    suite = () =>
      new Suite({
        baseUrl,
        credentials: { primary: { api_key: 'k', api_secret: 's' } },
        profile: 'full',
        document: loadSpec(),
      });
  });

  after(async () => {
    rmSync(folder, { recursive: true, force: true });
    await new Promise((resolve) => server.close(resolve));
  });

  it('keeps what the checks share out of their cleaning, and in the ledger file for cleanup', () => {
    const file = path.join(folder, 'ledger.jsonl');
    const ledger = new Ledger(file);
    const own = ledger.intend({ destroy: 'macs_destroy', role: 'primary', marker: 'm1' });
    ledger.sharing = true;
    const shared = ledger.intend({ destroy: 'connections_destroy', role: 'primary', marker: 'm2' });
    ledger.sharing = false;
    ledger.created(shared, 'conn-1');
    const later = ledger.intend({ destroy: 'macs_destroy', role: 'primary', marker: 'm3' });
    assert.deepEqual(
      ledger.outstanding().map((entry) => entry.seq),
      [later, own],
    );
    assert.deepEqual(
      ledger.outstanding(true).map((entry) => entry.seq),
      [later, shared, own],
    );
    // A crashed run's ledger, read again, still knows what was shared (and its id).
    const again = new Ledger(file);
    assert.deepEqual(
      again.outstanding(true).map((entry) => [entry.seq, entry.shared ?? false, entry.id]),
      [
        [later, false, undefined],
        [shared, true, 'conn-1'],
        [own, false, undefined],
      ],
    );
    assert.match(readFileSync(file, 'utf8'), /"shared":true/);
  });

  it('groups the INCONCLUSIVE checks by what they lacked, the largest group first', async () => {
    const check = (id: string, lacking?: string): CheckDefinition => ({
      id,
      title: id,
      clause: 'a clause',
      operations: ['metro_area_networks_list'],
      safety: 'read',
      run: async (t) => {
        await Promise.resolve();
        t.inconclusive(`${id} could not judge`, lacking);
      },
    });
    const summary = await runChecks(
      suite(),
      [
        check('A-001', 'a connection of the primary account in production'),
        check('A-002', 'credentials of a secondary account'),
        check('A-003', 'a connection of the primary account in production'),
        check('A-004'),
      ],
      { profile: 'read' },
    );
    assert.deepEqual(summary.lacking, [
      { what: 'a connection of the primary account in production', checks: ['A-001', 'A-003'] },
      { what: 'A-004 could not judge', checks: ['A-004'] },
      { what: 'credentials of a secondary account', checks: ['A-002'] },
    ]);
    const printed = formatSummary(summary);
    assert.match(printed, /INCONCLUSIVE, by what the checks lacked/);
    assert.match(printed, /a connection of the primary account in production \(2\): A-001, A-003/);
    assert.match(printed, /--profile full orders what the checks need/);
  });

  it('combines the id filter with paging where no filtered value is shared, and fails a server ignoring it', async () => {
    const combine = collectionChecks(loadSpec()).find((c) => c.id === 'CMB-metro_area_networks_list')!;
    const judged = async () => {
      const checked = suite();
      await checked.discover();
      return runCheck(checked, combine, 'read');
    };
    ignoreId = false;
    const passed = await judged();
    assert.equal(passed.outcome, 'PASS', JSON.stringify(passed.findings));
    assert.ok(
      passed.evidence.some((exchange) => /id=man-fra,man-ams&page_limit=1/.test(exchange.request.url)),
    );
    ignoreId = true;
    const failed = await judged();
    assert.equal(failed.outcome, 'FAIL');
    assert.ok(failed.findings.some((finding) => /X-Pagination-Items 3; 2 items match/.test(finding.message)));
  });
});
