// RC2 decryption (RFC 2268), CBC mode. Only for reading PKCS#12 files: OpenSSL before 3.0 and
// Windows encrypt a PFX's certificates with pbeWithSHAAnd40BitRC2-CBC, Go's x/crypto/pkcs12 (what
// cloud-provider-azure reads aadClientCertPath with) decrypts it, and Node's OpenSSL 3 has RC2
// only in its legacy provider, which a library cannot switch on. Pure; never used to encrypt.

// RFC 2268 section 2: a permutation of 0..255 derived from the digits of pi.
const PITABLE = Buffer.from(
  [
    'd978f9c419ddb5ed28e9fd794aa0d89d',
    'c67e37832b76538e624c6488448bfba2',
    '179a59f587b34f1361456d8d09817d32',
    'bd8f40eb86b77b0bf09521225c6b4e82',
    '54d66593ce60b21c7356c014a78cf1dc',
    '1275ca1f3bbee4d1423dd430a33cb626',
    '6fbf0eda4669075727f21d9bbc944303',
    'f811c7f690ef3ee706c3d52fc8661ed7',
    '08e8eade8052eef784aa72ac354d6a2a',
    '961ad2715a1549744b9fd05e0418a4ec',
    'c2e0416e0f51cbcc2491af50a1f47039',
    '997c3a8523b8b47afc02365b25559731',
    '2d5dfa98e38a92ae05df2910676cbac9',
    'd300e6cfe19ea82c6316013f58e289a9',
    '0d38341bab33ffb0bb480c5fb9b1cd2e',
    'c5f3db47e5a59c770aa62068fe7fc1ad',
  ].join(''),
  'hex',
);

/** The 64 key words of RFC 2268's key expansion, for a key of 1 to 128 bytes and an effective key length in bits. */
export function rc2ExpandKey(key: Uint8Array, effectiveBits: number): Uint16Array {
  const t = key.length;
  if (t < 1 || t > 128) throw new Error(`rc2: a key of ${t} bytes (1 to 128)`);
  if (!Number.isInteger(effectiveBits) || effectiveBits < 1 || effectiveBits > 1024) throw new Error(`rc2: effective key length ${effectiveBits} bits (1 to 1024)`);
  const l = new Uint8Array(128);
  l.set(key);
  for (let i = t; i < 128; i++) l[i] = PITABLE[(l[i - 1]! + l[i - t]!) & 0xff]!;
  const t8 = (effectiveBits + 7) >> 3;
  const tm = 0xff >> (8 * t8 - effectiveBits);
  l[128 - t8] = PITABLE[l[128 - t8]! & tm]!;
  for (let i = 127 - t8; i >= 0; i--) l[i] = PITABLE[l[i + 1]! ^ l[i + t8]!]!;
  const k = new Uint16Array(64);
  for (let i = 0; i < 64; i++) k[i] = l[2 * i]! | (l[2 * i + 1]! << 8);
  return k;
}

const SHIFTS = [1, 2, 3, 5] as const;

/** Decrypts one 8-byte block in place (RFC 2268 section 4). */
function decryptBlock(k: Uint16Array, block: Uint8Array): void {
  const r = [0, 0, 0, 0];
  for (let i = 0; i < 4; i++) r[i] = block[2 * i]! | (block[2 * i + 1]! << 8);
  let j = 63;
  const mix = () => {
    for (let i = 3; i >= 0; i--) {
      const s = SHIFTS[i]!;
      r[i] = ((r[i]! >>> s) | (r[i]! << (16 - s))) & 0xffff;
      r[i] = (r[i]! - k[j]! - (r[(i + 3) & 3]! & r[(i + 2) & 3]!) - (~r[(i + 3) & 3]! & r[(i + 1) & 3]!)) & 0xffff;
      j--;
    }
  };
  const mash = () => {
    for (let i = 3; i >= 0; i--) r[i] = (r[i]! - k[r[(i + 3) & 3]! & 63]!) & 0xffff;
  };
  for (let n = 0; n < 5; n++) mix();
  mash();
  for (let n = 0; n < 6; n++) mix();
  mash();
  for (let n = 0; n < 5; n++) mix();
  for (let i = 0; i < 4; i++) {
    block[2 * i] = r[i]! & 0xff;
    block[2 * i + 1] = r[i]! >> 8;
  }
}

/** RC2 in ECB mode, one 8-byte block: for RFC 2268's test vectors. */
export function rc2DecryptBlock(key: Uint8Array, effectiveBits: number, block: Uint8Array): Buffer {
  if (block.length !== 8) throw new Error(`rc2: a block is 8 bytes, got ${block.length}`);
  const out = Buffer.from(block);
  decryptBlock(rc2ExpandKey(key, effectiveBits), out);
  return out;
}

/** RC2-CBC decryption with PKCS#7 padding removed; throws on a bad length or padding (usually a wrong password). */
export function rc2CbcDecrypt(key: Uint8Array, effectiveBits: number, iv: Uint8Array, data: Uint8Array): Buffer {
  if (iv.length !== 8) throw new Error(`rc2: an IV of ${iv.length} bytes, expected 8`);
  if (data.length === 0 || data.length % 8 !== 0) throw new Error(`rc2: ${data.length} bytes of ciphertext is not a whole number of 8-byte blocks`);
  const k = rc2ExpandKey(key, effectiveBits);
  const out = Buffer.alloc(data.length);
  let previous = Buffer.from(iv);
  for (let off = 0; off < data.length; off += 8) {
    const cipher = Buffer.from(data.subarray(off, off + 8));
    const block = Buffer.from(cipher);
    decryptBlock(k, block);
    for (let i = 0; i < 8; i++) out[off + i] = block[i]! ^ previous[i]!;
    previous = cipher;
  }
  const pad = out[out.length - 1]!;
  if (pad < 1 || pad > 8 || out.subarray(out.length - pad).some((b) => b !== pad)) throw new Error('rc2: bad padding');
  return out.subarray(0, out.length - pad);
}
