import { z } from 'zod';
import { EVENT_TYPE_NAMES, EVENT_TYPES } from '../../../shared/contract/events.ts';
import { versionExample } from '../../examples.ts';

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
  data: { object: versionExample },
};

export const EventIdParams = z.object({ id: z.string().min(1).max(100).meta({ description: 'Event id (evt_…).' }) });
