/**
 * Busy stretches of a V8 CPU profile: the longest runs of uninterrupted main-thread work, each
 * with the functions that took its time (self time, and the deepest frames of our own code and
 * of dependencies on the stack). Used by the event-loop suite and by bench/profile-stalls.ts.
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const IDLE = new Set(['(idle)', '(program)']);

function frameName(f: CallFrame): string {
  const file = f.url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '');
  // Paths from the repository's root (src/, bench/): a results file names no machine's paths.
  const root = /\/(src|bench|test)\//.exec(file);
  const short = root === null ? file : file.slice(file.lastIndexOf(root[0]) + 1);
  return `${f.functionName || '(anonymous)'} ${short}${f.url ? `:${f.lineNumber + 1}` : ''}`;
}

export interface Stretch {
  millis: number;
  /** Self time per function, descending. */
  self: [string, number][];
  /** Time per frame of src/ or node_modules/ on the stack (inclusive), descending. */
  inclusive: [string, number][];
}

export function busyStretches(profile: Profile, minMillis: number): Stretch[] {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const stretches: Stretch[] = [];
  let current:
    | { micros: number; self: Map<string, number>; inclusive: Map<string, number> }
    | undefined;
  const close = () => {
    if (current !== undefined && current.micros / 1000 >= minMillis) {
      const sort = (m: Map<string, number>) =>
        [...m].map(([k, us]): [string, number] => [k, us / 1000]).sort((a, b) => b[1] - a[1]);
      stretches.push({
        millis: current.micros / 1000,
        self: sort(current.self),
        inclusive: sort(current.inclusive),
      });
    }
    current = undefined;
  };
  profile.samples.forEach((id, i) => {
    // timeDeltas[i] is the time before sample i; charge the sample with the next delta.
    const micros = profile.timeDeltas[i + 1] ?? 0;
    const node = byId.get(id);
    if (node === undefined || IDLE.has(node.callFrame.functionName)) {
      close();
      return;
    }
    current ??= { micros: 0, self: new Map(), inclusive: new Map() };
    current.micros += micros;
    const self = frameName(node.callFrame);
    current.self.set(self, (current.self.get(self) ?? 0) + micros);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)?.callFrame;
      if (f === undefined || !/\/(src|node_modules)\//.test(f.url)) continue;
      const name = frameName(f);
      if (seen.has(name)) continue;
      seen.add(name);
      current.inclusive.set(name, (current.inclusive.get(name) ?? 0) + micros);
    }
  });
  close();
  return stretches.sort((a, b) => b.millis - a.millis);
}
