export * from './deployment/commands';
export * from './deployment/workflow';
export * from './metrics';
export * from './reconcile';
export * from './upload-expiry';
export * from './webhook-delivery/commands';
export * from './webhook-delivery/workflow';
