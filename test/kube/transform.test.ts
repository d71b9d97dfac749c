import { describe, expect, it } from 'vitest';
import { withoutManagedFields, type KubeObject } from '../../src/kube/types.js';

describe('withoutManagedFields', () => {
  it('drops metadata.managedFields only, without touching the input', () => {
    const obj = { apiVersion: 'v1', kind: 'X', metadata: { name: 'a', resourceVersion: '3', managedFields: [{ manager: 'm' }], finalizers: ['f'] }, spec: { cidrs: ['10.0.0.0/8'] } } as KubeObject & { spec: unknown };
    expect(withoutManagedFields(obj)).toEqual({ apiVersion: 'v1', kind: 'X', metadata: { name: 'a', resourceVersion: '3', finalizers: ['f'] }, spec: { cidrs: ['10.0.0.0/8'] } });
    expect((obj.metadata as { managedFields?: unknown }).managedFields).toEqual([{ manager: 'm' }]);
  });

  it('returns an object without managedFields as it is', () => {
    const obj: KubeObject = { metadata: { name: 'b' } };
    expect(withoutManagedFields(obj)).toBe(obj);
  });
});
