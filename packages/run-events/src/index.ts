export * from './run-event';
export * from './run-job';
export * from './run-enums';
export * from './run-list-params';
export * from './event-types';
export * from './trace-carrier';
