import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { DOCS_DIR, SPEC_PATH } from '../spec';
import { buildDocs, docsAreStale } from './build-docs';

const ROOT = path.resolve(__dirname, '..');
const DIST = path.join(ROOT, 'dist');

/**
 * `npm run build`: compiles the production code into dist/ (api/main.ts -> dist/api/main.js) and
 * puts beside it what it reads at run time: the OpenAPI document and its rendered docs. dist/ is
 * then complete: `node dist/api/main.js`, `node dist/worker/main.js`, `node dist/scripts/migrate.js`.
 */
function build(): void {
  rmSync(DIST, { recursive: true, force: true });
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (docsAreStale()) buildDocs();
  const spec = path.join(DIST, 'spec');
  mkdirSync(spec, { recursive: true });
  cpSync(SPEC_PATH, path.join(spec, path.basename(SPEC_PATH)));
  cpSync(DOCS_DIR, path.join(spec, path.basename(DOCS_DIR)), { recursive: true });
}

try {
  build();
  process.stdout.write(`built ${path.relative(process.cwd(), DIST) || '.'}/\n`);
} catch (error) {
  // tsc has printed its diagnostics already.
  process.stderr.write(
    `build failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}\n`,
  );
  process.exit(2);
}
