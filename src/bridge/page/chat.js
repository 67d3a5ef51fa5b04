// @ts-check
import { ConversationStream, post, randomId } from './chat-connection.js';
import { element } from './chat-dom.js';
import { TranscriptView } from './chat-view.js';

/**
 * The chat page of `durable-agent serve`: pick or start a conversation, send messages, watch the answer stream in,
 * decide pending tool calls and answer input requests. The URL fragment names the conversation
 * (`#conversation=ID`) and may carry a token (`#token=...`, never sent to the server in the URL): the page keeps the
 * token for this tab only, sends it as `Authorization: Bearer` on writes and as `access_token` on the event stream
 * (browsers cannot set headers on EventSource), and takes it out of the address bar.
 */

const RECENT_KEY = 'durable-agent.recent';
const TOKEN_KEY = 'durable-agent.token';
const MAX_RECENT = 8;
const MAX_SENT = 50;

const byId = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
const picker = /** @type {HTMLInputElement} */ (byId('conversation'));
const message = /** @type {HTMLTextAreaElement} */ (byId('message'));
const sendButton = /** @type {HTMLButtonElement} */ (byId('send'));
const status = byId('status');
const sendError = byId('send-error');

const fragment = new URLSearchParams(location.hash.slice(1));
const token = fragment.get('token') ?? sessionStorage.getItem(TOKEN_KEY) ?? undefined;
if (token) sessionStorage.setItem(TOKEN_KEY, token);

/** @type {{ id: string, stream: ConversationStream, sent: Map<string, string> } | undefined} */
let current;
/** The id of the message being written: sent again with the same id after a failure, so it is queued once. */
let draftId = /** @type {string | undefined} */ (undefined);

/** @param {string} state @param {string} [detail] */
function setStatus(state, detail) {
  status.dataset.state = state;
  const where = current ? `Conversation ${current.id}: ` : '';
  const words = { connected: 'connected', reconnecting: 'reconnecting…', ended: 'ended', error: 'error' };
  status.textContent = `${where}${words[/** @type {keyof typeof words} */ (state)] ?? state}${detail ? ` (${detail})` : ''}`;
  if (current) {
    status.dataset.reconnects = String(current.stream.reconnects);
    status.dataset.duplicates = String(current.stream.duplicates);
  }
  const writable = current !== undefined && state !== 'ended';
  message.disabled = !writable;
  sendButton.disabled = !writable;
}

/** The messages this tab sent to a conversation, by id: the page shows them above their turns. */
function sentMessages(/** @type {string} */ id) {
  const saved = sessionStorage.getItem(`durable-agent.sent.${id}`);
  return new Map(saved ? /** @type {Array<[string, string]>} */ (JSON.parse(saved)) : []);
}

function saveSent() {
  if (!current) return;
  const entries = [...current.sent].slice(-MAX_SENT);
  sessionStorage.setItem(`durable-agent.sent.${current.id}`, JSON.stringify(entries));
}

function openConversation(/** @type {string} */ id) {
  current?.stream.close();
  const transcript = byId('transcript');
  transcript.replaceChildren();
  byId('queued').replaceChildren();
  draftId = undefined;
  picker.value = id;
  const sent = sentMessages(id);
  const view = new TranscriptView(transcript, { sent, actions: cardActions(id) });
  const stream = new ConversationStream({
    conversationId: id,
    token,
    onEvent: (event) => {
      if (event.type === 'turn_started') {
        document.querySelector(`#queued [data-message-id="${CSS.escape(event.messageId)}"]`)?.remove();
      }
      view.apply(event);
      // Events flow: connected (after a `stream_error`, the upstream recovered).
      setStatus('connected');
    },
    onStatus: setStatus,
  });
  current = { id, stream, sent };
  history.replaceState(null, '', `#conversation=${encodeURIComponent(id)}`);
  remember(id);
  setStatus('connecting');
  stream.open();
  message.focus();
}

/** @param {string} id @returns {import('./chat-cards.js').CardActions} */
function cardActions(id) {
  return {
    approve: (callId) => post(id, `approvals/${encodeURIComponent(callId)}`, { decision: 'approve' }, token),
    deny: (callId, reason) => post(id, `approvals/${encodeURIComponent(callId)}`, { decision: 'deny', reason }, token),
    answer: (requestId, action, content) =>
      post(id, `inputs/${encodeURIComponent(requestId)}`, content ? { action, content } : { action }, token),
  };
}

async function send() {
  const content = message.value.trim();
  if (!current || content === '') return;
  const { id } = current;
  draftId ??= randomId();
  const messageId = draftId;
  current.sent.set(messageId, content);
  saveSent();
  sendButton.disabled = true;
  sendError.textContent = '';
  try {
    await post(id, 'messages', { content, id: messageId }, token);
    if (current?.id !== id) return;
    // What was typed while the message was on its way stays.
    if (message.value.trim() === content) message.value = '';
    draftId = undefined;
    const queued = element('p', 'user queued', content);
    queued.dataset.messageId = messageId;
    // The turn may have started already: its event removes the queued copy, and would have found none.
    if (!startedMessages().has(messageId)) byId('queued').append(queued);
  } catch (error) {
    sendError.textContent = error instanceof Error ? error.message : String(error);
  } finally {
    sendButton.disabled = message.disabled;
    message.focus();
  }
}

/** Ids of the messages whose turns are on the page. */
function startedMessages() {
  const turns = document.querySelectorAll('#transcript .turn');
  return new Set([...turns].map((node) => /** @type {HTMLElement} */ (node).dataset.messageId));
}

function remember(/** @type {string} */ id) {
  const recent = [id, ...readRecent().filter((other) => other !== id)].slice(0, MAX_RECENT);
  localStorage.setItem(RECENT_KEY, JSON.stringify(recent));
  showRecent(recent, id);
}

/** @param {string[]} recent @param {string | undefined} id */
function showRecent(recent, id) {
  const nav = byId('recent');
  nav.replaceChildren(
    ...recent.map((other) => {
      const link = /** @type {HTMLButtonElement} */ (element('button', other === id ? 'current' : '', other));
      link.type = 'button';
      link.addEventListener('click', () => openConversation(other));
      return link;
    }),
  );
}

/** @returns {string[]} */
function readRecent() {
  try {
    const recent = JSON.parse(localStorage.getItem(RECENT_KEY) ?? '[]');
    return Array.isArray(recent) ? recent.filter((id) => typeof id === 'string') : [];
  } catch {
    return [];
  }
}

byId('pick').addEventListener('submit', (event) => {
  event.preventDefault();
  const id = picker.value.trim();
  if (id !== '') openConversation(id);
});
byId('new').addEventListener('click', () => openConversation(`web-${randomId().slice(0, 8)}`));
byId('composer').addEventListener('submit', (event) => {
  event.preventDefault();
  void send();
});
message.addEventListener('keydown', (event) => {
  if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return;
  event.preventDefault();
  void send();
});
// A changed message is a new message: it gets a new id.
message.addEventListener('input', () => (draftId = undefined));

const initial = fragment.get('conversation');
if (initial) openConversation(initial);
else showRecent(readRecent(), undefined);
