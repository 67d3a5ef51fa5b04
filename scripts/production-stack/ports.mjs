// The ports of the stack: chosen free at the first `up` and recorded in state.json. PostgreSQL's and the frontend's
// are kept for the life of DIR (the database URL and TEMPORAL_ADDRESS that users configured); the others, which only
// the processes of the stack use, are chosen again when something else took them meanwhile.
import net from 'node:net';
import { StackError } from './errors.mjs';
import { TEMPORAL_SERVICES } from './state.mjs';

/** Whether 127.0.0.1:port can be bound right now (nothing listens there, nor on 0.0.0.0). */
export async function isPortFree(port) {
  return await new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Whether something accepts connections on 127.0.0.1:port. */
export async function isPortOpen(port) {
  return await new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    const finish = (open) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(1_000, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/**
 * Temporal Server stores each process's membership port in a smallint column (cluster_membership.rpc_port): a port
 * from the OS's ephemeral range (32768 and up on Linux) makes the process exit at start. Every port of the stack is
 * therefore drawn below that range, and checked free.
 */
const LOWEST_PORT = 10_000;
const HIGHEST_PORT = 32_767;

async function freePort(taken) {
  for (let attempt = 0; attempt < 1_000; attempt++) {
    const port = LOWEST_PORT + Math.floor(Math.random() * (HIGHEST_PORT - LOWEST_PORT + 1));
    if (!taken.has(port) && (await isPortFree(port))) {
      taken.add(port);
      return port;
    }
  }
  throw new StackError(`No free port between ${LOWEST_PORT} and ${HIGHEST_PORT} on 127.0.0.1 after 1,000 tries.`);
}

const KINDS = { frontend: ['grpc', 'membership', 'http', 'metrics'] };
const kindsOf = (role) => KINDS[role] ?? ['grpc', 'membership', 'metrics'];

/**
 * The ports for this `up`: those recorded (`previous`), with any that is busy now chosen again, except PostgreSQL's
 * and the frontend's gRPC port, which must stay: for those a busy port is an error naming it and what to do.
 * `frontendPort` (from `--port`) is the frontend's gRPC port on the first `up`.
 */
export async function choosePorts(previous, { frontendPort, postgresPort }) {
  const taken = new Set();
  const keep = async (port, what, advice) => {
    if (!(await isPortFree(port))) {
      throw new StackError(`Port ${port} (${what}) is in use by another process: ${advice}`);
    }
    taken.add(port);
    return port;
  };
  const postgres =
    postgresPort === undefined
      ? await freePort(taken)
      : await keep(
          postgresPort,
          "PostgreSQL's, fixed when DIR was set up",
          'stop what listens there, then run `up` again.',
        );
  const ports = { postgres };
  for (const role of Object.keys(TEMPORAL_SERVICES)) {
    ports[role] = {};
    for (const kind of kindsOf(role)) {
      const recorded =
        role === 'frontend' && kind === 'grpc' ? (previous?.frontend?.grpc ?? frontendPort) : previous?.[role]?.[kind];
      if (role === 'frontend' && kind === 'grpc' && recorded !== undefined) {
        const fixed = previous?.frontend?.grpc !== undefined;
        ports[role][kind] = await keep(
          recorded,
          fixed ? "the frontend's gRPC port, TEMPORAL_ADDRESS of this DIR" : 'asked for with --port',
          fixed
            ? 'stop what listens there, then run `up` again (TEMPORAL_ADDRESS stays the same for the life of DIR).'
            : 'stop what listens there, or choose another port with --port.',
        );
      } else if (
        recorded !== undefined &&
        recorded <= HIGHEST_PORT &&
        !taken.has(recorded) &&
        (await isPortFree(recorded))
      ) {
        taken.add(recorded);
        ports[role][kind] = recorded;
      } else {
        ports[role][kind] = await freePort(taken);
      }
    }
  }
  return ports;
}
