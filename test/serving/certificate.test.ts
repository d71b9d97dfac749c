import { X509Certificate, createPrivateKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { oid, sequence, time, tlv, unsignedInteger } from '../../src/serving/der.js';
import { selfSignedCertificate } from '../../src/serving/certificate.js';

const hex = (b: Buffer): string => b.toString('hex');

describe('DER', () => {
  it.each([
    ['1.2.840.10045.4.3.2', '06082a8648ce3d040302'],
    ['2.5.29.17', '0603551d11'],
    ['1.3.6.1.5.5.7.3.1', '06082b06010505070301'],
  ])('OID %s', (dotted, expected) => expect(hex(oid(dotted))).toBe(expected));

  it.each([
    [0, '0400'],
    [127, '047f'],
    [128, '048180'],
    [256, '04820100'],
    [70_000, '0483011170'],
  ])('length of a %i-byte value', (n, header) => {
    const out = tlv(0x04, Buffer.alloc(n));
    expect(hex(out.subarray(0, header.length / 2))).toBe(header);
    expect(out.length).toBe(header.length / 2 + n);
  });

  it.each([
    ['00', '020100'],
    ['7f', '02017f'],
    ['80', '02020080'],
    ['0000ff', '020200ff'],
  ])('unsigned INTEGER %s', (mag, expected) => expect(hex(unsignedInteger(Buffer.from(mag, 'hex')))).toBe(expected));

  it('UTCTime through 2049, GeneralizedTime from 2050', () => {
    expect(time(new Date('2049-12-31T23:59:59Z')).toString('latin1')).toBe('\x17\x0d491231235959Z');
    expect(time(new Date('2050-01-01T00:00:00Z')).toString('latin1')).toBe('\x18\x0f20500101000000Z');
  });

  it('refuses malformed object identifiers', () => {
    expect(() => oid('1')).toThrow('invalid object identifier "1"');
    expect(() => oid('1.x.3')).toThrow('invalid object identifier');
    expect(hex(sequence())).toBe('3000');
  });
});

describe('selfSignedCertificate', () => {
  const now = new Date('2026-03-01T12:00:00Z');
  const pair = selfSignedCertificate({ commonName: 'node-address-ccm@1', hosts: ['localhost', '127.0.0.1', '::1', 'ccm-0.example'], now, validDays: 30 });
  const cert = new X509Certificate(pair.cert);

  it('is signed by its own key, which is the key returned', () => {
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(pair.key))).toBe(true);
    expect(cert.issuer).toBe(cert.subject);
    expect(cert.subject).toBe('CN=node-address-ccm@1');
  });

  it('names every host in subjectAltName, IPv6 included', () => {
    expect(cert.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, DNS:ccm-0.example');
    expect(cert.checkHost('localhost')).toBe('localhost');
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.checkHost('other.example')).toBeUndefined();
  });

  it('is valid from an hour before now for validDays, for server authentication', () => {
    expect(new Date(cert.validFrom).toISOString()).toBe('2026-03-01T11:00:00.000Z');
    expect(new Date(cert.validTo).toISOString()).toBe('2026-03-31T12:00:00.000Z');
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(cert.ca).toBe(true);
  });

  it('each certificate has its own key and serial', () => {
    const other = new X509Certificate(selfSignedCertificate({ commonName: 'x', hosts: ['localhost'] }).cert);
    expect(other.serialNumber).not.toBe(cert.serialNumber);
    expect(other.publicKey.export({ format: 'jwk' })).not.toEqual(cert.publicKey.export({ format: 'jwk' }));
  });

  it('refuses bad input, naming it', () => {
    expect(() => selfSignedCertificate({ commonName: 'x', hosts: [] })).toThrow('hosts: at least one');
    expect(() => selfSignedCertificate({ commonName: 'x', hosts: ['bad host'] })).toThrow('hosts: "bad host" is neither an IP address nor a DNS name');
    expect(() => selfSignedCertificate({ commonName: 'x', hosts: ['localhost'], validDays: 0 })).toThrow('validDays: must be positive, got 0');
  });
});
