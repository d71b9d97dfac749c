// The webhook provider's public surface: the protocol (schemas, request, reading an answer) and
// the config parser, for webhook servers written in TypeScript and for tests.
export { REQUEST_SCHEMA, RESPONSE_SCHEMA, WEBHOOK_API_VERSION } from './schema.js';
export { buildRequest, readAnswer, requestProblems, responseProblems, type InstancesRequest, type ReadAnswer, type WebhookOutcome } from './protocol.js';
export { parseWebhookConfig, WEBHOOK_DEFAULTS, type WebhookConfig } from './config.js';
export { WebhookClient, WebhookCallError, type WebhookClientOptions } from './client.js';
export { WebhookProvider, type WebhookProviderOptions } from './provider.js';
