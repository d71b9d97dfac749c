// The controller's side of `audit`: the same pure findings, computed from the caches every
// interval, exported as a gauge per kind and severity, with one Warning event per new conflict
// (warnings and information only count in the gauge: a cluster migrating from another allocator
// would otherwise flood events with one "not allocated by node-address-ccm" per node, and they
// are not built either, only counted).
import { Gauge, type Registry } from 'prom-client';
import { auditFindings, findingKey, FINDING_KINDS, type AuditInput, type AuditReport, type Finding, type FindingKind } from '../../audit/findings.js';
import { realClock, type Clock, type ClockTimer } from '../../kube/clock.js';
import { silentLogger, WarningSummary, type Logger } from '../../log.js';

export const AUDIT_FINDINGS_METRIC = 'node_ipam_controller_audit_findings';
export const AUDIT_EVENT_REASON = 'IPRangeConflict';

export interface AuditLoopOptions {
  collect: () => AuditInput;
  /** Records a Warning event for a new conflict (about its first object). */
  event: (finding: Finding) => void;
  intervalMs: number;
  /** Called after each round, once the round's copy of the caches is garbage. */
  afterRun?: () => void;
  registry?: Registry;
  clock?: Clock;
  logger?: Logger;
}

export class AuditLoop {
  readonly #o: AuditLoopOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #gauge: Gauge<'kind' | 'severity'> | undefined;
  #timer: ClockTimer | undefined;
  #stopped = false;
  /** Conflicts already reported, so each gets one event while it lasts. */
  #reported = new Set<string>();
  #last: AuditReport | undefined;

  constructor(options: AuditLoopOptions) {
    if (!(options.intervalMs > 0)) throw new Error(`audit intervalMs: must be > 0, got ${options.intervalMs}`);
    this.#o = options;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? silentLogger).child({ loop: 'ipam-audit' });
    const registry = options.registry;
    if (registry) {
      this.#gauge = (registry.getSingleMetric(AUDIT_FINDINGS_METRIC) as Gauge<'kind' | 'severity'> | undefined) ??
        new Gauge({ name: AUDIT_FINDINGS_METRIC, help: 'IP range audit findings (node-address-ccm audit) by kind and severity.', labelNames: ['kind', 'severity'], registers: [registry] });
    }
  }

  /** The latest report, if one ran: its findings are the conflicts; every kind is counted in byKind. */
  last(): AuditReport | undefined {
    return this.#last;
  }

  start(): void {
    this.#schedule(0);
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.cancel();
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = this.#clock.setTimer(() => {
      try {
        this.runOnce();
      } catch (err) {
        this.#log.error({ err }, 'audit failed');
      }
      this.#o.afterRun?.();
      this.#schedule(this.#o.intervalMs);
    }, ms);
  }

  runOnce(): AuditReport {
    // Conflicts are built in full (each gets an event); warnings and information are only counted
    // for the gauge: a cluster taken over from another allocator has a PodCIDRNotAllocated
    // warning per node, whose messages and objects were 50 MiB at 130,000 nodes.
    const report = auditFindings(this.#o.collect(), { detail: (kind) => FINDING_KINDS[kind] === 'conflict' });
    this.#last = report;
    for (const [kind, severity] of Object.entries(FINDING_KINDS) as [FindingKind, string][]) {
      this.#gauge?.set({ kind, severity }, report.byKind[kind]);
    }
    const now = new Set<string>();
    // New conflicts: an event each, and one log line per kind (the first round after a bad
    // migration may find thousands).
    const warnings = new WarningSummary();
    for (const f of report.findings) {
      if (f.severity !== 'conflict') continue;
      const k = findingKey(f);
      now.add(k);
      if (this.#reported.has(k)) continue;
      warnings.add(f.kind, { kind: f.kind, message: f.message });
      this.#o.event(f);
    }
    warnings.flush(this.#log, (kind, count) => `IP range audit: ${count} new ${kind} conflicts`, () => 'node-address-ccm audit lists every finding');
    this.#reported = now;
    return report;
  }
}
