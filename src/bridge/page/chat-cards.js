// @ts-check
import { element } from './chat-dom.js';

/**
 * The cards that wait for a person: a tool call that needs approval, and a question an MCP server asked (an input
 * request). Their buttons call the bridge; the card changes when the decision comes back on the stream, so every
 * page open on the conversation shows the same outcome.
 *
 * @typedef {{
 *   approve(callId: string): Promise<unknown>,
 *   deny(callId: string, reason: string): Promise<unknown>,
 *   answer(requestId: string, action: 'accept' | 'decline' | 'cancel', content?: Record<string, unknown>): Promise<unknown>,
 * }} CardActions
 */

/** @param {string} label @param {string} className @param {() => void} onClick */
function button(label, className, onClick) {
  const node = /** @type {HTMLButtonElement} */ (element('button', className, label));
  node.type = 'button';
  node.addEventListener('click', onClick);
  return node;
}

/**
 * Run a card's action: its buttons are disabled meanwhile, an error is shown on the card and the buttons come back.
 * @param {HTMLElement} card @param {() => Promise<unknown>} action
 */
async function act(card, action) {
  const error = /** @type {HTMLElement} */ (card.querySelector('.card-error'));
  const buttons = [...card.querySelectorAll('button, input, select, textarea')];
  for (const node of buttons) /** @type {HTMLButtonElement} */ (node).disabled = true;
  error.textContent = '';
  try {
    await action();
    // The decision may have come on the stream before this answer: a decided card is not marked sent.
    if (card.classList.contains('pending')) card.classList.add('sent');
  } catch (failure) {
    error.textContent = failure instanceof Error ? failure.message : String(failure);
    for (const node of buttons) /** @type {HTMLButtonElement} */ (node).disabled = false;
  }
}

/**
 * A pending tool call: its tool, why it needs approval, its arguments; Approve, or Deny with a reason.
 * @param {any} event @param {CardActions} [actions] none for a card first seen decided
 */
export function approvalCard(event, actions) {
  const card = element('div', 'approval pending');
  card.dataset.callId = event.callId;
  card.append(element('p', 'card-head', `Approval needed: ${event.tool}`));
  if (event.reason) card.append(element('p', 'card-detail', event.reason));
  if (event.arguments) card.append(element('pre', 'approval-arguments', JSON.stringify(event.arguments, null, 2)));
  if (event.expiresAt) card.append(element('p', 'card-detail', `Decided by a timeout at ${event.expiresAt}.`));
  if (actions) {
    const buttons = element('div', 'card-actions');
    const deny = element('div', 'deny-form');
    deny.hidden = true;
    const reason = /** @type {HTMLInputElement} */ (element('input', 'deny-reason'));
    reason.placeholder = 'Why not? The model reads this and can adapt.';
    reason.setAttribute('aria-label', 'Reason for denying');
    const sendDenial = () => {
      const text = reason.value.trim();
      if (text === '') return void reason.focus();
      void act(card, () => actions.deny(event.callId, text));
    };
    reason.addEventListener('keydown', (key) => key.key === 'Enter' && sendDenial());
    deny.append(reason, button('Send denial', 'deny-send', sendDenial));
    buttons.append(
      button('Approve', 'approve', () => void act(card, () => actions.approve(event.callId))),
      button('Deny…', 'deny', () => {
        deny.hidden = false;
        reason.focus();
      }),
    );
    card.append(buttons, deny);
  }
  card.append(element('p', 'card-error'));
  return card;
}

/** @param {HTMLElement} card @param {any} event */
export function decideApprovalCard(card, event) {
  card.classList.remove('pending', 'sent');
  card.classList.add(event.decision);
  for (const node of card.querySelectorAll('.card-actions, .deny-form')) node.remove();
  const who = event.by ? ` by ${event.by}` : '';
  let text = `${event.decision === 'approved' ? 'Approved' : 'Denied'}${who}`;
  if (event.reason) text += `: ${event.reason}`;
  if (event.always) text += ' (allowed for the rest of the conversation)';
  card.append(element('p', 'card-outcome', text));
}

/**
 * A question an MCP server asked: a form built from the requested schema (form mode) or a link to open (url mode).
 * @param {any} event @param {CardActions} [actions]
 */
export function inputCard(event, actions) {
  const card = element('div', 'input-request pending');
  card.dataset.requestId = event.requestId;
  card.append(
    element('p', 'card-head', `${event.server ?? 'A tool'} asks`),
    element('p', 'card-message', event.message),
  );
  if (actions && event.mode === 'url') card.append(urlPart(event, card, actions));
  else if (actions) card.append(formPart(event, card, actions));
  card.append(element('p', 'card-error'));
  return card;
}

/** @param {any} event @param {HTMLElement} card @param {CardActions} actions */
function urlPart(event, card, actions) {
  const part = element('div', 'card-actions');
  const url = safeUrl(event.url);
  if (url) {
    const link = /** @type {HTMLAnchorElement} */ (element('a', 'input-url', url));
    link.href = url;
    link.target = '_blank';
    link.rel = 'noopener noreferrer';
    part.append(link);
  }
  part.append(
    button('Done', 'accept', () => void act(card, () => actions.answer(event.requestId, 'accept'))),
    button('Decline', 'decline', () => void act(card, () => actions.answer(event.requestId, 'decline'))),
  );
  return part;
}

/** Only web links are made clickable: a `javascript:` URL from a server stays text. */
function safeUrl(/** @type {unknown} */ value) {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** @param {any} event @param {HTMLElement} card @param {CardActions} actions */
function formPart(event, card, actions) {
  const form = element('div', 'input-form');
  const properties = event.requestedSchema?.properties ?? {};
  const required = new Set(event.requestedSchema?.required ?? []);
  /** @type {Array<[string, any, HTMLInputElement | HTMLSelectElement]>} */
  const fields = [];
  for (const [name, schema] of Object.entries(properties)) {
    const label = element('label', 'input-field');
    label.append(element('span', 'field-name', `${schema.title ?? name}${required.has(name) ? ' *' : ''}`));
    const input = field(schema);
    input.name = name;
    label.append(input);
    if (schema.description) label.append(element('span', 'field-description', schema.description));
    form.append(label);
    fields.push([name, schema, input]);
  }
  const content = () =>
    Object.fromEntries(fields.flatMap(([name, schema, input]) => fieldValue(name, schema, input, required)));
  const buttons = element('div', 'card-actions');
  buttons.append(
    button('Submit', 'accept', () => void act(card, () => actions.answer(event.requestId, 'accept', content()))),
    button('Decline', 'decline', () => void act(card, () => actions.answer(event.requestId, 'decline'))),
    button('Cancel', 'cancel', () => void act(card, () => actions.answer(event.requestId, 'cancel'))),
  );
  form.append(buttons);
  return form;
}

/** @param {any} schema @returns {HTMLInputElement | HTMLSelectElement} */
function field(schema) {
  if (Array.isArray(schema.enum)) {
    const select = /** @type {HTMLSelectElement} */ (element('select'));
    schema.enum.forEach((/** @type {unknown} */ value, /** @type {number} */ index) => {
      const option = /** @type {HTMLOptionElement} */ (
        element('option', '', schema.enumNames?.[index] ?? String(value))
      );
      option.value = String(value);
      select.append(option);
    });
    return select;
  }
  const input = /** @type {HTMLInputElement} */ (element('input'));
  input.type =
    schema.type === 'boolean' ? 'checkbox' : schema.type === 'number' || schema.type === 'integer' ? 'number' : 'text';
  if (schema.default !== undefined) {
    if (input.type === 'checkbox') input.checked = schema.default === true;
    else input.value = String(schema.default);
  }
  return input;
}

/**
 * A field's entry in the answer: typed as the schema says; an empty optional field is left out (the server validates).
 * @param {string} name @param {any} schema @param {HTMLInputElement | HTMLSelectElement} input @param {Set<string>} required
 * @returns {Array<[string, unknown]>}
 */
function fieldValue(name, schema, input, required) {
  if (input instanceof HTMLInputElement && input.type === 'checkbox') return [[name, input.checked]];
  if (input.value === '' && !required.has(name)) return [];
  if (schema.type === 'number' || schema.type === 'integer') return [[name, Number(input.value)]];
  if (Array.isArray(schema.enum)) {
    const match = schema.enum.find((/** @type {unknown} */ value) => String(value) === input.value);
    return [[name, match ?? input.value]];
  }
  return [[name, input.value]];
}

/** @param {HTMLElement} card @param {any} event */
export function answerInputCard(card, event) {
  card.classList.remove('pending', 'sent');
  card.classList.add(event.action);
  for (const node of card.querySelectorAll('.input-form, .card-actions')) node.remove();
  const who = event.by ? ` by ${event.by}` : '';
  const text = { accept: 'Answered', decline: 'Declined', cancel: 'Cancelled' }[event.action] ?? event.action;
  card.append(element('p', 'card-outcome', `${text}${who}`));
}
