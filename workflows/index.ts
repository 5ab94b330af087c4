export * from './deployment';
export * from './upload-expiry';
export * from './webhook-delivery';
