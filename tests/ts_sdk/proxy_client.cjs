// The TypeScript SDK clients driving `mcp-kit proxy` in front of npm server-everything: each case connects
// (1.x: the handshake era; 2.x in auto mode: 2026-07-28), lists the tools, calls echo and get-sum, lists
// the resources and reads the first, gets args-prompt, then subscribes to that resource (1.x:
// resources/subscribe; 2.x: subscriptions/listen) and waits for notifications/resources/updated, which
// server-everything sends at once when toggle-subscriber-updates is called.
//
//   node proxy_client.cjs NODE_MODULES_DIR CONFIG_JSON
//
// A "tasks" case (the 2.x client with @modelcontextprotocol/ext-tasks, in the handshake era: 2025-11-25
// tasks) spawns `python TASKS_PROXY` (the proxy in front of tests.helpers.kit_tasks_upstream), calls `job`
// as a task, opens the gate with an ordinary call, and settles the task through the proxy.
//
// CONFIG_JSON: {"python": ..., "cwd": ..., "env": {...}, "proxy": [ARGS after python], "url": BASE_URL or null,
//               "tasks_proxy": [ARGS after python],
//               "cases": [{"name", "sdk": "v1"|"v2"|"tasks", "transport": "stdio"|"http"}]}
// A stdio case spawns `python ARGS` itself (the proxy, which starts the upstream); an http case talks to
// `${url}/mcp`. Prints one JSON line per case: {"name", "era", "tools", "echo", "sum", "resource", "read",
// "prompt", "subscribed", "updated", "error", "stray"} (`stray`: rejections the SDK left unhandled during the case).
'use strict';

const path = require('node:path');

const [modules, configText] = process.argv.slice(2);
const config = JSON.parse(configText);
const load = (name) => require(require.resolve(name, { paths: [modules] }));
const STEP_MS = 30000; // every wait is bounded
const stray = [];
process.on('unhandledRejection', (reason) => { stray.push(String(reason?.message ?? reason)); });

function bounded(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${STEP_MS} ms`)), STEP_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function proxyCommand(args = config.proxy) {
  return { command: config.python, args, cwd: config.cwd, env: config.env, stderr: 'ignore' };
}

function textOf(result) {
  return (result.content || []).filter((block) => block.type === 'text').map((block) => block.text).join('\n');
}

function updates() {
  // the resources/updated notifications a client receives, and a way to wait for one
  const seen = [];
  let wake = () => {};
  return {
    handler: (notification) => { seen.push(notification.params.uri); wake(); },
    async waitFor(uri) {
      while (!seen.includes(uri)) {
        await bounded(new Promise((resolve) => { wake = resolve; }), `notifications/resources/updated for ${uri}`);
      }
      return uri;
    },
  };
}

async function watch(client, inbox, uri, subscribe) {
  const subscribed = await subscribe();
  await bounded(client.callTool({ name: 'toggle-subscriber-updates', arguments: {} }), 'toggle-subscriber-updates');
  const updated = await inbox.waitFor(uri);
  await bounded(client.callTool({ name: 'toggle-subscriber-updates', arguments: {} }), 'toggle-subscriber-updates');
  return { subscribed, updated };
}

async function exercise(client) {
  const tools = (await bounded(client.listTools(), 'tools/list')).tools.map((tool) => tool.name);
  const echo = textOf(await bounded(client.callTool({ name: 'echo', arguments: { message: 'through' } }), 'echo'));
  const sum = textOf(await bounded(client.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } }), 'get-sum'));
  const resource = (await bounded(client.listResources(), 'resources/list')).resources[0];
  const read = (await bounded(client.readResource({ uri: resource.uri }), 'resources/read')).contents[0];
  const prompt = await bounded(client.getPrompt({ name: 'args-prompt', arguments: { city: 'Lyon' } }), 'prompts/get');
  return {
    tools, echo, sum, resource: resource.uri,
    read: { uri: read.uri, text: read.text ?? null, blob: read.blob !== undefined },
    prompt: prompt.messages.map((message) => message.content?.text ?? null),
  };
}

async function runV1(testCase) {
  const { Client } = load('@modelcontextprotocol/sdk/client/index.js');
  const types = load('@modelcontextprotocol/sdk/types.js');
  const client = new Client({ name: 'ts-sdk-1-proxy', version: '1.0.0' }, { capabilities: {} });
  const inbox = updates();
  client.setNotificationHandler(types.ResourceUpdatedNotificationSchema, inbox.handler);
  let transport;
  if (testCase.transport === 'stdio') {
    const { StdioClientTransport } = load('@modelcontextprotocol/sdk/client/stdio.js');
    transport = new StdioClientTransport(proxyCommand());
  } else {
    const { StreamableHTTPClientTransport } = load('@modelcontextprotocol/sdk/client/streamableHttp.js');
    transport = new StreamableHTTPClientTransport(new URL(`${config.url}/mcp`));
  }
  await bounded(client.connect(transport), 'connect');
  try {
    const outcome = await exercise(client);
    const watched = await watch(client, inbox, outcome.resource, async () => {
      await bounded(client.subscribeResource({ uri: outcome.resource }), 'resources/subscribe');
      return [outcome.resource];
    });
    return { era: client.getServerVersion() ? 'handshake' : null, ...outcome, ...watched };
  } finally {
    await client.close();
  }
}

async function runV2(testCase) {
  const sdk = load('@modelcontextprotocol/client');
  const client = new sdk.Client({ name: 'ts-sdk-2-proxy', version: '2.0.0' },
                                { capabilities: {}, versionNegotiation: { mode: 'auto' } });
  const inbox = updates();
  client.setNotificationHandler('notifications/resources/updated', inbox.handler);
  let transport;
  if (testCase.transport === 'stdio') {
    const { StdioClientTransport } = load('@modelcontextprotocol/client/stdio');
    transport = new StdioClientTransport(proxyCommand());
  } else {
    transport = new sdk.StreamableHTTPClientTransport(new URL(`${config.url}/mcp`));
  }
  await bounded(client.connect(transport), 'connect');
  try {
    const outcome = await exercise(client);
    let subscription;
    const watched = await watch(client, inbox, outcome.resource, async () => {
      subscription = await bounded(client.listen({ resourceSubscriptions: [outcome.resource] }),
                                   'subscriptions/listen');
      return subscription.honoredFilter.resourceSubscriptions ?? [];
    });
    await subscription.close();
    return { era: client.getNegotiatedProtocolVersion() ?? null, ...outcome, ...watched };
  } finally {
    await client.close();
  }
}

async function runTasks() {
  const sdk = load('@modelcontextprotocol/client');
  const { StdioClientTransport } = load('@modelcontextprotocol/client/stdio');
  const tasks = await import(path.join(modules, '@modelcontextprotocol', 'ext-tasks', 'dist', 'client', 'index.js'));
  const client = new sdk.Client({ name: 'ts-sdk-2-tasks', version: '2.0.0' }, { capabilities: {} });
  await bounded(client.connect(new StdioClientTransport(proxyCommand(config.tasks_proxy))), 'connect');
  const session = tasks.createTaskSessionFromClient(client, { endpointId: 'mcp-kit-proxy' });
  try {
    const declared = (await bounded(client.listTools(), 'tools/list')).tools; // the session learns taskSupport
    const execution = await bounded(session.callTool('job', { n: 2 }, { task: { preference: 'require' } }),
                                    'tools/call as a task');
    const opened = textOf(await bounded(client.callTool({ name: 'open_gate', arguments: {} }), 'open_gate'));
    const { outcome } = await bounded(execution.settle(), 'settling the task');
    const result = tasks.resultFromTaskOutcome(outcome);
    return {
      era: client.getNegotiatedProtocolVersion?.() ?? null,
      capabilities: client.getServerCapabilities()?.tasks ?? null,
      declared: declared.map((tool) => [tool.name, tool.execution?.taskSupport ?? null]),
      opened, status: outcome.status, taskId: outcome.task?.taskId ?? null, text: textOf(result),
      related: result._meta?.['io.modelcontextprotocol/related-task']?.taskId ?? null,
    };
  } finally {
    await session.close();
    await client.close();
  }
}

async function main() {
  for (const testCase of config.cases) {
    let report;
    const strayBefore = stray.length;
    try {
      const run = { v1: runV1, v2: runV2, tasks: runTasks }[testCase.sdk];
      const outcome = await run(testCase);
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
