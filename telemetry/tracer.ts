import { trace } from '@opentelemetry/api';

/**
 * The tracer of the project's own spans (outbox deliveries, device-driver calls). It needs only the
 * OpenTelemetry API: spans go wherever the process's tracing (telemetry/tracing.ts) sends them, or
 * nowhere when it is off.
 */
export const tracer = trace.getTracer('ixapi-provisioning');
