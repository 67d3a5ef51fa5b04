/** A visibility-query string literal: `value` in single quotes, its backslashes and quotes escaped. */
export function quoteQueryValue(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
