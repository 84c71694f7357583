export * from './topics';
export * from './delivery-message';
export * from './kafka-client';
export * from './webhook-config-version';
export * from './kafka-security';
