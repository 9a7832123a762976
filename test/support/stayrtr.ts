import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runProgram } from '../../drivers/ovs/program';
import { endProcess, processRuns } from '../../drivers/processes';

/**
 * An RPKI validator cache for the tests: stayrtr (Debian package `stayrtr`) serving validated ROA
 * payloads from a JSON file over RTR (RFC 8210), in a network namespace of the test's choosing, so
 * that a BIRD in that namespace reaches it on the loopback.
 */

/** A validated ROA payload: `prefix` up to `maxLength` may be originated by `asn`. */
export interface Vrp {
  prefix: string;
  maxLength: number;
  asn: number;
}

export interface RtrCacheProcess {
  /** Where BIRD connects to it: an address of the namespace's loopback, and the port. */
  host: string;
  port: number;
  pid: number;
  /** Its log (stdout and stderr), for messages. */
  log: () => string;
  /** Ends it (SIGTERM, then SIGKILL) and waits until it is gone. */
  stop: () => Promise<void>;
}

/**
 * Starts stayrtr in `namespace` on 127.0.0.1:`port` serving `vrps` (the JSON file and its log in
 * `dir`), and waits until it listens. Its own checks of the file's age and its metrics listener are
 * off: the file is written once, and nothing scrapes it.
 */
export async function startStayrtr(
  dir: string,
  namespace: string,
  vrps: readonly Vrp[],
  port = 3323,
): Promise<RtrCacheProcess> {
  const cache = path.join(dir, 'vrps.json');
  const roas = vrps.map(({ prefix, maxLength, asn }) => ({ prefix, maxLength, asn: `AS${asn}` }));
  writeFileSync(cache, `${JSON.stringify({ roas }, null, 2)}\n`);
  const logFile = path.join(dir, 'stayrtr.log');
  const out = openSync(logFile, 'a');
  const host = '127.0.0.1';
  // `ip netns exec` execs the program: the child's pid is stayrtr's.
  const child = spawn(
    'ip',
    [
      ...['netns', 'exec', namespace, 'stayrtr'],
      ...['-cache', cache, '-bind', `${host}:${port}`, '-checktime=false', '-metrics.addr', ''],
    ],
    { stdio: ['ignore', out, out] },
  );
  closeSync(out);
  const pid = child.pid!;
  const log = () => readFileSync(logFile, 'utf8');
  const stop = async () => {
    await endProcess(pid, 5000, 'stayrtr');
    if (child.exitCode === null && child.signalCode === null)
      await new Promise((resolve) => child.once('exit', resolve));
  };
  for (const until = Date.now() + 10_000; ;) {
    const listening = await runProgram('ip', [
      ...['netns', 'exec', namespace, 'ss', '-Hltn', `sport = :${port}`],
    ]).then(
      ({ stdout }) => stdout.trim() !== '',
      () => false,
    );
    if (listening && processRuns(pid, 'stayrtr')) return { host, port, pid, log, stop };
    if (Date.now() > until || child.exitCode !== null) {
      await stop();
      throw new Error(`stayrtr did not listen on ${host}:${port} in ${namespace}:\n${log()}`);
    }
    await sleep(100);
  }
}
