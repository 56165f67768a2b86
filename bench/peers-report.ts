// The peers variant of `pnpm bench`: bench/peers (its own npm install, outside the workspace) run in process
// only, for the two framework-with-memory subjects and Switchboard, and their CPU per turn over Switchboard's
// recorded against the targets. `pnpm bench:peers` runs the full comparison (more subjects, HTTP too).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { recordTarget } from './summary.js';

interface PeerRow {
  key: string;
  label: string;
  local: { cpuMicrosPerTurn: number; wrongReplies: number };
}

/** The peers' versions, read from their installed package.json files. */
function versionOf(name: string): string {
  const file = fileURLToPath(new URL(`peers/node_modules/${name}/package.json`, import.meta.url));
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

const TARGETS = [
  {
    key: 'mastra-memory',
    label: 'Mastra + Memory',
    bound: 300,
    packages: ['@mastra/core', '@mastra/memory'],
  },
  {
    key: 'langgraph-saver',
    label: 'LangGraph.js + MemorySaver',
    bound: 100,
    packages: ['@langchain/langgraph'],
  },
];

/** Runs bench/peers in process and records each peer's CPU per turn over Switchboard's. */
export async function runPeers(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-peers-'));
  const json = join(dir, 'rows.json');
  try {
    console.log('\nPeers, in process (bench/peers; `pnpm bench:peers` for the full table, HTTP included)\n');
    await promisify(execFile)('bash', [fileURLToPath(new URL('peers/run.sh', import.meta.url))], {
      env: {
        ...process.env,
        BENCH_PEERS_HTTP: '0',
        BENCH_PEERS_ONLY: ['switchboard', ...TARGETS.map((target) => target.key)].join(','),
        BENCH_PEERS_JSON: json,
      },
      maxBuffer: 16 * 1024 * 1024,
    });
    const rows = JSON.parse(readFileSync(json, 'utf8')) as PeerRow[];
    const switchboard = rows.find((row) => row.key === 'switchboard');
    for (const row of rows)
      console.log(`${row.label.padEnd(32)} ${row.local.cpuMicrosPerTurn.toFixed(1).padStart(9)} µs/turn`);
    for (const target of TARGETS) {
      const row = rows.find((each) => each.key === target.key);
      const versions = target.packages.map((name) => `${name} ${versionOf(name)}`).join(', ');
      recordTarget({
        label: `${target.label} ÷ Switchboard, CPU per turn`,
        value:
          row && switchboard ? row.local.cpuMicrosPerTurn / switchboard.local.cpuMicrosPerTurn : undefined,
        bound: target.bound,
        kind: 'min',
        digits: 0,
        note: versions,
      });
    }
  } catch (error) {
    console.log(`peers skipped: ${(error as Error).message.split('\n')[0]}`);
    for (const target of TARGETS)
      recordTarget({
        label: `${target.label} ÷ Switchboard, CPU per turn`,
        value: undefined,
        bound: target.bound,
        kind: 'min',
      });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
