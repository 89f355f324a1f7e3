// @dataset-service/sdk: a typed client for the Dataset Service API.
export { DatasetService } from './client.ts';
export type { ClientOptions } from './transport.ts';
export * from './errors.ts';
export type * from './types.ts';
export type { UploadOptions, WaitOptions } from './resources/versions.ts';
export { RESUMABLE_FROM_BYTES } from './resources/versions.ts';
export type { MutationOptions } from './resources/datasets.ts';
export type { UploadProgress, UploadSource } from './uploadSources.ts';
export { signWebhook, verifyWebhook } from './webhooks.ts';
