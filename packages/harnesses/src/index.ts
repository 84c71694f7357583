export * from './harness-kinds';
