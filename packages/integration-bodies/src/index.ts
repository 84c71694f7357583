export * from './integration-bodies';
