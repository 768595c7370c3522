// `achd serve --sandbox` for a browser test: its clock starting at
// 2026-11-23 10:00 New York time, both planes on free loopback ports, its data
// in a fresh directory, its log (stderr) in target/artifacts.
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const artifacts = join(root, 'target/artifacts');
const achd = process.env.ACHD ?? join(root, 'target/debug/achd');

/**
 * Start the server with `args` after the sandbox's own, its data in a new
 * directory named from `prefix`, its log in target/artifacts/`logName`.
 * Returns the process and the directory at once (`stopServer` cleans up even
 * after a start that fails) and `listening`, which resolves with the
 * addresses `{ admin, listen }` of the operator and public planes once the
 * server prints the public one.
 */
export function startServer({ prefix, logName, args = [] }) {
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(artifacts, { recursive: true });
  const log = openSync(join(artifacts, logName), 'w');
  const server = spawn(achd, ['serve', '--sandbox', '--sandbox-start', '2026-11-23T10:00:00-05:00', ...args, '--listen', '127.0.0.1:0', '--admin-listen', '127.0.0.1:0', '--data', dataDir], {
    stdio: ['ignore', 'pipe', log],
  });
  const listening = new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error('achd did not say where it listens within 30 s')), 30_000);
    server.on('exit', (code) => reject(new Error(`achd exited (${code}) before listening`)));
    let admin;
    createInterface({ input: server.stdout }).on('line', (line) => {
      const operator = /^operator plane on https:\/\/(\S+)$/.exec(line);
      if (operator) admin = operator[1];
      const m = /^listening on https:\/\/(\S+)$/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolvePromise({ admin, listen: m[1] });
      }
    });
  });
  return { server, dataDir, listening };
}

/** Stop `server` if it still runs (SIGTERM, its exit awaited), then remove each of `dirs` that is set. */
export async function stopServer(server, dirs) {
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  for (const dir of dirs) if (dir) rmSync(dir, { recursive: true, force: true });
}
