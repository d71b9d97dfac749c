// Per-node address overrides (KEP-3705 test plan: "allow manually overriding the default node
// IPs"). The same YAML comes from a file or a ConfigMap key:
//
//   nodes:
//     kind-worker:
//       mode: append            # append (default) | replace
//       addresses:
//         - { type: InternalIP, address: 10.99.0.7 }
//         - { type: ExternalIP, address: 2001:db8::7 }
import { isIP } from 'node:net';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { NODE_ADDRESS_TYPES, type NodeAddress, type NodeAddressType } from '../../src/model/node-address.js';

export type KindOverrideMode = 'append' | 'replace';

export interface KindAddressOverride {
  /** append: extra entries after the discovered ones; replace: these entries only. */
  mode: KindOverrideMode;
  addresses: NodeAddress[];
}

export interface KindOverrides {
  nodes: Record<string, KindAddressOverride>;
}

const IP_TYPES: ReadonlySet<NodeAddressType> = new Set(['InternalIP', 'ExternalIP']);

/** Checks one override entry; `field` names it in the error. */
export function checkOverrideAddress(entry: unknown, field: string): NodeAddress {
  if (entry === null || typeof entry !== 'object') throw new Error(`${field}: expected {type, address}, got ${JSON.stringify(entry)}`);
  const { type, address } = entry as { type?: unknown; address?: unknown };
  if (!NODE_ADDRESS_TYPES.includes(type as NodeAddressType)) {
    throw new Error(`${field}.type: "${String(type)}" is not one of ${NODE_ADDRESS_TYPES.join(', ')}`);
  }
  if (typeof address !== 'string' || address === '') throw new Error(`${field}.address: must be a non-empty string`);
  if (IP_TYPES.has(type as NodeAddressType) && isIP(address) === 0) {
    throw new Error(`${field}.address: "${address}" is not an IP address (type ${String(type)})`);
  }
  return { type: type as NodeAddressType, address };
}

const fileSchema = z.strictObject({
  nodes: z.record(
    z.string().min(1),
    z.strictObject({
      mode: z.enum(['append', 'replace']).default('append'),
      addresses: z.array(z.unknown()),
    }),
  ).default({}),
});

/** Parses and validates overrides YAML; `source` (file path or ConfigMap ref) names it in errors. */
export function parseKindOverrides(text: string, source = 'overrides'): KindOverrides {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new Error(`${source}: not valid YAML: ${(err as Error).message}`, { cause: err });
  }
  if (doc === null || doc === undefined) return { nodes: {} };
  const result = fileSchema.safeParse(doc);
  if (!result.success) {
    const issue = result.error.issues[0];
    const path = issue.path.map(String).join('.');
    throw new Error(`${source}: ${path || '(root)'}: ${issue.message}`);
  }
  const nodes: Record<string, KindAddressOverride> = {};
  for (const [node, o] of Object.entries(result.data.nodes)) {
    const addresses = o.addresses.map((a, i) => checkOverrideAddress(a, `${source}: nodes.${node}.addresses[${i}]`));
    if (o.mode === 'replace' && addresses.length === 0) {
      throw new Error(`${source}: nodes.${node}: mode replace needs at least one address`);
    }
    nodes[node] = { mode: o.mode, addresses };
  }
  return { nodes };
}
