export * from './metrics-registry';
export * from './http-metrics';
export * from './metrics-router';
export * from './domain-metrics';
