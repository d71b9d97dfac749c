// The OpenAPI documents generated from the compact schema description: closed references,
// kube-apiserver's shapes (gvk tags, allOf references, PATCH operations with fieldValidation),
// patch metadata equal to the double's strategic-merge table, the ClusterCIDR schema equal to
// the shipped CRD's, the protobuf encoding kubectl decodes, and the unknown-field check.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { Store } from '../../src/double/index.js';
import { DEFINITIONS, definitionOf, resolve, unknownFields, type Schema } from '../../src/double/openapi-schema.js';
import { groupVersionPath, openApiV2, openApiV3, openApiV3Index, toOpenApi } from '../../src/double/openapi.js';
import { encodeOpenApiV2 } from '../../src/double/openapi-proto.js';
import { goFormat, unknownFieldsOf } from '../../src/double/openapi-validation.js';
import { readFields } from '../../src/double/review-proto.js';
import { CLUSTERCIDR_PRINTER_COLUMNS } from '../../src/double/table.js';
import { repoRoot } from '../kit/cli.js';

const resources = new Store().resources;
type Json = Record<string, unknown>;

const CRD = parseYaml(readFileSync(path.join(repoRoot, 'deploy/base/crd-clustercidrs.yaml'), 'utf8')) as {
  spec: { versions: { name: string; schema: { openAPIV3Schema: Json }; additionalPrinterColumns: Json[] }[] };
};

function refsIn(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) v.forEach((x) => refsIn(x, out));
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v as Json)) {
      if (k === '$ref' && typeof x === 'string') out.push(x);
      else refsIn(x, out);
    }
  }
  return out;
}

describe('OpenAPI v3', () => {
  const index = openApiV3Index(resources) as { paths: Record<string, { serverRelativeURL: string }> };

  it('indexes one document per served group-version, with a content hash', () => {
    expect(Object.keys(index.paths)).toEqual(['api/v1', 'apis/coordination.k8s.io/v1', 'apis/events.k8s.io/v1', 'apis/networking.k8s.io/v1', 'apis/networking.x-k8s.io/v1']);
    expect(index.paths['api/v1'].serverRelativeURL).toMatch(/^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}$/);
  });

  it.each(resources.map((r) => [r.id, r] as const))('%s: a tagged schema with closed references, and a PATCH operation taking fieldValidation', (_id, r) => {
    const doc = openApiV3(resources, groupVersionPath(r)) as { paths: Record<string, Record<string, Json>>; components: { schemas: Record<string, Json> } };
    const schemas = doc.components.schemas;
    for (const ref of refsIn(doc)) expect(schemas[ref.replace('#/components/schemas/', '')], ref).toBeDefined();
    const def = definitionOf(r) as string;
    expect(schemas[def]['x-kubernetes-group-version-kind']).toContainEqual({ group: r.group, kind: r.kind, version: r.version });
    const item = `/${groupVersionPath(r)}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.plural}/{name}`;
    const patch = doc.paths[item].patch as { parameters: Json[]; requestBody: { content: Json }; 'x-kubernetes-group-version-kind': Json };
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: r.group, kind: r.kind, version: r.version });
    expect(patch.parameters).toContainEqual(expect.objectContaining({ name: 'fieldValidation', in: 'query' }));
    expect('application/strategic-merge-patch+json' in patch.requestBody.content).toBe(!r.custom);
    expect(doc.paths[`${item}/status`] !== undefined).toBe(r.status);
  });

  it('writes a described reference as allOf (kube-apiserver\'s v3 form) and v2 side by side', () => {
    const s: Schema = { t: 'ref', name: 'io.k8s.api.core.v1.NodeSpec', d: 'the spec' };
    expect(toOpenApi(s, 'v3')).toEqual({ description: 'the spec', allOf: [{ $ref: '#/components/schemas/io.k8s.api.core.v1.NodeSpec' }] });
    expect(toOpenApi(s, 'v2')).toEqual({ description: 'the spec', $ref: '#/definitions/io.k8s.api.core.v1.NodeSpec' });
  });

  // kubectl computes a client-side apply's strategic merge patch from these extensions; the
  // double applies it with its own table: the two must agree, list by list.
  it.each(resources.filter((r) => !r.custom).map((r) => [r.id, r] as const))('%s: patch strategies equal the double\'s strategic-merge table', (_id, r) => {
    const found: Record<string, { mergeKey?: string; set?: boolean }> = {};
    const walk = (s: Schema, at: string, depth: number): void => {
      const x = resolve(s);
      if (depth > 6) return;
      if (x.t === 'object') for (const [k, v] of Object.entries(x.props)) walk(v, at ? `${at}.${k}` : k, depth + 1);
      if (x.t === 'array' && x.strategy?.split(',').includes('merge')) found[at] = x.mergeKey ? { mergeKey: x.mergeKey } : { set: true };
      // The table's paths carry no list indexes: lists inside list elements (a container's env) sit under the list's path.
      if (x.t === 'array') walk(x.items, at, depth + 1);
    };
    walk({ t: 'ref', name: definitionOf(r) as string }, '', 0);
    const expected = Object.fromEntries(Object.entries(r.smp).map(([k, v]) => [k, 'mergeKey' in v ? { mergeKey: v.mergeKey } : { set: true }]));
    expect(found).toEqual(expected);
  });
});

describe('ClusterCIDR', () => {
  const version = CRD.spec.versions[0];

  it('has the schema of deploy/base/crd-clustercidrs.yaml (CEL rules aside: the double checks those by hand)', () => {
    const strip = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(strip);
      if (v && typeof v === 'object') {
        return Object.fromEntries(Object.entries(v as Json).filter(([k]) => k !== 'x-kubernetes-validations').map(([k, x]) => [k, typeof x === 'string' ? x.trim() : strip(x)]));
      }
      return v;
    };
    expect(toOpenApi(DEFINITIONS['io.x-k8s.networking.v1.ClusterCIDR'], 'v3')).toEqual(strip(version.schema.openAPIV3Schema));
  });

  it('prints the CRD\'s additionalPrinterColumns', () => {
    expect(CLUSTERCIDR_PRINTER_COLUMNS).toEqual(version.additionalPrinterColumns);
  });
});

describe('OpenAPI v2 in protobuf', () => {
  const doc = openApiV2(resources) as { definitions: Record<string, Json> };
  const pb = encodeOpenApiV2(doc);
  const str = (b: Buffer | undefined): string => (b ?? Buffer.alloc(0)).toString('utf8');

  it('decodes back to the same definitions, with properties, types and the gvk vendor extension', () => {
    const top = readFields(pb);
    expect(str(top.find((f) => f.num === 1)?.bytes)).toBe('2.0');
    const defs = readFields(top.find((f) => f.num === 9)?.bytes as Buffer).map((f) => readFields(f.bytes as Buffer));
    expect(defs.map((d) => str(d.find((f) => f.num === 1)?.bytes))).toEqual(Object.keys(doc.definitions));
    const node = readFields(defs.find((d) => str(d[0].bytes) === 'io.k8s.api.core.v1.Node')?.[1].bytes as Buffer);
    const props = readFields(node.find((f) => f.num === 25)?.bytes as Buffer).map((f) => str(readFields(f.bytes as Buffer)[0].bytes));
    expect(props).toEqual(['apiVersion', 'kind', 'metadata', 'spec', 'status']);
    expect(str(readFields(node.find((f) => f.num === 22)?.bytes as Buffer)[0].bytes)).toBe('object');
    const ext = readFields(node.find((f) => f.num === 31)?.bytes as Buffer);
    expect(str(ext[0].bytes)).toBe('x-kubernetes-group-version-kind');
    expect(parseYaml(str(readFields(ext[1].bytes as Buffer)[0].bytes))).toEqual([{ group: '', kind: 'Node', version: 'v1' }]);
  });
});

describe('unknown fields', () => {
  const node = { t: 'ref', name: 'io.k8s.api.core.v1.Node' } as const;
  it.each([
    [{ spec: { podCIDRs: ['10.0.0.0/24'] } }, []],
    [{ spec: { bogus: 1 }, extra: true }, ['spec.bogus', 'extra']],
    [{ spec: { taints: [{ key: 'a', effect: 'NoSchedule' }, { key: 'b', colour: 'red' }] } }, ['spec.taints[1].colour']],
    [{ metadata: { labels: { a: 'b' }, annotations: { x: 'y' }, nme: 'typo' } }, ['metadata.nme']],
    [{ status: { capacity: { cpu: '4' }, nodeInfo: { kubeletVersion: 'v1', kernel: 'x' }, config: { anything: { goes: 1 } } } }, ['status.nodeInfo.kernel']],
  ])('%j → %j', (obj, expected) => {
    expect(unknownFields(obj, node)).toEqual(expected);
  });

  it('skips strategic-merge directives; a CRD\'s free-form metadata takes anything', () => {
    const nodes = resources.find((r) => r.id === 'nodes');
    expect(unknownFieldsOf(nodes as never, { status: { $setElementOrder: [], conditions: [{ type: 'Ready', $patch: 'delete' }] } })).toEqual([]);
    const cc = resources.find((r) => r.id === 'clustercidrs.networking.x-k8s.io');
    expect(unknownFieldsOf(cc as never, { metadata: { whatever: 1 }, spec: { ipv4: '10.0.0.0/8', perNodeHostBits: 8, ipv5: 'x' } })).toEqual(['spec.ipv5']);
  });

  it('prints a patch as Go prints a decoded map', () => {
    expect(goFormat({ spec: { b: [1, 'x'], a: null }, metadata: { labels: { k: 'v' } } })).toBe('map[metadata:map[labels:map[k:v]] spec:map[a:<nil> b:[1 x]]]');
  });
});
