// `npm run soak`: the chaos harness of test/chaos (bench/chaos/harness.ts) run longer, on a seed of
// your choice, printing its figures and every violation; exit 1 on any. Environment:
//   SOAK_SECONDS  how long faults are applied (default 300)
//   SOAK_SEED     seed of the schedule and the fault draws (default: drawn at random, printed)
//   SOAK_NODES    node names the churn draws from (default 40)
//   SOAK_VERBOSE  1: print each fault as it is applied
import { runChaos } from './chaos/harness.js';

function intEnv(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min) {
    console.error(`${name} ${JSON.stringify(raw)}: expected an integer ≥ ${min}`);
    process.exit(2);
  }
  return Number(raw);
}

const seconds = intEnv('SOAK_SECONDS', 300, 1);
const seed = intEnv('SOAK_SEED', Math.floor(Math.random() * 2 ** 31), 0);
const poolSize = intEnv('SOAK_NODES', 40, 4);
const verbose = process.env.SOAK_VERBOSE === '1';

console.log(`soak: seed ${seed}, ${seconds} s of faults, ${poolSize} node names (SOAK_SEED=${seed} repeats the schedule)`);
const t0 = Date.now();
const r = await runChaos({
  seed,
  durationMs: seconds * 1000,
  poolSize,
  initialNodes: Math.min(12, poolSize),
  log: (line) => verbose && console.log(`  ${new Date().toISOString()} ${line}`),
});
const f = r.figures;
const rows: [string, string][] = [
  ['seed', String(f.seed)],
  ['fault phase', `${(f.faultPhaseMs / 1000).toFixed(1)} s`],
  ['actions', Object.entries(f.actions).map(([a, n]) => `${a} ${n}`).join(', ')],
  ['leader kills (SIGKILL)', String(f.kills)],
  ['freezes (SIGSTOP past the lease)', String(f.freezes)],
  ['blackouts', String(f.blackouts)],
  ['requests failed, delayed or dropped by rules', String(f.faultsFired)],
  ['watch cuts', String(f.watchCuts)],
  ['replica processes started', String(f.processesStarted)],
  ['nodes created / deleted / re-annotated', `${f.nodesCreated} / ${f.nodesDeleted} / ${f.reannotated}`],
  ['writes by replicas (non-lease)', String(f.writes)],
  ['time to converge after the faults', f.convergeMs === undefined ? 'did not converge' : `${(f.convergeMs / 1000).toFixed(1)} s`],
  ['slowest deposed exit', f.maxDeposedExitMs === undefined ? 'none deposed' : `${f.maxDeposedExitMs} ms`],
  ['retried Warning events in the quiet window', String(f.quietRetryEvents)],
  ['wall time', `${((Date.now() - t0) / 1000).toFixed(0)} s`],
];
console.log('\n| figure | value |\n| --- | --- |');
for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);

const checks: [string, string[]][] = [
  ['nodes (pod CIDRs, addresses, taints)', r.nodeProblems],
  ['one Lease holder', r.leaseProblems],
  ['no write without a valid Lease', r.unfencedWrites],
  ['deposed replicas exit 1 within 2 s', r.slowExits],
  ['nothing written in the quiet window', r.quietWrites],
];
let failed = false;
console.log('');
for (const [name, problems] of checks) {
  console.log(`${problems.length === 0 ? 'ok  ' : 'FAIL'} ${name}${problems.length ? `: ${problems.length}` : ''}`);
  for (const p of problems.slice(0, 20)) console.log(`       ${p}`);
  failed ||= problems.length > 0;
}
if (failed) {
  console.log(`\n${r.logs()}`);
  process.exitCode = 1;
}
