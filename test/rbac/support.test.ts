// The RBAC proof's own tool: grant flattening.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRbacYaml } from '../../src/double/index.js';
import { repoRoot } from '../kit/cli.js';
import { grantKey, grantsFor, withoutVerb } from './support/grants.js';

describe('grants of deploy/base/rbac.yaml', () => {
  const file = path.join(repoRoot, 'deploy/base/rbac.yaml');
  const policy = parseRbacYaml(readFileSync(file, 'utf8'), file);
  const sa = 'system:serviceaccount:kube-system:node-address-ccm';

  it('flattens the ServiceAccount\'s rules, with scope and resourceNames', () => {
    const grants = grantsFor(policy, sa);
    expect(grants.map(grantKey)).toContain('patch nodes/status');
    const leaseUpdate = grants.find((g) => grantKey(g) === 'update leases.coordination.k8s.io');
    expect(leaseUpdate).toMatchObject({ namespace: 'kube-system', resourceNames: ['node-address-ccm'] });
    expect(grants.find((g) => grantKey(g) === 'list nodes')?.namespace).toBe('');
  });

  it('grants nothing to another user', () => {
    expect(grantsFor(policy, 'system:serviceaccount:default:other')).toEqual([]);
  });

  it('withoutVerb drops exactly that verb and leaves the original alone', () => {
    const cut = withoutVerb(policy, 'patch', 'nodes/status');
    const before = grantsFor(policy, sa).map(grantKey);
    const after = grantsFor(cut, sa).map(grantKey);
    expect(before.filter((k) => !after.includes(k))).toEqual(['patch nodes/status']);
    expect(after.every((k) => before.includes(k))).toBe(true);
    expect(grantsFor(policy, sa).map(grantKey)).toContain('patch nodes/status');
  });
});

