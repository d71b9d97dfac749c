/** Exit status for bad flags or arguments, as Kubernetes components use. */
export const USAGE_EXIT_CODE = 2;

/** A usage error raised by a command after commander parsed it (a bad value, a missing file). */
export class UsageError extends Error {
  override name = 'UsageError';
}
