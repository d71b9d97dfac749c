/** Every failure of node-IP parsing or selection. The message is the one the controller logs and reports. */
export class NodeIPError extends Error {
  override name = 'NodeIPError';
}
