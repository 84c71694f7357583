import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serviceOfCertificate } from './identities';
import { initPki } from './init-pki';
import { caCertFile, serviceTlsFiles } from './pki-files';

describe('initPki', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'conveyor-pki-'));

  it('issues one CA-signed certificate per service naming it, with private keys readable by the owner only', async () => {
    const { written } = await initPki(dir, { hosts: ['orchestrator.conveyor.svc'] });
    expect(written).toHaveLength(2 + 4 * 2);
    const ca = new X509Certificate(readFileSync(caCertFile(dir)));
    for (const service of ['orchestrator', 'gateway', 'ingress', 'runner'] as const) {
      const files = serviceTlsFiles(dir, service);
      const cert = new X509Certificate(readFileSync(files.certFile));
      expect(cert.verify(ca.publicKey)).toBe(true);
      expect(serviceOfCertificate(cert.subjectAltName)).toBe(service);
      expect(statSync(files.keyFile).mode & 0o077).toBe(0);
    }
    expect(
      new X509Certificate(readFileSync(serviceTlsFiles(dir, 'orchestrator').certFile)).checkHost(
        'orchestrator.conveyor.svc',
      ),
    ).toBe('orchestrator.conveyor.svc');
  });

  it('writes nothing when everything is in place, and reissues for a new host name', async () => {
    expect((await initPki(dir, { hosts: ['orchestrator.conveyor.svc'] })).written).toEqual([]);
    const { written } = await initPki(dir, { hosts: ['orchestrator.conveyor.svc', 'workers.example.com'] });
    expect(written).toEqual([
      serviceTlsFiles(dir, 'orchestrator').keyFile,
      serviceTlsFiles(dir, 'orchestrator').certFile,
    ]);
  });

  it('reissues certificates about to expire', async () => {
    const { written } = await initPki(dir, {
      hosts: ['orchestrator.conveyor.svc', 'workers.example.com'],
      renewWithinDays: 400,
    });
    expect(written).toHaveLength(4 * 2);
  });
});

describe('serviceOfCertificate', () => {
  it('reads the one service URI and nothing else', () => {
    expect(serviceOfCertificate('DNS:gateway, URI:spiffe://conveyor/gateway')).toBe('gateway');
    expect(serviceOfCertificate('URI:spiffe://other/gateway')).toBeUndefined();
    expect(
      serviceOfCertificate('URI:spiffe://conveyor/gateway, URI:spiffe://conveyor/runner'),
    ).toBeUndefined();
    expect(serviceOfCertificate(undefined)).toBeUndefined();
  });
});
