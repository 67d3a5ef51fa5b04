import { expect, it } from 'vitest';
import { retryDelayMs } from '../../src/worker/activities/model/errors.js';

it('model errors: an unreadable retry-after (negative, or text with a digit) means no delay', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');
  expect(retryDelayMs(new Headers({ 'retry-after': '-1' }), now)).toBeUndefined();
  expect(retryDelayMs(new Headers({ 'retry-after': 'soon 1' }), now)).toBeUndefined();
});
