// deploy/node-lifecycle (the delete-nodes grant), the bare-metal overlay that runs
// cloud-node-lifecycle with the static provider, and the kind setup that runs it on the host.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseStaticCloudConfig } from '../../providers/static/config.js';
import { resolveRunOptions, type RawRunFlags } from '../../src/manager/options.js';
import { podContainers, render, type JsonObject, type K8sObject } from './kustomize.js';

const ROOT = path.resolve(__dirname, '../..');
const DEPLOY = path.join(ROOT, 'deploy');

function args(objects: K8sObject[]): string[] {
  const dep = objects.find((o) => o.kind === 'Deployment')!;
  return (podContainers(dep)[0]!.args as string[]) ?? [];
}

const rawFlags = (list: string[]): RawRunFlags =>
  Object.fromEntries(list.map((a) => {
    const [, name, value] = /^--([a-z0-9-]+)=(.*)$/.exec(a) ?? [];
    return [name!.replace(/-([a-z0-9])/g, (_m: string, c: string) => c.toUpperCase()), value];
  })) as RawRunFlags;

const deleteGrant = (objects: K8sObject[]) => {
  const role = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'node-address-ccm-node-lifecycle');
  const binding = objects.find((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === 'node-address-ccm-node-lifecycle');
  return { role, binding };
};

describe('deploy/node-lifecycle', () => {
  it('grants delete on nodes and nothing else, to the node-address-ccm ServiceAccount', () => {
    const { role, binding } = deleteGrant(render(path.join(DEPLOY, 'node-lifecycle')));
    expect(role?.rules).toEqual([{ apiGroups: [''], resources: ['nodes'], verbs: ['delete'] }]);
    expect(binding?.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'node-address-ccm-node-lifecycle' });
    expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: 'node-address-ccm', namespace: 'kube-system' }]);
  });

  it('is not part of deploy/base (the controller is off by default there)', () => {
    expect(deleteGrant(render(path.join(DEPLOY, 'base'))).role).toBeUndefined();
    for (const overlay of ['aws', 'azure', 'gce']) expect(deleteGrant(render(path.join(DEPLOY, 'overlays', overlay))).role, overlay).toBeUndefined();
  });
});

describe('deploy/overlays/bare-metal', () => {
  const objects = render(path.join(DEPLOY, 'overlays/bare-metal'));

  it('runs every default controller plus cloud-node-lifecycle with the static provider, and grants the deletion', () => {
    const opts = resolveRunOptions(rawFlags(args(objects)));
    expect([...opts.controllers].sort()).toEqual(['cloud-node', 'cloud-node-lifecycle', 'node-ipam']);
    expect(opts.cloudProvider).toBe('static');
    expect(opts.nodeMonitorPeriodMs).toBe(5000);
    expect(opts.leaderElection.enabled).toBe(true);
    expect(deleteGrant(objects).role).toBeDefined();
  });

  it('mounts a cloud-config the static provider accepts, with a shut-down machine in it', () => {
    expect(args(objects)).toContain('--cloud-config=/etc/node-address-ccm/cloud.conf');
    const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'node-address-ccm-cloud-config')!;
    const config = parseStaticCloudConfig((cm.data as Record<string, string>)['cloud.conf']!);
    expect([...config.nodes.keys()]).toEqual(['rack1-node1', 'rack1-node2', 'rack2-node1']);
    expect(config.nodes.get('rack2-node1')!.shutdown).toBe(true);
    const dep = objects.find((o) => o.kind === 'Deployment')!;
    const volumes = ((dep.spec as JsonObject).template as JsonObject).spec as JsonObject;
    // A whole-ConfigMap volume (no subPath), so edits reach the pod and the provider reloads them.
    expect(volumes.volumes).toEqual(expect.arrayContaining([{ name: 'cloud-config', configMap: { name: 'node-address-ccm-cloud-config' } }]));
    expect(JSON.stringify(podContainers(dep)[0]!.volumeMounts)).not.toContain('subPath');
  });
});

describe('kind: cloud-node-lifecycle runs on the host with the kind provider', () => {
  it('e2e.sh starts the host process with it, and the kind overlay grants its deletion', () => {
    const script = readFileSync(path.join(DEPLOY, 'kind/e2e.sh'), 'utf8');
    expect(script).toContain('--controllers=cloud-node,cloud-node-lifecycle');
    const hostFlags = resolveRunOptions({ controllers: 'cloud-node,cloud-node-lifecycle', cloudProvider: 'kind', leaderElect: 'false' });
    expect([...hostFlags.controllers].sort()).toEqual(['cloud-node', 'cloud-node-lifecycle']);
    expect(deleteGrant(render(path.join(DEPLOY, 'overlays/kind'))).role).toBeDefined();
  });
});
