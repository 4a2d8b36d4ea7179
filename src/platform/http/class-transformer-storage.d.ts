/**
 * class-transformer's metadata store, which its package index does not export: validation.ts asks
 * it whether a DTO has any transformer metadata. The same module instance the package's
 * `plainToInstance` uses (a CommonJS subpath of the same package).
 */
declare module 'class-transformer/cjs/storage.js' {
  export { defaultMetadataStorage } from 'class-transformer/types/storage.js';
}
