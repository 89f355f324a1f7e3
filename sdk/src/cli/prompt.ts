// Reading a secret: from a terminal without echoing it (raw mode: each key is read, none shown),
// else the first line of standard input (a pipe or a file: `dsvc login < key.txt`).
import { EXIT, Told } from './context.ts';

/** The secret the person types or pastes, or what standard input holds; trimmed. */
export async function readSecret(prompt: string): Promise<string> {
  return (process.stdin.isTTY ? await readHidden(prompt) : await readLine()).trim();
}

function readHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  // Echo off before the prompt shows: what is typed once it is on the screen is never echoed.
  stdin.setRawMode(true);
  process.stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let text = '';
    const finish = (outcome: () => void) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      outcome();
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n' || char === '\u0004') return finish(() => resolve(text));
        if (char === '\u0003') return finish(() => reject(new Told(EXIT.usage))); // Ctrl-C: nothing kept
        if (char === '\u007f' || char === '\b') text = text.slice(0, -1);
        else if (char >= ' ') text += char;
      }
    };
    stdin.setEncoding('utf8');
    stdin.on('data', onData);
    stdin.resume();
  });
}

function readLine(): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\n')) {
        process.stdin.pause();
        resolve(text.slice(0, text.indexOf('\n')));
      }
    });
    process.stdin.on('end', () => resolve(text));
    process.stdin.on('error', reject);
  });
}
