import { userInfo } from 'node:os';

/** The person at the terminal, as the audit trail's `by` of decisions made here; undefined when the system cannot say. */
export function loginName(): string | undefined {
  try {
    return userInfo().username || undefined;
  } catch {
    return undefined;
  }
}
