import { Connection } from '@temporalio/client';
import { searchAttributeFlags } from '../domain/search-attributes';
import { findTemporalCli } from './temporal-cli';

/** The namespace the benchmarks' Temporal dev server holds and their processes use. */
export const BENCH_NAMESPACE = 'ixapi';

/** The command that runs a Temporal dev server for a benchmark on `port` (in memory, no UI). */
export function temporalDevServer(port: number): { command: string; args: string[] } {
  return {
    command: findTemporalCli(),
    args: [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--headless',
      '--namespace',
      BENCH_NAMESPACE,
      '--log-level',
      'error',
      ...searchAttributeFlags().flatMap((flag) => ['--search-attribute', flag]),
    ],
  };
}

/** Whether the dev server at `address` answers for the benchmarks' namespace yet. */
export async function temporalAnswers(address: string): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 1000 });
  try {
    await connection.workflowService.describeNamespace({ namespace: BENCH_NAMESPACE });
    return true;
  } finally {
    await connection.close();
  }
}
