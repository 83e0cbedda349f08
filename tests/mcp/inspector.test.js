// Smoke test with the MCP Inspector's CLI mode (@modelcontextprotocol/inspector, pinned):
// it spawns `pybox mcp`, lists the tools and calls one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { pybox, home } from './helpers.js';

const inspector = fileURLToPath(new URL('./node_modules/.bin/mcp-inspector', import.meta.url));
const runInspector = (...args) =>
  promisify(execFile)(inspector, ['--cli', pybox, '-e', `PYBOX_HOME=${home}`, 'mcp', ...args], { timeout: 60000 });

test('inspector --cli tools/list names both tools', async () => {
  const { stdout } = await runInspector('--method', 'tools/list');
  const names = JSON.parse(stdout).tools.map((tool) => tool.name).sort();
  assert.deepEqual(names, ['list_images', 'run_python']);
});

test('inspector --cli tools/call runs print(6*7)', async () => {
  const { stdout } = await runInspector('--method', 'tools/call', '--tool-name', 'run_python', '--tool-arg', 'program=print(6*7)');
  const result = JSON.parse(stdout);
  assert.equal(result.isError, false);
  assert.equal(result.structuredContent.capture.stdout, '42\n');
});
