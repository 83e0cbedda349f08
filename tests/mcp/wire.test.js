// `pybox mcp` on the wire, line by line: version negotiation, the session rules, malformed and
// oversized messages, the session caps, stdout holding only JSON-RPC lines, and the exit on EOF
// and SIGTERM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RawSession, INITIALIZE, boxesLeft, waitFor } from './helpers.js';

const MAX_MESSAGE_BYTES = 512 * 1024;
const PING = (id) => ({ jsonrpc: '2.0', id, method: 'ping' });

// Every line the server wrote is one JSON-RPC 2.0 response, and it exited cleanly on EOF.
async function finish(session) {
  const { code } = await session.close();
  assert.equal(code, 0, session.stderr);
  assert.ok(session.lines.length > 0);
  for (const line of session.lines) {
    const message = JSON.parse(line);
    assert.equal(message.jsonrpc, '2.0');
    assert.ok('id' in message && ('result' in message) !== ('error' in message), line.slice(0, 200));
  }
}

async function initialized() {
  const session = new RawSession();
  assert.ok((await session.request(INITIALIZE())).result);
  session.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return session;
}

test('version negotiation: older revisions echoed, anything else answered with 2025-11-25', async () => {
  for (const [asked, answered] of [['2025-11-25', '2025-11-25'], ['2025-06-18', '2025-06-18'],
    ['2025-03-26', '2025-03-26'], ['2024-11-05', '2024-11-05'], ['2030-01-01', '2025-11-25'], ['x', '2025-11-25']]) {
    const session = new RawSession();
    const answer = await session.request(INITIALIZE(asked, 'init'));
    assert.equal(answer.id, 'init');
    assert.equal(answer.result.protocolVersion, answered);
    assert.deepEqual(answer.result.capabilities, { tools: { listChanged: false } });
    await finish(session);
  }
});

test('a call before initialize is refused; ping is served', async () => {
  const session = new RawSession();
  const refused = await session.request({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  assert.equal(refused.error.code, -32600);
  assert.match(refused.error.message, /initialize/);
  assert.deepEqual((await session.request(PING(2))).result, {});
  await finish(session);
});

test('notifications get no answer; server/discover and unknown methods get -32601, unknown tools -32602', async () => {
  const session = await initialized();
  session.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 42 } });
  session.send({ jsonrpc: '2.0', method: 'notifications/progress', params: {} });
  session.send({ jsonrpc: '2.0', method: 'tools/call' });  // without an id: a notification
  assert.equal((await session.request(PING(3))).id, 3);  // the next line answers the ping
  assert.equal((await session.request({ jsonrpc: '2.0', id: 4, method: 'server/discover' })).error.code, -32601);
  assert.equal((await session.request({ jsonrpc: '2.0', id: 5, method: 'resources/list' })).error.code, -32601);
  const unknown = await session.request({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'sh', arguments: {} } });
  assert.equal(unknown.error.code, -32602);
  await finish(session);
});

test('malformed JSON is -32700 with id null; arrays are refused with -32600', async () => {
  const session = await initialized();
  const parse = await session.request('{"jsonrpc":"2.0","id":1,"method":');
  assert.equal(parse.error.code, -32700);
  assert.equal(parse.id, null);
  const batch = await session.request([PING(2), PING(3)]);
  assert.equal(batch.error.code, -32600);
  assert.equal(batch.id, null);
  assert.equal((await session.request(PING(4))).id, 4);
  await finish(session);
});

test('a line of 512 KiB is read; one of 512 KiB + 1 is refused and the session goes on', async () => {
  const session = await initialized();
  const ping = JSON.stringify(PING('full'));
  const full = ping + ' '.repeat(MAX_MESSAGE_BYTES - ping.length);
  assert.equal(Buffer.byteLength(full), MAX_MESSAGE_BYTES);
  assert.deepEqual((await session.request(full)).result, {});
  const refused = await session.request(full + ' ');
  assert.equal(refused.id, null);
  assert.equal(refused.error.code, -32600);
  assert.match(refused.error.message, /524288/);
  assert.equal((await session.request(PING('after'))).id, 'after');
  await finish(session);
});

test('the 33rd tools/call is refused, saying the session reached its cap', async () => {
  const session = await initialized();
  for (let id = 1; id <= 32; ++id) {
    const answer = await session.request({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_images', arguments: {} } });
    assert.equal(answer.result.isError, false, JSON.stringify(answer));
  }
  const refused = await session.request({ jsonrpc: '2.0', id: 33, method: 'tools/call', params: { name: 'list_images', arguments: {} } });
  assert.equal(refused.error.code, -32000);
  assert.match(refused.error.message, /32 tool calls/);
  assert.deepEqual((await session.request(PING(34))).result, {});  // other requests are still served
  await finish(session);
});

test('the 257th message is refused, saying the session reached its cap', async () => {
  const session = await initialized();  // 2 messages
  for (let id = 3; id <= 256; ++id) assert.equal((await session.request(PING(id))).id, id);
  const refused = await session.request(PING(257));
  assert.equal(refused.id, 257);
  assert.equal(refused.error.code, -32000);
  assert.match(refused.error.message, /256 messages/);
  await finish(session);
});

test('at the end of stdin a running call is still answered, then the server exits 0', async () => {
  const session = await initialized();
  session.send({ jsonrpc: '2.0', id: 'last', method: 'tools/call',
    params: { name: 'run_python', arguments: { program: 'print(6*7)' } } });
  session.child.stdin.end();
  const answer = await session.next(60000);
  assert.equal(answer.id, 'last');
  assert.equal(answer.result.structuredContent.capture.stdout, '42\n');
  await finish(session);
});

test('without pyboxd a call is a tool error that says how to start it', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'pybox-mcp-no-daemon-'));
  const session = new RawSession(empty);
  await session.request(INITIALIZE());
  const answer = await session.request({ jsonrpc: '2.0', id: 1, method: 'tools/call',
    params: { name: 'run_python', arguments: { program: 'print(1)' } } });
  assert.equal(answer.result.isError, true);
  assert.equal(answer.result.structuredContent, undefined);
  assert.match(answer.result.content[0].text, /^Nothing ran \(daemon_not_running\): pyboxd is not running\. Start it with/);
  await finish(session);
});

test('SIGTERM ends the server at once with exit code 0, and the running call\'s box is removed', async () => {
  const session = await initialized();
  session.send({ jsonrpc: '2.0', id: 1, method: 'tools/call',
    params: { name: 'run_python', arguments: { program: 'while True: pass', timeout_s: 30 } } });
  await waitFor(() => boxesLeft().length > 0, 15000, 'the box to exist');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  session.child.kill('SIGTERM');
  const { code } = await session.exited;
  assert.equal(code, 0);
  assert.equal(session.lines.length, 1);  // initialize's answer; the cancelled call is not answered
  await waitFor(() => boxesLeft().length === 0, 10000, 'the box to be removed');
});

test('notifications/progress: only for a call with a progress token, carrying it, all before that call\'s answer', async () => {
  const session = await initialized();
  const call = (id, meta) => ({ jsonrpc: '2.0', id, method: 'tools/call',
    params: { name: 'run_python', arguments: { program: 'print("hi")' }, ...(meta ? { _meta: meta } : {}) } });
  session.send(call(1));
  assert.equal((await session.next(60000)).id, 1);  // the answer, no progress line before it
  session.send(call(2, { progressToken: 'tok' }));
  const lines = [];
  for (;;) {
    const message = await session.next(60000);
    lines.push(message);
    if ('id' in message) break;
  }
  const progress = lines.slice(0, -1);
  for (const message of progress) {
    assert.equal(message.method, 'notifications/progress');
    assert.equal(message.params.progressToken, 'tok');
  }
  assert.match(progress[0].params.message, /^started run [0-9a-f]{32}$/);
  // print() writes "hi" and "\n" apart: however the output came, together it is the program's.
  assert.equal(progress.slice(1).map((message) => message.params.message.replace(/^stdout: /, '')).join(''), 'hi\n');
  assert.ok(progress.slice(1).every((message) => message.params.message.startsWith('stdout: ')));
  assert.equal(lines.at(-1).id, 2);
  assert.equal(lines.at(-1).result.isError, false);
  const { code } = await session.close();
  assert.equal(code, 0, session.stderr);
});
