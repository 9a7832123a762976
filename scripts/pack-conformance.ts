import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { SPEC_PATH } from '../spec';

const ROOT = path.resolve(__dirname, '..');
/** The package's folder: its package.json, README.md and CHECKS.md, and the sources. */
const PACKAGE = path.join(ROOT, 'conformance');
/** Where the package's JavaScript is compiled to (not in git). */
const DIST = path.join(PACKAGE, 'dist');
/** Where the tarball goes unless told (not in git). */
export const DEFAULT_PACK_FOLDER = path.join(ROOT, 'pack');
/**
 * The folders of the repository the compiled package may hold: the suite, and the spec module it
 * reads the OpenAPI document with. Anything else means the suite imports the server.
 */
const PACKAGED_FOLDERS = ['conformance', 'spec'];

export interface Tarball {
  /** Its absolute path. */
  file: string;
  /** Its size in bytes. */
  size: number;
  /** The files it holds, relative to the package's folder. */
  files: string[];
}

/**
 * `npm run conformance:pack [folder]`: builds the conformance suite as the npm package
 * `ixapi-conformance` without the server's code. tsc compiles what the CLI and the library import
 * (conformance/tsconfig.package.json) into conformance/dist/, keeping the repository's layout so
 * that `../spec` resolves; the OpenAPI document goes beside the compiled spec module, where it
 * reads it; `npm pack` then writes the tarball into `out`.
 */
export function packConformance(out = DEFAULT_PACK_FOLDER): Tarball {
  rmSync(DIST, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', path.join(PACKAGE, 'tsconfig.package.json')],
    { cwd: ROOT, stdio: 'inherit' },
  );
  const strays = readdirSync(DIST).filter((name) => !PACKAGED_FOLDERS.includes(name));
  if (strays.length) {
    throw new Error(`the package would hold ${strays.join(', ')}/ of the server: conformance imports it`);
  }
  cpSync(SPEC_PATH, path.join(DIST, 'spec', path.basename(SPEC_PATH)));
  mkdirSync(out, { recursive: true });
  const output = execFileSync('npm', ['pack', '--json', '--pack-destination', out], {
    cwd: PACKAGE,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [packed] = JSON.parse(output) as Array<{
    filename: string;
    size: number;
    files: Array<{ path: string }>;
  }>;
  return {
    file: path.join(out, packed.filename),
    size: packed.size,
    files: packed.files.map((entry) => entry.path).sort(),
  };
}

if (require.main === module) {
  const out = path.resolve(process.argv[2] ?? DEFAULT_PACK_FOLDER);
  try {
    const tarball = packConformance(out);
    process.stdout.write(
      `${path.relative(process.cwd(), tarball.file)}: ${(tarball.size / 1024).toFixed(1)} KiB ` +
        `(${tarball.size} bytes), ${tarball.files.length} files\n`,
    );
  } catch (error) {
    // tsc and npm print their diagnostics themselves; their errors say only that they failed.
    process.stderr.write(
      `pack failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}\n`,
    );
    process.exit(2);
  }
}
