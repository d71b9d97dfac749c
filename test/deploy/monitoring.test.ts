// deploy/components/monitoring rendered by the real renderer (`kubectl kustomize`; skipped where
// kubectl is absent, required in CI: test/kubectl/kubectl.ts) on top of each overlay: its objects
// validate against the prometheus-operator schemas, the Service reaches the Deployment's port,
// Prometheus's RBAC is exactly `get /metrics`; and the base and the overlays alone carry no
// prometheus-operator kind (they must apply where its CRDs are absent). From the files alone:
// every alert is complete, selects the ServiceMonitor's job and has its runbook. The alert
// expressions against the running process: alert-metrics.test.ts.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { Service } from 'kubernetes-models/v1';
import { ClusterRole, ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { asK8sObject, podContainers, type Json, type JsonObject, type K8sObject } from './kustomize.js';
import { repoRoot } from '../kit/cli.js';
import { analyzePromQL } from './promql.js';
import { describeKubectl, KUBECTL, KUBECTL_MISSING } from '../kubectl/kubectl.js';

const DEPLOY = path.join(repoRoot, 'deploy');
const COMPONENT = path.join(DEPLOY, 'components/monitoring');
const OVERLAYS = readdirSync(path.join(DEPLOY, 'overlays')).filter((d) => existsSync(path.join(DEPLOY, 'overlays', d, 'kustomization.yaml'))).sort();
const MONITORING_GROUP = 'monitoring.coreos.com/';

const temp: string[] = [];
afterAll(() => temp.forEach((d) => rmSync(d, { recursive: true, force: true })));

const rendered = new Map<string, K8sObject[]>();
function kustomize(dir: string): K8sObject[] {
  if (KUBECTL === undefined) throw new Error(KUBECTL_MISSING);
  const cached = rendered.get(dir);
  if (cached) return structuredClone(cached);
  const out = execFileSync(KUBECTL, ['kustomize', dir], { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
  const objs = parseAllDocuments(out).map((d, i) => asK8sObject(d.toJS() as Json, `${dir}#${i}`));
  rendered.set(dir, objs);
  return structuredClone(objs);
}

/** An overlay of `resource` plus the component, as an operator would write it (relative paths). */
function withComponent(resource: string): K8sObject[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'monitoring-overlay-'));
  temp.push(dir);
  writeFileSync(path.join(dir, 'kustomization.yaml'), [
    'apiVersion: kustomize.config.k8s.io/v1beta1',
    'kind: Kustomization',
    `resources: [${path.relative(dir, resource)}]`,
    `components: [${path.relative(dir, COMPONENT)}]`,
    '',
  ].join('\n'));
  return kustomize(dir);
}

const isMonitoringKind = (o: K8sObject): boolean => o.apiVersion.startsWith(MONITORING_GROUP);
const one = (objs: K8sObject[], kind: string): K8sObject => {
  const found = objs.filter((o) => o.kind === kind && (o.metadata.labels as JsonObject | undefined)?.['app.kubernetes.io/name'] === 'node-address-ccm');
  expect(found.map((o) => o.metadata.name), kind).toHaveLength(1);
  return found[0] as K8sObject;
};
const matches = (selector: JsonObject, labels: JsonObject): boolean => Object.entries(selector).every(([k, v]) => labels[k] === v);

describeKubectl('the base and the overlays without the component', () => {
  it.each(['base', ...OVERLAYS.map((o) => `overlays/${o}`)])('%s renders with kubectl kustomize and holds no prometheus-operator kind', (dir) => {
    const objs = kustomize(path.join(DEPLOY, dir));
    expect(objs.some((o) => o.kind === 'Deployment')).toBe(true);
    expect(objs.filter(isMonitoringKind).map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([]);
  });
});

const loadFile = (file: string): K8sObject[] => parseAllDocuments(readFileSync(path.join(COMPONENT, file), 'utf8')).map((d, i) => asK8sObject(d.toJS() as Json, `${file}#${i}`));

describe('components/monitoring (files)', () => {
  const componentFile = path.join(COMPONENT, 'kustomization.yaml');

  it('is a kustomize Component (added with `components:`, never a resource of the base)', () => {
    const k = parseAllDocuments(readFileSync(componentFile, 'utf8'))[0]?.toJS() as JsonObject;
    expect([k.apiVersion, k.kind]).toEqual(['kustomize.config.k8s.io/v1alpha1', 'Component']);
    const base = readFileSync(path.join(DEPLOY, 'base/kustomization.yaml'), 'utf8');
    expect(base).not.toMatch(/components|monitoring/);
  });

});

describeKubectl('components/monitoring rendered by kubectl kustomize', () => {
  it.each(OVERLAYS)('renders on top of overlays/%s: the overlay objects plus the monitoring ones, nothing changed', (overlay) => {
    const plain = kustomize(path.join(DEPLOY, 'overlays', overlay));
    const withMon = withComponent(path.join(DEPLOY, 'overlays', overlay));
    const key = (o: K8sObject): string => `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    const added = withMon.filter((o) => !plain.some((p) => key(p) === key(o))).map(key).sort();
    expect(added).toEqual([
      'monitoring.coreos.com/v1/PrometheusRule/kube-system/node-address-ccm',
      'monitoring.coreos.com/v1/ServiceMonitor/kube-system/node-address-ccm',
      'rbac.authorization.k8s.io/v1/ClusterRole//node-address-ccm-metrics-reader',
      'rbac.authorization.k8s.io/v1/ClusterRoleBinding//node-address-ccm-metrics-reader',
      'v1/Service/kube-system/node-address-ccm-metrics',
    ]);
    for (const p of plain) expect(withMon.find((o) => key(o) === key(p)), key(p)).toEqual(p);
  });

  // Rendered once, when the first test below needs it (never while collecting: kubectl may be absent).
  let cached: K8sObject[] | undefined;
  const objs = (): K8sObject[] => (cached ??= withComponent(path.join(DEPLOY, 'overlays/aws')));
  const service = (): K8sObject => one(objs(), 'Service');
  const monitor = (): K8sObject => one(objs(), 'ServiceMonitor');
  const rule = (): K8sObject => one(objs(), 'PrometheusRule');
  const deployment = (): K8sObject => one(objs(), 'Deployment');

  it('renders the component\'s files unchanged (so the file checks below hold for what is applied)', () => {
    for (const file of ['service.yaml', 'servicemonitor.yaml', 'prometheusrule.yaml', 'rbac-prometheus.yaml']) {
      for (const o of loadFile(file)) expect(objs().find((x) => x.kind === o.kind && x.metadata.name === o.metadata.name), `${file}: ${o.kind}/${o.metadata.name}`).toEqual(o);
    }
  });

  it('validates against the Kubernetes and prometheus-operator schemas (and the validators are not no-ops)', () => {
    new Service(service() as never).validate();
    new ServiceMonitor(monitor() as never).validate();
    new PrometheusRule(rule() as never).validate();
    for (const o of objs().filter((x) => x.metadata.name === 'node-address-ccm-metrics-reader')) {
      (o.kind === 'ClusterRole' ? new ClusterRole(o as never) : new ClusterRoleBinding(o as never)).validate();
    }
    const broken = structuredClone(monitor()) as JsonObject;
    ((broken.spec as JsonObject).endpoints as JsonObject[])[0]!.scheme = 'ftp';
    expect(() => new ServiceMonitor(broken as never).validate()).toThrow(/scheme/);
    const noExpr = structuredClone(rule()) as JsonObject;
    delete ((((noExpr.spec as JsonObject).groups as JsonObject[])[0]!.rules as JsonObject[])[0] as JsonObject).expr;
    expect(() => new PrometheusRule(noExpr as never).validate()).toThrow(/expr/);
  });

  it('Service → pods → port: the headless Service selects the Deployment\'s pods and targets its HTTPS port; the ServiceMonitor selects the Service', () => {
    const svc = service();
    const dep = deployment();
    const spec = svc.spec as JsonObject;
    expect(spec.clusterIP).toBe('None');
    expect(svc.metadata.namespace).toBe(dep.metadata.namespace);
    const podLabels = (((dep.spec as JsonObject).template as JsonObject).metadata as JsonObject).labels as JsonObject;
    expect(matches(spec.selector as JsonObject, podLabels)).toBe(true);
    const containerPorts = podContainers(dep).flatMap((c) => (c.ports as JsonObject[] | undefined) ?? []);
    const [port] = spec.ports as JsonObject[];
    const target = containerPorts.find((p) => p.name === port?.targetPort);
    expect(target?.containerPort).toBe(10268);
    expect(port?.port).toBe(target?.containerPort);
    const m = monitor().spec as JsonObject;
    expect(matches((m.selector as JsonObject).matchLabels as JsonObject, svc.metadata.labels as JsonObject)).toBe(true);
    expect((m.namespaceSelector as JsonObject).matchNames).toEqual([svc.metadata.namespace]);
    const [endpoint] = m.endpoints as JsonObject[];
    expect(endpoint).toMatchObject({
      port: port?.name, scheme: 'https', path: '/metrics',
      bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
      // The default certificate is self-signed and made at start: nothing to verify against.
      tlsConfig: { insecureSkipVerify: true },
    });
  });

  it('gives Prometheus\'s ServiceAccount exactly get on /metrics (what the process\'s SubjectAccessReview asks)', () => {
    const role = objs().find((o) => o.kind === 'ClusterRole' && o.metadata.name === 'node-address-ccm-metrics-reader');
    expect(role?.rules).toEqual([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    const binding = objs().find((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === 'node-address-ccm-metrics-reader');
    expect(binding?.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'node-address-ccm-metrics-reader' });
    expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: 'prometheus-k8s', namespace: 'monitoring' }]);
  });
});

describe('components/monitoring alerts (files)', () => {
  const [rule] = loadFile('prometheusrule.yaml');
  const [service] = loadFile('service.yaml');
  const [monitor] = loadFile('servicemonitor.yaml');
  const baseDeployment = parseAllDocuments(readFileSync(path.join(DEPLOY, 'base/deployment.yaml'), 'utf8'))[0]?.toJS() as K8sObject;
  const rules = (((rule?.spec as JsonObject).groups as JsonObject[]).flatMap((g) => g.rules as JsonObject[]));
  const runbooks = readFileSync(path.join(repoRoot, 'docs/runbooks.md'), 'utf8');
  // GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes.
  const anchors = new Set([...runbooks.matchAll(/^#{1,6} (.+)$/gm)].map((m) => (m[1] as string).toLowerCase().replace(/[^a-z0-9 _-]/g, '').replace(/ /g, '-')));

  it('has the alerts operators need, and no others', () => {
    expect(rules.map((r) => r.alert)).toEqual([
      'NodeAddressCCMPodCIDRPoolNearlyFull',
      'NodeAddressCCMNodesUninitialized',
      'NodeAddressCCMNoLeader',
      'NodeAddressCCMCloudProviderErrors',
      'NodeAddressCCMIPRangeConflict',
      'NodeAddressCCMPodCIDROverlapsServiceCIDR',
    ]);
  });

  it.each(rules.map((r) => [r.alert as string, r] as const))('%s: parses, selects the ServiceMonitor\'s job, has for/severity/summary/description and a runbook section', (name, r) => {
    const analysis = analyzePromQL(r.expr as string);
    expect(analysis.errors).toEqual([]);
    expect(analysis.selectors.length).toBeGreaterThan(0);
    // jobLabel names a Service label; its value is the job every selector must pin.
    const job = (service?.metadata.labels as JsonObject)[(monitor?.spec as JsonObject).jobLabel as string];
    expect(job).toBe('node-address-ccm');
    for (const s of analysis.selectors) expect(s.matchers, s.text).toContainEqual({ label: 'job', op: '=', value: job });
    expect(r.for).toMatch(/^\d+[smh]$/);
    expect(['warning', 'critical']).toContain((r.labels as JsonObject).severity);
    const annotations = r.annotations as JsonObject;
    expect(String(annotations.summary)).not.toBe('');
    expect(String(annotations.description)).not.toBe('');
    expect(annotations.runbook_url).toBe(`docs/runbooks.md#${name.toLowerCase()}`);
    expect(anchors.has(name.toLowerCase()), `docs/runbooks.md has a "## ${name}" section`).toBe(true);
    const section = runbooks.slice(runbooks.indexOf(`## ${name}`)).split(/^## /m)[1] ?? '';
    for (const part of ['**Means.**', '**Check.**', '**Do.**']) expect(section, `${name} runbook: ${part}`).toContain(part);
  });

  it('NoLeader waits two lease durations of the Deployment', () => {
    const noLeader = rules.find((r) => r.alert === 'NodeAddressCCMNoLeader');
    const args = podContainers(baseDeployment)[0]?.args as string[];
    const lease = args.find((a) => a.startsWith('--leader-elect-lease-duration='))?.split('=')[1] ?? '15s';
    expect(noLeader?.for).toBe(`${2 * Number.parseInt(lease, 10)}s`);
  });
});
