import { startGaleraStack, stopGaleraStack } from './stack';

/**
 * Once per run of the Galera tier: the cluster every file of it uses (test/galera/stack.ts), started
 * before the first file and stopped, leaving no process behind, after the last.
 */
export async function mochaGlobalSetup(): Promise<void> {
  await startGaleraStack();
}

export async function mochaGlobalTeardown(): Promise<void> {
  await stopGaleraStack();
}
