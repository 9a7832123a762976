import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RouteServerSettings } from '../../drivers/bird/config';
import { protocolName } from '../../drivers/bird/config';
import type { BgpSession } from '../../drivers/contract';
import { onPath, systemTool } from './system-tools';

/** A route server's settings and a member session, for the tests of its BIRD configuration. */
export const ROUTE_SERVER: RouteServerSettings = {
  name: 'nf-route-server-1',
  asn: 64500,
  routerId: '192.0.2.1',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
};

export const bgpSession = (over: Partial<BgpSession> = {}): BgpSession => ({
  name: 'nfc-7m2k9x4q1b8d3f6h',
  peerAsn: 64501,
  peerAddress: '192.0.2.11',
  passive: false,
  password: null,
  asSet: null,
  maxPrefix: null,
  insertIxpAsn: false,
  flags: [],
  ...over,
});

/** The lines (trimmed) of the block that opens with the line `opening`, to its closing brace. */
export function configBlock(config: string, opening: string): string[] {
  const lines = config.split('\n');
  const start = lines.indexOf(opening);
  assert.ok(start >= 0, `no ${opening} in\n${config}`);
  return lines.slice(start, lines.indexOf('}', start) + 1).map((line) => line.trim());
}

/** The lines of the `protocol bgp` block of session `name` (trimmed). */
export const protocolBlock = (config: string, name: string): string[] =>
  configBlock(config, `protocol bgp ${protocolName(name)} {`);

/**
 * A checker of configurations as BIRD reads them (`bird -p -c`), each written to a file in a
 * directory of its own, for `work`; `cannotRun` where BIRD is not installed.
 */
export function withBirdCheck(
  context: Mocha.Context,
  work: (check: (config: string) => { status: number | null; stderr: string }, dir: string) => void,
): void {
  const bird = systemTool(context, onPath('bird'), 'bird (Debian package bird2)');
  const dir = mkdtempSync(path.join(tmpdir(), 'bird-config-'));
  try {
    const file = path.join(dir, 'bird.conf');
    work((config) => {
      writeFileSync(file, config);
      return spawnSync(bird, ['-p', '-c', file], { encoding: 'utf8' });
    }, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
