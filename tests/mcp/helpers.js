// Shared by the tests of `pybox mcp`: where the built pybox and the suite's runtime folder are
// (ctest sets PYBOX_CLIENT and PYBOX_HOME), an SDK client on it, and a raw line-level session.
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export const pybox = process.env.PYBOX_CLIENT;
export const home = process.env.PYBOX_HOME;
if (!pybox || !home) throw new Error('PYBOX_CLIENT and PYBOX_HOME must be set (ctest does)');

// An initialized SDK client on a fresh `pybox mcp`.
export async function connect() {
  const transport = new StdioClientTransport({ command: pybox, args: ['mcp'], env: { PYBOX_HOME: home }, stderr: 'pipe' });
  const client = new Client({ name: 'pybox-mcp-tests', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

// The container IDs of the boxes pyboxd keeps warm (`pybox attempts --json`: unsettled, in
// progress and warm); waits up to 5 s while one is being created (no container ID yet).
function warmBoxes() {
  let warm = [];
  for (let i = 0; i < 100; i++) {
    const answer = JSON.parse(execFileSync(pybox, ['attempts', '--json'], { env: { PYBOX_HOME: home }, encoding: 'utf8' }));
    warm = answer.unsettled.filter((note) => note.in_progress && note.warm);
    if (warm.every((note) => note.container_id)) break;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
  return warm.map((note) => note.container_id);
}

// The boxes of this installation that the private engine still has, less those pyboxd keeps
// warm (read before and after the listing, so that a box made warm meanwhile is told apart).
export function boxesLeft() {
  const owner = JSON.parse(readFileSync(`${home}/installation.json`, 'utf8')).installation_id;
  const warm = warmBoxes();
  const listed = execFileSync('/usr/bin/docker', ['-H', `unix://${home}/engine/docker.sock`, 'ps', '-aq', '--no-trunc',
    '--filter', `label=pybox.owner=${owner}`], { encoding: 'utf8' });
  warm.push(...warmBoxes());
  return listed.split('\n').filter(Boolean).filter((id) => !warm.includes(id));
}

export async function waitFor(predicate, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export const INITIALIZE = (version = '2025-11-25', id = 0) => ({
  jsonrpc: '2.0', id, method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'wire', version: '1' } },
});

// `pybox mcp` spoken to line by line. Every stdout line is kept in `lines` (checked as JSON by
// the tests); `next()` resolves with the next one.
export class RawSession {
  constructor(runtimeHome = home) {
    this.child = spawn(pybox, ['mcp'], { env: { PATH: process.env.PATH, PYBOX_HOME: runtimeHome }, stdio: ['pipe', 'pipe', 'pipe'] });
    this.lines = [];
    this.waiting = [];
    this.stderr = '';
    this.child.stderr.on('data', (chunk) => { this.stderr += chunk; });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      this.lines.push(line);
      const waiter = this.waiting.shift();
      if (waiter) waiter(line);
      else this.unread = [...(this.unread ?? []), line];
    });
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  send(message) {
    this.child.stdin.write((typeof message === 'string' ? message : JSON.stringify(message)) + '\n');
  }

  next(ms = 10000) {
    if (this.unread?.length) return Promise.resolve(JSON.parse(this.unread.shift()));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no line within ${ms} ms; stderr: ${this.stderr}`)), ms);
      this.waiting.push((line) => { clearTimeout(timer); resolve(JSON.parse(line)); });
    });
  }

  async request(message) {
    this.send(message);
    return this.next();
  }

  async close() {
    this.child.stdin.end();
    return this.exited;
  }
}
