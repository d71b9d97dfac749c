// Public API of node-address-ccm. Each module adds its exports here.
export * from './nodeip/index.js';
export { FakeCloudProvider, type FakeCall, type FakeInstanceInput, type FakeMethod } from '../providers/fake/fake.js';
export { parseStaticCloudConfig, StaticCloudProvider, StaticConfigError, type StaticCloudConfig } from '../providers/static/index.js';
export * from './featuregates/index.js';
export { awsNodeAddresses, parseAWSProviderID, parseAWSCloudConfig, AWSCloudProvider, type AWSIPFamily, type AWSProviderID } from '../providers/aws/index.js';
export * from './ipam/index.js';
export * from './sim/apiserver/index.js';
export { gceNodeAddresses, gcePodCIDRs, parseGceProviderID, formatGceProviderID, parseGceConfig, GceProvider, type GceStackType, type GceInstance, type GceProviderID, type GceConfig } from '../providers/gce/index.js';
export { kindNodeAddresses, parseKindProviderID, formatKindProviderID, parseKindOverrides, parseKindConfig, KindProvider, type DockerContainerInspect, type KindAddressOverride, type KindOverrides, type KindProviderID, type KindConfig } from '../providers/kind/index.js';
