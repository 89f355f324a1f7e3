// Lists come a page at a time (`limit`, `cursor`, `nextCursor`); listAll walks every page.
import type { Page } from './types.ts';

/** Every item of a list, fetching the next page only when the caller gets there. */
export async function* everyItem<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await fetchPage(cursor);
    yield* page.data;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
}
