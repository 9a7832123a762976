import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The name the suite's package.json (conformance/package.json) gives it. */
const PACKAGE_NAME = 'ixapi-conformance';

/** How far above this module its package.json may be: conformance/, or dist/conformance/ in the package. */
const LEVELS_UP = 2;

let found: { name: string; version: string } | undefined;

/**
 * The suite's name and version, which every report prints: those of its package.json, the first one
 * named `ixapi-conformance` from this module's folder upwards. Run from source, that is the file
 * beside this module; compiled, this module is in dist/conformance/ of the package, two folders below it.
 */
export function toolIdentity(): { name: string; version: string } {
  if (found) return { ...found };
  for (let folder = __dirname, level = 0; level <= LEVELS_UP; folder = path.dirname(folder), level += 1) {
    let manifest: { name?: unknown; version?: unknown };
    try {
      manifest = JSON.parse(readFileSync(path.join(folder, 'package.json'), 'utf8')) as typeof manifest;
    } catch {
      continue;
    }
    if (manifest.name === PACKAGE_NAME && typeof manifest.version === 'string') {
      found = { name: PACKAGE_NAME, version: manifest.version };
      return { ...found };
    }
  }
  throw new Error(`no package.json of ${PACKAGE_NAME} in or up to ${LEVELS_UP} folders above ${__dirname}`);
}
