import { findEvent } from '../../../shared/domain/events.ts';
import { Problem } from '../../../shared/platform/problems.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { EventIdParams, EventSchema, eventExample } from './schemas.ts';

export default defineOperation({
  operationId: 'getEvent',
  method: 'get',
  path: '/v1/events/:id',
  surface: 'v1',
  tags: ['Events'],
  summary: 'Retrieve an event',
  description: 'The event exactly as webhook endpoints receive it (404 for another account\'s or mode\'s, and after 30 days).',
  params: EventIdParams,
  responses: { 200: { description: 'The event.', schema: EventSchema, example: eventExample } },
  problems: ['not-found'],
  async handle({ res, deps, params }) {
    const event = await findEvent(deps.pool, tenantOf(res), params.id);
    if (!event) throw new Problem('not-found', `No event with id ${JSON.stringify(params.id)} exists.`);
    res.json(event);
  },
});
