export * from './run-event';
