/** Every failure of node-IP parsing or selection. The message is the one the controller logs and reports. */
export class NodeIPError extends Error {
  override name = 'NodeIPError';
  /** The node IP no cloud address carries, when that is the failure (for a hint about the cloud's families). */
  declare readonly unmatchedIP: string | undefined;

  constructor(message: string, unmatchedIP?: string) {
    super(message);
    // Not enumerable: the error still equals one built from Kubernetes' message alone.
    Object.defineProperty(this, 'unmatchedIP', { value: unmatchedIP, enumerable: false });
  }
}
