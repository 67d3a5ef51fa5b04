/** Number formatting and tables for the generated Markdown (docs/benchmarks.md). */

export const number = (value: number | null | undefined, digits = 1): string =>
  value === null || value === undefined || !Number.isFinite(value)
    ? '—'
    : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export const times = (value: number | null | undefined): string =>
  value === null || value === undefined ? '—' : `${number(value, 2)}×`;

export function table(header: string[], rows: string[][]): string {
  const align = header.map((_, index) => (index === 0 ? ':--' : '--:'));
  return [header, align, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}
