// Verifying a webhook delivery (Standard Webhooks, with its reference library): the signature over
// the id, the timestamp and the body as received, and a timestamp within five minutes.
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { WebhookSignatureError } from './errors.ts';
import type { Event } from './types.ts';

/**
 * The delivered event, once its signature verifies with the endpoint's secret (whsec_…); a
 * WebhookSignatureError otherwise. Pass the body exactly as received (not parsed and re-serialized).
 */
export function verifyWebhook(body: string | Buffer, headers: Headers | Record<string, string | string[] | undefined>, secret: string): Event {
  const flat: Record<string, string> = {};
  if (headers instanceof Headers) headers.forEach((value, name) => (flat[name] = value));
  else for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  try {
    return new Webhook(secret).verify(typeof body === 'string' ? body : body.toString('utf8'), flat) as Event;
  } catch (error) {
    if (error instanceof WebhookVerificationError || error instanceof Error) throw new WebhookSignatureError(error.message, { cause: error });
    throw error;
  }
}

/** Signs a body as the service does: for tests of a receiver, and for `dsvc listen`. */
export function signWebhook(secret: string, id: string, body: string, at = new Date()): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': new Webhook(secret).sign(id, at, body) };
}
