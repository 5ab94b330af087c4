export * from './deployment';
