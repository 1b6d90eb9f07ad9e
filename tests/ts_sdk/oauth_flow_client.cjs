// The TypeScript SDK 1.x OAuth client (`OAuthClientProvider`, `auth`, StreamableHTTPClientTransport)
// through an mcp_kit server's OAuth facade: dynamic registration, the authorization request, a scoped
// tool, step-up on 403 insufficient_scope, and a refresh, with the test playing the browser.
//
//   node oauth_flow_client.cjs MCP_URL NODE_MODULES_DIR [BACKEND_ORIGIN ...]
//
// Talks to the test as JSON lines: `{"authorize": URL}` on stdout whenever the SDK redirects the user
// agent; the test's browser follows it (consent, the upstream sign-in) and writes back the URL the flow
// ended at (this client's redirect URI with `code`, `state` and `iss`) as one line on stdin. The script
// then checks `state` and `iss` and hands the code to `transport.finishAuth`. At the end it prints
// `{"report": {...}}`: each tool's answer, the tokens' history, the requests it made.
//
// With BACKEND_ORIGINs, every request to MCP_URL's origin goes to the next backend in turn (three server
// processes behind one public URL, as a round-robin balancer would spread them), so each step of the
// flow lands on another process.
//
// The SDK answers 403 insufficient_scope by trying a refresh first, which cannot widen a grant (RFC 6749
// section 6), and then gives up ("Server returned 403 after trying upscoping"). So this provider, like an
// application would, withholds its refresh token from `auth()` while a step-up is due: the SDK then
// starts a new authorization with the scopes the server named.
'use strict';

const readline = require('node:readline');

const [mcpUrl, modules, ...backends] = process.argv.slice(2);
const load = (name) => require(require.resolve(name, { paths: [modules] }));
const { Client } = load('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = load('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { auth, UnauthorizedError } = load('@modelcontextprotocol/sdk/client/auth.js');

const REDIRECT_URL = 'http://127.0.0.1:33421/callback';
const publicOrigin = new URL(mcpUrl).origin;
const requests = [];
const bodies = []; // every answer's body and Location (but the standalone GET stream's), for the test to search
const reading = [];
let turn = 0;

const lines = readline.createInterface({ input: process.stdin });
const waiting = [];
const arrived = [];
lines.on('line', (line) => (waiting.length ? waiting.shift()(line) : arrived.push(line)));
const nextLine = () => new Promise((resolve) => (arrived.length ? resolve(arrived.shift()) : waiting.push(resolve)));
const say = (message) => process.stdout.write(JSON.stringify(message) + '\n');

class TestProvider {
  constructor() {
    this.client = undefined;
    this.saved = undefined;
    this.verifier = undefined;
    this.expectedState = undefined;
    this.landed = undefined;
    this.stepUpDue = false;
    this.history = []; // every token response the SDK saved, in order
    this.redirects = 0;
  }

  get redirectUrl() { return REDIRECT_URL; }

  get clientMetadata() {
    return { client_name: 'ts-sdk-client', redirect_uris: [REDIRECT_URL], token_endpoint_auth_method: 'none',
             grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] };
  }

  state() {
    this.expectedState = `ts-${Math.random().toString(36).slice(2)}`;
    return this.expectedState;
  }

  clientInformation() { return this.client; }
  saveClientInformation(information) { this.client = information; }

  tokens() {
    if (this.saved && this.stepUpDue) {
      const { refresh_token: _withheld, ...rest } = this.saved;
      return rest;
    }
    return this.saved;
  }

  saveTokens(tokens) {
    this.saved = tokens;
    this.stepUpDue = false;
    this.history.push({ access_token: tokens.access_token, refresh_token: tokens.refresh_token, scope: tokens.scope });
  }

  async redirectToAuthorization(url) {
    this.redirects += 1;
    say({ authorize: url.toString() });
    this.landed = await nextLine();
  }

  saveCodeVerifier(verifier) { this.verifier = verifier; }
  codeVerifier() { return this.verifier; }

  // The code of the redirect the browser came back with, once its state and issuer are checked.
  code(issuer) {
    const landed = new URL(this.landed);
    this.landed = undefined;
    const error = landed.searchParams.get('error');
    if (error) throw new Error(`the authorization failed: ${error} ${landed.searchParams.get('error_description')}`);
    if (landed.searchParams.get('state') !== this.expectedState) throw new Error('the state does not match');
    if (landed.searchParams.get('iss') !== issuer) throw new Error(`unexpected iss ${landed.searchParams.get('iss')}`);
    return landed.searchParams.get('code');
  }
}

const provider = new TestProvider();

async function spreadingFetch(input, init) {
  let url = new URL(input instanceof Request ? input.url : String(input));
  let target = null;
  if (backends.length && url.origin === publicOrigin) {
    target = backends[turn++ % backends.length];
    url = new URL(target + url.pathname + url.search);
  }
  const response = await fetch(url, input instanceof Request ? new Request(url, input) : init);
  const wwwAuthenticate = response.headers.get('www-authenticate') || '';
  if (response.status === 403 && wwwAuthenticate.includes('insufficient_scope')) provider.stepUpDue = true;
  const method = init?.method ?? 'GET';
  requests.push({ method, path: url.pathname, backend: target, status: response.status });
  if (response.headers.get('location')) bodies.push(response.headers.get('location'));
  if (!(method === 'GET' && url.pathname === new URL(mcpUrl).pathname)) {
    reading.push(response.clone().text().then((text) => bodies.push(text), () => {}));
  }
  return response;
}

function newTransport() {
  return new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider, fetch: spreadingFetch });
}

// Runs `step`; when the SDK stopped for a browser leg, finishes it and runs `step` again.
async function authorizing(transport, issuer, step) {
  try {
    return await step();
  } catch (error) {
    if (!(error instanceof UnauthorizedError) || provider.landed === undefined) throw error;
    await transport.finishAuth(provider.code(issuer));
    return await step();
  }
}

const textOf = (result) => {
  if (result.isError) throw new Error(`tool error: ${JSON.stringify(result.content)}`);
  const text = result.content[0].text;
  try { return JSON.parse(text); } catch { return text; }
};

async function main() {
  const issuer = publicOrigin;
  let client = new Client({ name: 'ts-sdk-oauth', version: '1.0.0' });
  let transport = newTransport();
  try {
    await client.connect(transport);
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    await transport.finishAuth(provider.code(issuer));
    client = new Client({ name: 'ts-sdk-oauth', version: '1.0.0' });
    transport = newTransport();
    await client.connect(transport);
  }
  const report = { registered: provider.client?.client_id, calls: {} };
  report.calls.whoami = textOf(await client.callTool({ name: 'whoami', arguments: {} }));
  report.calls.write_note = textOf(await authorizing(transport, issuer,
    () => client.callTool({ name: 'write_note', arguments: { name: 'ts-note' } })));
  report.calls.after_step_up = textOf(await client.callTool({ name: 'whoami', arguments: {} }));
  // The refresh: the SDK's `auth()` with stored tokens that have a refresh token posts the refresh grant.
  const beforeRefresh = provider.saved;
  const refreshed = await auth(provider, { serverUrl: mcpUrl, fetchFn: spreadingFetch });
  report.refresh = { result: refreshed, rotated: provider.saved.refresh_token !== beforeRefresh.refresh_token,
                     new_access: provider.saved.access_token !== beforeRefresh.access_token };
  report.calls.after_refresh = textOf(await client.callTool({ name: 'whoami', arguments: {} }));
  report.calls.upstream_user = textOf(await client.callTool({ name: 'upstream_user', arguments: {} }));
  await client.close();
  report.redirects = provider.redirects;
  report.tokens = provider.history;
  report.requests = requests;
  await Promise.allSettled(reading);
  report.bodies = bodies;
  say({ report });
}

main().then(() => process.exit(0), (error) => {
  say({ fatal: String(error?.stack ?? error), requests });
  process.exit(1);
});
