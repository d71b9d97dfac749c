// A compute v1 Instance in the API's own JSON shape (instances.get / list / aggregatedList items):
// a GKE-style dual-stack node, nic0 with an external IPv4 (ONE_TO_ONE_NAT access config), an alias
// IP range from the pods' secondary range, and an external IPv6 /96 (ipv6AccessType EXTERNAL,
// DIRECT_IPV6 access config), as the REST API writes them (IPv6 uncompressed, resource URLs).
import type { GceInstance } from '../../../providers/gce/addresses.js';

type Json = Record<string, unknown>;

export const COMPUTE_PROJECT = 'ccm-test-proj';
export const COMPUTE_ZONE = 'us-central1-a';
const BASE = `https://www.googleapis.com/compute/v1/projects/${COMPUTE_PROJECT}`;

/** An IPv4-only nic0 as the API writes it: no IPv6 fields at all. */
export const IPV4_ONLY_NIC: Json = { stackType: 'IPV4_ONLY', ipv6AccessType: undefined, ipv6AccessConfigs: undefined };

/**
 * The instance; `nic0` replaces fields of its first interface (an undefined value leaves the field
 * out, as the API leaves out what is unset), `instance` top-level fields.
 */
export function computeInstance(nic0: Json = {}, instance: Json = {}): GceInstance & Json & { name: string } {
  const name = typeof instance.name === 'string' ? instance.name : 'gke-c1-default-pool-6b2f0a1c-x7kq';
  const out: Json = {
    kind: 'compute#instance',
    id: '4864563203129736312',
    creationTimestamp: '2026-02-11T03:12:44.513-08:00',
    name,
    tags: { items: ['gke-c1-6b2f0a1c-node'], fingerprint: 'y2i9dVR8RqU=' },
    machineType: `${BASE}/zones/${COMPUTE_ZONE}/machineTypes/e2-standard-4`,
    status: 'RUNNING',
    zone: `${BASE}/zones/${COMPUTE_ZONE}`,
    canIpForward: true,
    networkInterfaces: [
      {
        kind: 'compute#networkInterface',
        network: `${BASE}/global/networks/default`,
        subnetwork: `${BASE}/regions/us-central1/subnetworks/default`,
        networkIP: '10.128.0.7',
        name: 'nic0',
        accessConfigs: [{ kind: 'compute#accessConfig', type: 'ONE_TO_ONE_NAT', name: 'external-nat', natIP: '34.72.10.5', networkTier: 'PREMIUM' }],
        aliasIpRanges: [{ ipCidrRange: '10.4.1.0/24', subnetworkRangeName: 'gke-c1-pods-6b2f0a1c' }],
        fingerprint: 'Wq3Ap2yKxOA=',
        stackType: 'IPV4_IPV6',
        ipv6AccessType: 'EXTERNAL',
        ipv6AccessConfigs: [
          {
            kind: 'compute#accessConfig',
            type: 'DIRECT_IPV6',
            name: 'external-ipv6',
            externalIpv6: '2600:1900:4000:7a1b:0:0:0:0',
            externalIpv6PrefixLength: 96,
            networkTier: 'PREMIUM',
          },
        ],
        ...nic0,
      },
    ],
    disks: [{ kind: 'compute#attachedDisk', type: 'PERSISTENT', mode: 'READ_WRITE', source: `${BASE}/zones/${COMPUTE_ZONE}/disks/${name}`, deviceName: 'persistent-disk-0', index: 0, boot: true, autoDelete: true, interface: 'SCSI', diskSizeGb: '100' }],
    selfLink: `${BASE}/zones/${COMPUTE_ZONE}/instances/${name}`,
    scheduling: { onHostMaintenance: 'MIGRATE', automaticRestart: true, preemptible: false, provisioningModel: 'STANDARD' },
    cpuPlatform: 'Intel Broadwell',
    labelFingerprint: '42WmSpB8rSM=',
    startRestricted: false,
    deletionProtection: false,
    fingerprint: 'pS1z1YGxkQk=',
    lastStartTimestamp: '2026-02-11T03:13:02.211-08:00',
    ...instance,
  };
  const nic = (out.networkInterfaces as Json[])[0]!;
  for (const key of Object.keys(nic)) if (nic[key] === undefined) delete nic[key];
  return out as GceInstance & Json & { name: string };
}
