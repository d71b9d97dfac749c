// Which cloud the adapter talks to: ARM's endpoint, the AAD authority and the token audience, as
// cloud-provider-azure's azclient works them out (cloud.go, GetAzureCloudConfigAndEnvConfig):
//   1. the named cloud's built-in endpoints (AzureStackCloud has none);
//   2. with resourceManagerEndpoint, `<endpoint>/metadata/endpoints?api-version=2019-05-01`: the
//      entry whose `name` is the configured cloud (the first entry when the file names no cloud)
//      gives ARM (`resourceManager`, else the configured endpoint), the audience (`audiences[0]`)
//      and the login endpoint (when given);
//   3. with AzureStackCloud and AZURE_ENVIRONMENT_FILEPATH, that JSON file's
//      `resourceManagerEndpoint` and `tokenAudience` (both, or neither is used) and
//      `activeDirectoryEndpoint`.
// Where upstream would go on with endpoints that cannot be right, this refuses with the reason: a
// metadata entry with no audience (upstream indexes past the end), an Azure Stack cloud whose
// endpoints nothing named (upstream uses the public cloud's), a plain-http endpoint. A metadata
// entry also matches the configured cloud under any of its spellings (the public ARM's entry is
// named AzureCloud, the file may say AzurePublicCloud). Pure: the caller fetches and reads.
import { canonicalCloudName, type AzureCloudName } from './config.js';

/** Where a cloud's ARM and AAD are, and the audience of ARM tokens. */
export interface AzureEnvironment {
  resourceManager: string;
  authorityHost: string;
  audience: string;
  /** Endpoints from a resourceManagerEndpoint's metadata or an environment file, not one of Azure's public clouds. */
  custom: boolean;
  /** Azure Stack Hub: ARM calls use the API versions it serves (cloud-provider-azure's AzureStackCloudAPIVersion). */
  stackApiVersions: boolean;
}

export const AZURE_ENVIRONMENTS: Readonly<Record<Exclude<AzureCloudName, 'AzureStackCloud'>, AzureEnvironment>> = {
  AzurePublicCloud: { resourceManager: 'https://management.azure.com/', authorityHost: 'https://login.microsoftonline.com/', audience: 'https://management.core.windows.net/', custom: false, stackApiVersions: false },
  AzureChinaCloud: { resourceManager: 'https://management.chinacloudapi.cn/', authorityHost: 'https://login.chinacloudapi.cn/', audience: 'https://management.core.chinacloudapi.cn/', custom: false, stackApiVersions: false },
  AzureUSGovernmentCloud: { resourceManager: 'https://management.usgovcloudapi.net/', authorityHost: 'https://login.microsoftonline.us/', audience: 'https://management.core.usgovcloudapi.net/', custom: false, stackApiVersions: false },
};

/** The API version of ARM's metadata endpoint cloud-provider-azure asks for. */
export const METADATA_API_VERSION = '2019-05-01';

export function metadataURL(resourceManagerEndpoint: string): string {
  return `${resourceManagerEndpoint.replace(/\/+$/, '')}/metadata/endpoints?api-version=${METADATA_API_VERSION}`;
}

export interface EnvironmentInput {
  cloud: AzureCloudName;
  /** `cloud` as the file spells it; undefined when the file names none. */
  cloudName?: string;
  disableAzureStackCloud?: boolean;
  resourceManagerEndpoint?: string;
  /** The parsed answer of the metadata endpoint, when resourceManagerEndpoint is set. */
  metadata?: unknown;
  /** The environment file's path and parsed contents, for AzureStackCloud with AZURE_ENVIRONMENT_FILEPATH. */
  environmentFile?: { path: string; contents: unknown };
}

export interface ResolvedEnvironment {
  environment: AzureEnvironment;
  /** What the operator should know: a metadata answer that named no entry for the cloud. */
  notes: string[];
}

export class AzureEnvironmentError extends Error {
  constructor(message: string) {
    super(`azure: ${message}`);
    this.name = 'AzureEnvironmentError';
  }
}

interface Partial3 {
  resourceManager?: string;
  authorityHost?: string;
  audience?: string;
}

function httpsURL(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new AzureEnvironmentError(`${what}: expected a URL, got ${JSON.stringify(value)}`);
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw new AzureEnvironmentError(`${what}: "${value}" is not a URL`);
  }
  // The SDK sends bearer tokens over TLS only; an http endpoint would fail on the first call.
  if (url.protocol !== 'https:') throw new AzureEnvironmentError(`${what}: "${value}" must be an https:// URL`);
  return url.href;
}

/** Whether a metadata entry's name is the configured cloud: the same name whatever its case, or two spellings of one cloud. */
function namesCloud(entryName: unknown, cloudName: string): boolean {
  if (typeof entryName !== 'string') return false;
  if (entryName.toLowerCase() === cloudName.toLowerCase()) return true;
  const a = canonicalCloudName(entryName);
  return a !== undefined && a === canonicalCloudName(cloudName);
}

/** Go's encoding/json matches field names whatever their case; the environment file is read that way. */
function field(obj: Record<string, unknown>, name: string): unknown {
  const key = Object.keys(obj).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : obj[key];
}

function fromMetadata(input: EnvironmentInput, notes: string[]): Partial3 {
  const endpoint = input.resourceManagerEndpoint!;
  const where = `resourceManagerEndpoint: ${metadataURL(endpoint)}`;
  const body = input.metadata;
  if (!Array.isArray(body)) throw new AzureEnvironmentError(`${where}: expected a JSON list of clouds, got ${body === null ? 'null' : typeof body}`);
  const entries = body.filter((e): e is Record<string, unknown> => e !== null && typeof e === 'object' && !Array.isArray(e));
  const pick = input.cloudName === undefined ? entries[0] : entries.find((e) => namesCloud(e.name, input.cloudName!));
  if (!pick) {
    const names = entries.map((e) => JSON.stringify(e.name ?? null)).join(', ') || 'none';
    notes.push(`${where} names no cloud "${input.cloudName ?? ''}" (it names ${names}); its endpoints are not used`);
    return {};
  }
  const name = JSON.stringify(pick.name ?? null);
  const auth = pick.authentication as Record<string, unknown> | undefined;
  const audiences = auth?.audiences;
  if (!Array.isArray(audiences) || audiences.length === 0 || typeof audiences[0] !== 'string' || audiences[0] === '') {
    throw new AzureEnvironmentError(`${where}: cloud ${name} names no authentication.audiences`);
  }
  const out: Partial3 = {
    // Azure Stack Hub's answer may leave resourceManager out: the endpoint asked is ARM then.
    resourceManager: pick.resourceManager ? httpsURL(pick.resourceManager, `${where}: cloud ${name} resourceManager`) : httpsURL(endpoint, 'resourceManagerEndpoint'),
    audience: audiences[0],
  };
  if (auth?.loginEndpoint) out.authorityHost = httpsURL(auth.loginEndpoint, `${where}: cloud ${name} authentication.loginEndpoint`);
  return out;
}

function fromFile(file: { path: string; contents: unknown }): Partial3 {
  const where = `AZURE_ENVIRONMENT_FILEPATH ${file.path}`;
  const c = file.contents;
  if (c === null || typeof c !== 'object' || Array.isArray(c)) throw new AzureEnvironmentError(`${where}: expected a JSON object of endpoints`);
  const obj = c as Record<string, unknown>;
  const out: Partial3 = {};
  const rm = field(obj, 'resourceManagerEndpoint');
  const audience = field(obj, 'tokenAudience');
  // As cloud-provider-azure: ARM's endpoint and audience are taken together, or not at all.
  if (rm && audience) {
    out.resourceManager = httpsURL(rm, `${where}: resourceManagerEndpoint`);
    if (typeof audience !== 'string') throw new AzureEnvironmentError(`${where}: tokenAudience: expected a string`);
    out.audience = audience;
  }
  const aad = field(obj, 'activeDirectoryEndpoint');
  if (aad) out.authorityHost = httpsURL(aad, `${where}: activeDirectoryEndpoint`);
  return out;
}

/** The endpoints the adapter uses; throws an AzureEnvironmentError saying what is missing or wrong. */
export function resolveAzureEnvironment(input: EnvironmentInput): ResolvedEnvironment {
  const notes: string[] = [];
  const stack = input.cloud === 'AzureStackCloud';
  const base: Partial3 = input.cloud === 'AzureStackCloud' ? {} : (({ resourceManager, authorityHost, audience }) => ({ resourceManager, authorityHost, audience }))(AZURE_ENVIRONMENTS[input.cloud]);
  let custom = false;
  let merged: Partial3 = { ...base };
  if (input.resourceManagerEndpoint) {
    const m = fromMetadata(input, notes);
    if (Object.keys(m).length > 0) custom = true;
    merged = { ...merged, ...m };
  }
  if (stack && input.environmentFile) {
    const f = fromFile(input.environmentFile);
    if (Object.keys(f).length > 0) custom = true;
    merged = { ...merged, ...f };
  }
  const missing = (['resourceManager', 'authorityHost', 'audience'] as const).filter((k) => !merged[k]);
  if (missing.length > 0) {
    const sources = [input.resourceManagerEndpoint && `the metadata of ${input.resourceManagerEndpoint}`, input.environmentFile && `AZURE_ENVIRONMENT_FILEPATH ${input.environmentFile.path}`].filter(Boolean).join(' nor ');
    throw new AzureEnvironmentError(`cloud ${input.cloudName ?? input.cloud}: ${sources || 'nothing'} names its ${missing.join(', ')}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`);
  }
  return {
    environment: {
      resourceManager: merged.resourceManager!,
      authorityHost: merged.authorityHost!,
      audience: merged.audience!,
      custom,
      stackApiVersions: stack && !input.disableAzureStackCloud,
    },
    notes,
  };
}
