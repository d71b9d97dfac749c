// A chaos run: three `run` replicas (real processes) against the API server double, a seeded
// schedule of faults — SIGKILL of the leader while nodes join (also right after the followers'
// watches were cut, so the next leader takes over from caches that missed the last blocks),
// SIGSTOP/SIGCONT past the lease (idle, mid-burst, and during start-up into an API outage),
// blackouts longer than the renew deadline, flaky API rules, watch cuts with 410, node churn and
// re-annotation — then, once the faults stop, the checks of checks.ts. The replicas take over in
// three ways (replicas.ts slotMode): warm standby with the quorum catch-up, warm with a relist,
// cold. Used by test/chaos/chaos.test.ts (fixed seeds) and `npm run soak` (longer, any seed).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify as toYaml } from 'yaml';
import { startApiServerDouble, type ApiServerDouble } from '../../src/double/index.js';
import type { FaultPlan, FaultSpec, Verb } from '../../src/double/faults.js';
import { registrationNode } from '../../src/simulation/kubelet/node.js';
import { seededRandom } from '../../src/util/random.js';
import { NODE_IP_ANNOTATION, UNINITIALIZED, annotationChoices, nodeProblems, poolNode, slowExits, unfencedWrites, type PoolNode, type Ranges, type StoredNode, type WriteRecord } from './checks.js';
import { slotMode, startReplica, type Replica } from './replicas.js';

export const ACTIONS = ['kill-leader', 'cut-followers-kill', 'recreate-during-gap', 'freeze-idle', 'freeze-burst', 'freeze-startup-outage', 'blackout', 'flaky-api', 'churn'] as const;
export type Action = (typeof ACTIONS)[number];
const WEIGHTS: Record<Action, number> = { 'kill-leader': 12, 'cut-followers-kill': 8, 'recreate-during-gap': 8, 'freeze-idle': 10, 'freeze-burst': 10, 'freeze-startup-outage': 8, blackout: 10, 'flaky-api': 15, churn: 30 };

export interface ChaosOptions {
  seed: number;
  /** How long faults are applied (the schedule starts a new action until then). */
  durationMs: number;
  /** Node names the churn draws from (default 40). */
  poolSize?: number;
  /** Nodes created before the replicas start (default 12). */
  initialNodes?: number;
  /** Limit on the time to converge once the faults stop (default 60 s). */
  convergeTimeoutMs?: number;
  /** Window after convergence in which no replica may write (default 5 s). */
  quietMs?: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

export interface ChaosFigures {
  seed: number;
  faultPhaseMs: number;
  actions: Record<Action, number>;
  /** Requests an injected rule failed, delayed or dropped. */
  faultsFired: number;
  watchCuts: number;
  kills: number;
  freezes: number;
  blackouts: number;
  processesStarted: number;
  nodesCreated: number;
  nodesDeleted: number;
  reannotated: number;
  /** Non-lease writes the replicas sent. */
  writes: number;
  /** From the end of the faults to every check passing; undefined when it never did. */
  convergeMs: number | undefined;
  /** Warning events re-counted for still-tainted nodes in the quiet window (retries, allowed). */
  quietRetryEvents: number;
  /** Longest "stopped leading" → exit among deposed replicas. */
  maxDeposedExitMs: number | undefined;
  /** Terms whose node IPAM started from the warm cache caught up to a quorum read (no second LIST). */
  caughtUpTakeovers: number;
  /** Terms whose node IPAM took over the ledger its replica kept warm while following. */
  warmTakeovers: number;
  /** Terms whose node IPAM loaded cold (warm standby off). */
  coldStarts: number;
}

export interface ChaosResult {
  figures: ChaosFigures;
  /** Stored nodes not as they should be when the run gave up converging (empty when converged). */
  nodeProblems: string[];
  /** Not exactly one live leader holding the Lease. */
  leaseProblems: string[];
  /** Writes from a replica that did not hold a valid Lease. */
  unfencedWrites: string[];
  /** Deposed replicas that did not exit 1 within 2 s. */
  slowExits: string[];
  /** Writes in the quiet window after convergence. */
  quietWrites: string[];
  /** Log tails of the replicas, for failure messages. */
  logs(): string;
}

const LEASE = { namespace: 'kube-system', name: 'node-address-ccm' };
// Issue 13's reproduction used 4 s / 3 s / 500 ms; 6 s / 4 s / 1 s keeps a replica on a loaded
// 2-core machine from losing its lease to CPU starvation alone, and is still short enough for
// freezes past the lease to fit a test.
const LEASE_MS = 6000;
const RENEW_MS = 4000;
const RETRY_MS = 1000;
/** Convergence also needs this long without a replica write (an event queue draining is not flapping). */
const SETTLE_MS = 2000;
const RANGES: Ranges = { clusterCIDRs: ['10.200.0.0/16'], maskSize: 24, serviceCIDRs: ['10.200.0.0/20'] };
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
const REPLICAS = 3;
const RESTART_DELAY_MS = 700;
const DEPOSED_EXIT_LIMIT_MS = 2000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function runArgs(kubeconfig: string, cloudConfig: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    '--cloud-provider=static',
    `--cloud-config=${cloudConfig}`,
    '--controllers=*',
    '--allocate-node-cidrs=true',
    `--cluster-cidr=${RANGES.clusterCIDRs.join(',')}`,
    `--node-cidr-mask-size-ipv4=${RANGES.maskSize}`,
    `--service-cluster-ip-range=${RANGES.serviceCIDRs.join(',')}`,
    `--leader-elect-lease-duration=${LEASE_MS / 1000}s`,
    `--leader-elect-renew-deadline=${RENEW_MS / 1000}s`,
    `--leader-elect-retry-period=${RETRY_MS}ms`,
    '--secure-port=0',
    '--node-status-update-frequency=1s',
    '--kube-api-qps=-1',
    '--log-level=info',
  ];
}

export async function runChaos(o: ChaosOptions): Promise<ChaosResult> {
  const rand = seededRandom(o.seed);
  const between = (lo: number, hi: number): number => Math.round(lo + rand() * (hi - lo));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
  const timeline: string[] = [];
  const log = (line: string): void => {
    timeline.push(`${new Date().toISOString()} ${line}`);
    o.log?.(line);
  };
  const poolSize = o.poolSize ?? 40;
  const pool = new Map<string, PoolNode>();
  for (let i = 0; i < poolSize; i++) {
    const n = poolNode(i);
    pool.set(n.name, n);
  }
  const users = Array.from({ length: REPLICAS }, (_, i) => ({ name: `replica-${i}`, token: `chaos-token-${i}-${o.seed}` }));
  const api: ApiServerDouble = await startApiServerDouble({ users, seed: o.seed, bookmarkIntervalMs: 500 });
  const dir = mkdtempSync(path.join(tmpdir(), 'node-address-ccm-chaos-'));
  const cloudConfig = path.join(dir, 'cloud.yaml');
  writeFileSync(cloudConfig, toYaml({ nodes: Object.fromEntries([...pool.values()].map((n) => [n.name, { addresses: n.cloud }])) }));
  const kubeconfigs = users.map((u) => {
    const f = path.join(dir, `${u.name}.kubeconfig`);
    writeFileSync(f, api.kubeconfigFor(u.name), { mode: 0o600 });
    return f;
  });

  const figures: ChaosFigures = {
    seed: o.seed, faultPhaseMs: 0, actions: Object.fromEntries(ACTIONS.map((a) => [a, 0])) as Record<Action, number>,
    faultsFired: 0, watchCuts: 0, kills: 0, freezes: 0, blackouts: 0, processesStarted: 0,
    nodesCreated: 0, nodesDeleted: 0, reannotated: 0, writes: 0, convergeMs: undefined, quietRetryEvents: 0, maxDeposedExitMs: undefined, caughtUpTakeovers: 0,
    warmTakeovers: 0, coldStarts: 0,
  };

  // ---- writes as they arrive, with the Lease as stored at that moment
  const writes: WriteRecord[] = [];
  let lastWriteAt = 0;
  let quiet: WriteRecord[] | undefined;
  const lease = (): { holder: string; renewMs: number; leaseMs: number } => {
    const l = api.store.peek('leases.coordination.k8s.io', LEASE.name, LEASE.namespace) as { spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number } } | undefined;
    return { holder: l?.spec?.holderIdentity ?? '', renewMs: Date.parse(l?.spec?.renewTime ?? '') || 0, leaseMs: (l?.spec?.leaseDurationSeconds ?? 0) * 1000 };
  };
  api.onRequest((info) => {
    if (!WRITE_VERBS.has(info.verb) || !info.user.startsWith('replica-') || info.resource === 'leases') return;
    const w: WriteRecord = { at: Date.now(), user: info.user, verb: info.verb, what: `${info.resource}${info.subresource ? '/' + info.subresource : ''} ${info.namespace ? info.namespace + '/' : ''}${info.name}`, ...lease() };
    writes.push(w);
    lastWriteAt = w.at;
    quiet?.push(w);
  });

  // ---- replicas, restarted after they exit (as a Deployment would) until teardown
  const all: Replica[] = [];
  const slots: (Replica | undefined)[] = [];
  let stopping = false;
  const acquiredWaiters = new Set<(r: Replica) => void>();
  const start = (slot: number): Replica => {
    const r = startReplica(slot, runArgs(kubeconfigs[slot], cloudConfig), (rep, line) => {
      if (line.msg === 'acquired the lease') {
        log(`replica ${rep.slot} pid ${rep.pid} (${rep.identity}) acquired the lease`);
        for (const w of acquiredWaiters) w(rep);
      }
      if (line.msg === 'stopped leading') log(`replica ${rep.slot} pid ${rep.pid} stopped leading (${String(line.reason)})`);
      if (typeof line.msg === 'string' && line.msg.startsWith('node IPAM: the node cache is current to a quorum read')) figures.caughtUpTakeovers++;
      if (line.msg === 'allocator loaded from existing nodes') {
        if (line.warmStandby === true) figures.warmTakeovers++;
        else figures.coldStarts++;
      }
    });
    figures.processesStarted++;
    all.push(r);
    slots[slot] = r;
    void r.exited.then(() => {
      log(`replica ${slot} pid ${r.pid} exited ${r.exitCode ?? r.signal}${r.stoppedLeadingAt !== undefined ? ` ${r.exitedAt! - r.stoppedLeadingAt} ms after stopping leading` : ''}`);
      if (!stopping && slots[slot] === r) setTimeout(() => !stopping && slots[slot] === r && start(slot), RESTART_DELAY_MS);
    });
    return r;
  };
  const live = (): Replica[] => slots.filter((r): r is Replica => r !== undefined && r.exitedAt === undefined);
  const leader = (): Replica | undefined => {
    const { holder } = lease();
    return live().find((r) => r.identity === holder && r.stoppedLeadingAt === undefined && !r.frozen);
  };
  /** The current leader, waiting for one (a takeover may be under way) up to three lease durations. */
  const waitLeader = async (): Promise<Replica | undefined> => {
    const until = Date.now() + 3 * LEASE_MS;
    for (let r = leader(); Date.now() < until; r = leader()) {
      if (r) return r;
      await sleep(200);
    }
    log('no leader to act on');
    return undefined;
  };
  const nextAcquired = (timeoutMs: number): Promise<Replica | undefined> =>
    new Promise((resolve) => {
      const done = (r: Replica | undefined): void => {
        acquiredWaiters.delete(done);
        clearTimeout(timer);
        resolve(r);
      };
      const timer = setTimeout(() => done(undefined), timeoutMs);
      acquiredWaiters.add(done);
    });
  const freeze = (r: Replica): void => {
    r.signalProcess('SIGSTOP');
    r.frozen = true;
    figures.freezes++;
  };
  const thaw = (r: Replica): void => {
    r.signalProcess('SIGCONT');
    r.frozen = false;
  };

  // ---- nodes
  const present = (): string[] => (api.store.list('nodes') as unknown as StoredNode[]).map((n) => n.metadata.name);
  const createNode = (name: string, satisfiable = false): void => {
    const p = pool.get(name)!;
    const nodeIP = pick(annotationChoices(p).filter((a) => !satisfiable || a !== p.foreignIP));
    const { node } = registrationNode({ name, nodeIP, cloudProviderExternal: true, hostIPs: [p.v4, p.v6, p.foreignIP] });
    api.store.create('nodes', node);
    figures.nodesCreated++;
  };
  const createSome = (k: number): void => {
    const free = [...pool.keys()].filter((n) => !present().includes(n));
    for (let i = 0; i < k && free.length > 0; i++) createNode(free.splice(Math.floor(rand() * free.length), 1)[0]);
  };
  const reannotate = (name: string): void => {
    // Only to a value the cloud satisfies, or away: a node never goes from satisfiable to not. The
    // dual-stack values in either order and the removal are the reorderings issue 36 is about.
    const p = pool.get(name)!;
    const node = api.store.get('nodes', name) as unknown as StoredNode;
    const current = node.metadata.annotations?.[NODE_IP_ANNOTATION];
    const next = pick(annotationChoices(p).filter((a) => a !== current && a !== p.foreignIP));
    const annotations = { ...(node.metadata.annotations ?? {}) };
    if (next === undefined) delete annotations[NODE_IP_ANNOTATION];
    else annotations[NODE_IP_ANNOTATION] = next;
    api.store.update('nodes', { ...node, metadata: { ...node.metadata, annotations } });
    figures.reannotated++;
  };

  const faultPlan = (): FaultPlan => {
    // The first rule always hits traffic that never stops (the Lease) or the controllers' writes.
    const rules: FaultSpec[] = [
      rand() < 0.5
        ? { verb: ['get', 'update'], resource: 'leases.coordination.k8s.io', errorRate: pick([0.2, 0.4]), status: pick([500, 503, 504] as const), retryAfterSeconds: 0 }
        : { verb: ['patch', 'update'], resource: 'nodes', errorRate: pick([0.3, 0.5]), status: pick([409, 429, 500] as const), retryAfterSeconds: 0 },
    ];
    const k = between(0, 2);
    for (let i = 0; i < k; i++) {
      const kind = pick(['error', 'error', 'latency', 'drop'] as const);
      const verb: Verb[] = pick([['patch', 'update'], ['create'], ['list'], ['get'], ['patch']] as Verb[][]);
      const resource = pick(['nodes', 'events', 'leases.coordination.k8s.io', undefined]);
      const base: FaultSpec = { verb, ...(resource ? { resource } : {}) };
      if (kind === 'error') rules.push({ ...base, errorRate: pick([0.2, 0.4, 0.6]), status: pick([409, 429, 500, 503, 504] as const), retryAfterSeconds: 0 });
      else if (kind === 'latency') rules.push({ ...base, latencyMs: between(50, 400) });
      else if (verb.some((v) => WRITE_VERBS.has(v))) rules.push({ ...base, dropResponse: true, count: between(1, 4) });
    }
    return { rules, ...(rand() < 0.5 ? { watchCloses: { everyMs: between(800, 2500), expireHistory: rand() < 0.6 } } : {}) };
  };
  let planFired = 0;
  const applyPlan = (plan: FaultPlan): void => {
    // Count what the outgoing plan did before replacing it.
    const s = api.faults.status();
    planFired += s.fired;
    figures.watchCuts += s.watchCloses;
    api.faults.applyPlan(plan);
  };

  const act: Record<Action, () => Promise<void>> = {
    'kill-leader': async () => {
      const r = await waitLeader();
      if (!r) return;
      // Nodes join as it dies: some get blocks from it, the rest from the next leader.
      createSome(between(0, 4));
      await sleep(between(0, 300));
      r.killedByHarness = true;
      r.signalProcess('SIGKILL');
      figures.kills++;
      log(`SIGKILL leader replica ${r.slot} pid ${r.pid}`);
      await sleep(between(1000, 2500));
    },
    'cut-followers-kill': async () => {
      const r = await waitLeader();
      if (!r) return;
      // The followers' watches end and cannot come back: the leader's next blocks reach no
      // follower's cache before it dies, and the next leader starts from a cache that missed them.
      const followers = live().filter((x) => x !== r);
      const cuts = followers.map((f) => api.faults.inject({ user: `replica-${f.slot}`, verb: 'watch', status: 503 }));
      api.closeWatches();
      figures.watchCuts++;
      createSome(between(2, 5));
      await sleep(between(400, 1200));
      r.killedByHarness = true;
      r.signalProcess('SIGKILL');
      figures.kills++;
      log(`watches of replicas ${followers.map((f) => f.slot).join(', ')} cut and kept down; SIGKILL leader replica ${r.slot} pid ${r.pid}`);
      // The takeover happens while the watches are still down.
      await sleep(LEASE_MS + between(500, 2000));
      for (const c of cuts) c.remove();
      await sleep(1500);
    },
    'recreate-during-gap': async () => {
      // Issue 36: while the followers' watches are down (and their history expires, so they
      // relist), an initialised node is deleted and recreated under its name, and another node
      // joins already holding the deleted one's blocks. The leader is frozen meanwhile, so the
      // recreated node is still tainted when a warm follower takes over; the cold replica is frozen
      // too, so that a warm one does. A follower that read its relist by name kept the old node's
      // blocks, and handed them to the new one: two Nodes with one block.
      const r = await waitLeader();
      if (!r) return;
      const victim = (api.store.list('nodes') as unknown as StoredNode[]).find((n) => (n.spec?.podCIDRs ?? []).length > 0 && !(n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED));
      const joiner = [...pool.keys()].find((n) => !present().includes(n));
      if (!victim || !joiner) return;
      const followers = live().filter((x) => x !== r);
      const cuts = followers.map((f) => api.faults.inject({ user: `replica-${f.slot}`, verb: 'watch', status: 503 }));
      api.closeWatches();
      figures.watchCuts++;
      freeze(r);
      const cold = followers.filter((f) => slotMode(f.slot).name.startsWith('cold'));
      for (const f of cold) freeze(f);
      const blocks = victim.spec!.podCIDRs!;
      api.store.delete('nodes', victim.metadata.name);
      figures.nodesDeleted++;
      createNode(victim.metadata.name, true);
      const { node } = registrationNode({ name: joiner, nodeIP: undefined, cloudProviderExternal: false, hostIPs: [pool.get(joiner)!.v4] });
      api.store.create('nodes', { ...node, spec: { ...node.spec, podCIDR: blocks[0], podCIDRs: blocks } });
      figures.nodesCreated++;
      // The followers come back to an expired history: they relist, with the recreated node in it.
      api.compactHistory();
      for (const c of cuts) c.remove();
      log(`leader replica ${r.slot} pid ${r.pid} frozen${cold.length ? `, cold replica ${cold.map((f) => f.slot).join(',')} frozen` : ''}; ${victim.metadata.name} deleted and recreated while the followers' watches were down; ${joiner} joined holding its blocks ${blocks.join(',')}`);
      await sleep(LEASE_MS + between(1500, 3000));
      for (const f of cold) thaw(f);
      thaw(r);
      await sleep(2500);
    },
    'freeze-idle': async () => {
      const r = await waitLeader();
      if (!r) return;
      freeze(r);
      const ms = LEASE_MS + between(500, 2500);
      log(`SIGSTOP leader replica ${r.slot} pid ${r.pid} for ${ms} ms (idle)`);
      await sleep(ms);
      thaw(r);
      await sleep(2500);
    },
    'freeze-burst': async () => {
      const r = await waitLeader();
      if (!r) return;
      const burst = between(4, 8);
      createSome(burst);
      await sleep(between(0, 150));
      freeze(r);
      const ms = LEASE_MS + between(500, 2500);
      log(`SIGSTOP leader replica ${r.slot} pid ${r.pid} for ${ms} ms in a burst of ${burst} nodes`);
      await sleep(ms);
      thaw(r);
      await sleep(2500);
    },
    'freeze-startup-outage': async () => {
      // Issue 13's reproduction: the next replica to acquire the Lease is frozen before its
      // controllers start, the API goes down, and it resumes into the outage.
      const old = await waitLeader();
      if (!old) return;
      const next = nextAcquired(LEASE_MS * 4);
      old.killedByHarness = true;
      old.signalProcess('SIGKILL');
      figures.kills++;
      const r = await next;
      if (!r || r.exitedAt !== undefined) return;
      // Frozen either at once (in the takeover delay) or once its controllers start (their
      // start-up LISTs in flight), as in the issue.
      const when = pick(['acquired', 'starting controllers'] as const);
      if (when === 'starting controllers') {
        const until = Date.now() + 5000;
        while (r.controllersStartingAt === undefined && r.exitedAt === undefined && Date.now() < until) await sleep(20);
        if (r.exitedAt !== undefined) return;
      }
      freeze(r);
      applyPlan({ blackout: { mode: 'reset' } });
      figures.blackouts++;
      log(`replica ${r.slot} pid ${r.pid} ${when === 'acquired' ? 'acquired the lease' : 'is starting its controllers'}: SIGSTOP, API blackout, SIGCONT past the lease`);
      await sleep(LEASE_MS + between(500, 1500));
      thaw(r);
      await sleep(between(2500, 4000));
      applyPlan({});
      await sleep(1500);
    },
    blackout: async () => {
      const ms = RENEW_MS + between(500, 3000);
      const mode = pick(['reset', 'hang'] as const);
      applyPlan({ blackout: { mode, durationMs: ms } });
      figures.blackouts++;
      log(`blackout (${mode}) for ${ms} ms`);
      await sleep(ms + between(500, 1500));
      applyPlan({});
    },
    'flaky-api': async () => {
      const plan = faultPlan();
      applyPlan(plan);
      log(`flaky API: ${JSON.stringify(plan)}`);
      // Give the replicas work while the API misbehaves.
      await sleep(between(500, 1500));
      await act.churn();
      await sleep(between(1000, 3000));
      const done = api.faults.status();
      log(`flaky API over: rules fired ${done.fired} times, ${done.watchCloses} watch cuts`);
      applyPlan({});
    },
    churn: async () => {
      const names = present();
      const del = Math.min(between(0, 3), names.length);
      for (let i = 0; i < del; i++) {
        const victim = names.splice(Math.floor(rand() * names.length), 1)[0];
        api.store.delete('nodes', victim);
        figures.nodesDeleted++;
      }
      createSome(between(1, 4));
      const now = present();
      for (let i = 0, k = between(0, 2); i < k && now.length > 0; i++) reannotate(pick(now));
      await sleep(between(300, 1500));
    },
  };

  const stopAll = async (): Promise<void> => {
    stopping = true;
    for (const r of live()) {
      if (r.frozen) thaw(r);
      r.signalProcess('SIGTERM');
    }
    const deadline = sleep(8000).then(() => live().forEach((r) => r.signalProcess('SIGKILL')));
    await Promise.race([Promise.all(all.map((r) => r.exited)), deadline]);
    await Promise.all(all.map((r) => r.exited));
  };

  const leaseProblems = (): string[] => {
    const { holder, renewMs, leaseMs } = lease();
    const leaders = live().filter((r) => r.acquiredAt !== undefined && r.stoppedLeadingAt === undefined);
    const out: string[] = [];
    if (!holder) out.push('no Lease holder');
    else if (Date.now() > renewMs + leaseMs) out.push(`the Lease of ${holder} expired ${Date.now() - renewMs - leaseMs} ms ago`);
    if (leaders.length !== 1) out.push(`${leaders.length} live replicas lead: ${leaders.map((r) => `${r.slot}/${r.identity}`).join(', ') || 'none'}`);
    else if (leaders[0].identity !== holder) out.push(`replica ${leaders[0].slot} (${leaders[0].identity}) leads but the Lease names ${holder}`);
    return out;
  };

  let result: ChaosResult | undefined;
  try {
    createSome(o.initialNodes ?? 12);
    for (let i = 0; i < REPLICAS; i++) start(i);
    const first = await nextAcquired(90_000);
    if (!first) throw new Error(`no replica acquired the Lease within 90 s:\n${all.map((r) => `--- replica ${r.slot}\n${r.tail()}`).join('\n')}`);
    await sleep(1500);

    // ---- the faults: every kind once in a seeded order, then weighted draws
    const t0 = Date.now();
    const order = [...ACTIONS].sort(() => rand() - 0.5);
    const total = Object.values(WEIGHTS).reduce((a, b) => a + b, 0);
    const draw = (): Action => {
      let x = rand() * total;
      for (const a of ACTIONS) if ((x -= WEIGHTS[a]) < 0) return a;
      return 'churn';
    };
    while (order.length > 0 || Date.now() - t0 < o.durationMs) {
      const a = order.shift() ?? draw();
      figures.actions[a]++;
      await act[a]();
    }
    figures.faultPhaseMs = Date.now() - t0;

    // ---- the faults stop: every process runs, the API answers
    applyPlan({});
    for (const r of live()) if (r.frozen) thaw(r);
    const tEnd = Date.now();
    log(`faults stopped after ${figures.faultPhaseMs} ms; converging`);
    const convergeBy = tEnd + (o.convergeTimeoutMs ?? 60_000);
    let nodes: string[] = ['not checked'];
    let leases: string[] = ['not checked'];
    while (Date.now() < convergeBy) {
      nodes = nodeProblems(api.store.list('nodes') as unknown as StoredNode[], pool, RANGES);
      leases = leaseProblems();
      if (nodes.length === 0 && leases.length === 0 && live().length === REPLICAS && Date.now() - lastWriteAt >= SETTLE_MS) break;
      await sleep(250);
    }
    if (nodes.length === 0 && leases.length === 0) figures.convergeMs = Date.now() - tEnd;
    log(`converged: ${figures.convergeMs !== undefined ? `${figures.convergeMs} ms` : 'no'}`);

    // ---- nothing is written once converged
    quiet = [];
    const quietFromRv = api.store.resourceVersion;
    if (figures.convergeMs !== undefined) await sleep(o.quietMs ?? 5000);
    type EventLike = { metadata: { name: string; resourceVersion?: string }; reason?: string; message?: string; involvedObject?: { name?: string } };
    const quietEvents = (api.store.list('events') as unknown as EventLike[]).filter((e) => Number(e.metadata.resourceVersion) > quietFromRv);
    // The cloud node controller keeps retrying a node whose annotation the cloud cannot satisfy,
    // and its Warning event is re-counted each time: that is not flapping. Any other write is.
    const unsatisfiable = new Set((api.store.list('nodes') as unknown as StoredNode[]).filter((n) => (n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED)).map((n) => n.metadata.name));
    // An event create names no object in its URL: it is a retry when every event written in the
    // window is about a still-tainted node.
    const onlyRetryEvents = quietEvents.every((e) => unsatisfiable.has(e.involvedObject?.name ?? ''));
    const retryEvent = (w: WriteRecord): boolean => {
      if (!w.what.startsWith('events ')) return false;
      const name = w.what.split('/').pop()!;
      return name === '' ? onlyRetryEvents : unsatisfiable.has(name.split('.')[0]);
    };
    figures.quietRetryEvents = quiet.filter(retryEvent).length;
    const quietWrites = quiet.filter((w) => !retryEvent(w)).map((w) => `${new Date(w.at).toISOString()} ${w.user} ${w.verb} ${w.what}`);
    if (quietWrites.length > 0) for (const e of quietEvents) quietWrites.push(`  event ${e.metadata.name} about ${e.involvedObject?.name}: ${e.reason} ${e.message}`);
    if (figures.convergeMs !== undefined) {
      nodes = nodeProblems(api.store.list('nodes') as unknown as StoredNode[], pool, RANGES);
      leases = leaseProblems();
    }

    const now = Date.now();
    const identities = new Map<string, Set<string>>();
    for (const r of all) if (r.identity) identities.set(`replica-${r.slot}`, (identities.get(`replica-${r.slot}`) ?? new Set()).add(r.identity));
    const exits = all.filter((r) => r.stoppedLeadingAt !== undefined && r.exitedAt !== undefined).map((r) => r.exitedAt! - r.stoppedLeadingAt!);
    figures.maxDeposedExitMs = exits.length ? Math.max(...exits) : undefined;
    figures.writes = writes.length;
    figures.faultsFired = planFired;
    const snapshot = all.map((r) => ({ slot: r.slot, pid: r.pid, stoppedLeadingAt: r.stoppedLeadingAt, stoppedReason: r.stoppedReason, exitedAt: r.exitedAt, exitCode: r.exitCode }));
    result = {
      figures,
      nodeProblems: nodes,
      leaseProblems: leases,
      unfencedWrites: unfencedWrites(writes, identities),
      slowExits: slowExits(snapshot, DEPOSED_EXIT_LIMIT_MS, now),
      quietWrites,
      logs: () => [
        '--- timeline', ...timeline,
        ...all.map((r) => `--- replica ${r.slot} pid ${r.pid} ${r.identity ?? '(identity not logged)'} (exit ${r.exitCode ?? r.signal ?? 'running'})\n${r.tail(25)}`),
      ].join('\n'),
    };
    return result;
  } finally {
    await stopAll();
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
