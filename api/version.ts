import { readFileSync } from 'node:fs';
import path from 'node:path';

function readVersion(): string {
  for (const candidate of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(__dirname, candidate), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'ixapi-provisioning' && pkg.version) return pkg.version;
    } catch {
      // try the next location (source tree vs. dist/)
    }
  }
  return '0.0.0';
}

/** The version of this implementation, reported as `service_version` and health `releaseId`. */
export const SERVICE_VERSION = readVersion();
