/**
 * Connection-level headers (RFC 9110 §7.6.1), and `host` (the target's own): what the runner's forwarders (the model
 * proxy, the harness-support bridge) never pass on.
 */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);
