import { DriverError } from '../contract';
import { ProgramError } from './program';

/** A program's failure as the contract's error: unreachable, timed out or refused by OVS. */
export function failureOf(device: string, error: unknown, refusal: 'rejected' | 'unreachable'): DriverError {
  if (error instanceof DriverError) return error;
  if (error instanceof ProgramError) {
    if (error.timedOut) return new DriverError('timeout', `${device}: ${error.program} timed out`);
    if (error.missing) return new DriverError('unreachable', `${device}: ${error.program} is not installed`);
    if (
      /connection refused|No such file or directory|failed to connect|database connection failed/i.test(
        error.message,
      )
    )
      return new DriverError('unreachable', `${device}: ${error.message.trim()}`);
    return new DriverError(refusal, `${device}: ${error.message.trim()}`);
  }
  return new DriverError(refusal, `${device}: ${error instanceof Error ? error.message : String(error)}`);
}
