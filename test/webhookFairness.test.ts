// Webhook deliveries are shared fairly (contract, "Sharing the service fairly"): one account's
// slow or dead endpoints never delay another account's deliveries, measured with a receiver that
// never answers in time beside one that answers at once.
import { expect } from 'chai';
import { newDataset } from './support/ingest.ts';
import { useService } from './support/service.ts';
import { WebhookReceiver } from './support/webhookReceiver.ts';

const SLOW_ENDPOINTS = 300;
const TIMEOUT_MS = 4_000;

describe('fair webhook deliveries', () => {
  // No retry within the test: each slow delivery is tried once and then waits a minute.
  const svc = useService({ env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_RETRY_DELAYS: '60' } });

  const waitFor = async <T>(probe: () => T | undefined, what: string, ms: number): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = probe();
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  it("when one account has hundreds of endpoints that never answer in time, then another account's delivery still arrives at once, and the slow ones are still tried", async function () {
    this.timeout(120_000);
    const slow = await new WebhookReceiver().start();
    const fast = await new WebhookReceiver().start();
    try {
      const noisy = await svc.tenant();
      const quiet = await svc.tenant();
      for (let i = 0; i < SLOW_ENDPOINTS; i++) {
        const made = await svc.request('/v1/webhook-endpoints', { key: noisy.key, json: { url: slow.url(`/slow-${i}`), events: ['dataset.created'] } });
        expect(made.status, made.text).to.equal(201);
        // Answers long after the service stopped waiting: every delivery holds its slot for the whole timeout.
        slow.expect(`/slow-${i}`, made.json.secret, () => ({ status: 200, delayMs: 30_000 }));
      }
      const made = await svc.request('/v1/webhook-endpoints', { key: quiet.key, json: { url: fast.url('/fast'), events: ['dataset.created'] } });
      fast.expect('/fast', made.json.secret);

      await newDataset(svc, noisy.key);
      await waitFor(() => (slow.received.length > 0 ? true : undefined), 'the first slow delivery', 10_000);

      const started = performance.now();
      const quietDataset = await newDataset(svc, quiet.key);
      const got = await waitFor(() => fast.at('/fast')[0], "the quiet account's delivery", 3 * TIMEOUT_MS);
      const tookMs = performance.now() - started;
      expect(got.event.data.object.id).to.equal(quietDataset);
      expect(fast.unverified).to.deep.equal([]);
      // Behind the slow batches it took TIMEOUT_MS per 50 slow endpoints (24 s here).
      expect(tookMs, `the quiet account's delivery took ${Math.round(tookMs)} ms`).to.be.below(2_000);

      // The noisy account's deliveries are not starved either: they keep being tried, a few at a time.
      await waitFor(() => (slow.received.length > 10 ? true : undefined), 'more slow deliveries', 3 * TIMEOUT_MS);
    } finally {
      await slow.stop();
      await fast.stop();
    }
  });
});
