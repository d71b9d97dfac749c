import { describe, expect, it } from 'vitest';
import {
  parseGoBool, parseGoDuration, resolveControllers, resolveRunOptions, RunOptionsError, writeTimeoutMs,
  type RawRunFlags,
} from '../../src/manager/options.js';

describe('parseGoDuration', () => {
  it.each([
    ['5m', 300_000],
    ['15s', 15_000],
    ['1h30m', 5_400_000],
    ['250ms', 250],
    ['1.5s', 1500],
    ['0', 0],
    ['2m30s', 150_000],
  ])('%s → %d ms', (text, ms) => {
    expect(parseGoDuration('--x', text)).toBe(ms);
  });

  it.each(['', '5', 'm', '5 minutes', '1d', 's5'])('rejects %j naming the flag and value', (text) => {
    expect(() => parseGoDuration('--node-status-update-frequency', text)).toThrow(
      new RegExp(`--node-status-update-frequency: invalid duration "${text}"`),
    );
  });
});

describe('parseGoBool', () => {
  it.each([
    [undefined, true], [true, true], [false, false], ['true', true], ['false', false], ['1', true], ['0', false], ['t', true], ['F', false],
  ] as const)('%j → %j', (value, expected) => {
    expect(parseGoBool('--leader-elect', value)).toBe(expected);
  });

  it('rejects other words', () => {
    expect(() => parseGoBool('--leader-elect', 'yes')).toThrow('--leader-elect: invalid boolean "yes"');
  });
});

describe('resolveControllers', () => {
  it.each([
    ['*', ['cloud-node', 'node-ipam']],
    ['*,-node-ipam', ['cloud-node']],
    ['-node-ipam-controller,*', ['cloud-node']],
    ['cloud-node-controller', ['cloud-node']],
    ['node-ipam', ['node-ipam']],
    ['cloud-node,node-ipam-controller', ['cloud-node', 'node-ipam']],
    ['*,-cloud-node,-node-ipam', []],
    ['cloud-node,-cloud-node', []],
    // Disabled by default: not in `*`, only when named.
    ['*,cloud-node-lifecycle', ['cloud-node', 'cloud-node-lifecycle', 'node-ipam']],
    ['cloud-node-lifecycle-controller', ['cloud-node-lifecycle']],
    ['*,cloud-node-lifecycle,-cloud-node-lifecycle', ['cloud-node', 'node-ipam']],
    ['*,-cloud-node-lifecycle', ['cloud-node', 'node-ipam']],
  ])('%s → %j', (value, expected) => {
    expect([...resolveControllers(value)].sort()).toEqual(expected);
  });

  it.each([
    ['route', /unknown controller "route"/],
    ['*,,cloud-node', /empty item/],
    ['-service', /unknown controller "service"/],
  ])('rejects %s', (value, message) => {
    expect(() => resolveControllers(value)).toThrow(message);
  });
});

const base: RawRunFlags = { cloudProvider: 'static' };

describe('resolveRunOptions', () => {
  it('applies the documented defaults', () => {
    const o = resolveRunOptions(base);
    expect(o.controllers).toEqual(new Set(['cloud-node', 'node-ipam']));
    expect(o.nodeStatusUpdateFrequencyMs).toBe(300_000);
    expect(o.concurrentNodeSyncs).toBe(1);
    expect(o.ipam).toEqual({ allocateNodeCIDRs: false, cidrAllocatorType: 'RangeAllocator' });
    expect(o.leaderElection).toEqual({
      enabled: true, warmStandby: true, leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000,
      namespace: 'kube-system', name: 'node-address-ccm',
    });
    expect(o.bindAddress).toBe('127.0.0.1');
    expect(o.securePort).toBe(10268);
    expect(o.serving).toEqual({ alwaysAllowPaths: ['/healthz', '/readyz', '/livez'], plainHTTP: false });
    expect(o.logLevel).toBe('info');
    expect(o.kubeconfig).toBeUndefined();
    expect(writeTimeoutMs(o.leaderElection)).toBeLessThan(15_000 - 10_000);
  });

  it('--kube-api-qps/--kube-api-burst: kube-controller-manager defaults 20/30, a negative rate turns the limit off', () => {
    expect(resolveRunOptions({ ...base }).kubeAPIRateLimit).toEqual({ qps: 20, burst: 30 });
    expect(resolveRunOptions({ ...base, kubeApiQps: '200', kubeApiBurst: '400' }).kubeAPIRateLimit).toEqual({ qps: 200, burst: 400 });
    expect(resolveRunOptions({ ...base, kubeApiQps: '0.5' }).kubeAPIRateLimit).toEqual({ qps: 0.5, burst: 30 });
    expect(resolveRunOptions({ ...base, kubeApiQps: '-1' }).kubeAPIRateLimit).toBeUndefined();
  });

  it('keeps the flags-mode IPAM values', () => {
    const o = resolveRunOptions({
      ...base, allocateNodeCidrs: true, clusterCidr: '10.244.0.0/16,fd00::/48', nodeCidrMaskSizeIpv4: '24', nodeCidrMaskSizeIpv6: '64',
      serviceClusterIpRange: '10.96.0.0/12',
    });
    expect(o.ipam).toEqual({
      allocateNodeCIDRs: true, cidrAllocatorType: 'RangeAllocator', clusterCIDR: '10.244.0.0/16,fd00::/48',
      nodeCIDRMaskSizeIPv4: 24, nodeCIDRMaskSizeIPv6: 64, serviceClusterIPRange: '10.96.0.0/12',
    });
  });

  it('--node-monitor-period: 5s by default, Go durations, positive only; cloud-node-lifecycle needs a provider', () => {
    expect(resolveRunOptions(base).nodeMonitorPeriodMs).toBe(5000);
    expect(resolveRunOptions({ ...base, nodeMonitorPeriod: '1m30s' }).nodeMonitorPeriodMs).toBe(90_000);
    expect(() => resolveRunOptions({ ...base, nodeMonitorPeriod: '0' })).toThrow('--node-monitor-period: must be positive, got "0"');
    expect(() => resolveRunOptions({ ...base, nodeMonitorPeriod: '5' })).toThrow('--node-monitor-period: invalid duration "5"');
    expect(() => resolveRunOptions({ controllers: 'cloud-node-lifecycle' })).toThrow(/--cloud-provider: required when the cloud-node-lifecycle controller runs/);
  });

  it('needs no cloud provider when cloud-node is disabled', () => {
    const o = resolveRunOptions({ controllers: '*,-cloud-node' });
    expect(o.cloudProvider).toBeUndefined();
    expect([...o.controllers]).toEqual(['node-ipam']);
  });

  it('MultiCIDRRangeAllocator and CloudAllocator need no --cluster-cidr; node-ipam alone needs no provider', () => {
    const multi = resolveRunOptions({ controllers: 'node-ipam', allocateNodeCidrs: true, cidrAllocatorType: 'MultiCIDRRangeAllocator' });
    expect(multi.ipam).toEqual({ allocateNodeCIDRs: true, cidrAllocatorType: 'MultiCIDRRangeAllocator' });
    expect(multi.cloudProvider).toBeUndefined();
    const cloud = resolveRunOptions({ controllers: 'node-ipam', allocateNodeCidrs: true, cidrAllocatorType: 'CloudAllocator', cloudProvider: 'gce' });
    expect(cloud.ipam.cidrAllocatorType).toBe('CloudAllocator');
  });

  it('serving: certificate pair, always-allowed paths (prefixes with a trailing *), plain HTTP only when asked', () => {
    expect(resolveRunOptions({ ...base, tlsCertFile: '/c.pem', tlsPrivateKeyFile: '/k.pem', authorizationAlwaysAllowPaths: '/healthz, /debug/*' }).serving)
      .toEqual({ tlsCertFile: '/c.pem', tlsPrivateKeyFile: '/k.pem', alwaysAllowPaths: ['/healthz', '/debug/*'], plainHTTP: false });
    expect(resolveRunOptions({ ...base, insecurePlainHttp: true }).serving.plainHTTP).toBe(true);
    expect(resolveRunOptions({ ...base, insecurePlainHttp: 'false' }).serving.plainHTTP).toBe(false);
    expect(resolveRunOptions({ ...base, authorizationAlwaysAllowPaths: '' }).serving.alwaysAllowPaths).toEqual([]);
  });

  it('--shutdown-grace-period: 10 s by default, Go durations', () => {
    expect(resolveRunOptions(base).shutdownGracePeriodMs).toBe(10_000);
    expect(resolveRunOptions({ ...base, shutdownGracePeriod: '1m30s' }).shutdownGracePeriodMs).toBe(90_000);
    expect(resolveRunOptions({ ...base, shutdownGracePeriod: '1500ms' }).shutdownGracePeriodMs).toBe(1500);
  });

  it('--optimize-for-memory: on by default, a Go bool, a bad value names the flag', () => {
    expect(resolveRunOptions(base).optimizeForMemory).toBe(true);
    expect(resolveRunOptions({ ...base, optimizeForMemory: 'false' }).optimizeForMemory).toBe(false);
    expect(resolveRunOptions({ ...base, optimizeForMemory: true }).optimizeForMemory).toBe(true);
    expect(() => resolveRunOptions({ ...base, optimizeForMemory: 'sometimes' })).toThrow(/--optimize-for-memory: .*"sometimes"/);
  });

  it('leader election off skips its timing checks', () => {
    const o = resolveRunOptions({ ...base, leaderElect: 'false', leaderElectLeaseDuration: '1s' });
    expect(o.leaderElection.enabled).toBe(false);
  });

  it.each<[RawRunFlags, RegExp]>([
    [{}, /--cloud-provider: required when the cloud-node controller runs/],
    [{ ...base, allocateNodeCidrs: true }, /--cluster-cidr: required when --allocate-node-cidrs is true/],
    [{ ...base, concurrentNodeSyncs: '0' }, /--concurrent-node-syncs: 0 is out of range/],
    [{ ...base, concurrentNodeSyncs: 'four' }, /--concurrent-node-syncs: "four" is not an integer/],
    [{ ...base, kubeApiQps: 'fast' }, /--kube-api-qps: "fast" is not a number/],
    [{ ...base, kubeApiQps: '0' }, /--kube-api-qps: 0 would allow no request; use a positive rate, or a negative value to turn the limit off/],
    [{ ...base, kubeApiBurst: '0' }, /--kube-api-burst: 0 is out of range/],
    [{ ...base, nodeStatusUpdateFrequency: '0' }, /--node-status-update-frequency: must be positive/],
    [{ ...base, cidrAllocatorType: 'IPAMFromCluster' }, /--cidr-allocator-type: unsupported type "IPAMFromCluster" \(supported: RangeAllocator, MultiCIDRRangeAllocator, CloudAllocator\)/],
    [{ controllers: 'node-ipam', allocateNodeCidrs: true, cidrAllocatorType: 'CloudAllocator' }, /--cloud-provider: required with --cidr-allocator-type=CloudAllocator/],
    [{ ...base, nodeCidrMaskSizeIpv4: '129' }, /--node-cidr-mask-size-ipv4: 129 is out of range/],
    [{ ...base, leaderElectLeaseDuration: '10s' }, /--leader-elect-lease-duration: must be greater than --leader-elect-renew-deadline/],
    [{ ...base, leaderElectRetryPeriod: '9s' }, /--leader-elect-renew-deadline: must be greater than 1.2/],
    [{ ...base, leaderElectResourceNamespace: 'Kube_System' }, /--leader-elect-resource-namespace: "Kube_System"/],
    [{ ...base, bindAddress: 'localhost' }, /--bind-address: "localhost" is not an IP address/],
    [{ ...base, securePort: '70000' }, /--secure-port: 70000 is out of range/],
    [{ ...base, kubeconfig: '' }, /--kubeconfig: must not be empty/],
    [{ ...base, tlsCertFile: '/c.pem' }, /--tls-private-key-file: required with --tls-cert-file "\/c.pem"/],
    [{ ...base, tlsPrivateKeyFile: '/k.pem' }, /--tls-cert-file: required with --tls-private-key-file "\/k.pem"/],
    [{ ...base, tlsCertFile: ' ', tlsPrivateKeyFile: '/k.pem' }, /--tls-cert-file: must not be empty/],
    [{ ...base, insecurePlainHttp: true, tlsCertFile: '/c.pem', tlsPrivateKeyFile: '/k.pem' }, /--insecure-plain-http: cannot be combined with --tls-cert-file/],
    [{ ...base, insecurePlainHttp: 'yes' }, /--insecure-plain-http: invalid boolean "yes"/],
    [{ ...base, authorizationAlwaysAllowPaths: 'healthz' }, /--authorization-always-allow-paths: "healthz" is not an absolute path/],
    [{ ...base, authorizationAlwaysAllowPaths: '/a*b' }, /--authorization-always-allow-paths: "\/a\*b": \* is only allowed as the last character/],
    [{ ...base, leaderElect: 'maybe' }, /--leader-elect: invalid boolean "maybe"/],
    [{ ...base, shutdownGracePeriod: '0' }, /--shutdown-grace-period: must be positive, got "0"/],
    [{ ...base, shutdownGracePeriod: '-5s' }, /--shutdown-grace-period: must be positive, got "-5s"/],
    [{ ...base, shutdownGracePeriod: 'soon' }, /--shutdown-grace-period: invalid duration "soon"/],
  ])('rejects %j', (raw, message) => {
    expect(() => resolveRunOptions(raw)).toThrow(RunOptionsError);
    expect(() => resolveRunOptions(raw)).toThrow(message);
  });
});
