import 'reflect-metadata';
import { createPrivateKey, webcrypto, X509Certificate as NodeCertificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';
import { SERVICE_NAMES, serviceUri, type ServiceName } from './identities';
import { caCertFile, caKeyFile, serviceTlsFiles } from './pki-files';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
const { subtle } = webcrypto;

// ECDSA P-256: fast to generate (a platform in a test issues five certificates) and understood by every TLS stack.
const KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING_ALGORITHM = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface InitPkiOptions {
  /** Extra DNS names or IP addresses the orchestrator is reached at (its gRPC and worker endpoints). */
  hosts?: string[];
  /** Service certificates to issue; all of them by default. */
  services?: readonly ServiceName[];
  /** Lifetime of a service certificate. */
  certDays?: number;
  /** A service certificate expiring within this many days is issued anew (the rotation `pki init` performs). */
  renewWithinDays?: number;
}

export interface InitPkiResult {
  /** Files written by this call (empty when everything was already in place and valid). */
  written: string[];
}

interface CertificateAuthority {
  cert: x509.X509Certificate;
  pem: string;
  key: CryptoKey;
}

async function writeSecret(file: string, pem: string): Promise<void> {
  await writeFile(file, pem, { mode: 0o600 });
  await chmod(file, 0o600);
}

const keyPem = async (key: CryptoKey): Promise<string> =>
  x509.PemConverter.encode(await subtle.exportKey('pkcs8', key), 'PRIVATE KEY');

async function loadOrCreateCa(dir: string, written: string[]): Promise<CertificateAuthority> {
  const certPath = caCertFile(dir);
  const keyPath = caKeyFile(dir);
  if (existsSync(certPath) && existsSync(keyPath)) {
    const pem = await readFile(certPath, 'utf8');
    const der = createPrivateKey(await readFile(keyPath, 'utf8')).export({ type: 'pkcs8', format: 'der' });
    const key = await subtle.importKey('pkcs8', der, KEY_ALGORITHM, false, ['sign']);
    return { cert: new x509.X509Certificate(pem), pem, key };
  }
  const keys = (await subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=Conveyor installation CA ${Date.now().toString(36)}`,
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: new Date(Date.now() + 10 * 365 * DAY_MS),
    keys,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const pem = cert.toString('pem');
  await writeSecret(keyPath, await keyPem(keys.privateKey));
  await writeFile(certPath, pem);
  written.push(keyPath, certPath);
  return { cert, pem, key: keys.privateKey };
}

const altNames = (service: ServiceName, hosts: string[]): string[] => [
  ...new Set([service, 'localhost', '127.0.0.1', '::1', ...hosts]),
];

/** The existing certificate is kept when the CA issued it, it names every wanted host and it is not about to expire. */
async function stillGood(
  certPath: string,
  ca: CertificateAuthority,
  names: string[],
  renewWithinDays: number,
): Promise<boolean> {
  if (!existsSync(certPath)) return false;
  const cert = new NodeCertificate(await readFile(certPath));
  const caCert = new NodeCertificate(ca.pem);
  if (!cert.checkIssued(caCert) || !cert.verify(caCert.publicKey)) return false;
  if (new Date(cert.validTo).getTime() - Date.now() < renewWithinDays * DAY_MS) return false;
  const san = cert.subjectAltName ?? '';
  return names.every((n) =>
    san.includes(isIP(n) ? `IP Address:${n === '::1' ? '0:0:0:0:0:0:0:1' : n}` : `DNS:${n}`),
  );
}

async function issueServiceCertificate(
  dir: string,
  ca: CertificateAuthority,
  service: ServiceName,
  names: string[],
  certDays: number,
): Promise<string[]> {
  const files = serviceTlsFiles(dir, service);
  const keys = (await subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create({
    subject: `CN=${service}`,
    issuer: ca.cert.subject,
    notBefore: new Date(Date.now() - DAY_MS),
    notAfter: new Date(Date.now() + certDays * DAY_MS),
    publicKey: keys.publicKey,
    signingKey: ca.key,
    signingAlgorithm: SIGNING_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      // Every service is a TLS client of the orchestrator; the orchestrator is also the server.
      new x509.ExtendedKeyUsageExtension([
        x509.ExtendedKeyUsage.serverAuth,
        x509.ExtendedKeyUsage.clientAuth,
      ]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'url', value: serviceUri(service) },
        ...names.map((n) => ({ type: isIP(n) ? ('ip' as const) : ('dns' as const), value: n })),
      ]),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
    ],
  });
  await writeSecret(files.keyFile, await keyPem(keys.privateKey));
  await writeFile(files.certFile, cert.toString('pem'));
  return [files.keyFile, files.certFile];
}

/**
 * Creates the installation's PKI in `dir` on first use and keeps it valid afterwards: a CA (kept for good) and one
 * certificate per service whose URI SAN is its identity (`spiffe://conveyor/<service>`). Idempotent: run it at
 * every start; it only writes what is missing, issued by another CA, lacking a wanted host name, or near expiry.
 */
export async function initPki(dir: string, options: InitPkiOptions = {}): Promise<InitPkiResult> {
  const { hosts = [], services = SERVICE_NAMES, certDays = 365, renewWithinDays = 30 } = options;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const written: string[] = [];
  const ca = await loadOrCreateCa(dir, written);
  for (const service of services) {
    const names = altNames(service, service === 'orchestrator' ? hosts : []);
    if (await stillGood(serviceTlsFiles(dir, service).certFile, ca, names, renewWithinDays)) continue;
    written.push(...(await issueServiceCertificate(dir, ca, service, names, certDays)));
  }
  return { written };
}
