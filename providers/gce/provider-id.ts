// gce://<project>/<zone>/<instance> — the providerID every GCE node carries.

export interface GceProviderID {
  project: string;
  zone: string;
  name: string;
}

const PREFIX = 'gce://';
// Project IDs may carry a "domain.com:" prefix (legacy domain-scoped projects).
const PROJECT = /^(?:[a-z][a-z0-9.-]*:)?[a-z0-9][a-z0-9-]{0,62}$/;
const ZONE = /^[a-z]+-[a-z]+[0-9]+-[a-z]$/;
const NAME = /^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$/;

export function parseGceProviderID(providerID: string): GceProviderID {
  if (typeof providerID !== 'string' || !providerID.startsWith(PREFIX)) {
    throw new Error(`providerID: "${String(providerID)}" does not start with ${PREFIX}`);
  }
  const parts = providerID.slice(PREFIX.length).split('/');
  if (parts.length !== 3) {
    throw new Error(`providerID: "${providerID}" is not gce://<project>/<zone>/<instance>`);
  }
  const [project, zone, name] = parts;
  if (!PROJECT.test(project)) throw new Error(`providerID: "${providerID}" has an invalid project "${project}"`);
  if (!ZONE.test(zone)) throw new Error(`providerID: "${providerID}" has an invalid zone "${zone}"`);
  if (!NAME.test(name)) throw new Error(`providerID: "${providerID}" has an invalid instance name "${name}"`);
  return { project, zone, name };
}

export function formatGceProviderID(id: GceProviderID): string {
  return `${PREFIX}${id.project}/${id.zone}/${id.name}`;
}

/** GCE instance names are the first DNS label of the node name (nodes may be FQDNs). */
export function gceInstanceNameForNode(nodeName: string): string {
  return nodeName.split('.')[0];
}

/** us-central1-a → us-central1 */
export function gceRegionOfZone(zone: string): string {
  const i = zone.lastIndexOf('-');
  if (i <= 0) throw new Error(`zone: "${zone}" has no region part`);
  return zone.slice(0, i);
}

/** Last path segment of a resource URL (machineType, zone). */
export function lastSegment(url: string): string {
  const parts = url.split('/');
  return parts[parts.length - 1];
}

/**
 * The instance a providerID names, for comparing two providerIDs: project, zone and name, as
 * cloud-provider-gcp's splitProviderID reads them (gce://<project>/<zone>/<name>; the grammar
 * admits one spelling of each). Undefined for anything parseGceProviderID refuses.
 */
export function gceInstanceKey(providerID: string): string | undefined {
  try {
    return formatGceProviderID(parseGceProviderID(providerID));
  } catch {
    return undefined;
  }
}
