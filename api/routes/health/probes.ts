import { z } from 'zod';
import { isDatabaseUnavailable } from '../../../shared/platform/db.ts';
import { migrationsCurrent } from '../../../shared/platform/migrate.ts';
import { Problem } from '../../../shared/platform/problems.ts';
import { defineOperation } from '../../defineOperation.ts';

export const healthz = defineOperation({
  operationId: 'healthz',
  method: 'get',
  path: '/healthz',
  surface: 'public',
  tags: ['Operations'],
  summary: 'Liveness',
  description: 'The process is up. Needs no credential.',
  responses: { 200: { description: 'Up.', schema: z.object({ status: z.literal('ok') }), example: { status: 'ok' } } },
  async handle({ res }) {
    res.json({ status: 'ok' });
  },
});

export const readyz = defineOperation({
  operationId: 'readyz',
  method: 'get',
  path: '/readyz',
  surface: 'public',
  tags: ['Operations'],
  summary: 'Readiness',
  description: 'The database is reachable and every migration is applied. Needs no credential.',
  responses: {
    200: {
      description: 'Ready.',
      schema: z.object({ status: z.literal('ready'), database: z.literal('ok'), migrations: z.literal('current') }),
      example: { status: 'ready', database: 'ok', migrations: 'current' },
    },
  },
  problems: ['unavailable'],
  async handle({ res, deps }) {
    let current: boolean;
    try {
      current = await migrationsCurrent(deps.pool);
    } catch (error) {
      if (!isDatabaseUnavailable(error)) throw error;
      throw new Problem('unavailable', 'The database cannot be reached.', { extensions: { database: 'unreachable' } });
    }
    if (!current) throw new Problem('unavailable', 'Migrations are pending.', { extensions: { database: 'ok', migrations: 'pending' } });
    res.json({ status: 'ready', database: 'ok', migrations: 'current' });
  },
});
