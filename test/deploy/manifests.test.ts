// Offline validation of deploy/: every YAML parses, every Kubernetes object validates against
// the Kubernetes schemas (kubernetes-models) or, for ClusterCIDRs, the CRD's own schema and CEL
// rules; the base renders with each overlay; RBAC, security and scheduling properties hold.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigMap, Service, ServiceAccount } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1';
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { asK8sObject, isObject, loadYamlFile, podContainers, podSpecOf, render, type Json, type JsonObject, type K8sObject } from './kustomize.js';
import { validate } from './openapi.js';
import { CREATE_CASES, UPDATE_CASES } from './clustercidr-cases.js';
import { resolveRunOptions, type RawRunFlags } from '../../src/manager/options.js';
import { parseAWSCloudConfig } from '../../providers/aws/config.js';
import { parseGceConfig } from '../../providers/gce/config.js';
import { parseAzureCloudConfig } from '../../providers/azure/config.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DEPLOY = path.join(ROOT, 'deploy');

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return yamlFiles(p);
    return /\.ya?ml$/.test(e.name) ? [p] : [];
  });
}

const rel = (p: string): string => path.relative(ROOT, p);
const ALL_YAML = yamlFiles(DEPLOY);
// Files that are not Kubernetes API objects: kustomizations, kind cluster configs.
const isKustomization = (f: string): boolean => path.basename(f) === 'kustomization.yaml';
const isKindConfig = (f: string): boolean => f.startsWith(path.join(DEPLOY, 'kind') + path.sep);
// Strategic-merge patch files are partial objects: they are checked as part of the rendering.
const PATCH_FILES = new Set(
  ALL_YAML.filter(isKustomization).flatMap((k) => {
    const doc = loadYamlFile(k)[0] as JsonObject;
    return ((doc.patches as JsonObject[] | undefined) ?? []).flatMap((p) => (typeof p.path === 'string' ? [path.resolve(path.dirname(k), p.path)] : []));
  }),
);
const OBJECT_FILES = ALL_YAML.filter((f) => !isKustomization(f) && !isKindConfig(f) && !PATCH_FILES.has(f));

const crd = asK8sObject(loadYamlFile(path.join(DEPLOY, 'base/crd-clustercidrs.yaml'))[0], 'crd');
const crdVersion = ((crd.spec as JsonObject).versions as JsonObject[])[0];
const crdSchema = (crdVersion.schema as JsonObject).openAPIV3Schema as JsonObject;
const specSchema = (crdSchema.properties as JsonObject).spec as JsonObject;
const specProps = specSchema.properties as Record<string, JsonObject>;

type Validatable = { validate(): void };
const MODELS: Record<string, (o: K8sObject) => Validatable> = {
  'v1/ServiceAccount': (o) => new ServiceAccount(o as never),
  'v1/ConfigMap': (o) => new ConfigMap(o as never),
  'apps/v1/Deployment': (o) => new Deployment(o as never),
  'policy/v1/PodDisruptionBudget': (o) => new PodDisruptionBudget(o as never),
  'rbac.authorization.k8s.io/v1/ClusterRole': (o) => new ClusterRole(o as never),
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': (o) => new ClusterRoleBinding(o as never),
  'rbac.authorization.k8s.io/v1/Role': (o) => new Role(o as never),
  'rbac.authorization.k8s.io/v1/RoleBinding': (o) => new RoleBinding(o as never),
  'apiextensions.k8s.io/v1/CustomResourceDefinition': (o) => new CustomResourceDefinition(o as never),
  // components/monitoring (prometheus-operator kinds, and the Service its ServiceMonitor selects).
  'v1/Service': (o) => new Service(o as never),
  'monitoring.coreos.com/v1/ServiceMonitor': (o) => new ServiceMonitor(o as never),
  'monitoring.coreos.com/v1/PrometheusRule': (o) => new PrometheusRule(o as never),
};

/** Validate one object: kubernetes-models for built-in kinds, the CRD schema for ClusterCIDR. */
function validateObject(o: K8sObject): string[] {
  const key = `${o.apiVersion}/${o.kind}`;
  if (key === 'networking.x-k8s.io/v1/ClusterCIDR') return validate(crdSchema, o);
  const model = MODELS[key];
  if (!model) return [`no validator for ${key}`];
  try {
    model(o).validate();
    return [];
  } catch (err) {
    return [String(err instanceof Error ? err.message : err)];
  }
}

describe('every YAML file under deploy/', () => {
  it('finds the files it is meant to check', () => {
    expect(ALL_YAML.map(rel)).toEqual(
      expect.arrayContaining([
        'deploy/base/rbac.yaml',
        'deploy/base/crd-clustercidrs.yaml',
        'deploy/base/deployment.yaml',
        'deploy/kind/cluster-dual.yaml',
        'deploy/overlays/kind/kustomization.yaml',
      ]),
    );
    expect(yamlFiles(path.join(DEPLOY, 'examples')).length).toBeGreaterThanOrEqual(3);
  });

  it.each(ALL_YAML.map(rel))('%s parses as YAML', (file) => {
    expect(loadYamlFile(path.join(ROOT, file)).length).toBeGreaterThan(0);
  });

  it.each(OBJECT_FILES.map(rel))('%s validates against the Kubernetes schemas', (file) => {
    const objects = loadYamlFile(path.join(ROOT, file)).map((v, i) => asK8sObject(v, `${file}#${i}`));
    for (const o of objects) expect(validateObject(o), `${o.kind}/${o.metadata.name}`).toEqual([]);
  });

  it('the validators reject broken objects (they are not no-ops)', () => {
    const dep = asK8sObject(loadYamlFile(path.join(DEPLOY, 'base/deployment.yaml'))[0], 'deployment');
    const broken = structuredClone(dep) as JsonObject;
    const container = podContainers(broken as K8sObject)[0];
    container.ports = [{ containerPort: 'not-a-number' }];
    expect(validateObject(broken as K8sObject).join()).toMatch(/containerPort/);
    const badCidr = { apiVersion: 'networking.x-k8s.io/v1', kind: 'ClusterCIDR', metadata: { name: 'x' }, spec: { perNodeHostBits: '8', ipv4: '10.0.0.0/8' } };
    expect(validateObject(badCidr as unknown as K8sObject).join()).toMatch(/perNodeHostBits: must be integer/);
    expect(validateObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } })).toEqual(['no validator for v1/Secret']);
  });
});

// -------------------------------------------------------------------------------------------
describe('ClusterCIDR CRD', () => {
  it('is clustercidrs.networking.x-k8s.io v1, cluster-scoped, served and stored', () => {
    expect(crd.metadata.name).toBe('clustercidrs.networking.x-k8s.io');
    const spec = crd.spec as JsonObject;
    expect(spec.group).toBe('networking.x-k8s.io');
    expect(spec.scope).toBe('Cluster');
    expect(spec.names).toEqual({ kind: 'ClusterCIDR', listKind: 'ClusterCIDRList', plural: 'clustercidrs', singular: 'clustercidr' });
    expect((spec.versions as JsonObject[]).map((v) => [v.name, v.served, v.storage])).toEqual([['v1', true, true]]);
  });

  it('has the wire format of node-ipam-controller: nodeSelector, perNodeHostBits (int32), ipv4, ipv6', () => {
    expect(Object.keys(specProps).sort()).toEqual(['ipv4', 'ipv6', 'nodeSelector', 'perNodeHostBits']);
    expect(specSchema.required).toEqual(['perNodeHostBits']);
    expect(specProps.perNodeHostBits).toMatchObject({ type: 'integer', format: 'int32' });
    expect(specProps.ipv4.type).toBe('string');
    expect(specProps.ipv6.type).toBe('string');
    const terms = (specProps.nodeSelector.properties as JsonObject).nodeSelectorTerms as JsonObject;
    const term = (terms.items as JsonObject).properties as JsonObject;
    expect(Object.keys(term).sort()).toEqual(['matchExpressions', 'matchFields']);
    // No minimum keyword: it would also apply to updates of old objects with fewer bits.
    expect(specProps.perNodeHostBits.minimum).toBeUndefined();
  });

  it('has a structural schema: every property below the root has a type, arrays have items', () => {
    const walk = (schema: JsonObject, at: string): string[] => {
      const problems: string[] = [];
      if (typeof schema.type !== 'string') problems.push(`${at}: no type`);
      if (schema.type === 'array' && !isObject(schema.items)) problems.push(`${at}: array without items`);
      for (const [k, sub] of Object.entries((schema.properties as JsonObject | undefined) ?? {})) problems.push(...walk(sub as JsonObject, `${at}.${k}`));
      if (isObject(schema.items)) problems.push(...walk(schema.items, `${at}[]`));
      return problems;
    };
    expect(walk(crdSchema, '')).toEqual([]);
  });

  it('prints PerNodeHostBits, IPv4, IPv6 and Age', () => {
    expect(crdVersion.additionalPrinterColumns).toEqual([
      { name: 'PerNodeHostBits', type: 'integer', jsonPath: '.spec.perNodeHostBits' },
      { name: 'IPv4', type: 'string', jsonPath: '.spec.ipv4' },
      { name: 'IPv6', type: 'string', jsonPath: '.spec.ipv6' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ]);
  });

  it('has the CEL rules, word for word', () => {
    const rules = (s: JsonObject): Json => s['x-kubernetes-validations'] as Json;
    expect(rules(specProps.perNodeHostBits)).toEqual([
      { rule: 'self == oldSelf', message: 'perNodeHostBits is immutable' },
      { rule: 'oldSelf.hasValue() || self >= 4', optionalOldSelf: true, message: 'perNodeHostBits must be at least 4' },
    ]);
    expect(rules(specProps.nodeSelector)).toEqual([{ rule: 'self == oldSelf', message: 'nodeSelector is immutable' }]);
    expect(rules(specProps.ipv4)).toEqual([
      { rule: 'self == oldSelf', message: 'ipv4 is immutable' },
      { rule: "self == '' || (isCIDR(self) && cidr(self).ip().family() == 4)", message: 'ipv4 must be an IPv4 CIDR' },
    ]);
    expect(rules(specProps.ipv6)).toEqual([
      { rule: 'self == oldSelf', message: 'ipv6 is immutable' },
      { rule: "self == '' || (isCIDR(self) && cidr(self).ip().family() == 6)", message: 'ipv6 must be an IPv6 CIDR' },
    ]);
    expect((rules(specSchema) as JsonObject[]).map((r) => r.rule)).toEqual([
      "(has(self.ipv4) && self.ipv4 != '') || (has(self.ipv6) && self.ipv6 != '')",
      "(has(self.ipv4) ? self.ipv4 : '') == (has(oldSelf.ipv4) ? oldSelf.ipv4 : '')",
      "(has(self.ipv6) ? self.ipv6 : '') == (has(oldSelf.ipv6) ? oldSelf.ipv6 : '')",
      'has(self.nodeSelector) == has(oldSelf.nodeSelector)',
    ]);
  });

  const create = (o: JsonObject): string[] => validate(crdSchema, o);
  const update = (oldObj: JsonObject, o: JsonObject): string[] => validate(crdSchema, o, { value: oldObj });

  it.each(yamlFiles(path.join(DEPLOY, 'examples')).map(rel))('example %s is a valid ClusterCIDR to create', (file) => {
    const objects = loadYamlFile(path.join(ROOT, file));
    expect(objects.length).toBeGreaterThan(0);
    for (const o of objects) {
      expect(isObject(o) && o.kind).toBe('ClusterCIDR');
      expect(create(o as JsonObject)).toEqual([]);
    }
  });

  // The table kube-apiserver is held to as well (test/realserver/clustercidr.test.ts).
  it.each(CREATE_CASES.map((c) => [c.title, c] as const))('create: %s', (_title, c) => {
    expect(create(c.object)).toEqual(c.errors);
  });

  // perNodeHostBits >= 4 is checked on create only, so old objects with fewer bits still take
  // finalizer updates; every spec field is immutable, including adding or removing one.
  it.each(UPDATE_CASES.map((c) => [c.title, c] as const))('update: %s', (_title, c) => {
    expect(update(c.old, c.new)).toEqual(c.errors);
  });
});

// -------------------------------------------------------------------------------------------
const EXPECTED_CLUSTER_RULES = [
  { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch', 'patch'] },
  { apiGroups: [''], resources: ['nodes/status'], verbs: ['patch'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
  { apiGroups: ['networking.x-k8s.io'], resources: ['clustercidrs'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
  { apiGroups: ['networking.k8s.io'], resources: ['servicecidrs'], verbs: ['list', 'watch'] },
];
const EXPECTED_LEASE_RULES = [
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['node-address-ccm'], verbs: ['get', 'update'] },
];
const SA_SUBJECT = [{ kind: 'ServiceAccount', name: 'node-address-ccm', namespace: 'kube-system' }];

describe('RBAC (deploy/base/rbac.yaml, loadable alone)', () => {
  const objs = loadYamlFile(path.join(DEPLOY, 'base/rbac.yaml')).map((v, i) => asK8sObject(v, `rbac#${i}`));
  // The system:auth-delegator binding is checked on its own below.
  const byKind = (kind: string): K8sObject => {
    const found = objs.filter((o) => o.kind === kind && (o.roleRef as JsonObject | undefined)?.name !== 'system:auth-delegator');
    expect(found).toHaveLength(1);
    return found[0];
  };

  it('holds exactly a ClusterRole, its ClusterRoleBinding, the system:auth-delegator ClusterRoleBinding, a Role and a RoleBinding', () => {
    expect(objs.map((o) => o.kind).sort()).toEqual(['ClusterRole', 'ClusterRoleBinding', 'ClusterRoleBinding', 'Role', 'RoleBinding']);
  });

  it('binds the ServiceAccount to system:auth-delegator (TokenReview and SubjectAccessReview for /metrics), nothing more', () => {
    const delegator = objs.filter((o) => o.kind === 'ClusterRoleBinding' && (o.roleRef as JsonObject).name === 'system:auth-delegator');
    expect(delegator).toHaveLength(1);
    expect(delegator[0]?.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' });
    expect(delegator[0]?.subjects).toEqual(SA_SUBJECT);
  });

  it('grants cluster-wide exactly the verbs the controllers use, no wildcards', () => {
    expect(byKind('ClusterRole').rules).toEqual(EXPECTED_CLUSTER_RULES);
    expect(JSON.stringify(objs)).not.toContain('"*"');
  });

  it('grants leases only in kube-system, get/update only on the node-address-ccm lease', () => {
    const role = byKind('Role');
    expect(role.metadata.namespace).toBe('kube-system');
    expect(role.rules).toEqual(EXPECTED_LEASE_RULES);
  });

  it('binds both roles to the node-address-ccm ServiceAccount in kube-system', () => {
    const crb = byKind('ClusterRoleBinding');
    expect(crb.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: byKind('ClusterRole').metadata.name });
    expect(crb.subjects).toEqual(SA_SUBJECT);
    const rb = byKind('RoleBinding');
    expect(rb.metadata.namespace).toBe('kube-system');
    expect(rb.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: byKind('Role').metadata.name });
    expect(rb.subjects).toEqual(SA_SUBJECT);
  });

  it('matches the leader-election flags of the Deployment', () => {
    const args = containerArgs(render(path.join(DEPLOY, 'overlays/aws')));
    expect(flag(args, 'leader-elect-resource-namespace')).toBe(byKind('Role').metadata.namespace);
    expect(flag(args, 'leader-elect-resource-name')).toBe(EXPECTED_LEASE_RULES[1].resourceNames?.[0]);
  });
});

// -------------------------------------------------------------------------------------------
// Flags of `node-address-ccm run` (cloud-controller-manager names).
const KNOWN_FLAGS = new Set([
  'kubeconfig', 'cloud-provider', 'cloud-config', 'feature-gates', 'controllers', 'node-status-update-frequency',
  'concurrent-node-syncs', 'allocate-node-cidrs', 'cidr-allocator-type', 'cluster-cidr', 'node-cidr-mask-size',
  'node-cidr-mask-size-ipv4', 'node-cidr-mask-size-ipv6', 'service-cluster-ip-range', 'leader-elect',
  'leader-elect-lease-duration', 'leader-elect-renew-deadline', 'leader-elect-retry-period',
  'leader-elect-resource-namespace', 'leader-elect-resource-name', 'bind-address', 'secure-port', 'log-level',
]);

function deploymentOf(objects: K8sObject[]): K8sObject {
  const deps = objects.filter((o) => o.kind === 'Deployment');
  expect(deps).toHaveLength(1);
  return deps[0];
}
function containerOf(objects: K8sObject[]): JsonObject {
  const containers = podContainers(deploymentOf(objects));
  expect(containers).toHaveLength(1);
  return containers[0];
}
function containerArgs(objects: K8sObject[]): string[] {
  return containerOf(objects).args as string[];
}
function flag(args: string[], name: string): string | undefined {
  const hits = args.filter((a) => a.startsWith(`--${name}=`));
  expect(hits.length, `--${name} given ${hits.length} times`).toBeLessThanOrEqual(1);
  return hits[0]?.slice(name.length + 3);
}

const OVERLAYS = ['aws', 'azure', 'gce', 'kind'] as const;
const rendered = Object.fromEntries(OVERLAYS.map((o) => [o, render(path.join(DEPLOY, 'overlays', o))])) as Record<(typeof OVERLAYS)[number], K8sObject[]>;

describe('kustomize rendering (base + each overlay)', () => {
  it.each(OVERLAYS)('%s renders, and every rendered object validates', (overlay) => {
    const objects = rendered[overlay];
    expect(objects.map((o) => o.kind)).toEqual(
      expect.arrayContaining(['CustomResourceDefinition', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'Deployment', 'PodDisruptionBudget']),
    );
    for (const o of objects) expect(validateObject(o), `${o.kind}/${o.metadata.name}`).toEqual([]);
  });

  it.each(OVERLAYS)('%s: every arg is a known flag in --name=value form, none repeated', (overlay) => {
    const args = containerArgs(rendered[overlay]);
    const names = args.map((a) => /^--([a-z0-9-]+)=/.exec(a)?.[1]);
    for (const [i, n] of names.entries()) expect(n && KNOWN_FLAGS.has(n), `arg ${args[i]}`).toBe(true);
    expect(new Set(names).size).toBe(names.length);
  });

  it('aws: --cloud-provider=aws with a mounted cloud config the aws provider accepts; IPAM off', () => {
    const args = containerArgs(rendered.aws);
    expect(flag(args, 'cloud-provider')).toBe('aws');
    expect(flag(args, 'controllers')).toBeUndefined(); // default: all controllers
    expect(flag(args, 'allocate-node-cidrs')).toBeUndefined(); // default false: the VPC CNI owns pod IPs
    const conf = parseAWSCloudConfig(expectCloudConfigMounted(rendered.aws));
    expect(conf.ignored).toEqual([]);
    expect(conf.nodeIPFamilies).toEqual(['ipv4']);
  });

  it('gce: --cloud-provider=gce with a mounted cloud config the gce provider accepts; IPAM off', () => {
    const args = containerArgs(rendered.gce);
    expect(flag(args, 'cloud-provider')).toBe('gce');
    expect(flag(args, 'allocate-node-cidrs')).toBeUndefined();
    const conf = parseGceConfig(expectCloudConfigMounted(rendered.gce));
    expect(conf.project).toBe('my-gcp-project'); // the placeholder deploy/README.md tells operators to replace
  });

  it('azure: --cloud-provider=azure with a mounted azure.json the azure provider accepts (its placeholders to replace); IPAM off', () => {
    const args = containerArgs(rendered.azure);
    expect(flag(args, 'cloud-provider')).toBe('azure');
    expect(flag(args, 'allocate-node-cidrs')).toBeUndefined();
    const conf = parseAzureCloudConfig(expectCloudConfigMounted(rendered.azure), {});
    expect(conf).toMatchObject({ subscriptionId: '00000000-0000-0000-0000-000000000000', resourceGroup: 'my-cluster-nodes', vmType: 'vmss', nodeIPFamilies: [4], ignored: [] });
    expect(conf.credential).toEqual({ kind: 'managedIdentity', clientId: '00000000-0000-0000-0000-000000000000' });
  });

  // The rendered flags go through the real option parser of `node-address-ccm run`.
  const rawFlags = (args: string[]): RawRunFlags =>
    Object.fromEntries(
      args.map((a) => {
        const [, name, value] = /^--([a-z0-9-]+)=(.*)$/.exec(a) ?? [];
        return [name.replace(/-([a-z0-9])/g, (_m: string, c: string) => c.toUpperCase()), value];
      }),
    ) as RawRunFlags;

  it.each(['aws', 'azure', 'gce'] as const)('%s: the rendered flags resolve with `node-address-ccm run`\'s option parser', (overlay) => {
    const opts = resolveRunOptions(rawFlags(containerArgs(rendered[overlay])));
    expect(opts.cloudProvider).toBe(overlay);
    expect([...opts.controllers].sort()).toEqual(['cloud-node', 'node-ipam']);
    expect(opts.leaderElection).toMatchObject({ enabled: true, namespace: 'kube-system', name: 'node-address-ccm' });
    expect(opts.bindAddress).toBe('0.0.0.0');
    expect(opts.securePort).toBe(10268);
    // Every interface only because /metrics is HTTPS with delegated authentication; the probes' paths stay open.
    expect(opts.serving.plainHTTP).toBe(false);
    expect(opts.serving.alwaysAllowPaths).toEqual(expect.arrayContaining(['/livez', '/readyz']));
  });

  it('kind: the rendered flags resolve with the option parser, MultiCIDRRangeAllocator included', () => {
    const opts = resolveRunOptions(rawFlags(containerArgs(rendered.kind)));
    expect([...opts.controllers]).toEqual(['node-ipam']);
    expect(opts.cloudProvider).toBeUndefined();
    expect(opts.ipam).toMatchObject({
      allocateNodeCIDRs: true, cidrAllocatorType: 'MultiCIDRRangeAllocator',
      clusterCIDR: '10.244.0.0/16,fd00:10:244::/56', nodeCIDRMaskSizeIPv4: 24, nodeCIDRMaskSizeIPv6: 64,
    });
  });

  /** Checks the cloud config is mounted where --cloud-config points; returns the file's text. */
  function expectCloudConfigMounted(objects: K8sObject[]): string {
    const args = containerArgs(objects);
    expect(flag(args, 'cloud-config')).toBe('/etc/node-address-ccm/cloud.conf');
    const mounts = containerOf(objects).volumeMounts as JsonObject[];
    expect(mounts).toEqual(
      expect.arrayContaining([
        { name: 'tmp', mountPath: '/tmp' },
        { name: 'cloud-config', mountPath: '/etc/node-address-ccm', readOnly: true },
      ]),
    );
    const volumes = podSpecOf(deploymentOf(objects))?.volumes as JsonObject[];
    expect(volumes).toContainEqual({ name: 'cloud-config', configMap: { name: 'node-address-ccm-cloud-config' } });
    const cm = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'node-address-ccm-cloud-config');
    expect(cm?.metadata.namespace).toBe('kube-system');
    const data = (cm?.data as Record<string, string> | undefined) ?? {};
    expect(Object.keys(data)).toEqual(['cloud.conf']);
    return data['cloud.conf'];
  }

  it('kind: node-ipam only, dual-stack ranges of the kind cluster, image loaded by e2e.sh', () => {
    const args = containerArgs(rendered.kind);
    expect(flag(args, 'controllers')).toBe('node-ipam');
    expect(flag(args, 'cloud-provider')).toBeUndefined();
    expect(flag(args, 'allocate-node-cidrs')).toBe('true');
    expect(flag(args, 'cidr-allocator-type')).toBe('MultiCIDRRangeAllocator');
    const kindCfg = loadYamlFile(path.join(DEPLOY, 'kind/cluster-dual.yaml'))[0] as JsonObject;
    const net = kindCfg.networking as JsonObject;
    expect(flag(args, 'cluster-cidr')).toBe(net.podSubnet);
    expect(flag(args, 'service-cluster-ip-range')).toBe(net.serviceSubnet);
    expect(containerOf(rendered.kind).image).toBe('node-address-ccm:e2e');
    const apiserver = rendered.kind.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'node-address-ccm-apiserver');
    expect(apiserver?.data).toEqual({ KUBERNETES_SERVICE_HOST: 'node-address-ccm-control-plane', KUBERNETES_SERVICE_PORT: '6443' });
  });

  it('configmaps are readable only in the kind overlay, namespaced, read-only', () => {
    const configmapRules = (objects: K8sObject[]): JsonObject[] =>
      objects.flatMap((o) => ((o.rules as JsonObject[] | undefined) ?? []).filter((r) => (r.resources as string[]).includes('configmaps')).map((r) => ({ ...r, kind: o.kind, ns: o.metadata.namespace ?? null })));
    expect(configmapRules(rendered.aws)).toEqual([]);
    expect(configmapRules(rendered.gce)).toEqual([]);
    expect(configmapRules(rendered.azure)).toEqual([]);
    expect(configmapRules(rendered.kind)).toEqual([{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'], kind: 'Role', ns: 'kube-system' }]);
    const rb = rendered.kind.find((o) => o.kind === 'RoleBinding' && o.metadata.name === 'node-address-ccm-kind-overrides');
    expect(rb?.subjects).toEqual(SA_SUBJECT);
  });

  it('aws, azure and gce images come from the base; the tag is set once, in base/kustomization.yaml', () => {
    expect(containerOf(rendered.aws).image).toBe('node-address-ccm:0.1.0');
    expect(containerOf(rendered.azure).image).toBe('node-address-ccm:0.1.0');
    expect(containerOf(rendered.gce).image).toBe('node-address-ccm:0.1.0');
  });
});

// -------------------------------------------------------------------------------------------
describe('Deployment: placement, security and probes (as rendered by every overlay)', () => {
  describe.each(OVERLAYS)('%s', (overlay) => {
    const dep = deploymentOf(rendered[overlay]);
    const spec = dep.spec as JsonObject;
    const pod = podSpecOf(dep) as JsonObject;
    const c = containerOf(rendered[overlay]);
    const args = c.args as string[];

    it('runs two replicas with leader election in kube-system', () => {
      expect(dep.metadata.namespace).toBe('kube-system');
      expect(spec.replicas).toBe(2);
      expect(flag(args, 'leader-elect')).toBe('true');
      expect(pod.serviceAccountName).toBe('node-address-ccm');
      expect(pod.priorityClassName).toBe('system-cluster-critical');
    });

    it('uses the host network and the node resolver, and lets the API server address be overridden', () => {
      expect(pod.hostNetwork).toBe(true);
      expect(pod.dnsPolicy).toBe('Default');
      expect(c.envFrom).toEqual([{ configMapRef: { name: 'node-address-ccm-apiserver', optional: true } }]);
    });

    it('tolerates the taints of nodes that are not initialised yet, and the control plane', () => {
      const tolerations = pod.tolerations as JsonObject[];
      for (const key of ['node.cloudprovider.kubernetes.io/uninitialized', 'node.kubernetes.io/not-ready', 'node.kubernetes.io/network-unavailable', 'node-role.kubernetes.io/control-plane']) {
        expect(tolerations).toContainEqual({ key, operator: 'Exists' });
      }
    });

    it('keeps the replicas on different nodes, and never surges (host ports)', () => {
      const anti = ((pod.affinity as JsonObject).podAntiAffinity as JsonObject).requiredDuringSchedulingIgnoredDuringExecution as JsonObject[];
      expect(anti).toEqual([{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: (spec.selector as JsonObject).matchLabels } }]);
      expect(((spec.template as JsonObject).metadata as JsonObject).labels).toMatchObject((spec.selector as JsonObject).matchLabels as JsonObject);
      expect((spec.strategy as JsonObject).rollingUpdate).toEqual({ maxSurge: 0, maxUnavailable: 1 });
    });

    it('serves HTTPS on every interface at the secure port, and probes /livez and /readyz over HTTPS on 127.0.0.1', () => {
      expect(flag(args, 'bind-address')).toBe('0.0.0.0');
      expect(args.some((a) => a.startsWith('--insecure-plain-http'))).toBe(false);
      const port = Number(flag(args, 'secure-port'));
      expect(port).toBe(10268);
      expect((c.livenessProbe as JsonObject).httpGet).toEqual({ host: '127.0.0.1', port, path: '/livez', scheme: 'HTTPS' });
      expect((c.readinessProbe as JsonObject).httpGet).toEqual({ host: '127.0.0.1', port, path: '/readyz', scheme: 'HTTPS' });
      expect(c.ports).toEqual([{ name: 'https', containerPort: port, protocol: 'TCP' }]);
    });

    it('runs as non-root on a read-only root with no capabilities and the RuntimeDefault seccomp profile', () => {
      const psc = pod.securityContext as JsonObject;
      expect(psc.runAsNonRoot).toBe(true);
      expect(psc.runAsUser).toBeGreaterThan(0);
      expect(psc.seccompProfile).toEqual({ type: 'RuntimeDefault' });
      expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
      expect(c.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
    });

    it('requests resources and bounds memory', () => {
      const res = c.resources as JsonObject;
      expect(Object.keys(res.requests as JsonObject).sort()).toEqual(['cpu', 'memory']);
      expect((res.limits as JsonObject).memory).toBeDefined();
    });
  });

  it('the PodDisruptionBudget selects the pods and always lets one be evicted', () => {
    const pdbs = rendered.aws.filter((o) => o.kind === 'PodDisruptionBudget');
    expect(pdbs).toHaveLength(1);
    const pdb = pdbs[0];
    const dep = deploymentOf(rendered.aws);
    expect(pdb.metadata.namespace).toBe(dep.metadata.namespace);
    expect((pdb.spec as JsonObject).selector).toEqual((dep.spec as JsonObject).selector);
    expect((pdb.spec as JsonObject).maxUnavailable).toBe(1);
    expect((pdb.spec as JsonObject).minAvailable).toBeUndefined();
    expect((pdb.spec as JsonObject).unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
  });
});

// -------------------------------------------------------------------------------------------
describe('image (deploy/Dockerfile, .dockerignore)', () => {
  const dockerfile = readFileSync(path.join(DEPLOY, 'Dockerfile'), 'utf8');
  const lines = dockerfile.split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));
  const dockerignore = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#'));

  it('builds with npm ci and npm run build, runs on Node 22 slim with production dependencies only', () => {
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:22-[a-z]+-slim$/m);
    expect(lines.filter((l) => l.startsWith('FROM ')).length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/RUN npm ci --no-audit --no-fund --ignore-scripts\n/);
    expect(dockerfile).toMatch(/RUN npm run build\n/);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    // The runtime takes the image root (bundle + pruned externals), never the build's node_modules.
    expect(dockerfile).toMatch(/RUN node scripts\/build-image-root\.mjs --out \/image --cloud "\$\{CLOUD\}" --install \/deps\n/);
    expect(dockerfile).toMatch(/^ARG CLOUD=all$/m);
    expect(runtime).toContain('COPY --from=root /image/node_modules ./node_modules');
    expect(runtime).toContain('COPY --from=root /image/lib ./lib');
    expect(runtime).not.toMatch(/--from=(build|deps)/);
  });

  it('runs as a numeric non-root user with entrypoint `node-address-ccm run`', () => {
    const user = lines.filter((l) => l.startsWith('USER ')).pop();
    expect(user).toMatch(/^USER [1-9][0-9]*:[1-9][0-9]*$/);
    expect(lines[lines.length - 1]).toBe('ENTRYPOINT ["node-address-ccm", "run"]');
    // The image root's package.json names lib/main.js as the bin (scripts/build-image-root.mjs).
    expect(readFileSync(path.join(ROOT, 'scripts/build-image-root.mjs'), 'utf8')).toContain("bin: { [pkg.name]: 'lib/main.js' }");
    expect(dockerfile).toContain('ln -s /app/lib/main.js /usr/local/bin/node-address-ccm');
  });

  it('copies everything tsconfig.build.json compiles, and .dockerignore lets exactly that in', () => {
    const build = JSON.parse(readFileSync(path.join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[]; extends: string };
    expect(dockerignore[0]).toBe('*');
    for (const dir of build.include) {
      expect(dockerfile).toContain(`COPY ${dir} ./${dir}`);
      expect(dockerignore).toContain(`!${dir}`);
    }
    for (const f of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build-image-root.mjs']) expect(dockerignore).toContain(`!${f}`);
    expect(dockerfile).toContain('COPY scripts/build-image-root.mjs ./scripts/');
    expect(dockerignore).not.toContain('!node_modules');
  });
});
