import type { StreamEvent } from '../../workflows/stream-events.js';
import { ChatApprovals } from './approvals.js';
import { ChatInputs } from './inputs.js';
import type { InlineQuestionsOptions } from './inline-questions.js';

export interface ChatQuestionsOptions extends Omit<InlineQuestionsOptions, 'blocked'> {
  /** The session's own prompt, shown again once no question is left. */
  prompt: string;
}

/**
 * What the chat asks the person during a turn: tool calls to approve ({@link ChatApprovals}) and MCP servers'
 * questions ({@link ChatInputs}), one question at a time on the one prompt, each asked where it came from.
 */
export class ChatQuestions {
  private readonly approvals: ChatApprovals;
  private readonly inputs: ChatInputs;

  constructor(options: ChatQuestionsOptions) {
    const { prompt, done, ...shared } = options;
    const finished = () => {
      options.rl.setPrompt(prompt);
      done();
    };
    this.approvals = new ChatApprovals({
      ...shared,
      blocked: () => this.inputs.open,
      done: () => (this.inputs.waiting ? this.inputs.resume() : finished()),
    });
    this.inputs = new ChatInputs({
      ...shared,
      blocked: () => this.approvals.open,
      done: () => (this.approvals.waiting ? this.approvals.resume() : finished()),
    });
  }

  /** The line answers the open question: true when it did. */
  answer(line: string): boolean {
    return this.approvals.answer(line) || this.inputs.answer(line);
  }

  /**
   * Show a turn's event with `write` (above the open question, if any), and ask or stop asking what it brings;
   * `breakPrompt` ends the session's prompt line before a new question.
   */
  show(event: StreamEvent, write: () => void, breakPrompt: () => void): void {
    if (event.type === 'approval_decided') this.approvals.decided(event);
    if (event.type === 'input_answered') this.inputs.answered(event.requestId);
    this.approvals.interject(() => this.inputs.interject(write));
    if (event.type === 'approval_requested') {
      breakPrompt();
      this.approvals.requested(event);
    }
    if (event.type === 'input_requested') {
      breakPrompt();
      this.inputs.requested(event);
    }
  }

  close(): void {
    this.approvals.close();
    this.inputs.close();
  }
}
