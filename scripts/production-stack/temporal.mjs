// Temporal Server's services as separate processes, one config file each (they differ only in the metrics port), and
// the checks that say a service serves: its gRPC health service answers SERVING (history only once it owns its
// shards), and for the frontend a GetSystemInfo as a worker makes first.
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import yaml from 'js-yaml';
import { Connection } from '@temporalio/client';
import { POSTGRES_USER } from './postgres.mjs';
import { TEMPORAL_SERVICES } from './state.mjs';

/**
 * Shards a workflow's history is spread over, fixed for the life of the cluster (docs/production.md, "Sizes"). Four
 * is the least that still exercises shard ownership moving between history processes.
 */
export const NUM_HISTORY_SHARDS = 4;

/** The gRPC health service name each role reports SERVING under (the server's own constants). */
const HEALTH_SERVICE = {
  frontend: 'temporal.api.workflowservice.v1.WorkflowService',
  history: 'temporal.api.workflowservice.v1.HistoryService',
  matching: 'temporal.api.workflowservice.v1.MatchingService',
  'internal-worker': 'temporal.api.workflowservice.v1.WorkerService',
};

/** The config file of one role: the same persistence and cluster for all, its own ports. */
export function renderConfig(role, { ports, postgres, dynamicConfigFile }) {
  const datastore = (databaseName, maxConns) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `127.0.0.1:${postgres.port}`,
      connectProtocol: 'tcp',
      user: POSTGRES_USER,
      password: postgres.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const frontendAddress = `127.0.0.1:${ports.frontend.grpc}`;
  const services = Object.fromEntries(
    Object.entries(TEMPORAL_SERVICES).map(([name, service]) => [
      service,
      {
        rpc: {
          grpcPort: ports[name].grpc,
          membershipPort: ports[name].membership,
          bindOnIP: '127.0.0.1',
          ...(name === 'frontend' ? { httpPort: ports.frontend.http } : {}),
        },
      },
    ]),
  );
  const config = {
    log: { stdout: true, level: 'info' },
    persistence: {
      defaultStore: 'postgres-default',
      // SQL visibility: `durable-agent list` and the Web UI query it with the search attributes.
      visibilityStore: 'postgres-visibility',
      numHistoryShards: NUM_HISTORY_SHARDS,
      datastores: {
        'postgres-default': datastore('temporal', 20),
        'postgres-visibility': datastore('temporal_visibility', 10),
      },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      metrics: {
        prometheus: { framework: 'tally', timerType: 'histogram', listenAddress: `127.0.0.1:${ports[role].metrics}` },
      },
    },
    services,
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: frontendAddress },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    // The internal worker (schedules, batch operations, namespace deletion) reaches the cluster here.
    publicClient: { hostPort: frontendAddress },
    dynamicConfigClient: { filepath: dynamicConfigFile, pollInterval: '10s' },
  };
  return `# Written by scripts/production-stack.mjs on every \`up\`; edit the script, not this file.\n${yaml.dump(config, { lineWidth: 120 })}`;
}

export function writeConfig(paths, role, context) {
  writeFileSync(paths.configOf(role), renderConfig(role, context), { mode: 0o600 });
}

/** The command line of one role; its config file path is also how /proc tells our process from another. */
export function serviceArgs(paths, role) {
  return ['--config-file', paths.configOf(role), '--allow-no-auth', 'start', '--service', TEMPORAL_SERVICES[role]];
}

/**
 * Resolves once `role` answers SERVING on its gRPC port (the frontend: and GetSystemInfo). Rejects when `isRunning()`
 * turns false (the process died: its log says why) or after `timeoutMs`.
 */
export async function waitUntilServing(role, ports, { isRunning, timeoutMs = 120_000 }) {
  const address = `127.0.0.1:${ports[role].grpc}`;
  const deadline = Date.now() + timeoutMs;
  const connection = Connection.lazy({ address, interceptors: [] });
  let lastAnswer = 'no answer yet';
  try {
    for (;;) {
      if (!isRunning()) throw new Error(`the ${role} process exited before it served`);
      try {
        const attemptDeadline = Date.now() + 2_000;
        const { status } = await connection.withDeadline(attemptDeadline, () =>
          connection.healthService.check({ service: HEALTH_SERVICE[role] }),
        );
        if (status === 1) {
          if (role !== 'frontend') return;
          await connection.withDeadline(attemptDeadline, () => connection.workflowService.getSystemInfo({}));
          return;
        }
        lastAnswer = `health status ${status}`;
      } catch (error) {
        lastAnswer = error.details || error.message;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `${role} on ${address} did not serve within ${timeoutMs / 1000} s (last answer: ${lastAnswer})`,
        );
      }
      await sleep(200);
    }
  } finally {
    await connection.close();
  }
}
