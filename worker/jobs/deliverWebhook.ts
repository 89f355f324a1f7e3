// Sends a webhook delivery: the event as GET /v1/events/{id} shows it, signed per Standard
// Webhooks (webhook-id, webhook-timestamp, webhook-signature; the standardwebhooks package), to
// the endpoint if it still receives. Any 2xx within the timeout is delivered; anything else is
// recorded and retried after the next delay of the schedule; after the last one the delivery has
// failed. An endpoint whose every delivery failed for 3 days is disabled.
import type { Job, PgBoss } from 'pg-boss';
import { Webhook } from 'standardwebhooks';
import { eventById } from '../../shared/domain/events.ts';
import { endpointForDelivery, noteEndpointOutcome } from '../../shared/domain/webhookEndpoints.ts';
import { type DeliveryJob, pendingDelivery, recordAttempt, skipDelivery } from '../../shared/domain/webhookDeliveries.ts';
import type { Pool } from '../../shared/platform/db.ts';
import type { Logger } from '../../shared/platform/log.ts';
import type { SecretBox } from '../../shared/platform/sealedSecrets.ts';
import type { WebhookPoster } from '../webhookPost.ts';

/** Every delivery to an endpoint failing this long disables it (contract). */
export const DISABLE_AFTER_MS = 3 * 24 * 3600_000;

export type DeliveryDeps = { pool: Pool; boss: PgBoss; box: SecretBox; poster: WebhookPoster; retryDelaysSeconds: number[]; log: Logger };

export function deliverWebhooks(deps: DeliveryDeps) {
  // An endpoint's signer, opened once per sealed secret.
  const signers = new Map<string, { sealed: string; webhook: Webhook }>();
  const signerOf = async (endpointId: string, sealed: Buffer) => {
    const known = signers.get(endpointId);
    const key = sealed.toString('base64');
    if (known?.sealed === key) return known.webhook;
    const webhook = new Webhook(await deps.box.open(sealed));
    signers.set(endpointId, { sealed: key, webhook });
    return webhook;
  };

  const deliverOne = async (job: Job<DeliveryJob>) => {
    const { pool, log } = deps;
    const delivery = await pendingDelivery(pool, job.data.deliveryId);
    if (!delivery) return; // delivered, failed or skipped meanwhile
    const endpoint = await endpointForDelivery(pool, delivery.endpointId);
    const found = endpoint?.receiving ? await eventById(pool, delivery.eventId) : undefined;
    if (!endpoint?.receiving || !found) return skipDelivery(pool, delivery.id);
    const { accountId: _account, ...event } = found;
    const body = JSON.stringify(event);
    const timestamp = new Date();
    const signature = (await signerOf(endpoint.id, endpoint.secretSealed)).sign(event.id, timestamp, body);
    const headers = { 'webhook-id': event.id, 'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)), 'webhook-signature': signature };
    const result = await deps.poster.post(endpoint.url, body, headers, endpoint.mode);
    const delivered = 'status' in result && result.status >= 200 && result.status < 300;
    const attempt = {
      responseStatus: 'status' in result ? result.status : null,
      durationMs: result.durationMs,
      error: 'error' in result ? result.error : delivered ? null : `answered ${result.status}`,
    };
    const fields = { deliveryId: delivery.id, eventId: event.id, type: event.type, endpointId: endpoint.id, attempt: delivery.attempts + 1, ...attempt };
    if (delivered) {
      await recordAttempt(pool, deps.boss, delivery, attempt, { delivered: true });
      await noteEndpointOutcome(pool, endpoint.id, true, DISABLE_AFTER_MS);
      log.debug(fields, 'webhook delivered');
      return;
    }
    const retryInSeconds = deps.retryDelaysSeconds[delivery.attempts];
    await recordAttempt(pool, deps.boss, delivery, attempt, { delivered: false, retryInSeconds });
    const disabled = await noteEndpointOutcome(pool, endpoint.id, false, DISABLE_AFTER_MS);
    log.warn({ ...fields, retryInSeconds: retryInSeconds ?? null, endpointDisabled: disabled }, retryInSeconds === undefined ? 'webhook delivery failed for good' : 'webhook delivery failed; retrying');
  };

  // Throws for the service's own failure (its database away): pg-boss retries the job; a delivery
  // already recorded is not pending any more, so it is not sent twice.
  return deliverOne;
}
