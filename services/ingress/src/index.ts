// The ingress is a deployable, not a library; this entry exists for tools beside it (the settings reference,
// scripts/settings-reference.js). Services never import it.
export { ingressSettings } from './config';
