// One subject in its own process, forked by main.ts. PEER_MODE=in-process runs sequential turns and sends the
// measurement over IPC; PEER_MODE=http serves POST /v1/chat on 127.0.0.1 until the parent disconnects.
import { createServer } from 'node:http';
import { expectedReply, type Subject, type SubjectFactory, sessionOf, userMessage } from './workload.js';

/** What the in-process measurement sends back. */
export interface InProcessResult {
  turns: number;
  sessions: number;
  wrongReplies: number;
  /** The first wrong reply, to say what went wrong. */
  firstWrong?: { expected: string; got: string };
  turnsPerSecond: number;
  cpuMicrosPerTurn: number;
  p50Ms: number;
  p99Ms: number;
  /** Heap still used per 3-turn session after a full GC, in bytes (exact only with --expose-gc). */
  heapBytesPerSession: number;
}

const MAX_BODY_BYTES = 64 * 1024;

function percentile(sorted: Float64Array, p: number): number {
  return sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

function fullGc(): void {
  globalThis.gc?.();
  globalThis.gc?.();
}

async function measureInProcess(
  subject: Subject,
  maxTurns: number,
  seconds: number,
): Promise<InProcessResult> {
  // Warm-up (at most 2000 turns or 2 s) on sessions of their own, so that the measured sessions start empty.
  const warmUpEnd = performance.now() + 2000;
  for (let index = 0; index < 2000 && performance.now() < warmUpEnd; index++)
    await subject.turn(sessionOf(index, 'warm'), userMessage(index));
  fullGc();
  const heapBefore = process.memoryUsage().heapUsed;
  const latencies = new Float64Array(maxTurns);
  let wrongReplies = 0;
  let firstWrong: InProcessResult['firstWrong'];
  let turns = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  // Whole sessions only: stop at a multiple of 3 turns.
  while (turns + 3 <= maxTurns && performance.now() < deadline) {
    for (let step = 0; step < 3; step++, turns++) {
      const turnStarted = performance.now();
      const reply = await subject.turn(sessionOf(turns), userMessage(turns));
      latencies[turns] = performance.now() - turnStarted;
      if (reply !== expectedReply(turns)) {
        wrongReplies++;
        firstWrong ??= { expected: expectedReply(turns), got: String(reply).slice(0, 200) };
      }
    }
  }
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  fullGc();
  const heapAfter = process.memoryUsage().heapUsed;
  const sorted = latencies.slice(0, turns).sort();
  return {
    turns,
    sessions: turns / 3,
    wrongReplies,
    firstWrong,
    turnsPerSecond: turns / elapsed,
    cpuMicrosPerTurn: (cpu.user + cpu.system) / turns,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    heapBytesPerSession: (heapAfter - heapBefore) / (turns / 3),
  };
}

function send(response: import('node:http').ServerResponse, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
  });
  response.end(payload);
}

/** The minimal HTTP wrapper a peer gets: bounded JSON body in, the reply out, no error detail to the client. */
async function listenMinimal(subject: Subject): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    if (request.method !== 'POST' || request.url !== '/v1/chat')
      return send(response, 404, { error: 'not_found' });
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) request.destroy();
      else chunks.push(chunk);
    });
    request.on('end', () => {
      let body: { message?: unknown; sessionId?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return send(response, 400, { error: 'bad_request' });
      }
      const { message, sessionId } = body ?? {};
      if (typeof message !== 'string' || typeof sessionId !== 'string' || sessionId.length > 200)
        return send(response, 400, { error: 'bad_request' });
      subject.turn(sessionId, message).then(
        (reply) => send(response, 200, { sessionId, reply, status: 'completed' }),
        () => send(response, 500, { error: 'internal' }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Builds the subject named by the environment and runs the harness PEER_MODE asks for. */
export async function runChild(factory: SubjectFactory): Promise<void> {
  const http = process.env.PEER_MODE === 'http';
  const subject = await factory({ frameworkMemory: process.env.PEER_MEMORY === '1', http });
  if (!http) {
    const result = await measureInProcess(
      subject,
      Number(process.env.BENCH_PEERS_TURNS ?? 10_000),
      Number(process.env.BENCH_PEERS_SECONDS ?? 5),
    );
    await subject.close?.();
    process.send?.({ result }, () => process.exit(0));
    return;
  }
  const server = await (subject.listen ?? (() => listenMinimal(subject)))();
  process.on('message', (message) => {
    if (message === 'cpu') process.send?.({ cpu: process.cpuUsage() });
  });
  process.once('disconnect', () => void server.close().finally(() => process.exit(0)));
  process.send?.({ ready: server.url });
}
