import { z } from 'zod';
import { EVENT_TYPE_NAMES, EVENT_TYPES } from '../../../shared/contract/events.ts';

export const EventSchema = z
  .object({
    id: z.string(),
    object: z.literal('event'),
    type: z.enum(EVENT_TYPE_NAMES).meta({ description: EVENT_TYPES.map((t) => `\`${t.type}\`: ${t.description}`).join(' ') }),
    mode: z.enum(['test', 'live']),
    createdAt: z.string().meta({ format: 'date-time' }),
    data: z.object({
      object: z.object({}).passthrough().meta({ description: 'The dataset, version or export as its GET showed it when the event happened.' }),
    }),
  })
  .meta({ id: 'Event' });

export const eventExample = {
  id: 'evt_8w2m4k7q1x9p3v6d0s5f',
  object: 'event',
  type: 'version.active',
  mode: 'live',
  createdAt: '2026-11-23T09:14:03.512Z',
  data: {
    object: {
      id: 'ver_9a8b7c6d5e4f3a2b1c0d',
      object: 'version',
      datasetId: 'ds_4f9c2a7e1b3d5f60a8c1',
      status: 'active',
      rowCount: 120000,
      contributingRowCount: 118250,
      progress: { rowsProcessed: 120000, bytesProcessed: 9612345, bytesTotal: 9612345 },
      problem: null,
      createdAt: '2026-11-23T09:13:58.104Z',
      completedAt: '2026-11-23T09:14:03.511Z',
    },
  },
};

export const EventIdParams = z.object({ id: z.string().min(1).max(100).meta({ description: 'Event id (evt_…).' }) });
