// `--cloud-provider webhook`: the --cloud-config names the endpoint and its credentials; the CA
// bundle and the client certificate are read here, once, and the token file is checked here and
// read again by the client whenever it changes.
import { readFile } from 'node:fs/promises';
import { readProblem } from '../../src/util/file-argument.js';
import { cloudConfigError, parseCloudConfig, requiredCloudConfig } from '../cloud-config.js';
import type { ProviderFactory } from '../types.js';
import { WebhookClient } from './client.js';
import { parseWebhookConfig } from './config.js';
import { WebhookProvider } from './provider.js';

export const create: ProviderFactory = async (context) => {
  const file = requiredCloudConfig(context, 'webhook');
  const config = parseCloudConfig(file, parseWebhookConfig);
  const read = async (field: string, path: string | undefined): Promise<string | undefined> => {
    if (path === undefined) return undefined;
    try {
      const text = await readFile(path, 'utf8');
      if (text.trim() === '') throw cloudConfigError(file.path, `${field} ${path}: the file is empty`);
      return text;
    } catch (err) {
      if (!(err as NodeJS.ErrnoException).code) throw err;
      throw cloudConfigError(file.path, `${field} ${path}: ${readProblem(err as NodeJS.ErrnoException)}`, err);
    }
  };
  const [ca, cert, key] = await Promise.all([read('caFile', config.caFile), read('clientCertFile', config.clientCertFile), read('clientKeyFile', config.clientKeyFile)]);
  await read('tokenFile', config.tokenFile);
  const client = new WebhookClient({
    url: config.url, timeoutMs: config.timeoutMs, attempts: config.attempts,
    ...(ca !== undefined ? { ca } : {}), ...(cert !== undefined ? { cert, key: key as string } : {}),
    ...(config.tokenFile !== undefined ? { tokenFile: config.tokenFile } : {}),
  });
  context.logger?.info({ url: config.url.href, batchSize: config.batchSize, timeoutMs: config.timeoutMs, attempts: config.attempts }, 'webhook provider ready');
  return new WebhookProvider({ client, batchSize: config.batchSize, url: config.url.href, ...(context.logger ? { logger: context.logger } : {}) });
};
