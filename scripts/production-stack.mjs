#!/usr/bin/env node
// A native production stack in one command: PostgreSQL (the distribution's server, a cluster of its own in DIR), the
// schema of both databases, Temporal Server's frontend, history, matching and internal worker as separate processes,
// then the namespace and the search attributes (docs/production.md says what runs and why).
//
//   node scripts/production-stack.mjs up DIR [--port N]   start, detached; the last line of stdout is TEMPORAL_ADDRESS=…
//                                    [--upgrade]         (also: take DIR of the previous minor version to this one)
//   node scripts/production-stack.mjs status DIR          one JSON line per process (postgres: with the database URL)
//   node scripts/production-stack.mjs kill DIR ROLE       SIGKILL ROLE (postgres: an immediate shutdown), start it
//                                                         again, return once it serves
//   node scripts/production-stack.mjs down DIR            stop everything
//
// Needs `npm install` first (the provisioning code is the package's), PostgreSQL 12 or newer, and Go for the first
// build of Temporal Server (cached, like the CLI, in DURABLE_AGENT_CACHE_DIR). Progress goes to stderr.
import path from 'node:path';
import { ExitCode, StackError } from './production-stack/errors.mjs';
import { ROLES } from './production-stack/state.mjs';

const COMMANDS = ['up', 'status', 'kill', 'down'];
const USAGE =
  'usage: node scripts/production-stack.mjs up DIR [--port N] [--upgrade] | status DIR | kill DIR ROLE | down DIR';

function parse(argv) {
  const [command, ...rest] = argv;
  if (!COMMANDS.includes(command)) {
    const said = command === undefined ? 'no command given' : `unknown command ${JSON.stringify(command)}`;
    throw new StackError(`${said}: one of ${COMMANDS.join(', ')}.\n${USAGE}`, ExitCode.Usage);
  }
  const positional = [];
  let port;
  let upgrade = false;
  for (let index = 0; index < rest.length; index++) {
    const argument = rest[index];
    if (command === 'up' && (argument === '--port' || argument.startsWith('--port='))) {
      const value = argument === '--port' ? rest[++index] : argument.slice('--port='.length);
      port = Number(value);
      if (!Number.isInteger(port) || port < 1 || port > 65_535) {
        throw new StackError(`--port takes a TCP port, 1-65535, not ${JSON.stringify(value)}.`, ExitCode.Usage);
      }
    } else if (command === 'up' && argument === '--upgrade') {
      upgrade = true;
    } else if (argument.startsWith('--')) {
      throw new StackError(`unknown option ${argument} for ${command}.\n${USAGE}`, ExitCode.Usage);
    } else {
      positional.push(argument);
    }
  }
  const expected = command === 'kill' ? 2 : 1;
  if (positional.length === 0)
    throw new StackError(`${command} needs DIR, the stack's directory.\n${USAGE}`, ExitCode.Usage);
  const [dir, role] = positional;
  if (command === 'kill' && !ROLES.includes(role)) {
    const said = role === undefined ? 'kill needs a ROLE' : `unknown role ${JSON.stringify(role)}`;
    throw new StackError(`${said}: one of ${ROLES.join(', ')}.`, ExitCode.Usage);
  }
  if (positional.length > expected) {
    throw new StackError(
      `too many arguments for ${command}: ${positional.slice(expected).join(' ')}.\n${USAGE}`,
      ExitCode.Usage,
    );
  }
  return { command, dir: path.resolve(dir), role, port, upgrade };
}

async function main() {
  const { command, dir, role, port, upgrade } = parse(process.argv.slice(2));
  // Loaded only now, so a mistyped command line is answered without loading the SDK.
  const stack = await import('./production-stack/stack.mjs');
  if (command === 'up') await stack.up(dir, { port, upgrade });
  if (command === 'status') return await stack.status(dir);
  if (command === 'kill') await stack.kill(dir, role);
  if (command === 'down') await stack.down(dir);
  return ExitCode.Ok;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    if (error instanceof StackError) {
      process.stderr.write(`production-stack: ${error.message}\n`);
      process.exitCode = error.exitCode;
      return;
    }
    // Provisioning's own errors (ServerUnavailableError: no Go, …) say what to do already; keep their exit code.
    process.stderr.write(`production-stack: ${error.message}\n`);
    process.exitCode = typeof error.exitCode === 'number' ? error.exitCode : ExitCode.Failure;
  },
);
