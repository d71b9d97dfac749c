// deploy/kind: the kind cluster config, the kind provider's config and overrides (checked with the
// provider's own parsers), and deploy/kind/e2e.sh (syntax, prerequisites message, what it runs).
// Nothing here needs docker, kind or kubectl.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseKindConfig } from '../../providers/kind/config.js';
import { parseKindOverrides } from '../../providers/kind/overrides.js';
import { parseKindProviderID } from '../../providers/kind/provider-id.js';
import { loadYamlFile, podContainers, render, type JsonObject } from './kustomize.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const KIND = path.join(ROOT, 'deploy/kind');
const SCRIPT = path.join(KIND, 'e2e.sh');
const script = readFileSync(SCRIPT, 'utf8');

describe('kind cluster config (deploy/kind/cluster-dual.yaml)', () => {
  const docs = loadYamlFile(path.join(KIND, 'cluster-dual.yaml'));
  const cfg = docs[0] as JsonObject;
  const patches = (cfg.kubeadmConfigPatches as string[]).map((p) => parseYaml(p) as JsonObject);

  it('is a dual-stack kind cluster named node-address-ccm with one node per --node-ip case', () => {
    expect(docs).toHaveLength(1);
    expect(cfg).toMatchObject({ kind: 'Cluster', apiVersion: 'kind.x-k8s.io/v1alpha4', name: 'node-address-ccm' });
    expect((cfg.networking as JsonObject).ipFamily).toBe('dual');
    const roles = (cfg.nodes as JsonObject[]).map((n) => n.role);
    expect(roles).toEqual(['control-plane', 'worker', 'worker', 'worker', 'worker', 'worker']);
    // e2e.sh maps exactly these node names to its cases.
    for (const name of ['control-plane', 'worker', 'worker2', 'worker3', 'worker4', 'worker5']) {
      expect(script).toContain(`NODE_CASE["\${CLUSTER}-${name}"]=`);
    }
  });

  it('tells kube-controller-manager not to allocate pod CIDRs, in both kubeadm API versions', () => {
    const cc = patches.filter((p) => p.kind === 'ClusterConfiguration');
    expect(cc.map((p) => p.apiVersion).sort()).toEqual(['kubeadm.k8s.io/v1beta3', 'kubeadm.k8s.io/v1beta4']);
    const v3 = cc.find((p) => p.apiVersion === 'kubeadm.k8s.io/v1beta3') as JsonObject;
    const v4 = cc.find((p) => p.apiVersion === 'kubeadm.k8s.io/v1beta4') as JsonObject;
    expect((v3.controllerManager as JsonObject).extraArgs).toEqual({ 'allocate-node-cidrs': 'false' });
    expect((v4.controllerManager as JsonObject).extraArgs).toEqual([{ name: 'allocate-node-cidrs', value: 'false' }]);
  });

  it('starts every kubelet (init and join, both kubeadm API versions) with --cloud-provider=external', () => {
    for (const kind of ['InitConfiguration', 'JoinConfiguration']) {
      const v3 = patches.find((p) => p.kind === kind && p.apiVersion === 'kubeadm.k8s.io/v1beta3') as JsonObject;
      const v4 = patches.find((p) => p.kind === kind && p.apiVersion === 'kubeadm.k8s.io/v1beta4') as JsonObject;
      expect((v3.nodeRegistration as JsonObject).kubeletExtraArgs).toEqual({ 'cloud-provider': 'external' });
      expect((v4.nodeRegistration as JsonObject).kubeletExtraArgs).toEqual([{ name: 'cloud-provider', value: 'external' }]);
    }
  });
});

describe('kind provider config and overrides', () => {
  const providerConf = parseKindConfig(readFileSync(path.join(KIND, 'kind-provider.conf'), 'utf8'), 'kind-provider.conf');
  const overlay = render(path.join(ROOT, 'deploy/overlays/kind'));

  it('kind-provider.conf parses with the kind provider and names the kind cluster', () => {
    const cfg = loadYamlFile(path.join(KIND, 'cluster-dual.yaml'))[0] as JsonObject;
    expect(providerConf.cluster).toBe(cfg.name);
  });

  it('points at the override ConfigMap the kind overlay creates, readable under the overlay RBAC', () => {
    const ref = providerConf.overridesConfigMap;
    expect(ref).toBeDefined();
    const cm = overlay.find((o) => o.kind === 'ConfigMap' && o.metadata.name === ref?.name && o.metadata.namespace === ref?.namespace);
    expect(cm).toBeDefined();
    const text = (cm?.data as Record<string, string>)[ref?.key ?? ''];
    expect(parseKindOverrides(text, 'overlay ConfigMap')).toEqual({ nodes: {} });
    const role = overlay.find((o) => o.kind === 'Role' && o.metadata.namespace === ref?.namespace && JSON.stringify(o.rules).includes('configmaps'));
    expect(role).toBeDefined();
  });

  it('every node of the cluster carries a providerID the kind provider reads as a node of its cluster', () => {
    const cfg = loadYamlFile(path.join(KIND, 'cluster-dual.yaml'))[0] as JsonObject;
    // kind's node names (pkg/cluster/internal/providers/common/namer.go): <cluster>-<role>[<n>].
    const seen = new Map<string, number>();
    const names = (cfg.nodes as JsonObject[]).map((n) => {
      const role = String(n.role);
      const count = (seen.get(role) ?? 0) + 1;
      seen.set(role, count);
      return `${String(cfg.name)}-${role}${count > 1 ? count : ''}`;
    });
    expect(names).toEqual(['control-plane', 'worker', 'worker2', 'worker3', 'worker4', 'worker5'].map((r) => `node-address-ccm-${r}`));
    for (const node of names) {
      // What kind puts in each kubelet's --provider-id (pkg/cluster/internal/kubeadm/config.go).
      expect(parseKindProviderID(`kind://docker/${String(cfg.name)}/${node}`)).toEqual({ nodeProvider: 'docker', cluster: providerConf.cluster, node });
    }
    // e2e.sh checks that each Node registered with exactly that providerID before the suite runs.
    expect(script).toContain(`[[ "\${provider_id}" == "kind://docker/\${CLUSTER}/\${node}" ]]`);
    expect(script.indexOf('provider_id="$(kc get node')).toBeLessThan(script.lastIndexOf('npx vitest run test/e2e'));
  });

  it('e2e.sh writes that ConfigMap key, with overrides the kind provider accepts', () => {
    const ref = providerConf.overridesConfigMap;
    expect(script).toContain(`create configmap ${ref?.name}`);
    expect(script).toContain(`--from-literal=${ref?.key}=`);
    const m = /overrides_yaml="(nodes:\n[^"]*)"/.exec(script);
    expect(m).not.toBeNull();
    const text = (m?.[1] ?? '').replaceAll('${LACKING_NODE}', 'node-address-ccm-worker5');
    const parsed = parseKindOverrides(text, 'e2e.sh overrides');
    expect(parsed.nodes['node-address-ccm-worker5']).toEqual({
      mode: 'replace',
      addresses: [
        { type: 'InternalIP', address: '192.0.2.10' },
        { type: 'InternalIP', address: '2001:db8::10' },
        { type: 'Hostname', address: 'node-address-ccm-worker5' },
      ],
    });
  });
});

describe('deploy/kind/e2e.sh', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('is valid bash', () => {
    const r = spawnSync('bash', ['-n', SCRIPT], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('stops with exit code 2 and says what it needs when docker, kind and kubectl are missing', () => {
    // A PATH with only the basic tools the script uses before its check.
    const bin = mkdtempSync(path.join(tmpdir(), 'e2e-path-'));
    dirs.push(bin);
    for (const tool of ['dirname']) {
      const found = spawnSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
      expect(found, tool).not.toBe('');
      symlinkSync(found, path.join(bin, tool));
    }
    const bash = spawnSync('bash', ['-c', 'command -v bash'], { encoding: 'utf8' }).stdout.trim();
    const r = spawnSync(bash, [SCRIPT], { encoding: 'utf8', env: { PATH: bin, HOME: bin }, timeout: 10_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/missing required tools: docker kind kubectl node npm curl/);
    for (const tool of ['docker', 'kind', 'kubectl']) expect(r.stderr).toMatch(new RegExp(`^  ${tool} `, 'm'));
  });

  it('runs the e2e suite against the kind context only, with the real-cluster switch', () => {
    expect(script).toMatch(/KUBECONFIG="\$\{ADMIN_KUBECONFIG\}" E2E_REAL_CLUSTER=1 E2E_ALLOWED_CONTEXTS="\$\{CONTEXT\}"/);
    expect(script).toContain('CONTEXT="kind-${CLUSTER}"');
    expect(script).toContain('npx vitest run test/e2e');
  });

  it('builds and loads the image the kind overlay uses, and applies that overlay', () => {
    const dep = render(path.join(ROOT, 'deploy/overlays/kind')).find((o) => o.kind === 'Deployment');
    const image = dep ? podContainers(dep)[0]?.image : undefined;
    expect(image).toBe('node-address-ccm:e2e');
    expect(script).toContain(`IMAGE="${image}"`);
    expect(script).toContain('docker build -f "${REPO_ROOT}/deploy/Dockerfile" -t "${IMAGE}" "${REPO_ROOT}"');
    expect(script).toContain('kind load docker-image "${IMAGE}" --name "${CLUSTER}"');
    expect(script).toContain('kc apply -k "${REPO_ROOT}/deploy/overlays/kind"');
  });

  it('starts cloud-node with the kind provider on the host, as the ServiceAccount, without leader election', () => {
    const start = script.slice(script.indexOf('exec node dist/src/cli/main.js run'));
    for (const arg of ['--controllers=cloud-node', '--cloud-provider=kind', '--cloud-config "${REPO_ROOT}/deploy/kind/kind-provider.conf"', '--kubeconfig "${SA_KUBECONFIG}"', '--leader-elect=false']) {
      expect(start).toContain(arg);
    }
    expect(script).toContain('create token node-address-ccm');
  });
});
