import { z } from 'zod';

export const DatasetSchema = z
  .object({
    id: z.string().meta({ example: 'ds_3k9x0v4m7q2r8t1w5y6z' }),
    object: z.literal('dataset'),
    externalRef: z.string().meta({ description: 'Your reference, unique per account within each mode.' }),
    name: z.string().nullable(),
    mode: z.enum(['test', 'live']),
    activeVersionId: z.string().nullable().meta({ description: 'The version served by metrics and catalog; null while none is servable.' }),
    createdAt: z.string().meta({ format: 'date-time' }),
  })
  .meta({ id: 'Dataset' });

export const DatasetIdParams = z.object({ id: z.string().min(1).max(100).meta({ description: 'Dataset id (ds_…).' }) });
