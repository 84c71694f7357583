export * from './identities';
export * from './init-pki';
export * from './pki-files';
export * from './installation-keys';
