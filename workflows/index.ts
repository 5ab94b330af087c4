/**
 * The worker's workflow bundle entry: every workflow function, registered under its exported name. Nothing else
 * imports workflow code; the names, IDs and messages the api and the activities use are in shared/contracts/.
 */
export * from './builder-git/workflow';
export * from './builder-turn/workflow';
export * from './cloud-credentials/workflow';
export * from './cloud-read/workflow';
export * from './database/backup';
export * from './database/restore';
export * from './database/scheduled';
export * from './database/workflow';
export * from './database-source/workflow';
export * from './deployment/workflow';
export * from './domain/workflow';
export * from './metrics/workflow';
export * from './reconcile/workflow';
export * from './sandbox/workflow';
export * from './upload-expiry/workflow';
export * from './usage/workflow';
export * from './volume/workflow';
export * from './webhook-delivery/workflow';
