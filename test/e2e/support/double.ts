// The default e2e target: the API server double on loopback, a static cloud config in a temp
// dir, and the real controller manager as a child process of the built binary.
import { mkdtempSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify as toYaml } from 'yaml';
import { KubeConfig } from '@kubernetes/client-node';
import { startApiServerDouble, type ApiServerDouble, type ApiServerDoubleOptions } from '../../../src/sim/apiserver/index.js';
import type { NodeAddress } from '../../../src/model/node-address.js';
import { startControllerManager, type ControllerProcess } from './controller.js';

export interface StaticNodeEntry {
  providerID?: string;
  instanceType?: string;
  zone?: string;
  region?: string;
  addresses: NodeAddress[];
  labels?: Record<string, string>;
}

/** Pod and service ranges of the double target (kind's defaults, dual-stack). */
export const DOUBLE_CLUSTER_CIDRS = ['10.244.0.0/16', 'fd00:10:244::/56'];
export const DOUBLE_SERVICE_CIDRS = ['10.96.0.0/16', 'fd00:10:96::/112'];

export interface DoubleTarget {
  readonly server: ApiServerDouble;
  readonly dir: string;
  readonly kubeconfigPath: string;
  readonly cloudConfigPath: string;
  /** Admin KubeConfig for the suite's own client. */
  kubeConfig(): KubeConfig;
  /** Rewrites the static cloud config atomically (the provider hot-reloads it). */
  writeCloudConfig(nodes: Record<string, StaticNodeEntry>): void;
  /** Writes a kubeconfig for `user` (a user given in the double's options) and returns its path. */
  writeKubeconfigFor(user: string): string;
  /**
   * Starts `node-address-ccm run` against the double with the static provider; `args` are added
   * after the defaults (and override them: the last occurrence of a flag wins in commander).
   */
  startController(args?: string[], kubeconfigPath?: string): ControllerProcess;
  /** Stops every controller started here, then the double; removes the temp dir. */
  stop(): Promise<void>;
}

/** Flags every double run uses: static provider, flags-mode dual-stack IPAM, fast refresh, no health port. */
export function defaultRunArgs(kubeconfigPath: string, cloudConfigPath: string): string[] {
  return [
    `--kubeconfig=${kubeconfigPath}`,
    '--cloud-provider=static',
    `--cloud-config=${cloudConfigPath}`,
    '--controllers=*',
    '--allocate-node-cidrs=true',
    `--cluster-cidr=${DOUBLE_CLUSTER_CIDRS.join(',')}`,
    '--node-cidr-mask-size-ipv4=24',
    '--node-cidr-mask-size-ipv6=64',
    `--service-cluster-ip-range=${DOUBLE_SERVICE_CIDRS.join(',')}`,
    '--leader-elect=false',
    '--secure-port=0',
    '--node-status-update-frequency=1s',
  ];
}

export async function startDoubleTarget(options: ApiServerDoubleOptions = {}): Promise<DoubleTarget> {
  const server = await startApiServerDouble(options);
  const dir = mkdtempSync(path.join(tmpdir(), 'node-address-ccm-e2e-'));
  const kubeconfigPath = path.join(dir, 'admin.kubeconfig');
  const cloudConfigPath = path.join(dir, 'cloud.yaml');
  writeFileSync(kubeconfigPath, server.kubeconfig, { mode: 0o600 });
  const controllers: ControllerProcess[] = [];
  let version = 0;
  const target: DoubleTarget = {
    server,
    dir,
    kubeconfigPath,
    cloudConfigPath,
    kubeConfig() {
      const kc = new KubeConfig();
      kc.loadFromString(server.kubeconfig);
      return kc;
    },
    writeCloudConfig(nodes) {
      const tmp = path.join(dir, `.cloud.yaml.${++version}`);
      writeFileSync(tmp, toYaml({ nodes }));
      renameSync(tmp, cloudConfigPath);
    },
    writeKubeconfigFor(user) {
      const file = path.join(dir, `${user.replace(/[^A-Za-z0-9_.-]/g, '_')}.kubeconfig`);
      writeFileSync(file, server.kubeconfigFor(user), { mode: 0o600 });
      return file;
    },
    startController(args = [], kc = kubeconfigPath) {
      const proc = startControllerManager([...defaultRunArgs(kc, cloudConfigPath), ...args]);
      controllers.push(proc);
      return proc;
    },
    async stop() {
      await Promise.all(controllers.map((c) => c.stop()));
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  target.writeCloudConfig({});
  return target;
}
