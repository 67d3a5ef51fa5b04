import type { StreamEvent } from '../workflows/stream-events.js';

/**
 * The answer's text as a consumer shows it, applying the stream's rule: the text of a round is what its latest attempt
 * wrote; a retried model call (a new attempt) replaces that round's partial text rather than appending to it.
 */
export class AnswerText {
  private readonly rounds = new Map<string, { attempt: number; text: string }>();

  /**
   * Apply one event. Returns what changed: `append` (add `text` to what is shown for the round) or `replace` (show
   * `text` instead of the round's text so far); `undefined` when the event does not change any text.
   */
  apply(event: StreamEvent): { change: 'append' | 'replace'; turn: number; round: number; text: string } | undefined {
    if (event.type !== 'model_attempt_started' && event.type !== 'text_delta') return undefined;
    const key = `${event.turn}/${event.round}`;
    const current = this.rounds.get(key);
    if (current && event.attempt < current.attempt) return undefined;
    if (!current || event.attempt > current.attempt) {
      const hadText = current !== undefined && current.text !== '';
      const text = event.type === 'text_delta' ? event.text : '';
      this.rounds.set(key, { attempt: event.attempt, text });
      if (hadText) return { change: 'replace', turn: event.turn, round: event.round, text };
      return text === '' ? undefined : { change: 'append', turn: event.turn, round: event.round, text };
    }
    if (event.type !== 'text_delta') return undefined;
    current.text += event.text;
    return { change: 'append', turn: event.turn, round: event.round, text: event.text };
  }

  /** The text of one round (its latest attempt). */
  round(turn: number, round: number): string {
    return this.rounds.get(`${turn}/${round}`)?.text ?? '';
  }

  /** All text of a turn, its rounds in order. */
  turn(turn: number): string {
    return [...this.rounds.entries()]
      .filter(([key]) => key.startsWith(`${turn}/`))
      .sort(([a], [b]) => Number(a.split('/')[1]) - Number(b.split('/')[1]))
      .map(([, value]) => value.text)
      .join('');
  }
}
