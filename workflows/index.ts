export * from './deployment';
export * from './webhook-delivery';
