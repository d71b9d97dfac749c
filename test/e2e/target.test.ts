// The real-cluster guard: the suite only touches a cluster whose context is allow-listed.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { allowedContexts, checkAllowedContext, loadRealClusterConfig, runPrefix, targetKind, TargetRefusedError } from './support/target.js';

describe('target selection', () => {
  it('defaults to the double; E2E_REAL_CLUSTER=1 selects the real cluster; anything else is refused', () => {
    expect(targetKind({})).toBe('double');
    expect(targetKind({ E2E_REAL_CLUSTER: '0' })).toBe('double');
    expect(targetKind({ E2E_REAL_CLUSTER: '1' })).toBe('real');
    expect(targetKind({ E2E_REAL_CLUSTER: 'true' })).toBe('real');
    expect(() => targetKind({ E2E_REAL_CLUSTER: 'yes' })).toThrow(TargetRefusedError);
  });

  it('parses the allow-list', () => {
    expect(allowedContexts({ E2E_ALLOWED_CONTEXTS: ' kind-a, ,kind-b ' })).toEqual(['kind-a', 'kind-b']);
    expect(allowedContexts({})).toEqual([]);
  });

  it('refuses contexts that are not allow-listed, an empty allow-list, and no context', () => {
    expect(checkAllowedContext('kind-node-address-ccm', ['kind-node-address-ccm'])).toBe('kind-node-address-ccm');
    expect(() => checkAllowedContext('prod', ['kind-node-address-ccm'])).toThrow(/"prod" is not in E2E_ALLOWED_CONTEXTS/);
    expect(() => checkAllowedContext('kind-node-address-ccm-2', ['kind-node-address-ccm'])).toThrow(TargetRefusedError);
    expect(() => checkAllowedContext('kind-x', [])).toThrow(/E2E_ALLOWED_CONTEXTS is empty/);
    expect(() => checkAllowedContext(undefined, ['kind-x'])).toThrow(/no current-context/);
  });

  it('prefixes are random DNS labels', () => {
    const a = runPrefix();
    expect(a).toMatch(/^e2e-[0-9a-f]{8}$/);
    expect(runPrefix()).not.toBe(a);
  });

  describe('loadRealClusterConfig reads $KUBECONFIG and applies the allow-list', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'e2e-target-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'config');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1" } }]',
        'users: [{ name: u, user: { token: t } }]',
        'contexts: [{ name: prod, context: { cluster: c, user: u } }, { name: kind-node-address-ccm, context: { cluster: c, user: u } }]',
        'current-context: prod',
        '',
      ].join('\n'),
    );

    it('refuses the current context when it is not allow-listed', () => {
      expect(() => loadRealClusterConfig({ KUBECONFIG: file, E2E_ALLOWED_CONTEXTS: 'kind-node-address-ccm' })).toThrow(/"prod" is not in E2E_ALLOWED_CONTEXTS/);
    });

    it('accepts it when it is', () => {
      expect(loadRealClusterConfig({ KUBECONFIG: file, E2E_ALLOWED_CONTEXTS: 'kind-node-address-ccm,prod' }).context).toBe('prod');
    });
  });
});
