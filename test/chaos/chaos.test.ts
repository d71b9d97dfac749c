// The project's own chaos test (issue 13): three real `run` replicas against the API server double
// through its fault injection, on fixed seeds. bench/chaos/harness.ts runs the schedule;
// `npm run soak` runs the same harness longer on any seed.
import { describe, expect, it } from 'vitest';
import { runChaos, type ChaosResult } from '../../bench/chaos/harness.js';

// Two seeds; each runs every kind of fault once (about a minute with 6 s leases) and draws more
// until 30 s have passed, then converges: about 3 minutes in all on a quiet machine.
const SEEDS = (process.env.CHAOS_SEEDS ?? '1301,1302').split(",").map(Number);
const FAULT_PHASE_MS = Number(process.env.CHAOS_FAULT_MS ?? 30_000);

describe.each(SEEDS)('chaos, seed %i', (seed) => {
  let result: ChaosResult;

  it('runs the schedule of faults and converges once they stop', async () => {
    result = await runChaos({ seed, durationMs: FAULT_PHASE_MS, log: (l) => process.env.CHAOS_VERBOSE && console.log(`[seed ${seed}] ${l}`) });
    const f = result.figures;
    // Every kind of fault ran at least once, and did something.
    for (const [action, n] of Object.entries(f.actions)) expect(n, `action ${action}`).toBeGreaterThan(0);
    expect(f.kills).toBeGreaterThan(0);
    expect(f.freezes).toBeGreaterThan(0);
    expect(f.blackouts).toBeGreaterThan(0);
    expect(f.writes).toBeGreaterThan(0);
    // Replica 0 takes over from its warm standby caught up to a quorum read; 2 warm, by a relist;
    // 1 cold (replicas.ts slotMode). Which replica wins a takeover is a race, so a seed does not
    // always give replica 0 one (CI, 07:44, seed 1302): the catch-up path itself is covered
    // deterministically by test/controllers/nodeipam/warm-standby.test.ts; here, warm takeovers
    // of either kind happened.
    expect(f.caughtUpTakeovers + f.warmTakeovers).toBeGreaterThan(0);
    expect(result.nodeProblems, `nodes after the faults:\n${result.logs()}`).toEqual([]);
    expect(result.leaseProblems, `one Lease holder:\n${result.logs()}`).toEqual([]);
    expect(f.convergeMs).toBeDefined();
  }, 360_000);

  it('no replica wrote without holding a valid Lease', () => {
    expect(result, 'the run above did not finish').toBeDefined();
    expect(result.unfencedWrites, result.logs()).toEqual([]);
  });

  it('nothing is written in the quiet window after convergence', () => {
    expect(result, 'the run above did not finish').toBeDefined();
    expect(result.quietWrites).toEqual([]);
  });

  it('every deposed replica exited 1 within 2 s of "stopped leading"', () => {
    expect(result, 'the run above did not finish').toBeDefined();
    expect(result.slowExits, result.logs()).toEqual([]);
  });
});
