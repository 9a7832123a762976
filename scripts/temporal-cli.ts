import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

function goBinDirectory(): string | undefined {
  try {
    const gobin = execFileSync('go', ['env', 'GOBIN'], { encoding: 'utf8' }).trim();
    if (gobin) return gobin;
    return path.join(execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8' }).trim(), 'bin');
  } catch {
    return undefined;
  }
}

/**
 * Path of the installed Temporal CLI: $TEMPORAL_CLI_PATH, else Go's bin folder, else PATH.
 * Throws with the install command when it cannot be found.
 */
export function findTemporalCli(): string {
  const candidates = [
    process.env.TEMPORAL_CLI_PATH,
    goBinDirectory() && path.join(goBinDirectory()!, 'temporal'),
  ];
  for (const candidate of candidates) if (candidate && existsSync(candidate)) return candidate;
  try {
    return execFileSync('sh', ['-c', 'command -v temporal'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('The Temporal CLI is not installed; run `npm run temporal:install` (needs Go).');
  }
}
