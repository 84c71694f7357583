export * from './create-logger';
export * from './redact-url';
