// The start commands of the README and the deploying guide (`pnpm start`, `pnpm start:prod`), run and stopped as a process manager (or a terminal's Ctrl-C) does.
//
// The commands run side by side (concurrent suites and tests): the two `pnpm start` runs, mostly waiting (for
// pnpm, for a 1.5 s turn), overlap `pnpm build`, which start:prod needs. Measured alone on a 2-core machine
// under a benchmark's load, 3 runs each: 16-21 s one after another, 12-16 s side by side (same CPU time).
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { serverEnv } from './support/spawn-server.js';
import { streamTurn } from './support/stream-turn.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
/** Failure guards only: `pnpm start` builds the console and compiles TypeScript on a shared, loaded machine. */
const START_TIMEOUT_MS = 90_000;
const BUILD_TIMEOUT_MS = 300_000;

interface StartedCommand {
  child: ChildProcess;
  /** The server's URL, once its start-up banner is complete. */
  listening: Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  /** Kills the whole process group (pnpm and what it started) unless it already exited, then waits for the exit. */
  kill(): Promise<void>;
}

/**
 * `pnpm start` (its prestart) and `pnpm build` each rebuild packages/console/dist by moving directories; two at
 * once can collide (one's rename finds the other's new dist in place and fails). The commands of this file take
 * turns at that step: each waits for the previous one to print `console built in` (or to exit).
 */
let consoleBuildTurn: Promise<void> = Promise.resolve();
const BUILDS_CONSOLE = new Set(['start', 'build']);

/**
 * Runs `pnpm <script>` at the repository root in its own process group, as a terminal or a supervisor would;
 * a script that builds the console first waits for its turn.
 */
async function startCommand(script: string, env: Record<string, string> = {}): Promise<StartedCommand> {
  let endTurn: () => void = () => {};
  if (BUILDS_CONSOLE.has(script)) {
    const previousTurn = consoleBuildTurn;
    consoleBuildTurn = new Promise<void>((resolve) => {
      endTurn = resolve;
    });
    await previousTurn;
  }

  const child = spawn('pnpm', [script], {
    cwd: root,
    detached: true,
    // Every demo agent answers after this wait, so that the turn is still running when the signal arrives.
    env: serverEnv({ DEMO_AGENT_DELAY_MS: '1500', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  void exited.then(endTurn);
  const listening = new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('console built in')) endTurn();
      const match = /listening on (http:\/\/[^\s"]+)/.exec(output);
      if (match && /"msg":"Try: /.test(output)) resolve(match[1] as string);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then(({ code }) => reject(new Error(`pnpm ${script} exited with ${code}:\n${output}`)));
  });
  listening.catch(() => {});
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
    }
    await exited;
  };
  return { child, listening, exited, output: () => output, kill };
}

async function portIsClosed(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) });
    return false;
  } catch {
    return true;
  }
}

/**
 * Starts `pnpm <script>`, begins a slow turn, sends `signal` (to pnpm's PID, or to its process group as a
 * terminal's Ctrl-C does) while the turn runs, and checks what an operator would: the turn ended with its
 * answer, the server stopped listening, pnpm exited 0 without an `ELIFECYCLE` error.
 */
async function stopDuringTurn(
  { onTestFinished }: TestContext,
  script: string,
  signal: NodeJS.Signals,
  target: 'pid' | 'group',
) {
  const command = await startCommand(script);
  // Whatever a failed test left running: the whole group, so that no server outlives the test.
  onTestFinished(command.kill);
  const url = await command.listening;
  const turn = streamTurn(url, 'what is 2 + 3 * 4?');
  await turn.running;
  const pid = command.child.pid as number;
  process.kill(target === 'group' ? -pid : pid, signal);

  const events = await turn.events;
  expect(events.map((event) => event.event)).toContain('agent-end');
  expect(events.find((event) => event.event === 'message')?.data.content).toContain('14');
  expect(events.at(-1)).toMatchObject({ event: 'turn-end', data: { status: 'completed' } });
  expect(await command.exited).toEqual({ code: 0, signal: null });
  expect(await portIsClosed(url)).toBe(true);
  const output = command.output();
  expect(output).toContain(`${signal} received: finishing running turns`);
  // The signal reached the server while the turn ran: the server logged it before the turn's request ended.
  expect(output.indexOf(`${signal} received`)).toBeLessThan(output.indexOf('"route":"/v1/chat"'));
  expect(output).not.toContain('ELIFECYCLE');
  expect(output).not.toContain('"level":50');
}

// First, so that `pnpm build` (the longest step) takes the first turn at the console build.
describe.concurrent('pnpm start:prod (built JavaScript, plain node)', () => {
  let build: StartedCommand | undefined;
  beforeAll(async () => {
    build = await startCommand('build');
    const { code } = await build.exited;
    if (code !== 0) throw new Error(`pnpm build exited with ${code}:\n${build.output()}`);
  }, BUILD_TIMEOUT_MS);
  afterAll(() => build?.kill());

  it(
    'on SIGTERM to its PID, finishes the running turn and exits 0',
    (context) => stopDuringTurn(context, 'start:prod', 'SIGTERM', 'pid'),
    START_TIMEOUT_MS * 2,
  );
});

describe.concurrent('pnpm start (TypeScript sources)', () => {
  it(
    'on SIGTERM to its PID, finishes the running turn and exits 0',
    (context) => stopDuringTurn(context, 'start', 'SIGTERM', 'pid'),
    START_TIMEOUT_MS * 2,
  );

  it(
    'on Ctrl-C (SIGINT to the whole process group, so twice to the server), finishes the turn and exits 0',
    (context) => stopDuringTurn(context, 'start', 'SIGINT', 'group'),
    START_TIMEOUT_MS * 2,
  );
});

describe.concurrent('the switchboard-dist export condition', () => {
  it('finds a built file behind every TypeScript export of the workspace packages', () => {
    // A subpath added without its `switchboard-dist` entry would make plain node load a .ts file.
    for (const name of ['core', 'orchestrators', 'runtime']) {
      const manifest = JSON.parse(readFileSync(`${root}/packages/${name}/package.json`, 'utf8')) as {
        exports: Record<string, Record<string, string>>;
      };
      for (const [subpath, targets] of Object.entries(manifest.exports)) {
        const source = targets.default?.replace(/^\.\/src\/(.+)\.ts$/, './dist/$1.js');
        expect(targets['switchboard-dist'], `${name} ${subpath}`).toBe(source);
      }
    }
  });
});
