import { Command } from '@commander-js/extra-typings';
import type { DeploymentReport, DeploymentVersionReport } from '../../client/deployments.js';
import { ExitCode } from '../../shared/exit-codes.js';
import { CliError, jsonOption, printJson, withClient } from '../client-command.js';
import { printTable } from '../table.js';

const GRPC_NOT_FOUND = 5;

const DESCRIPTION =
  "List the Worker Deployments' versions (current, ramping, draining, drained), the open conversations pinned to " +
  'each, and whether its workers can be shut down (docs/upgrading.md).';

/** What a version's last column says: whether its workers can stop, and if not, what they still wait for. */
function verdict(version: DeploymentVersionReport): string {
  if (version.canShutDown) return 'yes: no open conversation is pinned to it';
  if (version.status === 'current' || version.status === 'ramping') return 'no: new conversations go to it';
  if (version.openPinnedConversations > 0) {
    return `no: ${version.openPinnedConversations} open conversation(s) still pinned to it`;
  }
  return 'not yet: Temporal has not confirmed the drain';
}

function printReport(report: DeploymentReport): void {
  console.log(`Worker Deployment ${report.deploymentName}`);
  if (report.versions.length === 0) {
    console.log('  No versions.');
    return;
  }
  printTable(
    ['  BUILD ID', 'STATUS', 'PINNED OPEN', 'SHUT DOWN?'],
    report.versions.map((version) => [
      `  ${version.buildId}`,
      version.rampPercentage === undefined ? version.status : `${version.status} ${version.rampPercentage}%`,
      String(version.openPinnedConversations),
      verdict(version),
    ]),
  );
}

export function deploymentsCommand() {
  return new Command('deployments')
    .description(DESCRIPTION)
    .option('--name <deployment>', 'only this Worker Deployment (default: all in the namespace)')
    .addOption(jsonOption())
    .action(async (options) => {
      const reports = await withClient(async ({ client }) => {
        const { describeDeployment, listDeploymentNames } = await import('../../client/deployments.js');
        const names = options.name === undefined ? await listDeploymentNames(client) : [options.name];
        try {
          return await Promise.all(names.map((name) => describeDeployment(client, name)));
        } catch (error) {
          if ((error as { code?: unknown }).code !== GRPC_NOT_FOUND || options.name === undefined) throw error;
          throw new CliError(
            `No Worker Deployment named ${options.name} in namespace ${client.options.namespace}: a deployment exists ` +
              'once a worker with DURABLE_AGENT_DEPLOYMENT_NAME has polled. `durable-agent deployments` lists them all.',
            ExitCode.NotFound,
            { cause: error },
          );
        }
      });
      if (options.json) return printJson(reports);
      if (reports.length === 0) {
        console.log(
          'No Worker Deployments: no worker has run with Worker Versioning on (DURABLE_AGENT_DEPLOYMENT_NAME).',
        );
        return;
      }
      reports.forEach((report, index) => {
        if (index > 0) console.log('');
        printReport(report);
      });
    });
}
