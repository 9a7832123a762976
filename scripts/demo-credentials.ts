import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DemoCredential } from '../db/seed/demo';
import { DATA_DIR } from './local-secrets';

export const DEMO_CREDENTIALS_FILE = path.join(DATA_DIR, 'demo-credentials.json');

export interface DemoCredentialsFile {
  baseUrl: string;
  accounts: DemoCredential[];
}

export function readDemoCredentials(file = DEMO_CREDENTIALS_FILE): DemoCredential[] {
  if (!existsSync(file)) return [];
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as DemoCredentialsFile).accounts ?? [];
  } catch {
    return [];
  }
}

export function writeDemoCredentials(contents: DemoCredentialsFile, file = DEMO_CREDENTIALS_FILE): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(contents, null, 2)}\n`, { mode: 0o600 });
}
