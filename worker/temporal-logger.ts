import type { Logger as TemporalLogger, LogLevel, LogMetadata } from '@temporalio/common';
import type { Logger } from 'pino';

const PINO_LEVEL = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' } as const;

/**
 * The Temporal SDK's logger writing into pino: the SDK's own lines, and those of workflows and
 * activities (with their `workflowId`, `runId`, `workflowType`, `activityType`), become JSON lines of
 * the worker's log under `component: "temporal"`, filtered by LOG_LEVEL like every other. A failure
 * the SDK reports goes under `err`, with its message and stack.
 */
export function temporalLoggerFor(logger: Logger): TemporalLogger {
  const child = logger.child({ component: 'temporal' });
  const log = (level: LogLevel, message: string, meta?: LogMetadata) => {
    // The SDK names a failure `error`; pino serialises an Error (message, type, stack, cause) only
    // under `err`, and would write the other as {}.
    const { error, ...rest } = meta ?? {};
    child[PINO_LEVEL[level]](error === undefined ? rest : { ...rest, err: error }, message);
  };
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}
