import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { orderAndTakeDown, startBuiltPair } from '../support/processes';
import { eventually } from '../support/wait';

/** A span as an OTLP/HTTP JSON export carries it, with the service that sent it. */
interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpExport {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        attributes?: OtlpAttribute[];
      }>;
    }>;
  }>;
}

const valueOf = (value: OtlpValue): unknown =>
  value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;
const attributesOf = (attributes: OtlpAttribute[] = []) =>
  Object.fromEntries(attributes.map(({ key, value }) => [key, valueOf(value)]));

/** A collector of its own: takes OTLP/HTTP JSON trace exports, as an OpenTelemetry collector would. */
async function startCollector() {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpExport;
        for (const resourceSpans of body.resourceSpans ?? []) {
          const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
          for (const scope of resourceSpans.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({
                service,
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                attributes: attributesOf(span.attributes),
              });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    spans,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The spans of one trace as an indented tree, children in the order they were received. */
function treeOf(spans: ReceivedSpan[], root: ReceivedSpan): string {
  const lines: string[] = [];
  const walk = (span: ReceivedSpan, depth: number) => {
    lines.push(`${'  '.repeat(depth)}${span.name}  [${span.service}]`);
    for (const child of spans.filter((s) => s.parentSpanId === span.spanId)) walk(child, depth + 1);
  };
  walk(root, 0);
  return lines.join('\n');
}

/**
 * The compiled API and worker with tracing on, exporting to a collector of the test's own: an
 * order's trace runs from the HTTP request through its SQL, the outbox delivery, the workflow and
 * each activity down to the device-driver calls, each span the child of the one that caused it.
 */
describe('traces', function () {
  this.timeout(120_000);

  it('follow an order from POST /connections through the outbox and the workflow down to the device', async () => {
    const collector = await startCollector();
    const { worker, api, baseUrl } = await startBuiltPair({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_BSP_SCHEDULE_DELAY: '200',
      // Limits that count (and are not reached), so that the trace shows a request's count.
      RATE_LIMIT_PER_ACCOUNT: '1000000/1s',
      RATE_LIMIT_PER_ADDRESS: '1000000/1s',
    });
    try {
      // The workflow's own span ends with the workflow: the connection is taken down again.
      await orderAndTakeDown(baseUrl, 'cage 4, panel 1, port 8');

      const spans = collector.spans;
      const order = await eventually('the order’s request span', () =>
        Promise.resolve(
          spans.find(
            (span) =>
              span.service === 'ixapi-api' && span.attributes['ixapi.operation_id'] === 'connections_create',
          ),
        ),
      );
      assert.equal(order.name, 'POST /connections');
      assert.equal(order.parentSpanId, '', 'the request starts the trace');
      const inTrace = () => spans.filter((span) => span.traceId === order.traceId);
      const parentOf = (span: ReceivedSpan) => inTrace().find((s) => s.spanId === span.parentSpanId);
      const ancestors = (span: ReceivedSpan) => {
        const chain: ReceivedSpan[] = [];
        for (let up = parentOf(span); up; up = parentOf(up)) chain.push(up);
        return chain;
      };
      // Wait until the workflow's spans (handed over by the sink) and the last driver call are in.
      await eventually('the workflow’s and the activities’ spans', () =>
        Promise.resolve(
          inTrace().some((s) => s.name === 'driver commit') &&
            inTrace().some((s) => s.name.startsWith('RunWorkflow:'))
            ? true
            : undefined,
        ),
      );
      process.stdout.write(`${treeOf(inTrace(), order).replace(/^/gm, '      ')}\n`);

      const named = (prefix: string) => {
        const found = inTrace().filter((span) => span.name.startsWith(prefix));
        assert.ok(found.length > 0, `no span ${prefix}… in the trace`);
        return found;
      };
      // The transaction's SQL runs within the request.
      assert.ok(
        inTrace().some(
          (span) =>
            span.service === 'ixapi-api' &&
            parentOf(span) === order &&
            span.attributes['db.system'] === 'mysql',
        ),
        'SQL statements are children of the request',
      );
      // Counting the request against its rate limit is in the trace, and no later request's count is.
      const counts = inTrace().filter((span) => {
        const statement = span.attributes['db.statement'];
        return (
          span.service === 'ixapi-api' &&
          typeof statement === 'string' &&
          statement.startsWith('INSERT INTO') &&
          statement.includes('rate_limits')
        );
      });
      assert.equal(counts.length, 1, 'one rate-limit count in the trace: the request’s own');
      const [delivery] = named('outbox deliver');
      assert.ok(ancestors(delivery).includes(order), 'the outbox delivery belongs to the request');
      const [start] = named('StartWorkflow:provisionConnection');
      assert.equal(parentOf(start), delivery, 'the workflow start is the delivery’s');
      const [run] = named('RunWorkflow:provisionConnection');
      assert.equal(run.service, 'ixapi-worker');
      assert.equal(parentOf(run), start, 'the workflow runs under its start');
      for (const activity of named('RunActivity:')) {
        assert.ok(ancestors(activity).includes(run), `${activity.name} runs under the workflow`);
        assert.ok(
          parentOf(activity)?.name.startsWith('StartActivity:'),
          `${activity.name} under its schedule`,
        );
      }
      for (const call of named('driver ')) {
        assert.equal(call.service, 'ixapi-worker');
        assert.ok(parentOf(call)?.name.startsWith('RunActivity:'), `${call.name} is an activity's`);
        assert.equal(call.attributes['ixapi.driver'], 'lab');
      }
      assert.ok(named('driver commit').some((call) => typeof call.attributes['ixapi.device'] === 'string'));
      // The health probes of orchestrators make no traces.
      const targets = spans.map((span) => span.attributes['http.target']);
      assert.ok(!targets.some((target) => typeof target === 'string' && target.includes('/health')));
      // Log lines written while a request was traced name its trace.
      assert.ok(
        api.lines.some((line) => line.includes(`"trace_id":"${order.traceId}"`)),
        'the request log line carries the trace id',
      );
    } finally {
      worker.child.kill('SIGTERM');
      api.child.kill('SIGTERM');
      await Promise.all([worker.exited, api.exited]);
      await collector.close();
    }
  });
});
