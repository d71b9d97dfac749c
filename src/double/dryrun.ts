// The dryRun option of writes: `All` validates and answers as if the write happened, and the
// store keeps nothing (no resourceVersion bump, no watch event). Any other value is refused as
// kube-apiserver refuses it.
import { invalid } from './errors.js';

function check(values: string[], optionsKind: string): boolean {
  if (values.length === 0) return false;
  if (values.some((v) => v !== 'All')) {
    throw invalid(optionsKind, 'meta.k8s.io', '', [{ field: 'dryRun', type: 'FieldValueNotSupported', value: values, detail: 'supported values: "All"' }]);
  }
  return true;
}

/** Whether the query asks for a dry run (`dryRun=All`); throws 422 for other values. */
export function dryRunOf(q: URLSearchParams, optionsKind: string): boolean {
  return check(q.getAll('dryRun'), optionsKind);
}

/** The same for DeleteOptions.dryRun sent in a DELETE body (kubectl delete --dry-run=server). */
export function dryRunOfBody(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  return check(Array.isArray(value) ? value.map(String) : [String(value)], 'DeleteOptions');
}
