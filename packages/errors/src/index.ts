export * from './error-codes';
export * from './app-error';
export * from './problem';
export * from './grpc';
export * from './dependency-outage';
