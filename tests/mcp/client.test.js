// `pybox mcp` against the official MCP client SDK (StdioClientTransport), the real daemon and
// engine: handshake, tools, a run whose structuredContent the SDK validates against the tool's
// outputSchema, files in and a PNG back, a deadline, cancellation, ping, close.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, boxesLeft, waitFor } from './helpers.js';

let client;
let transport;

before(async () => {
  ({ client, transport } = await connect());
});

after(async () => {
  await client?.close();
});

const run = (args, options) => client.callTool({ name: 'run_python', arguments: args }, undefined, options);

test('handshake: the latest revision, the tools capability and the server name', () => {
  assert.equal(client.getServerVersion().name, 'pybox');
  assert.ok(client.getServerCapabilities().tools);
  assert.match(client.getInstructions(), /run_python/);
});

test('listTools: run_python and list_images, each with an input and an output schema', async () => {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((tool) => tool.name).sort(), ['list_images', 'run_python']);
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, 'object');
    assert.equal(tool.outputSchema.type, 'object');
  }
});

test('run_python print(6*7): the receipt as structuredContent, valid for the SDK, and a text view', async () => {
  // The SDK checks structuredContent against the outputSchema it got from listTools (run above).
  const result = await run({ program: 'print(6*7)' });
  assert.equal(result.isError, false);
  assert.equal(result.structuredContent.capture.stdout, '42\n');
  assert.equal(result.structuredContent.schema_version, 1);
  assert.equal(result.structuredContent.sealed, true);
  assert.equal(result.structuredContent.isolation, 'container');
  assert.equal(result.structuredContent.observed.termination.mechanism, 'TARGET_EXIT_OBSERVED');
  assert.equal(result.structuredContent.cleanup.removed, true);
  // As in the seed: unknown's three keys are booleans, the reasons beside them; the metrics are
  // keyed by the kernel's file names, with last.
  const { unknown, unknown_reasons: reasons } = result.structuredContent;
  for (const key of ['final_resource_counters', 'exact_termination_cause', 'absolute_clock_alignment'])
    assert.equal(typeof unknown[key], 'boolean', key);
  assert.deepEqual(Object.keys(reasons).sort(), Object.keys(unknown).filter((key) => unknown[key]).sort());
  const resources = result.structuredContent.observed.resources;
  assert.equal(resources.status, 'COLLECTED');
  assert.equal(typeof resources.metrics['memory.peak'].last, 'number');
  assert.equal(unknown.final_resource_counters, !resources.final_counters_complete);
  const text = result.content[0].text;
  assert.match(text, /PyBox receipt/);
  assert.deepEqual(JSON.parse(text.slice(text.indexOf('Receipt (JSON):\n') + 16)), result.structuredContent);
});

test('a program that fails is a tool that worked: isError false, the exit code in the receipt', async () => {
  const result = await run({ program: 'import sys\nprint("bye", file=sys.stderr)\nsys.exit(3)' });
  assert.equal(result.isError, false);
  assert.equal(result.structuredContent.observed.termination.exit_code, 3);
  assert.equal(result.structuredContent.capture.stderr, 'bye\n');
});

test('bad input is a tool result with isError true and no structuredContent', async () => {
  const result = await run({ program: 'print(1)', timeout_s: 99 });
  assert.equal(result.isError, true);
  assert.equal(result.structuredContent, undefined);
  assert.match(result.content[0].text, /timeout_s/);
});

test('output too large for a 64 KiB receipt is trimmed, flagged, and still valid for the SDK', async () => {
  // Control bytes take 6 characters each in JSON: 2 x 8,192 of them do not fit in 64 KiB.
  const result = await run({ program: 'import sys\nsys.stdout.write("\\x01" * 9000)\nsys.stderr.write("\\x02" * 9000)',
    output_limit: 8192 });
  assert.equal(result.isError, false);
  const receipt = result.structuredContent;
  assert.ok(JSON.stringify(receipt).length <= 65536);
  assert.ok(receipt.explanations.some((explanation) => explanation.code === 'MCP_OUTPUT_TRIMMED'));
  assert.equal(receipt.capture.stdout_bytes, 9000);
  assert.equal(receipt.capture.stdout_truncated, true);
  assert.ok(receipt.capture.stdout.length > 1000 && receipt.capture.stdout.length < 8192);
  assert.equal(receipt.capture.stdout_bytes_kept, receipt.capture.stdout.length);
});

test('live output: with a progress token the output comes as notifications/progress while it runs, the result unchanged', async () => {
  const seen = [];
  const began = Date.now();
  const program = 'import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.6)\n';
  const result = await run({ program, timeout_s: 5 },
    { onprogress: (progress) => seen.push({ ...progress, at: Date.now() - began }) });
  assert.equal(result.isError, false);
  assert.equal(result.structuredContent.capture.stdout, '0\n1\n2\n');
  assert.equal(seen[0].message, `started run ${result.structuredContent.identity.run_id}`);
  assert.equal(seen[0].progress, 0);
  const told = seen.filter((progress) => progress.message.startsWith('stdout: '));
  assert.equal(told.map((progress) => progress.message.slice(8)).join(''), '0\n1\n2\n');
  for (let i = 1; i < seen.length; i += 1) assert.ok(seen[i].progress > seen[i - 1].progress);
  assert.equal(seen.at(-1).progress, 6);
  // Told as printed, 0.6 s apart, not all at the end.
  assert.ok(told.at(-1).at - told[0].at > 900, JSON.stringify(seen));
});

test('list_images names stdlib and data', async () => {
  const result = await client.callTool({ name: 'list_images', arguments: {} });
  assert.equal(result.isError, false);
  const names = result.structuredContent.images.map((image) => image.name);
  assert.ok(names.includes('stdlib') && names.includes('data'), names.join(','));
});

test('files in and a PNG back from the data image', async () => {
  const program = [
    'import matplotlib',
    'matplotlib.use("Agg")',
    'import matplotlib.pyplot as plt',
    'values = [float(line) for line in open("data/values.txt")]',
    'plt.figure(figsize=(3, 2), dpi=50)',
    'plt.plot(values)',
    'plt.savefig("out/plot.png")',
    'open("out/sum.txt", "w").write(str(sum(values)))',
    'print(len(values), open("raw.bin", "rb").read().hex())',
  ].join('\n');
  const result = await run({
    program, image: 'data', timeout_s: 30,
    files: { 'data/values.txt': { text: '1\n4\n9\n' }, 'raw.bin': { base64: 'AAH/' } },
  });
  assert.equal(result.isError, false, JSON.stringify(result.content).slice(0, 2000));
  assert.equal(result.structuredContent.capture.stdout, '3 0001ff\n');
  assert.deepEqual(result.structuredContent.files.outputs.map((file) => file.name), ['plot.png', 'sum.txt']);
  const image = result.content.find((block) => block.type === 'image');
  assert.equal(image.mimeType, 'image/png');
  assert.equal(Buffer.from(image.data, 'base64').subarray(0, 8).toString('hex'), '89504e470d0a1a0a');
  const sum = result.content.find((block) => block.type === 'resource');
  assert.equal(sum.resource.text, '14.0');
});

test('a deadline: the program is stopped, and that is in the receipt, not an error', async () => {
  const result = await run({ program: 'import time\ntime.sleep(20)', timeout_s: 0.5 });
  assert.equal(result.isError, false);
  assert.equal(result.structuredContent.observed.termination.mechanism, 'DEADLINE_KILL');
});

test('cancelling `while True: pass` removes its box, and the next call works', async () => {
  const controller = new AbortController();
  const started = Date.now();
  const pending = run({ program: 'while True: pass', timeout_s: 30 }, { signal: controller.signal });
  // As soon as the box exists (it may still be starting): the run must stop then, not at its deadline.
  await waitFor(() => boxesLeft().length > 0, 15000, 'the box to exist');
  assert.deepEqual(await client.ping(), {});  // served while the call runs
  controller.abort('the test cancels');
  await assert.rejects(pending);
  await waitFor(() => boxesLeft().length === 0, 5000, 'the box to be removed');
  assert.ok(Date.now() - started < 10000, 'stopped well before its 30 s deadline');
  const after = await run({ program: 'print(6*7)' });
  assert.equal(after.structuredContent.capture.stdout, '42\n');
});

test('ping is answered', async () => {
  assert.deepEqual(await client.ping(), {});
});

test('close ends the server', async () => {
  const pid = transport.pid;
  assert.ok(pid);
  await client.close();
  client = undefined;
  await waitFor(() => { try { process.kill(pid, 0); return false; } catch { return true; } }, 5000, 'the server to exit');
});
