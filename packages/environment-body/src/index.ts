export * from './environment-body';
