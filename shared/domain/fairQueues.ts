// Fair order between accounts in the build and export queues: start-time fair queuing written into
// pg-boss's own priority, so that pg-boss's fetch (ORDER BY priority DESC, created_on, served by
// its index) takes accounts in turn with no change to it, and nothing read per fetch grows with
// the number of accounts (contract, "Sharing the service fairly").
//
// Each lane has a virtual clock; each account, per lane, the virtual finish of its last job. A job
// sent (in the transaction that asks for it) starts at greatest(the account's finish, the clock)
// and moves the account's finish one on; its priority is minus its start. When a worker takes a
// job, the lane's clock moves up to the job's start. So an account with nothing queued starts at
// the clock, ahead of every backlog; two accounts with backlogs alternate; an account's own jobs
// keep their order. The cost of a job is 1: builds are taken in turn, each account's next one.
// (Hatchet moved its round robin from read time to write time in the same way; Temporal's
// matching fairness is stride scheduling over per-key passes.) The only writer of
// fair_queue_clocks and fair_queue_accounts.
import { type Pool, type Queryable, WITHOUT_WAITING_FOR_WAL } from '../platform/db.ts';

/** A lane: a queue, or a band of one (builds of small files: see LANE_BANDS). */
export type Lane = 'build' | 'build-express' | 'export';

/**
 * Each lane's priorities lie in a band of its own, so that one queue can hold two lanes a worker
 * fetches apart (pg-boss's fetch takes minPriority and maxPriority): starts in [0, SPAN) map to
 * priorities (top - SPAN, top]. Past SPAN starts (about a billion jobs in a lane) the later ones
 * share the band's lowest priority, and pg-boss orders them by age.
 */
const SPAN = 2 ** 30;
export const LANE_BANDS: Record<Lane, { top: number; min: number; max: number }> = {
  build: { top: 0, min: -(SPAN - 1), max: 0 },
  'build-express': { top: SPAN, min: 1, max: SPAN },
  export: { top: 0, min: -(SPAN - 1), max: 0 },
};

/** Where a job stands in its lane's fair order: carried in the job's data, told back when a worker takes it. */
export type FairTurn = { lane: Lane; start: number };

/** The pg-boss priority of a job starting at `start` in `lane`. */
export function priorityOf(turn: FairTurn): number {
  const band = LANE_BANDS[turn.lane];
  return band.top - Math.min(turn.start, SPAN - 1);
}

/**
 * The next turn of `accountId` in `lane`: one upsert of the account's row, reading the lane's
 * clock. In the caller's transaction, with the job it is for.
 */
export async function takeTurn(db: Queryable, lane: Lane, accountId: string): Promise<FairTurn> {
  const { rows } = await db.query<{ start: string }>(
    `WITH clock AS (SELECT coalesce((SELECT virtual_now FROM fair_queue_clocks WHERE lane = $1), 0) AS now)
     INSERT INTO fair_queue_accounts AS a (lane, account_id, virtual_finish)
     SELECT $1, $2, clock.now + 1 FROM clock
     ON CONFLICT (lane, account_id) DO UPDATE SET virtual_finish = greatest(a.virtual_finish, (SELECT now FROM clock)) + 1
     RETURNING a.virtual_finish - 1 AS start`,
    [lane, accountId],
  );
  return { lane, start: Number(rows[0]!.start) };
}

/** A worker took a job of this turn: the lane's clock moves up to its start (never back). */
export async function turnTaken(db: Pool, turn: FairTurn): Promise<void> {
  // Committed without waiting for the WAL (WITHOUT_WAITING_FOR_WAL): every build starts with this,
  // and a clock a crash took back a little only orders a few turns as if they came a little earlier.
  await db.query(
    `INSERT INTO fair_queue_clocks AS c (lane, virtual_now)
     SELECT $1, $2 FROM ${WITHOUT_WAITING_FOR_WAL}
     ON CONFLICT (lane) DO UPDATE SET virtual_now = greatest(c.virtual_now, EXCLUDED.virtual_now)`,
    [turn.lane, turn.start],
  );
}

/** Whether a job's data carries a turn (jobs sent before fair order did not). */
export function turnOf(data: { turn?: FairTurn | undefined }): FairTurn | undefined {
  const turn = data.turn;
  return turn && typeof turn.start === 'number' && turn.lane in LANE_BANDS ? turn : undefined;
}
