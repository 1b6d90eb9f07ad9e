// A real OAuth 2.1 / OpenID authorization server for the tests: oidc-provider (certified), on 127.0.0.1.
//
//   node server.mjs            listens on 127.0.0.1, a free port; prints "READY <issuer>" on stdout once serving
//
// Configured the way an MCP deployment needs it: resource indicators (RFC 8707) with JWT access tokens
// (RFC 9068, typ at+jwt, aud = the resource), PKCE (S256, required for public clients), dynamic client
// registration (RFC 7591), refresh tokens (rotated for public clients), token introspection (RFC 7662)
// and revocation. There is no login page: the interaction step signs in the account named by the
// authorization request's `login_hint` (default "test-user") and consents to what was asked, so an HTTP
// client that follows redirects completes the flow headlessly. `login_hint=deny` refuses (access_denied).
//
// Test controls (loopback only, never part of a real deployment):
//   POST /_test/rotate-keys[?keep_previous=0]  new signing key first; the previous one stays published
//                                              unless keep_previous=0. Answers {"kids": [...]}
//   POST /_test/resources  {"resource", "format": "jwt"|"opaque", "scopes": [...], "ttl": s}
//                                              how tokens for one resource look (default: JWT, every scope)
//   GET  /_test/requests                       how often each path was requested, e.g. {"/jwks": 2}
//   GET  /_test/clients/<id>                   what a (dynamically registered) client registered with
//
// Static clients: `mcp-resource-server` / `resource-server-secret` (confidential; introspects tokens),
// `pre-registered-client` (public, native, loopback redirects on any port) and `mcp-facade` /
// `facade-upstream-secret` (confidential, redirects to http://127.0.0.1:<any port>/oauth/callback: an MCP
// server's OAuth facade signing its users in here).
//
//   OAUTH_TEST_MODE=upstream   an identity provider as teams have them: no dynamic client registration,
//                              so only the static clients exist (the facade's tests run it this way)
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import http from 'node:http';

import Provider from 'oidc-provider';

const MCP_SCOPES = (process.env.OAUTH_TEST_SCOPES || 'mcp:read mcp:write mcp:admin').split(/\s+/).filter(Boolean);
const ACCESS_TOKEN_TTL = Number(process.env.OAUTH_TEST_ACCESS_TOKEN_TTL || 600);
const UPSTREAM_MODE = process.env.OAUTH_TEST_MODE === 'upstream';

const resources = new Map(); // resource indicator -> {format, scopes, ttl}
const requestCounts = {};
let keys = [newSigningKey()];
let provider;
let handler;
let issuer;

function newSigningKey() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomUUID(), use: 'sig', alg: 'RS256' };
}

function buildProvider() {
  const instance = new Provider(issuer, {
    jwks: { keys },
    clients: [
      {
        client_id: 'mcp-resource-server',
        client_secret: 'resource-server-secret',
        grant_types: [],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'client_secret_basic',
      },
      {
        client_id: 'pre-registered-client',
        application_type: 'native',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: ['http://127.0.0.1/callback', 'http://localhost/callback'],
        token_endpoint_auth_method: 'none',
      },
      {
        client_id: 'mcp-facade',
        client_secret: 'facade-upstream-secret',
        application_type: 'native',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: ['http://127.0.0.1/oauth/callback'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    scopes: ['openid', 'offline_access', 'profile', 'email', ...MCP_SCOPES],
    claims: { openid: ['sub'], profile: ['preferred_username'], email: ['email'] },
    findAccount: async (_ctx, sub) => ({
      accountId: sub,
      claims: async () => ({ sub, preferred_username: sub, email: `${sub}@example.test` }),
    }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL,
      AuthorizationCode: 60,
      Grant: 3600,
      Interaction: 600,
      RefreshToken: 3600,
      Session: 3600,
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: !UPSTREAM_MODE },
      introspection: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, resource) => {
          const known = resources.get(resource) || {};
          const format = known.format || 'jwt';
          return {
            scope: (known.scopes || MCP_SCOPES).join(' '),
            audience: resource,
            accessTokenTTL: known.ttl || ACCESS_TOKEN_TTL,
            accessTokenFormat: format,
            ...(format === 'jwt' ? { jwt: { sign: { alg: 'RS256' } } } : {}),
          };
        },
      },
    },
  });
  instance.proxy = false;
  instance.on('server_error', (_ctx, error) => process.stderr.write(`server_error: ${error.stack}\n`));
  return instance;
}

function install(instance) {
  provider = instance;
  handler = instance.callback();
}

async function interact(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session } = details;
  let result;
  if (params.login_hint === 'deny') {
    result = { error: 'access_denied', error_description: 'the test user refused' };
  } else if (prompt.name === 'login') {
    result = { login: { accountId: params.login_hint || 'test-user' } };
  } else if (prompt.name === 'consent') {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  } else {
    result = { error: 'invalid_request', error_description: `unexpected prompt ${prompt.name}` };
  }
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : {};
}

function reply(res, status, body) {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}

async function control(req, res, url) {
  if (req.method === 'POST' && url.pathname === '/_test/rotate-keys') {
    const keepPrevious = url.searchParams.get('keep_previous') !== '0';
    keys = [newSigningKey(), ...(keepPrevious ? keys.slice(0, 1) : [])];
    install(buildProvider());
    return reply(res, 200, { kids: keys.map((k) => k.kid) });
  }
  if (req.method === 'POST' && url.pathname === '/_test/resources') {
    const body = await readJson(req);
    resources.set(body.resource, { format: body.format, scopes: body.scopes, ttl: body.ttl });
    return reply(res, 200, { ok: true });
  }
  if (req.method === 'GET' && url.pathname === '/_test/requests') {
    return reply(res, 200, requestCounts);
  }
  if (req.method === 'GET' && url.pathname.startsWith('/_test/clients/')) {
    const client = await provider.Client.find(decodeURIComponent(url.pathname.slice('/_test/clients/'.length)));
    return client ? reply(res, 200, client.metadata()) : reply(res, 404, { error: 'not_found' });
  }
  return reply(res, 404, { error: 'not_found' });
}

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, issuer);
  requestCounts[url.pathname] = (requestCounts[url.pathname] || 0) + 1;
  try {
    if (url.pathname.startsWith('/_test/')) return await control(req, res, url);
    if (url.pathname.startsWith('/interaction/')) return await interact(req, res);
    return handler(req, res);
  } catch (error) {
    process.stderr.write(`error serving ${req.method} ${url.pathname}: ${error.stack}\n`);
    if (!res.headersSent) reply(res, 500, { error: 'server_error' });
  }
});

server.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
  issuer = `http://127.0.0.1:${server.address().port}`;
  install(buildProvider());
  process.stdout.write(`READY ${issuer}\n`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => process.exit(0));
}
