// What an adapter written outside this repository needs ('node-address-ccm/provider'): the
// contract's types, defineProvider and the outcome helpers. Small on purpose: a module bundled
// for the image carries these few lines, not the controller.
export { defineProvider, type ProviderDefinition } from './define.js';
export { BatchError, found, notFound, retryableError } from '../types.js';
export type {
  CloudProvider, CloudConfigFile, InstanceMetadata, InstanceResult, NodeRef, PodCIDRDetails, PodCIDRRequest, PodCIDRRequestOutcome,
  ProviderContext, ProviderFactory, ProviderLogger,
} from '../types.js';
export type { NodeAddress, NodeAddressType } from '../../src/model/node-address.js';
