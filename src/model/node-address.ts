// One entry of node.status.addresses, the unit every address rule and cloud adapter deals in.
export type NodeAddressType = 'Hostname' | 'InternalIP' | 'ExternalIP' | 'InternalDNS' | 'ExternalDNS';

export interface NodeAddress {
  type: NodeAddressType;
  address: string;
}

export const NODE_ADDRESS_TYPES: readonly NodeAddressType[] = ['Hostname', 'InternalIP', 'ExternalIP', 'InternalDNS', 'ExternalDNS'];
