// --cloud-config for azure: cloud-provider-azure's own file (azure.json; YAML or JSON), restricted
// to the keys this adapter uses. As in cloud-provider-azure (Go's JSON decoding), key names match
// whatever their case, a value of the wrong type is an error, and keys it knows but this adapter
// does not use are ignored (returned in `ignored`, so the factory can log them): an existing
// azure.json works unchanged. Pure: the environment is passed in.
import { parse as parseYAML } from 'yaml';
import type { IPFamily } from '../../src/nodeip/ip.js';

export const AZURE_VM_TYPES = ['standard', 'vmss', 'vmssflex'] as const;
export type AzureVMType = (typeof AZURE_VM_TYPES)[number];

/** How the adapter authenticates to ARM, in cloud-provider-azure's order of precedence. */
export type AzureCredentialConfig =
  /** Workload identity: a federated token file exchanged for an AAD token. */
  | { kind: 'workloadIdentity'; tenantId: string; clientId: string; tokenFile: string }
  /** Managed identity from IMDS: system-assigned, or the user-assigned one named by client or resource ID. */
  | { kind: 'managedIdentity'; clientId?: string; resourceId?: string }
  /** An AAD application's client secret. */
  | { kind: 'clientSecret'; tenantId: string; clientId: string; clientSecret: string }
  /** An AAD application's client certificate: a PEM or PKCS#12 file, with its password if it has one. */
  | { kind: 'clientCertificate'; tenantId: string; clientId: string; certPath: string; certPassword?: string }
  /** A user-assigned identity's credential file written by the managed identity data plane (managed control planes). */
  | { kind: 'msiDataPlane'; path: string };

/** Which IP configurations a node's addresses come from. */
export const AZURE_NODE_IP_CONFIGURATIONS = ['primary', 'all'] as const;
export type AzureNodeIPConfigurations = (typeof AZURE_NODE_IP_CONFIGURATIONS)[number];

export interface AzureCloudConfig {
  /** Canonical cloud name (AzurePublicCloud, AzureChinaCloud, AzureUSGovernmentCloud, AzureStackCloud). */
  cloud: AzureCloudName;
  /** `cloud` as the file spells it; absent when the file names none. The ARM metadata entry is picked by it. */
  cloudName?: string;
  /** With AzureStackCloud: use the public cloud's API versions, not Azure Stack Hub's (a custom cloud that is not Azure Stack). */
  disableAzureStackCloud: boolean;
  tenantId?: string;
  subscriptionId: string;
  /** The cluster's resource group: where nodes without a providerID are looked for. */
  resourceGroup: string;
  location?: string;
  vmType: AzureVMType;
  /** With vmType vmss: nodes are scale-set instances only (no standalone VMs looked up by name). */
  disableAvailabilitySetNodes: boolean;
  /** An ARM endpoint of a custom cloud (Azure Stack Hub, an emulator); its /metadata/endpoints names the login endpoint. */
  resourceManagerEndpoint?: string;
  /** AZURE_ENVIRONMENT_FILEPATH with AzureStackCloud: a JSON file of the cloud's endpoints, as cloud-provider-azure reads it. */
  environmentFile?: string;
  credential: AzureCredentialConfig;
  /** This adapter's own key (`["IPv4", "IPv6"]` in the file): the address families reported, in preference order. Default IPv4 alone. */
  nodeIPFamilies: IPFamily[];
  /**
   * This adapter's own key: `primary` (default), as cloud-provider-azure, the primary NIC's primary
   * IP configuration (and, for IPv6, its first IPv6 configuration); `all`: every NIC and every IP
   * configuration.
   */
  nodeIPConfigurations: AzureNodeIPConfigurations;
  /** Keys of the file this adapter does not use. */
  ignored: string[];
}

export const AZURE_CLOUD_NAMES = ['AzurePublicCloud', 'AzureChinaCloud', 'AzureUSGovernmentCloud', 'AzureStackCloud'] as const;
export type AzureCloudName = (typeof AZURE_CLOUD_NAMES)[number];

/** cloud-provider-azure's accepted spellings (azclient's EnvironmentMapping, and AzureStackCloudName), upper-cased. */
const CLOUD_ALIASES: Readonly<Record<string, AzureCloudName>> = {
  AZURECLOUD: 'AzurePublicCloud',
  AZUREPUBLICCLOUD: 'AzurePublicCloud',
  AZURECHINACLOUD: 'AzureChinaCloud',
  AZUREUSGOVERNMENT: 'AzureUSGovernmentCloud',
  AZUREUSGOVERNMENTCLOUD: 'AzureUSGovernmentCloud',
  AZURESTACKCLOUD: 'AzureStackCloud',
};

/** The canonical name of a cloud under any of cloud-provider-azure's spellings, or undefined. */
export function canonicalCloudName(name: string): AzureCloudName | undefined {
  return CLOUD_ALIASES[name.trim().toUpperCase()];
}

/** The environment variables the workload identity webhook injects; they win over the file, as in cloud-provider-azure. */
export interface AzureConfigEnv {
  AZURE_CLIENT_ID?: string;
  AZURE_TENANT_ID?: string;
  AZURE_FEDERATED_TOKEN_FILE?: string;
  AZURE_CLIENT_SECRET?: string;
  /** With cloud AzureStackCloud: a JSON file of the cloud's endpoints (cloud-provider-azure's EnvironmentFilepathName). */
  AZURE_ENVIRONMENT_FILEPATH?: string;
}

export class AzureCloudConfigError extends Error {
  constructor(message: string) {
    super(`cloud-config: ${message}`);
    this.name = 'AzureCloudConfigError';
  }
}

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

/** The keys this adapter reads, in their documented spelling. */
const USED = [
  'cloud', 'tenantId', 'subscriptionId', 'resourceGroup', 'location', 'vmType', 'disableAvailabilitySetNodes',
  'resourceManagerEndpoint', 'useManagedIdentityExtension', 'userAssignedIdentityID', 'useFederatedWorkloadIdentityExtension',
  'aadFederatedTokenFile', 'aadClientId', 'aadClientSecret', 'aadClientCertPath', 'aadClientCertPassword', 'aadMSIDataPlaneIdentityPath',
  'disableAzureStackCloud', 'nodeIPFamilies', 'nodeIPConfigurations',
] as const;
type UsedKey = (typeof USED)[number];
const BY_LOWER = new Map<string, UsedKey>(USED.map((k) => [k.toLowerCase(), k]));

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Resource group names: letters, digits, underscores, hyphens, periods and parentheses, up to 90.
const RESOURCE_GROUP = /^[-\w.()]{1,90}$/u;

function describe(value: Json): string {
  return value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value === 'object' ? 'a map' : JSON.stringify(value);
}

class Reader {
  constructor(private readonly values: Map<UsedKey, { key: string; value: Json }>) {}

  private entry(key: UsedKey) {
    return this.values.get(key);
  }

  /** A string as written, untrimmed (a password); undefined when absent or empty. */
  raw(key: UsedKey): string | undefined {
    const e = this.entry(key);
    if (!e || e.value === null) return undefined;
    if (typeof e.value !== 'string') throw new AzureCloudConfigError(`${e.key}: expected a string, got ${describe(e.value)}`);
    return e.value === '' ? undefined : e.value;
  }

  string(key: UsedKey): string | undefined {
    const e = this.entry(key);
    if (!e || e.value === null) return undefined;
    if (typeof e.value !== 'string') throw new AzureCloudConfigError(`${e.key}: expected a string, got ${describe(e.value)}`);
    return e.value.trim() === '' ? undefined : e.value.trim();
  }

  bool(key: UsedKey): boolean {
    const e = this.entry(key);
    if (!e || e.value === null) return false;
    if (typeof e.value !== 'boolean') throw new AzureCloudConfigError(`${e.key}: expected true or false, got ${describe(e.value)}`);
    return e.value;
  }

  list(key: UsedKey): string[] | undefined {
    const e = this.entry(key);
    if (!e || e.value === null) return undefined;
    if (!Array.isArray(e.value) || e.value.some((v) => typeof v !== 'string')) {
      throw new AzureCloudConfigError(`${e.key}: expected a list of strings, got ${describe(e.value)}`);
    }
    return e.value as string[];
  }

  name(key: UsedKey): string {
    return this.entry(key)?.key ?? key;
  }
}

/** `["IPv4"]`, `["IPv4", "IPv6"]`, `["IPv6", "IPv4"]` or `["IPv6"]`, any case; the first is the primary family. */
export function parseNodeIPFamilies(values: readonly string[], field = 'nodeIPFamilies'): IPFamily[] {
  if (values.length === 0) throw new AzureCloudConfigError(`${field}: empty; give IPv4, IPv6 or both`);
  const out: IPFamily[] = [];
  for (const v of values) {
    const family = v.toLowerCase() === 'ipv4' ? 4 : v.toLowerCase() === 'ipv6' ? 6 : undefined;
    if (!family) throw new AzureCloudConfigError(`${field}: "${v}" is not IPv4 or IPv6`);
    if (out.includes(family)) throw new AzureCloudConfigError(`${field}: IPv${family} listed twice`);
    out.push(family);
  }
  return out;
}

function parseEndpoint(text: string, field: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new AzureCloudConfigError(`${field}: "${text}" is not a URL`);
  }
  // The SDK sends bearer tokens over TLS only.
  if (url.protocol !== 'https:') throw new AzureCloudConfigError(`${field}: "${text}" must be an https:// URL`);
  return url.href;
}

function credentialOf(r: Reader, tenantId: string | undefined, env: AzureConfigEnv): AzureCredentialConfig {
  const clientId = env.AZURE_CLIENT_ID || r.string('aadClientId');
  // Workload identity first: the webhook's token file variable turns it on, as in cloud-provider-azure.
  const tokenFile = env.AZURE_FEDERATED_TOKEN_FILE || r.string('aadFederatedTokenFile');
  if (env.AZURE_FEDERATED_TOKEN_FILE || r.bool('useFederatedWorkloadIdentityExtension')) {
    const missing = [!tenantId && 'tenantId', !clientId && 'aadClientId', !tokenFile && 'aadFederatedTokenFile'].filter(Boolean);
    if (missing.length > 0) {
      throw new AzureCloudConfigError(`${r.name('useFederatedWorkloadIdentityExtension')}: workload identity needs ${missing.join(', ')} (or the AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_FEDERATED_TOKEN_FILE the webhook injects)`);
    }
    return { kind: 'workloadIdentity', tenantId: tenantId!, clientId: clientId!, tokenFile: tokenFile! };
  }
  if (r.bool('useManagedIdentityExtension')) {
    const id = r.string('userAssignedIdentityID');
    if (!id) return { kind: 'managedIdentity' };
    if (id.toLowerCase().startsWith('/subscriptions/')) return { kind: 'managedIdentity', resourceId: id };
    if (!GUID.test(id)) throw new AzureCloudConfigError(`${r.name('userAssignedIdentityID')}: "${id}" is neither a client ID (a GUID) nor a resource ID (/subscriptions/…)`);
    return { kind: 'managedIdentity', clientId: id };
  }
  const secret = env.AZURE_CLIENT_SECRET || r.string('aadClientSecret');
  if (secret) {
    if (!tenantId || !clientId) throw new AzureCloudConfigError(`${r.name('aadClientSecret')}: a client secret needs tenantId and aadClientId`);
    return { kind: 'clientSecret', tenantId, clientId, clientSecret: secret };
  }
  const certPath = r.string('aadClientCertPath');
  if (certPath) {
    if (!tenantId || !clientId) throw new AzureCloudConfigError(`${r.name('aadClientCertPath')}: a client certificate needs tenantId and aadClientId`);
    // The password is taken as written: a space may belong to it.
    const password = r.raw('aadClientCertPassword');
    return { kind: 'clientCertificate', tenantId, clientId, certPath, ...(password ? { certPassword: password } : {}) };
  }
  const msiPath = r.string('aadMSIDataPlaneIdentityPath');
  if (msiPath) return { kind: 'msiDataPlane', path: msiPath };
  throw new AzureCloudConfigError('no credential: set useFederatedWorkloadIdentityExtension (workload identity), useManagedIdentityExtension (managed identity), aadClientId with aadClientSecret or aadClientCertPath, or aadMSIDataPlaneIdentityPath');
}

/** Parses cloud-provider-azure's cloud-config (the keys this adapter uses); throws naming the key and the value. */
export function parseAzureCloudConfig(text: string, env: AzureConfigEnv = {}): AzureCloudConfig {
  let raw: unknown;
  try {
    raw = parseYAML(text, { uniqueKeys: true });
  } catch (err) {
    throw new AzureCloudConfigError(`not valid YAML or JSON: ${(err as Error).message.split('\n')[0]}`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new AzureCloudConfigError(`expected a map of settings (azure.json), got ${raw === null ? 'nothing' : Array.isArray(raw) ? 'a list' : typeof raw}`);
  }
  const values = new Map<UsedKey, { key: string; value: Json }>();
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(raw as Record<string, Json>)) {
    const used = BY_LOWER.get(key.toLowerCase());
    if (!used) {
      ignored.push(key);
      continue;
    }
    const before = values.get(used);
    if (before) throw new AzureCloudConfigError(`${key}: given twice (also as ${before.key}); key names match whatever their case`);
    values.set(used, { key, value });
  }
  const r = new Reader(values);

  const cloudText = r.string('cloud');
  const cloud = cloudText === undefined ? 'AzurePublicCloud' : CLOUD_ALIASES[cloudText.toUpperCase()];
  // cloud-provider-azure falls back to the public cloud for a name it does not know; a typo would
  // then send this cluster's credentials to the wrong cloud, so it is refused here.
  if (!cloud) throw new AzureCloudConfigError(`${r.name('cloud')}: "${cloudText}" is not one of ${AZURE_CLOUD_NAMES.join(', ')}`);

  const subscriptionId = r.string('subscriptionId');
  if (!subscriptionId) throw new AzureCloudConfigError('subscriptionId: required');
  if (!GUID.test(subscriptionId) && !/^[\w-]{1,64}$/.test(subscriptionId)) {
    throw new AzureCloudConfigError(`${r.name('subscriptionId')}: "${subscriptionId}" is not a subscription ID`);
  }
  const resourceGroup = r.string('resourceGroup');
  if (!resourceGroup) throw new AzureCloudConfigError('resourceGroup: required (the resource group of the cluster\'s VMs and scale sets)');
  if (!RESOURCE_GROUP.test(resourceGroup) || resourceGroup.endsWith('.')) {
    throw new AzureCloudConfigError(`${r.name('resourceGroup')}: "${resourceGroup}" is not a resource group name`);
  }

  const vmTypeText = r.string('vmType');
  // cloud-provider-azure's default is vmss, which also serves standalone VMs unless told not to.
  const vmType = (vmTypeText === undefined ? 'vmss' : vmTypeText.toLowerCase()) as AzureVMType;
  if (!AZURE_VM_TYPES.includes(vmType)) throw new AzureCloudConfigError(`${r.name('vmType')}: "${vmTypeText}" is not one of ${AZURE_VM_TYPES.join(', ')}`);
  const disableAvailabilitySetNodes = r.bool('disableAvailabilitySetNodes');
  // cloud-provider-azure's InitializeCloudFromConfig refuses this combination, with this reason.
  if (disableAvailabilitySetNodes && vmType !== 'vmss') {
    throw new AzureCloudConfigError(`${r.name('disableAvailabilitySetNodes')}: true is only supported when vmType is 'vmss' (it is '${vmType}')`);
  }

  const tenantId = env.AZURE_TENANT_ID || r.string('tenantId');
  const endpoint = r.string('resourceManagerEndpoint');
  const environmentFile = cloud === 'AzureStackCloud' ? env.AZURE_ENVIRONMENT_FILEPATH?.trim() || undefined : undefined;
  if (cloud === 'AzureStackCloud' && !endpoint && !environmentFile) {
    throw new AzureCloudConfigError(`${r.name('cloud')}: AzureStackCloud needs resourceManagerEndpoint (its /metadata/endpoints names the cloud's endpoints) or the AZURE_ENVIRONMENT_FILEPATH environment variable (a file of them)`);
  }
  const ipConfigurationsText = r.string('nodeIPConfigurations');
  const nodeIPConfigurations = (ipConfigurationsText ?? 'primary').toLowerCase() as AzureNodeIPConfigurations;
  if (!AZURE_NODE_IP_CONFIGURATIONS.includes(nodeIPConfigurations)) {
    throw new AzureCloudConfigError(`${r.name('nodeIPConfigurations')}: "${ipConfigurationsText}" is not one of ${AZURE_NODE_IP_CONFIGURATIONS.join(', ')}`);
  }
  const families = r.list('nodeIPFamilies');
  const location = r.string('location');

  const config: AzureCloudConfig = {
    cloud,
    disableAzureStackCloud: r.bool('disableAzureStackCloud'),
    subscriptionId,
    resourceGroup,
    vmType,
    disableAvailabilitySetNodes,
    credential: credentialOf(r, tenantId, env),
    nodeIPFamilies: families === undefined ? [4] : parseNodeIPFamilies(families, r.name('nodeIPFamilies')),
    nodeIPConfigurations,
    ignored,
  };
  if (cloudText !== undefined) config.cloudName = cloudText;
  if (environmentFile) config.environmentFile = environmentFile;
  if (tenantId) config.tenantId = tenantId;
  if (location) config.location = location.toLowerCase();
  if (endpoint) config.resourceManagerEndpoint = parseEndpoint(endpoint, r.name('resourceManagerEndpoint'));
  return config;
}
