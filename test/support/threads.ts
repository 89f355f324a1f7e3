// A script run in a worker thread of its own, for tests that measure a thread's heap: in the test's
// own thread, the rest of the suite's garbage moves the heap's used size by more than they measure.
import { type ResourceLimits, Worker } from 'node:worker_threads';

/**
 * Runs `body` in a new thread once `modules` are imported (each key a binding pattern such as
 * `{ HeapRoom }`, each value the module's URL), and answers what it passes to `answer(value)`.
 * Rejects if the thread throws or ends first.
 */
export function answerFromThread<T>(modules: Record<string, URL>, body: string, resourceLimits?: ResourceLimits): Promise<T> {
  const imports = Object.values(modules).map((url) => `import(${JSON.stringify(url.href)})`);
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     const answer = (value) => parentPort.postMessage(value);
     Promise.all([${imports.join(', ')}]).then(([${Object.keys(modules).join(', ')}]) => {
       ${body}
     });`,
    { eval: true, ...(resourceLimits && { resourceLimits }) },
  );
  return new Promise<T>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the thread ended (exit code ${code}) before it answered`)));
  }).finally(() => worker.terminate());
}
