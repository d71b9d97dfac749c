// The few Docker Engine API calls the kind adapter makes, over the daemon's unix socket.
// Unversioned paths: the daemon answers them at its own API version, which keeps this working
// across Engine releases that raise the minimum supported version.
import { request } from 'node:http';
import type { DockerContainerInspect } from './addresses.js';

/** One entry of GET /containers/json. */
export interface DockerContainerSummary {
  Id: string;
  Names: string[];
  Labels?: Record<string, string> | null;
  State?: string;
}

export class DockerApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = 'DockerApiError';
  }
}

export interface DockerClientOptions {
  socketPath: string;
  /** Per-request timeout, default 10s. */
  timeoutMs?: number;
}

export class DockerClient {
  private readonly timeoutMs: number;

  constructor(private readonly options: DockerClientOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  /** All containers (running or not) carrying every given label (`key=value`). */
  listContainers(labels: string[], signal?: AbortSignal): Promise<DockerContainerSummary[]> {
    const filters = encodeURIComponent(JSON.stringify({ label: labels }));
    return this.get<DockerContainerSummary[]>(`/containers/json?all=1&filters=${filters}`, signal);
  }

  inspectContainer(id: string, signal?: AbortSignal): Promise<DockerContainerInspect> {
    return this.get<DockerContainerInspect>(`/containers/${encodeURIComponent(id)}/json`, signal);
  }

  private get<T>(path: string, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const req = request(
        { socketPath: this.options.socketPath, path, method: 'GET', headers: { host: 'docker', accept: 'application/json' }, signal, timeout: this.timeoutMs },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300) {
              let message = text.trim();
              try {
                message = (JSON.parse(text) as { message?: string }).message ?? message;
              } catch {
                // not JSON: keep the raw body
              }
              reject(new DockerApiError(status, `docker GET ${path.split('?')[0]}: HTTP ${status}: ${message}`));
              return;
            }
            try {
              resolve(JSON.parse(text) as T);
            } catch (err) {
              reject(new Error(`docker GET ${path.split('?')[0]}: response is not JSON`, { cause: err }));
            }
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`docker GET ${path.split('?')[0]}: no answer within ${this.timeoutMs}ms on ${this.options.socketPath}`)));
      req.on('error', reject);
      req.end();
    });
  }
}
