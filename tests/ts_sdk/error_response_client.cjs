// The TypeScript SDK 1.x client (StreamableHTTPClientTransport) against an mcp_kit server: provokes
// JSON-RPC error responses, then reports every HTTP request the transport made and every error it raised.
//
//   node error_response_client.cjs URL NODE_MODULES_DIR
//
// Prints one JSON object: {"errors": [...], "requests": [{method, lastEventId, status}], "codes": [...],
// "toolsAfter": N}. The SDK treats only results as responses, so after an error it resumes the POST
// stream with GET + Last-Event-ID; what the server answers there decides whether the client stays quiet.
'use strict';

const [url, modules] = process.argv.slice(2);
const load = (name) => require(require.resolve(name, { paths: [modules] }));
const { Client } = load('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = load('@modelcontextprotocol/sdk/client/streamableHttp.js');

const requests = [];
const errors = [];
let changed = () => {};
const nextChange = () => new Promise((resolve) => { changed = resolve; });
const note = () => { const wake = changed; changed = () => {}; wake(); };

async function recordingFetch(input, init) {
  const headers = new Headers(init?.headers);
  const entry = { method: init?.method ?? 'GET', lastEventId: headers.get('last-event-id'), status: null };
  requests.push(entry);
  const response = await fetch(input, init);
  entry.status = response.status;
  note();
  return response;
}

async function until(predicate, deadlineMs) {
  const deadline = Date.now() + deadlineMs;
  while (!predicate() && Date.now() < deadline) {
    await Promise.race([nextChange(), new Promise((resolve) => setTimeout(resolve, 250))]);
  }
  return predicate();
}

const resumes = () => requests.filter((r) => r.method === 'GET' && r.lastEventId && r.status !== null);
const gaveUpSince = (count) => errors.slice(count).some((e) => e.includes('Maximum reconnection attempts'));

async function main() {
  const client = new Client({ name: 'ts-sdk-error-probe', version: '1.0.0' });
  client.onerror = (error) => { errors.push(String(error?.message ?? error)); note(); };
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recordingFetch });
  await client.connect(transport);
  await until(() => requests.some((r) => r.method === 'GET' && !r.lastEventId && r.status !== null), 10000);

  const codes = [];
  const attempts = [
    () => client.readResource({ uri: 'stock://quote/NOPE' }),
    () => client.getPrompt({ name: 'no-such-prompt', arguments: {} }),
  ];
  for (const attempt of attempts) {
    const resumed = resumes().length;
    const reported = errors.length;
    try {
      await attempt();
      codes.push(null);
    } catch (error) {
      codes.push(error?.code ?? String(error));
    }
    // The client resumes the finished POST stream one `retry` interval later. Wait until the server
    // answered that resumption with anything but a stream, or the client gave up after its retries.
    await until(() => resumes().length > resumed && (resumes().at(-1).status !== 200 || gaveUpSince(reported)), 20000);
    if (resumes().at(-1)?.status === 200) await until(() => gaveUpSince(reported), 20000);
  }
  const tools = await client.listTools();
  await client.close();
  process.stdout.write(JSON.stringify({ errors, requests, codes, toolsAfter: tools.tools.length }) + '\n');
}

main().catch((error) => {
  process.stdout.write(JSON.stringify({ fatal: String(error?.stack ?? error), errors, requests }) + '\n');
  process.exit(1);
});
