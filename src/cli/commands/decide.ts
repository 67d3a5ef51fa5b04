import { Argument, Command, Option } from '@commander-js/extra-typings';
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
    .addOption(byOption())
    .addOption(jsonOption())
    .action(async (callId, options) => {
      const decision = await withClient((client) =>
        client.approve(options.conversation, callId, {
          ...(options.arguments !== undefined ? { arguments: options.arguments } : {}),
          ...(options.always ? { always: true } : {}),
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

function report(conversationId: string, decision: ApprovalDecision, json: boolean): void {
  if (json) return printJson({ conversationId, ...decision });
  const { callId, tool } = decision;
  if (decision.decision === 'denied') {
    console.log(`Denied ${tool} (${callId}) in conversation ${conversationId}; the model gets the reason.`);
    return;
  }
  const edited = decision.arguments !== undefined ? ' with the edited arguments' : '';
  const always = decision.always ? `; ${tool} is allowed for the rest of the conversation` : '';
  console.log(`Approved ${tool} (${callId}) in conversation ${conversationId}: it runs now${edited}${always}.`);
}
