export * from './readiness';
export * from './health-routes';
export * from './request-context';
export * from './problem-handlers';
export * from './service-runner';
export * from './http-server';
export * from './auth-epoch-keys';
export * from './background-loop';
