import { defineSignal, getExternalWorkflowHandle, log, patched, setHandler } from '@temporalio/workflow';
import type { InputAnswer } from '../shared/input-messages.js';
import type { InputRequests, TurnQuestion } from './input-requests.js';
import type { WaitClock } from './turn-context.js';

/**
 * A sub-agent's questions (a 2026-07-28 server's `input_required`, a task's questions) are asked in the conversation
 * that called it, as its approvals are (./sub-agent-approvals.ts): the child signals each question it starts waiting
 * on to the parent, which holds a copy among its own pending inputs (so its status, stream and chat show it, and its
 * `answerInput` answers it, checked against the question's schema) and signals the answer back. A question the child
 * settles itself (its wait ran out, it was answered on the child's own id) is signalled too, so the parent drops its
 * copy.
 */

/** Child → parent: a question waits for a person, or (with `settled`) was settled in the child. */
export interface SubAgentInputReport {
  /** The parent's tool call that runs the sub-agent. */
  parentCallId: string;
  question?: TurnQuestion;
  settled?: Pick<InputAnswer, 'requestId' | 'action' | 'by'>;
}

export const subAgentInputSignal = defineSignal<[SubAgentInputReport]>('subAgentInput');
/** What the Web UI shows for it. */
export const SUB_AGENT_INPUT_DESCRIPTION =
  "Internal: a sub-agent's child workflow reports a question waiting for a person, or settled. Do not send.";
/** Parent → child: a person's answer, under the child's own request id. */
export const subAgentAnswerSignal = defineSignal<[InputAnswer]>('subAgentAnswer');

/** The child's signal to its parent is a command recorded children never emitted. */
export const FORWARD_SUB_AGENT_INPUTS = 'forward-sub-agent-inputs';

/** The parent's copy of a child's request id: the call that runs the sub-agent, then the child's own id. */
function parentCopyId(parentCallId: string, childRequestId: string): string {
  return `${parentCallId}/${childRequestId}`;
}

/** The conversation's side, with its `subAgentInput` handler set (it emits no command). */
export function linkSubAgentInputs(inputs: InputRequests, turn: () => number | undefined): SubAgentInputLinks {
  const links = new SubAgentInputLinks(inputs, turn);
  setHandler(subAgentInputSignal, (report) => links.receive(report), { description: SUB_AGENT_INPUT_DESCRIPTION });
  return links;
}

/** The conversation's side: the sub-agents' questions it holds as pending inputs, by the call that runs each agent. */
export class SubAgentInputLinks {
  private readonly copies = new Map<string, Set<string>>();
  private readonly clocks = new Map<string, WaitClock>();

  constructor(
    private readonly inputs: InputRequests,
    private readonly turn: () => number | undefined,
  ) {}

  open(parentCallId: string, clock: WaitClock): void {
    this.copies.set(parentCallId, new Set());
    this.clocks.set(parentCallId, clock);
  }

  /** The `subAgentInput` signal. */
  receive(report: SubAgentInputReport): void {
    const copies = this.copies.get(report.parentCallId);
    const turn = this.turn();
    if (copies === undefined || turn === undefined) return;
    if (report.question !== undefined) {
      const requestId = parentCopyId(report.parentCallId, report.question.requestId);
      if (copies.has(requestId) || this.inputs.answerOf(requestId) !== undefined) return;
      copies.add(requestId);
      this.clocks.get(report.parentCallId)?.pause();
      this.inputs.ask({ ...report.question, requestId, callId: report.parentCallId }, turn);
    } else if (report.settled !== undefined) {
      const requestId = parentCopyId(report.parentCallId, report.settled.requestId);
      if (!this.release(report.parentCallId, requestId)) return;
      const { action, by } = report.settled;
      this.inputs.answer({ requestId, action, by: by ?? 'sub-agent' });
    }
  }

  /** Whether a person answered one of this sub-agent's questions here, and it is not yet forwarded. */
  hasAnswered(parentCallId: string): boolean {
    return [...(this.copies.get(parentCallId) ?? [])].some((id) => this.inputs.answerOf(id) !== undefined);
  }

  /** The answers given here for the sub-agent, under the child's request ids, to signal to it. */
  takeAnswered(parentCallId: string): InputAnswer[] {
    const answers: InputAnswer[] = [];
    for (const requestId of [...(this.copies.get(parentCallId) ?? [])]) {
      const answer = this.inputs.answerOf(requestId);
      if (answer === undefined) continue;
      this.release(parentCallId, requestId);
      answers.push({ ...answer, requestId: requestId.slice(parentCallId.length + 1) });
    }
    return answers;
  }

  /** The sub-agent's call ended: a question of it still waiting here is over. */
  close(parentCallId: string, by: string): void {
    for (const requestId of [...(this.copies.get(parentCallId) ?? [])]) {
      this.release(parentCallId, requestId);
      if (this.inputs.answerOf(requestId) === undefined) this.inputs.answer({ requestId, action: 'cancel', by });
    }
    this.copies.delete(parentCallId);
    this.clocks.delete(parentCallId);
  }

  private release(parentCallId: string, requestId: string): boolean {
    if (!this.copies.get(parentCallId)?.delete(requestId)) return false;
    this.clocks.get(parentCallId)?.resume();
    return true;
  }
}

/** The child's side: its own questions, each that starts waiting and each it settles itself reported to its parent. */
export class ForwardedInputs implements Pick<InputRequests, 'ask' | 'answerOf' | 'answer'> {
  constructor(
    private readonly inputs: InputRequests,
    private readonly parent: { workflowId: string; callId: string },
  ) {}

  ask(question: TurnQuestion, turn: number): void {
    const fresh = !this.isPending(question.requestId) && this.inputs.answerOf(question.requestId) === undefined;
    this.inputs.ask(question, turn);
    // Asked only here: a recorded child that never asked replays without the marker.
    if (fresh && patched(FORWARD_SUB_AGENT_INPUTS)) this.report({ question });
  }

  answerOf(requestId: string): InputAnswer | undefined {
    return this.inputs.answerOf(requestId);
  }

  /** An answer given in the child (its own `answerInput`, a wait that ran out): the parent drops its copy. */
  answer(answer: InputAnswer): InputAnswer {
    const pending = this.isPending(answer.requestId);
    const settled = this.inputs.answer(answer);
    if (pending && patched(FORWARD_SUB_AGENT_INPUTS)) {
      const { requestId, action, by } = settled;
      this.report({ settled: { requestId, action, ...(by !== undefined ? { by } : {}) } });
    }
    return settled;
  }

  /** The `subAgentAnswer` signal: the person's answer, given in the parent conversation. */
  answeredInParent(answer: InputAnswer): void {
    if (this.isPending(answer.requestId)) this.inputs.answer(answer);
  }

  private isPending(requestId: string): boolean {
    return this.inputs.list().some((request) => request.requestId === requestId);
  }

  private report(report: Omit<SubAgentInputReport, 'parentCallId'>): void {
    getExternalWorkflowHandle(this.parent.workflowId)
      .signal(subAgentInputSignal, { parentCallId: this.parent.callId, ...report })
      .catch((error: unknown) => log.warn('the calling conversation did not get a question report', { error }));
  }
}
