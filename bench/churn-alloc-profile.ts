// Where the churn turn's allocations come from: V8's sampling heap profiler over Switchboard's churn turns,
// counting garbage as well as what stays (the inspector's includeObjectsCollectedBy* options), summed by
// allocating function. Compiled and run in a child (`pnpm tsx bench/churn-alloc-profile.ts [turns] [top]`).
import { Session } from 'node:inspector/promises';
import { churnApp, churnMessage, churnSession } from './churn-workload.js';
import { runChild } from './run-child.js';

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

/** Bytes allocated per turn by each function (self), largest first. */
async function profileTurns(turns: number): Promise<Array<[string, number]>> {
  const app = churnApp();
  const turn = async (index: number, prefix: string) => {
    await app.chat({ sessionId: churnSession(prefix, index), message: churnMessage(index) });
  };
  for (let index = 0; index < 6_000; index++) await turn(index, 'warm');
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 256,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  for (let index = 0; index < turns; index++) await turn(index, 'profile');
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as {
    profile: { head: SamplingNode };
  };
  session.disconnect();
  await app.close();
  const bySite = new Map<string, number>();
  const walk = (node: SamplingNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const name = `${functionName || '(anonymous)'} ${url.replace(/^.*\//, '')}:${lineNumber + 1}`;
    bySite.set(name, (bySite.get(name) ?? 0) + node.selfSize / turns);
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  return [...bySite].sort((a, b) => b[1] - a[1]);
}

if (process.send) {
  const sites = await profileTurns(Number(process.env.BENCH_ALLOC_TURNS ?? 9_000));
  process.send({ sites });
} else {
  const [turns = '9000', top = '30'] = process.argv.slice(2);
  const sites = await runChild<Array<[string, number]>>('churn-alloc-profile.ts', 'sites', {
    env: { BENCH_ALLOC_TURNS: turns },
  });
  const total = sites.reduce((sum, [, bytes]) => sum + bytes, 0);
  console.log(`${total.toFixed(0)} B sampled per turn over ${turns} turns\n`);
  for (const [name, bytes] of sites.slice(0, Number(top)))
    console.log(`${bytes.toFixed(0).padStart(7)} B/turn  ${name}`);
}
