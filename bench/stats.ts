/** Nearest-rank percentile (`p` in 0–100) of unsorted values; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((total, value) => total + value, 0) / values.length;
}

/** `value / floor`, or null when either is missing or the floor is zero. */
export function ratio(value: number | undefined, floor: number | undefined): number | null {
  if (value === undefined || floor === undefined || !Number.isFinite(value) || !Number.isFinite(floor) || floor === 0) {
    return null;
  }
  return value / floor;
}

/** Rounded for the JSON and the tables: enough digits to compare, not float noise. */
export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
