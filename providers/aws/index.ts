// Public surface of the aws adapter. `AWSCloudProvider` loads the EC2 SDK; the mappings, parsers
// and config reader do not (src/index.ts re-exports only those).
export { AWSCloudProvider, idsNamedInMessage, INSTANCE_ID_BATCH, DNS_NAME_BATCH, type AWSProviderOptions } from './provider.js';
export { awsNodeAddresses, validateNodeIPFamilies, AWS_IP_FAMILIES, type AWSIPFamily, type AWSNodeAddressOptions } from './addresses.js';
export { parseAWSProviderID, formatAWSProviderID, instanceIDFromNodeName, AWSProviderIDError, type AWSProviderID } from './provider-id.js';
export { parseAWSCloudConfig, AWSCloudConfigError, type AWSCloudConfig } from './config.js';
export { BackoffGate, sharedEC2Gate, type BackoffGateOptions } from './backoff.js';
export { create as createAWSProvider } from './register.js';
