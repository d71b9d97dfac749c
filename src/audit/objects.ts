// Plain API objects → audit inputs. Pure; shared by the `audit` command (from lists) and the node
// IPAM controller (from its caches).
import { nodePodCIDRs, POD_CIDR_POOL_ANNOTATION, type NodeObject } from '../model/node.js';
import type { AuditNode, AuditPool, AuditServiceRange } from './findings.js';

export interface ClusterCIDRObjectLike {
  metadata: { name: string; deletionTimestamp?: string | null; [k: string]: unknown };
  spec?: { ipv4?: string; ipv6?: string; [k: string]: unknown };
}

export interface ServiceCIDRObjectLike {
  metadata: { name: string; deletionTimestamp?: string | null; [k: string]: unknown };
  spec?: { cidrs?: string[]; [k: string]: unknown };
}

export function auditNode(node: NodeObject): AuditNode {
  const ann = node.metadata.annotations?.[POD_CIDR_POOL_ANNOTATION];
  // The node's own lists, not copies: the audit only reads them, and the controller builds one of
  // these for every cached node each round.
  const podCIDRs = node.spec?.podCIDRs;
  const out: AuditNode = {
    name: node.metadata.name,
    addresses: node.status?.addresses ?? [],
    podCIDRs: podCIDRs && podCIDRs.length > 0 ? podCIDRs : nodePodCIDRs(node),
  };
  if (ann !== undefined) out.allocatedFrom = ann;
  return out;
}

export function auditClusterCIDR(obj: ClusterCIDRObjectLike): AuditPool {
  const cidrs = [obj.spec?.ipv4, obj.spec?.ipv6].filter((c): c is string => typeof c === 'string' && c !== '');
  return { name: obj.metadata.name, cidrs, terminating: !!obj.metadata.deletionTimestamp, source: 'ClusterCIDR' };
}

export function auditServiceCIDR(obj: ServiceCIDRObjectLike): AuditServiceRange {
  const cidrs = (obj.spec?.cidrs ?? []).filter((c) => typeof c === 'string' && c !== '');
  return { name: obj.metadata.name, cidrs, terminating: !!obj.metadata.deletionTimestamp, source: 'ServiceCIDR' };
}
