// The test renderer itself: the kustomize semantics deploy/ relies on, and refusal of anything
// it does not implement (so an overlay cannot pass here and render differently with kubectl).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyJson6902, parseImage, podContainers, render, strategicMerge, type Json, type JsonObject } from './kustomize.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(path.join(tmpdir(), 'kustomize-test-'));
  dirs.push(root);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    writeFileSync(path.join(root, name), text);
  }
  return root;
}

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: { name: app, namespace: ns }
spec:
  selector: { matchLabels: { a: b } }
  template:
    metadata: { labels: { a: b } }
    spec:
      containers:
        - name: app
          image: registry.example:5000/team/app:1.0
          args: [--one=1, --two=2]
          env:
            - { name: A, value: a }
            - { name: B, value: b }
          volumeMounts:
            - { name: tmp, mountPath: /tmp }
      volumes:
        - { name: tmp, emptyDir: {} }
`;
const KUSTOMIZATION = (body: string): string => `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n${body}`;

describe('strategic merge', () => {
  it('replaces plain lists (args), merges keyed lists (containers, env, volumes) in kustomize\'s order (patch items first) and deletes on null', () => {
    const base: Json = { spec: { containers: [{ name: 'c', args: ['--a=1', '--b=2'], env: [{ name: 'A', value: 'a' }, { name: 'B', value: 'b' }] }], hostNetwork: true } };
    const patch: Json = { spec: { containers: [{ name: 'c', args: ['--c=3'], env: [{ name: 'B', value: 'B' }, { name: 'C', value: 'c' }] }], hostNetwork: null } };
    expect(strategicMerge(base, patch, 'test')).toEqual({
      spec: { containers: [{ name: 'c', args: ['--c=3'], env: [{ name: 'B', value: 'B' }, { name: 'C', value: 'c' }, { name: 'A', value: 'a' }] }] },
    });
  });

  it('refuses patch directives it does not implement', () => {
    expect(() => strategicMerge({ a: 1 }, { $patch: 'replace' }, 'test')).toThrow(/\$patch is not supported/);
  });
});

describe('JSON 6902', () => {
  const doc: Json = { a: { list: [1, 2] }, b: 'x' };

  it('adds (append and insert), replaces, removes and tests', () => {
    const out = applyJson6902(doc, [
      { op: 'add', path: '/a/list/-', value: 3 },
      { op: 'add', path: '/a/list/0', value: 0 },
      { op: 'replace', path: '/b', value: 'y' },
      { op: 'remove', path: '/a/list/1' },
      { op: 'test', path: '/b', value: 'y' },
      { op: 'add', path: '/c~1d', value: true },
    ], 'test');
    expect(out).toEqual({ a: { list: [0, 2, 3] }, b: 'y', 'c/d': true });
    expect(doc).toEqual({ a: { list: [1, 2] }, b: 'x' }); // input untouched
  });

  it('fails on missing paths, out-of-range indexes, failed tests and unknown ops', () => {
    expect(() => applyJson6902(doc, [{ op: 'replace', path: '/nope', value: 1 }], 't')).toThrow(/does not exist/);
    expect(() => applyJson6902(doc, [{ op: 'add', path: '/x/y', value: 1 }], 't')).toThrow(/does not exist/);
    expect(() => applyJson6902(doc, [{ op: 'remove', path: '/a/list/5' }], 't')).toThrow(/out of range/);
    expect(() => applyJson6902(doc, [{ op: 'test', path: '/b', value: 'z' }], 't')).toThrow(/test failed/);
    expect(() => applyJson6902(doc, [{ op: 'move', from: '/b', path: '/c' }], 't')).toThrow(/not supported/);
  });
});

describe('images', () => {
  it('parses names with registry ports, tags and digests', () => {
    expect(parseImage('registry.example:5000/team/app:1.0')).toEqual({ name: 'registry.example:5000/team/app', tag: '1.0', digest: undefined });
    expect(parseImage('registry.example:5000/team/app')).toEqual({ name: 'registry.example:5000/team/app', digest: undefined });
    expect(parseImage('app@sha256:abc')).toEqual({ name: 'app', digest: 'sha256:abc' });
  });
});

describe('render', () => {
  it('renders a base with an overlay: resources, both patch kinds, images (overlay after base)', () => {
    const root = tree({
      'base/kustomization.yaml': KUSTOMIZATION('resources: [deployment.yaml]\nimages:\n  - { name: registry.example:5000/team/app, newTag: "2.0" }\n'),
      'base/deployment.yaml': DEPLOYMENT,
      'overlay/kustomization.yaml': KUSTOMIZATION(`resources: [../base, cm.yaml]
patches:
  - path: smp.yaml
  - target: { group: apps, version: v1, kind: Deployment, name: app }
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/args/-
        value: --three=3
images:
  - { name: registry.example:5000/team/app, newName: other/app }
`),
      'overlay/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: cm, namespace: ns }\ndata: { k: v }\n',
      'overlay/smp.yaml': `apiVersion: apps/v1
kind: Deployment
metadata: { name: app, namespace: ns }
spec:
  template:
    spec:
      containers:
        - name: app
          env: [{ name: B, value: changed }]
          volumeMounts: [{ name: cfg, mountPath: /etc/cfg, readOnly: true }]
      volumes: [{ name: cfg, configMap: { name: cm } }]
`,
    });
    const objects = render(path.join(root, 'overlay'));
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Deployment/app', 'ConfigMap/cm']);
    const c = podContainers(objects[0])[0] as JsonObject;
    expect(c.image).toBe('other/app:2.0');
    expect(c.args).toEqual(['--one=1', '--two=2', '--three=3']);
    expect(c.env).toEqual([{ name: 'B', value: 'changed' }, { name: 'A', value: 'a' }]);
    expect(c.volumeMounts).toEqual([{ name: 'cfg', mountPath: '/etc/cfg', readOnly: true }, { name: 'tmp', mountPath: '/tmp' }]);
  });

  it('applies a component to the accumulation of the kustomization that lists it, and renders it alone', () => {
    const root = tree({
      'base/kustomization.yaml': KUSTOMIZATION('resources: [deployment.yaml]\n'),
      'base/deployment.yaml': DEPLOYMENT,
      'comp/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources: [cm.yaml]
patches:
  - target: { kind: Deployment, name: app }
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/args/-
        value: --from-component
`,
      'comp/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: cm, namespace: ns }\n',
      'overlay/kustomization.yaml': KUSTOMIZATION('resources: [../base]\ncomponents: [../comp]\n'),
      'wrong/kustomization.yaml': KUSTOMIZATION('resources: [../comp]\n'),
    });
    const objects = render(path.join(root, 'overlay'));
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['Deployment/app', 'ConfigMap/cm']);
    expect((podContainers(objects[0])[0] as JsonObject).args).toEqual(['--one=1', '--two=2', '--from-component']);
    // Alone, its patch has nothing to match: an error here (kubectl kustomize prints nothing and
    // succeeds; this renderer is stricter on purpose, as for any patch that matches nothing).
    expect(() => render(path.join(root, 'comp'))).toThrow(/matches no resource/);
    expect(() => render(path.join(root, 'wrong'))).toThrow(/is a Component: list it under components/);
  });

  it('refuses kustomization fields, patch fields and targets it does not implement', () => {
    const withField = tree({ 'k/kustomization.yaml': KUSTOMIZATION('namePrefix: x-\nresources: []\n') });
    expect(() => render(path.join(withField, 'k'))).toThrow(/field "namePrefix" is not supported/);
    const withSelector = tree({
      'k/kustomization.yaml': KUSTOMIZATION('resources: [d.yaml]\npatches:\n  - target: { labelSelector: a=b }\n    patch: "[]"\n'),
      'k/d.yaml': DEPLOYMENT,
    });
    expect(() => render(path.join(withSelector, 'k'))).toThrow(/target field "labelSelector" is not supported/);
  });

  it('fails when a patch matches nothing or a resource is defined twice', () => {
    const noMatch = tree({
      'k/kustomization.yaml': KUSTOMIZATION('resources: [d.yaml]\npatches:\n  - target: { kind: Deployment, name: other }\n    patch: "[]"\n'),
      'k/d.yaml': DEPLOYMENT,
    });
    expect(() => render(path.join(noMatch, 'k'))).toThrow(/matches no resource/);
    const twice = tree({ 'k/kustomization.yaml': KUSTOMIZATION('resources: [d.yaml, e.yaml]\n'), 'k/d.yaml': DEPLOYMENT, 'k/e.yaml': DEPLOYMENT });
    expect(() => render(path.join(twice, 'k'))).toThrow(/defined twice/);
  });
});
