// The alerts of deploy/components/monitoring against what the `run` process really exports: the
// process is started as `run` starts it (startProcess: HTTPS on --secure-port, delegated
// authentication) against the API server double enforcing deploy/base/rbac.yaml plus the
// component's Prometheus RBAC, with cloud-node, node-ipam and its audit loop, leader election on;
// nodes arrive, one cloud call fails; /metrics is scraped as Prometheus's ServiceAccount
// (monitoring/prometheus-k8s). Every metric an alert expression selects must be exported, every
// label it matches on or groups by must be on that metric's samples, and every value it matches
// with = must occur. Two runs, so both pool metric families have samples: MultiCIDRRangeAllocator
// (ClusterCIDR pools, ServiceCIDR overlaps) and RangeAllocator (the flags pool's cidrset_*).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { FakeProvider } from '../../providers/fake/fake.js';
import { kubeConfigFromString } from '../../src/kube/client.js';
import { resolveRunOptions, type RawRunFlags } from '../../src/manager/options.js';
import { parseRbacYaml } from '../../src/double/rbac.js';
import type { NodeObject } from '../../src/model/node.js';
import { repoRoot } from '../kit/cli.js';
import { createNode, useDouble } from '../kit/double.js';
import { freePort, get } from '../kit/net.js';
import { ip } from '../kit/nodes.js';
import { eventually } from '../kit/wait.js';
import { analyzePromQL, exposedSamples, exposedSeriesNames, type PromQLAnalysis } from './promql.js';

const SA = 'system:serviceaccount:kube-system:node-address-ccm';
const PROMETHEUS = 'system:serviceaccount:monitoring:prometheus-k8s';
const TOKENS = { sa: 'ccm-token', prometheus: 'prometheus-token' };
/** Labels Prometheus attaches to every scraped series (target labels), not the process. */
const TARGET_LABELS = new Set(['job', 'instance', 'namespace', 'pod', 'service', 'endpoint', 'container']);
/**
 * Metrics an alert may use before the process exports them, each with why: allowed to be missing,
 * and checked like any other (labels, values) as soon as they are exported. Remove an entry once
 * the work that adds it has landed.
 */
const NOT_YET_EXPORTED: Record<string, string> = {};

/**
 * The metric names of the README's Metrics table (first column, in backticks); `prefix_*` stands
 * for every metric with that prefix.
 */
async function readmeMetrics(): Promise<{ names: Set<string>; prefixes: string[] }> {
  const readme = await readFile(path.join(repoRoot, 'README.md'), 'utf8');
  const section = readme.split(/^## Metrics$/m)[1]?.split(/^## /m)[0] ?? '';
  const names = new Set<string>();
  const prefixes: string[] = [];
  for (const row of section.split('\n').filter((l) => l.startsWith('| `'))) {
    for (const m of (row.split('|')[1] ?? '').matchAll(/`([a-z_:][a-z0-9_:]*)(\*?)`/g)) {
      if (m[2]) prefixes.push(m[1] as string);
      else names.add(m[1] as string);
    }
  }
  return { names, prefixes };
}

interface Scrape {
  text: string;
  series: ReturnType<typeof exposedSeriesNames>;
  samples: ReturnType<typeof exposedSamples>;
}

const COMPONENT = path.join(repoRoot, 'deploy/components/monitoring');

async function alertRules(): Promise<{ alert: string; expr: string }[]> {
  const rule = parseAllDocuments(await readFile(path.join(COMPONENT, 'prometheusrule.yaml'), 'utf8'))[0]?.toJS() as {
    spec: { groups: { rules: { alert: string; expr: string }[] }[] };
  };
  return rule.spec.groups.flatMap((g) => g.rules);
}

// Opened by the runs only: the tests over their scrapes need no double.
const cluster = useDouble({}, { open: false });

async function startRun(flags: RawRunFlags, provider?: FakeProvider): Promise<string> {
  const rbac = [await readFile(path.join(repoRoot, 'deploy/base/rbac.yaml'), 'utf8'), await readFile(path.join(COMPONENT, 'rbac-prometheus.yaml'), 'utf8')].join('\n---\n');
  await cluster.open({
    rbac: parseRbacYaml(rbac, 'deploy/base/rbac.yaml + components/monitoring/rbac-prometheus.yaml'),
    users: [{ name: SA, token: TOKENS.sa }, { name: PROMETHEUS, token: TOKENS.prometheus }],
  });
  const options = resolveRunOptions({
    leaderElect: 'true', leaderElectLeaseDuration: '4s', leaderElectRenewDeadline: '3s', leaderElectRetryPeriod: '1s',
    securePort: String(await freePort()), allocateNodeCidrs: 'true', nodeCidrMaskSizeIpv4: '24', ...flags,
  });
  const proc = await cluster.startRunProcess(options, {
    kubeConfig: kubeConfigFromString(cluster.api.kubeconfigFor(SA)),
    auditIntervalMs: 200,
    ...(provider ? { provider } : {}),
  });
  const url = proc.health?.url;
  if (!url?.startsWith('https://')) throw new Error(`expected an HTTPS server, got ${url}`);
  return url;
}

/** A node as kubelet registers it (the hostname label), with the address it reports, if any. */
const node = (name: string, o: { tainted?: boolean; podCIDRs?: string[]; address?: string } = {}): NodeObject =>
  createNode(cluster.api, { name, tainted: o.tainted ?? false, podCIDRs: o.podCIDRs, labels: { 'kubernetes.io/hostname': name }, addresses: o.address ? [ip(o.address)] : [] });

async function scrape(url: string): Promise<Scrape> {
  const r = await get(`${url}/metrics`, { token: TOKENS.prometheus });
  if (r.status !== 200) throw new Error(`scrape as ${PROMETHEUS}: HTTP ${r.status}: ${r.body}`);
  return { text: r.body, series: exposedSeriesNames(r.body), samples: exposedSamples(r.body) };
}

/** Scrapes until `ready` holds for the scrape (or fails with what is still missing). */
async function scrapeUntil(url: string, what: string, ready: (s: Scrape) => boolean, timeoutMs = 30_000): Promise<Scrape> {
  let last: Scrape | undefined;
  return eventually(async () => {
    last = await scrape(url);
    return ready(last) && last;
  }, {
    timeoutMs, intervalMs: 200, what,
    describe: () => `last scrape:\n${(last?.text ?? '').split('\n').filter((l) => /^(cloudprovider|node_)/.test(l)).join('\n')}`,
  });
}

const hasSample = (s: Scrape, name: string, labels: Record<string, string> = {}): boolean =>
  s.samples.some((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));

describe('alert expressions against the running process', () => {
  const scrapes: Scrape[] = [];
  let rules: { alert: string; expr: string }[] = [];
  beforeAll(async () => {
    rules = await alertRules();
  });

  it('run 1: cloud-node (its first cloud call fails), cloud-node-lifecycle and node-ipam with MultiCIDRRangeAllocator and the audit loop', { timeout: 60_000 }, async () => {
    const cloud = new FakeProvider({ instances: { 'node-a': { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] } } });
    cloud.rejectNext(1, 'injected: the cloud API is unreachable');
    const url = await startRun({
      cloudProvider: 'fake', controllers: '*,cloud-node-lifecycle', nodeStartupGracePeriod: '0s', cidrAllocatorType: 'MultiCIDRRangeAllocator',
      clusterCidr: '10.244.0.0/16', serviceClusterIpRange: '10.96.0.0/16',
    }, cloud);
    // A tainted node in the cloud, one the cloud does not know, and a node whose pod CIDR (set
    // by someone else) overlaps another's: an audit conflict.
    node('node-a', { tainted: true });
    node('node-b', { tainted: true });
    node('legacy-1', { podCIDRs: ['10.244.200.0/24'], address: '10.0.1.1' });
    node('legacy-2', { podCIDRs: ['10.244.200.0/24'], address: '10.0.1.2' });
    const s = await scrapeUntil(url, 'a failed and a successful cloud call, pool usage, a PodCIDROverlap finding', (x) =>
      hasSample(x, 'cloudprovider_requests_total', { result: 'error' }) &&
      x.samples.some((y) => y.name === 'cloudprovider_requests_total' && y.labels.result !== 'error') &&
      hasSample(x, 'node_ipam_controller_multicidrset_usage_cidrs') &&
      x.samples.some((y) => y.name === 'node_ipam_controller_audit_findings' && y.labels.kind === 'PodCIDROverlap' && y.labels.severity === 'conflict' && Number(y.value) > 0));
    expect(hasSample(s, 'node_controller_uninitialized_nodes')).toBe(true);
    expect(hasSample(s, 'node_ipam_controller_servicecidr_overlapping_podcidrs')).toBe(true);
    scrapes.push(s);
  });

  it('run 2: node-ipam with RangeAllocator (the flags pool reports under cidrset_*)', { timeout: 60_000 }, async () => {
    const url = await startRun({ controllers: 'node-ipam', clusterCidr: '10.244.0.0/16' });
    node('node-c');
    scrapes.push(await scrapeUntil(url, 'the flags pool usage', (x) => hasSample(x, 'node_ipam_controller_cidrset_usage_cidrs')));
  });

  describe('every alert', () => {
    /** Per series name: label names and the values seen for each, over both runs. */
    const seen = (): Map<string, Map<string, Set<string>>> => {
      const m = new Map<string, Map<string, Set<string>>>();
      for (const s of scrapes) {
        for (const name of s.series.keys()) if (!m.has(name)) m.set(name, new Map());
        for (const x of s.samples) {
          const labels = m.get(x.name) ?? new Map<string, Set<string>>();
          m.set(x.name, labels);
          for (const [k, v] of Object.entries(x.labels)) labels.set(k, (labels.get(k) ?? new Set()).add(v));
        }
      }
      return m;
    };

    /** What is wrong with one expression against the scrapes: [] when nothing. */
    function problems(a: PromQLAnalysis): string[] {
      const exported = seen();
      const out = [...a.errors];
      for (const sel of a.selectors) {
        const labels = exported.get(sel.metric);
        if (!labels) {
          if (!(sel.metric in NOT_YET_EXPORTED)) out.push(`${sel.metric}: not exported`);
          continue;
        }
        for (const m of sel.matchers) {
          if (TARGET_LABELS.has(m.label)) continue;
          const values = labels.get(m.label);
          if (!values) out.push(`${sel.metric}: no sample has label ${m.label} (seen: ${[...labels.keys()].join(', ') || 'none'})`);
          else if (m.op === '=' && !values.has(m.value)) out.push(`${sel.metric}: ${m.label}="${m.value}" never occurs (seen: ${[...values].join(', ')})`);
        }
      }
      for (const g of a.groupings.filter((x) => x.mode === 'by')) {
        const available = new Set(g.metrics.flatMap((name) => [...(exported.get(name)?.keys() ?? [])]));
        if (g.metrics.every((name) => name in NOT_YET_EXPORTED && !exported.has(name))) continue;
        for (const l of g.labels) if (!TARGET_LABELS.has(l) && !available.has(l)) out.push(`by (${l}): not a label of ${g.metrics.join(', ')}`);
      }
      return out;
    }

    it('uses only metrics, labels and label values the process exports', () => {
      expect(scrapes).toHaveLength(2);
      expect(rules.length).toBeGreaterThan(0);
      const report = Object.fromEntries(rules.map((r) => [r.alert, problems(analyzePromQL(r.expr))]));
      expect(report).toEqual(Object.fromEntries(rules.map((r) => [r.alert, []])));
    });

    it('the check itself catches a misspelt metric, label or value, and a bad grouping', () => {
      const cases: [string, RegExp][] = [
        ['cloudprovider_request_total{job="x"}', /cloudprovider_request_total: not exported/],
        ['cloudprovider_requests_total{job="x", outcome="error"}', /no sample has label outcome/],
        ['cloudprovider_requests_total{job="x", result="errors"}', /result="errors" never occurs/],
        ['sum by (zone) (rate(cloudprovider_requests_total[5m]))', /by \(zone\): not a label/],
        ['node_ipam_controller_audit_findings{severity="conflicts"}', /severity="conflicts" never occurs/],
      ];
      for (const [expr, message] of cases) expect(problems(analyzePromQL(expr)).join('\n'), expr).toMatch(message);
    });

    it('the README\'s Metrics table lists every metric the process exports, and only those', async () => {
      const { names, prefixes } = await readmeMetrics();
      expect(names.size).toBeGreaterThan(20);
      expect(prefixes.sort()).toEqual(['nodejs_', 'process_']);
      const families = new Set(scrapes.flatMap((s) => [...s.series.values()].map((v) => v.family)));
      const undocumented = [...families].filter((f) => !names.has(f) && !prefixes.some((p) => f.startsWith(p))).sort();
      expect(undocumented, 'exported but not in the README Metrics table').toEqual([]);
      const notExported = [...names].filter((n) => !families.has(n) && !(n in NOT_YET_EXPORTED)).sort();
      expect(notExported, 'in the README Metrics table but not exported').toEqual([]);
    });

    it('the allowance for metrics not exported yet names only metrics an alert or the README uses', async () => {
      const used = new Set(rules.flatMap((r) => analyzePromQL(r.expr).selectors.map((s) => s.metric)));
      const { names } = await readmeMetrics();
      for (const name of Object.keys(NOT_YET_EXPORTED)) expect(used.has(name) || names.has(name), `${name} is used nowhere: remove it from NOT_YET_EXPORTED`).toBe(true);
    });
  });
});
