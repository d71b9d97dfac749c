// A TCP port that is free on 127.0.0.1 right now (the kernel picks it), for benchmarks, tests and
// anything that must tell a child process which port to serve on before it starts.
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
