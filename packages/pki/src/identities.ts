/** The core services that speak gRPC to each other; each holds one certificate naming it. */
export const SERVICE_NAMES = ['orchestrator', 'gateway', 'ingress', 'runner'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

const TRUST_DOMAIN = 'conveyor';

/** The SPIFFE-style URI a service's certificate carries as its subject alternative name. */
export const serviceUri = (service: ServiceName): string => `spiffe://${TRUST_DOMAIN}/${service}`;

/**
 * The service a peer certificate names, read from its URI SAN (Node's `subjectaltname` string, e.g.
 * `DNS:gateway, URI:spiffe://conveyor/gateway`); undefined for anything else. The CA is checked by TLS itself.
 */
export function serviceOfCertificate(subjectAltName: string | undefined): ServiceName | undefined {
  if (!subjectAltName) return undefined;
  const uris = subjectAltName
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('URI:'))
    .map((s) => s.slice(4));
  const services = SERVICE_NAMES.filter((service) => uris.includes(serviceUri(service)));
  // A certificate naming two services is not one service's identity.
  return services.length === 1 ? services[0] : undefined;
}
