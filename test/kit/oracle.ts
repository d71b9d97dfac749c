// Upstream's own node-address code as a test oracle (test/controlplane/cmd/oracle): the release
// of k8s.io/cloud-provider, k8s.io/component-helpers and k8s.io/kubernetes that go.sum pins, asked
// over stdin/stdout one JSON line per question. For differential properties: "what does
// Kubernetes do with these inputs", answered by Kubernetes' code, not by a transcription of it.
// Skipped like the real-server tier when Go is missing (controlPlaneUnavailable()).
import type { NodeAddress } from '../../src/model/node-address.js';
import { buildControlPlane } from './controlplane.js';
import { startJsonLinesChild } from './json-lines-child.js';

export type OracleRequest =
  | { op: 'refresh'; node: { metadata: { name: string; annotations?: Record<string, string> }; spec?: { providerID?: string }; status: { addresses: NodeAddress[] } }; cloud: NodeAddress[] }
  | { op: 'hostIPs'; addresses: NodeAddress[] }
  | { op: 'fromNodeIP'; annotation: string; cloud: NodeAddress[] }
  | { op: 'parseAnnotation'; annotation: string };

export interface OracleAnswer {
  addresses?: NodeAddress[];
  patched?: boolean;
  ips?: string[];
  error?: string;
}

export interface Oracle {
  /** Asks every question; the answers in the same order. */
  ask(requests: readonly OracleRequest[]): Promise<OracleAnswer[]>;
  stop(): Promise<void>;
}

export function startOracle(): Oracle {
  return startJsonLinesChild<OracleRequest, OracleAnswer>(buildControlPlane('oracle'));
}
