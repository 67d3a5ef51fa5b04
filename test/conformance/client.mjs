#!/usr/bin/env node
/**
 * The client under test of the MCP conformance suite's client scenarios: durable-agent as a user runs it, through
 * what its public API exports (`durable-agent/worker`) and its CLI. The suite starts a server per scenario, then runs this with the server's URL as the last
 * argument, the scenario in MCP_CONFORMANCE_SCENARIO and its data (client ids, keys) in MCP_CONFORMANCE_CONTEXT.
 *
 * - Every scenario: an `mcpServers` file naming the server, and the worker's `McpPool` listing its tools and calling
 *   each one (or the calls the suite's context names), answering a server's question by accepting an empty form.
 * - `authorization_code` scenarios: first `durable-agent mcp login` (the CLI, as a person runs it), its URL followed
 *   by a fetch-driven browser. When a call, or the login's own check of the login it just made, says a login is
 *   needed again (a 403 asking for another scope, an authorization server that changed), log in again and retry, at
 *   most three logins in all, as a person told to would.
 * - `client_credentials` scenarios: the worker authorizes itself from the file's keys; enterprise-managed ones
 *   (`enterprise_managed`) too, with the person's ID token from the context.
 *
 * Exits non-zero when the client gave up; the suite judges the scenario by what reached its servers.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
// The classes `durable-agent/worker` exports, from the built modules that define them: the entry point also loads the
// Temporal worker and client (half a second of CPU), which the suite would pay once per scenario for nothing used
// here. test/mcp/conformance.test.ts checks that they are the entry point's own.
import { loadMcpConfig } from '../../dist/worker/mcp/config.js';
import { McpAuthorizationRequiredError, McpProtocolError } from '../../dist/worker/mcp/errors.js';
import { FileTokenStore } from '../../dist/worker/mcp/oauth/token-store.js';
import { McpPool } from '../../dist/worker/mcp/pool.js';

const CLI = fileURLToPath(new URL('../../dist/cli/index.js', import.meta.url));
const SERVER = 'conformance';
const MAX_LOGINS = 3;
/** How the worker words "a person must log in (again)" (McpAuthorizationRequiredError). */
const LOGIN_ADVICE = /needs a person to authorize it/;
/** What a CIMD client publishes as its client id; the suite's authorization server accepts any HTTPS URL. */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

/** Enterprise-managed authorization (cross-app access): the person's ID token is the context's. */
const ENTERPRISE_SCENARIOS = ['auth/cross-app-access-complete-flow', 'auth/enterprise-managed-authorization'];

const serverUrl = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');

function oauthOf() {
  if (scenario === 'auth/client-credentials-basic') {
    return { grant: 'client_credentials', clientId: context.client_id, clientSecret: context.client_secret };
  }
  if (scenario === 'auth/client-credentials-jwt') {
    return {
      grant: 'client_credentials',
      clientId: context.client_id,
      privateKey: '${CONFORMANCE_PRIVATE_KEY}',
      ...(context.signing_algorithm && { signingAlgorithm: context.signing_algorithm }),
    };
  }
  if (ENTERPRISE_SCENARIOS.includes(scenario)) {
    return {
      grant: 'enterprise_managed',
      clientId: context.client_id,
      clientSecret: context.client_secret,
      // The suite's identity provider publishes incomplete OpenID metadata, so its token endpoint is given.
      identityProvider: {
        tokenEndpoint: context.idp_token_endpoint,
        clientId: context.idp_client_id,
        idToken: '${CONFORMANCE_ID_TOKEN}',
      },
    };
  }
  if (!scenario.startsWith('auth/')) return undefined;
  if (scenario === 'auth/basic-cimd') return { grant: 'authorization_code', clientMetadataUrl: CLIENT_METADATA_URL };
  if (context.client_id !== undefined) {
    return {
      grant: 'authorization_code',
      clientId: context.client_id,
      ...(context.client_secret && { clientSecret: context.client_secret }),
    };
  }
  return { grant: 'authorization_code' };
}

/** What a browser does with the authorization URL: follow the redirects to the CLI's loopback redirect URI. */
async function browse(start) {
  let url = start;
  for (let hop = 0; hop < 10; hop += 1) {
    const response = await fetch(url, { redirect: 'manual' });
    const location = response.headers.get('location');
    await response.body?.cancel();
    if (response.status < 300 || response.status >= 400 || location === null) return;
    url = new URL(location, url).href;
  }
}

/**
 * `durable-agent mcp login conformance`; resolves with `true` when it logged in, `'again'` when it failed saying a
 * person must log in (again), as its own check of the new login, made the way the worker uses it, may say.
 */
function login(configFile, tokenDirectory) {
  const child = spawn(process.execPath, [CLI, 'mcp', 'login', SERVER, '--mcp-config', configFile, '--no-browser'], {
    env: { ...process.env, DURABLE_AGENT_TOKEN_DIR: tokenDirectory },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let errors = '';
  let browsing;
  child.stdout.on('data', (chunk) => {
    output += chunk;
    process.stdout.write(chunk);
    const url = /^\s+(https?:\/\/\S+)$/m.exec(output)?.[1];
    if (url !== undefined && browsing === undefined) browsing = browse(url).catch((error) => console.error(error));
  });
  child.stderr.on('data', (chunk) => {
    errors += chunk;
    process.stderr.write(chunk);
  });
  return new Promise((resolve) =>
    child.on('close', (code) => resolve(code === 0 ? true : LOGIN_ADVICE.test(errors) ? 'again' : false)),
  );
}

/** Log in, and again while the login says a person must (at most MAX_LOGINS in all); resolves with whether it did. */
async function logIn(configFile, tokenDirectory, logins) {
  for (;;) {
    logins.count += 1;
    const outcome = await login(configFile, tokenDirectory);
    if (outcome !== 'again') return outcome;
    if (logins.count >= MAX_LOGINS) return false;
  }
}

/** Arguments a model might send: a value of the declared type for each required property (a default if given). */
function sampleArguments(schema) {
  const properties = schema?.properties ?? {};
  const sample = (property) => {
    if (property?.default !== undefined) return property.default;
    if (Array.isArray(property?.enum)) return property.enum[0];
    const type = Array.isArray(property?.type) ? property.type[0] : property?.type;
    if (type === 'number' || type === 'integer') return 2;
    if (type === 'boolean') return true;
    if (type === 'array') return [];
    if (type === 'object' || property?.$ref !== undefined) return sampleArguments(property);
    return 'sample';
  };
  return Object.fromEntries((schema?.required ?? []).map((name) => [name, sample(properties[name])]));
}

/**
 * The calls to make, as a model would: the suite's own when its context names them (values chosen to exercise the
 * scenario, such as header mirroring), else each tool once with sample arguments. `json-schema-2020-12-preservation`
 * asks the client to pass one tool's input schema, as the pool lists it, to the echo tool.
 */
function plannedCalls(tools) {
  if (Array.isArray(context.toolCalls)) {
    return context.toolCalls.map((call) => ({
      tool: tools.find((tool) => tool.originalName === call.name),
      arguments: call.arguments ?? {},
    }));
  }
  const echoed = tools.find((tool) => tool.originalName === 'json_schema_2020_12_tool');
  return tools.map((tool) => ({
    tool,
    arguments:
      tool.originalName === 'json_schema_echo' && echoed !== undefined
        ? { schema: echoed.inputSchema }
        : sampleArguments(tool.inputSchema),
  }));
}

async function useTools(pool) {
  const listing = await pool.listTools();
  // The pool reports a server it could not list by the reason's text, as the worker shows it to a person.
  if (listing.unavailable.length > 0) throw new Error(listing.unavailable[0].reason);
  for (const call of plannedCalls(listing.tools)) {
    if (call.tool === undefined) throw new Error('the suite names a tool the pool does not list');
    try {
      const result = await pool.callTool(call.tool, call.arguments, {
        onElicitation: () => Promise.resolve({ action: 'accept', content: {} }),
      });
      console.log(`${call.tool.originalName}:`, JSON.stringify(result.content));
    } catch (error) {
      // The worker hands a server's JSON-RPC error to the model as the tool's result, and the turn goes on.
      if (!(error instanceof McpProtocolError)) throw error;
      console.log(`${call.tool.originalName}: error result:`, error.message);
    }
  }
}

async function main() {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-conformance-'));
  const oauth = oauthOf();
  const configFile = path.join(directory, 'mcp.json');
  writeFileSync(configFile, JSON.stringify({ mcpServers: { [SERVER]: { url: serverUrl, ...(oauth && { oauth }) } } }));
  const environment = {
    CONFORMANCE_PRIVATE_KEY: context.private_key_pem ?? '',
    CONFORMANCE_ID_TOKEN: context.idp_id_token ?? '',
  };
  Object.assign(process.env, environment);
  const tokenDirectory = path.join(directory, 'tokens');
  const logins = { count: 0 };
  try {
    if (oauth?.grant === 'authorization_code' && !(await logIn(configFile, tokenDirectory, logins))) return 1;
    for (;;) {
      const pool = new McpPool(loadMcpConfig(configFile), {
        tokenStore: new FileTokenStore(tokenDirectory),
        clientInfo: { name: 'durable-agent-conformance', version: '0' },
        outageBackoffMs: 0,
      });
      try {
        await useTools(pool);
        return 0;
      } catch (error) {
        console.error(String(error));
        const needsLogin = error instanceof McpAuthorizationRequiredError || LOGIN_ADVICE.test(String(error));
        if (!needsLogin || oauth?.grant !== 'authorization_code' || logins.count >= MAX_LOGINS) return 1;
      } finally {
        await pool.close();
      }
      if (!(await logIn(configFile, tokenDirectory, logins))) return 1;
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

process.exitCode = await main();
