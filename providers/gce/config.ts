// --cloud-config for gce: the [global] section of cloud-provider-gcp's gce.conf (gcfg/INI),
// restricted to the keys this adapter uses. Unknown keys of the reference format are accepted and
// ignored so an existing gce.conf works; keys nobody knows are rejected as typos.
import { GCE_STACK_TYPES, type GceStackType } from './addresses.js';

export interface GceConfig {
  project: string;
  /** Zones to list with instances.list; empty = one aggregatedList over the project. */
  zones: string[];
  /** e.g. https://compute.googleapis.com or http://127.0.0.1:8080 for an emulator. */
  apiEndpoint?: string;
  stackType: GceStackType;
}

/** Keys of the reference gce.conf [global] section this adapter reads or tolerates. */
const USED = new Set(['project-id', 'zones', 'api-endpoint', 'stack-type']);
const TOLERATED = new Set([
  'token-url', 'token-body', 'network-project-id', 'network-name', 'subnetwork-name',
  'secondary-range-name', 'node-tags', 'node-instance-prefix', 'regional', 'multizone',
  'container-api-endpoint', 'local-zone', 'alpha-features', 'enable-multi-project',
]);

export type IniSections = Map<string, Map<string, string[]>>;

/**
 * Minimal gcfg-compatible reader: `[section]` headers, `key = value` (repeated keys collect),
 * `#`/`;` comments, double-quoted values. Section and key names are case-insensitive, like gcfg.
 */
export function parseIni(text: string): IniSections {
  const sections: IniSections = new Map();
  let current: Map<string, string[]> | undefined;
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    const where = `line ${i + 1}`;
    if (line === '' || line.startsWith('#') || line.startsWith(';')) return;
    const header = /^\[\s*([A-Za-z][\w.-]*)\s*\]$/.exec(line);
    if (header) {
      const name = header[1].toLowerCase();
      current = sections.get(name) ?? new Map();
      sections.set(name, current);
      return;
    }
    const kv = /^([A-Za-z][\w-]*)\s*(?:=\s*(.*))?$/.exec(line);
    if (!kv) throw new Error(`cloud-config ${where}: cannot parse "${line}"`);
    if (!current) throw new Error(`cloud-config ${where}: "${kv[1]}" appears before any [section]`);
    const key = kv[1].toLowerCase();
    // A bare key is a boolean true in gcfg.
    const value = kv[2] === undefined ? 'true' : unquote(kv[2], where);
    current.set(key, [...(current.get(key) ?? []), value]);
  });
  return sections;
}

function unquote(value: string, where: string): string {
  let v = value;
  if (v.startsWith('"')) {
    const m = /^"((?:[^"\\]|\\.)*)"\s*(?:[#;].*)?$/.exec(v);
    if (!m) throw new Error(`cloud-config ${where}: unterminated quoted value ${value}`);
    return m[1].replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
  }
  // Unquoted values end at an inline comment.
  v = v.replace(/\s[#;].*$/, '');
  return v.trim();
}

function single(global: Map<string, string[]>, key: string): string | undefined {
  const values = global.get(key);
  if (!values) return undefined;
  if (values.length > 1) throw new Error(`cloud-config [global] ${key}: given ${values.length} times, expected once`);
  return values[0];
}

export function parseGceConfig(text: string): GceConfig {
  const sections = parseIni(text);
  for (const name of sections.keys()) {
    if (name !== 'global') throw new Error(`cloud-config: unknown section [${name}] (only [global] is read)`);
  }
  const global = sections.get('global') ?? new Map<string, string[]>();
  for (const key of global.keys()) {
    if (!USED.has(key) && !TOLERATED.has(key)) throw new Error(`cloud-config [global]: unknown key "${key}"`);
  }
  const project = single(global, 'project-id');
  if (!project) throw new Error('cloud-config [global] project-id: required');
  if (!/^(?:[a-z][a-z0-9.-]*:)?[a-z0-9][a-z0-9-]{0,62}$/.test(project)) {
    throw new Error(`cloud-config [global] project-id: "${project}" is not a GCP project ID`);
  }
  const zones = (global.get('zones') ?? [])
    .flatMap((v) => v.split(','))
    .map((z) => z.trim())
    .filter((z) => z !== '');
  for (const z of zones) {
    if (!/^[a-z]+-[a-z]+[0-9]+-[a-z]$/.test(z)) throw new Error(`cloud-config [global] zones: "${z}" is not a zone name`);
  }
  const apiEndpoint = single(global, 'api-endpoint') || undefined;
  if (apiEndpoint !== undefined) parseApiEndpoint(apiEndpoint);
  const stackRaw = (single(global, 'stack-type') ?? 'IPV4').toUpperCase();
  if (!GCE_STACK_TYPES.includes(stackRaw as GceStackType)) {
    throw new Error(`cloud-config [global] stack-type: "${stackRaw}" is not one of ${GCE_STACK_TYPES.join(', ')}`);
  }
  return { project, zones: [...new Set(zones)], apiEndpoint, stackType: stackRaw as GceStackType };
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
