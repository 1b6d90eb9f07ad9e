// The TypeScript SDK clients against the filesystem server, declaring the `roots` capability: each case
// checks that the server narrowed its sandbox to the client's roots, subscribes to a file (1.x: the
// handshake era's resources/subscribe; 2.x in auto mode: the 2026-07-28 subscriptions/listen), changes
// it with the write_file tool and waits for notifications/resources/updated.
//
//   node listen_roots_client.cjs NODE_MODULES_DIR CONFIG_JSON
//
// CONFIG_JSON: {"python": ..., "cwd": ..., "root": DIR, "url": BASE_URL or null,
//               "cases": [{"name", "sdk": "v1"|"v2", "transport": "stdio"|"http"|"sse", "area": DIR}]}
// Each case's `area` (inside `root`) is the root the client offers; it holds `watched.txt`.
// Prints one JSON line per case: {"name", "era", "allowed", "subscribed", "updated", "error", "stray"}
// (`stray`: rejections the SDK left unhandled during the case).
'use strict';

const path = require('node:path');
const { pathToFileURL } = require('node:url');

const [modules, configText] = process.argv.slice(2);
const config = JSON.parse(configText);
const load = (name) => require(require.resolve(name, { paths: [modules] }));
const STEP_MS = 20000; // every wait is bounded
const stray = []; // rejections nobody handled (inside the SDK): reported with the case they happened in, not a crash
process.on('unhandledRejection', (reason) => { stray.push(String(reason?.message ?? reason)); });

function bounded(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${STEP_MS} ms`)), STEP_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function updates() {
  // the resources/updated notifications a client receives, and a way to wait for one
  const seen = [];
  let wake = () => {};
  return {
    seen,
    handler: (notification) => { seen.push(notification.params.uri); wake(); },
    async waitFor(uri) {
      while (!seen.includes(uri)) {
        await bounded(new Promise((resolve) => { wake = resolve; }), `notifications/resources/updated for ${uri}`);
      }
      return uri;
    },
  };
}

function serverCommand() {
  return { command: config.python, args: ['-m', 'servers.filesystem', '--root', config.root], cwd: config.cwd,
           stderr: 'ignore' };
}

function textOf(result) {
  return (result.content || []).filter((block) => block.type === 'text').map((block) => block.text).join('\n');
}

async function exercise(client, watched, inbox, subscribe) {
  const allowed = await bounded(client.callTool({ name: 'list_allowed_directories', arguments: {} }),
                                'list_allowed_directories');
  const subscribed = await subscribe();
  const written = await bounded(client.callTool({ name: 'write_file', arguments: { path: watched, content: 'changed' } }),
                                'write_file');
  if (written.isError) throw new Error(`write_file failed: ${textOf(written)}`);
  const updated = await inbox.waitFor(pathToFileURL(watched).href);
  return { allowed: allowed.structuredContent?.directories ?? textOf(allowed), subscribed, updated };
}

async function runV1(testCase) {
  const { Client } = load('@modelcontextprotocol/sdk/client/index.js');
  const types = load('@modelcontextprotocol/sdk/types.js');
  const client = new Client({ name: 'ts-sdk-1-roots', version: '1.0.0' }, { capabilities: { roots: {} } });
  const roots = [{ uri: pathToFileURL(testCase.area).href, name: 'area' }];
  client.setRequestHandler(types.ListRootsRequestSchema, async () => ({ roots }));
  const inbox = updates();
  client.setNotificationHandler(types.ResourceUpdatedNotificationSchema, inbox.handler);
  let transport;
  if (testCase.transport === 'stdio') {
    const { StdioClientTransport } = load('@modelcontextprotocol/sdk/client/stdio.js');
    transport = new StdioClientTransport(serverCommand());
  } else {
    const { StreamableHTTPClientTransport } = load('@modelcontextprotocol/sdk/client/streamableHttp.js');
    transport = new StreamableHTTPClientTransport(new URL(`${config.url}/mcp`));
  }
  await bounded(client.connect(transport), 'connect');
  try {
    const watched = path.join(testCase.area, 'watched.txt');
    const uri = pathToFileURL(watched).href;
    const outcome = await exercise(client, watched, inbox, async () => {
      await bounded(client.subscribeResource({ uri }), 'resources/subscribe');
      return [uri];
    });
    await bounded(client.unsubscribeResource({ uri }), 'resources/unsubscribe');
    return { era: 'handshake', ...outcome };
  } finally {
    await client.close();
  }
}

async function runV2(testCase) {
  const sdk = load('@modelcontextprotocol/client');
  const client = new sdk.Client({ name: 'ts-sdk-2-roots', version: '2.0.0' },
                                { capabilities: { roots: {} }, versionNegotiation: { mode: 'auto' } });
  const roots = [{ uri: pathToFileURL(testCase.area).href, name: 'area' }];
  client.setRequestHandler('roots/list', async () => ({ roots }));
  const inbox = updates();
  client.setNotificationHandler('notifications/resources/updated', inbox.handler);
  let transport;
  if (testCase.transport === 'stdio') {
    const { StdioClientTransport } = load('@modelcontextprotocol/client/stdio');
    transport = new StdioClientTransport(serverCommand());
  } else if (testCase.transport === 'sse') {
    transport = new sdk.SSEClientTransport(new URL(`${config.url}/sse`));
  } else {
    transport = new sdk.StreamableHTTPClientTransport(new URL(`${config.url}/mcp`));
  }
  await bounded(client.connect(transport), 'connect');
  try {
    const watched = path.join(testCase.area, 'watched.txt');
    const uri = pathToFileURL(watched).href;
    let subscription;
    const outcome = await exercise(client, watched, inbox, async () => {
      subscription = await bounded(client.listen({ resourceSubscriptions: [uri] }), 'subscriptions/listen');
      return subscription.honoredFilter.resourceSubscriptions ?? [];
    });
    await subscription.close();
    return { era: client.getNegotiatedProtocolVersion() ?? null, ...outcome };
  } finally {
    await client.close();
  }
}

async function main() {
  for (const testCase of config.cases) {
    let report;
    const strayBefore = stray.length;
    try {
      const outcome = await (testCase.sdk === 'v1' ? runV1 : runV2)(testCase);
      report = { name: testCase.name, error: null, ...outcome };
    } catch (error) {
      report = { name: testCase.name, error: String(error?.stack ?? error) };
    }
    await new Promise((resolve) => setImmediate(resolve)); // a rejection of this case is reported with it
    report.stray = stray.slice(strayBefore);
    process.stdout.write(`${JSON.stringify(report)}\n`);
  }
}

main().then(() => process.exit(0), (error) => { process.stderr.write(`${error?.stack ?? error}\n`); process.exit(1); });
