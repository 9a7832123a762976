import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { MySQL2Instrumentation } from '@opentelemetry/instrumentation-mysql2';
import { Resource } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { BatchSpanProcessor, ConsoleSpanExporter, NoopSpanProcessor } from '@opentelemetry/sdk-trace-base';

/** Paths whose requests make no span: probes every few seconds would drown the traces. */
const UNTRACED_PATHS = ['/api/v2/health', '/metrics'];

export interface Tracing {
  /** Whether spans leave the process (an exporter is configured). */
  enabled: boolean;
  /** Where finished spans go: the batch exporter, or nowhere when tracing is off. */
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Sends what is still buffered and stops; call it last on shutdown. */
  shutdown(): Promise<void>;
}

/**
 * The exporter the standard `OTEL_*` variables ask for, or none: tracing is off unless
 * `OTEL_TRACES_EXPORTER` is `otlp` or `console`, or an OTLP endpoint is set
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); `OTEL_SDK_DISABLED=true`
 * turns it off whatever else is set. OTLP goes over HTTP with JSON bodies; the exporter reads its
 * endpoint, headers and timeout from the same variables.
 */
export function exporterFromEnvironment(env: NodeJS.ProcessEnv = process.env): SpanExporter | undefined {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return undefined;
  const named = (env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase();
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (named === 'none') return undefined;
  if (named === 'console') return new ConsoleSpanExporter();
  if (named === 'otlp' || (named === '' && endpoint)) return new OTLPTraceExporter();
  if (named !== '') throw new Error(`OTEL_TRACES_EXPORTER: "${named}" is not one of otlp, console, none`);
  return undefined;
}

let started: Tracing | undefined;

/**
 * Starts OpenTelemetry tracing for this process, once, before the modules it instruments (http,
 * mysql2) are loaded: incoming and outgoing HTTP and every SQL statement become spans, and the
 * W3C trace context is read from and written to requests. With no exporter configured the same
 * calls cost next to nothing and nothing is sent. The service is named by `OTEL_SERVICE_NAME`, or
 * `serviceName`.
 */
export function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): Tracing {
  if (started) return started;
  const exporter = exporterFromEnvironment(env);
  const resource = new Resource({ 'service.name': env.OTEL_SERVICE_NAME || serviceName });
  if (!exporter) {
    started = {
      enabled: false,
      spanProcessor: new NoopSpanProcessor(),
      resource,
      shutdown: () => Promise.resolve(),
    };
    return started;
  }
  const spanProcessor = new BatchSpanProcessor(exporter);
  const sdk = new NodeSDK({
    resource,
    spanProcessors: [spanProcessor],
    // Prometheus serves the metrics (METRICS_PORT); logs go to standard output through pino.
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) =>
          UNTRACED_PATHS.some((path) => (request.url ?? '').split('?')[0] === path),
      }),
      new MySQL2Instrumentation(),
    ],
  });
  sdk.start();
  started = { enabled: true, spanProcessor, resource, shutdown: () => sdk.shutdown() };
  return started;
}

/** Starts tracing as `startTracing` does; a bad setting ends the process, naming it. */
export function startTracingOrExit(serviceName: string): Tracing {
  try {
    return startTracing(serviceName);
  } catch (error) {
    process.stderr.write(`configuration error: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}

/** The tracing started in this process (a disabled one if none was). */
export function currentTracing(): Tracing {
  return started ?? startTracing('ixapi-provisioning', { OTEL_SDK_DISABLED: 'true' });
}

/** The ids of the active span, for log lines (`trace_id`, `span_id`), or nothing outside a span. */
export function activeTraceIds(): { trace_id: string; span_id: string } | Record<string, never> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId, traceFlags } = span.spanContext();
  return traceFlags === undefined || !trace.isSpanContextValid(span.spanContext())
    ? {}
    : { trace_id: traceId, span_id: spanId };
}
