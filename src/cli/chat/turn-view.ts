import { AnswerText } from '../../client/answer-text.js';
import type { TurnResult } from '../../workflows/definitions.js';
import type { StreamEvent } from '../../workflows/stream-events.js';
import {
  describeDecision,
  describeStop,
  describeUnavailableServer,
  formatDuration,
  shortArguments,
  shorten,
} from '../format.js';
import { describeInputAnswer, describeInputRequest } from './input-fields.js';
import type { Spinner } from './spinner.js';

/**
 * One turn as the chat shows it: its tool calls as they start and finish, the answer's text as it is written, a
 * spinner while the model works, and at the end whatever of the answer the stream did not show, and why the turn
 * stopped when it did not simply complete.
 */
export class TurnView {
  private readonly live: LiveText;
  /** The turn's text as the stream has written it so far. */
  private readonly text = new AnswerText();
  private done = false;

  constructor(
    private readonly spinner: Spinner,
    output: NodeJS.WritableStream,
  ) {
    this.live = new LiveText(spinner, output);
  }

  /** The turn's result was shown: later events of the turn change nothing. */
  get finished(): boolean {
    return this.done;
  }

  /** Show one event of this turn from the conversation's event stream (its end comes to {@link finish}). */
  show(event: StreamEvent): void {
    if (this.done) return;
    const { spinner, live } = this;
    switch (event.type) {
      case 'turn_started':
        spinner.update('thinking…');
        break;
      case 'model_attempt_started':
      case 'text_delta':
        this.showText(event);
        break;
      case 'servers_unavailable':
        live.break();
        for (const server of event.servers) spinner.print(`  ! ${describeUnavailableServer(server)}`);
        break;
      case 'tool_call_started':
        live.break();
        spinner.print(`  → ${event.name} ${shortArguments(event.arguments)}`);
        spinner.update(`running ${event.name}…`);
        break;
      case 'tool_call_finished': {
        live.break();
        const took = ` ${formatDuration(event.durationMs)}`;
        if (event.outcome === 'ok') spinner.print(`  ✓ ${event.name}${took}`);
        else spinner.print(`  ✗ ${event.name}${took} ${event.outcome}: ${shorten(event.preview, 100)}`);
        break;
      }
      case 'approval_requested':
        live.break();
        spinner.update(`waiting for approval of ${event.tool}…`);
        break;
      case 'approval_decided':
        live.break();
        spinner.print(describeDecision(event));
        if (event.decision === 'approved') spinner.update(`running ${event.tool}…`);
        break;
      case 'input_requested':
        live.break();
        for (const line of describeInputRequest(event)) spinner.print(line);
        spinner.update(`waiting for an answer to ${event.tool}…`);
        break;
      case 'input_answered':
        live.break();
        spinner.print(describeInputAnswer(event));
        spinner.update('the tool goes on…');
        break;
    }
  }

  /** A model attempt's start and its text, by the stream's rule: a retried call replaces its round's text. */
  private showText(event: Extract<StreamEvent, { type: 'model_attempt_started' | 'text_delta' }>): void {
    // A retry in the middle of the text says so in the text itself; the spinner would wipe the line.
    if (event.type === 'model_attempt_started' && !this.live.streaming) {
      const retry = event.attempt > 1 ? ` · attempt ${event.attempt}` : '';
      this.spinner.update(`thinking… (round ${event.round}${retry})`);
    }
    const change = this.text.apply(event);
    if (change) this.live.write(change.round, change.text, change.change === 'replace');
  }

  /**
   * Show the end of the turn: the rest of the answer when the stream showed only its start (or none of it), then why
   * it stopped. Once; the result can come from the stream or from `ask`, whichever is first.
   */
  finish(result: TurnResult): void {
    if (this.done) return;
    this.done = true;
    this.spinner.stop();
    this.live.finish(result.answer);
    const stop = describeStop(result);
    if (stop !== undefined) this.spinner.print(`(${stop})`);
  }

  /** Stop drawing (the session is leaving). */
  close(): void {
    this.spinner.stop();
    this.live.break();
  }
}

/** The answer's text printed as it streams in; a retried model call prints its round again. */
class LiveText {
  private started = false;
  private round: number | undefined;
  /** The text shown for the current round (its latest attempt's). */
  private text = '';

  constructor(
    private readonly spinner: Spinner,
    private readonly output: NodeJS.WritableStream,
  ) {}

  /** True while a line of streamed text is open (nothing else has been written after it). */
  get streaming(): boolean {
    return this.started;
  }

  write(round: number, text: string, replace: boolean): void {
    if (!this.started) {
      this.spinner.stop();
      this.output.write('agent> ');
      this.started = true;
    } else if (replace || round !== this.round) {
      this.output.write(replace ? '\n(the model call was retried)\nagent> ' : '\nagent> ');
    }
    if (replace || round !== this.round) this.text = '';
    this.round = round;
    this.text += text;
    this.output.write(text);
  }

  /** End the streamed line before other output. */
  break(): void {
    if (this.started) this.output.write('\n');
    this.started = false;
    this.round = undefined;
    this.text = '';
  }

  /**
   * End the streamed text with the whole `answer`: what the open line is missing, or the answer on a line of its own
   * when the open line is not its start (the stream fell behind, or showed an earlier round).
   */
  finish(answer: string | null): void {
    const shown = this.started ? this.text : undefined;
    if (answer !== null && shown !== undefined && shown !== '' && answer.startsWith(shown)) {
      this.output.write(answer.slice(shown.length));
      this.break();
      return;
    }
    this.break();
    if (answer !== null) this.spinner.print(`agent> ${answer}`);
  }
}
