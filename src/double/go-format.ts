// How Go prints a decoded JSON value, for the messages kube-apiserver builds with %v. Pure; imports nothing.

/** Go's %+v of a decoded JSON value (map[a:1 b:[x y]]), as kube-apiserver prints a patch. */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `map[${Object.keys(o).sort().map((k) => `${k}:${goFormat(o[k])}`).join(' ')}]`;
  }
  return String(v);
}
