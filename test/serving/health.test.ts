import { describe, it, expect, afterEach } from 'vitest';
import { Counter, Registry } from 'prom-client';
import { HealthServer, leaderElectionCheck, syncedCheck, workersCheck, type HealthCheck } from '../../src/serving/health.js';

const servers: HealthServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function start(livez: HealthCheck[], readyz: HealthCheck[], registry = new Registry()) {
  const s = await HealthServer.start({ port: 'ephemeral', registry, livez, readyz, checkTimeoutMs: 100 });
  if (!s) throw new Error('expected a server');
  servers.push(s);
  return s;
}

async function get(url: string): Promise<[number, string, string | null]> {
  const r = await fetch(url);
  return [r.status, await r.text(), r.headers.get('content-type')];
}

describe('HealthServer', () => {
  it('port 0 means off', async () => {
    expect(await HealthServer.start({ port: 0, registry: new Registry() })).toBeUndefined();
  });

  it('0.0.0.0 and :: listen on every interface of both families (as Kubernetes\' --bind-address); a specific address only there', async () => {
    for (const address of ['0.0.0.0', '::']) {
      const s = await HealthServer.start({ address, port: 'ephemeral', registry: new Registry() });
      if (!s) throw new Error('expected a server');
      servers.push(s);
      const port = new URL(s.url).port;
      expect([address, (await get(`http://127.0.0.1:${port}/healthz`))[0]]).toEqual([address, 200]);
      expect([address, (await get(`http://[::1]:${port}/healthz`))[0]]).toEqual([address, 200]);
    }
    const only4 = await HealthServer.start({ address: '127.0.0.1', port: 'ephemeral', registry: new Registry() });
    if (!only4) throw new Error('expected a server');
    servers.push(only4);
    await expect(fetch(`http://[::1]:${new URL(only4.url).port}/healthz`)).rejects.toThrow();
  });

  it('rejects a bad port naming it', async () => {
    await expect(HealthServer.start({ port: 70000, registry: new Registry() })).rejects.toThrow('health port');
  });

  it('serves the given registry on /metrics, never the global one', async () => {
    const registry = new Registry();
    new Counter({ name: 'my_total', help: 'h', registers: [registry] }).inc(3);
    const s = await start([], [], registry);
    const [code, body, type] = await get(`${s.url}/metrics`);
    expect(code).toBe(200);
    expect(body).toContain('my_total 3');
    expect(body).not.toContain('process_cpu');
    expect(type).toContain('text/plain');
  });

  it('answers ok, verbose lines, failures with reasons, and single checks', async () => {
    let workers = 2;
    let synced = false;
    const elector = { isLeader: () => false, leader: () => '' };
    const s = await start(
      [workersCheck('node-workers', () => workers, 2)],
      [leaderElectionCheck(elector), syncedCheck('nodes-synced', { hasSynced: () => synced })],
    );
    expect(await get(`${s.url}/livez`)).toEqual([200, 'ok\n', 'text/plain; charset=utf-8']);
    expect((await get(`${s.url}/livez?verbose`))[1]).toBe('[+]node-workers ok\nlivez check passed\n');
    const [code, body] = await get(`${s.url}/readyz`);
    expect(code).toBe(500);
    expect(body).toBe('[-]leader-election failed: no leader observed yet\n[-]nodes-synced failed: cache not synced\nreadyz check failed\n');
    elector.leader = () => 'other';
    synced = true;
    expect((await get(`${s.url}/readyz`))[0]).toBe(200);
    workers = 1;
    expect(await get(`${s.url}/healthz/node-workers`)).toEqual([500, '[-]node-workers failed: 1 of 2 workers running\nhealthz check failed\n', 'text/plain; charset=utf-8']);
    expect((await get(`${s.url}/readyz/nodes-synced`))[0]).toBe(200);
    expect((await get(`${s.url}/readyz/nope`))[0]).toBe(404);
    expect((await get(`${s.url}/other`))[0]).toBe(404);
  });

  it('/healthz is /livez: a failing readiness check does not fail it', async () => {
    const s = await start([workersCheck('node-workers', () => 2, 2)], [syncedCheck('nodes-synced', { hasSynced: () => false })]);
    expect((await get(`${s.url}/readyz`))[0]).toBe(500);
    expect(await get(`${s.url}/healthz`)).toEqual([200, 'ok\n', 'text/plain; charset=utf-8']);
    expect((await get(`${s.url}/healthz?verbose`))[1]).toBe('[+]node-workers ok\nhealthz check passed\n');
    expect((await get(`${s.url}/healthz/nodes-synced`))[0]).toBe(404);
  });

  it('fails thrown, rejected and hung checks; addCheck adds', async () => {
    const s = await start([], []);
    s.addCheck('livez', { name: 'throws', check: () => { throw new Error('boom'); } });
    s.addCheck('livez', { name: 'hangs', check: () => new Promise(() => {}) });
    const [code, body] = await get(`${s.url}/livez`);
    expect(code).toBe(500);
    expect(body).toContain('[-]throws failed: boom');
    expect(body).toContain('[-]hangs failed: no answer within 100 ms');
  });

  it('refuses other methods', async () => {
    const s = await start([], []);
    expect((await fetch(`${s.url}/livez`, { method: 'POST' })).status).toBe(405);
  });
});
