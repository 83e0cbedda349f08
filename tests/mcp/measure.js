// Measures `pybox mcp` (docs/reference.md "MCP"): the time from starting the server to its
// initialize answer, and the round trip of a run_python call of print(6*7) against `pybox exec`
// of the same program (a plain run, and one that moves files as every MCP run does).
// Usage: PYBOX_CLIENT=build/bin/pybox PYBOX_HOME=... node tests/mcp/measure.js [rounds]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RawSession, INITIALIZE, pybox, home } from './helpers.js';

const rounds = Number(process.argv[2] ?? 20);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (start) => Number(process.hrtime.bigint() - start) / 1e6;

const startup = [];
const call = [];
for (let round = 0; round < rounds; ++round) {
  const start = process.hrtime.bigint();
  const session = new RawSession();
  await session.request(INITIALIZE());
  startup.push(ms(start));
  const before = process.hrtime.bigint();
  const answer = await session.request({ jsonrpc: '2.0', id: 1, method: 'tools/call',
    params: { name: 'run_python', arguments: { program: 'print(6*7)' } } });
  call.push(ms(before));
  if (answer.result.structuredContent.capture.stdout !== '42\n') throw new Error('wrong output');
  await session.close();
}

const folder = mkdtempSync(join(tmpdir(), 'pybox-measure-'));
writeFileSync(join(folder, 'p.py'), 'print(6*7)\n');
const exec = (extra) => {
  const times = [];
  for (let round = 0; round < rounds; ++round) {
    const start = process.hrtime.bigint();
    execFileSync(pybox, ['exec', ...extra, join(folder, 'p.py')], { env: { ...process.env, PYBOX_HOME: home }, stdio: 'pipe' });
    times.push(ms(start));
  }
  return times;
};
const plain = exec([]);
const files = exec(['--out', folder, '--force']);
const show = (name, values) => console.log(`${name}: median ${median(values).toFixed(1)} ms (min ${Math.min(...values).toFixed(1)}, max ${Math.max(...values).toFixed(1)}, ${values.length} rounds)`);
show('pybox mcp start to initialize answer', startup);
show('run_python print(6*7) round trip', call);
show('pybox exec print(6*7)', plain);
show('pybox exec --out print(6*7)', files);
