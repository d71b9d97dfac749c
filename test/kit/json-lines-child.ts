// A child process asked questions one JSON line each on stdin, answering one JSON line each on
// stdout in the same order: the shape of the Go oracles (test/controlplane's cmd/oracle and the aws
// module's cmd/awsoracle). Questions may be asked in batches; each batch's answers come back in its
// order.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface JsonLinesChild<Q, A> {
  /** Asks every question; the answers in the same order. */
  ask(questions: readonly Q[]): Promise<A[]>;
  /** Closes stdin (the oracles exit at its end) and waits for the process to exit. */
  stop(): Promise<void>;
}

export function startJsonLinesChild<Q, A>(bin: string, env?: NodeJS.ProcessEnv): JsonLinesChild<Q, A> {
  const child: ChildProcess = spawn(bin, [], { stdio: ['pipe', 'pipe', 'ignore'], ...(env ? { env } : {}) });
  const lines = createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return {
    ask: (questions) => {
      const answers = questions.map(() => new Promise<A>((resolve) => waiting.push((line) => resolve(JSON.parse(line) as A))));
      child.stdin!.write(questions.map((q) => JSON.stringify(q)).join('\n') + '\n');
      return Promise.all(answers);
    },
    stop: async () => {
      child.stdin!.end();
      await exited;
    },
  };
}
