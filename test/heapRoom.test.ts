// The room left in a thread's heap (shared/platform/heapRoom.ts): work that keeps what it makes is
// told to stop before its thread reaches its limit, where V8 may take the whole process down;
// work that makes only garbage is never stopped, however much of it there is. And the buffers a
// thread lets go are collected as they pile up, not 64 MiB later (shared/platform/garbage.ts).
import { answerFromThread } from './support/threads.ts';
import { expect } from 'chai';

type Answer = { stopped: boolean; heldMb: number; collections: number; limitMb: number };

/**
 * Runs `rounds` rounds in a thread of a 24 MiB old generation, each making 16 parts of 512 small
 * objects (about 256 KiB) and keeping them for `keptFor` rounds (Infinity: for good), looking at
 * the room after each round.
 */
function runInThread(keptFor: number, rounds: number): Promise<Answer> {
  return answerFromThread<Answer>(
    { '{ HeapRoom }': new URL('../shared/platform/heapRoom.ts', import.meta.url) },
    `const room = new HeapRoom();
     const held = [];
     let stopped = false;
     for (let round = 0; round < ${rounds} && !stopped; round++) {
       held.push(Array.from({ length: 16 }, () => Array.from({ length: 512 }, (_, j) => ({ round, j }))));
       if (held.length > ${keptFor}) held.shift();
       stopped = room.nearLimit();
     }
     answer({ stopped, heldMb: held.length / 4, collections: room.collections, limitMb: room.limitMb });`,
    { maxOldGenerationSizeMb: 24, maxYoungGenerationSizeMb: 6 },
  );
}

describe('room in a thread heap', () => {
  it('when a thread keeps what it makes, then it is told to stop before its heap runs out, and goes on to answer', async function () {
    this.timeout(30_000);
    const answer = await runInThread(Infinity, 100_000);
    expect(answer).to.include({ stopped: true, limitMb: 24 });
    expect(answer.collections).to.be.at.least(1);
  });

  it('when a thread keeps what it makes only for a while, many times its heap in all, then it is never told to stop', async function () {
    this.timeout(30_000);
    // Each round's objects live for 16 rounds (about 4 MiB held at a time), long enough to reach
    // the old generation and die there: its used size passes the share with garbage, which a
    // look that did not collect first would take for live objects.
    const answer = await runInThread(16, 800);
    expect(answer).to.include({ stopped: false });
  });
});

/**
 * The most bytes of buffers a thread held at once (external memory, MiB) while it streamed 1 MiB
 * chunks, 100 MiB a second for `ms`, each let go once written (a stream's chunks, another
 * thread's messages), with its collection of let-go buffers on or off.
 */
function streamInThread(collecting: boolean, ms: number): Promise<number> {
  return answerFromThread<number>(
    { '{ collectLetGoBuffers }': new URL('../shared/platform/garbage.ts', import.meta.url) },
    `const { getHeapStatistics } = require('node:v8');
     if (${collecting}) collectLetGoBuffers();
     let most = 0;
     const started = Date.now();
     const tick = () => {
       const chunk = Buffer.alloc(1 << 20, 1); // written, then let go
       most = Math.max(most, getHeapStatistics().external_memory);
       if (Date.now() - started < ${ms}) setTimeout(tick, 10);
       else answer(most / 2 ** 20);
     };
     tick();`,
  );
}

describe('buffers a thread lets go', () => {
  it('when a thread streams buffers and lets each go, then they are collected as they pile up: it never holds much more than 16 MiB of them', async function () {
    this.timeout(30_000);
    const [collected, left] = await Promise.all([streamInThread(true, 3000), streamInThread(false, 3000)]);
    expect(collected).to.be.below(40);
    // Left to V8, they pile up to 64 MiB or so before it collects: the test can tell the two apart.
    expect(left).to.be.above(56);
  });
});
