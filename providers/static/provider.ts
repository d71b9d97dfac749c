// `--cloud-provider static`: node metadata from a file, for bare metal and the simulated cluster.
// The file is reloaded when it changes. We watch the directory rather than the file because
// editors and ConfigMap volumes replace files by rename (the watched inode would go stale), and
// we also re-read periodically as a safety net because fs.watch can miss events on some
// filesystems. A reload only takes effect when the content really changed and parses; a bad file keeps the last good
// config and logs the field at fault.
import { createHash } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { open as openFile, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { CloudProvider, InstanceMetadata, InstanceResult, NodeRef, ProviderLogger } from '../types.js';
import { parseCloudConfig, readCloudConfig } from '../cloud-config.js';
import { found, notFound, type CloudConfigFile } from '../types.js';
import { parseStaticCloudConfig, StaticConfigError, StaticNodes, type StaticCloudConfig, type StaticNode } from './config.js';

export interface StaticProviderOptions {
  /** Path of the YAML/JSON cloud-config. */
  path: string;
  /** Its content as already read (the registry reads --cloud-config once); otherwise open() reads it. */
  text?: string;
  logger?: ProviderLogger;
  /** Wait after a change event before reading, so a burst of writes is read once (ms). */
  debounceMs?: number;
  /** Safety-net poll interval (ms); 0 disables polling. */
  pollMs?: number;
  /** Use fs.watch (default true); false relies on polling alone, for filesystems without events. */
  watch?: boolean;
  /**
   * A file whose last change (mtime and ctime) was at least this long before a read of it is not
   * read again while its stat stays the same (ms, default 2000). Some filesystems keep times at
   * one-second resolution, so a file read within that time of a change can change again without
   * its stat showing it: such a file is read on every poll until it has been quiet that long.
   */
  statTrustMs?: number;
}

const noopLogger: ProviderLogger = { info() {}, warn() {}, error() {}, debug() {} };

/** An entry's metadata: the config builds each entry anew when asked (StaticNodes.get), so no copy is needed. */
function metadataOf(n: StaticNode): InstanceMetadata {
  const { shutdown: _shutdown, ...m } = n;
  return m;
}

export class StaticProvider implements CloudProvider {
  readonly name = 'static';
  /**
   * Which providerIDs name one instance: the file's own spelling, compared as written (its IDs are
   * the operator's, of any form; no other spelling is known to mean the same machine).
   */
  readonly instanceKey = (providerID: string): string | undefined => (providerID === '' ? undefined : providerID);
  /** Incremented each time a new config takes effect (1 after the initial load). */
  generation = 0;
  /** The last reload error, cleared by the next good load. */
  lastError: Error | undefined;
  /** Times the file's content was read (a poll of an unchanged, settled file reads only its stat). */
  reads = 0;
  /**
   * Times the content was read whole into a string: at start-up (unless given), and by a reload
   * whose content differs from the config in effect and the last failed one. A reload of unchanged
   * content digests the file in pieces: a 100,000-node file read whole is a 20 MB string plus its
   * 20 MB flattened copy, both large objects only a full collection frees.
   */
  textReads = 0;

  private config: StaticCloudConfig = { nodes: new StaticNodes() };
  /** Digest of the config in effect: a 100,000-node file is 20 MB that need not stay in memory. */
  private lastDigest: string | undefined;
  /** The content digest (or read error) of the last failed reload, so it is logged once. */
  private lastFailure: string | undefined;
  private watcher: FSWatcher | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private debounceTimer: NodeJS.Timeout | undefined;
  private reloading: Promise<void> | undefined;
  private reloadAgain = false;
  /** Stat (device, inode, size, times) of the file as last read, once it had settled; see statTrustMs. */
  private trustedStat: string | undefined;
  private readonly statTrustMs: number;
  private closed = false;
  private readonly listeners = new Set<(generation: number) => void>();
  private readonly file: string;
  private readonly logger: ProviderLogger;
  private readonly debounceMs: number;
  private readonly pollMs: number;
  private readonly useWatch: boolean;

  private constructor(options: StaticProviderOptions) {
    this.file = path.resolve(options.path);
    this.logger = options.logger ?? noopLogger;
    this.debounceMs = options.debounceMs ?? 100;
    this.pollMs = options.pollMs ?? 10_000;
    this.useWatch = options.watch ?? true;
    this.statTrustMs = options.statTrustMs ?? 2000;
  }

  /** Applies the file (throws if it is missing or invalid) and starts watching it. */
  static async open(options: StaticProviderOptions): Promise<StaticProvider> {
    const p = new StaticProvider(options);
    let file: CloudConfigFile;
    if (options.text === undefined) {
      p.reads++;
      p.textReads++;
      file = await readCloudConfig(options.path);
    } else {
      file = { path: options.path, text: options.text };
    }
    parseCloudConfig(file, (text) => p.apply(text));
    p.startWatching();
    return p;
  }

  /** Calls `listener` after each config that takes effect; returns an unsubscribe function. */
  onReload(listener: (generation: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reads the file now (normally driven by the watcher). Never throws. */
  reload(): Promise<void> {
    if (this.reloading) {
      this.reloadAgain = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      try {
        do {
          this.reloadAgain = false;
          await this.reloadOnce();
        } while (this.reloadAgain && !this.closed);
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  async instancesMetadata(nodes: readonly NodeRef[]): Promise<Map<string, InstanceResult<InstanceMetadata>>> {
    return this.answer(nodes, metadataOf);
  }

  async instancesExist(nodes: readonly NodeRef[]): Promise<Map<string, InstanceResult<boolean>>> {
    const out = new Map<string, InstanceResult<boolean>>();
    for (const n of nodes) out.set(n.name, found(this.config.nodes.has(n.name)));
    return out;
  }

  async instancesShutdown(nodes: readonly NodeRef[]): Promise<Map<string, InstanceResult<boolean>>> {
    return this.answer(nodes, (n) => n.shutdown);
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    this.watcher = undefined;
    clearInterval(this.pollTimer);
    clearTimeout(this.debounceTimer);
    this.listeners.clear();
  }

  private answer<T>(nodes: readonly NodeRef[], value: (n: StaticNode) => T): Map<string, InstanceResult<T>> {
    const out = new Map<string, InstanceResult<T>>();
    for (const n of nodes) {
      const entry = this.config.nodes.get(n.name);
      out.set(n.name, entry ? found(value(entry)) : notFound(`node ${n.name} is not listed in ${this.file}`));
    }
    return out;
  }

  private apply(text: string): void {
    const config = parseStaticCloudConfig(text);
    this.config = config;
    this.lastDigest = digestOf(text);
    this.lastError = undefined;
    this.generation++;
  }

  private async reloadOnce(): Promise<void> {
    if (this.closed) return;
    // A 100,000-node file is 20 MB: a poll of an unchanged one reads its stat, not its content.
    const st = await stat(this.file).catch(() => undefined);
    const key = st && `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    if (key !== undefined && key === this.trustedStat) return;
    this.trustedStat = undefined;
    const readAt = Date.now();
    // Trusted once read whole and settled: changed at least statTrustMs before this read began.
    const settled = st !== undefined && readAt - Math.max(st.mtimeMs, st.ctimeMs) >= this.statTrustMs;
    // First the digest alone, read in pieces: the content is kept only when it is neither the
    // config in effect nor the last failed one. digestOf hashes the text's UTF-8 bytes, which are
    // the file's bytes when they are valid UTF-8; otherwise the digests differ and the text is read.
    let digest: string | undefined;
    let text: string | undefined;
    try {
      this.reads++;
      digest = await fileDigest(this.file);
      if (digest !== this.lastDigest && digest !== this.lastFailure) {
        if (this.closed) return;
        this.reads++;
        this.textReads++;
        text = await readFile(this.file, 'utf8');
        digest = digestOf(text);
      }
    } catch (err) {
      // During an atomic replace the path can be briefly absent; the next event or poll retries.
      this.fail(err as Error, `read:${(err as Error).message}`, 'cloud-config: cannot read; keeping the last good config');
      return;
    }
    if (this.closed) return;
    if (digest === this.lastDigest) {
      // Back to the config in effect (e.g. a bad edit reverted): nothing to apply, nothing wrong.
      if (this.lastError) this.logger.info({ path: this.file }, 'cloud-config matches the config in effect again');
      this.lastError = undefined;
      this.lastFailure = undefined;
      if (settled) this.trustedStat = key;
      return;
    }
    // (text is undefined only when the digest in pieces was one of those two.)
    if (digest === this.lastFailure || text === undefined) {
      if (settled) this.trustedStat = key;
      return;
    }
    // A file being written in place (an editor's save, `>` in a shell) can be read half written
    // or empty, and an empty file is a valid config with no nodes: apply new content only once it
    // reads the same twice, a debounce apart. Otherwise the next event or poll tries again.
    await new Promise((resolve) => setTimeout(resolve, this.debounceMs));
    if (this.closed) return;
    this.reads++;
    // The second reading is only digested, never kept: two copies of a 26 MB file at once were
    // part of the start-up peak.
    const unchanged = await readFile(this.file, 'utf8').then((again) => digestOf(again) === digest, () => false);
    if (!unchanged) {
      this.schedule();
      return;
    }
    try {
      this.apply(text);
    } catch (err) {
      this.fail(err as Error, digest, 'cloud-config: invalid; keeping the last good config');
      return;
    }
    this.lastFailure = undefined;
    this.logger.info({ path: this.file, nodes: this.config.nodes.size, generation: this.generation }, 'cloud-config reloaded');
    for (const l of this.listeners) l(this.generation);
  }

  /** Records a failed reload, logging it once rather than on every poll. */
  private fail(err: Error, key: string, msg: string): void {
    this.lastError = err;
    if (key === this.lastFailure) return;
    this.lastFailure = key;
    const field = err instanceof StaticConfigError ? err.field : undefined;
    this.logger.error({ err, path: this.file, ...(field ? { field } : {}) }, msg);
  }

  private schedule(): void {
    if (this.closed) return;
    clearTimeout(this.debounceTimer);
    this.debounceTimer = setTimeout(() => void this.reload(), this.debounceMs);
  }

  private startWatching(): void {
    const dir = path.dirname(this.file);
    if (this.useWatch) this.watchDirectory(dir);
    if (this.pollMs > 0) {
      // Each poll reads the file's stat, and its content only when the stat changed or the file
      // had not settled (statTrustMs) when it was last read.
      this.pollTimer = setInterval(() => void this.reload(), this.pollMs);
      this.pollTimer.unref();
    }
  }

  private watchDirectory(dir: string): void {
    try {
      // Any event in the directory may concern us (ConfigMaps swap a `..data` symlink, not the
      // file itself), and the content comparison makes spurious events cheap.
      this.watcher = watch(dir, { persistent: false }, () => this.schedule());
      this.watcher.on('error', (err) => {
        this.logger.warn({ err, path: dir }, 'cloud-config: directory watch failed; relying on polling');
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch (err) {
      this.logger.warn({ err, path: dir }, 'cloud-config: cannot watch directory; relying on polling');
    }
  }
}

function digestOf(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** SHA-256 of the file's bytes, read 256 KiB at a time into one buffer (outside V8's heap). */
async function fileDigest(file: string): Promise<string> {
  const hash = createHash('sha256');
  const handle = await openFile(file, 'r');
  try {
    const buffer = Buffer.allocUnsafeSlow(256 * 1024);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}
