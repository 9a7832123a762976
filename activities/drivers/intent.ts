import { isDeepStrictEqual } from 'node:util';
import type { ConfigChange, DeviceIntent, InterfaceState, LagConfig } from './contract';
import { DriverError } from './contract';

/** The parts of a device an intent may touch, as they are now. */
export interface DeviceSnapshot {
  interfaces: ReadonlyMap<string, InterfaceState>;
  lags: ReadonlyMap<string, LagConfig>;
}

const LAG_NAME = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,79}$/;
const MAX_DESCRIPTION = 240;

const invalid = (message: string): never => {
  throw new DriverError('invalid-config', message);
};

/** A LAG in a form that compares equal whatever order its members were given in. */
const normalised = (lag: LagConfig): LagConfig => ({ ...lag, members: [...lag.members].sort() });

function checkLag(lag: LagConfig, snapshot: DeviceSnapshot): void {
  if (!LAG_NAME.test(lag.name)) invalid(`LAG name ${JSON.stringify(lag.name)} is not a valid name`);
  if (lag.description.length > MAX_DESCRIPTION)
    invalid(`LAG ${lag.name}: description longer than ${MAX_DESCRIPTION} characters`);
  if (lag.mode !== 'lacp' && lag.mode !== 'static')
    invalid(`LAG ${lag.name}: unknown mode ${String(lag.mode)}`);
  if (lag.mode === 'lacp' && lag.lacpTimeout !== 'fast' && lag.lacpTimeout !== 'slow')
    invalid(`LAG ${lag.name}: an LACP bundle needs lacpTimeout fast or slow`);
  if (lag.mode === 'static' && lag.lacpTimeout !== null)
    invalid(`LAG ${lag.name}: a static bundle takes no lacpTimeout`);
  if (!lag.members.length) invalid(`LAG ${lag.name} has no members`);
  if (new Set(lag.members).size !== lag.members.length) invalid(`LAG ${lag.name} names a member twice`);
  const speeds = new Set<number>();
  for (const member of lag.members) {
    const port = snapshot.interfaces.get(member);
    if (!port) return invalid(`LAG ${lag.name}: the device has no interface ${member}`);
    speeds.add(port.speed);
  }
  if (speeds.size > 1) invalid(`LAG ${lag.name}: members of different speeds (${[...speeds].join(', ')})`);
}

/**
 * Checks an intent against a device and works out what committing it changes: LAGs removed,
 * created or changed, and every interface whose settings or LAG membership move. Throws an
 * `invalid-config` DriverError for an intent the device cannot take.
 */
export function planChanges(snapshot: DeviceSnapshot, intent: DeviceIntent): ConfigChange[] {
  const intendedLags = intent.lags ?? [];
  const removed = new Set(intent.removeLags ?? []);
  for (const lag of intendedLags) {
    checkLag(lag, snapshot);
    if (removed.has(lag.name)) invalid(`LAG ${lag.name} is both intended and removed`);
  }
  if (new Set(intendedLags.map((lag) => lag.name)).size !== intendedLags.length)
    invalid('the intent names a LAG twice');

  // The LAGs as they will be, and which LAG each interface will belong to.
  const lagsAfter = new Map(snapshot.lags);
  for (const name of removed) lagsAfter.delete(name);
  for (const lag of intendedLags) lagsAfter.set(lag.name, normalised(lag));
  const memberOf = new Map<string, string>();
  for (const lag of lagsAfter.values()) {
    for (const member of lag.members) {
      const other = memberOf.get(member);
      if (other) invalid(`interface ${member} would belong to both ${other} and ${lag.name}`);
      memberOf.set(member, lag.name);
    }
  }

  const settings = new Map<string, InterfaceState>();
  for (const wanted of intent.interfaces ?? []) {
    const current = snapshot.interfaces.get(wanted.name);
    if (!current) return invalid(`the device has no interface ${wanted.name}`);
    if (settings.has(wanted.name)) invalid(`the intent names interface ${wanted.name} twice`);
    if (wanted.description.length > MAX_DESCRIPTION)
      invalid(`interface ${wanted.name}: description longer than ${MAX_DESCRIPTION} characters`);
    settings.set(wanted.name, { ...current, description: wanted.description, enabled: wanted.enabled });
  }

  const changes: ConfigChange[] = [];
  for (const name of [...removed].sort()) {
    const before = snapshot.lags.get(name);
    if (before) changes.push({ kind: 'lag', name, action: 'delete', before, after: null });
  }
  // Interfaces whose settings are named, or whose LAG membership may move.
  const touched = new Set(settings.keys());
  for (const name of [...removed, ...intendedLags.map((lag) => lag.name)]) {
    for (const member of snapshot.lags.get(name)?.members ?? []) touched.add(member);
    for (const member of lagsAfter.get(name)?.members ?? []) touched.add(member);
  }
  for (const name of [...touched].sort()) {
    const before = snapshot.interfaces.get(name)!;
    const after: InterfaceState = { ...(settings.get(name) ?? before), lag: memberOf.get(name) ?? null };
    if (!isDeepStrictEqual(before, after))
      changes.push({ kind: 'interface', name, action: 'update', before, after });
  }
  for (const lag of intendedLags) {
    const before = snapshot.lags.get(lag.name) ?? null;
    const after = normalised(lag);
    if (before === null) changes.push({ kind: 'lag', name: lag.name, action: 'create', before, after });
    else if (!isDeepStrictEqual(normalised(before), after))
      changes.push({ kind: 'lag', name: lag.name, action: 'update', before, after });
  }
  return changes;
}

/** The changes that undo `changes`, in the order to apply them. */
export function inverseOf(changes: readonly ConfigChange[]): ConfigChange[] {
  return [...changes].reverse().map((change) => ({
    ...change,
    action: change.action === 'create' ? 'delete' : change.action === 'delete' ? 'create' : 'update',
    before: change.after,
    after: change.before,
  }));
}

/** The snapshot after `changes`: what a device holds once it committed them. */
export function applyChanges(snapshot: DeviceSnapshot, changes: readonly ConfigChange[]): DeviceSnapshot {
  const interfaces = new Map(snapshot.interfaces);
  const lags = new Map(snapshot.lags);
  for (const change of changes) {
    if (change.kind === 'interface') interfaces.set(change.name, change.after as InterfaceState);
    else if (change.after === null) lags.delete(change.name);
    else lags.set(change.name, change.after as LagConfig);
  }
  return { interfaces, lags };
}
