// `pybox mcp` and the unsealed runner (docs/unsealed.md) against the official MCP client SDK:
// without --allow-unsealed the tool run_python_unsealed is neither listed nor callable; with it,
// it runs the host's python and its receipt (checked by the SDK against the tool's outputSchema)
// says sealed false. The runner refuses root, so a root suite runs that server as the user
// pybox-unsealed-test (made here unless it exists, as tests/unsealed does), with a runtime folder
// of its own: the unsealed runner needs no daemon.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, chmodSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { connect, pybox } from './helpers.js';

const user = 'pybox-unsealed-test';
const runtime = mkdtempSync(join(tmpdir(), 'pybox-unsealed-mcp-'));
chmodSync(runtime, 0o755);
after(() => rmSync(runtime, { recursive: true, force: true }));

function asTestUser() {
  if (process.getuid() !== 0) return { command: pybox, prefix: [] };
  try {
    execFileSync('/usr/bin/id', ['-u', user], { stdio: 'ignore' });
  } catch {
    execFileSync('/usr/sbin/useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', user]);
  }
  return { command: '/usr/bin/setpriv', prefix: [`--reuid=${user}`, `--regid=${user}`, '--clear-groups', pybox] };
}

test('without --allow-unsealed, run_python_unsealed is not listed and a call of it is refused', async () => {
  const { client } = await connect();
  try {
    const { tools } = await client.listTools();
    assert.ok(!tools.some((tool) => tool.name === 'run_python_unsealed'));
    await assert.rejects(client.callTool({ name: 'run_python_unsealed', arguments: { program: 'print(1)' } }),
      /Unknown tool/);
  } finally {
    await client.close();
  }
});

test('with --allow-unsealed, run_python_unsealed runs the host python and the receipt says sealed false', async () => {
  const { command, prefix } = asTestUser();
  const transport = new StdioClientTransport({ command, args: [...prefix, 'mcp', '--allow-unsealed'],
    env: { PYBOX_HOME: runtime }, stderr: 'pipe' });
  const client = new Client({ name: 'pybox-mcp-unsealed-tests', version: '1.0.0' });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const tool = tools.find((entry) => entry.name === 'run_python_unsealed');
    assert.ok(tool);
    assert.match(tool.description, /WITHOUT a container/);
    assert.match(client.getInstructions(), /run_python_unsealed/);
    // The SDK checks structuredContent against the outputSchema it got from listTools.
    const result = await client.callTool({ name: 'run_python_unsealed', arguments: { program: 'print(6*7)' } });
    assert.equal(result.isError, false, result.content[0].text);
    const receipt = result.structuredContent;
    assert.equal(receipt.sealed, false);
    assert.equal(receipt.isolation, 'none');
    assert.equal(receipt.capture.stdout, '42\n');
    assert.equal(receipt.container_id, null);
    assert.equal(receipt.not_applicable.container_id.startsWith('unsealed run'), true);
    // No box, so no kernel counters: unknown says so, as a flag with its reason beside it.
    assert.equal(receipt.unknown.final_resource_counters, true);
    assert.match(receipt.unknown_reasons.final_resource_counters, /no kernel counters/);
    assert.equal(receipt.unknown.exact_termination_cause, false);
    assert.match(result.content[0].text.split('\n')[0], /UNSEALED/);
    const refused = await client.callTool({ name: 'run_python_unsealed',
      arguments: { program: 'print(1)', image: 'data' } });
    assert.equal(refused.isError, true);
  } finally {
    await client.close();
  }
});
