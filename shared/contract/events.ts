// The event types the service emits (contract, "Events and webhooks"): data, so that the
// reference, the endpoints' validation and the writers all read the same list.
export const EVENT_TYPES = [
  { type: 'dataset.created', object: 'dataset', description: 'A dataset was created.' },
  { type: 'dataset.deleted', object: 'dataset', description: 'A dataset was deleted; data.object is the dataset as it was.' },
  { type: 'version.active', object: 'version', description: 'A version was built and is now the dataset\'s active one.' },
  { type: 'version.failed', object: 'version', description: 'A version failed: its problem says why (row errors, size, or a fault).' },
  {
    type: 'version.superseded',
    object: 'version',
    description: 'A version was replaced as active by a newer one, or finished after a newer one became active.',
  },
  { type: 'export.ready', object: 'export', description: 'An export was built; its downloadUrl works for one hour from the event.' },
  { type: 'export.failed', object: 'export', description: 'An export failed; its failure says why.' },
  { type: 'exchange_rates.created', object: 'exchange_rates', description: 'A set of exchange rates was uploaded; it is now the one in force for its account and mode.' },
] as const;

export type EventType = (typeof EVENT_TYPES)[number]['type'];

export const EVENT_TYPE_NAMES = EVENT_TYPES.map((t) => t.type) as [EventType, ...EventType[]];

/** How long events are kept (and listed). */
export const EVENT_RETENTION_DAYS = 30;
