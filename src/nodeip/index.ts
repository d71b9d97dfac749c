export type { NodeAddress, NodeAddressType } from './types.js';
