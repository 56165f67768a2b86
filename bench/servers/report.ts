// Shared by the bench servers: tell the parent our URL, answer CPU-usage probes over IPC.
export function reportWhenListening(url: string): void {
  process.on('message', (message) => {
    if (message === 'cpu') process.send?.({ cpu: process.cpuUsage(), memory: process.memoryUsage().rss });
  });
  process.send?.({ ready: url });
}
