// --cloud-config for gce: cloud-provider-gcp's gce.conf, read by the shared gcfg reader
// (providers/gcfg.ts) against the schema of cloud-provider-gcp's own ConfigFile
// (providers/gce/gce.go ConfigGlobal), so a file reads here as it does there: names are
// case-insensitive, a repeated single-valued key keeps its last value, `;` and `#` start a comment
// with or without a space, a bool that is not a gcfg boolean is an error, and sections and keys
// cloud-provider-gcp does not know are ignored (it reads with gcfg.FatalOnly). Of the keys, this
// adapter uses project-id, api-endpoint, stack-type and its own `zones`.
import { GcfgError, readGcfg, scanGcfg, type GcfgSchema } from '../gcfg.js';
import { GCE_STACK_TYPES, type GceStackType } from './addresses.js';

export interface GceConfig {
  project: string;
  /** Zones to list with instances.list; empty = one aggregatedList over the project. */
  zones: string[];
  /** e.g. https://compute.googleapis.com or http://127.0.0.1:8080 for an emulator. */
  apiEndpoint?: string;
  stackType: GceStackType;
}

/**
 * cloud-provider-gcp's ConfigFile as gcfg sees it (each field's gcfg tag and Go type), plus this
 * adapter's own `zones` (multi-valued), which cloud-provider-gcp ignores as unknown.
 */
export const GCE_CLOUD_CONFIG_SCHEMA: GcfgSchema = {
  global: {
    variables: {
      'token-url': 'string',
      'token-body': 'string',
      'project-id': 'string',
      'network-project-id': 'string',
      'network-name': 'string',
      'subnetwork-name': 'string',
      'stack-type': 'string',
      'secondary-range-name': 'string',
      'node-tags': 'strings',
      'node-instance-prefix': 'string',
      regional: 'bool',
      multizone: 'bool',
      'api-endpoint': 'string',
      'container-api-endpoint': 'string',
      'local-zone': 'string',
      'alpha-features': 'strings',
      zones: 'strings',
    },
  },
};

export type IniSections = Map<string, Map<string, string[]>>;

/**
 * @deprecated A schema-less view kept for callers of the package; read with readGcfg
 * (providers/gcfg.ts) and a schema instead. Sections (`name` or `name "sub"`) and keys lower-cased,
 * the values of each key in file order, gcfg's syntax (comments, quotes, escapes). Without a
 * schema a name alone on a line cannot be read as gcfg reads it (true for a bool, clearing a
 * list); it appears as "true".
 */
export function parseIni(text: string): IniSections {
  const sections: IniSections = new Map();
  let statements;
  try {
    statements = scanGcfg(text);
  } catch (err) {
    throw err instanceof GcfgError ? new Error(`cloud-config ${err.message}`) : err;
  }
  for (const st of statements) {
    const name = st.section.toLowerCase() + (st.subsection === undefined ? '' : ` ${JSON.stringify(st.subsection)}`);
    const section = sections.get(name) ?? new Map<string, string[]>();
    sections.set(name, section);
    if (st.kind === 'header') continue;
    const key = st.name.toLowerCase();
    section.set(key, [...(section.get(key) ?? []), st.blank ? 'true' : st.value]);
  }
  return sections;
}

/** Parses gce.conf (the keys this adapter uses). Throws naming the key and the value. */
export function parseGceConfig(text: string): GceConfig {
  let file;
  try {
    file = readGcfg(text, GCE_CLOUD_CONFIG_SCHEMA);
  } catch (err) {
    throw err instanceof GcfgError ? new Error(`cloud-config ${err.message}`) : err;
  }
  const global = file.section('global');
  const projectKey = global.string('project-id');
  const project = projectKey?.value;
  if (!project) throw new Error('cloud-config [global] project-id: required');
  if (!/^(?:[a-z][a-z0-9.-]*:)?[a-z0-9][a-z0-9-]{0,62}$/.test(project)) {
    throw new Error(`cloud-config [global] project-id (line ${projectKey.line}): "${project}" is not a GCP project ID`);
  }
  const zonesKey = global.strings('zones') ?? { values: [], lines: [] };
  const zones: string[] = [];
  for (const [i, value] of zonesKey.values.entries()) {
    for (const z of value.split(',').map((x) => x.trim())) {
      if (z === '') continue;
      if (!/^[a-z]+-[a-z]+[0-9]+-[a-z]$/.test(z)) throw new Error(`cloud-config [global] zones (line ${zonesKey.lines[i]}): "${z}" is not a zone name`);
      if (!zones.includes(z)) zones.push(z);
    }
  }
  const endpointKey = global.string('api-endpoint');
  const apiEndpoint = endpointKey?.value || undefined;
  if (apiEndpoint !== undefined) parseApiEndpoint(apiEndpoint);
  // Compared exactly, as cloud-provider-gcp compares it with "IPV6" (gce_instances.go
  // orderAddresses); any other spelling there silently means IPv4 order, here it is refused.
  const stackKey = global.string('stack-type');
  const stackType = stackKey?.value || 'IPV4';
  if (!GCE_STACK_TYPES.includes(stackType as GceStackType)) {
    const hint = GCE_STACK_TYPES.includes(stackType.toUpperCase() as GceStackType) ? ` (cloud-provider-gcp compares it case-sensitively: write ${stackType.toUpperCase()})` : '';
    throw new Error(`cloud-config [global] stack-type (line ${stackKey!.line}): "${stackType}" is not one of ${GCE_STACK_TYPES.join(', ')}${hint}`);
  }
  return { project, zones, apiEndpoint, stackType: stackType as GceStackType };
}

export interface ApiEndpoint {
  protocol: 'http' | 'https';
  host: string;
  port: number;
}

/**
 * api-endpoint as an origin. The reference format carries a base path
 * (…/compute/v1/projects/); the client library adds that itself, so only the origin is kept.
 */
export function parseApiEndpoint(text: string): ApiEndpoint {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`cloud-config [global] api-endpoint: "${text}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`cloud-config [global] api-endpoint: "${text}" must be http:// or https://`);
  }
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  const port = url.port ? Number(url.port) : protocol === 'http' ? 80 : 443;
  // URL keeps an IPv6 literal in brackets, which is the form the library needs to build URLs.
  return { protocol, host: url.hostname, port };
}
