import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { tracer } from '../telemetry/tracer';
import type { DeviceDriver, DriverErrorCode } from './contract';
import { DriverError } from './contract';

/** Every call of the driver contract, the operations a metered driver times. */
export const DRIVER_OPERATIONS = [
  'load',
  'diff',
  'commit',
  'rollback',
  'readInterfaces',
  'readLags',
  'readOptics',
  'readServices',
  'readBgpSessions',
  'readCounters',
] as const satisfies ReadonlyArray<keyof DeviceDriver>;

export type DriverOperation = (typeof DRIVER_OPERATIONS)[number];

/** No call of the contract is left out of DRIVER_OPERATIONS (a compile-time check). */
type UnmeteredCall = Exclude<
  {
    [K in keyof DeviceDriver]: DeviceDriver[K] extends (...args: never[]) => unknown ? K : never;
  }[keyof DeviceDriver],
  DriverOperation
>;
const everyCallMetered: [UnmeteredCall] extends [never] ? true : never = true;
void everyCallMetered;

/**
 * One driver call as it ended: the driver's kind, the operation, the device it was about (known for
 * every call but a commit of a candidate this driver did not load), its time, and its failure if any.
 */
export interface DriverCall {
  driver: string;
  operation: DriverOperation;
  device: string | undefined;
  seconds: number;
  /** The driver's error code, `other` for anything not a DriverError; undefined when it succeeded. */
  failure: DriverErrorCode | 'other' | undefined;
}

/**
 * The driver, each call of its contract a span (`driver <operation>`, a child of the activity's
 * when traced) and timed and reported to `observe` (the worker's metrics, when on); answers and
 * errors pass through unchanged, and a failing `observe` never fails a call.
 */
export function meterDriver(driver: DeviceDriver, observe?: (call: DriverCall) => void): DeviceDriver {
  const report = (call: DriverCall) => {
    try {
      observe?.(call);
    } catch {
      // Metrics never break device work.
    }
  };
  // A commit names its candidate, not its device: the device is the one the candidate was loaded for.
  const candidates = new Map<string, string>();
  const deviceOf = (operation: DriverOperation, args: unknown[]): string | undefined => {
    const [first] = args;
    if (operation === 'commit') return typeof first === 'string' ? candidates.get(first) : undefined;
    if (typeof first === 'string') return first;
    const device = (first as { device?: unknown } | undefined)?.device;
    return typeof device === 'string' ? device : undefined;
  };
  const rememberCandidate = (answer: unknown) => {
    const { id, device } = (answer ?? {}) as { id?: unknown; device?: unknown };
    if (typeof id !== 'string' || typeof device !== 'string') return;
    // Candidates never committed (a diff showed nothing to do) must not pile up.
    if (candidates.size >= 1000) candidates.delete(candidates.keys().next().value as string);
    candidates.set(id, device);
  };
  const metered = { kind: driver.kind, capabilities: driver.capabilities } as Record<string, unknown>;
  for (const operation of DRIVER_OPERATIONS) {
    metered[operation] = (...args: unknown[]) => {
      const device = deviceOf(operation, args);
      const attributes = {
        'ixapi.driver': driver.kind,
        ...(device !== undefined && { 'ixapi.device': device }),
      };
      return tracer.startActiveSpan(
        `driver ${operation}`,
        { kind: SpanKind.CLIENT, attributes },
        async (span) => {
          const start = process.hrtime.bigint();
          const seconds = () => Number(process.hrtime.bigint() - start) / 1e9;
          try {
            const answer: unknown = await (driver[operation] as (...a: unknown[]) => Promise<unknown>).apply(
              driver,
              args,
            );
            if (operation === 'load') rememberCandidate(answer);
            else if (operation === 'commit' && typeof args[0] === 'string') candidates.delete(args[0]);
            report({ driver: driver.kind, operation, device, seconds: seconds(), failure: undefined });
            return answer;
          } catch (error) {
            const failure = error instanceof DriverError ? error.code : 'other';
            report({ driver: driver.kind, operation, device, seconds: seconds(), failure });
            span.setStatus({
              code: SpanStatusCode.ERROR,
              message: `${failure}: ${String((error as Error)?.message ?? error)}`,
            });
            throw error;
          } finally {
            span.end();
          }
        },
      );
    };
  }
  return metered as unknown as DeviceDriver;
}
