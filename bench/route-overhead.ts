// In-process CPU of POST /v1/chat through the app's own routes against the same app behind a plain Hono route
// calling `app.chat` (bench/servers/hono-chat.ts): what the route costs on top of the turn, without sockets.
// Both are served by @hono/node-server's request listener, as their servers are, given a Node request with its
// body and a Node response without a socket (what it writes stays in memory); blocks of requests alternate in
// one process, and the median of the rounds' differences is reported.
//   pnpm tsx bench/route-overhead.ts [requests per block=1000] [blocks=40]
// BENCH_ROUTE_CONCURRENCY (default 32) requests in flight at once; BENCH_ROUTE_SIDE=route or honoChat runs that
// side alone (to profile it: node --cpu-prof on the compiled .build/route-overhead.mjs with IPC);
// BENCH_ROUTE_LOGGER=pino gives the route's app a pino logger at info (a line per request, to /dev/null).
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { App } from '@switchboard/runtime';
import { pino } from 'pino';
import { median } from './load.js';
import { runChild } from './run-child.js';
import { benchAgents, benchOrchestrator } from './servers/orchestrator.js';
import { plainChatRoute } from './servers/plain-chat-route.js';

interface RouteOverhead {
  route: number;
  honoChat: number;
  /** The median over rounds of the difference within a round (adjacent blocks). */
  difference: number;
}

type Listener = ReturnType<typeof getRequestListener>;

function sides(): Record<'route' | 'honoChat', Listener> {
  // BENCH_ROUTE_LOGGER=pino: the route's app logs a line per request, as by default, to /dev/null.
  const logger = process.env.BENCH_ROUTE_LOGGER === 'pino' ? pino(pino.destination('/dev/null')) : () => {};
  const own = new App({ name: 'bench', agents: benchAgents(), logger });
  own.mount(benchOrchestrator(own));
  const plain = new App({ name: 'bench', agents: benchAgents(), logger: () => {} });
  plain.mount(benchOrchestrator(plain));
  return { route: getRequestListener(own.fetch), honoChat: getRequestListener(plainChatRoute(plain).fetch) };
}

/** The socket every request claims to come from: never connected, never written to. */
const socket = new Socket();

/** A parsed POST /v1/chat as Node's HTTP server hands it over: headers, then the body. */
function nodeRequest(body: string): IncomingMessage {
  const incoming = new IncomingMessage(socket);
  incoming.method = 'POST';
  incoming.url = '/v1/chat';
  incoming.httpVersionMajor = 1;
  incoming.httpVersionMinor = 1;
  const headers: Record<string, string> = {
    host: '127.0.0.1:3000',
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'keep-alive',
  };
  incoming.headers = headers;
  incoming.rawHeaders = Object.entries(headers).flat();
  incoming.push(body);
  incoming.push(null);
  return incoming;
}

async function measure(perBlock: number, blocks: number): Promise<RouteOverhead> {
  const listeners = sides();
  let counter = 0;
  // Requests in flight at once, as the bench's connections keep them (BENCH_ROUTE_CONCURRENCY, default 32).
  const concurrency = Number(process.env.BENCH_ROUTE_CONCURRENCY ?? 32);
  const one = async (listener: Listener) => {
    const body = JSON.stringify({
      message: `echo request ${counter}`,
      sessionId: `bench-${counter++ % 256}`,
    });
    const incoming = nodeRequest(body);
    const outgoing = new ServerResponse(incoming);
    await listener(incoming, outgoing);
    if (outgoing.statusCode !== 200) throw new Error(`status ${outgoing.statusCode}`);
  };
  const block = async (listener: Listener) => {
    const started = process.cpuUsage();
    let sent = 0;
    const worker = async () => {
      while (sent++ < perBlock) await one(listener);
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const used = process.cpuUsage(started);
    return (used.user + used.system) / perBlock;
  };
  const runs: Record<'route' | 'honoChat', number[]> = { route: [], honoChat: [] };
  // BENCH_ROUTE_SIDE=route (or honoChat) runs that side alone: to profile it.
  const only = process.env.BENCH_ROUTE_SIDE as 'route' | 'honoChat' | undefined;
  if (only) {
    for (let round = 0; round <= blocks; round++) runs[only].push(await block(listeners[only]));
    return { route: median(runs.route), honoChat: median(runs.honoChat), difference: Number.NaN };
  }
  for (const name of ['route', 'honoChat'] as const) await block(listeners[name]);
  for (let round = 0; round < blocks; round++)
    for (const name of round % 2 ? (['route', 'honoChat'] as const) : (['honoChat', 'route'] as const))
      runs[name].push(await block(listeners[name]));
  const differences = runs.route.map((route, round) => route - (runs.honoChat[round] ?? 0));
  return { route: median(runs.route), honoChat: median(runs.honoChat), difference: median(differences) };
}

if (process.send) {
  // A parent that wants a CPU profile disconnects to let the process end by itself.
  process.once('disconnect', () => process.exit(0));
  process.send({
    result: await measure(
      Number(process.env.BENCH_ROUTE_BLOCK ?? 1000),
      Number(process.env.BENCH_ROUTE_BLOCKS ?? 40),
    ),
  });
} else {
  const [perBlock = '1000', blocks = '40'] = process.argv.slice(2);
  const result = await runChild<RouteOverhead>('route-overhead.ts', 'result', {
    env: { BENCH_ROUTE_BLOCK: perBlock, BENCH_ROUTE_BLOCKS: blocks },
  });
  console.log(
    `cpu µs per request: /v1/chat ${result.route.toFixed(1)}, plain Hono route + app.chat ${result.honoChat.toFixed(1)}; ` +
      `route overhead ${result.difference.toFixed(1)} µs (median of the rounds' differences; ratio ${(result.honoChat / result.route).toFixed(2)})`,
  );
}
