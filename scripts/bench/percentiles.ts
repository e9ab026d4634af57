/** The value below which `p` percent of `sorted` (ascending) lies, nearest rank. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const median = (values: number[]): number => percentile(Float64Array.from(values).sort(), 50);

export const round = (value: number, digits = 1): number => Number(value.toFixed(digits));
