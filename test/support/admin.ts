import { execFile } from 'node:child_process';
import path from 'node:path';
import { stack } from './stack';

const ROOT = path.resolve(__dirname, '../..');

/** What a run of the admin CLI printed, and how it exited. */
export interface AdminRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `npm run admin -- <args>` against the test stack's database and Temporal namespace. */
export function runAdmin(args: readonly string[]): Promise<AdminRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(ROOT, 'scripts/admin.ts'), ...args],
      { cwd: ROOT, env: { ...process.env, ...stack().env }, timeout: 50_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
