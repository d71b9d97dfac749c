// What the process benchmarks read of their child processes: JSON log lines as they come, and
// memory from /proc.
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

export interface Lines {
  /** The first message at index `from` or later that matches. */
  next(match: (msg: Record<string, unknown>) => boolean, timeoutMs: number, what: string, from?: number): Promise<Record<string, unknown>>;
  all: Record<string, unknown>[];
}

/** JSON lines of a child's stdout, with a way to wait for one that matches. */
export function lines(child: ChildProcess): Lines {
  const all: Record<string, unknown>[] = [];
  const waiters: { match: (m: Record<string, unknown>) => boolean; from: number; resolve: (m: Record<string, unknown>) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    all.push(msg);
    for (const w of [...waiters]) {
      if (all.length - 1 >= w.from && w.match(msg)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(msg);
      }
    }
  });
  return {
    all,
    next(match, timeoutMs, what, from = 0) {
      const seen = all.slice(from).find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`bench: timed out waiting for ${what}`)), timeoutMs);
        waiters.push({ match, from, resolve: (m) => (clearTimeout(t), resolve(m)) });
      });
    },
  };
}


/** VmRSS and VmHWM (peak) of a process, in MiB; RssAnon and RssFile split the RSS (anonymous memory, mapped files such as the node binary). */
export function rss(pid: number): { rss: number; peak: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0);
  return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024), anon: Math.round(kb('RssAnon') / 1024), file: Math.round(kb('RssFile') / 1024) };
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  // /proc/<pid>/stat: utime and stime are fields 14 and 15, after the parenthesised command.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Sum of a metric over its label sets (those whose line holds `filter`), from the process's /metrics; undefined when not reachable. */
export async function metric(port: number, name: string, filter = ''): Promise<number | undefined> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    let sum = 0;
    // `name{labels} value` or, for a metric without labels, `name value`.
    for (const line of text.split('\n')) if ((line.startsWith(`${name}{`) || line.startsWith(`${name} `)) && line.includes(filter)) sum += Number(line.split(' ').pop());
    return sum;
  } catch {
    return undefined;
  }
}

/**
 * Where a process's RSS is, in MiB, from its /metrics: V8's heap in use and committed (the young
 * generation apart), external memory, and the rest of the RSS (code, malloc, thread stacks).
 */
export async function heapShare(port: number, rssMiB: number): Promise<string> {
  const mib = async (name: string, filter?: string): Promise<number | undefined> => {
    const v = await metric(port, name, filter);
    return v === undefined ? undefined : Math.round(v / 2 ** 20);
  };
  const committed = await mib('nodejs_heap_space_size_total_bytes');
  if (committed === undefined) return 'heap —';
  return `heap ${await mib('nodejs_heap_space_size_used_bytes')} used / ${committed} committed (young ${await mib('nodejs_heap_space_size_total_bytes', 'space="new"')}), external ${await mib('nodejs_external_memory_bytes')}, rest ${rssMiB - committed}`;
}
