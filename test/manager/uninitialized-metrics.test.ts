import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { registerUninitializedNodeMetrics, uninitializedSummary } from '../../src/manager/uninitialized-metrics.js';
import type { NodeObject } from '../../src/model/node.js';
import { makeNode } from '../kit/nodes.js';

const NOW = Date.parse('2026-01-01T00:10:00Z');
const node = (name: string, creationTimestamp: string | undefined, tainted: boolean): NodeObject => makeNode({ name, tainted, creationTimestamp });

describe('uninitializedSummary', () => {
  it.each<[string, NodeObject[], { count: number; oldestAgeSeconds: number }]>([
    ['no nodes', [], { count: 0, oldestAgeSeconds: 0 }],
    ['none tainted', [node('a', '2026-01-01T00:00:00Z', false)], { count: 0, oldestAgeSeconds: 0 }],
    ['the oldest tainted node counts, untainted older ones do not',
      [node('old', '2025-12-31T00:00:00Z', false), node('a', '2026-01-01T00:00:00Z', true), node('b', '2026-01-01T00:09:00Z', true)], { count: 2, oldestAgeSeconds: 600 }],
    ['a tainted node without a creation time counts but has no age', [node('a', undefined, true)], { count: 1, oldestAgeSeconds: 0 }],
    ['a creation time in the future is age 0', [node('a', '2026-01-01T01:00:00Z', true)], { count: 1, oldestAgeSeconds: 0 }],
  ])('%s', (_name, nodes, expected) => {
    expect(uninitializedSummary(nodes, NOW)).toEqual(expected);
  });

  it('the gauges are read from the cache at each scrape', async () => {
    const registry = new Registry();
    let nodes: NodeObject[] = [node('a', '2026-01-01T00:00:00Z', true)];
    registerUninitializedNodeMetrics(registry, () => nodes, () => NOW);
    expect(await registry.metrics()).toMatch(/^node_controller_oldest_uninitialized_node_age_seconds 600$/m);
    expect(await registry.metrics()).toMatch(/^node_controller_uninitialized_nodes 1$/m);
    nodes = [];
    expect(await registry.metrics()).toMatch(/^node_controller_uninitialized_nodes 0$/m);
  });
});
