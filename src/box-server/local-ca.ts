/**
 * A local certificate authority for `boxsync server --as-box`: made once (or reused) in a directory as `ca.crt`
 * and `ca.key` (the key 0600), and a server certificate it signs for Box's host names, made fresh at each start
 * and kept in memory. node-forge builds the certificates; Node's crypto makes the keys.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';

export interface LocalCa {
  /** Where the CA certificate is: what a client is told to trust. */
  readonly certFile: string;
  readonly certPem: string;
  readonly keyPem: string;
  /** True when an existing CA was reused. */
  readonly reused: boolean;
}

const dayMs = 86_400_000;

function rsaKeyPair(): { publicKey: forge.pki.rsa.PublicKey; privateKey: forge.pki.rsa.PrivateKey; keyPem: string } {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs1', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  const key = forge.pki.privateKeyFromPem(privateKey);
  return { privateKey: key, publicKey: forge.pki.setRsaPublicKey(key.n, key.e), keyPem: privateKey };
}

/** A positive serial number (the high bit cleared: a DER INTEGER with it set would be negative, which Go refuses). */
function serial(): string {
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f;
  return b.toString('hex');
}

/** The CA in `dir` (made there, key 0600, when absent). A half-made CA (one file of two) is an error, never overwritten. */
export function loadOrCreateCa(dir: string): LocalCa {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const certFile = join(dir, 'ca.crt');
  const keyFile = join(dir, 'ca.key');
  const haveCert = existsSync(certFile);
  const haveKey = existsSync(keyFile);
  if (haveCert && haveKey) {
    chmodSync(keyFile, 0o600);
    const certPem = readFileSync(certFile, 'utf8');
    const keyPem = readFileSync(keyFile, 'utf8');
    const cert = forge.pki.certificateFromPem(certPem);
    if (cert.validity.notAfter.getTime() < Date.now() + dayMs) throw new Error(`the CA in ${certFile} has expired or expires within a day; move ${dir} away to make a new one`);
    return { certFile, certPem, keyPem, reused: true };
  }
  if (haveCert || haveKey) throw new Error(`${dir} holds only one of ca.crt and ca.key; move it away to make a new CA`);
  const { publicKey, privateKey, keyPem } = rsaKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serial();
  const now = Date.now();
  cert.validity.notBefore = new Date(now - dayMs);
  cert.validity.notAfter = new Date(now + 10 * 365 * dayMs);
  const subject = [
    { name: 'commonName', value: 'boxsync server --as-box local CA (offline testing only)' },
    { name: 'organizationName', value: 'boxsync box-server' },
  ];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true, pathLenConstraint: 0 },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  cert.sign(privateKey, forge.md.sha256.create());
  const certPem = forge.pki.certificateToPem(cert);
  writeFileSync(keyFile, keyPem, { mode: 0o600, flag: 'wx' });
  writeFileSync(certFile, certPem, { mode: 0o644, flag: 'wx' });
  return { certFile, certPem, keyPem, reused: false };
}

/** A server certificate signed by `ca` for these host names (and 127.0.0.1), valid for a year. */
export function issueServerCert(ca: LocalCa, hosts: readonly string[]): { cert: string; key: string } {
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const { publicKey, keyPem } = rsaKeyPair();
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = serial();
  const now = Date.now();
  cert.validity.notBefore = new Date(now - dayMs);
  cert.validity.notAfter = new Date(now + 365 * dayMs);
  cert.setSubject([{ name: 'commonName', value: hosts[0] ?? 'localhost' }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [...hosts.map((value) => ({ type: 2, value })), { type: 7, ip: '127.0.0.1' }] },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: keyPem };
}
