import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import type { CliIo } from '../cli-io.js';
import { positiveInteger } from './option-parsers.js';

/** The dev server's entry beside this file: TypeScript in the workspace, JavaScript once built. */
function devServerEntry(): string {
  const here = fileURLToPath(import.meta.url);
  return resolve(here, '..', '..', here.endsWith('.ts') ? 'dev-server.ts' : 'dev-server.js');
}

/**
 * `switchboard dev <app-module>`: serves the app with the console and
 * restarts it when one of its files changes (tsx's watch mode follows
 * every module the app imports).
 */
export function devCommand(program: Command, io: CliIo, exit: (code: number) => void): void {
  program
    .command('dev')
    .description('serve an app with the console, restarting it when its files change')
    .argument('<app-module>', "a module exporting 'agents' and 'orchestrator' (or a mounted 'app')")
    .option(
      '--port <port>',
      'the port (0 picks a free one)',
      (value) => (value === '0' ? 0 : positiveInteger(value)),
      3000,
    )
    .option('--host <host>', 'the interface to bind', '127.0.0.1')
    .action(async (appModule: string, options: { port: number; host: string }) => {
      const tsx = createRequire(import.meta.url).resolve('tsx/cli');
      const args = [
        tsx,
        'watch',
        '--clear-screen=false',
        devServerEntry(),
        resolve(io.cwd, appModule),
        String(options.port),
        options.host,
      ];
      const child = spawn(process.execPath, args, { cwd: io.cwd, stdio: ['inherit', 'pipe', 'pipe'] });
      child.stdout.on('data', (chunk: Buffer) => io.stdout(chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => io.stderr(chunk.toString()));
      const forward = (signal: NodeJS.Signals) => child.kill(signal);
      process.on('SIGINT', forward);
      process.on('SIGTERM', forward);
      const code = await new Promise<number>((done) => child.on('close', (status) => done(status ?? 0)));
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      exit(code);
    });
}
