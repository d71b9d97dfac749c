export { NodeIPError } from './errors.js';
export { goQuote, goTrimSpace } from './go-text.js';
export { parseIPSloppy, ipFamilyOf, isUnspecifiedIP, sameIP, canonicalIP, type IPFamily, type ParsedIP } from './ip.js';
export { PROVIDED_NODE_IP_ANNOTATION, parseNodeIPAnnotation, parseKubeletNodeIPFlag, type KubeletNodeIPFlag } from './annotation.js';
export { describeStack, nodeStackIPs, sameHostIPs, type StackName, type NodeStackIPs } from './stack.js';
export {
  explainNodeAddresses,
  nodeAddressesFromNodeIP,
  nodeAddressesFromNodeIPLegacy,
  type ExplainedAddress,
  type DroppedAddress,
  type KeptReasonCode,
  type NodeAddressExplanation,
} from './addresses.js';
export { decideNodeAddresses, type FamilyHint, type NodeAddressDecision, type NodeAddressInputs, type NodeAddressPhase } from './decide.js';
export { AddressExclusion, type ExcludedAddress } from './exclude.js';
