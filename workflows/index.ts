export * from './deployment';
export * from './reconcile';
export * from './upload-expiry';
export * from './webhook-delivery';
