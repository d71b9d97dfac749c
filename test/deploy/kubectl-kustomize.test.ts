// Every kustomization under deploy/ (overlays, components, and any other directory with a
// kustomization.yaml, found at run time so new ones are covered) rendered by the real renderer,
// `kubectl kustomize`, and compared object by object with the project's renderer (kustomize.ts,
// which `npm test` uses for everything else); every object kubectl renders validates against its
// schema. Each component is also rendered on top of each overlay, as deploy/README tells users to.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments, stringify as toYaml } from 'yaml';
import { describeKubectl, kubectlOk } from '../kubectl/kubectl.js';
import { asK8sObject, loadYamlFile, objectId, render, isObject, type Json, type K8sObject } from './kustomize.js';
import { validateAgainstSchemas } from './schemas.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DEPLOY = path.join(ROOT, 'deploy');

/** Every directory under deploy/ holding a kustomization.yaml, with its kind. */
function kustomizations(dir: string): { dir: string; kind: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (!e.isDirectory()) return [];
    const sub = path.join(dir, e.name);
    const here = readdirSync(sub).includes('kustomization.yaml');
    const doc = here ? loadYamlFile(path.join(sub, 'kustomization.yaml'))[0] : undefined;
    const kind = isObject(doc) && typeof doc.kind === 'string' ? doc.kind : 'Kustomization';
    return [...(here ? [{ dir: sub, kind }] : []), ...kustomizations(sub)];
  });
}

const ALL = kustomizations(DEPLOY);
const rel = (p: string): string => path.relative(ROOT, p);
const OVERLAYS = ALL.filter((k) => path.dirname(k.dir) === path.join(DEPLOY, 'overlays')).map((k) => k.dir);
const COMPONENTS = ALL.filter((k) => k.kind === 'Component').map((k) => k.dir);

async function kubectlKustomize(dir: string): Promise<K8sObject[]> {
  const text = await kubectlOk(undefined, ['kustomize', dir], { timeoutMs: 60_000 });
  return parseAllDocuments(text).map((d, i) => {
    if (d.errors.length > 0) throw new Error(`kubectl kustomize ${rel(dir)}: document ${i}: ${d.errors[0]?.message}`);
    return asK8sObject(d.toJS() as Json, `kubectl kustomize ${rel(dir)} #${i}`);
  });
}

/** Objects by id; the two renderers may order them differently (kustomize sorts by kind). */
function byId(objects: K8sObject[]): Map<string, K8sObject> {
  return new Map(objects.map((o) => [objectId(o), o]));
}

function expectSameObjects(fromKubectl: K8sObject[], ours: K8sObject[]): void {
  const a = byId(fromKubectl);
  const b = byId(ours);
  expect(a.size, 'kubectl rendered an object twice').toBe(fromKubectl.length);
  expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
  for (const [id, o] of a) expect(b.get(id), id).toEqual(o);
}

async function expectValid(objects: K8sObject[]): Promise<void> {
  // CRDs from the rendering itself, and the base's (a component may add custom objects alone).
  const crds = [...objects, ...render(path.join(DEPLOY, 'base'))].filter((o) => o.kind === 'CustomResourceDefinition');
  for (const o of objects) expect(await validateAgainstSchemas(o, crds), objectId(o)).toEqual([]);
}

describeKubectl('kubectl kustomize renders every deploy/ kustomization as the project\'s renderer does', () => {
  const work = mkdtempSync(path.join(tmpdir(), 'kubectl-kustomize-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('finds the overlays and components to render', () => {
    expect(OVERLAYS.map(rel)).toEqual(expect.arrayContaining(['deploy/overlays/aws', 'deploy/overlays/azure', 'deploy/overlays/gce', 'deploy/overlays/kind']));
    expect(ALL.map((k) => rel(k.dir))).toContain('deploy/base');
  });

  it.each(ALL.map((k) => rel(k.dir)))('%s: same objects from both renderers, each valid against its schema', async (dir) => {
    const fromKubectl = await kubectlKustomize(path.join(ROOT, dir));
    expect(fromKubectl.length).toBeGreaterThan(0);
    expectSameObjects(fromKubectl, render(path.join(ROOT, dir)));
    await expectValid(fromKubectl);
  });

  const pairs = COMPONENTS.flatMap((c) => OVERLAYS.map((o) => [rel(c), rel(o)] as const));
  it.each(pairs)('%s on top of %s: same objects from both renderers, each valid', async (component, overlay) => {
    // A kustomization of the user's, outside deploy/ (kustomize takes relative paths only).
    const dir = mkdtempSync(path.join(work, 'with-component-'));
    writeFileSync(path.join(dir, 'kustomization.yaml'), toYaml({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: [path.relative(dir, path.join(ROOT, overlay))],
      components: [path.relative(dir, path.join(ROOT, component))],
    }));
    const fromKubectl = await kubectlKustomize(dir);
    const overlayOnly = byId(render(path.join(ROOT, overlay)));
    expect(fromKubectl.filter((o) => !overlayOnly.has(objectId(o))).length, 'the component adds objects').toBeGreaterThan(0);
    expectSameObjects(fromKubectl, render(dir));
    await expectValid(fromKubectl);
  });
});

describe('the schema check is not a no-op', () => {
  const crds = render(path.join(DEPLOY, 'base')).filter((o) => o.kind === 'CustomResourceDefinition');
  const obj = (apiVersion: string, kind: string, rest: Record<string, Json>): K8sObject => ({ apiVersion, kind, metadata: { name: 'x', namespace: 'ns' }, ...rest });

  it.each([
    ['a built-in kind (kubernetes-models)', obj('v1', 'Service', { spec: { ports: [{ port: 'eighty' }] } }), /port/],
    ['a ClusterCIDR (the CRD\'s schema and CEL rules)', obj('networking.x-k8s.io/v1', 'ClusterCIDR', { spec: { perNodeHostBits: 2, ipv4: '10.0.0.0/8' } }), /perNodeHostBits must be at least 4/],
    ['a ServiceMonitor (prometheus-operator models)', obj('monitoring.coreos.com/v1', 'ServiceMonitor', { spec: { endpoints: 'all' } }), /endpoints/],
    ['a kind nothing defines', obj('example.com/v1', 'Widget', {}), /no schema for example.com\/v1 Widget/],
  ])('rejects %s', async (_what, o, message) => {
    expect((await validateAgainstSchemas(o, crds)).join('\n')).toMatch(message);
  });
});
