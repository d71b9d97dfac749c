// Reads what the audit needs from a live cluster: nodes, ClusterCIDRs (when the CRD is served),
// ServiceCIDRs (v1, else v1beta1, else the --service-cluster-ip-range given to the command).
import { parseCIDRList } from '../ipam/cidr.js';
import type { KubeClient } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import { servedServiceCIDRResource } from '../kube/discovery.js';
import { CLUSTERCIDRS, NODES, type KubeObject, type ServiceCIDRObject } from '../kube/types.js';
import type { NodeObject } from '../model/node.js';
import type { AuditInput } from './findings.js';
import { auditClusterCIDR, auditNode, auditServiceCIDR, type ClusterCIDRObjectLike } from './objects.js';

export interface CollectOptions {
  /** --cluster-cidr of a cluster allocating from flags (an extra pool). */
  clusterCIDR?: string;
  /** --service-cluster-ip-range, used when no ServiceCIDR API is served. */
  serviceClusterIPRange?: string;
}

export interface Collected {
  input: AuditInput;
  /** What was and was not visible, for the report header. */
  notes: string[];
}

export async function collectAuditInput(client: KubeClient, options: CollectOptions = {}): Promise<Collected> {
  const notes: string[] = [];
  const nodes = (await client.listAll<NodeObject & KubeObject>(NODES)).items;
  const input: AuditInput = { nodes: nodes.map(auditNode), pools: [], serviceRanges: [] };
  try {
    const ccs = (await client.listAll<ClusterCIDRObjectLike & KubeObject>(CLUSTERCIDRS)).items;
    input.pools.push(...ccs.map(auditClusterCIDR));
    notes.push(`${ccs.length} ClusterCIDR(s) (${CLUSTERCIDRS.group}/${CLUSTERCIDRS.version})`);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    notes.push(`ClusterCIDRs: ${CLUSTERCIDRS.group}/${CLUSTERCIDRS.version} is not served`);
  }
  if (options.clusterCIDR !== undefined) {
    input.pools.push({ name: '--cluster-cidr', cidrs: parseCIDRList(options.clusterCIDR).map((c) => c.text), source: 'flags' });
  }
  const res = await servedServiceCIDRResource(client);
  if (res) {
    const scs = (await client.listAll<ServiceCIDRObject>(res)).items;
    input.serviceRanges.push(...scs.map((o) => auditServiceCIDR({ metadata: o.metadata, ...(o.spec ? { spec: o.spec } : {}) })));
    notes.push(`${scs.length} ServiceCIDR(s) (${res.group}/${res.version})`);
  } else {
    notes.push('ServiceCIDRs: not served');
  }
  if (options.serviceClusterIPRange !== undefined && !res) {
    input.serviceRanges.push({ name: '--service-cluster-ip-range', cidrs: parseCIDRList(options.serviceClusterIPRange).map((c) => c.text), source: 'flags' });
  }
  return { input, notes };
}
