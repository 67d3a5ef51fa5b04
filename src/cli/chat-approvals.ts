import type readline from 'node:readline';
import type { ApprovalDecision, DurableAgentClient, PendingApproval } from '../client/index.js';
import { errorMessage } from '../shared/errors.js';
import { shorten } from './format.js';
import type { Spinner } from './spinner.js';

/** How much of a call's arguments the question shows (compact JSON). */
const QUESTION_ARGUMENTS_CHARS = 400;

export interface ChatApprovalsOptions {
  client: DurableAgentClient;
  conversationId: string;
  rl: readline.Interface;
  /** Where the questions are (the session's terminal). */
  output: NodeJS.WritableStream;
  spinner: Spinner;
  errors: NodeJS.WritableStream;
  /** Ask (the input is a terminal); otherwise only say how to decide from elsewhere. */
  interactive: boolean;
  /** Who decides here, for the audit trail. */
  by: string | undefined;
  /** The prompt to go back to once no question is left. */
  prompt: string;
  /** Another question (a server's, for input) holds the prompt: wait for `resume()`. */
  blocked?: () => boolean;
  /** No question is open any more: the session shows its own prompt again if it was at it. */
  done: () => void;
}

/** A question being asked: which call, and whether the answer wanted now is the denial's reason. */
interface Asking {
  approval: PendingApproval;
  wantsReason: boolean;
}

/**
 * The chat's side of tool calls that wait for a person (docs/approvals.md): each call is asked about inline, one at a
 * time, in the order the conversation asked (`Allow crm__update_field {...}? [y/n/a]`: y approves, n denies and asks
 * for the reason the model gets, a approves for the rest of the conversation). A call decided elsewhere (another
 * terminal, `durable-agent approve`, a web page) is not asked about again, or stops being asked about.
 */
export class ChatApprovals {
  private readonly queue: PendingApproval[] = [];
  private asking: Asking | undefined;
  private scheduled = false;
  /** A decision made here is being sent: the next question waits for it. */
  private deciding = false;
  private closed = false;

  constructor(private readonly options: ChatApprovalsOptions) {}

  /** A call waits: ask about it once the calls before it are decided. */
  requested(approval: PendingApproval): void {
    const { options } = this;
    if (!options.interactive) {
      const { conversationId } = options;
      options.spinner.print(
        `  ? ${approval.tool} waits for approval: durable-agent approve -c ${conversationId} ${approval.callId}` +
          ` (or deny … --reason '…')`,
      );
      return;
    }
    if (this.asking?.approval.callId === approval.callId || this.queue.some((q) => q.callId === approval.callId))
      return;
    this.queue.push(approval);
    this.schedule();
  }

  /** A call was decided (here or elsewhere): it is no longer asked about. */
  decided(decision: ApprovalDecision): void {
    const index = this.queue.findIndex((queued) => queued.callId === decision.callId);
    if (index >= 0) this.queue.splice(index, 1);
    if (this.asking?.approval.callId !== decision.callId) return;
    // The question's line gives way to the decision's (which the turn's view prints next).
    this.asking = undefined;
    this.clearLine();
    this.schedule();
  }

  /** Output while a question is open goes above it; the question (and what was typed) is shown again after. */
  interject(write: () => void): void {
    if (this.asking === undefined) return write();
    this.clearLine();
    write();
    // The spinner would draw over the question.
    this.options.spinner.stop();
    this.options.rl.prompt(true);
  }

  /** The line answers the open question: true when it did (the session does nothing more with it). */
  answer(line: string): boolean {
    const asking = this.asking;
    if (asking === undefined) return false;
    const text = line.trim();
    if (text === '/exit' || text === '/quit') return false;
    if (asking.wantsReason) {
      if (text === '') this.ask('A denial needs a reason (the model gets it): ');
      else void this.decide(asking.approval, { reason: text });
      return true;
    }
    const choice = text.toLowerCase();
    if (choice === 'y' || choice === 'yes') void this.decide(asking.approval, {});
    else if (choice === 'a' || choice === 'always') void this.decide(asking.approval, { always: true });
    else if (choice === 'n' || choice === 'no') {
      asking.wantsReason = true;
      this.ask('Why not? (the model gets your reason): ');
    } else this.ask(`Please answer y (allow), n (deny) or a (allow always). ${question(asking.approval)}`);
    return true;
  }

  /** True while a question waits for its answer. */
  get open(): boolean {
    return this.asking !== undefined;
  }

  /** True while a call waits here, asked or not yet asked. */
  get waiting(): boolean {
    return this.asking !== undefined || this.queue.length > 0 || this.deciding;
  }

  /** The other questions are done: ask what waits here. */
  resume(): void {
    this.schedule();
  }

  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.asking = undefined;
  }

  /**
   * Ask the next question after the events that came with this one: a call decided in the same batch is never asked
   * about, and a decision's line is printed before the next question.
   */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.asking === undefined && !this.deciding) this.next();
    });
  }

  private next(): void {
    if (this.closed || this.options.blocked?.()) return;
    const approval = this.queue.shift();
    if (approval === undefined) {
      this.options.rl.setPrompt(this.options.prompt);
      this.options.done();
      return;
    }
    this.asking = { approval, wantsReason: false };
    this.ask(question(approval));
  }

  private clearLine(): void {
    this.options.output.write('\r\x1b[2K');
  }

  private ask(text: string): void {
    this.options.spinner.stop();
    this.options.rl.setPrompt(text);
    this.options.rl.prompt();
  }

  private async decide(approval: PendingApproval, decision: { always?: boolean; reason?: string }): Promise<void> {
    this.asking = undefined;
    this.deciding = true;
    const { client, conversationId, by } = this.options;
    const who = by !== undefined ? { by } : {};
    try {
      if (decision.reason !== undefined) {
        await client.deny(conversationId, approval.callId, { reason: decision.reason, ...who });
      } else {
        await client.approve(conversationId, approval.callId, { ...(decision.always ? { always: true } : {}), ...who });
      }
    } catch (error) {
      // Decided elsewhere first, or the turn was interrupted: the stream shows what happened.
      this.options.spinner.clear();
      this.options.errors.write(`Could not decide ${approval.tool} (${approval.callId}): ${errorMessage(error)}\n`);
    } finally {
      this.deciding = false;
    }
    this.next();
  }
}

/** The inline question about a call, with its arguments. */
export function question(approval: PendingApproval): string {
  const args = shorten(JSON.stringify(approval.arguments), QUESTION_ARGUMENTS_CHARS);
  return `Allow ${approval.tool} ${args}? [y/n/a] `;
}
