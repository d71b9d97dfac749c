// Small network helpers for tests that talk to a served port: a free port, and a GET over HTTPS
// or HTTP that reports the status, body and (HTTPS) the server's certificate.
import http from 'node:http';
import https from 'node:https';
import type { PeerCertificate, TLSSocket } from 'node:tls';

export { freePort } from '../../src/util/free-port.js';

export interface GetResult {
  status: number;
  body: string;
  /** The server certificate (HTTPS only). */
  peer?: PeerCertificate;
}

/** GET `url`; with https, `ca` is the only trusted root (undefined: accept any certificate). */
export function get(url: string, o: { token?: string; ca?: string; servername?: string } = {}): Promise<GetResult> {
  const u = new URL(url);
  const headers: Record<string, string> = o.token !== undefined ? { Authorization: `Bearer ${o.token}` } : {};
  return new Promise((resolve, reject) => {
    const onResponse = (res: http.IncomingMessage): void => {
      const peer = u.protocol === 'https:' ? (res.socket as TLSSocket).getPeerCertificate() : undefined;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ...(peer ? { peer } : {}) }));
      res.on('error', reject);
    };
    const req = u.protocol === 'https:'
      ? https.request(u, { headers, agent: false, ...(o.ca !== undefined ? { ca: o.ca, rejectUnauthorized: true } : { rejectUnauthorized: false }), ...(o.servername ? { servername: o.servername } : {}) }, onResponse)
      : http.request(u, { headers, agent: false }, onResponse);
    req.on('error', reject);
    req.end();
  });
}
