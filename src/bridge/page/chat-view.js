// @ts-check
import { approvalCard, decideApprovalCard, inputCard, answerInputCard } from './chat-cards.js';
import { element } from './chat-dom.js';

/**
 * The transcript on the page, built from the conversation's events. Everything a model, a tool or a person wrote goes
 * in as text (`textContent`, never HTML). Each round shows the text of its latest attempt only: a retried model call
 * replaces what its earlier attempt had written (docs/streaming.md, "Retries replace, never append").
 */

/** Pretty JSON when the text is JSON, the text itself otherwise (a preview cut in the middle is not JSON). */
function pretty(/** @type {string} */ text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export class TranscriptView {
  /**
   * @param {HTMLElement} root
   * @param {{ sent: Map<string, string>, actions: import('./chat-cards.js').CardActions }} options
   */
  constructor(root, options) {
    this.root = root;
    this.sent = options.sent;
    this.actions = options.actions;
    /** @type {Map<number, { node: HTMLElement, body: HTMLElement, text: boolean }>} */
    this.turns = new Map();
    /** @type {Map<string, { attempt: number, text: string, node: HTMLElement }>} */
    this.rounds = new Map();
    /** @type {Map<string, HTMLElement>} */
    this.cards = new Map();
  }

  /** @param {any} event */
  apply(event) {
    const turn = this.turn(event.turn, event.type === 'turn_started' ? event.messageId : undefined);
    switch (event.type) {
      case 'model_attempt_started':
      case 'text_delta':
        return this.text(turn, event);
      case 'servers_unavailable':
        for (const { server, reason } of event.servers) {
          turn.body.append(element('p', 'notice', `${server} is unavailable: ${reason}`));
        }
        return;
      case 'tool_call_started':
        return void this.toolCall(turn, event.toolCallId, event.name).start(event);
      case 'tool_call_finished':
        return void this.toolCall(turn, event.toolCallId, event.name).finish(event);
      case 'approval_requested':
        this.toolState(event.callId, 'waiting for approval');
        return this.sameArguments(
          this.card(turn, `approval:${event.callId}`, () => approvalCard(event, this.actions), event.callId),
        );
      case 'approval_decided':
        if (event.decision === 'approved') this.toolState(event.callId, 'running…');
        return decideApprovalCard(
          this.card(turn, `approval:${event.callId}`, () => approvalCard(event), event.callId),
          event,
        );
      case 'input_requested':
        return this.card(turn, `input:${event.requestId}`, () => inputCard(event, this.actions));
      case 'input_answered':
        return answerInputCard(
          this.card(turn, `input:${event.requestId}`, () => inputCard(event)),
          event,
        );
      case 'turn_finished':
        return this.finish(turn, event);
    }
  }

  /** The turn's section, made when first seen (a stream that starts mid-turn has no `turn_started`). */
  turn(/** @type {number} */ number, /** @type {string | undefined} */ messageId) {
    let turn = this.turns.get(number);
    if (turn) return turn;
    const node = element('section', 'turn');
    node.dataset.turn = String(number);
    if (messageId !== undefined) node.dataset.messageId = messageId;
    const content = messageId === undefined ? undefined : this.sent.get(messageId);
    const user = element('p', 'user', content ?? `Turn ${number}: a message sent from elsewhere`);
    if (content === undefined) user.classList.add('elsewhere');
    const body = element('div', 'assistant');
    node.append(user, body);
    this.root.append(node);
    turn = { node, body, text: false };
    this.turns.set(number, turn);
    node.scrollIntoView({ block: 'end' });
    return turn;
  }

  /** @param {{ body: HTMLElement, text: boolean }} turn @param {any} event */
  text(turn, event) {
    const key = `${event.turn}/${event.round}`;
    let round = this.rounds.get(key);
    if (round && event.attempt < round.attempt) return;
    if (!round) {
      round = { attempt: event.attempt, text: '', node: element('p', 'text') };
      round.node.dataset.round = String(event.round);
      turn.body.append(round.node);
      this.rounds.set(key, round);
    }
    if (event.attempt > round.attempt) {
      round.attempt = event.attempt;
      round.text = '';
    }
    if (event.type === 'text_delta') round.text += event.text;
    round.node.textContent = round.text;
    round.node.dataset.attempt = String(round.attempt);
    if (round.text !== '') turn.text = true;
  }

  /** @param {{ body: HTMLElement }} turn @param {string} id @param {string} name */
  toolCall(turn, id, name) {
    const key = `tool:${id}`;
    const node = this.card(turn, key, () => {
      const card = element('div', 'tool-call running');
      card.dataset.toolCallId = id;
      const head = element('p', 'tool-head');
      head.append(element('span', 'tool-name', name), element('span', 'tool-state', 'running…'));
      card.append(head);
      return card;
    });
    const state = /** @type {HTMLElement} */ (node.querySelector('.tool-state'));
    return {
      start(/** @type {any} */ event) {
        node.append(element('pre', 'tool-arguments', pretty(event.arguments)));
      },
      finish(/** @type {any} */ event) {
        node.classList.remove('running');
        node.classList.add(event.outcome === 'ok' ? 'ok' : 'failed');
        state.textContent = `${event.outcome} · ${event.durationMs} ms`;
        node.append(element('pre', 'tool-preview', pretty(event.preview)));
      },
    };
  }

  /**
   * A card of the turn, made once by `make`: inside the card of the tool call `callId` when there is one (an approval
   * belongs to its call), else at the end of the turn.
   * @param {{ body: HTMLElement }} turn @param {string} key @param {() => HTMLElement} make @param {string} [callId]
   */
  card(turn, key, make, callId) {
    let node = this.cards.get(key);
    if (!node) {
      node = make();
      (this.cards.get(`tool:${callId}`) ?? turn.body).append(node);
      this.cards.set(key, node);
    }
    return node;
  }

  /** An approval card inside its tool call's card shows the arguments once, unless the call's were cut. */
  sameArguments(/** @type {HTMLElement} */ card) {
    const own = card.querySelector('.approval-arguments');
    const call = card.closest('.tool-call')?.querySelector('.tool-arguments');
    if (own && call && own.textContent === call.textContent) own.remove();
  }

  /** @param {string} callId @param {string} text */
  toolState(callId, text) {
    const state = this.cards.get(`tool:${callId}`)?.querySelector('.tool-state');
    if (state) state.textContent = text;
  }

  /** @param {{ node: HTMLElement, body: HTMLElement, text: boolean }} turn @param {any} event */
  finish(turn, event) {
    // The stream may have left the text out (a long turn carried across runs); the answer is in the result.
    if (!turn.text && event.answer) turn.body.append(element('p', 'text', event.answer));
    const parts = [event.stopReason];
    if (event.toolCalls) parts.push(`${event.toolCalls} tool call${event.toolCalls === 1 ? '' : 's'}`);
    if (event.usage) parts.push(`${event.usage.totalTokens} tokens`);
    if (typeof event.durationMs === 'number') parts.push(`${(event.durationMs / 1000).toFixed(1)} s`);
    if (event.error?.message) parts.push(event.error.message);
    const end = element(
      'p',
      `turn-end ${event.stopReason === 'completed' ? 'completed' : 'stopped'}`,
      parts.join(' · '),
    );
    end.dataset.stopReason = event.stopReason;
    turn.body.append(end);
    turn.node.classList.add('finished');
  }
}
