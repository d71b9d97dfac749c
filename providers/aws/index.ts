// Public surface of the aws adapter. `AwsProvider` loads the EC2 SDK; the mappings, parsers
// and config reader do not (src/index.ts re-exports only those).
export { AwsProvider, assignOutcome, idsNamedInMessage, INSTANCE_ID_BATCH, DNS_NAME_BATCH, type AwsProviderOptions } from './provider.js';
export { awsNodeAddresses, validateNodeIPFamilies, AWS_NODE_IP_FAMILIES_VALUES, type AWSNodeIPFamiliesValue, type AWSNodeAddressOptions } from './addresses.js';
export { parseAWSProviderID, formatAWSProviderID, instanceIDFromNodeName, AWSProviderIDError, type AWSProviderID } from './provider-id.js';
export { parseAWSCloudConfig, AWSCloudConfigError, type AWSCloudConfig } from './config.js';
export { BackoffGate, sharedEC2Gate, type BackoffGateOptions } from './backoff.js';
export { awsPodCIDRs, chooseAlignedBlock, primaryInterface, type AWSPodCIDRs, type AWSPodCIDROptions, type FamilyPodCIDR, type PrefixChoice } from './pod-cidrs.js';
