// Kubernetes timestamp formats.

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits, UTC (`2006-01-02T15:04:05.000000Z`). */
export function formatMicroTime(ms: number): string {
  if (!Number.isFinite(ms)) throw new Error(`time: not a finite epoch ms value: ${ms}`);
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** metav1.Time: RFC 3339 to the second, UTC (`2006-01-02T15:04:05Z`). */
export function formatTime(ms: number): string {
  if (!Number.isFinite(ms)) throw new Error(`time: not a finite epoch ms value: ${ms}`);
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Epoch ms of a Time or MicroTime string; undefined when absent or unparseable. */
export function parseTime(value: string | undefined | null): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
