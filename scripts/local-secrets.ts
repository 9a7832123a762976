import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const PROJECT_ROOT = path.resolve(__dirname, '..');
export const DATA_DIR = path.join(PROJECT_ROOT, '.data');

/**
 * Keys for local development: generated once into .data/local-secrets.json (git-ignored, mode 0600)
 * so tokens and demo credentials survive a restart. Values already in the environment win.
 */
export function ensureLocalSecrets(env: NodeJS.ProcessEnv): void {
  const file = path.join(DATA_DIR, 'local-secrets.json');
  let stored: Record<string, string> = {};
  if (existsSync(file)) stored = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  let changed = false;
  for (const name of ['TOKEN_SIGNING_KEY', 'API_SECRET_HASH_KEY']) {
    if (env[name] || env[`${name}_FILE`]) continue;
    if (!stored[name]) {
      stored[name] = randomBytes(48).toString('base64');
      changed = true;
    }
    env[name] = stored[name];
  }
  if (changed) {
    mkdirSync(DATA_DIR, { recursive: true });
    writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  }
}
