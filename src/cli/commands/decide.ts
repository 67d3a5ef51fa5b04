import { Argument, Command, InvalidArgumentError, Option } from '@commander-js/extra-typings';
import type { ApprovalDecision } from '../../client/index.js';
import { parseJsonObject } from '../arguments.js';
import { jsonOption, printJson, requiredConversationOption, withClient } from '../client-command.js';
import { loginName } from '../login-name.js';

/** `durable-agent approve` and `durable-agent deny`: decide a tool call that waits for a person (docs/approvals.md). */

const callIdArgument = () => new Argument('<call-id>', 'the waiting call (durable-agent approvals lists them)');

const byOption = () =>
  new Option('--by <name>', 'who decides, kept in the workflow history').default(loginName(), 'your login name');

export function approveCommand() {
  return new Command('approve')
    .description(
      'Approve a tool call that waits for a person: it runs now, with the model’s arguments or with --arguments. ' +
        'An unknown call id exits 3, a call decided already 6, arguments that do not match the tool’s schema 2; ' +
        'nothing changes then.',
    )
    .addArgument(callIdArgument())
    .addOption(requiredConversationOption())
    .addOption(
      new Option(
        '--arguments <json>',
        'run it with these arguments instead (a JSON object, checked against the schema)',
      ).argParser(parseJsonObject),
    )
    .addOption(new Option('--always', 'allow this tool for the rest of the conversation without asking again'))
    .addOption(
      new Option(
        '--max-cost-usd <usd>',
        'for a model call a cost budget holds (TOOL budget:…): raise that limit to this many US dollars',
      ).argParser(parseUsd),
    )
    .addOption(byOption())
    .addOption(jsonOption())
    .action(async (callId, options) => {
      const decision = await withClient((client) =>
        client.approve(options.conversation, callId, {
          ...(options.arguments !== undefined ? { arguments: options.arguments } : {}),
          ...(options.always ? { always: true } : {}),
          ...(options.maxCostUsd !== undefined ? { maxCostUsd: options.maxCostUsd } : {}),
          ...(options.by ? { by: options.by } : {}),
        }),
      );
      report(options.conversation, decision, options.json === true);
    });
}

export function denyCommand() {
  return new Command('deny')
    .description(
      'Deny a tool call that waits for a person: it does not run, and the model gets the reason so it can adapt. ' +
        'Refused like approve.',
    )
    .addArgument(callIdArgument())
    .addOption(requiredConversationOption())
    .addOption(new Option('--reason <text>', 'why, for the model (required)').makeOptionMandatory())
    .addOption(byOption())
    .addOption(jsonOption())
    .action(async (callId, options) => {
      const decision = await withClient((client) =>
        client.deny(options.conversation, callId, {
          reason: options.reason,
          ...(options.by ? { by: options.by } : {}),
        }),
      );
      report(options.conversation, decision, options.json === true);
    });
}

/** `--max-cost-usd`: a positive number of US dollars. */
function parseUsd(value: string): number {
  const usd = Number(value);
  if (value.trim() === '' || !Number.isFinite(usd) || usd <= 0) {
    throw new InvalidArgumentError(`expected a number of US dollars above 0, such as 5 or 2.50; got "${value}".`);
  }
  return usd;
}

function report(conversationId: string, decision: ApprovalDecision, json: boolean): void {
  if (json) return printJson({ conversationId, ...decision });
  const { callId, tool } = decision;
  if (decision.decision === 'denied') {
    console.log(`Denied ${tool} (${callId}) in conversation ${conversationId}; the model gets the reason.`);
    return;
  }
  if (decision.tool.startsWith('budget:')) {
    const raised = decision.maxCostUsd !== undefined ? `, with the limit raised to $${decision.maxCostUsd}` : ' once';
    console.log(
      `Approved the model call ${tool} held (${callId}) in conversation ${conversationId}: it goes on${raised}.`,
    );
    return;
  }
  const edited = decision.arguments !== undefined ? ' with the edited arguments' : '';
  const always = decision.always ? `; ${tool} is allowed for the rest of the conversation` : '';
  console.log(`Approved ${tool} (${callId}) in conversation ${conversationId}: it runs now${edited}${always}.`);
}
