import assert from 'node:assert/strict';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { ConsoleSpanExporter } from '@opentelemetry/sdk-trace-base';
import pino from 'pino';
import { exporterFromEnvironment } from '../../telemetry/tracing';
import { temporalLoggerFor } from '../../worker/temporal-logger';

describe('tracing settings', () => {
  it('is off unless an exporter or an OTLP endpoint is named', () => {
    assert.equal(exporterFromEnvironment({}), undefined);
    assert.equal(exporterFromEnvironment({ OTEL_TRACES_EXPORTER: 'none' }), undefined);
    assert.equal(
      exporterFromEnvironment({
        OTEL_TRACES_EXPORTER: 'none',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      }),
      undefined,
    );
  });

  it('sends OTLP where an endpoint is set or otlp is named, and prints spans for console', () => {
    assert.ok(
      exporterFromEnvironment({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }) instanceof
        OTLPTraceExporter,
    );
    assert.ok(
      exporterFromEnvironment({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces',
      }) instanceof OTLPTraceExporter,
    );
    assert.ok(exporterFromEnvironment({ OTEL_TRACES_EXPORTER: ' OTLP ' }) instanceof OTLPTraceExporter);
    assert.ok(exporterFromEnvironment({ OTEL_TRACES_EXPORTER: 'console' }) instanceof ConsoleSpanExporter);
  });

  it('turns off with OTEL_SDK_DISABLED whatever else is set', () => {
    assert.equal(
      exporterFromEnvironment({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }),
      undefined,
    );
  });

  it('refuses an exporter it does not ship, naming the variable', () => {
    assert.throws(
      () => exporterFromEnvironment({ OTEL_TRACES_EXPORTER: 'jaeger' }),
      /OTEL_TRACES_EXPORTER.*jaeger/,
    );
  });
});

describe('the Temporal logger', () => {
  it('writes workflow and activity lines into pino with their metadata, at their level', () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const temporal = temporalLoggerFor(logger);
    temporal.info('Workflow started', {
      workflowId: 'ixapi:connection:conn-1',
      workflowType: 'provisionConnection',
    });
    temporal.debug('below the level', { workflowId: 'ixapi:connection:conn-1' });
    temporal.log('WARN', 'Activity failed', { activityType: 'configureConnection' });
    assert.equal(lines.length, 2);
    assert.deepEqual(
      lines.map(({ level, msg, component, workflowId, activityType }) => ({
        level,
        msg,
        component,
        workflowId,
        activityType,
      })),
      [
        {
          level: 30,
          msg: 'Workflow started',
          component: 'temporal',
          workflowId: 'ixapi:connection:conn-1',
          activityType: undefined,
        },
        {
          level: 40,
          msg: 'Activity failed',
          component: 'temporal',
          workflowId: undefined,
          activityType: 'configureConnection',
        },
      ],
    );
  });

  it('writes a failure the SDK reports as an error with its message and stack, not as {}', () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    temporalLoggerFor(logger).warn('Activity failed', {
      activityType: 'configureConnection',
      error: new Error('device dev-fra1-edge did not answer'),
    });
    const [line] = lines;
    assert.equal(line.error, undefined);
    const err = line.err as { type: string; message: string; stack: string };
    assert.equal(err.type, 'Error');
    assert.equal(err.message, 'device dev-fra1-edge did not answer');
    assert.match(err.stack, /tracing\.test\.ts/);
    assert.equal(line.activityType, 'configureConnection');
  });
});
