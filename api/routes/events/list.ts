import { z } from 'zod';
import { EVENT_RETENTION_DAYS, EVENT_TYPE_NAMES } from '../../../shared/contract/events.ts';
import { findEvent, listEvents } from '../../../shared/domain/events.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { invalidCursor, listOf, PaginationQuery } from '../../schemas.ts';
import { EventSchema, eventExample } from './schemas.ts';

export const ListEventsQuery = PaginationQuery.extend({
  type: z.enum(EVENT_TYPE_NAMES).optional().meta({ description: 'Only events of this type.' }),
});

export default defineOperation({
  operationId: 'listEvents',
  method: 'get',
  path: '/v1/events',
  surface: 'v1',
  tags: ['Events'],
  summary: 'List events',
  description:
    `What happened to the credential's account in its mode, newest first, for the last ${EVENT_RETENTION_DAYS} days: ` +
    'datasets created and deleted, versions active, failed and superseded, exports ready and failed. The same events go to webhook endpoints.',
  query: ListEventsQuery,
  responses: {
    200: {
      description: 'A page of events.',
      schema: listOf(EventSchema, 'EventList'),
      example: { object: 'list', data: [eventExample], nextCursor: null },
    },
  },
  problems: ['bad-request'],
  async handle({ res, deps, query }) {
    const tenant = tenantOf(res);
    const page = await listEvents(deps.pool, tenant, query);
    if (page.data.length === 0 && query.cursor && !(await findEvent(deps.pool, tenant, query.cursor))) {
      throw invalidCursor();
    }
    res.json(page);
  },
});
