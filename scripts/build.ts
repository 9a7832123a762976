import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflows, workflowBundleFile } from '../worker/create-worker';
import { DOCS_DIR, SPEC_PATH } from '../spec';
import { buildDocs, docsAreStale } from './build-docs';

const ROOT = path.resolve(__dirname, '..');

/**
 * `npm run build`: compiles the production code into dist/ (api/main.ts -> dist/api/main.js) and
 * puts beside it what it reads at run time: the OpenAPI document and its rendered docs. dist/ is
 * then complete: `node dist/api/main.js`, `node dist/worker/main.js`, `node dist/scripts/migrate.js`.
 * The workflows are bundled too (see `writeWorkflowBundle`). Without `check`, tsc emits without
 * checking types (`--noCheck`).
 */
export async function build(out = path.join(ROOT, 'dist'), { check = true } = {}): Promise<void> {
  rmSync(out, { recursive: true, force: true });
  const tsc = require.resolve('typescript/bin/tsc');
  const args = [tsc, '-p', 'tsconfig.build.json', '--outDir', out, ...(check ? [] : ['--noCheck'])];
  execFileSync(process.execPath, args, {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (docsAreStale()) buildDocs();
  const spec = path.join(out, 'spec');
  mkdirSync(spec, { recursive: true });
  cpSync(SPEC_PATH, path.join(spec, path.basename(SPEC_PATH)));
  cpSync(DOCS_DIR, path.join(spec, path.basename(DOCS_DIR)), { recursive: true });
  await writeWorkflowBundle(out);
}

/**
 * Bundles the compiled workflows once, at build time, where the worker looks for them
 * (`WORKFLOW_BUNDLES` in worker/create-worker.ts), with and without the tracing interceptors: a
 * worker then starts without running webpack, whether it exports traces or not.
 */
async function writeWorkflowBundle(out: string): Promise<void> {
  const workflows = path.join(out, 'workflows', 'index.js');
  for (const traced of [true, false]) {
    const { code } = await bundleWorkflows(workflows, { traced });
    writeFileSync(path.join(out, 'worker', workflowBundleFile(traced)), code);
  }
}

if (require.main === module) {
  // `--out <dir>` builds elsewhere (the rehearsal's second version); dist/ by default. `--no-check`
  // emits without checking types, for where `npm run typecheck` runs beside it (npm test).
  const at = process.argv.indexOf('--out');
  const out = path.resolve(at === -1 ? path.join(ROOT, 'dist') : process.argv[at + 1]);
  build(out, { check: !process.argv.includes('--no-check') }).then(
    () => process.stdout.write(`built ${path.relative(process.cwd(), out) || '.'}/\n`),
    (error: unknown) => {
      // tsc prints its diagnostics itself; its error says only that it failed.
      process.stderr.write(
        `build failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}\n`,
      );
      process.exit(2);
    },
  );
}
