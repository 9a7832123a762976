import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: a package, a file of this project, or what V8 calls it. */
function placeOf(frame: ProfileNode['callFrame'], root: string): string {
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(frame.url);
  if (inPackage) return inPackage[1];
  if (frame.url.startsWith('node:')) return frame.url;
  if (frame.url) return frame.url.replace(/^file:\/\//, '').replace(`${root}/`, '');
  return frame.functionName || '(native)';
}

/**
 * The share of the busy samples (idle left out) of a V8 CPU profile (`node --cpu-prof`) spent in each
 * package or file's own code, largest first: where a process's time goes.
 */
export function selfTimeByPlace(
  file: string,
  root: string,
  top = 15,
): Array<{ place: string; share: number }> {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const place = new Map(profile.nodes.map((node) => [node.id, placeOf(node.callFrame, root)]));
  const time = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const where = place.get(id) ?? '(unknown)';
    if (where === '(idle)') return;
    total += delta;
    time.set(where, (time.get(where) ?? 0) + delta);
  });
  return [...time]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([where, spent]) => ({ place: where, share: total ? spent / total : 0 }));
}
